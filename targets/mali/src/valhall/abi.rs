//! The Valhall shader ABI: what the hardware preloads into registers,
//! which message instructions carry a shader's inputs and outputs, and
//! the descriptor slots and tables they name. Every such fact of the
//! backend is here, in one place.
//!
//! [`lower`] runs on the selected machine IR, where each `load_input` and
//! `store_output` is still a meta input or output
//! ([`Port::Slot`](super::select::Port)), and turns them into messages:
//!
//! - **fragment varyings**: one `LD_VAR_IMM` (interpolated, at the
//!   `.center`, `.centroid` or `.sample` position the IR records, reading
//!   the interpolation state the hardware preloads in r61) or
//!   `LD_VAR_FLAT_IMM` (flat) per varying location, of as many 32-bit
//!   components as the shader reads (from component 0, as Mesa loads
//!   them), into a register group at the head of the entry block; the
//!   components are its lanes. A 16-bit float varying is loaded as f32 and
//!   narrowed (one rounding, as the interpreter's input is exact in f16).
//!   Varying `n` is index `n` of resource table 0.
//! - **fragment outputs**: render target `n` (`store_output slot=n`,
//!   `n` < 8) is one `BLEND` of its components (a register group; missing
//!   lower components are 0) with the fixed-function blend descriptor
//!   `blend_descriptor_n`, after one `ATEST` (Mesa's order: alpha test
//!   before the first blend, on render target 0's alpha or 1.0, with the
//!   coverage mask the hardware preloads in r60 and the driver's
//!   `atest_datum`); every blend reads the tested coverage. Outputs must
//!   be stored in the block that returns; the last blend ends the shader
//!   (legalisation gives it `.end`), earlier ones fall through
//!   (`target:0x0`).
//! - **vertex attributes**: one `LD_ATTR_IMM` per attribute location
//!   (descriptor `n` of table 0), indexed by the vertex and instance ids
//!   the hardware preloads in r60 and r61 (Mesa's `bi_vertex_id` /
//!   `bi_instance_id` on v9+).
//! - **vertex outputs**: stored to memory the IDVS way ([`vertex`]): a
//!   vertex shader is compiled as a position shader (`STORE.i128.istream`
//!   of the position, `STORE.i16.istream` of the f16 point size) and a
//!   varying shader (`STORE.iN.estream` at each varying's offset in the
//!   varying buffer, [`vertex::layout`]), each at the address
//!   `LEA_BUF_IMM` makes of the structure index preloaded in r59.
//!
//! The preloaded registers are meta inputs with the index
//! [`Preload::meta_index`], which [`ValhallTarget`]'s `input_register`
//! pins to their register; they are not part of the allocated footprint
//! (Mesa counts only allocated registers in `work_reg_count`).
//!
//! - **textures**: the texture/sampler handle a texture instruction reads
//!   and the FAU word that carries it ([`textures`]).
//!
//! Not yet here (`unsupported:`): depth/stencil/sample-mask outputs
//! (`ZS_EMIT`), fragment outputs stored in more than one block, 16-bit
//! render targets of more than one component, and the vertex outputs
//! [`vertex`] names (layer, viewport index, 16-bit varyings).

use std::collections::BTreeMap;

use lathe_ir::{
    Block, GenericOp, Inst, Interp, InterpLoc, InterpMode, Op, Scalar, Shader, Stage, Sysval, Type,
    Value,
};
use lathe_isa::select::{Interface, Port, SelectError};

use super::generated::MachineOp;
use super::target::ValhallTarget;

pub mod constants;
pub mod staging;
pub mod textures;
pub mod vertex;
pub use textures::TextureHandle;

/// A register the hardware fills before the shader's first instruction
/// (Mesa's `bi_preload` registers on v9+).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Preload {
    /// Fragment: the sample coverage mask (r60), which `ATEST` tests.
    Coverage,
    /// Fragment: the interpolation state varying loads read (r61).
    VaryingState,
    /// Vertex: the vertex id (r60), taken as the vertex index.
    VertexId,
    /// Vertex: the instance id (r61), taken as the instance index.
    InstanceId,
    /// Vertex: the vertex's structure index in the IDVS output buffers
    /// (r59, Mesa's `bi_preload(b, 59)`), which `LEA_BUF_IMM` turns into
    /// its output address ([`vertex`]).
    IdvsIndex,
    /// Compute: component 0..=2 of the workgroup id (r57..=r59).
    WorkgroupId(u8),
    /// Compute: component 0..=2 of the global invocation id (r60..=r62).
    GlobalId(u8),
    /// Compute: the local invocation id's x (low half) and y (high half)
    /// as 16-bit integers (r55, Mesa's `load_local_invocation_id`).
    LocalIdXY,
    /// Compute: the local invocation id's z (low half of r56).
    LocalIdZ,
    /// Fragment: the pixel's integer x (low half) and y (high half) (r59,
    /// Mesa's `load_pixel_coord`).
    PixelCoord,
    /// Fragment: the primitive's facing, zero when it faces front (r58,
    /// Mesa's `load_front_face` on v9 and v10; v11 adds more flags).
    Facing,
}

/// Meta input indices from here on are preloaded registers (index
/// `PRELOAD_BASE + n` is rn); lower ones are the generic IR's own meta
/// inputs, which the allocator places.
pub const PRELOAD_BASE: u32 = 1 << 16;

/// Render targets with a fixed-function blend descriptor
/// (`blend_descriptor_0` to `_7`).
pub const RENDER_TARGETS: u16 = 8;

impl Preload {
    /// The general register it arrives in.
    pub const fn register(self) -> u8 {
        match self {
            Preload::Coverage | Preload::VertexId => 60,
            Preload::VaryingState | Preload::InstanceId => 61,
            Preload::WorkgroupId(c) => 57 + c,
            Preload::GlobalId(c) => 60 + c,
            Preload::LocalIdXY => 55,
            Preload::LocalIdZ => 56,
            Preload::PixelCoord | Preload::IdvsIndex => 59,
            Preload::Facing => 58,
        }
    }

    /// The meta input index that stands for it in machine IR.
    pub const fn meta_index(self) -> u32 {
        PRELOAD_BASE + self.register() as u32
    }

    /// The preloaded register a meta input index names, if any.
    pub fn register_of(index: u32) -> Option<u8> {
        index
            .checked_sub(PRELOAD_BASE)
            .and_then(|r| u8::try_from(r).ok())
    }

    /// The preload that holds system value `sysval` (component `comp`)
    /// in a `stage` shader, if the hardware preloads it.
    pub fn of_sysval(stage: Stage, sysval: Sysval, comp: u8) -> Option<Preload> {
        match (stage, sysval) {
            (Stage::Vertex, Sysval::VertexIndex) => Some(Preload::VertexId),
            (Stage::Vertex, Sysval::InstanceIndex) => Some(Preload::InstanceId),
            (Stage::Compute, Sysval::WorkgroupId) if comp < 3 => Some(Preload::WorkgroupId(comp)),
            (Stage::Compute, Sysval::GlobalInvocationId) if comp < 3 => {
                Some(Preload::GlobalId(comp))
            }
            _ => None,
        }
    }

