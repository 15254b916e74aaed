//! The generated Valhall assembler against the engine (the oracle) on
//! every line the disassembler prints for the vectors, bit flips of them
//! and random words near them, at every generation
//! (`isa/tests/support/asm_diff.rs` holds the comparison).

use lathe_mali::valhall::generated::asm;
use lathe_mali::valhall::{Instr, isa};

#[path = "../../../isa/tests/support/asm_diff.rs"]
mod asm_diff;
#[path = "../../../isa/tests/support/display_diff.rs"]
#[allow(dead_code)]
mod display_diff;
#[path = "support/vectors.rs"]
mod vectors;

const GENERATIONS: [u32; 3] = [9, 10, 11];

#[test]
fn generated_assembly_equals_engine() {
    // The engine on every 20th random line: it is slow in debug builds.
    let tallies = asm_diff::run(&vectors::words(), &GENERATIONS, 3_000, 20, vectors::near);
    asm_diff::check_small(&tallies);
}

#[test]
#[ignore = "a million words per generation, the engine on each: run in release"]
fn generated_assembly_equals_engine_million() {
    let tallies = asm_diff::run(&vectors::words(), &GENERATIONS, 1_000_000, 1, vectors::near);
    asm_diff::check_all(&tallies);
}
