//! The generic (target-neutral) opcode vocabulary that frontends emit.

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
/// validator enforces them through [`Opcode::check`].
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
    /// Numeric conversion (float↔int, width changes); out-of-range float to
    /// int is undefined behaviour.
    Cvt,
    // Float arithmetic: operands and result share one float type.
    FAdd,
    FSub,
    FMul,
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
    /// Read one component of a varying/attribute slot.
    LoadInput {
        slot: u16,
        comp: u8,
        interp: Interp,
    },
    /// Write one component of an output slot.
    StoreOutput {
        slot: u16,
        comp: u8,
    },
    /// Read uniform word `index` (+ the address operand if present).
    LoadUniform {
        index: u32,
    },
    /// Read a 32-bit word from UBO `binding` at byte offset operand 0.
    LoadUbo {
        binding: u8,
    },
    /// Sample texture/sampler pair at an `f32x2` coordinate, giving `f32x4`.
    Sample {
        texture: u8,
        sampler: u8,
    },
    /// End this invocation without writing its outputs.
    Discard,
    /// Order all memory-like accesses before it against all after it.
    Barrier,
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
    FAdd => "fadd", FSub => "fsub", FMul => "fmul", FMin => "fmin", FMax => "fmax",
    Ffma => "ffma", Rcp => "rcp", Rsqrt => "rsqrt", Sqrt => "sqrt", Exp2 => "exp2",
    Log2 => "log2", Sin => "sin", Cos => "cos", Floor => "floor",
    IAdd => "iadd", ISub => "isub", IMul => "imul", IMin => "imin", IMax => "imax",
    UMin => "umin", UMax => "umax", UDiv => "udiv", UMod => "umod",
    IDiv => "idiv", IRem => "irem",
    FEq => "feq", FNe => "fne", FLt => "flt", FGe => "fge",
    IEq => "ieq", INe => "ine", ILt => "ilt", IGe => "ige", ULt => "ult", UGe => "uge",
    Sel => "sel", And => "and", Or => "or", Xor => "xor", Not => "not",
    Shl => "shl", Shr => "shr", AShr => "ashr",
    Discard => "discard", Barrier => "barrier",
}

impl GenericOp {
    /// Every operand-only opcode (for generators and tests).
    pub fn simple_ops() -> impl Iterator<Item = GenericOp> {
        SIMPLE.iter().map(|&(op, _)| op)
    }

