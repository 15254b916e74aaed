//! The rules language against the real specs: the ir3 rules check clean,
//! and rules that break the spec's facts are rejected with their line.

use lathe_isa::rules::{check::check, parse_file};

fn ir3() -> lathe_isa::Isa {
    lathe_isa::load(concat!(env!("CARGO_MANIFEST_DIR"), "/specs/adreno/ir3.isa")).unwrap()
}

#[test]
fn ir3_rules_check_clean() {
    let isa = ir3();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../targets/adreno/rules/ir3.rules"
    );
    let file = parse_file(std::path::Path::new(path)).unwrap_or_else(|e| panic!("{e}"));
    let checked = check(&isa, &file).unwrap_or_else(|e| panic!("{e}"));
    assert!(checked.rules.len() > 100, "{}", checked.rules.len());
    assert_eq!(checked.generations, [600, 700]);
}

/// The first diagnostic's headline for a one-rule file.
fn error_of(rule: &str) -> String {
    let text = format!(
        "rules ir3 gen a6xx..;\ntype f32 = gpr \"f32\" 32;\ntype f16 = hgpr \"f16\" 16;\ntype bool = hgpr \"u16\" 16;\n{rule}\n"
    );
    let file = lathe_isa::rules::parse_str("t.rules", &text).unwrap_or_else(|e| panic!("{e}"));
    match check(&ir3(), &file) {
        Ok(_) => panic!("`{rule}` checked clean"),
        Err(e) => e.0[0].headline(),
    }
}

#[test]
fn rules_that_break_the_spec_are_rejected_at_their_line_and_column() {
    assert_eq!(
        error_of("rule r: fadd(a: f32, b: f32): f32 => { add.f $dst, $a, $c; }"),
        "t.rules:5:56: error: `$c` is not bound by the pattern or a `let`"
    );
    assert_eq!(
        error_of("rule r: fadd(a: f32, b: f32): f32 => { let t: f32; add.f $dst, $a, $t; }"),
        "t.rules:5:68: error: `$t` is read before a template writes it"
    );
    assert_eq!(
        error_of("rule r: frob(a: f32): f32 => { add.f $dst, $a, $a; }"),
        "t.rules:5:9: error: unknown opcode `frob`"
    );
    assert_eq!(
        error_of("rule r: fadd(a: f32, b: f32): bool => { add.f $dst, $a, $b; }"),
        "t.rules:5:9: error: `fadd` here: needs a float type, not bool"
    );
    // A half register where the instruction's precision is full.
    let mixed =
        error_of("rule r: sel(c: bool, a: f32, b: f32): f32 => { sel.b32 $dst, $a, $c, $b; }");
    assert!(
        mixed.starts_with(
            "t.rules:5:48: error: `sel.b32 r1.x, r1.z, hr1.y, r1.w` does not assemble"
        ),
        "{mixed}"
    );
    // Writing a source operand.
    assert!(
        error_of("rule r: fadd(a: f32, b: f32): f32 => { add.f $a, $dst, $b; }")
            .contains("`$a` cannot be written here"),
    );
    assert_eq!(
        error_of("rule r: fadd(a: f32, b: f32): f32 => { }"),
        "t.rules:5:6: error: no template writes `$dst`"
    );
}

/// Checks a one-rule file; the checked instance.
fn checked_of(rule: &str) -> lathe_isa::rules::check::Instance {
    let text = format!(
        "rules ir3 gen a6xx..;\ntype f32 = gpr \"f32\" 32;\ntype u32 = gpr \"u32\" 32;\ntype f16 = hgpr \"f16\" 16;\n{rule}\n"
    );
    let file = lathe_isa::rules::parse_str("t.rules", &text).unwrap_or_else(|e| panic!("{e}"));
    let checked = check(&ir3(), &file).unwrap_or_else(|e| panic!("{e}"));
    checked.rules.into_iter().next().unwrap()
}

#[test]
fn register_groups_are_vector_placeholders_as_long_as_the_spec_says() {
    // sam writes the four components its write mask selects and reads the
    // two coordinates of a 2D sample (the spec's `texture` effect).
    let r = checked_of(
        "rule t: sample[texture=$t, sampler=$s](c: f32x2): f32x4 => { sam (f32)(xyzw)$dst, $c, s#$s, t#$t; }",
    );
    assert_eq!(
        r.slots[0].ty,
        lathe_ir::Type::vector(lathe_ir::Scalar::F32, 4)
    );
    assert_eq!(r.insts[0].mnemonic, "sam");
    // .3d reads three coordinates.
    checked_of(
        "rule t: sample[texture=$t, sampler=$s, dim=3d](c: f32x3): f32x4 => { sam.3d (f32)(xyzw)$dst, $c, s#$s, t#$t; }",
    );
}

