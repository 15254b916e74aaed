//! The generic (target-neutral) opcode vocabulary that frontends emit.
//!
//! Every opcode, in text form. `T` is the result type; `i32xN` means `i32`
//! for one lane and a vector (a `collect`) otherwise; attributes in
//! `[brackets]` are optional and left out of the text at their default.
//! The interpreter ([`crate::interp`]) defines the exact results.
//!
//! | opcode | attributes | operands | result |
//! |---|---|---|---|
//! | `const` | bare value | — | any scalar |
//! | `mov` | `[abs] [neg]` (float only) | `a` of T's width | T |
//! | `cvt` | — | numeric or bool `a` | numeric T |
//! | `fadd fsub fmul fdiv fmin fmax` | — | `a, b: T` | float T |
//! | `ffma` | — | `a, b, c: T` | float T |
//! | `rcp rsqrt sqrt exp2 log2 sin cos floor ceil trunc round_even fract fsign` | — | `a: T` | float T |
//! | `iadd isub imul` | — | `a, b: T` | integer T |
//! | `imin imax idiv irem` / `iabs isign` | — | `a, b: T` / `a: T` | i16/i32 |
//! | `umin umax udiv umod` | — | `a, b: T` | u16/u32 |
//! | `imul_high` / `umul_high` | — | `a, b: T` | i32 / u32 |
//! | `ubitfield_extract ibitfield_extract` | — | `base, offset, count: T` | i32/u32 |
//! | `bitfield_insert` | — | `base, insert, offset, count: T` | i32/u32 |
//! | `bit_reverse find_lsb ufind_msb ifind_msb` | — | `a: T` | i32/u32 |
//! | `bit_count` | — | `a: i32/u32` | i32/u32 |
//! | `feq fne flt fge` | — | `a, b` float | bool |
//! | `ieq ine` / `ilt ige` / `ult uge` | — | `a, b` int or bool / signed / unsigned | bool |
//! | `sel` | — | `cond: bool, a, b: T` | scalar T |
//! | `and or xor` / `not` | — | `a, b: T` / `a: T` | integer or bool |
//! | `shl shr ashr` | — | `a, amount: T` | integer T |
//! | `pack` | `format=half2x16\|unorm4x8\|snorm4x8\|unorm2x16\|snorm2x16` | 2 or 4 `f32` | u32 |
//! | `unpack` | `format=… lane=K` | `packed: u32` | f32 |
//! | `ddx ddy` | `[mode=coarse\|fine]` | `a: T` | float T |
//! | `load_sysval` | `sv=NAME [comp=K]` (see [`Sysval`]) | — | f32, bool or i32/u32 |
//! | `load_input` | `slot= comp= interp=flat\|smooth\|noperspective [loc=centroid\|sample]` | — | non-bool scalar |
//! | `store_output` | `slot= comp=` | `v` non-bool scalar | — |
//! | `load_uniform` | `index=N [addr=%A]` (push constants too) | — | non-bool scalar |
//! | `store_uniform` | `index=N` (a backend's preamble: see below) | `v: 32-bit scalar` | — |
//! | `load_ubo load_ssbo` | `binding=B` | `byte_offset: u32` | 32-bit scalar |
//! | `store_ssbo` | `binding=B` | `byte_offset: u32, v: 32-bit` | — |
//! | `ssbo_atomic` | `binding=B op=OP` | `byte_offset: u32, v: T [, comparator: T]` | i32/u32 |
//! | `ssbo_atomic_load` / `ssbo_atomic_store` | `binding=B` | `byte_offset: u32` / `byte_offset: u32, v: T` | i32/u32 / — |
//! | `ssbo_size` | `binding=B` | — | u32 (bytes) |
//! | `load_shared` / `store_shared` / `shared_atomic` / `shared_atomic_load` / `shared_atomic_store` | — / — / `op=OP` / — / — | as the ssbo forms (`store_shared`'s value: up to 4 words, lane k at byte offset + 4k) | as the ssbo forms |
//! | `sample` | `texture= sampler= [dim=] [array] [lod=bias\|explicit\|grad] [offset] [compare]` | `coord: f32xC [, dref: f32] [, bias\|lod: f32 \| ddx, ddy: f32xD] [, offset: i32xD]` | `f32x4`/`i32x4`/`u32x4`; f32 with `compare` |
//! | `gather` | `texture= sampler= [dim=] [array] comp=K [offset] [compare]` | `coord: f32xC [, dref: f32] [, offset: i32xD]` | 4-lane texel |
//! | `texel_fetch` | `texture= [dim=] [array] [ms] [offset]` | `coord: i32xT, lod (or sample with ms): i32 [, offset: i32xD]` | 4-lane texel |
//! | `texture_size` | `texture= [dim=] [array] [ms]` | `lod: i32` (none with `ms`) | `i32xS` (or u32) |
//! | `texture_levels` | `texture=` | — | i32/u32 |
//! | `image_load` | `image= [dim=] [array] [ms]` | `coord: i32xT [, sample: i32]` | 4-lane texel |
//! | `image_store` | `image= [dim=] [array] [ms]` | `coord: i32xT [, sample: i32], value: 4-lane texel` | — |
//! | `image_atomic` | `image= [dim=] [array] [ms] op=OP` | `coord: i32xT [, sample], v: T [, comparator: T]` | i32/u32 |
//! | `image_size` | `image= [dim=] [array] [ms]` | — | `i32xS` (or u32) |
//! | `discard` `demote` `barrier` `control_barrier` | — | — | — |
//! | `array_load` / `array_store` | `array=aN offset=K [addr=%A]` | — / `v: elem` | elem / — |
//! | `load_private` / `store_private` | — | `offset: u32` / `offset: u32, v: word` | word / — |
//!
//! `dim` is `1d`, `2d` (default), `3d` or `cube` ([`Dim`]); a layer index
//! follows the coordinates of an `array` shape. Coordinate counts: `C` =
//! 1/2/3/3 (1D/2D/3D/cube) + 1 if arrayed; `D` = 1/2/3 (no offsets on
//! cubes); `T` = `C` except cubes, which are addressed `x, y, face` (a cube
//! array `x, y, 6 * layer + face`); `S` = 1/2/3/2 + 1 if arrayed. Atomic
//! `OP` is `add imin imax umin umax and or xor xchg cmpxchg` ([`AtomicOp`]);
//! every read-modify-write atomic gives the value before it. An atomic
//! load or store (`*_atomic_load`, `*_atomic_store`) is one word read or
//! written indivisibly: unlike a plain access it does not race with other
//! atomics. Built-in I/O slots are named
//! (`slot=pos`, see [`crate::slot`]).
//!
//! Effects (for passes): loads of memory are ordered against stores
//! ([`BarrierClass`]: `BUFFER_*` for storage buffers and images,
//! `SHARED_*` for shared memory); `discard` and `demote` also order
//! against buffer stores, since an invocation that no longer writes must
//! not have a later store hoisted above them; `load_sysval
//! sv=helper_invocation` is ordered against them as it reads what `demote`
//! changes. Texture reads, bit-field operations and memory accesses may be
//! undefined behaviour for some operands, so they are not speculated.
//! `ddx`/`ddy` and implicit-LOD `sample` are pure: hoisting them out of a
//! branch (as flatten does) only runs them in more invocations of the quad,
//! which turns a result undefined under divergence into a defined one and
//! never changes a defined one; a pass that sinks code into a branch must
//! not sink them.

use crate::attrs::{AtomicOp, DerivMode, Dim, LodMode, PackFormat, Sysval, SysvalKind, TexShape};
use crate::opcode::{Attr, AttrError, BarrierClass, Effects, Opcode, Signature};
use crate::shader::ArrayId;
use crate::types::{Scalar, Type};
use std::fmt;

/// How a fragment shader input is interpolated across the primitive.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum InterpMode {
    /// The provoking vertex's value.
    Flat,
    /// Perspective-correct.
    Smooth,
    /// Linear in screen space.
    NoPerspective,
}

/// Where inside the pixel an interpolated input is evaluated.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum InterpLoc {
    Center,
    Centroid,
    Sample,
}

/// Interpolation qualifier of a `load_input`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Interp {
    pub mode: InterpMode,
    pub loc: InterpLoc,
}

