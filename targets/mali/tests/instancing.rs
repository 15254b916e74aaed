//! The instancing math checked against plain integer arithmetic: the magic
//! divide over every small divisor and many large ones, the padded count over
//! every count below 2^20, and whole draws against GL's attribute semantics.

use lathe_mali::instancing::{
    AttributeDescriptor, AttributeRate, Draw, InstancingError, MagicDivisor, Modulus,
    magic_divisor, padded_vertex_count, try_padded_vertex_count,
};

/// SplitMix64: a small, fixed pseudo-random sequence so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `1..=max` (max ≥ 1); the tiny modulo bias does not matter here.
    fn up_to(&mut self, max: u32) -> u32 {
        (self.next_u64() % u64::from(max)) as u32 + 1
    }
}

/// The constants the instancing notes prescribe, computed independently in
/// 128-bit arithmetic: (shift, full multiplier, extra_flags).
fn spec_constants(d: u32) -> (u32, u64, u32) {
    let shift = 31 - d.leading_zeros();
    let numerator = 1u128 << (32 + shift);
    let d = u128::from(d);
    let ceil = numerator.div_ceil(d);
    let remainder = numerator % d;
    if remainder <= 1 << shift {
        (shift, (ceil - 1) as u64, 1)
    } else {
        (shift, ceil as u64, 0)
    }
}

/// Checks the model against `n / d` on the numbers where a reciprocal is
/// most likely to be off by one, plus a few random ones. No allocation.
fn check_divisor(d: u32, rng: &mut Rng) {
    let magic = match magic_divisor(d) {
        Ok(magic) => magic,
        Err(err) => panic!("magic_divisor({d}) failed: {err}"),
    };
    let check = |n: u32| {
        let got = magic.divide(n);
        if got != n / d {
            panic!("d = {d}, n = {n}: model gives {got}, want {}", n / d);
        }
    };
    let last_multiple = u32::MAX / d; // the largest q with q·d ≤ u32::MAX
    for q in [
        1,
        2,
        3,
        last_multiple / 2,
        last_multiple - 1,
        last_multiple,
        rng.up_to(last_multiple),
    ] {
        // Large divisors have only one or two multiples below 2^32.
        let Some(multiple) = q.checked_mul(d).filter(|&m| m > 0) else {
            continue;
        };
        check(multiple - 1);
        check(multiple);
        if let Some(next) = multiple.checked_add(1) {
            check(next);
        }
    }
    for n in [0, 1, u32::MAX - 1, u32::MAX, rng.next_u32(), rng.next_u32()] {
        check(n);
    }
}

#[test]
fn magic_divide_is_exact_for_every_non_power_of_two_below_2_pow_20() {
    let mut rng = Rng(20);
    for d in (3..=1u32 << 20).filter(|d| !d.is_power_of_two()) {
        check_divisor(d, &mut rng);
    }
}

#[test]
fn magic_divide_is_exact_for_random_large_divisors() {
    let mut rng = Rng(32);
    let fixed = [
        (1 << 20) + 1,
        (1 << 31) - 1,
        (1 << 31) + 1,
        0xDFFF_FFFF,
        u32::MAX - 1,
        u32::MAX,
    ];
    let random = (0..200_000).map(|_| rng.next_u32()).collect::<Vec<_>>();
    for d in fixed
        .into_iter()
        .chain(random)
        .filter(|&d| d > 2 && !d.is_power_of_two())
    {
        check_divisor(d, &mut rng);
    }
}

#[test]
fn magic_divide_is_exact_for_every_16_bit_numerator_on_small_divisors() {
    let divisors = (3..=300u32)
        .chain([
            641,
            1000,
            4095,
            65_535,
            65_537,
            1_000_000,
            (1 << 31) + 1,
            u32::MAX,
        ])
        .filter(|d| !d.is_power_of_two());
    for d in divisors {
        let magic = magic_divisor(d).unwrap();
        for n in 0..1u32 << 16 {
            let got = magic.divide(n);
            if got != n / d {
                panic!("d = {d}, n = {n}: model gives {got}, want {}", n / d);
            }
        }
    }
}

#[test]
fn magic_constants_follow_the_rounding_rule() {
    let mut rng = Rng(7);
    let mut rounded = [0u32; 2]; // how many divisors rounded up / down
    let divisors = (3..=5000u32).chain((0..5000).map(|_| rng.next_u32()));
    for d in divisors.filter(|&d| d > 2 && !d.is_power_of_two()) {
        let magic = magic_divisor(d).unwrap();
        let got = (magic.shift(), magic.multiplier(), magic.extra_flags());
        assert_eq!(got, spec_constants(d), "d = {d}");
        assert_eq!(magic.multiplier(), (1 << 31) | u64::from(magic.magic()));
        assert!(
            magic.magic() < 1 << 31,
            "d = {d}: the field must leave bit 31 clear"
        );
        rounded[magic.extra_flags() as usize] += 1;
    }
    assert!(
        rounded[0] > 0 && rounded[1] > 0,
        "both roundings occur: {rounded:?}"
    );
}

