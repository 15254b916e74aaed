//! System values, derivatives, shared memory and atomics on Valhall,
//! compiled for g57 and g610 and run through `--verify`'s seam (the
//! generated simulator against the IR interpreter, over several seeds
//! and quads or workgroups of 4 and 8 threads). Each test fails with
//! `unsupported:` (or a mismatch) when the selection, ABI or semantics
//! it covers is missing.

use std::rc::Rc;

use lathe_ir::interp::run;
use lathe_ir::verify::{Executor, Options, verify};
use lathe_ir::{GenericOp, Invocation, Limits, Memory};
use lathe_mali::valhall::compile::{CompileOptions, compile_with};
use lathe_mali::valhall::{target::ValhallTarget, verify::ValhallProgram};

/// Compiles `text` for g57 and g610 and verifies it over 6 seeds with 4
/// and 8 threads; returns the g610 listing.
fn check(text: &str) -> String {
    let mut listing = String::new();
    for gpu in ["g57", "g610"] {
        let arena = lathe_ir::Bump::new();
        let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let target = Rc::new(ValhallTarget::new(gpu.parse().unwrap()));
        let out = compile_with(&generic, &target, &CompileOptions::default())
            .unwrap_or_else(|e| panic!("{gpu}: {e}\n{text}"));
        listing = out.compiled.listing();
        for threads in [4, 8] {
            for seed in 1..=6 {
                let options = Options {
                    seed,
                    threads,
                    ..Options::default()
                };
                let report =
                    verify(&generic, &ValhallProgram::new(&out), &options).unwrap_or_else(|e| {
                        panic!("{gpu} seed {seed}, {threads} threads: {e}\n{text}\n{listing}")
                    });
                assert!(report.compared > 0, "{gpu}: nothing compared\n{listing}");
            }
        }
    }
    listing
}

#[test]
fn coarse_and_default_derivatives_read_the_quad_neighbours() {
    let listing = check(
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = ddx %0
  %2:f32 = ddy %0
  %3:f32 = ddx mode=coarse %0
  %4:f32 = ddy mode=coarse %0
  %5:f32 = load_uniform index=0
  %6:f32 = ddx %5
  store_output slot=0 comp=0 %1
  store_output slot=0 comp=1 %2
  store_output slot=0 comp=2 %3
  store_output slot=0 comp=3 %4
  store_output slot=1 comp=0 %6
  ret
",
    );
    assert!(listing.contains("CLPER.i32.subgroup4"), "{listing}");
}

#[test]
fn fine_derivatives_stay_unsupported() {
    // Their lanes come from `lane_id`, which the simulator does not hold
    // per thread: selection must not take the coarse form for them.
    let arena = lathe_ir::Bump::new();
    let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = ddx mode=fine %0\n  store_output slot=0 comp=0 %1\n  ret\n";
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let target = Rc::new(ValhallTarget::new("g610".parse().unwrap()));
    let err = compile_with(&generic, &target, &CompileOptions::default()).unwrap_err();
    assert!(
        err.to_string().starts_with("unsupported: fine derivatives"),
        "{err}"
    );
}

#[test]
fn depth_w_and_the_point_coordinate_come_from_ld_var_special() {
    let listing = check(
        "shader fragment
b0:
  %0:f32 = load_sysval sv=frag_coord comp=2
  %1:f32 = load_sysval sv=frag_coord comp=3
  %2:f32 = load_sysval sv=point_coord comp=0
  %3:f32 = load_sysval sv=point_coord comp=1
  %4:f32 = load_sysval sv=frag_coord comp=0
  %5:f32 = fmul %0, %4
  store_output slot=0 comp=0 %5
  store_output slot=0 comp=1 %1
  store_output slot=0 comp=2 %2
  store_output slot=0 comp=3 %3
  ret
",
    );
    assert!(listing.contains("LD_VAR_SPECIAL"), "{listing}");
}

