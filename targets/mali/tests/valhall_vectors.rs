//! Mesa's Valhall assembler cases in both directions, on both architecture
//! revisions, and Mesa's negative cases (each must be rejected).

use lathe_mali::valhall::{Arch, assemble, disassemble};

const CASES: &str = include_str!("valhall-data/assembler-cases.txt");
const NEGATIVE: &str = include_str!("valhall-data/negative-cases.txt");

/// One positive case: the word (from its little-endian bytes) and the exact
/// expected text (trailing spaces kept).
fn cases() -> Vec<(u64, &'static str)> {
    CASES
        .split('\n')
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|line| {
            let (hex, text) = line.split_at(27);
            let bytes: Vec<u8> = hex[..23]
                .split(' ')
                .map(|b| u8::from_str_radix(b, 16).expect("vector bytes are hex"))
                .collect();
            let word = u64::from_le_bytes(bytes.try_into().expect("eight bytes per vector"));
            (word, text)
        })
        .collect()
}

#[test]
fn the_vector_file_has_all_172_cases_and_the_four_trailing_spaces() {
    let cases = cases();
    assert_eq!(cases.len(), 172);
    assert_eq!(cases.iter().filter(|(_, t)| t.ends_with(' ')).count(), 4);
    assert_eq!(cases[0], (0x0091_c100_0000_0002, "MOV.i32 r1, r2"));
}

