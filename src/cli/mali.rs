//! `lathe mali …`: Mali driver helpers.

use super::CliResult;
use clap::{Args, Subcommand};
use lathe_mali::instancing::{
    AttributeDescriptor, AttributeRate, Draw, InstanceIdRecord, InstancingError, VertexIdRecord,
};
use serde_json::{Value, json};
use std::num::NonZeroU32;

#[derive(Subcommand)]
pub enum MaliCommand {
    /// Padded vertex count and attribute descriptor fields for an instanced draw.
    Instancing(InstancingArgs),
}

#[derive(Args)]
pub struct InstancingArgs {
    /// Vertices per instance, as passed to the draw call.
    #[arg(long, value_name = "N")]
    vertices: u32,
    /// Number of instances.
    #[arg(long, value_name = "M", default_value_t = 1)]
    instances: u32,
    /// GL instance divisor of the per-instance attribute (at least 1).
    #[arg(long, value_name = "D", default_value_t = 1)]
    divisor: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(command: MaliCommand) -> CliResult {
    match command {
        MaliCommand::Instancing(args) => instancing(&args),
    }
}

fn instancing(args: &InstancingArgs) -> CliResult {
    let draw = Draw::new(args.vertices, args.instances)?;
    let divisor = NonZeroU32::new(args.divisor).ok_or(InstancingError::ZeroInstanceDivisor)?;
    let per_vertex = draw.attribute(AttributeRate::PerVertex);
    let per_instance = draw.attribute(AttributeRate::PerInstance { divisor });
    let hardware_divisor = draw.hardware_divisor(divisor);
    if args.json {
        let report = json!({
            "vertices": draw.vertices(),
            "instances": draw.instances(),
            "divisor": divisor.get(),
            "padded_vertex_count": draw.padded_vertex_count(),
            "thread_count": draw.thread_count(),
            "hardware_divisor": hardware_divisor,
            "per_vertex": descriptor_json(per_vertex),
            "per_instance": descriptor_json(per_instance),
            "vertex_id_record": vertex_id_json(draw.vertex_id_record()),
            "instance_id_record": instance_id_json(draw.instance_id_record()),
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "draw: {} vertices x {} instances",
            draw.vertices(),
            draw.instances()
        );
        println!(
            "padded vertex count: {} ({} threads)",
            draw.padded_vertex_count(),
            draw.thread_count()
        );
        print!("{}", descriptor_text("per-vertex attribute:", per_vertex));
        print!(
            "{}",
            descriptor_text(&format!("per-instance (divisor {divisor}):"), per_instance)
        );
        println!(
            "{:<27} = linear_id / {hardware_divisor} (padded count {} x min({divisor}, {} instances))",
            "",
            draw.padded_vertex_count(),
            draw.instances(),
        );
        print!("{}", records_text(&draw));
    }
    Ok(())
}

fn descriptor_json(descriptor: AttributeDescriptor) -> Value {
    let mut fields = json!({
        "mode": descriptor.mode().name(),
        "type": descriptor.mode().type_code(),
        "shift": descriptor.shift(),
        "extra_flags": descriptor.extra_flags(),
    });
    if let Some(magic) = descriptor.magic() {
        fields["magic"] = json!(magic);
    }
    fields
}

fn vertex_id_json(record: VertexIdRecord) -> Value {
    json!({
        "type": VertexIdRecord::TYPE_CODE,
        "shift": record.shift(),
        "extra_flags": record.extra_flags(),
    })
}

fn instance_id_json(record: InstanceIdRecord) -> Value {
    let mut fields = json!({
        "type": InstanceIdRecord::TYPE_CODE,
        "shift": record.shift(),
        "extra_flags": record.extra_flags(),
    });
    if let Some(magic) = record.magic() {
        fields["magic"] = json!(magic);
    }
    fields
}

/// What the descriptor computes, e.g. `element = linear_id mod 72`.
fn meaning(descriptor: AttributeDescriptor) -> String {
    match descriptor {
        AttributeDescriptor::Linear => "element = linear_id".to_string(),
        AttributeDescriptor::Modulus(m) => format!("element = linear_id mod {}", m.value()),
        AttributeDescriptor::PowerOfTwoDivide(p) => format!("element = linear_id >> {}", p.shift()),
        AttributeDescriptor::MagicDivide(m) => format!(
            "element = ({} * {:#x}) >> {}",
            if m.extra_flags() == 1 {
                "(linear_id + 1)"
            } else {
                "linear_id"
            },
            m.multiplier(),
            32 + m.shift()
        ),
    }
}

fn descriptor_text(label: &str, descriptor: AttributeDescriptor) -> String {
    let magic = descriptor
        .magic()
        .map(|m| format!(" magic={m:#010x}"))
        .unwrap_or_default();
    format!(
        "{label:<27} {:<12} type={} shift={} extra_flags={}{magic}\n{:<27} {}\n",
        descriptor.mode().name(),
        descriptor.mode().type_code(),
        descriptor.shift(),
        descriptor.extra_flags(),
        "",
        meaning(descriptor)
    )
}

fn records_text(draw: &Draw) -> String {
    let vertex_id = draw.vertex_id_record();
    let instance_id = draw.instance_id_record();
    let instance_magic = instance_id
        .magic()
        .map(|m| format!(" magic={m:#010x}"))
        .unwrap_or_default();
    format!(
        "{:<27} type={} shift={} extra_flags={}\n{:<27} type={} shift={} extra_flags={}{instance_magic}\n",
        "vertex id record:",
        VertexIdRecord::TYPE_CODE,
        vertex_id.shift(),
        vertex_id.extra_flags(),
        "instance id record:",
        InstanceIdRecord::TYPE_CODE,
        instance_id.shift(),
        instance_id.extra_flags(),
    )
}