#[test]
fn storage_buffer_atomics_return_the_old_word() {
    // Each thread works on its own words (the interpreter runs threads in
    // order, the simulator in lockstep: only commutative results of
    // shared words compare), then a sum on one word at a constant offset.
    let listing = check(
        "shader compute
b0:
  %0:u32 = load_sysval sv=global_invocation_id comp=0
  %1:u32 = const 4
  %2:u32 = imul %0, %1
  %3:u32 = load_ssbo binding=1 %2
  %4:u32 = const 0
  %5:u32 = iadd %2, %4
  %6:u32 = ssbo_atomic binding=0 op=add %5, %3
  store_ssbo binding=2 %5, %6
  %7:u32 = const 64
  %8:u32 = iadd %2, %7
  %9:u32 = ssbo_atomic binding=0 op=umin %8, %3
  store_ssbo binding=2 %8, %9
  %10:u32 = const 128
  %11:u32 = iadd %2, %10
  %12:u32 = ssbo_atomic binding=0 op=imax %11, %3
  store_ssbo binding=2 %11, %12
  %13:u32 = const 192
  %14:u32 = iadd %2, %13
  %15:u32 = ssbo_atomic binding=0 op=and %14, %3
  store_ssbo binding=2 %14, %15
  %16:u32 = const 256
  %17:u32 = iadd %2, %16
  %18:u32 = ssbo_atomic binding=0 op=or %17, %3
  store_ssbo binding=2 %17, %18
  %19:u32 = const 320
  %20:u32 = iadd %2, %19
  %21:u32 = ssbo_atomic binding=0 op=xor %20, %3
  store_ssbo binding=2 %20, %21
  %22:u32 = const 384
  %23:u32 = iadd %2, %22
  %24:u32 = ssbo_atomic binding=0 op=xchg %23, %3
  store_ssbo binding=2 %23, %24
  %25:u32 = const 1024
  %26:u32 = iadd %2, %25
  %27:u32 = load_ssbo binding=0 %26
  %28:u32 = ssbo_atomic binding=0 op=cmpxchg %26, %3, %27
  store_ssbo binding=2 %26, %28
  %29:u32 = const 2048
  %30:u32 = iadd %2, %29
  %31:u32 = ssbo_atomic binding=0 op=cmpxchg %30, %3, %3
  store_ssbo binding=2 %30, %31
  %32:u32 = const 8
  %33:u32 = ssbo_atomic binding=3 op=add %32, %3
  ret
",
    );
    assert!(listing.contains("ATOM_RETURN.i32"), "{listing}");
    assert!(listing.contains(".compare.axchg"), "{listing}");
}

#[test]
fn shared_memory_and_a_barrier_pass_words_between_threads() {
    // Each thread writes two words of its own, the workgroup waits, then
    // each reads a word another thread wrote (thread (t + 1) & 3, which
    // a run of 4 or 8 threads has written) and word 0; the atomics work
    // on the thread's own second word.
    let listing = check(
        "shader compute
b0:
  %0:u32 = load_sysval sv=global_invocation_id comp=0
  %1:u32 = const 4
  %2:u32 = imul %0, %1
  %3:u32 = load_ssbo binding=0 %2
  store_shared %2, %3
  %4:u32 = const 256
  %5:u32 = iadd %2, %4
  store_shared %5, %3
  barrier
  control_barrier
  %6:u32 = const 1
  %7:u32 = iadd %0, %6
  %8:u32 = const 3
  %9:u32 = and %7, %8
  %10:u32 = imul %9, %1
  %11:u32 = load_shared %10
  %12:u32 = shared_atomic op=add %5, %11
  %13:u32 = shared_atomic op=cmpxchg %5, %3, %12
  %14:u32 = load_shared %5
  %15:u32 = const 0
  %16:u32 = load_shared %15
  %17:u32 = iadd %13, %14
  %18:u32 = iadd %17, %16
  store_ssbo binding=1 %2, %18
  ret
",
    );
    assert!(listing.contains("BARRIER"), "{listing}");
    assert!(listing.contains("workgroup_local_pointer"), "{listing}");
}

#[test]
fn front_facing_is_r58_compared_with_zero() {
    // The verifier draws front and back faces over its seeds.
    let listing = check(
        "shader fragment
b0:
  %0:bool = load_sysval sv=front_facing
  %1:f32 = const 0x3f800000
  %2:f32 = const 0x40000000
  %3:f32 = sel %0, %1, %2
  store_output slot=0 comp=0 %3
  ret
",
    );
    assert!(listing.contains("r58"), "{listing}");
}

