//! `lathe compile`: lower a SPIR-V or WGSL shader and print what `--emit` asks for.

use super::CliResult;
use clap::{Args, ValueEnum};
use lathe_frontend::{Lowered, Options, lower_spirv, lower_wgsl, spirv_words};
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
    let opts = Options {
        entry: args.entry.clone(),
        stage: args.stage.map(StageArg::stage),
        spec: parse_spec(&args.spec)?,
        passes: !args.no_opt,
    };
    let arena = lathe_ir::Bump::new();
    let lowered = lower_input(&arena, &args.input, args.lang, &opts)?;
    match args.emit {
        Emit::Ir => print!("{}", lathe_ir::print(&lowered.shader)),
        Emit::Interface => println!("{}", serde_json::to_string_pretty(&lowered.interface)?),
    }
    Ok(())
}

impl StageArg {
    pub fn stage(self) -> Stage {
        match self {
            StageArg::Vert => Stage::Vertex,
            StageArg::Frag => Stage::Fragment,
            StageArg::Comp => Stage::Compute,
        }
    }
}

/// `--spec ID=VALUE` arguments as pairs.
pub fn parse_spec(args: &[String]) -> Result<Vec<(String, String)>, String> {
    args.iter()
        .map(|s| {
            let (k, v) = s
                .split_once('=')
                .ok_or_else(|| format!("--spec {s}: expected ID=VALUE"))?;
            Ok((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

/// Read `input` (a `.spv` or `.wgsl` path, or `-` for standard input) and
/// lower it; the language is `lang`, else the file extension, else the
/// SPIR-V magic number.
pub fn lower_input<'a>(
    arena: &'a lathe_ir::Bump,
    input: &str,
    lang: Option<Lang>,
    opts: &Options,
) -> Result<Lowered<'a>, Box<dyn std::error::Error>> {
    let bytes = if input == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        buf
    } else {
        std::fs::read(input).map_err(|e| format!("cannot read {input}: {e}"))?
    };
    let lang = match lang {
        Some(l) => l,
        None if input.ends_with(".wgsl") => Lang::Wgsl,
        None if input.ends_with(".spv") => Lang::Spv,
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
    Ok(match lang {
        Lang::Spv => lower_spirv(arena, &spirv_words(&bytes)?, opts)?,
        Lang::Wgsl => {
            let text = String::from_utf8(bytes).map_err(|_| "the WGSL input is not UTF-8")?;
            lower_wgsl(arena, &text, opts)?
        }
    })
}
