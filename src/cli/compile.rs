//! `lathe compile`: lower a SPIR-V or WGSL shader and print what `--emit`
//! asks for; with `--gpu MODEL`, compile it for that GPU.

use super::CliResult;
use clap::{Args, ValueEnum};
use lathe_frontend::{Lowered, Options, lower_spirv, lower_wgsl, spirv_words};
use lathe_ir::Stage;
use std::io::Read;

/// What `lathe compile` prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    /// The generic IR, in the text form `lathe opt` reads; with `--gpu`,
    /// the allocated machine IR.
    Ir,
    /// The shader interface (inputs, outputs, resources, ...) as JSON.
    Interface,
    /// With `--gpu`: the disassembly, then the statistics line as a `;`
    /// comment (the default with `--gpu`).
    Asm,
    /// With `--gpu`: the instruction words as little-endian bytes (to
    /// `-o FILE`; not to a terminal).
    Bin,
    /// With `--gpu`: the one statistics line.
    Stats,
    /// With `--gpu`: statistics, the register interface and the words.
    Json,
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
    /// What to print (default: `ir`, or `asm` with `--gpu`).
    #[arg(long, value_enum)]
    pub emit: Option<Emit>,
    /// Compile for this GPU (a model `lathe disasm` accepts: Adreno
    /// a306, a530, a630, a740, ...; Mali g57, g68, g77, g78, g310, g510,
    /// g610, g710).
    #[arg(long, value_name = "MODEL")]
    pub gpu: Option<String>,
    /// Write the output here instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,
    /// With `--gpu`: print the machine IR to standard error after this
    /// backend stage (`select`, `group`, `depth`, `sched`, `ra`) or `all`.
    #[arg(long, value_name = "PASS")]
    pub print_after: Option<String>,
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
    /// With `--gpu`: run the compiled code on the generated simulator
    /// against the IR interpreter on random inputs; a mismatch exits
    /// with status 1, a timing hazard with status 3.
    #[arg(long)]
    pub verify: bool,
    /// With an Adreno `--gpu` that runs a preamble (a6xx on): keep every
    /// expression in the main part (Mesa's `IR3_SHADER_DEBUG=nopreamble`).
    #[arg(long)]
    pub no_preamble: bool,
    /// With an Adreno `--gpu` that prefetches textures (a6xx on but a610):
    /// sample every texture in the shader (`sam`) instead.
    #[arg(long)]
    pub no_prefetch: bool,
    /// Seed of `--verify`'s random inputs.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Threads `--verify` runs (a multiple of 4 for fragment shaders).
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub threads: usize,
}

/// Exit status of `--verify` on a timing hazard.
pub const HAZARD_EXIT: i32 = 3;

pub fn run(args: CompileArgs) -> CliResult {
    let opts = Options {
        entry: args.entry.clone(),
        stage: args.stage.map(StageArg::stage),
        spec: parse_spec(&args.spec)?,
        passes: !args.no_opt,
    };
    let arena = lathe_ir::Bump::new();
    let lowered = lower_input(&arena, &args.input, args.lang, &opts)?;
    let text = match (&args.gpu, args.emit.unwrap_or(Emit::Ir)) {
        (Some(model), _) => return compile_for(model, &lowered, &args),
        (None, Emit::Ir) => lathe_ir::print(&lowered.shader),
        (None, Emit::Interface) => serde_json::to_string_pretty(&lowered.interface)? + "\n",
        (None, other) => {
            let name = other.to_possible_value().map(|v| v.get_name().to_string());
            return Err(format!("--emit {} needs --gpu MODEL", name.unwrap_or_default()).into());
        }
    };
    write_output(args.output.as_deref(), text.as_bytes())
}

