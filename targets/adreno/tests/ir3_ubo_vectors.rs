//! UBO arrays indexed at run time on ir3: an element's offset is
//! `index * stride + field`, and a stride that is a multiple of 16 makes
//! each field's word in its vec4 known (`lathe_passes::ubo_vectors`), so
//! one `ldc` reads it, with no selection among the vec4's words; the
//! result still verifies (interpreter against the simulator).

#[path = "support/verified.rs"]
mod verified;

use verified::compile_and_verify;

/// A vertex shader reading the `mat4` at `index * stride` of UBO 1 (the
/// index a uniform, as a push-constant cascade index is) and writing
/// its diagonal and one more word.
fn matrix_at(stride: u32) -> String {
    let mut t = format!(
        "shader vertex\nb0:\n  %0:u32 = load_uniform index=0\n  %1:u32 = const {stride}\n  %2:u32 = imul %0, %1\n"
    );
    for (k, field) in [0u32, 20, 40, 60, 36].iter().enumerate() {
        let c = 10 + 3 * k;
        t += &format!(
            "  %{c}:u32 = const {field}\n  %{}:u32 = iadd %2, %{c}\n  %{}:f32 = load_ubo binding=1 %{}\n",
            c + 1,
            c + 2,
            c + 1
        );
    }
    for k in 0..4 {
        t += &format!("  store_output slot=pos comp={k} %{}\n", 12 + 3 * k);
    }
    t += "  store_output slot=0 comp=0 %24\n  ret\n";
    t
}

#[test]
fn a_matrix_array_reads_each_vec4_with_one_ldc() {
    for model in ["a630", "a740"] {
        let (asm, compared) = compile_and_verify(&matrix_at(64), model);
        assert_eq!(asm.matches("ldc.").count(), 4, "{model}:\n{asm}");
        assert!(!asm.contains("sel."), "{model}:\n{asm}");
        // Fields 36 and 40 are words 1 and 2 of vec4 2 of the element:
        // one ldc of two words from word 1.
        assert!(asm.contains("ldc.offset1.2."), "{model}:\n{asm}");
        // The UBO index is the ldc's immediate, moved into no register.
        assert_eq!(asm.matches(".imm ").count(), 4, "{model}:\n{asm}");
        assert!(
            !asm.lines().any(|l| l.contains("mov") && l.ends_with(", 1")),
            "{model}:\n{asm}"
        );
        assert!(compared > 0, "{model}");
    }
}

#[test]
fn a_stride_of_eight_selects_the_word_at_run_time_and_verifies() {
    for model in ["a630", "a740"] {
        let (asm, compared) = compile_and_verify(&matrix_at(8), model);
        assert!(asm.contains("sel."), "{model}:\n{asm}");
        assert!(compared > 0, "{model}");
    }
}

/// A vertex shader writing the `vec4` at `index * 16` of UBO 1 and the
/// first word of the next one, as floats.
const VEC4_AT_INDEX: &str = "shader vertex
b0:
  %0:u32 = load_uniform index=0
  %1:u32 = const 16
  %2:u32 = imul %0, %1
  %3:u32 = const 4
  %4:u32 = iadd %2, %3
  %5:u32 = const 8
  %6:u32 = iadd %2, %5
  %7:u32 = const 12
  %8:u32 = iadd %2, %7
  %9:u32 = const 16
  %10:u32 = iadd %2, %9
  %11:f32 = load_ubo binding=1 %2
  %12:f32 = load_ubo binding=1 %4
  %13:f32 = load_ubo binding=1 %6
  %14:f32 = load_ubo binding=1 %8
  %15:f32 = load_ubo binding=1 %10
  store_output slot=pos comp=0 %14
  store_output slot=pos comp=1 %13
  store_output slot=pos comp=2 %12
  store_output slot=pos comp=3 %11
  store_output slot=0 comp=0 %15
  ret
";

#[test]
fn the_four_words_of_a_vec4_load_with_one_ldc_and_verify() {
    for model in ["a630", "a740"] {
        let (asm, compared) = compile_and_verify(VEC4_AT_INDEX, model);
        assert!(asm.contains("ldc.offset0.4.imm"), "{model}:\n{asm}");
        assert!(asm.contains("ldc.offset0.1.imm"), "{model}:\n{asm}");
        assert_eq!(asm.matches("ldc.").count(), 2, "{model}:\n{asm}");
        assert!(compared >= 5, "{model}");
    }
}
