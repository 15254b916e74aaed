//! The Vulkan plumbing jobs share: a scratch list that destroys every
//! object a job created (on success and on error), host-visible buffers,
//! textures and their upload, descriptor sets and one-shot submission.
//!
//! Every `unsafe` block here calls into Vulkan with handles created from
//! `Oracle::device` that are still alive (the scratch list destroys them
//! only when the job is over, after its fence has signalled) and with
//! create-info structures that outlive the call.

use crate::device::Oracle;
use crate::{
    AddressMode, CompareOp, OracleError, Resource, ResourceBinding, Sampler, ScalarKind,
    StorageFormat, Texture, TextureDim,
};
use ash::vk;
use std::collections::BTreeMap;
use std::ffi::CString;

/// Attach the name of the failing Vulkan call to its result code.
pub(crate) trait VkResultExt<T> {
    fn vk(self, call: &'static str) -> Result<T, OracleError>;
}

impl<T> VkResultExt<T> for Result<T, vk::Result> {
    fn vk(self, call: &'static str) -> Result<T, OracleError> {
        self.map_err(|result| OracleError::Vulkan { call, result })
    }
}

/// Objects one job created, destroyed in dependency order when dropped.
pub(crate) struct Scratch<'o> {
    pub(crate) oracle: &'o Oracle,
    pipelines: Vec<vk::Pipeline>,
    pipeline_layouts: Vec<vk::PipelineLayout>,
    set_layouts: Vec<vk::DescriptorSetLayout>,
    descriptor_pools: Vec<vk::DescriptorPool>,
    framebuffers: Vec<vk::Framebuffer>,
    render_passes: Vec<vk::RenderPass>,
    views: Vec<vk::ImageView>,
    samplers: Vec<vk::Sampler>,
    images: Vec<vk::Image>,
    buffers: Vec<vk::Buffer>,
    memories: Vec<vk::DeviceMemory>,
    modules: Vec<vk::ShaderModule>,
}

impl Drop for Scratch<'_> {
    fn drop(&mut self) {
        let d = &self.oracle.device;
        // SAFETY: each handle was created on `d` by this job and no
        // submitted work still uses it (`submit` waits for its fence; on an
        // early error nothing was submitted).
        unsafe {
            self.pipelines
                .iter()
                .for_each(|&p| d.destroy_pipeline(p, None));
            self.pipeline_layouts
                .iter()
                .for_each(|&p| d.destroy_pipeline_layout(p, None));
            self.set_layouts
                .iter()
                .for_each(|&l| d.destroy_descriptor_set_layout(l, None));
            self.descriptor_pools
                .iter()
                .for_each(|&p| d.destroy_descriptor_pool(p, None));
            self.framebuffers
                .iter()
                .for_each(|&f| d.destroy_framebuffer(f, None));
            self.render_passes
                .iter()
                .for_each(|&r| d.destroy_render_pass(r, None));
            self.views
                .iter()
                .for_each(|&v| d.destroy_image_view(v, None));
            self.samplers
                .iter()
                .for_each(|&s| d.destroy_sampler(s, None));
            self.images.iter().for_each(|&i| d.destroy_image(i, None));
            self.buffers.iter().for_each(|&b| d.destroy_buffer(b, None));
            self.memories.iter().for_each(|&m| d.free_memory(m, None));
            self.modules
                .iter()
                .for_each(|&m| d.destroy_shader_module(m, None));
        }
    }
}

/// A buffer in host-visible, coherent memory, mapped for the job's life.
pub(crate) struct HostBuffer {
    pub(crate) buffer: vk::Buffer,
    ptr: *mut u8,
    size: usize,
}

impl HostBuffer {
    /// The buffer's contents as words (after the job's fence has signalled).
    pub(crate) fn read_words(&self) -> Vec<u32> {
        let mut words = vec![0u32; self.size / 4];
        // SAFETY: `ptr` maps `size` bytes of coherent memory that stays
        // mapped until the scratch list frees it; the GPU finished writing
        // it (fence waited) and a host-read barrier made the writes visible.
        unsafe {
            std::ptr::copy_nonoverlapping(self.ptr, words.as_mut_ptr().cast::<u8>(), self.size);
        }
        words
    }
}

/// A texture's image, view and the staging buffer its texels come from.
pub(crate) struct Image {
    pub(crate) image: vk::Image,
    pub(crate) view: vk::ImageView,
    staging: Option<HostBuffer>,
    extent: vk::Extent3D,
    layers: u32,
    aspect: vk::ImageAspectFlags,
    /// The layout shaders use it in.
    layout: vk::ImageLayout,
}

