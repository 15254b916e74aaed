//! The generated Valhall simulator: coverage of the arithmetic units
//! (FMA, CVT, SFU), hand-written programs with known results (swizzles,
//! lanes, modifiers, rounding modes, clamps, uniforms and table constants),
//! directed rounding against an independent reference, and flow control.

use lathe_mali::valhall::generated::Opcode;
use lathe_mali::valhall::{Arch, Unit, assemble_source, sim};

const ARCH: Arch = Arch::V10;

/// Instructions of the arithmetic units (FMA, CVT, SFU; flow control
/// included) whose result no public source describes: not Mesa's Valhall
/// ISA.xml, not Mesa's Bifrost compiler (which never emits them), not
/// Arm's public manuals. The spec declares them `undocumented` (a doc
/// comment says what is known) and the simulator stops on them rather
/// than guess; every other instruction has semantics (transcendental
/// tables as declared approximations). The coverage test fails when this
/// list and the spec disagree.
const UNDOCUMENTED: &[&str] = &[
    // The class-bit layout of the result.
    "FPCLASS.f32",
    "FPCLASS.f16",
    // The offset's format.
    "FSINCOS_OFFSET.u6",
    // The packed int/float result of the first form and the table of
    // `.second`.
    "FATAN_ASSIST.f32",
];

/// Instructions with semantics for the forms a public source describes
/// and `undocumented` for the rest (modifiers Arm's own ISA description
/// names, Mesa never sets, and nothing public describes): FLOG_TABLE's
/// `natural` table and `high`/`low` precisions, the sine and cosine
/// tables' `.offset`, FEXP_TABLE's `.low`.
const PARTLY_UNDOCUMENTED: &[&str] = &[
    "FCOS_TABLE.u6",
    "FEXP_TABLE.u4",
    "FLOG_TABLE.f32",
    "FSIN_TABLE.u6",
];

fn arithmetic(op: Opcode) -> bool {
    Unit::of(op).is_arithmetic()
}

fn leaf(op: Opcode) -> usize {
    lathe_mali::valhall::isa()
        .encoding(op.info().name)
        .expect("a leaf")
}

#[test]
fn every_arithmetic_instruction_has_semantics() {
    let isa = lathe_mali::valhall::isa();
    let mut covered = 0;
    let mut missing = Vec::new();
    let mut undocumented = Vec::new();
    let mut partly = Vec::new();
    let mut arithmetic_total = 0;
    for op in Opcode::ALL {
        if !arithmetic(op) {
            continue;
        }
        arithmetic_total += 1;
        if !sim::covers(op) {
            missing.push(op.info().name);
        } else if isa.semantics.undocumented(isa, leaf(op)) {
            undocumented.push(op.info().name);
        } else {
            if isa.semantics.partly_undocumented(isa, leaf(op)) {
                partly.push(op.info().name);
            }
            covered += 1;
        }
    }
    println!(
        "Valhall FMA/CVT/SFU units: {covered} of {arithmetic_total} instructions with semantics ({} with undocumented forms), {} declared undocumented, {} gaps",
        partly.len(),
        undocumented.len(),
        missing.len()
    );
    partly.sort_unstable();
    assert_eq!(partly, PARTLY_UNDOCUMENTED, "with undocumented forms");
    assert!(
        missing.is_empty(),
        "instructions without semantics: {missing:?}"
    );
    let mut want = UNDOCUMENTED.to_vec();
    want.sort_unstable();
    undocumented.sort_unstable();
    assert_eq!(undocumented, want, "declared undocumented");
    assert_eq!(covered + UNDOCUMENTED.len(), arithmetic_total);
}

#[test]
fn undocumented_instructions_stop_the_simulator() {
    let isa = lathe_mali::valhall::isa();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut pick = |m: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % m.saturating_add(1).max(1)
    };
    for name in UNDOCUMENTED {
        let op = Opcode::ALL
            .into_iter()
            .find(|o| o.info().name == *name)
            .expect("an opcode");
        let word = isa
            .build_word(leaf(op), ARCH.generation(), &mut pick)
            .expect("a word");
        let err = sim::run(&mut sim::machine(4), &[word], ARCH).unwrap_err();
        assert!(err.to_string().contains("undocumented:"), "{name}: {err}");
    }
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

