//! Shared by the oracle's test binaries: the one lavapipe device, WGSL to
//! SPIR-V through naga, and running a random shader.
#![allow(dead_code)]

pub mod bind;
pub mod cone;
pub mod feed;
pub mod perturb;
pub mod precision;
pub mod random_compute;
pub mod reflect;
pub mod spirv_variants;

use lathe_oracle::{
    ComputeJob, Oracle, Resource, ResourceBinding, Sampler, ScalarKind, StorageFormat, Texture,
    TextureDim,
};
use random_compute::RandomShader;
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// Generic opcodes no compute shader can reach, with the reason
/// (`compute_diff` excludes them from its coverage check; `fragment_diff`
/// checks that the corpus fragment shaders it compares reach the first six).
pub const COMPUTE_UNREACHABLE: [(&str, &str); 10] = [
    (
        "ddx",
        "derivatives work on 2x2 fragment quads: fragment shaders only",
    ),
    (
        "ddy",
        "derivatives work on 2x2 fragment quads: fragment shaders only",
    ),
    ("demote", "OpDemoteToHelperInvocation is fragment-only"),
    (
        "discard",
        "OpKill / OpTerminateInvocation are fragment-only",
    ),
    (
        "load_input",
        "compute shaders have no varyings (their built-ins are load_sysval)",
    ),
    (
        "store_output",
        "compute shaders have no outputs (results go to memory)",
    ),
    (
        "input",
        "meta instruction of hand-written IR; the frontend never emits it",
    ),
    (
        "output",
        "meta instruction of hand-written IR; the frontend never emits it",
    ),
    (
        "load_private",
        "backends lower large arrays to it before selection; the frontend emits array_load",
    ),
    (
        "store_private",
        "backends lower large arrays to it before selection; the frontend emits array_store",
    ),
];

/// The opcode names in an IR text (the first word of every instruction).
pub fn opcodes(text: &str, seen: &mut BTreeSet<String>) {
    for line in text.lines().map(str::trim) {
        if line.ends_with(':')
            || line.starts_with("shader")
            || line.starts_with("array")
            || line.starts_with("private ")
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

/// The lavapipe device shared by a test binary's tests.
pub fn oracle() -> &'static Oracle {
    static ORACLE: OnceLock<Oracle> = OnceLock::new();
    ORACLE.get_or_init(|| Oracle::new().unwrap_or_else(|e| panic!("lavapipe oracle: {e}")))
}

/// SPIR-V for `source`'s entry point `main` of `stage`.
pub fn wgsl_to_spirv(source: &str, stage: naga::ShaderStage) -> Result<Vec<u32>, String> {
    let module = naga::front::wgsl::parse_str(source).map_err(|e| e.emit_to_string(source))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| format!("{e:?}"))?;
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: stage,
        entry_point: "main".into(),
    };
    // Debug names in every build profile: the SPIR-V rewrites find the
    // generator's helpers by name.
    let mut options = naga::back::spv::Options::default();
    options.flags |= naga::back::spv::WriterFlags::DEBUG;
    naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline)).map_err(|e| e.to_string())
}

/// The SPIR-V of a corpus entry point: glslang's `.spv` beside a GLSL
/// file, or naga's output for a WGSL one (with its pipeline overrides).
pub fn corpus_spirv(
    dir: &std::path::Path,
    path: &str,
    wgsl: bool,
    entry: &str,
    stage: lathe_ir::Stage,
    overrides: &[(String, String)],
) -> Result<Vec<u32>, String> {
    let path = dir.join(path);
    if wgsl {
        let src = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        lathe_frontend::wgsl::to_spirv(&src, Some(entry), Some(stage), overrides)
            .map_err(|e| e.to_string())
    } else {
        let ext = path.extension().unwrap_or_default().to_string_lossy();
        let bytes =
            std::fs::read(path.with_extension(format!("{ext}.spv"))).map_err(|e| e.to_string())?;
        lathe_frontend::spirv_words(&bytes).map_err(|e| e.to_string())
    }
}

