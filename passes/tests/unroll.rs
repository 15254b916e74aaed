//! `unroll` through `optimise`: counted loops disappear, the arrays they
//! index with their counter become static accesses, loops outside the
//! rule stay, and the interpreter computes the same outputs before and
//! after (the random-program check in `tests/optimise.rs` covers the
//! generator's counted loops too).

use lathe_ir::interp::{self, Invocation, Limits};
use lathe_ir::{Cfg, DomTree, GenericOp, Loops, Shader};
use lathe_passes::optimise::optimise;

fn loops(shader: &Shader<'_, GenericOp>) -> usize {
    let cfg = Cfg::compute(shader);
    let dom = DomTree::compute(&cfg);
    Loops::compute(&cfg, &dom).headers().len()
}

/// Optimises `text`, checks the outputs on `inputs` (slot 0 words)
/// agree with the original's, and returns the optimised text and its
/// loop count.
fn optimised(text: &str, inputs: &[u32]) -> (String, usize) {
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let mut inv = Invocation::default();
    for (comp, &bits) in inputs.iter().enumerate() {
        inv.inputs.insert((0, comp as u8), bits);
    }
    let before = interp::run(&shader, &inv, Limits::default()).unwrap();
    optimise(&mut shader);
    lathe_ir::validate(&shader).unwrap();
    let after = interp::run(&shader, &inv, Limits::default()).unwrap();
    let printed = lathe_ir::print(&shader);
    assert_eq!(after.outputs, before.outputs, "{printed}");
    (printed, loops(&shader))
}

/// `for (i = 0; i < N; i++) a[i] = x * i; for (j = 0; j < N; j++) s += a[j];`
fn kernel(trips: u32) -> String {
    format!(
        "shader fragment\narray a0: f32[{trips}]\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=flat\n  %1:u32 = const 0\n  %2:u32 = const {trips}\n  %3:u32 = const 1\n  %4:f32 = const 0.0\n  jump b1\nb1:\n  %5:u32 = phi [%1, b0], [%9, b2]\n  %6:bool = ult %5, %2\n  branch %6, b2, b3\nb2:\n  %7:f32 = cvt %5\n  %8:f32 = fmul %0, %7\n  array_store array=a0 offset=0 %8 addr=%5\n  %9:u32 = iadd %5, %3\n  jump b1\nb3:\n  jump b4\nb4:\n  %10:u32 = phi [%1, b3], [%14, b5]\n  %11:f32 = phi [%4, b3], [%13, b5]\n  %15:bool = ult %10, %2\n  branch %15, b5, b6\nb5:\n  %12:f32 = array_load array=a0 offset=0 addr=%10\n  %13:f32 = fadd %11, %12\n  %14:u32 = iadd %10, %3\n  jump b4\nb6:\n  store_output slot=0 comp=0 %11\n  ret\n"
    )
}

#[test]
fn counted_loops_become_straight_line_with_static_array_accesses() {
    let (text, count) = optimised(&kernel(9), &[1.5f32.to_bits()]);
    assert_eq!(count, 0, "{text}");
    assert!(!text.contains("addr="), "{text}");
    assert!(!text.contains("branch"), "{text}");
}

#[test]
fn nested_counted_loops_unroll_inside_out() {
    // for (i = 0; i < 3; i++) for (j = 0; j < 3; j++) s += x;
    let text = "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=flat\n  %1:i32 = const 0\n  %2:i32 = const 3\n  %3:i32 = const 1\n  %4:f32 = const 0.0\n  jump b1\nb1:\n  %5:i32 = phi [%1, b0], [%12, b5]\n  %6:f32 = phi [%4, b0], [%9, b5]\n  %7:bool = ilt %5, %2\n  branch %7, b2, b6\nb2:\n  jump b3\nb3:\n  %8:i32 = phi [%1, b2], [%11, b4]\n  %9:f32 = phi [%6, b2], [%10, b4]\n  %13:bool = ilt %8, %2\n  branch %13, b4, b5\nb4:\n  %10:f32 = fadd %9, %0\n  %11:i32 = iadd %8, %3\n  jump b3\nb5:\n  %12:i32 = iadd %5, %3\n  jump b1\nb6:\n  store_output slot=0 comp=0 %6\n  ret\n";
    let (out, count) = optimised(text, &[0.25f32.to_bits()]);
    assert_eq!(count, 0, "{out}");
    // Nine additions, the first of them `0.0 + x` = x (signed zeros need
    // not be kept).
    assert_eq!(out.matches("fadd").count(), 8, "{out}");
}

