//! Allocated ir3 machine IR through legalisation and emission, run whole
//! on the generated simulator with its hazard detection: no hazard, and
//! the outputs equal those of the instruction-by-instruction run of the
//! allocated IR (`run::run`, which lets every result settle) and, where
//! a generic program exists, of the IR interpreter. The simulator is
//! shown to be a real oracle: a program missing one nop or one sync flag
//! stops with a hazard.

use std::collections::BTreeMap;

use lathe_adreno::ir3::{self, GpuModel, emit, generated::MachineOp, run, sim, target::Ir3Target};
use lathe_ir::{GenericOp, interp};
use lathe_passes::lower_swap::lower_swaps;
use lathe_passes::ra::{RaOptions, allocate};

fn target(model: &str) -> Ir3Target {
    Ir3Target::new(model.parse::<GpuModel>().unwrap()).unwrap()
}

/// `text` allocated for `t` (swaps lowered where the target has no
/// exchange instruction), printed.
fn allocated(text: &str, t: &Ir3Target) -> String {
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<MachineOp>(&arena, text).unwrap();
    allocate(&mut shader, t, RaOptions::default()).unwrap();
    lower_swaps(&mut shader, t).unwrap();
    lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{e:?}"));
    lathe_ir::print(&shader)
}

fn emitted(allocated: &str, t: &Ir3Target) -> emit::Compiled {
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<MachineOp>(&arena, allocated).unwrap();
    let out = emit::emit(&mut shader, t).unwrap_or_else(|e| panic!("{e}\n{allocated}"));
    // Legalisation keeps the IR valid (the terminators stay).
    lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{e:?}"));
    out
}

/// Runs the emitted words on one thread with `inputs` in the interface's
/// registers; the outputs by index.
fn run_words(
    out: &emit::Compiled,
    t: &Ir3Target,
    words: &[u64],
    inputs: &[u32],
) -> Result<BTreeMap<u32, u32>, sim::SimError> {
    let mut m = sim::machine(1);
    for s in &out.interface.inputs {
        let (file, half, index) = m.parse_reg(&s.register).unwrap();
        m.set(file, half, index, 0, inputs[s.index as usize])
            .unwrap();
    }
    let generation = ir3::Generation::from_gpu_id(t.generation_id()).unwrap();
    sim::run(&mut m, words, generation)?;
    Ok(out
        .interface
        .outputs
        .iter()
        .map(|s| {
            let (file, half, index) = m.parse_reg(&s.register).unwrap();
            (s.index, m.get(file, half, index, 0).unwrap())
        })
        .collect())
}

/// The instruction-by-instruction run of the allocated (not legalised)
/// program.
fn stepped(allocated: &str, t: &Ir3Target, inputs: &[u32]) -> BTreeMap<u32, u32> {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<MachineOp>(&arena, allocated).unwrap();
    run::run(&shader, t, &mut sim::machine(1), inputs).unwrap()
}

fn interpreted(generic: &str, inputs: &[u32], outputs: u32) -> BTreeMap<u32, u32> {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, generic).unwrap();
    let inv = interp::Invocation {
        meta_inputs: inputs.to_vec(),
        ..Default::default()
    };
    let out = interp::run(&shader, &inv, interp::Limits::default()).unwrap();
    (0..outputs).map(|k| (k, out.meta_outputs[&k].1)).collect()
}

/// Every line of the disassembly assembles back into its word.
fn assert_reassembles(out: &emit::Compiled, t: &Ir3Target) {
    let generation = ir3::Generation::from_gpu_id(t.generation_id()).unwrap();
    let lines: Vec<&str> = out.asm.lines().collect();
    assert_eq!(lines.len(), out.words.len());
    for (line, &word) in lines.iter().zip(&out.words) {
        assert_eq!(ir3::assemble(line, generation).unwrap(), word, "`{line}`");
    }
}

const DOT: &str = include_str!("../examples/ir3-machine.lir");