    /// The preload of register `reg` in a `stage` shader.
    fn in_stage(stage: Stage, reg: u8) -> Option<Preload> {
        let all = [
            Preload::Coverage,
            Preload::VaryingState,
            Preload::VertexId,
            Preload::InstanceId,
            Preload::IdvsIndex,
            Preload::WorkgroupId(0),
            Preload::WorkgroupId(1),
            Preload::WorkgroupId(2),
            Preload::GlobalId(0),
            Preload::GlobalId(1),
            Preload::GlobalId(2),
            Preload::LocalIdXY,
            Preload::LocalIdZ,
            Preload::PixelCoord,
            Preload::Facing,
        ];
        all.into_iter().find(|p| {
            p.register() == reg
                && match p {
                    Preload::Coverage
                    | Preload::VaryingState
                    | Preload::PixelCoord
                    | Preload::Facing => stage == Stage::Fragment,
                    Preload::VertexId | Preload::InstanceId | Preload::IdvsIndex => {
                        stage == Stage::Vertex
                    }
                    _ => stage == Stage::Compute,
                }
        })
    }
}

/// A fixed-function fragment value the V unit delivers with
/// `LD_VAR_SPECIAL` (Mesa's `load_point_coord` and
/// `bi_emit_load_frag_coord_zw_pan`, at the pixel centre with
/// `.clobber`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Special {
    /// The point-sprite coordinate: x and y.
    PointCoord,
    /// The fragment's window depth (`frag_coord.z`).
    FragZ,
    /// The fragment's 1/w (`frag_coord.w`).
    FragW,
}

/// Meta input indices from here on are [`Special`] values (past every
/// preloaded register's index).
const SPECIAL_BASE: u32 = PRELOAD_BASE + 0x100;

impl Special {
    const ALL: [Special; 3] = [Special::PointCoord, Special::FragZ, Special::FragW];

    /// Its `LD_VAR_SPECIAL` index (Mesa's Valhall ISA.xml: 0 the point,
    /// 2 frag_w, 3 frag_z; the semantics say what each delivers).
    pub const fn index(self) -> u8 {
        match self {
            Special::PointCoord => 0,
            Special::FragW => 2,
            Special::FragZ => 3,
        }
    }

    /// Components one load delivers.
    const fn comps(self) -> u8 {
        match self {
            Special::PointCoord => 2,
            Special::FragZ | Special::FragW => 1,
        }
    }

    /// The special value and its component that hold system value
    /// `sysval` (component `comp`) in a `stage` shader.
    pub fn of_sysval(stage: Stage, sysval: Sysval, comp: u8) -> Option<(Special, u8)> {
        match (stage, sysval, comp) {
            (Stage::Fragment, Sysval::PointCoord, 0 | 1) => Some((Special::PointCoord, comp)),
            (Stage::Fragment, Sysval::FragCoord, 2) => Some((Special::FragZ, 0)),
            (Stage::Fragment, Sysval::FragCoord, 3) => Some((Special::FragW, 0)),
            _ => None,
        }
    }

    /// The meta input index that stands for component `comp` of it.
    const fn meta_index(self, comp: u8) -> u32 {
        SPECIAL_BASE + 4 * self.index() as u32 + comp as u32
    }

    /// The special value and component a meta input index names.
    fn of_meta(index: u32) -> Option<(Special, u8)> {
        let k = index.checked_sub(SPECIAL_BASE)?;
        let s = Special::ALL
            .into_iter()
            .find(|s| u32::from(s.index()) == k / 4)?;
        let comp = (k % 4) as u8;
        (comp < s.comps()).then_some((s, comp))
    }
}

/// One message that reads a shader input: a varying location (fragment)
/// or an attribute (vertex), `comps` 32-bit components from component 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Load {
    /// Varying or attribute location (the message's `index`).
    pub location: u16,
    pub comps: u8,
    /// The IR's type of the components (a 16-bit float is loaded as f32).
    pub scalar: Scalar,
    /// How a varying is interpolated (`None` for attributes).
    pub interp: Option<Interp>,
}

/// One render target the shader blends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenderTarget {
    pub index: u16,
    pub comps: u8,
    pub scalar: Scalar,
}

/// One UBO word the driver pushes into a FAU word ([`push_ubos`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PushedWord {
    /// The FAU word `uN` that holds it.
    pub fau: u32,
    pub binding: u8,
    pub byte_offset: u32,
}

/// What [`lower`] made of the shader's inputs and outputs: what a driver
/// must set up (and what `--verify` feeds the simulator).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Io {
    /// Constant tables the shader reads as a UBO the driver uploads
    /// ([`lathe_passes::constant_data`], words packed).
    pub constant_data: Option<lathe_passes::constant_data::ConstantData>,
    /// UBO words pushed into the FAU, after the push constants.
    pub pushed: Vec<PushedWord>,
    /// Varyings (fragment) or attributes (vertex) loaded.
    pub loads: Vec<Load>,
    /// Render targets blended, in order.
    pub render_targets: Vec<RenderTarget>,
    /// Registers the shader reads as the hardware preloads them.
    pub preloads: Vec<Preload>,
    /// Texture/sampler handles pushed into the FAU ([`textures`]).
    pub textures: Vec<TextureHandle>,
    /// Texture and image sizes pushed into the FAU
    /// ([`textures::push_sizes`]).
    pub texture_sizes: Vec<textures::SizeWords>,
    /// Buffers read or written at 64-bit addresses, and the FAU words
    /// of each base address ([`address_buffers`]).
    pub addresses: Vec<BufferAddress>,
    /// Storage-buffer sizes the shader reads, each in one FAU word.
    pub sizes: Vec<BufferSize>,
    /// Compute dispatch values pushed into FAU words
    /// ([`push_driver_words`]).
    pub driver_words: Vec<DriverWord>,
    /// Constants outside the immediate table pushed into FAU words
    /// ([`constants::push_constants`]).
    pub constants: Vec<constants::ConstantWord>,
    /// Vertex: which IDVS shader this is ([`vertex::Variant`]).
    pub variant: Option<vertex::Variant>,
    /// Vertex: the varying buffer's layout, the same in both variants.
    pub varyings: vertex::Layout,
    /// Vertex: each output component stored, and where.
    pub stored: Vec<vertex::Stored>,
}

impl Io {
    /// The load of `location`, if the shader reads it.
    pub fn load(&self, location: u16) -> Option<&Load> {
        self.loads.iter().find(|l| l.location == location)
    }
}

/// A shader rewritten by [`push_ubos`] and the UBO words the driver
/// pushes for it.
pub type Prepared<'a> = (Shader<'a, GenericOp>, Vec<PushedWord>);