/// Compiles `lowered` for GPU `model` and writes what `--emit` asks for.
fn compile_for(model: &str, lowered: &Lowered<'_>, args: &CompileArgs) -> CliResult {
    use lathe_adreno::ir3::compile::CompileOptions;
    let gpu = match model.parse::<lathe_adreno::ir3::GpuModel>() {
        Ok(gpu) => gpu,
        Err(e) => match model.parse::<lathe_mali::valhall::MaliModel>() {
            Ok(mali) => return compile_valhall(model, mali, lowered, args),
            Err(_) => return Err(e.into()),
        },
    };
    let options = CompileOptions {
        dumps: args.print_after.is_some() || args.emit == Some(Emit::Ir),
        no_preamble: args.no_preamble,
        no_prefetch: args.no_prefetch,
    };
    let out = lathe::compile::compile_lowered_ir3(lowered, gpu, &options)?;
    print_dumps(&out.dumps, args.print_after.as_deref())?;
    if args.verify {
        let program = lathe_adreno::ir3::verify::Ir3Program::new(&out.compiled, &out.ports, gpu);
        verify(lowered, &program, args)?;
    }
    let c = &out.compiled;
    match args.emit.unwrap_or(Emit::Asm) {
        // The machine IR after the last backend stage.
        Emit::Ir => {
            let (_, dump) = out.dumps.last().ok_or("no machine IR was kept")?;
            write_output(args.output.as_deref(), dump.as_bytes())
        }
        Emit::Interface => Err("--emit interface prints the generic interface; drop --gpu".into()),
        Emit::Asm => write_output(
            args.output.as_deref(),
            format!("{}; {}\n", c.asm, c.stats).as_bytes(),
        ),
        Emit::Stats => write_output(args.output.as_deref(), format!("{}\n", c.stats).as_bytes()),
        Emit::Bin => {
            if args.output.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                return Err(
                    "--emit bin writes binary; give -o FILE or redirect standard output".into(),
                );
            }
            write_output(args.output.as_deref(), &c.bytes())
        }
        Emit::Json => {
            // Each slot with its generic meta index (`meta`, what the const
            // layout's preloads, barycentrics and prefetches name) or its
            // input/output location.
            let slots = |s: &[lathe_adreno::ir3::emit::Slot], ports: &[lathe_isa::select::Port]| {
                s.iter()
                    .map(|s| {
                        let mut slot = serde_json::json!({"index": s.index, "register": s.register, "type": s.ty.to_string()});
                        match ports.get(s.index as usize) {
                            Some(lathe_isa::select::Port::Meta(k)) => slot["meta"] = serde_json::json!(k),
                            Some(lathe_isa::select::Port::Slot(l, c)) => {
                                slot["location"] = serde_json::json!(l);
                                slot["comp"] = serde_json::json!(c);
                            }
                            None => {}
                        }
                        slot
                    })
                    .collect::<Vec<_>>()
            };
            let i = &c.interface;
            let json = serde_json::json!({
                "gpu": model,
                "stats": c.stats.to_string(),
                "interface": {
                    "inputs": slots(&i.inputs, &out.ports.inputs),
                    "outputs": slots(&i.outputs, &out.ports.outputs),
                    "constlen": i.constlen,
                    "full_regs": i.full_regs,
                    "half_regs": i.half_regs,
                    "waves": i.waves,
                    "private_bytes": i.private_bytes,
                    "consts": {
                        "uniform_words": i.consts.uniform_words,
                        "params": i.consts.params.iter().map(|(p, w)| serde_json::json!({"param": format!("{p:?}"), "const_word": w})).collect::<Vec<_>>(),
                        "ubo_ranges": i.consts.ubo_ranges.iter().map(|r| serde_json::json!({"binding": r.binding, "byte_offset": r.byte_offset, "words": r.words, "const_word": r.const_word})).collect::<Vec<_>>(),
                        "preloads": i.consts.preloads.iter().map(|p| serde_json::json!({"input": p.input, "sysval": p.sysval.name(), "comp": p.comp})).collect::<Vec<_>>(),
                        "varyings": i.consts.varyings.iter().map(|v| serde_json::json!({"slot": v.slot, "comp": v.comp, "inloc": v.inloc, "interp": format!("{:?}", v.interp.mode).to_lowercase(), "loc": format!("{:?}", v.interp.loc).to_lowercase(), "type": v.ty.to_string(), "sysval": v.sysval.map(|s| s.name())})).collect::<Vec<_>>(),
                        "constant_data": i.consts.constant_data.as_ref().map(|d| serde_json::json!({"binding": d.binding, "words": d.words.iter().map(|w| format!("0x{w:08x}")).collect::<Vec<_>>()})),
                        "immediates": i.consts.immediates.iter().map(|&(w, bits)| serde_json::json!({"const_word": w, "bits": format!("0x{bits:08x}")})).collect::<Vec<_>>(),
                        "preamble": i.consts.preamble.map(|p| serde_json::json!({"const_word": p.first_word, "words": p.words})),
                        "barycentrics": i.consts.barycentrics.iter().map(|b| serde_json::json!({"input": b.input, "interp": format!("{:?}", b.mode).to_lowercase(), "loc": format!("{:?}", b.loc).to_lowercase()})).collect::<Vec<_>>(),
                        "prefetches": i.consts.prefetches.iter().map(|p| serde_json::json!({"input": p.input, "inloc": p.inloc, "texture": p.texture, "sampler": p.sampler, "wrmask": p.wrmask, "half": p.half})).collect::<Vec<_>>(),
                    },
                },
                "words": c.words.iter().map(|w| format!("0x{w:016x}")).collect::<Vec<_>>(),
            });
            write_output(
                args.output.as_deref(),
                (serde_json::to_string_pretty(&json)? + "\n").as_bytes(),
            )
        }
    }
}

