//! Proc-macro front door over `lathe-isa`'s generator.
//!
//! `isa!("path/to/root.isa")` (relative to the calling crate's
//! `CARGO_MANIFEST_DIR`) loads and checks the spec at build time and
//! expands to the items described in `lathe_isa::codegen` (`Opcode`,
//! `Instr` with typed field access, `Field`, `Value`, `enums`,
//! `LatencyClass`, …). The calling crate must depend on `lathe-isa` and
//! `arbitrary`. A spec error becomes one `compile_error!` carrying the
//! `file:line:col` diagnostic and caret; the expansion itself is
//! `lathe_isa::codegen::expand`, so it is tested without a compiler run.
//!
//! ```text
//! mod toy {
//!     lathe_codegen_macros::isa!("tests/specs/tiny.isa");
//! }
//! let i = toy::Instr::decode(0x1312, 1).unwrap();
//! assert_eq!(i.to_string(), "add r3, r2");
//! ```

use proc_macro::TokenStream;
use std::path::PathBuf;

#[proc_macro]
pub fn isa(input: TokenStream) -> TokenStream {
    let lit = syn::parse_macro_input!(input as syn::LitStr);
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
    let path: PathBuf = PathBuf::from(dir).join(lit.value());
    lathe_isa::codegen::expand(&path).into()
}
