//! Each pass on hand-written inputs, with reviewed expected output, and the
//! pass manager's registry, dumps, timing and verification.

use lathe_ir::{GenericOp, Invocation, Limits, Op, Shader, Type, Value, interp, parse, print};
use lathe_passes::{Pass, PassError, PassFailure, Registry};

fn run_passes(names: &[&str], body: &str) -> String {
    let text = format!("shader fragment\n{body}");
    let arena = lathe_ir::Bump::new();
    let mut shader: Shader<GenericOp> = parse(&arena, &text).unwrap_or_else(|e| panic!("{e}"));
    let mut pm = Registry::standard().pipeline(names).unwrap();
    pm.verify = true;
    pm.run(&mut shader).unwrap_or_else(|e| panic!("{e}"));
    print(&shader)
        .trim_start_matches("shader fragment\n")
        .to_string()
}

#[test]
fn dce_removes_unused_values_and_unreachable_blocks() {
    let out = run_passes(
        &["dce"],
        "\
b0:
  %0:f32 = const 1.0
  %1:f32 = fadd %0, %0
  %2:i32 = cvt %1
  %3:bool = const true
  branch %3, b1, b2
b1:
  jump b3
b2:
  jump b3
b3:
  %4:f32 = phi [%0, b1], [%1, b2], [%1, b4]
  %5:f32 = phi [%1, b1], [%0, b2], [%0, b4]
  store_output slot=0 comp=0 %4
  ret
b4:
  jump b3
",
    );
    assert_eq!(
        out,
        "\
b0:
  %0:f32 = const 1.0
  %1:f32 = fadd %0, %0
  %2:bool = const true
  branch %2, b1, b2
b1:
  jump b3
b2:
  jump b3
b3:
  %3:f32 = phi [%0, b1], [%1, b2]
  store_output slot=0 comp=0 %3
  ret
"
    );
}

#[test]
fn dce_drops_phi_entries_of_removed_predecessors() {
    let out = run_passes(
        &["dce"],
        "\
b0:
  %0:f32 = const 1.0
  jump b2
b1:
  %1:f32 = const 2.0
  jump b2
b2:
  %2:f32 = phi [%0, b0], [%1, b1]
  store_output slot=0 comp=0 %2
  ret
",
    );
    assert_eq!(
        out,
        "b0:\n  %0:f32 = const 1.0\n  jump b1\nb1:\n  %1:f32 = phi [%0, b0]\n  store_output slot=0 comp=0 %1\n  ret\n"
    );
}

#[test]
fn dce_keeps_side_effects_and_loop_carried_values() {
    let body = "\
array a0: f32[2]
b0:
  %0:f32 = const 1.0
  array_store array=a0 offset=0 %0
  %1:i32 = const 0
  jump b1
b1:
  %2:i32 = phi [%1, b0], [%3, b1]
  %3:i32 = iadd %2, %2
  %4:bool = ilt %3, %1
  branch %4, b1, b2
b2:
  discard
  ret
";
    assert_eq!(run_passes(&["dce"], body), body);
}

#[test]
fn copy_prop_removes_only_plain_same_type_movs() {
    let out = run_passes(
        &["copy-prop"],
        "\
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = mov %0
  %2:f32 = mov %1
  %3:f32 = mov neg %2
  %4:u32 = mov %2
  %5:f32 = fadd %2, %3
  store_output slot=0 comp=0 %5
  store_output slot=0 comp=1 %4
  ret
",
    );
    assert_eq!(
        out,
        "\
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = mov neg %0
  %2:u32 = mov %0
  %3:f32 = fadd %0, %1
  store_output slot=0 comp=0 %3
  store_output slot=0 comp=1 %2
  ret
"
    );
}

