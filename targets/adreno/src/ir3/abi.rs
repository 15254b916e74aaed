//! The driver side of an ir3 shader: where uniform buffers, driver
//! parameters and system values reach it, decided before selection.
//!
//! [`lower`] copies a generic shader and rewrites what the hardware does
//! not read by itself, recording in a [`ConstLayout`] what the driver must
//! provide:
//!
//! - **UBO ranges in the const file.** A `load_ubo` at a constant byte
//!   offset reads a const register when its UBO's range was pushed (the
//!   driver copies the range before the draw, as Mesa's "UBO ranges in the
//!   const file" do); it becomes a `load_uniform` of that word. Dynamic
//!   offsets, and ranges that do not fit the const file, stay `load_ubo`
//!   and are loaded with `ldc` (the rules file).
//! - **System values** by [`SOURCES`]: preloaded registers become meta
//!   inputs (the register allocator places them and the interface names
//!   the register, as Mesa's `regid`s do), driver parameters become
//!   uniforms, and the values the hardware does not give (the global
//!   invocation id, the instance index with its base) are computed.
//!
//! - **Float immediates in the const file.** Each distinct `f32`
//!   constant gets a const word the driver fills with its bits (Mesa's
//!   "immediates in the const file"): ALU sources read const registers
//!   but take only small integer immediates, so a float constant read from
//!   the const file saves the move that would put it in a register.
//!
//! - **Storage images in the IBO table.** Image `k` is IBO slot
//!   [`ConstLayout::image_ibo_base`]` + k`, after the storage buffers;
//!   its operations name the slot (`image=` becomes the slot number).
//!
//! The const file is laid out as the shader's own uniforms (push
//! constants, words `0..uniform_words`), then each used driver parameter,
//! then the UBO ranges, each range starting on a vec4, then the float
//! immediates while they fit, then (a6xx on) the words the shader's own
//! preamble stores ([`ConstLayout::preamble`]).
//!
//! ```
//! use lathe_adreno::ir3::{abi, target::Ir3Target, GpuModel};
//! use lathe_ir::GenericOp;
//!
//! let text = "shader vertex\nb0:\n  %0:u32 = const 20\n  %1:f32 = load_ubo binding=1 %0\n  %2:u32 = load_sysval sv=instance_index\n  store_output slot=0 comp=0 %1\n  store_output slot=1 comp=0 %2\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
//! let target = Ir3Target::new("a630".parse::<GpuModel>().unwrap()).unwrap();
//! let (lowered, layout) = abi::lower(&generic, &target).unwrap();
//! // The base instance parameter is c0.x; the range from byte 16 starts
//! // on the next vec4, c1.x, so the UBO word at byte 20 is c1.y.
//! assert_eq!(layout.ubo_ranges[0].binding, 1);
//! assert_eq!(layout.ubo_ranges[0].byte_offset, 16);
//! assert!(lathe_ir::print(&lowered).contains("load_uniform index=5"));
//! // The instance index is the preloaded instance id plus a parameter.
//! assert_eq!(layout.preloads[0].sysval, lathe_ir::Sysval::InstanceIndex);
//! assert_eq!(layout.params, vec![(abi::DriverParam::BaseInstance, 0)]);
//! ```

use std::collections::BTreeMap;

use lathe_ir::{
    Block, GenericOp, Inst, Interp, InterpLoc, InterpMode, Invocation, Op, Scalar, Shader, Stage,
    SysVals, Sysval, Type, Value,
};
use lathe_isa::select::SelectError;

use super::target::Ir3Target;

/// A byte range of a UBO that the driver copies into the const file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UboRange {
    pub binding: u8,
    /// First byte of the range in the buffer (a multiple of 16).
    pub byte_offset: u32,
    /// Length in 32-bit words (a multiple of 4).
    pub words: u32,
    /// The const word the range starts at (a multiple of 4: `c{n/4}.x`).
    pub const_word: u32,
}

/// A value the driver writes into the const file (Mesa's driver params).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DriverParam {
    /// The draw's first vertex (`firstVertex`/`vertexOffset`).
    BaseVertex,
    /// The draw's first instance.
    BaseInstance,
    /// The multiview view index.
    ViewIndex,
    /// Component K of the workgroup size.
    LocalSize(u8),
    /// Component K of the dispatch size in workgroups.
    NumWorkgroups(u8),
    /// The byte size of storage buffer N (`ssbo_size`; Mesa's a4xx/a5xx
    /// `ssbo_sizes` in the const file, which the driver fills from the
    /// bound descriptors; a6xx Mesa asks `resinfo.b`, which the spec does
    /// not model).
    SsboSize(u8),
}

/// A system value the hardware preloads into a register: meta input
/// `input` of the lowered shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preload {
    pub input: u32,
    /// The hardware's value (for `instance_index`, the instance id
    /// without the base, which is [`DriverParam::BaseInstance`]).
    pub sysval: Sysval,
    pub comp: u8,
}

