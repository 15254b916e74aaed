//! UBO loads at offsets of known alignment become vector loads: a
//! `load_ubo` whose byte offset is known to be `16 * n + 4 * c` becomes
//! `load_ubo_vec4 comp=c` of vector `n`, for hardware that addresses
//! uniform buffers in 16-byte vectors and picks the word by an immediate
//! (ir3's `ldc`). Without the alignment such hardware loads the whole
//! vector and selects the word at run time.
//!
//! The alignment comes from the offset's known low bits: constants,
//! sums, products, left shifts, and `and`/`or` with constants (an array
//! element's offset is `index * stride + field`; a stride that is a
//! multiple of 16 makes the low four bits the field's). When the offset
//! is `x + k` with `x` a multiple of 16 the vector index is
//! `(x >> 4) + k / 16`, so the loads of one element share `x >> 4` after
//! value numbering; otherwise it is `offset >> 4`.
//!
//! ```
//! use lathe_passes::ubo_vectors::split_ubo_offsets;
//!
//! let text = "shader vertex\nb0:\n  %0:u32 = load_uniform index=0\n  %1:u32 = const 64\n  %2:u32 = imul %0, %1\n  %3:u32 = const 36\n  %4:u32 = iadd %2, %3\n  %5:f32 = load_ubo binding=0 %4\n  store_output slot=0 comp=0 %5\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(split_ubo_offsets(&mut shader));
//! let printed = lathe_ir::print(&shader);
//! // Byte 36 of the 64-byte element is word 1 of its vector 2.
//! assert!(printed.contains("= load_ubo_vec4 binding=0 comp=1 %"), "{printed}");
//! assert!(printed.contains("= shr %2, %"), "{printed}");
//! lathe_ir::validate(&shader).unwrap();
//! ```

use crate::manager::{Pass, PassFailure};
use crate::u32_code::{const_bits, constant, emit};
use lathe_ir::{GenericOp, Inst, Op, Shader, Type, Value};

/// The `ubo-vectors` pass (generic IR only).
pub struct UboVectors;

impl Pass<GenericOp> for UboVectors {
    fn name(&self) -> &'static str {
        "ubo-vectors"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(split_ubo_offsets(shader))
    }
}

/// Bytes in a vector of `load_ubo_vec4`.
pub const VECTOR_BYTES: u32 = 16;

/// [`VECTOR_BYTES`] as a shift.
const VECTOR_SHIFT: u32 = VECTOR_BYTES.trailing_zeros();

/// Definitions followed when looking for known bits (deeper operands
/// count as unknown).
const MAX_DEPTH: u32 = 8;

/// Rewrites every `load_ubo` whose offset has known low four bits (a
/// multiple of 4) into a `load_ubo_vec4`; returns whether anything
/// changed.
pub fn split_ubo_offsets(shader: &mut Shader<'_, GenericOp>) -> bool {
    let mut changed = false;
    for b in shader.layout().to_vec() {
        let old = shader.block_insts(b).to_vec();
        let mut out = Vec::with_capacity(old.len());
        for i in old {
            if let Op::Opcode(GenericOp::LoadUbo { binding }) = shader.inst(i).op {
                changed |= split(shader, i, binding, &mut out);
            }
            out.push(i);
        }
        shader.set_block_insts(b, &out);
    }
    changed
}

/// Rewrites load `i` if its offset's word in the vector is known.
fn split(shader: &mut Shader<'_, GenericOp>, i: Inst, binding: u8, out: &mut Vec<Inst>) -> bool {
    let offset = shader.inst(i).args[0];
    let low = known_low_bits(shader, offset, MAX_DEPTH);
    if low.count < VECTOR_SHIFT || low.bits % 4 != 0 {
        return false;
    }
    let comp = ((low.bits >> 2) & 3) as u8;
    // `x + k` with `x` a multiple of 16: the index is (x >> 4) + k / 16.
    let (base, vectors) = aligned_base(shader, offset).unwrap_or((offset, 0));
    let shift = constant(shader, out, VECTOR_SHIFT);
    let mut index = emit(shader, out, GenericOp::Shr, &[base, shift]);
    if vectors != 0 {
        let k = constant(shader, out, vectors);
        index = emit(shader, out, GenericOp::IAdd, &[index, k]);
    }
    shader.inst_mut(i).op = Op::Opcode(GenericOp::LoadUboVec4 { binding, comp });
    shader.set_args(i, &[index]);
    true
}

/// `(x, k / 16)` when `offset` is `x + k` with `x` a known multiple of 16.
fn aligned_base(shader: &Shader<'_, GenericOp>, offset: Value) -> Option<(Value, u32)> {
    let d = shader.inst(shader.value_def(offset));
    if d.op != Op::Opcode(GenericOp::IAdd) {
        return None;
    }
    let [a, b] = [d.args[0], d.args[1]];
    let (x, k) = match (const_bits(shader, a), const_bits(shader, b)) {
        (_, Some(k)) => (a, k),
        (Some(k), None) => (b, k),
        (None, None) => return None,
    };
    let low = known_low_bits(shader, x, MAX_DEPTH);
    (low.count >= VECTOR_SHIFT && low.bits & 0xf == 0).then_some((x, k >> VECTOR_SHIFT))
}

/// The low `count` bits of a 32-bit value are `bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LowBits {
    count: u32,
    bits: u32,
}

impl LowBits {
    const UNKNOWN: LowBits = LowBits { count: 0, bits: 0 };

    fn new(count: u32, bits: u32) -> LowBits {
        let count = count.min(32);
        LowBits {
            count,
            bits: bits & mask(count),
        }
    }

