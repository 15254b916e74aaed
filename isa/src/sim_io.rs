//! The simulator's window on the rest of the GPU: instructions that load
//! and store memory, fetch varyings, sample textures, wait at barriers or
//! export outputs call a [`GpuIo`] the caller implements (a test harness
//! feeds the same inputs to the IR interpreter).
//!
//! The spec writes such instructions as calls of the I/O effects of the
//! semantics language (`do load(global, DST, [SIZE], 0 as u32, ADDR,
//! [4]);`, see `docs/isa-language.md`, "I/O effects"); the generated code
//! calls the `Machine::io_*` methods below, which move the values between
//! register groups and the trait. Results land in registers at once; the
//! timing model marks them pending on the instruction's sync kind (ir3
//! `(sy)`/`(ss)`), so a read before the matching wait is a hazard.
//!
//! Nothing here knows an instruction set. [`Harness`] is a simple
//! memory-backed implementation for tests and `lathe sim`.

use std::collections::{BTreeMap, HashMap};
use std::fmt;

use crate::sim::{F16, Loc, Machine, Operand, SimError};

/// Memory spaces of loads, stores and atomics.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Space {
    /// Global memory (SSBOs, raw addresses).
    Global,
    /// Workgroup-shared memory.
    Shared,
    /// Per-thread scratch memory.
    Private,
    /// Uniform buffers (the binding is the buffer index).
    Constant,
    /// Image / buffer-texture storage (the binding is the image index).
    Image,
}

impl Space {
    /// In the order the generated code indexes them.
    pub const ALL: [Space; 5] = [
        Space::Global,
        Space::Shared,
        Space::Private,
        Space::Constant,
        Space::Image,
    ];
    /// The keyword of the semantics language.
    pub fn name(self) -> &'static str {
        match self {
            Space::Global => "global",
            Space::Shared => "shared",
            Space::Private => "private",
            Space::Constant => "constant",
            Space::Image => "image",
        }
    }
}

/// One memory element: `bytes` (1, 2, 4 or 8) at byte `addr` of buffer
/// `binding` in `space`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    pub space: Space,
    pub binding: u32,
    pub addr: u64,
    pub bytes: u32,
}

/// How a varying is read.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Interp {
    /// The provoking vertex's value.
    Flat,
    /// Interpolated at barycentric coordinates (i, j): the harness
    /// defines the plane (see [`Harness::varyings`]).
    Barycentric { i: f32, j: f32 },
    /// Interpolated at the thread's own sample position, which the
    /// hardware keeps (Valhall's varying loads name no coordinates): the
    /// I/O side knows it ([`Harness::positions`]).
    Implicit,
}

/// Messages to fixed-function units that are neither memory, varyings
/// nor textures (the `message` effect).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgKind {
    /// Vertex attribute `a` for vertex `b`, instance `c`: up to four
    /// components (attribute descriptors are the I/O side's).
    Attribute,
    /// Alpha test: the new coverage mask for coverage `a`, alpha `b` (f32
    /// bits) and the ATEST datum `c` (the I/O side's alpha state).
    Atest,
    /// Fixed-function blending of the colour read from the input group
    /// into render target `a` under coverage `b`.
    Blend,
    /// The fragment's window position (x, y, z, 1/w as f32) from
    /// component `a`.
    FragCoord,
    /// The point-sprite coordinate (x, y as f32).
    PointCoord,
    /// The 64-bit address (low, high word) and the conversion word of
    /// the texel at 16-bit coordinates `a` (x, y) and `b` (z or sample,
    /// layer) of image descriptor `c` (see [`GpuIo::texel_address`]).
    TexelAddress,
    /// The input group stored at 64-bit address `a` converted as
    /// conversion word `b` says (see [`GpuIo::convert_store`]).
    ConvertStore,
    /// The texel at 16-bit coordinates `a`, `b` (as [`MsgKind::TexelAddress`])
    /// of image descriptor `c`, up to four 32-bit components.
    TexelLoad,
    /// The components of the texel at 32-bit coordinates `a` (x low, y
    /// high word) and `b` (the depth slice of a 3D image, else the layer)
    /// of storage image `c` (see [`GpuIo::image_load`]).
    ImageLoad,
    /// The input group stored at the texel `a`, `b` of storage image `c`
    /// (as [`MsgKind::ImageLoad`]; see [`GpuIo::image_store`]).
    ImageStore,
    /// The read-modify-write of component 0 of the texel `a`, `b` of
    /// storage image `c` (as [`MsgKind::ImageLoad`]) with the first input
    /// register (then the comparison value for `cmpxchg`): the old value
    /// comes back (see [`GpuIo::image_atomic`]).
    ImageAtomic(AtomicOp),
    /// Width, height and depth (a 3D image) or layer count of storage
    /// image `c` (see [`GpuIo::image_size`]).
    ImageSize,
    /// The 64-bit address (low, high word) of structure `a` of the
    /// buffer that descriptor `b` names (see [`GpuIo::buffer_address`]).
    BufferAddress,
}

impl MsgKind {
    pub const ALL: [MsgKind; 25] = [
        MsgKind::Attribute,
        MsgKind::Atest,
        MsgKind::Blend,
        MsgKind::FragCoord,
        MsgKind::PointCoord,
        MsgKind::TexelAddress,
        MsgKind::ConvertStore,
        MsgKind::TexelLoad,
        MsgKind::ImageLoad,
        MsgKind::ImageStore,
        MsgKind::ImageSize,
        MsgKind::ImageAtomic(AtomicOp::Add),
        MsgKind::ImageAtomic(AtomicOp::Sub),
        MsgKind::ImageAtomic(AtomicOp::Xchg),
        MsgKind::ImageAtomic(AtomicOp::Inc),
        MsgKind::ImageAtomic(AtomicOp::Dec),
        MsgKind::ImageAtomic(AtomicOp::CmpXchg),
        MsgKind::ImageAtomic(AtomicOp::MinU),
        MsgKind::ImageAtomic(AtomicOp::MaxU),
        MsgKind::ImageAtomic(AtomicOp::MinS),
        MsgKind::ImageAtomic(AtomicOp::MaxS),
        MsgKind::ImageAtomic(AtomicOp::And),
        MsgKind::ImageAtomic(AtomicOp::Or),
        MsgKind::ImageAtomic(AtomicOp::Xor),
        MsgKind::BufferAddress,
    ];
    /// The keyword of the semantics language.
    pub fn name(self) -> &'static str {
        match self {
            MsgKind::Attribute => "attribute",
            MsgKind::Atest => "atest",
            MsgKind::Blend => "blend",
            MsgKind::FragCoord => "frag_coord",
            MsgKind::PointCoord => "point_coord",
            MsgKind::TexelAddress => "texel_address",
            MsgKind::ConvertStore => "convert_store",
            MsgKind::TexelLoad => "texel_load",
            MsgKind::ImageLoad => "image_load",
            MsgKind::ImageStore => "image_store",
            MsgKind::ImageSize => "image_size",
            MsgKind::ImageAtomic(op) => match op {
                AtomicOp::Add => "image_atomic_add",
                AtomicOp::Sub => "image_atomic_sub",
                AtomicOp::Xchg => "image_atomic_xchg",
                AtomicOp::Inc => "image_atomic_inc",
                AtomicOp::Dec => "image_atomic_dec",
                AtomicOp::CmpXchg => "image_atomic_cmpxchg",
                AtomicOp::MinU => "image_atomic_min_u",
                AtomicOp::MaxU => "image_atomic_max_u",
                AtomicOp::MinS => "image_atomic_min_s",
                AtomicOp::MaxS => "image_atomic_max_s",
                AtomicOp::And => "image_atomic_and",
                AtomicOp::Or => "image_atomic_or",
                AtomicOp::Xor => "image_atomic_xor",
            },
            MsgKind::BufferAddress => "buffer_address",
        }
    }
}

