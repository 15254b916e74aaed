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

/// `rules!("path/to/target.rules", "path/to/root.isa")` (both relative to
/// the calling crate's `CARGO_MANIFEST_DIR`): parses the instruction-
/// selection rules, checks every template against the spec (it must
/// assemble, decode back to the same text and name its register operands
/// in order) and expands to `pub static RULES: lathe_isa::select::Rules`.
/// A rules or spec error becomes one `compile_error!` carrying the
/// `file:line:col` diagnostic and caret (see `lathe_isa::rules`).
#[proc_macro]
pub fn rules(input: TokenStream) -> TokenStream {
    let args = syn::parse_macro_input!(input with syn::punctuated::Punctuated::<syn::LitStr, syn::Token![,]>::parse_terminated);
    let dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let paths: Vec<PathBuf> = args.iter().map(|l| dir.join(l.value())).collect();
    match paths.as_slice() {
        [rules, spec] => lathe_isa::rules::generate::expand(rules, spec).into(),
        _ => "compile_error!(\"rules! takes two paths: the rules file and the spec root\");"
            .parse()
            .unwrap_or_default(),
    }
}