/// A fragment input in the varying storage: the driver's varying
/// linker puts the producer's output `(slot, comp)` at component `inloc`
/// (Mesa's `inloc`), and `bary.f`/`flat.b` read it there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Varying {
    pub slot: u16,
    pub comp: u8,
    pub inloc: u32,
    pub interp: Interp,
    /// The type the shader reads it as.
    pub ty: Type,
    /// A system value the hardware writes into this varying instead of
    /// a producer's output (`point_coord`: the driver marks its
    /// components for point sprite replacement, as Mesa's freedreno and
    /// turnip drivers do for `VARYING_SLOT_PNTC`); `slot` is then
    /// meaningless.
    pub sysval: Option<Sysval>,
}

/// A barycentric pair (i, j) the hardware preloads into two consecutive
/// registers (meta input `input`, an `f32x2`) for one interpolation
/// (Mesa's `IJ_PERSP_PIXEL`, `IJ_LINEAR_CENTROID`, …; the interface
/// names the first register, the driver's `IJ_*` register id).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Barycentrics {
    pub input: u32,
    pub mode: InterpMode,
    pub loc: InterpLoc,
}

/// What the driver puts in the const file and the preloaded registers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConstLayout {
    /// The shader's own uniforms occupy const words below this.
    pub uniform_words: u32,
    /// Each used driver parameter and its const word.
    pub params: Vec<(DriverParam, u32)>,
    pub ubo_ranges: Vec<UboRange>,
    pub preloads: Vec<Preload>,
    /// Where each fragment input lives in the varying storage.
    pub varyings: Vec<Varying>,
    /// The barycentric pairs the fragment shader reads.
    pub barycentrics: Vec<Barycentrics>,
    /// Samples the hardware runs before the fragment shader starts
    /// ([`super::prefetch`]).
    pub prefetches: Vec<super::prefetch::Prefetch>,
    /// Float constants the shader reads from the const file: `(const
    /// word, bits)`, the same for every draw.
    pub immediates: Vec<(u32, u32)>,
    /// The IBO slot of storage image 0: storage buffer `b` is IBO slot
    /// `b` and image `k` slot `image_ibo_base + k`, images after the
    /// shader's storage buffers as Mesa numbers them on a6xx
    /// (`ir3_image_to_ibo`: the image index plus `num_ssbos`).
    pub image_ibo_base: u32,
    /// Constant tables the shader reads as a UBO the driver uploads
    /// ([`lathe_passes::constant_data`]; each element in a vec4 of its
    /// own, so `ldc` reads its word directly).
    pub constant_data: Option<lathe_passes::constant_data::ConstantData>,
    /// The const words the shader's preamble stores with `stc` and its
    /// main part reads (a6xx on: [`lathe_passes::preamble`]), from a vec4
    /// after everything above; the driver writes none of them.
    pub preamble: Option<lathe_passes::preamble::Hoisted>,
}

impl ConstLayout {
    /// The first const word after the uniforms, driver parameters, UBO
    /// ranges and float immediates: where the preamble's words may start
    /// (on the next vec4).
    pub fn end_word(&self) -> u32 {
        let params = self.params.iter().map(|&(_, w)| w + 1);
        let ranges = self.ubo_ranges.iter().map(|r| r.const_word + r.words);
        let immediates = self.immediates.iter().map(|&(w, _)| w + 1);
        params
            .chain(ranges)
            .chain(immediates)
            .fold(self.uniform_words, u32::max)
    }

    /// The const words `(word, bits)` a driver writes for an invocation:
    /// its uniforms, the driver parameters (the workgroup size is the
    /// dispatch's, `local_size`), the pushed UBO ranges and the float
    /// immediates.
    pub fn const_words(&self, inv: &Invocation, local_size: [u32; 3]) -> Vec<(u32, u32)> {
        let mut words: Vec<(u32, u32)> = (0..).zip(inv.uniforms.iter().copied()).collect();
        let sv = &inv.sysvals;
        for &(p, w) in &self.params {
            let bits = match p {
                DriverParam::BaseVertex => sv.base_vertex,
                DriverParam::BaseInstance => sv.base_instance,
                DriverParam::ViewIndex => sv.view_index,
                DriverParam::LocalSize(c) => local_size[c as usize % 3],
                DriverParam::NumWorkgroups(c) => sv.num_workgroups[c as usize % 3],
                // From the bound buffers: [`ConstLayout::ssbo_size_words`].
                DriverParam::SsboSize(_) => continue,
            };
            words.push((w, bits));
        }
        for r in &self.ubo_ranges {
            let ubo = inv.ubos.get(r.binding as usize);
            for k in 0..r.words {
                let word = ubo
                    .and_then(|u| u.get((r.byte_offset / 4 + k) as usize))
                    .copied()
                    .unwrap_or(0);
                words.push((r.const_word + k, word));
            }
        }
        words.extend_from_slice(&self.immediates);
        words
    }

    /// The const words `(word, bits)` of the storage-buffer sizes, for
    /// buffers of `ssbo_bytes[b]` bytes.
    pub fn ssbo_size_words(&self, ssbo_bytes: &[u32]) -> Vec<(u32, u32)> {
        self.params
            .iter()
            .filter_map(|&(p, w)| match p {
                DriverParam::SsboSize(b) => {
                    Some((w, ssbo_bytes.get(b as usize).copied().unwrap_or(0)))
                }
                _ => None,
            })
            .collect()
    }