/// Read-modify-write operations; the result register gets the old value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Add,
    Sub,
    Xchg,
    /// `old >= data ? 0 : old + 1`.
    Inc,
    /// `old == 0 || old > data ? data : old - 1`.
    Dec,
    /// `old == compare ? data : old`.
    CmpXchg,
    MinU,
    MaxU,
    MinS,
    MaxS,
    And,
    Or,
    Xor,
}

impl AtomicOp {
    pub const ALL: [AtomicOp; 13] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Xchg,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::CmpXchg,
        AtomicOp::MinU,
        AtomicOp::MaxU,
        AtomicOp::MinS,
        AtomicOp::MaxS,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
    ];
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "add",
            AtomicOp::Sub => "sub",
            AtomicOp::Xchg => "xchg",
            AtomicOp::Inc => "inc",
            AtomicOp::Dec => "dec",
            AtomicOp::CmpXchg => "cmpxchg",
            AtomicOp::MinU => "min_u",
            AtomicOp::MaxU => "max_u",
            AtomicOp::MinS => "min_s",
            AtomicOp::MaxS => "max_s",
            AtomicOp::And => "and",
            AtomicOp::Or => "or",
            AtomicOp::Xor => "xor",
        }
    }

    /// The new 32-bit memory value (the reference meaning of each op).
    pub fn apply(self, old: u32, data: u32, compare: u32) -> u32 {
        match self {
            AtomicOp::Add => old.wrapping_add(data),
            AtomicOp::Sub => old.wrapping_sub(data),
            AtomicOp::Xchg => data,
            AtomicOp::Inc => {
                if old >= data {
                    0
                } else {
                    old + 1
                }
            }
            AtomicOp::Dec => {
                if old == 0 || old > data {
                    data
                } else {
                    old - 1
                }
            }
            AtomicOp::CmpXchg => {
                if old == compare {
                    data
                } else {
                    old
                }
            }
            AtomicOp::MinU => old.min(data),
            AtomicOp::MaxU => old.max(data),
            AtomicOp::MinS => (old as i32).min(data as i32) as u32,
            AtomicOp::MaxS => (old as i32).max(data as i32) as u32,
            AtomicOp::And => old & data,
            AtomicOp::Or => old | data,
            AtomicOp::Xor => old ^ data,
        }
    }
}

/// Texture unit operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TexOp {
    /// Filtered sample at normalized coordinates (implicit LOD).
    Sample,
    /// Sample with a LOD bias (first extra value, f32).
    SampleBias,
    /// Sample at an explicit LOD (first extra value, f32).
    SampleLod,
    /// Texel fetch at integer coordinates (first extra value: LOD, u32).
    Fetch,
    /// Gather one channel (0..=3) of the four texels of a bilinear
    /// footprint.
    Gather(u8),
    /// Size of a LOD (first coordinate, u32): width, height, depth.
    Size,
    /// Image info: x the channel data type, y the channel order, z the
    /// number of mip levels, w the number of samples (ir3's `getinfo`).
    Levels,
    /// [`TexOp::Sample`] of a cube addressed on a face, for ISAs whose
    /// shaders project the direction themselves: coordinates `s`, `t`
    /// (f32 in [0, 1] on the face), the face (u32, 0..=5 as
    /// [`crate::sim_texture`]'s table), then the reference and the cube's
    /// layer when present.
    SampleFace,
    /// [`TexOp::SampleBias`] addressed as [`TexOp::SampleFace`].
    SampleFaceBias,
    /// [`TexOp::SampleLod`] addressed as [`TexOp::SampleFace`].
    SampleFaceLod,
    /// Sample with explicit gradients (the extra values: the d/dx then
    /// d/dy vectors, as the instruction lays them out).
    SampleGrad,
    /// Texel fetch from a multisampled texture at integer coordinates
    /// (first extra value: the sample index, u32).
    FetchSample,
}

impl TexOp {
    pub const ALL: [TexOp; 15] = [
        TexOp::Sample,
        TexOp::SampleBias,
        TexOp::SampleLod,
        TexOp::Fetch,
        TexOp::Gather(0),
        TexOp::Gather(1),
        TexOp::Gather(2),
        TexOp::Gather(3),
        TexOp::Size,
        TexOp::Levels,
        TexOp::SampleFace,
        TexOp::SampleFaceBias,
        TexOp::SampleFaceLod,
        TexOp::SampleGrad,
        TexOp::FetchSample,
    ];
    pub fn name(self) -> &'static str {
        match self {
            TexOp::Sample => "sample",
            TexOp::SampleBias => "sample_bias",
            TexOp::SampleLod => "sample_lod",
            TexOp::Fetch => "fetch",
            TexOp::Gather(0) => "gather_r",
            TexOp::Gather(1) => "gather_g",
            TexOp::Gather(2) => "gather_b",
            TexOp::Gather(_) => "gather_a",
            TexOp::Size => "size",
            TexOp::Levels => "levels",
            TexOp::SampleFace => "sample_face",
            TexOp::SampleFaceBias => "sample_face_bias",
            TexOp::SampleFaceLod => "sample_face_lod",
            TexOp::SampleGrad => "sample_grad",
            TexOp::FetchSample => "fetch_sample",
        }
    }
}

/// Interpolation keywords of the `varying` effect.
pub const INTERP_MODES: [&str; 2] = ["flat", "barycentric"];

/// One thread's texture request. Register values are raw bits (floats
/// as f32 bits: half sources are widened).
#[derive(Clone, Debug, PartialEq)]
pub struct TexRequest {
    pub op: TexOp,
    pub texture: u32,
    pub sampler: u32,
    /// Coordinates (x, y, z / array layer, …).
    pub coords: Vec<u32>,
    /// LOD, bias, offsets, …: what the op says.
    pub extra: Vec<u32>,
    /// The destination is half precision: return f16 / 16-bit values.
    pub half: bool,
}

/// A failure of the I/O side (an out-of-bounds access, a texture that is
/// not bound, an operation the implementation does not model).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct IoError(pub String);

impl IoError {
    pub fn unsupported(what: &str) -> IoError {
        IoError(format!("unsupported: {what}"))
    }
}

