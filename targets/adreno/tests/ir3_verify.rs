//! `lathe_ir::verify` over compiled ir3 programs: a correct program
//! agrees with the interpreter, and a program with one instruction
//! changed after compilation is caught — a wrong result as a mismatch
//! naming the output and thread, a dropped sync bit as a hazard.

use std::rc::Rc;

use lathe_adreno::ir3::abi::DriverParam;
use lathe_adreno::ir3::compile::{CompileOptions, Output, compile_with};
use lathe_adreno::ir3::{GpuModel, assemble, target::Ir3Target, verify::Ir3Program};
use lathe_ir::GenericOp;
use lathe_ir::verify::{Options, VerifyError, verify};

const SHADER: &str = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_uniform index=6
  %2:f32 = fadd %0, %1
  %3:f32 = rsqrt %2
  store_output slot=0 comp=0 %3
  ret
";

fn compiled(generic: &lathe_ir::Shader<'_, GenericOp>, gpu: GpuModel) -> Output {
    let target = Rc::new(Ir3Target::new(gpu).unwrap());
    compile_with(generic, &target, &CompileOptions::default()).unwrap()
}

/// `out` with the first instruction whose disassembly starts with `from`
/// (after a `(nopN)` prefix) replaced by `to` of its line.
fn patched(out: &Output, gpu: GpuModel, from: &str, to: impl Fn(&str) -> String) -> Output {
    let mut c = out.compiled.clone();
    let pc = c
        .asm
        .lines()
        .position(|l| l.starts_with(from) || l.contains(&format!(" {from}")))
        .unwrap_or_else(|| panic!("no `{from}` in\n{}", c.asm));
    let line = to(c.asm.lines().nth(pc).unwrap());
    c.words[pc] = assemble(&line, gpu.generation()).unwrap();
    c.asm = c
        .asm
        .lines()
        .enumerate()
        .map(|(k, l)| if k == pc { line.clone() } else { l.to_string() } + "\n")
        .collect();
    Output {
        compiled: c,
        ports: out.ports.clone(),
        dumps: Vec::new(),
    }
}

#[test]
fn a_compiled_program_agrees_and_a_patched_one_does_not() {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, SHADER).unwrap();
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let out = compiled(&generic, gpu);
        for seed in 0..4 {
            let options = Options {
                seed,
                threads: 8,
                ..Options::default()
            };
            let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
            let report = verify(&generic, &program, &options).unwrap();
            assert_eq!((report.threads, report.compared), (8, 8), "{model}");
        }

        // An add turned into a multiply computes something else.
        let wrong = patched(&out, gpu, "add.f", |l| l.replacen("add.f", "mul.f", 1));
        let program = Ir3Program::new(&wrong.compiled, &wrong.ports, gpu);
        match verify(&generic, &program, &Options::default()) {
            Err(VerifyError::Mismatch {
                what,
                thread,
                approximate,
                ..
            }) => {
                assert_eq!(what, "output slot 0 comp 0");
                assert!(thread < 4, "thread {thread}");
                assert!(approximate, "rsqrt feeds the output");
            }
            other => panic!("{model}: {other:?}\n{}", wrong.compiled.asm),
        }

        // One nop instead of the repeated ones: `rsq` reads the add's
        // result too early.
        let racy = patched(&out, gpu, "(rpt", |_| "nop".into());
        let program = Ir3Program::new(&racy.compiled, &racy.ports, gpu);
        let err = verify(&generic, &program, &Options::default()).unwrap_err();
        assert!(err.is_hazard(), "{model}: {err}");
        assert!(err.to_string().contains("`rsq "), "{err}");
    }
}

#[test]
fn undefined_inputs_are_redrawn_and_a_shader_always_undefined_is_reported() {
    // A shift by the type width or more is undefined whatever the inputs.
    let text = "shader fragment
b0:
  %0:u32 = load_input slot=0 comp=0 interp=flat
  %1:u32 = const 40
  %2:u32 = shl %0, %1
  store_output slot=0 comp=0 %2
  ret
";
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let gpu: GpuModel = "a630".parse().unwrap();
    let out = compiled(&generic, gpu);
    let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
    let err = verify(&generic, &program, &Options::default()).unwrap_err();
    assert!(
        matches!(err, VerifyError::Undefined { draws: 16, .. }),
        "{err}"
    );
}

