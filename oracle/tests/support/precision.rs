//! How results are compared, after the Vulkan spec's "Precision and
//! Operation of SPIR-V Instructions" (Vulkan 1.3, appendix "Vulkan
//! Environment for SPIR-V").
//!
//! Exactly defined floats compare equal when both are NaN, and with
//! denormals taken as zero and the sign of zero ignored: the spec lets an
//! implementation flush denormals and ignore the sign of zero unless the
//! shader asks otherwise.
//!
//! An operation with a bound is checked against a reference computed in
//! `f64` from its operands; the result must lie within the bound below
//! (`ulp(x)` is the f32 spacing at `x`). "Inherited" bounds follow the
//! spec's formula, adding each step's own error (propagated to first
//! order):
//!
//! | operation | bound |
//! |---|---|
//! | `x / y` | 2.5 ulp, `y` in ±[2^-2, 2^6] |
//! | `x % y` (OpFRem) | inherited from `x - y * trunc(x / y)`: the result, or the result ± `y` when `x / y` is within 3 ulp of an integer, within ulp(x) + ulp(y·trunc(x/y)) |
//! | `exp`, `exp2` | (3 + 2·\|x\|) ulp |
//! | `log`, `log2` | 2^-21 absolute for x in [0.5, 2], 3 ulp elsewhere |
//! | `pow(x, y)` | inherited from `exp2(y · log2(x))` |
//! | `inverseSqrt` | 2 ulp |
//! | `sqrt` | inherited from `1 / inverseSqrt(x)`: 5 ulp |
//! | `sin`, `cos` | 2^-11 absolute in [-π, π] |
//! | `tan` | inherited from `sin / cos` |
//! | `asin`, `acos` | inherited from `atan2(x, sqrt(1 - x²))`, `atan2(sqrt(1 - x²), x)` |
//! | `atan`, `atan2` | 4096 ulp (either sign of the result for `atan2(±0, x)`) |
//! | `sinh`, `cosh`, `tanh` | inherited from `(exp(x) ∓ exp(-x)) · 0.5`, `sinh / cosh` |
//! | `asinh`, `acosh`, `atanh` | inherited from `log(x + sqrt(x² ± 1))`, `log((1 + x) / (1 - x)) · 0.5` |
//! | `degrees`, `radians` | inherited from `x · C` with C correctly rounded |
//! | `fma` | inherited from a multiply then an add (fused or not) |
//! | `mix` | inherited from `x · (1 - a) + y · a` (or its rearrangement `x + a · (y - x)`) |
//! | `smoothstep` | inherited from `t · t · (3 - 2t)`, `t = clamp((x - e0) / (e1 - e0), 0, 1)` |
//! | `dot`, matrix × vector | inherited from the sum of products |
//! | `length`, `distance`, `normalize` | inherited from `sqrt(dot(x, x))`, `length(x - y)`, `x · inverseSqrt(dot(x, x))` |
//! | `cross` | inherited from `a·b - c·d` |
//! | `reflect`, `refract`, `faceForward` | inherited from their formulas (`refract`: either branch when `k` is within its error of 0; `faceForward`: either sign when the dot product is within its error of 0) |
//! | `unpack4x8unorm` … `unpack2x16snorm` | 2.5 ulp (a division by 255, 127, 65535 or 32767) |
//! | `determinant` | the spec gives no bound; we allow 2^-16 × the sum of the absolute values of the expansion's products |
//! | `inverse` (MatrixInverse) | the spec gives no bound; cofactor / determinant, each within the `determinant` bound (relative), plus 1 ulp |

use super::random_compute::{Approx, Check};

/// The f32 spacing at magnitude `x`.
pub fn ulp(x: f64) -> f64 {
    let x = x.abs();
    if x < f32::MIN_POSITIVE as f64 {
        return 2f64.powi(-149);
    }
    2f64.powi(x.log2().floor() as i32 - 23)
}

/// An exactly defined float, normalised the way the spec lets drivers
/// treat it: any NaN alike, denormals and negative zero as +0.
pub fn normalise(bits: u32) -> u32 {
    let f = f32::from_bits(bits);
    if f.is_nan() {
        0x7fc0_0000
    } else if f == 0.0 || f.is_subnormal() {
        0
    } else {
        bits
    }
}

