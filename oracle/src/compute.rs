//! Compute jobs: one dispatch, storage buffers read back.

use crate::device::Oracle;
use crate::gpu::{Scratch, VkResultExt, specialization};
use crate::{ComputeJob, ComputeOutput, OracleError};
use ash::vk;
use std::ffi::CString;

impl Oracle {
    /// Run `job`'s dispatch and return every storage buffer's final words.
    pub fn run_compute(&self, job: &ComputeJob<'_>) -> Result<ComputeOutput, OracleError> {
        let mut scratch = Scratch::new(self);
        let stages = vk::ShaderStageFlags::COMPUTE;
        let module = scratch.shader_module(job.spirv)?;
        let bound = scratch.bind(job.resources, job.push_constants.len(), stages)?;
        let entry = CString::new(job.entry_point)
            .map_err(|_| OracleError::InvalidJob("entry point name holds a NUL".into()))?;
        let (entries, data) = specialization(job.specialization);
        let spec = vk::SpecializationInfo::default()
            .map_entries(&entries)
            .data(&data);
        let stage = vk::PipelineShaderStageCreateInfo::default()
            .stage(stages)
            .module(module)
            .name(&entry)
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
            let to_host = vk::MemoryBarrier::default()
                .src_access_mask(vk::AccessFlags::SHADER_WRITE)
                .dst_access_mask(vk::AccessFlags::HOST_READ);
            // SAFETY: `cmd` is recording; the pipeline is alive.
            unsafe {
                let d = &self.device;
                d.cmd_bind_pipeline(cmd, vk::PipelineBindPoint::COMPUTE, pipeline);
                d.cmd_dispatch(cmd, x, y, z);
                d.cmd_pipeline_barrier(
                    cmd,
                    vk::PipelineStageFlags::COMPUTE_SHADER,
                    vk::PipelineStageFlags::HOST,
                    vk::DependencyFlags::empty(),
                    &[to_host],
                    &[],
                    &[],
                );
            }
        })?;
        Ok(ComputeOutput {
            storage_buffers: bound.read_storage(),
        })
    }
}