/// Reads system values the hardware preloads ([`Preload::of_sysval`])
/// from their registers and marks those of `LD_VAR_SPECIAL`
/// ([`Special::of_sysval`]) for [`lower`], and pushes every UBO word the shader reads at a
/// constant, word-aligned
/// offset into the FAU, as Mesa's Valhall backend pushes UBO ranges: the
/// words follow the push constants (from the 64-bit FAU slot after the
/// highest uniform the shader reads), one per distinct (binding, offset),
/// as long as the `fau_words` of the file last; each such `load_ubo`
/// becomes a `load_uniform` of its word. `None` when no load qualifies
/// and no system value is preloaded (the shader is selected as it is);
/// otherwise a rewritten copy in the
/// same arena and the words the driver pushes. Loads at other offsets stay
/// (and fail in selection until `LD_BUFFER` is selected).
pub fn push_ubos<'a>(
    generic: &Shader<'a, GenericOp>,
    fau_words: u32,
) -> Result<Option<Prepared<'a>>, SelectError> {
    // The meta input of a system value the hardware preloads or the V
    // unit delivers.
    let preloaded = |s: &Shader<'_, GenericOp>, i: Inst| match s.inst(i).op {
        Op::Opcode(GenericOp::LoadSysval { sysval, comp }) => {
            Preload::of_sysval(s.stage, sysval, comp)
                .map(Preload::meta_index)
                .or_else(|| {
                    Special::of_sysval(s.stage, sysval, comp).map(|(sp, c)| sp.meta_index(c))
                })
        }
        _ => None,
    };
    let constant = |s: &Shader<'_, GenericOp>, v: Value| match s.inst(s.value_def(v)).op {
        Op::Opcode(GenericOp::Const { bits }) if bits % 4 == 0 => Some(bits),
        _ => None,
    };
    let pushable = |s: &Shader<'_, GenericOp>, i: Inst| match s.inst(i).op {
        Op::Opcode(GenericOp::LoadUbo { binding }) => s
            .inst(i)
            .args
            .first()
            .and_then(|&v| constant(s, v))
            .map(|offset| (binding, offset)),
        _ => None,
    };
    if !generic
        .insts_in_order()
        .any(|(_, i)| pushable(generic, i).is_some() || preloaded(generic, i).is_some())
    {
        return Ok(None);
    }
    let mut copy = working_copy(generic)?;
    let mut next = uniform_words(&copy).next_multiple_of(2);
    let mut pushed: Vec<PushedWord> = Vec::new();
    let loads: Vec<(Inst, (u8, u32))> = copy
        .insts_in_order()
        .filter_map(|(_, i)| pushable(&copy, i).map(|p| (i, p)))
        .collect();
    for (i, (binding, byte_offset)) in loads {
        let fau = match pushed
            .iter()
            .find(|w| (w.binding, w.byte_offset) == (binding, byte_offset))
        {
            Some(w) => w.fau,
            None if next < fau_words => {
                pushed.push(PushedWord {
                    fau: next,
                    binding,
                    byte_offset,
                });
                next += 1;
                next - 1
            }
            // The FAU is full: the load stays a load.
            None => continue,
        };
        copy.inst_mut(i).op = Op::Opcode(GenericOp::LoadUniform { index: fau });
        copy.set_args(i, &[]);
    }
    // System values the hardware preloads are meta inputs of their
    // register, those of `LD_VAR_SPECIAL` of their [`Special`] value
    // (selection keeps the index as the port).
    let sysvals: Vec<(Inst, u32)> = copy
        .insts_in_order()
        .filter_map(|(_, i)| preloaded(&copy, i).map(|p| (i, p)))
        .collect();
    for (i, index) in sysvals {
        copy.inst_mut(i).op = Op::Input { index };
    }
    Ok(Some((copy, pushed)))
}

/// Turns the meta inputs and outputs of `shader` that are varyings,
/// attributes or render targets into their messages (see the module
/// documentation); the others (the generic IR's own meta inputs and
/// outputs) stay.
pub fn lower(
    shader: &mut Shader<'_, MachineOp>,
    interface: &Interface,
    generic: &Shader<'_, GenericOp>,
    target: &ValhallTarget,
) -> Result<Io, SelectError> {
    let mut io = Io::default();
    let Some(entry) = shader.entry() else {
        return Ok(io);
    };
    let mut lower = Lowering {
        shader,
        target,
        io: &mut io,
        preloads: BTreeMap::new(),
    };
    lower.adopt_preloads(entry, interface);
    match lower.shader.stage {
        Stage::Fragment | Stage::Vertex => lower.inputs(entry, interface, generic)?,
        Stage::Compute => {}
    }
    if lower.shader.stage == Stage::Fragment {
        lower.specials(interface)?;
        lower.render_targets(interface)?;
    }
    if lower.shader.stage == Stage::Vertex {
        let layout = vertex::layout(vertex::output_slots(generic)?);
        lower.io.stored = lower.vertex_outputs(interface, &layout)?;
        lower.io.varyings = layout;
    }
    lower.place_preloads(entry);
    Ok(io)
}

struct Lowering<'s, 'a> {
    shader: &'s mut Shader<'a, MachineOp>,
    target: &'s ValhallTarget,
    io: &'s mut Io,
    /// Preloaded registers read so far, and their meta inputs.
    preloads: BTreeMap<Preload, Inst>,
}

/// A copy of `generic` in the same arena that a lowering may rewrite
/// (the original stays as the verifier's reference).
pub(crate) fn working_copy<'a>(
    generic: &Shader<'a, GenericOp>,
) -> Result<Shader<'a, GenericOp>, SelectError> {
    lathe_ir::parse::<GenericOp>(generic.arena(), &lathe_ir::print(generic))
        .map_err(|e| SelectError::Malformed(format!("the shader does not read back: {e}")))
}

