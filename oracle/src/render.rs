//! Fragment jobs: the built-in vertex shader's full-screen triangle drawn
//! with the job's fragment shader into RGBA 32-bit targets, read back.

use crate::device::Oracle;
use crate::gpu::{EntryPoint, Scratch, VkResultExt, record_to_host, rgba32_format};
use crate::vertex::vertex_shader;
use crate::{FragmentJob, OracleError, Rendered, Texture, TextureDim};
use ash::vk;

impl Oracle {
    /// Draw `job` and return every target's texels.
    pub fn render_fragment(&self, job: &FragmentJob<'_>) -> Result<Rendered, OracleError> {
        let (width, height) = (job.width, job.height);
        if width == 0 || height == 0 || width > 4096 || height > 4096 {
            return Err(OracleError::InvalidJob(format!(
                "render target of {width}x{height} pixels"
            )));
        }
        if job.targets.is_empty() {
            return Err(OracleError::InvalidJob("no render target".into()));
        }
        let mut scratch = Scratch::new(self);
        let stages = vk::ShaderStageFlags::ALL_GRAPHICS;
        let vertex = scratch.shader_module(&vertex_shader(job.varyings)?)?;
        let fragment = scratch.shader_module(job.spirv)?;
        let bound = scratch.bind(job.resources, job.push_constants.len(), stages)?;

        let mut targets = Vec::new();
        let mut readbacks = Vec::new();
        for &kind in job.targets {
            let usage = vk::ImageUsageFlags::COLOR_ATTACHMENT | vk::ImageUsageFlags::TRANSFER_SRC;
            let shape = Texture {
                dim: TextureDim::D2,
                kind,
                depth: false,
                width,
                height,
                layers: 1,
                texels: Vec::new(),
            };
            targets.push(scratch.image(&shape, usage)?);
            readbacks.push(scratch.host_buffer(&vec![0; (width * height * 16) as usize])?);
        }
        let attachments: Vec<_> = job
            .targets
            .iter()
            .map(|&kind| {
                vk::AttachmentDescription::default()
                    .format(rgba32_format(kind))
                    .samples(vk::SampleCountFlags::TYPE_1)
                    .load_op(vk::AttachmentLoadOp::CLEAR)
                    .store_op(vk::AttachmentStoreOp::STORE)
                    .stencil_load_op(vk::AttachmentLoadOp::DONT_CARE)
                    .stencil_store_op(vk::AttachmentStoreOp::DONT_CARE)
                    .initial_layout(vk::ImageLayout::UNDEFINED)
                    .final_layout(vk::ImageLayout::TRANSFER_SRC_OPTIMAL)
            })
            .collect();
        let refs: Vec<_> = (0..job.targets.len() as u32)
            .map(|i| vk::AttachmentReference {
                attachment: i,
                layout: vk::ImageLayout::COLOR_ATTACHMENT_OPTIMAL,
            })
            .collect();
        let subpasses = [vk::SubpassDescription::default()
            .pipeline_bind_point(vk::PipelineBindPoint::GRAPHICS)
            .color_attachments(&refs)];
        let dependencies = [vk::SubpassDependency {
            src_subpass: 0,
            dst_subpass: vk::SUBPASS_EXTERNAL,
            src_stage_mask: vk::PipelineStageFlags::COLOR_ATTACHMENT_OUTPUT,
            dst_stage_mask: vk::PipelineStageFlags::TRANSFER,
            src_access_mask: vk::AccessFlags::COLOR_ATTACHMENT_WRITE,
            dst_access_mask: vk::AccessFlags::TRANSFER_READ,
            dependency_flags: vk::DependencyFlags::empty(),
        }];
        let pass_info = vk::RenderPassCreateInfo::default()
            .attachments(&attachments)
            .subpasses(&subpasses)
            .dependencies(&dependencies);
        let render_pass = scratch.render_pass(&pass_info)?;
        let views: Vec<_> = targets.iter().map(|t| t.view).collect();
        let fb_info = vk::FramebufferCreateInfo::default()
            .render_pass(render_pass)
            .attachments(&views)
            .width(width)
            .height(height)
            .layers(1);
        let framebuffer = scratch.framebuffer(&fb_info)?;

        let entry = EntryPoint::new(job.entry_point, job.specialization)?;
        let spec = entry.specialization();
        let shader_stages = [
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::VERTEX)
                .module(vertex)
                .name(c"main"),
            vk::PipelineShaderStageCreateInfo::default()
                .stage(vk::ShaderStageFlags::FRAGMENT)
                .module(fragment)
                .name(&entry.name)
                .specialization_info(&spec),
        ];
        let vertex_input = vk::PipelineVertexInputStateCreateInfo::default();
        let assembly = vk::PipelineInputAssemblyStateCreateInfo::default()
            .topology(vk::PrimitiveTopology::TRIANGLE_LIST);
        let viewports = [vk::Viewport {
            x: 0.0,
            y: 0.0,
            width: width as f32,
            height: height as f32,
            min_depth: 0.0,
            max_depth: 1.0,
        }];
        let scissors = [vk::Rect2D {
            offset: vk::Offset2D { x: 0, y: 0 },
            extent: vk::Extent2D { width, height },
        }];
        let viewport = vk::PipelineViewportStateCreateInfo::default()
            .viewports(&viewports)
            .scissors(&scissors);
        let raster = vk::PipelineRasterizationStateCreateInfo::default()
            .polygon_mode(vk::PolygonMode::FILL)
            .cull_mode(vk::CullModeFlags::NONE)
            .front_face(vk::FrontFace::COUNTER_CLOCKWISE)
            .line_width(1.0);
        let multisample = vk::PipelineMultisampleStateCreateInfo::default()
            .rasterization_samples(vk::SampleCountFlags::TYPE_1);
        let blend_attachments: Vec<_> = job
            .targets
            .iter()
            .map(|_| {
                vk::PipelineColorBlendAttachmentState::default()
                    .blend_enable(false)
                    .color_write_mask(vk::ColorComponentFlags::RGBA)
            })
            .collect();
        let blend =
            vk::PipelineColorBlendStateCreateInfo::default().attachments(&blend_attachments);
        let info = vk::GraphicsPipelineCreateInfo::default()
            .stages(&shader_stages)
            .vertex_input_state(&vertex_input)
            .input_assembly_state(&assembly)
            .viewport_state(&viewport)
            .rasterization_state(&raster)
            .multisample_state(&multisample)
            .color_blend_state(&blend)
            .layout(bound.pipeline_layout)
            .render_pass(render_pass)
            .subpass(0);
        // SAFETY: every object and structure `info` points to is alive for
        // the call; the pipeline joins the scratch list.
        let pipeline = unsafe {
            self.device
                .create_graphics_pipelines(vk::PipelineCache::null(), &[info], None)
        }
        .map_err(|(_, result)| result)
        .vk("vkCreateGraphicsPipelines")?[0];
        scratch.pipeline(pipeline);

