//! Instruction selection proven by execution: generic programs run in the
//! IR interpreter, and the same programs selected with the ir3 rules,
//! grouped, scheduled and register-allocated on a630's and a740's facts
//! run on the generated ir3 simulator; their outputs must agree on random
//! inputs. Exact operations must give identical bits; the SFU's
//! approximations (and the reductions around them) agree within a
//! tolerance, and feed nothing but outputs, so their last-bit differences
//! never steer a compare.
//!
//! Programs come from a small random generator
//! (`lathe_passes::fuzzing::select`, shared with Valhall's test) over the vocabulary the
//! rules cover (straight-line arithmetic over every scalar type,
//! conversions, compares and selects, if/else diamonds with phis,
//! uniforms, constants that fold as immediates) and from hand-written
//! cases, among them texture operations on a 4×4 texture that the
//! interpreter and the simulator's `Harness` both hold (nearest filtering,
//! clamp to edge: bit-exact). `IR3_SELECT_PROGRAMS=N` runs N random
//! programs (default 150).

use std::collections::HashMap;

use lathe_adreno::ir3::select::{Port, SelectOptions, select_with};
use lathe_adreno::ir3::verify::{barycentrics, fragment_varyings};
use lathe_adreno::ir3::{GpuModel, collects, run, sim, target::Ir3Target};
use lathe_ir::interp::{self, Invocation, Limits, Memory};
use lathe_ir::{GenericOp, Shader};
use lathe_isa::machine_run::Place;
use lathe_isa::sim::{Harness, Space};
use lathe_passes::fuzzing::select::{ALL_APPROX, Vocabulary, agree};
use lathe_passes::ra::{RaOptions, allocate};
use lathe_passes::{group, sched};

fn random_program<'a>(arena: &'a lathe_ir::Bump, seed: u64) -> (Shader<'a, GenericOp>, Invocation) {
    let vocabulary = Vocabulary { approx: ALL_APPROX };
    lathe_passes::fuzzing::select::random_program(arena, seed, vocabulary)
}

/// The workgroup size the driver-parameter tests dispatch with (the
/// interpreter takes the global invocation id as given, so the tests make
/// it agree with this size).
const LOCAL_SIZE: [u32; 3] = [8, 4, 2];

/// Runs `generic` in the interpreter and, selected and allocated on
/// `model`, on the simulator; `Err` names the first difference. `Ok(false)`
/// when the interpreter found undefined behaviour (nothing to compare).
fn differential(
    generic: &Shader<'_, GenericOp>,
    inv: &Invocation,
    model: &str,
) -> Result<bool, String> {
    differential_with_memory(generic, inv, &Memory::default(), model, None)
}

/// [`differential`] with the simulator's GPU side (textures, varyings)
/// given by `io`.
fn differential_io(
    generic: &Shader<'_, GenericOp>,
    inv: &Invocation,
    model: &str,
    io: Harness,
) -> Result<bool, String> {
    differential_with_memory(generic, inv, &Memory::default(), model, Some(io))
}

