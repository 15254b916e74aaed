//! Texture prefetch: samples the hardware runs before a fragment shader
//! starts (the spec's `fs_prefetch_*` facts; Mesa's `sampler_prefetch`).
//!
//! [`prefetch`] looks at a shader [`super::abi::lower`] has lowered: a
//! `sample` of a 2D texture at implicit LOD, run on every path from the
//! entry, whose coordinate is two consecutive varying components
//! interpolated with the perspective pixel-centre barycentrics and read
//! unchanged, and whose texture and sampler fit the prefetch state, becomes
//! a meta input: the register allocator places it like a preloaded
//! register, and [`ConstLayout::prefetches`] tells the driver what to
//! sample into it. The shader waits for it with `(sy)` (legalisation), and
//! `--verify` performs the prefetch from this description before the run
//! ([`super::verify`]), so a wrong description is a mismatch.
//!
//! ```
//! use lathe_adreno::ir3::{abi, prefetch, target::Ir3Target, GpuModel};
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = load_input slot=0 comp=1 interp=smooth\n  %2:f32x2 = collect %0, %1\n  %3:f32x4 = sample texture=1 sampler=2 %2\n  %4:f32 = split lane=0 %3\n  store_output slot=0 comp=0 %4\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let generic = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! let target = Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap();
//! let (mut lowered, mut layout) = abi::lower(&generic, &target).unwrap();
//! assert!(prefetch::prefetch(&mut lowered, &mut layout, &target.prefetch_limits()));
//! let p = layout.prefetches[0];
//! assert_eq!((p.inloc, p.texture, p.sampler, p.wrmask), (0, 1, 2, 0xf));
//! assert!(!lathe_ir::print(&lowered).contains("sample"));
//! ```

use lathe_ir::{
    Block, Dim, GenericOp, Inst, Interp, InterpLoc, InterpMode, LodMode, Op, Scalar, Shader, Stage,
    Type, Value,
};

use super::abi::ConstLayout;

/// What a model's prefetch can do ([`super::target::Ir3Target::prefetch_limits`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Prefetches per shader (0: none).
    pub count: u32,
    pub texture_max: u32,
    pub sampler_max: u32,
    /// The largest destination register number (register * 4 + component).
    pub dst_max: u32,
    /// The register number the pixel-centre barycentrics are preloaded in
    /// when the shader reads them.
    pub ij_reg: u32,
}

/// One sample the hardware runs before the shader (Mesa's
/// `ir3_sampler_prefetch`): texture `texture` through sampler `sampler`
/// at varying components `inloc` and `inloc + 1` interpolated with the
/// perspective pixel-centre barycentrics, the components `wrmask` selects
/// written to consecutive registers from where the interface puts meta
/// input `input` (the destination register).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prefetch {
    pub input: u32,
    pub inloc: u32,
    pub texture: u8,
    pub sampler: u8,
    pub wrmask: u8,
    /// Half-precision results.
    pub half: bool,
}

