//! Typed ir3 instructions, generated at build time from the `.isa` spec by
//! `lathe_codegen_macros::isa!`: `Opcode` (one variant per instruction,
//! decoded by nested matches on the opcode bits), `Instr` (opcode,
//! generation and word, with typed field access, `encode`/`decode`,
//! text in and out and `arbitrary::Arbitrary`), the spec's enums, and the
//! latency table as `LatencyClass` / `latency`.

lathe_codegen_macros::isa!("../../isa/specs/adreno/ir3.isa");
