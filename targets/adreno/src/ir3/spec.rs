//! The ir3 spec, embedded in the crate and checked once on first use.
//!
//! The `.isa` files are compiled into the library with `include_str!`, so
//! a binary needs no spec files at run time; `lathe_isa` parses and checks
//! them the first time an instruction is decoded or assembled.

use std::path::Path;
use std::sync::OnceLock;

use lathe_isa::{Isa, MemReader};

/// Every file of the spec, by the path `ir3.isa` imports it under.
const SOURCES: [(&str, &str); 11] = [
    (
        "ir3.isa",
        include_str!("../../../../isa/specs/adreno/ir3.isa"),
    ),
    (
        "common.isa",
        include_str!("../../../../isa/specs/adreno/common.isa"),
    ),
    (
        "cat0.isa",
        include_str!("../../../../isa/specs/adreno/cat0.isa"),
    ),
    (
        "cat1.isa",
        include_str!("../../../../isa/specs/adreno/cat1.isa"),
    ),
    (
        "cat2.isa",
        include_str!("../../../../isa/specs/adreno/cat2.isa"),
    ),
    (
        "cat3.isa",
        include_str!("../../../../isa/specs/adreno/cat3.isa"),
    ),
    (
        "cat4.isa",
        include_str!("../../../../isa/specs/adreno/cat4.isa"),
    ),
    (
        "semantics.isa",
        include_str!("../../../../isa/specs/adreno/semantics.isa"),
    ),
    (
        "cat5.isa",
        include_str!("../../../../isa/specs/adreno/cat5.isa"),
    ),
    (
        "cat6.isa",
        include_str!("../../../../isa/specs/adreno/cat6.isa"),
    ),
    (
        "cat7.isa",
        include_str!("../../../../isa/specs/adreno/cat7.isa"),
    ),
];

static SPEC: OnceLock<Result<Isa, String>> = OnceLock::new();

/// The checked spec, or the checker's diagnostics as text.
pub(crate) fn isa() -> Result<&'static Isa, &'static str> {
    SPEC.get_or_init(|| {
        lathe_isa::load_with(Path::new("ir3.isa"), &MemReader(&SOURCES)).map_err(|d| d.to_string())
    })
    .as_ref()
    .map_err(String::as_str)
}

#[cfg(test)]
mod tests {
    #[test]
    fn embedded_spec_passes_the_checker_with_every_instruction() {
        let isa = super::isa().unwrap();
        assert_eq!(isa.name, "ir3");
        // Mesa's description has 252 concrete instruction bitsets.
        assert_eq!(isa.instructions().count(), 252);
    }
}