impl Image {
    /// A buffer copy of every texel of every layer, tightly packed.
    fn whole_copy(&self) -> vk::BufferImageCopy {
        vk::BufferImageCopy::default()
            .image_subresource(vk::ImageSubresourceLayers {
                aspect_mask: self.aspect,
                mip_level: 0,
                base_array_layer: 0,
                layer_count: self.layers,
            })
            .image_extent(self.extent)
    }
}

impl<'o> Scratch<'o> {
    pub(crate) fn new(oracle: &'o Oracle) -> Self {
        Scratch {
            oracle,
            pipelines: Vec::new(),
            pipeline_layouts: Vec::new(),
            set_layouts: Vec::new(),
            descriptor_pools: Vec::new(),
            framebuffers: Vec::new(),
            render_passes: Vec::new(),
            views: Vec::new(),
            samplers: Vec::new(),
            images: Vec::new(),
            buffers: Vec::new(),
            memories: Vec::new(),
            modules: Vec::new(),
        }
    }

    fn device(&self) -> &'o ash::Device {
        &self.oracle.device
    }

    pub(crate) fn shader_module(&mut self, words: &[u32]) -> Result<vk::ShaderModule, OracleError> {
        if words.is_empty() {
            return Err(OracleError::InvalidJob("empty SPIR-V module".into()));
        }
        let info = vk::ShaderModuleCreateInfo::default().code(words);
        // SAFETY: see the module comment.
        let module = unsafe { self.device().create_shader_module(&info, None) }
            .vk("vkCreateShaderModule")?;
        self.modules.push(module);
        Ok(module)
    }

    pub(crate) fn pipeline(&mut self, pipeline: vk::Pipeline) {
        self.pipelines.push(pipeline);
    }

    pub(crate) fn render_pass(
        &mut self,
        info: &vk::RenderPassCreateInfo,
    ) -> Result<vk::RenderPass, OracleError> {
        // SAFETY: see the module comment.
        let pass =
            unsafe { self.device().create_render_pass(info, None) }.vk("vkCreateRenderPass")?;
        self.render_passes.push(pass);
        Ok(pass)
    }

    pub(crate) fn framebuffer(
        &mut self,
        info: &vk::FramebufferCreateInfo,
    ) -> Result<vk::Framebuffer, OracleError> {
        // SAFETY: see the module comment.
        let fb =
            unsafe { self.device().create_framebuffer(info, None) }.vk("vkCreateFramebuffer")?;
        self.framebuffers.push(fb);
        Ok(fb)
    }

    fn memory_for(
        &mut self,
        requirements: vk::MemoryRequirements,
        flags: vk::MemoryPropertyFlags,
    ) -> Result<vk::DeviceMemory, OracleError> {
        let props = &self.oracle.memory;
        let index = (0..props.memory_type_count)
            .find(|&i| {
                requirements.memory_type_bits & (1 << i) != 0
                    && props.memory_types[i as usize]
                        .property_flags
                        .contains(flags)
            })
            .ok_or_else(|| {
                OracleError::Unsupported(format!("no memory type with {flags:?} for a resource"))
            })?;
        let info = vk::MemoryAllocateInfo::default()
            .allocation_size(requirements.size)
            .memory_type_index(index);
        // SAFETY: see the module comment.
        let memory =
            unsafe { self.device().allocate_memory(&info, None) }.vk("vkAllocateMemory")?;
        self.memories.push(memory);
        Ok(memory)
    }

    /// A host-visible buffer holding `bytes` (at least 16 bytes long, zero
    /// padded), usable as a storage, uniform and transfer buffer.
    pub(crate) fn host_buffer(&mut self, bytes: &[u8]) -> Result<HostBuffer, OracleError> {
        let size = bytes.len().max(16);
        let info = vk::BufferCreateInfo::default().size(size as u64).usage(
            vk::BufferUsageFlags::STORAGE_BUFFER
                | vk::BufferUsageFlags::UNIFORM_BUFFER
                | vk::BufferUsageFlags::TRANSFER_SRC
                | vk::BufferUsageFlags::TRANSFER_DST,
        );
        let d = self.device();
        // SAFETY: see the module comment.
        let buffer = unsafe { d.create_buffer(&info, None) }.vk("vkCreateBuffer")?;
        self.buffers.push(buffer);
        let requirements = unsafe { d.get_buffer_memory_requirements(buffer) };
        let memory = self.memory_for(
            requirements,
            vk::MemoryPropertyFlags::HOST_VISIBLE | vk::MemoryPropertyFlags::HOST_COHERENT,
        )?;
        // SAFETY: `memory` is fresh, large enough for `buffer`, and host
        // visible; the mapping covers `requirements.size >= size` bytes, so
        // copying `bytes.len() <= size` bytes into it stays in bounds.
        let ptr = unsafe {
            d.bind_buffer_memory(buffer, memory, 0)
                .vk("vkBindBufferMemory")?;
            let ptr = d
                .map_memory(memory, 0, vk::WHOLE_SIZE, vk::MemoryMapFlags::empty())
                .vk("vkMapMemory")?
                .cast::<u8>();
            std::ptr::write_bytes(ptr, 0, size);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), ptr, bytes.len());
            ptr
        };
        Ok(HostBuffer { buffer, ptr, size })
    }

    /// An RGBA 32-bit image shaped like `t`, with a view; `t`'s texels
    /// (none for a render target) are staged for [`Scratch::record_upload`].
    pub(crate) fn image(
        &mut self,
        t: &Texture,
        usage: vk::ImageUsageFlags,
    ) -> Result<Image, OracleError> {
        self.image_of(t, usage, None)
    }

    /// [`Scratch::image`], or a storage image of `storage`'s format (in the
    /// general layout, staged even without texels so it can be read back).
    fn image_of(
        &mut self,
        t: &Texture,
        usage: vk::ImageUsageFlags,
        storage: Option<StorageFormat>,
    ) -> Result<Image, OracleError> {
        let (dim, width, height, layers) = (t.dim, t.width, t.height, t.layers);
        if width == 0 || height == 0 || layers == 0 {
            return Err(OracleError::InvalidJob(format!(
                "texture of {width}x{height}x{layers} texels"
            )));
        }
        if dim == TextureDim::Cube && (layers != 6 || width != height) {
            return Err(OracleError::InvalidJob(format!(
                "a cube texture needs 6 square faces, not {width}x{height}x{layers}"
            )));
        }
        let want = (width * height * layers) as usize;
        if !t.texels.is_empty() && t.texels.len() != want {
            return Err(OracleError::InvalidJob(format!(
                "texture of {width}x{height}x{layers} given {} texels",
                t.texels.len()
            )));
        }
        if t.depth && (t.kind != ScalarKind::Float || dim == TextureDim::D3) {
            return Err(OracleError::InvalidJob(
                "a depth texture is a float 2D, 2D array or cube texture".into(),
            ));
        }
        if storage.is_some() && t.depth {
            return Err(OracleError::InvalidJob(
                "a storage image cannot be a depth texture".into(),
            ));
        }
        if matches!(
            storage,
            Some(StorageFormat::Rgba8Unorm | StorageFormat::Rgba16Float)
        ) && t.kind != ScalarKind::Float
        {
            return Err(OracleError::InvalidJob(
                "an 8-bit unorm or 16-bit float storage image has float texels".into(),
            ));
        }
        let (format, aspect) = match (t.depth, storage) {
            (true, _) => (vk::Format::D32_SFLOAT, vk::ImageAspectFlags::DEPTH),
            (false, Some(f)) => (storage_format(f, t.kind), vk::ImageAspectFlags::COLOR),
            (false, None) => (rgba32_format(t.kind), vk::ImageAspectFlags::COLOR),
        };
        let (image_type, extent, array_layers) = match dim {
            TextureDim::D3 => (vk::ImageType::TYPE_3D, [width, height, layers], 1),
            _ => (vk::ImageType::TYPE_2D, [width, height, 1], layers),
        };
        let extent = vk::Extent3D {
            width: extent[0],
            height: extent[1],
            depth: extent[2],
        };
        let flags = if dim == TextureDim::Cube {
            vk::ImageCreateFlags::CUBE_COMPATIBLE
        } else {
            vk::ImageCreateFlags::empty()
        };
        let info = vk::ImageCreateInfo::default()
            .flags(flags)
            .image_type(image_type)
            .format(format)
            .extent(extent)
            .mip_levels(1)
            .array_layers(array_layers)
            .samples(vk::SampleCountFlags::TYPE_1)
            .tiling(vk::ImageTiling::OPTIMAL)
            .usage(usage | vk::ImageUsageFlags::TRANSFER_DST)
            .initial_layout(vk::ImageLayout::UNDEFINED);
        let d = self.device();
        // SAFETY: see the module comment.
        let image = unsafe { d.create_image(&info, None) }.vk("vkCreateImage")?;
        self.images.push(image);
        let requirements = unsafe { d.get_image_memory_requirements(image) };
        let memory = self.memory_for(requirements, vk::MemoryPropertyFlags::empty())?;
        unsafe { d.bind_image_memory(image, memory, 0) }.vk("vkBindImageMemory")?;
        let view_type = match dim {
            TextureDim::D2 => vk::ImageViewType::TYPE_2D,
            TextureDim::D2Array => vk::ImageViewType::TYPE_2D_ARRAY,
            TextureDim::Cube => vk::ImageViewType::CUBE,
            TextureDim::D3 => vk::ImageViewType::TYPE_3D,
        };
        let view_info = vk::ImageViewCreateInfo::default()
            .image(image)
            .view_type(view_type)
            .format(format)
            .subresource_range(subresource_range(aspect, array_layers));
        let view = unsafe { d.create_image_view(&view_info, None) }.vk("vkCreateImageView")?;
        self.views.push(view);
        let staging = match (t.texels.is_empty(), t.depth, storage) {
            (_, _, Some(f)) => {
                let mut texels = t.texels.clone();
                texels.resize(want, [0; 4]);
                Some(self.host_buffer(&storage_bytes(f, &texels))?)
            }
            (true, _, None) => None,
            (false, false, None) => Some(self.host_buffer(&texel_bytes(&t.texels))?),
            (false, true, None) => {
                let depths: Vec<u32> = t.texels.iter().map(|t| t[0]).collect();
                Some(self.host_buffer(&words_bytes(&depths))?)
            }
        };
        let layout = match storage {
            Some(_) => vk::ImageLayout::GENERAL,
            None => vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL,
        };
        Ok(Image {
            image,
            view,
            staging,
            extent,
            layers: array_layers,
            aspect,
            layout,
        })
    }

    /// Record the copy of `image`'s staged texels into it, leaving it in
    /// its layout for shader stages.
    pub(crate) fn record_upload(&self, cmd: vk::CommandBuffer, image: &Image) {
        let layout = image.layout;
        let d = self.device();
        let range = subresource_range(image.aspect, image.layers);
        let to_transfer = vk::ImageMemoryBarrier::default()
            .src_access_mask(vk::AccessFlags::empty())
            .dst_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .old_layout(vk::ImageLayout::UNDEFINED)
            .new_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
            .image(image.image)
            .subresource_range(range);
        let to_shader = to_transfer
            .src_access_mask(vk::AccessFlags::TRANSFER_WRITE)
            .dst_access_mask(vk::AccessFlags::SHADER_READ | vk::AccessFlags::SHADER_WRITE)
            .old_layout(vk::ImageLayout::TRANSFER_DST_OPTIMAL)
            .new_layout(layout);
        let region = image.whole_copy();
        // SAFETY: `cmd` is in the recording state; see the module comment.
        unsafe {
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TOP_OF_PIPE,
                vk::PipelineStageFlags::TRANSFER,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_transfer],
            );
            if let Some(staging) = &image.staging {
                d.cmd_copy_buffer_to_image(
                    cmd,
                    staging.buffer,
                    image.image,
                    vk::ImageLayout::TRANSFER_DST_OPTIMAL,
                    &[region],
                );
            }
            d.cmd_pipeline_barrier(
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::PipelineStageFlags::ALL_COMMANDS,
                vk::DependencyFlags::empty(),
                &[],
                &[],
                &[to_shader],
            );
        }
    }

    fn sampler(&mut self, sampler: &Sampler) -> Result<vk::Sampler, OracleError> {
        let mode = match sampler.address_mode {
            AddressMode::ClampToEdge => vk::SamplerAddressMode::CLAMP_TO_EDGE,
            AddressMode::Repeat => vk::SamplerAddressMode::REPEAT,
            AddressMode::MirroredRepeat => vk::SamplerAddressMode::MIRRORED_REPEAT,
        };
        let info = vk::SamplerCreateInfo::default()
            .mag_filter(vk::Filter::NEAREST)
            .min_filter(vk::Filter::NEAREST)
            .mipmap_mode(vk::SamplerMipmapMode::NEAREST)
            .address_mode_u(mode)
            .address_mode_v(mode)
            .address_mode_w(mode)
            .max_lod(0.0)
            .compare_enable(sampler.compare.is_some())
            .compare_op(sampler.compare.map_or(vk::CompareOp::NEVER, compare_op));
        // SAFETY: see the module comment.
        let s = unsafe { self.device().create_sampler(&info, None) }.vk("vkCreateSampler")?;
        self.samplers.push(s);
        Ok(s)
    }

    /// Create the descriptor sets and pipeline layout for `resources` and a
    /// push-constant block of `push_words` words, visible to `stages`.
    pub(crate) fn bind(
        &mut self,
        resources: &[ResourceBinding],
        push_words: usize,
        stages: vk::ShaderStageFlags,
    ) -> Result<Bound, OracleError> {
        let mut by_set: BTreeMap<u32, Vec<&ResourceBinding>> = BTreeMap::new();
        for r in resources {
            let slot = by_set.entry(r.set).or_default();
            if slot.iter().any(|o| o.binding == r.binding) {
                return Err(OracleError::InvalidJob(format!(
                    "two resources at set {} binding {}",
                    r.set, r.binding
                )));
            }
            slot.push(r);
        }
        let set_count = by_set.keys().next_back().map_or(0, |&s| s + 1);
        let d = self.device();
        let mut set_layouts = Vec::new();
        let mut pool_sizes: BTreeMap<i32, u32> = BTreeMap::new();
        for set in 0..set_count {
            let bindings: Vec<_> = by_set
                .get(&set)
                .into_iter()
                .flatten()
                .map(|r| {
                    let ty = descriptor_type(&r.resource);
                    *pool_sizes.entry(ty.as_raw()).or_default() += 1;
                    vk::DescriptorSetLayoutBinding::default()
                        .binding(r.binding)
                        .descriptor_type(ty)
                        .descriptor_count(1)
                        .stage_flags(stages)
                })
                .collect();
            let info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&bindings);
            // SAFETY: see the module comment.
            let layout = unsafe { d.create_descriptor_set_layout(&info, None) }
                .vk("vkCreateDescriptorSetLayout")?;
            self.set_layouts.push(layout);
            set_layouts.push(layout);
        }
        let push_bytes = (push_words * 4) as u32;
        let ranges = [vk::PushConstantRange::default()
            .stage_flags(stages)
            .offset(0)
            .size(push_bytes)];
        let mut layout_info = vk::PipelineLayoutCreateInfo::default().set_layouts(&set_layouts);
        if push_bytes > 0 {
            layout_info = layout_info.push_constant_ranges(&ranges);
        }
        let pipeline_layout =
            unsafe { d.create_pipeline_layout(&layout_info, None) }.vk("vkCreatePipelineLayout")?;
        self.pipeline_layouts.push(pipeline_layout);

        let mut bound = Bound {
            pipeline_layout,
            sets: Vec::new(),
            storage: BTreeMap::new(),
            images: Vec::new(),
            storage_images: BTreeMap::new(),
        };
        if set_count == 0 {
            return Ok(bound);
        }
        let sizes: Vec<_> = pool_sizes
            .iter()
            .map(|(&ty, &n)| vk::DescriptorPoolSize {
                ty: vk::DescriptorType::from_raw(ty),
                descriptor_count: n,
            })
            .collect();
        let pool_info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(set_count)
            .pool_sizes(&sizes);
        let pool =
            unsafe { d.create_descriptor_pool(&pool_info, None) }.vk("vkCreateDescriptorPool")?;
        self.descriptor_pools.push(pool);
        let alloc = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&set_layouts);
        bound.sets =
            unsafe { d.allocate_descriptor_sets(&alloc) }.vk("vkAllocateDescriptorSets")?;

        for r in resources {
            let set = bound.sets[r.set as usize];
            let write = vk::WriteDescriptorSet::default()
                .dst_set(set)
                .dst_binding(r.binding)
                .descriptor_type(descriptor_type(&r.resource));
            let read_only = vk::ImageLayout::SHADER_READ_ONLY_OPTIMAL;
            match &r.resource {
                Resource::StorageBuffer(words) | Resource::UniformBuffer(words) => {
                    let buffer = self.host_buffer(&words_bytes(words))?;
                    let info = [vk::DescriptorBufferInfo::default()
                        .buffer(buffer.buffer)
                        .range(vk::WHOLE_SIZE)];
                    unsafe { d.update_descriptor_sets(&[write.buffer_info(&info)], &[]) };
                    if matches!(r.resource, Resource::StorageBuffer(_)) {
                        bound.storage.insert((r.set, r.binding), buffer);
                    }
                }
                Resource::CombinedImageSampler(texture, sampler) => {
                    let image = self.image(texture, vk::ImageUsageFlags::SAMPLED)?;
                    let sampler = self.sampler(sampler)?;
                    let info = [vk::DescriptorImageInfo::default()
                        .sampler(sampler)
                        .image_view(image.view)
                        .image_layout(read_only)];
                    unsafe { d.update_descriptor_sets(&[write.image_info(&info)], &[]) };
                    bound.images.push(image);
                }
                Resource::SampledImage(texture) => {
                    let image = self.image(texture, vk::ImageUsageFlags::SAMPLED)?;
                    let info = [vk::DescriptorImageInfo::default()
                        .image_view(image.view)
                        .image_layout(read_only)];
                    unsafe { d.update_descriptor_sets(&[write.image_info(&info)], &[]) };
                    bound.images.push(image);
                }
                Resource::Sampler(sampler) => {
                    let sampler = self.sampler(sampler)?;
                    let info = [vk::DescriptorImageInfo::default().sampler(sampler)];
                    unsafe { d.update_descriptor_sets(&[write.image_info(&info)], &[]) };
                }
                Resource::StorageImage(texture, format) => {
                    let usage = vk::ImageUsageFlags::STORAGE | vk::ImageUsageFlags::TRANSFER_SRC;
                    let image = self.image_of(texture, usage, Some(*format))?;
                    let info = [vk::DescriptorImageInfo::default()
                        .image_view(image.view)
                        .image_layout(vk::ImageLayout::GENERAL)];
                    unsafe { d.update_descriptor_sets(&[write.image_info(&info)], &[]) };
                    bound
                        .storage_images
                        .insert((r.set, r.binding), (bound.images.len(), *format));
                    bound.images.push(image);
                }
            }
        }
        Ok(bound)
    }

    /// Record commands with `record` into a fresh command buffer, submit it
    /// and wait for it to finish.
    pub(crate) fn submit(&self, record: impl FnOnce(vk::CommandBuffer)) -> Result<(), OracleError> {
        let d = self.device();
        let submission = self.oracle.submit.lock().unwrap_or_else(|e| e.into_inner());
        let alloc = vk::CommandBufferAllocateInfo::default()
            .command_pool(submission.pool)
            .level(vk::CommandBufferLevel::PRIMARY)
            .command_buffer_count(1);
        // SAFETY: the pool and queue are used only under `submission`'s
        // lock; the command buffer and fence are freed before it is released,
        // after the fence has signalled (or the submission failed).
        unsafe {
            let cmd = d
                .allocate_command_buffers(&alloc)
                .vk("vkAllocateCommandBuffers")?[0];
            let fence = match d.create_fence(&vk::FenceCreateInfo::default(), None) {
                Ok(f) => f,
                Err(result) => {
                    d.free_command_buffers(submission.pool, &[cmd]);
                    return Err(OracleError::Vulkan {
                        call: "vkCreateFence",
                        result,
                    });
                }
            };
            let result = (|| {
                let begin = vk::CommandBufferBeginInfo::default()
                    .flags(vk::CommandBufferUsageFlags::ONE_TIME_SUBMIT);
                d.begin_command_buffer(cmd, &begin)
                    .vk("vkBeginCommandBuffer")?;
                record(cmd);
                d.end_command_buffer(cmd).vk("vkEndCommandBuffer")?;
                let cmds = [cmd];
                let submit = vk::SubmitInfo::default().command_buffers(&cmds);
                d.queue_submit(submission.queue, &[submit], fence)
                    .vk("vkQueueSubmit")?;
                d.wait_for_fences(&[fence], true, u64::MAX)
                    .vk("vkWaitForFences")
            })();
            d.destroy_fence(fence, None);
            d.free_command_buffers(submission.pool, &[cmd]);
            result
        }
    }
}