/// Runs `source` on a quad with per-lane values, returns `dump` in every lane.
fn run_quad(source: &str, set: &[(&str, [u32; 4])]) -> sim::Machine {
    let program = assemble_source(source, ARCH).unwrap_or_else(|e| panic!("{source}: {e:?}"));
    let mut m = sim::machine(4);
    for (reg, bits) in set {
        let (f, h, i) = m.parse_reg(reg).unwrap_or_else(|| panic!("register {reg}"));
        for (lane, b) in bits.iter().enumerate() {
            m.set(f, h, i, lane, *b);
        }
    }
    sim::run(&mut m, &program, ARCH).unwrap_or_else(|e| panic!("{source}: {e}"));
    m
}

fn lanes(m: &sim::Machine, reg: &str) -> [u32; 4] {
    let (f, h, i) = m.parse_reg(reg).unwrap();
    std::array::from_fn(|l| m.get(f, h, i, l).unwrap())
}

#[test]
fn cross_lane_permute_reads_the_other_threads_before_any_write() {
    let r1 = [10, 11, 12, 13];
    // xor 1 swaps horizontal neighbours of the quad (a derivative's
    // partner); writing r1 itself must not leak into a later thread's read.
    let m = run_quad(
        "CLPER.i32.xor r1, r1, r2.b00\nNOP.end\n",
        &[("r1", r1), ("r2", [1; 4])],
    );
    assert_eq!(lanes(&m, "r1"), [11, 10, 13, 12]);
    // Thread 2 for everyone (a broadcast); thread 6 is outside the quad,
    // so the inactive result (.umax) comes back.
    let m = run_quad(
        "CLPER.i32 r0, r1, r2.b00\nCLPER.i32.umax r3, r1, r4.b00\nNOP.end\n",
        &[("r1", r1), ("r2", [2; 4]), ("r4", [6; 4])],
    );
    assert_eq!(lanes(&m, "r0"), [12; 4]);
    assert_eq!(lanes(&m, "r3"), [u32::MAX; 4]);
}

#[test]
fn a_thread_that_left_is_inactive_to_wmask_and_clper() {
    // Thread 3 ends first (its r5 is zero); the rest see it inactive.
    let src = "BRANCHZ.eq r5, offset:1\n\
               IADD_IMM.i32 r0, 0x0, #0x1\n\
               BRANCHZ r0, offset:1\n\
               NOP.end\n\
               WMASK r6, r1\n\
               CLPER.i32.v2i1 r7, r1, r2.b00\n\
               NOP.end\n";
    let m = run_quad(
        src,
        &[("r1", [0, 5, 7, 9]), ("r2", [3; 4]), ("r5", [1, 1, 1, 0])],
    );
    assert_eq!(lanes(&m, "r6")[..3], [0b0110; 3]);
    assert_eq!(lanes(&m, "r7")[..3], [0x0001_0001; 3]);
}

#[test]
fn an_absolute_indirect_branch_goes_to_the_byte_address() {
    let src = "IADD_IMM.i32 r0, 0x0, #0x1\n\
               BRANCHZI.absolute r1, r2\n\
               IADD_IMM.i32 r0, 0x0, #0x2\n\
               NOP.end\n";
    // r2 = 24: the fourth instruction (8 bytes each).
    assert_eq!(run(src, &[("r1", 1), ("r2", 24)], &["r0"]), [1]);
    let eq = src.replace("BRANCHZI.absolute", "BRANCHZI.eq.absolute");
    assert_eq!(run(&eq, &[("r1", 1), ("r2", 24)], &["r0"]), [2]);
}

