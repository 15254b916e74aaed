//! Random vertex/fragment pairs for the harness and the `link` fuzz
//! target, and the check both run: generate, link, compare.
//!
//! The vertex shader reads a few attributes, uniforms and a UBO, computes
//! through arithmetic (32- and 16-bit float, integer, conversions,
//! compares and selects, an occasional if/else, whose arms may both store
//! one output) and writes the position,
//! sometimes point size, a clip distance and the layer, and VARn
//! components (now and then stored twice, the last store counting)
//! holding: fresh values, duplicates of other outputs,
//! constants, uniform expressions, and groups of small expressions of one
//! value (forward-motion fodder); sometimes FOGC, a colour, a texture
//! coordinate. Some outputs are unread, some captured by transform
//! feedback. The fragment shader reads most outputs with mixed qualifiers
//! (smooth, noperspective, flat; centre, centroid, sample), sometimes an
//! input nobody writes, and computes outputs. Values read through an
//! interpolated input reach the outputs only through continuous
//! operations (so the harness's tolerance for inexact motion applies);
//! flat ones through anything, including compares, `floor` and a discard.
//! One pair in eight is linked with `preserve_inf`.

use super::harness::{self, Compared, Scene};
use super::slots::slot;
use super::varyings::Comp;
use super::{DefaultCost, LinkOptions, LinkReport, link};
use arbitrary::{Result as ArbResult, Unstructured};
use lathe_ir::interp::Limits;
use lathe_ir::{
    Builder, GenericOp, Interp, InterpLoc, InterpMode, Scalar, Shader, Stage, Type, Value,
};

/// A generated pair, as IR text, with its scene and link options.
pub struct Pair {
    pub vs: String,
    pub fs: String,
    pub scene: Scene,
    pub options: LinkOptions,
}

const UNIFORMS: u32 = 6;

struct Vs<'u, 'd, 's, 'a> {
    u: &'u mut Unstructured<'d>,
    b: Builder<'s, 'a, GenericOp>,
    f32s: Vec<Value>,
    f16s: Vec<Value>,
    ints: Vec<Value>,
    /// Values that are the same for every vertex.
    uniform_f32: Vec<Value>,
}

impl Vs<'_, '_, '_, '_> {
    fn pick(&mut self, s: Scalar) -> ArbResult<Value> {
        let pool = match s {
            Scalar::F16 => &self.f16s,
            Scalar::F32 => &self.f32s,
            _ => &self.ints,
        };
        Ok(pool[self.u.choose_index(pool.len())?])
    }

    fn push(&mut self, v: Value) {
        match self.b.type_of(v).scalar {
            Scalar::F16 => self.f16s.push(v),
            Scalar::F32 => self.f32s.push(v),
            _ => self.ints.push(v),
        }
    }

    fn konst(&mut self) -> ArbResult<Value> {
        let k = self.u.int_in_range(0..=16u8)? as f32 / 4.0 - 1.0;
        Ok(self.b.const_f32(k))
    }

    fn statement(&mut self) -> ArbResult<()> {
        use GenericOp::*;
        match self.u.int_in_range(0..=9u8)? {
            0..=3 => {
                let op = *self.u.choose(&[FAdd, FSub, FMul, FMin, FMax])?;
                let (x, y) = (self.pick(Scalar::F32)?, self.pick(Scalar::F32)?);
                let v = self.b.op(op, &[x, y], Type::F32);
                self.push(v);
            }
            4 => {
                let (x, y, z) = (
                    self.pick(Scalar::F32)?,
                    self.pick(Scalar::F32)?,
                    self.pick(Scalar::F32)?,
                );
                let v = self.b.ffma(x, y, z);
                self.push(v);
            }
            5 => {
                let x = self.pick(Scalar::F32)?;
                let h = self.b.cvt(x, Type::F16);
                self.push(h);
                let y = self.pick(Scalar::F16)?;
                let v = self.b.fmul(h, y);
                self.push(v);
            }
            6 => {
                let op = *self.u.choose(&[IAdd, IMul, Xor, And])?;
                let (x, y) = (self.pick(Scalar::I32)?, self.pick(Scalar::I32)?);
                let v = self.b.op(op, &[x, y], Type::I32);
                self.push(v);
                let f = self.b.cvt(v, Type::F32);
                self.push(f);
            }
            7 => {
                let (x, y) = (self.pick(Scalar::F32)?, self.pick(Scalar::F32)?);
                let c = self.b.flt(x, y);
                let v = self.b.sel(c, x, y);
                self.push(v);
            }
            8 => {
                let x = self.pick(Scalar::F32)?;
                let k = self.konst()?;
                let v = self.b.fadd(x, k);
                self.push(v);
            }
            _ => {
                let x = self.pick(Scalar::F32)?;
                let v = self.b.floor(x);
                self.push(v);
            }
        }
        Ok(())
    }

