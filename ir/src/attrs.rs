//! Attribute kinds of the generic opcodes that are more than a number:
//! texture shapes, LOD modes, atomic operations, pack formats, derivative
//! modes and system values. Each has one text spelling, used by both the
//! printer and the parser.

macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),* $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        pub enum $name {
            $($(#[$vdoc])* $variant),*
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),*];

            /// The text-form spelling.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text),*
                }
            }

            pub fn from_name(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

named_enum! {
    /// Dimensionality of a texture or image.
    Dim {
        D1 => "1d",
        D2 => "2d",
        D3 => "3d",
        Cube => "cube",
    }
}

impl Dim {
    /// Coordinate components addressing a texel when sampling (a cube is
    /// addressed by a direction), without the array layer.
    pub fn sample_coords(self) -> u8 {
        match self {
            Dim::D1 => 1,
            Dim::D2 => 2,
            Dim::D3 | Dim::Cube => 3,
        }
    }

    /// Components of a size query (a cube face is square: 2), without the
    /// layer count.
    pub fn size_coords(self) -> u8 {
        match self {
            Dim::D1 => 1,
            Dim::D2 | Dim::Cube => 2,
            Dim::D3 => 3,
        }
    }
}

/// The shape of a texture or image operand: dimensionality, whether it is
/// an array (one more coordinate: the layer) and whether it is
/// multisampled (2D only; texel fetch and image access then take a sample
/// index).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct TexShape {
    pub dim: Dim,
    pub array: bool,
    pub ms: bool,
}

impl TexShape {
    pub const D2: TexShape = TexShape {
        dim: Dim::D2,
        array: false,
        ms: false,
    };

    pub fn new(dim: Dim, array: bool) -> TexShape {
        TexShape {
            dim,
            array,
            ms: false,
        }
    }

    /// Float coordinate components of a sample or gather (layer included).
    pub fn sample_coords(self) -> u8 {
        self.dim.sample_coords() + self.array as u8
    }

    /// Integer coordinate components of a texel fetch or image access: a
    /// cube is addressed as a 2D array of faces (`x, y, face`, and for a
    /// cube array `x, y, 6 * layer + face`).
    pub fn texel_coords(self) -> u8 {
        match self.dim {
            Dim::Cube => 3,
            d => d.sample_coords() + self.array as u8,
        }
    }

    /// Components of a size query result (layer count included).
    pub fn size_coords(self) -> u8 {
        self.dim.size_coords() + self.array as u8
    }

    /// Components of a constant offset (none for cubes).
    pub fn offset_coords(self) -> u8 {
        self.dim.sample_coords()
    }
}

named_enum! {
    /// How a `sample` picks its level of detail.
    LodMode {
        /// From the screen-space derivatives of the coordinate (quad).
        Implicit => "implicit",
        /// Implicit, plus a bias operand.
        Bias => "bias",
        /// An explicit LOD operand.
        Explicit => "explicit",
        /// From explicit gradient operands (`ddx`, `ddy`).
        Grad => "grad",
    }
}

named_enum! {
    /// The read-modify-write operation of an atomic.
    AtomicOp {
        Add => "add",
        IMin => "imin",
        IMax => "imax",
        UMin => "umin",
        UMax => "umax",
        And => "and",
        Or => "or",
        Xor => "xor",
        Exchange => "xchg",
        /// Write `value` if the old value equals `comparator`.
        CompareExchange => "cmpxchg",
    }
}

named_enum! {
    /// Layouts of `pack`/`unpack` (GLSL's `packHalf2x16` and friends).
    PackFormat {
        Half2x16 => "half2x16",
        Unorm4x8 => "unorm4x8",
        Snorm4x8 => "snorm4x8",
        Unorm2x16 => "unorm2x16",
        Snorm2x16 => "snorm2x16",
    }
}