#[test]
fn the_64_bit_helpers_match_integer_arithmetic() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let imuld = assemble_source("IMULD.u64 r0, r2, r3\nNOP.end\n", ARCH).unwrap();
    // A signed 64-bit a < b from a `.u1` low-half and an `.m1` high-half compare.
    let lt = assemble_source(
        "ICMP_MULTI.u32.lt.u1 r6, r2, r4, 0x0\nICMP_MULTI.s32.lt.m1 r0, r3, r5, r6\nNOP.end\n",
        ARCH,
    )
    .unwrap();
    let seg = assemble_source("SEG_ADD.u64.neg r0, r2, r4\nNOP.end\n", ARCH).unwrap();
    for i in 0..500 {
        let (a, b) = (next(), next());
        // Every fourth pair shares the high word, so the low half decides.
        let b = if i % 4 == 0 {
            (a & !0xffff_ffff) | (b & 0xffff_ffff)
        } else {
            b
        };
        let mut m = sim::machine(1);
        for (r, v) in [
            (2, a as u32),
            (3, (a >> 32) as u32),
            (4, b as u32),
            (5, (b >> 32) as u32),
        ] {
            m.set(0, false, r, 0, v);
        }
        let mut m2 = m.snapshot();
        let mut m3 = m.snapshot();
        sim::run(&mut m, &imuld, ARCH).unwrap();
        let want = (a as u32 as u64) * ((a >> 32) as u32 as u64);
        let got =
            m.get(0, false, 0, 0).unwrap() as u64 | (m.get(0, false, 1, 0).unwrap() as u64) << 32;
        assert_eq!(got, want, "IMULD {a:#x}");
        sim::run(&mut m2, &lt, ARCH).unwrap();
        let want = if (a as i64) < (b as i64) { u32::MAX } else { 0 };
        assert_eq!(m2.get(0, false, 0, 0), Some(want), "{a:#x} < {b:#x}");
        sim::run(&mut m3, &seg, ARCH).unwrap();
        let got =
            m3.get(0, false, 0, 0).unwrap() as u64 | (m3.get(0, false, 1, 0).unwrap() as u64) << 32;
        assert_eq!(got, a.wrapping_sub(b), "SEG_ADD.neg");
    }
}

#[test]
fn rescaling_and_cube_helpers() {
    let set = [
        ("r1", f(0.0)),
        ("r2", f(f32::INFINITY)),
        ("r3", f(2.5)),
        ("r4", 3),
        ("r5", h2(1.5, -0.75)),
        ("r6", (2u32) | ((-1i16 as u16 as u32) << 16)),
        // A cube coordinate: z is the major axis, negative.
        ("r7", f(0.25)),
        ("r8", f(-0.5)),
        ("r9", f(-0.75)),
        // The face word of face 5: the face in bits 29..=31 (Mesa's
        // `bi_emit_cube_coord`: "Face index at bit[29:31]").
        ("r10", 5 << 29),
    ];
    let cases: &[(&str, u32)] = &[
        // A zero factor makes the product A: 0 + 2.5, scaled by 2^3.
        ("FMA_RSCALE_LEFT.f32 r0, r1, r2, r3, r4", f(20.0)),
        ("FMA_RSCALE_LEFT.f32 r0, r3, r3, r1, r4", f(50.0)),
        ("LDEXP.v2f16 r0, r5, r6", h2(6.0, -0.375)),
        ("CUBEFACE1 r0, r7, r8, r9", f(0.75)),
        // Faces +x, -x, +y, -y, +z, -z are 0..=5 in the top three bits.
        ("CUBEFACE2_V9 r0, r7, r8, r9", 5 << 29),
        ("CUBEFACE2_V9 r0, r9, r7, r8", 1 << 29),
        ("CUBEFACE2_V9 r0, r7, r9, r8", 3 << 29),
        ("CUBEFACE2_V9 r0, r9.neg, r7, r8", 0),
        ("CUBEFACE2_V9 r0, r7, r9.neg, r8", 2 << 29),
        ("CUBEFACE2_V9 r0, r7, r8, r9.neg", 4 << 29),
        // Face 5 (-z): s = -x, t = -y.
        ("CUBE_SSEL r0, r9, r7, r10", f(-0.25)),
        ("CUBE_TSEL r0, r8, r9, r10", f(0.5)),
    ];
    for (asm, want) in cases {
        let got = run(&format!("{asm}\nNOP.end\n"), &set, &["r0"])[0];
        assert_eq!(got, *want, "{asm}: {got:#010x} != {want:#010x}");
    }
}