#[test]
fn straight_line_runs_without_hazard_as_stepped() {
    for model in ["a630", "a740"] {
        let t = target(model);
        let alloc = allocated(DOT, &t);
        let out = emitted(&alloc, &t);
        assert_reassembles(&out, &t);
        for inputs in [[1.0f32, 2.0, 3.0, 4.0], [0.5, -1.5, 8.0, 0.25]] {
            let bits: Vec<u32> = inputs.iter().map(|f| f.to_bits()).collect();
            let got = run_words(&out, &t, &out.words, &bits)
                .unwrap_or_else(|e| panic!("{model}: {e}\n{}", out.asm));
            assert_eq!(got, stepped(&alloc, &t, &bits), "{model}\n{}", out.asm);
        }
        // The rsq result reaches the final mul through (ss).
        assert!(out.asm.contains("(ss)"), "{}", out.asm);
        assert!(out.asm.trim_end().ends_with("end"), "{}", out.asm);
    }
}

/// Two values trade places on every trip of a loop (ra breaks the copy
/// cycle on the back edge with a swap), a counter counts trips down.
const LOOP: &str = "shader fragment
b0:
  %0:u32 = input index=0
  %1:u32 = input index=1
  %2:u32 = input index=2
  jump b1
b1:
  %4:u32 = phi [%0, b0], [%5, b1]
  %5:u32 = phi [%1, b0], [%4, b1]
  %6:u32 = phi [%2, b0], [%7, b1]
  %7:u32 = add.s full src2=0x27ff %6
  %8:bool = cmps.u dst_conv full cond=5 src2=0x2000 %7
  branch %8, b1, b2
b2:
  output index=0 %4
  output index=1 %5
  ret
";

const LOOP_GENERIC: &str = "shader fragment
b0:
  %0:u32 = input index=0
  %1:u32 = input index=1
  %2:u32 = input index=2
  %3:u32 = const 1
  %9:u32 = const 0
  jump b1
b1:
  %4:u32 = phi [%0, b0], [%5, b1]
  %5:u32 = phi [%1, b0], [%4, b1]
  %6:u32 = phi [%2, b0], [%7, b1]
  %7:u32 = isub %6, %3
  %8:bool = ine %7, %9
  branch %8, b1, b2
b2:
  output index=0 %4
  output index=1 %5
  ret
";

#[test]
fn a_loop_runs_without_hazard_as_interpreted() {
    let t = target("a630");
    let alloc = allocated(LOOP, &t);
    let out = emitted(&alloc, &t);
    assert_reassembles(&out, &t);
    assert_eq!(out.stats.loops, 1, "{}", out.asm);
    assert!(out.asm.contains("(jp)"), "{}", out.asm);
    for trips in 1..=4u32 {
        let inputs = [0x1234_5678, 0x9abc_def0, trips];
        let got = run_words(&out, &t, &out.words, &inputs)
            .unwrap_or_else(|e| panic!("{trips} trips: {e}\n{}", out.asm));
        assert_eq!(got, interpreted(LOOP_GENERIC, &inputs, 2), "{}", out.asm);
        assert_eq!(got, stepped(&alloc, &t, &inputs));
    }
}

/// An if/else whose arms meet again: a branch on a compare, a jump over
/// the other arm, a phi at the join.
const DIAMOND: &str = "shader fragment
b0:
  %0:f32 = input index=0
  %1:f32 = input index=1
  %2:bool = cmps.f dst_conv full cond=2 %0, %1
  branch %2, b1, b2
b1:
  %3:f32 = mul.f full %0, %1
  %4:f32 = rcp full %3
  jump b3
b2:
  %5:f32 = add.f full %0, %1
  jump b3
b3:
  %6:f32 = phi [%4, b1], [%5, b2]
  %7:f32 = mul.f full %6, %0
  output index=0 %7
  ret
";

const DIAMOND_GENERIC: &str = "shader fragment
b0:
  %0:f32 = input index=0
  %1:f32 = input index=1
  %2:bool = flt %1, %0
  branch %2, b1, b2
b1:
  %3:f32 = fmul %0, %1
  %4:f32 = rcp %3
  jump b3
b2:
  %5:f32 = fadd %0, %1
  jump b3
b3:
  %6:f32 = phi [%4, b1], [%5, b2]
  %7:f32 = fmul %6, %0
  output index=0 %7
  ret
";

