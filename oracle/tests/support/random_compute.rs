//! A generator of random WGSL compute shaders for the differential tests.
//!
//! Every shader reads per-invocation inputs from a storage buffer, computes
//! with random expressions, control flow (if/else, loops with break and
//! continue, switch, helper functions), shared memory with barriers,
//! atomics, push constants, a uniform buffer and the invocation/workgroup
//! ids, and writes one word per *slot* to an output buffer
//! (`dst[invocation * SLOTS + slot]`). Each slot carries the [`Check`] that
//! says how a result may be compared:
//!
//! - integer and boolean slots bit for bit;
//! - float slots computed only by operations the Vulkan spec defines
//!   exactly (correctly rounded `+ - *`, conversions, `floor`, `min`, …)
//!   compare as floats (NaNs alike, denormals as zero, zero signs alike —
//!   the spec lets drivers flush denormals and ignore the sign of zero);
//! - operations with a precision bound (division, transcendental and
//!   geometric functions) appear only at the root of a slot, with their
//!   exact operands written to slots beside them, so the check can compute
//!   the allowed error from the operands ([`Approx`], tolerances in
//!   `precision.rs`).
//!
//! Values stay in ranges where nothing overflows or becomes denormal:
//! inputs are "nice" floats (magnitudes 2^-4..2^6), float variables are
//! clamped to ±1024 and snapped to 0 below 2^-20, products take a leaf on
//! one side, every sum and product is clamped before further arithmetic
//! (the spec lets drivers reassociate and fuse them, and lavapipe does),
//! and approximate operations get their operands clamped into
//! the domain where the spec bounds their error.

use std::fmt::Write;

/// SplitMix64: a tiny deterministic generator (no dependency needed).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u32) -> u32 {
        (self.next_u64() % n as u64) as u32
    }
    pub fn chance(&mut self, percent: u32) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u32) as usize]
    }
    /// A float that is exact, normal and moderate: small integers, sixteenths,
    /// or a random mantissa with an exponent in -4..=6.
    pub fn nice_f32(&mut self) -> f32 {
        let sign = if self.chance(50) { -1.0 } else { 1.0 };
        match self.below(4) {
            0 => self.below(9) as f32 * sign,
            1 => (self.below(64) as f32 / 16.0) * sign,
            _ => {
                let exp = self.below(11) as i32 - 4;
                let mantissa = 1.0 + self.below(1 << 23) as f32 / (1 << 23) as f32;
                sign * mantissa * 2f32.powi(exp)
            }
        }
    }
    /// A word biased towards interesting integers.
    pub fn word(&mut self) -> u32 {
        match self.below(4) {
            0 => self.below(16),
            1 => (self.below(16) as i32 - 8) as u32,
            2 => *self.pick(&[0, 1, u32::MAX, 0x8000_0000, 0x7fff_ffff, 0xff, 0xffff_0000]),
            _ => self.next_u64() as u32,
        }
    }
}

/// A scalar WGSL type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    U,
    I,
    F,
    B,
}

impl Ty {
    fn wgsl(self) -> &'static str {
        match self {
            Ty::U => "u32",
            Ty::I => "i32",
            Ty::F => "f32",
            Ty::B => "bool",
        }
    }
}

/// An operation whose result the Vulkan spec bounds rather than defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Approx {
    Div,
    Rem,
    Exp,
    Exp2,
    Log,
    Log2,
    Pow,
    Sqrt,
    InverseSqrt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Degrees,
    Radians,
    Fma,
    Mix,
    SmoothStep,
    Dot(u8),
    Length(u8),
    Distance(u8),
    Normalize(u8),
    Cross,
    Reflect(u8),
    Refract(u8),
    FaceForward(u8),
    Determinant(u8),
    /// Written as WGSL `transpose`, made `MatrixInverse` in SPIR-V
    /// (`spirv_variants.rs`); the slot holds element `column * n + row`.
    Inverse(u8),
    MatVec(u8),
    Unpack4x8Unorm,
    Unpack4x8Snorm,
    Unpack2x16Unorm,
    Unpack2x16Snorm,
}

/// How one output slot is compared.
#[derive(Clone, Debug, PartialEq)]
pub enum Check {
    /// Bit for bit (integers, booleans, atomics).
    Bits,
    /// An exactly defined float.
    Float,
    /// `op` applied to the values in slots `args`; the slot holds component
    /// `comp` of the result.
    Approx {
        op: Approx,
        args: Vec<usize>,
        comp: usize,
    },
}

/// One generated shader with its inputs.
#[derive(Clone, Debug)]
pub struct RandomShader {
    pub wgsl: String,
    pub workgroup_size: [u32; 3],
    pub workgroups: [u32; 3],
    /// Input words (binding 0).
    pub src: Vec<u32>,
    /// Output words' initial contents (binding 1).
    pub dst: Vec<u32>,
    /// Atomic words (binding 2): one per invocation, then 6 shared counters
    /// (add, max, min, or, and, xor: one operation each).
    pub atomics: Vec<u32>,
    /// Uniform block (binding 3): `f: vec4<f32>, u: vec4<u32>`.
    pub uniform: Vec<u32>,
    /// Push constants: `a: u32, b: i32, c: f32, d: f32, zero: u32` (`zero` is
    /// always 0, unknown to the compiler).
    pub push: Vec<u32>,
    /// Per-invocation output slots.
    pub slots: Vec<Check>,
    /// Sampled texture (binding 4, `texture_2d<f32>`, one level, read with
    /// a nearest, clamp-to-edge sampler at binding 5): `TEX`×`TEX` texels.
    pub texture: Vec<[u32; 4]>,
    /// Storage image (binding 6, `rgba32float`): `IMG`×`IMG` texels;
    /// invocation `inv` reads and writes only texel `(inv % IMG, inv / IMG)`.
    pub image: Vec<[u32; 4]>,
    /// Atomic storage image (binding 7, `r32uint`, component 0 used):
    /// `IMG`×`IMG` texels; each invocation's own texel as above, and texel
    /// `(0, IMG - 1)` that every invocation adds to.
    pub counts: Vec<[u32; 4]>,
}

/// The sampled texture's width and height.
pub const TEX: u32 = 4;
/// The storage images' width and height (more texels than invocations).
pub const IMG: u32 = 8;

impl RandomShader {
    pub fn invocations(&self) -> u32 {
        self.workgroup_size.iter().product::<u32>() * self.workgroups.iter().product::<u32>()
    }
}

/// Words of input per invocation: `FLOAT_INPUTS` floats then integers.
const INPUTS: u32 = 8;
const FLOAT_INPUTS: u32 = 4;