/// How many uniform words the shader reads (one past the highest index).
pub(crate) fn uniform_words(shader: &Shader<'_, GenericOp>) -> u32 {
    shader
        .insts_in_order()
        .filter_map(|(_, i)| match shader.inst(i).op {
            Op::Opcode(GenericOp::LoadUniform { index }) => Some(index + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

fn unsupported(what: String) -> SelectError {
    SelectError::Unsupported(format!("{what} (valhall ABI)"))
}

/// The register-format suffix of a message moving `scalar` values.
fn regfmt(scalar: Scalar) -> &'static str {
    match scalar {
        Scalar::F32 | Scalar::F16 => ".f32",
        Scalar::I32 => ".s32",
        _ => ".u32",
    }
}

/// The vector-size suffix of `n` components.
fn vecsize(n: u8) -> &'static str {
    ["", "", ".v2", ".v3", ".v4"][n as usize]
}

/// A staging group of `n` registers from r0, as the assembler writes it.
fn group(n: u8) -> String {
    let regs: Vec<String> = (0..n).map(|k| format!("r{k}")).collect();
    format!("@{}", regs.join(":"))
}

fn sample(loc: InterpLoc) -> &'static str {
    match loc {
        InterpLoc::Center => ".center",
        InterpLoc::Centroid => ".centroid",
        InterpLoc::Sample => ".sample",
    }
}

impl<'a> Lowering<'_, 'a> {
    /// The machine instruction of one line of assembly (its register
    /// numbers cleared: the IR operands are its registers in text order).
    fn op(&self, text: &str) -> Result<MachineOp, SelectError> {
        let arch = self.target.model().arch();
        let word = super::assemble(text, arch)
            .map_err(|e| unsupported(format!("`{text}` does not assemble: {e}")))?;
        MachineOp::from_word(word, self.target.generation_id())
            .ok_or_else(|| unsupported(format!("`{text}` does not decode")))
    }

    /// The value of preloaded register `p` (one meta input, placed at the
    /// head of the entry block by [`Self::place_preloads`]).
    fn preload(&mut self, p: Preload) -> Value {
        let inst = match self.preloads.get(&p) {
            Some(&i) => i,
            None => {
                let i = self.shader.create_inst(
                    Op::Input {
                        index: p.meta_index(),
                    },
                    &[],
                    &[],
                    None,
                    Some(Type::U32),
                );
                self.preloads.insert(p, i);
                self.io.preloads.push(p);
                i
            }
        };
        self.shader
            .inst(inst)
            .result
            .unwrap_or_else(|| unreachable!("a preload has a result"))
    }

    /// Every meta input of a [`Special`] value becomes its own
    /// `LD_VAR_SPECIAL` where it stands (z and w read the interpolation
    /// state in r61 as Mesa passes it, the point coordinate zero; the y
    /// of the point is lane 1 of a `.v2` load).
    fn specials(&mut self, interface: &Interface) -> Result<(), SelectError> {
        for b in self.shader.layout().to_vec() {
            let mut list = Vec::new();
            for i in self.shader.block_insts(b).to_vec() {
                let special = match self.shader.inst(i).op {
                    Op::Input { index } => match interface.inputs.get(index as usize) {
                        Some(&Port::Meta(port)) => Special::of_meta(port),
                        _ => None,
                    },
                    _ => None,
                };
                let Some((special, comp)) = special else {
                    list.push(i);
                    continue;
                };
                let comps = comp + 1;
                let (source, args) = match special {
                    Special::PointCoord => ("0x0".to_string(), vec![]),
                    Special::FragZ | Special::FragW => (
                        format!("r{comps}"),
                        vec![self.preload(Preload::VaryingState)],
                    ),
                };
                let text = format!(
                    "LD_VAR_SPECIAL{}.f32.center.clobber.slot0 {}, {source}, index:0x{:x}",
                    vecsize(comps),
                    group(comps),
                    special.index()
                );
                let op = self.op(&text)?;
                let ty = (comps > 1).then(|| Type::vector(Scalar::F32, comps));
                let message = self
                    .shader
                    .create_inst(Op::Opcode(op), &args, &[], None, ty);
                list.push(message);
                if comps == 1 {
                    self.shader.transfer_result(i, message);
                } else {
                    let vector: Vec<Value> = self.shader.inst(message).result.into_iter().collect();
                    let split =
                        self.shader
                            .create_inst(Op::Split { lane: comp }, &vector, &[], None, None);
                    list.push(split);
                    self.shader.transfer_result(i, split);
                }
            }
            self.shader.set_block_insts(b, &list);
        }
        Ok(())
    }

    /// Varyings (fragment) or attributes (vertex): every meta input of a
    /// `Port::Slot` becomes a lane of its location's load.
    fn inputs(
        &mut self,
        entry: Block,
        interface: &Interface,
        generic: &Shader<'_, GenericOp>,
    ) -> Result<(), SelectError> {
        let mut interps: BTreeMap<(u16, u8), Interp> = BTreeMap::new();
        for (_, i) in generic.insts_in_order() {
            if let Op::Opcode(GenericOp::LoadInput { slot, comp, interp }) = generic.inst(i).op {
                interps.insert((slot, comp), interp);
            }
        }
        // Meta inputs of slots, by location: (component, instruction).
        let mut by_location: BTreeMap<u16, Vec<(u8, Inst)>> = BTreeMap::new();
        // The other meta inputs keep heading the block (preloaded
        // registers precede every instruction).
        let (mut metas, mut rest) = (Vec::new(), Vec::new());
        for &i in self.shader.block_insts(entry) {
            match self.shader.inst(i).op {
                Op::Input { index } => match interface.inputs.get(index as usize) {
                    Some(&Port::Slot(slot, comp)) => {
                        by_location.entry(slot).or_default().push((comp, i))
                    }
                    _ => metas.push(i),
                },
                _ => rest.push(i),
            }
        }
        if by_location.is_empty() {
            return Ok(());
        }
        let mut head = Vec::new();
        for (location, lanes) in by_location {
            let interp = if self.shader.stage == Stage::Fragment {
                let modes: Vec<Interp> = lanes
                    .iter()
                    .filter_map(|&(c, _)| interps.get(&(location, c)).copied())
                    .collect();
                let first = modes.first().copied().unwrap_or(Interp::SMOOTH);
                if modes.iter().any(|&m| m != first) {
                    return Err(unsupported(format!(
                        "varying {location} read with two interpolations"
                    )));
                }
                Some(first)
            } else {
                None
            };
            self.load(location, interp, &lanes, &mut head)?;
        }
        metas.extend(head);
        metas.extend(rest);
        self.shader.set_block_insts(entry, &metas);
        Ok(())
    }

    /// One location's load and its lanes, appended to `head`.
    fn load(
        &mut self,
        location: u16,
        interp: Option<Interp>,
        lanes: &[(u8, Inst)],
        head: &mut Vec<Inst>,
    ) -> Result<(), SelectError> {
        let scalars: Vec<Scalar> = lanes
            .iter()
            .filter_map(|&(_, i)| self.shader.inst(i).result)
            .map(|v| self.shader.value_type(v).scalar)
            .collect();
        let scalar = scalars.first().copied().unwrap_or(Scalar::F32);
        // The register type of the load: a 16-bit float arrives as f32.
        let loaded = |s: Scalar| if s == Scalar::F16 { Scalar::F32 } else { s };
        if scalars.iter().any(|&s| loaded(s) != loaded(scalar)) {
            return Err(unsupported(format!(
                "input location {location} read as two types"
            )));
        }
        let mut seen = lanes.iter().map(|&(c, _)| c).collect::<Vec<_>>();
        seen.sort_unstable();
        seen.dedup();
        if seen.len() != lanes.len() {
            return Err(unsupported(format!(
                "input location {location} read as two types"
            )));
        }
        let comps = lanes.iter().map(|&(c, _)| c + 1).max().unwrap_or(1);
        if comps > 4 {
            return Err(unsupported(format!(
                "component {} of input location {location}",
                comps - 1
            )));
        }
        let reg_type = loaded(scalar);
        let fmt = regfmt(reg_type);
        let (text, args) = match interp {
            Some(Interp {
                mode: InterpMode::Flat,
                ..
            }) => (
                format!(
                    "LD_VAR_FLAT_IMM.slot0{}{fmt} {}, table:0x0, index:0x{location:x}",
                    vecsize(comps),
                    group(comps)
                ),
                vec![],
            ),
            Some(Interp { loc, .. }) => (
                format!(
                    "LD_VAR_IMM.slot0{}{fmt}{}.store {}, r{}, table:0x0, index:0x{location:x}",
                    vecsize(comps),
                    sample(loc),
                    group(comps),
                    comps
                ),
                vec![self.preload(Preload::VaryingState)],
            ),
            None => (
                format!(
                    "LD_ATTR_IMM{}{fmt}.slot0 {}, r{}, r{}, index:0x{location:x}, table:0x0",
                    vecsize(comps),
                    group(comps),
                    comps,
                    comps + 1
                ),
                vec![
                    self.preload(Preload::VertexId),
                    self.preload(Preload::InstanceId),
                ],
            ),
        };
        let op = self.op(&text)?;
        let ty = if comps == 1 {
            Type::scalar(reg_type)
        } else {
            Type::vector(reg_type, comps)
        };
        let is_half = |s: &Self, input: Inst| {
            s.shader
                .inst(input)
                .result
                .is_some_and(|v| s.shader.value_type(v).scalar == Scalar::F16)
        };
        // One component read at its own type: the load defines the input.
        let direct = comps == 1 && !is_half(self, lanes[0].1);
        let message =
            self.shader
                .create_inst(Op::Opcode(op), &args, &[], None, (!direct).then_some(ty));
        head.push(message);
        if direct {
            self.shader.transfer_result(lanes[0].1, message);
        } else {
            let vector = self.shader.inst(message).result;
            for &(comp, input) in lanes {
                let half = is_half(self, input);
                let lane = if comps == 1 {
                    vector
                } else {
                    let split = self.shader.create_inst(
                        Op::Split { lane: comp },
                        &vector.into_iter().collect::<Vec<_>>(),
                        &[],
                        None,
                        half.then_some(Type::scalar(reg_type)),
                    );
                    head.push(split);
                    if !half {
                        self.shader.transfer_result(input, split);
                        continue;
                    }
                    self.shader.inst(split).result
                };
                // A 16-bit float is narrowed once, as the `cvt` rule does.
                let lane: Vec<Value> = lane.into_iter().chain(lane).collect();
                let op = self.op("V2F32_TO_V2F16 r0, r1, r1")?;
                let cvt = self
                    .shader
                    .create_inst(Op::Opcode(op), &lane, &[], None, None);
                head.push(cvt);
                self.shader.transfer_result(input, cvt);
            }
        }
        self.io.loads.push(Load {
            location,
            comps,
            scalar,
            interp,
        });
        Ok(())
    }

    /// Fragment outputs: `ATEST` and one `BLEND` per render target at the
    /// end of the block that returns.
    fn render_targets(&mut self, interface: &Interface) -> Result<(), SelectError> {
        let mut block = None;
        let mut components: BTreeMap<u16, BTreeMap<u8, Value>> = BTreeMap::new();
        for (b, i) in self.shader.insts_in_order().collect::<Vec<_>>() {
            let d = self.shader.inst(i);
            let Op::Output { index } = d.op else {
                continue;
            };
            let Some(&Port::Slot(slot, comp)) = interface.outputs.get(index as usize) else {
                continue;
            };
            if slot >= RENDER_TARGETS {
                return Err(unsupported(format!("fragment output slot {slot}")));
            }
            if block.is_some_and(|x| x != b) {
                return Err(unsupported(
                    "fragment outputs stored in two blocks".to_string(),
                ));
            }
            block = Some(b);
            components.entry(slot).or_default().insert(comp, d.args[0]);
        }
        let Some(block) = block else {
            return Ok(());
        };
        let returns = self
            .shader
            .terminator(block)
            .is_some_and(|t| matches!(self.shader.inst(t).op, Op::Return));
        if !returns {
            return Err(unsupported(
                "fragment outputs stored outside the returning block".to_string(),
            ));
        }
        let mut tail = Vec::new();
        let mut zero = None;
        let mut groups = Vec::new();
        for (&rt, lanes) in &components {
            let comps = lanes.keys().max().map_or(1, |&c| c + 1);
            let scalars: Vec<Scalar> = lanes
                .values()
                .map(|&v| self.shader.value_type(v).scalar)
                .collect();
            let scalar = scalars[0];
            if scalars.iter().any(|&s| s != scalar) || comps > 4 {
                return Err(unsupported(format!(
                    "render target {rt} of mixed types or more than four components"
                )));
            }
            if scalar.bits() == 16 && comps > 1 {
                return Err(unsupported(format!(
                    "16-bit render target {rt} of {comps} components"
                )));
            }
            let mut values = Vec::new();
            for c in 0..comps {
                let v = match lanes.get(&c) {
                    Some(&v) => v,
                    None => match zero {
                        Some(z) => z,
                        None => {
                            let op = self.op("MOV.i32 r0, 0x0")?;
                            let i = self.shader.create_inst(
                                Op::Opcode(op),
                                &[],
                                &[],
                                None,
                                Some(Type::scalar(scalar)),
                            );
                            tail.push(i);
                            let z = self
                                .shader
                                .inst(i)
                                .result
                                .unwrap_or_else(|| unreachable!("a move has a result"));
                            zero = Some(z);
                            z
                        }
                    },
                };
                values.push(v);
            }
            let colour = if comps == 1 {
                values[0]
            } else {
                let collect = self.shader.create_inst(
                    Op::Collect,
                    &values,
                    &[],
                    None,
                    Some(Type::vector(scalar, comps)),
                );
                tail.push(collect);
                self.shader
                    .inst(collect)
                    .result
                    .unwrap_or_else(|| unreachable!("a collect has a result"))
            };
            groups.push((rt, comps, scalar, colour, lanes.get(&3).copied()));
        }
        // Alpha test on render target 0's alpha, or 1.0.
        let alpha = groups
            .iter()
            .find(|g| g.0 == 0)
            .and_then(|g| g.4.filter(|_| g.2 == Scalar::F32));
        let coverage = self.preload(Preload::Coverage);
        let (text, args) = match alpha {
            Some(a) => ("ATEST @r0, r1, r2, atest_datum.w0", vec![coverage, a]),
            None => ("ATEST @r0, r1, 0x3F800000, atest_datum.w0", vec![coverage]),
        };
        let op = self.op(text)?;
        let atest = self
            .shader
            .create_inst(Op::Opcode(op), &args, &[], None, Some(Type::U32));
        tail.push(atest);
        let tested = self
            .shader
            .inst(atest)
            .result
            .unwrap_or_else(|| unreachable!("ATEST has a result"));
        for &(rt, comps, scalar, colour, _) in &groups {
            let fmt = match scalar {
                Scalar::F16 => ".f16",
                Scalar::I16 => ".s16",
                Scalar::U16 => ".u16",
                s => regfmt(s),
            };
            let text = format!(
                "BLEND.slot0{}{fmt} {}, blend_descriptor_{rt}.w0, r{comps}, target:0x0",
                vecsize(comps),
                group(comps)
            );
            let op = self.op(&text)?;
            tail.push(
                self.shader
                    .create_inst(Op::Opcode(op), &[colour, tested], &[], None, None),
            );
        }
        self.io.render_targets = groups
            .iter()
            .map(|&(index, comps, scalar, _, _)| RenderTarget {
                index,
                comps,
                scalar,
            })
            .collect();
        // The outputs become the messages.
        let mut list: Vec<Inst> = self
            .shader
            .block_insts(block)
            .iter()
            .copied()
            .filter(|&i| {
                !matches!(self.shader.inst(i).op, Op::Output { index }
                    if matches!(interface.outputs.get(index as usize), Some(Port::Slot(..))))
            })
            .collect();
        // Before the meta outputs that remain: their registers are read
        // when the shader ends, so nothing may be allocated after them.
        let at = list
            .iter()
            .position(|&i| matches!(self.shader.inst(i).op, Op::Output { .. } | Op::Return))
            .unwrap_or(list.len());
        list.splice(at..at, tail);
        self.shader.set_block_insts(block, &list);
        Ok(())
    }

    /// The meta inputs selection made of preloaded system values get
    /// their register's index back (selection numbers ports) and serve
    /// the messages too.
    fn adopt_preloads(&mut self, entry: Block, interface: &Interface) {
        for &i in &self.shader.block_insts(entry).to_vec() {
            let Op::Input { index } = self.shader.inst(i).op else {
                continue;
            };
            let Some(&Port::Meta(port)) = interface.inputs.get(index as usize) else {
                continue;
            };
            let stage = self.shader.stage;
            let Some(p) = Preload::register_of(port).and_then(|r| Preload::in_stage(stage, r))
            else {
                continue;
            };
            self.shader.inst_mut(i).op = Op::Input {
                index: p.meta_index(),
            };
            if self.preloads.insert(p, i).is_none() {
                self.io.preloads.push(p);
            }
        }
    }

    /// The preloaded registers' meta inputs head the entry block.
    fn place_preloads(&mut self, entry: Block) {
        if self.preloads.is_empty() {
            return;
        }
        let mut list: Vec<Inst> = self.preloads.values().copied().collect();
        list.extend(
            self.shader
                .block_insts(entry)
                .iter()
                .copied()
                .filter(|i| !self.preloads.values().any(|p| p == i)),
        );
        self.shader.set_block_insts(entry, &list);
    }
}

