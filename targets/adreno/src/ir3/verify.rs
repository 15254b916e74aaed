//! A compiled ir3 program as a [`lathe_ir::verify::Executor`]: it runs
//! the emitted words on the generated simulator, one lane per thread,
//! with the inputs a driver would provide — preloaded input registers
//! from the [`Interface`](super::emit::Interface) (system values by its
//! const layout, [`super::abi`]), the const words the layout lists
//! (uniform word `k` in const register `c(k/4)` component `k%4`, driver
//! parameters, pushed UBO ranges; a compute workgroup is the threads
//! along x), UBO `b` as constant-space buffer `b`, SSBO `b` as
//! image/SSBO buffer `b` (the a6xx `ldib`/`stib` path), storage image
//! `k` in IBO slot [`ConstLayout::image_ibo_base`]` + k`, textures by
//! index, texture prefetches performed from the layout's description
//! before the first instruction (as the hardware does: their registers
//! wait for `(sy)`) — and
//! reads each output back from its register. `lathe compile --verify`
//! and the `compile_ir3` fuzz target use it.
//!
//! ```
//! use lathe_adreno::ir3::{compile::{compile_with, CompileOptions}, target::Ir3Target, verify::Ir3Program, GpuModel};
//! use lathe_ir::verify::{verify, Options};
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = load_uniform index=5\n  %2:f32 = fmul %0, %1\n  %3:f32 = rsqrt %2\n  store_output slot=0 comp=0 %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let generic = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! let gpu = "a630".parse::<GpuModel>().unwrap();
//! let target = std::rc::Rc::new(Ir3Target::new(gpu).unwrap());
//! let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
//! let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
//! let report = verify(&generic, &program, &Options::default()).unwrap();
//! assert_eq!(report.compared, 4); // 1 output × 4 threads
//! ```

use lathe_ir::atomic_order::AtomicEvent;
use lathe_ir::verify::{ExecError, Executor};
use lathe_ir::{Invocation, Memory, Outcome};
use lathe_ir::{Scalar, Type};
use lathe_isa::machine::MachineSpec;
use lathe_isa::sim::{F16, Loc, Operand};
use lathe_isa::sim_io::{GpuIo, Harness, Interp, LaneVarying, Space, TexOp, Texture};

use super::abi::ConstLayout;
use super::emit::{Compiled, Slot};
use super::generated::{MachineOp, Spec};
use super::select::{Interface, Port};
use super::sim::{self, Machine, SimError};
use super::{Generation, GpuModel};

/// A compiled program and what it needs to run.
#[derive(Clone, Copy, Debug)]
pub struct Ir3Program<'c> {
    pub compiled: &'c Compiled,
    /// The meta input/output indices' origins ([`super::compile::Output::ports`]).
    pub ports: &'c Interface,
    pub generation: Generation,
}

impl<'c> Ir3Program<'c> {
    pub fn new(compiled: &'c Compiled, ports: &'c Interface, gpu: GpuModel) -> Self {
        Ir3Program {
            compiled,
            ports,
            generation: gpu.generation(),
        }
    }

    /// The disassembly of instruction `pc`, for messages.
    fn line(&self, pc: usize) -> &str {
        self.compiled.asm.lines().nth(pc).unwrap_or("?")
    }

    fn register(m: &Machine, slot: &Slot) -> Result<(usize, bool, u32), ExecError> {
        m.parse_reg(&slot.register).ok_or_else(|| {
            ExecError::Failed(format!(
                "the simulator has no register {} (slot {})",
                slot.register, slot.index
            ))
        })
    }
}

/// Gives thread `lane` of `io` the varyings of `layout` as `inv` has
/// them (see [`lane_varying`]), for the barycentric pairs
/// [`barycentrics`] gives.
pub fn fragment_varyings(
    layout: &ConstLayout,
    lane: usize,
    inv: &Invocation,
    io: &mut Harness,
) -> Result<(), String> {
    for v in &layout.varyings {
        let bits = match v.sysval {
            Some(s) => inv.sysvals.get(s, v.comp),
            None => inv.inputs.get(&(v.slot, v.comp)).copied().ok_or_else(|| {
                format!("input slot {} component {} has no value", v.slot, v.comp)
            })?,
        };
        let pair = layout
            .barycentrics
            .iter()
            .position(|b| (b.mode, b.loc) == (v.interp.mode, v.interp.loc));
        let view = lane_varying(bits, v.ty, pair.map(barycentrics));
        io.lane_varyings.insert((lane, v.inloc), view);
    }
    Ok(())
}

