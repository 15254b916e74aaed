//! The generated ir3 simulator: coverage of the ALU categories, primitives
//! against independent references, hand-written programs with known
//! results, and programs that must report a hazard.

use lathe_adreno::ir3::generated::Opcode;
use lathe_adreno::ir3::{Generation, assemble_source, sim};
use lathe_isa::sim::{self as prim, F16};

const G: Generation = Generation::A6xx;

/// ALU instructions of cat0–cat4 that no public source describes: Mesa's
/// disassembler names them, its compiler never emits them. The spec
/// declares them `undocumented` (with a doc comment saying what is
/// known): the simulator stops on them rather than guess. The coverage
/// test fails when this list and the spec disagree.
const UNDOCUMENTED: &[&str] = &[
    // cat0: branches whose condition is not described.
    "flow_rev",
    "bkt",
    "brac",
    "brax",
    // cat2: named opcodes with undescribed operands and results.
    "setrm",
    "shb",
    "msad",
    // cat3: the 16-bit sibling of madsh.m16.
    "madsh.u16",
];

fn category(op: Opcode) -> Option<i64> {
    match op.meta("category") {
        Some(lathe_isa::ast::MetaRef::Int(c)) => Some(c),
        _ => None,
    }
}

/// The engine's leaf of an opcode.
fn leaf(op: Opcode) -> usize {
    ir3_isa().encoding(op.info().name).expect("a leaf")
}

fn ir3_isa() -> &'static lathe_isa::Isa {
    lathe_adreno::ir3::generated::isa()
}

#[test]
fn every_alu_instruction_of_cat0_to_cat4_has_semantics() {
    let isa = ir3_isa();
    let mut covered = 0;
    let mut missing = Vec::new();
    let mut undocumented = Vec::new();
    for op in Opcode::ALL {
        let Some(c) = category(op) else { continue };
        if c > 4 {
            continue;
        }
        if !sim::covers(op) {
            missing.push(op.info().name);
        } else if isa.semantics.undocumented(isa, leaf(op)) {
            undocumented.push(op.info().name);
        } else {
            covered += 1;
        }
    }
    println!(
        "ir3 cat0-cat4: {covered} instructions with semantics, {} declared undocumented, {} gaps",
        undocumented.len(),
        missing.len()
    );
    assert!(
        missing.is_empty(),
        "instructions without semantics: {missing:?}"
    );
    assert_eq!(undocumented, UNDOCUMENTED, "declared undocumented");
    assert!(covered >= 110, "only {covered} instructions covered");
}

#[test]
fn undocumented_instructions_stop_the_simulator() {
    let isa = ir3_isa();
    let mut rng = Rng(3);
    for name in UNDOCUMENTED {
        let op = Opcode::ALL
            .into_iter()
            .find(|o| o.info().name == *name)
            .expect("an opcode");
        let word = isa
            .build_word(leaf(op), G.gpu_id(), &mut |m| {
                rng.next() % m.saturating_add(1).max(1)
            })
            .expect("a word");
        let err = sim::run(&mut sim::machine(4), &[word], G).unwrap_err();
        assert!(err.to_string().contains("undocumented:"), "{name}: {err}");
    }
}

// ---------------------------------------------------------------------
// Primitives against independent references

#[test]
fn f16_widening_matches_the_ir_module_for_every_value() {
    for h in 0..=u16::MAX {
        let a = F16(h).to_f32();
        let b = lathe_ir::f16::to_f32(h);
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "{h:#06x}: {a} vs {b}"
        );
    }
}

/// A small deterministic generator (xorshift*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn f16(&mut self) -> u16 {
        const SPECIAL: [u16; 10] = [
            0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x03ff, 0x7bff,
        ];
        let r = self.next();
        if r % 8 == 0 {
            SPECIAL[(r >> 8) as usize % SPECIAL.len()]
        } else {
            (r >> 16) as u16
        }
    }
    fn f32(&mut self) -> u32 {
        const SPECIAL: [u32; 10] = [
            0,
            0x8000_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            1,
            0x007f_ffff,
            0x7f7f_ffff,
        ];
        let r = self.next();
        match r % 8 {
            0 => SPECIAL[(r >> 8) as usize % SPECIAL.len()],
            // Small numbers, so sums and products stay interesting.
            1 | 2 => (((r >> 8) % 2001) as f32 / 8.0 - 125.0).to_bits(),
            _ => (r >> 32) as u32,
        }
    }
}

#[test]
fn f16_rounding_and_fma_match_the_ir_module() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..200_000 {
        let x = f64::from_bits(rng.next());
        let x = if rng.next() % 2 == 0 {
            x
        } else {
            (rng.next() as i64 as f64) * 2f64.powi(-40)
        };
        let a = F16::from_f64(x).0;
        let b = lathe_ir::f16::from_f64(x);
        assert!(
            a == b || (a & 0x7fff > 0x7c00 && b & 0x7fff > 0x7c00),
            "{x:e}: {a:#06x} vs {b:#06x}"
        );
    }
    for _ in 0..200_000 {
        let (a, b, c) = (rng.f16(), rng.f16(), rng.f16());
        let ours = F16::fma(F16(a), F16(b), F16(c)).0;
        let theirs = lathe_ir::f16::fma(a, b, c);
        let nan = |h: u16| h & 0x7fff > 0x7c00;
        assert!(
            ours == theirs || (nan(ours) && nan(theirs)),
            "fma({a:#06x}, {b:#06x}, {c:#06x}): {ours:#06x} vs {theirs:#06x}"
        );
    }
}

#[test]
fn float_primitives_match_rust_f32_and_the_f16_reference() {
    let mut rng = Rng(42);
    let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    for _ in 0..100_000 {
        let (a, b, c) = (
            f32::from_bits(rng.f32()),
            f32::from_bits(rng.f32()),
            f32::from_bits(rng.f32()),
        );
        assert!(same(prim::fadd(a, b), a + b));
        assert!(same(prim::fmul(a, b), a * b));
        assert!(same(prim::fsub(a, b), a - b));
        assert!(same(prim::ffma(a, b, c), a.mul_add(b, c)));
        assert!(same(prim::ffloor(a), a.floor()));
        assert!(same(prim::fceil(a), a.ceil()));
        assert!(same(prim::ftrunc(a), a.trunc()));
        assert!(same(prim::frndne(a), a.round_ties_even()));
        assert!(same(prim::frndaz(a), a.round()));
        if !a.is_nan() && !b.is_nan() && (a != 0.0 || b != 0.0) {
            assert!(same(prim::fmin(a, b), a.min(b)), "min({a}, {b})");
            assert!(same(prim::fmax(a, b), a.max(b)), "max({a}, {b})");
        }
        let (x, y) = (rng.f16(), rng.f16());
        let r = |f: f64| lathe_ir::f16::from_f64(f);
        let (fx, fy) = (lathe_ir::f16::to_f64(x), lathe_ir::f16::to_f64(y));
        let nan = |h: u16| h & 0x7fff > 0x7c00;
        for (ours, theirs) in [
            (prim::fadd(F16(x), F16(y)).0, r(fx + fy)),
            (prim::fmul(F16(x), F16(y)).0, r(fx * fy)),
            (prim::fsub(F16(x), F16(y)).0, r(fx - fy)),
        ] {
            assert!(
                ours == theirs || (nan(ours) && nan(theirs)),
                "{x:#06x} {y:#06x}: {ours:#06x} vs {theirs:#06x}"
            );
        }
    }
}