    /// A uniform expression (same for every vertex).
    fn uniform_expr(&mut self) -> ArbResult<Value> {
        let a = self.uniform_f32[self.u.choose_index(self.uniform_f32.len())?];
        Ok(match self.u.int_in_range(0..=2u8)? {
            0 => a,
            1 => {
                let k = self.konst()?;
                self.b.fmul(a, k)
            }
            _ => {
                let off = self.b.const_u32(4 * self.u.int_in_range(0..=7u32)?);
                let w = self.b.load_ubo(0, off, Type::F32);
                self.b.fadd(a, w)
            }
        })
    }
}

/// Make a random pair from fuzzer bytes.
pub fn pair(u: &mut Unstructured<'_>) -> ArbResult<Pair> {
    let arena = lathe_ir::Bump::new();
    let mut vs: Shader<GenericOp> = Shader::new(&arena, Stage::Vertex);
    let mut g = Vs {
        u,
        b: Builder::new(&mut vs),
        f32s: Vec::new(),
        f16s: Vec::new(),
        ints: Vec::new(),
        uniform_f32: Vec::new(),
    };
    let mut attrs = Vec::new();
    for k in 0..g.u.int_in_range(1..=3u16)? {
        let v = g.b.load_input(k, 0, Interp::FLAT, Type::F32);
        attrs.push(((k, 0u8), Scalar::F32));
        g.push(v);
    }
    let iv = g.b.load_input(3, 0, Interp::FLAT, Type::I32);
    attrs.push(((3, 0), Scalar::I32));
    g.push(iv);
    for k in 0..3 {
        let v = g.b.load_uniform(k, None, Type::F32);
        g.uniform_f32.push(v);
        g.push(v);
    }
    let h = g.b.const_f16(0.5);
    g.push(h);
    for _ in 0..g.u.int_in_range(2..=12u8)? {
        g.statement()?;
    }
    let mut free: Vec<Comp> = (0..6u16)
        .flat_map(|s| (0..4u8).map(move |c| (s, c)))
        .collect();
    let mut written: Vec<(Comp, Type)> = Vec::new();
    if g.u.ratio(1u8, 4u8)? {
        // A diamond: values that differ per vertex through control flow,
        // sometimes stored to a VARn component in both arms.
        let (x, y) = (g.pick(Scalar::F32)?, g.pick(Scalar::F32)?);
        let c = g.b.flt(x, y);
        let arms = if g.u.arbitrary()? {
            let o = free.remove(g.u.choose_index(free.len())?);
            written.push((o, Type::F32));
            Some(o)
        } else {
            None
        };
        let arm = |b: &mut Builder<GenericOp>, v: Value| {
            if let Some(o) = arms {
                b.store_output(o.0, o.1, v);
            }
            [v]
        };
        let [v] = g.b.if_else(
            c,
            |b| {
                let v = b.fadd(x, y);
                arm(b, v)
            },
            |b| {
                let v = b.fsub(x, y);
                arm(b, v)
            },
        );
        g.push(v);
    }
    // Outputs.
    let mut store = |g: &mut Vs, c: Comp, v: Value| {
        let ty = g.b.type_of(v);
        g.b.store_output(c.0, c.1, v);
        written.push((c, ty));
    };
    for comp in 0..4 {
        let v = g.pick(Scalar::F32)?;
        store(&mut g, (slot::POS, comp), v);
    }
    if g.u.ratio(1u8, 4u8)? {
        let v = g.pick(Scalar::F32)?;
        store(&mut g, (slot::PSIZ, 0), v);
    }
    if g.u.ratio(1u8, 4u8)? {
        let v = if g.u.arbitrary()? {
            g.uniform_expr()?
        } else {
            g.pick(Scalar::F32)?
        };
        store(&mut g, (slot::CLIP_DIST0, 0), v);
    }
    if g.u.ratio(1u8, 6u8)? {
        let v = g.b.const_i32(g.u.int_in_range(0..=3)?);
        store(&mut g, (slot::LAYER, 0), v);
    }
    let mut var_values: Vec<Value> = Vec::new();
    for _ in 0..g.u.int_in_range(1..=10u8)? {
        if free.is_empty() {
            break;
        }
        let c = free.remove(g.u.choose_index(free.len())?);
        let v = match g.u.int_in_range(0..=10u8)? {
            0 if !var_values.is_empty() => var_values[g.u.choose_index(var_values.len())?],
            1 => g.konst()?,
            2 => g.uniform_expr()?,
            3 => g.pick(Scalar::F16)?,
            9 | 10 => {
                // A fresh 16-bit value (16-bit packing fodder).
                let x = g.pick(Scalar::F32)?;
                g.b.cvt(x, Type::F16)
            }
            4 => g.pick(Scalar::I32)?,
            5 => {
                // Several small expressions of one value.
                let d = g.pick(Scalar::F32)?;
                let k = g.konst()?;
                let v = if g.u.arbitrary()? {
                    g.b.fadd(d, k)
                } else {
                    g.b.fmul(d, k)
                };
                if let Some(c2) = free.pop() {
                    let k2 = g.konst()?;
                    let w = g.b.fmul(d, k2);
                    store(&mut g, c2, w);
                    var_values.push(w);
                }
                v
            }
            _ => g.pick(Scalar::F32)?,
        };
        var_values.push(v);
        if g.u.ratio(1u8, 8u8)? {
            // An earlier store of the same component that the last one
            // overrides.
            let early = g.pick(g.b.type_of(v).scalar)?;
            g.b.store_output(c.0, c.1, early);
        }
        store(&mut g, c, v);
    }
    if g.u.ratio(1u8, 4u8)? {
        let v = g.pick(Scalar::F32)?;
        store(&mut g, (slot::FOGC, 0), v);
    }
    if g.u.ratio(1u8, 4u8)? {
        let v = if g.u.arbitrary()? {
            g.b.const_f32(0.25)
        } else {
            g.pick(Scalar::F32)?
        };
        let comp = g.u.int_in_range(0..=3)?;
        store(&mut g, (slot::COL0, comp), v);
    }
    if g.u.ratio(1u8, 4u8)? {
        for comp in 0..4 {
            let v = if comp == 3 {
                g.b.const_f32(1.0)
            } else {
                g.pick(Scalar::F32)?
            };
            store(&mut g, (slot::TEX0, comp), v);
        }
    }
    g.b.ret();
    let u = g.u;

    let mut xfb = Vec::new();
    for &(c, _) in &written {
        if c.0 < slot::VAR_COUNT && u.ratio(1u8, 10u8)? {
            xfb.push(c);
        }
    }

    let mut fs: Shader<GenericOp> = Shader::new(&arena, Stage::Fragment);
    let mut f = Builder::new(&mut fs);
    // Continuous values (through interpolation) and anything-goes values.
    let mut smooth: Vec<Value> = Vec::new();
    let mut exact: Vec<Value> = Vec::new();
    let mut smooth16: Vec<Value> = Vec::new();
    let mut ints: Vec<Value> = Vec::new();
    // Flat 16-bit inputs also written out as they are (so they stay
    // 16-bit varyings for compaction to pack).
    let mut flat16: Vec<Value> = Vec::new();
    let mut reads: Vec<(Comp, Type)> = written
        .iter()
        .copied()
        .filter(|(c, _)| !matches!(c.0, slot::POS | slot::PSIZ))
        .collect();
    if u.ratio(1u8, 10u8)? {
        reads.push(((7, 0), Type::F32));
    }
    for (c, ty) in reads {
        if u.ratio(1u8, 5u8)? {
            continue;
        }
        let flat_odds = if ty.scalar == Scalar::F16 { 2u8 } else { 3 };
        let flat = !ty.scalar.is_float() || u.ratio(1u8, flat_odds)?;
        let interp = if flat {
            Interp::FLAT
        } else {
            Interp {
                mode: *u.choose(&[InterpMode::Smooth, InterpMode::NoPerspective])?,
                loc: *u.choose(&[
                    InterpLoc::Center,
                    InterpLoc::Center,
                    InterpLoc::Centroid,
                    InterpLoc::Sample,
                ])?,
            }
        };
        let v = f.load_input(c.0, c.1, interp, ty);
        match (ty.scalar, flat) {
            (Scalar::F32, false) => smooth.push(v),
            (Scalar::F32, true) => exact.push(v),
            (Scalar::F16, false) => smooth16.push(v),
            (Scalar::F16, true) => {
                let w = f.cvt(v, Type::F32);
                exact.push(w);
                flat16.push(v);
            }
            _ => ints.push(v),
        }
    }
    for k in 0..2 {
        exact.push(f.load_uniform(k, None, Type::F32));
    }
    let konst = |f: &mut Builder<GenericOp>, u: &mut Unstructured| -> ArbResult<Value> {
        Ok(f.const_f32(u.int_in_range(0..=16u8)? as f32 / 4.0 - 2.0))
    };
    exact.push(konst(&mut f, u)?);
    for _ in 0..u.int_in_range(1..=10u8)? {
        use GenericOp::*;
        let pick = |pool: &Vec<Value>, u: &mut Unstructured| -> ArbResult<Option<Value>> {
            if pool.is_empty() {
                return Ok(None);
            }
            Ok(Some(pool[u.choose_index(pool.len())?]))
        };
        match u.int_in_range(0..=7u8)? {
            0 | 1 => {
                // Continuous: smooth ± smooth, smooth * exact, ffma.
                let (Some(x), Some(y)) = (pick(&smooth, u)?, pick(&smooth, u)?) else {
                    continue;
                };
                let op = *u.choose(&[FAdd, FSub, FMin, FMax])?;
                let v = f.op(op, &[x, y], Type::F32);
                smooth.push(v);
            }
            2 | 3 => {
                let (Some(x), Some(e)) = (pick(&smooth, u)?, pick(&exact, u)?) else {
                    continue;
                };
                let v = match u.int_in_range(0..=2u8)? {
                    0 => f.fmul(x, e),
                    1 => f.fadd(e, x),
                    _ => {
                        let y = pick(&smooth, u)?.unwrap_or(x);
                        f.ffma(e, x, y)
                    }
                };
                smooth.push(v);
            }
            4 => {
                let (Some(x), Some(y)) = (pick(&exact, u)?, pick(&exact, u)?) else {
                    continue;
                };
                let op = *u.choose(&[FAdd, FMul, FMax])?;
                let v = f.op(op, &[x, y], Type::F32);
                let v = if u.arbitrary()? { f.floor(v) } else { v };
                exact.push(v);
            }
            5 => {
                let (Some(x), Some(y)) = (pick(&exact, u)?, pick(&exact, u)?) else {
                    continue;
                };
                let c = f.flt(x, y);
                if let (Some(a), Some(b)) = (pick(&smooth, u)?, pick(&smooth, u)?) {
                    let v = f.sel(c, a, b);
                    smooth.push(v);
                }
            }
            6 => {
                let (Some(x), Some(y)) = (pick(&smooth16, u)?, pick(&smooth16, u)?) else {
                    continue;
                };
                let v = f.fadd(x, y);
                let h = f.const_f16(0.5);
                let v = f.fmul(v, h);
                smooth16.push(v);
            }
            _ => {
                let (Some(x), Some(y)) = (pick(&ints, u)?, pick(&ints, u)?) else {
                    continue;
                };
                let v = f.iadd(x, y);
                ints.push(v);
            }
        }
    }
    if u.ratio(1u8, 8u8)? && exact.len() > 1 {
        let (x, y) = (exact[0], exact[exact.len() - 1]);
        let c = f.flt(x, y);
        let kill = f.new_block();
        let rest = f.new_block();
        f.branch(c, kill, rest);
        f.switch_to(kill);
        f.discard();
        f.jump(rest);
        f.switch_to(rest);
    }
    let mut out = 0u16;
    for pool in [&smooth, &exact, &smooth16, &ints, &flat16] {
        for &v in pool.iter().rev().take(2) {
            f.store_output(out, 0, v);
            out += 1;
        }
    }
    f.ret();

    let inputs = attrs;
    let scene = Scene::random(u.arbitrary()?, &inputs, UNIFORMS as usize, 6);
    // Now and then Infs must be preserved (the harness then excuses no
    // Inf or NaN crossing interpolation).
    let preserve_inf = u.ratio(1u8, 8u8)?;
    Ok(Pair {
        vs: lathe_ir::print(&vs),
        fs: lathe_ir::print(&fs),
        scene,
        options: LinkOptions {
            xfb,
            preserve_inf,
            ..LinkOptions::default()
        },
    })
}