struct Gen<'r> {
    rng: &'r mut Rng,
    /// Variables in scope: name, type, and whether it is a float known
    /// to be moderate (clamped), usable as a product's leaf.
    vars: Vec<(String, Ty)>,
    body: String,
    functions: String,
    indent: usize,
    next: u32,
    slots: Vec<Check>,
    /// Inside a loop or branch: no barriers there.
    nested: u32,
    /// Inside a helper function: no invocation ids there.
    in_helper: bool,
    /// Invocations per workgroup.
    wg_total: u32,
}

/// Generate shader number `seed`.
pub fn generate(seed: u64) -> RandomShader {
    let mut rng = Rng::new(seed);
    let workgroup_size = *rng.pick(&[[4, 1, 1], [4, 2, 1], [2, 2, 2], [8, 1, 1], [1, 1, 1]]);
    let workgroups = [1 + rng.below(2), 1 + rng.below(2), 1];
    let wg_total: u32 = workgroup_size.iter().product();
    let mut g = Gen {
        rng: &mut rng,
        vars: Vec::new(),
        body: String::new(),
        functions: String::new(),
        indent: 1,
        next: 0,
        slots: Vec::new(),
        nested: 0,
        in_helper: false,
        wg_total,
    };
    for i in 0..INPUTS {
        let (name, ty) = if i < FLOAT_INPUTS {
            (format!("in_f{i}"), Ty::F)
        } else if i % 2 == 0 {
            (format!("in_u{i}"), Ty::U)
        } else {
            (format!("in_i{i}"), Ty::I)
        };
        let load = match ty {
            Ty::F => format!("bitcast<f32>(src[base + {i}u])"),
            Ty::I => format!("bitcast<i32>(src[base + {i}u])"),
            _ => format!("src[base + {i}u]"),
        };
        g.line(&format!("let {name} = {load};"));
        g.vars.push((name, ty));
    }
    let statements = 4 + g.rng.below(7);
    for _ in 0..statements {
        g.statement();
    }
    // Every shader writes a few more results and at least one approximate
    // operation.
    for _ in 0..2 {
        let ty = *g.rng.pick(&[Ty::U, Ty::I, Ty::F, Ty::B]);
        let e = g.expr(ty, 3);
        g.output(ty, &e);
    }
    g.approx_output();

    let slots = g.slots.len() as u32;
    let body = std::mem::take(&mut g.body);
    let functions = std::mem::take(&mut g.functions);
    let [x, y, z] = workgroup_size;
    // Masks and shifts, never `%` or `/`: the SPIR-V rewrites turn
    // divisions into remainders and back.
    let (img_mask, img_shift) = (IMG - 1, IMG.trailing_zeros());
    let wgsl = format!(
        "struct Push {{ a: u32, b: i32, c: f32, d: f32, zero: u32 }}\n\
         struct Uniforms {{ f: vec4<f32>, u: vec4<u32> }}\n\
         var<immediate> pc: Push;\n\
         @group(0) @binding(0) var<storage, read> src: array<u32>;\n\
         @group(0) @binding(1) var<storage, read_write> dst: array<u32>;\n\
         @group(0) @binding(2) var<storage, read_write> atom: array<atomic<u32>>;\n\
         @group(0) @binding(3) var<uniform> ubo: Uniforms;\n\
         @group(0) @binding(4) var tex: texture_2d<f32>;\n\
         @group(0) @binding(5) var samp: sampler;\n\
         @group(0) @binding(6) var img: texture_storage_2d<rgba32float, read_write>;\n\
         @group(0) @binding(7) var counts: texture_storage_2d<r32uint, atomic>;\n\
         var<workgroup> tile: array<u32, {wg_total}>;\n\
         var<workgroup> wg_count: atomic<u32>;\n\
         const SLOTS: u32 = {slots}u;\n\
         fn lathe_mul_high_u(a: u32, b: u32) -> u32 {{ return a * b; }}\n\
         fn lathe_mul_high_i(a: i32, b: i32) -> i32 {{ return a * b; }}\n\
         fn moderate(x: f32) -> f32 {{\n\
         \x20   let c = clamp(x, -1024.0f, 1024.0f);\n\
         \x20   return select(c, 0.0f, abs(c) < 0.00000095367431640625f);\n\
         }}\n\
         {functions}\n\
         @compute @workgroup_size({x}, {y}, {z})\n\
         fn main(@builtin(global_invocation_id) gid: vec3<u32>,\n\
         \x20       @builtin(local_invocation_id) lid: vec3<u32>,\n\
         \x20       @builtin(workgroup_id) wid: vec3<u32>,\n\
         \x20       @builtin(num_workgroups) nwg: vec3<u32>,\n\
         \x20       @builtin(local_invocation_index) lidx: u32) {{\n\
         \x20   let inv = gid.x + gid.y * nwg.x * {x}u + gid.z * nwg.x * {x}u * nwg.y * {y}u;\n\
         \x20   let base = inv * {INPUTS}u;\n\
         \x20   let o = inv * SLOTS;\n\
         \x20   let own = vec2<i32>(i32(inv & {img_mask}u), i32(inv >> {img_shift}u));\n\
         {body}}}\n"
    );
    let slots = g.slots;
    let mut shader = RandomShader {
        wgsl,
        workgroup_size,
        workgroups,
        src: Vec::new(),
        dst: Vec::new(),
        atomics: Vec::new(),
        uniform: Vec::new(),
        push: Vec::new(),
        slots,
        texture: Vec::new(),
        image: Vec::new(),
        counts: Vec::new(),
    };
    let n = shader.invocations();
    for _ in 0..n {
        for i in 0..INPUTS {
            let w = if i < FLOAT_INPUTS {
                rng.nice_f32().to_bits()
            } else {
                rng.word()
            };
            shader.src.push(w);
        }
    }
    shader.dst = (0..n as usize * shader.slots.len())
        .map(|_| 0xcdcd_cdcd)
        .collect();
    shader.atomics = (0..n + 6).map(|_| rng.word()).collect();
    shader.uniform = (0..8)
        .map(|i| {
            if i < 4 {
                rng.nice_f32().to_bits()
            } else {
                rng.word()
            }
        })
        .collect();
    shader.push = vec![
        rng.word(),
        rng.word(),
        rng.nice_f32().to_bits(),
        rng.nice_f32().to_bits(),
        0,
    ];
    let mut floats = |n: u32| -> Vec<[u32; 4]> {
        (0..n)
            .map(|_| std::array::from_fn(|_| rng.nice_f32().to_bits()))
            .collect()
    };
    shader.texture = floats(TEX * TEX);
    shader.image = floats(IMG * IMG);
    shader.counts = (0..IMG * IMG).map(|_| [rng.word(), 0, 0, 0]).collect();
    shader
}

fn float_literal(x: f32) -> String {
    if x.is_sign_negative() {
        format!("({x:?}f)")
    } else {
        format!("{x:?}f")
    }
}

