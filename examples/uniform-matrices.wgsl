// A vertex shader whose matrix-matrix products depend on uniforms only:
// on Adreno a6xx and later they run once per draw in the preamble.
struct Camera {
    projection: mat4x4<f32>,
    view: mat4x4<f32>,
    model: mat4x4<f32>,
}
@group(0) @binding(0) var<uniform> camera: Camera;

@vertex
fn main(@location(0) pos: vec3<f32>) -> @builtin(position) vec4<f32> {
    return camera.projection * camera.view * camera.model * vec4<f32>(pos, 1.0);
}