/// [`compile_for`] for a Mali Valhall model.
fn compile_valhall(
    model: &str,
    gpu: lathe_mali::valhall::MaliModel,
    lowered: &Lowered<'_>,
    args: &CompileArgs,
) -> CliResult {
    use lathe_mali::valhall::compile::CompileOptions;
    let options = CompileOptions {
        dumps: args.print_after.is_some(),
    };
    let out = lathe::compile::compile_lowered_valhall(lowered, gpu, &options)?;
    print_dumps(&out.dumps, args.print_after.as_deref())?;
    if args.verify {
        let program = lathe_mali::valhall::verify::ValhallProgram::new(&out);
        verify(lowered, &program, args)?;
    }
    let c = &out.compiled;
    match args.emit.unwrap_or(Emit::Asm) {
        Emit::Ir | Emit::Interface => {
            Err("--emit ir/interface print the generic IR; drop --gpu".into())
        }
        // An IDVS pair: the position shader, then the varying shader,
        // each with its statistics line (as Mesa prints both).
        Emit::Asm => {
            let mut text = format!("{}; {}\n", c.listing(), c.stats);
            if let Some(v) = &out.varying {
                let v = &v.compiled;
                text += &format!("; varying shader\n{}; {}\n", v.listing(), v.stats);
            }
            write_output(args.output.as_deref(), text.as_bytes())
        }
        Emit::Stats => {
            let mut text = format!("{}\n", c.stats);
            if let Some(v) = &out.varying {
                text += &format!("{}\n", v.compiled.stats);
            }
            write_output(args.output.as_deref(), text.as_bytes())
        }
        Emit::Bin => {
            if args.output.is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                return Err(
                    "--emit bin writes binary; give -o FILE or redirect standard output".into(),
                );
            }
            // The varying shader of an IDVS pair follows the position
            // shader (`--emit json` gives its byte offset).
            let mut bytes = lathe_mali::valhall::words_to_le_bytes(&c.words);
            if let Some(v) = &out.varying {
                bytes.extend(lathe_mali::valhall::words_to_le_bytes(&v.compiled.words));
            }
            write_output(args.output.as_deref(), &bytes)
        }
        Emit::Json => {
            let stored = |io: &lathe_mali::valhall::abi::Io| {
                io.stored
                    .iter()
                    .map(|s| serde_json::json!({"slot": s.slot, "comp": s.comp, "place": format!("{:?}", s.place)}))
                    .collect::<Vec<_>>()
            };
            let constants = |io: &lathe_mali::valhall::abi::Io| {
                io.constants
                    .iter()
                    .map(|w| serde_json::json!({"fau": format!("u{}", w.fau), "bits": format!("0x{:08x}", w.bits)}))
                    .collect::<Vec<_>>()
            };
            let ports = |s: &[(lathe_mali::valhall::select::Port, u32)]| {
                s.iter()
                    .map(|(port, reg)| serde_json::json!({"port": format!("{port:?}"), "register": format!("r{reg}")}))
                    .collect::<Vec<_>>()
            };
            let mut json = serde_json::json!({
                "gpu": model,
                "stats": c.stats.to_string(),
                "interface": {
                    "inputs": ports(&out.inputs),
                    "outputs": ports(&out.outputs),
                    "registers": c.registers,
                    "threads": c.threads,
                    "private_bytes": c.private_bytes,
                    // Vertex: the IDVS varying buffer, slot → byte offset
                    // of its record (16 bytes a slot), and where each
                    // output component is stored.
                    "varyings": out.io.varyings.iter().map(|(&slot, &offset)| serde_json::json!({"slot": lathe_ir::slot::name(slot).map_or_else(|| slot.to_string(), str::to_string), "offset": offset})).collect::<Vec<_>>(),
                    "stored": stored(&out.io),
                    // Buffer base addresses (low word first) and storage
                    // buffer sizes the driver pushes into the FAU.
                    "constant_data": out.io.constant_data.as_ref().map(|d| serde_json::json!({"binding": d.binding, "words": d.words.iter().map(|w| format!("0x{w:08x}")).collect::<Vec<_>>()})),
                    "buffer_addresses": out.io.addresses.iter().map(|a| serde_json::json!({"fau": format!("u{}", a.fau), "kind": format!("{:?}", a.kind), "binding": a.binding})).collect::<Vec<_>>(),
                    "buffer_sizes": out.io.sizes.iter().map(|s| serde_json::json!({"fau": format!("u{}", s.fau), "binding": s.binding})).collect::<Vec<_>>(),
                    // Texture/sampler handles, and texture and image
                    // sizes (from `fau` on: level 0's width, height and
                    // depth, the array size, the level count).
                    "texture_handles": out.io.textures.iter().map(|h| serde_json::json!({"fau": format!("u{}", h.fau), "texture": h.texture, "sampler": h.sampler, "word": format!("0x{:08x}", h.word())})).collect::<Vec<_>>(),
                    // Constants outside the immediate table, each in
                    // the FAU word the driver pushes it into.
                    "constants": constants(&out.io),
                    "texture_sizes": out.io.texture_sizes.iter().map(|w| serde_json::json!({"fau": format!("u{}", w.fau), "resource": format!("{:?}", w.resource)})).collect::<Vec<_>>(),
                },
                "words": c.words.iter().map(|w| format!("0x{w:016x}")).collect::<Vec<_>>(),
            });
            // The IDVS varying shader (Mesa's secondary shader), at
            // `offset` bytes of `--emit bin`.
            if let Some(v) = &out.varying {
                json["varying_shader"] = serde_json::json!({
                    "offset": 8 * c.words.len(),
                    "stats": v.compiled.stats.to_string(),
                    "registers": v.compiled.registers,
                    "threads": v.compiled.threads,
                    "private_bytes": v.compiled.private_bytes,
                    "inputs": ports(&v.inputs),
                    "stored": stored(&v.io),
                    "constants": constants(&v.io),
                    "words": v.compiled.words.iter().map(|w| format!("0x{w:016x}")).collect::<Vec<_>>(),
                });
            }
            write_output(
                args.output.as_deref(),
                (serde_json::to_string_pretty(&json)? + "\n").as_bytes(),
            )
        }
    }
}