// ---------------------------------------------------------------------
// Buffers at 64-bit addresses

/// The kind of buffer a [`BufferAddress`] points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum BufferKind {
    /// A storage buffer (`load_ssbo`, `store_ssbo`, `ssbo_atomic`).
    Storage,
    /// A uniform buffer read where its words were not pushed.
    Uniform,
}

/// One buffer's 64-bit base address, which the driver pushes into FAU
/// words `fau` (low word) and `fau + 1` (high word): one aligned 64-bit
/// FAU slot, which `LOAD`/`STORE`/`IADD.u64` read as their address.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferAddress {
    pub fau: u32,
    pub kind: BufferKind,
    pub binding: u8,
}

/// A storage buffer's size in bytes, which the driver pushes into FAU
/// word `fau` (`ssbo_size` reads it there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferSize {
    pub fau: u32,
    pub binding: u8,
}

/// A shader rewritten by [`address_buffers`] and the addresses and
/// sizes the driver pushes for it.
pub type Addressed<'a> = (Shader<'a, GenericOp>, Vec<BufferAddress>, Vec<BufferSize>);

/// The buffer a generic memory access reads or writes at an address.
fn addressed_buffer(op: &GenericOp) -> Option<(BufferKind, u8)> {
    match *op {
        GenericOp::LoadSsbo { binding }
        | GenericOp::StoreSsbo { binding }
        | GenericOp::SsboAtomic { binding, .. }
        | GenericOp::SsboAtomicLoad { binding }
        | GenericOp::SsboAtomicStore { binding } => Some((BufferKind::Storage, binding)),
        GenericOp::LoadUbo { binding } => Some((BufferKind::Uniform, binding)),
        _ => None,
    }
}

