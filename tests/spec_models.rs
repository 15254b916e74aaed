//! The spec models `isa!` writes at build time (`lathe_isa::compact`) are
//! the models the loader builds from the spec text: every field of every
//! item, for each ISA, compared through their `Debug` form (which the
//! compact form plays no part in).

use std::path::Path;

use lathe::isa::{Isa, MemReader};

/// `built` against the spec parsed and checked from `files` (root first):
/// the first differing line of their `Debug` forms, if any.
fn first_difference(built: &Isa, files: &[(&str, &str)]) -> Option<String> {
    let parsed = lathe::isa::load_with(Path::new(files[0].0), &MemReader(files))
        .unwrap_or_else(|d| panic!("the embedded spec loads: {d}"));
    // The built model also carries its decision trees as generated code
    // and a name index (`generated`), derived from the model and no model
    // content: the trees and encodings they come from are compared.
    let mut built = built.clone();
    built.generated = None;
    let (a, b) = (format!("{parsed:#?}"), format!("{built:#?}"));
    let mut lines = a.lines().zip(b.lines()).enumerate();
    let diff = lines
        .find(|(_, (x, y))| x != y)
        .map(|(n, (x, y))| format!("line {n}: parsed `{x}`, built `{y}`"));
    diff.or_else(|| (a.lines().count() != b.lines().count()).then(|| "lengths differ".to_string()))
}

#[test]
fn the_built_ir3_model_equals_the_parsed_spec() {
    use lathe::adreno::ir3::generated::{SPEC_FILES, isa};
    assert_eq!(isa().instructions().count(), 252);
    assert_eq!(first_difference(isa(), SPEC_FILES), None);
}

#[test]
fn the_built_valhall_model_equals_the_parsed_spec() {
    use lathe::mali::valhall::generated::{SPEC_FILES, isa};
    assert!(isa().instructions().count() >= 248);
    assert_eq!(first_difference(isa(), SPEC_FILES), None);
}
