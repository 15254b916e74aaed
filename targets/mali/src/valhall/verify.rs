//! A compiled Valhall program as a [`lathe_ir::verify::Executor`]: the
//! emitted words run on the generated simulator, one lane per thread,
//! fed as a driver and the fixed-function units would feed them
//! ([`super::abi`]): uniform word `k` in FAU word `uk`, pushed UBO words
//! and texture handles in theirs, the generic IR's
//! own meta inputs in the registers the interface names, the preloaded
//! registers (coverage 1, the varying state, vertex and instance ids),
//! and an I/O side ([`ShaderIo`]) that answers each thread's varying and
//! attribute loads with its invocation's inputs, passes the alpha test
//! and records what each `BLEND` writes to its render target. Outputs
//! are read back from the render targets, or from registers for meta
//! outputs and vertex outputs. `lathe compile --verify`, `lathe stats
//! --verify`, the `valhall_select` test and the `compile_valhall` fuzz
//! target use it.
//!
//! ```
//! use std::rc::Rc;
//! use lathe_mali::valhall::{compile::{compile_with, CompileOptions}, target::ValhallTarget, verify::ValhallProgram};
//! use lathe_ir::verify::{verify, Options};
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=1 interp=smooth\n  %1:f32 = load_uniform index=5\n  %2:f32 = fmul %0, %1\n  %3:f32 = rsqrt %2\n  store_output slot=0 comp=0 %3\n  store_output slot=0 comp=3 %0\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let generic = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! let target = Rc::new(ValhallTarget::new("g610".parse().unwrap()));
//! let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
//! assert!(out.compiled.listing().contains("LD_VAR_IMM"), "{}", out.compiled.listing());
//! assert!(out.compiled.listing().contains("BLEND"), "{}", out.compiled.listing());
//! let report = verify(&generic, &ValhallProgram::new(&out), &Options::default()).unwrap();
//! assert_eq!(report.compared, 8); // 2 output components × 4 threads
//! ```

use std::collections::HashMap;

use lathe_ir::atomic_order::AtomicEvent;
use lathe_ir::verify::{ExecError, Executor};
use lathe_ir::{Dim, Invocation, Memory, Outcome, Scalar, Type};
use lathe_isa::sim_io::{
    Access, AtomicOp, GpuIo, Harness, Interp, IoError, Space, TexRequest, Texture,
};

use super::abi::textures::{IMAGE_TABLE, SIZE_WORDS, SizeWords, SizedResource};
use super::abi::vertex::{self, Place};
use super::abi::{BufferKind, DriverValue, Io, Preload};
use super::compile::Output;
use super::select::Port;
use super::sim::{self, Machine, SimError};

/// A compiled program and what it needs to run.
#[derive(Clone, Copy, Debug)]
pub struct ValhallProgram<'c> {
    pub out: &'c Output,
}

impl<'c> ValhallProgram<'c> {
    pub fn new(out: &'c Output) -> Self {
        ValhallProgram { out }
    }

    fn line(&self, pc: usize) -> &str {
        self.out
            .compiled
            .disassembly
            .get(pc)
            .map_or("?", String::as_str)
    }
}

/// The fixed-function side of a run: each thread's varyings and
/// attributes, memory and textures (a [`Harness`]), the alpha test
/// (everything passes) and the blended render targets.
#[derive(Debug, Default)]
pub struct ShaderIo {
    pub harness: Harness,
    /// The storage images, by index, each in global memory at
    /// [`image_base`].
    images: Vec<lathe_ir::Image>,
    /// Per lane, varying component slot (`4 * location + component`) or
    /// attribute `(location, component)` → bits as the load delivers them.
    inputs: Vec<HashMap<(u16, u8), u32>>,
    /// Per lane, the fragment position and point coordinate (f32 bits).
    positions: Vec<([u32; 4], [u32; 2])>,
}