#[test]
fn copy_prop_rewrites_phi_and_address_operands() {
    let out = run_passes(
        &["copy-prop"],
        "\
array a0: f32[4]
b0:
  %0:i32 = load_input slot=0 comp=0 interp=flat
  %1:i32 = mov %0
  %2:f32 = array_load array=a0 offset=0 addr=%1
  jump b1
b1:
  %3:i32 = phi [%1, b0]
  store_output slot=0 comp=0 %3
  store_output slot=0 comp=1 %2
  ret
",
    );
    assert!(
        out.contains("addr=%0") && out.contains("phi [%0, b0]") && !out.contains("mov"),
        "{out}"
    );
}

const DIAMOND: &str = "\
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = const 0.0
  %2:bool = flt %0, %1
  branch %2, b1, b2
b1:
  %3:f32 = mov neg %0
  jump b3
b2:
  %4:f32 = fmul %0, %0
  jump b3
b3:
  %5:f32 = phi [%3, b1], [%4, b2]
  %6:f32 = phi [%0, b1], [%1, b2]
  store_output slot=0 comp=0 %5
  store_output slot=0 comp=1 %6
  ret
";

#[test]
fn flatten_turns_a_diamond_into_selects() {
    assert_eq!(
        run_passes(&["flatten"], DIAMOND),
        "\
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = const 0.0
  %2:bool = flt %0, %1
  %3:f32 = mov neg %0
  %4:f32 = fmul %0, %0
  %5:f32 = sel %2, %3, %4
  %6:f32 = sel %2, %0, %1
  store_output slot=0 comp=0 %5
  store_output slot=0 comp=1 %6
  ret
"
    );
}

#[test]
fn flatten_handles_triangles_on_either_side() {
    for (branch, phi, sel) in [
        (
            "branch %2, b1, b2",
            "phi [%3, b1], [%1, b0]",
            "sel %2, %3, %1",
        ),
        (
            "branch %2, b2, b1",
            "phi [%3, b1], [%1, b0]",
            "sel %2, %1, %3",
        ),
    ] {
        let out = run_passes(
            &["flatten"],
            &format!(
                "b0:\n  %0:f32 = load_input slot=0 comp=0 interp=smooth\n  %1:f32 = const 0.0\n  %2:bool = flt %0, %1\n  {branch}\nb1:\n  %3:f32 = fadd %0, %0\n  jump b2\nb2:\n  %4:f32 = {phi}\n  store_output slot=0 comp=0 %4\n  ret\n"
            ),
        );
        assert!(
            out.starts_with("b0:") && !out.contains("b1") && out.contains(sel),
            "{out}"
        );
    }
}

#[test]
fn flatten_leaves_side_effects_and_possible_ub_in_branches() {
    for risky in [
        "store_output slot=1 comp=0 %0",
        "discard",
        "%9:i32 = cvt %0",
        "%9:u32 = const 0\n  %8:u32 = udiv %9, %9",
        "%9:f32 = load_uniform index=0",
        "barrier",
        "%9:i32 = const 0\n  %8:i32 = idiv %9, %9",
        "%9:i32 = const 40\n  %8:i32 = shl %9, %9",
        "%9:u32 = const 4\n  %8:u32 = load_ubo binding=0 %9",
    ] {
        let body = DIAMOND.replace(
            "  %3:f32 = mov neg %0\n",
            &format!("  {risky}\n  %3:f32 = mov neg %0\n"),
        );
        let out = run_passes(&["flatten"], &body);
        assert!(
            out.contains("branch %2"),
            "flattened across `{risky}`:\n{out}"
        );
    }
}

#[test]
fn flatten_handles_nested_and_chained_diamonds_and_skips_loops() {
    let nested = "\
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = const 0.0
  %2:bool = flt %0, %1
  branch %2, b1, b5
b1:
  %3:bool = fge %0, %0
  branch %3, b2, b3
b2:
  %4:f32 = fadd %0, %0
  jump b4
b3:
  jump b4
b4:
  %5:f32 = phi [%4, b2], [%1, b3]
  jump b6
b5:
  jump b6
b6:
  %6:f32 = phi [%5, b4], [%0, b5]
  branch %2, b7, b8
b7:
  jump b9
b8:
  jump b9
b9:
  %7:f32 = phi [%6, b7], [%1, b8]
  store_output slot=0 comp=0 %7
  ret
";
    let out = run_passes(&["flatten"], nested);
    assert_eq!(
        out.matches(':').count() - out.matches(":f32").count() - out.matches(":bool").count(),
        1,
        "{out}"
    );
    assert_eq!(out.matches("sel").count(), 3, "{out}");

    let looped = "\
b0:
  %0:i32 = const 0
  jump b1
b1:
  %1:i32 = phi [%0, b0], [%3, b2]
  %2:bool = ilt %1, %0
  branch %2, b2, b3
b2:
  %3:i32 = iadd %1, %1
  jump b1
b3:
  ret
";
    assert_eq!(run_passes(&["flatten"], looped), looped);
}