#[test]
fn both_arms_of_a_branch_run_without_hazard_as_interpreted() {
    for model in ["a630", "a740"] {
        let t = target(model);
        let alloc = allocated(DIAMOND, &t);
        let out = emitted(&alloc, &t);
        assert_reassembles(&out, &t);
        for (a, b) in [(4.0f32, 2.0f32), (1.0, 4.0)] {
            let inputs = [a.to_bits(), b.to_bits()];
            let got = run_words(&out, &t, &out.words, &inputs)
                .unwrap_or_else(|e| panic!("{model} {a} {b}: {e}\n{}", out.asm));
            assert_eq!(got, stepped(&alloc, &t, &inputs), "{}", out.asm);
            assert_eq!(
                got,
                interpreted(DIAMOND_GENERIC, &inputs, 1),
                "{model} {a} {b}\n{}",
                out.asm
            );
        }
    }
}

/// The oracle can fail: without one of its nops, or without its (ss), the
/// emitted program stops with a hazard.
#[test]
fn the_simulator_reports_a_missing_nop_or_sync_flag() {
    let t = target("a630");
    let generation = ir3::Generation::A6xx;
    let alloc = allocated(DOT, &t);
    let out = emitted(&alloc, &t);
    let bits: Vec<u32> = [1.0f32, 2.0, 3.0, 4.0]
        .iter()
        .map(|f| f.to_bits())
        .collect();
    run_words(&out, &t, &out.words, &bits).unwrap();

    // Drop the first delay slot, wherever it is (a nop, or one of an
    // instruction's (nopN)), by re-assembling its line without it.
    let lines: Vec<String> = out.asm.lines().map(String::from).collect();
    let k = lines
        .iter()
        .position(|l| l.contains("nop"))
        .expect("the program has delay slots");
    let mut fewer = lines.clone();
    let line = &lines[k];
    if let Some(rest) = line.strip_suffix("nop") {
        // `(rptN)nop` loses one slot; a single nop goes.
        match rest.rfind("(rpt") {
            Some(at) => {
                let n: u32 = rest[at + 4..rest.len() - 1].parse().unwrap();
                let rpt = if n > 1 {
                    format!("(rpt{})", n - 1)
                } else {
                    String::new()
                };
                fewer[k] = format!("{}{rpt}nop", &rest[..at]);
            }
            None => {
                fewer.remove(k);
            }
        }
    } else {
        let at = line.find("(nop").unwrap();
        let n: u32 = line[at + 4..at + 5].parse().unwrap();
        let slots = if n > 1 {
            format!("(nop{}) ", n - 1)
        } else {
            String::new()
        };
        fewer[k] = format!("{}{slots}{}", &line[..at], &line[at + 7..]);
    }
    let words: Vec<u64> = fewer
        .iter()
        .map(|l| ir3::assemble(l, generation).unwrap_or_else(|e| panic!("`{l}`: {e}")))
        .collect();
    let err = run_words(&out, &t, &words, &bits).unwrap_err();
    assert!(matches!(err, sim::SimError::Hazard { .. }), "{err}");

    // Clear the (ss) flag.
    let k = lines.iter().position(|l| l.contains("(ss)")).unwrap();
    let mut unsynced = lines.clone();
    unsynced[k] = lines[k].replacen("(ss)", "", 1);
    let words: Vec<u64> = unsynced
        .iter()
        .map(|l| ir3::assemble(l, generation).unwrap())
        .collect();
    let err = run_words(&out, &t, &words, &bits).unwrap_err();
    assert!(matches!(err, sim::SimError::Hazard { .. }), "{err}");
}

