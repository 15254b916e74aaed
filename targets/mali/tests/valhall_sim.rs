//! The generated Valhall simulator: coverage of the arithmetic units
//! (FMA, CVT, SFU), hand-written programs with known results (swizzles,
//! lanes, modifiers, rounding modes, clamps, uniforms and table constants),
//! directed rounding against an independent reference, and flow control.

use lathe_mali::valhall::generated::Opcode;
use lathe_mali::valhall::{Arch, Unit, assemble_source, sim};

const ARCH: Arch = Arch::V10;

/// Instructions of the arithmetic units (FMA, CVT, SFU; flow control
/// included) whose semantics the documentation (Mesa's Valhall ISA.xml)
/// does not give precisely enough to write down, or that work across
/// lanes or through an indirect target. The coverage test fails when this list and the spec
/// disagree, so it is the honest list of gaps.
const GAPS: &[&str] = &[
    // Cross-lane: need the other threads of the subgroup.
    "CLPER.i32",
    "WMASK",
    // Indirect (or absolute) branch: the target is a code address.
    "BRANCHZI",
    // Steps of transcendental sequences and table lookups with
    // undocumented tables or formats.
    "FEXP.f32",
    "FADD_LSCALE.f32",
    "FATAN_ASSIST.f32",
    "FLOGD.f32",
    "FLOG_TABLE.f32",
    "FRCP_APPROX.f32",
    "FRSQ_APPROX.f32",
    "FSIN_TABLE.u6",
    "FCOS_TABLE.u6",
    "FSINCOS_OFFSET.u6",
    "FEXP_TABLE.u4",
    "FPCLASS.f32",
    "FPCLASS.f16",
    "FMA_RSCALE_LEFT.f32",
    // Exponent operand format of the 16-bit form not documented.
    "LDEXP.v2f16",
    // Cube map helpers (face and coordinate selection rules).
    "CUBE_SSEL",
    "CUBE_TSEL",
    "CUBEFACE1",
    "CUBEFACE2_V9",
    // 64-bit helpers: the high-word product, segment arithmetic and the
    // `.u1` chaining of 64-bit compares.
    "IMULD.u64",
    "SEG_ADD.u64",
    "ICMP_MULTI.u32",
    "ICMP_MULTI.s32",
];

fn arithmetic(op: Opcode) -> bool {
    Unit::of(op).is_arithmetic()
}

#[test]
fn every_arithmetic_instruction_has_semantics_or_is_a_listed_gap() {
    let mut covered = 0;
    let mut missing = Vec::new();
    let mut stale = Vec::new();
    let mut arithmetic_total = 0;
    for op in Opcode::ALL {
        let name = op.info().name;
        if !arithmetic(op) {
            continue;
        }
        arithmetic_total += 1;
        match (sim::covers(op), GAPS.contains(&name)) {
            (true, true) => stale.push(name),
            (true, false) => covered += 1,
            (false, false) => missing.push(name),
            (false, true) => {}
        }
    }
    for name in GAPS {
        if !Opcode::ALL
            .iter()
            .any(|op| op.info().name == *name && arithmetic(*op))
        {
            stale.push(name);
        }
    }
    println!(
        "Valhall FMA/CVT/SFU units: {covered} of {arithmetic_total} instructions with semantics, {} gaps",
        GAPS.len()
    );
    assert!(
        missing.is_empty(),
        "instructions without semantics: {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "listed as gaps but covered now (or gone): {stale:?}"
    );
    assert_eq!(covered + GAPS.len(), arithmetic_total);
}

/// Runs `source` on a quad after `set` (register, bits), returns the bits
/// of `dump` in lane 0.
fn run(source: &str, set: &[(&str, u32)], dump: &[&str]) -> Vec<u32> {
    let program = assemble_source(source, ARCH).unwrap_or_else(|e| panic!("{source}: {e:?}"));
    let mut m = sim::machine(4);
    for (reg, bits) in set {
        let (f, h, i) = m.parse_reg(reg).unwrap_or_else(|| panic!("register {reg}"));
        for lane in 0..4 {
            m.set(f, h, i, lane, *bits);
        }
    }
    sim::run(&mut m, &program, ARCH).unwrap_or_else(|e| panic!("{source}: {e}"));
    dump.iter()
        .map(|r| {
            let (f, h, i) = m.parse_reg(r).unwrap();
            m.get(f, h, i, 0).unwrap()
        })
        .collect()
}

fn f(x: f32) -> u32 {
    x.to_bits()
}

fn h2(lo: f32, hi: f32) -> u32 {
    let h = |x: f32| lathe_ir::f16::from_f32(x) as u32;
    h(lo) | (h(hi) << 16)
}