impl Interp {
    pub const FLAT: Interp = Interp {
        mode: InterpMode::Flat,
        loc: InterpLoc::Center,
    };
    pub const SMOOTH: Interp = Interp {
        mode: InterpMode::Smooth,
        loc: InterpLoc::Center,
    };
}

macro_rules! simple_ops {
    ($($variant:ident => $name:literal),* $(,)?) => {
        /// Operand-only opcodes (no attributes), by mnemonic.
        const SIMPLE: &[(GenericOp, &str)] = &[$((GenericOp::$variant, $name)),*];

        /// The operand-only opcode spelled `name` (a `match`, so the
        /// parser's lookup does not scan the table).
        fn simple_from_name(name: &str) -> Option<GenericOp> {
            match name {
                $($name => Some(GenericOp::$variant),)*
                _ => None,
            }
        }

        /// The mnemonic of an operand-only opcode.
        fn simple_name(op: GenericOp) -> Option<&'static str> {
            match op {
                $(GenericOp::$variant => Some($name),)*
                _ => None,
            }
        }
    };
}

/// Generic opcodes. Operand conventions are listed per group; the
/// validator enforces them through [`Opcode::check`]. The module docs of
/// [`crate::generic`] tabulate every opcode.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum GenericOp {
    /// A constant; `bits` holds the value in the low bits of the result type.
    Const {
        bits: u32,
    },
    /// Copy (or reinterpret between equal-width types), with optional float
    /// modifiers applied to the source (`abs` first, then `neg`).
    Mov {
        abs: bool,
        neg: bool,
    },
    /// Numeric conversion (float↔int, width changes, bool to a number);
    /// out-of-range float to int is undefined behaviour.
    Cvt,
    // Float arithmetic: operands and result share one float type.
    FAdd,
    FSub,
    FMul,
    /// IEEE division.
    FDiv,
    FMin,
    FMax,
    Ffma,
    Rcp,
    Rsqrt,
    Sqrt,
    Exp2,
    Log2,
    Sin,
    Cos,
    Floor,
    Ceil,
    Trunc,
    /// Round to the nearest integer, ties to even.
    RoundEven,
    /// `x - floor(x)`, rounded once.
    Fract,
    /// `1.0`, `-1.0`, or the zero itself; NaN gives `+0.0`.
    FSign,
    // Integer arithmetic: operands and result share one integer type.
    IAdd,
    ISub,
    IMul,
    IMin,
    IMax,
    UMin,
    UMax,
    UDiv,
    UMod,
    /// Signed division, truncating toward zero; a zero divisor and the
    /// overflowing `MIN / -1` are undefined behaviour.
    IDiv,
    /// Signed remainder with the sign of the dividend (`a - (a idiv b) * b`);
    /// undefined for the same operands as `idiv`.
    IRem,
    /// Absolute value; `MIN` stays `MIN` (two's complement wrap).
    IAbs,
    /// `-1`, `0` or `1`.
    ISign,
    /// High 32 bits of the 64-bit signed product.
    IMulHigh,
    /// High 32 bits of the 64-bit unsigned product.
    UMulHigh,
    /// `base, offset, count`: `count` bits of `base` from bit `offset`,
    /// zero-extended; `offset + count > 32` is undefined.
    UBitfieldExtract,
    /// As `ubitfield_extract`, sign-extended from the field's top bit.
    IBitfieldExtract,
    /// `base, insert, offset, count`: `base` with bits
    /// `offset..offset+count` taken from the low bits of `insert`;
    /// `offset + count > 32` is undefined.
    BitfieldInsert,
    BitReverse,
    /// Number of set bits.
    BitCount,
    /// Index of the lowest set bit, `-1` (all ones) for zero.
    FindLsb,
    /// Index of the highest set bit, `-1` for zero.
    UFindMsb,
    /// Index of the highest bit differing from the sign bit, `-1` for 0
    /// and -1.
    IFindMsb,
    // Comparisons: two operands of one type, result bool.
    FEq,
    FNe,
    FLt,
    FGe,
    IEq,
    INe,
    ILt,
    IGe,
    ULt,
    UGe,
    /// `sel cond, a, b`: `a` if `cond` else `b`.
    Sel,
    // Bitwise, on integers or bool.
    And,
    Or,
    Xor,
    Not,
    // Shifts: value and amount of one integer type; amount >= width is UB.
    Shl,
    Shr,
    AShr,
    /// Pack `format.lanes()` f32 operands into a u32 (GLSL `packHalf2x16`...).
    Pack {
        format: PackFormat,
    },
    /// Lane `lane` of a u32 unpacked as f32 (GLSL `unpackUnorm4x8`...).
    Unpack {
        format: PackFormat,
        lane: u8,
    },
    /// Screen-space derivative along x, across the 2×2 quad.
    Ddx {
        mode: DerivMode,
    },
    /// Screen-space derivative along y, across the 2×2 quad.
    Ddy {
        mode: DerivMode,
    },
    /// Component `comp` of a system value.
    LoadSysval {
        sysval: Sysval,
        comp: u8,
    },
    /// Read one component of a varying/attribute slot (see [`crate::slot`]).
    LoadInput {
        slot: u16,
        comp: u8,
        interp: Interp,
    },
    /// A fragment input as a target's ABI reads it (made by a backend's
    /// lowering, never by a frontend): varying component `inloc` of the
    /// target's varying storage, interpolated at the barycentric pair the
    /// operand holds (an `f32x2`; no operand when flat). The interpreter
    /// does not run it: it stands for a `load_input` whose value the
    /// driver's varying setup decides.
    LoadVarying {
        inloc: u32,
        interp: Interp,
    },
    /// Write one component of an output slot (see [`crate::slot`]).
    StoreOutput {
        slot: u16,
        comp: u8,
    },
    /// Read uniform word `index` (+ the address operand if present). Push
    /// constants are uniforms: word `index` is push-constant byte `4 * index`.
    LoadUniform {
        index: u32,
    },
    /// Write uniform word `index` (made by a backend's preamble,
    /// `lathe_passes::preamble`, never by a frontend): the part of a
    /// program that runs once per draw stores what the rest reads as
    /// `load_uniform index=N`). The interpreter does not run it: it
    /// models the uniforms as the driver's, read-only.
    StoreUniform {
        index: u32,
    },
    /// Read a 32-bit word from UBO `binding` at byte offset operand 0.
    LoadUbo {
        binding: u8,
    },
    /// Read word `comp` (0..=3) of the 16-byte vector at vector index
    /// operand 0 of UBO `binding` (byte offset `16 * index + 4 * comp`):
    /// a UBO load whose offset is known to be a multiple of 16 plus a
    /// constant, for hardware that addresses uniform buffers in vectors
    /// (see `lathe_passes::ubo_vectors`). A vector result reads its lanes
    /// from words `comp`, `comp + 1`, … of the vector (at most the 4th).
    LoadUboVec4 {
        binding: u8,
        comp: u8,
    },
    /// Sample a texture through a sampler:
    /// `coord, [dref if compare], [bias | lod | ddx, ddy], [offset]`.
    Sample {
        texture: u8,
        sampler: u8,
        shape: TexShape,
        lod: LodMode,
        offset: bool,
        compare: bool,
    },
    /// Gather component `comp` of the four texels bilinear filtering would
    /// use: `coord, [dref if compare], [offset]`.
    Gather {
        texture: u8,
        sampler: u8,
        shape: TexShape,
        comp: u8,
        offset: bool,
        compare: bool,
    },
    /// Read one texel without a sampler: `coord, lod (or sample index when
    /// ms), [offset]`.
    TexelFetch {
        texture: u8,
        shape: TexShape,
        offset: bool,
    },
    /// Size of mip level `lod` (operand; none when ms), layers last.
    TextureSize {
        texture: u8,
        shape: TexShape,
    },
    /// Number of mip levels.
    TextureLevels {
        texture: u8,
    },
    /// `coord, [sample if ms]` of a storage image.
    ImageLoad {
        image: u8,
        shape: TexShape,
    },
    /// `coord, [sample if ms], value` into a storage image.
    ImageStore {
        image: u8,
        shape: TexShape,
    },
    /// `coord, [sample if ms], value, [comparator if cmpxchg]`; gives the
    /// old value.
    ImageAtomic {
        image: u8,
        shape: TexShape,
        op: AtomicOp,
    },
    /// Size of a storage image, layers last.
    ImageSize {
        image: u8,
        shape: TexShape,
    },
    /// Read a 32-bit word of storage buffer `binding` at byte offset operand 0;
    /// a vector result reads its lanes from consecutive words (at most 4).
    LoadSsbo {
        binding: u8,
    },
    /// `offset, value`: write a 32-bit word of storage buffer `binding`.
    StoreSsbo {
        binding: u8,
    },
    /// `offset, value, [comparator if cmpxchg]` on a storage-buffer word;
    /// gives the old value.
    SsboAtomic {
        binding: u8,
        op: AtomicOp,
    },
    /// Atomically read a 32-bit integer word of storage buffer `binding`
    /// at byte offset operand 0.
    SsboAtomicLoad {
        binding: u8,
    },
    /// `offset, value`: atomically write a storage-buffer word.
    SsboAtomicStore {
        binding: u8,
    },
    /// Size of storage buffer `binding` in bytes.
    SsboSize {
        binding: u8,
    },
    /// Read a 32-bit word of workgroup shared memory at byte offset operand 0.
    LoadShared,
    /// `offset, value`: write a shared-memory word.
    StoreShared,
    /// Read a 32-bit word of this invocation's private memory at byte
    /// offset operand 0 (an array that stays in memory; the shader's
    /// [`crate::Shader::private_bytes`] bound it).
    LoadPrivate,
    /// `offset, value`: write a private-memory word.
    StorePrivate,
    /// `offset, value, [comparator if cmpxchg]` on a shared-memory word.
    SharedAtomic {
        op: AtomicOp,
    },
    /// Atomically read a shared-memory word at byte offset operand 0.
    SharedAtomicLoad,
    /// `offset, value`: atomically write a shared-memory word.
    SharedAtomicStore,
    /// End this invocation without writing its outputs (terminate).
    Discard,
    /// Make this invocation a helper: it keeps running for its quad's
    /// derivatives, but its outputs and memory writes are dropped.
    Demote,
    /// Order all memory-like accesses before it against all after it (a
    /// memory barrier; no execution synchronisation).
    Barrier,
    /// Every invocation of the workgroup waits here for all the others
    /// (also a memory barrier).
    ControlBarrier,
    /// Read element `offset` (+ address) of an array.
    ArrayLoad {
        array: ArrayId,
        offset: u32,
    },
    /// Write operand 0 to element `offset` (+ address) of an array.
    ArrayStore {
        array: ArrayId,
        offset: u32,
    },
}

