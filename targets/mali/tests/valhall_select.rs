//! Instruction selection proven by execution: generic programs run in the
//! IR interpreter, and the same programs compiled for g57 (v9) and g610
//! (v10) by the whole Valhall backend (selection with
//! `targets/mali/rules/valhall.rules`, group/depth/sched, register
//! allocation, legalisation, emission) run as whole programs on the
//! generated Valhall simulator with its hazard detection on, over a quad
//! of threads with different inputs (so branches diverge). Exact
//! operations must give identical bits; approximated ones (the SFU and the
//! lowerings around it) agree within a tolerance and feed only outputs.
//!
//! Programs come from the random generator shared with ir3's test
//! (`lathe_passes::fuzzing::select`) and from hand-written cases; the
//! check itself is `lathe_mali::valhall::differential`, which the
//! `compile_valhall` fuzz target runs too.
//! `VALHALL_SELECT_PROGRAMS=N` runs N random programs (default 100).

use std::collections::HashMap;
use std::rc::Rc;

use lathe_ir::interp::Invocation;
use lathe_ir::{GenericOp, Shader};
use lathe_mali::valhall::compile::{CompileOptions, compile_with};
use lathe_mali::valhall::differential::{APPROX, Checked, Compare, differential as check};
use lathe_mali::valhall::{MaliModel, target::ValhallTarget};
use lathe_passes::fuzzing::select::{Vocabulary, random_program};

/// Threads run together.
const LANES: usize = 4;

/// The invocation of thread `lane`: `inv` with its inputs varied.
fn thread(inv: &Invocation, lane: usize) -> Invocation {
    let mut t = inv.clone();
    for (k, bits) in t.inputs.values_mut().enumerate() {
        if lane > 0 && (k + lane) % 2 == 0 {
            // Another value of the same type class: flip low bits only
            // (floats stay finite, 16-bit values stay 16-bit).
            *bits ^= (lane as u32) << 2;
        }
    }
    t
}

/// Runs `generic` in the interpreter and compiled for `model` on the
/// simulator, for [`LANES`] threads; `Err` names the first difference.
/// `Ok(false)` when some thread hits undefined behaviour.
fn differential(
    generic: &Shader<'_, GenericOp>,
    inv: &Invocation,
    model: &str,
) -> Result<bool, String> {
    let threads: Vec<Invocation> = (0..LANES).map(|l| thread(inv, l)).collect();
    let model = model.parse::<MaliModel>().unwrap();
    match check(generic, &threads, model, Compare::From(16))? {
        Checked::Ran => Ok(true),
        Checked::Undefined => Ok(false),
        Checked::Unsupported(m) => Err(m),
    }
}