#[test]
fn integer_primitives_match_wide_arithmetic() {
    let mut rng = Rng(7);
    for _ in 0..100_000 {
        let (a, b) = (rng.next() as u32, rng.next() as u32);
        let (sa, sb) = (a as i32 as i64, b as i32 as i64);
        assert_eq!(prim::iadd(a, b), ((a as u64 + b as u64) % (1 << 32)) as u32);
        assert_eq!(
            prim::isub(a, b),
            ((a as u64 + (1 << 32) - b as u64) % (1 << 32)) as u32
        );
        assert_eq!(prim::imul(a, b), ((a as u64 * b as u64) % (1 << 32)) as u32);
        assert_eq!(prim::imin(a as i32, b as i32) as i64, sa.min(sb));
        assert_eq!(prim::imax(a, b), a.max(b));
        let (la, lb) = ((a & 0xff_ffff) as u64, (b & 0xff_ffff) as u64);
        assert_eq!(prim::imul24(a, b), (la * lb % (1 << 32)) as u32);
        let (ta, tb) = (((a << 8) as i32 >> 8) as i64, ((b << 8) as i32 >> 8) as i64);
        assert_eq!(
            prim::imul24(a as i32, b as i32) as i64,
            ((ta * tb) as u64 % (1 << 32)) as u32 as i32 as i64
        );
        assert_eq!(prim::ishl(a, b), ((a as u64) << (b % 32)) as u32);
        assert_eq!(prim::ishr(a, b), a / (1u32 << (b % 32)));
        assert_eq!(
            prim::ishr(a as i32, b as i32) as i64,
            sa.div_euclid(1i64 << (b % 32))
        );
        assert_eq!(
            prim::popcount(a),
            (0..32).filter(|i| a >> i & 1 == 1).count() as u32
        );
        assert_eq!(
            prim::clz(a),
            (0..32).take_while(|i| a >> (31 - i) & 1 == 0).count() as u32
        );
        let sign = a >> 31;
        assert_eq!(
            prim::cls(a as i32) as u32,
            (0..32).take_while(|i| a >> (31 - i) & 1 == sign).count() as u32
        );
        assert_eq!(
            prim::bitrev(a),
            (0..32).fold(0, |r, i| r | ((a >> i) & 1) << (31 - i))
        );
        assert_eq!(
            prim::iabs(a as i32) as i64,
            if sa == i32::MIN as i64 { sa } else { sa.abs() }
        );
        let (h1, h2) = (a as u16, b as u16);
        assert_eq!(prim::iadd(h1, h2) as u32, (h1 as u32 + h2 as u32) & 0xffff);
    }
}

#[test]
fn conversions_follow_the_documented_rules() {
    assert_eq!(prim::cvt::<f32, i32>(-2.75), -2);
    assert_eq!(prim::cvt::<f32, i32>(3.0e10), i32::MAX);
    assert_eq!(prim::cvt::<f32, u32>(-1.0), 0);
    assert_eq!(prim::cvt::<f32, i32>(f32::NAN), 0);
    assert_eq!(prim::cvt::<u32, f32>(16_777_217), 16_777_216.0);
    assert_eq!(
        prim::cvt::<f32, F16>(1.0 + 2f32.powi(-11)).0,
        0x3c00,
        "ties to even"
    );
    assert_eq!(prim::cvt::<bool, f32>(true), 1.0);
    assert_eq!(prim::bitcast::<f32, u32>(-0.0), 0x8000_0000);
    assert!(prim::compare(f32::NAN, 1.0, 1, 0, 1, 1));
    assert!(!prim::compare(f32::NAN, 1.0, 1, 1, 1, 0));
}

// ---------------------------------------------------------------------
// Programs

struct Run {
    m: sim::Machine,
}

impl Run {
    fn new(source: &str, setup: &[(&str, u32)]) -> Result<Run, sim::SimError> {
        let program = assemble_source(source, G).expect("assembles");
        let mut m = sim::machine(4);
        for (reg, bits) in setup {
            let (f, h, i) = m.parse_reg(reg).expect("register");
            for lane in 0..4 {
                m.set(f, h, i, lane, *bits);
            }
        }
        sim::run(&mut m, &program, G)?;
        Ok(Run { m })
    }

    fn get(&self, reg: &str, lane: usize) -> u32 {
        let (f, h, i) = self.m.parse_reg(reg).expect("register");
        self.m.get(f, h, i, lane).expect("in range")
    }

    fn f32(&self, reg: &str) -> f32 {
        f32::from_bits(self.get(reg, 0))
    }
}

