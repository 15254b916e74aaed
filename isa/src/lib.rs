//! The `.isa` language: grammar, spec model, checker, a generic engine that
//! decodes, disassembles and assembles from a checked spec, and the code
//! generator behind `lathe_codegen_macros::isa!`.
//!
//! The language is described in `docs/isa-language.md`. Nothing in this
//! crate knows about a particular instruction set: every fact comes from
//! the spec.
//!
//! ```
//! let isa = lathe_isa::load(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/specs/tiny.isa")).unwrap();
//! assert_eq!(isa.disassemble(0x1312, 1).unwrap(), "add r3, r2");
//! assert_eq!(isa.assemble("ld.ne r1, [r2-1]", 2).unwrap(), 0x21f2);
//! ```

pub mod assemble;
pub mod ast;
pub mod check;
pub mod decode;
pub mod diag;
pub mod display;
pub mod docgen;
pub mod expr;
pub mod format;
pub mod load;
pub mod model;
pub mod parse;

pub use assemble::AsmError;
pub use diag::{Diagnostic, Diagnostics};
pub use display::DisasmError;
pub use load::{MemReader, load, load_with};
pub use model::{EncId, Isa};
