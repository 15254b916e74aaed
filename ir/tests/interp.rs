//! The reference interpreter: exact IEEE results, UB as errors, control flow.

use lathe_ir::{
    Builder, GenericOp, Interp, InterpError, Invocation, Limits, Shader, Stage, Texture, Type, f16,
    interp, parse,
};

fn run(body: &str, inv: &Invocation) -> Result<lathe_ir::Outcome, InterpError> {
    let text = format!("shader fragment\narray a0: f32[2]\n{body}");
    let arena = lathe_ir::Bump::new();
    let shader: Shader<GenericOp> = parse(&arena, &text).unwrap_or_else(|e| panic!("{e}"));
    lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{e}"));
    interp::run(&shader, inv, Limits::default())
}

/// Evaluate `%r:TY = OP consts...` and return the result bits.
fn eval(ty: &str, op: &str, operands: &[(&str, &str)]) -> Result<u32, InterpError> {
    let mut body = String::from("b0:\n");
    let mut names = Vec::new();
    for (k, (t, c)) in operands.iter().enumerate() {
        body.push_str(&format!("  %{k}:{t} = const {c}\n"));
        names.push(format!("%{k}"));
    }
    body.push_str(&format!("  %99:{ty} = {op} {}\n", names.join(", ")));
    if ty == "bool" {
        // Outputs are not bool: store 1 or 0.
        body.push_str("  %97:u32 = const 1\n  %96:u32 = const 0\n  %98:u32 = sel %99, %97, %96\n  store_output slot=0 comp=0 %98\n  ret\n");
    } else {
        body.push_str("  store_output slot=0 comp=0 %99\n  ret\n");
    }
    run(&body, &Invocation::default()).map(|o| o.outputs[&(0, 0)].1)
}

fn f32_bits(x: f32) -> u32 {
    x.to_bits()
}

#[test]
fn f32_arithmetic_is_ieee() {
    assert_eq!(
        eval("f32", "fadd", &[("f32", "0.1"), ("f32", "0.2")]),
        Ok(f32_bits(0.1f32 + 0.2f32))
    );
    // fma rounds once: (1+2^-12)^2 - 1 keeps the 2^-24 term that a
    // separate multiply rounds away (a tie, to even).
    let a = 1.0f32 + 2f32.powi(-12);
    let fused = eval(
        "f32",
        "ffma",
        &[
            ("f32", &format!("{a:?}")),
            ("f32", &format!("{a:?}")),
            ("f32", "-1.0"),
        ],
    )
    .unwrap();
    assert_eq!(f32::from_bits(fused), a.mul_add(a, -1.0));
    assert_ne!(f32::from_bits(fused), a * a - 1.0);
    // Subnormals are kept, not flushed.
    assert_eq!(
        eval("f32", "fmul", &[("f32", "1e-38"), ("f32", "0.01")]),
        Ok(f32_bits(1e-38 * 0.01))
    );
    assert_eq!(
        eval("f32", "sqrt", &[("f32", "2.0")]),
        Ok(f32_bits(2f32.sqrt()))
    );
    assert_eq!(
        eval("f32", "rcp", &[("f32", "3.0")]),
        Ok(f32_bits(1.0 / 3.0))
    );
    assert_eq!(eval("f32", "floor", &[("f32", "-1.5")]), Ok(f32_bits(-2.0)));
    // minNum: a NaN operand yields the other; -0 is below +0.
    assert_eq!(
        eval("f32", "fmin", &[("f32", "0x7fc00000"), ("f32", "3.0")]),
        Ok(f32_bits(3.0))
    );
    assert_eq!(
        eval("f32", "fmin", &[("f32", "0.0"), ("f32", "-0.0")]),
        Ok(0x8000_0000)
    );
    assert_eq!(
        eval("f32", "fmax", &[("f32", "-0.0"), ("f32", "0.0")]),
        Ok(0)
    );
    assert_eq!(
        eval(
            "bool",
            "fne",
            &[("f32", "0x7fc00000"), ("f32", "0x7fc00000")]
        ),
        Ok(1)
    );
    assert_eq!(
        eval("bool", "fge", &[("f32", "0x7fc00000"), ("f32", "1.0")]),
        Ok(0)
    );
}

