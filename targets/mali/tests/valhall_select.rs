//! Instruction selection proven by execution: generic programs run in the
//! IR interpreter, and the same programs compiled for g57 (v9) and g610
//! (v10) by the whole Valhall backend (selection with
//! `targets/mali/rules/valhall.rules`, group/depth/sched, register
//! allocation, legalisation, emission) run as whole programs on the
//! generated Valhall simulator with its hazard detection on, over a quad
//! of threads with different inputs (so branches diverge). Exact
//! operations must give identical bits; approximated ones (the SFU and the
//! lowerings around it) agree within a tolerance and feed only outputs.
//!
//! Programs come from the random generator shared with ir3's test
//! (`lathe_passes::fuzzing::select`) and from hand-written cases; the
//! check itself is `lathe_mali::valhall::differential`, which the
//! `compile_valhall` fuzz target runs too.
//! `VALHALL_SELECT_PROGRAMS=N` runs N random programs (default 100).

use std::collections::HashMap;
use std::rc::Rc;

use lathe_ir::interp::Invocation;
use lathe_ir::{GenericOp, Shader};
use lathe_mali::valhall::compile::{CompileOptions, compile_with};
use lathe_mali::valhall::differential::{APPROX, Checked, Compare, differential as check};
use lathe_mali::valhall::{MaliModel, target::ValhallTarget};
use lathe_passes::fuzzing::select::{Vocabulary, random_program};

/// Threads run together.
const LANES: usize = 4;

/// The invocation of thread `lane`: `inv` with its inputs varied.
fn thread(inv: &Invocation, lane: usize) -> Invocation {
    let mut t = inv.clone();
    for (k, bits) in t.inputs.values_mut().enumerate() {
        if lane > 0 && (k + lane) % 2 == 0 {
            // Another value of the same type class: flip low bits only
            // (floats stay finite, 16-bit values stay 16-bit).
            *bits ^= (lane as u32) << 2;
        }
    }
    t
}

/// Runs `generic` in the interpreter and compiled for `model` on the
/// simulator, for [`LANES`] threads; `Err` names the first difference.
/// `Ok(false)` when some thread hits undefined behaviour.
fn differential(
    generic: &Shader<'_, GenericOp>,
    inv: &Invocation,
    model: &str,
) -> Result<bool, String> {
    let threads: Vec<Invocation> = (0..LANES).map(|l| thread(inv, l)).collect();
    let model = model.parse::<MaliModel>().unwrap();
    match check(generic, &threads, model, Compare::From(16))? {
        Checked::Ran => Ok(true),
        Checked::Undefined => Ok(false),
        Checked::Unsupported(m) => Err(m),
    }
}

#[test]
fn random_programs_agree_with_the_interpreter_on_g57_and_g610() {
    let programs: u64 = std::env::var("VALHALL_SELECT_PROGRAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let mut compared = HashMap::new();
    for seed in 0..programs {
        let arena = lathe_ir::Bump::new();
        let (shader, inv) = random_program(
            &arena,
            0x2545_f491_4f6c_dd1d ^ (seed * 0x1000_0001),
            Vocabulary { approx: APPROX },
        );
        for model in ["g57", "g610"] {
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

/// Checks one hand-written program on both models with its inputs.
fn run_case(text: &str, inputs: &[(u16, u32)]) {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let mut inv = Invocation {
        uniforms: (0..8).map(|k| (k as f32 * 0.75 - 2.0).to_bits()).collect(),
        ..Invocation::default()
    };
    for &(slot, bits) in inputs {
        inv.inputs.insert((slot, 0), bits);
    }
    for model in ["g57", "g610"] {
        assert_eq!(differential(&shader, &inv, model), Ok(true), "{text}");
    }
}

#[test]
fn hand_written_programs_agree() {
    // A loop with a divergent trip count.
    run_case(
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
    );
    // Bit searches at the edges, and a constant outside the table.
    run_case(
        "shader fragment
b0:
  %0:i32 = load_input slot=0 comp=0 interp=flat
  %1:i32 = const 100000
  %2:i32 = iadd %0, %1
  %3:i32 = imul %2, %0
  %4:i32 = ufind_msb %3
  %5:i32 = ifind_msb %0
  %6:i32 = find_lsb %0
  %7:i32 = isign %0
  store_output slot=0 comp=0 %4
  store_output slot=1 comp=0 %5
  store_output slot=2 comp=0 %6
  store_output slot=3 comp=0 %7
  ret
",
        &[(0, 0xfff0_1234)],
    );
    // Two uniforms of different FAU slots cannot share an instruction:
    // one is moved to a register.
    run_case(
        "shader fragment
b0:
  %0:f32 = load_uniform index=0
  %1:f32 = load_uniform index=5
  %2:f32 = fadd %0, %1
  %3:f32 = fsign %2
  %4:f32 = exp2 %2
  %5:f32 = log2 %0
  store_output slot=0 comp=0 %3
  store_output slot=16 comp=0 %4
  store_output slot=17 comp=0 %5
  ret
",
        &[],
    );
}

/// The moves a compiled `fadd` of uniforms `a` and `b` needs.
fn moves_for_uniforms(a: u32, b: u32) -> usize {
    let text = format!(
        "shader fragment\nb0:\n  %0:f32 = load_uniform index={a}\n  %1:f32 = load_uniform index={b}\n  %2:f32 = fadd %0, %1\n  store_output slot=0 comp=0 %2\n  ret\n"
    );
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
    let target = Rc::new(ValhallTarget::new("g610".parse::<MaliModel>().unwrap()));
    let out = compile_with(&shader, &target, &CompileOptions::default()).unwrap();
    out.compiled
        .disassembly
        .iter()
        .filter(|l| l.starts_with("MOV"))
        .count()
}

#[test]
fn uniforms_share_an_instruction_only_within_one_fau_slot() {
    // u0 and u1 are one 64-bit slot; u0 and u5 are two, so one is moved
    // into a register first (the spec's FAU rule, enforced by its
    // assembler).
    assert_eq!(moves_for_uniforms(0, 1), 0);
    assert_eq!(moves_for_uniforms(4, 5), 0);
    assert_eq!(moves_for_uniforms(0, 5), 1);
}