/// Runs a one-lane program on `x` in r1 and constants in r10.., returns
/// r0 as f32.
fn eval(program: &[u64], x: f32, constants: &[f32]) -> f32 {
    let mut m = sim::machine(1);
    m.set(0, false, 1, 0, x.to_bits());
    for (i, v) in constants.iter().enumerate() {
        m.set(0, false, 10 + i as u32, 0, v.to_bits());
    }
    sim::run(&mut m, program, ARCH).unwrap();
    f32::from_bits(m.get(0, false, 0, 0).unwrap())
}

fn close(got: f32, want: f64, rel: f64) -> bool {
    (got as f64 - want).abs() <= rel * want.abs().max(f64::MIN_POSITIVE)
}

/// Mesa's transcendental sequences (Bifrost/Valhall lowering) built from
/// the table instructions agree with f64 reference functions: the tables'
/// semantics compose as the compiler expects.
#[test]
fn mesa_transcendental_sequences_agree_with_f64() {
    // log2(x) = FREXPE.log(x) + FLOGD(x) * FADD_LSCALE(-1, x)
    let log2 = assemble_source(
        "FREXPE.f32.log r2, r1\nS32_TO_F32 r2, r2\nFADD_LSCALE.f32 r3, r10, r1\n\
         FLOGD.f32 r4, r1\nFMA.f32 r0, r4, r3, r2\nNOP.end\n",
        ARCH,
    )
    .unwrap();
    // exp2(x) = FEXP(F32_TO_S32(x * 2^24), x * 2^24)
    let exp2 = assemble_source(
        "FMA_RSCALE.f32 r2, r1, r10, r11, r12\nF32_TO_S32 r3, r2\nFEXP.f32 r0, r3, r2\nNOP.end\n",
        ARCH,
    )
    .unwrap();
    // 1/x: FRCP_APPROX of the mantissa, one Newton step, the exponent.
    let rcp = assemble_source(
        "FRCP_APPROX.f32 r2, r1\nFREXPM.f32 r3, r1\nFREXPE.f32 r4, r1\nISUB.s32 r4, 0x0, r4\n\
         FMA_RSCALE_N.f32 r5, r3, r2.neg, r10, 0x0\nFMA_RSCALE.f32 r0, r5, r2, r2, r4\nNOP.end\n",
        ARCH,
    )
    .unwrap();
    // 1/sqrt(x): the same with the `.sqrt` reduction.
    let rsq = assemble_source(
        "FRSQ_APPROX.f32 r2, r1\nFREXPM.f32.sqrt r3, r1\nFREXPE.f32.sqrt r4, r1\nISUB.s32 r4, 0x0, r4\n\
         FMA.f32 r6, r2, r2, r11\nFMA_RSCALE_N.f32 r5, r3, r6.neg, r10, r12\nFMA_RSCALE_N.f32 r0, r5, r2, r2, r4\nNOP.end\n",
        ARCH,
    )
    .unwrap();
    let mut seed = 0x0123_4567_89ab_cdefu64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..400 {
        // Positive normal floats over a wide range of exponents.
        let x = f32::from_bits(((next() % 200 + 27) as u32) << 23 | (next() as u32 & 0x7f_ffff));
        let got = eval(&log2, x, &[-1.0]);
        assert!(
            (got as f64 - (x as f64).log2()).abs() <= 2e-6 * (x as f64).log2().abs().max(1.0),
            "log2({x}) = {got}"
        );
        let got = eval(&rcp, x, &[1.0]);
        assert!(close(got, 1.0 / x as f64, 2e-7), "1/{x} = {got}");
        let got = eval(&rsq, x, &[1.0, -0.0, f32::from_bits(u32::MAX)]);
        assert!(
            close(got, 1.0 / (x as f64).sqrt(), 4e-7),
            "rsq({x}) = {got}"
        );
        // exp2 over [-100, 100)
        let e = (next() % 200_000) as f32 / 1000.0 - 100.0;
        let got = eval(&exp2, e, &[1.0, -0.0, f32::from_bits(24)]);
        assert!(close(got, (e as f64).exp2(), 4e-7), "exp2({e}) = {got}");
    }
    assert!(eval(&exp2, f32::NAN, &[1.0, -0.0, f32::from_bits(24)]).is_nan());
    assert_eq!(
        eval(&exp2, f32::NEG_INFINITY, &[1.0, -0.0, f32::from_bits(24)]),
        0.0
    );
}