#[test]
fn f16_arithmetic_rounds_once_to_nearest_even() {
    // 2048 + 1 is a tie in binary16 (spacing 2): rounds to even 2048.
    assert_eq!(
        eval("f16", "fadd", &[("f16", "2048.0"), ("f16", "1.0")]),
        Ok(f16::from_f32(2048.0) as u32)
    );
    // 2050 + 1 is a tie too: rounds up to the even 2052.
    assert_eq!(
        eval("f16", "fadd", &[("f16", "2050.0"), ("f16", "1.0")]),
        Ok(f16::from_f32(2052.0) as u32)
    );
    assert_eq!(
        eval("f16", "fmul", &[("f16", "300.0"), ("f16", "300.0")]),
        Ok(0x7c00)
    ); // overflow to inf
    assert_eq!(eval("f16", "cvt", &[("f32", "65519.0")]), Ok(0x7bff));
    assert_eq!(eval("f16", "cvt", &[("f32", "65520.0")]), Ok(0x7c00));
    assert_eq!(
        eval("f32", "cvt", &[("f16", "0x0001")]),
        Ok(f32_bits(2f32.powi(-24)))
    );
    assert_eq!(eval("f16", "mov neg", &[("f16", "1.5")]), Ok(0xbe00));
    assert_eq!(eval("f16", "mov abs", &[("f16", "-0.0")]), Ok(0));
}

#[test]
fn integer_and_conversion_semantics() {
    assert_eq!(
        eval("i32", "iadd", &[("i32", "2147483647"), ("i32", "1")]),
        Ok(0x8000_0000)
    ); // wraps
    assert_eq!(
        eval("i16", "imul", &[("i16", "300"), ("i16", "300")]),
        Ok((300i32 * 300) as u32 & 0xffff)
    );
    assert_eq!(
        eval("i16", "imin", &[("i16", "-5"), ("i16", "3")]),
        Ok(0xfffb)
    );
    assert_eq!(
        eval("i32", "ashr", &[("i32", "-8"), ("i32", "1")]),
        Ok((-4i32) as u32)
    );
    assert_eq!(
        eval("u32", "shr", &[("u32", "0x80000000"), ("u32", "31")]),
        Ok(1)
    );
    assert_eq!(eval("i32", "cvt", &[("f32", "-2.75")]), Ok((-2i32) as u32)); // truncates
    assert_eq!(eval("u32", "cvt", &[("i16", "-1")]), Ok(u32::MAX)); // sign-extends
    assert_eq!(eval("i16", "cvt", &[("u32", "0x12345")]), Ok(0x2345)); // wraps
    assert_eq!(
        eval("f32", "cvt", &[("i32", "16777217")]),
        Ok(f32_bits(16777216.0))
    ); // ties to even
    assert_eq!(eval("u32", "mov", &[("f32", "1.0")]), Ok(0x3f80_0000)); // bit cast
    assert_eq!(eval("bool", "not", &[("bool", "true")]), Ok(0));
}

fn assert_ub(result: Result<impl std::fmt::Debug, InterpError>, reason: &str) {
    match result {
        Err(e @ InterpError::Undefined { .. }) => assert!(e.to_string().contains(reason), "{e}"),
        other => panic!("expected UB ({reason}), got {other:?}"),
    }
}