    /// Float unary ops.
    pub fn is_float_unary(self) -> bool {
        use GenericOp::*;
        matches!(self, Rcp | Rsqrt | Sqrt | Exp2 | Log2 | Sin | Cos | Floor)
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

    fn get(&mut self, key: &str) -> Option<(usize, &'t str)> {
        let k = self.attrs.iter().position(|a| a.key == Some(key))?;
        if k < 64 {
            self.used |= 1 << k;
        }
        Some((k, self.attrs[k].value))
    }

    fn number<T: std::str::FromStr>(&mut self, key: &str) -> Result<T, AttrError> {
        match self.get(key) {
            Some((k, v)) => v.parse().map_err(|_| {
                AttrError::on(k, format!("`{key}` needs a number in range, got `{v}`"))
            }),
            None => Err(AttrError::on_name(format!("missing attribute `{key}=`"))),
        }
    }

    fn finish(self) -> Result<(), AttrError> {
        match (0..self.attrs.len()).find(|&k| k >= 64 || self.used & (1 << k) == 0) {
            Some(k) => Err(AttrError::on(k, "unexpected attribute")),
            None => Ok(()),
        }
    }
}

impl Opcode for GenericOp {
    fn name(&self) -> &'static str {
        use GenericOp::*;
        match self {
            Const { .. } => "const",
            Mov { .. } => "mov",
            LoadInput { .. } => "load_input",
            StoreOutput { .. } => "store_output",
            LoadUniform { .. } => "load_uniform",
            LoadUbo { .. } => "load_ubo",
            Sample { .. } => "sample",
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
            LoadInput { slot, comp, interp } => {
                write!(
                    out,
                    " slot={slot} comp={comp} interp={}",
                    interp_name(interp)
                )?;
                if interp.loc != InterpLoc::Center {
                    write!(out, " loc={}", loc_name(interp.loc))?;
                }
                Ok(())
            }
            StoreOutput { slot, comp } => write!(out, " slot={slot} comp={comp}"),
            LoadUniform { index } => write!(out, " index={index}"),
            LoadUbo { binding } => write!(out, " binding={binding}"),
            Sample { texture, sampler } => write!(out, " texture={texture} sampler={sampler}"),
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
            "load_input" => {
                let slot = a.number("slot")?;
                let comp = a.number("comp")?;
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
                LoadInput {
                    slot,
                    comp,
                    interp: Interp { mode, loc },
                }
            }
            "store_output" => StoreOutput {
                slot: a.number("slot")?,
                comp: a.number("comp")?,
            },
            "load_uniform" => LoadUniform {
                index: a.number("index")?,
            },
            "load_ubo" => LoadUbo {
                binding: a.number("binding")?,
            },
            "sample" => Sample {
                texture: a.number("texture")?,
                sampler: a.number("sampler")?,
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
        let trap = Effects {
            may_trap: true,
            ..Effects::PURE
        };
        match self {
            Cvt
            | Shl
            | Shr
            | AShr
            | UDiv
            | UMod
            | IDiv
            | IRem
            | LoadUniform { .. }
            | LoadUbo { .. } => trap,
            Sample { .. } => trap,
            StoreOutput { .. } => Effects {
                side_effects: true,
                may_trap: false,
                barrier: BarrierClass::OUTPUT_W,
            },
            Discard => Effects {
                side_effects: true,
                may_trap: false,
                barrier: BarrierClass::OUTPUT_W,
            },
            Barrier => Effects {
                side_effects: true,
                may_trap: false,
                barrier: BarrierClass::ALL,
            },
            ArrayLoad { .. } => Effects {
                side_effects: false,
                may_trap: true,
                barrier: BarrierClass::ARRAY_R,
            },
            ArrayStore { .. } => Effects {
                side_effects: true,
                may_trap: true,
                barrier: BarrierClass::ARRAY_W,
            },
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
                "{t} is a vector; only collect/split/sample handle vectors"
            ))
        }
    };
    let all_same = |want: Type| -> Result<(), String> {
        match ops.iter().find(|&&t| t != want) {
            Some(t) => Err(format!("operand type {t} does not match {want}")),
            None => Ok(()),
        }
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
            if r.scalar == Scalar::Bool || ops[0].scalar == Scalar::Bool {
                return Err("cvt does not take or give bool (use sel or a compare)".into());
            }
        }
        FAdd | FSub | FMul | FMin | FMax | Ffma | Rcp | Rsqrt | Sqrt | Exp2 | Log2 | Sin | Cos
        | Floor => {
            count(if op == Ffma {
                3
            } else if op.is_float_unary() {
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
        IAdd | ISub | IMul | IMin | IMax | UMin | UMax | UDiv | UMod | IDiv | IRem => {
            count(2)?;
            let r = result(sig.result)?;
            scalar(r)?;
            let ok = match op {
                IMin | IMax | IDiv | IRem => r.scalar.is_signed_int(),
                UMin | UMax | UDiv | UMod => r.scalar == Scalar::U32,
                _ => r.scalar.is_int(),
            };
            if !ok {
                return Err(format!("not defined on {r}"));
            }
            all_same(r)?;
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
                _ => t.scalar == Scalar::U32,
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
        LoadInput { comp, .. } => {
            count(0)?;
            let r = result(sig.result)?;
            scalar(r)?;
            if r.scalar == Scalar::Bool || comp > 3 {
                return Err("inputs are non-bool scalars in components 0..=3".into());
            }
        }
        StoreOutput { comp, .. } => {
            count(1)?;
            no_result()?;
            scalar(ops[0])?;
            if ops[0].scalar == Scalar::Bool || comp > 3 {
                return Err("outputs are non-bool scalars in components 0..=3".into());
            }
        }
        LoadUniform { .. } => {
            count(0)?;
            let r = result(sig.result)?;
            scalar(r)?;
            if r.scalar == Scalar::Bool {
                return Err("uniforms are not bool".into());
            }
        }
        LoadUbo { .. } => {
            count(1)?;
            let r = result(sig.result)?;
            scalar(r)?;
            if r.scalar.bits() != 32 || ops[0] != Type::U32 {
                return Err("load_ubo reads a 32-bit value at a u32 byte offset".into());
            }
        }
        Sample { .. } => {
            count(1)?;
            if ops[0] != Type::vector(Scalar::F32, 2)
                || sig.result != Some(Type::vector(Scalar::F32, 4))
            {
                return Err("sample takes an f32x2 coordinate and gives f32x4".into());
            }
        }
        Discard | Barrier => {
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
    }
}