#[test]
fn the_local_index_and_the_workgroup_count_come_from_pushed_words() {
    let listing = check(
        "shader compute
b0:
  %0:u32 = load_sysval sv=local_invocation_index
  %1:u32 = load_sysval sv=num_workgroups comp=0
  %2:u32 = load_sysval sv=num_workgroups comp=2
  %3:u32 = const 4
  %4:u32 = imul %0, %3
  %5:u32 = iadd %0, %1
  %6:u32 = iadd %5, %2
  store_ssbo binding=0 %4, %6
  ret
",
    );
    assert!(listing.contains("IMUL"), "{listing}");
}

#[test]
fn the_view_index_comes_from_a_pushed_word() {
    // The verifier's draws are all view 0, so run views 0 to 3 here.
    let text = "shader fragment
b0:
  %0:i32 = load_sysval sv=view_index
  %1:i32 = const 7
  %2:i32 = imul %0, %1
  store_output slot=0 comp=0 %2
  ret
";
    check(text);
    for gpu in ["g57", "g610"] {
        let arena = lathe_ir::Bump::new();
        let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let target = Rc::new(ValhallTarget::new(gpu.parse().unwrap()));
        let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
        // One draw per view: the index is the same for every thread.
        for view in 0..4 {
            let mut inv = Invocation::default();
            inv.sysvals.view_index = view;
            let threads = vec![inv; 4];
            let got = ValhallProgram::new(&out)
                .execute(&threads, &mut Memory::default())
                .unwrap_or_else(|e| panic!("{gpu}: {e}\n{}", out.compiled.listing()));
            let want = run(&generic, &threads[0], Limits::default()).unwrap();
            for outcome in &got {
                assert_eq!(
                    outcome.outputs,
                    want.outputs,
                    "{gpu} view {view}\n{}",
                    out.compiled.listing()
                );
            }
        }
    }
}

/// Atomic loads and stores are the plain LOAD / STORE. Every thread adds
/// to word 0 and, with no barrier, atomically loads it back: the value is
/// undefined (the order of the others' adds decides it), and so are the
/// words it is stored to; a thread's own words are defined.
#[test]
fn atomic_loads_and_stores_are_plain_word_accesses() {
    let listing = check(
        "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 1
  %2:u32 = const 4
  %3:u32 = load_sysval sv=local_invocation_index
  %4:u32 = imul %3, %2
  %5:u32 = iadd %4, %2
  %6:u32 = ssbo_atomic binding=0 op=add %0, %1
  %7:u32 = ssbo_atomic_load binding=0 %0
  ssbo_atomic_store binding=0 %5, %7
  ssbo_atomic_store binding=1 %4, %3
  %8:u32 = ssbo_atomic_load binding=1 %4
  shared_atomic_store %4, %8
  %9:u32 = shared_atomic_load %4
  %10:u32 = const 64
  %11:u32 = iadd %4, %10
  %12:u32 = iadd %9, %6
  store_ssbo binding=1 %11, %9
  ret
",
    );
    assert!(listing.contains("STORE.i32"), "{listing}");
}

/// Every thread takes a node index from the counter in word 0 with an
/// atomic add and, when it is below 64, stores its local index at word
/// `2 + index`: the program's order of the adds decides which thread
/// writes where, and the verifier follows it (the interpreter alone
/// finds every draw undefined: it branches on an ordered result).
#[test]
fn a_branch_on_an_atomic_result_follows_the_programs_order() {
    let text = "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 1
  %2:u32 = const 64
  %3:u32 = const 4
  %4:u32 = const 8
  %5:u32 = ssbo_atomic binding=0 op=add %0, %1
  %6:bool = ult %5, %2
  branch %6, b1, b2
b1:
  %7:u32 = imul %5, %3
  %8:u32 = iadd %7, %4
  %9:u32 = load_sysval sv=local_invocation_index
  store_ssbo binding=0 %8, %9
  jump b2
b2:
  ret
";
    check(text);
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let target = Rc::new(ValhallTarget::new("g610".parse().unwrap()));
    let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
    let options = Options {
        threads: 8,
        ..Options::default()
    };
    let report = verify(&generic, &ValhallProgram::new(&out), &options).unwrap();
    assert_eq!((report.undefined, report.compared), (0, 1024));
}