impl ShaderIo {
    /// The I/O side of `threads` for a program whose messages are `io`.
    pub fn new(io: &Io, threads: &[Invocation]) -> ShaderIo {
        let inputs = threads
            .iter()
            .map(|t| {
                let mut lane = HashMap::new();
                for load in &io.loads {
                    for c in 0..load.comps {
                        let Some(&bits) = t.inputs.get(&(load.location, c)) else {
                            continue;
                        };
                        // A 16-bit float is loaded as f32 (exactly).
                        let bits = if load.scalar == Scalar::F16 {
                            (lathe_ir::f16::to_f64(bits as u16) as f32).to_bits()
                        } else {
                            bits
                        };
                        lane.insert((load.location, c), bits);
                    }
                }
                lane
            })
            .collect();
        let positions = threads
            .iter()
            .map(|t| {
                let s = &t.sysvals;
                (
                    s.frag_coord.map(f32::to_bits),
                    s.point_coord.map(f32::to_bits),
                )
            })
            .collect();
        ShaderIo {
            harness: Harness::default(),
            images: Vec::new(),
            inputs,
            positions,
        }
    }

    fn position(&self, lane: usize) -> Result<([u32; 4], [u32; 2]), IoError> {
        self.positions
            .get(lane)
            .copied()
            .ok_or_else(|| IoError(format!("thread {lane} has no fragment position")))
    }

    fn input(&self, lane: usize, location: u16, comp: u8) -> Result<u32, IoError> {
        self.inputs
            .get(lane)
            .and_then(|l| l.get(&(location, comp)))
            .copied()
            .ok_or_else(|| {
                IoError(format!(
                    "thread {lane} has no input {location}.{comp} (the load reads more components than the shader uses)"
                ))
            })
    }

    /// Image `index` of table [`IMAGE_TABLE`]: texel `(x, y, z or sample,
    /// layer)`'s address and the image's words per texel; `None` out of
    /// bounds.
    fn texel(
        &self,
        [x, y, third, layer]: [u32; 4],
        descriptor: u32,
    ) -> Result<Option<[u32; 3]>, IoError> {
        let (table, index) = (descriptor >> 24, descriptor & 0xff_ffff);
        let image = self
            .images
            .get(index as usize)
            .filter(|_| table == IMAGE_TABLE)
            .ok_or_else(|| IoError(format!("no image {index} in resource table {table}")))?;
        let (z, sample) = if image.samples > 1 {
            (0, third)
        } else {
            (third, 0)
        };
        let inside = x < image.width
            && y < image.height
            && z < image.depth.max(1)
            && layer < image.layers.max(1)
            && sample < image.samples.max(1);
        if !inside {
            return Ok(None);
        }
        let texel = (((u64::from(layer) * u64::from(image.depth.max(1)) + u64::from(z))
            * u64::from(image.height)
            + u64::from(y))
            * u64::from(image.width)
            + u64::from(x))
            * u64::from(image.samples.max(1))
            + u64::from(sample);
        let address = image_base(index as usize) + TEXEL_BYTES * texel;
        Ok(Some([
            address as u32,
            (address >> 32) as u32,
            u32::from(image.channels),
        ]))
    }
}

