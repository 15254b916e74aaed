//! Compute jobs: one dispatch, storage buffers read back.

use crate::device::Oracle;
use crate::gpu::{EntryPoint, Scratch, VkResultExt, record_to_host};
use crate::{ComputeJob, ComputeOutput, OracleError};
use ash::vk;

impl Oracle {
    /// Run `job`'s dispatch and return every storage buffer's final words.
    pub fn run_compute(&self, job: &ComputeJob<'_>) -> Result<ComputeOutput, OracleError> {
        let mut scratch = Scratch::new(self);
        let stages = vk::ShaderStageFlags::COMPUTE;
        let module = scratch.shader_module(job.spirv)?;
        let bound = scratch.bind(job.resources, job.push_constants.len(), stages)?;
        let entry = EntryPoint::new(job.entry_point, job.specialization)?;
        let spec = entry.specialization();
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(stages)
            .module(module)
            .name(&entry.name)
            .specialization_info(&spec);
        let info = vk::ComputePipelineCreateInfo::default()
            .stage(stage)
            .layout(bound.pipeline_layout);
        // SAFETY: the module, layout and every structure `info` points to
        // are alive for the call; the pipeline joins the scratch list.
        let pipeline = unsafe {
            self.device
                .create_compute_pipelines(vk::PipelineCache::null(), &[info], None)
        }
        .map_err(|(_, result)| result)
        .vk("vkCreateComputePipelines")?[0];
        scratch.pipeline(pipeline);

        let [x, y, z] = job.workgroups;
        scratch.submit(|cmd| {
            bound.record(
                &scratch,
                cmd,
                vk::PipelineBindPoint::COMPUTE,
                stages,
                job.push_constants,
            );
            // SAFETY: `cmd` is recording; the pipeline is alive.
            unsafe {
                let d = &self.device;
                d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
                d.cmd_dispatch(cmd, x, y, z);
            }
            record_to_host(
                &self.device,
                cmd,
                vk::PipelineStageFlags::COMPUTE_SHADER,
                vk::AccessFlags::SHADER_WRITE,
            );
            bound.record_image_readback(&scratch, cmd);
        })?;
        Ok(ComputeOutput {
            storage_buffers: bound.read_storage(),
            storage_images: bound.read_storage_images(),
        })
    }
}