/// A job's descriptor sets, pipeline layout and the buffers and images
/// behind them.
pub(crate) struct Bound {
    pub(crate) pipeline_layout: vk::PipelineLayout,
    pub(crate) sets: Vec<vk::DescriptorSet>,
    pub(crate) storage: BTreeMap<(u32, u32), HostBuffer>,
    pub(crate) images: Vec<Image>,
    /// Storage images by `(set, binding)`: index into `images`, format.
    pub(crate) storage_images: BTreeMap<(u32, u32), (usize, StorageFormat)>,
}

impl Bound {
    /// Record the texture uploads, descriptor-set and push-constant binds.
    pub(crate) fn record(
        &self,
        scratch: &Scratch<'_>,
        cmd: vk::CommandBuffer,
        bind_point: vk::PipelineBindPoint,
        stages: vk::ShaderStageFlags,
        push_constants: &[u32],
    ) {
        for image in &self.images {
            scratch.record_upload(cmd, image);
        }
        let d = scratch.device();
        // SAFETY: `cmd` is recording; the sets and layout are live.
        unsafe {
            if !self.sets.is_empty() {
                d.cmd_bind_descriptor_sets(
                    cmd,
                    bind_point,
                    self.pipeline_layout,
                    0,
                    &self.sets,
                    &[],
                );
            }
            if !push_constants.is_empty() {
                d.cmd_push_constants(
                    cmd,
                    self.pipeline_layout,
                    stages,
                    0,
                    &words_bytes(push_constants),
                );
            }
        }
    }

