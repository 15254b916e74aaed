//! Data races between invocations are undefined behaviour in the
//! interpreter, never one thread order's result.

use lathe_ir::interp::{self, Invocation, Limits, Memory, SysVals};
use lathe_ir::{GenericOp, Shader};

fn workgroup(shader: &Shader<'_, GenericOp>, n: u32) -> Result<Memory, interp::InterpError> {
    let mut memory = fresh();
    workgroup_on(shader, n, &mut memory)?;
    Ok(memory)
}

fn fresh() -> Memory {
    Memory {
        ssbos: vec![vec![0; 8]],
        shared: vec![None; 8],
        ..Memory::default()
    }
}

fn workgroup_on(
    shader: &Shader<'_, GenericOp>,
    n: u32,
    memory: &mut Memory,
) -> Result<(), interp::InterpError> {
    let lanes: Vec<Invocation> = (0..n)
        .map(|t| Invocation {
            sysvals: SysVals {
                local_invocation_index: t,
                local_invocation_id: [t, 0, 0],
                ..SysVals::default()
            },
            ..Invocation::default()
        })
        .collect();
    interp::run_workgroup(shader, &lanes, memory, Limits::default())?;
    Ok(())
}

/// Invocation 0 writes word 0 (of `space`), then (with `barrier`
/// between) every invocation reads it and writes it to its own word.
fn publish(space: &str, barrier: bool) -> String {
    let (store, load) = match space {
        "ssbo" => ("store_ssbo binding=0", "load_ssbo binding=0"),
        _ => ("store_shared", "load_shared"),
    };
    format!(
        "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 4
  %2:u32 = const 42
  %3:u32 = load_sysval sv=local_invocation_index
  %4:bool = ieq %3, %0
  branch %4, b1, b2
b1:
  {store} %0, %2
  jump b2
b2:
{}  %5:u32 = {load} %0
  %6:u32 = iadd %3, %1
  %7:u32 = imul %6, %1
  store_ssbo binding=0 %7, %5
  ret
",
        if barrier { "  control_barrier\n" } else { "" }
    )
}

#[test]
fn a_read_of_another_invocations_write_without_a_barrier_is_a_race() {
    for space in ["ssbo", "shared"] {
        let arena = lathe_ir::Bump::new();
        let shader = lathe_ir::parse::<GenericOp>(&arena, &publish(space, false)).unwrap();
        let err = workgroup(&shader, 4).unwrap_err();
        assert!(err.is_undefined(), "{space}: {err}");
        assert!(err.to_string().contains("data race"), "{space}: {err}");
        // One invocation alone has no one to race with.
        let memory = workgroup(&shader, 1).unwrap();
        assert_eq!(memory.ssbos[0][4], 42, "{space}");
    }
}

#[test]
fn a_barrier_between_the_write_and_the_reads_orders_them() {
    for space in ["ssbo", "shared"] {
        let arena = lathe_ir::Bump::new();
        let shader = lathe_ir::parse::<GenericOp>(&arena, &publish(space, true)).unwrap();
        let memory = workgroup(&shader, 4).unwrap();
        assert_eq!(memory.ssbos[0][4..8], [42; 4], "{space}");
    }
}

#[test]
fn atomics_do_not_race_with_each_other_but_do_with_plain_accesses() {
    let counter = "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 1
  %2:u32 = ssbo_atomic binding=0 op=add %0, %1
  ret
";
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, counter).unwrap();
    assert_eq!(workgroup(&shader, 4).unwrap().ssbos[0][0], 4);
    // An atomic add, then a plain read of the counter (WGSL's
    // hello_synchronization `hasty_main`): the read races the others' adds.
    let hasty = "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 1
  %2:u32 = const 4
  %3:u32 = ssbo_atomic binding=0 op=add %0, %1
  %4:u32 = load_ssbo binding=0 %0
  store_ssbo binding=0 %2, %4
  ret
";
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, hasty).unwrap();
    let err = workgroup(&shader, 4).unwrap_err();
    assert!(err.to_string().contains("data race"), "{err}");
}

#[test]
fn separate_runs_on_one_memory_are_concurrent_invocations() {
    // Two vertex invocations writing one word race; each alone is fine.
    let text = "shader vertex
b0:
  %0:u32 = const 0
  %1:u32 = load_sysval sv=vertex_index
  store_ssbo binding=0 %0, %1
  ret
";
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let mut memory = Memory {
        ssbos: vec![vec![0; 1]],
        ..Memory::default()
    };
    let inv = Invocation::default();
    interp::run_with_memory(&shader, &inv, &mut memory, Limits::default()).unwrap();
    let err = interp::run_with_memory(&shader, &inv, &mut memory, Limits::default()).unwrap_err();
    assert!(err.to_string().contains("data race"), "{err}");
}

/// Every invocation adds to a shared counter and then, with no barrier,
/// reads it back with an atomic load (wgpu's hello_synchronization
/// `hasty_main`): atomics do not race with each other, but what the load
/// reads depends on the order of the others' adds, so it is undefined;
/// the counter's final value is not.
#[test]
fn an_atomic_load_after_others_atomics_is_no_race_but_an_undefined_value() {
    let text = "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 1
  %2:u32 = const 4
  shared_atomic_store %0, %0
  control_barrier
  %3:u32 = shared_atomic op=add %0, %1
  %4:u32 = shared_atomic_load %0
  %5:u32 = load_sysval sv=local_invocation_index
  %6:u32 = imul %5, %2
  ssbo_atomic_store binding=0 %6, %4
  ret
";
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    assert_eq!(lathe_ir::print(&shader), text, "the text form round-trips");
    let mut memory = fresh();
    interp::run_in_hindsight(&mut memory, |m| workgroup_on(&shader, 4, m)).unwrap();
    for w in 0..4 {
        assert_eq!(
            memory.written.ssbo(0, w),
            Some((
                lathe_ir::Scalar::U32,
                lathe_ir::exactness::Exactness::Undefined
            )),
            "word {w}"
        );
    }
    assert_eq!(memory.shared[0], Some(4));
}