#[test]
fn magic_divisor_rejects_zero_and_points_powers_of_two_at_a_shift() {
    assert_eq!(magic_divisor(0), Err(InstancingError::ZeroDivisor));
    for shift in 0..32 {
        assert_eq!(
            magic_divisor(1 << shift),
            Err(InstancingError::PowerOfTwoDivisor {
                divisor: 1 << shift,
                shift
            })
        );
    }
}

#[test]
fn raw_magic_fields_round_trip() {
    let magic = magic_divisor(216).unwrap();
    let raw = MagicDivisor::from_fields(magic.shift(), magic.magic(), magic.extra_flags());
    assert_eq!(raw, Ok(magic));
}

#[test]
fn padded_count_matches_the_documented_examples() {
    assert_eq!(padded_vertex_count(70), 72);
    assert_eq!(try_padded_vertex_count(70), Ok(72));
    // One count from each row of the table, at n = 3 (counts 64..=127).
    for (vertices, padded) in [(64, 72), (71, 72), (72, 80), (79, 80), (80, 96), (95, 96)] {
        assert_eq!(
            try_padded_vertex_count(vertices),
            Ok(padded),
            "vertices = {vertices}"
        );
    }
    for (vertices, padded) in [(96, 112), (111, 112), (112, 128), (127, 128), (128, 144)] {
        assert_eq!(
            try_padded_vertex_count(vertices),
            Ok(padded),
            "vertices = {vertices}"
        );
    }
    assert_eq!(
        try_padded_vertex_count(0),
        Err(InstancingError::ZeroVertexCount)
    );
}

/// The padded count restated without the table: the smallest of
/// `{9, 10, 12, 14, 16}·2^n` above the count, `n` = bits below the top four.
fn smallest_candidate_above(vertices: u32) -> u64 {
    let n = 32 - vertices.leading_zeros() - 4;
    [9u64, 10, 12, 14, 16]
        .into_iter()
        .map(|k| k << n)
        .find(|&candidate| candidate > u64::from(vertices))
        .unwrap_or(0)
}

#[test]
fn padded_count_is_right_for_every_count_below_2_pow_20() {
    for vertices in 1..1u32 << 20 {
        let padded = try_padded_vertex_count(vertices).unwrap();
        assert!(padded >= vertices, "{vertices} pads down to {padded}");
        if vertices < 10 {
            assert_eq!(padded, vertices);
        } else if vertices < 20 {
            assert_eq!(
                padded,
                vertices.next_multiple_of(2),
                "vertices = {vertices}"
            );
        } else {
            assert!(padded > vertices, "{vertices} pads to itself");
            assert_eq!(
                u64::from(padded),
                smallest_candidate_above(vertices),
                "vertices = {vertices}"
            );
            let odd = padded >> padded.trailing_zeros();
            assert!(
                matches!(odd, 1 | 3 | 5 | 7 | 9),
                "{vertices} pads to {padded}"
            );
        }
        // Every padded count, small ones included, can be a modulus.
        assert_eq!(
            Modulus::of_value(padded).map(Modulus::value),
            Ok(u64::from(padded))
        );
    }
}

#[test]
fn padded_count_at_the_top_of_the_range() {
    let mut rng = Rng(99);
    for vertices in (0..100_000).map(|_| rng.next_u32() | 1 << 20) {
        match try_padded_vertex_count(vertices) {
            Ok(padded) => assert_eq!(u64::from(padded), smallest_candidate_above(vertices)),
            Err(err) => {
                assert_eq!(err, InstancingError::PaddedCountOverflow { vertices });
                assert_eq!(smallest_candidate_above(vertices), 1 << 32);
            }
        }
    }
}

/// What GL says an attribute reads for `vertex` of `instance`.
fn gl_element(rate: AttributeRate, vertex: u32, instance: u32) -> u32 {
    match rate {
        AttributeRate::PerVertex => vertex,
        AttributeRate::PerInstance { divisor } => instance / divisor.get(),
    }
}

/// Checks one (vertex, instance) pair of a draw through every descriptor.
fn check_pair(
    draw: &Draw,
    attributes: &[(AttributeRate, AttributeDescriptor)],
    vertex: u32,
    instance: u32,
) {
    let Some(linear_id) = draw.linear_id(vertex, instance) else {
        panic!("{draw:?}: ({vertex}, {instance}) has no linear id");
    };
    for &(rate, descriptor) in attributes {
        let got = descriptor.element_index(linear_id);
        let want = gl_element(rate, vertex, instance);
        if got != want {
            panic!(
                "{draw:?} {rate:?} {descriptor:?}: vertex {vertex} instance {instance} reads {got}, want {want}"
            );
        }
    }
    assert_eq!(
        draw.vertex_id_record().vertex_id(linear_id),
        vertex,
        "{draw:?}"
    );
    assert_eq!(
        draw.instance_id_record().instance_id(linear_id),
        instance,
        "{draw:?}"
    );
}

