//! Emission of allocated ir3 machine IR: the words of the program, their
//! disassembly, the interface a driver needs and the statistics line.
//!
//! [`emit`] legalises the shader first if that has not been done
//! ([`super::legalise`]), then encodes every machine instruction, in
//! layout order, with the registers the allocation gave its values
//! (`MachineOp::encode`). The disassembly is the generated
//! disassembler's text, which `lathe asm` assembles back into the same
//! words.
//!
//! ```
//! use lathe_adreno::ir3::{GpuModel, emit, generated::MachineOp, sim, target::Ir3Target};
//!
//! let text = "shader fragment\nregisters gpr, a0, a1, p0, const\nb0:\n  %0:f32@gpr0 = input index=0\n  %1:f32@gpr2 = add.f full %0, %0\n  %2:f32@gpr4 = rsq full %1\n  output index=0 %2\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<MachineOp>(&arena, text).unwrap();
//! let t = Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap();
//! let out = emit::emit(&mut shader, &t).unwrap();
//! // The SFU reads the ALU result 6 slots later; `end` waits for the
//! // SFU's result with (ss).
//! assert_eq!(out.asm.lines().last(), Some("(ss)end"));
//! // Registers count half units: %2@gpr4 is r0.z.
//! assert_eq!(out.interface.outputs[0].register, "r0.z");
//! // The words run without a hazard on the generated simulator.
//! let mut m = sim::machine(1);
//! let (file, half, index) = m.parse_reg("r0.x").unwrap();
//! m.set(file, half, index, 0, 2.0f32.to_bits());
//! sim::run(&mut m, &out.words, "a630".parse::<GpuModel>().unwrap().generation()).unwrap();
//! let (file, half, index) = m.parse_reg("r0.z").unwrap();
//! assert_eq!(m.get(file, half, index, 0), Some(0.5f32.to_bits()));
//! ```

use lathe_ir::{InterpLoc, InterpMode, Op, Shader, Type};
use lathe_passes::target::{FileId, PhysReg, TargetFacts};

use super::abi::ConstLayout;
use super::delay;
use super::generated::MachineOp;
use super::legalise::{self, LegaliseError};
use super::select::{Interface as Ports, Port};
use super::stats::Stats;
use super::target::Ir3Target;
use super::{Error, Generation};

/// Why a shader could not be emitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    #[error(transparent)]
    Legalise(#[from] LegaliseError),
    /// An encoded word the disassembler does not read back (a defect of
    /// the encoder or the spec, reported rather than panicking).
    #[error("word {index} (0x{word:016x}): {source}")]
    Disassemble {
        index: usize,
        word: u64,
        source: Error,
    },
}

/// A register holding a shader input or output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The IR's `input index=N` / `output index=N`.
    pub index: u32,
    /// The register as the disassembly names it (`r0.x`, `hr1.y`).
    pub register: String,
    pub ty: Type,
}

/// What a driver needs to run the program.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Interface {
    /// Registers the driver preloads, by input index.
    pub inputs: Vec<Slot>,
    /// Registers the program leaves its outputs in, by output index.
    pub outputs: Vec<Slot>,
    /// Const registers read, in vec4s (Mesa's `constlen`).
    pub constlen: u32,
    /// Full vec4 registers used (Mesa's `max_reg + 1`).
    pub full_regs: u32,
    /// Half vec4 registers used (Mesa's `max_half_reg + 1`).
    pub half_regs: u32,
    /// Waves in flight at this footprint (the spec's occupancy).
    pub waves: u32,
    /// Bytes of private memory per thread (arrays kept in memory, then
    /// spill slots) the driver allocates for `ldp`/`stp`.
    pub private_bytes: u32,
    /// The const file's uniforms, driver parameters and pushed UBO
    /// ranges, and which inputs are preloaded system values (filled in
    /// by [`super::compile`]).
    pub consts: super::abi::ConstLayout,
}

/// An emitted program.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The instruction words, in execution order from the first.
    pub words: Vec<u64>,
    /// One line of disassembly per word.
    pub asm: String,
    pub interface: Interface,
    pub stats: Stats,
}

impl Compiled {
    /// The words as little-endian bytes (the binary a driver uploads).
    pub fn bytes(&self) -> Vec<u8> {
        super::words_to_le_bytes(&self.words)
    }
}

/// Legalises `shader` if needed and emits it.
pub fn emit(shader: &mut Shader<'_, MachineOp>, target: &Ir3Target) -> Result<Compiled, EmitError> {
    emit_program(shader, target, ConstLayout::default(), &Ports::default())
}

