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
//! cases. `IR3_SELECT_PROGRAMS=N` runs N random programs (default 150).

use std::collections::HashMap;

use lathe_adreno::ir3::select::{Port, select};
use lathe_adreno::ir3::{GpuModel, run, sim, target::Ir3Target};
use lathe_ir::interp::{self, Invocation, Limits};
use lathe_ir::{GenericOp, Shader};
use lathe_isa::machine_run::Place;
use lathe_passes::fuzzing::select::{ALL_APPROX, Vocabulary, agree};
use lathe_passes::ra::{RaOptions, allocate};
use lathe_passes::{group, sched};

fn random_program<'a>(arena: &'a lathe_ir::Bump, seed: u64) -> (Shader<'a, GenericOp>, Invocation) {
    let vocabulary = Vocabulary { approx: ALL_APPROX };
    lathe_passes::fuzzing::select::random_program(arena, seed, vocabulary)
}

/// Runs `generic` in the interpreter and, selected and allocated on
/// `model`, on the simulator; `Err` names the first difference. `Ok(false)`
/// when the interpreter found undefined behaviour (nothing to compare).
fn differential(
    generic: &Shader<'_, GenericOp>,
    inv: &Invocation,
    model: &str,
) -> Result<bool, String> {
    lathe_ir::validate(generic).map_err(|e| format!("invalid program: {e:?}"))?;
    let want = match interp::run(generic, inv, Limits::default()) {
        Ok(o) => o,
        Err(e) if e.is_undefined() => return Ok(false),
        Err(e) => return Err(format!("interpreter: {e}")),
    };
    let target = Ir3Target::new(model.parse::<GpuModel>().unwrap()).unwrap();
    let selected = select(generic, &target).map_err(|e| e.to_string())?;
    let mut shader = selected.shader;
    lathe_ir::validate(&shader)
        .map_err(|e| format!("selected IR invalid: {e:?}\n{}", lathe_ir::print(&shader)))?;
    group::group(&mut shader, &target);
    sched::schedule(&mut shader, &target);
    allocate(&mut shader, &target, RaOptions::default()).map_err(|e| format!("ra: {e}"))?;
    let mut m = sim::machine(1);
    for (k, &bits) in inv.uniforms.iter().enumerate() {
        let name = format!("c{}.{}", k / 4, ['x', 'y', 'z', 'w'][k % 4]);
        let p = Place::named(&m, &name).ok_or("no const file in the simulator")?;
        m.set(p.file, p.half, p.index, 0, bits);
    }
    let inputs: Vec<u32> = selected
        .interface
        .inputs
        .iter()
        .map(|p| match *p {
            Port::Slot(slot, comp) => inv.inputs[&(slot, comp)],
            Port::Meta(k) => inv.meta_inputs[k as usize],
        })
        .collect();
    let got = run::run(&shader, &target, &mut m, &inputs)
        .map_err(|e| format!("simulator: {e}\n{}", lathe_ir::print(&shader)))?;
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
