//! Selection oracles: tables that pair one generic operation with the
//! machine instruction a target implements it with, and the check that
//! runs both on random operands.
//!
//! Each target keeps its own table ([`Selection`]s, machine text in the
//! target's assembly syntax); [`check`] builds a one-operation fragment
//! shader for each entry, runs it in the IR interpreter, asks the target's
//! closure for the machine's result on the same operands, and requires
//! equal results (floats within the entry's ULP bound, NaN matching NaN).
//! Operand values are drawn per type from a fixed seed, with the special
//! values (zeros, infinities, NaN, denormals, extremes) over-represented.

use crate::generic::GenericOp;
use crate::interp::{Invocation, Limits};

/// One generic operation and the machine instruction that implements it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The IR opcode as the IR text writes it (`fadd`, `mov neg`, `cvt`).
    pub ir: &'static str,
    /// Operand types, one per operand (IR type names).
    pub operands: &'static [&'static str],
    /// Result type.
    pub result: &'static str,
    /// The machine instruction (the target's assembly syntax).
    pub asm: &'static str,
    /// Largest allowed difference in units in the last place (0: exact).
    pub ulp: u32,
}

/// A [`Selection`], positionally (keeps tables one line per entry).
pub const fn sel(
    ir: &'static str,
    operands: &'static [&'static str],
    result: &'static str,
    asm: &'static str,
    ulp: u32,
) -> Selection {
    Selection {
        ir,
        operands,
        result,
        asm,
        ulp,
    }
}

/// Operand type lists the tables share.
pub mod operands {
    pub const F32: &[&str] = &["f32"];
    pub const F32X2: &[&str] = &["f32", "f32"];
    pub const F32X3: &[&str] = &["f32", "f32", "f32"];
    pub const F16: &[&str] = &["f16"];
    pub const F16X2: &[&str] = &["f16", "f16"];
    pub const F16X3: &[&str] = &["f16", "f16", "f16"];
    pub const I32: &[&str] = &["i32"];
    pub const I32X2: &[&str] = &["i32", "i32"];
    pub const U32: &[&str] = &["u32"];
    pub const U32X2: &[&str] = &["u32", "u32"];
    pub const I16X2: &[&str] = &["i16", "i16"];
}

/// Random operand sets per entry.
const SAMPLES: usize = 2000;
/// Fewest samples with a defined IR result an entry must get.
const MIN_DEFINED: usize = 200;

/// Whether values of `ty` are 16 bits wide.
pub fn is_half(ty: &str) -> bool {
    matches!(ty, "f16" | "i16" | "u16")
}

/// Checks every entry of `table`. `machine` prepares an entry (assembles
/// its text) and returns a runner that gives the machine's result bits
/// for one operand set (a 16-bit result in the low half, a `bool` as 1 or
/// 0). Returns one report line per entry (operation, machine text,
/// samples checked), or the first mismatch or failure.
pub fn check<R>(
    table: &[Selection],
    mut machine: impl FnMut(&Selection) -> Result<R, String>,
) -> Result<String, String>
where
    R: FnMut(&[u32]) -> Result<u32, String>,
{
    let arena = bumpalo::Bump::new();
    let mut rng = Rng(0x5eed);
    let mut report = Vec::new();
    for s in table {
        let text = ir_text(s);
        let shader =
            crate::parser::parse::<GenericOp>(&arena, &text).map_err(|e| format!("{text}\n{e}"))?;
        let mut run = machine(s).map_err(|e| format!("{}: {e}", s.asm))?;
        let (mut checked, mut undefined) = (0, 0);
        for _ in 0..SAMPLES {
            let vals: Vec<u32> = s.operands.iter().map(|t| rng.value(t)).collect();
            let mut inv = Invocation::default();
            for (i, v) in vals.iter().enumerate() {
                inv.inputs.insert((i as u16, 0), *v);
            }
            let expected = match crate::interp::run(&shader, &inv, Limits::default()) {
                Ok(o) => o.outputs[&(0, 0)].1,
                Err(e) if e.is_undefined() => {
                    undefined += 1;
                    continue;
                }
                Err(e) => return Err(format!("{}: {e}", s.ir)),
            };
            let got = run(&vals).map_err(|e| format!("{}: {e}", s.asm))?;
            if !agrees(s, got, expected) {
                return Err(format!(
                    "`{}` vs IR `{}` on {vals:08x?}: machine {got:#010x}, IR {expected:#010x}",
                    s.asm, s.ir
                ));
            }
            checked += 1;
        }
        if checked < MIN_DEFINED {
            return Err(format!(
                "{}: only {checked} defined samples ({undefined} undefined)",
                s.asm
            ));
        }
        report.push(format!("{:>10} {:<40} {checked}", s.ir, s.asm));
    }
    Ok(report.join("\n"))
}