/// Gives every buffer the shader still accesses through memory (storage
/// buffers, and uniform buffers [`push_ubos`] did not push) a 64-bit base
/// address in the FAU, as Mesa's Valhall path reads buffer addresses as
/// 64-bit uniforms: one aligned pair of words per buffer, from the first
/// 64-bit slot after every uniform the shader reads (push constants and
/// pushed UBO words). In the rewritten copy each access's `binding` names
/// the first FAU word of its buffer's pair, which is what the buffer
/// rules of `valhall.rules` read as the address. `None` when the shader
/// accesses no buffer; an `unsupported:` error when the pairs do not fit
/// in the `fau_words` of the file.
pub fn address_buffers<'a>(
    generic: &Shader<'a, GenericOp>,
    fau_words: u32,
) -> Result<Option<Addressed<'a>>, SelectError> {
    let accesses = |s: &Shader<'_, GenericOp>| -> Vec<(Inst, BufferKind, u8)> {
        s.insts_in_order()
            .filter_map(|(_, i)| match &s.inst(i).op {
                Op::Opcode(op) => addressed_buffer(op).map(|(k, b)| (i, k, b)),
                _ => None,
            })
            .collect()
    };
    let sized = |s: &Shader<'_, GenericOp>| -> Vec<(Inst, u8)> {
        s.insts_in_order()
            .filter_map(|(_, i)| match s.inst(i).op {
                Op::Opcode(GenericOp::SsboSize { binding }) => Some((i, binding)),
                _ => None,
            })
            .collect()
    };
    if accesses(generic).is_empty() && sized(generic).is_empty() {
        return Ok(None);
    }
    let mut copy = working_copy(generic)?;
    let mut next = uniform_words(&copy).next_multiple_of(2);
    let mut addresses: Vec<BufferAddress> = Vec::new();
    for (i, kind, binding) in accesses(&copy) {
        let fau = match addresses
            .iter()
            .find(|a| (a.kind, a.binding) == (kind, binding))
        {
            Some(a) => a.fau,
            None => {
                if next + 2 > fau_words.min(256) {
                    return Err(unsupported(format!(
                        "the address of {kind:?} buffer {binding} does not fit in the FAU"
                    )));
                }
                addresses.push(BufferAddress {
                    fau: next,
                    kind,
                    binding,
                });
                next += 2;
                next - 2
            }
        };
        let word = u8::try_from(fau).map_err(|_| unsupported(format!("FAU word {fau}")))?;
        let renamed = match copy.inst(i).op {
            Op::Opcode(GenericOp::LoadSsbo { .. }) => GenericOp::LoadSsbo { binding: word },
            Op::Opcode(GenericOp::StoreSsbo { .. }) => GenericOp::StoreSsbo { binding: word },
            Op::Opcode(GenericOp::SsboAtomic { op, .. }) => {
                GenericOp::SsboAtomic { binding: word, op }
            }
            Op::Opcode(GenericOp::SsboAtomicLoad { .. }) => {
                GenericOp::SsboAtomicLoad { binding: word }
            }
            Op::Opcode(GenericOp::SsboAtomicStore { .. }) => {
                GenericOp::SsboAtomicStore { binding: word }
            }
            Op::Opcode(GenericOp::LoadUbo { .. }) => GenericOp::LoadUbo { binding: word },
            _ => unreachable!("only buffer accesses are renamed"),
        };
        copy.inst_mut(i).op = Op::Opcode(renamed);
    }
    // Sizes follow the addresses, one word each; `ssbo_size` becomes a
    // uniform read of its word.
    let mut sizes: Vec<BufferSize> = Vec::new();
    for (i, binding) in sized(&copy) {
        let fau = match sizes.iter().find(|s| s.binding == binding) {
            Some(s) => s.fau,
            None => {
                if next + 1 > fau_words {
                    return Err(unsupported(format!(
                        "the size of storage buffer {binding} does not fit in the FAU"
                    )));
                }
                sizes.push(BufferSize { fau: next, binding });
                next += 1;
                next - 1
            }
        };
        copy.inst_mut(i).op = Op::Opcode(GenericOp::LoadUniform { index: fau });
    }
    Ok(Some((copy, addresses, sizes)))
}

