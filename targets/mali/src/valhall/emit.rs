//! Emission: a legalised Valhall shader ([`super::legalise`]) to its
//! instruction words, their disassembly in Mesa's syntax, the register
//! footprint and the statistics line. [`emit`] is the entry point; the
//! meta instructions (inputs, outputs, phis, collects, splits) and the
//! IR's structural terminators emit nothing, every machine instruction
//! one word, in layout order.
//!
//! ```
//! use lathe_mali::valhall::{emit, legalise, target::ValhallTarget, generated::MachineOp};
//!
//! let text = "shader fragment\nregisters r\nb0:\n  %0:f32@r0 = input index=0\n  \
//!             %1:f32@r1 = FADD.f32 %0, %0\n  output index=0 %1\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<MachineOp>(&arena, text).unwrap();
//! let target = ValhallTarget::new("g610".parse().unwrap());
//! legalise::legalise(&mut shader, &target).unwrap();
//! let out = emit::emit(&shader, &target).unwrap();
//! assert_eq!(out.disassembly, ["FADD.f32.end r1, r0, r0"]);
//! assert_eq!((out.registers, out.threads), (2, 2));
//! ```

use lathe_ir::{Op, Shader};
use lathe_passes::target::TargetFacts;

use super::generated::MachineOp;
use super::stats::{Stats, StatsError, gather};
use super::target::ValhallTarget;
use super::{MaliModel, disassemble};

/// A compiled shader.
#[derive(Clone, Debug, PartialEq)]
pub struct Compiled {
    pub model: MaliModel,
    /// The program, one word per instruction (little-endian in memory:
    /// [`super::words_to_le_bytes`]).
    pub words: Vec<u64>,
    /// Each word's text, as Mesa's disassembler prints it (`lathe asm`
    /// reads it back to the same word).
    pub disassembly: Vec<String>,
    /// General registers the shader uses, counted from r0 (the highest
    /// one used, plus one).
    pub registers: u32,
    /// Threads in flight at that footprint, relative to the core's
    /// maximum (the spec's occupancy of the general registers).
    pub threads: u32,
    /// Bytes of thread-local storage per thread (arrays kept in memory,
    /// then spill slots) the driver allocates behind the thread-local
    /// pointer.
    pub private_bytes: u32,
    pub stats: Stats,
}

impl Compiled {
    /// The disassembly, one instruction per line.
    pub fn listing(&self) -> String {
        let mut out = String::new();
        for line in &self.disassembly {
            out.push_str(line);
            out.push('\n');
        }
        out
    }
}

/// Why a shader could not be emitted.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// Legalisation has not run (or not to the end).
    #[error("not legalised: {0} (run `legalise` after `ra`)")]
    NotLegalised(String),
    /// An operand without a general register.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// An encoded word the spec cannot read back.
    #[error("instruction {index} (`{name}`) encodes as 0x{word:016x}, which {source}")]
    Encoding {
        index: usize,
        name: &'static str,
        word: u64,
        source: Box<super::Error>,
    },
    #[error(transparent)]
    Stats(#[from] StatsError),
}

/// Encodes the legalised `shader` for `target`.
pub fn emit(shader: &Shader<'_, MachineOp>, target: &ValhallTarget) -> Result<Compiled, EmitError> {
    let general = target.general_file();
    let arch = target.model().arch();
    let generation = target.generation_id();
    let number = |v: lathe_ir::Value| {
        shader
            .value_reg(v)
            .filter(|r| r.file == general.0)
            .map(|r| u32::from(r.unit))
            .ok_or_else(|| {
                EmitError::Unsupported(format!("%{} is not in a general register", v.index()))
            })
    };
    let end = target
        .flow_facts()
        .map_err(|e| EmitError::Unsupported(e.to_string()))?
        .end;
    let mut words = Vec::new();
    let mut disassembly = Vec::new();
    let mut registers = 0u32;
    let mut ends = false;
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        for v in d.operands().chain(d.results()) {
            // Registers the hardware preloads are read where they are,
            // outside the allocated footprint.
            let preloaded = matches!(shader.inst(shader.value_def(v)).op,
                Op::Input { index } if super::abi::Preload::register_of(index).is_some());
            if preloaded {
                continue;
            }
            if let Some(r) = shader.value_reg(v).filter(|r| r.file == general.0) {
                let lanes = u32::from(shader.value_type(v).lanes.max(1));
                registers = registers.max(u32::from(r.unit) + lanes);
            }
        }
        let op = match d.op {
            Op::Opcode(op) => op,
            Op::Swap => {
                return Err(EmitError::NotLegalised(
                    "a swap remains (`lower-swap`)".into(),
                ));
            }
            _ => continue,
        };
        let sources = d
            .args
            .iter()
            .map(|&v| number(v))
            .collect::<Result<Vec<_>, _>>()?;
        let destinations = d.result.map(number).transpose()?;
        let word = op.encode(&sources, destinations.as_slice(), generation);
        let text = disassemble(word, arch).map_err(|source| EmitError::Encoding {
            index: words.len(),
            name: op.info().name.as_str(),
            word,
            source: Box::new(source),
        })?;
        ends |= op.modifier(super::flow::FLOW) == Some(end);
        words.push(word);
        disassembly.push(text);
    }
    if !ends {
        return Err(EmitError::NotLegalised(
            "no instruction ends the shader".into(),
        ));
    }
    let threads = target.occupancy(general, registers);
    let stats = gather(shader, target, threads)?;
    Ok(Compiled {
        model: target.model(),
        words,
        disassembly,
        registers,
        threads,
        private_bytes: shader.private_bytes,
        stats,
    })
}