#[test]
fn undefined_behaviour_is_reported() {
    assert_ub(eval("i32", "cvt", &[("f32", "3e9")]), "out of range");
    assert_ub(eval("u32", "cvt", &[("f32", "-1.0")]), "out of range");
    assert_ub(eval("i32", "cvt", &[("f32", "0x7fc00000")]), "NaN");
    assert_ub(
        eval("i32", "shl", &[("i32", "1"), ("i32", "32")]),
        "shift by 32",
    );
    assert_ub(
        eval("i16", "shl", &[("i16", "1"), ("i16", "16")]),
        "shift by 16",
    );
    assert_ub(
        eval("u32", "udiv", &[("u32", "1"), ("u32", "0")]),
        "division by zero",
    );
    assert_ub(
        run(
            "b0:\n  %0:f32 = array_load array=a0 offset=1\n  ret\n",
            &Invocation::default(),
        ),
        "read before it is written",
    );
    assert_ub(
        run(
            "b0:\n  %0:i32 = const 2\n  %1:f32 = array_load array=a0 offset=0 addr=%0\n  ret\n",
            &Invocation::default(),
        ),
        "out of bounds",
    );
    assert_ub(
        run(
            "b0:\n  %0:f32 = load_uniform index=3\n  ret\n",
            &Invocation::default(),
        ),
        "out of bounds",
    );
    let err = run(
        "b0:\n  %0:u32 = const 1\n  %1:u32 = const 0\n  %2:u32 = udiv %0, %1\n  ret\n",
        &Invocation::default(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "undefined behaviour at `%2:u32 = udiv %0, %1`: division by zero"
    );
}

#[test]
fn missing_inputs_are_not_invented() {
    let r = run(
        "b0:\n  %0:f32 = load_input slot=2 comp=1 interp=smooth\n  ret\n",
        &Invocation::default(),
    );
    assert_eq!(
        r,
        Err(InterpError::MissingInput("slot 2 component 1".into()))
    );
}

#[test]
fn loops_phis_arrays_and_relative_access() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/loop_array.lir"
    ))
    .unwrap();
    let arena = lathe_ir::Bump::new();
    let shader: Shader<GenericOp> = parse(&arena, &text).unwrap();
    let mut inv = Invocation::default();
    inv.inputs.insert((0, 0), 6); // reads element 6 & 3 = 2
    inv.inputs.insert((1, 0), 0.5f32.to_bits());
    inv.uniforms = vec![10, 20, 30, 40, 50];
    let out = interp::run(&shader, &inv, Limits::default()).unwrap();
    // acc: 0 -> 0.5 -> 0.75 -> 0.875 -> 0.9375; a0[2] = 0.875.
    assert_eq!(out.outputs[&(0, 1)], (Type::F32, 0.9375f32.to_bits()));
    // a0[2] * uniform[1 + 2] + acc = 0.875 * 40 + 0.9375
    assert_eq!(
        out.outputs[&(0, 0)],
        (Type::F32, 0.875f32.mul_add(40.0, 0.9375).to_bits())
    );
}

#[test]
fn step_limit_stops_endless_loops() {
    let r = {
        let arena = lathe_ir::Bump::new();
        let shader: Shader<GenericOp> =
            parse(&arena, "shader compute\nb0:\n  jump b1\nb1:\n  jump b1\n").unwrap();
        interp::run(
            &shader,
            &Invocation::default(),
            Limits {
                max_steps: 1000,
                ..Limits::default()
            },
        )
    };
    assert_eq!(r, Err(InterpError::StepLimit(1000)));
}

#[test]
fn texture_sample_ubo_and_discard() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/texture_discard.lir"
    ))
    .unwrap();
    let arena = lathe_ir::Bump::new();
    let shader: Shader<GenericOp> = parse(&arena, &text).unwrap();
    let texels = vec![
        [0.25, 0.0, 0.0, 1.0],
        [0.75, 0.0, 0.0, 0.0],
        [2.0, 0.0, 0.0, 1.0],
        [3.0, 0.0, 0.0, 1.0],
    ];
    let mut inv = Invocation {
        textures: vec![Texture::rgba_2d(2, 2, texels)],
        ubos: vec![vec![0, 0, 0, 0, 1.0f32.to_bits()]],
        ..Invocation::default()
    };
    let at = |inv: &mut Invocation, u: f32, v: f32| {
        inv.inputs.insert((0, 0), u.to_bits());
        inv.inputs.insert((0, 1), v.to_bits());
    };
    // Texel (0,0): alpha 1 keeps the fragment; max(0.25, ubo[16 bytes] = 1.0).
    at(&mut inv, 0.1, 0.1);
    let group = [inv.clone(), {
        let mut other = inv.clone();
        at(&mut other, 0.9, 0.1); // texel (1,0): alpha 0 -> discarded
        other
    }];
    let results = interp::run_group(&shader, &group, Limits::default());
    let first = results[0].as_ref().unwrap();
    assert!(!first.discarded);
    assert_eq!(first.outputs[&(0, 0)], (Type::F32, 1.0f32.to_bits()));
    assert_eq!(first.outputs[&(0, 1)], (Type::F16, 0xb400)); // -0.25 as f16
    let second = results[1].as_ref().unwrap();
    assert!(second.discarded && second.outputs.is_empty());
    // Clamp to edge far outside [0, 1], UB only for NaN.
    at(&mut inv, 7.0, 5.0);
    let clamped = interp::run(&shader, &inv, Limits::default()).unwrap();
    assert_eq!(clamped.outputs[&(0, 0)], (Type::F32, 3.0f32.to_bits())); // texel (1,1)
    at(&mut inv, -7.0, -5.0);
    let clamped = interp::run(&shader, &inv, Limits::default()).unwrap();
    assert_eq!(clamped.outputs[&(0, 0)], (Type::F32, 1.0f32.to_bits())); // texel (0,0): max(0.25, 1.0)
    at(&mut inv, f32::NAN, 0.0);
    assert_ub(
        interp::run(&shader, &inv, Limits::default()),
        "NaN texture coordinate",
    );
}