simple_ops! {
    Cvt => "cvt",
    FAdd => "fadd", FSub => "fsub", FMul => "fmul", FDiv => "fdiv", FMin => "fmin",
    FMax => "fmax", Ffma => "ffma", Rcp => "rcp", Rsqrt => "rsqrt", Sqrt => "sqrt",
    Exp2 => "exp2", Log2 => "log2", Sin => "sin", Cos => "cos", Floor => "floor",
    Ceil => "ceil", Trunc => "trunc", RoundEven => "round_even", Fract => "fract",
    FSign => "fsign",
    IAdd => "iadd", ISub => "isub", IMul => "imul", IMin => "imin", IMax => "imax",
    UMin => "umin", UMax => "umax", UDiv => "udiv", UMod => "umod",
    IDiv => "idiv", IRem => "irem", IAbs => "iabs", ISign => "isign",
    IMulHigh => "imul_high", UMulHigh => "umul_high",
    UBitfieldExtract => "ubitfield_extract", IBitfieldExtract => "ibitfield_extract",
    BitfieldInsert => "bitfield_insert", BitReverse => "bit_reverse",
    BitCount => "bit_count", FindLsb => "find_lsb", UFindMsb => "ufind_msb",
    IFindMsb => "ifind_msb",
    FEq => "feq", FNe => "fne", FLt => "flt", FGe => "fge",
    IEq => "ieq", INe => "ine", ILt => "ilt", IGe => "ige", ULt => "ult", UGe => "uge",
    Sel => "sel", And => "and", Or => "or", Xor => "xor", Not => "not",
    Shl => "shl", Shr => "shr", AShr => "ashr",
    LoadShared => "load_shared", StoreShared => "store_shared",
    LoadPrivate => "load_private", StorePrivate => "store_private",
    SharedAtomicLoad => "shared_atomic_load", SharedAtomicStore => "shared_atomic_store",
    Discard => "discard", Demote => "demote", Barrier => "barrier",
    ControlBarrier => "control_barrier",
}

impl GenericOp {
    /// Every operand-only opcode (for generators and tests).
    pub fn simple_ops() -> impl Iterator<Item = GenericOp> {
        SIMPLE.iter().map(|&(op, _)| op)
    }

    /// Float unary ops.
    pub fn is_float_unary(self) -> bool {
        use GenericOp::*;
        matches!(
            self,
            Rcp | Rsqrt
                | Sqrt
                | Exp2
                | Log2
                | Sin
                | Cos
                | Floor
                | Ceil
                | Trunc
                | RoundEven
                | Fract
                | FSign
        )
    }
}

/// Render a constant of type `ty` held in `bits`: decimal for finite
/// floats (shortest form that reads back exactly), hex bits otherwise.
pub fn format_const(bits: u32, ty: Type) -> String {
    match ty.scalar {
        Scalar::Bool => (if bits & 1 == 1 { "true" } else { "false" }).to_string(),
        Scalar::F32 => {
            let f = f32::from_bits(bits);
            if f.is_finite() {
                format!("{f:?}")
            } else {
                format!("0x{bits:08x}")
            }
        }
        Scalar::F16 => {
            let h = bits as u16;
            if crate::f16::to_f32(h).is_finite() {
                shortest_f16(h)
            } else {
                format!("0x{h:04x}")
            }
        }
        Scalar::I16 => (bits as u16 as i16).to_string(),
        Scalar::I32 => (bits as i32).to_string(),
        Scalar::U32 => bits.to_string(),
        Scalar::U16 => (bits as u16).to_string(),
    }
}

/// The shortest decimal that reads back as the finite binary16 value `h`
/// (`0.1`, not the `0.099975586` its `f32` widening would print).
fn shortest_f16(h: u16) -> String {
    let exact = crate::f16::to_f64(h);
    // Five significant digits always identify a binary16 value.
    for digits in 0..5 {
        let candidate: f64 = format!("{exact:.digits$e}").parse().unwrap_or(exact);
        if crate::f16::from_f64(candidate) == h {
            // `{:?}` of an f64 with at most five significant digits prints
            // exactly those digits, in the same style as f32 constants.
            return format!("{candidate:?}");
        }
    }
    format!("{exact:?}")
}

/// Parse a constant written by [`format_const`] (or by hand).
pub fn parse_const(text: &str, ty: Type) -> Result<u32, String> {
    let hex = |t: &str, max: u64| -> Option<u32> {
        let h = t.strip_prefix("0x")?;
        let v = u64::from_str_radix(h, 16).ok()?;
        (v <= max).then_some(v as u32)
    };
    let bad = || format!("`{text}` is not a valid {ty} constant");
    match ty.scalar {
        Scalar::Bool => match text {
            "true" => Ok(1),
            "false" => Ok(0),
            _ => Err(bad()),
        },
        Scalar::F32 => {
            if let Some(b) = hex(text, u32::MAX as u64) {
                return Ok(b);
            }
            let f: f32 = parse_decimal(text).ok_or_else(bad)?;
            Ok(f.to_bits())
        }
        Scalar::F16 => {
            if let Some(b) = hex(text, u16::MAX as u64) {
                return Ok(b);
            }
            let f: f64 = parse_decimal(text).ok_or_else(bad)?;
            Ok(crate::f16::from_f64(f) as u32)
        }
        Scalar::I16 => {
            if let Some(b) = hex(text, u16::MAX as u64) {
                return Ok(b);
            }
            text.parse::<i16>()
                .map(|v| v as u16 as u32)
                .map_err(|_| bad())
        }
        Scalar::I32 => {
            if let Some(b) = hex(text, u32::MAX as u64) {
                return Ok(b);
            }
            text.parse::<i32>().map(|v| v as u32).map_err(|_| bad())
        }
        Scalar::U32 => {
            if let Some(b) = hex(text, u32::MAX as u64) {
                return Ok(b);
            }
            text.parse::<u32>().map_err(|_| bad())
        }
        Scalar::U16 => {
            if let Some(b) = hex(text, u16::MAX as u64) {
                return Ok(b);
            }
            text.parse::<u16>().map(u32::from).map_err(|_| bad())
        }
    }
}

