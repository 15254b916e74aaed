//! Register file names in IR text: `@NAMEunit`, or `@NAME.unit` when the
//! name ends in a digit (ir3's `a0`, `p0`), so allocated machine IR of
//! every target parses back.

use lathe_ir::{Bump, GenericOp, Reg, Shader};

#[test]
fn names_ending_in_a_digit_take_a_dot_before_the_unit() {
    let text = "shader fragment
registers gpr, a0, p0
b0:
  %0:u32@a0.3 = input index=0
  %1:u32@gpr12 = input index=1
  %2:bool@p0.0 = ilt %0, %1
  ret
";
    let arena = Bump::new();
    let s: Shader<GenericOp> = lathe_ir::parse(&arena, text).unwrap();
    let regs: Vec<Option<Reg>> = (0..3).map(|v| s.value_reg(lathe_ir::Value(v))).collect();
    assert_eq!(
        regs,
        [
            Some(Reg { file: 1, unit: 3 }),
            Some(Reg { file: 0, unit: 12 }),
            Some(Reg { file: 2, unit: 0 }),
        ]
    );
    assert_eq!(lathe_ir::print(&s), text);
}

#[test]
fn a_register_file_name_must_start_with_a_letter() {
    let arena = Bump::new();
    let e = lathe_ir::parse::<GenericOp>(&arena, "shader fragment\nregisters r, 0a\nb0:\n  ret\n")
        .unwrap_err();
    assert_eq!((e.line, e.col), (2, 14), "{e}");
}
