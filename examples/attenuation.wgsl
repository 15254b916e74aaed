// A light's attenuation from push constants: the shader the README's
// first command compiles (`lathe compile --gpu a630 examples/attenuation.wgsl`).
struct Light {
    intensity: f32,
    falloff: f32,
    distance: f32,
    gamma: f32,
}

var<immediate> light: Light;

@fragment
fn main() -> @location(0) vec4<f32> {
    let d = light.distance;
    let atten = light.intensity / (1.0 + light.falloff * d * d);
    let c = pow(atten, 1.0 / light.gamma);
    return vec4<f32>(c, c * 0.5, sqrt(atten), 1.0);
}