/// Decimal floats only: Rust's parser also takes `inf`/`nan`, which the
/// text form spells as hex bits.
fn parse_decimal<T: std::str::FromStr>(text: &str) -> Option<T> {
    let body = text.strip_prefix('-').unwrap_or(text);
    if !body.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// ` offset compare`, as present.
fn write_flags(offset: bool, compare: bool, out: &mut dyn fmt::Write) -> fmt::Result {
    if offset {
        out.write_str(" offset")?;
    }
    if compare {
        out.write_str(" compare")?;
    }
    Ok(())
}

/// The `interp=` and optional `loc=` attributes.
fn parse_interp(a: &mut Attrs<'_, '_>) -> Result<Interp, AttrError> {
    let mode = match a.get("interp") {
        Some((_, "flat")) => InterpMode::Flat,
        Some((_, "smooth")) => InterpMode::Smooth,
        Some((_, "noperspective")) => InterpMode::NoPerspective,
        Some((k, _)) => {
            return Err(AttrError::on(k, "interp is flat, smooth or noperspective"));
        }
        None => return Err(AttrError::on_name("missing attribute `interp=`")),
    };
    let loc = match a.get("loc") {
        None => InterpLoc::Center,
        Some((_, "centroid")) => InterpLoc::Centroid,
        Some((_, "sample")) => InterpLoc::Sample,
        Some((k, _)) => {
            return Err(AttrError::on(
                k,
                "loc is centroid or sample (center is the default and not written)",
            ));
        }
    };
    Ok(Interp { mode, loc })
}

fn interp_name(i: Interp) -> &'static str {
    match i.mode {
        InterpMode::Flat => "flat",
        InterpMode::Smooth => "smooth",
        InterpMode::NoPerspective => "noperspective",
    }
}

fn loc_name(l: InterpLoc) -> &'static str {
    match l {
        InterpLoc::Center => "center",
        InterpLoc::Centroid => "centroid",
        InterpLoc::Sample => "sample",
    }
}

/// Attribute lookup with per-attribute errors.
struct Attrs<'x, 't> {
    attrs: &'x [Attr<'t>],
    /// Bit k: attribute k was consumed (attributes past 64 never are, so
    /// they are reported as unexpected).
    used: u64,
}

impl<'x, 't> Attrs<'x, 't> {
    fn new(attrs: &'x [Attr<'t>]) -> Self {
        Attrs { attrs, used: 0 }
    }

    fn take(&mut self, k: usize) {
        if k < 64 {
            self.used |= 1 << k;
        }
    }

    fn get(&mut self, key: &str) -> Option<(usize, &'t str)> {
        let k = self.attrs.iter().position(|a| a.key == Some(key))?;
        self.take(k);
        Some((k, self.attrs[k].value))
    }

    /// A bare word such as `array` or `offset`: present or not.
    fn flag(&mut self, word: &str) -> bool {
        match self
            .attrs
            .iter()
            .position(|a| a.key.is_none() && a.value == word)
        {
            Some(k) => {
                self.take(k);
                true
            }
            None => false,
        }
    }

    fn number<T: std::str::FromStr>(&mut self, key: &str) -> Result<T, AttrError> {
        match self.get(key) {
            Some((k, v)) => v.parse().map_err(|_| {
                AttrError::on(k, format!("`{key}` needs a number in range, got `{v}`"))
            }),
            None => Err(AttrError::on_name(format!("missing attribute `{key}=`"))),
        }
    }

    /// `key=NAME` spelled by `from_name`; `default` when absent (`None`:
    /// required).
    fn named<T>(
        &mut self,
        key: &str,
        from_name: fn(&str) -> Option<T>,
        default: Option<T>,
    ) -> Result<T, AttrError> {
        match self.get(key) {
            Some((k, v)) => {
                from_name(v).ok_or_else(|| AttrError::on(k, format!("unknown {key} `{v}`")))
            }
            None => {
                default.ok_or_else(|| AttrError::on_name(format!("missing attribute `{key}=`")))
            }
        }
    }

    /// `dim=` (default 2d), and the `array` and `ms` flags.
    fn shape(&mut self) -> Result<TexShape, AttrError> {
        Ok(TexShape {
            dim: self.named("dim", Dim::from_name, Some(Dim::D2))?,
            array: self.flag("array"),
            ms: self.flag("ms"),
        })
    }

    fn finish(self) -> Result<(), AttrError> {
        match (0..self.attrs.len()).find(|&k| k >= 64 || self.used & (1 << k) == 0) {
            Some(k) => Err(AttrError::on(k, "unexpected attribute")),
            None => Ok(()),
        }
    }
}

/// ` dim=3d array ms`, leaving out the defaults (2D, not arrayed, single-sampled).
fn write_shape(shape: TexShape, out: &mut dyn fmt::Write) -> fmt::Result {
    if shape.dim != Dim::D2 {
        write!(out, " dim={}", shape.dim.name())?;
    }
    if shape.array {
        out.write_str(" array")?;
    }
    if shape.ms {
        out.write_str(" ms")?;
    }
    Ok(())
}

/// `slot=`: a user location as a number, a built-in by name.
fn write_slot(slot: u16, out: &mut dyn fmt::Write) -> fmt::Result {
    match crate::slot::name(slot) {
        Some(name) => write!(out, " slot={name}"),
        None => write!(out, " slot={slot}"),
    }
}

fn parse_slot(a: &mut Attrs<'_, '_>) -> Result<u16, AttrError> {
    match a.get("slot") {
        Some((k, v)) => crate::slot::from_name(v)
            .or_else(|| v.parse().ok())
            .ok_or_else(|| {
                AttrError::on(
                    k,
                    format!("`slot` needs a number or a built-in name, got `{v}`"),
                )
            }),
        None => Err(AttrError::on_name("missing attribute `slot=`")),
    }
}