impl GpuIo for ShaderIo {
    fn load(&mut self, lane: usize, at: Access) -> Result<u32, IoError> {
        self.harness.load(lane, thread_local(at))
    }
    fn store(&mut self, lane: usize, at: Access, bits: u32) -> Result<(), IoError> {
        self.harness.store(lane, thread_local(at), bits)
    }
    fn atomic(
        &mut self,
        lane: usize,
        at: Access,
        op: AtomicOp,
        data: u32,
        compare: u32,
    ) -> Result<u32, IoError> {
        self.harness
            .atomic(lane, thread_local(at), op, data, compare)
    }
    fn varying(&mut self, lane: usize, slot: u32, _interp: Interp) -> Result<u32, IoError> {
        // The invocation's value is the interpolated one: where the
        // thread samples is the I/O side's business.
        let location =
            u16::try_from(slot / 4).map_err(|_| IoError(format!("varying slot {slot}")))?;
        match self.input(lane, location, (slot % 4) as u8) {
            Ok(bits) => Ok(bits),
            // Components past the ones the shader reads are don't-care.
            Err(_) => Ok(0),
        }
    }
    fn attribute(
        &mut self,
        lane: usize,
        index: u32,
        _vertex: u32,
        _instance: u32,
    ) -> Result<[u32; 4], IoError> {
        let location = u16::try_from(index).map_err(|_| IoError(format!("attribute {index}")))?;
        Ok(std::array::from_fn(|c| {
            self.input(lane, location, c as u8).unwrap_or(0)
        }))
    }
    fn texture(&mut self, lane: usize, req: &TexRequest) -> Result<[u32; 4], IoError> {
        self.harness.texture(lane, req)
    }
    /// Image `index` of table [`IMAGE_TABLE`] (Mesa's resource handle):
    /// texel `(x, y, z or sample, layer)` at [`image_base`] plus 16 bytes
    /// per texel in the interpreter's order (sample fastest, then x, y, z,
    /// layer); the conversion word is the image's words per texel.
    fn texel_address(
        &mut self,
        _lane: usize,
        coords: [u32; 4],
        descriptor: u32,
    ) -> Result<[u32; 3], IoError> {
        let [x, y, third, layer] = coords;
        self.texel(coords, descriptor)?.ok_or_else(|| {
            let index = descriptor & 0xff_ffff;
            IoError(format!(
                "texel ({x}, {y}, {third}, {layer}) is outside image {index}"
            ))
        })
    }
    /// The texel [`ShaderIo::texel_address`] addresses, its words read
    /// back from global memory (the verifier's images hold 32-bit words).
    /// Out of bounds it gives zeros: without robust image access the value
    /// is undefined, and the interpreter does not compare it.
    fn texel_load(
        &mut self,
        lane: usize,
        coords: [u32; 4],
        descriptor: u32,
    ) -> Result<[u32; 4], IoError> {
        let Some([lo, hi, _]) = self.texel(coords, descriptor)? else {
            return Ok([0; 4]);
        };
        let at = u64::from(lo) | (u64::from(hi) << 32);
        Ok(std::array::from_fn(|c| {
            self.harness.word(Space::Global, 0, lane, at + 4 * c as u64)
        }))
    }
    /// The words of a texel the conversion word's count says (the
    /// verifier's images hold 32-bit words).
    fn convert_store(
        &mut self,
        _lane: usize,
        address: u64,
        conversion: u32,
        data: &[u32],
    ) -> Result<(), IoError> {
        if conversion == 0 || conversion > 4 {
            return Err(IoError(format!(
                "conversion word {conversion} was not made by LEA_TEX"
            )));
        }
        let n = (conversion as usize).min(data.len());
        self.harness
            .write_words(Space::Global, 0, address, &data[..n]);
        Ok(())
    }
    /// The IDVS output buffer: structure `k` at [`OUTPUT_BASE`] plus
    /// [`STRUCTURE_BYTES`] `* k` (the layout is the harness's; the
    /// hardware's is not documented).
    fn buffer_address(
        &mut self,
        _lane: usize,
        descriptor: u32,
        structure: u32,
    ) -> Result<[u32; 2], IoError> {
        let outputs = (u32::from(vertex::OUTPUT_TABLE) << 24) | u32::from(vertex::OUTPUT_BUFFER);
        if descriptor != outputs {
            return Err(IoError(format!(
                "buffer descriptor 0x{descriptor:08x} is not the IDVS output buffer"
            )));
        }
        let at = OUTPUT_BASE + STRUCTURE_BYTES * u64::from(structure);
        Ok([at as u32, (at >> 32) as u32])
    }
    fn frag_coord(&mut self, lane: usize) -> Result<[u32; 4], IoError> {
        self.position(lane).map(|p| p.0)
    }
    fn point_coord(&mut self, lane: usize) -> Result<[u32; 2], IoError> {
        self.position(lane).map(|p| p.1)
    }
    fn barrier(&mut self, lane: usize) -> Result<(), IoError> {
        self.harness.barrier(lane)
    }
    fn atest(
        &mut self,
        lane: usize,
        coverage: u32,
        alpha: f32,
        datum: u32,
    ) -> Result<u32, IoError> {
        self.harness.atest(lane, coverage, alpha, datum)
    }
    fn blend(
        &mut self,
        lane: usize,
        target: u32,
        coverage: u32,
        rgba: &[u32],
    ) -> Result<(), IoError> {
        self.harness.blend(lane, target, coverage, rgba)
    }
}

/// The base address the harness gives the `k`th addressed buffer (its
/// own 4 GiB window, so no buffer overlaps another). The special values
/// start zeroed, so the workgroup-local pointer is 0 and shared memory
/// is the first window, which no buffer uses.
fn buffer_base(k: usize) -> u64 {
    (k as u64 + 1) << 32
}

/// The base address of storage image `k` (windows above the buffers').
fn image_base(k: usize) -> u64 {
    (k as u64 + 0x100) << 32
}

