//! The oracle against hand-computed expectations: compute dispatches
//! (storage and uniform buffers, push constants, workgroups, shared
//! memory) and fragment draws (varyings, fragment coordinates, textures,
//! discard). Shaders are WGSL compiled by naga.

use lathe_oracle::{
    ComputeJob, FragmentJob, Oracle, OracleError, Resource, ResourceBinding, Sampler, ScalarKind,
    Texture, Varying,
};
use std::sync::OnceLock;

fn oracle() -> &'static Oracle {
    static ORACLE: OnceLock<Oracle> = OnceLock::new();
    ORACLE.get_or_init(|| Oracle::new().unwrap_or_else(|e| panic!("lavapipe oracle: {e}")))
}

fn spirv(source: &str, stage: naga::ShaderStage) -> Vec<u32> {
    let module = naga::front::wgsl::parse_str(source).expect("test WGSL parses");
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .expect("test WGSL validates");
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: stage,
        entry_point: "main".into(),
    };
    naga::back::spv::write_vec(&module, &info, &Default::default(), Some(&pipeline))
        .expect("naga writes SPIR-V")
}

#[test]
fn opens_lavapipe() {
    assert!(oracle().device_name().starts_with("llvmpipe"));
}

#[test]
fn compute_buffers_push_constants_and_workgroups() {
    let words = spirv(
        r#"
        struct Params { scale: u32, bias: u32 }
        var<immediate> params: Params;
        @group(0) @binding(0) var<storage, read_write> data: array<u32>;
        @group(0) @binding(1) var<uniform> offset: vec4<u32>;
        @group(1) @binding(0) var<storage, read_write> ids: array<u32>;
        @compute @workgroup_size(4)
        fn main(@builtin(global_invocation_id) id: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>) {
            data[id.x] = data[id.x] * params.scale + params.bias + offset.y;
            ids[id.x] = wg.x;
        }"#,
        naga::ShaderStage::Compute,
    );
    let input: Vec<u32> = (0..12).map(|i| i * 7 + 1).collect();
    let resources = [
        ResourceBinding::new(0, 0, Resource::StorageBuffer(input.clone())),
        ResourceBinding::new(0, 1, Resource::UniformBuffer(vec![0, 100, 0, 0])),
        ResourceBinding::new(1, 0, Resource::StorageBuffer(vec![99; 12])),
    ];
    let out = oracle()
        .run_compute(&ComputeJob {
            spirv: &words,
            entry_point: "main",
            specialization: &[],
            resources: &resources,
            push_constants: &[3, 5],
            workgroups: [3, 1, 1],
        })
        .unwrap();
    let want: Vec<u32> = input.iter().map(|x| x * 3 + 5 + 100).collect();
    assert_eq!(out.storage_buffers[&(0, 0)], want);
    let groups: Vec<u32> = (0..12).map(|i| i / 4).collect();
    assert_eq!(out.storage_buffers[&(1, 0)], groups);
}

#[test]
fn compute_shared_memory_and_barriers() {
    // Each workgroup reverses its 8 elements through shared memory.
    let words = spirv(
        r#"
        @group(0) @binding(0) var<storage, read_write> data: array<f32>;
        var<workgroup> tile: array<f32, 8>;
        @compute @workgroup_size(8)
        fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(local_invocation_index) l: u32) {
            tile[l] = data[g.x];
            workgroupBarrier();
            data[g.x] = tile[7u - l] * 0.5;
        }"#,
        naga::ShaderStage::Compute,
    );
    let input: Vec<f32> = (0..16).map(|i| i as f32 + 0.25).collect();
    let resources = [ResourceBinding::new(
        0,
        0,
        Resource::StorageBuffer(input.iter().map(|f| f.to_bits()).collect()),
    )];
    let out = oracle()
        .run_compute(&ComputeJob {
            spirv: &words,
            entry_point: "main",
            specialization: &[],
            resources: &resources,
            push_constants: &[],
            workgroups: [2, 1, 1],
        })
        .unwrap();
    let want: Vec<u32> = (0..16)
        .map(|i| (input[(i / 8) * 8 + 7 - i % 8] * 0.5).to_bits())
        .collect();
    assert_eq!(out.storage_buffers[&(0, 0)], want);
}

