//! `lathe link PRODUCER CONSUMER`: link a vertex shader with a fragment
//! shader (SPIR-V, WGSL or IR text) and show what passes between them
//! before and after.

use super::CliResult;
use super::compile::{Lang, StageArg, lower_input, parse_spec};
use clap::{Args, ValueEnum};
use lathe_frontend::pipeline::share_uniform_buffers;
use lathe_frontend::{Interface, Options};
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
    /// The vertex shader: SPIR-V (`.spv`), WGSL (`.wgsl`) or IR text (`.lir`).
    pub producer: String,
    /// The fragment shader, in the same forms; omitted, the producer's file
    /// is read again (a WGSL file holding both stages).
    pub consumer: Option<String>,
    /// What to print.
    #[arg(long, value_enum, default_value = "summary")]
    pub emit: Emit,
    /// Entry point names as in `lathe compile`: one for both files, or
    /// `--entry VS --entry FS` (or `--entry VS,FS`).
    #[arg(long, value_delimiter = ',')]
    pub entry: Vec<String>,
    /// Entry point stages as in `lathe compile` (default `vert` then
    /// `frag`): one for both files, or one per file.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub stage: Vec<StageArg>,
    /// Input language of both files (default: from each file's extension,
    /// else the SPIR-V magic number).
    #[arg(long, value_enum)]
    pub lang: Option<Lang>,
    /// Override a specialization constant in both stages, as in `lathe
    /// compile`.
    #[arg(long = "spec", value_name = "ID=VALUE")]
    pub spec: Vec<String>,
    /// Producer outputs captured by transform feedback, as `SLOT.COMP`
    /// (e.g. `3.0,3.1`): kept even when the consumer does not read them.
    #[arg(long, value_delimiter = ',')]
    pub xfb: Vec<String>,
    /// Keep infinities through interpolation (no code moves across it).
    #[arg(long)]
    pub preserve_inf: bool,
}

/// The `which`-th (0: producer, 1: consumer) of a per-file option given
/// once for both files or once per file.
fn per_file<'v, T>(values: &'v [T], which: usize, name: &str) -> Result<Option<&'v T>, String> {
    match values.len() {
        0 => Ok(None),
        1 => Ok(values.first()),
        2 => Ok(values.get(which)),
        n => Err(format!(
            "--{name} given {n} times (once for both files, or once per file)"
        )),
    }
}

/// One stage: IR text as it is, SPIR-V or WGSL lowered (with its interface).
fn read_stage<'a>(
    arena: &'a lathe_ir::Bump,
    args: &LinkArgs,
    which: usize,
) -> Result<(Shader<'a, GenericOp>, Option<Interface>), Box<dyn std::error::Error>> {
    let path = match which {
        0 => &args.producer,
        _ => args.consumer.as_ref().unwrap_or(&args.producer),
    };
    if path.ends_with(".lir") {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
        let shader = lathe_ir::parse(arena, &text).map_err(|e| e.with_file(path))?;
        return Ok((shader, None));
    }
    let default_stage = [StageArg::Vert, StageArg::Frag][which];
    let stage = per_file(&args.stage, which, "stage")?
        .copied()
        .unwrap_or(default_stage);
    let opts = Options {
        entry: per_file(&args.entry, which, "entry")?.cloned(),
        stage: Some(stage.stage()),
        spec: parse_spec(&args.spec)?,
        passes: true,
    };
    let lowered = lower_input(arena, path, args.lang, &opts)?;
    Ok((lowered.shader, Some(lowered.interface)))
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
    let shown: Vec<&Varying> = vars
        .iter()
        .filter(|v| if consumer_side { v.read } else { v.written })
        .collect();
    let mut slots: Vec<u16> = shown.iter().map(|v| v.slot).collect();
    slots.dedup();
    let _ = writeln!(
        out,
        "  {title}: {} vec4 slots, {} components",
        slots.len(),
        shown.len()
    );
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
    let (mut producer, p_iface) = read_stage(&arena, &args, 0)?;
    let (mut consumer, c_iface) = read_stage(&arena, &args, 1)?;
    // Lowered stages number their uniform buffers alone; linking moves UBO
    // loads between them, so give them the pipeline's numbering.
    if let (Some(mut pi), Some(mut ci)) = (p_iface, c_iface) {
        share_uniform_buffers(&mut [(&mut producer, &mut pi), (&mut consumer, &mut ci)])?;
    }
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