/// Where the harness's IDVS output buffer starts (a window above the
/// images').
const OUTPUT_BASE: u64 = 0x200 << 32;

/// The thread-local pointer the harness gives every thread (a window
/// above the IDVS output's). The hardware gives each thread its own
/// area behind the one pointer value, so an address in this window,
/// whether the pointer itself (the spec's private access) or computed
/// from it (Mesa's `IADD` of the pointer and an offset, which the spec
/// sees as a global access), is that thread's private memory.
const TLS_BASE: u64 = 0x300 << 32;

/// `at`, in the thread's private memory when it addresses the
/// thread-local window.
fn thread_local(at: Access) -> Access {
    if at.space == Space::Global && at.addr >> 32 == TLS_BASE >> 32 {
        Access {
            space: Space::Private,
            binding: 0,
            ..at
        }
    } else {
        at
    }
}

/// The special registers holding the low and high words of the
/// `thread_local_pointer` FAU value, as the spec's operand semantics
/// place it: found by running two reads of it on a machine whose special
/// registers hold their own numbers.
fn tls_registers(machine: &Machine) -> Result<[(usize, bool, u32); 2], ExecError> {
    static FOUND: std::sync::OnceLock<Result<[String; 2], String>> = std::sync::OnceLock::new();
    let names = FOUND.get_or_init(|| {
        let arch = super::Arch::V10;
        let text =
            "MOV.i32 r0, thread_local_pointer.w0\nMOV.i32 r1, thread_local_pointer.w1\nNOP.end\n";
        let program = super::assemble_source(text, arch).map_err(|e| e.to_string())?;
        let mut m = sim::machine(1);
        let mut k = 0u32;
        while let Some((file, half, n)) = m.parse_reg(&format!("sr{k}")) {
            m.set(file, half, n, 0, k);
            k += 1;
        }
        sim::run(&mut m, &program, arch).map_err(|e| e.to_string())?;
        let read = |r: &str| {
            m.parse_reg(r)
                .and_then(|(file, half, n)| m.get(file, half, n, 0))
                .map(|k| format!("sr{k}"))
                .ok_or_else(|| format!("no {r} after reading the thread-local pointer"))
        };
        Ok([read("r0")?, read("r1")?])
    });
    let [lo, hi] = names.as_ref().map_err(|e| ExecError::Failed(e.clone()))?;
    Ok([register(machine, lo)?, register(machine, hi)?])
}

/// Bytes per structure of the IDVS output buffer (one slot).
const STRUCTURE_BYTES: u64 = vertex::SLOT_BYTES as u64;

/// The structure index the harness preloads in r59 for `lane`: each
/// vertex gets `stride` structures, room for its point size (structure
/// [`vertex::POINT_SIZE_STRUCTURE`]) and every varying of `io`'s layout.
fn idvs_index(io: &Io, lane: usize) -> u32 {
    lane as u32 * idvs_stride(io)
}

fn idvs_stride(io: &Io) -> u32 {
    let extent = io
        .varyings
        .values()
        .map(|&o| o / vertex::SLOT_BYTES + 1)
        .max()
        .unwrap_or(0);
    extent
        .max(vertex::POINT_SIZE_STRUCTURE + 1)
        .next_power_of_two()
}

/// Where component `stored` of `lane`'s outputs lives in the harness.
fn stored_address(io: &Io, lane: usize, stored: &vertex::Stored) -> u64 {
    let structure = u64::from(idvs_index(io, lane));
    let record = OUTPUT_BASE + STRUCTURE_BYTES * structure;
    match stored.place {
        Place::Position { offset } | Place::Varying { offset } => record + u64::from(offset),
        Place::PointSize => record + STRUCTURE_BYTES * u64::from(vertex::POINT_SIZE_STRUCTURE),
    }
}

/// Bytes per texel of an image in global memory (four 32-bit words,
/// whatever the format stores).
const TEXEL_BYTES: u64 = 16;