/// Mesa's Bifrost log2 (`bi_lower_flog2_32`): x = a1 * 2^e with a1 the
/// `.log` mantissa, r1 = FLOG_TABLE (red), xt = FLOG_TABLE.base2 ~ -log2(r1),
/// y = a1 * r1 - 1, log2(x) = (e + xt) + y * (1 - y / 2) / ln 2. The
/// two table modes must compose into log2 within the series' error.
#[test]
fn the_log_table_modes_compose_into_mesas_bifrost_log2() {
    let log2 = assemble_source(
        "FREXPM.f32.log r2, r1\nFREXPE.f32.log r3, r1\nS32_TO_F32 r3, r3\n\
         FLOG_TABLE.f32 r4, r1\nFLOG_TABLE.f32.base2 r5, r1\nFADD.f32 r6, r3, r5\n\
         FMA.f32 r7, r2, r4, r10\nFMA.f32 r8, r7, r11, r12\nFMA.f32 r8, r7, r8, r14\n\
         FMA.f32 r8, r8, r13, r14\nFADD.f32 r0, r6, r8\nNOP.end\n",
        ARCH,
    )
    .unwrap();
    let constants = [-1.0, -0.5, 1.0, std::f32::consts::LOG2_E, -0.0];
    let mut seed = 0x5eed_1065_2a11_u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..400 {
        let x = f32::from_bits(((next() % 200 + 27) as u32) << 23 | (next() as u32 & 0x7f_ffff));
        let got = eval(&log2, x, &constants);
        let want = (x as f64).log2();
        assert!(
            (got as f64 - want).abs() <= 4e-7 * want.abs().max(1.0),
            "log2({x}) = {got}, want {want}"
        );
    }
    // Exact at powers of two: the mantissa is 1, the table 1/1, -log2(1) = 0.
    assert_eq!(eval(&log2, 0.25, &constants), -2.0);
}

/// The undescribed table forms are declared undocumented; values outside
/// Arm's lists are reserved.
#[test]
fn the_undescribed_table_forms_stop_the_simulator() {
    for (text, stop) in [
        ("FLOG_TABLE.f32.natural r0, r1", "undocumented:"),
        ("FLOG_TABLE.f32.high r0, r1", "undocumented:"),
        ("FLOG_TABLE.f32.base2.low r0, r1", "undocumented:"),
        ("FLOG_TABLE.f32.reserved r0, r1", "undefined"),
        ("FSIN_TABLE.u6.offset r0, r1", "undocumented:"),
        ("FCOS_TABLE.u6.offset r0, r1", "undocumented:"),
        ("FEXP_TABLE.u4.low r0, r1", "undocumented:"),
        ("FEXP_TABLE.u4.reserved r0, r1", "undefined"),
        ("FSINCOS_OFFSET.u6.scale r0, r1", "undocumented:"),
    ] {
        let program = assemble_source(&format!("{text}\nNOP.end\n"), ARCH)
            .unwrap_or_else(|e| panic!("{text}: {e:?}"));
        let err = sim::run(&mut sim::machine(4), &program, ARCH).unwrap_err();
        assert!(err.to_string().contains(stop), "{text}: {err}");
    }
}