/// Check `got` (the slot's word) against `check`, with `args` the words of
/// the invocation's slots (operands are read from them). `Err` explains.
pub fn check(check: &Check, got: u32, words: &[u32]) -> Result<(), String> {
    match check {
        Check::Bits | Check::Float => Ok(()),
        Check::Approx { op, args, comp } => {
            let a: Vec<f64> = args
                .iter()
                .map(|&s| f32::from_bits(words[s]) as f64)
                .collect();
            let raw: Vec<u32> = args.iter().map(|&s| words[s]).collect();
            let value = f32::from_bits(got) as f64;
            let allowed = bounds(*op, &a, &raw, *comp);
            if allowed
                .iter()
                .any(|&(r, tol)| (value - r).abs() <= tol || (value == r))
            {
                Ok(())
            } else {
                Err(format!(
                    "{op:?}{a:?}[{comp}] = {value:e} (0x{got:08x}); allowed {}",
                    allowed
                        .iter()
                        .map(|(r, t)| format!("{r:e} ± {t:e}"))
                        .collect::<Vec<_>>()
                        .join(" or ")
                ))
            }
        }
    }
}

/// Whether two words of a slot agree exactly (for `Bits` and `Float`).
pub fn exact_equal(check: &Check, a: u32, b: u32) -> bool {
    match check {
        Check::Bits => a == b,
        _ => normalise(a) == normalise(b),
    }
}

fn log_error(x: f64, r: f64) -> f64 {
    if (0.5..=2.0).contains(&x) {
        2f64.powi(-21)
    } else {
        3.0 * ulp(r)
    }
}

fn dot_bound(a: &[f64], b: &[f64]) -> (f64, f64) {
    let products: Vec<f64> = a.iter().zip(b).map(|(x, y)| x * y).collect();
    let sum: f64 = products.iter().sum();
    let magnitude: f64 = products.iter().map(|p| p.abs()).sum();
    let tol = products.iter().map(|&p| 0.5 * ulp(p)).sum::<f64>()
        + 0.5 * products.len() as f64 * ulp(magnitude);
    (sum, tol)
}

fn length_bound(a: &[f64]) -> (f64, f64) {
    let (d, dtol) = dot_bound(a, a);
    let r = d.sqrt();
    let tol = 5.0 * ulp(r)
        + if r > 0.0 {
            dtol / (2.0 * r)
        } else {
            dtol.sqrt()
        };
    (r, tol)
}

fn exp_bound(x: f64) -> f64 {
    (3.0 + 2.0 * x.abs()) * ulp(x.exp())
}