/// The (i, j) the verifier preloads for the `k`-th barycentric pair of
/// the interface: powers of two whose ratio differs per pair, so a fetch
/// reading another pair (or another register) gets a wrong value (see
/// [`lane_varying`]).
pub fn barycentrics(k: usize) -> [f32; 2] {
    let k = k as i32 % 8;
    [2f32.powi(-1 - k), 2f32.powi(-2 - 2 * k)]
}

/// A thread's varying that gives exactly the interpreter's input `bits`
/// (of type `ty`) when read flat, or interpolated at `ij`: the plane
/// `v + i * (v / i) + j * (-v / j)`, which is `2v - v = v` in f32 with
/// every step exact for a normal `v` far from overflow (i and j are
/// powers of two), and `v + i * -0 + j * -0 = v` otherwise (zeros keep
/// their sign, NaN stays NaN). At any other (i, j) it is not `v`.
fn lane_varying(bits: u32, ty: Type, ij: Option<[f32; 2]>) -> LaneVarying {
    let v = if ty.scalar == Scalar::F16 {
        F16(bits as u16).to_f32()
    } else {
        f32::from_bits(bits)
    };
    let (di, dj) = match ij {
        Some([i, j]) if v.is_normal() && v.abs() < 2f32.powi(100) && v.abs() > 2f32.powi(-100) => {
            (v / i, -v / j)
        }
        _ => (-0.0, -0.0),
    };
    LaneVarying {
        flat: bits,
        at: v,
        di,
        dj,
    }
}

/// The storage-buffer atomics the run performed, in order (storage
/// buffer `b` is the harness's image-space binding `b`).
fn buffer_atomics(io: &Harness, ssbos: &[Vec<u32>]) -> Vec<AtomicEvent> {
    io.atomics
        .iter()
        .filter(|r| r.at.space == Space::Image && r.at.addr % 4 == 0)
        .filter_map(|r| {
            let words = ssbos.get(r.at.binding as usize)?;
            let word = u32::try_from(r.at.addr / 4)
                .ok()
                .filter(|&w| (w as usize) < words.len())?;
            Some(AtomicEvent {
                thread: r.lane as u32,
                binding: u8::try_from(r.at.binding).ok()?,
                word,
                old: r.old,
                new: r.new,
            })
        })
        .collect()
}

/// The producer a prefetched register's timing names (no instruction of
/// the program: the hardware's `sam` before it).
const PREFETCH_PRODUCER: usize = u32::MAX as usize;

