//! The validator rejects each broken rule with a message naming it.

use lathe_ir::{GenericOp, Shader, parse, validate};

fn violations(body: &str) -> Vec<String> {
    let text = format!("shader fragment\narray a0: f32[2]\n{body}");
    let arena = lathe_ir::Bump::new();
    let shader: Shader<GenericOp> = parse(&arena, &text).unwrap_or_else(|e| panic!("{e}"));
    match validate(&shader) {
        Ok(()) => Vec::new(),
        Err(e) => e.violations.iter().map(|v| v.to_string()).collect(),
    }
}

fn assert_rejects(body: &str, needle: &str) {
    let v = violations(body);
    assert!(
        v.iter().any(|m| m.contains(needle)),
        "expected `{needle}` in {v:?}\nfor:\n{body}"
    );
}

#[test]
fn well_formed_programs_pass() {
    assert_eq!(
        violations(
            "b0:\n  %0:f32 = const 1.0\n  %1:bool = flt %0, %0\n  branch %1, b1, b2\nb1:\n  jump b2\nb2:\n  %2:f32 = phi [%0, b1], [%0, b0]\n  store_output slot=0 comp=0 %2\n  ret\n"
        ),
        Vec::<String>::new()
    );
}

#[test]
fn block_structure() {
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n",
        "does not end in a terminator",
    );
    assert_rejects("b0:\n  ret\n  ret\n", "terminator in the middle");
    // Unreachable blocks are allowed, and count as dominated by everything.
    assert_eq!(
        violations(
            "b0:\n  ret\nb1:\n  %0:f32 = fadd %1, %1\n  jump b2\nb2:\n  %1:f32 = const 1.0\n  ret\n"
        ),
        Vec::<String>::new()
    );
    assert_rejects("b0:\n  jump b0\n", "entry block has predecessors");
    assert_rejects(
        "b0:\n  %0:bool = const true\n  branch %0, b1, b1\nb1:\n  ret\n",
        "branch targets must differ",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  branch %0, b1, b2\nb1:\n  ret\nb2:\n  ret\n",
        "one bool condition",
    );
}

#[test]
fn irreducible_control_flow() {
    assert_rejects(
        "b0:\n  %0:bool = const true\n  branch %0, b1, b2\nb1:\n  jump b2\nb2:\n  branch %0, b1, b3\nb3:\n  ret\n",
        "irreducible",
    );
}

#[test]
fn ssa_dominance() {
    assert_rejects(
        "b0:\n  %0:f32 = fadd %1, %1\n  %1:f32 = const 1.0\n  ret\n",
        "does not dominate",
    );
    assert_rejects(
        "b0:\n  %0:bool = const true\n  branch %0, b1, b2\nb1:\n  %1:f32 = const 1.0\n  jump b2\nb2:\n  store_output slot=0 comp=0 %1\n  ret\n",
        "does not dominate",
    );
    // A phi operand must dominate the end of its predecessor, not the phi.
    assert_rejects(
        "b0:\n  %0:bool = const true\n  branch %0, b1, b2\nb1:\n  %1:f32 = const 1.0\n  jump b2\nb2:\n  %2:f32 = phi [%1, b1], [%1, b0]\n  ret\n",
        "does not dominate",
    );
}

#[test]
fn phi_rules() {
    let diamond = |phi: &str| {
        format!(
            "b0:\n  %0:f32 = const 1.0\n  %9:bool = const true\n  branch %9, b1, b2\nb1:\n  jump b2\nb2:\n{phi}  ret\n"
        )
    };
    assert_rejects(
        &diamond("  %1:f32 = phi [%0, b1]\n"),
        "1 incoming value(s) but the block has 2",
    );
    assert_rejects(
        &diamond("  %1:f32 = phi [%0, b1], [%0, b1]\n"),
        "not a distinct predecessor",
    );
    assert_rejects(
        &diamond("  %1:i32 = phi [%0, b1], [%0, b0]\n"),
        "phi operands must all be i32",
    );
    assert_rejects(
        &diamond("  %5:f32 = const 2.0\n  %1:f32 = phi [%0, b1], [%0, b0]\n"),
        "phi after a non-phi",
    );
}

