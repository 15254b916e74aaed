//! Profiling aid: disassembles the ir3 vector words in a loop with the
//! generated display code, prints the 25 slowest words and the throughput.
//! `cargo run --release -p lathe-adreno --example ir3_disasm_loop`
use lathe_adreno::ir3::generated::display::push_word;
use std::time::Instant;

fn main() {
    let words: Vec<(u32, u64)> = include_str!("../tests/ir3-data/ir3-disasm.tsv")
        .lines()
        .skip(1)
        .filter_map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            Some((
                c.get(2)?.parse().ok()?,
                u64::from_str_radix(c.get(3)?, 16).ok()?,
            ))
        })
        .collect();
    let mut s = String::with_capacity(256);
    let rounds = 20_000u64;
    let t = Instant::now();
    let mut n = 0u64;
    for _ in 0..rounds {
        for &(g, w) in &words {
            s.clear();
            n += u64::from(push_word(std::hint::black_box(w), g, true, false, &mut s).is_ok());
        }
    }
    let dt = t.elapsed().as_secs_f64();
    let total = rounds * words.len() as u64;
    slowest(&words);
    println!(
        "{n}/{total} ok, {:.1} ns/instr, {:.1} M/s",
        dt * 1e9 / total as f64,
        total as f64 / dt / 1e6
    );
}

fn slowest(words: &[(u32, u64)]) {
    let mut s = String::with_capacity(256);
    let mut v: Vec<(f64, u64, String)> = words
        .iter()
        .map(|&(g, w)| {
            let t = Instant::now();
            for _ in 0..2000 {
                s.clear();
                let _ = push_word(std::hint::black_box(w), g, true, false, &mut s);
            }
            (t.elapsed().as_secs_f64() * 1e9 / 2000.0, w, s.clone())
        })
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ns, w, t) in v.iter().take(25) {
        println!("{ns:7.1} ns  {w:016x}  {t}");
    }
    let mut all: Vec<f64> = v.iter().map(|x| x.0).collect();
    all.sort_by(f64::total_cmp);
    println!("median {:.1} ns", all[all.len() / 2]);
}