#[test]
fn the_statistics_line_has_mesas_fields_in_order() {
    let t = target("a630");
    let out = emitted(&allocated(DOT, &t), &t);
    let line = out.stats.to_string();
    let fields = [
        "inst",
        "nops",
        "non-nops",
        "mov",
        "cov",
        "dwords",
        "last-baryf",
        "last-helper",
        "half",
        "full",
        "constlen",
        "cat0",
        "cat1",
        "cat2",
        "cat3",
        "cat4",
        "cat5",
        "cat6",
        "cat7",
        "stp",
        "ldp",
        "sstall",
        "(ss)",
        "systall",
        "(sy)",
        "waves",
        "loops",
        // Lathe's own, after Mesa's: the preamble's instructions.
        "preamble",
    ];
    let (stage, rest) = line.split_once(" shader: ").unwrap();
    assert_eq!(stage, "MESA_SHADER_FRAGMENT");
    let names: Vec<&str> = rest
        .split(", ")
        .map(|f| f.split_once(' ').unwrap().1)
        .collect();
    assert_eq!(names, fields);
    let s = &out.stats;
    // Counted from the words: every word one instruction plus its slots.
    assert_eq!(s.dwords as usize, out.words.len() * 2);
    assert!(s.inst >= out.words.len() as u32);
    assert_eq!(s.cat.iter().sum::<u32>(), s.inst);
    assert_eq!(s.ss, out.asm.matches("(ss)").count() as u32);
    // Six inputs and temporaries fit in two vec4s of r0..r1 or so; the
    // spec's occupancy at that footprint.
    assert!(s.full >= 1 && s.full <= 3, "{line}");
    use lathe_passes::target::{FileId, TargetFacts};
    assert_eq!(s.waves, t.occupancy(FileId(0), s.full * 8));
}

/// A small deterministic generator (xorshift) for the random programs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// One random instruction over `pool` (full f32 values): ALU (cat2),
/// mad (cat3, its late third source) and SFU (cat4, (ss)) results, each
/// read soon after, so every latency rule comes up.
fn random_inst(rng: &mut Rng, pool: &[usize], next: usize) -> String {
    let mut pick = || pool[pool.len() - 1 - rng.below(pool.len().min(4))];
    let (a, b, c) = (pick(), pick(), pick());
    let body = match rng.below(7) {
        0 => format!("add.f full %{a}, %{b}"),
        1 => format!("mul.f full %{a}, %{b}"),
        2 => format!("max.f full %{a}, %{b}"),
        3 => format!("mad.f32 %{a}, %{b}, %{c}"),
        4 => format!("rcp full %{a}"),
        5 => format!("rsq full %{a}"),
        _ => format!("min.f full %{a}, %{b}"),
    };
    format!("  %{next}:f32 = {body}\n")
}

/// A random program: straight-line code, then (for odd seeds) a loop
/// whose body carries two values around a counter.
fn random_program(seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut text = String::from("shader fragment\nb0:\n");
    let mut pool: Vec<usize> = Vec::new();
    for i in 0..4 {
        text += &format!("  %{i}:f32 = input index={i}\n");
        pool.push(i);
    }
    if seed % 2 == 1 {
        text += "  %100:u32 = input index=4\n";
    }
    let count = 6 + rng.below(10);
    for next in 4..4 + count {
        text += &random_inst(&mut rng, &pool, next);
        pool.push(next);
    }
    let outputs: Vec<usize> = if seed % 2 == 1 {
        // b1: %x, %y carried; %n counts input 4 (u32) down.
        let (x0, y0) = (pool[pool.len() - 1], pool[pool.len() - 2]);
        text += "  jump b1\nb1:\n";
        text += &format!("  %101:f32 = phi [%{x0}, b0], [%111, b1]\n");
        text += &format!("  %102:f32 = phi [%{y0}, b0], [%112, b1]\n");
        text += "  %103:u32 = phi [%100, b0], [%104, b1]\n";
        text += "  %104:u32 = add.s full src2=0x27ff %103\n";
        let mut body = vec![101, 102];
        let count = 2 + rng.below(5);
        for k in 120..120 + count {
            text += &random_inst(&mut rng, &body, k);
            body.push(k);
        }
        text += &format!("  %111:f32 = add.f full %{}, %101\n", body[body.len() - 1]);
        text += &format!("  %112:f32 = mul.f full %{}, %102\n", body[body.len() - 2]);
        text += "  %105:bool = cmps.u dst_conv full cond=5 src2=0x2000 %104\n";
        text += "  branch %105, b1, b2\nb2:\n";
        vec![101, 102]
    } else {
        pool.iter().rev().take(3).copied().collect()
    };
    for (k, v) in outputs.iter().enumerate() {
        text += &format!("  output index={k} %{v}\n");
    }
    text + "  ret\n"
}

