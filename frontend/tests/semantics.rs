//! Lowered shaders compute what their source says: small WGSL fragment
//! shaders go through naga and the SPIR-V lowering, run in the IR
//! interpreter, and are compared with the same computation in Rust.

use lathe_frontend::{Options, lower_wgsl};
use lathe_ir::{Invocation, Limits, Outcome};

/// Lower `src` (with and without the default passes) and run it with
/// `inputs[k]` at location k; both runs must agree.
fn run(src: &str, inputs: &[[f32; 4]], ubo: &[f32]) -> Outcome {
    let mut inv = Invocation::default();
    for (slot, v) in inputs.iter().enumerate() {
        for (c, x) in v.iter().enumerate() {
            inv.inputs.insert((slot as u16, c as u8), x.to_bits());
        }
    }
    inv.ubos = vec![ubo.iter().map(|x| x.to_bits()).collect()];
    let mut outcomes = Vec::new();
    for passes in [false, true] {
        let arena = lathe_ir::Bump::new();
        let opts = Options {
            passes,
            ..Options::default()
        };
        let lowered = lower_wgsl(&arena, src, &opts).unwrap_or_else(|e| panic!("{e}\n{src}"));
        lathe_ir::validate(&lowered.shader).unwrap();
        let out = lathe_ir::interp::run(&lowered.shader, &inv, Limits::default())
            .unwrap_or_else(|e| panic!("{e}\n{}", lathe_ir::print(&lowered.shader)));
        outcomes.push(out);
    }
    assert_eq!(outcomes[0], outcomes[1], "passes changed the result");
    outcomes.pop().unwrap()
}

fn out4(o: &Outcome) -> [f32; 4] {
    [0, 1, 2, 3].map(|c| f32::from_bits(o.outputs[&(0, c)].1))
}

fn close(got: [f32; 4], want: [f32; 4], tol: f32) {
    for k in 0..4 {
        let err = (got[k] - want[k]).abs();
        assert!(
            err <= tol * want[k].abs().max(1.0),
            "lane {k}: got {got:?}, want {want:?}"
        );
    }
}

const FRAG: &str = "@fragment fn main(@location(0) v: vec4<f32>, @location(1) w: vec4<f32>) -> @location(0) vec4<f32> {";

#[test]
fn vector_math_and_glsl_functions() {
    let src = format!(
        "{FRAG}
            let n = normalize(v.xyz);
            let r = reflect(n, normalize(w.xyz));
            return vec4<f32>(dot(n, r), atan2(v.x, v.y), mix(v.z, w.z, 0.25), length(cross(v.xyz, w.xyz)));
        }}"
    );
    let (v, w) = ([0.3f32, -1.2, 2.5, 1.0], [1.5f32, 0.25, -0.75, 0.0]);
    let o = run(&src, &[v, w], &[]);
    let norm = |a: [f32; 3]| {
        let l = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
        a.map(|x| x / l)
    };
    let dot = |a: [f32; 3], b: [f32; 3]| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let n = norm([v[0], v[1], v[2]]);
    let m = norm([w[0], w[1], w[2]]);
    let d = dot(m, n);
    let r = [0, 1, 2].map(|k| n[k] - 2.0 * d * m[k]);
    let c = [
        v[1] * w[2] - v[2] * w[1],
        v[2] * w[0] - v[0] * w[2],
        v[0] * w[1] - v[1] * w[0],
    ];
    let want = [
        dot(n, r),
        v[0].atan2(v[1]),
        v[2] + 0.25 * (w[2] - v[2]),
        dot(c, c).sqrt(),
    ];
    close(out4(&o), want, 1e-5);
}

#[test]
fn inverse_trig_and_exponentials() {
    let src = format!(
        "{FRAG}
            return vec4<f32>(asin(v.x), acos(v.y), pow(w.x, w.y), smoothstep(0.0, 2.0, w.z) + exp(v.z) + log(w.w));
        }}"
    );
    for (v, w) in [
        ([0.5f32, -0.7, 1.3, 0.0], [2.5f32, 1.7, 0.6, 3.0]),
        ([-0.99f32, 0.01, -2.0, 0.0], [0.3f32, -0.5, 1.9, 0.25]),
    ] {
        let o = run(&src, &[v, w], &[]);
        let t = (w[2] / 2.0).clamp(0.0, 1.0);
        let want = [
            v[0].asin(),
            v[1].acos(),
            w[0].powf(w[1]),
            t * t * (3.0 - 2.0 * t) + v[2].exp() + w[3].ln(),
        ];
        close(out4(&o), want, 2e-5);
    }
}