impl Gen<'_> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.body.push_str("    ");
        }
        self.body.push_str(text);
        self.body.push('\n');
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    fn var_of(&mut self, ty: Ty) -> Option<String> {
        let candidates: Vec<&String> = self
            .vars
            .iter()
            .filter(|(_, t)| *t == ty)
            .map(|(n, _)| n)
            .collect();
        if candidates.is_empty() {
            None
        } else {
            Some(self.rng.pick(&candidates).to_string())
        }
    }

    fn leaf(&mut self, ty: Ty) -> String {
        if self.rng.chance(60) {
            if let Some(v) = self.var_of(ty) {
                return v;
            }
        }
        match ty {
            Ty::U => match self.rng.below(6) {
                0 if !self.in_helper => self
                    .rng
                    .pick(&[
                        "gid.x",
                        "lid.x",
                        "wid.x",
                        "nwg.x",
                        "lidx",
                        "inv",
                        "lid.y",
                        "wid.y",
                        "gid.z",
                        "arrayLength(&src)",
                    ])
                    .to_string(),
                1 => "pc.a".into(),
                2 => format!("ubo.u.{}", self.rng.pick(&["x", "y", "z", "w"])),
                _ => format!("{}u", self.rng.word()),
            },
            Ty::I => match self.rng.below(4) {
                0 => "pc.b".into(),
                _ => {
                    let v = (self.rng.word() as i32).max(i32::MIN + 1);
                    if v < 0 {
                        format!("({v}i)")
                    } else {
                        format!("{v}i")
                    }
                }
            },
            Ty::F => match self.rng.below(5) {
                0 => self.rng.pick(&["pc.c", "pc.d"]).to_string(),
                1 => format!("ubo.f.{}", self.rng.pick(&["x", "y", "z", "w"])),
                _ => float_literal(self.rng.nice_f32()),
            },
            Ty::B => self.rng.pick(&["true", "false"]).to_string(),
        }
    }

    /// An expression of `ty` built only from exactly defined operations.
    fn expr(&mut self, ty: Ty, depth: u32) -> String {
        if depth == 0 || self.rng.chance(25) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        match ty {
            Ty::U => self.expr_u(d),
            Ty::I => self.expr_i(d),
            Ty::F => self.expr_f(d),
            Ty::B => self.expr_b(d),
        }
    }

    fn expr_u(&mut self, d: u32) -> String {
        let a = self.expr(Ty::U, d);
        let b = self.expr(Ty::U, d);
        let b = runtime(Ty::U, &b);
        match self.rng.below(31) {
            29 => format!("lathe_mul_high_u({a}, {b})"),
            0 => format!("({a} + {b})"),
            1 => format!("({a} - {b})"),
            2 => format!("({a} * {b})"),
            3 => format!("({a} / {b})"),
            4 => format!("({a} % {b})"),
            5 => format!("({a} & {b})"),
            6 => format!("({a} | {b})"),
            7 => format!("({a} ^ {b})"),
            8 => format!("(~{a})"),
            9 => format!("({a} << ({b} & 31u))"),
            10 => format!("({a} >> ({b} & 31u))"),
            11 => format!("min({a}, {b})"),
            12 => format!("max({a}, {b})"),
            13 => {
                let c = self.expr(Ty::U, d);
                format!("clamp({a}, min({b}, {c}), max({b}, {c}))")
            }
            14 => format!("countOneBits({a})"),
            15 => format!("reverseBits({a})"),
            16 => format!("firstLeadingBit({a})"),
            17 => format!("firstTrailingBit({a})"),
            18 => format!("countLeadingZeros({a})"),
            19 => format!("countTrailingZeros({a})"),
            20 => {
                let c = runtime(Ty::U, &self.expr(Ty::U, d));
                format!("extractBits({a}, {b}, {c})")
            }
            21 => {
                let (c, e) = (self.expr(Ty::U, d), self.expr(Ty::U, d));
                let (c, e) = (runtime(Ty::U, &c), runtime(Ty::U, &e));
                format!("insertBits({a}, {b}, {c}, {e})")
            }
            22 => format!("u32({})", self.expr(Ty::I, d)),
            23 => format!("u32(clamp({}, 0.0f, 1.0e9f))", self.expr(Ty::F, d)),
            24 => format!("select({a}, {b}, {})", self.expr(Ty::B, d)),
            25 => {
                let v: Vec<String> = (0..4).map(|_| self.unit_float(d)).collect();
                let f = self.rng.pick(&["pack4x8unorm", "pack4x8snorm"]);
                format!("{f}(vec4<f32>({}))", v.join(", "))
            }
            26 => {
                let v: Vec<String> = (0..2).map(|_| self.unit_float(d)).collect();
                let f = self.rng.pick(&["pack2x16unorm", "pack2x16snorm"]);
                format!("{f}(vec2<f32>({}))", v.join(", "))
            }
            27 => {
                let (x, y) = (self.half_float(d), self.half_float(d));
                format!("pack2x16float(vec2<f32>({x}, {y}))")
            }
            28 => format!("bitcast<u32>({})", self.expr(Ty::I, d)),
            _ => {
                let c = self.expr(Ty::U, d);
                let k = self.rng.pick(&["x", "y", "z"]);
                format!(
                    "(vec3<u32>({a}, {b}, {c}) * vec3<u32>({b}, {c}, {a}) + vec3<u32>(1u, 2u, 3u)).{k}"
                )
            }
        }
    }

    fn expr_i(&mut self, d: u32) -> String {
        let a = self.expr(Ty::I, d);
        let b = self.expr(Ty::I, d);
        let b = runtime(Ty::I, &b);
        match self.rng.below(27) {
            25 => format!("lathe_mul_high_i({a}, {b})"),
            0 => format!("({a} + {b})"),
            1 => format!("({a} - {b})"),
            2 => format!("({a} * {b})"),
            3 => format!("({a} / {b})"),
            4 => format!("({a} % {b})"),
            5 => format!("({a} & {b})"),
            6 => format!("({a} | {b})"),
            7 => format!("({a} ^ {b})"),
            8 => format!("(~{a})"),
            9 => format!("({a} << ({} & 31u))", runtime(Ty::U, &self.expr(Ty::U, d))),
            10 => format!("({a} >> ({} & 31u))", runtime(Ty::U, &self.expr(Ty::U, d))),
            11 => format!("(-{a})"),
            12 => format!("abs({a})"),
            13 => format!("sign({a})"),
            14 => format!("min({a}, {b})"),
            15 => format!("max({a}, {b})"),
            16 => {
                let c = self.expr(Ty::I, d);
                format!("clamp({a}, min({b}, {c}), max({b}, {c}))")
            }
            17 => format!("countOneBits({a})"),
            18 => format!("reverseBits({a})"),
            19 => format!("firstLeadingBit({a})"),
            20 => format!("firstTrailingBit({a})"),
            21 => {
                let (o, c) = (self.expr(Ty::U, d), self.expr(Ty::U, d));
                let (o, c) = (runtime(Ty::U, &o), runtime(Ty::U, &c));
                format!("extractBits({a}, {o}, {c})")
            }
            22 => {
                let (o, c) = (self.expr(Ty::U, d), self.expr(Ty::U, d));
                let (o, c) = (runtime(Ty::U, &o), runtime(Ty::U, &c));
                format!("insertBits({a}, {b}, {o}, {c})")
            }
            23 => format!("i32({})", self.expr(Ty::U, d)),
            24 => format!("i32(clamp({}, -1.0e9f, 1.0e9f))", self.expr(Ty::F, d)),
            _ => format!("select({a}, {b}, {})", self.expr(Ty::B, d)),
        }
    }

    fn expr_f(&mut self, d: u32) -> String {
        let a = self.expr(Ty::F, d);
        match self.rng.below(27) {
            // Every sum and product passes through `moderate` (a clamp)
            // before further arithmetic: the spec lets drivers reassociate
            // and fuse chains of them (lavapipe folds constants across a
            // chain of adds and fuses a multiply into an add).
            0 => format!("moderate({a} + {})", self.expr(Ty::F, d)),
            1 => format!("moderate({a} - {})", self.expr(Ty::F, d)),
            // Products take a leaf on one side so magnitudes stay bounded.
            // ... and pass through `moderate` (a clamp) before anything
            // else: drivers may fuse a product into an add (lavapipe does).
            2 => format!("moderate({a} * {})", self.leaf(Ty::F)),
            3 => format!("(-{a})"),
            4 => format!("abs({a})"),
            5 => format!("floor({a})"),
            6 => format!("ceil({a})"),
            7 => format!("trunc({a})"),
            8 => format!("round({a})"),
            9 => format!("fract({a})"),
            10 => format!("sign({a})"),
            11 => format!("min({a}, {})", self.expr(Ty::F, d)),
            12 => format!("max({a}, {})", self.expr(Ty::F, d)),
            13 => {
                let (b, c) = (self.expr(Ty::F, d), self.expr(Ty::F, d));
                format!("clamp({a}, min({b}, {c}), max({b}, {c}))")
            }
            14 => format!("saturate({a})"),
            15 => format!("step({a}, {})", self.expr(Ty::F, d)),
            16 => {
                let (b, c) = (self.expr(Ty::F, d), self.expr(Ty::B, d));
                format!("select({a}, {b}, {c})")
            }
            17 => format!("f32({})", self.expr(Ty::U, d)),
            18 => format!("f32({})", self.expr(Ty::I, d)),
            19 => format!("ldexp({a}, clamp({}, -8i, 8i))", self.expr(Ty::I, d)),
            20 => format!("frexp({a}).fract"),
            21 => format!("f32(frexp({a}).exp)"),
            22 => format!("modf({a}).fract"),
            23 => format!("modf({a}).whole"),
            24 => format!("quantizeToF16(clamp({a}, 1.0f, 1000.0f))"),
            // Only `.x`: lavapipe (Mesa 22.3) folds `unpack2x16float(C).y`
            // of a constant `C` to 0.
            25 => {
                let u = self.expr(Ty::U, d);
                format!("unpack2x16float(({u} & 0x3bff3bffu) | 0x04000400u).x")
            }
            _ => {
                let (b, c) = (self.expr(Ty::F, d), self.leaf(Ty::F));
                let k = self.rng.pick(&["x", "y", "z", "w"]);
                if self.rng.chance(50) {
                    format!("moderate((vec4<f32>({a}, {b}, {c}, 1.0f) * {c}).{k})")
                } else {
                    format!(
                        "moderate((vec4<f32>({a}, {b}, {c}, 1.0f) - vec4<f32>({b}, {a}, 0.5f, {c})).{k})"
                    )
                }
            }
        }
    }

    fn expr_b(&mut self, d: u32) -> String {
        let cmp = *self.rng.pick(&["<", "<=", "==", "!=", ">", ">="]);
        match self.rng.below(8) {
            0..=2 => {
                let ty = *self.rng.pick(&[Ty::U, Ty::I, Ty::F]);
                let (a, b) = (self.expr(ty, d), self.expr(ty, d));
                format!("({a} {cmp} {b})")
            }
            3 => format!("({} && {})", self.expr(Ty::B, d), self.expr(Ty::B, d)),
            4 => format!("({} || {})", self.expr(Ty::B, d), self.expr(Ty::B, d)),
            5 => format!("(!{})", self.expr(Ty::B, d)),
            6 => format!(
                "any(vec2<bool>({}, {}))",
                self.expr(Ty::B, d),
                self.expr(Ty::B, d)
            ),
            _ => format!(
                "all(vec3<bool>({}, {}, {}))",
                self.expr(Ty::B, d),
                self.expr(Ty::B, d),
                self.expr(Ty::B, d)
            ),
        }
    }

    /// A float in [-1, 1] (for the pack functions).
    fn unit_float(&mut self, d: u32) -> String {
        format!("clamp({}, -1.0f, 1.0f)", opaque(&self.expr(Ty::F, d)))
    }

    /// A float whose half-precision rounding is a normal half.
    fn half_float(&mut self, d: u32) -> String {
        let e = opaque(&self.expr(Ty::F, d));
        format!("select(clamp({e}, -60000.0f, 60000.0f), 1.0f, abs({e}) < 0.001f)")
    }

    /// Bind `e` of `ty` to a new variable (moderating floats) and write it
    /// to a slot.
    fn bind(&mut self, ty: Ty, e: &str) -> String {
        let name = self.fresh("v");
        // Generated names count as run-time values (`is_runtime`), so an
        // integer name must not stand for a constant: WGSL would fold
        // `v / v` with `v = 0u` and reject the division by zero.
        let value = match ty {
            Ty::F => format!("moderate({e})"),
            Ty::U | Ty::I => runtime(ty, e),
            Ty::B => e.to_string(),
        };
        self.line(&format!("let {name}: {} = {value};", ty.wgsl()));
        self.output(ty, &name);
        self.vars.push((name.clone(), ty));
        name
    }

    fn output(&mut self, ty: Ty, e: &str) {
        let slot = self.slots.len();
        let word = match ty {
            Ty::U => e.to_string(),
            Ty::I | Ty::F => format!("bitcast<u32>({e})"),
            Ty::B => format!("select(0u, 1u, {e})"),
        };
        self.line(&format!("dst[o + {slot}u] = {word};"));
        self.slots.push(if ty == Ty::F {
            Check::Float
        } else {
            Check::Bits
        });
    }

    fn statement(&mut self) {
        let choice = self.rng.below(if self.nested > 0 { 6 } else { 13 });
        match choice {
            11 => self.texture(),
            12 => self.storage_image(),
            0 | 1 => {
                let ty = *self.rng.pick(&[Ty::U, Ty::I, Ty::F, Ty::B]);
                let e = self.expr(ty, 3);
                self.bind(ty, &e);
            }
            2 => self.if_else(),
            3 => self.for_loop(),
            4 => self.switch(),
            5 => self.call(),
            6 => self.shared_memory(),
            7 => self.atomics(),
            8 => self.approx_output(),
            9 => self.local_array(),
            _ => self.while_loop(),
        }
    }

    /// A mutable variable of `ty` assigned in a nested block built by
    /// `block`; bound and written to a slot afterwards.
    fn with_mutable(&mut self, ty: Ty, block: impl FnOnce(&mut Self, &str)) {
        let name = self.fresh("m");
        let init = self.expr(ty, 2);
        let init = if ty == Ty::F {
            format!("moderate({init})")
        } else {
            init
        };
        self.line(&format!("var {name}: {} = {init};", ty.wgsl()));
        let scope = self.vars.len();
        self.nested += 1;
        block(self, &name);
        self.nested -= 1;
        self.vars.truncate(scope);
        self.bind(ty, &name);
    }

    /// Reads of the sampled texture at texel centres (nearest filtering
    /// makes every result an exact texel value), and its size queries.
    fn texture(&mut self) {
        let k = runtime(Ty::U, &self.expr(Ty::U, 1));
        let uv = self.fresh("x");
        let t = TEX;
        self.line(&format!(
            "let {uv} = (vec2<f32>(f32({k} & {m}u), f32(({k} >> {s}u) & {m}u)) + 0.5f) / {t}.0f;",
            m = t - 1,
            s = t.trailing_zeros()
        ));
        let texel = match self.rng.below(4) {
            0 => {
                let lod = runtime(Ty::U, &self.expr(Ty::U, 1));
                format!("textureSampleLevel(tex, samp, {uv}, f32({lod} & 1u))")
            }
            1 => format!("textureGather({}, tex, samp, {uv})", self.rng.below(4)),
            2 => format!("textureLoad(tex, vec2<u32>({uv} * {t}.0f), 0)"),
            _ => {
                self.bind(Ty::U, "textureDimensions(tex).y");
                self.bind(Ty::U, "textureNumLevels(tex)");
                return;
            }
        };
        let name = self.fresh("x");
        self.line(&format!("let {name} = {texel};"));
        for c in ["x", "y", "z", "w"] {
            if self.rng.chance(60) {
                self.bind(Ty::F, &format!("{name}.{c}"));
            }
        }
    }

    /// This invocation's texel of the storage image read, then written;
    /// atomics on its texel of the atomic image and on the shared one.
    fn storage_image(&mut self) {
        let name = self.fresh("x");
        self.line(&format!("let {name} = textureLoad(img, own);"));
        let c = *self.rng.pick(&["x", "y", "z", "w"]);
        self.bind(Ty::F, &format!("{name}.{c}"));
        let parts: Vec<String> = (0..4)
            .map(|_| moderated(Ty::F, &self.expr(Ty::F, 2)))
            .collect();
        self.line(&format!(
            "textureStore(img, own, vec4<f32>({}));",
            parts.join(", ")
        ));
        if self.rng.chance(30) {
            self.bind(Ty::U, "textureDimensions(img).x");
        }
        let op = *self.rng.pick(&[
            "textureAtomicAdd",
            "textureAtomicMax",
            "textureAtomicMin",
            "textureAtomicAnd",
            "textureAtomicOr",
            "textureAtomicXor",
        ]);
        let v = self.expr(Ty::U, 2);
        self.line(&format!("{op}(counts, own, {v});"));
        let v = self.expr(Ty::U, 1);
        self.line(&format!(
            "textureAtomicAdd(counts, vec2<i32>(0, {}), {v});",
            IMG - 1
        ));
    }

    /// A function-local array written and read at run-time indices.
    fn local_array(&mut self) {
        let ty = *self.rng.pick(&[Ty::U, Ty::I, Ty::F]);
        let len = *self.rng.pick(&[2u32, 4, 8]);
        let name = self.fresh("m");
        let init: Vec<String> = (0..len).map(|_| moderated(ty, &self.expr(ty, 1))).collect();
        let t = ty.wgsl();
        self.line(&format!(
            "var {name}: array<{t}, {len}> = array<{t}, {len}>({});",
            init.join(", ")
        ));
        for _ in 0..1 + self.rng.below(3) {
            let i = runtime(Ty::U, &self.expr(Ty::U, 1));
            self.assign(&format!("{name}[{i} & {}u]", len - 1), ty);
        }
        let i = runtime(Ty::U, &self.expr(Ty::U, 1));
        self.bind(ty, &format!("{name}[{i} & {}u]", len - 1));
    }

    fn assign(&mut self, target: &str, ty: Ty) {
        let e = self.expr(ty, 2);
        let e = if ty == Ty::F {
            format!("moderate({e})")
        } else {
            e
        };
        self.line(&format!("{target} = {e};"));
    }

    fn if_else(&mut self) {
        let ty = *self.rng.pick(&[Ty::U, Ty::I, Ty::F]);
        self.with_mutable(ty, |g, m| {
            let c = g.expr(Ty::B, 2);
            g.line(&format!("if {c} {{"));
            g.indent += 1;
            let scope = g.vars.len();
            g.assign(m, ty);
            if g.rng.chance(30) {
                g.statement();
            }
            g.vars.truncate(scope);
            g.indent -= 1;
            if g.rng.chance(70) {
                g.line("} else {");
                g.indent += 1;
                g.assign(m, ty);
                g.indent -= 1;
            }
            g.line("}");
        });
    }

    fn loop_body(&mut self, m: &str, ty: Ty, counter: &str) {
        self.vars.push((counter.to_string(), Ty::U));
        self.vars.push((m.to_string(), ty));
        self.assign(m, ty);
        if self.rng.chance(50) {
            let c = self.expr(Ty::B, 2);
            self.line(&format!("if {c} {{ break; }}"));
        }
        if self.rng.chance(40) {
            let c = self.expr(Ty::B, 2);
            self.line(&format!("if {c} {{ continue; }}"));
        }
        if self.rng.chance(30) {
            self.statement();
        }
        self.assign(m, ty);
    }

    fn for_loop(&mut self) {
        let ty = *self.rng.pick(&[Ty::U, Ty::I, Ty::F]);
        self.with_mutable(ty, |g, m| {
            let i = g.fresh("k");
            let n = g.expr(Ty::U, 2);
            g.line(&format!("for (var {i} = 0u; {i} < ({n} & 7u); {i}++) {{"));
            g.indent += 1;
            g.loop_body(m, ty, &i);
            g.indent -= 1;
            g.line("}");
        });
    }

    fn while_loop(&mut self) {
        let ty = *self.rng.pick(&[Ty::U, Ty::I, Ty::F]);
        self.with_mutable(ty, |g, m| {
            let i = g.fresh("k");
            let n = g.expr(Ty::U, 2);
            g.line(&format!("var {i} = ({n} & 7u);"));
            g.line("loop {");
            g.indent += 1;
            g.line(&format!("if {i} == 0u {{ break; }}"));
            g.line(&format!("{i} = {i} - 1u;"));
            g.loop_body(m, ty, &i);
            g.indent -= 1;
            g.line("}");
        });
    }

    fn switch(&mut self) {
        let ty = *self.rng.pick(&[Ty::U, Ty::I, Ty::F]);
        self.with_mutable(ty, |g, m| {
            let s = g.expr(Ty::U, 2);
            g.line(&format!("switch ({s} & 3u) {{"));
            g.indent += 1;
            for case in ["case 0u", "case 1u, 2u", "default"] {
                g.line(&format!("{case}: {{"));
                g.indent += 1;
                if g.rng.chance(80) {
                    g.assign(m, ty);
                }
                g.indent -= 1;
                g.line("}");
            }
            g.indent -= 1;
            g.line("}");
        });
    }

    /// A helper function with an early return, called once.
    fn call(&mut self) {
        let name = self.fresh("helper");
        let (ta, tb, tr) = (
            *self.rng.pick(&[Ty::U, Ty::I, Ty::F]),
            *self.rng.pick(&[Ty::U, Ty::I, Ty::F]),
            *self.rng.pick(&[Ty::U, Ty::I, Ty::F]),
        );
        let saved_vars =
            std::mem::replace(&mut self.vars, vec![("p0".into(), ta), ("p1".into(), tb)]);
        let saved_body = std::mem::take(&mut self.body);
        let saved_indent = std::mem::replace(&mut self.indent, 1);
        let saved_slots = self.slots.len();
        self.in_helper = true;
        let c = self.expr(Ty::B, 2);
        let early = self.expr(tr, 2);
        let late = self.expr(tr, 3);
        self.line(&format!("if {c} {{ return {}; }}", moderated(tr, &early)));
        self.line(&format!("return {};", moderated(tr, &late)));
        assert_eq!(self.slots.len(), saved_slots, "helpers write no slots");
        self.in_helper = false;
        let body = std::mem::replace(&mut self.body, saved_body);
        self.indent = saved_indent;
        self.vars = saved_vars;
        let _ = write!(
            self.functions,
            "fn {name}(p0: {}, p1: {}) -> {} {{\n{body}}}\n",
            ta.wgsl(),
            tb.wgsl(),
            tr.wgsl()
        );
        let (a, b) = (self.expr(ta, 2), self.expr(tb, 2));
        self.bind(tr, &format!("{name}({a}, {b})"));
    }

    /// Exchange values through workgroup memory (uniform control flow).
    fn shared_memory(&mut self) {
        let e = self.expr(Ty::U, 2);
        let shift = 1 + self.rng.below(self.wg_total.max(2));
        self.line("storageBarrier();");
        self.line("workgroupBarrier();");
        self.line(&format!("tile[lidx] = {e};"));
        self.line("workgroupBarrier();");
        let wg = self.wg_total;
        // Indices are masked, never `%`: the SPIR-V rewrites turn divisions
        // into remainders and back (workgroup sizes are powers of two).
        self.bind(Ty::U, &format!("tile[(lidx + {shift}u) & {}u]", wg - 1));
        // Shared-memory atomics: every invocation adds, then all read the sum.
        let add = self.expr(Ty::U, 1);
        self.line("workgroupBarrier();");
        // One invocation resets the counter: the frontend lowers
        // `atomicStore` to a plain store, and the interpreter calls plain
        // stores from two invocations with no barrier between a data race.
        self.line("if (lidx == 0u) { atomicStore(&wg_count, 0u); }");
        self.line("workgroupBarrier();");
        self.line(&format!("atomicAdd(&wg_count, {add});"));
        self.line("workgroupBarrier();");
        self.bind(Ty::U, "atomicLoad(&wg_count)");
    }

    /// Atomics on this invocation's own word (results are deterministic)
    /// and commutative atomics on shared counters (final values are).
    fn atomics(&mut self) {
        let v = self.expr(Ty::U, 2);
        let op = *self.rng.pick(&[
            "atomicAdd",
            "atomicSub",
            "atomicMax",
            "atomicMin",
            "atomicAnd",
            "atomicOr",
            "atomicXor",
            "atomicExchange",
        ]);
        self.bind(Ty::U, &format!("{op}(&atom[inv], {v})"));
        if self.rng.chance(50) {
            let (c, v) = (self.expr(Ty::U, 1), self.expr(Ty::U, 1));
            let r = self.fresh("x");
            self.line(&format!(
                "let {r} = atomicCompareExchangeWeak(&atom[inv], {c}, {v});"
            ));
            self.bind(Ty::U, &format!("{r}.old_value"));
            self.bind(Ty::B, &format!("{r}.exchanged"));
        }
        if self.rng.chance(50) {
            self.bind(Ty::U, "atomicLoad(&atom[inv])");
        }
        // One operation per counter: mixed operations would not commute.
        const SHARED: [&str; 6] = [
            "atomicAdd",
            "atomicMax",
            "atomicMin",
            "atomicOr",
            "atomicAnd",
            "atomicXor",
        ];
        let k = self.rng.below(SHARED.len() as u32);
        let shared = SHARED[k as usize];
        let v = self.expr(Ty::U, 1);
        self.line(&format!(
            "{shared}(&atom[nwg.x * nwg.y * nwg.z * {}u + {k}u], {v});",
            self.wg_total
        ));
        if self.rng.chance(30) {
            let v = self.expr(Ty::U, 1);
            self.line(&format!("atomicStore(&atom[inv], {v});"));
        }
    }

    /// A float argument clamped into `[lo, hi]`, bound and written to a slot.
    fn arg(&mut self, lo: f32, hi: f32) -> usize {
        let e = self.expr(Ty::F, 2);
        let name = self.fresh("a");
        self.line(&format!(
            "let {name}: f32 = clamp({e}, {}, {});",
            float_literal(lo),
            float_literal(hi)
        ));
        self.output(Ty::F, &name);
        self.vars.push((name, Ty::F));
        self.slots.len() - 1
    }

    /// A float argument with magnitude in `[lo, hi]` and either sign.
    fn signed_arg(&mut self, lo: f32, hi: f32) -> usize {
        let e = self.expr(Ty::F, 2);
        let s = self.expr(Ty::B, 1);
        let name = self.fresh("a");
        self.line(&format!(
            "let {name}: f32 = select(1.0f, -1.0f, {s}) * clamp(abs({e}), {}, {});",
            float_literal(lo),
            float_literal(hi)
        ));
        self.output(Ty::F, &name);
        self.vars.push((name, Ty::F));
        self.slots.len() - 1
    }

    fn slot_name(&self, slot: usize) -> String {
        format!("bitcast<f32>(dst[o + {slot}u])")
    }

    /// Write `result` (a scalar or a vector of `n` components) of `op`.
    fn approx_result(&mut self, op: Approx, args: Vec<usize>, result: &str, n: usize) {
        let name = self.fresh("r");
        self.line(&format!("let {name} = {result};"));
        for comp in 0..n {
            let slot = self.slots.len();
            let value = if n == 1 {
                name.clone()
            } else {
                format!("{name}[{comp}]")
            };
            self.line(&format!("dst[o + {slot}u] = bitcast<u32>({value});"));
            self.slots.push(Check::Approx {
                op,
                args: args.clone(),
                comp,
            });
        }
    }

    fn vector(&mut self, n: u8, lo: f32, hi: f32) -> (Vec<usize>, String) {
        let slots: Vec<usize> = (0..n).map(|_| self.arg(lo, hi)).collect();
        let parts: Vec<String> = slots.iter().map(|&s| self.slot_name(s)).collect();
        (slots, format!("vec{n}<f32>({})", parts.join(", ")))
    }

    /// One operation with a precision bound, its operands in slots beside it.
    fn approx_output(&mut self) {
        use Approx::*;
        let n = 2 + self.rng.below(3) as u8;
        let op = *self.rng.pick(&[
            Div,
            Rem,
            Exp,
            Exp2,
            Log,
            Log2,
            Pow,
            Sqrt,
            InverseSqrt,
            Sin,
            Cos,
            Tan,
            Asin,
            Acos,
            Atan,
            Atan2,
            Sinh,
            Cosh,
            Tanh,
            Asinh,
            Acosh,
            Atanh,
            Degrees,
            Radians,
            Fma,
            Mix,
            SmoothStep,
            Dot(n),
            Length(n),
            Distance(n),
            Normalize(n),
            Cross,
            Reflect(n),
            Refract(n),
            FaceForward(n),
            Determinant(n),
            Inverse(n),
            MatVec(n),
            Unpack4x8Unorm,
            Unpack4x8Snorm,
            Unpack2x16Unorm,
            Unpack2x16Snorm,
        ]);
        let unary = |g: &mut Self, lo: f32, hi: f32, f: &str| {
            let a = g.arg(lo, hi);
            let x = g.slot_name(a);
            g.approx_result(op, vec![a], &format!("{f}({x})"), 1);
        };
        let pi = 3.141_592_5_f32;
        match op {
            Div | Rem => {
                let a = self.arg(-1000.0, 1000.0);
                let b = self.signed_arg(0.25, 64.0);
                let (x, y) = (self.slot_name(a), self.slot_name(b));
                let sym = if op == Div { "/" } else { "%" };
                self.approx_result(op, vec![a, b], &format!("({x} {sym} {y})"), 1);
            }
            Exp => unary(self, -8.0, 8.0, "exp"),
            Exp2 => unary(self, -12.0, 12.0, "exp2"),
            Log => unary(self, 0.015625, 1000.0, "log"),
            Log2 => unary(self, 0.015625, 1000.0, "log2"),
            Sqrt => unary(self, 0.0, 10000.0, "sqrt"),
            InverseSqrt => unary(self, 0.015625, 10000.0, "inverseSqrt"),
            Sin => unary(self, -pi, pi, "sin"),
            Cos => unary(self, -pi, pi, "cos"),
            Tan => unary(self, -1.2, 1.2, "tan"),
            Asin => unary(self, -0.95, 0.95, "asin"),
            Acos => unary(self, -0.95, 0.95, "acos"),
            Atan => unary(self, -64.0, 64.0, "atan"),
            Sinh => unary(self, -6.0, 6.0, "sinh"),
            Cosh => unary(self, -6.0, 6.0, "cosh"),
            Tanh => unary(self, -6.0, 6.0, "tanh"),
            Asinh => unary(self, -8.0, 8.0, "asinh"),
            Acosh => unary(self, 1.25, 16.0, "acosh"),
            Atanh => unary(self, -0.9, 0.9, "atanh"),
            Degrees => unary(self, -1000.0, 1000.0, "degrees"),
            Radians => unary(self, -1000.0, 1000.0, "radians"),
            Unpack4x8Unorm | Unpack4x8Snorm | Unpack2x16Unorm | Unpack2x16Snorm => {
                let e = self.expr(Ty::U, 2);
                let slot = self.slots.len();
                self.output(Ty::U, &e);
                let (f, comps) = match op {
                    Unpack4x8Unorm => ("unpack4x8unorm", 4),
                    Unpack4x8Snorm => ("unpack4x8snorm", 4),
                    Unpack2x16Unorm => ("unpack2x16unorm", 2),
                    _ => ("unpack2x16snorm", 2),
                };
                self.approx_result(op, vec![slot], &format!("{f}(dst[o + {slot}u])"), comps);
            }
            Pow => {
                let a = self.arg(0.25, 16.0);
                let b = self.arg(-4.0, 4.0);
                let (x, y) = (self.slot_name(a), self.slot_name(b));
                self.approx_result(op, vec![a, b], &format!("pow({x}, {y})"), 1);
            }
            Atan2 => {
                let a = self.arg(-64.0, 64.0);
                let b = self.signed_arg(0.015625, 64.0);
                let (y, x) = (self.slot_name(a), self.slot_name(b));
                self.approx_result(op, vec![a, b], &format!("atan2({y}, {x})"), 1);
            }
            Fma => {
                let s: Vec<usize> = (0..3).map(|_| self.arg(-64.0, 64.0)).collect();
                let v: Vec<String> = s.iter().map(|&s| self.slot_name(s)).collect();
                self.approx_result(op, s, &format!("fma({}, {}, {})", v[0], v[1], v[2]), 1);
            }
            Mix => {
                let a = self.arg(-64.0, 64.0);
                let b = self.arg(-64.0, 64.0);
                let t = self.arg(0.0, 1.0);
                let v = [a, b, t].map(|s| self.slot_name(s));
                self.approx_result(
                    op,
                    vec![a, b, t],
                    &format!("mix({}, {}, {})", v[0], v[1], v[2]),
                    1,
                );
            }
            SmoothStep => {
                let e0 = self.arg(-8.0, 8.0);
                let w = self.arg(0.5, 8.0);
                let e1 = self.slots.len();
                let (s0, sw) = (self.slot_name(e0), self.slot_name(w));
                self.output(Ty::F, &format!("({s0} + {sw})"));
                let x = self.arg(-20.0, 20.0);
                let v = [e0, e1, x].map(|s| self.slot_name(s));
                self.approx_result(
                    op,
                    vec![e0, e1, x],
                    &format!("smoothstep({}, {}, {})", v[0], v[1], v[2]),
                    1,
                );
            }
            Dot(n) | Distance(n) | Reflect(n) => {
                let (mut a, va) = self.vector(n, -64.0, 64.0);
                let (b, vb) = self.vector(n, -64.0, 64.0);
                a.extend(b);
                let (f, comps) = match op {
                    Dot(_) => ("dot", 1),
                    Distance(_) => ("distance", 1),
                    _ => ("reflect", n as usize),
                };
                self.approx_result(op, a, &format!("{f}({va}, {vb})"), comps);
            }
            Length(n) => {
                let (a, va) = self.vector(n, -64.0, 64.0);
                self.approx_result(op, a, &format!("length({va})"), 1);
            }
            Normalize(n) => {
                // A first component of magnitude >= 1 keeps the length away from 0.
                let first = self.signed_arg(1.0, 64.0);
                let (rest, _) = self.vector(n - 1, -64.0, 64.0);
                let mut a = vec![first];
                a.extend(rest);
                let parts: Vec<String> = a.iter().map(|&s| self.slot_name(s)).collect();
                self.approx_result(
                    op,
                    a,
                    &format!("normalize(vec{n}<f32>({}))", parts.join(", ")),
                    n as usize,
                );
            }
            Cross => {
                let (mut a, va) = self.vector(3, -64.0, 64.0);
                let (b, vb) = self.vector(3, -64.0, 64.0);
                a.extend(b);
                self.approx_result(op, a, &format!("cross({va}, {vb})"), 3);
            }
            Refract(n) => {
                let (mut a, va) = self.vector(n, -1.0, 1.0);
                let (b, vb) = self.vector(n, -1.0, 1.0);
                let eta = self.arg(0.5, 1.5);
                let ve = self.slot_name(eta);
                a.extend(b);
                a.push(eta);
                self.approx_result(op, a, &format!("refract({va}, {vb}, {ve})"), n as usize);
            }
            FaceForward(n) => {
                let (mut a, va) = self.vector(n, -64.0, 64.0);
                let (b, vb) = self.vector(n, -64.0, 64.0);
                let (c, vc) = self.vector(n, -64.0, 64.0);
                a.extend(b);
                a.extend(c);
                self.approx_result(op, a, &format!("faceForward({va}, {vb}, {vc})"), n as usize);
            }
            Inverse(n) => {
                // Diagonally dominant, so well conditioned.
                let mut cols = Vec::new();
                let mut slots = Vec::new();
                for c in 0..n {
                    let col: Vec<usize> = (0..n)
                        .map(|r| {
                            if r == c {
                                self.signed_arg(4.0, 8.0)
                            } else {
                                self.arg(-1.0, 1.0)
                            }
                        })
                        .collect();
                    let parts: Vec<String> = col.iter().map(|&s| self.slot_name(s)).collect();
                    cols.push(format!("vec{n}<f32>({})", parts.join(", ")));
                    slots.extend(col);
                }
                let m = format!("transpose(mat{n}x{n}<f32>({}))", cols.join(", "));
                let name = self.fresh("r");
                self.line(&format!("let {name} = {m};"));
                for comp in 0..(n * n) as usize {
                    let (c, r) = (comp / n as usize, comp % n as usize);
                    let slot = self.slots.len();
                    self.line(&format!(
                        "dst[o + {slot}u] = bitcast<u32>({name}[{c}][{r}]);"
                    ));
                    self.slots.push(Check::Approx {
                        op,
                        args: slots.clone(),
                        comp,
                    });
                }
            }
            Determinant(n) | MatVec(n) => {
                let mut cols = Vec::new();
                let mut slots = Vec::new();
                for _ in 0..n {
                    let (s, v) = self.vector(n, -4.0, 4.0);
                    slots.extend(s);
                    cols.push(v);
                }
                let m = format!("mat{n}x{n}<f32>({})", cols.join(", "));
                if let Determinant(_) = op {
                    self.approx_result(op, slots, &format!("determinant({m})"), 1);
                } else {
                    let (s, v) = self.vector(n, -4.0, 4.0);
                    slots.extend(s);
                    self.approx_result(op, slots, &format!("({m} * {v})"), n as usize);
                }
            }
        }
    }
}