#[test]
fn random_programs_agree_with_the_interpreter_on_g57_and_g610() {
    let programs: u64 = std::env::var("VALHALL_SELECT_PROGRAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(100);
    let mut compared = HashMap::new();
    for seed in 0..programs {
        let arena = lathe_ir::Bump::new();
        let (shader, inv) = random_program(
            &arena,
            0x2545_f491_4f6c_dd1d ^ (seed * 0x1000_0001),
            Vocabulary { approx: APPROX },
        );
        for model in ["g57", "g610"] {
            match differential(&shader, &inv, model) {
                Ok(true) => *compared.entry(model).or_insert(0) += 1,
                Ok(false) => {}
                Err(e) => panic!("seed {seed}: {e}\n{}", lathe_ir::print(&shader)),
            }
        }
    }
    eprintln!("compared {compared:?} of {programs} programs per model");
    assert!(
        compared.values().all(|&n| n * 2 >= programs),
        "{compared:?}"
    );
}

/// Checks one hand-written program on both models with its inputs.
fn run_case(text: &str, inputs: &[(u16, u32)]) {
    let inputs: Vec<(u16, u8, u32)> = inputs.iter().map(|&(s, b)| (s, 0, b)).collect();
    run_components(text, &inputs);
}

/// [`run_case`] with inputs by `(slot, component, bits)`.
fn run_components(text: &str, inputs: &[(u16, u8, u32)]) {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let mut inv = Invocation {
        uniforms: (0..8).map(|k| (k as f32 * 0.75 - 2.0).to_bits()).collect(),
        ..Invocation::default()
    };
    for &(slot, comp, bits) in inputs {
        inv.inputs.insert((slot, comp), bits);
    }
    for model in ["g57", "g610"] {
        assert_eq!(differential(&shader, &inv, model), Ok(true), "{text}");
    }
}

/// The g610 disassembly of `text`.
fn listing(text: &str) -> Vec<String> {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let target = Rc::new(ValhallTarget::new("g610".parse::<MaliModel>().unwrap()));
    let out = compile_with(&shader, &target, &CompileOptions::default()).unwrap();
    out.compiled.disassembly
}

/// A fragment shader reading three varyings (some components of a
/// smooth vec4, a 16-bit float, two flat integers) and blending two
/// render targets, one with a gap.
const FRAGMENT_IO: &str = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=1 interp=smooth
  %1:f32 = load_input slot=0 comp=3 interp=smooth
  %2:f16 = load_input slot=1 comp=0 interp=smooth
  %3:u32 = load_input slot=2 comp=0 interp=flat
  %4:u32 = load_input slot=2 comp=1 interp=flat
  %5:f32 = fmul %0, %1
  %6:f32 = cvt %2
  %7:f32 = fadd %5, %6
  %8:u32 = iadd %3, %4
  %9:f32 = cvt %8
  store_output slot=0 comp=0 %7
  store_output slot=0 comp=1 %9
  store_output slot=0 comp=2 %0
  store_output slot=0 comp=3 %1
  store_output slot=2 comp=0 %8
  store_output slot=2 comp=2 %3
  ret
";

#[test]
fn varyings_and_render_targets_travel_as_messages() {
    let f = |x: f32| x.to_bits();
    run_components(
        FRAGMENT_IO,
        &[
            (0, 1, f(1.5)),
            (0, 3, f(-0.25)),
            (1, 0, 0x3c00 | 0x155),
            (2, 0, 40),
            (2, 1, 0xffff_fff0),
        ],
    );
    let asm = listing(FRAGMENT_IO);
    let has = |prefix: &str, part: &str| {
        asm.iter()
            .filter(|l| l.starts_with(prefix) && l.contains(part))
            .count()
    };
    // One load per location, from component 0, reading the preloaded
    // interpolation state.
    assert_eq!(has("LD_VAR_IMM.slot", ""), 2, "{asm:#?}");
    assert_eq!(
        has("LD_VAR_IMM.slot", ".v4.f32.center.store"),
        1,
        "{asm:#?}"
    );
    assert_eq!(has("LD_VAR_FLAT_IMM.slot", ".v2.u32 "), 1, "{asm:#?}");
    assert!(
        asm.iter()
            .any(|l| l.contains(", r61, table:0x0, index:0x1")),
        "{asm:#?}"
    );
    // Alpha test on render target 0's alpha, then one blend per target;
    // the last one ends the shader.
    assert_eq!(has("ATEST", ", r60, "), 1, "{asm:#?}");
    let blends: Vec<&String> = asm.iter().filter(|l| l.starts_with("BLEND")).collect();
    assert_eq!(blends.len(), 2, "{asm:#?}");
    assert!(
        blends[0].contains(".v4.f32") && blends[0].contains("blend_descriptor_0.w0"),
        "{asm:#?}"
    );
    assert!(
        blends[1].contains(".v3.u32") && blends[1].contains("blend_descriptor_2.w0"),
        "{asm:#?}"
    );
    assert!(
        asm.last()
            .is_some_and(|l| l.starts_with("BLEND") && l.contains(".end")),
        "{asm:#?}"
    );
}

/// A vertex shader reading two attributes by the preloaded vertex and
/// instance ids.
const VERTEX_IO: &str = "shader vertex
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=2 interp=smooth
  %2:i32 = load_input slot=3 comp=0 interp=smooth
  %3:f32 = cvt %2
  %4:f32 = fadd %0, %3
  store_output slot=pos comp=0 %4
  store_output slot=pos comp=1 %1
  ret
";

#[test]
fn attributes_load_by_the_preloaded_ids() {
    run_components(
        VERTEX_IO,
        &[
            (0, 0, 2.5f32.to_bits()),
            (0, 2, 7.0f32.to_bits()),
            (3, 0, (-3i32) as u32),
        ],
    );
    let asm = listing(VERTEX_IO);
    assert!(
        asm.iter().any(|l| l.starts_with("LD_ATTR_IMM.v3.f32.slot")
            && l.contains(", r60, r61, index:0x0, table:0x0")),
        "{asm:#?}"
    );
    assert!(
        asm.iter()
            .any(|l| l.starts_with("LD_ATTR_IMM.s32.slot") && l.contains("index:0x3")),
        "{asm:#?}"
    );
}

#[test]
fn hand_written_programs_agree() {
    // A loop with a divergent trip count.
    run_case(
        "shader fragment
b0:
  %0:u32 = load_input slot=0 comp=0 interp=flat
  %1:u32 = const 0
  %2:u32 = const 1
  jump b1
b1:
  %3:u32 = phi [%0, b0], [%5, b1]
  %4:u32 = phi [%1, b0], [%6, b1]
  %5:u32 = isub %3, %2
  %6:u32 = iadd %4, %3
  %7:bool = ine %5, %1
  branch %7, b1, b2
b2:
  store_output slot=0 comp=0 %6
  ret
",
        &[(0, 9)],
    );
    // Bit searches at the edges, and a constant outside the table.
    run_case(
        "shader fragment
b0:
  %0:i32 = load_input slot=0 comp=0 interp=flat
  %1:i32 = const 100000
  %2:i32 = iadd %0, %1
  %3:i32 = imul %2, %0
  %4:i32 = ufind_msb %3
  %5:i32 = ifind_msb %0
  %6:i32 = find_lsb %0
  %7:i32 = isign %0
  store_output slot=0 comp=0 %4
  store_output slot=1 comp=0 %5
  store_output slot=2 comp=0 %6
  store_output slot=3 comp=0 %7
  ret
",
        &[(0, 0xfff0_1234)],
    );
    // Two uniforms of different FAU slots cannot share an instruction:
    // one is moved to a register.
    run_case(
        "shader fragment
b0:
  %0:f32 = load_uniform index=0
  %1:f32 = load_uniform index=5
  %2:f32 = fadd %0, %1
  %3:f32 = fsign %2
  %4:f32 = exp2 %2
  %5:f32 = log2 %0
  store_output slot=0 comp=0 %3
  store_output slot=16 comp=0 %4
  store_output slot=17 comp=0 %5
  ret
",
        &[],
    );
}

/// The moves a compiled `fadd` of uniforms `a` and `b` needs.
fn moves_for_uniforms(a: u32, b: u32) -> usize {
    let text = format!(
        "shader fragment\nb0:\n  %0:f32 = load_uniform index={a}\n  %1:f32 = load_uniform index={b}\n  %2:f32 = fadd %0, %1\n  store_output slot=0 comp=0 %2\n  ret\n"
    );
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
    let target = Rc::new(ValhallTarget::new("g610".parse::<MaliModel>().unwrap()));
    let out = compile_with(&shader, &target, &CompileOptions::default()).unwrap();
    out.compiled
        .disassembly
        .iter()
        .filter(|l| l.starts_with("MOV"))
        .count()
}

#[test]
fn uniforms_share_an_instruction_only_within_one_fau_slot() {
    // u0 and u1 are one 64-bit slot; u0 and u5 are two, so one is moved
    // into a register first (the spec's FAU rule, enforced by its
    // assembler).
    assert_eq!(moves_for_uniforms(0, 1), 0);
    assert_eq!(moves_for_uniforms(4, 5), 0);
    assert_eq!(moves_for_uniforms(0, 5), 1);
}

#[test]
fn uniform_and_table_constant_moves_fold_into_arithmetic_sources() {
    // No rule of the rules file reads a uniform or a constant in FMAX,
    // FMIN or FMA's addend: `fold-sources` does, within one 64-bit FAU
    // slot (u2 and u3 share one, u6 is another, so one move stays).
    let asm = verified(
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_uniform index=2
  %2:f32 = fmax %0, %1
  %3:f32 = load_uniform index=3
  %4:f32 = ffma %2, %3, %1
  %5:f32 = const 0x40000000
  %6:f32 = fmin %4, %5
  %7:f32 = load_uniform index=6
  %8:f32 = ffma %6, %7, %1
  store_output slot=0 comp=0 %8
  ret
",
    );
    let text = asm.join("\n");
    let has = |prefix: &str, tail: &str| {
        asm.iter()
            .any(|l| l.starts_with(prefix) && l.ends_with(tail))
    };
    assert!(has("FMAX.f32", ", u2"), "{text}");
    assert!(has("FMA.f32", ", u3, u2"), "{text}");
    assert!(has("FMIN.f32", ", 0x40000000"), "{text}");
    let moves = asm.iter().filter(|l| l.starts_with("MOV.i32")).count();
    assert_eq!(moves, 1, "{text}");
}

#[test]
fn constants_outside_the_table_are_pushed_into_fau_words() {
    // 3.5 and 0.3 are not in the immediate table: each gets a FAU word
    // after the uniforms the shader reads (u0, u1 and u2: the last
    // shares its 64-bit slot with 3.5), read in place by FMAX, FMA and
    // FMIN; 0.3 is read twice from one word. The verifier fills the words
    // from the interface, so a wrong word fails it.
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = const 0x40600000
  %2:f32 = fmax %0, %1
  %3:f32 = const 0x3e99999a
  %4:f32 = load_uniform index=2
  %5:f32 = ffma %2, %3, %4
  %6:f32 = fmin %5, %3
  store_output slot=0 comp=0 %6
  ret
";
    let asm = verified(text);
    let listing = asm.join("\n");
    assert!(!listing.contains("IADD_IMM"), "{listing}");
    // FMA reads 0.3 (u4) and the uniform u2: two slots, one moved.
    let moves: Vec<&String> = asm.iter().filter(|l| l.starts_with("MOV.i32")).collect();
    assert_eq!(moves.len(), 1, "{listing}");
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let target = Rc::new(ValhallTarget::new("g610".parse::<MaliModel>().unwrap()));
    let out = compile_with(&shader, &target, &CompileOptions::default()).unwrap();
    let words: Vec<(u32, u32)> = out.io.constants.iter().map(|w| (w.fau, w.bits)).collect();
    assert_eq!(words, vec![(3, 0x4060_0000), (4, 0x3e99_999a)], "{listing}");
    assert!(
        listing.contains("FMAX.f32") && listing.contains(", u3"),
        "{listing}"
    );
    assert!(
        listing.contains("FMIN.f32") && listing.contains(", u4"),
        "{listing}"
    );
}

/// `text` verified on both models by `lathe_ir::verify` (random inputs,
/// UBO words and system values per thread); the g610 disassembly.
fn verified(text: &str) -> Vec<String> {
    use lathe_ir::verify::{Options, verify};
    use lathe_mali::valhall::verify::ValhallProgram;
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let mut listing = Vec::new();
    for model in ["g57", "g610"] {
        let target = Rc::new(ValhallTarget::new(model.parse::<MaliModel>().unwrap()));
        let out = compile_with(&shader, &target, &CompileOptions::default()).unwrap();
        let report = verify(&shader, &ValhallProgram::new(&out), &Options::default())
            .unwrap_or_else(|e| panic!("{model}: {e}\n{}", out.compiled.listing()));
        assert!(report.compared > 0, "{model}: nothing compared");
        listing = out.compiled.disassembly;
    }
    listing
}

#[test]
fn ubo_words_at_constant_offsets_are_pushed_after_the_uniforms() {
    let asm = verified(
        "shader fragment
b0:
  %0:u32 = const 8
  %1:f32 = load_ubo binding=0 %0
  %2:u32 = const 4
  %3:f32 = load_ubo binding=1 %2
  %4:f32 = load_uniform index=2
  %5:f32 = fadd %1, %3
  %6:f32 = fmul %5, %4
  %7:f32 = load_ubo binding=0 %0
  %8:f32 = fadd %6, %7
  store_output slot=0 comp=0 %8
  ret
",
    );
    // Uniform u2 is the last push constant: the UBO words start at the
    // next 64-bit slot, one word per (binding, offset).
    let text = asm.join("\n");
    assert!(text.contains("u4") && text.contains("u5"), "{text}");
    assert!(!text.contains("u6"), "{text}");
}

#[test]
fn preloaded_system_values_are_read_in_place() {
    let asm = verified(
        "shader vertex
b0:
  %0:u32 = load_sysval sv=vertex_index
  %1:u32 = load_sysval sv=instance_index
  %2:f32 = load_input slot=0 comp=0 interp=smooth
  %3:u32 = iadd %0, %1
  %4:f32 = cvt %3
  %5:f32 = fmul %4, %2
  store_output slot=pos comp=0 %5
  ret
",
    );
    // The attribute load and the shader share the preloaded ids.
    assert!(
        asm.iter()
            .any(|l| l.starts_with("LD_ATTR_IMM") && l.contains(", r60, r61, ")),
        "{asm:#?}"
    );
    verified(
        "shader compute
b0:
  %0:u32 = load_sysval sv=global_invocation_id comp=0
  %1:u32 = load_sysval sv=workgroup_id comp=0
  %2:u32 = load_sysval sv=global_invocation_id comp=2
  %3:u32 = iadd %0, %1
  %4:u32 = iadd %3, %2
  output index=0 %4
  ret
",
    );
}

#[test]
fn buffers_are_read_and_written_at_their_pushed_addresses() {
    let asm = verified(
        "shader compute
b0:
  %0:u32 = load_sysval sv=global_invocation_id comp=0
  %1:u32 = const 4
  %2:u32 = imul %0, %1
  %3:f32 = load_ssbo binding=0 %2
  %4:f32 = load_ubo binding=0 %2
  %5:f32 = load_uniform index=0
  %6:f32 = fadd %3, %4
  %7:f32 = fmul %6, %5
  store_ssbo binding=1 %2, %7
  %8:u32 = const 8
  %9:u32 = load_ssbo binding=0 %8
  output index=0 %9
  ret
",
    );
    let text = asm.join("\n");
    // u0 is the push constant: the three base addresses are the 64-bit
    // slots after it, the dynamic offsets added in 64 bits and the
    // constant one folded into the message; the multiply by 4 is a shift
    // by 2, a constant word after them. Every thread reads word 2 of buffer 0
    // but none writes it (a write would race).
    for base in ["u2", "u4", "u6"] {
        assert!(text.contains(base), "{text}");
    }
    assert!(text.contains("LSHIFT_OR.i32 r0, r60, u8"), "{text}");
    assert!(text.contains("IADD.u64") && text.contains(".w0"), "{text}");
    assert!(text.contains("offset:8"), "{text}");
    assert!(asm.iter().any(|l| l.starts_with("STORE.i32")), "{text}");
}

#[test]
fn packed_system_values_are_unpacked_from_their_preloads() {
    let asm = verified(
        "shader compute
b0:
  %0:u32 = load_sysval sv=local_invocation_id comp=0
  %1:u32 = load_sysval sv=local_invocation_id comp=1
  %2:u32 = load_sysval sv=local_invocation_id comp=2
  %3:u32 = iadd %0, %1
  %4:u32 = iadd %3, %2
  output index=0 %4
  output index=1 %0
  ret
",
    );
    let text = asm.join("\n");
    assert!(text.contains("r55") && text.contains("r56"), "{text}");
    let asm = verified(
        "shader fragment
b0:
  %0:f32 = load_sysval sv=frag_coord comp=0
  %1:f32 = load_sysval sv=frag_coord comp=1
  store_output slot=0 comp=0 %0
  store_output slot=0 comp=1 %1
  ret
",
    );
    let text = asm.join("\n");
    assert!(text.contains("r59"), "{text}");
}

#[test]
fn sine_and_cosine_are_lowered_to_specified_instructions() {
    let asm = verified(
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = const 0x42c80000
  %2:f32 = fmul %0, %1
  %3:f32 = sin %2
  %4:f32 = cos %2
  store_output slot=0 comp=0 %3
  store_output slot=0 comp=1 %4
  ret
",
    );
    let text = asm.join("\n");
    // No table or offset instruction whose semantics are undocumented.
    assert!(!text.contains("FSINCOS_OFFSET"), "{text}");
    assert!(text.contains("FROUND.f32"), "{text}");
}

#[test]
fn discarded_threads_write_nothing() {
    let asm = verified(
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = const 0x3f000000
  %2:bool = flt %0, %1
  branch %2, b1, b2
b1:
  discard
  jump b2
b2:
  store_output slot=0 comp=0 %0
  ret
",
    );
    assert!(asm.iter().any(|l| l.starts_with("DISCARD.f32")), "{asm:#?}");
}

#[test]
fn storage_buffer_sizes_are_pushed() {
    verified(
        "shader compute
b0:
  %0:u32 = ssbo_size binding=1
  %1:u32 = const 0
  %2:u32 = load_ssbo binding=1 %1
  %3:u32 = iadd %0, %2
  output index=0 %3
  ret
",
    );
}
