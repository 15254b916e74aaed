//! Simulation speed of the generated ir3 simulator: a hazard-free ALU
//! program (float add/mul/mad, integer add/shift/logic, compares,
//! selects, moves and conversions, an SFU op waited for with (ss)) run
//! over a 2×2 quad of threads, repeated. Reports thread-instructions per
//! second (instructions issued × active threads).
//!
//! `cargo bench -p lathe-adreno --bench ir3_sim`

use std::hint::black_box;
use std::time::Instant;

use lathe_adreno::ir3::{Generation, assemble_source, sim};

const G: Generation = Generation::A6xx;
const LANES: usize = 4;

/// Eight independent chains over r0..r7 (float) and r8..r15 (integer):
/// each instruction reads results at least four issues old, so no nops
/// are needed and the timing model checks every read.
fn program() -> String {
    let mut p = String::new();
    for round in 0..8 {
        let f = |k: usize| (round * 3 + k) % 8;
        let i = |k: usize| 8 + (round * 5 + k) % 8;
        p.push_str(&format!("add.f r{}.x, r{}.y, r{}.z\n", f(0), f(1), f(2)));
        p.push_str(&format!("mul.f r{}.y, r{}.x, r{}.w\n", f(3), f(4), f(5)));
        p.push_str(&format!("add.u r{}.x, r{}.y, r{}.z\n", i(0), i(1), i(2)));
        p.push_str(&format!("shl.b r{}.y, r{}.x, 3\n", i(3), i(4)));
        p.push_str(&format!(
            "mad.f32 r{}.z, r{}.x, r{}.y, r{}.w\n",
            f(6),
            f(7),
            f(0),
            f(1)
        ));
        p.push_str(&format!("and.b r{}.z, r{}.w, r{}.x\n", i(5), i(6), i(7)));
        p.push_str(&format!(
            "cmps.f.lt r{}.w, r{}.y, r{}.z\n",
            i(0),
            f(2),
            f(3)
        ));
        p.push_str(&format!(
            "sel.b32 r{}.w, r{}.x, r{}.y, r{}.z\n",
            f(4),
            f(5),
            i(1),
            f(6)
        ));
        p.push_str(&format!("mov.f32f32 r{}.x, r{}.y\n", f(7), f(1)));
        p.push_str(&format!("cov.s32f32 r{}.w, r{}.z\n", f(5), i(2)));
        p.push_str(&format!("max.f r{}.y, r{}.z, r{}.w\n", f(2), f(3), f(4)));
        p.push_str(&format!("xor.b r{}.x, r{}.y, r{}.z\n", i(3), i(4), i(5)));
    }
    p.push_str("rcp r20.x, r1.y\n(ss)add.f r20.y, r20.x, r0.x\nend\n");
    p
}

fn main() {
    let source = program();
    let program = match assemble_source(&source, G) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("the bench program does not assemble: {e:?}");
            return;
        }
    };
    let mut m = sim::machine(LANES);
    for reg in 0..16u32 {
        for (c, comp) in ["x", "y", "z", "w"].iter().enumerate() {
            let (f, h, i) = m.parse_reg(&format!("r{reg}.{comp}")).expect("register");
            for lane in 0..LANES {
                let v = 1.0 + reg as f32 * 0.25 + c as f32 + lane as f32 * 0.5;
                m.set(f, h, i, lane, v.to_bits());
            }
        }
    }
    if let Err(e) = sim::run(&mut m, &program, G) {
        eprintln!("the bench program does not run: {e}");
        return;
    }
    let rounds = 20_000u64;
    let start = Instant::now();
    for _ in 0..rounds {
        // Restart the quad; registers keep their values.
        m.pc.iter_mut().for_each(|pc| *pc = Some(0));
        black_box(sim::run(&mut m, black_box(&program), G)).expect("runs");
    }
    let seconds = start.elapsed().as_secs_f64();
    // `end` issues too: every instruction runs on all four threads.
    let thread_instrs = rounds * program.len() as u64 * LANES as u64;
    println!(
        "ir3 sim, {} instructions x {LANES} threads: {:.1} M thread-instr/s ({:.1} ns per instruction issue)",
        program.len(),
        thread_instrs as f64 / seconds / 1e6,
        seconds * 1e9 / (rounds * program.len() as u64) as f64
    );
}