    /// The preloaded registers of meta input `input` for system values
    /// `sv` (one per register of its group, in order), or `None` when
    /// `input` is no preload.
    pub fn preload_registers(&self, input: u32, sv: &SysVals) -> Option<Vec<u32>> {
        let p = self.preloads.iter().find(|p| p.input == input)?;
        Some(match p.sysval {
            // The instance id: its base is a driver parameter.
            Sysval::InstanceIndex => vec![sv.instance_index.wrapping_sub(sv.base_instance)],
            Sysval::FragCoord => hw_frag_coord(sv).to_vec(),
            Sysval::FrontFacing => vec![hw_front_face(sv.front_facing)],
            s => vec![sv.get(s, p.comp)],
        })
    }
}

/// Sub-pixel steps per pixel in the hardware's fragment position.
pub const FRAG_COORD_SUBPIXELS: u32 = 16;

/// The four registers the hardware preloads with the fragment position
/// (Mesa's `SYSTEM_VALUE_FRAG_COORD` input, `GRAS_CNTL.COORD_MASK`): x
/// and y unsigned in 1/16 pixel at the sample point (the pixel centre
/// without sample shading, so `16 * x + 8`; Mesa's ir3 `get_frag_coord`
/// converts them with `cov.u32f32` and multiplies by 1/16, adding no
/// half pixel), z and w as the floats `gl_FragCoord` has (Mesa reads
/// them unchanged: w is already 1/w_clip).
pub fn hw_frag_coord(sv: &SysVals) -> [u32; 4] {
    let [x, y, z, w] = sv.frag_coord;
    let fixed = |c: f32| (c * FRAG_COORD_SUBPIXELS as f32) as u32;
    [fixed(x), fixed(y), z.to_bits(), w.to_bits()]
}

/// The half register the hardware preloads with the facing (Mesa's
/// `SYSTEM_VALUE_FRONT_FACE`, read by ir3's `load_front_face` as
/// `cmps.s.eq face, 0`): 0 for a front face, -1 for a back face.
pub fn hw_front_face(front: bool) -> u32 {
    if front { 0 } else { 0xffff }
}

/// How a system value reaches an ir3 shader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// A register the hardware preloads.
    Preload,
    /// A const word the driver writes.
    Param(DriverParam),
    /// A preloaded register plus a driver parameter.
    PreloadPlus(DriverParam),
    /// `workgroup_id * local_size + local_invocation_id`.
    GlobalId,
    /// `x + size.x * (y + size.y * z)` of the local invocation id.
    LocalIndex,
    /// A fragment shader's position from its preloaded four-register
    /// group ([`hw_frag_coord`]).
    FragCoord,
    /// A fragment shader's facing from its preloaded half register
    /// ([`hw_front_face`]).
    FrontFace,
    /// A varying the hardware replaces with the point sprite coordinate
    /// (Mesa's `VARYING_SLOT_PNTC`, fetched with `bary.f` as any input).
    PointCoord,
}

/// The ir3 ABI for the integer system values (Mesa: the vertex and
/// instance ids and the compute local id and workgroup id are
/// preloaded registers the driver names with `VFD_CONTROL_1`'s
/// `REGID4VTX`/`REGID4INST` and `HLSQ_CS_CNTL_0`'s `LOCALIDREGID`/
/// `WGIDCONSTID`; the bases, the workgroup size and count and the view
/// index are `IR3_DP_*` driver parameters; the global invocation id and
/// the instance index are computed by NIR from the others). Fragment
/// system values: see [`Source::FragCoord`], [`Source::FrontFace`] and
/// [`Source::PointCoord`]; the others stay `unsupported:`.
pub const SOURCES: &[(Sysval, Source)] = &[
    (Sysval::VertexIndex, Source::Preload),
    (
        Sysval::InstanceIndex,
        Source::PreloadPlus(DriverParam::BaseInstance),
    ),
    (Sysval::BaseVertex, Source::Param(DriverParam::BaseVertex)),
    (
        Sysval::BaseInstance,
        Source::Param(DriverParam::BaseInstance),
    ),
    (Sysval::ViewIndex, Source::Param(DriverParam::ViewIndex)),
    (Sysval::LocalInvocationId, Source::Preload),
    (Sysval::WorkgroupId, Source::Preload),
    (
        Sysval::NumWorkgroups,
        Source::Param(DriverParam::NumWorkgroups(0)),
    ),
    (Sysval::GlobalInvocationId, Source::GlobalId),
    (Sysval::LocalInvocationIndex, Source::LocalIndex),
    (Sysval::FragCoord, Source::FragCoord),
    (Sysval::FrontFacing, Source::FrontFace),
    (Sysval::PointCoord, Source::PointCoord),
];

fn source(sv: Sysval) -> Option<Source> {
    SOURCES.iter().find(|(s, _)| *s == sv).map(|&(_, s)| s)
}

/// The parameter of component `comp` (the per-component parameters).
fn param_comp(p: DriverParam, comp: u8) -> DriverParam {
    match p {
        DriverParam::NumWorkgroups(_) => DriverParam::NumWorkgroups(comp),
        DriverParam::LocalSize(_) => DriverParam::LocalSize(comp),
        p => p,
    }
}