    /// Known trailing zeros.
    fn zeros(self) -> u32 {
        if self.bits == 0 {
            self.count
        } else {
            self.bits.trailing_zeros()
        }
    }
}

/// `count` low bits set.
fn mask(count: u32) -> u32 {
    if count >= 32 {
        u32::MAX
    } else {
        (1 << count) - 1
    }
}

/// What is known of `v`'s low bits (32-bit integers only).
fn known_low_bits(shader: &Shader<'_, GenericOp>, v: Value, depth: u32) -> LowBits {
    let ty = shader.value_type(v);
    if depth == 0 || ty.lanes != 1 || ty.scalar.bits() != 32 || ty == Type::F32 {
        return LowBits::UNKNOWN;
    }
    let d = shader.inst(shader.value_def(v));
    let Op::Opcode(op) = d.op else {
        return LowBits::UNKNOWN;
    };
    let arg = |k: usize| known_low_bits(shader, d.args[k], depth - 1);
    match op {
        GenericOp::Const { bits } => LowBits::new(32, bits),
        GenericOp::IAdd => {
            let (a, b) = (arg(0), arg(1));
            LowBits::new(a.count.min(b.count), a.bits.wrapping_add(b.bits))
        }
        GenericOp::IMul => {
            let (a, b) = (arg(0), arg(1));
            let known = LowBits::new(a.count.min(b.count), a.bits.wrapping_mul(b.bits));
            // A product has at least the factors' trailing zeros.
            let zeros = LowBits::new(a.zeros() + b.zeros(), 0);
            if zeros.count > known.count {
                zeros
            } else {
                known
            }
        }
        GenericOp::Shl => match const_bits(shader, d.args[1]) {
            Some(s) if s < 32 => {
                let a = arg(0);
                LowBits::new(a.count + s, a.bits << s)
            }
            _ => LowBits::UNKNOWN,
        },
        GenericOp::And | GenericOp::Or => {
            let (a, b) = (arg(0), arg(1));
            // A bit is known where both are, or where one operand decides
            // it alone (a 0 for `and`, a 1 for `or`).
            let deciding = |x: LowBits| {
                let m = mask(x.count);
                if op == GenericOp::And {
                    m & !x.bits
                } else {
                    m & x.bits
                }
            };
            let known = mask(a.count.min(b.count)) | deciding(a) | deciding(b);
            let count = known.trailing_ones();
            let bits = if op == GenericOp::And {
                a.bits & b.bits
            } else {
                a.bits | b.bits
            };
            // Bits decided by one operand take its value: `and` with a
            // known 0 is 0 (unknown bits of the other are 0 in `bits`),
            // `or` with a known 1 is 1.
            LowBits::new(count, bits)
        }
        _ => LowBits::UNKNOWN,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> String {
        let arena = lathe_ir::Bump::new();
        let mut shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        split_ubo_offsets(&mut shader);
        lathe_ir::validate(&shader).unwrap();
        lathe_ir::print(&shader)
    }

    /// `load_ubo` at `offset` (IR lines defining `%1` from uniform `%0`).
    fn load_at(defs: &str) -> String {
        format!(
            "shader vertex\nb0:\n  %0:u32 = load_uniform index=0\n{defs}  %9:f32 = load_ubo binding=2 %1\n  store_output slot=0 comp=0 %9\n  ret\n"
        )
    }

    #[test]
    fn a_stride_of_16_gives_the_field_word() {
        let out = run(&load_at(
            "  %5:u32 = const 4\n  %6:u32 = shl %0, %5\n  %7:u32 = const 8\n  %1:u32 = iadd %6, %7\n",
        ));
        assert!(out.contains("load_ubo_vec4 binding=2 comp=2 %"), "{out}");
    }

    #[test]
    fn a_stride_of_8_leaves_the_word_unknown() {
        let out = run(&load_at(
            "  %5:u32 = const 8\n  %6:u32 = imul %0, %5\n  %7:u32 = const 4\n  %1:u32 = iadd %6, %7\n",
        ));
        assert!(out.contains("= load_ubo binding=2 %"), "{out}");
        assert!(!out.contains("load_ubo_vec4"), "{out}");
    }

    #[test]
    fn an_unaligned_field_stays_a_byte_load() {
        let out = run(&load_at(
            "  %5:u32 = const 64\n  %6:u32 = imul %0, %5\n  %7:u32 = const 2\n  %1:u32 = iadd %6, %7\n",
        ));
        assert!(!out.contains("load_ubo_vec4"), "{out}");
    }

    #[test]
    fn masks_and_or_give_known_bits() {
        let out = run(&load_at(
            "  %5:u32 = const 0xfffffff0\n  %6:u32 = and %0, %5\n  %7:u32 = const 12\n  %1:u32 = or %6, %7\n",
        ));
        assert!(out.contains("load_ubo_vec4 binding=2 comp=3 %"), "{out}");
        // Not a sum: the index is the whole offset shifted.
        let or = out.lines().find(|l| l.contains("= or ")).expect(&out);
        let or = or.trim().split(':').next().unwrap();
        assert!(out.contains(&format!("= shr {or}, %")), "{out}");
    }

    #[test]
    fn low_bits_of_products_and_sums() {
        let x = LowBits::UNKNOWN;
        let sixteen = LowBits::new(32, 16);
        assert_eq!(x.zeros(), 0);
        assert_eq!(sixteen.zeros(), 4);
        assert_eq!(LowBits::new(3, 0xff), LowBits { count: 3, bits: 7 });
    }
}