/// Whether a generated expression reads something only known at run time
/// (WGSL evaluates constant expressions when it compiles, and rejects
/// overflow and division by zero there).
fn is_runtime(e: &str) -> bool {
    const NAMES: [&str; 16] = [
        "in_", "p0", "p1", "pc.", "ubo.", "gid", "lid", "wid", "nwg", "inv", "tile", "atom", "dst",
        "helper", "moderate", "wg_count",
    ];
    if NAMES.iter().any(|n| e.contains(n)) {
        return true;
    }
    // Generated variables: one of `v m k a r x` then digits.
    let b = e.as_bytes();
    (0..b.len()).any(|k| {
        if k > 0 && (b[k - 1].is_ascii_alphanumeric() || b[k - 1] == b'_') {
            return false;
        }
        let end = (k + 1..b.len())
            .find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_'))
            .unwrap_or(b.len());
        let token = &e[k..end];
        token.len() > 1
            && b"vmkarx".contains(&b[k])
            && token[1..].bytes().all(|c| c.is_ascii_digit())
    })
}

/// `e` (a float below 2000), as an expression no compiler can fold to a
/// constant: lavapipe (Mesa 22.3) folds the pack functions of constant
/// operands wrongly (negative snorm components set the upper bits), so
/// their operands must stay run-time values.
fn opaque(e: &str) -> String {
    format!("min({e}, ubo.f.x + 2000.0f)")
}

/// `e`, made a run-time expression of the same value when it is constant
/// (or-ed with a push constant that is always 0: the compiler cannot fold
/// it, unlike `x & 0`). Divisors, shift amounts and indices go through
/// it: a constant expression that divides by zero or overflows is a WGSL
/// compile error, while naga guards run-time divisors.
fn runtime(ty: Ty, e: &str) -> String {
    if is_runtime(e) {
        return e.to_string();
    }
    match ty {
        Ty::I => format!("({e} | bitcast<i32>(pc.zero))"),
        _ => format!("({e} | pc.zero)"),
    }
}

fn moderated(ty: Ty, e: &str) -> String {
    match ty {
        Ty::F => format!("moderate({e})"),
        _ => e.to_string(),
    }
}
