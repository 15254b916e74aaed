//! The built-in vertex shader: one full-screen triangle carrying the job's
//! varyings. It is written as WGSL for readability and compiled by naga.

use crate::{OracleError, ScalarKind, Varying};
use std::fmt::Write;

/// SPIR-V for a vertex shader (entry point `main`) that draws the triangle
/// documented on [`Varying`] and writes each varying's per-vertex bits.
pub(crate) fn vertex_shader(varyings: &[Varying]) -> Result<Vec<u32>, OracleError> {
    let source = wgsl_source(varyings)?;
    let module = naga::front::wgsl::parse_str(&source)
        .map_err(|e| OracleError::VertexShader(e.emit_to_string(&source)))?;
    let info = naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::all(),
    )
    .validate(&module)
    .map_err(|e| OracleError::VertexShader(format!("{e:?}")))?;
    // Positions are written in Vulkan's clip space as they are: no y flip.
    let options = naga::back::spv::Options {
        flags: naga::back::spv::WriterFlags::empty(),
        ..Default::default()
    };
    let pipeline = naga::back::spv::PipelineOptions {
        shader_stage: naga::ShaderStage::Vertex,
        entry_point: "main".into(),
    };
    naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline))
        .map_err(|e| OracleError::VertexShader(e.to_string()))
}

fn wgsl_source(varyings: &[Varying]) -> Result<String, OracleError> {
    let mut fields = String::new();
    let mut body = String::new();
    for v in varyings {
        if !(1..=4).contains(&v.components) {
            return Err(OracleError::InvalidJob(format!(
                "varying at location {} has {} components",
                v.location, v.components
            )));
        }
        let scalar = match v.kind {
            ScalarKind::Float => "f32",
            ScalarKind::Sint => "i32",
            ScalarKind::Uint => "u32",
        };
        let ty = match v.components {
            1 => scalar.to_string(),
            n => format!("vec{n}<{scalar}>"),
        };
        let interp = if v.flat || v.kind != ScalarKind::Float {
            " @interpolate(flat)"
        } else {
            ""
        };
        let l = v.location;
        let _ = writeln!(fields, "    @location({l}){interp} v{l}: {ty},");
        let corners: Vec<String> = v
            .vertices
            .iter()
            .map(|c| format!("vec4<u32>({}u, {}u, {}u, {}u)", c[0], c[1], c[2], c[3]))
            .collect();
        let swizzle = &"xyzw"[..v.components as usize];
        let _ = writeln!(
            body,
            "    var c{l} = array<vec4<u32>, 3>({});\n    out.v{l} = bitcast<vec4<{scalar}>>(c{l}[index]).{swizzle};",
            corners.join(", ")
        );
    }
    Ok(format!(
        "struct Out {{\n    @builtin(position) position: vec4<f32>,\n{fields}}}\n\n\
         @vertex\nfn main(@builtin(vertex_index) index: u32) -> Out {{\n    \
         var corner = array<vec2<f32>, 3>(vec2<f32>(-1.0, -1.0), vec2<f32>(3.0, -1.0), vec2<f32>(-1.0, 3.0));\n    \
         var out: Out;\n    out.position = vec4<f32>(corner[index], 0.5, 1.0);\n{body}    return out;\n}}\n"
    ))
}
