//! `swap`, the two-result exchange register allocation breaks copy cycles
//! with: text form, validator rules, and interpreter semantics by value and
//! by register.

use lathe_ir::interp::{self, Invocation, Limits, Placement};
use lathe_ir::{Bump, GenericOp, Shader, parse, print, validate};

const EXAMPLE: &str = include_str!("../examples/swap.lir");

fn meta_outputs(out: &interp::Outcome) -> Vec<u32> {
    out.meta_outputs.values().map(|&(_, bits)| bits).collect()
}

#[test]
fn swap_rotates_values_by_name_and_by_register() {
    let arena = Bump::new();
    let s: Shader<GenericOp> = parse(&arena, EXAMPLE).unwrap();
    validate(&s).unwrap();
    assert_eq!(print(&s), EXAMPLE);
    let inv = Invocation {
        meta_inputs: vec![5],
        ..Invocation::default()
    };
    // Three trips exchange the two values three times.
    let by_value = interp::run(&s, &inv, Limits::default()).unwrap();
    assert_eq!(meta_outputs(&by_value), [7, 5]);
    // Every value read and written through its register: the swap must
    // read both registers before writing either.
    let places: Vec<Option<Placement>> = (0..s.value_capacity() as u32)
        .map(|v| {
            s.value_reg(lathe_ir::Value(v)).map(|r| Placement {
                slot: r.unit as u32,
                width: 1,
            })
        })
        .collect();
    let by_register = interp::run_placed(&s, &inv, Limits::default(), &places).unwrap();
    assert_eq!(meta_outputs(&by_register), [7, 5]);
}

fn rejected(text: &str) -> String {
    let arena = Bump::new();
    match parse::<GenericOp>(&arena, text) {
        Err(e) => e.to_string(),
        Ok(s) => validate(&s).expect_err("accepted").to_string(),
    }
}

#[test]
fn swap_results_must_take_each_others_registers() {
    let wrong = EXAMPLE.replace("%10:u32@r4, %11:u32@r0", "%10:u32@r0, %11:u32@r4");
    let e = rejected(&wrong);
    assert!(e.contains("each other's operand registers"), "{e}");
}

#[test]
fn swap_needs_two_scalars_of_one_width_and_two_results() {
    let e = rejected(
        "shader fragment\nb0:\n  %0:u32 = input index=0\n  %1:f16 = const 1.0\n  %2:u32, %3:f16 = swap %0, %1\n  ret\n",
    );
    assert!(e.contains("one width"), "{e}");
    let e =
        rejected("shader fragment\nb0:\n  %0:u32 = input index=0\n  %1:u32 = swap %0, %0\n  ret\n");
    assert!(e.contains("two results"), "{e}");
    let e = rejected(
        "shader fragment\nb0:\n  %0:u32 = input index=0\n  %1:u32, %2:u32 = mov %0\n  ret\n",
    );
    assert!(e.contains("one result"), "{e}");
    // The types of the results follow the operands' order.
    let e = rejected(
        "shader fragment\nb0:\n  %0:u32 = input index=0\n  %1:f32 = const 1.0\n  %2:f32, %3:u32 = swap %0, %1\n  ret\n",
    );
    assert!(e.contains("gives `%a:u32, %b:f32`"), "{e}");
}