/// Acceptable `(reference, tolerance)` pairs for `op` on `a`.
fn bounds(op: Approx, a: &[f64], raw: &[u32], comp: usize) -> Vec<(f64, f64)> {
    use Approx::*;
    let one = |r: f64, tol: f64| vec![(r, tol)];
    match op {
        Div => {
            let r = a[0] / a[1];
            one(r, 2.5 * ulp(r))
        }
        Rem => {
            let q = a[0] / a[1];
            let t = q.trunc();
            let r = a[0] - a[1] * t;
            let tol = ulp(a[0]) + ulp(a[1] * t) + ulp(r);
            let mut v = vec![(r, tol)];
            if (q - q.round()).abs() <= 3.0 * ulp(q) {
                v.push((r + a[1], tol + ulp(a[1])));
                v.push((r - a[1], tol + ulp(a[1])));
            }
            v
        }
        Exp => one(a[0].exp(), exp_bound(a[0])),
        Exp2 => {
            let r = a[0].exp2();
            one(r, (3.0 + 2.0 * a[0].abs()) * ulp(r))
        }
        Log => {
            let r = a[0].ln();
            one(r, log_error(a[0], r))
        }
        Log2 => {
            let r = a[0].log2();
            one(r, log_error(a[0], r))
        }
        Pow => {
            let (x, y) = (a[0], a[1]);
            let l = x.log2();
            let t = y * l;
            let et = y.abs() * log_error(x, l) + 0.5 * ulp(t);
            let r = x.powf(y);
            one(
                r,
                r * et * std::f64::consts::LN_2 * 1.01 + (3.0 + 2.0 * t.abs()) * ulp(r),
            )
        }
        Sqrt => {
            let r = a[0].sqrt();
            one(r, 5.0 * ulp(r))
        }
        InverseSqrt => {
            let r = 1.0 / a[0].sqrt();
            one(r, 2.0 * ulp(r))
        }
        Sin => one(a[0].sin(), 2f64.powi(-11)),
        Cos => one(a[0].cos(), 2f64.powi(-11)),
        Tan => {
            let (s, c, e) = (a[0].sin(), a[0].cos(), 2f64.powi(-11));
            let r = s / c;
            let worst = [
                (s + e) / (c - e),
                (s - e) / (c - e),
                (s + e) / (c + e),
                (s - e) / (c + e),
            ]
            .iter()
            .map(|q| (q - r).abs())
            .fold(0.0, f64::max);
            one(r, worst * 1.01 + 3.0 * ulp(r))
        }
        Asin | Acos => {
            let x = a[0];
            let s = (1.0 - x * x).sqrt();
            let es = 5.0 * ulp(s) + (ulp(x * x) + ulp(1.0 - x * x)) / (2.0 * s);
            let r = if op == Asin { x.asin() } else { x.acos() };
            one(r, 4096.0 * ulp(r) + es)
        }
        Atan => {
            let r = a[0].atan();
            one(r, 4096.0 * ulp(r))
        }
        Atan2 => {
            let r = a[0].atan2(a[1]);
            let tol = 4096.0 * ulp(r);
            if a[0] == 0.0 {
                vec![(r, tol), (-r, tol)]
            } else {
                one(r, tol)
            }
        }
        Sinh | Cosh | Tanh => {
            let x = a[0];
            let (e1, e2) = (x.exp(), (-x).exp());
            let err = exp_bound(x) + exp_bound(-x);
            let (s, c) = ((e1 - e2) * 0.5, (e1 + e2) * 0.5);
            let es = (err + ulp(e1 - e2)) * 0.5 + ulp(s);
            let ec = (err + ulp(e1 + e2)) * 0.5 + ulp(c);
            match op {
                Sinh => one(s, es),
                Cosh => one(c, ec),
                _ => {
                    let r = x.tanh();
                    one(r, (es + r.abs() * ec) / (c - ec) + 3.0 * ulp(r))
                }
            }
        }
        Asinh | Acosh => {
            let x = a[0];
            let sq = if op == Asinh {
                x * x + 1.0
            } else {
                x * x - 1.0
            };
            let s = sq.sqrt();
            let es = 5.0 * ulp(s) + (ulp(x * x) + ulp(sq)) / (2.0 * s);
            let sum = x + s;
            let ea = es + 0.5 * ulp(sum);
            let r = if op == Asinh { x.asinh() } else { x.acosh() };
            one(
                r,
                (ea / sum.abs()) * 1.01 + log_error(sum.abs(), r).max(2f64.powi(-21)),
            )
        }
        Atanh => {
            let x = a[0];
            let q = (1.0 + x) / (1.0 - x);
            let eq = 0.5 * ulp(1.0 + x) / (1.0 + x)
                + 0.5 * ulp(1.0 - x) / (1.0 - x)
                + 2.5 * 2f64.powi(-23);
            let r = x.atanh();
            one(r, 0.5 * (eq * 1.01 + log_error(q, q.ln())) + ulp(r))
        }
        Degrees | Radians => {
            let c = if op == Degrees {
                180.0 / std::f64::consts::PI
            } else {
                std::f64::consts::PI / 180.0
            };
            let r = a[0] * c;
            one(r, a[0].abs() * 0.5 * ulp(c) + ulp(r))
        }
        Fma => {
            let r = a[0] * a[1] + a[2];
            one(r, 0.5 * ulp(a[0] * a[1]) + ulp(r))
        }
        Mix => {
            let (x, y, t) = (a[0], a[1], a[2]);
            let r = x * (1.0 - t) + y * t;
            one(r, ulp(x) + ulp(y) + ulp(y - x) + ulp(r))
        }
        SmoothStep => {
            let (e0, e1, x) = (a[0], a[1], a[2]);
            let w = e1 - e0;
            let t = ((x - e0) / w).clamp(0.0, 1.0);
            let et = (0.5 * ulp(x - e0) + t * 0.5 * ulp(w)) / w + 2.5 * ulp(t);
            let r = t * t * (3.0 - 2.0 * t);
            one(r, 1.5 * et + 4.0 * 2f64.powi(-24))
        }
        Dot(n) => {
            let (r, tol) = dot_bound(&a[..n as usize], &a[n as usize..]);
            one(r, tol + ulp(r))
        }
        Length(_) => {
            let (r, tol) = length_bound(a);
            one(r, tol)
        }
        Distance(n) => {
            let n = n as usize;
            let d: Vec<f64> = (0..n).map(|i| a[i] - a[n + i]).collect();
            let (r, tol) = length_bound(&d);
            one(r, tol + d.iter().map(|&x| 0.5 * ulp(x)).sum::<f64>())
        }
        Normalize(_) => {
            let (d, dtol) = dot_bound(a, a);
            let r = a[comp] / d.sqrt();
            let rel = 2.0 * 2f64.powi(-23) + 0.5 * dtol / d;
            one(r, r.abs() * rel * 1.01 + ulp(r))
        }
        Cross => {
            let (j, k) = ((comp + 1) % 3, (comp + 2) % 3);
            let (p, q) = (a[j] * a[3 + k], a[k] * a[3 + j]);
            let r = p - q;
            one(r, 0.5 * ulp(p) + 0.5 * ulp(q) + ulp(r))
        }
        Reflect(n) => {
            let n = n as usize;
            let (i, nn) = (&a[..n], &a[n..2 * n]);
            let (d, dtol) = dot_bound(nn, i);
            let r = i[comp] - 2.0 * d * nn[comp];
            one(
                r,
                2.0 * nn[comp].abs() * dtol + 2.0 * ulp(2.0 * d * nn[comp]) + ulp(r),
            )
        }
        Refract(n) => {
            let n = n as usize;
            let (i, nn, eta) = (&a[..n], &a[n..2 * n], a[2 * n]);
            let (d, dtol) = dot_bound(nn, i);
            let k = 1.0 - eta * eta * (1.0 - d * d);
            let ktol = eta * eta * (2.0 * d.abs() * dtol + ulp(d * d)) + 4.0 * ulp(1.0);
            let mut v = Vec::new();
            if k <= ktol {
                v.push((0.0, 0.0));
            }
            if k >= -ktol {
                let sk = k.max(0.0).sqrt();
                let esk = 5.0 * ulp(sk)
                    + if sk > 0.0 {
                        ktol / (2.0 * sk)
                    } else {
                        ktol.sqrt()
                    };
                let esk = esk.min(ktol.sqrt() * 2.0 + 5.0 * ulp(sk));
                let m = eta * d + sk;
                let em = eta * dtol + esk + ulp(m);
                let r = eta * i[comp] - m * nn[comp];
                v.push((
                    r,
                    nn[comp].abs() * em + ulp(eta * i[comp]) + ulp(m * nn[comp]) + ulp(r),
                ));
            }
            v
        }
        FaceForward(n) => {
            let n = n as usize;
            let (nn, i, nref) = (&a[..n], &a[n..2 * n], &a[2 * n..]);
            let (d, dtol) = dot_bound(nref, i);
            let mut v = Vec::new();
            if d < dtol {
                v.push((nn[comp], 0.0));
            }
            if d > -dtol {
                v.push((-nn[comp], 0.0));
            }
            v
        }
        Determinant(n) => {
            let m: Vec<Vec<f64>> = (0..n as usize)
                .map(|c| a[c * n as usize..(c + 1) * n as usize].to_vec())
                .collect();
            let (r, magnitude) = determinant(&m);
            one(r, 2f64.powi(-16) * magnitude + ulp(r))
        }
        Inverse(n) => {
            let n = n as usize;
            let m: Vec<Vec<f64>> = (0..n).map(|c| a[c * n..(c + 1) * n].to_vec()).collect();
            let (det, det_mag) = determinant(&m);
            // Element (column c, row r) is cofactor (row c, column r) / det.
            let (c, r) = (comp / n, comp % n);
            let minor: Vec<Vec<f64>> = (0..n)
                .filter(|&k| k != r)
                .map(|k| (0..n).filter(|&j| j != c).map(|j| m[k][j]).collect())
                .collect();
            let (cof, cof_mag) = determinant(&minor);
            let sign = if (r + c) % 2 == 0 { 1.0 } else { -1.0 };
            let value = sign * cof / det;
            let tol = 2f64.powi(-16) * (cof_mag + value.abs() * det_mag) / det.abs() + ulp(value);
            one(value, tol)
        }
        MatVec(n) => {
            let n = n as usize;
            let row: Vec<f64> = (0..n).map(|c| a[c * n + comp]).collect();
            let (r, tol) = dot_bound(&row, &a[n * n..]);
            one(r, tol + ulp(r))
        }
        Unpack4x8Unorm | Unpack4x8Snorm | Unpack2x16Unorm | Unpack2x16Snorm => {
            let word = raw[0];
            let r = match op {
                Unpack4x8Unorm => ((word >> (8 * comp)) & 0xff) as f64 / 255.0,
                Unpack4x8Snorm => {
                    ((((word >> (8 * comp)) & 0xff) as u8 as i8) as f64 / 127.0).max(-1.0)
                }
                Unpack2x16Unorm => ((word >> (16 * comp)) & 0xffff) as f64 / 65535.0,
                _ => ((((word >> (16 * comp)) & 0xffff) as u16 as i16) as f64 / 32767.0).max(-1.0),
            };
            one(r, 2.5 * ulp(r))
        }
    }
}

/// A determinant by cofactor expansion, with the sum of the absolute values
/// of its products (the scale its rounding errors grow with).
fn determinant(m: &[Vec<f64>]) -> (f64, f64) {
    let n = m.len();
    if n == 1 {
        return (m[0][0], m[0][0].abs());
    }
    let (mut value, mut magnitude) = (0.0, 0.0);
    for c in 0..n {
        let minor: Vec<Vec<f64>> = (0..n)
            .filter(|&k| k != c)
            .map(|k| m[k][1..].to_vec())
            .collect();
        let (v, mag) = determinant(&minor);
        let sign = if c % 2 == 0 { 1.0 } else { -1.0 };
        value += sign * m[c][0] * v;
        magnitude += m[c][0].abs() * mag;
    }
    (value, magnitude)
}