    /// Record the copy of every storage image back into its staging
    /// buffer, visible to the host (after the shader work).
    pub(crate) fn record_image_readback(&self, scratch: &Scratch<'_>, cmd: vk::CommandBuffer) {
        let d = scratch.device();
        for &(i, _) in self.storage_images.values() {
            let image = &self.images[i];
            let Some(staging) = &image.staging else {
                continue;
            };
            let to_transfer = vk::ImageMemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::TRANSFER_READ)
                .old_layout(vk::ImageLayout::GENERAL)
                .new_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
                .src_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .dst_queue_family_index(vk::QUEUE_FAMILY_IGNORED)
                .image(image.image)
                .subresource_range(subresource_range(image.aspect, image.layers));
            let region = image.whole_copy();
            // SAFETY: `cmd` is recording; the image and buffer are live.
            unsafe {
                d.cmd_pipeline_barrier(
                    cmd,
                    vk::PipelineStageFlags::ALL_COMMANDS,
                    vk::PipelineStageFlags::TRANSFER,
                    vk::DependencyFlags::empty(),
                    &[],
                    &[],
                    &[to_transfer],
                );
                d.cmd_copy_image_to_buffer(
                    cmd,
                    image.image,
                    vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                    staging.buffer,
                    &[region],
                );
            }
        }
        record_to_host(
            d,
            cmd,
            vk::PipelineStageFlags::TRANSFER,
            vk::AccessFlags::TRANSFER_WRITE,
        );
    }

    /// Every storage image's texels (after the job finished).
    pub(crate) fn read_storage_images(&self) -> BTreeMap<(u32, u32), Vec<[u32; 4]>> {
        self.storage_images
            .iter()
            .filter_map(|(&key, &(i, format))| {
                let image = &self.images[i];
                let staging = image.staging.as_ref()?;
                let mut texels = storage_texels(format, &staging.read_words());
                let e = image.extent;
                texels.truncate((e.width * e.height * e.depth * image.layers) as usize);
                Some((key, texels))
            })
            .collect()
    }

    /// Every storage buffer's words (after the job finished).
    pub(crate) fn read_storage(&self) -> BTreeMap<(u32, u32), Vec<u32>> {
        self.storage
            .iter()
            .map(|(&key, buffer)| (key, buffer.read_words()))
            .collect()
    }
}

