//! Storage-buffer words on ir3: the one-word loads of one structure
//! (offsets `base + 4k`) become `ldib`s of up to four words
//! (`lathe_passes::ssbo_vector_loads`), never across a buffer write; a
//! multiply by a power of two is a shift. The results verify
//! (interpreter against the simulator).

#[path = "support/verified.rs"]
mod verified;

use verified::compile_and_verify;

/// A vertex shader summing the sixteen words of the `mat4` at
/// `index * 64` of storage buffer 0 (the index a uniform), word by word
/// as a frontend emits them.
fn matrix_sum() -> String {
    let mut t = String::from(
        "shader vertex\nb0:\n  %0:u32 = const 0\n  %1:u32 = load_uniform index=0\n  %2:u32 = const 64\n  %3:u32 = imul %1, %2\n  %4:f32 = load_ssbo binding=0 %3\n",
    );
    let mut sum = 4;
    let mut next = 5;
    for k in 1..16 {
        t += &format!(
            "  %{next}:u32 = const {}\n  %{}:u32 = iadd %3, %{next}\n  %{}:f32 = load_ssbo binding=0 %{}\n  %{}:f32 = fadd %{sum}, %{}\n",
            4 * k,
            next + 1,
            next + 2,
            next + 1,
            next + 3,
            next + 2
        );
        sum = next + 3;
        next += 4;
    }
    t += &format!("  store_output slot=pos comp=0 %{sum}\n  ret\n");
    t
}

#[test]
fn a_matrix_in_a_storage_buffer_loads_with_four_ldibs_and_verifies() {
    for model in ["a630", "a740"] {
        let (asm, compared) = compile_and_verify(&matrix_sum(), model);
        assert_eq!(asm.matches("ldib.").count(), 4, "{model}:\n{asm}");
        assert_eq!(
            asm.matches("ldib.b.untyped.1d.u32.4.imm").count(),
            4,
            "{model}:\n{asm}"
        );
        // index * 64 is a shift, not a 32-bit multiply (mull.u + madsh).
        assert!(
            !asm.contains("mull.u") && !asm.contains("madsh"),
            "{model}:\n{asm}"
        );
        assert!(compared > 0, "{model}");
    }
}

/// Each invocation reads its word 0 of storage buffer 0, stores it to
/// its word 1, reads word 1 back (the read must see the store) and
/// stores the sum to word 0 (words `8 * id` and `8 * id + 4`: no
/// invocation touches another's).
const READ_STORE_READ: &str = "shader compute
b0:
  %0:u32 = load_sysval sv=global_invocation_id comp=0
  %1:u32 = const 8
  %2:u32 = imul %0, %1
  %3:u32 = const 4
  %4:u32 = iadd %2, %3
  %5:f32 = load_ssbo binding=0 %2
  store_ssbo binding=0 %4, %5
  %6:f32 = load_ssbo binding=0 %4
  %7:f32 = fadd %5, %6
  store_ssbo binding=0 %2, %7
  ret
";

#[test]
fn loads_on_either_side_of_a_store_stay_apart_and_verify() {
    for model in ["a630", "a740"] {
        let (asm, compared) = compile_and_verify(READ_STORE_READ, model);
        assert_eq!(
            asm.matches("ldib.b.untyped.1d.u32.1.imm").count(),
            2,
            "{model}:\n{asm}"
        );
        assert!(compared > 0, "{model}");
    }
}

/// Words 2 and 1 of storage buffer 0 (constant offsets), in that order,
/// with no write between.
const TWO_WORDS: &str = "shader fragment
b0:
  %0:u32 = const 4
  %1:u32 = const 8
  %2:f32 = load_ssbo binding=0 %1
  %3:f32 = load_ssbo binding=0 %0
  %4:f32 = fsub %2, %3
  store_output slot=0 comp=0 %4
  ret
";

#[test]
fn two_constant_words_load_with_one_ldib_and_verify() {
    for model in ["a630", "a740"] {
        let (asm, compared) = compile_and_verify(TWO_WORDS, model);
        assert_eq!(asm.matches("ldib.").count(), 1, "{model}:\n{asm}");
        assert!(
            asm.contains("ldib.b.untyped.1d.u32.2.imm"),
            "{model}:\n{asm}"
        );
        assert!(compared > 0, "{model}");
    }
}