#[test]
fn the_trigonometric_and_exponential_tables_index_by_the_low_bits() {
    let pi = std::f64::consts::PI;
    for k in 0..64u32 {
        // High bits are ignored: a biased float carries k in its low bits.
        let word = 0x4940_0000 | k;
        let sin = run("FSIN_TABLE.u6 r0, r1\nNOP.end\n", &[("r1", word)], &["r0"])[0];
        let cos = run("FCOS_TABLE.u6 r0, r1\nNOP.end\n", &[("r1", word)], &["r0"])[0];
        assert!(
            (f32::from_bits(sin) as f64 - (k as f64 * pi / 32.0).sin()).abs() < 1e-6,
            "sin {k}"
        );
        assert!(
            (f32::from_bits(cos) as f64 - (k as f64 * pi / 32.0).cos()).abs() < 1e-6,
            "cos {k}"
        );
    }
    for k in 0..16u32 {
        let got = run(
            "FEXP_TABLE.u4 r0, r1\nNOP.end\n",
            &[("r1", 0x4940_0010 | k)],
            &["r0"],
        )[0];
        assert!(
            close(f32::from_bits(got), (k as f64 / 16.0).exp2(), 1e-7),
            "exp table {k}"
        );
    }
}

// ---------------------------------------------------------------------
// Message instructions through the GPU-I/O trait, and dependency slots

use lathe_isa::sim::{self as prim};

fn run_io(
    source: &str,
    harness: prim::Harness,
    setup: &[(&str, [u32; 4])],
) -> Result<sim::Machine, sim::SimError> {
    let program = assemble_source(source, ARCH).unwrap_or_else(|e| panic!("{source}: {e:?}"));
    let mut m = sim::machine(4);
    m.set_io(Box::new(harness));
    for (reg, values) in setup {
        let (f, h, i) = m.parse_reg(reg).expect("register");
        for (lane, v) in values.iter().enumerate() {
            m.set(f, h, i, lane, *v);
        }
    }
    sim::run(&mut m, &program, ARCH)?;
    Ok(m)
}

const ADDRESSES: [(&str, [u32; 4]); 2] = [("r2", [0x1000, 0x1004, 0x1008, 0x100c]), ("r3", [0; 4])];

#[test]
fn loads_and_stores_go_through_the_harness_and_wait_on_their_slot() {
    let mut h = prim::Harness::default();
    let words = [7u32, 11, 13, 17, 19, 23];
    h.write_words(prim::Space::Global, 0, 0x1000, &words);
    // Each thread loads two words at its address + 4 (slot 1), adds them
    // after waiting, stores the sum 0x100 bytes further (slot 2).
    let mut setup = ADDRESSES.to_vec();
    setup.push(("r6", [0x1100, 0x1104, 0x1108, 0x110c]));
    setup.push(("r7", [0; 4]));
    let m = run_io(
        "LOAD.i64.slot1 @r4:r5, r2, offset:4\n\
         IADD.u32.wait1 r8, r4, r5\n\
         STORE.i32.slot2 @r8, r6, offset:0\n\
         NOP.end\n",
        h,
        &setup,
    )
    .unwrap();
    let h = m.io_as::<prim::Harness>().unwrap();
    for lane in 0..4 {
        let sum = words[lane + 1] + words[lane + 2];
        assert_eq!(lanes(&m, "r8")[lane], sum);
        assert_eq!(
            h.word(prim::Space::Global, 0, 0, 0x1100 + 4 * lane as u64),
            sum
        );
    }
}

#[test]
fn reading_a_load_result_without_waiting_on_its_slot_is_a_hazard() {
    let hazard = |consumer: &str| {
        run_io(
            &format!(
                "LOAD.i32.slot0 @r0, r2, offset:0\nFADD.f32 r5, r9, r9\n{consumer}\nNOP.end\n"
            ),
            prim::Harness::default(),
            &ADDRESSES,
        )
        .err()
    };
    // The right slot: fine, even two instructions later.
    assert_eq!(hazard("IADD_IMM.i32.wait0 r1, r0, #0x1"), None);
    assert_eq!(hazard("IADD_IMM.i32.wait012 r1, r0, #0x1"), None);
    for consumer in [
        "IADD_IMM.i32 r1, r0, #0x1",
        "IADD_IMM.i32.wait12 r1, r0, #0x1",
    ] {
        match hazard(consumer) {
            Some(sim::SimError::Hazard {
                consumer: 2,
                producer: 0,
                reg,
                ..
            }) => assert_eq!(reg, "r0", "{consumer}"),
            other => panic!("{consumer}: {other:?}"),
        }
    }
    // A register the load did not write is no hazard.
    assert_eq!(hazard("IADD_IMM.i32 r1, r9, #0x1"), None);
}