/// `text` compiles for a630 and a740 and agrees with the interpreter on
/// a few seeds, with no hazard.
/// Every branch and jump of `asm` lands on an instruction marked `(jp)`
/// (offsets count every word, a split's copy too).
fn flow_lands_on_jump_targets(asm: &str) {
    let lines: Vec<&str> = asm.lines().filter(|l| !l.starts_with(';')).collect();
    for (pc, line) in lines.iter().enumerate() {
        let mut text = *line;
        while let Some(rest) = text.strip_prefix('(') {
            text = rest.split_once(')').map_or("", |(_, r)| r);
        }
        if !(text.starts_with("jump ") || text.starts_with("br ")) {
            continue;
        }
        let offset: i64 = text.rsplit_once('#').unwrap().1.parse().unwrap();
        let target = lines[(pc as i64 + offset) as usize];
        assert!(
            target.contains("(jp)"),
            "{pc}: `{line}` lands on `{target}`\n{asm}"
        );
    }
}

fn agrees_everywhere(text: &str) {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let out = compiled(&generic, gpu);
        flow_lands_on_jump_targets(&out.compiled.asm);
        let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
        for seed in 0..4 {
            let options = Options {
                seed,
                ..Default::default()
            };
            if let Err(e) = verify(&generic, &program, &options) {
                panic!("{model} seed {seed}: {e}\n{}", out.compiled.asm);
            }
        }
    }
}

#[test]
fn outputs_stored_on_one_path_or_in_a_loop_keep_their_last_value() {
    // The store in b1 is overwritten on every path (the output is 0.0);
    // the loop's store leaves its last value; the input stored first is
    // read at the end although later code needs registers.
    agrees_everywhere(
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:u32 = load_input slot=3 comp=0 interp=flat
  %2:f32 = const 0.0
  %3:bool = flt %0, %2
  store_output slot=2 comp=2 %1
  branch %3, b1, b2
b1:
  %4:f32 = const 13351364000.0
  store_output slot=2 comp=0 %4
  jump b2
b2:
  %5:i32 = const 0
  %6:i32 = const 1
  %7:i32 = const 3
  jump b3
b3:
  %8:i32 = phi [%5, b2], [%10, b4]
  %9:bool = ilt %8, %7
  branch %9, b4, b5
b4:
  store_output slot=0 comp=3 %8
  %10:i32 = iadd %8, %6
  jump b3
b5:
  store_output slot=2 comp=0 %2
  ret
",
    );
}

#[test]
fn two_outputs_live_at_the_end_get_two_registers() {
    // The scheduler once moved the input's output before the subtraction,
    // and the subtraction took the input's register.
    agrees_everywhere(
        "shader fragment
b0:
  %0:f16 = load_input slot=1 comp=0 interp=smooth
  %1:u16 = const 59498
  %2:u16 = isub %1, %1
  store_output slot=0 comp=0 %0
  output index=0 %2
  ret
",
    );
}

#[test]
fn a_diverged_group_that_jumps_ahead_hands_its_registers_over_with_their_delay() {
    // Lanes taking b1 write r0.x with a mad and jump past b2; the lanes
    // waiting at b2 run next and read hr0.x, the low half of r0.x.
    agrees_everywhere(
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:i16 = load_input slot=4 comp=0 interp=flat
  %2:u32 = input index=0
  %3:f32 = const 0.0
  %4:bool = flt %0, %3
  branch %4, b1, b2
b1:
  %5:f32 = const 1.5
  %6:f32 = ffma %5, %5, %5
  store_output slot=4 comp=2 %2
  jump b3
b2:
  branch %4, b4, b5
b3:
  %7:f32 = phi [%6, b1], [%3, b6]
  store_output slot=0 comp=0 %7
  %8:f16 = const -18540.0
  store_output slot=1 comp=0 %8
  store_output slot=2 comp=0 %2
  output index=0 %1
  ret
b4:
  %9:f16 = const 0.5
  store_output slot=1 comp=0 %9
  jump b6
b5:
  jump b6
b6:
  jump b3
",
    );
}