#[test]
fn registry_rejects_unknown_passes_and_lists_valid_ones() {
    let err = Registry::<GenericOp>::standard()
        .pipeline(&["dce", "gvn"])
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "unknown pass `gvn` (valid passes: dce, copy-prop, merge-blocks, flatten)"
    );
}

#[test]
fn manager_dumps_and_times_each_pass() {
    let arena = lathe_ir::Bump::new();
    let mut shader: Shader<GenericOp> =
        parse(&arena, &format!("shader fragment\n{DIAMOND}")).unwrap();
    let mut pm = Registry::standard().pipeline(&["flatten", "dce"]).unwrap();
    pm.print_after_all = true;
    let records = pm.run(&mut shader).unwrap();
    assert_eq!(
        records.iter().map(|r| r.name).collect::<Vec<_>>(),
        ["flatten", "dce"]
    );
    assert!(records[0].changed && !records[1].changed);
    assert_eq!(records[1].dump.as_deref(), Some(print(&shader).as_str()));
    assert!(
        records[0]
            .dump
            .as_deref()
            .is_some_and(|d| d.contains("sel"))
    );
    let report = lathe_passes::timing_report(&records);
    assert!(
        report.lines().count() == 4 && report.contains("flatten") && report.contains("total"),
        "{report}"
    );
}

/// A deliberately broken pass: points every phi at a value that does not
/// dominate it.
struct Breaker;

impl Pass<GenericOp> for Breaker {
    fn name(&self) -> &'static str {
        "breaker"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        let last = Value(shader.value_capacity() as u32 - 1);
        let phis: Vec<_> = shader
            .insts_in_order()
            .filter(|&(_, i)| shader.inst(i).op == Op::Phi)
            .collect();
        for (_, i) in phis {
            shader.inst_mut(i).args[0] = last;
        }
        Ok(true)
    }
}

#[test]
fn manager_validates_after_every_pass() {
    let arena = lathe_ir::Bump::new();
    let mut shader: Shader<GenericOp> =
        parse(&arena, &format!("shader fragment\n{DIAMOND}")).unwrap();
    let mut registry = Registry::standard();
    registry.register("breaker", "breaks SSA", || Box::new(Breaker));
    let mut pm = registry.pipeline(&["dce", "breaker"]).unwrap();
    pm.verify = true;
    match pm.run(&mut shader) {
        Err(PassError::InvalidOutput { pass, error, .. }) => {
            assert_eq!(pass, "breaker");
            assert!(error.to_string().contains("does not dominate"), "{error}");
        }
        other => panic!("expected a validation failure, got {other:?}"),
    }
}

#[test]
fn a_failing_pass_stops_the_pipeline_with_its_typed_error() {
    use lathe_passes::ra::RaError;
    use lathe_passes::target::test_target::TestTarget;
    let arena = lathe_ir::Bump::new();
    // A four-lane group of 32-bit values needs 8 units; the file has 4.
    let mut shader: Shader<GenericOp> = parse(
        &arena,
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32x4 = collect %0, %0, %0, %0
  %2:f32 = split lane=3 %1
  store_output slot=0 comp=0 %2
  ret
",
    )
    .unwrap();
    let registry = Registry::with_target(std::rc::Rc::new(TestTarget::small(2)));
    let mut pm = registry.pipeline(&["ra", "dce"]).unwrap();
    match pm.run(&mut shader) {
        Err(PassError::Failed {
            pass: "ra",
            error: PassFailure::Ra(RaError::Unsupported(why)),
        }) => assert!(why.contains("more than the 4 units of file r"), "{why}"),
        other => panic!("expected the allocator's error, got {other:?}"),
    }
}

