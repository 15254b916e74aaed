//! Undefined values (poison) in the interpreter: where the specification
//! leaves a value undefined the run goes on with a value marked
//! undefined, which propagates through data flow and memory; branching on
//! one or addressing memory with one is undefined behaviour.

use lathe_ir::exactness::Exactness;
use lathe_ir::interp::{self, Invocation, Limits, Memory, SysVals};
use lathe_ir::{GenericOp, Image, Shader};

fn workgroup(
    shader: &Shader<'_, GenericOp>,
    n: u32,
    memory: &mut Memory,
) -> Result<Vec<lathe_ir::Outcome>, interp::InterpError> {
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
    interp::run_workgroup(shader, &lanes, memory, Limits::default())
}

fn image_memory() -> Memory {
    Memory {
        ssbos: vec![vec![0; 8]],
        images: vec![Image::new_2d(4, 4, 4)],
        ..Memory::default()
    }
}

/// Loads the texel at x = `x` - 1 (out of bounds for x = 0), and then
/// does `tail` with its red channel `%6`.
fn border_load(tail: &str) -> String {
    format!(
        "shader compute
b0:
  %0:u32 = const 0
  %1:i32 = const -1
  %2:i32 = const 0
  %3:i32x2 = collect %1, %2
  %4:f32x4 = image_load image=0 %3
  %5:u32 = const 4
  %6:f32 = split lane=0 %4
{tail}"
    )
}

#[test]
fn an_out_of_bounds_image_load_is_an_undefined_value_that_stores_propagate() {
    let arena = lathe_ir::Bump::new();
    let text = border_load(
        "  %7:f32 = fadd %6, %6
  store_ssbo binding=0 %0, %7
  store_ssbo binding=0 %5, %6
  ret
",
    );
    let shader = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
    let mut memory = image_memory();
    workgroup(&shader, 1, &mut memory).unwrap();
    for word in [0, 1] {
        assert_eq!(
            memory.written.ssbo(0, word),
            Some((lathe_ir::Scalar::F32, Exactness::Undefined))
        );
    }
    assert_eq!(memory.written.ssbo(0, 2), None);
    assert_eq!(memory.written.undefined(), 2);
}

#[test]
fn branching_on_or_addressing_with_an_undefined_value_is_undefined_behaviour() {
    let branch = border_load(
        "  %7:f32 = const 0.5
  %8:bool = flt %6, %7
  branch %8, b1, b2
b1:
  store_ssbo binding=0 %0, %7
  jump b2
b2:
  ret
",
    );
    let address = border_load(
        "  %7:u32 = cvt %6
  store_ssbo binding=0 %7, %5
  ret
",
    );
    for (text, what) in [(branch, "branch condition"), (address, "address")] {
        let arena = lathe_ir::Bump::new();
        let shader = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
        let err = workgroup(&shader, 1, &mut image_memory()).unwrap_err();
        assert!(err.is_undefined(), "{err}");
        assert!(err.to_string().contains(what), "{err}");
    }
}

/// Every invocation adds to word 0 and stores what it got back to its
/// own word (`op` of the atomic).
fn count(op: &str) -> String {
    format!(
        "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 1
  %2:u32 = const 4
  %3:u32 = ssbo_atomic binding=0 op={op} %0, %1
  %4:u32 = load_sysval sv=local_invocation_index
  %5:u32 = iadd %4, %1
  %6:u32 = imul %5, %2
  store_ssbo binding=0 %6, %3
  ret
"
    )
}

#[test]
fn an_atomics_result_decided_by_the_order_of_others_is_undefined_in_hindsight() {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, &count("add")).unwrap();
    let exactness = |m: &Memory, w: u32| m.written.ssbo(0, w).map(|(_, e)| e);
    // One run: the first invocation's add saw no other yet.
    let mut once = image_memory();
    workgroup(&shader, 4, &mut once).unwrap();
    assert_eq!(exactness(&once, 1), Some(Exactness::Exact));
    assert_eq!(exactness(&once, 2), Some(Exactness::Undefined));
    // In hindsight every result is undefined; the sum of adds is not.
    let mut memory = image_memory();
    interp::run_in_hindsight(&mut memory, |m| workgroup(&shader, 4, m)).unwrap();
    for w in 1..=4 {
        assert_eq!(
            exactness(&memory, w),
            Some(Exactness::Undefined),
            "word {w}"
        );
    }
    assert_eq!(memory.ssbos[0][0], 4);
    assert_eq!(exactness(&memory, 0), Some(Exactness::Exact));
    // Exchanges do not commute: the word's final value is undefined too.
    let shader = lathe_ir::parse::<GenericOp>(&arena, &count("xchg")).unwrap();
    let mut memory = image_memory();
    interp::run_in_hindsight(&mut memory, |m| workgroup(&shader, 4, m)).unwrap();
    assert_eq!(exactness(&memory, 0), Some(Exactness::Undefined));
    // One invocation alone has no order to depend on.
    let mut memory = image_memory();
    interp::run_in_hindsight(&mut memory, |m| workgroup(&shader, 1, m)).unwrap();
    assert_eq!(exactness(&memory, 1), Some(Exactness::Exact));
}