#[test]
fn a_loop_over_texture_samples_jumps_back_to_its_head() {
    // The sample's lanes are copied out of its register group (split
    // copies are words): the back edge's offset must count them, or the
    // jump lands inside the loop body, past the head's compare.
    agrees_everywhere(
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:i32 = const 0
  %3:i32 = const 1
  %4:i32 = const 3
  %5:f32 = const 0.0
  %6:f32x2 = collect %0, %1
  jump b1
b1:
  %7:i32 = phi [%2, b0], [%16, b2]
  %8:f32 = phi [%5, b0], [%14, b2]
  %9:f32 = phi [%5, b0], [%15, b2]
  %10:bool = ilt %7, %4
  branch %10, b2, b3
b2:
  %11:f32x4 = sample texture=0 sampler=0 lod=explicit %6, %5
  %12:f32 = split lane=1 %11
  %13:f32 = split lane=2 %11
  %14:f32 = fadd %8, %12
  %15:f32 = fmul %9, %13
  %16:i32 = iadd %7, %3
  jump b1
b3:
  store_output slot=0 comp=0 %8
  store_output slot=0 comp=1 %9
  ret
",
    );
}

/// `ssbo_size` is a driver parameter: the const word the layout names
/// holds the bound buffer's byte size (`ConstLayout::ssbo_size_words`).
#[test]
fn ssbo_sizes_are_driver_parameters() {
    let text = "shader fragment
b0:
  %0:u32 = ssbo_size binding=1
  %1:u32 = ssbo_size binding=0
  %2:u32 = load_uniform index=2
  %3:u32 = iadd %0, %2
  store_output slot=0 comp=0 %3
  store_output slot=0 comp=1 %1
  ret
";
    agrees_everywhere(text);
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    let out = compiled(&generic, "a630".parse().unwrap());
    let params = &out.compiled.interface.consts.params;
    assert_eq!(
        params.iter().map(|p| p.0).collect::<Vec<_>>(),
        [DriverParam::SsboSize(0), DriverParam::SsboSize(1)]
    );
    // After the three uniform words.
    assert_eq!(
        out.compiled.interface.consts.ssbo_size_words(&[16, 64]),
        [(3, 16), (4, 64)]
    );
}

#[test]
fn a_discarded_invocation_writes_nothing_and_a_kill_that_never_fires_is_caught() {
    // Invocations whose input is below 0.5 are discarded: the rest write
    // their output.
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = const 0.5
  %2:bool = flt %0, %1
  branch %2, b1, b2
b1:
  discard
  ret
b2:
  store_output slot=0 comp=0 %0
  ret
";
    agrees_everywhere(text);
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let out = compiled(&generic, gpu);
        assert!(
            out.compiled.asm.contains("kill p0.x"),
            "{}",
            out.compiled.asm
        );
        // The kill's condition made false: the invocations run on.
        let kept = patched(&out, gpu, "mov.u16u16", |l| l.replace(", 1", ", 0"));
        let program = Ir3Program::new(&kept.compiled, &kept.ports, gpu);
        let caught = (0..8).any(|seed| {
            let options = Options {
                seed,
                ..Default::default()
            };
            matches!(
                verify(&generic, &program, &options),
                Err(VerifyError::Mismatch { .. })
            )
        });
        assert!(
            caught,
            "{model}: a kill that never fires\n{}",
            kept.compiled.asm
        );
    }
}

#[test]
fn threads_skipping_a_branch_wait_for_the_others_before_a_barrier() {
    // The edge from b0 to the barrier's block is critical (b0 branches,
    // b1 joins): ra gives it a block of its own, which must be laid out
    // before the join. After the program's end, the threads that took it
    // would wait there while thread 0 reached the barrier alone, and the
    // count it stores would be 1.
    agrees_everywhere(
        "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 1
  %2:u32 = load_sysval sv=local_invocation_index
  %3:bool = ieq %2, %0
  branch %3, b1, b2
b1:
  store_shared %0, %0
  jump b2
b2:
  control_barrier
  %4:u32 = shared_atomic op=add %0, %1
  control_barrier
  branch %3, b3, b4
b3:
  %5:u32 = load_shared %0
  store_ssbo binding=0 %0, %5
  jump b4
b4:
  ret
",
    );
}

