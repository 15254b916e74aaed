//! Vertex outputs through IDVS (`abi::vertex`): the position shader
//! stores the position and point size, the varying shader the varyings,
//! at the addresses `LEA_BUF_IMM` gives; the verifier reads them back
//! from the simulator's memory, so a store to the wrong slot or
//! component fails it.

use std::rc::Rc;

use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, VerifyError, verify};
use lathe_mali::valhall::compile::{CompileOptions, Output, compile_with};
use lathe_mali::valhall::verify::ValhallProgram;
use lathe_mali::valhall::{MaliModel, assemble, target::ValhallTarget};

/// Position (from an attribute), point size, a full varying, a varying
/// with a gap (components 0 and 2) and a built-in varying (`col0`).
const SHADER: &str = "shader vertex
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32 = load_input slot=1 comp=0 interp=smooth
  %3:f32 = fmul %0, %1
  %4:f32 = fadd %0, %2
  %5:f32 = fmul %2, %2
  %6:i32 = load_input slot=2 comp=0 interp=smooth
  store_output slot=pos comp=0 %0
  store_output slot=pos comp=1 %1
  store_output slot=pos comp=2 %3
  store_output slot=pos comp=3 %4
  store_output slot=psiz comp=0 %5
  store_output slot=0 comp=0 %3
  store_output slot=0 comp=1 %4
  store_output slot=0 comp=2 %5
  store_output slot=0 comp=3 %2
  store_output slot=3 comp=0 %6
  store_output slot=3 comp=2 %5
  store_output slot=col0 comp=0 %4
  ret
";

fn compile(text: &str, model: &str) -> Output {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let target = Rc::new(ValhallTarget::new(model.parse::<MaliModel>().unwrap()));
    compile_with(&shader, &target, &CompileOptions::default()).unwrap()
}

fn check(text: &str, out: &Output) -> Result<usize, VerifyError> {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    verify(&shader, &ValhallProgram::new(out), &Options::default()).map(|r| r.compared)
}

#[test]
fn outputs_are_stored_by_two_idvs_shaders_and_verify() {
    for model in ["g57", "g610"] {
        let out = compile(SHADER, model);
        let compared = check(SHADER, &out).unwrap_or_else(|e| {
            panic!("{model}: {e}\n{}", out.compiled.listing());
        });
        // 4 + 1 + 4 + 2 + 1 components × 4 threads.
        assert_eq!(compared, 12 * 4, "{model}");
        let position = out.compiled.listing();
        let varying = out
            .varying
            .as_ref()
            .expect("a varying shader")
            .compiled
            .listing();
        for asm in [&position, &varying] {
            assert!(asm.contains(", r59, table:0xD, index:0x0"), "{asm}");
        }
        assert!(position.contains("STORE.i128.istream"), "{position}");
        assert!(position.contains("STORE.i16.istream"), "{position}");
        assert!(!position.contains(".estream"), "{position}");
        // col0 is the only built-in varying: offset 0; location n at
        // 16 * (1 + n); location 3's gap splits it in two stores.
        for store in [
            "STORE.i32.estream",
            "offset:0",
            "STORE.i128.estream",
            "offset:16",
            "offset:64",
            "offset:72",
        ] {
            assert!(varying.contains(store), "{store}: {varying}");
        }
        assert!(!varying.contains(".istream"), "{varying}");
        let layout: Vec<(u16, u32)> = out.io.varyings.iter().map(|(&s, &o)| (s, o)).collect();
        assert_eq!(layout, [(lathe_ir::slot::COL0, 0), (0, 16), (3, 64)]);
        // One statistics line per variant, as Mesa prints them.
        assert!(
            out.compiled
                .stats
                .to_string()
                .starts_with("position shader: ")
        );
        let v = out.varying.as_ref().unwrap();
        assert!(v.compiled.stats.to_string().starts_with("varying shader: "));
        assert_eq!(
            out.stats().instrs,
            out.compiled.stats.instrs + v.compiled.stats.instrs
        );
    }
}

/// `out` with the first line of `program` that contains `what` changed
/// by `edit` and assembled again.
fn patched(program: &mut Output, what: &str, edit: impl Fn(&str) -> String) {
    let arch = program.compiled.model.arch();
    let k = program
        .compiled
        .disassembly
        .iter()
        .position(|l| l.contains(what))
        .unwrap_or_else(|| panic!("no `{what}` in\n{}", program.compiled.listing()));
    let line = edit(&program.compiled.disassembly[k]);
    program.compiled.words[k] = assemble(&line, arch).unwrap();
    program.compiled.disassembly[k] = line;
}

/// `offset:N` of a store line moved by `by` bytes.
fn moved(line: &str, by: u32) -> String {
    let (head, tail) = line.split_once("offset:").unwrap();
    let n: u32 = tail.parse().unwrap();
    format!("{head}offset:{}", n + by)
}

#[test]
fn a_store_to_the_wrong_slot_or_component_fails_verification() {
    // A varying stored one slot (16 bytes) or one component (4 bytes)
    // off, and the position one component off.
    let cases: [(bool, &str, u32); 3] = [
        (true, "STORE.i128.estream", 16),
        (true, "STORE.i128.estream", 4),
        (false, "STORE.i128.istream", 4),
    ];
    for (in_varying, what, by) in cases {
        let mut out = compile(SHADER, "g610");
        check(SHADER, &out).expect("the compiled pair verifies");
        let program = if in_varying {
            out.varying.as_deref_mut().unwrap()
        } else {
            &mut out
        };
        patched(program, what, |l| moved(l, by));
        let got = check(SHADER, &out);
        assert!(
            matches!(got, Err(VerifyError::Mismatch { .. })),
            "{what} moved by {by}: {got:?}"
        );
    }
}

#[test]
fn a_vertex_shader_without_varyings_is_one_position_shader() {
    let text = "shader vertex
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = fmul %0, %0
  store_output slot=pos comp=0 %0
  store_output slot=pos comp=1 %1
  store_output slot=pos comp=2 %1
  store_output slot=pos comp=3 %0
  ret
";
    let out = compile(text, "g610");
    assert!(out.varying.is_none());
    assert!(out.io.varyings.is_empty());
    assert_eq!(check(text, &out).unwrap(), 16);
}

#[test]
fn outputs_the_idvs_path_does_not_carry_are_unsupported() {
    let text = "shader vertex
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  store_output slot=pos comp=0 %0
  store_output slot=layer comp=0 %0
  ret
";
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let target = Rc::new(ValhallTarget::new("g610".parse::<MaliModel>().unwrap()));
    let err = compile_with(&shader, &target, &CompileOptions::default()).unwrap_err();
    assert!(
        err.to_string().starts_with("unsupported: vertex output"),
        "{err}"
    );
}