/// The size words the driver pushes for `resource`
/// ([`SizeWords::words`]): level 0 of the texture or image the
/// interpreter has, its array size and level count.
fn resource_size(
    resource: SizedResource,
    inv: &Invocation,
    memory: &Memory,
) -> Result<[u32; SIZE_WORDS as usize], ExecError> {
    let missing = || ExecError::Failed(format!("{resource:?} is not bound"));
    let cubes = |dim: Dim, layers: u32| if dim == Dim::Cube { layers / 6 } else { layers };
    Ok(match resource {
        SizedResource::Texture(t) => {
            let t = inv.textures.get(usize::from(t)).ok_or_else(missing)?;
            let l = t.levels.first().ok_or_else(missing)?;
            SizeWords::words(
                [l.width, l.height, l.depth],
                cubes(t.dim, t.layers),
                t.levels.len() as u32,
            )
        }
        SizedResource::Image(i) => {
            let i = memory.images.get(usize::from(i)).ok_or_else(missing)?;
            // The image does not record whether its view is a cube (the
            // verifier's are 2D): its layer count is the array size.
            SizeWords::words([i.width, i.height, i.depth], i.layers, 1)
        }
    })
}

/// Register `name` of the simulator, or a failure naming it.
fn register(m: &Machine, name: &str) -> Result<(usize, bool, u32), ExecError> {
    m.parse_reg(name)
        .ok_or_else(|| ExecError::Failed(format!("the simulator has no register {name}")))
}

impl Executor for ValhallProgram<'_> {
    /// Runs the shader; an IDVS pair runs the position shader, then the
    /// varying shader from the same memory (its memory effects are
    /// dropped: a vertex shader may run more than once per vertex, and
    /// the first run's are kept), each thread's outputs the union of
    /// both runs'.
    fn execute(
        &self,
        threads: &[Invocation],
        memory: &mut Memory,
    ) -> Result<Vec<Outcome>, ExecError> {
        let Some(varying) = &self.out.varying else {
            return self.run(threads, memory);
        };
        let mut scratch = memory.clone();
        let mut outcomes = self.run(threads, memory)?;
        let more = ValhallProgram::new(varying).run(threads, &mut scratch)?;
        for (o, m) in outcomes.iter_mut().zip(more) {
            o.outputs.extend(m.outputs);
            o.meta_outputs.extend(m.meta_outputs);
        }
        Ok(outcomes)
    }
}

