//! Value types: scalars, and short vectors that only meta instructions build.

use std::fmt;

/// The scalar kinds a value can have.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Scalar {
    Bool,
    F16,
    F32,
    I16,
    I32,
    U32,
    U16,
}

impl Scalar {
    /// Every scalar kind, in a fixed order (used by generators and tests).
    pub const ALL: [Scalar; 7] = [
        Scalar::Bool,
        Scalar::F16,
        Scalar::F32,
        Scalar::I16,
        Scalar::I32,
        Scalar::U32,
        Scalar::U16,
    ];

    /// Width in bits of the stored value (`bool` counts as 1).
    pub fn bits(self) -> u32 {
        match self {
            Scalar::Bool => 1,
            Scalar::F16 | Scalar::I16 | Scalar::U16 => 16,
            Scalar::F32 | Scalar::I32 | Scalar::U32 => 32,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::F32)
    }

    pub fn is_int(self) -> bool {
        matches!(self, Scalar::I16 | Scalar::I32 | Scalar::U32 | Scalar::U16)
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I16 | Scalar::I32)
    }

    pub fn is_unsigned_int(self) -> bool {
        matches!(self, Scalar::U16 | Scalar::U32)
    }

    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::F16 => "f16",
            Scalar::F32 => "f32",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::U16 => "u16",
        }
    }

    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// A value's type: a scalar, or a vector of `lanes` scalars.
///
/// Vectors exist only where a meta instruction groups scalars (`collect`)
/// or an instruction writes a register group (`sample`); `split` takes them
/// apart again. The validator enforces that.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Type {
    pub scalar: Scalar,
    /// 1 for a scalar, 2..=[`Type::MAX_LANES`] for a vector.
    pub lanes: u8,
}

impl Type {
    pub const MAX_LANES: u8 = 16;
    pub const BOOL: Type = Type::scalar(Scalar::Bool);
    pub const F16: Type = Type::scalar(Scalar::F16);
    pub const F32: Type = Type::scalar(Scalar::F32);
    pub const I16: Type = Type::scalar(Scalar::I16);
    pub const I32: Type = Type::scalar(Scalar::I32);
    pub const U32: Type = Type::scalar(Scalar::U32);
    pub const U16: Type = Type::scalar(Scalar::U16);

    pub const fn scalar(scalar: Scalar) -> Type {
        Type { scalar, lanes: 1 }
    }

    pub const fn vector(scalar: Scalar, lanes: u8) -> Type {
        Type { scalar, lanes }
    }

    pub fn is_scalar(self) -> bool {
        self.lanes == 1
    }

    pub fn is_vector(self) -> bool {
        self.lanes > 1
    }

    /// Parse `f32`, `i16`, `bool`, `f32x4`, ...
    pub fn parse(text: &str) -> Option<Type> {
        if let Some(s) = Scalar::from_name(text) {
            return Some(Type::scalar(s));
        }
        let (base, lanes) = text.split_once('x')?;
        let scalar = Scalar::from_name(base)?;
        // Canonical form only: no leading zeros, no sign.
        if lanes.starts_with('0') || lanes.starts_with('+') {
            return None;
        }
        let lanes: u8 = lanes.parse().ok()?;
        (2..=Type::MAX_LANES)
            .contains(&lanes)
            .then_some(Type::vector(scalar, lanes))
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.lanes == 1 {
            f.write_str(self.scalar.name())
        } else {
            write!(f, "{}x{}", self.scalar.name(), self.lanes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_round_trip() {
        for s in Scalar::ALL {
            for lanes in [1, 2, 4, 16] {
                let t = Type::vector(s, lanes);
                assert_eq!(Type::parse(&t.to_string()), Some(t));
            }
        }
        assert_eq!(Type::parse("f32x1"), None);
        assert_eq!(Type::parse("f32x17"), None);
        assert_eq!(Type::parse("f32x04"), None);
        assert_eq!(Type::parse("f64"), None);
    }
}
