//! The generated ir3 assembler against the engine (the oracle) on every
//! line the disassembler prints for the vectors, bit flips of them and
//! random words, at every generation (`isa/tests/support/asm_diff.rs`
//! holds the comparison).

use lathe_adreno::ir3::generated::{Instr, asm, isa};

#[path = "../../../isa/tests/support/asm_diff.rs"]
mod asm_diff;
#[path = "../../../isa/tests/support/display_diff.rs"]
#[allow(dead_code)]
mod display_diff;
#[path = "support/vectors.rs"]
#[allow(dead_code)]
mod vectors;

const GENERATIONS: [u32; 5] = [300, 400, 500, 600, 700];

#[test]
fn generated_assembly_equals_engine() {
    // The engine on every 100th random line: it is slow in debug builds.
    let tallies = asm_diff::run(&vectors::words(), &GENERATIONS, 2_000, 100, |rng, _| {
        rng.next()
    });
    asm_diff::check_small(&tallies);
}

#[test]
#[ignore = "a million words per generation, the engine on each: run in release"]
fn generated_assembly_equals_engine_million() {
    let tallies = asm_diff::run(&vectors::words(), &GENERATIONS, 1_000_000, 1, |rng, _| {
        rng.next()
    });
    asm_diff::check_all(&tallies);
}

/// A fuzz finding: `(nop3)` with a float-table immediate and a half
/// a0.x-relative source (`r<a0.x>` is the `OFFSET == 0` form of its
/// operand) did not assemble back on a3xx with either assembler.
#[test]
fn nop_form_with_relative_source_assembles_back() {
    let mut t = asm_diff::Tally::default();
    asm_diff::same(0x5829_6c75_0800_6a68, 300, true, &mut t);
    assert_eq!(t.lines, 1);
    assert_eq!(t.both + t.equivalent, 1, "{t:?}");
}