/// Turns the samples `limits` allows into prefetches (see the module
/// docs); true if any was.
pub fn prefetch(s: &mut Shader<'_, GenericOp>, layout: &mut ConstLayout, limits: &Limits) -> bool {
    if s.stage != Stage::Fragment || limits.count == 0 {
        return false;
    }
    let Some(pixel) = layout
        .barycentrics
        .iter()
        .find(|b| (b.mode, b.loc) == (InterpMode::Smooth, InterpLoc::Center))
        .map(|b| b.input)
    else {
        return false;
    };
    let Some(entry) = s.entry() else { return false };
    let mut next_input = next_meta_input(s, layout);
    let mut found: Vec<(Inst, u32)> = Vec::new();
    for b in super::abi::straight_prefix(s) {
        for &i in s.block_insts(b) {
            if layout.prefetches.len() >= limits.count as usize {
                break;
            }
            if let Some(p) = candidate(s, i, pixel, limits) {
                layout.prefetches.push(Prefetch {
                    input: next_input,
                    ..p
                });
                found.push((i, next_input));
                next_input += 1;
            }
        }
    }
    for &(i, input) in &found {
        let block = block_of(s, i);
        let ty = s.inst(i).result.map(|r| s.value_type(r));
        let load = s.create_inst(Op::Input { index: input }, &[], &[], None, ty);
        s.transfer_result(i, load);
        if let Some(b) = block {
            s.retain_insts(b, |k, _| k != i);
        }
        // With the preloaded registers at the head of the entry block.
        let mut insts = vec![load];
        insts.extend_from_slice(s.block_insts(entry));
        s.set_block_insts(entry, &insts);
    }
    if !found.is_empty() {
        // The barycentrics the prefetches use go first: the allocator
        // gives the first value the first register ([`Limits::ij_reg`];
        // emission checks it got there).
        let head: Vec<Inst> = s.block_insts(entry).to_vec();
        let (pair, rest): (Vec<Inst>, Vec<Inst>) = head
            .into_iter()
            .partition(|&k| s.inst(k).op == Op::Input { index: pixel });
        let mut insts = pair;
        insts.extend(rest);
        s.set_block_insts(entry, &insts);
    }
    !found.is_empty()
}

/// The prefetch `i` can be (its input still unset), if any.
fn candidate(s: &Shader<'_, GenericOp>, i: Inst, pixel: u32, limits: &Limits) -> Option<Prefetch> {
    let d = s.inst(i);
    let Op::Opcode(GenericOp::Sample {
        texture,
        sampler,
        shape,
        lod: LodMode::Implicit,
        offset: false,
        compare: false,
    }) = d.op
    else {
        return None;
    };
    let r = d.result?;
    let simple = shape.dim == Dim::D2 && !shape.array && !shape.ms;
    if !simple
        || s.value_type(r) != Type::vector(Scalar::F32, 4)
        || u32::from(texture) > limits.texture_max
        || u32::from(sampler) > limits.sampler_max
        || d.args.len() != 1
    {
        return None;
    }
    let coord = s.inst(s.value_def(d.args[0]));
    if coord.op != Op::Collect || coord.args.len() != 2 {
        return None;
    }
    let first = pixel_varying(s, coord.args[0], pixel)?;
    let second = pixel_varying(s, coord.args[1], pixel)?;
    (second == first + 1).then_some(Prefetch {
        input: 0,
        inloc: first,
        texture,
        sampler,
        wrmask: 0xf,
        half: false,
    })
}

/// The varying component `v` is, read unchanged as an f32 at the
/// perspective pixel-centre barycentrics (meta input `pixel`).
fn pixel_varying(s: &Shader<'_, GenericOp>, v: Value, pixel: u32) -> Option<u32> {
    let d = s.inst(s.value_def(v));
    let Op::Opcode(GenericOp::LoadVarying { inloc, interp }) = d.op else {
        return None;
    };
    let ij = s.inst(s.value_def(*d.args.first()?));
    (interp == Interp::SMOOTH
        && s.value_type(v) == Type::F32
        && ij.op == Op::Input { index: pixel })
    .then_some(inloc)
}

/// One past the highest meta input index the shader or its layout uses.
fn next_meta_input(s: &Shader<'_, GenericOp>, layout: &ConstLayout) -> u32 {
    let in_shader = s.insts_in_order().filter_map(|(_, i)| match s.inst(i).op {
        Op::Input { index } => Some(index + 1),
        _ => None,
    });
    let in_layout = layout
        .preloads
        .iter()
        .map(|p| p.input + 1)
        .chain(layout.barycentrics.iter().map(|b| b.input + 1))
        .chain(layout.prefetches.iter().map(|p| p.input + 1));
    in_shader.chain(in_layout).max().unwrap_or(0)
}

fn block_of(s: &Shader<'_, GenericOp>, i: Inst) -> Option<Block> {
    s.insts_in_order().find(|&(_, k)| k == i).map(|(b, _)| b)
}
