//! Opening lavapipe: instance, physical-device choice, device, queue.

use crate::OracleError;
use crate::gpu::VkResultExt;
use ash::vk;
use std::sync::Mutex;

/// A Vulkan device on lavapipe, shared by every job.
///
/// Jobs may run from several threads at once: each builds its own objects
/// (shader modules, pipelines, memory), and only the command pool and queue
/// — which Vulkan requires to be externally synchronised — sit behind a
/// lock.
pub struct Oracle {
    // Kept alive: `instance` and `device` hold function pointers into the
    // loader this owns.
    _entry: ash::Entry,
    instance: ash::Instance,
    pub(crate) device: ash::Device,
    pub(crate) memory: vk::PhysicalDeviceMemoryProperties,
    pub(crate) submit: Mutex<Submission>,
    device_name: String,
}

/// The externally synchronised part: one queue, one command pool.
pub(crate) struct Submission {
    pub(crate) queue: vk::Queue,
    pub(crate) pool: vk::CommandPool,
}

impl Oracle {
    /// Open the Vulkan loader and create a device on lavapipe (the physical
    /// device whose driver is llvmpipe), with every feature it supports.
    pub fn new() -> Result<Oracle, OracleError> {
        // SAFETY: loading libvulkan runs its initialisers; the Khronos loader
        // is designed to be loaded this way and has no preconditions.
        let entry =
            unsafe { ash::Entry::load() }.map_err(|e| OracleError::NoLoader(e.to_string()))?;
        let app = vk::ApplicationInfo::default()
            .application_name(c"lathe-oracle")
            .api_version(vk::API_VERSION_1_3);
        let info = vk::InstanceCreateInfo::default().application_info(&app);
        // SAFETY: `info` and what it points to outlive the call.
        let instance =
            unsafe { entry.create_instance(&info, None) }.map_err(|result| match result {
                vk::Result::ERROR_INCOMPATIBLE_DRIVER => OracleError::NoLavapipe {
                    found: String::new(),
                },
                result => OracleError::Vulkan {
                    call: "vkCreateInstance",
                    result,
                },
            })?;
        match Self::open_device(&instance) {
            Ok((device, memory, submission, device_name)) => Ok(Oracle {
                _entry: entry,
                instance,
                device,
                memory,
                submit: Mutex::new(submission),
                device_name,
            }),
            Err(e) => {
                // SAFETY: nothing created from `instance` is alive.
                unsafe { instance.destroy_instance(None) };
                Err(e)
            }
        }
    }

    /// The device's name as the driver reports it (`llvmpipe (LLVM …)`).
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    fn open_device(
        instance: &ash::Instance,
    ) -> Result<
        (
            ash::Device,
            vk::PhysicalDeviceMemoryProperties,
            Submission,
            String,
        ),
        OracleError,
    > {
        // SAFETY: `instance` is a live instance for all calls below.
        let physical =
            unsafe { instance.enumerate_physical_devices() }.vk("vkEnumeratePhysicalDevices")?;
        let mut names = Vec::new();
        let mut chosen = None;
        for &pd in &physical {
            let props = unsafe { instance.get_physical_device_properties(pd) };
            let name = props
                .device_name_as_c_str()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if chosen.is_none() && name.starts_with("llvmpipe") {
                chosen = Some((pd, props, name.clone()));
            }
            names.push(name);
        }
        let Some((pd, props, name)) = chosen else {
            return Err(OracleError::NoLavapipe {
                found: names.join(", "),
            });
        };
        if props.api_version < vk::API_VERSION_1_3 {
            return Err(OracleError::OldDriver {
                found: format!(
                    "{}.{}",
                    vk::api_version_major(props.api_version),
                    vk::api_version_minor(props.api_version)
                ),
            });
        }
        let families = unsafe { instance.get_physical_device_queue_family_properties(pd) };
        let wanted = vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE;
        let family = families
            .iter()
            .position(|f| f.queue_flags.contains(wanted))
            .ok_or_else(|| {
                OracleError::Unsupported("lavapipe has no graphics+compute queue".into())
            })? as u32;

        // Enable everything lavapipe offers: the oracle runs arbitrary
        // corpus shaders, and a feature left off would reject some of them.
        let mut f11 = vk::PhysicalDeviceVulkan11Features::default();
        let mut f12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut f13 = vk::PhysicalDeviceVulkan13Features::default();
        let mut features = vk::PhysicalDeviceFeatures2::default()
            .push_next(&mut f11)
            .push_next(&mut f12)
            .push_next(&mut f13);
        unsafe { instance.get_physical_device_features2(pd, &mut features) };
        // Robust buffer access would turn out-of-bounds accesses into
        // defined values; tests must not depend on them, and it costs time.
        features.features.robust_buffer_access = vk::FALSE;
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default()
            .queue_family_index(family)
            .queue_priorities(&priorities)];
        let info = vk::DeviceCreateInfo::default()
            .queue_create_infos(&queues)
            .push_next(&mut features);
        // SAFETY: `pd` belongs to `instance`; `info` and its chain are live.
        let device = unsafe { instance.create_device(pd, &info, None) }.vk("vkCreateDevice")?;
        let memory = unsafe { instance.get_physical_device_memory_properties(pd) };
        // SAFETY: queue 0 of `family` was requested above.
        let queue = unsafe { device.get_device_queue(family, 0) };
        let pool_info = vk::CommandPoolCreateInfo::default()
            .queue_family_index(family)
            .flags(vk::CommandPoolCreateFlags::TRANSIENT);
        let pool = match unsafe { device.create_command_pool(&pool_info, None) } {
            Ok(pool) => pool,
            Err(result) => {
                unsafe { device.destroy_device(None) };
                return Err(OracleError::Vulkan {
                    call: "vkCreateCommandPool",
                    result,
                });
            }
        };
        Ok((device, memory, Submission { queue, pool }, name))
    }
}

impl Drop for Oracle {
    fn drop(&mut self) {
        let submit = self.submit.get_mut().unwrap_or_else(|e| e.into_inner());
        // SAFETY: every job waits for its work and destroys its objects
        // before returning, so only the pool, device and instance are left.
        unsafe {
            let _ = self.device.device_wait_idle();
            self.device.destroy_command_pool(submit.pool, None);
            self.device.destroy_device(None);
            self.instance.destroy_instance(None);
        }
    }
}