impl Opcode for GenericOp {
    fn name(&self) -> &'static str {
        use GenericOp::*;
        match self {
            Const { .. } => "const",
            Mov { .. } => "mov",
            Pack { .. } => "pack",
            Unpack { .. } => "unpack",
            Ddx { .. } => "ddx",
            Ddy { .. } => "ddy",
            LoadSysval { .. } => "load_sysval",
            LoadInput { .. } => "load_input",
            LoadVarying { .. } => "load_varying",
            StoreOutput { .. } => "store_output",
            LoadUniform { .. } => "load_uniform",
            StoreUniform { .. } => "store_uniform",
            LoadUbo { .. } => "load_ubo",
            LoadUboVec4 { .. } => "load_ubo_vec4",
            Sample { .. } => "sample",
            Gather { .. } => "gather",
            TexelFetch { .. } => "texel_fetch",
            TextureSize { .. } => "texture_size",
            TextureLevels { .. } => "texture_levels",
            ImageLoad { .. } => "image_load",
            ImageStore { .. } => "image_store",
            ImageAtomic { .. } => "image_atomic",
            ImageSize { .. } => "image_size",
            LoadSsbo { .. } => "load_ssbo",
            StoreSsbo { .. } => "store_ssbo",
            SsboAtomic { .. } => "ssbo_atomic",
            SsboAtomicLoad { .. } => "ssbo_atomic_load",
            SsboAtomicStore { .. } => "ssbo_atomic_store",
            SsboSize { .. } => "ssbo_size",
            SharedAtomic { .. } => "shared_atomic",
            ArrayLoad { .. } => "array_load",
            ArrayStore { .. } => "array_store",
            other => simple_name(*other).unwrap_or("?"),
        }
    }

    fn write_attrs(&self, result: Option<Type>, out: &mut dyn fmt::Write) -> fmt::Result {
        use GenericOp::*;
        match *self {
            Const { bits } => match result {
                Some(ty) => write!(out, " {}", format_const(bits, ty)),
                None => write!(out, " 0x{bits:x}"),
            },
            Mov { abs, neg } => {
                if abs {
                    out.write_str(" abs")?;
                }
                if neg {
                    out.write_str(" neg")?;
                }
                Ok(())
            }
            Pack { format } => write!(out, " format={}", format.name()),
            Unpack { format, lane } => write!(out, " format={} lane={lane}", format.name()),
            Ddx { mode } | Ddy { mode } => {
                if mode != DerivMode::Default {
                    write!(out, " mode={}", mode.name())?;
                }
                Ok(())
            }
            LoadSysval { sysval, comp } => {
                write!(out, " sv={}", sysval.name())?;
                if sysval.comps() > 1 {
                    write!(out, " comp={comp}")?;
                }
                Ok(())
            }
            LoadInput { slot, comp, interp } => {
                write_slot(slot, out)?;
                write!(out, " comp={comp} interp={}", interp_name(interp))?;
                if interp.loc != InterpLoc::Center {
                    write!(out, " loc={}", loc_name(interp.loc))?;
                }
                Ok(())
            }
            LoadVarying { inloc, interp } => {
                write!(out, " inloc={inloc} interp={}", interp_name(interp))?;
                if interp.loc != InterpLoc::Center {
                    write!(out, " loc={}", loc_name(interp.loc))?;
                }
                Ok(())
            }
            StoreOutput { slot, comp } => {
                write_slot(slot, out)?;
                write!(out, " comp={comp}")
            }
            LoadUniform { index } | StoreUniform { index } => write!(out, " index={index}"),
            LoadUboVec4 { binding, comp } => write!(out, " binding={binding} comp={comp}"),
            LoadUbo { binding }
            | LoadSsbo { binding }
            | StoreSsbo { binding }
            | SsboAtomicLoad { binding }
            | SsboAtomicStore { binding }
            | SsboSize { binding } => write!(out, " binding={binding}"),
            SsboAtomic { binding, op } => write!(out, " binding={binding} op={}", op.name()),
            SharedAtomic { op } => write!(out, " op={}", op.name()),
            Sample {
                texture,
                sampler,
                shape,
                lod,
                offset,
                compare,
            } => {
                write!(out, " texture={texture} sampler={sampler}")?;
                write_shape(shape, out)?;
                if lod != LodMode::Implicit {
                    write!(out, " lod={}", lod.name())?;
                }
                write_flags(offset, compare, out)
            }
            Gather {
                texture,
                sampler,
                shape,
                comp,
                offset,
                compare,
            } => {
                write!(out, " texture={texture} sampler={sampler}")?;
                write_shape(shape, out)?;
                write!(out, " comp={comp}")?;
                write_flags(offset, compare, out)
            }
            TexelFetch {
                texture,
                shape,
                offset,
            } => {
                write!(out, " texture={texture}")?;
                write_shape(shape, out)?;
                write_flags(offset, false, out)
            }
            TextureSize { texture, shape } => {
                write!(out, " texture={texture}")?;
                write_shape(shape, out)
            }
            TextureLevels { texture } => write!(out, " texture={texture}"),
            ImageLoad { image, shape }
            | ImageStore { image, shape }
            | ImageSize { image, shape } => {
                write!(out, " image={image}")?;
                write_shape(shape, out)
            }
            ImageAtomic { image, shape, op } => {
                write!(out, " image={image}")?;
                write_shape(shape, out)?;
                write!(out, " op={}", op.name())
            }
            ArrayLoad { array, offset } | ArrayStore { array, offset } => {
                write!(out, " array=a{} offset={offset}", array.0)
            }
            _ => Ok(()),
        }
    }

    fn parse(name: &str, attrs: &[Attr<'_>], result: Option<Type>) -> Result<Self, AttrError> {
        use GenericOp::*;
        let mut a = Attrs::new(attrs);
        let op = match name {
            "const" => {
                let ty = result.ok_or_else(|| AttrError::on_name("`const` needs a result"))?;
                let [attr] = attrs else {
                    return Err(AttrError::on_name("`const` takes exactly one value"));
                };
                if attr.key.is_some() {
                    return Err(AttrError::on(0, "`const` takes a bare value"));
                }
                let bits = parse_const(attr.value, ty).map_err(|m| AttrError::on(0, m))?;
                return Ok(Const { bits });
            }
            "mov" => {
                let mut abs = false;
                let mut neg = false;
                for (k, attr) in attrs.iter().enumerate() {
                    match (attr.key, attr.value) {
                        (None, "abs") if !abs && !neg => abs = true,
                        (None, "neg") if !neg => neg = true,
                        _ => return Err(AttrError::on(k, "expected `abs` then `neg` modifiers")),
                    }
                }
                return Ok(Mov { abs, neg });
            }
            "pack" => Pack {
                format: a.named("format", PackFormat::from_name, None)?,
            },
            "unpack" => Unpack {
                format: a.named("format", PackFormat::from_name, None)?,
                lane: a.number("lane")?,
            },
            "ddx" | "ddy" => {
                let mode = a.named("mode", DerivMode::from_name, Some(DerivMode::Default))?;
                if name == "ddx" {
                    Ddx { mode }
                } else {
                    Ddy { mode }
                }
            }
            "load_sysval" => {
                let sysval = a.named("sv", Sysval::from_name, None)?;
                let comp = if sysval.comps() > 1 {
                    a.number("comp")?
                } else {
                    0
                };
                LoadSysval { sysval, comp }
            }
            "load_input" => {
                let slot = parse_slot(&mut a)?;
                let comp = a.number("comp")?;
                LoadInput {
                    slot,
                    comp,
                    interp: parse_interp(&mut a)?,
                }
            }
            "load_varying" => {
                let inloc = a.number("inloc")?;
                LoadVarying {
                    inloc,
                    interp: parse_interp(&mut a)?,
                }
            }
            "store_output" => StoreOutput {
                slot: parse_slot(&mut a)?,
                comp: a.number("comp")?,
            },
            "load_uniform" => LoadUniform {
                index: a.number("index")?,
            },
            "store_uniform" => StoreUniform {
                index: a.number("index")?,
            },
            "load_ubo" => LoadUbo {
                binding: a.number("binding")?,
            },
            "load_ubo_vec4" => LoadUboVec4 {
                binding: a.number("binding")?,
                comp: a.number("comp")?,
            },
            "load_ssbo" => LoadSsbo {
                binding: a.number("binding")?,
            },
            "store_ssbo" => StoreSsbo {
                binding: a.number("binding")?,
            },
            "ssbo_size" => SsboSize {
                binding: a.number("binding")?,
            },
            "ssbo_atomic_load" => SsboAtomicLoad {
                binding: a.number("binding")?,
            },
            "ssbo_atomic_store" => SsboAtomicStore {
                binding: a.number("binding")?,
            },
            "ssbo_atomic" => SsboAtomic {
                binding: a.number("binding")?,
                op: a.named("op", AtomicOp::from_name, None)?,
            },
            "shared_atomic" => SharedAtomic {
                op: a.named("op", AtomicOp::from_name, None)?,
            },
            "sample" => Sample {
                texture: a.number("texture")?,
                sampler: a.number("sampler")?,
                shape: a.shape()?,
                lod: a.named("lod", LodMode::from_name, Some(LodMode::Implicit))?,
                offset: a.flag("offset"),
                compare: a.flag("compare"),
            },
            "gather" => Gather {
                texture: a.number("texture")?,
                sampler: a.number("sampler")?,
                shape: a.shape()?,
                comp: a.number("comp")?,
                offset: a.flag("offset"),
                compare: a.flag("compare"),
            },
            "texel_fetch" => TexelFetch {
                texture: a.number("texture")?,
                shape: a.shape()?,
                offset: a.flag("offset"),
            },
            "texture_size" => TextureSize {
                texture: a.number("texture")?,
                shape: a.shape()?,
            },
            "texture_levels" => TextureLevels {
                texture: a.number("texture")?,
            },
            "image_load" => ImageLoad {
                image: a.number("image")?,
                shape: a.shape()?,
            },
            "image_store" => ImageStore {
                image: a.number("image")?,
                shape: a.shape()?,
            },
            "image_size" => ImageSize {
                image: a.number("image")?,
                shape: a.shape()?,
            },
            "image_atomic" => ImageAtomic {
                image: a.number("image")?,
                shape: a.shape()?,
                op: a.named("op", AtomicOp::from_name, None)?,
            },
            "array_load" | "array_store" => {
                let array = match a.get("array") {
                    Some((k, v)) => ArrayId(
                        v.strip_prefix('a')
                            .and_then(|n| n.parse().ok())
                            .ok_or_else(|| AttrError::on(k, "array is written `aN`"))?,
                    ),
                    None => return Err(AttrError::on_name("missing attribute `array=`")),
                };
                let offset = a.number("offset")?;
                if name == "array_load" {
                    ArrayLoad { array, offset }
                } else {
                    ArrayStore { array, offset }
                }
            }
            _ => match simple_from_name(name) {
                Some(op) => op,
                None => return Err(AttrError::on_name(format!("unknown opcode `{name}`"))),
            },
        };
        a.finish()?;
        Ok(op)
    }

    fn check(&self, sig: &Signature<'_>) -> Result<(), String> {
        check_generic(*self, sig)
    }

    fn effects(&self) -> Effects {
        use GenericOp::*;
        let effects = |side_effects, may_trap, barrier| Effects {
            side_effects,
            may_trap,
            barrier,
        };
        let rw = BarrierClass::BUFFER_R.union(BarrierClass::BUFFER_W);
        let shared_rw = BarrierClass::SHARED_R.union(BarrierClass::SHARED_W);
        // Demoted and discarded invocations write neither outputs nor memory.
        let kill = BarrierClass::OUTPUT_W.union(BarrierClass::BUFFER_W);
        match self {
            Cvt
            | Shl
            | Shr
            | AShr
            | UDiv
            | UMod
            | IDiv
            | IRem
            | UBitfieldExtract
            | IBitfieldExtract
            | BitfieldInsert
            | LoadUniform { .. }
            | LoadUbo { .. }
            | LoadUboVec4 { .. }
            | Sample { .. }
            | Gather { .. }
            | TexelFetch { .. }
            | TextureSize { .. } => effects(false, true, BarrierClass::NONE),
            // Reads state that `demote` changes.
            LoadSysval {
                sysval: Sysval::HelperInvocation,
                ..
            } => effects(false, false, BarrierClass::OUTPUT_W),
            StoreOutput { .. } => effects(true, false, BarrierClass::OUTPUT_W),
            // Nothing in the part that stores reads the word back.
            StoreUniform { .. } => effects(true, false, BarrierClass::NONE),
            Discard | Demote => effects(true, false, kill),
            Barrier | ControlBarrier => effects(true, false, BarrierClass::ALL),
            ImageLoad { .. } | LoadSsbo { .. } | SsboAtomicLoad { .. } => {
                effects(false, true, BarrierClass::BUFFER_R)
            }
            ImageStore { .. } | StoreSsbo { .. } | SsboAtomicStore { .. } => {
                effects(true, true, BarrierClass::BUFFER_W)
            }
            ImageAtomic { .. } | SsboAtomic { .. } => effects(true, true, rw),
            LoadShared | SharedAtomicLoad => effects(false, true, BarrierClass::SHARED_R),
            StoreShared | SharedAtomicStore => effects(true, true, BarrierClass::SHARED_W),
            SharedAtomic { .. } => effects(true, true, shared_rw),
            ArrayLoad { .. } | LoadPrivate => effects(false, true, BarrierClass::ARRAY_R),
            ArrayStore { .. } | StorePrivate => effects(true, true, BarrierClass::ARRAY_W),
            _ => Effects::PURE,
        }
    }

    fn is_plain_copy(&self) -> bool {
        matches!(
            self,
            GenericOp::Mov {
                abs: false,
                neg: false
            }
        )
    }

    fn select() -> Option<Self> {
        Some(GenericOp::Sel)
    }
}

