//! `promote_arrays` proven by the interpreter: random programs (the
//! `ir_passes` generator: arrays read and written at constant and computed
//! indices inside diamonds and loops) and hand-written ones give the same
//! outcome before and after promotion whenever the original run is
//! defined, the result validates and holds no array access.
//! `PROMOTE_PROGRAMS=N` runs N random programs (default 400).

use lathe_ir::interp::{self, InterpError, Invocation, Limits};
use lathe_ir::{GenericOp, Op, Shader};
use lathe_passes::fuzzing::{GenLimits, generate, seed_bytes};
use lathe_passes::promote_arrays::promote;

fn has_array_access(shader: &Shader<'_, GenericOp>) -> bool {
    shader.insts_in_order().any(|(_, i)| {
        matches!(
            shader.inst(i).op,
            Op::Opcode(GenericOp::ArrayLoad { .. } | GenericOp::ArrayStore { .. })
        )
    })
}

/// Promotes `shader` and compares outcomes on `inv`; whether the original
/// run was defined (and so compared).
fn check(shader: &mut Shader<'_, GenericOp>, inv: &Invocation) -> bool {
    let program = lathe_ir::print(shader);
    let limits = Limits {
        max_steps: 100_000,
        ..Limits::default()
    };
    let before = interp::run(shader, inv, limits);
    promote(shader);
    let after_text = lathe_ir::print(shader);
    lathe_ir::validate(shader)
        .unwrap_or_else(|e| panic!("invalid after promotion: {e}\n{program}\n{after_text}"));
    assert!(!has_array_access(shader), "{after_text}");
    match before {
        Ok(expected) => {
            let after = interp::run(shader, inv, limits);
            assert_eq!(after.as_ref(), Ok(&expected), "{program}\n{after_text}");
            true
        }
        Err(InterpError::Undefined { .. } | InterpError::StepLimit(_)) => false,
        Err(e) => panic!("interpreter: {e}\n{program}"),
    }
}

#[test]
fn random_programs_keep_their_outcomes() {
    let programs: u64 = std::env::var("PROMOTE_PROGRAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(400);
    let (mut compared, mut with_arrays) = (0, 0);
    for seed in 0..programs {
        let data = seed_bytes(seed, 4096);
        let mut u = arbitrary::Unstructured::new(&data);
        let arena = lathe_ir::Bump::new();
        let Ok(generated) = generate(&arena, &mut u, GenLimits::default()) else {
            continue;
        };
        let mut shader = generated.shader;
        let accesses = has_array_access(&shader);
        if check(&mut shader, &generated.invocation) && accesses {
            compared += 1;
        }
        with_arrays += accesses as u32;
    }
    eprintln!("{compared} defined runs compared of {with_arrays} programs with array accesses");
    assert!(
        compared * 4 >= programs,
        "only {compared} of {programs} compared"
    );
}

#[test]
fn stores_in_branches_and_loops_reach_later_loads() {
    // a[i] = x in a loop over i, one branch overwriting a[1], then a
    // computed read after the loop.
    let text = "shader fragment
array a0: u32[3]
b0:
  %0:u32 = load_input slot=0 comp=0 interp=flat
  %1:u32 = load_input slot=0 comp=1 interp=flat
  %2:u32 = const 0
  %3:u32 = const 1
  %4:u32 = const 3
  %5:u32 = const 7
  jump b1
b1:
  %6:u32 = phi [%2, b0], [%9, b4]
  %7:u32 = imul %6, %0
  array_store array=a0 offset=0 %7 addr=%6
  %8:bool = ieq %6, %1
  branch %8, b2, b3
b2:
  array_store array=a0 offset=1 %5
  jump b4
b3:
  jump b4
b4:
  %9:u32 = iadd %6, %3
  %10:bool = ult %9, %4
  branch %10, b1, b5
b5:
  %11:u32 = const 2
  %12:u32 = umin %1, %11
  %13:u32 = array_load array=a0 offset=0 addr=%12
  %14:u32 = array_load array=a0 offset=1
  store_output slot=0 comp=0 %13
  store_output slot=1 comp=0 %14
  ret
";
    let mut compared = 0;
    for (x, i) in [(5u32, 0u32), (5, 1), (9, 2), (11, 3)] {
        let arena = lathe_ir::Bump::new();
        let mut shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let mut inv = Invocation::default();
        inv.inputs.insert((0, 0), x);
        inv.inputs.insert((0, 1), i);
        compared += check(&mut shader, &inv) as u32;
    }
    assert_eq!(compared, 4);
}