#[test]
fn every_case_disassembles_exactly() {
    for arch in [Arch::V9, Arch::V10] {
        let failures: Vec<String> = cases()
            .into_iter()
            .filter_map(|(word, text)| match disassemble(word, arch) {
                Ok(got) if got == text => None,
                got => Some(format!("{word:016x}: expected `{text}`, got {got:?}")),
            })
            .collect();
        assert!(
            failures.is_empty(),
            "{arch}: {} of 172 differ:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

#[test]
fn every_case_assembles_bit_exactly() {
    for arch in [Arch::V9, Arch::V10] {
        let failures: Vec<String> = cases()
            .into_iter()
            .filter_map(|(word, text)| match assemble(text, arch) {
                Ok(got) if got == word => None,
                Ok(got) => Some(format!("`{text}`: expected {word:016x}, got {got:016x}")),
                Err(e) => Some(format!("`{text}`: {e}")),
            })
            .collect();
        assert!(
            failures.is_empty(),
            "{arch}: {} of 172 fail:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

/// The 25 real negative lines (blank lines and `#` comments skipped).
fn negative_cases() -> Vec<&'static str> {
    NEGATIVE
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .collect()
}

/// What the rejection of each negative line must name. Lines written in
/// Mesa's old syntax (a backtick before a register, `lane_id` without a
/// word select) are rejected for that syntax; `canonical_forms_of_the_
/// negative_rules_are_rejected_by_the_rule` covers their intent.
const EXPECTED_PROBLEM: [(&str, &str); 25] = [
    ("FADD.f32 r0, r1", "found end of text"),
    (
        "TEX.computed.2d.slot0 @r2, @r4:r5:r6:r7",
        "unknown mnemonic `TEX.computed.2d.slot0`",
    ),
    ("BRANCH", "unknown mnemonic `BRANCH`"),
    ("BRANCH #0", "unknown mnemonic `BRANCH`"),
    ("BRANCH #0, offset:", "unknown mnemonic `BRANCH`"),
    ("BRANCH u0, offset:-123456789", "unknown mnemonic `BRANCH`"),
    ("BRANCH u0, offset:123456789", "unknown mnemonic `BRANCH`"),
    ("IADD_IMM.i32 r3, #12345", "found `#12345`"),
    ("FADD.v2f16 r0, r1, r0.h0", "found `.h0`"),
    ("MOV.i32.wait01.wait1 r0, r1", "found `.wait1`"),
    ("MOV.i32.wait01.return r0, r1", "found `.return`"),
    ("MOV.i32.reconverge.return r0, r1", "found `.return`"),
    (
        "FROUND.f32.rtn.clamp_m1_1 r2, `r2.neg",
        "found `.clamp_m1_1`",
    ),
    ("FADD.f32 r0, u0, u4", "only one 64-bit FAU slot"),
    ("FADD.f32 r0, u5, u3", "only one 64-bit FAU slot"),
    ("FADD.f32 r0, u5, u6", "only one 64-bit FAU slot"),
    ("FMA.f32 r0, u0, u1, 0x0", "at most two distinct FAU values"),
    (
        "FMA.f32 r0, u0, 0x40490FDB, 0x0",
        "at most two distinct FAU values",
    ),
    (
        "FMA.f32 r0, 0x3F317218, 0x40490FDB, 0x0",
        "at most two distinct FAU values",
    ),
    ("IADD.u32 r0, lane_id, core_id", "expected `.w`"),
    ("IADD.u32 r0, lane_id, core_id", "expected `.w`"),
    ("IADD.u32 r0, tls_ptr, wls_ptr", "found `tls_ptr`"),
    (
        "LOAD.i32.unsigned.slot0.wait0 @r1:r2, `r0, offset:0",
        "found ``r0`",
    ),
    (
        "STORE.i32.slot0.reconverge @r3:r4:r5, `r2, offset:0",
        "found ``r2`",
    ),
    (
        "STORE.i96.vary.slot0.return @r1:r2:r3:r4, `r4, offset:0",
        "found `.vary",
    ),
];

fn rejection(line: &str) -> String {
    match assemble(line, Arch::V10) {
        Ok(word) => panic!("`{line}` was accepted as {word:016x}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn every_negative_case_is_rejected_naming_the_problem() {
    let lines = negative_cases();
    assert_eq!(lines.len(), EXPECTED_PROBLEM.len());
    for (line, (expected_line, problem)) in lines.into_iter().zip(EXPECTED_PROBLEM) {
        assert_eq!(line, expected_line, "the negative case file changed");
        let msg = rejection(line);
        assert!(
            msg.contains(problem),
            "`{line}`: expected the message to name `{problem}`, got: {msg}"
        );
    }
}

#[test]
fn canonical_forms_of_the_negative_rules_are_rejected_by_the_rule() {
    let slot = "only one 64-bit FAU slot";
    let even = "must start on an even register";
    for (line, problem) in [
        ("IADD.u32 r0, lane_id.w0, core_id.w0", slot),
        (
            "IADD.u32 r0, thread_local_pointer.w0, workgroup_local_pointer.w0",
            slot,
        ),
        ("CSEL.u32.lt r1, r2^, u0, u4, u5", slot),
        ("ICMP_OR.u32.ne.m1 r1, u2, u4, 0x0", slot),
        (
            "LD_TILE.v4.f16.slot0 @r14:r15, u1, 0x0, 0x3F800000",
            "at most two distinct FAU values",
        ),
        ("LOAD.i32.unsigned.slot0.wait0 @r1:r2, r0^, offset:0", even),
        ("STORE.i32.slot0.reconverge @r3:r4:r5, r2^, offset:0", even),
        (
            "STORE.i96.slot0.return @r1:r2:r3:r4, r4^, offset:0",
            "found `.return`",
        ),
        ("STORE.i96.slot0 @r1:r2:r3:r4, r4^, offset:0", even),
        (
            "BRANCHZ u0, offset:-123456789",
            "does not fit in field `OFFSET` (27 bits, signed)",
        ),
        (
            "BRANCHZ u0, offset:123456789",
            "does not fit in field `OFFSET` (27 bits, signed)",
        ),
    ] {
        let msg = rejection(line);
        assert!(
            msg.contains(problem),
            "`{line}`: expected the message to name `{problem}`, got: {msg}"
        );
    }
}

#[test]
fn what_the_rules_allow_still_assembles() {
    // Two words of one 64-bit uniform slot, a uniform plus a table constant,
    // one special value twice, and a register-only tuple at an even base.
    for line in [
        "FADD.f32 r0, u4, u5",
        "ICMP_OR.u32.ne.m1 r1, r0, u2, 0x0",
        "FADD.f32 r0, lane_id.w0, lane_id.w1",
        "LOAD.i32.unsigned.slot0 @r2:r3, r0^, offset:0",
        "BRANCHZ.reconverge r1^, offset:67108863",
    ] {
        let word = assemble(line, Arch::V10).unwrap_or_else(|e| panic!("`{line}`: {e}"));
        assert_eq!(disassemble(word, Arch::V10).unwrap(), line);
    }
}