#[test]
fn a_loop_header_without_words_still_waits_for_its_back_edge() {
    // Sascha Willems' computeheadless (a Fibonacci loop) as the frontend
    // lowers it: the loop header b8 holds only phis, so the slots the
    // back edge's last writes need fall to b9's compare, whose ways in
    // run through b8 to both the entry path (many paths) and the back
    // edge. Keeping only the first paths missed the back edge's.
    let text = "shader compute
b0:
  %0:u32 = const 32
  %1:u32 = const 4
  %2:u32 = const 1
  %3:u32 = const 2
  %4:i32 = const 1
  jump b1
b1:
  %5:u32 = load_sysval sv=global_invocation_id comp=0
  %6:bool = uge %5, %0
  branch %6, b2, b3
b2:
  jump b13
b3:
  %7:u32 = imul %5, %1
  %8:u32 = load_ssbo binding=0 %7
  jump b5
b4:
  %9:u32 = phi [%8, b6], [%13, b11]
  %10:u32 = imul %5, %1
  store_ssbo binding=0 %10, %9
  jump b13
b5:
  %11:bool = uge %2, %8
  branch %11, b6, b7
b6:
  jump b4
b7:
  jump b8
b8:
  %12:u32 = phi [%3, b7], [%18, b12]
  %13:u32 = phi [%2, b7], [%16, b12]
  %14:u32 = phi [%2, b7], [%13, b12]
  jump b9
b9:
  %15:bool = ult %12, %8
  branch %15, b10, b11
b10:
  %16:u32 = iadd %13, %14
  jump b12
b11:
  jump b4
b12:
  %17:u32 = mov %4
  %18:u32 = iadd %12, %17
  jump b8
b13:
  ret
";
    // The loop runs as often as the word loaded says: seed 1 draws
    // counts that end (others reach the interpreter's step limit).
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let out = compiled(&generic, gpu);
        let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
        let options = Options {
            seed: 1,
            ..Default::default()
        };
        if let Err(e) = verify(&generic, &program, &options) {
            panic!("{model}: {e}\n{}", out.compiled.asm);
        }
    }
}

#[test]
fn a_compare_read_only_by_its_branch_writes_p0_itself() {
    // %2 is read by the branch alone: the compare writes p0.x, no second
    // compare turns a boolean register into the predicate, and the empty
    // edge block b2 is jumped over without a `jump` to the next word.
    let once = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_uniform index=1
  %2:bool = flt %0, %1
  branch %2, b1, b2
b1:
  %3:f32 = fmul %0, %1
  jump b3
b2:
  jump b3
b3:
  %4:f32 = phi [%3, b1], [%1, b2]
  store_output slot=0 comp=0 %4
  ret
";
    agrees_everywhere(once);
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, once).unwrap();
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let out = compiled(&generic, gpu);
        let asm = &out.compiled.asm;
        assert!(asm.contains("cmps.f.lt p0.x, "), "{asm}");
        assert!(!asm.contains("cmps.s.ne p0.x"), "{asm}");
        assert!(!asm.contains("jump #1\n"), "{asm}");
        // The condition really steers the flow: the opposite compare is
        // caught.
        let flipped = patched(&out, gpu, "cmps.f.lt", |l| l.replace(".lt ", ".ge "));
        let program = Ir3Program::new(&flipped.compiled, &flipped.ports, gpu);
        let caught = (0..4).any(|seed| {
            let options = Options {
                seed,
                ..Default::default()
            };
            matches!(
                verify(&generic, &program, &options),
                Err(VerifyError::Mismatch { .. })
            )
        });
        assert!(caught, "{model}: a flipped branch condition was not caught");
    }
    // Read twice (the branch and an output), the boolean keeps its
    // register and the predicate is compared from it.
    agrees_everywhere(
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_uniform index=1
  %2:bool = flt %0, %1
  %5:f32 = sel %2, %1, %0
  branch %2, b1, b2
b1:
  store_output slot=0 comp=1 %5
  jump b2
b2:
  store_output slot=0 comp=0 %0
  ret
",
    );
}

