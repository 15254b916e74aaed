//! Times FDM planning: `cargo bench -p lathe-adreno --bench fdm_plan`.

use lathe_adreno::fdm::{parse_scene, plan};
use serde_json::json;
use std::hint::black_box;
use std::time::Instant;

/// A 4096×4096 stereo render pass in 256×128 bins with a foveated density
/// map (1× in the centre, 2× and 4× outwards) and per-eye FDM offsets.
fn large_scene() -> String {
    let (cols, rows): (i32, i32) = (64, 64); // 64-pixel texels
    let layer = |shift: i32| {
        (0..rows)
            .map(|r| {
                (0..cols)
                    .map(|c| {
                        let d = (c - cols / 2 + shift).abs().max((r - rows / 2).abs());
                        let a = if d < 8 {
                            1.0
                        } else if d < 20 {
                            2.0
                        } else {
                            4.0
                        };
                        json!([a, a])
                    })
                    .collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    };
    json!({
        "gpu": "a740",
        "framebuffer": {"width": 4096, "height": 4096},
        "tile": {"width": 256, "height": 128},
        "vsc_pipe": {"width": 4, "height": 16},
        "views": 2,
        "density_map": {"texel": {"width": 64, "height": 64}, "views": [layer(-4), layer(4)]},
        "fdm_offset": [[-40, 16], [40, 16]],
        "lrz": true
    })
    .to_string()
}

fn time(name: &str, text: &str) {
    let scene = parse_scene(text).expect("benchmark scene is valid");
    let bins = plan(&scene).expect("benchmark scene plans").bins.len();
    let iterations = 2000;
    let start = Instant::now();
    for _ in 0..iterations {
        black_box(plan(black_box(&scene)).ok());
    }
    let per_plan = start.elapsed().as_secs_f64() / f64::from(iterations);
    println!(
        "{name}: {bins} bins, {:.1} µs/plan, {:.0} plans/s, {:.0} ns/bin",
        per_plan * 1e6,
        1.0 / per_plan,
        per_plan * 1e9 / bins as f64
    );
}

fn main() {
    time(
        "foveated_stereo_a750 (sample)",
        include_str!("../examples/fdm/foveated_stereo_a750.json"),
    );
    time("4096x4096 stereo a740", &large_scene());
    time(
        "4096x4096 stereo a650",
        &large_scene().replace("a740", "a650"),
    );
}
