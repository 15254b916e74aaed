//! `lathe link PRODUCER CONSUMER`: link a vertex shader with a fragment
//! shader and show what passes between them before and after.

use super::CliResult;
use clap::{Args, ValueEnum};
use lathe_ir::{GenericOp, Interp, InterpLoc, InterpMode, Shader};
use lathe_passes::link::{self, DefaultCost, LinkOptions, Varying, slot_name};
use std::fmt::Write;

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The varyings before and after, and the summary line.
    Summary,
    /// The summary, then both linked shaders as IR text.
    Ir,
}

#[derive(Args)]
pub struct LinkArgs {
    /// The vertex shader: IR text (`.lir`).
    pub producer: String,
    /// The fragment shader: IR text (`.lir`).
    pub consumer: String,
    /// What to print.
    #[arg(long, value_enum, default_value = "summary")]
    pub emit: Emit,
    /// Producer outputs captured by transform feedback, as `SLOT.COMP`
    /// (e.g. `3.0,3.1`): kept even when the consumer does not read them.
    #[arg(long, value_delimiter = ',')]
    pub xfb: Vec<String>,
    /// Keep infinities through interpolation (no code moves across it).
    #[arg(long)]
    pub preserve_inf: bool,
}

fn read_ir<'a>(arena: &'a lathe_ir::Bump, path: &str) -> Result<Shader<'a, GenericOp>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    if !path.ends_with(".lir") {
        return Err(format!(
            "unsupported: {path}: only IR text (.lir) inputs for now"
        ));
    }
    lathe_ir::parse(arena, &text).map_err(|e| e.with_file(path))
}

fn parse_comp(text: &str) -> Result<link::Comp, String> {
    let bad = || format!("--xfb: `{text}` is not SLOT.COMP");
    let (s, c) = text.trim().split_once('.').ok_or_else(bad)?;
    let c: u8 = c.parse().map_err(|_| bad())?;
    if c > 3 {
        return Err(bad());
    }
    Ok((s.parse().map_err(|_| bad())?, c))
}

fn interp_text(q: Interp) -> String {
    let mode = match q.mode {
        InterpMode::Flat => "flat",
        InterpMode::Smooth => "smooth",
        InterpMode::NoPerspective => "noperspective",
    };
    match q.loc {
        InterpLoc::Center => mode.to_string(),
        InterpLoc::Centroid => format!("{mode} centroid"),
        InterpLoc::Sample => format!("{mode} sample"),
    }
}

/// One line per slot: `VAR0  x f32 smooth, y f32 flat`.
fn table(out: &mut String, title: &str, vars: &[Varying], consumer_side: bool) {
    let _ = writeln!(out, "  {title}");
    let mut k = 0;
    while k < vars.len() {
        let slot = vars[k].slot;
        let mut parts = Vec::new();
        while k < vars.len() && vars[k].slot == slot {
            let v = &vars[k];
            let shown = if consumer_side { v.read } else { v.written };
            if shown {
                let mut p = format!("{} {}", ["x", "y", "z", "w"][v.comp as usize & 3], v.ty);
                if consumer_side {
                    let q: Vec<String> = v.interp.iter().map(|&q| interp_text(q)).collect();
                    let _ = write!(p, " {}", q.join("/"));
                } else if !v.read {
                    p.push_str(" (unread)");
                }
                parts.push(p);
            }
            k += 1;
        }
        if !parts.is_empty() {
            let _ = writeln!(out, "    {:<10} {}", slot_name(slot), parts.join(", "));
        }
    }
}

fn describe(out: &mut String, label: &str, p: &Shader<'_, GenericOp>, c: &Shader<'_, GenericOp>) {
    let vars = link::varyings(p, c);
    let _ = writeln!(out, "{label}:");
    table(out, "vertex outputs", &vars, false);
    table(out, "fragment inputs", &vars, true);
}

pub fn run(args: LinkArgs) -> CliResult {
    let arena = lathe_ir::Bump::new();
    let mut producer = read_ir(&arena, &args.producer)?;
    let mut consumer = read_ir(&arena, &args.consumer)?;
    let options = LinkOptions {
        xfb: args
            .xfb
            .iter()
            .filter(|t| !t.trim().is_empty())
            .map(|t| parse_comp(t))
            .collect::<Result<_, _>>()?,
        preserve_inf: args.preserve_inf,
        ..LinkOptions::default()
    };
    let mut out = String::new();
    describe(&mut out, "before", &producer, &consumer);
    let report = link::link(&mut producer, &mut consumer, &options, &DefaultCost)?;
    describe(&mut out, "after", &producer, &consumer);
    let steps: Vec<String> = report
        .after_step
        .iter()
        .map(|(name, n)| format!("{name} {}/{}", n.vec4_slots, n.components))
        .collect();
    let _ = writeln!(out, "steps (vec4 slots/components): {}", steps.join(", "));
    if !report.no_varying.is_empty() {
        let kept: Vec<String> = report
            .no_varying
            .iter()
            .map(|&(s, c)| format!("{}.{}", slot_name(s), ["x", "y", "z", "w"][c as usize & 3]))
            .collect();
        let _ = writeln!(
            out,
            "no varying (system value or transform feedback only): {}",
            kept.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "vec4 slots: {} -> {}, components: {} -> {}",
        report.before.vec4_slots,
        report.after.vec4_slots,
        report.before.components,
        report.after.components
    );
    if args.emit == Emit::Ir {
        let _ = write!(
            out,
            "; linked vertex shader\n{}; linked fragment shader\n{}",
            lathe_ir::print(&producer),
            lathe_ir::print(&consumer)
        );
    }
    print!("{out}");
    Ok(())
}
