//! Mesa's 12 delay-slot cases (`ir3-delay.tsv`): the nops needed before the
//! last instruction, computed from the spec's latency table.

use lathe_adreno::ir3::{Generation, assemble, delay::required_nops};

const CASES: &str = include_str!("ir3-data/ir3-delay.tsv");

#[test]
fn all_delay_cases_match_mesa() {
    // test index → (expected, instructions in order)
    let mut tests: Vec<(u32, Vec<&str>)> = Vec::new();
    for line in CASES.lines().skip(1) {
        let c: Vec<&str> = line.split('\t').collect();
        let index: usize = c[0].parse().unwrap();
        let expected: u32 = c[2].parse().unwrap();
        if tests.len() <= index {
            tests.resize(index + 1, (0, Vec::new()));
        }
        tests[index].0 = expected;
        tests[index].1.push(c[5]);
    }
    assert_eq!(tests.len(), 12);
    let generation = Generation::A6xx; // the harness compiles for a630
    let mut failures = Vec::new();
    for (index, (expected, instrs)) in tests.iter().enumerate() {
        let words: Result<Vec<u64>, _> = instrs.iter().map(|t| assemble(t, generation)).collect();
        match words
            .map_err(|e| e.to_string())
            .and_then(|w| required_nops(&w, generation).map_err(|e| e.to_string()))
        {
            Ok(got) if got == *expected => {}
            Ok(got) => failures.push(format!(
                "test {index}: got {got}, want {expected}: {instrs:?}"
            )),
            Err(e) => failures.push(format!("test {index}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
