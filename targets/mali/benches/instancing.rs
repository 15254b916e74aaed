//! Throughput of the driver-side instancing math.
//!
//! Run with `cargo bench -p lathe-mali --bench instancing`.

use lathe_mali::instancing::{AttributeRate, Draw, magic_divisor, padded_vertex_count};
use std::hint::black_box;
use std::time::{Duration, Instant};

/// Runs `body` over `inputs` repeatedly for about `budget` and reports the
/// best pass, so a scheduling hiccup does not count against the code.
fn bench<T: Copy>(name: &str, inputs: &[T], budget: Duration, mut body: impl FnMut(T) -> u64) {
    let mut best = Duration::MAX;
    let mut checksum = 0u64;
    let start = Instant::now();
    while start.elapsed() < budget {
        let pass = Instant::now();
        for &input in inputs {
            checksum = checksum.wrapping_add(body(black_box(input)));
        }
        best = best.min(pass.elapsed());
    }
    let ns_per_op = best.as_nanos() as f64 / inputs.len() as f64;
    println!(
        "{name:<40} {ns_per_op:>8.2} ns/op {:>10.1} Mops/s   (checksum {checksum:x})",
        1e3 / ns_per_op
    );
}

/// A fixed pseudo-random sequence (SplitMix64), so runs are comparable.
fn random_u32s(count: usize, mut state: u64) -> Vec<u32> {
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            (z ^ (z >> 31)) as u32
        })
        .collect()
}

fn main() {
    let budget = Duration::from_millis(500);
    let inputs = 1 << 16;

    let small: Vec<u32> = (1..=inputs).collect();
    bench("padded_vertex_count (1..=65536)", &small, budget, |v| {
        u64::from(padded_vertex_count(v))
    });
    let random = random_u32s(inputs as usize, 1);
    bench("padded_vertex_count (random u32)", &random, budget, |v| {
        u64::from(padded_vertex_count(v))
    });

    let npot_small: Vec<u32> = (3..)
        .filter(|d: &u32| !d.is_power_of_two())
        .take(inputs as usize)
        .collect();
    bench("magic_divisor (small non-POT)", &npot_small, budget, |d| {
        magic_divisor(d).map_or(0, |m| u64::from(m.magic()))
    });
    bench("magic_divisor (random u32)", &random, budget, |d| {
        magic_divisor(d).map_or(0, |m| u64::from(m.magic()))
    });

    let magic = magic_divisor(216).expect("216 is not a power of two");
    bench(
        "MagicDivisor::divide (model, d = 216)",
        &random,
        budget,
        |n| u64::from(magic.divide(n)),
    );

    let draws: Vec<(u32, u32)> = random
        .chunks_exact(2)
        .map(|pair| (pair[0] % 100_000 + 1, pair[1] % 1_000 + 1))
        .collect();
    bench(
        "Draw::new + per-instance descriptor",
        &draws,
        budget,
        |(vertices, divisor)| {
            let rate = AttributeRate::per_instance(divisor).expect("divisor is at least 1");
            Draw::new(vertices, 64).map_or(0, |draw| u64::from(draw.attribute(rate).shift()))
        },
    );
}