// ---------------------------------------------------------------------
// Compute dispatch values the driver pushes

/// A value of the dispatch the driver pushes into a FAU word, as Mesa's
/// panvk passes the workgroup count in its push-constant system values.
/// The workgroup size is one too: Mesa knows it when it compiles (NIR
/// computes the local invocation index from constants), Lathe's IR does
/// not carry it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverValue {
    /// Component 0..=2 of the workgroup size.
    WorkgroupSize(u8),
    /// Component 0..=2 of the dispatch size in workgroups.
    NumWorkgroups(u8),
    /// The multiview view index of a vertex or fragment shader. Mesa's
    /// panvk pushes it (its `layer_id` system value) where the hardware
    /// has no register for it (v6 to v8) and draws once per view; on v9
    /// and later Mesa's compiler reads the low byte of a preloaded
    /// "frame argument" register instead (`bi_emit_intrinsic`,
    /// `BI_PRELOAD_FRAME_ARG`), whose number and other bytes the spec
    /// does not record, so Lathe takes the pushed word on every version.
    ViewIndex,
}

/// One [`DriverValue`] and the FAU word `fau` that holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DriverWord {
    pub fau: u32,
    pub value: DriverValue,
}

/// A shader rewritten by [`push_driver_words`] and the words the driver
/// pushes for it.
pub type Pushed<'a> = (Shader<'a, GenericOp>, Vec<DriverWord>);

/// Reads the system values no register holds from FAU words the driver
/// pushes, from word `first_free` on: `num_workgroups` of a compute
/// shader and `view_index` of a vertex or fragment one are their words; `local_invocation_index` is x + size.x * (y + size.y * z) over
/// the local id (unpacked from r55 and r56 as [`unpack_preloads`] does)
/// and the workgroup size's words, as NIR lowers it for Mesa. `None`
/// when the shader reads neither; `unsupported:` when the words do not
/// fit in the `fau_words` of the file.
pub fn push_driver_words<'a>(
    generic: &Shader<'a, GenericOp>,
    first_free: u32,
    fau_words: u32,
) -> Result<Option<Pushed<'a>>, SelectError> {
    let wanted = |s: &Shader<'_, GenericOp>, i: Inst| {
        matches!(
            (s.stage, s.inst(i).op),
            (
                Stage::Compute,
                Op::Opcode(GenericOp::LoadSysval {
                    sysval: Sysval::NumWorkgroups | Sysval::LocalInvocationIndex,
                    ..
                }),
            ) | (
                Stage::Vertex | Stage::Fragment,
                Op::Opcode(GenericOp::LoadSysval {
                    sysval: Sysval::ViewIndex,
                    comp: 0,
                }),
            )
        )
    };
    if !generic.insts_in_order().any(|(_, i)| wanted(generic, i)) {
        return Ok(None);
    }
    let mut copy = working_copy(generic)?;
    let Some(entry) = copy.entry() else {
        return Ok(None);
    };
    let mut words: Vec<DriverWord> = Vec::new();
    let mut word = |value: DriverValue| -> Result<u32, SelectError> {
        if let Some(w) = words.iter().find(|w| w.value == value) {
            return Ok(w.fau);
        }
        let fau = first_free + words.len() as u32;
        if fau >= fau_words {
            return Err(unsupported(format!("{value:?} does not fit in the FAU")));
        }
        words.push(DriverWord { fau, value });
        Ok(fau)
    };
    // The preloaded local id registers, shared with the meta inputs
    // [`unpack_preloads`] made (one meta input per register).
    let mut head: Vec<Inst> = Vec::new();
    let mut inputs: BTreeMap<Preload, Value> = BTreeMap::new();
    for &i in copy.block_insts(entry) {
        if let (Op::Input { index }, Some(v)) = (copy.inst(i).op, copy.inst(i).result) {
            for p in [Preload::LocalIdXY, Preload::LocalIdZ] {
                if index == p.meta_index() {
                    inputs.insert(p, v);
                }
            }
        }
    }
    for b in copy.layout().to_vec() {
        let mut list = Vec::new();
        for i in copy.block_insts(b).to_vec() {
            let (Op::Opcode(GenericOp::LoadSysval { sysval, comp }), Some(result)) =
                (copy.inst(i).op, copy.inst(i).result)
            else {
                list.push(i);
                continue;
            };
            let ty = copy.value_type(result);
            match sysval {
                Sysval::NumWorkgroups if comp < 3 && wanted(&copy, i) => {
                    let index = word(DriverValue::NumWorkgroups(comp))?;
                    copy.inst_mut(i).op = Op::Opcode(GenericOp::LoadUniform { index });
                }
                Sysval::ViewIndex if wanted(&copy, i) => {
                    let index = word(DriverValue::ViewIndex)?;
                    copy.inst_mut(i).op = Op::Opcode(GenericOp::LoadUniform { index });
                }
                Sysval::LocalInvocationIndex if wanted(&copy, i) => {
                    let mut emit =
                        |copy: &mut Shader<'a, GenericOp>, op: GenericOp, args: &[Value]| {
                            let n = copy.create_inst(Op::Opcode(op), args, &[], None, Some(ty));
                            list.push(n);
                            copy.inst(n)
                                .result
                                .unwrap_or_else(|| unreachable!("created with a result"))
                        };
                    let mut reg =
                        |copy: &mut Shader<'a, GenericOp>, p: Preload| match inputs.get(&p) {
                            Some(&v) => v,
                            None => {
                                let n = copy.create_inst(
                                    Op::Input {
                                        index: p.meta_index(),
                                    },
                                    &[],
                                    &[],
                                    None,
                                    Some(Type::U32),
                                );
                                head.push(n);
                                let v = copy
                                    .inst(n)
                                    .result
                                    .unwrap_or_else(|| unreachable!("created with a result"));
                                inputs.insert(p, v);
                                v
                            }
                        };
                    let xy = reg(&mut copy, Preload::LocalIdXY);
                    let zw = reg(&mut copy, Preload::LocalIdZ);
                    let low = emit(&mut copy, GenericOp::Const { bits: 0xffff }, &[]);
                    let sixteen = emit(&mut copy, GenericOp::Const { bits: 16 }, &[]);
                    let x = emit(&mut copy, GenericOp::And, &[xy, low]);
                    let y = emit(&mut copy, GenericOp::Shr, &[xy, sixteen]);
                    let z = emit(&mut copy, GenericOp::And, &[zw, low]);
                    let sx = word(DriverValue::WorkgroupSize(0))?;
                    let sy = word(DriverValue::WorkgroupSize(1))?;
                    let sx = emit(&mut copy, GenericOp::LoadUniform { index: sx }, &[]);
                    let sy = emit(&mut copy, GenericOp::LoadUniform { index: sy }, &[]);
                    let zy = emit(&mut copy, GenericOp::IMul, &[z, sy]);
                    let row = emit(&mut copy, GenericOp::IAdd, &[zy, y]);
                    let rows = emit(&mut copy, GenericOp::IMul, &[row, sx]);
                    // The sysval instruction itself computes the last step.
                    copy.inst_mut(i).op = Op::Opcode(GenericOp::IAdd);
                    copy.set_args(i, &[rows, x]);
                }
                _ => {}
            }
            list.push(i);
        }
        copy.set_block_insts(b, &list);
    }
    let mut list = head;
    list.extend(copy.block_insts(entry).iter().copied());
    copy.set_block_insts(entry, &list);
    Ok(Some((copy, words)))
}