fn fbits(m: &sim::Machine, reg: &str) -> [f32; 4] {
    lanes(m, reg).map(f32::from_bits)
}

#[test]
fn varyings_are_interpolated_at_the_thread_position_or_read_flat() {
    let mut h = prim::Harness::default();
    // Slots 0..=11: varyings 0, 1 and 2 (four components each).
    h.varyings = (0..12)
        .map(|s| {
            let s = s as f32;
            [s, s + 1.0, 10.0 * s]
        })
        .collect();
    let pos = [(0.0f32, 0.0f32), (0.5, 0.0), (0.0, 0.25), (0.25, 0.5)];
    for (lane, p) in pos.iter().enumerate() {
        h.positions.insert(lane, *p);
    }
    let m = run_io(
        "LD_VAR_IMM.slot0.v4.f32.center.store @r0:r1:r2:r3, r61, table:0x0, index:0x1\n\
         LD_VAR_BUF_IMM.f32.slot1.v2.src_f32.center.store @r4:r5, r61, index:0x20\n\
         LD_VAR_FLAT_IMM.slot2.v2.f32 @r6:r7, table:0x0, index:0x0\n\
         NOP.wait012\n\
         NOP.end\n",
        h.clone(),
        &[],
    )
    .unwrap();
    let interp = |slot: f32, (i, j): (f32, f32)| slot + i * 1.0 + j * (9.0 * slot);
    for (lane, p) in pos.iter().enumerate() {
        // Varying 1 is slots 4..=7; byte offset 0x20 is slot 8.
        for (k, r) in ["r0", "r1", "r2", "r3"].iter().enumerate() {
            assert_eq!(
                fbits(&m, r)[lane],
                interp(4.0 + k as f32, *p),
                "{r} lane {lane}"
            );
        }
        assert_eq!(fbits(&m, "r4")[lane], interp(8.0, *p));
        assert_eq!(fbits(&m, "r5")[lane], interp(9.0, *p));
        // Flat: the provoking vertex's value of slots 0 and 1.
        assert_eq!((fbits(&m, "r6")[lane], fbits(&m, "r7")[lane]), (0.0, 1.0));
    }
    // Read without waiting on slot 0: a hazard naming the varying load.
    let err = run_io(
        "LD_VAR_IMM.slot0.v4.f32.center.store @r0:r1:r2:r3, r61, table:0x0, index:0x1\n\
         FADD.f32 r8, r2, r2\n\
         NOP.end\n",
        h,
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(err, sim::SimError::Hazard { consumer: 1, producer: 0, ref reg, .. } if reg == "r2"),
        "{err}"
    );
}

#[test]
fn attributes_are_read_per_vertex_or_per_instance() {
    let mut h = prim::Harness::default();
    h.attributes.insert(
        3,
        prim::Attribute {
            per_instance: false,
            elements: (0..8).map(|v| [v, 10 * v, 100 * v, 7]).collect(),
        },
    );
    h.attributes.insert(
        4,
        prim::Attribute {
            per_instance: true,
            elements: vec![[1, 2, 3, 4], [5, 6, 7, 8]],
        },
    );
    let m = run_io(
        "LD_ATTR_IMM.v4.u32.slot0 @r8:r9:r10:r11, r60, r61, index:0x3, table:0x0\n\
         LD_ATTR_IMM.v2.u32.slot1 @r12:r13, r60, r61, index:0x4, table:0x0\n\
         NOP.wait01\n\
         NOP.end\n",
        h,
        &[("r60", [2, 3, 5, 7]), ("r61", [0, 1, 1, 0])],
    )
    .unwrap();
    let vertex = [2u32, 3, 5, 7];
    let instance = [0usize, 1, 1, 0];
    for lane in 0..4 {
        let v = vertex[lane];
        let got: Vec<u32> = ["r8", "r9", "r10", "r11"]
            .iter()
            .map(|r| lanes(&m, r)[lane])
            .collect();
        assert_eq!(got, [v, 10 * v, 100 * v, 7]);
        let want = [[1, 2], [5, 6]][instance[lane]];
        assert_eq!([lanes(&m, "r12")[lane], lanes(&m, "r13")[lane]], want);
    }
    // An attribute the I/O side does not have: its error, not a panic.
    let err = run_io(
        "LD_ATTR_IMM.v4.u32.slot0 @r8:r9:r10:r11, r60, r61, index:0x9, table:0x0\nNOP.end\n",
        prim::Harness::default(),
        &[],
    )
    .unwrap_err();
    assert!(matches!(err, sim::SimError::Io { pc: 0, .. }), "{err}");
}