/// What a simulator needs from the rest of the GPU. Every method has a
/// default that fails with `unsupported: …`, so an implementation
/// provides only what its programs use. Calls are made lane by lane in
/// lane order (atomics are therefore deterministic).
pub trait GpuIo: std::any::Any + fmt::Debug {
    /// Reads one element (zero-extended to 32 bits; 8-byte elements give
    /// the low word, see [`Access`]).
    fn load(&mut self, lane: usize, at: Access) -> Result<u32, IoError> {
        let _ = (lane, at);
        Err(IoError::unsupported("memory loads"))
    }
    /// Writes one element (the low `at.bytes` bytes of `bits`).
    fn store(&mut self, lane: usize, at: Access, bits: u32) -> Result<(), IoError> {
        let _ = (lane, at, bits);
        Err(IoError::unsupported("memory stores"))
    }
    /// Atomic read-modify-write of a 32-bit word; returns the old value.
    fn atomic(
        &mut self,
        lane: usize,
        at: Access,
        op: AtomicOp,
        data: u32,
        compare: u32,
    ) -> Result<u32, IoError> {
        let _ = (lane, at, op, data, compare);
        Err(IoError::unsupported("atomics"))
    }
    /// Varying component `slot` (f32 bits when interpolated).
    fn varying(&mut self, lane: usize, slot: u32, interp: Interp) -> Result<u32, IoError> {
        let _ = (lane, slot, interp);
        Err(IoError::unsupported("varyings"))
    }
    /// A texture operation; four result components.
    fn texture(&mut self, lane: usize, req: &TexRequest) -> Result<[u32; 4], IoError> {
        let _ = (lane, req);
        Err(IoError::unsupported("textures"))
    }
    /// The thread reached a barrier.
    fn barrier(&mut self, lane: usize) -> Result<(), IoError> {
        let _ = lane;
        Ok(())
    }
    /// The thread emits a vertex (geometry shaders).
    fn emit_vertex(&mut self, lane: usize) -> Result<(), IoError> {
        let _ = lane;
        Err(IoError::unsupported("vertex emission"))
    }
    /// The thread ends the current primitive (geometry shaders).
    fn end_primitive(&mut self, lane: usize) -> Result<(), IoError> {
        let _ = lane;
        Err(IoError::unsupported("primitive ends"))
    }
    /// Component `comp` of output `target` (a render target, a varying
    /// slot of the next stage; the target's meaning is the spec's).
    fn output(&mut self, lane: usize, target: u32, comp: u32, bits: u32) -> Result<(), IoError> {
        let _ = (lane, target, comp, bits);
        Err(IoError::unsupported("outputs"))
    }
    /// The four components of attribute `index` for `vertex` / `instance`.
    fn attribute(
        &mut self,
        lane: usize,
        index: u32,
        vertex: u32,
        instance: u32,
    ) -> Result<[u32; 4], IoError> {
        let _ = (lane, index, vertex, instance);
        Err(IoError::unsupported("vertex attributes"))
    }
    /// Alpha test: the coverage mask after testing `alpha` (`datum` is
    /// the driver's ATEST parameter).
    fn atest(
        &mut self,
        lane: usize,
        coverage: u32,
        alpha: f32,
        datum: u32,
    ) -> Result<u32, IoError> {
        let _ = (lane, coverage, alpha, datum);
        Err(IoError::unsupported("alpha testing"))
    }
    /// Fixed-function blending of `rgba` (register bits) into render
    /// target `target` for the samples of `coverage`.
    fn blend(
        &mut self,
        lane: usize,
        target: u32,
        coverage: u32,
        rgba: &[u32],
    ) -> Result<(), IoError> {
        let _ = (lane, target, coverage, rgba);
        Err(IoError::unsupported("blending"))
    }
    /// The fragment's window position: x, y, z and 1/w as f32 bits.
    fn frag_coord(&mut self, lane: usize) -> Result<[u32; 4], IoError> {
        let _ = lane;
        Err(IoError::unsupported("fragment positions"))
    }
    /// The point-sprite coordinate: x and y as f32 bits.
    fn point_coord(&mut self, lane: usize) -> Result<[u32; 2], IoError> {
        let _ = lane;
        Err(IoError::unsupported("point coordinates"))
    }
    /// Where texel `(x, y, z or sample, layer)` of image `descriptor`
    /// lives (an ISA's resource-table encoding): its 64-bit address (low,
    /// high word) and a conversion word that [`GpuIo::convert_store`]
    /// reads back. What the word holds is the I/O side's (the hardware's
    /// is not documented).
    fn texel_address(
        &mut self,
        lane: usize,
        coords: [u32; 4],
        descriptor: u32,
    ) -> Result<[u32; 3], IoError> {
        let _ = (lane, coords, descriptor);
        Err(IoError::unsupported("image texel addresses"))
    }
    /// Texel `(x, y, z or sample, layer)` of image `descriptor` (as
    /// [`GpuIo::texel_address`]) as 32-bit register values.
    fn texel_load(
        &mut self,
        lane: usize,
        coords: [u32; 4],
        descriptor: u32,
    ) -> Result<[u32; 4], IoError> {
        let _ = (lane, coords, descriptor);
        Err(IoError::unsupported("image loads"))
    }
    /// The components of texel `coords` (x, y, then the depth slice of a
    /// 3D image or the layer of any other) of storage image `image` (an
    /// ISA's image slot) as 32-bit register values, as many as its format
    /// has.
    fn image_load(
        &mut self,
        lane: usize,
        coords: [u32; 3],
        image: u32,
    ) -> Result<Vec<u32>, IoError> {
        let _ = (lane, coords, image);
        Err(IoError::unsupported("storage image loads"))
    }
    /// Stores `data` (32-bit register values) at texel `coords` of storage
    /// image `image` (as [`GpuIo::image_load`]); the components past the
    /// format's are dropped.
    fn image_store(
        &mut self,
        lane: usize,
        coords: [u32; 3],
        image: u32,
        data: &[u32],
    ) -> Result<(), IoError> {
        let _ = (lane, coords, image, data);
        Err(IoError::unsupported("storage image stores"))
    }
    /// Atomic read-modify-write of component 0 of texel `coords` of
    /// storage image `image` (as [`GpuIo::image_load`]); returns the old
    /// value.
    #[allow(clippy::too_many_arguments)]
    fn image_atomic(
        &mut self,
        lane: usize,
        coords: [u32; 3],
        image: u32,
        op: AtomicOp,
        data: u32,
        compare: u32,
    ) -> Result<u32, IoError> {
        let _ = (lane, coords, image, op, data, compare);
        Err(IoError::unsupported("storage image atomics"))
    }
    /// Width, height and the depth of a 3D image or the layer count of
    /// any other (cube faces count as layers) of storage image `image`.
    fn image_size(&mut self, lane: usize, image: u32) -> Result<[u32; 3], IoError> {
        let _ = (lane, image);
        Err(IoError::unsupported("storage image sizes"))
    }
    /// Stores `data` (32-bit register values) at `address` converted to
    /// the format conversion word `conversion` names.
    fn convert_store(
        &mut self,
        lane: usize,
        address: u64,
        conversion: u32,
        data: &[u32],
    ) -> Result<(), IoError> {
        let _ = (lane, address, conversion, data);
        Err(IoError::unsupported("converting stores"))
    }
    /// The 64-bit address (low, high word) of structure `structure` of
    /// the buffer `descriptor` names (an ISA's resource-table encoding).
    /// How structures are laid out is the I/O side's.
    fn buffer_address(
        &mut self,
        lane: usize,
        descriptor: u32,
        structure: u32,
    ) -> Result<[u32; 2], IoError> {
        let _ = (lane, descriptor, structure);
        Err(IoError::unsupported("buffer addresses"))
    }
}