// ---------------------------------------------------------------------
// System values packed in preloaded registers

/// How a system value is computed from a preloaded register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unpack {
    /// The low (`false`) or high (`true`) 16-bit half.
    Half(bool),
    /// The centre of the pixel whose coordinate is that half, as f32.
    PixelCentre(bool),
    /// True when the register is zero.
    IsZero,
}

/// How a system value is computed from a packed preloaded register.
fn packed_sysval(stage: Stage, sysval: Sysval, comp: u8) -> Option<(Preload, Unpack)> {
    match (stage, sysval, comp) {
        (Stage::Compute, Sysval::LocalInvocationId, 0) => {
            Some((Preload::LocalIdXY, Unpack::Half(false)))
        }
        (Stage::Compute, Sysval::LocalInvocationId, 1) => {
            Some((Preload::LocalIdXY, Unpack::Half(true)))
        }
        (Stage::Compute, Sysval::LocalInvocationId, 2) => {
            Some((Preload::LocalIdZ, Unpack::Half(false)))
        }
        (Stage::Fragment, Sysval::FragCoord, 0) => {
            Some((Preload::PixelCoord, Unpack::PixelCentre(false)))
        }
        (Stage::Fragment, Sysval::FragCoord, 1) => {
            Some((Preload::PixelCoord, Unpack::PixelCentre(true)))
        }
        (Stage::Fragment, Sysval::FrontFacing, 0) => Some((Preload::Facing, Unpack::IsZero)),
        _ => None,
    }
}

/// Computes the system values the hardware preloads as 16-bit halves of
/// a register (as Mesa reads them on Valhall): the local invocation id
/// (x and y in r55, z in r56) and a fragment's position (the pixel's
/// integer x and y in r59; `frag_coord` is its centre, the pixel plus
/// 0.5), and the facing of a fragment's primitive (front when r58 is
/// zero). Each becomes the register's meta input (at the head of the
/// entry block) and the half extracted (`and 0xffff` / `shr 16`), then,
/// for the position, converted to f32 and offset by 0.5; the facing is
/// a compare with zero. `None` when the shader reads no such value.
pub fn unpack_preloads<'a>(
    generic: &Shader<'a, GenericOp>,
) -> Result<Option<Shader<'a, GenericOp>>, SelectError> {
    let packed = |s: &Shader<'_, GenericOp>, i: Inst| match s.inst(i).op {
        Op::Opcode(GenericOp::LoadSysval { sysval, comp }) => packed_sysval(s.stage, sysval, comp),
        _ => None,
    };
    if !generic
        .insts_in_order()
        .any(|(_, i)| packed(generic, i).is_some())
    {
        return Ok(None);
    }
    let mut copy = working_copy(generic)?;
    let Some(entry) = copy.entry() else {
        return Ok(None);
    };
    let mut inputs: BTreeMap<Preload, Value> = BTreeMap::new();
    let mut head = Vec::new();
    let blocks: Vec<Block> = copy.layout().to_vec();
    for b in blocks {
        let mut list = Vec::new();
        for i in copy.block_insts(b).to_vec() {
            let (Some((p, unpack)), Some(result)) = (packed(&copy, i), copy.inst(i).result) else {
                list.push(i);
                continue;
            };
            let ty = copy.value_type(result);
            let int = match unpack {
                Unpack::Half(_) => ty,
                Unpack::PixelCentre(_) | Unpack::IsZero => Type::U32,
            };
            let mut emit = |copy: &mut Shader<'a, GenericOp>, op: GenericOp, args: &[Value], ty| {
                let n = copy.create_inst(Op::Opcode(op), args, &[], None, Some(ty));
                list.push(n);
                copy.inst(n)
                    .result
                    .unwrap_or_else(|| unreachable!("created with a result"))
            };
            let reg = match inputs.get(&p) {
                Some(&v) => v,
                None => {
                    let n = copy.create_inst(
                        Op::Input {
                            index: p.meta_index(),
                        },
                        &[],
                        &[],
                        None,
                        Some(int),
                    );
                    head.push(n);
                    let v = copy
                        .inst(n)
                        .result
                        .unwrap_or_else(|| unreachable!("created with a result"));
                    inputs.insert(p, v);
                    v
                }
            };
            // The sysval instruction itself computes the last step.
            let (op, args) = if let Unpack::Half(high) | Unpack::PixelCentre(high) = unpack {
                let half = if high {
                    let k = emit(&mut copy, GenericOp::Const { bits: 16 }, &[], int);
                    emit(&mut copy, GenericOp::Shr, &[reg, k], int)
                } else {
                    let k = emit(&mut copy, GenericOp::Const { bits: 0xffff }, &[], int);
                    emit(&mut copy, GenericOp::And, &[reg, k], int)
                };
                if let Unpack::PixelCentre(_) = unpack {
                    let f = emit(&mut copy, GenericOp::Cvt, &[half], Type::F32);
                    let k = emit(
                        &mut copy,
                        GenericOp::Const {
                            bits: 0.5f32.to_bits(),
                        },
                        &[],
                        Type::F32,
                    );
                    (GenericOp::FAdd, vec![f, k])
                } else {
                    (
                        GenericOp::Mov {
                            abs: false,
                            neg: false,
                        },
                        vec![half],
                    )
                }
            } else {
                let k = emit(&mut copy, GenericOp::Const { bits: 0 }, &[], int);
                (GenericOp::IEq, vec![reg, k])
            };
            copy.inst_mut(i).op = Op::Opcode(op);
            copy.set_args(i, &args);
            list.push(i);
        }
        copy.set_block_insts(b, &list);
    }
    let mut list = head;
    list.extend(copy.block_insts(entry).iter().copied());
    copy.set_block_insts(entry, &list);
    Ok(Some(copy))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preloads_round_trip_through_their_meta_index() {
        for stage in [Stage::Vertex, Stage::Fragment, Stage::Compute] {
            for reg in 0..64 {
                if let Some(p) = Preload::in_stage(stage, reg) {
                    assert_eq!(Preload::register_of(p.meta_index()), Some(reg));
                    assert_eq!(p.register(), reg);
                }
            }
        }
        assert_eq!(Preload::register_of(3), None);
    }
}