/// Copies `generic` with its UBO loads and system values rewritten for
/// `target`'s const file; the copy (in the same arena) and its layout.
pub fn lower<'a>(
    generic: &Shader<'a, GenericOp>,
    target: &Ir3Target,
) -> Result<(Shader<'a, GenericOp>, ConstLayout), SelectError> {
    let plan = Plan::new(generic, target)?;
    Lowering::run(generic, plan)
}

/// The const file layout, decided from a first look at the shader.
struct Plan {
    layout: ConstLayout,
    /// Meta inputs the shader had already (preloads are numbered after).
    first_preload: u32,
    /// The first varying component of each fragment input slot.
    inlocs: BTreeMap<u16, u32>,
    /// The first varying component of the point coordinate (after the
    /// slots').
    point_coord_inloc: u32,
}

impl Plan {
    fn new(g: &Shader<'_, GenericOp>, target: &Ir3Target) -> Result<Plan, SelectError> {
        let mut uniform_words = 0;
        let mut meta_inputs = 0;
        let mut params = Vec::new();
        let mut ubo: BTreeMap<u8, (u32, u32)> = BTreeMap::new();
        let mut floats: Vec<u32> = Vec::new();
        // Per fragment input slot, its components in use (up to the last).
        let mut inputs: BTreeMap<u16, u8> = BTreeMap::new();
        // Storage buffers (IBO slots 0..ssbos).
        let mut ssbos = 0;
        for (_, i) in g.insts_in_order() {
            let d = g.inst(i);
            match d.op {
                Op::Input { index } => meta_inputs = meta_inputs.max(index + 1),
                Op::Opcode(GenericOp::LoadInput { slot, comp, .. })
                    if g.stage == Stage::Fragment =>
                {
                    let c = inputs.entry(slot).or_insert(0);
                    *c = (*c).max(comp + 1);
                }
                Op::Opcode(GenericOp::LoadUniform { index }) => {
                    if d.address.is_some() {
                        return Err(SelectError::Unsupported(
                            "load_uniform with an address operand (the uniform array's extent is not known to lay out the const file)".into(),
                        ));
                    }
                    uniform_words = uniform_words.max(index + 1);
                }
                Op::Opcode(GenericOp::LoadUbo { binding }) => {
                    if let Some(off) = const_operand(g, d.args[0]) {
                        let e = ubo.entry(binding).or_insert((off, off));
                        e.0 = e.0.min(off);
                        e.1 = e.1.max(off);
                    }
                }
                Op::Opcode(GenericOp::Const { bits })
                    if d.result.map(|r| g.value_type(r)) == Some(Type::F32)
                        && !floats.contains(&bits) =>
                {
                    floats.push(bits);
                }
                Op::Opcode(GenericOp::SsboSize { binding }) => {
                    ssbos = ssbos.max(u32::from(binding) + 1);
                    if !params.contains(&DriverParam::SsboSize(binding)) {
                        params.push(DriverParam::SsboSize(binding));
                    }
                }
                Op::Opcode(
                    GenericOp::LoadSsbo { binding }
                    | GenericOp::StoreSsbo { binding }
                    | GenericOp::SsboAtomic { binding, .. },
                ) => ssbos = ssbos.max(u32::from(binding) + 1),
                Op::Opcode(GenericOp::LoadSysval { sysval, comp }) => {
                    let needed: Vec<DriverParam> = match source(sysval) {
                        Some(Source::Param(p) | Source::PreloadPlus(p)) => {
                            vec![param_comp(p, comp)]
                        }
                        // A declared workgroup size is a constant.
                        _ if g.workgroup_size.is_some() => Vec::new(),
                        Some(Source::GlobalId) => vec![DriverParam::LocalSize(comp)],
                        Some(Source::LocalIndex) => {
                            vec![DriverParam::LocalSize(0), DriverParam::LocalSize(1)]
                        }
                        _ => Vec::new(),
                    };
                    for p in needed {
                        if !params.contains(&p) {
                            params.push(p);
                        }
                    }
                }
                _ => {}
            }
        }
        params.sort();
        let limit = target.const_words();
        let mut next = uniform_words;
        let mut layout = ConstLayout {
            uniform_words,
            image_ibo_base: ssbos,
            ..ConstLayout::default()
        };
        for p in params {
            layout.params.push((p, next));
            next += 1;
        }
        for (binding, (lo, hi)) in ubo {
            let start = next.next_multiple_of(4);
            let byte_offset = lo / 16 * 16;
            let words = ((hi / 4 + 1) - byte_offset / 4).next_multiple_of(4);
            if start + words <= limit {
                layout.ubo_ranges.push(UboRange {
                    binding,
                    byte_offset,
                    words,
                    const_word: start,
                });
                next = start + words;
            }
        }
        if next > limit {
            return Err(SelectError::Unsupported(format!(
                "{next} const words of uniforms and driver parameters (the const file holds {limit})"
            )));
        }
        // Float immediates where room is left; the others stay moves.
        for bits in floats {
            if next < limit {
                layout.immediates.push((next, bits));
                next += 1;
            }
        }
        // Each slot's components are consecutive in the varying storage,
        // slots in order from component 0.
        let mut inloc = 0;
        let inlocs = inputs
            .into_iter()
            .map(|(slot, comps)| {
                let base = inloc;
                inloc += comps as u32;
                (slot, base)
            })
            .collect();
        // The point coordinate's two components follow.
        let point_coord_inloc = inloc;
        Ok(Plan {
            layout,
            first_preload: meta_inputs,
            inlocs,
            point_coord_inloc,
        })
    }