impl ValhallProgram<'_> {
    /// One program's run.
    fn run(&self, threads: &[Invocation], memory: &mut Memory) -> Result<Vec<Outcome>, ExecError> {
        let out = self.out;
        // The driver uploads the shader's constant data.
        let bound;
        let threads = match &out.io.constant_data {
            Some(data) => {
                bound = data.bind(threads);
                &bound[..]
            }
            None => threads,
        };
        let mut m = sim::machine(threads.len());
        // The run is the first threads of one workgroup (x fastest): the
        // smallest box that holds their local ids gives each of them the
        // local index the declared size gives.
        let workgroup: [u32; 3] = std::array::from_fn(|c| {
            threads
                .iter()
                .map(|t| t.sysvals.local_invocation_id[c] + 1)
                .max()
                .unwrap_or(1)
        });
        let tls = tls_registers(&m)?;
        for (lane, inv) in threads.iter().enumerate() {
            for ((file, half, n), bits) in tls
                .into_iter()
                .zip([TLS_BASE as u32, (TLS_BASE >> 32) as u32])
            {
                m.set(file, half, n, lane, bits);
            }
            for (k, &bits) in inv.uniforms.iter().enumerate() {
                let (file, half, n) = register(&m, &format!("u{k}"))?;
                m.set(file, half, n, lane, bits);
            }
            for w in &out.io.pushed {
                let bits = inv
                    .ubos
                    .get(usize::from(w.binding))
                    .and_then(|b| b.get((w.byte_offset / 4) as usize))
                    .copied()
                    .ok_or_else(|| {
                        ExecError::Failed(format!(
                            "UBO {} has no word at byte {}",
                            w.binding, w.byte_offset
                        ))
                    })?;
                let (file, half, n) = register(&m, &format!("u{}", w.fau))?;
                m.set(file, half, n, lane, bits);
            }
            for h in &out.io.textures {
                let (file, half, n) = register(&m, &format!("u{}", h.fau))?;
                m.set(file, half, n, lane, h.word());
            }
            for w in &out.io.texture_sizes {
                let words = resource_size(w.resource, inv, memory)?;
                for (k, bits) in words.into_iter().enumerate() {
                    let (file, half, n) = register(&m, &format!("u{}", w.fau + k as u32))?;
                    m.set(file, half, n, lane, bits);
                }
            }
            for w in &out.io.driver_words {
                let bits = match w.value {
                    DriverValue::WorkgroupSize(c) => workgroup[usize::from(c)],
                    DriverValue::NumWorkgroups(c) => inv.sysvals.num_workgroups[usize::from(c)],
                    DriverValue::ViewIndex => inv.sysvals.view_index,
                };
                let (file, half, n) = register(&m, &format!("u{}", w.fau))?;
                m.set(file, half, n, lane, bits);
            }
            for w in &out.io.constants {
                let (file, half, n) = register(&m, &format!("u{}", w.fau))?;
                m.set(file, half, n, lane, w.bits);
            }
            for size in &out.io.sizes {
                let bytes = memory
                    .ssbos
                    .get(usize::from(size.binding))
                    .map_or(0, |words| 4 * words.len() as u32);
                let (file, half, n) = register(&m, &format!("u{}", size.fau))?;
                m.set(file, half, n, lane, bytes);
            }
            for (k, a) in out.io.addresses.iter().enumerate() {
                let base = buffer_base(k);
                for (word, bits) in [(a.fau, base as u32), (a.fau + 1, (base >> 32) as u32)] {
                    let (file, half, n) = register(&m, &format!("u{word}"))?;
                    m.set(file, half, n, lane, bits);
                }
            }
            for &(port, reg) in &out.inputs {
                let bits = match port {
                    Port::Slot(slot, comp) => inv.inputs.get(&(slot, comp)).copied(),
                    Port::Meta(k) => inv.meta_inputs.get(k as usize).copied(),
                }
                .ok_or_else(|| ExecError::Failed(format!("input {port:?} has no value")))?;
                let (file, half, n) = register(&m, &format!("r{reg}"))?;
                m.set(file, half, n, lane, bits);
            }
            for &p in &out.io.preloads {
                let bits = match p {
                    // One sample, covered.
                    Preload::Coverage => 1,
                    // Not read by the model (the I/O side knows where
                    // each thread samples).
                    Preload::VaryingState => 0,
                    Preload::VertexId => inv.sysvals.vertex_index,
                    Preload::InstanceId => inv.sysvals.instance_index,
                    Preload::IdvsIndex => idvs_index(&out.io, lane),
                    Preload::WorkgroupId(c) => inv.sysvals.workgroup_id[usize::from(c)],
                    Preload::GlobalId(c) => inv.sysvals.global_invocation_id[usize::from(c)],
                    Preload::LocalIdXY => {
                        let [x, y, _] = inv.sysvals.local_invocation_id;
                        (x & 0xffff) | (y << 16)
                    }
                    Preload::LocalIdZ => inv.sysvals.local_invocation_id[2] & 0xffff,
                    // Zero for a primitive that faces front.
                    Preload::Facing => u32::from(!inv.sysvals.front_facing),
                    // The pixel whose centre the position is.
                    Preload::PixelCoord => {
                        let [x, y, ..] = inv.sysvals.frag_coord;
                        (x.floor() as u32 & 0xffff) | ((y.floor() as u32) << 16)
                    }
                };
                let (file, half, n) = register(&m, &format!("r{}", p.register()))?;
                m.set(file, half, n, lane, bits);
            }
        }
        let mut io = ShaderIo::new(&out.io, threads);
        let shared = threads.first();
        for (b, words) in shared.map_or(&[][..], |i| &i.ubos).iter().enumerate() {
            io.harness.write_words(Space::Constant, b as u32, 0, words);
        }
        // Buffers at addresses: global memory (binding 0, as the LOAD and
        // STORE semantics address it) at the base the FAU holds.
        for (k, a) in out.io.addresses.iter().enumerate() {
            let words = match a.kind {
                BufferKind::Storage => memory.ssbos.get(usize::from(a.binding)),
                BufferKind::Uniform => shared.and_then(|i| i.ubos.get(usize::from(a.binding))),
            };
            if let Some(words) = words {
                io.harness
                    .write_words(Space::Global, 0, buffer_base(k), words);
            }
        }
        for (k, image) in memory.images.iter().enumerate() {
            for (n, texel) in image.texels.iter().enumerate() {
                io.harness.write_words(
                    Space::Global,
                    0,
                    image_base(k) + TEXEL_BYTES * n as u64,
                    texel,
                );
            }
        }
        io.images = memory.images.clone();
        io.harness.textures = shared
            .map_or(&[][..], |i| &i.textures)
            .iter()
            .map(Texture::level0_of)
            .collect();
        m.set_io(Box::new(io));

        let compiled = &out.compiled;
        match sim::run(&mut m, &compiled.words, compiled.model.arch()) {
            Ok(()) => {}
            Err(SimError::Hazard {
                consumer,
                producer,
                reg,
                wait,
            }) => {
                return Err(ExecError::Hazard(format!(
                    "instruction {consumer} `{}` reads {reg} {wait}; instruction {producer} `{}` wrote it",
                    self.line(consumer),
                    self.line(producer)
                )));
            }
            Err(e) => return Err(ExecError::Failed(format!("simulator: {e}"))),
        }

        let mut outcomes = vec![Outcome::default(); threads.len()];
        for (lane, o) in outcomes.iter_mut().enumerate() {
            o.discarded = m.killed[lane];
            if o.discarded {
                continue;
            }
            for &(port, reg) in &out.outputs {
                let (file, half, n) = register(&m, &format!("r{reg}"))?;
                let bits = m.get(file, half, n, lane).unwrap_or(0);
                // The register holds the bits; the type is the
                // interpreter's (compared by its own output's type).
                let ty = Type::U32;
                match port {
                    Port::Slot(s, c) => o.outputs.insert((s, c), (ty, bits)),
                    Port::Meta(k) => o.meta_outputs.insert(k, (ty, bits)),
                };
            }
        }
        let io = m
            .io_as::<ShaderIo>()
            .ok_or_else(|| ExecError::Failed("the simulator lost its I/O side".into()))?;
        for (lane, o) in outcomes.iter_mut().enumerate() {
            if o.discarded {
                continue;
            }
            for rt in &out.io.render_targets {
                for c in 0..rt.comps {
                    if let Some(&bits) =
                        io.harness
                            .outputs
                            .get(&(lane, u32::from(rt.index), u32::from(c)))
                    {
                        o.outputs
                            .insert((rt.index, c), (Type::scalar(rt.scalar), bits));
                    }
                }
            }
        }
        // Vertex outputs, read back from the output buffer.
        for (lane, o) in outcomes.iter_mut().enumerate() {
            for stored in &out.io.stored {
                let word =
                    io.harness
                        .word(Space::Global, 0, 0, stored_address(&out.io, lane, stored));
                let value = match stored.place {
                    // An f16, reported as such (the interpreter's f32
                    // is compared at that precision).
                    Place::PointSize => (Type::F16, word & 0xffff),
                    _ => (Type::scalar(stored.scalar), word),
                };
                o.outputs.insert((stored.slot, stored.comp), value);
            }
        }
        // Storage-buffer atomics in the order performed: each buffer
        // has its own window of the global space.
        memory.atomic_log = io
            .harness
            .atomics
            .iter()
            .filter(|r| r.at.space == Space::Global && r.at.addr % 4 == 0)
            .filter_map(|r| {
                let k = usize::try_from((r.at.addr >> 32).checked_sub(1)?).ok()?;
                let a = out.io.addresses.get(k)?;
                let words = memory.ssbos.get(usize::from(a.binding))?;
                let word = ((r.at.addr & 0xffff_ffff) / 4) as u32;
                (a.kind == BufferKind::Storage && (word as usize) < words.len()).then_some(
                    AtomicEvent {
                        thread: r.lane as u32,
                        binding: a.binding,
                        word,
                        old: r.old,
                        new: r.new,
                    },
                )
            })
            .collect();
        for (k, a) in out.io.addresses.iter().enumerate() {
            if a.kind != BufferKind::Storage {
                continue;
            }
            if let Some(words) = memory.ssbos.get_mut(usize::from(a.binding)) {
                for (n, w) in words.iter_mut().enumerate() {
                    *w = io
                        .harness
                        .word(Space::Global, 0, 0, buffer_base(k) + 4 * n as u64);
                }
            }
        }
        for (k, image) in memory.images.iter_mut().enumerate() {
            let words = usize::from(image.channels).min(4);
            for (n, texel) in image.texels.iter_mut().enumerate() {
                for (c, w) in texel.iter_mut().enumerate().take(words) {
                    let at = image_base(k) + TEXEL_BYTES * n as u64 + 4 * c as u64;
                    *w = io.harness.word(Space::Global, 0, 0, at);
                }
            }
        }
        Ok(outcomes)
    }
}