/// A seed from a corpus entry point's path and name (FNV-1a).
pub fn seed_of(path: &str, entry: &str) -> u64 {
    let mut seed = 0xcbf2_9ce4_8422_2325u64;
    for b in path.bytes().chain(entry.bytes()) {
        seed = (seed ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    seed
}

/// The resources of a random shader, in binding order.
pub fn resources(shader: &RandomShader) -> Vec<ResourceBinding> {
    use random_compute::{IMG, TEX};
    let texture = |kind, size, texels: &Vec<[u32; 4]>| Texture {
        dim: TextureDim::D2,
        kind,
        depth: false,
        width: size,
        height: size,
        layers: 1,
        texels: texels.clone(),
    };
    vec![
        ResourceBinding::new(0, 0, Resource::StorageBuffer(shader.src.clone())),
        ResourceBinding::new(0, 1, Resource::StorageBuffer(shader.dst.clone())),
        ResourceBinding::new(0, 2, Resource::StorageBuffer(shader.atomics.clone())),
        ResourceBinding::new(0, 3, Resource::UniformBuffer(shader.uniform.clone())),
        ResourceBinding::new(
            0,
            4,
            Resource::SampledImage(texture(ScalarKind::Float, TEX, &shader.texture)),
        ),
        ResourceBinding::new(0, 5, Resource::Sampler(Sampler::default())),
        ResourceBinding::new(
            0,
            6,
            Resource::StorageImage(
                texture(ScalarKind::Float, IMG, &shader.image),
                StorageFormat::Rgba32,
            ),
        ),
        ResourceBinding::new(
            0,
            7,
            Resource::StorageImage(
                texture(ScalarKind::Uint, IMG, &shader.counts),
                StorageFormat::R32,
            ),
        ),
    ]
}

/// What a random shader leaves behind: its output, atomic words and the
/// storage images' texels.
#[derive(Clone, Debug, PartialEq)]
pub struct Outputs {
    pub dst: Vec<u32>,
    pub atomics: Vec<u32>,
    pub image: Vec<[u32; 4]>,
    pub counts: Vec<[u32; 4]>,
}

/// The SPIR-V of random shader `seed`: naga's, varied by
/// [`spirv_variants::vary`] (its `Inverse` slots rely on that).
pub fn random_spirv(seed: u64, shader: &RandomShader) -> Result<Vec<u32>, String> {
    let naga = wgsl_to_spirv(&shader.wgsl, naga::ShaderStage::Compute)
        .map_err(|e| format!("naga: {e}\n{}", shader.wgsl))?;
    spirv_variants::vary(&naga, &mut random_compute::Rng::new(!seed))
}

/// Run random shader `seed` on lavapipe; returns its output words.
pub fn run_on_lavapipe(oracle: &Oracle, seed: u64, shader: &RandomShader) -> Vec<u32> {
    let words = random_spirv(seed, shader).unwrap_or_else(|e| panic!("{e}"));
    run_on_lavapipe_full(oracle, shader, &words).dst
}

/// Run a random shader's SPIR-V on lavapipe.
pub fn run_on_lavapipe_full(oracle: &Oracle, shader: &RandomShader, spirv: &[u32]) -> Outputs {
    let resources = resources(shader);
    let mut out = oracle
        .run_compute(&ComputeJob {
            spirv,
            entry_point: "main",
            specialization: &[],
            resources: &resources,
            push_constants: &shader.push,
            workgroups: shader.workgroups,
        })
        .unwrap_or_else(|e| panic!("lavapipe: {e}\n{}", shader.wgsl));
    let mut buffer = |b| out.storage_buffers.remove(&(0, b)).unwrap_or_default();
    let (dst, atomics) = (buffer(1), buffer(2));
    let mut image = |b| out.storage_images.remove(&(0, b)).unwrap_or_default();
    Outputs {
        dst,
        atomics,
        image: image(6),
        counts: image(7),
    }
}