/// A vertex attribute of the [`Harness`]: one element (four 32-bit
/// components) per vertex, or per instance.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attribute {
    pub per_instance: bool,
    pub elements: Vec<[u32; 4]>,
}

/// What a [`Texture`]'s descriptor says its texels are addressed by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TexKind {
    #[default]
    D2,
    D3,
    Cube,
}

/// A texture of the [`Harness`]: one level of RGBA f32 texels, row-major,
/// slice after slice (`depth`), layer after layer (cube faces are six
/// layers per cube: face `f` of cube `c` is layer `6 * c + f`, faces
/// `+x -x +y -y +z -z`). How coordinates address it is
/// [`crate::sim_texture`]'s model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Texture {
    pub width: u32,
    pub height: u32,
    pub texels: Vec<[f32; 4]>,
    /// Slices of a 3D texture (0 counts as 1).
    pub depth: u32,
    /// Array layers (cubes of a cube array; 0 counts as 1).
    pub layers: u32,
    pub kind: TexKind,
    /// The descriptor is arrayed: the last coordinate is the layer.
    pub array: bool,
    /// Samples per texel of a multisampled texture, stored sample fastest
    /// (0 counts as 1).
    pub samples: u32,
}

impl Texture {
    /// The harness's view of an interpreter texture: its level 0 and the
    /// descriptor's kind. The interpreter's texture does not record
    /// whether it is arrayed; the verifier's array textures have more
    /// than one layer (more than six faces for cubes), so that is taken
    /// as arrayed.
    pub fn level0_of(t: &lathe_ir::texture::Texture) -> Texture {
        use lathe_ir::Dim;
        let level = t.levels.first();
        let (kind, faces) = match t.dim {
            Dim::D3 => (TexKind::D3, 1),
            Dim::Cube => (TexKind::Cube, 6),
            Dim::D1 | Dim::D2 => (TexKind::D2, 1),
        };
        Texture {
            width: level.map_or(0, |l| l.width),
            height: level.map_or(0, |l| l.height),
            depth: level.map_or(1, |l| l.depth),
            texels: level.map_or(Vec::new(), |l| l.texels.clone()),
            layers: (t.layers / faces).max(1),
            kind,
            array: t.layers > faces,
            samples: t.samples,
        }
    }

    fn texel(&self, x: i64, y: i64) -> [f32; 4] {
        self.texel_at(x, y, 0, 0)
    }

    /// Texel `(x, y, z)` of store layer `layer`, each clamped to the edge
    /// (its first sample).
    fn texel_at(&self, x: i64, y: i64, z: i64, layer: u32) -> [f32; 4] {
        self.sample_at(x, y, z, layer, 0)
    }

    /// Sample `sample` (clamped to the samples there are) of texel
    /// `(x, y, z)` of store layer `layer`, each clamped to the edge.
    fn sample_at(&self, x: i64, y: i64, z: i64, layer: u32, sample: u32) -> [f32; 4] {
        if self.width == 0 || self.height == 0 {
            return [0.0; 4];
        }
        let depth = self.depth.max(1) as usize;
        let x = x.clamp(0, self.width as i64 - 1) as usize;
        let y = y.clamp(0, self.height as i64 - 1) as usize;
        let z = z.clamp(0, depth as i64 - 1) as usize;
        let (w, h) = (self.width as usize, self.height as usize);
        let samples = self.samples.max(1) as usize;
        let sample = (sample as usize).min(samples - 1);
        self.texels
            .get((((layer as usize * depth + z) * h + y) * w + x) * samples + sample)
            .copied()
            .unwrap_or_default()
    }
}

/// One thread's view of a varying in [`Harness::lane_varyings`]: a flat
/// read gives `flat`; barycentric (i, j) gives `at + i * di + j * dj`
/// (f32, evaluated left to right).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LaneVarying {
    pub flat: u32,
    pub at: f32,
    pub di: f32,
    pub dj: f32,
}

/// A memory-backed [`GpuIo`] for tests: sparse byte memory per (space,
/// binding) — private memory per thread —, reading 0 where nothing was
/// stored; varyings as plane equations; single-level textures sampled
/// nearest with clamp to edge; outputs and barriers recorded.
#[derive(Clone, Debug, Default)]
pub struct Harness {
    memory: HashMap<(Space, u32, usize, u64), u8>,
    /// Per varying slot, the values at the three vertices (p0, p1, p2):
    /// flat reads give p0, barycentric (i, j) gives
    /// `p0 + i * (p1 - p0) + j * (p2 - p0)` as f32 bits.
    pub varyings: Vec<[f32; 3]>,
    /// Flat varyings given as raw bits per slot (overriding `varyings`).
    pub flat_bits: BTreeMap<u32, u32>,
    /// Per `(lane, slot)`, the varying as that thread sees it (overriding
    /// `varyings` and `flat_bits`): for a verifier whose inputs differ per
    /// thread, which no one plane of a primitive can give.
    pub lane_varyings: BTreeMap<(usize, u32), LaneVarying>,
    pub textures: Vec<Texture>,
    /// `(lane, target, comp)` → bits.
    pub outputs: BTreeMap<(usize, u32, u32), u32>,
    /// Barrier arrivals per lane.
    pub barriers: BTreeMap<usize, u32>,
    /// Per lane, the vertex count of each primitive ended so far, then
    /// of the open one.
    pub primitives: BTreeMap<usize, Vec<u32>>,
    /// Per lane, the barycentric (i, j) of the thread's sample position
    /// for [`Interp::Implicit`] (a missing lane is at (0, 0)).
    pub positions: BTreeMap<usize, (f32, f32)>,
    /// Vertex attributes by index.
    pub attributes: BTreeMap<u32, Attribute>,
    /// Alpha test reference: ATEST keeps the coverage where alpha >= it
    /// and clears it elsewhere (NaN fails); `None` passes everything.
    pub alpha_ref: Option<f32>,
    /// Coverage masks of every blend, `(lane, target)` → coverage; the
    /// colour of a covered blend lands in [`Harness::outputs`].
    pub blends: BTreeMap<(usize, u32), u32>,
    /// Storage images by slot, texels of 32-bit words as the IR's images
    /// hold them (their format is the driver's: the verifier's images
    /// store each component as a word). A 3D image (depth above 1) is
    /// addressed by slice, any other by layer.
    pub images: BTreeMap<u32, lathe_ir::Image>,
    /// Every memory atomic in the order it was performed, for a verifier
    /// to check the order and have its reference follow it.
    pub atomics: Vec<AtomicRecord>,
}

/// One atomic [`Harness`] performed: the lane, the word, the value it
/// returned and the value it left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtomicRecord {
    pub lane: usize,
    pub at: Access,
    pub old: u32,
    pub new: u32,
}

impl Harness {
    /// Storage image `slot` and the index of its texel `[x, y, z]` (z the
    /// slice of a 3D image, else the layer; sample 0), or why there is
    /// none.
    fn image_texel(
        &mut self,
        slot: u32,
        coords: [u32; 3],
    ) -> Result<(&mut lathe_ir::Image, usize), IoError> {
        let [x, y, z] = coords;
        self.image_texel_inside(slot, coords)?.ok_or_else(|| {
            IoError(format!(
                "texel ({x}, {y}, {z}) is outside storage image {slot}"
            ))
        })
    }