    fn param_word(&self, p: DriverParam) -> u32 {
        self.layout
            .params
            .iter()
            .find(|(q, _)| *q == p)
            .map_or(0, |&(_, w)| w)
    }

    /// The const word of UBO `binding`'s byte `off`, when pushed.
    fn ubo_word(&self, binding: u8, off: u32) -> Option<u32> {
        self.layout.ubo_ranges.iter().find_map(|r| {
            (r.binding == binding && off >= r.byte_offset && off / 4 < r.byte_offset / 4 + r.words)
                .then(|| r.const_word + off / 4 - r.byte_offset / 4)
        })
    }
}

/// The blocks that run one after another from the entry, in layout
/// order: each but the last ends in a jump to the next, which nothing
/// else reaches. Varyings fetched there stay where they are read (the
/// last fetch in the layout is then the last one run); the others move to
/// the entry.
pub(super) fn straight_prefix(g: &Shader<'_, GenericOp>) -> Vec<Block> {
    let cfg = lathe_ir::Cfg::compute(g);
    let layout = g.layout();
    let mut prefix: Vec<Block> = layout.first().copied().into_iter().collect();
    for pair in layout.windows(2) {
        let jumps_on = g
            .block_insts(pair[0])
            .last()
            .map(|&i| g.inst(i))
            .is_some_and(|d| d.op == Op::Jump && d.targets[..] == [pair[1]]);
        if !jumps_on || cfg.preds(pair[1]).len() != 1 {
            break;
        }
        prefix.push(pair[1]);
    }
    prefix
}

/// The storage image a generic op names.
fn image_of(op: GenericOp) -> Option<u8> {
    match op {
        GenericOp::ImageLoad { image, .. }
        | GenericOp::ImageStore { image, .. }
        | GenericOp::ImageAtomic { image, .. }
        | GenericOp::ImageSize { image, .. } => Some(image),
        _ => None,
    }
}

/// `op` naming its image's IBO slot (`base` + the image) instead.
fn ibo_slot(op: GenericOp, base: u32) -> Result<GenericOp, SelectError> {
    let image = image_of(op).unwrap_or(0);
    let slot = u8::try_from(base + u32::from(image)).map_err(|_| {
        SelectError::Unsupported(format!(
            "storage image {image} after {base} storage buffers (IBO slots above 255)"
        ))
    })?;
    Ok(match op {
        GenericOp::ImageLoad { shape, .. } => GenericOp::ImageLoad { image: slot, shape },
        GenericOp::ImageStore { shape, .. } => GenericOp::ImageStore { image: slot, shape },
        GenericOp::ImageAtomic { shape, op, .. } => GenericOp::ImageAtomic {
            image: slot,
            shape,
            op,
        },
        GenericOp::ImageSize { shape, .. } => GenericOp::ImageSize { image: slot, shape },
        op => op,
    })
}

/// The bits of `v` when a `const` defines it.
fn const_operand(g: &Shader<'_, GenericOp>, v: Value) -> Option<u32> {
    match g.inst(g.value_def(v)).op {
        Op::Opcode(GenericOp::Const { bits }) if bits % 4 == 0 => Some(bits),
        _ => None,
    }
}

struct Lowering<'a> {
    out: Shader<'a, GenericOp>,
    plan: Plan,
    /// New value of each old one.
    values: Vec<Option<Value>>,
    /// Preloaded registers, read at the head of the entry block (the
    /// hardware writes them before the first instruction).
    head: Vec<Inst>,
    /// The value of each preloaded `(sysval, comp)` so far.
    preloaded: Vec<(Sysval, u8, Value)>,
    /// The value of each preloaded barycentric pair so far, by input.
    pairs: Vec<(u32, Value)>,
    /// The value of each varying fetched so far.
    fetched: Vec<((u32, Interp), Value)>,
    /// The value of each `(sysval, comp)` computed at the head so far.
    computed: Vec<(Sysval, u8, Value)>,
}

