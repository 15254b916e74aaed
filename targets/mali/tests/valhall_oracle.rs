//! The selection oracle (`lathe_mali::valhall::oracle::SELECTIONS`): each
//! machine instruction equals the IR interpreter's semantics of its
//! generic operation on random operands.

use lathe_ir::generic::GenericOp;
use lathe_ir::interp::{Invocation, Limits};
use lathe_mali::valhall::oracle::{SELECTIONS, Selection};
use lathe_mali::valhall::{Arch, assemble_source, sim};

const G: Arch = Arch::V10;

fn ir_text(s: &Selection) -> String {
    let mut t = String::from("shader fragment\nb0:\n");
    let mut args = Vec::new();
    for (i, ty) in s.operands.iter().enumerate() {
        if *ty == "bool" {
            t += &format!(
                "  %{}:u32 = load_input slot={i} comp=0 interp=flat\n  %{}:u32 = const 0\n  %{i}:bool = ine %{}, %{}\n",
                10 + i,
                20 + i,
                10 + i,
                20 + i
            );
        } else {
            t += &format!("  %{i}:{ty} = load_input slot={i} comp=0 interp=flat\n");
        }
        args.push(format!("%{i}"));
    }
    t += &format!(
        "  %30:{} = {} {}\n  store_output slot=0 comp=0 %30\n  ret\n",
        s.result,
        s.ir,
        args.join(", ")
    );
    t
}

fn half(ty: &str) -> bool {
    matches!(ty, "f16" | "i16" | "u16")
}

fn operand_reg(i: usize) -> String {
    format!("r{}", i + 1)
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn value(&mut self, ty: &str) -> u32 {
        let r = self.next();
        let pick = (r >> 3) as usize;
        match (ty, r % 4) {
            ("f32", 0) => [
                0,
                0x8000_0000,
                0x3f80_0000,
                0x7f80_0000,
                0xff80_0000,
                0x7fc0_0000,
                1,
                0x4049_0fdb,
            ][pick % 8],
            ("f32", 1) => ((pick % 4001) as f32 / 16.0 - 125.0).to_bits(),
            ("f16", 0) => [0, 0x8000, 0x3c00, 0x7c00, 0xfc00, 0x7e00, 1, 0x4248][pick % 8],
            ("f16", _) => (r >> 40) as u32 & 0xffff,
            ("i16" | "u16", _) => (r >> 40) as u32 & 0xffff,
            ("bool", _) => (r >> 40) as u32 % 2,
            (_, 0) => [0, 1, u32::MAX, 0x8000_0000, 31, 32][pick % 6],
            (_, 1) => (pick % 64) as u32,
            _ => (r >> 32) as u32,
        }
    }
}

/// Distance in representable values between two floats of a width.
fn ulps(a: u32, b: u32, bits: u32) -> u64 {
    let key = |x: u32| -> i64 {
        let sign = 1u32 << (bits - 1);
        if x & sign != 0 {
            -((x & (sign - 1)) as i64)
        } else {
            x as i64
        }
    };
    key(a).abs_diff(key(b))
}

fn is_nan(x: u32, ty: &str) -> bool {
    match ty {
        "f32" => f32::from_bits(x).is_nan(),
        "f16" => x & 0x7fff > 0x7c00,
        _ => false,
    }
}

#[test]
fn every_selection_equals_the_ir_semantics_of_its_operation() {
    let arena = bumpalo::Bump::new();
    let mut rng = Rng(0x5eed);
    let mut report = Vec::new();
    for s in SELECTIONS {
        let text = ir_text(s);
        let shader = lathe_ir::parser::parse::<GenericOp>(&arena, &text)
            .unwrap_or_else(|e| panic!("{text}\n{e}"));
        let program = assemble_source(s.asm, G).unwrap_or_else(|e| panic!("{}: {e:?}", s.asm));
        let (mut checked, mut undefined) = (0, 0);
        for _ in 0..2000 {
            let vals: Vec<u32> = s.operands.iter().map(|t| rng.value(t)).collect();
            let mut inv = Invocation::default();
            for (i, v) in vals.iter().enumerate() {
                inv.inputs.insert((i as u16, 0), *v);
            }
            let expected = match lathe_ir::interp::run(&shader, &inv, Limits::default()) {
                Ok(o) => o.outputs[&(0, 0)].1,
                Err(e) if e.is_undefined() => {
                    undefined += 1;
                    continue;
                }
                Err(e) => panic!("{}: {e}", s.ir),
            };
            let mut m = sim::machine(4);
            for (i, v) in vals.iter().enumerate() {
                let (f, h, idx) = m.parse_reg(&operand_reg(i)).unwrap();
                for lane in 0..4 {
                    m.set(f, h, idx, lane, *v);
                }
            }
            sim::run(&mut m, &program, G).unwrap_or_else(|e| panic!("{}: {e}", s.asm));
            let (f, h, idx) = m.parse_reg("r0").unwrap();
            let got = m.get(f, h, idx, 0).unwrap();
            // A 16-bit result is the low half.
            let got = if half(s.result) { got & 0xffff } else { got };
            let ok = match s.result {
                "f32" | "f16" => {
                    let bits = if s.result == "f32" { 32 } else { 16 };
                    (is_nan(got, s.result) && is_nan(expected, s.result))
                        || ulps(got, expected, bits) <= s.ulp as u64
                }
                _ => got == expected,
            };
            assert!(
                ok,
                "`{}` vs IR `{}` on {vals:08x?}: machine {got:#010x}, IR {expected:#010x}",
                s.asm, s.ir
            );
            checked += 1;
        }
        assert!(
            checked > 200,
            "{}: only {checked} defined samples ({undefined} undefined)",
            s.asm
        );
        report.push(format!("{:>10} {:<40} {checked}", s.ir, s.asm));
    }
    println!("{}", report.join("\n"));
}