    /// As [`Harness::image_texel`], `None` for a texel outside the image.
    fn image_texel_inside(
        &mut self,
        slot: u32,
        [x, y, z]: [u32; 3],
    ) -> Result<Option<(&mut lathe_ir::Image, usize)>, IoError> {
        let image = self
            .images
            .get_mut(&slot)
            .ok_or_else(|| IoError(format!("no storage image in slot {slot}")))?;
        let depth = image.depth.max(1);
        let (slice, layer) = if depth > 1 { (z, 0) } else { (0, z) };
        let inside =
            x < image.width && y < image.height && slice < depth && layer < image.layers.max(1);
        if !inside {
            return Ok(None);
        }
        let texel = ((u64::from(layer) * u64::from(depth) + u64::from(slice))
            * u64::from(image.height)
            + u64::from(y))
            * u64::from(image.width)
            + u64::from(x);
        let index = (texel * u64::from(image.samples.max(1))) as usize;
        if index >= image.texels.len() {
            return Err(IoError(format!(
                "storage image {slot} has {} texels, texel {index} wanted",
                image.texels.len()
            )));
        }
        Ok(Some((image, index)))
    }

    fn key(at: Access, lane: usize, byte: u64) -> (Space, u32, usize, u64) {
        let lane = if at.space == Space::Private { lane } else { 0 };
        (at.space, at.binding, lane, at.addr.wrapping_add(byte))
    }

    /// Stores little-endian `bytes` at `addr` (private memory: thread 0's).
    pub fn write_bytes(&mut self, space: Space, binding: u32, addr: u64, bytes: &[u8]) {
        for (i, b) in bytes.iter().enumerate() {
            self.memory
                .insert((space, binding, 0, addr.wrapping_add(i as u64)), *b);
        }
    }

    /// Stores 32-bit little-endian words from `addr`.
    pub fn write_words(&mut self, space: Space, binding: u32, addr: u64, words: &[u32]) {
        for (i, w) in words.iter().enumerate() {
            self.write_bytes(space, binding, addr + 4 * i as u64, &w.to_le_bytes());
        }
    }

    /// The 32-bit word at `addr` (0 where nothing was stored; private
    /// memory of `lane`).
    pub fn word(&self, space: Space, binding: u32, lane: usize, addr: u64) -> u32 {
        let at = Access {
            space,
            binding,
            addr,
            bytes: 4,
        };
        self.read(at, lane)
    }

    fn read(&self, at: Access, lane: usize) -> u32 {
        (0..at.bytes.min(4) as u64).fold(0u32, |v, i| {
            let b = self
                .memory
                .get(&Harness::key(at, lane, i))
                .copied()
                .unwrap_or(0);
            v | (b as u32) << (8 * i)
        })
    }
}

fn check_size(at: Access) -> Result<(), IoError> {
    if matches!(at.bytes, 1 | 2 | 4 | 8) {
        Ok(())
    } else {
        Err(IoError(format!(
            "a {}-byte memory element (1, 2, 4 or 8)",
            at.bytes
        )))
    }
}