impl<'a> Lowering<'a> {
    fn run(
        g: &Shader<'a, GenericOp>,
        plan: Plan,
    ) -> Result<(Shader<'a, GenericOp>, ConstLayout), SelectError> {
        let mut l = Lowering {
            out: Shader::with_capacity(g.arena(), g.stage, g.len(), g.layout().len()),
            plan,
            values: vec![None; g.value_capacity()],
            head: Vec::new(),
            preloaded: Vec::new(),
            pairs: Vec::new(),
            fetched: Vec::new(),
            computed: Vec::new(),
        };
        l.out.preserve_float_specials = g.preserve_float_specials;
        l.out.private_bytes = g.private_bytes;
        l.out.workgroup_size = g.workgroup_size;
        for a in g.arrays() {
            l.out.add_array(*a);
        }
        let mut blocks: Vec<Option<Block>> = vec![None; g.block_capacity()];
        for &b in g.layout() {
            blocks[b.index()] = Some(l.out.add_block());
        }
        let block = |b: Block| {
            blocks[b.index()]
                .ok_or_else(|| SelectError::Malformed(format!("b{} is not laid out", b.index())))
        };
        let straight = straight_prefix(g);
        // Copies keep the old operands until every value has its new name
        // (phis and blocks laid out after their users read forward).
        let mut copies: Vec<(Inst, Inst)> = Vec::new();
        for &gb in g.layout() {
            let nb = block(gb)?;
            for &i in g.block_insts(gb) {
                let d = g.inst(i);
                let ty = d.result.map(|r| g.value_type(r));
                let new = match (d.op, ty) {
                    (Op::Opcode(GenericOp::LoadUbo { binding }), Some(ty)) => {
                        const_operand(g, d.args[0])
                            .and_then(|off| l.plan.ubo_word(binding, off))
                            .map(|w| l.uniform(nb, w, ty))
                    }
                    (Op::Opcode(GenericOp::LoadSysval { sysval, comp }), Some(ty)) => {
                        let at = straight.contains(&gb).then_some(nb);
                        l.sysval(nb, at, sysval, comp, ty)?
                    }
                    (Op::Opcode(GenericOp::Const { bits }), Some(ty)) if ty == Type::F32 => {
                        let word = l.plan.layout.immediates.iter().find(|&&(_, b)| b == bits);
                        word.map(|&(w, _)| w).map(|w| l.uniform(nb, w, ty))
                    }
                    (Op::Opcode(GenericOp::SsboSize { binding }), Some(ty)) => {
                        Some(l.param(nb, DriverParam::SsboSize(binding), ty))
                    }

                    (Op::Opcode(GenericOp::LoadInput { slot, comp, interp }), Some(ty))
                        if g.stage == Stage::Fragment =>
                    {
                        let at = straight.contains(&gb).then_some(nb);
                        Some(l.varying(at, slot, comp, interp, ty)?)
                    }
                    // Vertex attributes are preloaded registers.
                    (Op::Opcode(GenericOp::LoadInput { .. }), Some(ty)) => {
                        let i = l.out.create_inst(d.op, &[], &[], None, Some(ty));
                        l.head.push(i);
                        l.out.inst(i).result
                    }
                    _ => None,
                };
                match new {
                    Some(v) => {
                        if let Some(r) = d.result {
                            l.values[r.index()] = Some(v);
                        }
                    }
                    None => {
                        let targets: Vec<Block> = d
                            .targets
                            .iter()
                            .map(|&t| block(t))
                            .collect::<Result<_, _>>()?;
                        let op = match d.op {
                            Op::Opcode(op) if image_of(op).is_some() => {
                                Op::Opcode(ibo_slot(op, l.plan.layout.image_ibo_base)?)
                            }
                            op => op,
                        };
                        let n = l
                            .out
                            .append_inst(nb, op, &d.args[..], &targets, d.address, ty);
                        if let (Some(r), Some(v)) = (d.result, l.out.inst(n).result) {
                            l.values[r.index()] = Some(v);
                        }
                        if let Some(s) = d.second_result {
                            let v = l.out.add_second_result(n, g.value_type(s));
                            l.values[s.index()] = Some(v);
                        }
                        copies.push((i, n));
                    }
                }
            }
        }
        if let Some(&entry) = l.out.layout().first() {
            let mut insts = std::mem::take(&mut l.head);
            insts.extend_from_slice(l.out.block_insts(entry));
            l.out.set_block_insts(entry, &insts);
        }
        for (i, n) in copies {
            let d = g.inst(i);
            let args: Vec<Value> = d
                .args
                .iter()
                .map(|&v| l.value(v))
                .collect::<Result<_, _>>()?;
            l.out.set_args(n, &args);
            l.out.inst_mut(n).address = d.address.map(|a| l.value(a)).transpose()?;
        }
        Ok((l.out, l.plan.layout))
    }

    fn value(&self, v: Value) -> Result<Value, SelectError> {
        self.values
            .get(v.index())
            .copied()
            .flatten()
            .ok_or_else(|| {
                SelectError::Malformed(format!("%{} is used but never defined", v.index()))
            })
    }

    fn uniform(&mut self, b: Block, index: u32, ty: Type) -> Value {
        let op = Op::Opcode(GenericOp::LoadUniform { index });
        self.result(b, op, &[], ty)
    }

    fn result(&mut self, b: Block, op: Op<GenericOp>, args: &[Value], ty: Type) -> Value {
        let i = self.out.append_inst(b, op, args, &[], None, Some(ty));
        self.out.inst(i).result.expect("created with a result")
    }

    /// The next meta input index after the shader's own and the preloads
    /// so far.
    fn next_input(&self) -> u32 {
        let l = &self.plan.layout;
        self.plan.first_preload + (l.preloads.len() + l.barycentrics.len()) as u32
    }