#[test]
fn float_arithmetic_with_modifiers_swizzles_and_clamps() {
    let set = [("r1", f(1.5)), ("r2", f(-2.25)), ("r3", h2(1.0, -3.0))];
    let cases: &[(&str, u32)] = &[
        ("FADD.f32 r0, r1, r2", f(-0.75)),
        ("FADD.f32 r0, r1, r2.abs", f(3.75)),
        ("FADD.f32 r0, r1.neg, r2.neg", f(0.75)),
        ("FADD.f32.clamp_0_1 r0, r1, r1", f(1.0)),
        ("FADD.f32.clamp_m1_1 r0, r2, r2", f(-1.0)),
        ("FADD.f32.clamp_0_inf r0, r2, r1", f(0.0)),
        ("FMA.f32 r0, r1, r2, r1", f(1.5 * -2.25 + 1.5)),
        ("FMIN.f32 r0, r1, r2", f(-2.25)),
        ("FMAX.f32 r0, r1, r2", f(1.5)),
        // A half of a register, widened: r3.h1 is -3.0.
        ("FADD.f32 r0, r1, r3.h1", f(-1.5)),
        ("FADD.v2f16 r0, r3, r3", h2(2.0, -6.0)),
        ("FADD.v2f16 r0, r3.h10, r3", h2(-2.0, -2.0)),
        ("FADD.v2f16 r0, r3.h00, r3.h11", h2(-2.0, -2.0)),
        ("FMA.v2f16 r0, r3, r3, r3.neg", h2(0.0, 12.0)),
        ("FRCP.f32 r0, r1", f(1.0 / 1.5)),
        ("FROUND.f32.rtn r0, r2", f(-3.0)),
        ("FROUND.f32.rtz r0, r2", f(-2.0)),
        ("FROUND.f32 r0, r1", f(2.0)),
        ("V2F32_TO_V2F16 r0, r1, r2", h2(1.5, -2.25)),
        ("F16_TO_F32 r0, r3.h1", f(-3.0)),
        ("FREXPM.f32 r0, r1", f(0.75)),
        ("FREXPE.f32 r0, r2", 2),
        ("LDEXP.f32 r0, r1, r4", f(12.0)),
        // Table constants: 0x3F800000 is 1.0.
        ("FADD.f32 r0, r1, 0x3F800000", f(2.5)),
        ("FADD_IMM.f32 r0, r1, #0x40000000", f(3.5)),
        ("FCMP_OR.f32.lt.f1 r0, r2, r1, 0x0", f(1.0)),
        ("FCMP_OR.f32.gt.m1 r0, r2, r1, 0x0", 0),
        ("FCMP_AND.f32.lt.i1 r0, r2, r1, r4", 1),
        ("CSEL.f32.lt r0, r2, r1, r4, r5", 3),
    ];
    for (asm, want) in cases {
        let got = run(
            &format!("{asm}\nNOP.end\n"),
            &[set[0], set[1], set[2], ("r4", 3), ("r5", 9)],
            &["r0"],
        )[0];
        assert_eq!(got, *want, "{asm}: {got:#010x} != {want:#010x}");
    }
}

#[test]
fn integer_lanes_shifts_selects_and_conversions() {
    let set = [
        ("r1", 0x8001_00ff),
        ("r2", 0x0003_0010),
        ("r3", 0xf0f0_0f0f),
        ("r4", 7),
        ("r5", 0xffff_fffe),
    ];
    let cases: &[(&str, u32)] = &[
        ("IADD.u32 r0, r1, r2", 0x8004_010f),
        ("IADD.v2u16 r0, r1, r2", 0x8004_010f),
        ("IADD.v4u8 r0, r1, r2", 0x8004_010f_u32.wrapping_sub(0x0100)),
        ("ISUB.s32 r0, r4, r5", 9),
        ("IADD.s32.saturate r0, r5, r5", 0xffff_fffc),
        ("IADD.u32.saturate r0, r5, r5", u32::MAX),
        ("IADD.u32 r0, r4, r1.h1", 0x8008),
        ("IADD.s32 r0, r4, r1.h1", 0xffff_8008),
        ("IADD.s32 r0, r4, r1.b0", 6),
        ("IMUL.i32 r0, r4, r2", 0x0015_0070),
        ("IMUL.v2i16 r0, r4, r2", 0x0000_0070),
        ("HADD.u32.rhadd r0, r4, r2", 0x0001_800c),
        ("LSHIFT_OR.i32 r0, r4, 0x3020100.b11, 0x0", 14),
        (
            "RSHIFT_AND.i32.signed r0, r5, 0x3020100.b11, 0xFFFFFFFF",
            0xffff_ffff,
        ),
        (
            "RSHIFT_AND.i32 r0, r5, 0x3020100.b11, 0xFFFFFFFF",
            0x7fff_ffff,
        ),
        ("LSHIFT_XOR.i32.not_result r0, r4, 0x0.b00, r4.not", 0),
        ("MUX.i32.neg r0, r4, r2, r5", 7),
        ("MUX.i32 r0, r4, r2, r5", 0x0003_0010),
        (
            "MUX.i32.bit r0, r1, r2, r3",
            (0x8001_00ff & 0xf0f0_0f0f) | (0x0003_0010 & !0xf0f0_0f0f),
        ),
        ("MKVEC.v2i16 r0, r1.h1, r2.h0", 0x0010_8001),
        ("ICMP_OR.s32.lt.m1 r0, r5, r4, 0x0", u32::MAX),
        ("ICMP_OR.u32.lt.m1 r0, r5, r4, 0x0", 0),
        ("ICMP_OR.v2u16.gt.i1 r0, r1, r2, 0x0", 0x0001_0001),
        ("CLZ.u32 r0, r4", 29),
        ("POPCOUNT.i32 r0, r3", 16),
        ("BITREV.i32 r0, r4", 0xe000_0000),
        ("IABS.s32 r0, r5", 2),
        ("S16_TO_S32 r0, r1.h1", 0xffff_8001),
        ("U8_TO_U32 r0, r1.b0", 0xff),
        ("S8_TO_S32 r0, r1.b0", 0xffff_ffff),
        ("S32_TO_F32 r0, r5", (-2.0f32).to_bits()),
        ("F32_TO_S32.rtz r0, r6", (-2i32) as u32),
        ("F32_TO_S32.rtn r0, r6", (-3i32) as u32),
        ("F32_TO_U32 r0, r6", 0),
        ("V2S8_TO_V2S16 r0, r1.b00", 0xffff_ffff),
        ("IADD_IMM.i32 r0, r4, #0x10", 0x17),
        ("MOV.i32 r0, u4", 0x1234),
    ];
    for (asm, want) in cases {
        let mut all = set.to_vec();
        all.push(("r6", (-2.5f32).to_bits()));
        all.push(("u4", 0x1234));
        let got = run(&format!("{asm}\nNOP.end\n"), &all, &["r0"])[0];
        assert_eq!(got, *want, "{asm}: {got:#010x} != {want:#010x}");
    }
}