/// WGSL zero-initialises workgroup memory with a store per word at
/// constant addresses defined in the entry block: 1,536 of them (blur's
/// tile) cannot all stay in registers. They share base registers (0,
/// 4096, 8192 and 12288, for the offset field's reach) and encode the
/// rest. Every other word is stored, so each store stays one `stl` of
/// one word (consecutive ones would be merged).
#[test]
fn shared_stores_at_constant_addresses_share_base_registers() {
    let words = 1536;
    let mut text = String::from("shader compute\nb0:\n  %0:u32 = const 0\n");
    for k in 1..=words {
        text += &format!("  %{k}:u32 = const {}\n", 8 * k);
    }
    let v = words + 1;
    text += &format!(
        "  %{v}:u32 = load_sysval sv=local_invocation_index\n  %{}:bool = ieq %{v}, %0\n  branch %{}, b1, b2\nb1:\n",
        v + 1,
        v + 1
    );
    for k in 1..=words {
        text += &format!("  store_shared %{k}, %{v}\n");
    }
    text += &format!(
        "  jump b2\nb2:\n  control_barrier\n  %{}:u32 = load_shared %{words}\n  %{}:u32 = imul %{v}, %1\n  store_ssbo binding=0 %{}, %{}\n  ret\n",
        v + 2,
        v + 3,
        v + 3,
        v + 2
    );
    agrees_everywhere(&text);
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
    let asm = compiled(&generic, "a630".parse().unwrap()).compiled.asm;
    let count = |has: &[&str]| {
        let lines = asm.lines();
        lines.filter(|l| has.iter().all(|h| l.contains(h))).count()
    };
    assert_eq!(count(&["stl.u32 l[r"]), words, "{asm}");
    // All but the stores at 4096, 8192 and 12288 themselves encode an
    // offset.
    assert_eq!(count(&["stl.u32 l[r", "+"]), words - 3, "{asm}");
    assert!(count(&["mov"]) < 8, "{asm}");
}

/// One-word shared stores at consecutive words of one base become one
/// `stl` of up to four words, in any order in the block, but never
/// across a shared-memory read: here words 0 to 2 of each thread's four
/// are one `stl`, and word 3, stored after a load of word 1, another;
/// each thread then reads its four back.
#[test]
fn consecutive_shared_stores_are_one_stl() {
    let text = "shader compute
b0:
  %0:u32 = load_sysval sv=local_invocation_index
  %1:u32 = const 16
  %2:u32 = imul %0, %1
  %3:f32 = const 1.5
  %4:f32 = cvt %0
  %5:u32 = const 4
  %6:u32 = iadd %2, %5
  %7:u32 = const 8
  %8:u32 = iadd %2, %7
  %9:u32 = const 12
  %10:u32 = iadd %2, %9
  store_shared %6, %4
  store_shared %2, %3
  store_shared %8, %4
  %11:f32 = load_shared %6
  %12:f32 = fadd %11, %3
  store_shared %10, %12
  %16:f32 = load_shared %2
  %18:f32 = load_shared %6
  %20:f32 = load_shared %8
  %22:f32 = load_shared %10
  %23:f32 = fadd %16, %18
  %24:f32 = fmul %20, %22
  %25:f32 = fsub %23, %24
  %26:u32 = const 2
  %27:u32 = shl %0, %26
  store_ssbo binding=0 %27, %25
  ret
";
    agrees_everywhere(text);
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    for gpu in ["a630", "a740"] {
        let asm = compiled(&generic, gpu.parse().unwrap()).compiled.asm;
        let stores: Vec<&str> = asm.lines().filter(|l| l.contains("stl.")).collect();
        assert_eq!(stores.len(), 2, "{asm}");
        assert!(stores.iter().any(|l| l.ends_with(", 3")), "{asm}");
    }
}

