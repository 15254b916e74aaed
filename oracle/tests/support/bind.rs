//! A corpus shader's descriptors and push constants, filled by type
//! (`feed.rs`) from its interface and the module's own layout
//! (`reflect.rs`), on both sides: lavapipe's bindings and the
//! interpreter's inputs and memory.

use super::feed;
use super::random_compute::Rng;
use super::reflect::{Binding, Layout, Reflection};
use lathe_ir::Invocation;
use lathe_ir::interp::Memory;
use lathe_oracle::{Resource, ResourceBinding, Sampler, StorageFormat};

/// A storage buffer: where lavapipe has it, where the interpreter has it,
/// and how its words are typed.
pub struct Buffer {
    pub set: u32,
    pub binding: u32,
    /// The interpreter's `ssbos` index.
    pub index: usize,
    pub layout: Layout,
}

/// A storage image: where lavapipe has it, where the interpreter has it,
/// and its format.
pub struct StorageImage {
    pub set: u32,
    pub binding: u32,
    /// The interpreter's `images` index.
    pub index: usize,
    pub format: StorageFormat,
    /// Float texels (else integers, compared bit for bit).
    pub float: bool,
}

/// Everything bound, on both sides.
pub struct Bound {
    pub resources: Vec<ResourceBinding>,
    /// Push-constant words (the interpreter's uniforms).
    pub push: Vec<u32>,
    /// Uniforms, UBOs and textures for the interpreter.
    pub base: Invocation,
    /// Storage buffers for the interpreter.
    pub memory: Memory,
    pub buffers: Vec<Buffer>,
    pub images: Vec<StorageImage>,
}

/// Put `value` at `index` of `list`, growing it with `fill`.
pub fn set<T: Clone>(list: &mut Vec<T>, index: usize, value: T, fill: T) {
    if list.len() <= index {
        list.resize(index + 1, fill);
    }
    list[index] = value;
}

/// Bind every resource of `interface`: run-time arrays get `elements`
/// elements, textures are `tex`×`tex` (see [`feed::texture`]), samplers
/// come from `sampler` by their IR index. `Err` says why the shader cannot
/// be fed.
pub fn bind(
    interface: &lathe_frontend::Interface,
    reflection: &Reflection,
    rng: &mut Rng,
    elements: u32,
    tex: u32,
    sampler: impl Fn(u32) -> Sampler,
) -> Result<Bound, String> {
    let mut base = Invocation::default();
    let mut memory = Memory::default();
    let (mut resources, mut buffers, mut images) = (Vec::new(), Vec::new(), Vec::new());
    for r in &interface.resources {
        if r.array_size != Some(1) {
            return Err(format!(
                "unsupported: an array of {} descriptors (set {} binding {})",
                r.kind, r.set, r.binding
            ));
        }
        let binding = reflection
            .bindings
            .get(&(r.set, r.binding))
            .ok_or_else(|| format!("no variable at set {} binding {}", r.set, r.binding))?;
        let index = r.index as usize;
        let resource = match binding {
            Binding::UniformBuffer(layout) => {
                let words = feed::block(rng, layout, 0);
                set(&mut base.ubos, index, words.clone(), Vec::new());
                Resource::UniformBuffer(words)
            }
            Binding::StorageBuffer(layout) => {
                let words = feed::block(rng, layout, elements);
                set(&mut memory.ssbos, index, words.clone(), Vec::new());
                buffers.push(Buffer {
                    set: r.set,
                    binding: r.binding,
                    index,
                    layout: layout.clone(),
                });
                Resource::StorageBuffer(words)
            }
            Binding::Image { image, .. } if image.dim == rspirv::spirv::Dim::DimSubpassData => {
                return Err("unsupported: input attachments (not in the oracle)".into());
            }
            Binding::Image { image, .. } if image.storage => {
                let (t, format, ir) = feed::storage_image(rng, *image, tex)?;
                set(&mut memory.images, index, ir.clone(), ir);
                images.push(StorageImage {
                    set: r.set,
                    binding: r.binding,
                    index,
                    format,
                    float: t.kind == lathe_oracle::ScalarKind::Float,
                });
                Resource::StorageImage(t, format)
            }
            Binding::Image { image, combined } => {
                let (t, ir) = feed::texture(rng, *image, tex)?;
                set(&mut base.textures, index, ir.clone(), ir);
                if *combined {
                    let index = r
                        .sampler_index
                        .ok_or("a combined sampler without an index")?;
                    Resource::CombinedImageSampler(t, sampler(index))
                } else {
                    Resource::SampledImage(t)
                }
            }
            Binding::Sampler => Resource::Sampler(sampler(r.index)),
            Binding::Other(why) => return Err(format!("unsupported: {why}")),
        };
        resources.push(ResourceBinding::new(r.set, r.binding, resource));
    }
    let push = match (&interface.push_constants, &reflection.push_constants) {
        (Some(_), Some(layout)) => feed::block(rng, layout, 0),
        _ => Vec::new(),
    };
    base.uniforms = push.clone();
    Ok(Bound {
        resources,
        push,
        base,
        memory,
        buffers,
        images,
    })
}