#[test]
fn loops_switches_and_local_arrays() {
    let src = format!(
        "{FRAG}
            var a = array<f32, 4>(v.x, v.y, v.z, v.w);
            var sum = 0.0;
            var i = 0;
            loop {{
                if i >= 4 {{ break; }}
                if a[i] < 0.0 {{ i = i + 1; continue; }}
                sum = sum + a[i];
                i = i + 1;
            }}
            let k = i32(w.x);
            a[k] = 10.0;
            var s = 0.0;
            switch k {{
                case 0: {{ s = 1.0; }}
                case 1, 2: {{ s = 2.0; }}
                default: {{ s = 3.0; }}
            }}
            return vec4<f32>(sum, a[2], s, f32(i));
        }}"
    );
    let o = run(&src, &[[1.0, -2.0, 3.0, 4.5], [2.0, 0.0, 0.0, 0.0]], &[]);
    assert_eq!(out4(&o), [8.5, 10.0, 2.0, 4.0]);
    let o = run(&src, &[[-1.0, -2.0, 3.0, -4.5], [3.0, 0.0, 0.0, 0.0]], &[]);
    assert_eq!(out4(&o), [3.0, 3.0, 3.0, 4.0]);
}

#[test]
fn calls_with_pointers_and_discard() {
    let src = format!(
        "fn twice(p: ptr<function, vec2<f32>>, k: f32) -> f32 {{ (*p) = (*p) * k; return (*p).x + (*p).y; }}
        {FRAG}
            if v.w < 0.0 {{ discard; }}
            var p = v.xy;
            let s = twice(&p, 2.0);
            let t = twice(&p, w.x);
            return vec4<f32>(p, s, t);
        }}"
    );
    let o = run(&src, &[[1.0, 2.0, 0.0, 1.0], [3.0, 0.0, 0.0, 0.0]], &[]);
    assert_eq!(out4(&o), [6.0, 12.0, 6.0, 18.0]);
    let o = run(&src, &[[1.0, 2.0, 0.0, -1.0], [3.0, 0.0, 0.0, 0.0]], &[]);
    assert!(o.discarded);
}

#[test]
fn uniform_buffer_layout_and_matrices() {
    // std140-like WGSL uniform layout: offsets 0 (f32), 16 (vec3), 32 (mat3x3, columns 16 bytes apart).
    let src = format!(
        "struct U {{ s: f32, d: vec3<f32>, m: mat3x3<f32> }}
        @group(0) @binding(0) var<uniform> u: U;
        {FRAG}
            let r = u.m * v.xyz;
            return vec4<f32>(r * u.s + u.d, determinant(u.m));
        }}"
    );
    let mut ubo = vec![0.0f32; 8 + 12];
    ubo[0] = 2.0;
    ubo[4..7].copy_from_slice(&[0.5, -1.0, 0.25]);
    // Columns of m.
    let m = [[1.0f32, 2.0, 0.0], [0.0, 1.0, 3.0], [4.0, 0.0, 1.0]];
    for c in 0..3 {
        ubo[8 + 4 * c..8 + 4 * c + 3].copy_from_slice(&m[c]);
    }
    let v = [1.0f32, -2.0, 0.5, 0.0];
    let o = run(&src, &[v, [0.0; 4]], &ubo);
    let r = [0, 1, 2].map(|row| m[0][row] * v[0] + m[1][row] * v[1] + m[2][row] * v[2]);
    let det = m[0][0] * (m[1][1] * m[2][2] - m[2][1] * m[1][2])
        - m[1][0] * (m[0][1] * m[2][2] - m[2][1] * m[0][2])
        + m[2][0] * (m[0][1] * m[1][2] - m[1][1] * m[0][2]);
    let want = [r[0] * 2.0 + 0.5, r[1] * 2.0 - 1.0, r[2] * 2.0 + 0.25, det];
    close(out4(&o), want, 1e-6);
}