    /// The preloaded barycentric pair for `interp` (an `f32x2` meta input
    /// at the head of the entry block).
    fn barycentrics(&mut self, interp: Interp) -> Value {
        let layout = &self.plan.layout;
        let found = layout
            .barycentrics
            .iter()
            .find(|b| (b.mode, b.loc) == (interp.mode, interp.loc))
            .map(|b| b.input);
        let input = match found {
            Some(input) => {
                if let Some(&(_, v)) = self.pairs.iter().find(|(k, _)| *k == input) {
                    return v;
                }
                input
            }
            None => {
                let input = self.next_input();
                self.plan.layout.barycentrics.push(Barycentrics {
                    input,
                    mode: interp.mode,
                    loc: interp.loc,
                });
                input
            }
        };
        let ty = Type::vector(Scalar::F32, 2);
        let i = self
            .out
            .create_inst(Op::Input { index: input }, &[], &[], None, Some(ty));
        self.head.push(i);
        let v = self.out.inst(i).result.expect("created with a result");
        self.pairs.push((input, v));
        v
    }

    /// A fragment input: its varying component read once, in block `at`
    /// where it was read when that block is in the [`straight_prefix`],
    /// else at the head of the entry block (as Mesa moves varying fetches
    /// out of control flow: none may follow the last one's `(ei)`).
    fn varying(
        &mut self,
        at: Option<Block>,
        slot: u16,
        comp: u8,
        interp: Interp,
        ty: Type,
    ) -> Result<Value, SelectError> {
        let inloc = self.plan.inlocs.get(&slot).copied().ok_or_else(|| {
            SelectError::Malformed(format!("input slot {slot} has no varying location"))
        })? + comp as u32;
        // Centre and sample locations are one for a flat input.
        let interp = if interp.mode == InterpMode::Flat {
            Interp::FLAT
        } else {
            interp
        };
        let varying = Varying {
            slot,
            comp,
            inloc,
            interp,
            ty,
            sysval: None,
        };
        Ok(self.fetch(at, varying))
    }

    /// Component `comp` of the point sprite coordinate: a varying after
    /// the inputs' that the driver has the hardware replace, fetched at
    /// the pixel centre ([`Source::PointCoord`]).
    fn point_coord(&mut self, at: Option<Block>, comp: u8, ty: Type) -> Value {
        let varying = Varying {
            slot: 0,
            comp,
            inloc: self.plan.point_coord_inloc + comp as u32,
            interp: Interp::SMOOTH,
            ty,
            sysval: Some(Sysval::PointCoord),
        };
        self.fetch(at, varying)
    }

    /// Fetches `v` (recorded in the layout) with `bary.f` or `flat.b`
    /// (see [`Self::varying`] for where).
    fn fetch(&mut self, at: Option<Block>, v: Varying) -> Value {
        let (inloc, interp, ty) = (v.inloc, v.interp, v.ty);
        if let Some(&(_, value)) = self
            .fetched
            .iter()
            .find(|(k, value)| *k == (inloc, interp) && self.out.value_type(*value) == ty)
        {
            return value;
        }
        let layout = &mut self.plan.layout;
        if !layout.varyings.iter().any(|w| w.inloc == inloc) {
            layout.varyings.push(v);
        }
        let args: Vec<Value> = if interp.mode == InterpMode::Flat {
            Vec::new()
        } else {
            vec![self.barycentrics(interp)]
        };
        let op = Op::Opcode(GenericOp::LoadVarying { inloc, interp });
        let value = match at {
            Some(b) => self.result(b, op, &args, ty),
            None => self.head_result(op, &args, ty),
        };
        self.fetched.push(((inloc, interp), value));
        value
    }

    /// A new instruction at the head of the entry block (before the
    /// shader's own, so its result dominates every use).
    fn head_result(&mut self, op: Op<GenericOp>, args: &[Value], ty: Type) -> Value {
        let i = self.out.create_inst(op, args, &[], None, Some(ty));
        self.head.push(i);
        self.out.inst(i).result.expect("created with a result")
    }

    /// Component `comp` of the fragment position, computed once at the
    /// head of the entry block from the preloaded group
    /// ([`hw_frag_coord`]): x and y are `cov.u32f32` times 1/16, z and w
    /// the registers' floats.
    fn frag_coord(&mut self, comp: u8, ty: Type) -> Result<Value, SelectError> {
        if ty != Type::F32 || comp > 3 {
            return Err(SelectError::Unsupported(format!(
                "frag_coord component {comp} as {ty}"
            )));
        }
        if let Some(&(_, _, v)) = self
            .computed
            .iter()
            .find(|(s, c, _)| *s == Sysval::FragCoord && *c == comp)
        {
            return Ok(v);
        }
        let group = self.preload(Sysval::FragCoord, 0, Type::vector(Scalar::U32, 4));
        let raw = self.head_result(Op::Split { lane: comp }, &[group], Type::U32);
        let v = if comp < 2 {
            let steps = self.head_result(Op::Opcode(GenericOp::Cvt), &[raw], Type::F32);
            let bits = (1.0 / FRAG_COORD_SUBPIXELS as f32).to_bits();
            let scale = self.head_result(Op::Opcode(GenericOp::Const { bits }), &[], Type::F32);
            self.head_result(Op::Opcode(GenericOp::FMul), &[steps, scale], Type::F32)
        } else {
            // The bits are the float: a copy between types keeps them.
            self.head_result(
                Op::Opcode(GenericOp::Mov {
                    abs: false,
                    neg: false,
                }),
                &[raw],
                Type::F32,
            )
        };
        self.computed.push((Sysval::FragCoord, comp, v));
        Ok(v)
    }