        let clear: Vec<_> = job
            .targets
            .iter()
            .map(|_| vk::ClearValue {
                color: vk::ClearColorValue { uint32: job.clear },
            })
            .collect();
        scratch.submit(|cmd| {
            bound.record(
                &scratch,
                cmd,
                vk::PipelineBindPoint::GRAPHICS,
                stages,
                job.push_constants,
            );
            let begin = vk::RenderPassBeginInfo::default()
                .render_pass(render_pass)
                .framebuffer(framebuffer)
                .render_area(scissors[0])
                .clear_values(&clear);
            let region = vk::BufferImageCopy::default()
                .image_subresource(vk::ImageSubresourceLayers {
                    aspect_mask: vk::ImageAspectFlags::COLOR,
                    mip_level: 0,
                    base_array_layer: 0,
                    layer_count: 1,
                })
                .image_extent(vk::Extent3D {
                    width,
                    height,
                    depth: 1,
                });
            // SAFETY: `cmd` is recording; every object used is alive.
            unsafe {
                let d = &self.device;
                d.cmd_begin_render_pass(cmd, &begin, vk::SubpassContents::INLINE);
                d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::GRAPHICS, pipeline);
                d.cmd_draw(cmd, 3, 1, 0, 0);
                d.cmd_end_render_pass(cmd);
                for (target, readback) in targets.iter().zip(&readbacks) {
                    d.cmd_copy_image_to_buffer(
                        cmd,
                        target.image,
                        vk::ImageLayout::TRANSFER_SRC_OPTIMAL,
                        readback.buffer,
                        &[region],
                    );
                }
            }
            record_to_host(
                &self.device,
                cmd,
                vk::PipelineStageFlags::TRANSFER,
                vk::AccessFlags::TRANSFER_WRITE,
            );
        })?;
        let targets = readbacks
            .iter()
            .map(|r| {
                r.read_words()
                    .chunks_exact(4)
                    .map(|c| [c[0], c[1], c[2], c[3]])
                    .collect()
            })
            .collect();
        Ok(Rendered {
            width,
            height,
            targets,
        })
    }
}
