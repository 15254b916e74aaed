//! Differential tests of compute shaders: each runs on lavapipe and,
//! lowered by `lathe-frontend` from the same SPIR-V, in the IR
//! interpreter's dispatch, on the same storage buffers, uniform buffer,
//! push constants and workgroup count. Results must agree slot by slot as
//! `support/random_compute.rs` and `support/precision.rs` say: integers
//! bit for bit, exactly defined floats as floats, bounded operations each
//! within the Vulkan spec's bound of an `f64` reference (checked for both
//! lavapipe and the interpreter).

mod support;

use lathe_frontend::{Options, lower_spirv};
use lathe_ir::interp::{Dispatch, Memory};
use lathe_ir::{Invocation, Limits};
use std::collections::BTreeSet;
use support::precision::{check, exact_equal};
use support::random_compute::{Check, RandomShader, generate};
use support::{oracle, run_on_lavapipe_full, wgsl_to_spirv};

/// Shaders per run (the issue asks for at least 1,000 per CI run).
const SHADERS: u64 = 1000;
/// Shared-memory words given to every workgroup (more than any generated
/// shader declares).
const SHARED_WORDS: usize = 1024;

/// The opcode names in an IR text (the first word of every instruction).
fn opcodes(text: &str, seen: &mut BTreeSet<String>) {
    for line in text.lines().map(str::trim) {
        if line.ends_with(':')
            || line.starts_with("shader")
            || line.starts_with("array")
            || line.is_empty()
        {
            continue;
        }
        let inst = line.split_once(" = ").map_or(line, |(_, rhs)| rhs);
        if let Some(name) = inst.split_whitespace().next() {
            seen.insert(name.to_string());
        }
    }
}

/// Run `shader` in the interpreter; returns (dst, atomics) words and
/// records the opcodes of the lowered shader in `seen`.
fn interpret(
    shader: &RandomShader,
    spirv: &[u32],
    seen: &mut BTreeSet<String>,
) -> Result<(Vec<u32>, Vec<u32>), String> {
    let arena = lathe_ir::Bump::new();
    // Without the cleanup passes, so every opcode the lowering emits counts.
    let raw = lower_spirv(
        &arena,
        spirv,
        &Options {
            passes: false,
            ..Options::default()
        },
    )
    .map_err(|e| format!("frontend: {e}"))?;
    opcodes(&lathe_ir::print(&raw.shader), seen);
    let lowered =
        lower_spirv(&arena, spirv, &Options::default()).map_err(|e| format!("frontend: {e}"))?;
    let iface = &lowered.interface;
    let mut base = Invocation {
        uniforms: shader.push.clone(),
        ..Invocation::default()
    };
    let mut memory = Memory::default();
    let contents = [&shader.src, &shader.dst, &shader.atomics];
    let mut dst_index = None;
    let mut atom_index = None;
    for r in &iface.resources {
        let index = r.index as usize;
        match (r.kind.as_str(), r.binding) {
            ("storage_buffer", b @ 0..=2) => {
                if memory.ssbos.len() <= index {
                    memory.ssbos.resize(index + 1, Vec::new());
                }
                memory.ssbos[index] = contents[b as usize].clone();
                if b == 1 {
                    dst_index = Some(index);
                } else if b == 2 {
                    atom_index = Some(index);
                }
            }
            ("uniform_buffer", 3) => {
                if base.ubos.len() <= index {
                    base.ubos.resize(index + 1, Vec::new());
                }
                base.ubos[index] = shader.uniform.clone();
            }
            (kind, b) => return Err(format!("unexpected {kind} at binding {b}")),
        }
    }
    let dispatch = Dispatch {
        workgroup_size: iface.workgroup_size.ok_or("no workgroup size")?,
        num_workgroups: shader.workgroups,
        shared_words: SHARED_WORDS,
    };
    lathe_ir::interp::dispatch(
        &lowered.shader,
        &base,
        &dispatch,
        &mut memory,
        Limits::default(),
    )
    .map_err(|e| format!("interpreter: {e}"))?;
    // A buffer the shader does not use is not in the interface: unchanged.
    let take = |i: Option<usize>, initial: &Vec<u32>| {
        i.map_or(initial.clone(), |i| memory.ssbos[i].clone())
    };
    Ok((
        take(dst_index, &shader.dst),
        take(atom_index, &shader.atomics),
    ))
}