/// `f32` for one component, `f32xN` otherwise (and likewise for `i32`).
fn lanes_of(scalar: Scalar, n: u8) -> Type {
    if n == 1 {
        Type::scalar(scalar)
    } else {
        Type::vector(scalar, n)
    }
}

/// A texel: four components of f32, i32 or u32.
fn is_texel(t: Type) -> bool {
    t.lanes == 4 && matches!(t.scalar, Scalar::F32 | Scalar::I32 | Scalar::U32)
}

fn is_int32(t: Type) -> bool {
    t == Type::I32 || t == Type::U32
}

fn check_generic(op: GenericOp, sig: &Signature<'_>) -> Result<(), String> {
    use GenericOp::*;
    let ops = sig.operands;
    let count = |n: usize| -> Result<(), String> {
        if ops.len() == n {
            Ok(())
        } else {
            Err(format!("takes {n} operand(s), has {}", ops.len()))
        }
    };
    let result =
        |r: Option<Type>| -> Result<Type, String> { r.ok_or_else(|| "needs a result".to_string()) };
    let no_result = || -> Result<(), String> {
        match sig.result {
            None => Ok(()),
            Some(_) => Err("has no result".to_string()),
        }
    };
    let scalar = |t: Type| -> Result<(), String> {
        if t.is_scalar() {
            Ok(())
        } else {
            Err(format!(
                "{t} is a vector; only collect/split and texture/image operands handle vectors"
            ))
        }
    };
    let all_same = |want: Type| -> Result<(), String> {
        match ops.iter().find(|&&t| t != want) {
            Some(t) => Err(format!("operand type {t} does not match {want}")),
            None => Ok(()),
        }
    };
    // Operands in order, each with what it is called in messages.
    let expect = |want: &[(Type, &str)]| -> Result<(), String> {
        if ops.len() != want.len() {
            return Err(format!(
                "takes {} operand(s) ({}), has {}",
                want.len(),
                want.iter()
                    .map(|(t, n)| format!("{n}: {t}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                ops.len()
            ));
        }
        for (k, (&got, &(t, n))) in ops.iter().zip(want).enumerate() {
            if got != t {
                return Err(format!("operand {k} ({n}) must be {t}, not {got}"));
            }
        }
        Ok(())
    };
    let address_allowed = matches!(
        op,
        LoadUniform { .. } | ArrayLoad { .. } | ArrayStore { .. }
    );
    if sig.has_address && !address_allowed {
        return Err("does not take an address operand".into());
    }
    let array = |id: ArrayId| -> Result<crate::ArrayDecl, String> {
        sig.arrays
            .get(id.index())
            .copied()
            .ok_or_else(|| format!("array a{} is not declared", id.0))
    };
    let ms_is_2d = |shape: TexShape| -> Result<(), String> {
        if shape.ms && shape.dim != Dim::D2 {
            return Err("only 2D images are multisampled".into());
        }
        Ok(())
    };
    let texel_result = |r: Option<Type>| -> Result<(), String> {
        let r = result(r)?;
        if !is_texel(r) {
            return Err(format!("gives f32x4, i32x4 or u32x4, not {r}"));
        }
        Ok(())
    };
    let atomic_value = |r: Option<Type>| -> Result<Type, String> {
        let r = result(r)?;
        if !is_int32(r) {
            return Err(format!("atomics work on i32 or u32, not {r}"));
        }
        Ok(r)
    };
    let word = |r: Type| -> Result<(), String> {
        if !r.is_scalar() || r.scalar.bits() != 32 {
            return Err(format!("memory words are 32-bit scalars, not {r}"));
        }
        Ok(())
    };
    let size_result = |r: Option<Type>, shape: TexShape| -> Result<(), String> {
        let r = result(r)?;
        let n = shape.size_coords();
        if r != lanes_of(Scalar::I32, n) && r != lanes_of(Scalar::U32, n) {
            return Err(format!(
                "gives {} (or u32), not {r}",
                lanes_of(Scalar::I32, n)
            ));
        }
        Ok(())
    };
    let float = Type::F32;
    let int = Type::I32;
    match op {
        Const { bits } => {
            count(0)?;
            let r = result(sig.result)?;
            scalar(r)?;
            let fits = match r.scalar.bits() {
                1 => bits <= 1,
                16 => bits <= 0xffff,
                _ => true,
            };
            if !fits {
                return Err(format!("constant 0x{bits:x} does not fit {r}"));
            }
        }
        Mov { abs, neg } => {
            count(1)?;
            let r = result(sig.result)?;
            scalar(r)?;
            scalar(ops[0])?;
            if (r.scalar == Scalar::Bool) != (ops[0].scalar == Scalar::Bool)
                || r.scalar.bits() != ops[0].scalar.bits()
            {
                return Err(format!(
                    "mov cannot turn {} into {r} (widths differ)",
                    ops[0]
                ));
            }
            if (abs || neg) && !(r.scalar.is_float() && ops[0] == r) {
                return Err("abs/neg need a float source of the result type".into());
            }
        }
        Cvt => {
            count(1)?;
            let r = result(sig.result)?;
            scalar(r)?;
            scalar(ops[0])?;
            if r.scalar == Scalar::Bool {
                return Err("cvt does not give bool (compare with zero instead)".into());
            }
        }
        FAdd
        | FSub
        | FMul
        | FDiv
        | FMin
        | FMax
        | Ffma
        | Rcp
        | Rsqrt
        | Sqrt
        | Exp2
        | Log2
        | Sin
        | Cos
        | Floor
        | Ceil
        | Trunc
        | RoundEven
        | Fract
        | FSign
        | Ddx { .. }
        | Ddy { .. } => {
            let unary = op.is_float_unary() || matches!(op, Ddx { .. } | Ddy { .. });
            count(if op == Ffma {
                3
            } else if unary {
                1
            } else {
                2
            })?;
            let r = result(sig.result)?;
            scalar(r)?;
            if !r.scalar.is_float() {
                return Err(format!("needs a float type, not {r}"));
            }
            all_same(r)?;
        }
        IAdd | ISub | IMul | IMin | IMax | UMin | UMax | UDiv | UMod | IDiv | IRem | IAbs
        | ISign | IMulHigh | UMulHigh => {
            count(if matches!(op, IAbs | ISign) { 1 } else { 2 })?;
            let r = result(sig.result)?;
            scalar(r)?;
            let ok = match op {
                IMin | IMax | IDiv | IRem | IAbs | ISign => r.scalar.is_signed_int(),
                UMin | UMax | UDiv | UMod => r.scalar.is_unsigned_int(),
                IMulHigh => r == Type::I32,
                UMulHigh => r == Type::U32,
                _ => r.scalar.is_int(),
            };
            if !ok {
                return Err(format!("not defined on {r}"));
            }
            all_same(r)?;
        }
        UBitfieldExtract | IBitfieldExtract | BitfieldInsert | BitReverse | FindLsb | UFindMsb
        | IFindMsb => {
            count(match op {
                UBitfieldExtract | IBitfieldExtract => 3,
                BitfieldInsert => 4,
                _ => 1,
            })?;
            let r = result(sig.result)?;
            if !is_int32(r) {
                return Err(format!("bit operations work on i32 or u32, not {r}"));
            }
            all_same(r)?;
        }
        BitCount => {
            count(1)?;
            let r = result(sig.result)?;
            if !is_int32(r) || !is_int32(ops[0]) {
                return Err("bit_count takes and gives i32 or u32".into());
            }
        }
        FEq | FNe | FLt | FGe | IEq | INe | ILt | IGe | ULt | UGe => {
            count(2)?;
            if result(sig.result)? != Type::BOOL {
                return Err("comparisons give bool".into());
            }
            let t = ops[0];
            scalar(t)?;
            all_same(t)?;
            let ok = match op {
                FEq | FNe | FLt | FGe => t.scalar.is_float(),
                IEq | INe => t.scalar.is_int() || t.scalar == Scalar::Bool,
                ILt | IGe => t.scalar.is_signed_int(),
                _ => t.scalar.is_unsigned_int(),
            };
            if !ok {
                return Err(format!("not defined on {t}"));
            }
        }
        Sel => {
            count(3)?;
            let r = result(sig.result)?;
            scalar(r)?;
            if ops[0] != Type::BOOL {
                return Err("sel condition must be bool".into());
            }
            if ops[1] != r || ops[2] != r {
                return Err(format!("sel operands must both be {r}"));
            }
        }
        And | Or | Xor | Not => {
            count(if op == Not { 1 } else { 2 })?;
            let r = result(sig.result)?;
            scalar(r)?;
            if !(r.scalar.is_int() || r.scalar == Scalar::Bool) {
                return Err(format!("bit ops need an integer or bool, not {r}"));
            }
            all_same(r)?;
        }
        Shl | Shr | AShr => {
            count(2)?;
            let r = result(sig.result)?;
            scalar(r)?;
            if !r.scalar.is_int() {
                return Err(format!("shifts need an integer, not {r}"));
            }
            all_same(r)?;
        }
        Pack { format } => {
            count(format.lanes() as usize)?;
            all_same(float)?;
            if result(sig.result)? != Type::U32 {
                return Err("pack gives u32".into());
            }
        }
        Unpack { format, lane } => {
            expect(&[(Type::U32, "packed")])?;
            if result(sig.result)? != float {
                return Err("unpack gives f32".into());
            }
            if lane >= format.lanes() {
                return Err(format!("{} has {} lanes", format.name(), format.lanes()));
            }
        }
        LoadSysval { sysval, comp } => {
            count(0)?;
            let r = result(sig.result)?;
            let ok = match sysval.kind() {
                SysvalKind::Float => r == float,
                SysvalKind::Bool => r == Type::BOOL,
                SysvalKind::Int => is_int32(r),
            };
            if !ok {
                return Err(format!("{} is not {r}", sysval.name()));
            }
            if comp >= sysval.comps() {
                return Err(format!(
                    "{} has {} component(s)",
                    sysval.name(),
                    sysval.comps()
                ));
            }
        }
        LoadInput { slot, comp, .. } => {
            count(0)?;
            let r = result(sig.result)?;
            scalar(r)?;
            if r.scalar == Scalar::Bool || comp > 3 {
                return Err("inputs are non-bool scalars in components 0..=3".into());
            }
            check_slot(slot)?;
        }
        LoadVarying { interp, .. } => {
            let flat = interp.mode == InterpMode::Flat;
            count(if flat { 0 } else { 1 })?;
            if !flat && ops[0] != Type::vector(Scalar::F32, 2) {
                return Err(format!(
                    "an interpolated varying reads its barycentrics as f32x2, not {}",
                    ops[0]
                ));
            }
            let r = result(sig.result)?;
            scalar(r)?;
            if r.scalar == Scalar::Bool {
                return Err("varyings are non-bool scalars".into());
            }
        }
        StoreOutput { slot, comp } => {
            count(1)?;
            no_result()?;
            scalar(ops[0])?;
            if ops[0].scalar == Scalar::Bool || comp > 3 {
                return Err("outputs are non-bool scalars in components 0..=3".into());
            }
            check_slot(slot)?;
        }
        LoadUniform { .. } => {
            count(0)?;
            let r = result(sig.result)?;
            scalar(r)?;
            if r.scalar == Scalar::Bool {
                return Err("uniforms are not bool".into());
            }
        }
        StoreUniform { .. } => {
            count(1)?;
            no_result()?;
            scalar(ops[0])?;
            if ops[0].scalar.bits() != 32 {
                return Err("a stored uniform is one 32-bit word".into());
            }
        }
        LoadUbo { .. } | LoadShared | LoadPrivate => {
            expect(&[(Type::U32, "byte offset")])?;
            word(result(sig.result)?)?;
        }
        LoadSsbo { .. } => {
            expect(&[(Type::U32, "byte offset")])?;
            let r = result(sig.result)?;
            word(Type::scalar(r.scalar))?;
            if r.lanes > 4 {
                return Err(format!("{r} is more than the 4 words a load reads"));
            }
        }
        LoadUboVec4 { comp, .. } => {
            expect(&[(Type::U32, "vector index")])?;
            let r = result(sig.result)?;
            word(Type::scalar(r.scalar))?;
            if u32::from(comp) + u32::from(r.lanes) > 4 {
                return Err(format!(
                    "{r} from component {comp} reaches past the vector's 4 words"
                ));
            }
        }
        StoreSsbo { .. } | StorePrivate => {
            no_result()?;
            count(2)?;
            word(ops[1])?;
            expect(&[(Type::U32, "byte offset"), (ops[1], "value")])?;
        }
        StoreShared => {
            no_result()?;
            count(2)?;
            word(Type::scalar(ops[1].scalar))?;
            if ops[1].lanes > 4 {
                return Err(format!(
                    "{} is more than the 4 words a store writes",
                    ops[1]
                ));
            }
            expect(&[(Type::U32, "byte offset"), (ops[1], "value")])?;
        }
        SsboAtomic { op: a, .. } | SharedAtomic { op: a } => {
            let r = atomic_value(sig.result)?;
            let mut want = vec![(Type::U32, "byte offset"), (r, "value")];
            if a == AtomicOp::CompareExchange {
                want.push((r, "comparator"));
            }
            expect(&want)?;
        }
        SsboAtomicLoad { .. } | SharedAtomicLoad => {
            atomic_value(sig.result)?;
            expect(&[(Type::U32, "byte offset")])?;
        }
        SsboAtomicStore { .. } | SharedAtomicStore => {
            no_result()?;
            count(2)?;
            atomic_value(Some(ops[1]))?;
            expect(&[(Type::U32, "byte offset"), (ops[1], "value")])?;
        }
        SsboSize { .. } => {
            count(0)?;
            if result(sig.result)? != Type::U32 {
                return Err("ssbo_size gives u32".into());
            }
        }
        Sample {
            shape,
            lod,
            offset,
            compare,
            ..
        } => {
            if shape.ms {
                return Err("multisampled textures are read with texel_fetch".into());
            }
            let coords = lanes_of(Scalar::F32, shape.sample_coords());
            let mut want = vec![(coords, "coordinate")];
            if compare {
                if shape.dim == Dim::D3 {
                    return Err("3D textures have no depth compare".into());
                }
                want.push((float, "reference"));
            }
            match lod {
                LodMode::Implicit => {}
                LodMode::Bias => want.push((float, "bias")),
                LodMode::Explicit => want.push((float, "lod")),
                LodMode::Grad => {
                    let grad = lanes_of(Scalar::F32, shape.dim.sample_coords());
                    want.push((grad, "ddx"));
                    want.push((grad, "ddy"));
                }
            }
            if offset {
                if shape.dim == Dim::Cube {
                    return Err("cube textures take no offset".into());
                }
                want.push((lanes_of(Scalar::I32, shape.offset_coords()), "offset"));
            }
            expect(&want)?;
            if compare {
                if sig.result != Some(float) {
                    return Err("a depth-compare sample gives f32".into());
                }
            } else {
                texel_result(sig.result)?;
            }
        }
        Gather {
            shape,
            comp,
            offset,
            compare,
            ..
        } => {
            if shape.ms || !matches!(shape.dim, Dim::D2 | Dim::Cube) {
                return Err("gather reads 2D and cube textures".into());
            }
            if comp > 3 || (compare && comp != 0) {
                return Err("gather reads component 0..=3 (0 with compare)".into());
            }
            let mut want = vec![(lanes_of(Scalar::F32, shape.sample_coords()), "coordinate")];
            if compare {
                want.push((float, "reference"));
            }
            if offset {
                if shape.dim == Dim::Cube {
                    return Err("cube textures take no offset".into());
                }
                want.push((lanes_of(Scalar::I32, shape.offset_coords()), "offset"));
            }
            expect(&want)?;
            texel_result(sig.result)?;
        }
        TexelFetch { shape, offset, .. } => {
            ms_is_2d(shape)?;
            if shape.dim == Dim::Cube {
                return Err("cube textures cannot be fetched from".into());
            }
            let mut want = vec![
                (lanes_of(Scalar::I32, shape.texel_coords()), "coordinate"),
                (int, if shape.ms { "sample" } else { "lod" }),
            ];
            if offset {
                want.push((lanes_of(Scalar::I32, shape.offset_coords()), "offset"));
            }
            expect(&want)?;
            texel_result(sig.result)?;
        }
        TextureSize { shape, .. } => {
            ms_is_2d(shape)?;
            if shape.ms {
                expect(&[])?;
            } else {
                expect(&[(int, "lod")])?;
            }
            size_result(sig.result, shape)?;
        }
        TextureLevels { .. } => {
            count(0)?;
            if !is_int32(result(sig.result)?) {
                return Err("texture_levels gives i32 or u32".into());
            }
        }
        ImageLoad { shape, .. } | ImageStore { shape, .. } | ImageAtomic { shape, .. } => {
            ms_is_2d(shape)?;
            let mut want = vec![(lanes_of(Scalar::I32, shape.texel_coords()), "coordinate")];
            if shape.ms {
                want.push((int, "sample"));
            }
            match op {
                ImageLoad { .. } => texel_result(sig.result)?,
                ImageStore { .. } => {
                    no_result()?;
                    let value = ops.get(want.len()).copied().unwrap_or(Type::F32);
                    if !is_texel(value) {
                        return Err(format!("stores f32x4, i32x4 or u32x4, not {value}"));
                    }
                    want.push((value, "value"));
                }
                ImageAtomic { op: a, .. } => {
                    let r = atomic_value(sig.result)?;
                    want.push((r, "value"));
                    if a == AtomicOp::CompareExchange {
                        want.push((r, "comparator"));
                    }
                }
                _ => {}
            }
            expect(&want)?;
        }
        ImageSize { shape, .. } => {
            ms_is_2d(shape)?;
            count(0)?;
            size_result(sig.result, shape)?;
        }
        Discard | Demote | Barrier | ControlBarrier => {
            count(0)?;
            no_result()?;
        }
        ArrayLoad { array: id, offset } => {
            count(0)?;
            let decl = array(id)?;
            if result(sig.result)? != decl.elem {
                return Err(format!("array a{} holds {}", id.0, decl.elem));
            }
            if offset >= decl.len {
                return Err(format!(
                    "offset {offset} is past the array's {} elements",
                    decl.len
                ));
            }
        }
        ArrayStore { array: id, offset } => {
            count(1)?;
            no_result()?;
            let decl = array(id)?;
            if ops[0] != decl.elem {
                return Err(format!("array a{} holds {}", id.0, decl.elem));
            }
            if offset >= decl.len {
                return Err(format!(
                    "offset {offset} is past the array's {} elements",
                    decl.len
                ));
            }
        }
    }
    Ok(())
}

/// Slots are user locations `0..=31` or named built-ins (see [`crate::slot`]).
fn check_slot(slot: u16) -> Result<(), String> {
    if crate::slot::is_valid(slot) {
        Ok(())
    } else {
        Err(format!(
            "slot {slot} is neither a user location (0..=31) nor a built-in"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for op in GenericOp::simple_ops() {
            assert_eq!(GenericOp::parse(op.name(), &[], None), Ok(op));
        }
        assert!(GenericOp::parse("frobnicate", &[], None).is_err());
    }

    #[test]
    fn every_f16_constant_round_trips_through_its_shortest_text() {
        for h in 0..=u16::MAX {
            let text = format_const(h as u32, Type::F16);
            assert_eq!(
                parse_const(&text, Type::F16),
                Ok(h as u32),
                "{h:#06x} {text}"
            );
        }
    }

    #[test]
    fn constants_round_trip_per_type() {
        let cases: &[(Type, &[u32])] = &[
            (
                Type::F32,
                &[
                    0,
                    0x8000_0000,
                    0x3fc0_0000,
                    1,
                    0x7f80_0000,
                    0x7fc0_0001,
                    0xff7f_ffff,
                ],
            ),
            (
                Type::F16,
                &[0, 0x8000, 0x3c00, 1, 0x7c00, 0x7e01, 0x7bff, 0x2e66],
            ),
            (Type::I32, &[0, 1, u32::MAX, 0x8000_0000]),
            (Type::I16, &[0, 0xffff, 0x8000]),
            (Type::U32, &[0, u32::MAX]),
            (Type::U16, &[0, 0xffff, 0x8000]),
            (Type::BOOL, &[0, 1]),
        ];
        for &(ty, values) in cases {
            for &bits in values {
                let text = format_const(bits, ty);
                assert_eq!(parse_const(&text, ty), Ok(bits), "{ty} {text}");
            }
        }
        assert!(parse_const("inf", Type::F32).is_err());
        // binary16 constants print as their own shortest decimal.
        assert_eq!(format_const(0x2e66, Type::F16), "0.1");
        assert_eq!(format_const(0x0001, Type::F16), "6e-8");
        assert_eq!(format_const(0xfbff, Type::F16), "-65500.0");
        assert_eq!(format_const(0x8000, Type::F16), "-0.0");
        assert!(parse_const("0x1_0000", Type::F16).is_err());
        assert!(parse_const("40000", Type::I16).is_err());
        assert!(parse_const("70000", Type::U16).is_err());
        assert!(parse_const("-1", Type::U16).is_err());
    }
}
