//! `lathe opt`: run IR passes over a shader in IR text form.

use super::CliResult;
use clap::Args;
use lathe_ir::{GenericOp, Opcode, Shader};
use lathe_passes::{PassError, Registry};
use std::io::Read;
use std::rc::Rc;

#[derive(Args)]
pub struct OptArgs {
    /// IR text file to optimise, or `-` for standard input.
    pub file: String,
    /// Comma-separated pipeline, e.g. `dce,copy-prop,flatten`; an empty
    /// list only validates and prints the canonical form.
    #[arg(long, value_delimiter = ',', default_value = "flatten,copy-prop,dce")]
    pub passes: Vec<String>,
    /// Print the IR after every pass (to standard error).
    #[arg(long)]
    pub print_after_all: bool,
    /// Print each pass's time (to standard error).
    #[arg(long)]
    pub time_passes: bool,
    /// GPU model whose machine instructions the IR uses (`a630`, …); it
    /// provides the facts the backend passes (`group`, `depth`, `sched`)
    /// need. Without it the IR is generic. With an ir3 model the pipeline
    /// may name `select`: passes before it run on generic IR, ir3
    /// instruction selection turns it into machine IR, passes after it
    /// run on that (`select,group,depth,sched,ra`).
    #[arg(long)]
    pub target: Option<String>,
    /// With an ir3 or Valhall `--target`: print the emitted program
    /// instead of the IR (legalising it first if the pipeline did not):
    /// `asm` (the
    /// disassembly, then the statistics line as a `;` comment), `bin`
    /// (one `0x…` word per line), `stats` (the statistics line).
    #[arg(long, value_parser = ["asm", "bin", "stats"])]
    pub emit: Option<String>,
}

pub fn run(args: OptArgs) -> CliResult {
    let (name, text) = if args.file == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        ("<stdin>".to_string(), text)
    } else {
        let text = std::fs::read_to_string(&args.file)
            .map_err(|e| format!("cannot read {}: {e}", args.file))?;
        (args.file.clone(), text)
    };
    let ir3 = args
        .target
        .as_deref()
        .is_some_and(|m| m.parse::<lathe_adreno::ir3::GpuModel>().is_ok());
    let valhall = args
        .target
        .as_deref()
        .is_some_and(|m| m.parse::<lathe_mali::valhall::MaliModel>().is_ok());
    if args.emit.is_some() && !ir3 && !valhall {
        return Err("--emit needs an ir3 --target (a630, …) or a Valhall one (g610, …)".into());
    }
    match args.target.as_deref() {
        None => optimise(Registry::<GenericOp>::generic(), &args, &name, &text, print),
        Some(model) => {
            if let Ok(gpu) = model.parse::<lathe_adreno::ir3::GpuModel>() {
                let target =
                    lathe_adreno::ir3::target::Ir3Target::new(gpu).map_err(|e| e.to_string())?;
                let target = Rc::new(target);
                if args.passes.iter().any(|p| p.trim() == SELECT) {
                    return select_ir3(&args, &name, &text, &target);
                }
                let registry = Registry::with_target(target.clone());
                match args.emit.as_deref() {
                    Some(form) => optimise(registry, &args, &name, &text, |shader| {
                        emit_ir3(shader, &target, form)
                    }),
                    None => optimise(registry, &args, &name, &text, print),
                }
            } else if let Ok(gpu) = model.parse::<lathe_mali::valhall::MaliModel>() {
                let target = Rc::new(lathe_mali::valhall::target::ValhallTarget::new(gpu));
                let registry = Registry::with_target(target.clone());
                match args.emit.as_deref() {
                    Some(form) => optimise(registry, &args, &name, &text, |shader| {
                        emit_valhall(shader, &target, form)
                    }),
                    None => optimise(registry, &args, &name, &text, print),
                }
            } else {
                Err(format!("unknown GPU model `{model}` for --target").into())
            }
        }
    }
}

/// Prints the IR.
fn print<O: Opcode>(shader: &mut Shader<'_, O>) -> CliResult {
    print!("{}", lathe_ir::print(shader));
    Ok(())
}

/// Prints the emitted ir3 program in `form` (`asm`, `bin`, `stats`).
fn emit_ir3(
    shader: &mut Shader<'_, lathe_adreno::ir3::generated::MachineOp>,
    target: &lathe_adreno::ir3::target::Ir3Target,
    form: &str,
) -> CliResult {
    let out = lathe_adreno::ir3::emit::emit(shader, target)?;
    match form {
        "bin" => out.words.iter().for_each(|w| println!("0x{w:016x}")),
        "stats" => println!("{}", out.stats),
        _ => println!("{}; {}", out.asm, out.stats),
    }
    Ok(())
}