#[test]
fn loops_past_the_trip_limit_stay() {
    let trips = lathe_passes::unroll::MAX_TRIPS + 1;
    let (text, count) = optimised(&kernel(trips), &[2.0f32.to_bits()]);
    assert_eq!(count, 2, "{text}");
}

#[test]
fn long_loops_without_arrays_stay() {
    // 20 trips of 10 additions: 200 instructions unrolled, past the
    // budget of a loop that indexes no array.
    let adds: String = (0..10)
        .map(|k| {
            format!(
                "  %{}:f32 = fadd %{}, %0\n",
                20 + k,
                if k == 0 { 6 } else { 19 + k }
            )
        })
        .collect();
    let text = format!(
        "shader fragment\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=flat\n  %1:i32 = const 0\n  %2:i32 = const 20\n  %3:i32 = const 1\n  %4:f32 = const 0.0\n  jump b1\nb1:\n  %5:i32 = phi [%1, b0], [%8, b2]\n  %6:f32 = phi [%4, b0], [%29, b2]\n  %7:bool = ilt %5, %2\n  branch %7, b2, b3\nb2:\n{adds}  %8:i32 = iadd %5, %3\n  jump b1\nb3:\n  store_output slot=0 comp=0 %6\n  ret\n"
    );
    let (out, count) = optimised(&text, &[1.0f32.to_bits()]);
    assert_eq!(count, 1, "{out}");
    // Two trips of the same loop are unrolled.
    let (out, count) = optimised(&text.replace("const 20", "const 2"), &[1.0f32.to_bits()]);
    assert_eq!(count, 0, "{out}");
}

#[test]
fn zero_trip_loops_vanish() {
    let (text, count) = optimised(&kernel(0).replace("f32[0]", "f32[1]"), &[2.0f32.to_bits()]);
    assert_eq!(count, 0, "{text}");
    assert!(text.contains("const 0.0"), "{text}");
}

#[test]
fn loops_with_a_run_time_bound_or_a_second_exit_stay() {
    // The bound is an input.
    let bound = "shader fragment\nb0:\n  %0:u32 = load_input slot=0 comp=0 interp=flat\n  %1:u32 = const 0\n  %2:u32 = const 1\n  jump b1\nb1:\n  %3:u32 = phi [%1, b0], [%5, b2]\n  %4:bool = ult %3, %0\n  branch %4, b2, b3\nb2:\n  %5:u32 = iadd %3, %2\n  jump b1\nb3:\n  store_output slot=0 comp=0 %3\n  ret\n";
    let (text, count) = optimised(bound, &[5]);
    assert_eq!(count, 1, "{text}");
    // Four trips at most, but the body may leave early (a break).
    let early = "shader fragment\nb0:\n  %0:u32 = load_input slot=0 comp=0 interp=flat\n  %1:u32 = const 0\n  %2:u32 = const 1\n  %6:u32 = const 4\n  jump b1\nb1:\n  %3:u32 = phi [%1, b0], [%5, b4]\n  %4:bool = ult %3, %6\n  branch %4, b2, b3\nb2:\n  %7:bool = ieq %3, %0\n  branch %7, b3, b4\nb4:\n  %5:u32 = iadd %3, %2\n  jump b1\nb3:\n  %8:u32 = phi [%3, b1], [%3, b2]\n  store_output slot=0 comp=0 %8\n  ret\n";
    let (text, count) = optimised(early, &[2]);
    assert_eq!(count, 1, "{text}");
}

#[test]
fn the_registry_runs_unroll_by_name() {
    let text = kernel(4);
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
    let mut pipeline = lathe_passes::manager::Registry::<GenericOp>::generic()
        .pipeline(&["unroll"])
        .unwrap();
    pipeline.run(&mut shader).unwrap();
    lathe_ir::validate(&shader).unwrap();
    assert_eq!(loops(&shader), 0, "{}", lathe_ir::print(&shader));
}
