//! WGSL through naga: parse, validate, apply pipeline-overridable
//! constants, write SPIR-V for one entry point with the writer flags wgpu
//! uses on Vulkan, so the lowered shader computes what a Vulkan driver
//! running the same WGSL under wgpu computes. naga panics on a few
//! constructs its SPIR-V writer does not implement; those are rejected
//! before it runs, and any other panic is contained and reported.

use crate::error::Error;
use lathe_ir::Stage;
use std::panic::{AssertUnwindSafe, catch_unwind};

fn naga_stage(stage: naga::ShaderStage) -> Option<Stage> {
    match stage {
        naga::ShaderStage::Vertex => Some(Stage::Vertex),
        naga::ShaderStage::Fragment => Some(Stage::Fragment),
        naga::ShaderStage::Compute => Some(Stage::Compute),
        _ => None,
    }
}

/// The entry points of a WGSL source in declaration order: name and
/// stage (`None` for a stage Lathe does not lower).
pub fn entry_points(source: &str) -> Result<Vec<(String, Option<Stage>)>, Error> {
    let module =
        naga::front::wgsl::parse_str(source).map_err(|e| Error::Wgsl(e.emit_to_string(source)))?;
    Ok(module
        .entry_points
        .iter()
        .map(|e| (e.name.clone(), naga_stage(e.stage)))
        .collect())
}

/// The SPIR-V of one WGSL entry point, after overrides (`(name or @id, value)` pairs).
pub fn to_spirv(
    source: &str,
    entry: Option<&str>,
    stage: Option<Stage>,
    overrides: &[(String, String)],
) -> Result<Vec<u32>, Error> {
    let module =
        naga::front::wgsl::parse_str(source).map_err(|e| Error::Wgsl(e.emit_to_string(source)))?;
    let mut validator = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    );
    let info = validator
        .validate(&module)
        .map_err(|e| Error::Wgsl(e.emit_to_string(source)))?;
    let matching: Vec<&naga::EntryPoint> = module
        .entry_points
        .iter()
        .filter(|e| entry.is_none_or(|n| n == e.name))
        .filter(|e| stage.is_none_or(|s| naga_stage(e.stage) == Some(s)))
        .collect();
    let list = || {
        module
            .entry_points
            .iter()
            .map(|e| format!("{} ({:?})", e.name, e.stage))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ep = match matching.as_slice() {
        [one] => *one,
        [] => {
            return Err(Error::EntryPoint(format!(
                "no entry point matches (the module has: {})",
                list()
            )));
        }
        _ => {
            return Err(Error::EntryPoint(format!(
                "several entry points match; pick one with --entry/--stage (the module has: {})",
                list()
            )));
        }
    };
    if module.types.iter().any(|(_, t)| {
        matches!(
            t.inner,
            naga::TypeInner::Image {
                class: naga::ImageClass::External,
                ..
            }
        )
    }) {
        return Err(Error::UnsupportedWgsl(
            "texture_external (naga's SPIR-V writer does not implement external textures)".into(),
        ));
    }
    let mut constants = naga::back::PipelineConstants::default();
    for (key, value) in overrides {
        let v = match value.trim() {
            "true" => 1.0,
            "false" => 0.0,
            t => t.parse::<f64>().map_err(|_| {
                Error::Spec(format!("`{value}` is not a number for override {key}"))
            })?,
        };
        constants.insert(key.clone(), v);
    }
    let (name, ep_stage) = (ep.name.clone(), ep.stage);
    let result = catch_unwind(AssertUnwindSafe(|| -> Result<Vec<u32>, Error> {
        let (module, info) = naga::back::pipeline_constants::process_overrides(
            &module,
            &info,
            Some((ep_stage, &name)),
            &constants,
        )
        .map_err(|e| Error::Wgsl(format!("pipeline constants: {e}")))?;
        // The flags wgpu's Vulkan backend gives naga (wgpu-hal
        // `vulkan/adapter.rs`): no ADJUST_COORDINATE_SPACE (wgpu flips y
        // with a negative viewport height instead, so the driver sees the
        // position as written) and no CLAMP_FRAG_DEPTH, both of which
        // naga's defaults set; a point size of 1 is always written.
        let options = naga::back::spv::Options {
            flags: naga::back::spv::WriterFlags::LABEL_VARYINGS
                | naga::back::spv::WriterFlags::FORCE_POINT_SIZE,
            ..naga::back::spv::Options::default()
        };
        let pipeline = naga::back::spv::PipelineOptions {
            shader_stage: ep_stage,
            entry_point: name.clone(),
        };
        naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline))
            .map_err(|e| Error::Wgsl(format!("SPIR-V writer: {e}")))
    }));
    match result {
        Ok(r) => r,
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into());
            Err(Error::UnsupportedWgsl(format!(
                "naga's SPIR-V writer failed: {msg}"
            )))
        }
    }
}
