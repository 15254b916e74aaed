//! The ir3 spec model, as `isa!` wrote it at build time.
//!
//! The `.isa` files were parsed and checked when the crate was built; the
//! generated module carries the checked model in compact form
//! (`lathe_isa::compact`) and the spec text (`SPEC_FILES`), so a binary
//! needs no spec files and no parsing at run time.

use lathe_isa::Isa;

/// The checked spec. Kept as a `Result` for the callers that report a
/// defective spec: the model was checked at build time, so it is `Ok`.
pub(crate) fn isa() -> Result<&'static Isa, &'static str> {
    Ok(super::generated::isa())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use lathe_isa::MemReader;

    use super::super::generated::SPEC_FILES;

    #[test]
    fn embedded_spec_passes_the_checker_with_every_instruction() {
        let root = Path::new(SPEC_FILES[0].0);
        let isa = lathe_isa::load_with(root, &MemReader(SPEC_FILES)).unwrap();
        assert_eq!(isa.name, "ir3");
        // Mesa's description has 252 concrete instruction bitsets.
        assert_eq!(isa.instructions().count(), 252);
        assert_eq!(super::isa().unwrap().instructions().count(), 252);
    }
}