#[test]
fn register_groups_of_the_wrong_size_are_rejected_at_their_placeholder() {
    assert_eq!(
        error_of(
            "rule t: sample[texture=$t, sampler=$s, dim=3d](c: f32x3): f32x4 => { sam (f32)(xyzw)$dst, $c, s#$s, t#$t; }"
        ),
        "t.rules:5:91: error: `$c` is 3 register(s) (f32x3), but `sam (f32)(xyzw)r1.x, r1.w, s#1, t#1` reads a group of 2 at operand `src1` (the spec's semantics)"
    );
    assert_eq!(
        error_of(
            "rule t: sample[texture=$t, sampler=$s](c: f32x2): f32x4 => { sam (f32)(xyz)$dst, $c, s#$s, t#$t; }"
        ),
        "t.rules:5:76: error: `$dst` is 4 register(s) (f32x4), but `sam (f32)(xyz)r1.x, r1.w, s#1, t#1` writes a group of 3 at operand `dst` (the spec's semantics)"
    );
    // A scalar where the instruction reads a pair.
    assert!(
        error_of(
            "rule v: load_input[slot=$k, comp=0, interp=smooth]: f32 => { let ij: f32; mov.u32u32 $ij, 0; bary.f $dst, $k, $ij; }"
        )
        .contains("`$ij` is 1 register(s) (f32), but `bary.f r1.x, 1, r1.z` reads a group of 2 at operand `src2`"),
    );
    // A vector where a plain ALU operand is one register.
    assert!(
        error_of("rule t: sample[texture=$t, sampler=$s](c: f32x2): f32x4 => { let x: f32; add.f $x, $c, $c; sam (f32)(xyzw)$dst, $c, s#$s, t#$t; }")
            .contains("`$c` is 2 register(s) (f32x2), but `add.f r2.x, r1.w, r1.w` reads a group of 1"),
    );
}

#[test]
fn a_value_read_through_the_predicate_file_is_written_with_the_file() {
    // kill reads p0: a boolean placeholder is spelled `$t:p0` (the value
    // stays in its register; legalisation moves it into p0).
    let text = "rules ir3 gen a6xx..;\ntype bool = hgpr \"u16\" 16;\nrule d: discard() => { let t: bool; mov.u16u16 $t, 1; kill $t:p0; }\n";
    let file = lathe_isa::rules::parse_str("t.rules", text).unwrap_or_else(|e| panic!("{e}"));
    let checked = check(&ir3(), &file).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(checked.rules[0].insts[1].mnemonic, "kill");
    assert_eq!(checked.rules[0].insts[1].srcs, [1]);
    // Without the file the placeholder is a half register, which kill
    // does not take.
    let plain = error_of("rule d: discard() => { let t: bool; mov.u16u16 $t, 1; kill $t; }");
    assert!(plain.contains("`kill hr"), "{plain}");
    // Only reads go through the file: legalisation does not move results.
    let written = error_of("rule r: flt(a: f32, b: f32): bool => { cmps.f.lt $dst:p0, $a, $b; }");
    assert!(written.contains("can only be read"), "{written}");
}

#[test]
fn a_collect_takes_single_lanes_of_a_vector_in_any_order() {
    // The depth-compare reference between an array's position and layer.
    let r = checked_of(
        "rule t: sample[texture=$t, sampler=$s, array, compare](c: f32x3, r: f32): f32 => { let g: f32x4 = collect($c[0], $c[1], $r, $c[2]); sam.a.s (f32)(x)$dst, $g, s#$s, t#$t; }",
    );
    assert!(r.insts[0].collect);
    assert_eq!(
        r.insts[0].lanes,
        [0, 1, lathe_isa::rules::check::ALL_LANES, 2]
    );
    // A lane past the vector, or of a scalar, is an error at the part.
    assert_eq!(
        error_of(
            "rule t: sample[texture=$t, sampler=$s, compare](c: f32x2, r: f32): f32 => { let g: f32x3 = collect($c[0], $c[2], $r); sam.s (f32)(x)$dst, $g, s#$s, t#$t; }"
        ),
        "t.rules:5:107: error: `$c` is no vector with a lane 2"
    );
    assert_eq!(
        error_of(
            "rule t: sample[texture=$t, sampler=$s, compare](c: f32x2, r: f32): f32 => { let g: f32x3 = collect($c, $r[0]); sam.s (f32)(x)$dst, $g, s#$s, t#$t; }"
        ),
        "t.rules:5:104: error: `$r` is no vector with a lane 0"
    );
}

#[test]
fn a_tied_operand_is_written_as_the_result_and_its_source() {
    // atomic.b's SRC1 is `tied`: the operand read where the old word goes.
    let r = checked_of(
        "rule t: ssbo_atomic[binding=$b, op=add](off: u32, v: u32): u32 => { atomic.b.add.untyped.1d.u32.1.uniform $dst=$v, $off, $off; }",
    );
    let slot = |n: &str| r.slots.iter().position(|s| s.name == n).unwrap() as u8;
    assert_eq!(r.insts[0].dst, Some(0));
    assert_eq!(r.insts[0].srcs, [slot("v"), slot("off"), slot("off")]);
    // Naming only the result leaves the source out.
    let text = "rules ir3 gen a6xx..;\ntype u32 = gpr \"u32\" 32;\nrule t: ssbo_atomic[binding=$b, op=add](off: u32, v: u32): u32 => { atomic.b.add.untyped.1d.u32.1.uniform $dst, $off, $off; }\n";
    let file = lathe_isa::rules::parse_str("t.rules", text).unwrap();
    let e = match check(&ir3(), &file) {
        Ok(_) => panic!("checked clean"),
        Err(e) => e.0[0].headline(),
    };
    assert!(
        e.contains("has 4 register operand(s) but the template names 3"),
        "{e}"
    );
}