/// Atomic loads and stores are the plain ldib / stib and ldl / stl. Every
/// thread adds to word 0 and, with no barrier, atomically loads it back:
/// the value is undefined (the order of the others' adds decides it), and
/// so are the words it is stored to; a thread's own words are defined.
#[test]
fn atomic_loads_and_stores_are_plain_word_accesses() {
    let text = "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 1
  %2:u32 = const 4
  %3:u32 = load_sysval sv=local_invocation_index
  %4:u32 = imul %3, %2
  %5:u32 = iadd %4, %2
  %6:u32 = ssbo_atomic binding=0 op=add %0, %1
  %7:u32 = ssbo_atomic_load binding=0 %0
  ssbo_atomic_store binding=0 %5, %7
  ssbo_atomic_store binding=1 %4, %3
  %8:u32 = ssbo_atomic_load binding=1 %4
  shared_atomic_store %4, %8
  %9:u32 = shared_atomic_load %4
  %10:u32 = const 64
  %11:u32 = iadd %4, %10
  %12:u32 = iadd %9, %6
  store_ssbo binding=1 %11, %9
  ret
";
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let out = compiled(&generic, gpu);
        // The buffer slots are the instructions' immediates (`.imm`),
        // which the simulator reads: a wrong slot would not verify.
        let asm = &out.compiled.asm;
        assert!(
            asm.contains("ldib.b.untyped.1d.u32.1.imm "),
            "{model}:\n{asm}"
        );
        assert!(
            asm.contains("stib.b.untyped.1d.u32.1.imm "),
            "{model}:\n{asm}"
        );
        assert!(!asm.contains(".uniform "), "{model}:\n{asm}");
        for threads in [4, 8] {
            let options = Options {
                threads,
                ..Options::default()
            };
            let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
            let report = verify(&generic, &program, &options).unwrap_or_else(|e| {
                panic!("{model}, {threads} threads: {e}\n{}", out.compiled.asm)
            });
            assert_eq!(report.undefined, threads, "{model}");
        }
    }
}

/// Every thread takes a node index from the counter in word 0 with an
/// atomic add and, when it is below 64, stores its local index at word
/// `2 + index`: the program's order of the adds decides which thread
/// writes where, and the verifier follows it (the interpreter alone
/// finds every draw undefined: it branches on an ordered result).
#[test]
fn a_branch_on_an_atomic_result_follows_the_programs_order() {
    let text = "shader compute
b0:
  %0:u32 = const 0
  %1:u32 = const 1
  %2:u32 = const 64
  %3:u32 = const 4
  %4:u32 = const 8
  %5:u32 = ssbo_atomic binding=0 op=add %0, %1
  %6:bool = ult %5, %2
  branch %6, b1, b2
b1:
  %7:u32 = imul %5, %3
  %8:u32 = iadd %7, %4
  %9:u32 = load_sysval sv=local_invocation_index
  store_ssbo binding=0 %8, %9
  jump b2
b2:
  ret
";
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let out = compiled(&generic, gpu);
        for threads in [4, 8] {
            let options = Options {
                threads,
                ..Options::default()
            };
            let program = Ir3Program::new(&out.compiled, &out.ports, gpu);
            let report = verify(&generic, &program, &options).unwrap_or_else(|e| {
                panic!("{model}, {threads} threads: {e}\n{}", out.compiled.asm)
            });
            assert_eq!((report.undefined, report.compared), (0, 1024), "{model}");
        }
    }
}

/// A vertex shader that multiplies two uniform 2x2 matrices (uniform
/// words 0..=3 and 4..=7, row-major) and the product by its input.
const MATRICES: &str = "shader vertex
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32 = load_uniform index=0
  %3:f32 = load_uniform index=1
  %4:f32 = load_uniform index=2
  %5:f32 = load_uniform index=3
  %6:f32 = load_uniform index=4
  %7:f32 = load_uniform index=5
  %8:f32 = load_uniform index=6
  %9:f32 = load_uniform index=7
  %10:f32 = fmul %2, %6
  %11:f32 = ffma %3, %8, %10
  %12:f32 = fmul %2, %7
  %13:f32 = ffma %3, %9, %12
  %14:f32 = fmul %4, %6
  %15:f32 = ffma %5, %8, %14
  %16:f32 = fmul %4, %7
  %17:f32 = ffma %5, %9, %16
  %18:f32 = fmul %11, %0
  %19:f32 = ffma %13, %1, %18
  %20:f32 = fmul %15, %0
  %21:f32 = ffma %17, %1, %20
  store_output slot=0 comp=0 %19
  store_output slot=0 comp=1 %21
  ret