/// Performs the layout's texture prefetches for every thread of `m` (its
/// I/O a [`Harness`]) as the hardware does before the shader starts:
/// the `sam` of two varying components at the perspective pixel-centre
/// barycentrics, through the simulator's own texture path, writing the
/// components `wrmask` selects from the register the interface names for
/// the prefetch's input, pending on `sam`'s sync until the shader waits.
fn run_prefetches(
    m: &mut Machine,
    layout: &ConstLayout,
    inputs: &[Slot],
    ports: &Interface,
) -> Result<(), ExecError> {
    let prefetches = &layout.prefetches;
    if prefetches.is_empty() {
        return Ok(());
    }
    let failed = |what: String| ExecError::Failed(format!("texture prefetch: {what}"));
    let pair = layout
        .barycentrics
        .iter()
        .position(|b| {
            (b.mode, b.loc) == (lathe_ir::InterpMode::Smooth, lathe_ir::InterpLoc::Center)
        })
        .ok_or_else(|| failed("no perspective pixel-centre barycentrics".into()))?;
    let [i, j] = barycentrics(pair);
    let sam = MachineOp::named("sam").ok_or_else(|| failed("the spec has no `sam`".into()))?;
    let meta = |key: &str| match sam.meta(key) {
        Some(lathe_isa::ast::MetaValue::Ident(v)) => Some(v.as_str()),
        _ => None,
    };
    let sync = meta("sync")
        .and_then(|k| {
            super::generated::sim::SYNC_KINDS
                .iter()
                .position(|x| *x == k)
        })
        .map(|k| k as u8 + 1)
        .ok_or_else(|| failed("the spec's `sam` has no sync kind".into()))?;
    let class = meta("latency")
        .and_then(|c| Spec::isa().latency.class(c))
        .map_or(u16::MAX, |c| c as u16);
    for p in prefetches {
        let slot = inputs
            .iter()
            .find(|s| ports.inputs.get(s.index as usize) == Some(&Port::Meta(p.input)))
            .ok_or_else(|| failed(format!("input {} has no register", p.input)))?;
        let (file, half, first) = m
            .parse_reg(&slot.register)
            .ok_or_else(|| failed(format!("no register {}", slot.register)))?;
        let at = |index: u32| Operand {
            half: half || p.half,
            ..Operand::at(Loc::Reg {
                file: file as u8,
                index,
            })
        };
        for lane in 0..m.lanes {
            let io = m
                .io_as_mut::<Harness>()
                .ok_or_else(|| failed("the machine's I/O is not the harness".into()))?;
            let coords = (0..2)
                .map(|c| {
                    io.varying(lane, p.inloc + c, Interp::Barycentric { i, j })
                        .map(u64::from)
                })
                .collect::<Result<Vec<u64>, _>>()
                .map_err(|e| failed(e.to_string()))?;
            m.io_texture_values(
                TexOp::Sample,
                &at(first),
                u32::from(p.wrmask),
                &coords,
                &[],
                u64::from(p.texture),
                u64::from(p.sampler),
                0,
                lane,
                0,
            )
            .map_err(|e| failed(e.to_string()))?;
        }
        for k in 0..p.wrmask.count_ones() {
            m.stamp_write(&at(first + k), 0, PREFETCH_PRODUCER, class, sync)
                .map_err(|e| failed(e.to_string()))?;
        }
    }
    Ok(())
}

/// Uniform word `k`'s const register name.
fn const_register(k: usize) -> String {
    format!("c{}.{}", k / 4, ['x', 'y', 'z', 'w'][k % 4])
}