/// `--print-after STAGE`: the machine IR after that stage (or every
/// one), to standard error.
fn print_dumps(dumps: &[(&'static str, String)], wanted: Option<&str>) -> CliResult {
    let Some(wanted) = wanted else {
        return Ok(());
    };
    let mut found = false;
    for (stage, dump) in dumps {
        if wanted == "all" || wanted == *stage {
            eprintln!("; after {stage}\n{dump}");
            found = true;
        }
    }
    if !found {
        let stages: Vec<&str> = dumps.iter().map(|(s, _)| *s).collect();
        return Err(format!(
            "--print-after {wanted}: no such stage (stages: {}, all)",
            stages.join(", ")
        )
        .into());
    }
    Ok(())
}

/// `--verify`: a summary line on standard error when the program agrees
/// with the interpreter; exits with [`HAZARD_EXIT`] on a hazard.
fn verify(
    lowered: &lathe::frontend::Lowered<'_>,
    program: &dyn lathe_ir::verify::Executor,
    args: &CompileArgs,
) -> CliResult {
    let options = lathe_ir::verify::Options {
        seed: args.seed,
        threads: args.threads,
        workgroup_size: lowered.interface.workgroup_size,
        ..Default::default()
    };
    match lathe_ir::verify::verify(&lowered.shader, program, &options) {
        Ok(r) => {
            let undefined = if r.undefined > 0 {
                format!(" ({} undefined, not compared)", r.undefined)
            } else {
                String::new()
            };
            let repaired = if r.repaired > 0 {
                format!(", inputs repaired {} times", r.repaired)
            } else {
                String::new()
            };
            eprintln!(
                "verify: ok ({} values{undefined} over {} threads, seed {}, draw {}{repaired})",
                r.compared, r.threads, args.seed, r.draw
            );
            Ok(())
        }
        Err(e) if e.is_hazard() => {
            eprintln!("lathe: verify: {e}");
            std::process::exit(HAZARD_EXIT);
        }
        Err(e) => Err(format!("verify: {e}").into()),
    }
}

/// Writes `bytes` to `path` (standard output when `None` or `-`).
fn write_output(path: Option<&str>, bytes: &[u8]) -> CliResult {
    use std::io::Write;
    match path {
        None | Some("-") => {
            let mut out = std::io::stdout().lock();
            out.write_all(bytes)?;
            out.flush()?;
        }
        Some(p) => std::fs::write(p, bytes).map_err(|e| format!("cannot write {p}: {e}"))?,
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
