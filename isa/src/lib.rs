//! The `.isa` language: grammar, spec model, checker, a generic engine that
//! decodes, disassembles and assembles from a checked spec, and the code
//! generator behind `lathe_codegen_macros::isa!`.
//!
//! The language is described in `docs/isa-language.md`. Nothing in this
//! crate knows about a particular instruction set: every fact comes from
//! the spec.
//!
//! Besides text in and out, the engine reads and writes named fields of a
//! decoded word ([`Isa::read_field`], [`Isa::write_field`]), builds valid
//! words field by field ([`Isa::build_word`]), applies the spec's `check`
//! rules ([`Isa::validate`]) and reports Mesa-style decode warnings
//! ([`Isa::decode_warnings`]). The code `isa!` generates is a typed API
//! generated from the same spec and tested against these; see [`codegen`]
//! for what it contains and what still interprets the embedded spec.
//!
//! ```
//! let isa = lathe_isa::load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/specs/tiny.isa")).unwrap();
//! assert_eq!(isa.disassemble(0x1312, 1).unwrap(), "add r3, r2");
//! assert_eq!(isa.assemble("ld.ne r1, [r2-1]", 2).unwrap(), 0x21f2);
//! // Fields by name, with their types.
//! let off = isa.read_field(0x21f2, 2, "OFF").unwrap();
//! assert_eq!(lathe_isa::format::sign_extend(off.raw, off.width), -1);
//! // A diagnostic that names the problem and its column.
//! let err = isa.assemble("add r3, r16", 1).unwrap_err();
//! assert_eq!(err.to_string(), "column 10: `16` does not fit in field `N` (4 bits, unsigned)");
//! ```

pub mod asm_rt;
pub mod assemble;
pub mod ast;
pub mod check;
pub mod codegen;
pub mod compact;
pub mod decode;
pub mod diag;
pub mod display;
pub mod docgen;
pub mod expr;
pub mod fields;
pub mod format;
mod gen_asm;
mod gen_display;
pub mod gen_rt;
mod gen_sim;
pub mod groups;
pub mod load;
pub mod machine;
pub mod machine_run;
pub mod model;
pub mod operands;
pub mod parse;
pub mod rules;
pub mod select;
pub mod semantics;
pub mod sim;
pub mod sim_io;
pub mod sim_lanes;
pub mod sim_program;
pub mod sim_texture;
pub mod source;
pub mod statics;

pub use assemble::AsmError;
pub use diag::{Diagnostic, Diagnostics};
pub use display::DisasmError;
pub use fields::{DecodeWarning, FieldError, FieldInput, FieldRead};
pub use load::{MemReader, load, load_prechecked, load_with};
pub use model::{EncId, Isa};