/// A job's entry point: its name and specialization constants (4 bytes
/// each), kept alive for the pipeline's creation.
pub(crate) struct EntryPoint {
    pub(crate) name: CString,
    map: Vec<vk::SpecializationMapEntry>,
    data: Vec<u8>,
}

impl EntryPoint {
    pub(crate) fn new(name: &str, constants: &[crate::SpecConstant]) -> Result<Self, OracleError> {
        let name = CString::new(name)
            .map_err(|_| OracleError::InvalidJob("entry point name holds a NUL".into()))?;
        let map = constants
            .iter()
            .enumerate()
            .map(|(i, c)| vk::SpecializationMapEntry {
                constant_id: c.id,
                offset: (i * 4) as u32,
                size: 4,
            })
            .collect();
        let data = constants
            .iter()
            .flat_map(|c| c.bits.to_le_bytes())
            .collect();
        Ok(EntryPoint { name, map, data })
    }

    /// The specialization info to point a stage at.
    pub(crate) fn specialization(&self) -> vk::SpecializationInfo<'_> {
        vk::SpecializationInfo::default()
            .map_entries(&self.map)
            .data(&self.data)
    }
}

/// Record a barrier making `src`'s writes (`access`) visible to the host.
pub(crate) fn record_to_host(
    device: &ash::Device,
    cmd: vk::CommandBuffer,
    src: vk::PipelineStageFlags,
    access: vk::AccessFlags,
) {
    let to_host = vk::MemoryBarrier::default()
        .src_access_mask(access)
        .dst_access_mask(vk::AccessFlags::HOST_READ);
    // SAFETY: `cmd` is recording (the caller's contract).
    unsafe {
        device.cmd_pipeline_barrier(
            cmd,
            src,
            vk::PipelineStageFlags::HOST,
            vk::DependencyFlags::empty(),
            &[to_host],
            &[],
            &[],
        );
    }
}