impl GpuIo for Harness {
    fn load(&mut self, lane: usize, at: Access) -> Result<u32, IoError> {
        check_size(at)?;
        Ok(self.read(at, lane))
    }
    fn store(&mut self, lane: usize, at: Access, bits: u32) -> Result<(), IoError> {
        check_size(at)?;
        for i in 0..at.bytes.min(4) as u64 {
            self.memory
                .insert(Harness::key(at, lane, i), (bits >> (8 * i)) as u8);
        }
        Ok(())
    }
    fn atomic(
        &mut self,
        lane: usize,
        at: Access,
        op: AtomicOp,
        data: u32,
        compare: u32,
    ) -> Result<u32, IoError> {
        let at = Access { bytes: 4, ..at };
        let old = self.read(at, lane);
        let new = op.apply(old, data, compare);
        self.store(lane, at, new)?;
        self.atomics.push(AtomicRecord { lane, at, old, new });
        Ok(old)
    }
    fn varying(&mut self, lane: usize, slot: u32, interp: Interp) -> Result<u32, IoError> {
        if let Some(v) = self.lane_varyings.get(&(lane, slot)) {
            let (i, j) = match interp {
                Interp::Flat => return Ok(v.flat),
                Interp::Barycentric { i, j } => (i, j),
                Interp::Implicit => self.positions.get(&lane).copied().unwrap_or((0.0, 0.0)),
            };
            return Ok((v.at + i * v.di + j * v.dj).to_bits());
        }
        if let (Interp::Flat, Some(b)) = (interp, self.flat_bits.get(&slot)) {
            return Ok(*b);
        }
        let [p0, p1, p2] = *self
            .varyings
            .get(slot as usize)
            .ok_or_else(|| IoError(format!("varying slot {slot} is not set")))?;
        let (i, j) = match interp {
            Interp::Flat => return Ok(p0.to_bits()),
            Interp::Barycentric { i, j } => (i, j),
            Interp::Implicit => self.positions.get(&lane).copied().unwrap_or((0.0, 0.0)),
        };
        Ok((p0 + i * (p1 - p0) + j * (p2 - p0)).to_bits())
    }
    fn attribute(
        &mut self,
        _lane: usize,
        index: u32,
        vertex: u32,
        instance: u32,
    ) -> Result<[u32; 4], IoError> {
        let a = self
            .attributes
            .get(&index)
            .ok_or_else(|| IoError(format!("attribute {index} is not set")))?;
        let element = if a.per_instance { instance } else { vertex };
        a.elements.get(element as usize).copied().ok_or_else(|| {
            IoError(format!(
                "attribute {index} has no element {element} ({} given)",
                a.elements.len()
            ))
        })
    }
    fn atest(
        &mut self,
        _lane: usize,
        coverage: u32,
        alpha: f32,
        _datum: u32,
    ) -> Result<u32, IoError> {
        // NaN compares with nothing, so it fails like a smaller alpha.
        let passes = self
            .alpha_ref
            .is_none_or(|r| alpha.partial_cmp(&r).is_some_and(|o| o.is_ge()));
        Ok(if passes { coverage } else { 0 })
    }
    fn blend(
        &mut self,
        lane: usize,
        target: u32,
        coverage: u32,
        rgba: &[u32],
    ) -> Result<(), IoError> {
        self.blends.insert((lane, target), coverage);
        if coverage != 0 {
            for (c, bits) in rgba.iter().enumerate() {
                self.outputs.insert((lane, target, c as u32), *bits);
            }
        }
        Ok(())
    }
    fn texture(&mut self, _lane: usize, req: &TexRequest) -> Result<[u32; 4], IoError> {
        let t = self
            .textures
            .get(req.texture as usize)
            .ok_or_else(|| IoError(format!("texture {} is not bound", req.texture)))?;
        let coord = |k: usize| req.coords.get(k).copied().unwrap_or(0);
        let float = |v: f32| {
            if req.half {
                F16::from_f32(v).0 as u32
            } else {
                v.to_bits()
            }
        };
        let texel = |x: f32, y: f32| {
            // Nearest texel of normalized coordinates.
            let x = (x * t.width as f32).floor() as i64;
            let y = (y * t.height as f32).floor() as i64;
            t.texel(x, y)
        };
        let c = |k: usize| f32::from_bits(coord(k));
        let layered = t.kind != TexKind::D2 || t.array;
        let compared = |texel: [f32; 4], reference: Option<f32>| match reference {
            Some(r) => [if r <= texel[0] { 1.0 } else { 0.0 }, 0.0, 0.0, 1.0],
            None => texel,
        };
        Ok(match req.op {
            TexOp::Sample | TexOp::SampleBias | TexOp::SampleLod | TexOp::SampleGrad
                if layered || req.coords.len() > 2 =>
            {
                let values: Vec<f32> = req.coords.iter().map(|&b| f32::from_bits(b)).collect();
                let at = crate::sim_texture::split(t, &values).map_err(IoError)?;
                let f = crate::sim_texture::footprint(t, &at);
                let [x, y, z] = f.pos.map(|p| p.floor() as i64);
                compared(t.texel_at(x, y, z, f.layer), at.reference).map(float)
            }
            TexOp::SampleFace | TexOp::SampleFaceBias | TexOp::SampleFaceLod => {
                let rest: Vec<f32> = req
                    .coords
                    .iter()
                    .skip(3)
                    .map(|&b| f32::from_bits(b))
                    .collect();
                let (f, reference) =
                    crate::sim_texture::face_footprint(t, [c(0), c(1)], coord(2), &rest)
                        .map_err(IoError)?;
                let [x, y, z] = f.pos.map(|p| p.floor() as i64);
                compared(t.texel_at(x, y, z, f.layer), reference).map(float)
            }
            TexOp::Sample | TexOp::SampleBias | TexOp::SampleLod | TexOp::SampleGrad => {
                texel(c(0), c(1)).map(float)
            }
            TexOp::Fetch => {
                // Integer x, y, then z (3D) or the layer (arrays), then
                // the sample of a multisampled texture.
                let i = |k: usize| coord(k) as i32 as i64;
                let (z, layer) = match (t.kind, t.array) {
                    (TexKind::D3, _) => (i(2), 0),
                    (_, true) => (0, i(2).clamp(0, t.layers.max(1) as i64 - 1) as u32),
                    _ => (0, 0),
                };
                let sample = if t.samples > 1 { coord(3) } else { 0 };
                t.sample_at(i(0), i(1), z, layer, sample).map(float)
            }
            TexOp::FetchSample => {
                let i = |k: usize| coord(k) as i32 as i64;
                let sample = req.extra.first().copied().unwrap_or(0);
                t.sample_at(i(0), i(1), 0, 0, sample).map(float)
            }
            TexOp::Gather(ch) => {
                // The 2×2 footprint around the sample point, in the
                // order (i0, j1), (i1, j1), (i1, j0), (i0, j0).
                let x = (c(0) * t.width as f32 - 0.5).floor() as i64;
                let y = (c(1) * t.height as f32 - 0.5).floor() as i64;
                let ch = ch as usize;
                let layer = if t.array {
                    crate::sim_texture::layer_index(c(2), t.layers.max(1))
                } else {
                    0
                };
                // Saturating: a huge coordinate floors to i64::MAX and the
                // texel lookup clamps to the edge anyway.
                let (x1, y1) = (x.saturating_add(1), y.saturating_add(1));
                [(x, y1), (x1, y1), (x1, y), (x, y)]
                    .map(|(x, y)| float(t.texel_at(x, y, 0, layer)[ch]))
            }
            // Width, height, depth, then the array size in w (cubes of
            // a cube array), as Mesa's ir3 reads getsize.
            TexOp::Size => [
                t.width,
                t.height,
                t.depth.max(1),
                if t.array { t.layers.max(1) } else { 0 },
            ],
            // One level, one sample; the format fields are not modelled.
            TexOp::Levels => [0, 0, 1, 1],
        })
    }
    fn image_load(
        &mut self,
        _lane: usize,
        coords: [u32; 3],
        image: u32,
    ) -> Result<Vec<u32>, IoError> {
        // Out of bounds the value is undefined without robust image
        // access (the interpreter does not compare it): zeros.
        let channels = |img: &lathe_ir::Image| usize::from(img.channels).min(4);
        match self.image_texel_inside(image, coords)? {
            Some((img, k)) => Ok(img.texels[k][..channels(img)].to_vec()),
            None => {
                let img = &self.images[&image];
                Ok(vec![0; channels(img)])
            }
        }
    }
    fn image_store(
        &mut self,
        _lane: usize,
        coords: [u32; 3],
        image: u32,
        data: &[u32],
    ) -> Result<(), IoError> {
        let (img, k) = self.image_texel(image, coords)?;
        let n = usize::from(img.channels).min(4).min(data.len());
        img.texels[k][..n].copy_from_slice(&data[..n]);
        Ok(())
    }
    fn image_atomic(
        &mut self,
        _lane: usize,
        coords: [u32; 3],
        image: u32,
        op: AtomicOp,
        data: u32,
        compare: u32,
    ) -> Result<u32, IoError> {
        let (img, k) = self.image_texel(image, coords)?;
        let old = img.texels[k][0];
        img.texels[k][0] = op.apply(old, data, compare);
        Ok(old)
    }
    fn image_size(&mut self, _lane: usize, image: u32) -> Result<[u32; 3], IoError> {
        let img = self
            .images
            .get(&image)
            .ok_or_else(|| IoError(format!("no storage image in slot {image}")))?;
        let depth = img.depth.max(1);
        Ok([
            img.width,
            img.height,
            if depth > 1 { depth } else { img.layers.max(1) },
        ])
    }
    fn barrier(&mut self, lane: usize) -> Result<(), IoError> {
        *self.barriers.entry(lane).or_default() += 1;
        Ok(())
    }
    fn output(&mut self, lane: usize, target: u32, comp: u32, bits: u32) -> Result<(), IoError> {
        self.outputs.insert((lane, target, comp), bits);
        Ok(())
    }
    fn emit_vertex(&mut self, lane: usize) -> Result<(), IoError> {
        let p = self.primitives.entry(lane).or_insert_with(|| vec![0]);
        *p.last_mut().expect("an open primitive") += 1;
        Ok(())
    }
    fn end_primitive(&mut self, lane: usize) -> Result<(), IoError> {
        self.primitives
            .entry(lane)
            .or_insert_with(|| vec![0])
            .push(0);
        Ok(())
    }
}

/// Component `k` of the register group that starts at `op`.
fn member(op: &Operand, k: u32) -> Option<Operand> {
    let loc = match op.loc {
        Loc::Reg { file, index } => Loc::Reg {
            file,
            index: index.checked_add(k)?,
        },
        Loc::Rel {
            file,
            addr_file,
            addr_index,
            offset,
        } => Loc::Rel {
            file,
            addr_file,
            addr_index,
            offset: offset.checked_add(k as i32)?,
        },
        _ => return None,
    };
    Some(Operand { loc, ..*op })
}

/// The width mask of one component of an operand's view.
fn view_mask(op: &Operand) -> u32 {
    if op.half { 0xffff } else { u32::MAX }
}

impl Machine {
    fn io_err(pc: usize, e: IoError) -> SimError {
        SimError::Io { pc, message: e.0 }
    }