impl Executor for Ir3Program<'_> {
    fn execute(
        &self,
        threads: &[Invocation],
        memory: &mut Memory,
    ) -> Result<Vec<Outcome>, ExecError> {
        let interface = &self.compiled.interface;
        // The driver uploads the shader's constant data.
        let bound;
        let threads = match &interface.consts.constant_data {
            Some(data) => {
                bound = data.bind(threads);
                &bound[..]
            }
            None => threads,
        };
        let mut m = sim::machine(threads.len());
        let local_size = [threads.len() as u32, 1, 1];
        for (lane, inv) in threads.iter().enumerate() {
            let ssbo_bytes: Vec<u32> = memory.ssbos.iter().map(|b| 4 * b.len() as u32).collect();
            let sizes = interface.consts.ssbo_size_words(&ssbo_bytes);
            for (k, bits) in interface
                .consts
                .const_words(inv, local_size)
                .into_iter()
                .chain(sizes)
            {
                let k = k as usize;
                let name = const_register(k);
                let (file, half, index) = m.parse_reg(&name).ok_or_else(|| {
                    ExecError::Failed(format!("uniform word {k}: no const register {name}"))
                })?;
                m.set(file, half, index, lane, bits);
            }
            for slot in &interface.inputs {
                let port = self.ports.inputs.get(slot.index as usize);
                // The prefetches' registers are written below, as the
                // hardware writes them.
                if let Some(&Port::Meta(k)) = port
                    && interface.consts.prefetches.iter().any(|p| p.input == k)
                {
                    continue;
                }
                if let Some(&Port::Meta(k)) = port
                    && let Some(pair) = interface
                        .consts
                        .barycentrics
                        .iter()
                        .position(|b| b.input == k)
                {
                    let (file, half, index) = Self::register(&m, slot)?;
                    for (c, x) in barycentrics(pair).into_iter().enumerate() {
                        m.set(file, half, index + c as u32, lane, x.to_bits());
                    }
                    continue;
                }
                let registers = match port {
                    Some(&Port::Slot(s, c)) => inv.inputs.get(&(s, c)).map(|&b| vec![b]),
                    Some(&Port::Meta(k)) => interface
                        .consts
                        .preload_registers(k, &inv.sysvals)
                        .or_else(|| inv.meta_inputs.get(k as usize).map(|&b| vec![b])),
                    None => None,
                }
                .ok_or_else(|| {
                    ExecError::Failed(format!("input {} ({port:?}) has no value", slot.index))
                })?;
                let (file, half, index) = Self::register(&m, slot)?;
                for (c, bits) in (0..).zip(registers) {
                    m.set(file, half, index + c, lane, bits);
                }
            }
        }
        let shared = threads.first();
        let mut io = Harness::default();
        for (lane, inv) in threads.iter().enumerate() {
            fragment_varyings(&interface.consts, lane, inv, &mut io).map_err(ExecError::Failed)?;
        }
        for (b, words) in shared.map_or(&[][..], |i| &i.ubos).iter().enumerate() {
            io.write_words(Space::Constant, b as u32, 0, words);
        }
        for (b, words) in memory.ssbos.iter().enumerate() {
            io.write_words(Space::Image, b as u32, 0, words);
        }
        io.textures = shared
            .map_or(&[][..], |i| &i.textures)
            .iter()
            .map(Texture::level0_of)
            .collect();
        let image_base = interface.consts.image_ibo_base;
        for (k, image) in (image_base..).zip(&memory.images) {
            io.images.insert(k, image.clone());
        }
        m.set_io(Box::new(io));
        run_prefetches(&mut m, &interface.consts, &interface.inputs, self.ports)?;

        match sim::run(&mut m, &self.compiled.words, self.generation) {
            Ok(()) => {}
            Err(SimError::Hazard {
                consumer,
                producer,
                reg,
                wait,
            }) => {
                let by = if producer == PREFETCH_PRODUCER {
                    "the texture prefetch wrote it".to_string()
                } else {
                    format!("instruction {producer} `{}` wrote it", self.line(producer))
                };
                return Err(ExecError::Hazard(format!(
                    "instruction {consumer} `{}` reads {reg} {wait}; {by}",
                    self.line(consumer)
                )));
            }
            Err(e) => return Err(ExecError::Failed(format!("simulator: {e}"))),
        }

        let mut outcomes = vec![Outcome::default(); threads.len()];
        for (lane, out) in outcomes.iter_mut().enumerate() {
            out.discarded = m.killed[lane];
            if out.discarded {
                continue;
            }
            for slot in &interface.outputs {
                let (file, half, index) = Self::register(&m, slot)?;
                let bits = m.get(file, half, index, lane).unwrap_or(0);
                match self.ports.outputs.get(slot.index as usize) {
                    Some(&Port::Slot(s, c)) => {
                        out.outputs.insert((s, c), (slot.ty, bits));
                    }
                    Some(&Port::Meta(k)) => {
                        out.meta_outputs.insert(k, (slot.ty, bits));
                    }
                    None => {
                        return Err(ExecError::Failed(format!(
                            "output {} has no port",
                            slot.index
                        )));
                    }
                }
            }
        }
        if let Some(io) = m.io_as::<Harness>() {
            memory.atomic_log = buffer_atomics(io, &memory.ssbos);
            for (b, words) in memory.ssbos.iter_mut().enumerate() {
                for (k, w) in words.iter_mut().enumerate() {
                    *w = io.word(Space::Image, b as u32, 0, 4 * k as u64);
                }
            }
            for (k, image) in (image_base..).zip(memory.images.iter_mut()) {
                if let Some(written) = io.images.get(&k) {
                    image.texels.clone_from(&written.texels);
                }
            }
        }
        Ok(outcomes)
    }
}