/// Compare one shader; the error names the first slots that differ.
fn compare(seed: u64, stats: &mut [usize; 3], seen: &mut BTreeSet<String>) -> Result<(), String> {
    let shader = generate(seed);
    let spirv = wgsl_to_spirv(&shader.wgsl, naga::ShaderStage::Compute)?;
    let (gpu_dst, gpu_atoms) = run_on_lavapipe_full(oracle(), &shader, &spirv);
    let (dst, atoms) = interpret(&shader, &spirv, seen)?;
    let mut problems = Vec::new();
    if atoms != gpu_atoms {
        problems.push(format!(
            "atomics: lavapipe {gpu_atoms:x?}, interpreter {atoms:x?}"
        ));
    }
    let n = shader.slots.len();
    for inv in 0..shader.invocations() as usize {
        let (g, i) = (
            &gpu_dst[inv * n..(inv + 1) * n],
            &dst[inv * n..(inv + 1) * n],
        );
        for (slot, c) in shader.slots.iter().enumerate() {
            let ok = match c {
                Check::Bits | Check::Float => {
                    stats[if *c == Check::Bits { 0 } else { 1 }] += 1;
                    exact_equal(c, g[slot], i[slot])
                        .then_some(())
                        .ok_or_else(|| {
                            format!("lavapipe 0x{:08x}, interpreter 0x{:08x}", g[slot], i[slot])
                        })
                }
                Check::Approx { .. } => {
                    stats[2] += 1;
                    check(c, g[slot], g)
                        .map_err(|e| format!("lavapipe {e}"))
                        .and_then(|_| check(c, i[slot], i).map_err(|e| format!("interpreter {e}")))
                }
            };
            if let Err(e) = ok {
                problems.push(format!("invocation {inv} slot {slot} ({c:?}): {e}"));
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} differences, first: {}\n{}",
            problems.len(),
            problems[..problems.len().min(3)].join("; "),
            shader.wgsl
        ))
    }
}

#[test]
fn random_compute_shaders_match_lavapipe() {
    let only: Option<u64> = std::env::var("LATHE_ORACLE_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let seeds: Vec<u64> = (0..SHADERS)
        .filter(|s| only.is_none_or(|o| o == *s))
        .collect();
    // Two workers share the lavapipe device (pipeline creation runs in parallel).
    let (mut failures, mut stats, mut seen) = (Vec::new(), [0usize; 3], BTreeSet::new());
    std::thread::scope(|scope| {
        let workers: Vec<_> = seeds
            .chunks(seeds.len().div_ceil(2).max(1))
            .map(|chunk| {
                scope.spawn(move || {
                    let (mut failures, mut stats, mut seen) =
                        (Vec::new(), [0usize; 3], BTreeSet::new());
                    for &seed in chunk {
                        if let Err(e) = compare(seed, &mut stats, &mut seen) {
                            failures.push(format!("seed {seed}: {e}"));
                        }
                    }
                    (failures, stats, seen)
                })
            })
            .collect();
        for w in workers {
            let (f, s, o) = w.join().expect("worker");
            seen.extend(o);
            failures.extend(f);
            (0..3).for_each(|k| stats[k] += s[k]);
        }
    });
    println!(
        "{SHADERS} shaders: {} integer, {} exact-float and {} bounded results compared; {} shaders differ",
        stats[0],
        stats[1],
        stats[2],
        failures.len()
    );
    // Every generic opcode (ir/examples/all_opcodes.lir uses each once)
    // that these shaders did not reach.
    let all = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../ir/examples/all_opcodes.lir"
    ))
    .expect("ir/examples/all_opcodes.lir");
    let mut every = BTreeSet::new();
    opcodes(&all, &mut every);
    let unseen: Vec<&String> = every.difference(&seen).collect();
    println!("opcodes reached: {}; not reached: {unseen:?}", seen.len());
    for f in &failures {
        if only.is_some() {
            println!("{f}");
        } else {
            println!("FAIL {}", f.lines().next().unwrap_or(""));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {SHADERS} shaders differ (first printed above)",
        failures.len()
    );
}