/// [`emit`] for a shader laid out by [`super::abi`] as `consts` says: when
/// it has a preamble ([`super::abi::ConstLayout::preamble`]), the first
/// block is the preamble's body, framed as Mesa's ir3 frames it:
///
/// ```text
/// shps #main      every wave but the first skips the preamble
/// getone #main    every thread but one of it skips the body
/// …body…          computes and stores with stc
/// (ss)(sy)shpe    its results are in the const file
/// main: (jp)…
/// ```
///
/// The layout's texture prefetches ([`super::prefetch`]) deliver some of
/// its meta inputs (`ports` says which input of `shader` each generic
/// meta input is); emission fails if the allocator put one where the
/// prefetch state cannot name it, or the pixel-centre barycentrics they
/// use elsewhere than the spec's `fs_prefetch_ij_reg`.
pub fn emit_program(
    shader: &mut Shader<'_, MachineOp>,
    target: &Ir3Target,
    consts: ConstLayout,
    ports: &Ports,
) -> Result<Compiled, EmitError> {
    let mut decoded = delay::Decoded::default();
    let machine = |k: u32| {
        let port = ports.inputs.iter().position(|&p| p == Port::Meta(k));
        port.map(|i| i as u32)
    };
    let prefetched: Vec<u32> = consts
        .prefetches
        .iter()
        .filter_map(|p| machine(p.input))
        .collect();
    let pixel = consts
        .barycentrics
        .iter()
        .find(|b| (b.mode, b.loc) == (InterpMode::Smooth, InterpLoc::Center))
        .and_then(|b| machine(b.input));
    let main = usize::from(consts.preamble.is_some());
    legalise::legalise_with(shader, target, &prefetched, main, &mut decoded)?;
    if !prefetched.is_empty() {
        check_prefetch_registers(shader, target, &prefetched, pixel)?;
    }
    let g = target.generation_id();
    let generation = Generation::from_gpu_id(g)
        .ok_or_else(|| LegaliseError::Malformed(format!("no generation {g}")))?;
    let mut words = Vec::new();
    // The instruction behind each word, as selection and legalisation
    // built it: the statistics read it instead of decoding the word.
    let mut ops = Vec::new();
    let mut interface = Interface::default();
    let mut body = None;
    for (k, &b) in shader.layout().iter().enumerate() {
        if k == 1 && consts.preamble.is_some() {
            body = Some(words.len());
        }
        for &i in shader.block_insts(b) {
            if let Some(w) = legalise::word_of(shader, target, i)? {
                words.push(w.encode(g));
                ops.push(w.op);
            }
            let d = shader.inst(i);
            match d.op {
                Op::Input { index } => {
                    if let Some(v) = d.result {
                        interface.inputs.push(slot(shader, target, index, v)?);
                    }
                }
                Op::Output { index } => {
                    if let Some(&v) = d.args.first() {
                        let s = slot(shader, target, index, v)?;
                        match interface.outputs.iter().find(|o| o.index == index) {
                            Some(o) if o.register != s.register => {
                                return Err(LegaliseError::Unsupported(format!(
                                    "output {index} in {} on one path and {} on another",
                                    o.register, s.register
                                ))
                                .into());
                            }
                            Some(_) => {}
                            None => interface.outputs.push(s),
                        }
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(body) = body {
        words = frame_preamble(words, body, target)?;
        // The frame adds words and marks the landing one: read the
        // instructions back from the framed words.
        ops = words
            .iter()
            .map(|&word| {
                MachineOp::from_word(word, g)
                    .ok_or(LegaliseError::Spec(Error::NoMatch { word, generation }))
            })
            .collect::<Result<_, _>>()?;
    }
    interface.consts = consts;
    interface.inputs.sort_by_key(|s| s.index);
    interface.outputs.sort_by_key(|s| s.index);
    let asm = disassembly(&words, generation)?;
    let stats = super::stats::collect(shader, target, &words, &ops, &asm, &mut decoded)?;
    interface.constlen = stats.constlen;
    interface.full_regs = stats.full;
    interface.half_regs = stats.half;
    interface.waves = stats.waves;
    interface.private_bytes = shader.private_bytes;
    Ok(Compiled {
        words,
        asm,
        interface,
        stats,
    })
}

/// `words` with their first `body` words framed as the preamble
/// ([`emit_program`]; the spec's idioms `preamble_start`, `elect`,
/// `preamble_end`).
fn frame_preamble(
    words: Vec<u64>,
    body: usize,
    target: &Ir3Target,
) -> Result<Vec<u64>, LegaliseError> {
    let g = target.generation_id();
    let idiom = |name: &str| {
        target.idiom(name).ok_or_else(|| {
            LegaliseError::Unsupported(format!("a preamble on a GPU without `{name}`"))
        })
    };
    let set = |op: MachineOp, key: &str, value: u64| {
        op.with_modifier(key, value).ok_or_else(|| {
            LegaliseError::Malformed(format!(
                "`{}` has no field `{key}`",
                lathe_ir::Opcode::name(&op)
            ))
        })
    };
    let (main, rest) = (words.get(body).copied(), &words[body..]);
    // The main part's first instruction is where both jumps land: its
    // word with the (jp) bits (those `jp` changes in its encoding).
    let landing = main.and_then(|w| {
        let op = MachineOp::from_word(w, g)?;
        let jp = op.with_modifier("jp", 1)?.encode(&[], &[], g) ^ op.encode(&[], &[], g);
        Some(w | jp)
    });
    let mut out = Vec::with_capacity(words.len() + 4);
    let offset = |from: usize| (body + 3 - from) as u64;
    out.push(set(idiom("preamble_start")?, "immed", offset(0))?.encode(&[], &[], g));
    out.push(set(idiom("elect")?, "immed", offset(1))?.encode(&[], &[], g));
    out.extend_from_slice(&words[..body]);
    let end = set(set(idiom("preamble_end")?, "ss", 1)?, "sy", 1)?;
    out.push(end.encode(&[], &[], g));
    match landing {
        Some(word) => {
            out.push(word);
            out.extend_from_slice(&rest[1..]);
        }
        None => {
            out.push(set(idiom("nop")?, "jp", 1)?.encode(&[], &[], g));
            out.extend_from_slice(rest);
        }
    }
    Ok(out)
}

/// The register number (register * 4 + component) of a full value's
/// register.
fn full_register_number(target: &Ir3Target, reg: lathe_ir::Reg) -> u32 {
    let bits = target.files()[usize::from(reg.file)].unit_bits;
    u32::from(reg.unit) * bits / 32
}

/// See [`emit_program`]: `prefetched` and `pixel` are inputs of `shader`.
fn check_prefetch_registers(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    prefetched: &[u32],
    pixel: Option<u32>,
) -> Result<(), LegaliseError> {
    let limits = target.prefetch_limits();
    let unsupported = |what: String| Err(LegaliseError::Unsupported(what));
    for &b in shader.layout() {
        for &i in shader.block_insts(b) {
            let d = shader.inst(i);
            let (Op::Input { index }, Some(v)) = (d.op, d.result) else {
                continue;
            };
            let Some(reg) = shader.value_reg(v) else {
                continue;
            };
            let number = full_register_number(target, reg);
            if prefetched.contains(&index) && number > limits.dst_max {
                return unsupported(format!(
                    "a texture prefetch into register number {number} (the prefetch state names at most {})",
                    limits.dst_max
                ));
            }
            if Some(index) == pixel && number != limits.ij_reg {
                return unsupported(format!(
                    "the barycentrics of texture prefetches in register number {number}, not {}",
                    limits.ij_reg
                ));
            }
        }
    }
    Ok(())
}

/// One line per word, as the generated disassembler shows it.
fn disassembly(words: &[u64], generation: Generation) -> Result<String, EmitError> {
    let mut asm = String::new();
    for (index, &word) in words.iter().enumerate() {
        super::disassemble_into(word, generation, &mut asm).map_err(|source| {
            EmitError::Disassemble {
                index,
                word,
                source,
            }
        })?;
        asm.push('\n');
    }
    Ok(asm)
}

fn slot(
    shader: &Shader<'_, MachineOp>,
    target: &Ir3Target,
    index: u32,
    v: lathe_ir::Value,
) -> Result<Slot, LegaliseError> {
    let reg = shader.value_reg(v).ok_or_else(|| {
        LegaliseError::Malformed(format!("%{} has no register (run `ra` first)", v.index()))
    })?;
    let ty = shader.value_type(v);
    let op = shader.inst(shader.value_def(v)).op;
    let class = target.result_class(&op, ty);
    let phys = PhysReg {
        file: FileId(reg.file),
        unit: reg.unit,
    };
    Ok(Slot {
        index,
        register: target.register_name(class, phys, ty),
        ty,
    })
}
