//! `lathe compile`: lower a SPIR-V or WGSL shader and print what `--emit` asks for.

use super::CliResult;
use clap::{Args, ValueEnum};
use lathe_frontend::{Options, lower_spirv, lower_wgsl, spirv_words};
use lathe_ir::Stage;
use std::io::Read;

/// What `lathe compile` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The generic IR, in the text form `lathe opt` reads.
    Ir,
    /// The shader interface (inputs, outputs, resources, ...) as JSON.
    Interface,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Lang {
    /// A SPIR-V binary (e.g. from `glslangValidator -V`).
    Spv,
    /// WGSL source, lowered through naga.
    Wgsl,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StageArg {
    Vert,
    Frag,
    Comp,
}

#[derive(Args)]
pub struct CompileArgs {
    /// A `.spv` or `.wgsl` file, or `-` for standard input (with `--lang`).
    pub input: String,
    /// What to print.
    #[arg(long, value_enum, default_value = "ir")]
    pub emit: Emit,
    /// Entry point name, when the module has several.
    #[arg(long)]
    pub entry: Option<String>,
    /// Entry point stage, when the module has several.
    #[arg(long, value_enum)]
    pub stage: Option<StageArg>,
    /// Input language (default: from the file extension, else the SPIR-V magic number).
    #[arg(long, value_enum)]
    pub lang: Option<Lang>,
    /// Override a specialization constant (SPIR-V SpecId or name; WGSL
    /// override name or @id), e.g. `--spec 0=64 --spec useShadows=true`.
    #[arg(long = "spec", value_name = "ID=VALUE")]
    pub spec: Vec<String>,
    /// Skip the default passes (flatten, copy-prop, dce) after lowering.
    #[arg(long)]
    pub no_opt: bool,
}

pub fn run(args: CompileArgs) -> CliResult {
    let bytes = if args.input == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        buf
    } else {
        std::fs::read(&args.input).map_err(|e| format!("cannot read {}: {e}", args.input))?
    };
    let lang = match args.lang {
        Some(l) => l,
        None if args.input.ends_with(".wgsl") => Lang::Wgsl,
        None if args.input.ends_with(".spv") => Lang::Spv,
        None if bytes.len() >= 4
            && (bytes[..4] == 0x0723_0203u32.to_le_bytes()
                || bytes[..4] == 0x0723_0203u32.to_be_bytes()) =>
        {
            Lang::Spv
        }
        None => {
            return Err("cannot tell the input language; pass --lang spv or --lang wgsl".into());
        }
    };
    let mut spec = Vec::new();
    for s in &args.spec {
        let (k, v) = s
            .split_once('=')
            .ok_or_else(|| format!("--spec {s}: expected ID=VALUE"))?;
        spec.push((k.trim().to_string(), v.trim().to_string()));
    }
    let opts = Options {
        entry: args.entry.clone(),
        stage: args.stage.map(|s| match s {
            StageArg::Vert => Stage::Vertex,
            StageArg::Frag => Stage::Fragment,
            StageArg::Comp => Stage::Compute,
        }),
        spec,
        passes: !args.no_opt,
    };
    let arena = lathe_ir::Bump::new();
    let lowered = match lang {
        Lang::Spv => lower_spirv(&arena, &spirv_words(&bytes)?, &opts)?,
        Lang::Wgsl => {
            let text = String::from_utf8(bytes).map_err(|_| "the WGSL input is not UTF-8")?;
            lower_wgsl(&arena, &text, &opts)?
        }
    };
    match args.emit {
        Emit::Ir => print!("{}", lathe_ir::print(&lowered.shader)),
        Emit::Interface => println!("{}", serde_json::to_string_pretty(&lowered.interface)?),
    }
    Ok(())
}
