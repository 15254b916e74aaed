//! Arrays on ir3: short ones promoted to SSA values before selection
//! (`lathe_passes::promote_arrays`), long ones in private memory
//! (`lathe_passes::private_arrays`, `ldp`/`stp`), compiled whole and
//! checked by the
//! verifier (interpreter against the simulator, with hazards) on random
//! programs that store and load at computed indices in branches and
//! loops, and on a vertex shader indexing a constant table by its vertex
//! index; a longer table becomes constant data read with `ldc`
//! (`lathe_passes::constant_data`). `IR3_ARRAY_PROGRAMS=N` runs N random programs (default 40).

use std::rc::Rc;

use lathe_adreno::ir3::compile::{CompileOptions, compile_with};
use lathe_adreno::ir3::verify::Ir3Program;
use lathe_adreno::ir3::{GpuModel, target::Ir3Target};
use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, VerifyError, verify};
use lathe_passes::fuzzing::arrays;

fn compile_and_verify(text: &str, model: &str, options: &Options) -> Result<usize, VerifyError> {
    compile_and_verify_with(text, model, options, |_| {})
}

/// [`compile_and_verify`], showing the compiled shader to `check` first.
fn compile_and_verify_with(
    text: &str,
    model: &str,
    options: &Options,
    check: impl FnOnce(&lathe_adreno::ir3::compile::Output),
) -> Result<usize, VerifyError> {
    let arena = lathe_ir::Bump::new();
    let generic =
        lathe_ir::parse::<GenericOp>(&arena, text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    lathe_ir::validate(&generic).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let gpu = model.parse::<GpuModel>().unwrap();
    let target = Rc::new(Ir3Target::new(gpu).unwrap());
    let out = compile_with(&generic, &target, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("{model}: {e}\n{text}"));
    check(&out);
    let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
    verify(&generic, &program, options).map(|r| r.compared)
}

#[test]
fn random_programs_with_computed_indices_verify() {
    let programs: u64 = std::env::var("IR3_ARRAY_PROGRAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(40);
    arrays::check_random_programs(programs, &["a630", "a740"], compile_and_verify);
}

/// The fourth of four vertex threads reads past the table (undefined);
/// the three others are compared.
#[test]
fn a_constant_table_indexed_by_the_vertex_index() {
    for model in ["a630", "a740"] {
        assert_eq!(
            compile_and_verify(arrays::VERTEX_INDEXED_TABLE, model, &Options::default()),
            Ok(3)
        );
    }
}

/// A 100-word array indexed at run time stays in private memory: the
/// program stores and loads it with `stp`/`ldp`, the interface asks for
/// its 400 bytes (spills would follow them), and every thread's result
/// matches the interpreter's.
#[test]
fn a_long_array_lives_in_private_memory() {
    for model in ["a630", "a740"] {
        let arena = lathe_ir::Bump::new();
        let generic = lathe_ir::parse::<GenericOp>(&arena, arrays::PRIVATE_ARRAY).unwrap();
        let gpu = model.parse::<GpuModel>().unwrap();
        let target = Rc::new(Ir3Target::new(gpu).unwrap());
        let out = compile_with(&generic, &target, &CompileOptions::default()).unwrap();
        let asm = &out.compiled.asm;
        assert!(
            asm.contains("stp.u32 p[") && asm.contains("ldp.u32 "),
            "{asm}"
        );
        assert!(
            out.compiled.interface.private_bytes >= 400,
            "{:?}",
            out.compiled.interface
        );
        assert!(
            out.compiled.stats.stp >= 3 && out.compiled.stats.ldp >= 5,
            "{}",
            out.compiled.stats
        );
        let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
        let compared = verify(&generic, &program, &Options::default())
            .unwrap()
            .compared;
        assert!(compared >= 4 * 4, "{model}: {compared} compared");
    }
}

/// Six elements read at a computed index: constant data (each element in
/// a vec4 of its own), one `ldc` per load and no compare-and-select chain;
/// the three threads inside the table are compared.
#[test]
fn a_longer_constant_table_is_constant_data() {
    for model in ["a630", "a740"] {
        let compared = compile_and_verify_with(
            arrays::VERTEX_INDEXED_VEC2_TABLE,
            model,
            &Options::default(),
            |out| {
                let data = out.compiled.interface.consts.constant_data.as_ref();
                let data = data.unwrap_or_else(|| panic!("{model}: no constant data"));
                let words: Vec<u32> = data.words.iter().step_by(4).copied().collect();
                let half = 0.5f32.to_bits();
                let minus = (-0.5f32).to_bits();
                assert_eq!(words, [0, half, minus, minus, half, minus], "{model}");
                let asm = &out.compiled.asm;
                assert_eq!(asm.matches("ldc.offset0.").count(), 2, "{model}:\n{asm}");
                assert!(!asm.contains("sel."), "{model}:\n{asm}");
            },
        );
        assert_eq!(compared, Ok(6), "{model}");
    }
}

/// A kernel's weights stored to a short array: promoted before the const
/// file takes the float constants, so the zero weight's product and the
/// sum with it fold away (one `mul.f` left, no `add.f`, no `mad`).
#[test]
fn zero_weights_of_a_promoted_array_fold_away() {
    let text = "shader fragment\narray a0: f32[2]\nb0:\n  %0:f32 = load_input slot=0 comp=0 interp=flat\n  %1:f32 = load_input slot=0 comp=1 interp=flat\n  %2:f32 = const 0.0\n  %3:f32 = const 3.0\n  array_store array=a0 offset=0 %2\n  array_store array=a0 offset=1 %3\n  %4:f32 = array_load array=a0 offset=0\n  %5:f32 = array_load array=a0 offset=1\n  %6:f32 = fmul %0, %4\n  %7:f32 = fmul %1, %5\n  %8:f32 = fadd %6, %7\n  store_output slot=0 comp=0 %8\n  ret\n";
    for model in ["a630", "a740"] {
        let compared = compile_and_verify_with(text, model, &Options::default(), |out| {
            let asm = &out.compiled.asm;
            assert_eq!(asm.matches("mul.f").count(), 1, "{model}:\n{asm}");
            assert!(
                !asm.contains("add.f") && !asm.contains("mad."),
                "{model}:\n{asm}"
            );
        });
        assert!(compared.is_ok(), "{model}: {compared:?}");
    }
}