";

#[test]
fn uniform_matrix_products_run_once_in_the_preamble_and_verify() {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, MATRICES).unwrap();
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let out = compiled(&generic, gpu);
        let c = &out.compiled;
        for seed in 0..4 {
            let options = Options {
                seed,
                ..Options::default()
            };
            let program = Ir3Program::new(c, &out.ports, gpu);
            verify(&generic, &program, &options)
                .unwrap_or_else(|e| panic!("{model}, seed {seed}: {e}\n{}", c.asm));
        }
        // The four products are stored once, into the words after the
        // uniforms, and the main part reads them there.
        let preamble = c.interface.consts.preamble.expect("a preamble");
        assert_eq!((preamble.first_word, preamble.words), (8, 4), "{model}");
        let lines: Vec<&str> = c.asm.lines().collect();
        assert!(lines[0].starts_with("shps #"), "{model}\n{}", c.asm);
        assert!(lines[1].starts_with("getone #"), "{model}\n{}", c.asm);
        assert_eq!(c.asm.matches("stc.u32 c[").count(), 4, "{}", c.asm);
        assert!(c.asm.contains("shpe\n"), "{}", c.asm);
        // The main part is shorter than the whole shader without a
        // preamble; the preamble's instructions are counted apart.
        let target = Rc::new(Ir3Target::new(gpu).unwrap());
        let options = CompileOptions {
            no_preamble: true,
            ..CompileOptions::default()
        };
        let whole = compile_with(&generic, &target, &options).unwrap().compiled;
        assert!(!whole.asm.contains("shps"), "{}", whole.asm);
        assert_eq!(whole.stats.preamble, 0);
        assert!(c.stats.preamble > 0);
        assert!(
            c.stats.inst < whole.stats.inst,
            "{model}: {} main vs {} whole\n{}",
            c.stats.inst,
            whole.stats.inst,
            c.asm
        );
    }
}

#[test]
fn a_preamble_that_is_skipped_or_stores_elsewhere_is_caught() {
    let arena = lathe_ir::Bump::new();
    let generic = lathe_ir::parse::<GenericOp>(&arena, MATRICES).unwrap();
    for model in ["a630", "a740"] {
        let gpu: GpuModel = model.parse().unwrap();
        let out = compiled(&generic, gpu);
        // Every wave skipping the preamble: the const words stay unset
        // (the harness writes only what a driver writes).
        let skipped = patched(&out, gpu, "shps", |l| l.replacen("shps", "jump", 1));
        let program = Ir3Program::new(&skipped.compiled, &skipped.ports, gpu);
        let err = verify(&generic, &program, &Options::default()).unwrap_err();
        assert!(
            matches!(err, VerifyError::Mismatch { .. }),
            "{model}: {err}"
        );
        // One product stored into the word of another.
        let moved = patched(&out, gpu, "stc.u32 c[8]", |l| l.replacen("c[8]", "c[9]", 1));
        let program = Ir3Program::new(&moved.compiled, &moved.ports, gpu);
        let err = verify(&generic, &program, &Options::default()).unwrap_err();
        assert!(
            matches!(err, VerifyError::Mismatch { .. }),
            "{model}: {err}"
        );
    }
}

#[test]
fn only_a6xx_and_later_run_a_preamble() {
    for (model, has) in [
        ("a306", false),
        ("a530", false),
        ("a630", true),
        ("a740", true),
    ] {
        let target = Ir3Target::new(model.parse().unwrap()).unwrap();
        // stc's immediate destination reaches 256 words.
        let expected = has.then_some(256);
        assert_eq!(target.preamble_words(), expected, "{model}");
    }
}