fn compare_op(op: CompareOp) -> vk::CompareOp {
    match op {
        CompareOp::Never => vk::CompareOp::NEVER,
        CompareOp::Less => vk::CompareOp::LESS,
        CompareOp::Equal => vk::CompareOp::EQUAL,
        CompareOp::LessOrEqual => vk::CompareOp::LESS_OR_EQUAL,
        CompareOp::Greater => vk::CompareOp::GREATER,
        CompareOp::NotEqual => vk::CompareOp::NOT_EQUAL,
        CompareOp::GreaterOrEqual => vk::CompareOp::GREATER_OR_EQUAL,
        CompareOp::Always => vk::CompareOp::ALWAYS,
    }
}

pub(crate) fn rgba32_format(kind: ScalarKind) -> vk::Format {
    match kind {
        ScalarKind::Float => vk::Format::R32G32B32A32_SFLOAT,
        ScalarKind::Sint => vk::Format::R32G32B32A32_SINT,
        ScalarKind::Uint => vk::Format::R32G32B32A32_UINT,
    }
}

fn storage_format(format: StorageFormat, kind: ScalarKind) -> vk::Format {
    match (format, kind) {
        (StorageFormat::Rgba32, kind) => rgba32_format(kind),
        (StorageFormat::R32, ScalarKind::Float) => vk::Format::R32_SFLOAT,
        (StorageFormat::R32, ScalarKind::Sint) => vk::Format::R32_SINT,
        (StorageFormat::R32, ScalarKind::Uint) => vk::Format::R32_UINT,
        (StorageFormat::Rgba8Unorm, _) => vk::Format::R8G8B8A8_UNORM,
        (StorageFormat::Rgba16Float, _) => vk::Format::R16G16B16A16_SFLOAT,
    }
}