/// [`differential`] from storage buffers `memory` (and textures, varyings
/// in `io`): the buffers and the shared memory the program leaves must
/// agree too.
fn differential_with_memory(
    generic: &Shader<'_, GenericOp>,
    inv: &Invocation,
    memory: &Memory,
    model: &str,
    io: Option<Harness>,
) -> Result<bool, String> {
    lathe_ir::validate(generic).map_err(|e| format!("invalid program: {e:?}"))?;
    let mut after = memory.clone();
    let want = match interp::run_with_memory(generic, inv, &mut after, Limits::default()) {
        Ok(o) => o,
        Err(e) if e.is_undefined() => return Ok(false),
        Err(e) => return Err(format!("interpreter: {e}")),
    };
    let target = Ir3Target::new(model.parse::<GpuModel>().unwrap()).unwrap();
    // Every sample through the rules (no texture prefetch: the hardware's
    // samples before the shader are `--verify`'s to check).
    let options = SelectOptions {
        no_prefetch: true,
        ..SelectOptions::default()
    };
    let selected = select_with(generic, &target, &options).map_err(|e| e.to_string())?;
    let mut shader = selected.shader;
    lathe_ir::validate(&shader)
        .map_err(|e| format!("selected IR invalid: {e:?}\n{}", lathe_ir::print(&shader)))?;
    group::group(&mut shader, &target);
    sched::schedule(&mut shader, &target);
    allocate(&mut shader, &target, RaOptions::default()).map_err(|e| format!("ra: {e}"))?;
    collects::place(&mut shader, &target).map_err(|e| format!("collects: {e}"))?;
    let mut m = sim::machine(1);
    for (k, bits) in selected.consts.const_words(inv, LOCAL_SIZE) {
        let name = format!("c{}.{}", k / 4, ['x', 'y', 'z', 'w'][k as usize % 4]);
        let p = Place::named(&m, &name).ok_or("no const file in the simulator")?;
        m.set(p.file, p.half, p.index, 0, bits);
    }
    let mut io = io.unwrap_or_default();
    for (b, words) in inv.ubos.iter().enumerate() {
        io.write_words(Space::Constant, b as u32, 0, words);
    }
    for (b, words) in memory.ssbos.iter().enumerate() {
        io.write_words(Space::Image, b as u32, 0, words);
    }
    // Fragment inputs are varyings fetched at preloaded barycentric pairs.
    fragment_varyings(&selected.consts, 0, inv, &mut io)?;
    m.set_io(Box::new(io));
    let inputs: Vec<Vec<u32>> = selected
        .interface
        .inputs
        .iter()
        .map(|p| match *p {
            Port::Slot(slot, comp) => vec![inv.inputs[&(slot, comp)]],
            Port::Meta(k) => {
                let pair = selected
                    .consts
                    .barycentrics
                    .iter()
                    .position(|b| b.input == k);
                match (pair, selected.consts.preload_registers(k, &inv.sysvals)) {
                    (Some(pair), _) => barycentrics(pair).map(f32::to_bits).to_vec(),
                    (None, Some(registers)) => registers,
                    (None, None) => vec![inv.meta_inputs[k as usize]],
                }
            }
        })
        .collect();
    let inputs: Vec<&[u32]> = inputs.iter().map(Vec::as_slice).collect();
    let got = run::run_groups(&shader, &target, &mut m, &inputs)
        .map_err(|e| format!("simulator: {e}\n{}", lathe_ir::print(&shader)))?;
    let io = m.io_as::<Harness>().ok_or("the harness is gone")?;
    for (b, words) in after.ssbos.iter().enumerate() {
        for (k, &w) in words.iter().enumerate() {
            let g = io.word(Space::Image, b as u32, 0, 4 * k as u64);
            if g != w {
                return Err(format!(
                    "{model}: ssbo {b} word {k}: interpreter {w:#x}, simulator {g:#x}\n{}",
                    lathe_ir::print(&shader)
                ));
            }
        }
    }
    for (k, w) in after.shared.iter().enumerate() {
        let g = io.word(Space::Shared, 0, 0, 4 * k as u64);
        if let Some(w) = *w {
            if g != w {
                return Err(format!(
                    "{model}: shared word {k}: interpreter {w:#x}, simulator {g:#x}\n{}",
                    lathe_ir::print(&shader)
                ));
            }
        }
    }
    for (k, port) in selected.interface.outputs.iter().enumerate() {
        let Port::Slot(slot, comp) = *port else {
            continue;
        };
        let (ty, w) = want.outputs[&(slot, comp)];
        let g = got
            .get(&(k as u32))
            .copied()
            .ok_or(format!("output {k} not written"))?;
        let mask = if ty.scalar.bits() <= 16 {
            0xffff
        } else {
            u32::MAX
        };
        if !agree(ty, w & mask, g & mask, slot >= 16) {
            return Err(format!(
                "{model}: output slot {slot} ({ty}): interpreter {w:#x}, simulator {g:#x}\n{}",
                lathe_ir::print(&shader)
            ));
        }
    }
    Ok(true)
}

