//! Deterministic generated shaders of a requested size, for benchmarks and
//! scaling tests. [`shader`] chains groups of arithmetic, plain copies, dead
//! values and if/else diamonds, so every pass has work proportional to the
//! size; [`nested_shader`] nests diamonds as deep as the size allows, the
//! shape that makes a careless flatten quadratic.

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

/// Instructions one nesting level of [`nested_shader`] adds.
pub const LEVEL_INSTS: usize = 8;

/// A valid fragment shader of about `insts` instructions made of if/else
/// diamonds nested `insts / LEVEL_INSTS` deep, each then-side holding the
/// next level. Built without recursion, so any depth works.
pub fn nested_shader(arena: &Bump, insts: usize) -> Shader<'_, GenericOp> {
    let depth = insts / LEVEL_INSTS + 1;
    let mut shader = Shader::with_capacity(
        arena,
        Stage::Fragment,
        depth * LEVEL_INSTS + 8,
        depth * 3 + 1,
    );
    let mut b = Builder::new(&mut shader);
    let x = b.load_input(0, 0, Interp::SMOOTH, Type::F32);
    let mut acc = x;
    // Going down: each level's head branches to the next level or an else.
    let mut levels = Vec::with_capacity(depth);
    for k in 0..depth {
        let c = b.const_f32(0.5 + k as f32);
        let m = b.fmul(acc, c);
        let cond = b.flt(m, x);
        let then_block = b.new_block();
        let else_block = b.new_block();
        let join = b.new_block();
        b.branch(cond, then_block, else_block);
        b.switch_to(else_block);
        let e = b.fadd(m, c);
        b.jump(join);
        levels.push((e, else_block, join));
        b.switch_to(then_block);
        acc = m;
    }
    // Coming back up: each join merges the level below with its else.
    let mut value = b.fsub(acc, x);
    let mut from = b.current_block();
    for (e, else_block, join) in levels.into_iter().rev() {
        b.jump(join);
        b.switch_to(join);
        value = b.phi(Type::F32, &[(value, from), (e, else_block)]);
        from = join;
    }
    b.store_output(0, 0, value);
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
            let s = super::nested_shader(&arena, n);
            crate::validate(&s).unwrap();
            assert!(
                s.len() >= n && s.len() < n + 2 * super::LEVEL_INSTS,
                "{} for {n}",
                s.len()
            );
        }
    }
    use bumpalo::Bump;
}