#[test]
fn builder_and_interpreter_agree_on_a_hand_written_shader() {
    let arena = lathe_ir::Bump::new();
    let mut shader: Shader<GenericOp> = Shader::new(&arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let x = b.load_input(0, 0, Interp::SMOOTH, Type::F16);
    let y = b.const_f16(0.1);
    let s = b.fadd(x, y);
    let wide = b.cvt(s, Type::F32);
    b.store_output(0, 0, wide);
    b.ret();
    lathe_ir::validate(&shader).unwrap();
    let mut inv = Invocation::default();
    inv.inputs.insert((0, 0), f16::from_f32(1.0) as u32);
    let out = interp::run(&shader, &inv, Limits::default()).unwrap();
    let expect = f16::to_f32(f16::from_f64(1.0 + f16::to_f64(f16::from_f32(0.1))));
    assert_eq!(out.outputs[&(0, 0)], (Type::F32, expect.to_bits()));
}

#[test]
fn signed_division_truncates_and_reports_its_undefined_cases() {
    assert_eq!(
        eval("i32", "idiv", &[("i32", "-7"), ("i32", "2")]),
        Ok((-3i32) as u32)
    );
    assert_eq!(
        eval("i32", "irem", &[("i32", "-7"), ("i32", "2")]),
        Ok((-1i32) as u32)
    );
    assert_eq!(
        eval("i16", "idiv", &[("i16", "-32768"), ("i16", "2")]),
        Ok(0xc000)
    );
    assert_ub(
        eval("i32", "idiv", &[("i32", "5"), ("i32", "0")]),
        "division by zero",
    );
    assert_ub(
        eval("i16", "irem", &[("i16", "5"), ("i16", "0")]),
        "division by zero",
    );
    assert_ub(
        eval("i32", "idiv", &[("i32", "-2147483648"), ("i32", "-1")]),
        "signed overflow",
    );
    assert_ub(
        eval("i16", "irem", &[("i16", "-32768"), ("i16", "-1")]),
        "signed overflow",
    );
    // Addition, subtraction and multiplication wrap, as in GLSL.
    assert_eq!(
        eval("i16", "isub", &[("i16", "-32768"), ("i16", "1")]),
        Ok(0x7fff)
    );
    assert_eq!(
        eval("i32", "imul", &[("i32", "-2147483648"), ("i32", "-1")]),
        Ok(0x8000_0000)
    );
}

#[test]
fn shift_amounts_out_of_range_are_undefined() {
    // A negative signed amount is a huge shift, not a shift the other way.
    assert_ub(
        eval("i32", "shl", &[("i32", "1"), ("i32", "-1")]),
        "shift by 4294967295",
    );
    assert_ub(
        eval("i16", "ashr", &[("i16", "-8"), ("i16", "-1")]),
        "shift by 65535",
    );
    assert_ub(
        eval("u32", "shr", &[("u32", "8"), ("u32", "33")]),
        "shift by 33",
    );
    assert_eq!(
        eval("i16", "ashr", &[("i16", "-32768"), ("i16", "15")]),
        Ok(0xffff)
    );
    assert_eq!(
        eval("i16", "shl", &[("i16", "1"), ("i16", "15")]),
        Ok(0x8000)
    );
}

#[test]
fn ieee_special_values_are_results_not_errors() {
    let inf = f32::INFINITY.to_bits();
    assert_eq!(eval("f32", "rcp", &[("f32", "0.0")]), Ok(inf));
    assert_eq!(
        eval("f32", "rcp", &[("f32", "-0.0")]),
        Ok(f32::NEG_INFINITY.to_bits())
    );
    assert!(f32::from_bits(eval("f32", "sqrt", &[("f32", "-1.0")]).unwrap()).is_nan());
    assert!(
        f32::from_bits(eval("f32", "fmul", &[("f32", "0.0"), ("f32", "0x7f800000")]).unwrap())
            .is_nan()
    );
    assert_eq!(
        eval(
            "f32",
            "fadd",
            &[("f32", "3.4028235e38"), ("f32", "3.4028235e38")]
        ),
        Ok(inf)
    );
    // The smallest subnormals add exactly.
    assert_eq!(
        eval("f32", "fadd", &[("f32", "1e-45"), ("f32", "1e-45")]),
        Ok(2)
    );
    assert_eq!(
        eval("f32", "fmul", &[("f32", "1e-45"), ("f32", "0.5")]),
        Ok(0)
    ); // tie to even
    assert_eq!(
        eval("f32", "fmul", &[("f32", "1e-45"), ("f32", "-0.75")]),
        Ok(0x8000_0001)
    );
    // binary16: subnormal products round once; 65504 + 16 is the tie that
    // overflows, 65504 + 15 is not.
    assert_eq!(
        eval("f16", "fmul", &[("f16", "0x0001"), ("f16", "0.5")]),
        Ok(0)
    );
    assert_eq!(
        eval("f16", "fmul", &[("f16", "0x0003"), ("f16", "0.5")]),
        Ok(2)
    );
    assert_eq!(
        eval("f16", "fadd", &[("f16", "0x0001"), ("f16", "0x03ff")]),
        Ok(0x0400)
    );
    assert_eq!(
        eval("f16", "fadd", &[("f16", "65504.0"), ("f16", "16.0")]),
        Ok(0x7c00)
    );
    assert_eq!(
        eval("f16", "fadd", &[("f16", "65504.0"), ("f16", "15.0")]),
        Ok(0x7bff)
    );
    assert_eq!(eval("f16", "rcp", &[("f16", "-0.0")]), Ok(0xfc00));
    assert_eq!(eval("f16", "sqrt", &[("f16", "0x0004")]), Ok(0x1000)); // sqrt(2^-22) = 2^-11, a normal
    // Narrowing keeps subnormals and rounds below half the smallest to zero.
    assert_eq!(eval("f16", "cvt", &[("f32", "3e-8")]), Ok(1));
    assert_eq!(eval("f16", "cvt", &[("f32", "2.9e-8")]), Ok(0));
    assert_eq!(eval("f16", "cvt", &[("f32", "-1e-30")]), Ok(0x8000));
    // NaN stays NaN through conversion, compares unordered, and min/max
    // prefer the number.
    let h = eval("f16", "cvt", &[("f32", "0x7fc00000")]).unwrap();
    assert!(h & 0x7c00 == 0x7c00 && h & 0x3ff != 0, "{h:#x}");
    assert_eq!(
        eval("bool", "feq", &[("f16", "0x7e00"), ("f16", "0x7e00")]),
        Ok(0)
    );
    assert_eq!(
        eval("f16", "fmax", &[("f16", "0x7e00"), ("f16", "-2.0")]),
        Ok(0xc000)
    );
    assert_eq!(
        eval("f16", "fmin", &[("f16", "-0.0"), ("f16", "0.0")]),
        Ok(0x8000)
    );
    // Infinities convert to integers as undefined behaviour.
    assert_ub(eval("i32", "cvt", &[("f32", "0xff800000")]), "out of range");
    assert_ub(eval("i16", "cvt", &[("f16", "0x7c00")]), "out of range");
}

#[test]
fn builder_loops_carry_values_through_phis() {
    // sum = 0; i = 0; while i < n { sum += i * 0.5; i += 1 }
    let arena = lathe_ir::Bump::new();
    let mut shader: Shader<GenericOp> = Shader::new(&arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let n = b.load_input(0, 0, Interp::FLAT, Type::I32);
    let zero = b.const_i32(0);
    let one = b.const_i32(1);
    let sum0 = b.const_f32(0.0);
    let half = b.const_f32(0.5);
    let [i, sum] = b.loop_while(
        [zero, sum0],
        |b, [i, _]| b.ilt(i, n),
        |b, [i, sum]| {
            let fi = b.cvt(i, Type::F32);
            let term = b.fmul(fi, half);
            [b.iadd(i, one), b.fadd(sum, term)]
        },
    );
    b.store_output(0, 0, sum);
    b.store_output(0, 1, i);
    b.ret();
    lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{e}\n{}", lathe_ir::print(&shader)));
    assert!(lathe_ir::print(&shader).contains("phi [%1, b0], [%"));
    for count in [0i32, 1, 5] {
        let mut inv = Invocation::default();
        inv.inputs.insert((0, 0), count as u32);
        let out = interp::run(&shader, &inv, Limits::default()).unwrap();
        let expected = (0..count).fold(0.0f32, |acc, k| acc + k as f32 * 0.5);
        assert_eq!(out.outputs[&(0, 0)], (Type::F32, expected.to_bits()));
        assert_eq!(out.outputs[&(0, 1)], (Type::I32, count as u32));
    }
}