fn random_divisor(rng: &mut Rng, instances: u32) -> u32 {
    match rng.up_to(4) {
        1 => rng.up_to(8),
        2 => rng.up_to(instances.saturating_add(2)),
        3 => rng.next_u32().max(1),
        _ => rng.up_to(1000),
    }
}

fn descriptors(draw: &Draw, divisors: &[u32]) -> Vec<(AttributeRate, AttributeDescriptor)> {
    let mut rates = vec![AttributeRate::PerVertex];
    rates.extend(
        divisors
            .iter()
            .map(|&d| AttributeRate::per_instance(d).unwrap()),
    );
    rates
        .into_iter()
        .map(|rate| (rate, draw.attribute(rate)))
        .collect()
}

#[test]
fn random_small_draws_fetch_what_gl_requires_for_every_vertex_and_instance() {
    let mut rng = Rng(2024);
    for _ in 0..1500 {
        let vertices = match rng.up_to(3) {
            1 => rng.up_to(24),
            2 => rng.up_to(200),
            _ => rng.up_to(2000),
        };
        let instances = rng.up_to(20_000 / vertices).min(300);
        let draw = Draw::new(vertices, instances).unwrap();
        let divisors = [
            1,
            random_divisor(&mut rng, instances),
            random_divisor(&mut rng, instances),
        ];
        let attributes = descriptors(&draw, &divisors);
        for instance in 0..instances {
            for vertex in 0..vertices {
                check_pair(&draw, &attributes, vertex, instance);
            }
        }
    }
}

#[test]
fn random_large_draws_fetch_what_gl_requires_on_edges_and_samples() {
    let mut rng = Rng(4096);
    for _ in 0..3000 {
        // Log-uniform-ish sizes: a random bound, then a count below it.
        let bound = rng.next_u32().max(1);
        let vertices = rng.up_to(bound);
        let Ok(padded) = try_padded_vertex_count(vertices) else {
            continue;
        };
        let max_instances = u32::MAX / padded;
        if max_instances == 0 {
            continue;
        }
        // Bias towards draws that use nearly the whole 32-bit id space.
        let instances = if rng.up_to(2) == 1 {
            max_instances
        } else {
            rng.up_to(max_instances)
        };
        let draw = Draw::new(vertices, instances).unwrap();
        let divisors = [
            random_divisor(&mut rng, instances),
            random_divisor(&mut rng, instances),
        ];
        let attributes = descriptors(&draw, &divisors);
        let vertex_edges = [0, 1, vertices / 2, vertices - 1];
        let instance_edges = [
            0,
            1,
            instances / 2,
            instances - 1,
            divisors[0].min(instances - 1),
        ];
        for &instance in &instance_edges {
            for &vertex in &vertex_edges {
                check_pair(
                    &draw,
                    &attributes,
                    vertex.min(vertices - 1),
                    instance.min(instances - 1),
                );
            }
        }
        for _ in 0..50 {
            check_pair(
                &draw,
                &attributes,
                rng.up_to(vertices) - 1,
                rng.up_to(instances) - 1,
            );
        }
    }
}

#[test]
fn draws_beyond_32_bit_linear_ids_are_rejected() {
    assert_eq!(Draw::new(0, 4), Err(InstancingError::ZeroVertexCount));
    assert_eq!(Draw::new(4, 0), Err(InstancingError::ZeroInstanceCount));
    let mut rng = Rng(5);
    for _ in 0..10_000 {
        let vertices = rng.next_u32().max(1);
        let instances = rng.next_u32().max(1);
        let result = Draw::new(vertices, instances);
        match try_padded_vertex_count(vertices) {
            Err(err) => assert_eq!(result, Err(err)),
            Ok(padded) => {
                let threads = u64::from(padded) * u64::from(instances);
                assert_eq!(
                    result.is_ok(),
                    threads <= u64::from(u32::MAX),
                    "{vertices} × {instances}"
                );
            }
        }
    }
}

#[test]
fn single_instance_draws_use_linear_per_vertex_addressing() {
    let draw = Draw::new(70, 1).unwrap();
    assert_eq!(
        draw.attribute(AttributeRate::PerVertex),
        AttributeDescriptor::Linear
    );
    let per_instance = draw.attribute(AttributeRate::per_instance(5).unwrap());
    assert!((0..70).all(|vertex| per_instance.element_index(vertex) == 0));
}
