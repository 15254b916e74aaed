//! Profiling aid: disassembles the Valhall vector words in a loop with the
//! generated display code and prints the throughput.
//! `cargo run --release -p lathe-mali --example valhall_disasm_loop`
use lathe_mali::valhall::generated::display::push_word;
use std::time::Instant;

fn main() {
    let words: Vec<u64> = include_str!("../tests/valhall-data/assembler-cases.txt")
        .lines()
        .filter_map(|l| {
            let b: Vec<u8> = l
                .split_whitespace()
                .take(8)
                .map(|b| u8::from_str_radix(b, 16))
                .collect::<Result<_, _>>()
                .ok()?;
            Some(u64::from_le_bytes(b.try_into().ok()?))
        })
        .collect();
    let mut s = String::with_capacity(256);
    let rounds = 50_000u64;
    let t = Instant::now();
    let mut n = 0u64;
    for _ in 0..rounds {
        for &w in &words {
            s.clear();
            n += u64::from(push_word(std::hint::black_box(w), 10, true, false, &mut s).is_ok());
        }
    }
    let dt = t.elapsed().as_secs_f64();
    let total = rounds * words.len() as u64;
    println!(
        "{n}/{total} ok, {:.1} ns/instr, {:.1} M/s",
        dt * 1e9 / total as f64,
        total as f64 / dt / 1e6
    );
}