impl PackFormat {
    /// How many floats one word holds.
    pub fn lanes(self) -> u8 {
        match self {
            PackFormat::Half2x16 | PackFormat::Unorm2x16 | PackFormat::Snorm2x16 => 2,
            PackFormat::Unorm4x8 | PackFormat::Snorm4x8 => 4,
        }
    }
}

named_enum! {
    /// Which neighbours a derivative subtracts inside its 2×2 quad.
    DerivMode {
        /// The implementation's choice; the interpreter takes `coarse`.
        Default => "default",
        /// One value per quad, from its first row (ddx) or column (ddy).
        Coarse => "coarse",
        /// Per row (ddx) or per column (ddy) of the quad.
        Fine => "fine",
    }
}

/// What a system value holds, for the validator.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SysvalKind {
    /// `f32` components.
    Float,
    /// A `bool`.
    Bool,
    /// A 32-bit integer (`i32` or `u32`, as the frontend prefers).
    Int,
}

named_enum! {
    /// System values read by `load_sysval`.
    Sysval {
        /// Fragment: window x, y (pixel centre, or sample position), depth
        /// z, and 1/w.
        FragCoord => "frag_coord",
        FrontFacing => "front_facing",
        SampleId => "sample_id",
        /// Fragment: the sample's position inside the pixel, in 0..1.
        SamplePos => "sample_pos",
        SampleMaskIn => "sample_mask_in",
        PointCoord => "point_coord",
        /// True in helper invocations (including after `demote`).
        HelperInvocation => "helper_invocation",
        VertexIndex => "vertex_index",
        InstanceIndex => "instance_index",
        BaseVertex => "base_vertex",
        BaseInstance => "base_instance",
        ViewIndex => "view_index",
        LocalInvocationId => "local_invocation_id",
        GlobalInvocationId => "global_invocation_id",
        WorkgroupId => "workgroup_id",
        NumWorkgroups => "num_workgroups",
        LocalInvocationIndex => "local_invocation_index",
    }
}

impl Sysval {
    /// How many components it has (`comp=` ranges below this).
    pub fn comps(self) -> u8 {
        use Sysval::*;
        match self {
            FragCoord => 4,
            LocalInvocationId | GlobalInvocationId | WorkgroupId | NumWorkgroups => 3,
            SamplePos | PointCoord => 2,
            _ => 1,
        }
    }

    pub fn kind(self) -> SysvalKind {
        use Sysval::*;
        match self {
            FragCoord | SamplePos | PointCoord => SysvalKind::Float,
            FrontFacing | HelperInvocation => SysvalKind::Bool,
            _ => SysvalKind::Int,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_distinct_and_parse_back() {
        fn check<T: Copy + PartialEq + std::fmt::Debug>(
            all: &[T],
            name: impl Fn(T) -> &'static str,
            parse: impl Fn(&str) -> Option<T>,
        ) {
            let mut seen = std::collections::HashSet::new();
            for &v in all {
                assert!(seen.insert(name(v)), "{} spelled twice", name(v));
                assert_eq!(parse(name(v)), Some(v));
            }
        }
        check(Dim::ALL, Dim::name, Dim::from_name);
        check(LodMode::ALL, LodMode::name, LodMode::from_name);
        check(AtomicOp::ALL, AtomicOp::name, AtomicOp::from_name);
        check(PackFormat::ALL, PackFormat::name, PackFormat::from_name);
        check(DerivMode::ALL, DerivMode::name, DerivMode::from_name);
        check(Sysval::ALL, Sysval::name, Sysval::from_name);
        assert_eq!(Dim::from_name("2D"), None);
    }

    #[test]
    fn coordinate_counts_follow_the_spirv_rules() {
        let cube_array = TexShape::new(Dim::Cube, true);
        assert_eq!(cube_array.sample_coords(), 4);
        assert_eq!(cube_array.texel_coords(), 3);
        assert_eq!(cube_array.size_coords(), 3);
        assert_eq!(TexShape::new(Dim::D1, true).texel_coords(), 2);
        assert_eq!(TexShape::new(Dim::D3, false).size_coords(), 3);
    }
}