    /// The facing as a boolean, from the preloaded half register
    /// ([`hw_front_face`]: 0 is front).
    fn front_facing(&mut self, ty: Type) -> Result<Value, SelectError> {
        if ty != Type::BOOL {
            return Err(SelectError::Unsupported(format!("front_facing as {ty}")));
        }
        if let Some(&(_, _, v)) = self
            .computed
            .iter()
            .find(|(s, _, _)| *s == Sysval::FrontFacing)
        {
            return Ok(v);
        }
        let face = self.preload(Sysval::FrontFacing, 0, Type::U16);
        let zero = self.head_result(Op::Opcode(GenericOp::Const { bits: 0 }), &[], Type::U16);
        let v = self.head_result(Op::Opcode(GenericOp::IEq), &[face, zero], Type::BOOL);
        self.computed.push((Sysval::FrontFacing, 0, v));
        Ok(v)
    }

    /// Preloaded `sysval` component `comp`: one meta input per pair, at
    /// the head of the entry block.
    fn preload(&mut self, sysval: Sysval, comp: u8, ty: Type) -> Value {
        if let Some(&(_, _, v)) = self
            .preloaded
            .iter()
            .find(|(s, c, v)| *s == sysval && *c == comp && self.out.value_type(*v) == ty)
        {
            return v;
        }
        let found = self
            .plan
            .layout
            .preloads
            .iter()
            .find(|p| p.sysval == sysval && p.comp == comp)
            .map(|p| p.input);
        let input = match found {
            Some(input) => input,
            None => {
                let input = self.next_input();
                self.plan.layout.preloads.push(Preload {
                    input,
                    sysval,
                    comp,
                });
                input
            }
        };
        let i = self
            .out
            .create_inst(Op::Input { index: input }, &[], &[], None, Some(ty));
        self.head.push(i);
        let v = self.out.inst(i).result.expect("created with a result");
        self.preloaded.push((sysval, comp, v));
        v
    }

    fn param(&mut self, b: Block, p: DriverParam, ty: Type) -> Value {
        let w = self.plan.param_word(p);
        self.uniform(b, w, ty)
    }

    /// Component `comp` of the workgroup size: the declared constant, else
    /// the driver parameter.
    fn local_size(&mut self, b: Block, comp: u8, ty: Type) -> Value {
        match self.out.workgroup_size {
            Some(size) => {
                let bits = size[usize::from(comp) % 3];
                self.op(b, GenericOp::Const { bits }, &[], ty)
            }
            None => self.param(b, DriverParam::LocalSize(comp), ty),
        }
    }

    fn op(&mut self, b: Block, op: GenericOp, args: &[Value], ty: Type) -> Value {
        self.result(b, Op::Opcode(op), args, ty)
    }

    /// The value of `sysval` component `comp`, or `None` to keep it;
    /// `at` is where a varying read in `b` is fetched ([`Self::varying`]).
    fn sysval(
        &mut self,
        b: Block,
        at: Option<Block>,
        sysval: Sysval,
        comp: u8,
        ty: Type,
    ) -> Result<Option<Value>, SelectError> {
        let Some(source) = source(sysval) else {
            return Ok(None);
        };
        let fragment = self.out.stage == Stage::Fragment;
        let v = match source {
            Source::FragCoord | Source::FrontFace | Source::PointCoord if !fragment => {
                return Ok(None);
            }
            Source::FragCoord => self.frag_coord(comp, ty)?,
            Source::FrontFace => self.front_facing(ty)?,
            Source::PointCoord => self.point_coord(at, comp, ty),
            Source::Preload => self.preload(sysval, comp, ty),
            Source::Param(p) => self.param(b, param_comp(p, comp), ty),
            Source::PreloadPlus(p) => {
                let id = self.preload(sysval, comp, ty);
                let base = self.param(b, param_comp(p, comp), ty);
                self.op(b, GenericOp::IAdd, &[id, base], ty)
            }
            Source::GlobalId => {
                let wg = self.preload(Sysval::WorkgroupId, comp, ty);
                let size = self.local_size(b, comp, ty);
                let local = self.preload(Sysval::LocalInvocationId, comp, ty);
                let base = self.op(b, GenericOp::IMul, &[wg, size], ty);
                self.op(b, GenericOp::IAdd, &[base, local], ty)
            }
            Source::LocalIndex => {
                let id: Vec<Value> = (0..3)
                    .map(|c| self.preload(Sysval::LocalInvocationId, c, ty))
                    .collect();
                let sx = self.local_size(b, 0, ty);
                let sy = self.local_size(b, 1, ty);
                let zy = self.op(b, GenericOp::IMul, &[id[2], sy], ty);
                let row = self.op(b, GenericOp::IAdd, &[zy, id[1]], ty);
                let rows = self.op(b, GenericOp::IMul, &[row, sx], ty);
                self.op(b, GenericOp::IAdd, &[rows, id[0]], ty)
            }
        };
        Ok(Some(v))
    }
}
