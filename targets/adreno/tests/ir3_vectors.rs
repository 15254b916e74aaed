//! Mesa's ir3 disassembler test vectors, both ways, exactly as Mesa's
//! harness compares them: decode at `isa_gpu_id` must print
//! `expected_disasm` byte for byte, and assembling `expected_disasm` must
//! give the word bit for bit (don't-care bits included). Every failing row
//! is listed before the test fails.

use lathe_adreno::ir3::{Generation, assemble, write_line};

const VECTORS: &str = include_str!("ir3-data/ir3-disasm.tsv");

struct Row<'a> {
    line: usize,
    generation: Generation,
    word: u64,
    text: &'a str,
}

fn rows() -> Vec<Row<'static>> {
    let mut lines = VECTORS.lines().enumerate();
    let (_, header) = lines.next().expect("vector file has a header");
    let cols: Vec<&str> = header.split('\t').collect();
    let col = |name: &str| cols.iter().position(|c| *c == name).expect(name);
    let (gen_col, hex_col, text_col) = (col("isa_gpu_id"), col("hex"), col("expected_disasm"));
    lines
        .map(|(i, l)| {
            let c: Vec<&str> = l.split('\t').collect();
            let gpu_id: u32 = c[gen_col].parse().expect("isa_gpu_id");
            Row {
                line: i + 1,
                generation: Generation::from_gpu_id(gpu_id).expect("known generation"),
                word: u64::from_str_radix(c[hex_col], 16).expect("hex word"),
                text: c[text_col],
            }
        })
        .collect()
}

#[test]
fn every_vector_disassembles_and_assembles_exactly() {
    let rows = rows();
    assert_eq!(rows.len(), 232, "the vector file has 232 active rows");
    let mut failures = Vec::new();
    let (mut disasm_ok, mut asm_ok) = (0, 0);
    for row in &rows {
        let mut text = String::new();
        match write_line(row.word, row.generation, &mut text) {
            Ok(()) if text == row.text => disasm_ok += 1,
            Ok(()) => failures.push(format!(
                "line {}: disasm {:016x} @{}: got `{text}`, want `{}`",
                row.line, row.word, row.generation, row.text
            )),
            Err(e) => failures.push(format!("line {}: disasm: {e}", row.line)),
        }
        match assemble(row.text, row.generation) {
            Ok(word) if word == row.word => asm_ok += 1,
            Ok(word) => failures.push(format!(
                "line {}: asm `{}` @{}: got {word:016x}, want {:016x}",
                row.line, row.text, row.generation, row.word
            )),
            Err(e) => failures.push(format!("line {}: asm: {e}", row.line)),
        }
    }
    println!("disasm {disasm_ok}/{n}, asm {asm_ok}/{n}", n = rows.len());
    assert!(
        failures.is_empty(),
        "{} failure(s) (disasm {disasm_ok}/{n} ok, asm {asm_ok}/{n} ok):\n{}",
        failures.len(),
        failures.join("\n"),
        n = rows.len()
    );
}

#[test]
fn raw_fallback_matches_mesa_for_the_all_ones_word() {
    let mut text = String::new();
    write_line(u64::MAX, Generation::A6xx, &mut text).unwrap();
    assert_eq!(text, "raw 0xFFFFFFFFFFFFFFFF");
    // Unlike Mesa's `%X%X`, the low dword keeps its leading zeros.
    text.clear();
    write_line(0xffff_ffff_0000_0001, Generation::A6xx, &mut text).unwrap();
    assert_eq!(text, "raw 0xFFFFFFFF00000001");
    assert_eq!(
        assemble(&text, Generation::A6xx).unwrap(),
        0xffff_ffff_0000_0001
    );
}