#[test]
fn random_programs_agree_with_the_interpreter_on_a630_and_a740() {
    let programs: u64 = std::env::var("IR3_SELECT_PROGRAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(150);
    let mut compared = HashMap::new();
    for seed in 0..programs {
        let arena = lathe_ir::Bump::new();
        let (shader, inv) = random_program(&arena, 0x9e37_79b9_7f4a_7c15 ^ (seed * 0x1000_0001));
        for model in ["a630", "a740"] {
            match differential(&shader, &inv, model) {
                Ok(true) => *compared.entry(model).or_insert(0) += 1,
                Ok(false) => {}
                Err(e) => panic!("seed {seed}: {e}\n{}", lathe_ir::print(&shader)),
            }
        }
    }
    eprintln!("compared {compared:?} of {programs} programs per model");
    assert!(
        compared.values().all(|&n| n * 2 >= programs),
        "{compared:?}"
    );
}

#[test]
fn hand_written_programs_agree() {
    let cases: &[(&str, &[(u16, u32)])] = &[
        // Range-reduced sine and cosine far from zero, and a loop.
        (
            "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = sin %0
  %2:f32 = cos %0
  store_output slot=16 comp=0 %1
  store_output slot=17 comp=0 %2
  ret
",
            &[(0, 100.25f32.to_bits())],
        ),
        (
            "shader fragment
b0:
  %0:u32 = load_input slot=0 comp=0 interp=flat
  %1:u32 = const 0
  %2:u32 = const 1
  jump b1
b1:
  %3:u32 = phi [%0, b0], [%5, b1]
  %4:u32 = phi [%1, b0], [%6, b1]
  %5:u32 = isub %3, %2
  %6:u32 = iadd %4, %3
  %7:bool = ine %5, %1
  branch %7, b1, b2
b2:
  store_output slot=0 comp=0 %6
  ret
",
            &[(0, 9)],
        ),
        (
            "shader fragment
b0:
  %0:i32 = load_input slot=0 comp=0 interp=flat
  %1:i32 = const 100000
  %2:i32 = iadd %0, %1
  %3:i32 = imul %2, %0
  %4:i32 = ufind_msb %3
  %5:i32 = ifind_msb %0
  %6:i32 = find_lsb %0
  store_output slot=0 comp=0 %4
  store_output slot=1 comp=0 %5
  store_output slot=2 comp=0 %6
  ret
",
            &[(0, 0xfff0_1234)],
        ),
    ];
    for (text, inputs) in cases {
        let arena = lathe_ir::Bump::new();
        let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let mut inv = Invocation::default();
        for &(slot, bits) in *inputs {
            inv.inputs.insert((slot, 0), bits);
        }
        for model in ["a630", "a740"] {
            assert_eq!(differential(&shader, &inv, model), Ok(true), "{text}");
        }
    }
}

/// A 4×4 texture with a distinct texel everywhere (integer-valued
/// floats, so integer views read the same bits both ways).
fn test_texture() -> (lathe_ir::texture::Texture, lathe_isa::sim_io::Texture) {
    let (w, h) = (4u32, 4u32);
    let texels: Vec<[f32; 4]> = (0..w * h)
        .map(|k| {
            let k = k as f32;
            [k, 100.0 + k, 200.0 + k, 300.0 + k]
        })
        .collect();
    (
        lathe_ir::texture::Texture::rgba_2d(w, h, texels.clone()),
        lathe_isa::sim_io::Texture {
            width: w,
            height: h,
            texels,
            ..Default::default()
        },
    )
}

#[test]
fn texture_operations_agree() {
    // Coordinates inside texels (nearest filtering, clamp to edge: the
    // interpreter's default sampler and the harness agree bit for bit).
    let coords = [(0.3f32, 0.6f32), (0.9, 0.1), (0.05, 0.95), (1.7, -0.4)];
    let programs = [
        // Implicit LOD, bias and explicit LOD: one level, so all read level 0.
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32x2 = collect %0, %1
  %3:f32x4 = sample texture=0 sampler=0 %2
  %4:f32 = split lane=0 %3
  %5:f32 = split lane=1 %3
  %6:f32 = split lane=2 %3
  %7:f32 = split lane=3 %3
  %8:f32 = const 0x3f800000
  %9:f32x4 = sample texture=0 sampler=0 lod=bias %2, %8
  %10:f32 = split lane=3 %9
  %11:f32x4 = sample texture=0 sampler=0 lod=explicit %2, %8
  %12:f32 = split lane=1 %11
  store_output slot=0 comp=0 %4
  store_output slot=0 comp=1 %5
  store_output slot=0 comp=2 %6
  store_output slot=0 comp=3 %7
  store_output slot=1 comp=0 %10
  store_output slot=2 comp=0 %12
  ret
",
        // Gathers of each channel, an integer view.
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32x2 = collect %0, %1
  %3:f32x4 = gather texture=0 sampler=0 comp=0 %2
  %4:f32x4 = gather texture=0 sampler=0 comp=1 %2
  %5:f32x4 = gather texture=0 sampler=0 comp=2 %2
  %6:f32x4 = gather texture=0 sampler=0 comp=3 %2
  %7:u32x4 = sample texture=0 sampler=0 %2
  %8:f32 = split lane=0 %3
  %9:f32 = split lane=1 %4
  %10:f32 = split lane=2 %5
  %11:f32 = split lane=3 %6
  %12:u32 = split lane=2 %7
  store_output slot=0 comp=0 %8
  store_output slot=0 comp=1 %9
  store_output slot=0 comp=2 %10
  store_output slot=0 comp=3 %11
  store_output slot=1 comp=0 %12
  ret
",
        // Texel fetch, level size and level count.
        "shader fragment
b0:
  %0:i32 = load_input slot=1 comp=0 interp=flat
  %1:i32 = load_input slot=1 comp=1 interp=flat
  %2:i32x2 = collect %0, %1
  %3:i32 = const 0
  %4:f32x4 = texel_fetch texture=0 %2, %3
  %5:f32 = split lane=0 %4
  %6:f32 = split lane=3 %4
  %7:i32x2 = texture_size texture=0 %3
  %8:i32 = split lane=0 %7
  %9:i32 = split lane=1 %7
  %10:i32 = texture_levels texture=0
  store_output slot=0 comp=0 %5
  store_output slot=0 comp=1 %6
  store_output slot=1 comp=0 %8
  store_output slot=1 comp=1 %9
  store_output slot=2 comp=0 %10
  ret
",
    ];
    let (ir_tex, sim_tex) = test_texture();
    for text in programs {
        let arena = lathe_ir::Bump::new();
        let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        for (k, &(x, y)) in coords.iter().enumerate() {
            let mut inv = Invocation::default();
            inv.inputs.insert((0, 0), x.to_bits());
            inv.inputs.insert((0, 1), y.to_bits());
            inv.inputs.insert((1, 0), (k as u32 * 3) % 4);
            inv.inputs.insert((1, 1), (k as u32 + 1) % 4);
            inv.textures.push(ir_tex.clone());
            let mut io = Harness::default();
            io.textures.push(sim_tex.clone());
            for model in ["a630", "a740"] {
                assert_eq!(
                    differential_io(&shader, &inv, model, io.clone()),
                    Ok(true),
                    "{text}"
                );
            }
        }
    }
}

/// An invocation with UBO contents, system values consistent with
/// [`LOCAL_SIZE`] and a few uniforms.
fn abi_invocation(inputs: &[(u16, u32)]) -> Invocation {
    let mut inv = Invocation::default();
    for &(slot, bits) in inputs {
        inv.inputs.insert((slot, 0), bits);
    }
    inv.uniforms = vec![11, 22, 33];
    inv.ubos = vec![
        (0..64).map(|k| 1000 + k).collect(),
        (0..64).map(|k| (k as f32 * 0.5).to_bits()).collect(),
    ];
    let sv = &mut inv.sysvals;
    sv.vertex_index = 77;
    sv.base_vertex = 70;
    sv.instance_index = 12;
    sv.base_instance = 9;
    sv.view_index = 1;
    sv.workgroup_id = [3, 2, 1];
    sv.local_invocation_id = [5, 1, 1];
    sv.num_workgroups = [4, 4, 2];
    sv.global_invocation_id =
        std::array::from_fn(|c| sv.workgroup_id[c] * LOCAL_SIZE[c] + sv.local_invocation_id[c]);
    let [x, y, z] = sv.local_invocation_id;
    sv.local_invocation_index = x + LOCAL_SIZE[0] * (y + LOCAL_SIZE[1] * z);
    inv
}

#[test]
fn ubo_loads_and_system_values_agree() {
    let cases: &[(&str, &[(u16, u32)])] = &[
        // Constant offsets come from the pushed ranges, beside uniforms.
        (
            "shader vertex
b0:
  %0:u32 = const 20
  %1:u32 = load_ubo binding=0 %0
  %2:u32 = const 200
  %3:f32 = load_ubo binding=1 %2
  %4:u32 = const 12
  %5:u32 = load_ubo binding=0 %4
  %6:u32 = load_uniform index=2
  %7:u32 = iadd %5, %6
  store_output slot=0 comp=0 %1
  store_output slot=1 comp=0 %3
  store_output slot=2 comp=0 %7
  ret
",
            &[],
        ),
        // Dynamic offsets go through ldc, at every word of a vec4.
        (
            "shader vertex
b0:
  %0:u32 = load_input slot=0 comp=0 interp=flat
  %1:u32 = const 4
  %2:u32 = imul %0, %1
  %3:u32 = load_ubo binding=0 %2
  %4:u32 = const 4
  %5:u32 = iadd %2, %4
  %6:f32 = load_ubo binding=1 %5
  %7:u32 = const 8
  %8:u32 = iadd %2, %7
  %9:u32 = load_ubo binding=0 %8
  %10:u32 = const 12
  %11:u32 = iadd %2, %10
  %12:i32 = load_ubo binding=0 %11
  store_output slot=0 comp=0 %3
  store_output slot=1 comp=0 %6
  store_output slot=2 comp=0 %9
  store_output slot=3 comp=0 %12
  ret
",
            &[(0, 9)],
        ),
        (
            "shader vertex
b0:
  %0:u32 = load_sysval sv=vertex_index
  %1:i32 = load_sysval sv=instance_index
  %2:u32 = load_sysval sv=base_vertex
  %3:u32 = load_sysval sv=base_instance
  %4:u32 = load_sysval sv=view_index
  %5:u32 = load_sysval sv=instance_index
  store_output slot=0 comp=0 %0
  store_output slot=1 comp=0 %1
  store_output slot=2 comp=0 %2
  store_output slot=3 comp=0 %3
  store_output slot=4 comp=0 %4
  store_output slot=5 comp=0 %5
  ret
",
            &[],
        ),
        (
            "shader compute
b0:
  %0:u32 = load_sysval sv=global_invocation_id comp=0
  %1:u32 = load_sysval sv=global_invocation_id comp=1
  %2:i32 = load_sysval sv=global_invocation_id comp=2
  %3:u32 = load_sysval sv=local_invocation_index
  %4:u32 = load_sysval sv=workgroup_id comp=1
  %5:u32 = load_sysval sv=num_workgroups comp=2
  %6:u32 = load_sysval sv=local_invocation_id comp=0
  store_output slot=0 comp=0 %0
  store_output slot=1 comp=0 %1
  store_output slot=2 comp=0 %2
  store_output slot=3 comp=0 %3
  store_output slot=4 comp=0 %4
  store_output slot=5 comp=0 %5
  store_output slot=6 comp=0 %6
  ret
",
            &[],
        ),
        // The same with the workgroup size declared: constants instead of
        // driver parameters.
        (
            "shader compute
workgroup_size 8 4 2
b0:
  %0:u32 = load_sysval sv=global_invocation_id comp=0
  %1:u32 = load_sysval sv=global_invocation_id comp=1
  %2:i32 = load_sysval sv=global_invocation_id comp=2
  %3:u32 = load_sysval sv=local_invocation_index
  %4:u32 = load_sysval sv=workgroup_id comp=1
  %5:u32 = load_sysval sv=num_workgroups comp=2
  %6:u32 = load_sysval sv=local_invocation_id comp=0
  store_output slot=0 comp=0 %0
  store_output slot=1 comp=0 %1
  store_output slot=2 comp=0 %2
  store_output slot=3 comp=0 %3
  store_output slot=4 comp=0 %4
  store_output slot=5 comp=0 %5
  store_output slot=6 comp=0 %6
  ret
",
            &[],
        ),
        // Attributes and system values read after a branch are still
        // preloaded at the entry.
        (
            "shader vertex
b0:
  %0:u32 = load_input slot=0 comp=0 interp=flat
  %1:u32 = const 3
  %2:bool = ult %0, %1
  branch %2, b1, b2
b1:
  %3:u32 = load_sysval sv=vertex_index
  %4:f32 = load_input slot=1 comp=0 interp=flat
  %5:u32 = cvt %4
  %6:u32 = iadd %3, %5
  jump b3
b2:
  %7:u32 = load_sysval sv=instance_index
  jump b3
b3:
  %8:u32 = phi [%6, b1], [%7, b2]
  store_output slot=0 comp=0 %8
  ret
",
            &[(0, 2), (1, 4.0f32.to_bits())],
        ),
    ];
    for (text, inputs) in cases {
        let arena = lathe_ir::Bump::new();
        let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let inv = abi_invocation(inputs);
        for model in ["a630", "a740"] {
            assert_eq!(differential(&shader, &inv, model), Ok(true), "{text}");
        }
    }
}

#[test]
fn storage_and_shared_memory_agree() {
    let cases: &[&str] = &[
        // SSBO words: loads, stores (the last store to a word wins).
        "shader compute
b0:
  %0:u32 = load_sysval sv=local_invocation_id comp=0
  %1:u32 = const 4
  %2:u32 = imul %0, %1
  %3:u32 = load_ssbo binding=0 %2
  %4:f32 = load_ssbo binding=1 %1
  %5:f32 = fadd %4, %4
  %6:u32 = const 1
  %7:u32 = iadd %3, %6
  %8:u32 = const 40
  store_ssbo binding=0 %8, %7
  store_ssbo binding=1 %2, %5
  %9:u32 = const 8
  store_ssbo binding=1 %9, %5
  store_output slot=0 comp=0 %3
  ret
",
        // Shared memory around barriers, and every atomic but cmpxchg.
        "shader compute
b0:
  %0:u32 = load_sysval sv=local_invocation_id comp=0
  %1:u32 = const 4
  %2:u32 = imul %0, %1
  %3:i32 = const -7
  store_shared %2, %3
  barrier
  %4:i32 = load_shared %2
  %5:u32 = const 64
  %6:u32 = const 100
  store_shared %5, %6
  control_barrier
  %7:u32 = shared_atomic op=add %5, %0
  %8:u32 = shared_atomic op=umax %5, %1
  %9:i32 = shared_atomic op=imin %2, %3
  %10:i32 = shared_atomic op=imax %2, %4
  %11:u32 = shared_atomic op=and %5, %6
  %12:u32 = shared_atomic op=or %5, %1
  %13:u32 = shared_atomic op=xor %5, %0
  %14:u32 = shared_atomic op=umin %5, %6
  %15:u32 = shared_atomic op=xchg %5, %1
  %16:u32 = load_shared %5
  store_output slot=0 comp=0 %4
  store_output slot=1 comp=0 %7
  store_output slot=2 comp=0 %8
  store_output slot=3 comp=0 %9
  store_output slot=4 comp=0 %10
  store_output slot=5 comp=0 %11
  store_output slot=6 comp=0 %12
  store_output slot=7 comp=0 %13
  store_output slot=8 comp=0 %14
  store_output slot=9 comp=0 %15
  store_output slot=10 comp=0 %16
  ret
",
        // Storage-buffer atomics (atomic.b, the operand's register tied to
        // the result): operands that die at the atomic and ones that live
        // on (%0, %2, read again later), every op but cmpxchg.
        "shader compute
b0:
  %0:u32 = load_sysval sv=local_invocation_id comp=0
  %1:u32 = const 4
  %2:u32 = imul %0, %1
  %3:u32 = const 8
  %4:u32 = ssbo_atomic binding=0 op=add %3, %0
  %5:u32 = ssbo_atomic binding=0 op=umax %2, %1
  %6:i32 = const -3
  %7:i32 = ssbo_atomic binding=0 op=imin %2, %6
  %8:i32 = const 509
  %9:i32 = ssbo_atomic binding=0 op=imax %3, %8
  %10:u32 = ssbo_atomic binding=0 op=and %2, %0
  %11:u32 = ssbo_atomic binding=0 op=or %3, %2
  %12:u32 = ssbo_atomic binding=0 op=xor %2, %1
  %13:u32 = const 12
  %14:u32 = ssbo_atomic binding=0 op=umin %13, %1
  %15:u32 = ssbo_atomic binding=0 op=xchg %2, %0
  %16:u32 = iadd %0, %4
  %17:u32 = iadd %2, %15
  store_output slot=0 comp=0 %16
  store_output slot=1 comp=0 %5
  store_output slot=2 comp=0 %7
  store_output slot=3 comp=0 %9
  store_output slot=4 comp=0 %10
  store_output slot=5 comp=0 %11
  store_output slot=6 comp=0 %12
  store_output slot=7 comp=0 %14
  store_output slot=8 comp=0 %17
  ret
",
    ];
    for text in cases {
        let arena = lathe_ir::Bump::new();
        let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let inv = abi_invocation(&[]);
        let memory = Memory {
            ssbos: vec![
                (0..16).map(|k| 500 + k).collect(),
                (0..16).map(|k| (k as f32 + 0.25).to_bits()).collect(),
            ],
            shared: vec![None; 32],
            ..Memory::default()
        };
        for model in ["a630", "a740"] {
            assert_eq!(
                differential_with_memory(&shader, &inv, &memory, model, None),
                Ok(true),
                "{text}"
            );
        }
    }
}

#[test]
fn selection_follows_dominance_not_the_layout() {
    // A block laid out after the block it dominates (the corpus's
    // starfield.frag has this shape).
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = const 0.5
  jump b2
b1:
  %2:f32 = fmul %3, %0
  store_output slot=0 comp=0 %2
  ret
b2:
  %3:f32 = fadd %0, %1
  jump b1
";
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let mut inv = Invocation::default();
    inv.inputs.insert((0, 0), 1.25f32.to_bits());
    for model in ["a630", "a740"] {
        assert_eq!(differential(&shader, &inv, model), Ok(true), "{text}");
    }
}