#[test]
fn a_64_bit_add_carries_into_the_high_register() {
    let got = run(
        "IADD.u64 r0, r2, r4\nNOP.end\n",
        &[("r2", u32::MAX), ("r3", 1), ("r4", 1), ("r5", 2)],
        &["r0", "r1"],
    );
    assert_eq!(got, [0, 4]);
}

#[test]
fn a_half_destination_keeps_the_other_half() {
    let got = run(
        "FADD.v2f16 r0.h1, r3, r3\nNOP.end\n",
        &[("r0", 0x1234_5678), ("r3", h2(1.0, 2.0))],
        &["r0"],
    );
    assert_eq!(got[0], (h2(2.0, 4.0) & 0xffff_0000) | 0x5678);
}

#[test]
fn a_loop_counts_down_with_a_branch() {
    // r0 = 5; do { r1 += 2; r0 -= 1 } while r0 != 0
    let src = "IADD_IMM.i32 r0, 0x0, #0x5\n\
               IADD_IMM.i32 r1, r1, #0x2\n\
               IADD_IMM.i32 r0, r0, #0xFFFFFFFF\n\
               BRANCHZ r0, offset:-3\n\
               NOP.end\n";
    assert_eq!(run(src, &[], &["r0", "r1"]), [0, 10]);
}

#[test]
fn the_end_flow_stops_the_thread() {
    let src = "IADD_IMM.i32.end r0, 0x0, #0x1\nIADD_IMM.i32 r0, 0x0, #0x2\n";
    assert_eq!(run(src, &[], &["r0"]), [1]);
}

#[test]
fn a_reserved_modifier_value_is_an_error_not_a_guess() {
    let program = assemble_source("FCMP_OR.f32.total.i1 r0, r1, r2, 0x0\n", ARCH).unwrap();
    let err = sim::run(&mut sim::machine(4), &program, ARCH).unwrap_err();
    assert!(err.to_string().contains("undefined"), "{err}");
}

/// Rounds the exact binary64 value `x` (a positive product of two f32 in
/// f32's normal range, so exact) to f32 toward zero by cutting mantissa
/// bits: independent of the simulator's neighbour stepping.
fn rtz_reference(x: f64) -> f32 {
    let bits = x.to_bits();
    let exp = (((bits >> 52) & 0x7ff) as i32 - 1023 + 127) as u32;
    let mant = ((bits >> 29) & 0x7f_ffff) as u32;
    f32::from_bits((exp << 23) | mant)
}

#[test]
fn directed_rounding_of_products_matches_a_truncating_reference() {
    let mut seed = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let program = assemble_source("FMA.f32.rtz r0, r1, r2, 0x0\nNOP.end\n", ARCH).unwrap();
    for _ in 0..3000 {
        let a = f32::from_bits(0x3f00_0000 | (next() as u32 & 0x00ff_ffff));
        let b = f32::from_bits(0x3f00_0000 | (next() as u32 & 0x00ff_ffff));
        let want = rtz_reference(a as f64 * b as f64);
        let mut m = sim::machine(1);
        m.set(0, false, 1, 0, a.to_bits());
        m.set(0, false, 2, 0, b.to_bits());
        sim::run(&mut m, &program, ARCH).unwrap();
        assert_eq!(m.get(0, false, 0, 0), Some(want.to_bits()), "{a} * {b}");
    }
}