#[test]
fn random_programs_run_without_hazard_as_stepped() {
    let t = target("a630");
    for seed in 0..24u64 {
        let source = random_program(seed);
        let alloc = allocated(&source, &t);
        let out = emitted(&alloc, &t);
        assert_reassembles(&out, &t);
        let mut inputs: Vec<u32> = [1.5f32, -0.75, 3.0, 0.125].map(f32::to_bits).to_vec();
        inputs.push(1 + (seed as u32 % 3));
        let got = run_words(&out, &t, &out.words, &inputs)
            .unwrap_or_else(|e| panic!("seed {seed}: {e}\n{alloc}\n{}", out.asm));
        assert_eq!(
            got,
            stepped(&alloc, &t, &inputs),
            "seed {seed}\n{alloc}\n{}",
            out.asm
        );
    }
}

/// Spills and fills (stp/ldp to private memory, whose loads are waited
/// for with (sy)) emit and run as stepped.
#[test]
fn a_spilling_program_runs_without_hazard_as_stepped() {
    let t = target("a630");
    let alloc = allocated(include_str!("../examples/ir3-spill.lir"), &t);
    let out = emitted(&alloc, &t);
    assert!(out.stats.stp > 0 && out.stats.ldp > 0, "{}", out.stats);
    assert!(out.stats.sy > 0, "{}", out.stats);
    let inputs = [1.25f32.to_bits(), 0.5f32.to_bits()];
    let got = run_words(&out, &t, &out.words, &inputs).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(got, stepped(&alloc, &t, &inputs));
}

/// Two varyings interpolated at the preloaded (i, j): the last fetch
/// carries (ei), and the program reads what the planes give there.
const VARYINGS: &str = "shader fragment
b0:
  %0:f32 = input index=0
  %1:f32 = input index=1
  %2:f32x2 = collect %0, %1
  %3:f32 = bary.f full src1=0x2000 %2
  %4:f32 = bary.f full src1=0x2001 %2
  %5:f32 = add.f full %3, %4
  output index=0 %5
  ret
";

#[test]
fn the_last_varying_fetch_ends_the_input_phase() {
    let t = target("a630");
    let out = emitted(&allocated(VARYINGS, &t), &t);
    assert_reassembles(&out, &t);
    let fetches: Vec<&str> = out.asm.lines().filter(|l| l.contains("bary.f")).collect();
    assert_eq!(fetches.len(), 2, "{}", out.asm);
    assert!(
        !fetches[0].contains("(ei)") && fetches[1].contains("(ei)"),
        "{}",
        out.asm
    );
    assert_eq!(out.stats.last_baryf, {
        // Mesa's index of the last fetch counts (nopN) slots and repeats.
        let k = out.asm.lines().position(|l| l == fetches[1]).unwrap();
        let slots: u32 = out
            .asm
            .lines()
            .take(k)
            .map(|l| {
                let nop = l
                    .find("(nop")
                    .map_or(0, |at| l[at + 4..at + 5].parse().unwrap());
                let rpt = l
                    .find("(rpt")
                    .map_or(0, |at| l[at + 4..at + 5].parse().unwrap());
                1 + nop + rpt
            })
            .sum();
        slots
    });

    let mut m = sim::machine(1);
    let mut io = lathe_isa::sim::Harness::default();
    io.varyings = vec![[1.0, 3.0, 5.0], [2.0, 2.5, 4.0]];
    m.set_io(Box::new(io));
    let (i, j) = (0.25f32, 0.5f32);
    for (s, v) in out.interface.inputs.iter().zip([i, j]) {
        let (file, half, index) = m.parse_reg(&s.register).unwrap();
        m.set(file, half, index, 0, v.to_bits()).unwrap();
    }
    sim::run(&mut m, &out.words, ir3::Generation::A6xx).unwrap_or_else(|e| panic!("{e}"));
    let plane = |p: [f32; 3]| p[0] + i * (p[1] - p[0]) + j * (p[2] - p[0]);
    let want = plane([1.0, 3.0, 5.0]) + plane([2.0, 2.5, 4.0]);
    let (file, half, index) = m.parse_reg(&out.interface.outputs[0].register).unwrap();
    assert_eq!(m.get(file, half, index, 0), Some(want.to_bits()));
}