/// Prints the emitted Valhall program in `form` (`asm`, `bin`, `stats`),
/// legalising it first unless the pipeline did.
fn emit_valhall(
    shader: &mut Shader<'_, lathe_mali::valhall::generated::MachineOp>,
    target: &lathe_mali::valhall::target::ValhallTarget,
    form: &str,
) -> CliResult {
    lathe_mali::valhall::legalise::legalise(shader, target)?;
    let out = lathe_mali::valhall::emit::emit(shader, target)?;
    match form {
        "bin" => out.words.iter().for_each(|w| println!("0x{w:016x}")),
        "stats" => println!("{}", out.stats),
        _ => println!("{}; {}", out.listing(), out.stats),
    }
    Ok(())
}

/// The pass name that turns generic IR into the target's machine IR
/// (ir3 targets): passes before it run on generic IR, passes after it on
/// the selected machine IR.
const SELECT: &str = "select";

/// `--passes A,select,B` with an ir3 target: generic passes `A`, ir3
/// instruction selection, machine passes `B`, then print or emit.
fn select_ir3(
    args: &OptArgs,
    name: &str,
    text: &str,
    target: &Rc<lathe_adreno::ir3::target::Ir3Target>,
) -> CliResult {
    let names: Vec<&str> = args
        .passes
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .collect();
    let at = names.iter().position(|&n| n == SELECT).unwrap_or(0);
    let (before, after) = (&names[..at], &names[at + 1..]);
    if after.contains(&SELECT) {
        return Err("`select` can run once".into());
    }
    let generic_passes = Registry::<GenericOp>::generic().pipeline(before)?;
    let machine_passes = Registry::with_target(target.clone()).pipeline(after)?;
    let arena = lathe_ir::Bump::new();
    let (mut generic, map): (Shader<GenericOp>, _) =
        lathe_ir::parse_with_source_map(&arena, text).map_err(|e| e.with_file(name))?;
    run_pipeline(generic_passes, args, name, text, Some(&map), &mut generic)?;
    let mut shader = lathe_adreno::ir3::select::select(&generic, target)?.shader;
    if args.print_after_all {
        eprintln!("; after {SELECT}\n{}", lathe_ir::print(&shader));
    }
    run_pipeline(machine_passes, args, name, text, None, &mut shader)?;
    match args.emit.as_deref() {
        Some(form) => emit_ir3(&mut shader, target, form),
        None => print(&mut shader),
    }
}

/// Parses `text` as IR of vocabulary `O`, runs the pipeline, hands the
/// result to `finish` (which prints it).
fn optimise<O: Opcode>(
    registry: Registry<O>,
    args: &OptArgs,
    name: &str,
    text: &str,
    finish: impl FnOnce(&mut Shader<'_, O>) -> CliResult,
) -> CliResult {
    let names: Vec<&str> = args
        .passes
        .iter()
        .map(|n| n.trim())
        .filter(|n| !n.is_empty())
        .collect();
    let pipeline = registry.pipeline(&names)?;
    let arena = lathe_ir::Bump::new();
    let (mut shader, map): (Shader<O>, _) =
        lathe_ir::parse_with_source_map(&arena, text).map_err(|e| e.with_file(name))?;
    run_pipeline(pipeline, args, name, text, Some(&map), &mut shader)?;
    finish(&mut shader)
}

/// Runs `pipeline` over `shader`, which was parsed from `text` (with
/// `map` when its instructions are the text's).
fn run_pipeline<O: Opcode>(
    mut pipeline: lathe_passes::PassManager<O>,
    args: &OptArgs,
    name: &str,
    text: &str,
    map: Option<&lathe_ir::SourceMap>,
    shader: &mut Shader<'_, O>,
) -> CliResult {
    pipeline.verify = true;
    pipeline.print_after_all = args.print_after_all;
    let records = match pipeline.run(shader) {
        Ok(records) => records,
        Err(PassError::InvalidInput(err)) => {
            // Point at the first offending line of the input.
            let mut msg = String::new();
            for v in &err.violations {
                let place = v
                    .inst
                    .and_then(|i| map?.position(i))
                    .map(|(line, col)| {
                        let src = text.lines().nth(line as usize - 1).unwrap_or("");
                        format!(
                            "{name}:{line}:{col}: {}\n{}\n",
                            v.message,
                            lathe_ir::parser::caret(src, col)
                        )
                    })
                    .unwrap_or_else(|| format!("{name}: {v}\n"));
                msg.push_str(&place);
            }
            return Err(format!("invalid IR\n{}", msg.trim_end()).into());
        }
        Err(e) => return Err(e.into()),
    };
    for r in &records {
        if let Some(dump) = &r.dump {
            eprintln!("; after {}\n{dump}", r.name);
        }
    }
    if args.time_passes {
        eprint!("{}", lathe_passes::timing_report(&records));
    }
    Ok(())
}