#[test]
fn operand_counts_and_types() {
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:f32 = fadd %0\n  ret\n",
        "takes 2 operand(s), has 1",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:i32 = iadd %0, %0\n  ret\n",
        "does not match i32",
    );
    assert_rejects(
        "b0:\n  %0:i32 = const 1\n  %1:i32 = fadd %0, %0\n  ret\n",
        "needs a float type, not i32",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:i32 = flt %0, %0\n  ret\n",
        "comparisons give bool",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:f16 = mov %0\n  ret\n",
        "widths differ",
    );
    assert_rejects(
        "b0:\n  %0:i32 = const 1\n  %1:i32 = mov neg %0\n  ret\n",
        "abs/neg need a float",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:bool = cvt %0\n  ret\n",
        "cvt does not give bool",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:f32 = fadd %0, %0 addr=%0\n  ret\n",
        "does not take an address",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:f32 = array_load array=a0 offset=0 addr=%0\n  ret\n",
        "address operand must be",
    );
    assert_rejects(
        "b0:\n  %0:f32 = array_load array=a3 offset=0\n  ret\n",
        "a3 is not declared",
    );
    assert_rejects(
        "b0:\n  %0:f32 = array_load array=a0 offset=2\n  ret\n",
        "past the array",
    );
    assert_rejects(
        "b0:\n  %0:i32 = array_load array=a0 offset=0\n  ret\n",
        "holds f32",
    );
}

#[test]
fn meta_instruction_rules() {
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:f32x3 = collect %0, %0\n  ret\n",
        "gives f32x2",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:i32 = const 1\n  %2:f32x2 = collect %0, %1\n  ret\n",
        "scalars of one type",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:f32 = split lane=0 %0\n  ret\n",
        "lane 0 is not in f32",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:f32x2 = collect %0, %0\n  %2:f32 = split lane=2 %1\n  ret\n",
        "lane 2 is not in f32x2",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:f32x2 = collect %0, %0\n  %2:f32x2 = fadd %1, %1\n  ret\n",
        "only collect/split and texture/image operands handle vectors",
    );
    assert_rejects(
        "b0:\n  %0:f32 = const 1.0\n  %1:f32x2 = collect %0, %0\n  output index=0 %1\n  ret\n",
        "output takes one scalar",
    );
    // A vector input is a preloaded register group (ir3's barycentrics).
    assert_eq!(
        violations("b0:\n  %0:f32x2 = input index=0\n  ret\n"),
        Vec::<String>::new()
    );
}

#[test]
fn phis_need_predecessors_and_inputs_live_in_the_entry() {
    // The entry has no predecessors, so a phi there has nothing to choose.
    assert_rejects(
        "b0:\n  %0:f32 = phi\n  store_output slot=0 comp=0 %0\n  ret\n",
        "block without predecessors",
    );
    // Neither has an unreachable block nobody branches to.
    assert_rejects(
        "b0:\n  ret\nb1:\n  %0:f32 = phi\n  ret\n",
        "block without predecessors",
    );
    // `input` names a preloaded register: only the entry block has them.
    assert_rejects(
        "b0:\n  jump b1\nb1:\n  %0:f32 = input index=0\n  ret\n",
        "only the entry block",
    );
    assert_eq!(
        violations("b0:\n  %0:f32 = input index=0\n  output index=0 %0\n  ret\n"),
        Vec::<String>::new()
    );
}

#[test]
fn signed_division_is_typed() {
    assert_eq!(
        violations(
            "b0:\n  %0:i16 = const 7\n  %1:i16 = idiv %0, %0\n  %2:i16 = irem %0, %0\n  ret\n"
        ),
        Vec::<String>::new()
    );
    assert_rejects(
        "b0:\n  %0:u32 = const 7\n  %1:u32 = idiv %0, %0\n  ret\n",
        "not defined on u32",
    );
    assert_rejects(
        "b0:\n  %0:i32 = const 7\n  %1:i32 = irem %0\n  ret\n",
        "takes 2 operand(s), has 1",
    );
}