#[test]
fn bad_jobs_are_typed_errors() {
    let empty = ComputeJob {
        spirv: &[],
        entry_point: "main",
        specialization: &[],
        resources: &[],
        push_constants: &[],
        workgroups: [1, 1, 1],
    };
    assert!(matches!(
        oracle().run_compute(&empty),
        Err(OracleError::InvalidJob(_))
    ));
    let twice = [
        ResourceBinding::new(0, 0, Resource::StorageBuffer(vec![0])),
        ResourceBinding::new(0, 0, Resource::UniformBuffer(vec![0])),
    ];
    let words = [0x0723_0203u32, 0x0001_0000, 0, 1, 0];
    let err = oracle()
        .run_compute(&ComputeJob {
            spirv: &words,
            resources: &twice,
            ..empty
        })
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid job: two resources at set 0 binding 0"
    );
}

const W: u32 = 16;
const H: u32 = 8;

fn draw(
    source: &str,
    resources: &[ResourceBinding],
    varyings: &[Varying],
) -> lathe_oracle::Rendered {
    let words = spirv(source, naga::ShaderStage::Fragment);
    oracle()
        .render_fragment(&FragmentJob {
            spirv: &words,
            entry_point: "main",
            specialization: &[],
            resources,
            push_constants: &[],
            varyings,
            targets: &[ScalarKind::Float, ScalarKind::Uint],
            width: W,
            height: H,
            clear: [0xdead_beef; 4],
        })
        .unwrap()
}

#[test]
fn fragment_varyings_are_exact_affine_functions() {
    let smooth = Varying::affine(
        0,
        W,
        H,
        [-1.0, 0.5, 3.0, 0.0],
        [0.125, 0.0, -0.25, 1.0],
        [0.0, 0.0625, 0.5, -2.0],
        4,
    );
    let flat = Varying {
        location: 1,
        kind: ScalarKind::Uint,
        components: 2,
        flat: true,
        vertices: [[7, 8, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2]],
    };
    let out = draw(
        r#"
        struct Out { @location(0) color: vec4<f32>, @location(1) id: vec4<u32> }
        @fragment
        fn main(@location(0) v: vec4<f32>, @location(1) @interpolate(flat) f: vec2<u32>,
                @builtin(position) p: vec4<f32>) -> Out {
            return Out(v, vec4<u32>(f, bitcast<u32>(p.x), bitcast<u32>(p.y)));
        }"#,
        &[],
        &[smooth, flat],
    );
    for y in 0..H {
        for x in 0..W {
            let (cx, cy) = (x as f32 + 0.5, y as f32 + 0.5);
            let want = [
                -1.0 + 0.125 * cx,
                0.5 + 0.0625 * cy,
                3.0 - 0.25 * cx + 0.5 * cy,
                cx - 2.0 * cy,
            ];
            assert_eq!(
                out.texel(0, x, y),
                want.map(f32::to_bits),
                "pixel ({x}, {y})"
            );
            assert_eq!(
                out.texel(1, x, y),
                [7, 8, cx.to_bits(), cy.to_bits()],
                "pixel ({x}, {y})"
            );
        }
    }
}

#[test]
fn fragment_textures_and_discard() {
    let texels: Vec<[f32; 4]> = (0..W * H)
        .map(|i| [i as f32, -(i as f32), 0.5, 1.0 / (i as f32 + 1.0)])
        .collect();
    let texture = Texture::rgba32f(W, H, &texels);
    let resources = [
        ResourceBinding::new(0, 0, Resource::SampledImage(texture)),
        ResourceBinding::new(0, 1, Resource::Sampler(Sampler::default())),
    ];
    let out = draw(
        r#"
        @group(0) @binding(0) var t: texture_2d<f32>;
        @group(0) @binding(1) var s: sampler;
        struct Out { @location(0) color: vec4<f32>, @location(1) id: vec4<u32> }
        @fragment
        fn main(@builtin(position) p: vec4<f32>) -> Out {
            if (p.x > 12.0 && p.y < 2.0) { discard; }
            // Mirror horizontally: exact texel values under nearest filtering.
            let uv = vec2<f32>(1.0 - p.x / 16.0, p.y / 8.0);
            return Out(textureSample(t, s, uv), vec4<u32>(textureDimensions(t), 1u, 2u));
        }"#,
        &resources,
        &[],
    );
    for y in 0..H {
        for x in 0..W {
            if x >= 12 && y < 2 {
                assert_eq!(out.texel(0, x, y), [0xdead_beef; 4], "discarded ({x}, {y})");
                continue;
            }
            let want = texels[(y * W + (W - 1 - x)) as usize].map(f32::to_bits);
            assert_eq!(out.texel(0, x, y), want, "pixel ({x}, {y})");
            assert_eq!(out.texel(1, x, y), [W, H, 1, 2], "pixel ({x}, {y})");
        }
    }
}

