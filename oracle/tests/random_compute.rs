//! Random compute shaders on lavapipe: every result whose precision the
//! Vulkan spec bounds must lie within that bound of an `f64` reference
//! (see `support/precision.rs`). This checks the generator and the
//! tolerances against a conformant driver; `compute_diff.rs` compares the
//! same shaders with Lathe's interpreter.

mod support;

use support::random_compute::{Check, generate};
use support::{oracle, run_on_lavapipe};

#[test]
fn approximate_results_are_within_the_spec_bounds() {
    let oracle = oracle();
    let mut checked = 0;
    let mut failures = Vec::new();
    for seed in 0..200u64 {
        let shader = generate(seed);
        let words = run_on_lavapipe(oracle, seed, &shader);
        let slots = shader.slots.len();
        for inv in 0..shader.invocations() as usize {
            let row = &words[inv * slots..(inv + 1) * slots];
            for (slot, check) in shader.slots.iter().enumerate() {
                if let Check::Approx { .. } = check {
                    checked += 1;
                    if let Err(e) = support::precision::check(check, row[slot], row) {
                        failures.push(format!("seed {seed} invocation {inv} slot {slot}: {e}"));
                    }
                }
            }
        }
    }
    println!("{checked} bounded results checked");
    assert!(checked > 1000, "only {checked} bounded results");
    assert!(
        failures.is_empty(),
        "{} outside the bounds:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn bounds_reject_values_outside_them() {
    use support::precision::check;
    use support::random_compute::Approx;
    let approx = |op, args: Vec<usize>| Check::Approx { op, args, comp: 0 };
    let words = [1.0f32.to_bits(), 3.0f32.to_bits()];
    // sin: 2^-11 absolute.
    let sin = approx(Approx::Sin, vec![0]);
    let exact = 1.0f64.sin() as f32;
    assert!(check(&sin, exact.to_bits(), &words).is_ok());
    assert!(check(&sin, (exact + 0.0004).to_bits(), &words).is_ok());
    assert!(check(&sin, (exact + 0.0006).to_bits(), &words).is_err());
    // 1 / 3: 2.5 ulp.
    let div = approx(Approx::Div, vec![0, 1]);
    let third = 1.0f32 / 3.0;
    let step = |x: f32, n: i32| f32::from_bits((x.to_bits() as i32 + n) as u32);
    assert!(check(&div, step(third, 2).to_bits(), &words).is_ok());
    assert!(check(&div, step(third, 3).to_bits(), &words).is_err());
    // Exactly defined floats: NaNs alike, zero signs and denormals as zero.
    assert!(support::precision::exact_equal(
        &Check::Float,
        0x7fc0_0000,
        0xffc0_0001
    ));
    assert!(support::precision::exact_equal(
        &Check::Float,
        0x8000_0000,
        0x0000_0001
    ));
    assert!(!support::precision::exact_equal(
        &Check::Float,
        0x3f80_0000,
        0x3f80_0001
    ));
    assert!(!support::precision::exact_equal(
        &Check::Bits,
        0x8000_0000,
        0
    ));
}
