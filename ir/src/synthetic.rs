//! Deterministic generated shaders of a requested size, for benchmarks and
//! scaling tests: repeated groups of arithmetic, plain copies, dead values
//! and if/else diamonds, so every pass has work proportional to the size.

use crate::builder::Builder;
use crate::generic::{GenericOp, Interp};
use crate::shader::{Shader, Stage};
use crate::types::Type;
use bumpalo::Bump;

/// Instructions one group adds.
pub const GROUP_INSTS: usize = 15;

/// A valid fragment shader of about `insts` instructions.
pub fn shader(arena: &Bump, insts: usize) -> Shader<'_, GenericOp> {
    let groups = insts / GROUP_INSTS + 1;
    let mut shader = Shader::with_capacity(
        arena,
        Stage::Fragment,
        groups * GROUP_INSTS + 8,
        groups * 3 + 1,
    );
    let mut b = Builder::new(&mut shader);
    let x = b.load_input(0, 0, Interp::SMOOTH, Type::F32);
    let k = b.load_input(0, 1, Interp::FLAT, Type::I32);
    let mut acc = x;
    let mut count = k;
    for g in 0..groups {
        let c = b.const_f32(0.5 + g as f32);
        let m = b.fmul(acc, c);
        let copy = b.mov(m);
        let _dead = b.fadd(copy, copy);
        let cond = b.flt(copy, x);
        let [joined] = b.if_else(cond, |b| [b.fadd(copy, c)], |b| [b.fsub(copy, c)]);
        let one = b.const_i32(1);
        count = b.iadd(count, one);
        let scaled = b.ffma(joined, c, x);
        acc = b.mov(scaled);
    }
    b.store_output(0, 0, acc);
    b.store_output(0, 1, count);
    b.ret();
    shader
}

#[cfg(test)]
mod tests {
    #[test]
    fn synthetic_shaders_are_valid_and_sized() {
        let arena = Bump::new();
        for n in [100, 1000] {
            let s = super::shader(&arena, n);
            crate::validate(&s).unwrap();
            assert!(
                s.len() >= n && s.len() < n + 2 * super::GROUP_INSTS,
                "{} for {n}",
                s.len()
            );
        }
    }
    use bumpalo::Bump;
}
