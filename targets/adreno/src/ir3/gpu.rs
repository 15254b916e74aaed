//! Adreno GPU models and the ir3 ISA generation each one decodes with.
//!
//! The ir3 spec gates encodings by generation, written like Mesa's isaspec
//! `gpu_id`: 300 for a3xx, 400 for a4xx and so on up to 700 for a7xx. A GPU
//! model such as `a630` uses the generation of its series (`600`), not its
//! own number: the encodings only change between series.
//!
//! ```
//! use lathe_adreno::ir3::{GpuModel, Generation};
//!
//! let gpu: GpuModel = "a630".parse().unwrap();
//! assert_eq!(gpu.generation(), Generation::A6xx);
//! assert_eq!(gpu.generation().gpu_id(), 600);
//! assert!("a999".parse::<GpuModel>().is_err());
//! ```

use std::fmt;
use std::str::FromStr;

/// An ir3 ISA generation (one per Adreno series that changed the encodings).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Generation {
    A3xx,
    A4xx,
    A5xx,
    A6xx,
    A7xx,
}

impl Generation {
    /// Every generation, oldest first.
    pub const ALL: [Generation; 5] = [
        Generation::A3xx,
        Generation::A4xx,
        Generation::A5xx,
        Generation::A6xx,
        Generation::A7xx,
    ];

    /// The generation number the spec's `gen` ranges compare against
    /// (Mesa's isaspec `gpu_id`: series × 100).
    pub const fn gpu_id(self) -> u32 {
        match self {
            Generation::A3xx => 300,
            Generation::A4xx => 400,
            Generation::A5xx => 500,
            Generation::A6xx => 600,
            Generation::A7xx => 700,
        }
    }

    /// The generation whose `gpu_id` is `id` (300, 400, … 700), if any.
    pub fn from_gpu_id(id: u32) -> Option<Generation> {
        Generation::ALL.into_iter().find(|g| g.gpu_id() == id)
    }
}

impl fmt::Display for Generation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a{}xx", self.gpu_id() / 100)
    }
}

/// A named Adreno GPU that Lathe can disassemble and assemble for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuModel {
    name: &'static str,
    generation: Generation,
    /// The model runs its generation's texture prefetches (the spec's
    /// `fs_prefetch_count`); the smallest a6xx parts do not (Mesa's
    /// `has_fs_tex_prefetch`).
    tex_prefetch: bool,
}

/// Every GPU model Lathe knows, with its ISA generation.
const MODELS: &[GpuModel] = &[
    GpuModel::new("a306", Generation::A3xx),
    GpuModel::new("a320", Generation::A3xx),
    GpuModel::new("a330", Generation::A3xx),
    GpuModel::new("a405", Generation::A4xx),
    GpuModel::new("a420", Generation::A4xx),
    GpuModel::new("a430", Generation::A4xx),
    GpuModel::new("a506", Generation::A5xx),
    GpuModel::new("a530", Generation::A5xx),
    GpuModel::new("a540", Generation::A5xx),
    GpuModel::new("a610", Generation::A6xx).without_tex_prefetch(),
    GpuModel::new("a618", Generation::A6xx),
    GpuModel::new("a630", Generation::A6xx),
    GpuModel::new("a640", Generation::A6xx),
    GpuModel::new("a650", Generation::A6xx),
    GpuModel::new("a660", Generation::A6xx),
    GpuModel::new("a690", Generation::A6xx),
    GpuModel::new("a730", Generation::A7xx),
    GpuModel::new("a740", Generation::A7xx),
    GpuModel::new("a750", Generation::A7xx),
];

impl GpuModel {
    const fn new(name: &'static str, generation: Generation) -> GpuModel {
        GpuModel {
            name,
            generation,
            tex_prefetch: true,
        }
    }

    const fn without_tex_prefetch(self) -> GpuModel {
        GpuModel {
            tex_prefetch: false,
            ..self
        }
    }

    /// All known models, in series order.
    pub fn all() -> &'static [GpuModel] {
        MODELS
    }

    /// The model's name, e.g. `a630`.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The ISA generation this model decodes with.
    pub fn generation(self) -> Generation {
        self.generation
    }

    /// Whether the model runs the texture prefetches its generation
    /// defines (see `fs_prefetch_count` in the spec).
    pub fn has_tex_prefetch(self) -> bool {
        self.tex_prefetch
    }
}

impl fmt::Display for GpuModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A GPU name that is not an Adreno model Lathe knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown Adreno GPU `{name}`; known models: {}", known_list())]
pub struct UnknownGpu {
    /// The name as given.
    pub name: String,
}

fn known_list() -> String {
    MODELS.iter().map(|m| m.name).collect::<Vec<_>>().join(" ")
}

impl FromStr for GpuModel {
    type Err = UnknownGpu;

    /// Accepts the model name case-insensitively, with or without a leading
    /// `a`/`A` (`a630`, `A630`, `630`).
    fn from_str(s: &str) -> Result<GpuModel, UnknownGpu> {
        let lower = s.trim().to_ascii_lowercase();
        let wanted = if lower.starts_with('a') {
            lower
        } else {
            format!("a{lower}")
        };
        MODELS
            .iter()
            .copied()
            .find(|m| m.name == wanted)
            .ok_or_else(|| UnknownGpu {
                name: s.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn required_models_map_to_their_series() {
        let expected = [
            ("a306", 300),
            ("a420", 400),
            ("a530", 500),
            ("a540", 500),
            ("a618", 600),
            ("a630", 600),
            ("a660", 600),
            ("a690", 600),
            ("a730", 700),
            ("a740", 700),
            ("a750", 700),
        ];
        for (name, id) in expected {
            let gpu: GpuModel = name.parse().unwrap();
            assert_eq!(gpu.generation().gpu_id(), id, "{name}");
        }
    }

    #[test]
    fn unknown_model_lists_known_ones() {
        let err = "a999".parse::<GpuModel>().unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("a999") && msg.contains("a630") && msg.contains("a750"));
    }

    #[test]
    fn gpu_id_round_trips() {
        for g in Generation::ALL {
            assert_eq!(Generation::from_gpu_id(g.gpu_id()), Some(g));
        }
        assert_eq!(Generation::from_gpu_id(630), None);
    }
}