#[test]
fn flatten_collapses_deep_nesting_in_one_pass_and_keeps_behaviour() {
    let arena = lathe_ir::Bump::new();
    // 250 diamonds, each nested in the then-side of the one above.
    let original = lathe_ir::synthetic::nested_shader(&arena, 2000);
    let depth = original.len() / lathe_ir::synthetic::LEVEL_INSTS;
    let text = print(&original);
    let mut flat: Shader<GenericOp> = parse(&arena, &text).unwrap();
    let mut pm = Registry::standard().pipeline(&["flatten"]).unwrap();
    pm.verify = true;
    assert!(pm.run(&mut flat).unwrap()[0].changed);
    let out = print(&flat);
    assert_eq!(flat.layout().len(), 1, "{out}");
    assert!(!out.contains("phi") && !out.contains("branch"), "{out}");
    assert_eq!(out.matches(" sel ").count(), depth, "{out}");
    // Inputs that leave the nest at different depths agree before and after.
    for x in [-3.0f32, 0.25, 0.9, 1.0, 7.5, f32::NAN] {
        let mut inv = Invocation::default();
        inv.inputs.insert((0, 0), x.to_bits());
        let before = interp::run(&original, &inv, Limits::default()).unwrap();
        let after = interp::run(&flat, &inv, Limits::default()).unwrap();
        assert_eq!(before, after, "input {x}");
        assert_eq!(after.outputs[&(0, 0)].0, Type::F32);
    }
}

#[test]
fn flatten_merges_a_loop_body_diamond_into_its_header() {
    // The diamond's head is a loop header and its join the latch: the
    // header absorbs both, and its phi now takes the back edge from itself.
    let out = run_passes(
        &["flatten"],
        "\
b0:
  %0:i32 = load_input slot=0 comp=0 interp=flat
  %1:i32 = const 1
  jump b1
b1:
  %2:i32 = phi [%0, b0], [%6, b4]
  %3:bool = ilt %2, %1
  branch %3, b2, b3
b2:
  %4:i32 = iadd %2, %1
  jump b4
b3:
  %5:i32 = isub %2, %1
  jump b4
b4:
  %6:i32 = phi [%4, b2], [%5, b3]
  %7:bool = ige %6, %1
  branch %7, b1, b5
b5:
  store_output slot=0 comp=0 %6
  ret
",
    );
    assert_eq!(
        out,
        "\
b0:
  %0:i32 = load_input slot=0 comp=0 interp=flat
  %1:i32 = const 1
  jump b1
b1:
  %2:i32 = phi [%0, b0], [%6, b1]
  %3:bool = ilt %2, %1
  %4:i32 = iadd %2, %1
  %5:i32 = isub %2, %1
  %6:i32 = sel %3, %4, %5
  %7:bool = ige %6, %1
  branch %7, b1, b2
b2:
  store_output slot=0 comp=0 %6
  ret
"
    );
}

#[test]
fn verification_runs_by_default_in_debug_builds() {
    let arena = lathe_ir::Bump::new();
    let mut shader: Shader<GenericOp> =
        parse(&arena, &format!("shader fragment\n{DIAMOND}")).unwrap();
    let mut registry = Registry::standard();
    registry.register("breaker", "breaks SSA", || Box::new(Breaker));
    // No `verify = true` here: the default must catch the broken pass.
    let mut pm = registry.pipeline(&["breaker"]).unwrap();
    assert_eq!(pm.verify, cfg!(debug_assertions));
    let result = pm.run(&mut shader);
    if cfg!(debug_assertions) {
        assert!(
            matches!(
                result,
                Err(PassError::InvalidOutput {
                    pass: "breaker",
                    ..
                })
            ),
            "{result:?}"
        );
    }
}