#[test]
fn alpha_test_and_blending_reach_the_render_target() {
    let mut h = prim::Harness::default();
    h.alpha_ref = Some(0.5);
    let alpha = [0.25f32, 0.5, 0.75, f32::NAN];
    let colour = |lane: usize| [0.1f32, 0.2, 0.3, alpha[lane]];
    let mut setup = vec![("r60", [0b1; 4])];
    for (k, r) in ["r4", "r5", "r6", "r7"].iter().enumerate() {
        setup.push((r, std::array::from_fn(|lane| colour(lane)[k].to_bits())));
    }
    // Fixed-function path without `.end`: BLEND skips `target`
    // instructions after it.
    let m = run_io(
        "ATEST.wait0126 @r60, r60, r7, atest_datum.w0\n\
         BLEND.slot0.v4.f32.wait @r4:r5:r6:r7, blend_descriptor_1.w0, r60, target:0x1\n\
         IADD_IMM.i32 r9, r9, #0x1\n\
         NOP.end\n",
        h,
        &setup,
    )
    .unwrap();
    let h = m.io_as::<prim::Harness>().unwrap();
    for (lane, a) in alpha.iter().enumerate() {
        let pass = *a >= 0.5;
        assert_eq!(lanes(&m, "r60")[lane], pass as u32, "lane {lane}");
        assert_eq!(h.blends[&(lane, 1)], pass as u32);
        for (k, c) in colour(lane).iter().enumerate() {
            assert_eq!(
                h.outputs.get(&(lane, 1, k as u32)).copied(),
                pass.then_some(c.to_bits()),
                "lane {lane} component {k}"
            );
        }
        assert_eq!(lanes(&m, "r9")[lane], 0, "the branch skipped the add");
    }
}

#[test]
fn local_storage_pointers_address_private_and_shared_memory() {
    // Special values: thread_local_pointer is sr34:sr35, workgroup_local_pointer sr38:sr39.
    let m = run_io(
        "STORE.i32.slot0 @r0, thread_local_pointer.w0, offset:8\n\
         STORE.i32.slot1 @r1, workgroup_local_pointer.w0, offset:-4\n\
         LOAD.i32.slot0.wait01 @r2, thread_local_pointer.w0, offset:8\n\
         LOAD.i32.slot1 @r3, workgroup_local_pointer.w0, offset:-4\n\
         NOP.wait01\n\
         NOP.end\n",
        prim::Harness::default(),
        &[
            ("r0", [10, 11, 12, 13]),
            ("r1", [20, 21, 22, 23]),
            ("sr34", [0x100; 4]),
            ("sr38", [0x40; 4]),
        ],
    )
    .unwrap();
    let h = m.io_as::<prim::Harness>().unwrap();
    for lane in 0..4 {
        // Private memory is per thread; shared memory is global memory
        // at the workgroup pointer, one word, and the last thread's
        // store wins.
        assert_eq!(lanes(&m, "r2")[lane], 10 + lane as u32);
        assert_eq!(
            h.word(prim::Space::Private, 0, lane, 0x108),
            10 + lane as u32
        );
        assert_eq!(lanes(&m, "r3")[lane], 23);
    }
    assert_eq!(h.word(prim::Space::Global, 0, 0, 0x3c), 23);
    assert_eq!(
        h.word(prim::Space::Shared, 0, 0, 0x3c),
        0,
        "no separate space"
    );
    assert_eq!(h.word(prim::Space::Global, 0, 0, 0x108), 0, "not global");
}