fn bits(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn arithmetic_with_modifiers_and_nops() {
    let r = Run::new(
        "add.f r0.x, r1.x, (neg)r1.y\n\
         (nop3) mul.f r0.y, r1.x, r1.x\n\
         mad.f32 r0.z, r0.x, r0.y, (neg)r1.y\n\
         (ss)(sat)add.f r0.w, r1.x, r1.x\n\
         end\n",
        &[("r1.x", bits(1.5)), ("r1.y", bits(2.25))],
    )
    .unwrap();
    assert_eq!(r.f32("r0.x"), -0.75);
    assert_eq!(r.f32("r0.y"), 2.25);
    assert_eq!(r.f32("r0.z"), -0.75 * 2.25 - 2.25);
    assert_eq!(r.f32("r0.w"), 1.0, "(sat) clamps 3.0");
}

#[test]
fn repeat_advances_registers_marked_r() {
    // r0.x..r0.w = r1.x..r1.w + r2.x (r2.x is not marked (r)).
    let r = Run::new(
        "(rpt3)add.f r0.x, (r)r1.x, r2.x\nend\n",
        &[
            ("r1.x", bits(1.0)),
            ("r1.y", bits(2.0)),
            ("r1.z", bits(3.0)),
            ("r1.w", bits(4.0)),
            ("r2.x", bits(0.5)),
        ],
    )
    .unwrap();
    let got: Vec<f32> = ["r0.x", "r0.y", "r0.z", "r0.w"]
        .iter()
        .map(|n| r.f32(n))
        .collect();
    assert_eq!(got, [1.5, 2.5, 3.5, 4.5]);
}

#[test]
fn half_registers_alias_halves_of_full_ones() {
    let r = Run::new(
        "add.f hr0.x, hr2.x, hr2.y\n(rpt2)nop\ncov.f16f32 r1.z, hr0.x\nend\n",
        &[("hr2.x", 0x3e00), ("hr2.y", 0x4000)],
    )
    .unwrap();
    assert_eq!(r.get("hr0.x", 0), 0x4300, "1.5 + 2.0 = 3.5 in f16");
    assert_eq!(
        r.get("r0.x", 0) & 0xffff,
        0x4300,
        "hr0.x is the low half of r0.x"
    );
    assert_eq!(r.f32("r1.z"), 3.5);
    // hr2.x and hr2.y were set as the halves of r1.x.
    assert_eq!(r.get("r1.x", 0), 0x4000_3e00);
}

#[test]
fn immediates_consts_and_conversions() {
    let program = assemble_source(
        "mov.f32f32 r0.x, c1.y\nadd.s r0.y, r1.x, -5\ncov.f32s32 r0.z, c1.y\nend\n",
        G,
    )
    .unwrap();
    let mut m = sim::machine(4);
    let (f, h, i) = m.parse_reg("c1.y").unwrap();
    m.set(f, h, i, 0, bits(-7.75));
    let (f, h, i) = m.parse_reg("r1.x").unwrap();
    for lane in 0..4 {
        m.set(f, h, i, lane, 3);
    }
    sim::run(&mut m, &program, G).unwrap();
    let get = |m: &sim::Machine, n: &str| {
        let (f, h, i) = m.parse_reg(n).unwrap();
        m.get(f, h, i, 3).unwrap()
    };
    assert_eq!(
        get(&m, "r0.x"),
        bits(-7.75),
        "consts are shared by all threads"
    );
    assert_eq!(get(&m, "r0.y") as i32, -2);
    assert_eq!(get(&m, "r0.z") as i32, -7);
}

#[test]
fn relative_addressing_through_a0() {
    let r = Run::new(
        "mova a0.x, hr2.x\n(rpt5)nop\nmov.f32f32 r0.x, r<a0.x + 1>\nend\n",
        &[("hr2.x", 6), ("r1.w", bits(9.0))],
    )
    .unwrap();
    // a0.x = 6, so r<a0.x + 1> is component 7: r1.w.
    assert_eq!(r.f32("r0.x"), 9.0);
}

#[test]
fn divergent_branches_reconverge() {
    // Threads with r1.x < r1.y take the branch; the others run the
    // middle instruction; all meet at the last add.
    let program = assemble_source(
        "cmps.f.lt p0.x, r1.x, r1.y\n\
         (rpt5)nop\n\
         br p0.x, #2\n\
         mov.f32f32 r0.x, r1.y\n\
         add.f r0.y, r1.x, r1.x\n\
         end\n",
        G,
    )
    .unwrap();
    let mut m = sim::machine(4);
    let set = |m: &mut sim::Machine, n: &str, lane: usize, v: f32| {
        let (f, h, i) = m.parse_reg(n).unwrap();
        m.set(f, h, i, lane, v.to_bits());
    };
    for lane in 0..4 {
        set(&mut m, "r1.x", lane, lane as f32);
        set(&mut m, "r1.y", lane, 1.5);
        set(&mut m, "r0.x", lane, -1.0);
    }
    sim::run(&mut m, &program, G).unwrap();
    let get = |m: &sim::Machine, n: &str, lane: usize| {
        let (f, h, i) = m.parse_reg(n).unwrap();
        f32::from_bits(m.get(f, h, i, lane).unwrap())
    };
    for lane in 0..4 {
        let took = (lane as f32) < 1.5;
        assert_eq!(
            get(&m, "r0.x", lane),
            if took { -1.0 } else { 1.5 },
            "lane {lane}"
        );
        assert_eq!(get(&m, "r0.y", lane), 2.0 * lane as f32, "lane {lane}");
    }
}

#[test]
fn kill_stops_threads() {
    let program = assemble_source(
        "cmps.f.gt p0.x, r1.x, r1.y\n(rpt5)nop\nkill p0.x\nmov.f32f32 r0.x, r1.y\nend\n",
        G,
    )
    .unwrap();
    let mut m = sim::machine(4);
    let (f, h, i) = m.parse_reg("r1.x").unwrap();
    for lane in 0..4 {
        m.set(f, h, i, lane, (lane as f32).to_bits());
    }
    let (f, h, i) = m.parse_reg("r1.y").unwrap();
    for lane in 0..4 {
        m.set(f, h, i, lane, 1.0f32.to_bits());
    }
    sim::run(&mut m, &program, G).unwrap();
    assert_eq!(m.killed, [false, false, true, true]);
    let (f, h, i) = m.parse_reg("r0.x").unwrap();
    assert_eq!(m.get(f, h, i, 0), Some(1.0f32.to_bits()));
    assert_eq!(m.get(f, h, i, 3), Some(0));
}

// ---------------------------------------------------------------------
// Hazards

fn hazard(source: &str) -> Option<(usize, usize, String)> {
    match Run::new(source, &[]) {
        Err(sim::SimError::Hazard {
            consumer,
            producer,
            reg,
            ..
        }) => Some((consumer, producer, reg)),
        Ok(_) => None,
        Err(e) => panic!("{source}: {e}"),
    }
}

#[test]
fn a_missing_nop_is_a_hazard() {
    assert_eq!(
        hazard("add.f r0.x, r1.x, r1.y\nadd.f r2.x, r0.x, r1.x\n"),
        Some((1, 0, "r0.x".into()))
    );
    assert_eq!(
        hazard("add.f r0.x, r1.x, r1.y\nnop\nnop\nadd.f r2.x, r0.x, r1.x\n"),
        Some((3, 0, "r0.x".into()))
    );
    assert_eq!(
        hazard("add.f r0.x, r1.x, r1.y\n(rpt2)nop\nadd.f r2.x, r0.x, r1.x\n"),
        None
    );
    assert_eq!(
        hazard("(nop3) add.f r0.x, r1.x, r1.y\nadd.f r2.x, r0.x, r1.x\n"),
        None
    );
    // An ALU result feeding the SFU needs 6.
    assert_eq!(
        hazard("add.f r0.x, r1.x, r1.y\n(rpt2)nop\nrcp r2.x, r0.x\n"),
        Some((2, 0, "r0.x".into()))
    );
    // mad reads its third source a cycle late.
    assert_eq!(
        hazard("add.f r0.x, r1.x, r1.y\n(rpt1)nop\nmad.f32 r2.x, r1.x, r1.y, r0.x\n"),
        None
    );
    assert_eq!(
        hazard("add.f r0.x, r1.x, r1.y\n(rpt1)nop\nmad.f32 r2.x, r0.x, r1.y, r1.x\n"),
        Some((2, 0, "r0.x".into()))
    );
}

#[test]
fn a_missing_sync_bit_is_a_hazard() {
    assert_eq!(
        hazard("rcp r0.x, r1.x\nadd.f r2.x, r0.x, r1.x\n"),
        Some((1, 0, "r0.x".into()))
    );
    assert_eq!(hazard("rcp r0.x, r1.x\n(ss)add.f r2.x, r0.x, r1.x\n"), None);
    // The (ss) may come on an earlier instruction.
    assert_eq!(
        hazard("rcp r0.x, r1.x\n(ss)nop\nadd.f r2.x, r0.x, r1.x\n"),
        None
    );
    // Half registers share the tracking of the full register they live in.
    assert_eq!(
        hazard("rcp hr0.x, hr2.x\nadd.f r2.x, r0.x, r1.x\n"),
        Some((1, 0, "r0.x".into()))
    );
}

#[test]
fn the_two_halves_of_a_full_register_are_timed_apart() {
    // With merged registers a dependency is per half register (Mesa's
    // regmask): hr0.y and hr0.x are both halves of r0.x, yet a write of
    // one does not delay a read of the other.
    assert_eq!(
        hazard("add.f hr0.y, hr2.x, hr2.y\nadd.f hr1.x, hr0.x, hr0.x\n"),
        None
    );
    assert_eq!(
        hazard("cmps.f.lt hr0.w, r0.x, r1.x\ncov.u16u32 r2.w, hr0.z\n"),
        None
    );
    // Reading the whole register still waits for either half.
    assert_eq!(
        hazard("add.f hr0.y, hr2.x, hr2.y\n(rpt2)nop\nadd.f r1.x, r0.x, r0.x\n"),
        Some((2, 0, "r0.x".into()))
    );
}

#[test]
fn reading_the_other_precision_costs_the_precision_rule() {
    // hr0.x is the low half of r0.x: an ALU reading it as full 3 slots
    // after a half write needs 3 + 3.
    assert_eq!(
        hazard("add.f hr0.x, hr2.x, hr2.y\n(rpt2)nop\nadd.f r1.x, r0.x, r0.x\n"),
        Some((2, 0, "r0.x".into()))
    );
    assert_eq!(
        hazard("add.f hr0.x, hr2.x, hr2.y\n(rpt5)nop\nadd.f r1.x, r0.x, r0.x\n"),
        None
    );
    // The same precision needs only 3.
    assert_eq!(
        hazard("add.f hr0.x, hr2.x, hr2.y\n(rpt2)nop\nadd.f hr1.x, hr0.x, hr0.x\n"),
        None
    );
}

#[test]
fn an_address_register_write_has_the_addr_latency() {
    // a0.x needs 6 slots before a relative operand reads through it.
    assert_eq!(
        hazard("mova a0.x, hr2.x\n(rpt4)nop\nmov.f32f32 r0.x, r<a0.x + 1>\n"),
        Some((2, 0, "a0.x".into()))
    );
    assert_eq!(
        hazard("mova a0.x, hr2.x\n(rpt5)nop\nmov.f32f32 r0.x, r<a0.x + 1>\n"),
        None
    );
}

#[test]
fn call_and_ret_follow_the_return_address() {
    // call jumps to the function at +3, which returns to the instruction
    // after the call; a ret without a call stops the run.
    let r = Run::new(
        "call #3\nadd.f r0.y, r1.x, r1.x\nend\nmov.f32f32 r0.x, r1.x\nret\n",
        &[("r1.x", bits(1.25))],
    )
    .unwrap();
    assert_eq!(r.f32("r0.x"), 1.25);
    assert_eq!(r.f32("r0.y"), 2.5);
    assert!(matches!(
        Run::new("ret\nend\n", &[]),
        Err(sim::SimError::Flow(_))
    ));
}

/// Runs one instruction on random operands in r1.x, r2.x, r3.x and
/// returns r0.x per lane.
fn run_on(source: &str, operands: [[u32; 3]; 4]) -> [u32; 4] {
    let program = assemble_source(source, G).expect("assembles");
    let mut m = sim::machine(4);
    for (lane, ops) in operands.iter().enumerate() {
        for (k, v) in ops.iter().enumerate() {
            let (f, h, i) = m.parse_reg(&format!("r{}.x", k + 1)).unwrap();
            m.set(f, h, i, lane, *v);
        }
    }
    sim::run(&mut m, &program, G).expect("runs");
    let (f, h, i) = m.parse_reg("r0.x").unwrap();
    std::array::from_fn(|lane| m.get(f, h, i, lane).unwrap())
}

#[test]
fn madsh_m16_completes_mesas_32_bit_multiply() {
    let mut rng = Rng(99);
    for _ in 0..200 {
        let ops: [[u32; 3]; 4] = std::array::from_fn(|_| [rng.next() as u32, rng.next() as u32, 0]);
        // mull.u (low halves), then the two cross products.
        let got = run_on(
            "mull.u r4.x, r1.x, r2.x\n(rpt2)nop\nmadsh.m16 r5.x, r1.x, r2.x, r4.x\n(rpt2)nop\nmadsh.m16 r0.x, r2.x, r1.x, r5.x\nend\n",
            ops,
        );
        for (lane, o) in ops.iter().enumerate() {
            assert_eq!(
                got[lane],
                o[0].wrapping_mul(o[1]),
                "{:#x} * {:#x}",
                o[0],
                o[1]
            );
        }
    }
}

/// Mesa's ir3-cat2.xml: mgen.b is ((1 << (a % bits)) - 1) << (b % bits),
/// clz.b counts leading zeros and clz.s leading sign bits, both -1 at the
/// ends (0, and ~0 for clz.s). Checked at both widths against integer
/// arithmetic on random operands and the edge values.
#[test]
fn mask_generation_and_leading_bit_counts_follow_mesas_description() {
    let mut rng = Rng(17);
    let edges = [
        0u32,
        1,
        0xffff_ffff,
        0x8000_0000,
        0x7fff_ffff,
        0xffff,
        0x8000,
        31,
        32,
        16,
    ];
    for round in 0..100 {
        let ops: [[u32; 3]; 4] = std::array::from_fn(|lane| {
            let pick = |r: u64| {
                if round < 20 {
                    edges[(r as usize + lane) % edges.len()]
                } else {
                    r as u32
                }
            };
            [pick(rng.next()), pick(rng.next()), 0]
        });
        // hr2.x and hr4.x are the low halves of r1.x and r2.x.
        for (bits, [d, a, b]) in [
            (32u32, ["r0.x", "r1.x", "r2.x"]),
            (16, ["hr0.x", "hr2.x", "hr4.x"]),
        ] {
            let mask = if bits == 32 { u32::MAX } else { 0xffff };
            let mgen = run_on(&format!("mgen.b {d}, {a}, {b}\nend\n"), ops);
            let clzb = run_on(&format!("clz.b {d}, {a}\nend\n"), ops);
            let clzs = run_on(&format!("clz.s {d}, {a}\nend\n"), ops);
            for (lane, o) in ops.iter().enumerate() {
                let (a, b) = (o[0] & mask, o[1] & mask);
                let ones = (1u64 << (a % bits)) - 1;
                let want = ((ones << (b % bits)) as u32) & mask;
                assert_eq!(mgen[lane] & mask, want, "mgen.b{bits} {a:#x} {b:#x}");
                let lz = if a == 0 {
                    mask
                } else {
                    a.leading_zeros() - (32 - bits)
                };
                assert_eq!(clzb[lane] & mask, lz, "clz.b{bits} {a:#x}");
                let sign = a >> (bits - 1) & 1 == 1;
                let same = if sign { !a & mask } else { a };
                let ls = if a == 0 || a == mask {
                    mask
                } else {
                    same.leading_zeros() - (32 - bits)
                };
                assert_eq!(clzs[lane] & mask, ls, "clz.s{bits} {a:#x}");
            }
        }
    }
}

#[test]
fn packed_dot_products_match_byte_arithmetic() {
    let mut rng = Rng(5);
    for _ in 0..200 {
        let ops: [[u32; 3]; 4] =
            std::array::from_fn(|_| [rng.next() as u32, rng.next() as u32, rng.next() as u32]);
        let bytes = |x: u32| x.to_le_bytes();
        for (text, signed, pack, sat) in [
            ("dp4acc.unsigned.low", false, None, false),
            ("dp4acc.mixed.low", true, None, false),
            ("(sat)dp4acc.mixed.low", true, None, true),
            ("dp2acc.unsigned.low", false, Some(0), false),
            ("dp2acc.mixed.high", true, Some(2), false),
        ] {
            let got = run_on(&format!("{text} r0.x, r1.x, r2.x, r3.x\nend\n"), ops);
            for (lane, o) in ops.iter().enumerate() {
                let (a, b) = (bytes(o[0]), bytes(o[1]));
                let range = match pack {
                    None => 0..4,
                    Some(first) => first..first + 2,
                };
                let dot: i64 = range
                    .map(|k| {
                        let x = if signed {
                            a[k] as i8 as i64
                        } else {
                            a[k] as i64
                        };
                        x * b[k] as i64
                    })
                    .sum();
                let acc = if signed {
                    o[2] as i32 as i64
                } else {
                    o[2] as i64
                };
                let sum = acc + dot;
                let want = if sat {
                    sum.clamp(i32::MIN as i64, i32::MAX as i64) as u32
                } else {
                    sum as u32
                };
                assert_eq!(got[lane], want, "{text} {o:x?}");
            }
        }
    }
}

// ---------------------------------------------------------------------
// I/O through the GpuIo trait (the memory-backed harness)

/// Runs `source` with `harness` as the machine's I/O and the registers
/// of `setup` per lane.
fn run_io(
    source: &str,
    harness: prim::Harness,
    setup: &[(&str, [u32; 4])],
) -> Result<sim::Machine, sim::SimError> {
    let program = assemble_source(source, G).expect("assembles");
    let mut m = sim::machine(4);
    m.set_io(Box::new(harness));
    for (reg, values) in setup {
        let (f, h, i) = m.parse_reg(reg).expect("register");
        for (lane, v) in values.iter().enumerate() {
            m.set(f, h, i, lane, *v);
        }
    }
    sim::run(&mut m, &program, G)?;
    Ok(m)
}

fn reg(m: &sim::Machine, name: &str, lane: usize) -> u32 {
    let (f, h, i) = m.parse_reg(name).expect("register");
    m.get(f, h, i, lane).expect("in range")
}

#[test]
fn global_loads_and_stores_go_through_the_harness() {
    let mut h = prim::Harness::default();
    let words = [7u32, 11, 13, 17, 19, 23];
    h.write_words(prim::Space::Global, 0, 0x1000, &words);
    // Lane l reads the words at 0x1000 + 4l + 4 and + 8 (64-bit pointer
    // r0.x:r0.y), stores their sum at 0x2000 + 4l.
    let m = run_io(
        "ldg.u32 r1.x, g[r0.x+4], 2
         (sy)add.u r2.x, r1.x, r1.y
         (rpt5)nop
         stg.u32 g[r3.x], r2.x, 1
         end
",
        h,
        &[
            ("r0.x", [0x1000, 0x1004, 0x1008, 0x100c]),
            ("r0.y", [0; 4]),
            ("r3.x", [0x2000, 0x2004, 0x2008, 0x200c]),
            ("r3.y", [0; 4]),
        ],
    )
    .unwrap();
    let h = m.io_as::<prim::Harness>().unwrap();
    for lane in 0..4 {
        let sum = words[lane + 1] + words[lane + 2];
        assert_eq!(reg(&m, "r2.x", lane), sum);
        let at = 0x2000 + 4 * lane as u64;
        assert_eq!(h.word(prim::Space::Global, 0, 0, at), sum);
    }
}

#[test]
fn a_load_read_before_its_sync_is_a_hazard() {
    let h = prim::Harness::default();
    let err = run_io(
        "ldg.u32 r1.x, g[r0.x+4], 2
add.u r2.x, r1.x, r1.y
end
",
        h.clone(),
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(err, sim::SimError::Hazard { consumer: 1, producer: 0, ref reg, .. } if reg == "r1.x"),
        "{err}"
    );
    // The second register of the group is pending as well.
    let err = run_io(
        "ldg.u32 r1.x, g[r0.x+4], 2
add.u r2.x, r1.y, r1.y
end
",
        h.clone(),
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(err, sim::SimError::Hazard { consumer: 1, producer: 0, ref reg, .. } if reg == "r1.y"),
        "{err}"
    );
    // ldl results wait for (ss), not (sy).
    let err = run_io(
        "ldl.u32 r1.x, l[r0.x+4], 1
(sy)mov.u32u32 r2.x, r1.x
end
",
        h,
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            sim::SimError::Hazard {
                consumer: 1,
                producer: 0,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn shared_memory_private_memory_and_atomics() {
    // Each lane stores its value to shared memory and to private memory
    // at the same address, then reads both back; all lanes add lane + 1
    // to one shared word.
    let m = run_io(
        "stl.u32 l[r0.x], r1.x, 1
         stp.u32 p[r2.x], r1.y, 1
         ldl.u32 r3.x, l[r0.x], 1
         ldp.u32 r3.y, p[r2.x], 1
         atomic.add.untyped.1d.u32.1.l r3.z, l[r0.y], r1.z
         (sy)(ss)add.u r3.w, r3.x, r3.y
         end
",
        prim::Harness::default(),
        &[
            ("r0.x", [0, 4, 8, 12]),
            ("r0.y", [64; 4]),
            ("r1.x", [100, 200, 300, 400]),
            ("r1.y", [1, 2, 3, 4]),
            ("r1.z", [1, 2, 3, 4]),
            ("r2.x", [16; 4]),
        ],
    )
    .unwrap();
    let h = m.io_as::<prim::Harness>().unwrap();
    let mut total = 0;
    for lane in 0..4 {
        let v = 100 * (lane as u32 + 1);
        assert_eq!(reg(&m, "r3.x", lane), v);
        // Private memory is per thread although every lane used address 16.
        assert_eq!(reg(&m, "r3.y", lane), lane as u32 + 1);
        assert_eq!(reg(&m, "r3.w", lane), v + lane as u32 + 1);
        // Lanes update the word in lane order: each sees the sum before it.
        assert_eq!(reg(&m, "r3.z", lane), total);
        total += lane as u32 + 1;
        assert_eq!(h.word(prim::Space::Private, 0, lane, 16), lane as u32 + 1);
    }
    assert_eq!(h.word(prim::Space::Shared, 0, 0, 64), total);
}

/// cmpxchg takes the pair (new value, comparison value), as Mesa builds
/// it; min/max compare by the type's signedness. Lanes update in lane
/// order, so each sees the word its predecessors left.
#[test]
fn compare_exchange_and_min_max_atomics_in_shared_and_global_memory() {
    let mut h = prim::Harness::default();
    h.write_words(prim::Space::Shared, 0, 128, &[(-5i32) as u32, 7]);
    h.write_words(prim::Space::Global, 0, 0x2000, &[10]);
    let m = run_io(
        "atomic.cmpxchg.untyped.1d.u32.1.l r3.x, l[r0.x], r1.x\n\
         atomic.min.untyped.1d.s32.1.l r3.y, l[r0.y], r2.x\n\
         atomic.max.untyped.1d.u32.1.l r3.z, l[r0.z], r2.x\n\
         atomic.g.cmpxchg.untyped.1d.u32.1.g r3.w, r4.x, r5.x\n\
         end\n",
        h,
        &[
            ("r0.x", [64; 4]),
            ("r0.y", [128; 4]),
            ("r0.z", [132; 4]),
            // (new, compare): lanes 0-2 match the word the lane before
            // left, lane 3 does not.
            ("r1.x", [1, 2, 3, 50]),
            ("r1.y", [0, 1, 2, 99]),
            ("r2.x", [(-3i32) as u32, (-9i32) as u32, 4, 0xffff_fff0]),
            ("r4.x", [0x2000; 4]),
            ("r4.y", [0; 4]),
            ("r5.x", [11, 12, 13, 14]),
            ("r5.y", [10, 11, 0, 13]),
        ],
    )
    .unwrap();
    let h = m.io_as::<prim::Harness>().unwrap();
    let (mut word, mut min, mut max, mut global) = (0u32, -5i32, 7u32, 10u32);
    for lane in 0..4 {
        assert_eq!(reg(&m, "r3.x", lane), word, "cmpxchg lane {lane}");
        if word == reg(&m, "r1.y", lane) {
            word = reg(&m, "r1.x", lane);
        }
        assert_eq!(reg(&m, "r3.y", lane) as i32, min, "min.s lane {lane}");
        min = min.min(reg(&m, "r2.x", lane) as i32);
        assert_eq!(reg(&m, "r3.z", lane), max, "max.u lane {lane}");
        max = max.max(reg(&m, "r2.x", lane));
        assert_eq!(reg(&m, "r3.w", lane), global, "g.cmpxchg lane {lane}");
        if global == reg(&m, "r5.y", lane) {
            global = reg(&m, "r5.x", lane);
        }
    }
    assert_eq!((word, min, max, global), (3, -16, 0xffff_fffd, 12));
    assert_eq!(h.word(prim::Space::Shared, 0, 0, 64), word);
    assert_eq!(h.word(prim::Space::Shared, 0, 0, 128) as i32, min);
    assert_eq!(h.word(prim::Space::Shared, 0, 0, 132), max);
    assert_eq!(h.word(prim::Space::Global, 0, 0, 0x2000), global);
    // The old value arrives with the memory sync: reading it without
    // (sy) is a hazard naming the atomic.
    for source in [
        "atomic.cmpxchg.untyped.1d.u32.1.l r3.x, l[r0.x], r1.x\nadd.u r2.x, r3.x, r3.x\nend\n",
        "atomic.g.cmpxchg.untyped.1d.u32.1.g r3.x, r4.x, r5.x\nadd.u r2.x, r3.x, r3.x\nend\n",
    ] {
        let err = run_io(source, prim::Harness::default(), &[]).unwrap_err();
        assert!(
            matches!(err, sim::SimError::Hazard { consumer: 1, producer: 0, ref reg, .. } if reg == "r3.x"),
            "{source}: {err}"
        );
    }
}

#[test]
fn varyings_are_interpolated_or_flat() {
    let mut h = prim::Harness::default();
    h.varyings = vec![[1.0, 3.0, 5.0], [0.5, 0.25, 2.0], [8.0, 9.0, 10.0]];
    let i = [0.0f32, 0.25, 0.5, 1.0];
    let j = [0.0f32, 0.5, 0.125, 0.0];
    let m = run_io(
        "bary.f r1.x, 1, r0.x
         flat.b r1.y, 2, r0.x
         ldlv.u32 r2.x, l[0], 2
         end
",
        h,
        &[("r0.x", i.map(f32::to_bits)), ("r0.y", j.map(f32::to_bits))],
    )
    .unwrap();
    for lane in 0..4 {
        let want = 0.5 + i[lane] * (0.25 - 0.5) + j[lane] * (2.0 - 0.5);
        assert_eq!(f32::from_bits(reg(&m, "r1.x", lane)), want, "lane {lane}");
        assert_eq!(f32::from_bits(reg(&m, "r1.y", lane)), 8.0);
        assert_eq!(f32::from_bits(reg(&m, "r2.x", lane)), 1.0);
        assert_eq!(f32::from_bits(reg(&m, "r2.y", lane)), 0.5);
    }
}

#[test]
fn ldc_reads_a_ubo_word() {
    let mut h = prim::Harness::default();
    h.write_words(prim::Space::Constant, 2, 0, &(0..32).collect::<Vec<u32>>());
    // vec4 r0.x, component 1, UBO 2.
    let m = run_io(
        "ldc.offset1.1.imm r1.x, r0.x, 2
(sy)mov.u32u32 r2.x, r1.x
end
",
        h,
        &[("r0.x", [0, 1, 2, 3])],
    )
    .unwrap();
    for lane in 0..4 {
        assert_eq!(reg(&m, "r2.x", lane), 4 * lane as u32 + 1);
    }
}

#[test]
fn textures_are_sampled_fetched_and_queried() {
    let mut h = prim::Harness::default();
    // 2×2 texels: texel (x, y) = (x, y, 10 + x + 2y, 1).
    h.textures.push(prim::Texture {
        width: 2,
        height: 2,
        texels: (0..4)
            .map(|t| {
                let (x, y) = ((t % 2) as f32, (t / 2) as f32);
                [x, y, 10.0 + x + 2.0 * y, 1.0]
            })
            .collect(),
        ..Default::default()
    });
    let u = [0.25f32, 0.75, 0.25, 0.75];
    let v = [0.25f32, 0.25, 0.75, 0.75];
    let m = run_io(
        "sam (f32)(xyzw)r2.x, r0.x, s#0, t#0
         getsize (u32)(xy)r3.x, r1.x, t#0
         end
",
        h,
        &[("r0.x", u.map(f32::to_bits)), ("r0.y", v.map(f32::to_bits))],
    )
    .unwrap();
    for lane in 0..4 {
        let (x, y) = ((lane % 2) as f32, (lane / 2) as f32);
        let texel = [x, y, 10.0 + x + 2.0 * y, 1.0];
        for (c, want) in ["r2.x", "r2.y", "r2.z", "r2.w"].iter().zip(texel) {
            assert_eq!(f32::from_bits(reg(&m, c, lane)), want, "lane {lane} {c}");
        }
        assert_eq!((reg(&m, "r3.x", lane), reg(&m, "r3.y", lane)), (2, 2));
    }
    // No texture bound: the harness's error, not a panic.
    let err = run_io(
        "sam (f32)(x)r2.x, r0.x, s#0, t#3
end
",
        prim::Harness::default(),
        &[],
    )
    .unwrap_err();
    assert!(matches!(err, sim::SimError::Io { pc: 0, .. }), "{err}");
}

#[test]
fn barriers_reach_the_io() {
    let m = run_io(
        "bar
end
",
        prim::Harness::default(),
        &[],
    )
    .unwrap();
    let h = m.io_as::<prim::Harness>().unwrap();
    assert_eq!(
        h.barriers.values().copied().collect::<Vec<_>>(),
        [1, 1, 1, 1]
    );
}

// ---------------------------------------------------------------------
// Group-wide flow, predication and cross-thread moves

/// r0.x per lane after `source` with p0.x and r1.x set per lane.
fn group_run(source: &str, p0: [u32; 4], r1: [u32; 4]) -> [u32; 4] {
    let m = run_io(
        source,
        prim::Harness::default(),
        &[("p0.x", p0), ("r1.x", r1)],
    )
    .unwrap();
    std::array::from_fn(|lane| reg(&m, "r0.x", lane))
}

#[test]
fn group_branches_decide_for_every_thread() {
    let body = "mov.u32u32 r0.x, r1.x\nend\n";
    let r1 = [7; 4];
    // One thread's predicate sends every thread.
    let any = format!("bany p0.x, #2\n{body}");
    assert_eq!(group_run(&any, [0, 0, 1, 0], r1), [0; 4]);
    assert_eq!(group_run(&any, [0; 4], r1), [7; 4]);
    let all = format!("ball p0.x, #2\n{body}");
    assert_eq!(group_run(&all, [1, 1, 1, 0], r1), [7; 4]);
    assert_eq!(group_run(&all, [1; 4], r1), [0; 4]);
    // getone: all but one thread jump; getlast: all but the last one.
    assert_eq!(
        group_run(&format!("getone #2\n{body}"), [0; 4], r1),
        [7, 0, 0, 0]
    );
    assert_eq!(
        group_run(&format!("getlast.w8 #2\n{body}"), [0; 4], r1),
        [0, 0, 0, 7]
    );
}

#[test]
fn predicated_regions_switch_threads_off() {
    let r1 = [7; 4];
    let p0 = [1, 0, 1, 0];
    let src =
        |mode: &str| format!("{mode}\nmov.u32u32 r0.x, r1.x\nprede\nmov.u32u32 r0.y, r1.x\nend\n");
    assert_eq!(group_run(&src("predt"), p0, r1), [7, 0, 7, 0]);
    assert_eq!(group_run(&src("predf"), p0, r1), [0, 7, 0, 7]);
    let m = run_io(
        &src("predt"),
        prim::Harness::default(),
        &[("p0.x", p0), ("r1.x", r1)],
    )
    .unwrap();
    assert!(
        (0..4).all(|lane| reg(&m, "r0.y", lane) == 7),
        "prede ends the region"
    );
}

#[test]
fn movs_reads_another_thread_before_any_write() {
    let r1 = [10, 11, 12, 13];
    assert_eq!(
        group_run("movs.u32u32 r0.x, r1.x, 2\nend\n", [0; 4], r1),
        [12; 4]
    );
    // Destination and source overlap: every thread still sees thread 2's
    // old value.
    let m = run_io(
        "movs.u32u32 r1.x, r1.x, 2\nend\n",
        prim::Harness::default(),
        &[("r1.x", r1)],
    )
    .unwrap();
    assert!((0..4).all(|lane| reg(&m, "r1.x", lane) == 12));
    // A thread outside the group: the thread's own value.
    assert_eq!(
        group_run("movs.u32u32 r0.x, r1.x, 9\nend\n", [0; 4], r1),
        r1
    );
}

#[test]
fn movmsk_shows_the_active_threads_and_swz_swaps() {
    // Threads 1..=3 jump ahead: movmsk runs in thread 0 only.
    let r = group_run("getone #3\nmovmsk.w32 r0.x\nend\nend\n", [0; 4], [0; 4]);
    assert_eq!(r, [0b0001, 0, 0, 0]);
    let m = run_io(
        "swz.u32u32 r0.x, r0.y, r0.y, r0.x\nend\n",
        prim::Harness::default(),
        &[("r0.x", [1, 2, 3, 4]), ("r0.y", [5, 6, 7, 8])],
    )
    .unwrap();
    for lane in 0..4 {
        let l = lane as u32;
        assert_eq!(
            (reg(&m, "r0.x", lane), reg(&m, "r0.y", lane)),
            (5 + l, 1 + l)
        );
    }
}

#[test]
fn emit_and_cut_reach_the_io() {
    let m = run_io(
        "emit\nemit\ncut\nemit\nend\n",
        prim::Harness::default(),
        &[],
    )
    .unwrap();
    let h = m.io_as::<prim::Harness>().unwrap();
    for lane in 0..4 {
        assert_eq!(h.primitives[&lane], [2, 1]);
    }
}

// ---------------------------------------------------------------------
// Register groups (gat, sct, wmm) and the merged-stage markers

#[test]
fn gat_and_sct_move_register_groups() {
    let words = [11u32, 12, 13, 14];
    let m = run_io(
        "gat.u32u32 r0.x, r1.x, r1.z, r2.x, r2.y\n\
         (rpt2)nop\n\
         sct.u32u32 r4.x, r4.z, r5.x, r5.w, r0.x\n\
         gat.f32f16 hr6.x, r1.x, r1.z, r2.x, r2.y\n\
         end\n",
        prim::Harness::default(),
        &[
            ("r1.x", [words[0]; 4]),
            ("r1.z", [words[1]; 4]),
            ("r2.x", [words[2]; 4]),
            ("r2.y", [words[3]; 4]),
        ],
    )
    .unwrap();
    for lane in 0..4 {
        let group: Vec<u32> = ["r0.x", "r0.y", "r0.z", "r0.w"]
            .iter()
            .map(|r| reg(&m, r, lane))
            .collect();
        assert_eq!(group, words, "gat fills r0.x..r0.w");
        let scattered: Vec<u32> = ["r4.x", "r4.z", "r5.x", "r5.w"]
            .iter()
            .map(|r| reg(&m, r, lane))
            .collect();
        assert_eq!(scattered, words, "sct spreads r0.x..r0.w");
        // The converting form: integer bits 11..14 read as f32 are
        // denormals, which round to f16 zero.
        assert_eq!(reg(&m, "hr6.x", lane), 0);
    }
    // Converting gather of real floats.
    let m = run_io(
        "gat.f32f16 hr6.x, r1.x, r1.z, r2.x, r2.y\nend\n",
        prim::Harness::default(),
        &[
            ("r1.x", [bits(1.5); 4]),
            ("r1.z", [bits(-2.0); 4]),
            ("r2.x", [bits(0.25); 4]),
            ("r2.y", [bits(65504.0); 4]),
        ],
    )
    .unwrap();
    let want = [1.5f32, -2.0, 0.25, 65504.0].map(|x| F16::from_f32(x).0 as u32);
    for (r, w) in ["hr6.x", "hr6.y", "hr6.z", "hr6.w"].iter().zip(want) {
        assert_eq!(reg(&m, r, 0), w, "{r}");
    }
}

#[test]
fn wmm_scales_x_by_the_sum_of_y_and_repeats() {
    let x = [1.0f32, -2.0, 0.5, 3.0];
    let y = [0.25f32, 0.5, 1.0, 2.0];
    let mut setup = Vec::new();
    for k in 0..4 {
        setup.push((["r1.x", "r1.y", "r1.z", "r1.w"][k], [bits(x[k]); 4]));
        setup.push((["r2.x", "r2.y", "r2.z", "r2.w"][k], [bits(y[k]); 4]));
        setup.push((["r5.x", "r5.y", "r5.z", "r5.w"][k], [bits(10.0); 4]));
    }
    let sum: f32 = y.iter().sum();
    // 32: two copies, r4.x..r5.w.
    let m = run_io(
        "wmm r4.x, r1.x, r2.x, 32\nend\n",
        prim::Harness::default(),
        &setup,
    )
    .unwrap();
    let regs = [
        "r4.x", "r4.y", "r4.z", "r4.w", "r5.x", "r5.y", "r5.z", "r5.w",
    ];
    for (i, r) in regs.iter().enumerate() {
        assert_eq!(f32::from_bits(reg(&m, r, 2)), x[i % 4] * sum, "{r}");
    }
    // The accumulating form adds to r4.y.. (r4.x is overwritten).
    let mut setup_acc = setup.clone();
    for r in ["r4.x", "r4.y", "r4.z", "r4.w"] {
        setup_acc.push((r, [bits(100.0); 4]));
    }
    let m = run_io(
        "wmm.accu r4.x, r1.x, r2.x, 0\nend\n",
        prim::Harness::default(),
        &setup_acc,
    )
    .unwrap();
    assert_eq!(f32::from_bits(reg(&m, "r4.x", 0)), x[0] * sum);
    for (k, r) in ["r4.y", "r4.z", "r4.w"].iter().enumerate() {
        assert_eq!(f32::from_bits(reg(&m, r, 0)), 100.0 + x[k + 1] * sum, "{r}");
    }
    // Copies beyond four are not modelled: the simulator says so.
    let err = run_io(
        "wmm r4.x, r1.x, r2.x, 96\nend\n",
        prim::Harness::default(),
        &setup,
    )
    .unwrap_err();
    assert!(err.to_string().contains("unsupported"), "{err}");
}

#[test]
fn chmask_keeps_registers_and_chsh_ends_the_stage() {
    let m = run_io(
        "mov.u32u32 r0.x, r1.x\nchmask\nchsh\nmov.u32u32 r0.y, r1.x\nend\n",
        prim::Harness::default(),
        &[("r1.x", [5, 6, 7, 8])],
    )
    .unwrap();
    for lane in 0..4 {
        assert_eq!(reg(&m, "r0.x", lane), 5 + lane as u32);
        assert_eq!(reg(&m, "r0.y", lane), 0, "nothing runs after chsh");
    }
}

#[test]
fn a_group_member_read_too_early_is_a_hazard() {
    // sct reads r0.x..r0.w; r0.y was written one cycle before.
    let err = run_io(
        "mov.u32u32 r0.y, r1.x\nsct.u32u32 r4.x, r4.z, r5.x, r5.w, r0.x\nend\n",
        prim::Harness::default(),
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(err, sim::SimError::Hazard { consumer: 1, producer: 0, ref reg, .. } if reg == "r0.y"),
        "{err}"
    );
}

#[test]
fn global_atomics_and_ssbo_words_go_through_the_harness() {
    let mut h = prim::Harness::default();
    let words = [5u32, 6, 7, 8, 9, 10, 11, 12];
    h.write_words(prim::Space::Image, 2, 0, &words);
    h.write_words(prim::Space::Global, 0, 0x3000, &[100, 0xffff_fff0]);
    // Lane l loads words 2l and 2l+1 of SSBO 2, adds l + 1 to the global
    // word at 0x3000, takes the signed max with the word at 0x3004, and
    // stores the sum of its two words at word 8 + l.
    let m = run_io(
        "ldib.b.untyped.1d.u32.2.imm r1.x, r0.x, 2\n\
         atomic.g.add.untyped.1d.u32.1.g r2.x, r4.x, r0.y\n\
         atomic.g.max.untyped.1d.s32.1.g r2.y, r5.x, r0.w\n\
         (sy)add.u r3.x, r1.x, r1.y\n\
         (rpt5)nop\n\
         stib.b.untyped.1d.u32.1.imm r3.x, r0.z, 2\n\
         end\n",
        h,
        &[
            ("r0.x", [0, 2, 4, 6]),
            ("r0.y", [1, 2, 3, 4]),
            ("r0.z", [8, 9, 10, 11]),
            (
                "r0.w",
                [(-20i32) as u32, (-16i32) as u32, 3, (-1i32) as u32],
            ),
            ("r4.x", [0x3000; 4]),
            ("r4.y", [0; 4]),
            ("r5.x", [0x3004; 4]),
            ("r5.y", [0; 4]),
        ],
    )
    .unwrap();
    let h = m.io_as::<prim::Harness>().unwrap();
    let mut total = 100;
    let mut max = -16i32;
    for lane in 0..4 {
        let (a, b) = (words[2 * lane], words[2 * lane + 1]);
        assert_eq!((reg(&m, "r1.x", lane), reg(&m, "r1.y", lane)), (a, b));
        // Lanes update in lane order: each sees the value before it.
        assert_eq!(reg(&m, "r2.x", lane), total);
        total += lane as u32 + 1;
        assert_eq!(reg(&m, "r2.y", lane) as i32, max);
        max = max.max(reg(&m, "r0.w", lane) as i32);
        assert_eq!(
            h.word(prim::Space::Image, 2, 0, 4 * (8 + lane as u64)),
            a + b
        );
    }
    assert_eq!(h.word(prim::Space::Global, 0, 0, 0x3000), total);
    assert_eq!(h.word(prim::Space::Global, 0, 0, 0x3004) as i32, 3);
    // The SSBO load's result needs (sy).
    let err = run_io(
        "ldib.b.untyped.1d.u32.2.imm r1.x, r0.x, 2\nadd.u r3.x, r1.x, r1.y\nend\n",
        prim::Harness::default(),
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(err, sim::SimError::Hazard { consumer: 1, producer: 0, ref reg, .. } if reg == "r1.x"),
        "{err}"
    );
}

/// Typed (storage-image) ldib/stib/atomic.b and resinfo.b address the
/// harness's image in their IBO slot by texel coordinates; the untyped
/// form reads only its one-register offset (the typed branch's
/// coordinate registers are not timed for it).
#[test]
fn typed_ibo_accesses_go_through_the_harness_images() {
    let mut h = prim::Harness::default();
    let mut image = lathe_ir::Image::new_2d(4, 2, 4);
    for (n, t) in image.texels.iter_mut().enumerate() {
        *t = [
            10 * n as u32,
            10 * n as u32 + 1,
            10 * n as u32 + 2,
            10 * n as u32 + 3,
        ];
    }
    h.images.insert(3, image);
    // Lane l loads texel (l, 1), stores it plus one to texel (l, 0),
    // exchanges component 0 of texel (3 - l, 1) with 100 + l and reads
    // the size.
    let m = run_io(
        "ldib.b.typed.2d.u32.4.imm r1.x, r0.x, 3\n\
         resinfo.b.untyped.2d.u32.1.imm r3.x, 3\n\
         (sy)add.u r2.x, r1.x, 1\n\
         add.u r2.y, r1.y, 1\n\
         add.u r2.z, r1.z, 1\n\
         add.u r2.w, r1.w, 1\n\
         (rpt5)nop\n\
         stib.b.typed.2d.u32.4.imm r2.x, r4.x, 3\n\
         atomic.b.xchg.typed.2d.u32.1.imm r5.x, r6.x, 3\n\
         end\n",
        h,
        &[
            ("r0.x", [0, 1, 2, 3]),
            ("r0.y", [1; 4]),
            ("r4.x", [0, 1, 2, 3]),
            ("r4.y", [0; 4]),
            ("r5.x", [100, 101, 102, 103]),
            ("r6.x", [3, 2, 1, 0]),
            ("r6.y", [1; 4]),
        ],
    )
    .unwrap();
    let h = m.io_as::<prim::Harness>().unwrap();
    let texels = &h.images[&3].texels;
    for lane in 0..4u32 {
        let n = 4 + lane;
        let loaded: Vec<u32> = (0..4).map(|c| 10 * n + c).collect();
        let got: Vec<u32> = ["r1.x", "r1.y", "r1.z", "r1.w"]
            .iter()
            .map(|r| reg(&m, r, lane as usize))
            .collect();
        assert_eq!(got, loaded);
        let stored: Vec<u32> = loaded.iter().map(|v| v + 1).collect();
        assert_eq!(texels[lane as usize].to_vec(), stored);
        // Texel (3 - l, 1) held 10 * (7 - l) before lane l's exchange.
        assert_eq!(reg(&m, "r5.x", lane as usize), 10 * (7 - lane));
        assert_eq!(texels[(7 - lane) as usize][0], 100 + lane);
        assert_eq!(
            ["r3.x", "r3.y", "r3.z"].map(|r| reg(&m, r, lane as usize)),
            [4, 2, 1]
        );
    }
    // A load outside the image reads zeros (an undefined value the
    // verifier does not compare); a store there is a clear I/O error.
    let mut h = prim::Harness::default();
    let mut image = lathe_ir::Image::new_2d(2, 2, 1);
    image.texels.iter_mut().for_each(|t| t[0] = 7);
    h.images.insert(0, image);
    let m = run_io(
        "ldib.b.typed.2d.u32.1.imm r1.x, r0.x, 0\nend\n",
        h.clone(),
        &[("r0.x", [2; 4]), ("r0.y", [0; 4]), ("r1.x", [9; 4])],
    )
    .unwrap();
    assert_eq!(reg(&m, "r1.x", 0), 0);
    let err = run_io(
        "stib.b.typed.2d.u32.1.imm r1.x, r0.x, 0\nend\n",
        h,
        &[("r0.x", [2; 4]), ("r0.y", [0; 4])],
    )
    .unwrap_err();
    assert!(err.to_string().contains("outside"), "{err}");
    // The untyped form's offset is one register: the one after it was
    // just written, and that is no hazard.
    assert_eq!(
        hazard("add.u r0.y, r1.x, r1.y\nldib.b.untyped.1d.u32.1.imm r2.x, r0.x, 2\nend\n"),
        None
    );
}

#[test]
fn stc_in_one_thread_writes_the_const_file_every_thread_reads() {
    // The preamble's frame: threads 1..=3 skip the body, thread 0 stores
    // its r0.x and r0.y into c1.y and c1.z; then every thread reads them.
    let src = "getone #3\nstc.u32 c[5], r0.x, 2\n(sy)(ss)shpe\n(jp)mov.u32u32 r1.x, c1.y\nmov.u32u32 r1.y, c1.z\nend\n";
    let m = run_io(
        src,
        prim::Harness::default(),
        &[("r0.x", [10, 11, 12, 13]), ("r0.y", [20, 21, 22, 23])],
    )
    .unwrap();
    for lane in 0..4 {
        assert_eq!((reg(&m, "r1.x", lane), reg(&m, "r1.y", lane)), (10, 20));
    }
    assert_eq!(reg(&m, "c1.x", 0), 0, "stc wrote two words only");
    assert_eq!(reg(&m, "c1.w", 0), 0, "stc wrote two words only");
}