#[test]
fn interface_reports_locations_and_resources() {
    let src = "struct U { s: f32 }
        @group(1) @binding(3) var<uniform> u: U;
        @group(0) @binding(2) var t: texture_2d<f32>;
        @group(0) @binding(5) var smp: sampler;
        @fragment fn main(@location(2) @interpolate(flat) i: u32, @location(0) c: vec2<f32>) -> @location(1) vec4<f32> {
            return textureSample(t, smp, c) * u.s + f32(i);
        }";
    let arena = lathe_ir::Bump::new();
    let l = lower_wgsl(&arena, src, &Options::default()).unwrap();
    let iface = &l.interface;
    let input = |loc| {
        iface
            .inputs
            .iter()
            .find(|v| v.location == Some(loc))
            .unwrap()
    };
    assert_eq!(input(2).interpolation.as_deref(), Some("flat"));
    assert_eq!(input(2).scalar, "u32");
    assert_eq!(input(0).lanes, 2);
    assert_eq!(iface.outputs[0].location, Some(1));
    let kinds: Vec<(u32, u32, &str, u32)> = iface
        .resources
        .iter()
        .map(|r| (r.set, r.binding, r.kind.as_str(), r.index))
        .collect();
    assert_eq!(
        kinds,
        [
            (0, 2, "sampled_image", 0),
            (0, 5, "sampler", 0),
            (1, 3, "uniform_buffer", 0)
        ]
    );
    let json = serde_json::to_string(iface).unwrap();
    assert!(json.contains("\"kind\":\"uniform_buffer\""), "{json}");
}

#[test]
fn wgsl_overrides_are_applied() {
    let src = "override scale: f32; @id(7) override bias: f32 = 1.0;
        @fragment fn main() -> @location(0) vec4<f32> { return vec4<f32>(scale, bias, 0.0, 1.0); }";
    let arena = lathe_ir::Bump::new();
    let opts = Options {
        spec: vec![("scale".into(), "2.5".into()), ("7".into(), "-3".into())],
        ..Options::default()
    };
    let l = lower_wgsl(&arena, src, &opts).unwrap();
    let o = lathe_ir::interp::run(&l.shader, &Invocation::default(), Limits::default()).unwrap();
    assert_eq!(out4(&o), [2.5, -3.0, 0.0, 1.0]);
    // Without a value for `scale` naga refuses, and so do we.
    assert!(lower_wgsl(&arena, src, &Options::default()).is_err());
}

/// WGSL reaches the lowering as wgpu hands it to a Vulkan driver: the
/// position is stored as written (wgpu flips y with a negative viewport
/// height, not in the shader; naga's default would negate it) and the
/// point size is forced to 1.
#[test]
fn wgsl_vertex_position_is_not_flipped() {
    let src = "@vertex fn main(@location(0) p: vec4<f32>) -> @builtin(position) vec4<f32> { return p * 0.5; }";
    let arena = lathe_ir::Bump::new();
    let lowered = lower_wgsl(&arena, src, &Options::default()).unwrap();
    let mut inv = Invocation::default();
    for (c, x) in [0.5f32, 1.0, 0.25, 1.0].iter().enumerate() {
        inv.inputs.insert((0, c as u8), x.to_bits());
    }
    let out = lathe_ir::interp::run(&lowered.shader, &inv, Limits::default()).unwrap();
    let pos = lathe_ir::slot::POS;
    let got: Vec<f32> = (0..4)
        .map(|c| f32::from_bits(out.outputs[&(pos, c)].1))
        .collect();
    assert_eq!(got, [0.25, 0.5, 0.125, 0.5]);
    let psiz = out.outputs[&(lathe_ir::slot::PSIZ, 0)].1;
    assert_eq!(f32::from_bits(psiz), 1.0);
}

/// `atomicLoad` / `atomicStore` (OpAtomicLoad / OpAtomicStore) are atomic
/// accesses, not plain ones: a plain load after other invocations'
/// atomic adds would be a data race.
#[test]
fn atomic_loads_and_stores_stay_atomic() {
    let src = "
@group(0) @binding(0) var<storage, read_write> out: array<atomic<u32>>;
var<workgroup> count: atomic<u32>;
@compute @workgroup_size(4)
fn main(@builtin(local_invocation_index) i: u32) {
    atomicStore(&out[i + 1u], i);
    atomicAdd(&count, 1u);
    atomicStore(&out[0], atomicLoad(&count));
}
";
    let arena = lathe_ir::Bump::new();
    let lowered = lower_wgsl(&arena, src, &Options::default()).unwrap();
    let text = lathe_ir::print(&lowered.shader);
    for op in ["ssbo_atomic_store", "shared_atomic_load"] {
        assert!(text.contains(op), "no {op} in\n{text}");
    }
    assert!(
        !text.contains("load_shared") && !text.contains("store_ssbo"),
        "{text}"
    );
}