    /// Member `k` of the register group that starts at `op` (the operand
    /// `k` registers further, same modifiers).
    pub fn group_member(&self, op: &Operand, k: u32, pc: usize) -> Result<Operand, SimError> {
        member(op, k).ok_or_else(|| SimError::Operand {
            pc,
            message: "a register group starts at an immediate".into(),
        })
    }

    /// Raw bits of component `k` of the group at `op` for `lane`.
    pub fn group_get(
        &self,
        op: &Operand,
        k: u32,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<u32, SimError> {
        let m = self.group_member(op, k, pc)?;
        let (file, index) = self.resolve(&m, rep, lane, pc)?.expect("a register");
        Ok(self
            .get(file, m.half, index, lane)
            .expect("resolved in range"))
    }

    /// Sets component `k` of the group at `op` (masked to the view).
    pub fn group_set(
        &mut self,
        op: &Operand,
        k: u32,
        rep: u32,
        lane: usize,
        pc: usize,
        bits: u32,
    ) -> Result<(), SimError> {
        let m = self.group_member(op, k, pc)?;
        let (file, index) = self.resolve(&m, rep, lane, pc)?.expect("a register");
        self.set(file, m.half, index, lane, bits & view_mask(op));
        Ok(())
    }

    /// Timing check of the `count` components of a group read.
    pub fn check_group(
        &self,
        op: &Operand,
        count: u32,
        rep: u32,
        pc: usize,
        needed: impl Fn(u16, bool) -> Option<u32>,
    ) -> Result<(), SimError> {
        for k in 0..count {
            self.check_read(&self.group_member(op, k, pc)?, rep, pc, &needed)?;
        }
        Ok(())
    }

    /// Marks the `count` components of a group written by `pc`.
    pub fn stamp_group(
        &mut self,
        op: &Operand,
        count: u32,
        rep: u32,
        pc: usize,
        class: u16,
        sync: u8,
    ) -> Result<(), SimError> {
        for k in 0..count {
            let m = self.group_member(op, k, pc)?;
            self.stamp_write(&m, rep, pc, class, sync)?;
        }
        Ok(())
    }

    /// `load(SPACE, DST, [COUNT], BINDING, ADDR, [BYTES])` for one lane.
    #[allow(clippy::too_many_arguments)]
    pub fn io_load(
        &mut self,
        space: Space,
        dst: &Operand,
        count: u32,
        binding: u64,
        addr: u64,
        bytes: u32,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<(), SimError> {
        for k in 0..count {
            let at = Access {
                space,
                binding: binding as u32,
                addr: addr.wrapping_add(k as u64 * bytes as u64),
                bytes,
            };
            let bits = self.io.load(lane, at).map_err(|e| Machine::io_err(pc, e))?;
            self.group_set(dst, k, rep, lane, pc, bits)?;
        }
        Ok(())
    }

    /// `store(SPACE, SRC, [COUNT], BINDING, ADDR, [BYTES])` for one lane.
    #[allow(clippy::too_many_arguments)]
    pub fn io_store(
        &mut self,
        space: Space,
        src: &Operand,
        count: u32,
        binding: u64,
        addr: u64,
        bytes: u32,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<(), SimError> {
        for k in 0..count {
            let at = Access {
                space,
                binding: binding as u32,
                addr: addr.wrapping_add(k as u64 * bytes as u64),
                bytes,
            };
            let bits = self.group_get(src, k, rep, lane, pc)?;
            self.io
                .store(lane, at, bits)
                .map_err(|e| Machine::io_err(pc, e))?;
        }
        Ok(())
    }

    /// `atomic(SPACE, OP, DST, BINDING, ADDR, DATA, COMPARE)` for one lane.
    #[allow(clippy::too_many_arguments)]
    pub fn io_atomic(
        &mut self,
        space: Space,
        op: AtomicOp,
        dst: &Operand,
        binding: u64,
        addr: u64,
        data: u64,
        compare: u64,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<(), SimError> {
        let at = Access {
            space,
            binding: binding as u32,
            addr,
            bytes: 4,
        };
        let old = self
            .io
            .atomic(lane, at, op, data as u32, compare as u32)
            .map_err(|e| Machine::io_err(pc, e))?;
        self.group_set(dst, 0, rep, lane, pc, old)
    }

    /// `varying(MODE, DST, [COUNT], SLOT, IJ)` for one lane: IJ (two f32
    /// components) is read only for barycentric interpolation, which is at
    /// the thread's own position when IJ is `none`. An
    /// interpolated value written to a half register is rounded to f16.
    #[allow(clippy::too_many_arguments)]
    pub fn io_varying(
        &mut self,
        barycentric: bool,
        dst: &Operand,
        count: u32,
        slot: u64,
        ij: Option<&Operand>,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<(), SimError> {
        let interp = match (barycentric, ij) {
            (true, None) => Interp::Implicit,
            (true, Some(ij)) => {
                let coord = |k| -> Result<f32, SimError> {
                    let b = self.group_get(ij, k, rep, lane, pc)?;
                    Ok(if ij.half {
                        F16(b as u16).to_f32()
                    } else {
                        f32::from_bits(b)
                    })
                };
                Interp::Barycentric {
                    i: coord(0)?,
                    j: coord(1)?,
                }
            }
            _ => Interp::Flat,
        };
        for k in 0..count {
            let s = (slot as u32).wrapping_add(k);
            let bits = self
                .io
                .varying(lane, s, interp)
                .map_err(|e| Machine::io_err(pc, e))?;
            let bits = if barycentric && dst.half {
                F16::from_f32(f32::from_bits(bits)).0 as u32
            } else {
                bits
            };
            self.group_set(dst, k, rep, lane, pc, bits)?;
        }
        Ok(())
    }

    /// `texture(OP, DST, [WRMASK], COORDS, [N], EXTRA, [M], TEX, SAMP)` for
    /// one lane: the components of WRMASK's set bits land in consecutive
    /// registers from DST. Half sources are widened to f32 bits.
    #[allow(clippy::too_many_arguments)]
    pub fn io_texture(
        &mut self,
        op: TexOp,
        dst: &Operand,
        wrmask: u32,
        coords: Option<(&Operand, u32)>,
        extra: Option<(&Operand, u32)>,
        texture: u64,
        sampler: u64,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<(), SimError> {
        let values = |g: Option<(&Operand, u32)>| -> Result<Vec<u32>, SimError> {
            let Some((o, n)) = g else {
                return Ok(Vec::new());
            };
            (0..n)
                .map(|k| {
                    let b = self.group_get(o, k, rep, lane, pc)?;
                    Ok(if o.half {
                        F16(b as u16).to_f32().to_bits()
                    } else {
                        b
                    })
                })
                .collect()
        };
        let req = TexRequest {
            op,
            texture: texture as u32,
            sampler: sampler as u32,
            coords: values(coords)?,
            extra: values(extra)?,
            half: dst.half,
        };
        self.texture_request(&req, dst, wrmask, rep, lane, pc)
    }

    /// `texture_values(OP, DST, [WRMASK], [N], C0…C4, [M], E, TEXTURE,
    /// SAMPLER)` for one lane: as [`Machine::io_texture`], with the
    /// coordinates and extra values computed by the semantics (raw bits).
    #[allow(clippy::too_many_arguments)]
    pub fn io_texture_values(
        &mut self,
        op: TexOp,
        dst: &Operand,
        wrmask: u32,
        coords: &[u64],
        extra: &[u64],
        texture: u64,
        sampler: u64,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<(), SimError> {
        let req = TexRequest {
            op,
            texture: texture as u32,
            sampler: sampler as u32,
            coords: coords.iter().map(|&b| b as u32).collect(),
            extra: extra.iter().map(|&b| b as u32).collect(),
            half: dst.half,
        };
        self.texture_request(&req, dst, wrmask, rep, lane, pc)
    }

    /// Sends `req` to the I/O side and writes the components `wrmask`
    /// selects into consecutive registers from `dst`.
    fn texture_request(
        &mut self,
        req: &TexRequest,
        dst: &Operand,
        wrmask: u32,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<(), SimError> {
        let out = self
            .io
            .texture(lane, req)
            .map_err(|e| Machine::io_err(pc, e))?;
        let mut k = 0;
        for (c, bits) in out.iter().enumerate() {
            if wrmask & (1 << c) != 0 {
                self.group_set(dst, k, rep, lane, pc, *bits)?;
                k += 1;
            }
        }
        Ok(())
    }

    /// `barrier()` for one lane.
    pub fn io_barrier(&mut self, lane: usize, pc: usize) -> Result<(), SimError> {
        self.io.barrier(lane).map_err(|e| Machine::io_err(pc, e))
    }

    /// `emit()` for one lane.
    pub fn io_emit(&mut self, lane: usize, pc: usize) -> Result<(), SimError> {
        self.io
            .emit_vertex(lane)
            .map_err(|e| Machine::io_err(pc, e))
    }

    /// `cut()` for one lane.
    pub fn io_cut(&mut self, lane: usize, pc: usize) -> Result<(), SimError> {
        self.io
            .end_primitive(lane)
            .map_err(|e| Machine::io_err(pc, e))
    }

    /// `output(SRC, [COUNT], TARGET)` for one lane.
    pub fn io_output(
        &mut self,
        src: &Operand,
        count: u32,
        target: u64,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<(), SimError> {
        for k in 0..count {
            let bits = self.group_get(src, k, rep, lane, pc)?;
            self.io
                .output(lane, target as u32, k, bits)
                .map_err(|e| Machine::io_err(pc, e))?;
        }
        Ok(())
    }

    /// `message(KIND, DST, [N], SRC, [M], A, B, C)` for one lane: the
    /// values of the `M` registers from SRC go out, up to `N` result
    /// registers from DST come back (see [`MsgKind`] for A, B, C).
    #[allow(clippy::too_many_arguments)]
    pub fn io_message(
        &mut self,
        kind: MsgKind,
        dst: Option<(&Operand, u32)>,
        src: Option<(&Operand, u32)>,
        a: u64,
        b: u64,
        c: u64,
        rep: u32,
        lane: usize,
        pc: usize,
    ) -> Result<(), SimError> {
        let data = match src {
            Some((o, n)) => (0..n)
                .map(|k| self.group_get(o, k, rep, lane, pc))
                .collect::<Result<Vec<u32>, SimError>>()?,
            None => Vec::new(),
        };
        let (a32, b32, c32) = (a as u32, b as u32, c as u32);
        let out: Vec<u32> = match kind {
            MsgKind::Attribute => self.io.attribute(lane, a32, b32, c32).map(|v| v.to_vec()),
            MsgKind::Atest => self
                .io
                .atest(lane, a32, f32::from_bits(b32), c32)
                .map(|v| vec![v]),
            MsgKind::Blend => self.io.blend(lane, a32, b32, &data).map(|()| Vec::new()),
            MsgKind::FragCoord => self
                .io
                .frag_coord(lane)
                .map(|v| v.get(a32 as usize..).unwrap_or_default().to_vec()),
            MsgKind::PointCoord => self.io.point_coord(lane).map(|v| v.to_vec()),
            MsgKind::TexelAddress | MsgKind::TexelLoad => {
                let half = |w: u32, k: u32| (w >> (16 * k)) & 0xffff;
                let coords = [half(a32, 0), half(a32, 1), half(b32, 0), half(b32, 1)];
                if kind == MsgKind::TexelLoad {
                    self.io.texel_load(lane, coords, c32).map(|v| v.to_vec())
                } else {
                    self.io.texel_address(lane, coords, c32).map(|v| v.to_vec())
                }
            }
            MsgKind::ConvertStore => self
                .io
                .convert_store(lane, a, b32, &data)
                .map(|()| Vec::new()),
            MsgKind::ImageLoad => self.io.image_load(lane, [a32, (a >> 32) as u32, b32], c32),
            MsgKind::ImageStore => self
                .io
                .image_store(lane, [a32, (a >> 32) as u32, b32], c32, &data)
                .map(|()| Vec::new()),
            MsgKind::ImageAtomic(op) => {
                let operand = |k: usize| data.get(k).copied().unwrap_or(0);
                self.io
                    .image_atomic(
                        lane,
                        [a32, (a >> 32) as u32, b32],
                        c32,
                        op,
                        operand(0),
                        operand(1),
                    )
                    .map(|v| vec![v])
            }
            MsgKind::ImageSize => self.io.image_size(lane, c32).map(|v| v.to_vec()),
            MsgKind::BufferAddress => self.io.buffer_address(lane, b32, a32).map(|v| v.to_vec()),
        }
        .map_err(|e| Machine::io_err(pc, e))?;
        if let Some((o, n)) = dst {
            for k in 0..n {
                let bits = out.get(k as usize).copied().ok_or_else(|| SimError::Io {
                    pc,
                    message: format!("{} gave {} values, {n} wanted", kind.name(), out.len()),
                })?;
                self.group_set(o, k, rep, lane, pc, bits)?;
            }
        }
        Ok(())
    }

    /// Replaces the machine's I/O (a fresh machine has an empty [`Harness`]).
    pub fn set_io(&mut self, io: Box<dyn GpuIo>) {
        self.io = io;
    }

    /// The machine's I/O as its concrete type, if it is a `T`.
    pub fn io_as<T: GpuIo>(&self) -> Option<&T> {
        let any: &dyn std::any::Any = &*self.io;
        any.downcast_ref()
    }

    pub fn io_as_mut<T: GpuIo>(&mut self) -> Option<&mut T> {
        let any: &mut dyn std::any::Any = &mut *self.io;
        any.downcast_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fuzz finding (session 6): a gather at a coordinate too large for
    /// i64 overflowed computing the footprint's second column.
    #[test]
    fn gather_at_a_huge_coordinate_clamps_to_the_edge() {
        let mut h = Harness::default();
        h.textures.push(Texture {
            width: 2,
            height: 2,
            texels: vec![[1.0, 2.0, 3.0, 4.0]; 4],
            ..Default::default()
        });
        let req = TexRequest {
            op: TexOp::Gather(1),
            texture: 0,
            sampler: 0,
            coords: vec![f32::MAX.to_bits(), f32::INFINITY.to_bits()],
            extra: Vec::new(),
            half: false,
        };
        assert_eq!(h.texture(0, &req).unwrap(), [2.0f32.to_bits(); 4]);
    }
}