/// What one checked pair exercised.
#[derive(Clone, Debug, Default)]
pub struct PairStats {
    pub report: LinkReport,
    pub compared: Compared,
}

/// Generate a pair from `data`, link it, check both linked shaders are
/// valid and the harness sees the same results. Short inputs pass
/// trivially.
pub fn check(data: &[u8]) -> Result<PairStats, String> {
    let mut u = Unstructured::new(data);
    let Ok(p) = pair(&mut u) else {
        return Ok(PairStats::default());
    };
    check_pair(&p.vs, &p.fs, &p.scene, &p.options)
}

/// Link IR texts and compare the pair before and after on `scene`, each
/// invocation limited to 20,000 steps.
pub fn check_pair(
    vs: &str,
    fs: &str,
    scene: &Scene,
    options: &LinkOptions,
) -> Result<PairStats, String> {
    check_pair_limited(
        vs,
        fs,
        scene,
        options,
        Limits {
            max_steps: 20_000,
            ..Limits::default()
        },
    )
}

/// [`check_pair`] with other limits per invocation.
pub fn check_pair_limited(
    vs: &str,
    fs: &str,
    scene: &Scene,
    options: &LinkOptions,
    limits: Limits,
) -> Result<PairStats, String> {
    let arena = lathe_ir::Bump::new();
    let parse = |t: &str| -> Result<Shader<GenericOp>, String> {
        lathe_ir::parse(&arena, t).map_err(|e| format!("generated IR does not parse: {e}\n{t}"))
    };
    let (vs0, fs0) = (parse(vs)?, parse(fs)?);
    let (mut vs1, mut fs1) = (parse(vs)?, parse(fs)?);
    let report =
        link(&mut vs1, &mut fs1, options, &DefaultCost).map_err(|e| format!("{e}\n{vs}\n{fs}"))?;
    let show = || {
        format!(
            "\n--- vertex\n{vs}--- fragment\n{fs}--- linked vertex\n{}--- linked fragment\n{}",
            lathe_ir::print(&vs1),
            lathe_ir::print(&fs1)
        )
    };
    for (s, name) in [(&vs1, "vertex"), (&fs1, "fragment")] {
        lathe_ir::validate(s)
            .map_err(|e| format!("linked {name} shader invalid: {e}{}", show()))?;
    }
    let before = harness::run_pair(&vs0, &fs0, scene, limits);
    let after = harness::run_pair(&vs1, &fs1, scene, limits);
    let compared = harness::compare(&before, &after, &report, options)
        .map_err(|e| format!("{e}{}", show()))?;
    // No step adds a component (a move adds one only where it frees one).
    let mut last = report.before.components;
    for (name, n) in &report.after_step {
        if n.components > last {
            return Err(format!(
                "the {name} step added components ({last} -> {}): {report:?}{}",
                n.components,
                show()
            ));
        }
        last = n.components;
    }
    Ok(PairStats { report, compared })
}
