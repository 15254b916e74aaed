//! Mali GPU models and the Valhall architecture revision each implements.
//!
//! The instruction encoding is a property of the architecture revision, not
//! of the product: every v9 part (Mali-G57, G68, G77, G78) decodes the same
//! words, and every v10 part (Mali-G310, G510, G610, G710) another, slightly
//! different set. The spec (`isa/specs/mali/valhall.isa`) states its
//! availability ranges in these revisions (`gen` numbers 9 and 10).
//!
//! ```
//! use lathe_mali::valhall::{Arch, MaliModel};
//!
//! let model: MaliModel = "Mali-G610".parse().unwrap();
//! assert_eq!(model, MaliModel::G610);
//! assert_eq!(model.arch(), Arch::V10);
//! assert_eq!(model.arch().generation(), 10);
//! assert!("g52".parse::<MaliModel>().is_err()); // Bifrost, not Valhall
//! ```

use std::fmt;
use std::str::FromStr;

/// A Valhall architecture revision, the unit the instruction spec is
/// versioned by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    /// Valhall v9 (first and second generation Valhall).
    V9,
    /// Valhall v10 (fourth generation Valhall: G310 … G710).
    V10,
}

impl Arch {
    /// The generation number the spec's `gen` ranges use.
    pub const fn generation(self) -> u32 {
        match self {
            Arch::V9 => 9,
            Arch::V10 => 10,
        }
    }

    /// Short name, `v9` or `v10`.
    pub const fn name(self) -> &'static str {
        match self {
            Arch::V9 => "v9",
            Arch::V10 => "v10",
        }
    }
}

impl fmt::Display for Arch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A Mali GPU with a Valhall shader core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MaliModel {
    /// Mali-G57 (v9).
    G57,
    /// Mali-G68 (v9).
    G68,
    /// Mali-G77 (v9).
    G77,
    /// Mali-G78 (v9).
    G78,
    /// Mali-G310 (v10).
    G310,
    /// Mali-G510 (v10).
    G510,
    /// Mali-G610 (v10).
    G610,
    /// Mali-G710 (v10).
    G710,
}

impl MaliModel {
    /// Every supported model, oldest architecture first.
    pub const ALL: [MaliModel; 8] = [
        MaliModel::G57,
        MaliModel::G68,
        MaliModel::G77,
        MaliModel::G78,
        MaliModel::G310,
        MaliModel::G510,
        MaliModel::G610,
        MaliModel::G710,
    ];

    /// The architecture revision whose encoding this model uses.
    pub const fn arch(self) -> Arch {
        match self {
            MaliModel::G57 | MaliModel::G68 | MaliModel::G77 | MaliModel::G78 => Arch::V9,
            MaliModel::G310 | MaliModel::G510 | MaliModel::G610 | MaliModel::G710 => Arch::V10,
        }
    }

    /// Lower-case short name as accepted on the command line, e.g. `g610`.
    pub const fn name(self) -> &'static str {
        match self {
            MaliModel::G57 => "g57",
            MaliModel::G68 => "g68",
            MaliModel::G77 => "g77",
            MaliModel::G78 => "g78",
            MaliModel::G310 => "g310",
            MaliModel::G510 => "g510",
            MaliModel::G610 => "g610",
            MaliModel::G710 => "g710",
        }
    }
}

impl fmt::Display for MaliModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a supported Valhall Mali model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{name}` is not a supported Mali Valhall GPU (known: g57 g68 g77 g78 g310 g510 g610 g710)"
)]
pub struct UnknownModel {
    /// The name as given.
    pub name: String,
}

impl FromStr for MaliModel {
    type Err = UnknownModel;

    /// Accepts `g610`, `G610`, `mali-g610` and `Mali-G610`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let lower = s.trim().to_ascii_lowercase();
        let short = lower.strip_prefix("mali-").unwrap_or(&lower);
        MaliModel::ALL
            .into_iter()
            .find(|m| m.name() == short)
            .ok_or_else(|| UnknownModel {
                name: s.to_string(),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_parses_from_its_own_name_and_display() {
        for m in MaliModel::ALL {
            assert_eq!(m.name().parse::<MaliModel>(), Ok(m));
            assert_eq!(m.to_string().to_uppercase().parse::<MaliModel>(), Ok(m));
            assert_eq!(
                format!("Mali-{}", m.name().to_uppercase()).parse::<MaliModel>(),
                Ok(m)
            );
        }
    }

    #[test]
    fn models_map_to_their_architecture() {
        let v9: Vec<_> = MaliModel::ALL
            .into_iter()
            .filter(|m| m.arch() == Arch::V9)
            .collect();
        assert_eq!(
            v9,
            [
                MaliModel::G57,
                MaliModel::G68,
                MaliModel::G77,
                MaliModel::G78
            ]
        );
        assert_eq!(MaliModel::G310.arch().generation(), 10);
        assert_eq!(MaliModel::G57.arch().generation(), 9);
    }

    #[test]
    fn unknown_names_are_rejected_with_the_name() {
        let err = "g52".parse::<MaliModel>().unwrap_err();
        assert_eq!(err.name, "g52");
        assert!(err.to_string().contains("`g52`"));
        assert!("".parse::<MaliModel>().is_err());
        assert!("mali-".parse::<MaliModel>().is_err());
    }
}