/// The fragment shader computing `s.ir` on flat inputs 0, 1, 2 into output
/// 0 (a `bool` operand is made by comparing an input with zero).
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

/// Whether the machine's `got` is the IR's `expected` for `s`'s result type.
fn agrees(s: &Selection, got: u32, expected: u32) -> bool {
    let bits = match s.result {
        "f32" => 32,
        "f16" => 16,
        _ => return got == expected,
    };
    (is_nan(got, bits) && is_nan(expected, bits)) || ulps(got, expected, bits) <= u64::from(s.ulp)
}

/// Distance in representable values between two floats of a width.
fn ulps(a: u32, b: u32, bits: u32) -> u64 {
    let key = |x: u32| -> i64 {
        let sign = 1u32 << (bits - 1);
        if x & sign != 0 {
            -i64::from(x & (sign - 1))
        } else {
            i64::from(x)
        }
    };
    key(a).abs_diff(key(b))
}

fn is_nan(x: u32, bits: u32) -> bool {
    if bits == 32 {
        f32::from_bits(x).is_nan()
    } else {
        x & 0x7fff > 0x7c00
    }
}

/// xorshift64*: the same operand sets on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value of `ty`: a special value a quarter of the time, a small or
    /// "round" one another quarter, otherwise random bits.
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
            ("f16" | "i16" | "u16", _) => (r >> 40) as u32 & 0xffff,
            ("bool", _) => (r >> 40) as u32 % 2,
            (_, 0) => [0, 1, u32::MAX, 0x8000_0000, 31, 32][pick % 6],
            (_, 1) => (pick % 64) as u32,
            _ => (r >> 32) as u32,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The check fails a machine that is one ULP off where the entry
    /// allows none, and passes it where the entry allows one.
    #[test]
    fn the_check_catches_a_wrong_machine_and_honours_the_ulp_bound() {
        let fadd = |ulp| [sel("fadd", operands::F32X2, "f32", "exact add", ulp)];
        let off_by_one_ulp = |_: &Selection| {
            Ok(|v: &[u32]| {
                let sum = f32::from_bits(v[0]) + f32::from_bits(v[1]);
                Ok(if sum.is_nan() || sum.is_infinite() {
                    sum.to_bits()
                } else {
                    sum.to_bits() ^ 1
                })
            })
        };
        let err = check(&fadd(0), off_by_one_ulp).unwrap_err();
        assert!(err.contains("`exact add` vs IR `fadd`"), "{err}");
        let report = check(&fadd(1), off_by_one_ulp).unwrap();
        assert!(report.contains("fadd exact add"), "{report}");
    }

    #[test]
    fn an_integer_result_must_match_exactly() {
        let table = [sel("iadd", operands::I32X2, "i32", "add", 0)];
        let exact = check(&table, |_| Ok(|v: &[u32]| Ok(v[0].wrapping_add(v[1]))));
        assert!(exact.is_ok(), "{exact:?}");
        let wrong = check(&table, |_| Ok(|v: &[u32]| Ok(v[0].wrapping_add(v[1]) | 1)));
        assert!(wrong.is_err());
    }
}