/// Texels as the bytes of `format` (each word holds one component's bits).
fn storage_bytes(format: StorageFormat, texels: &[[u32; 4]]) -> Vec<u8> {
    match format {
        StorageFormat::Rgba32 => texel_bytes(texels),
        StorageFormat::R32 => texels.iter().flat_map(|t| t[0].to_le_bytes()).collect(),
        StorageFormat::Rgba8Unorm => texels.iter().flatten().map(|&c| c as u8).collect(),
        StorageFormat::Rgba16Float => texels
            .iter()
            .flatten()
            .flat_map(|&c| (c as u16).to_le_bytes())
            .collect(),
    }
}

/// The inverse of [`storage_bytes`], from the staging buffer's words.
fn storage_texels(format: StorageFormat, words: &[u32]) -> Vec<[u32; 4]> {
    let bytes = words_bytes(words);
    match format {
        StorageFormat::Rgba32 => words
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect(),
        StorageFormat::R32 => words.iter().map(|&w| [w, 0, 0, 0]).collect(),
        StorageFormat::Rgba8Unorm => bytes
            .chunks_exact(4)
            .map(|c| std::array::from_fn(|k| u32::from(c[k])))
            .collect(),
        StorageFormat::Rgba16Float => bytes
            .chunks_exact(8)
            .map(|c| std::array::from_fn(|k| u16::from_le_bytes([c[2 * k], c[2 * k + 1]]) as u32))
            .collect(),
    }
}

pub(crate) fn subresource_range(
    aspect: vk::ImageAspectFlags,
    layers: u32,
) -> vk::ImageSubresourceRange {
    vk::ImageSubresourceRange {
        aspect_mask: aspect,
        base_mip_level: 0,
        level_count: 1,
        base_array_layer: 0,
        layer_count: layers,
    }
}

fn descriptor_type(resource: &Resource) -> vk::DescriptorType {
    match resource {
        Resource::StorageBuffer(_) => vk::DescriptorType::STORAGE_BUFFER,
        Resource::UniformBuffer(_) => vk::DescriptorType::UNIFORM_BUFFER,
        Resource::CombinedImageSampler(..) => vk::DescriptorType::COMBINED_IMAGE_SAMPLER,
        Resource::SampledImage(_) => vk::DescriptorType::SAMPLED_IMAGE,
        Resource::Sampler(_) => vk::DescriptorType::SAMPLER,
        Resource::StorageImage(..) => vk::DescriptorType::STORAGE_IMAGE,
    }
}

pub(crate) fn words_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn texel_bytes(texels: &[[u32; 4]]) -> Vec<u8> {
    texels
        .iter()
        .flatten()
        .flat_map(|w| w.to_le_bytes())
        .collect()
}
