//! Which class of float operation each output of a lowered shader depends
//! on: the tolerance a corpus shader's output gets is that of the least
//! exact operation in its data-flow cone (operands, phi inputs, and for
//! array loads every value stored to the array).

use lathe_ir::{GenericOp, Op, Shader, Value};
use std::collections::{HashMap, HashSet};

/// Operation classes, from exact to approximate. The tolerances are in
/// [`OpClass::agree`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OpClass {
    /// Moves, integer and bit operations, comparisons, selects, min/max,
    /// floor/ceil/trunc/round/fract/sign, conversions, loads, nearest
    /// texel reads, derivatives (a subtraction of exact values): the result
    /// is exactly defined, so only the freedoms the Vulkan spec gives every
    /// float (denormal flush, sign of zero, any NaN) are allowed.
    Exact,
    /// Correctly rounded arithmetic (`+ - * fma`), division (2.5 ulp),
    /// `sqrt` (inherited, 5 ulp), `rcp`, unpack to unorm/snorm (2.5 ulp): the
    /// spec also lets a driver fuse `a * b + c` into one rounding or not
    /// (lavapipe fuses), so each such step may differ by an ulp of its
    /// operands, and a chain of them accumulates it (and may amplify it:
    /// cancellation, a texel edge).
    Rounded,
    /// Transcendentals: `exp2`, `log2`, `sin`, `cos`, `rsqrt` (and whatever
    /// GLSL.std.450 builds from them: `pow`, `atan`, `normalize`, ...),
    /// within the bounds of `precision.rs` (`sin`/`cos` 2^-11 absolute,
    /// `exp2` (3 + 2|x|) ulp, `log2` 2^-21 absolute near 1, ...).
    Approximate,
}

impl OpClass {
    fn of(op: &Op<GenericOp>) -> OpClass {
        use GenericOp as G;
        match op {
            Op::Opcode(G::FAdd | G::FSub | G::FMul | G::Ffma | G::FDiv | G::Rcp | G::Sqrt) => {
                OpClass::Rounded
            }
            Op::Opcode(G::Unpack { .. }) => OpClass::Rounded,
            Op::Opcode(G::Rsqrt | G::Exp2 | G::Log2 | G::Sin | G::Cos) => OpClass::Approximate,
            _ => OpClass::Exact,
        }
    }

    /// The difference allowed between two float results of this class
    /// beyond the propagated bound (`perturb.rs`), relative to
    /// `max(1, |value|)` (inputs are of unit scale: an absolute bound below
    /// 1, a relative one above). It covers second-order effects the
    /// one-sided perturbation does not: 2^-20 for rounded arithmetic (8×
    /// the largest seen), 2^-16 with transcendentals (4× the largest seen).
    pub fn tolerance(self) -> f64 {
        match self {
            OpClass::Exact => 0.0,
            OpClass::Rounded => 2f64.powi(-20),
            OpClass::Approximate => 2f64.powi(-16),
        }
    }

    /// Whether float words `a` and `b` agree for an output of this class
    /// whose propagated bound is `spread`: equal after flushing denormals
    /// and ignoring the sign of zero, or both finite and within
    /// `tolerance · max(1, |value|) + 4 · spread`.
    pub fn agree(self, a: u32, b: u32, spread: f64) -> bool {
        use super::precision::normalise;
        if normalise(a) == normalise(b) {
            return true;
        }
        let (x, y) = (f32::from_bits(a) as f64, f32::from_bits(b) as f64);
        if !(x.is_finite() && y.is_finite()) {
            return false;
        }
        (x - y).abs() <= self.tolerance() * x.abs().max(y.abs()).max(1.0) + 4.0 * spread
    }
}

/// The class of the cone of every value stored by the instructions that
/// `is_output` selects, keyed by what it returns.
pub fn output_classes<K: std::hash::Hash + Eq + Copy>(
    shader: &Shader<'_, GenericOp>,
    is_output: impl Fn(&Op<GenericOp>) -> Option<K>,
) -> HashMap<K, OpClass> {
    // Values stored into each array, for array loads.
    let mut stored: HashMap<u32, Vec<Value>> = HashMap::new();
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        if let Op::Opcode(GenericOp::ArrayStore { array, .. }) = d.op {
            stored.entry(array.0).or_default().extend(d.operands());
        }
    }
    let mut out: HashMap<K, OpClass> = HashMap::new();
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        let Some(key) = is_output(&d.op) else {
            continue;
        };
        let class = cone(shader, d.operands().collect(), &stored);
        let e = out.entry(key).or_insert(OpClass::Exact);
        *e = (*e).max(class);
    }
    out
}

/// The least exact class in the cone of `roots`.
fn cone(
    shader: &Shader<'_, GenericOp>,
    roots: Vec<Value>,
    stored: &HashMap<u32, Vec<Value>>,
) -> OpClass {
    let mut seen: HashSet<Value> = HashSet::new();
    let mut work = roots;
    let mut class = OpClass::Exact;
    while let Some(v) = work.pop() {
        if !seen.insert(v) {
            continue;
        }
        let d = shader.inst(shader.value_def(v));
        class = class.max(OpClass::of(&d.op));
        work.extend(d.operands());
        if let Op::Opcode(GenericOp::ArrayLoad { array, .. }) = d.op {
            work.extend(stored.get(&array.0).into_iter().flatten().copied());
        }
    }
    class
}