#[test]
fn compute_storage_images() {
    use lathe_oracle::{StorageFormat, TextureDim};
    let words = spirv(
        r#"
        @group(0) @binding(0) var colour: texture_storage_2d<rgba32float, read_write>;
        @group(0) @binding(1) var counts: texture_storage_2d<r32uint, atomic>;
        @group(0) @binding(2) var bytes: texture_storage_2d<rgba8unorm, write>;
        @group(0) @binding(3) var halves: texture_storage_2d<rgba16float, write>;
        @compute @workgroup_size(2, 2)
        fn main(@builtin(global_invocation_id) id: vec3<u32>) {
            let p = vec2<i32>(id.xy);
            textureStore(colour, p, textureLoad(colour, p) * 2.0);
            textureAtomicAdd(counts, vec2<i32>(0, 0), id.x + 1u);
            textureStore(bytes, p, vec4<f32>(0.0, 1.0, 0.5, f32(id.x)));
            textureStore(halves, p, vec4<f32>(-2.0, 0.25, 65504.0, f32(id.y)));
        }"#,
        naga::ShaderStage::Compute,
    );
    let texture = |kind, texels: Vec<[u32; 4]>| Texture {
        dim: TextureDim::D2,
        kind,
        depth: false,
        width: 2,
        height: 2,
        layers: 1,
        texels,
    };
    let colour: Vec<[u32; 4]> = (0..4)
        .map(|i| [i as f32, 1.0, -3.0, 0.5].map(f32::to_bits))
        .collect();
    let resources = [
        ResourceBinding::new(
            0,
            0,
            Resource::StorageImage(texture(ScalarKind::Float, colour), StorageFormat::Rgba32),
        ),
        ResourceBinding::new(
            0,
            1,
            Resource::StorageImage(
                texture(ScalarKind::Uint, vec![[100, 0, 0, 0]; 4]),
                StorageFormat::R32,
            ),
        ),
        ResourceBinding::new(
            0,
            2,
            Resource::StorageImage(
                texture(ScalarKind::Float, Vec::new()),
                StorageFormat::Rgba8Unorm,
            ),
        ),
        ResourceBinding::new(
            0,
            3,
            Resource::StorageImage(
                texture(ScalarKind::Float, Vec::new()),
                StorageFormat::Rgba16Float,
            ),
        ),
    ];
    let out = oracle()
        .run_compute(&ComputeJob {
            spirv: &words,
            entry_point: "main",
            specialization: &[],
            resources: &resources,
            push_constants: &[],
            workgroups: [1, 1, 1],
        })
        .unwrap();
    let images = &out.storage_images;
    let doubled: Vec<[u32; 4]> = (0..4)
        .map(|i| [2.0 * i as f32, 2.0, -6.0, 1.0].map(f32::to_bits))
        .collect();
    assert_eq!(images[&(0, 0)], doubled);
    // Two invocations with x = 0 add 1, two with x = 1 add 2.
    assert_eq!(
        images[&(0, 1)],
        vec![
            [106, 0, 0, 0],
            [100, 0, 0, 0],
            [100, 0, 0, 0],
            [100, 0, 0, 0]
        ]
    );
    // 0.5 * 255 = 127.5 rounds to 127 or 128.
    for (i, t) in images[&(0, 2)].iter().enumerate() {
        assert!(
            t[0] == 0 && t[1] == 255 && (127..=128).contains(&t[2]) && t[3] == 255 * (i as u32 % 2),
            "{t:?}"
        );
    }
    let halves: Vec<[u32; 4]> = (0..4)
        .map(|i| [0xc000, 0x3400, 0x7bff, if i < 2 { 0 } else { 0x3c00 }])
        .collect();
    assert_eq!(images[&(0, 3)], halves);
}
