//! Random programs for instruction-selection differential tests: the
//! vocabulary a target's rules cover (straight-line arithmetic over every
//! scalar type, conversions, compares and selects, if/else diamonds with
//! phis, uniforms, constants that fold as immediates, approximated
//! special functions), shared by the ir3 and Valhall selection tests.
//!
//! [`random_program`] builds one program and its invocation: exact values
//! go to output slots 0.., approximated ones to slots 16.. ; [`agree`]
//! compares an output as the tests do (bit-exact, or within a tolerance
//! for approximated outputs).

use lathe_ir::interp::Invocation;
use lathe_ir::{Builder, GenericOp, Interp, Scalar, Shader, Stage, Type, Value};

/// What the generator may emit beyond the common vocabulary.
#[derive(Clone, Copy, Debug)]
pub struct Vocabulary {
    /// Approximated operations on f32 inputs and uniforms.
    pub approx: &'static [GenericOp],
}

/// Every approximated operation the generator knows.
pub const ALL_APPROX: &[GenericOp] = &[
    GenericOp::Sin,
    GenericOp::Cos,
    GenericOp::FDiv,
    GenericOp::Rcp,
    GenericOp::Rsqrt,
    GenericOp::Sqrt,
    GenericOp::Exp2,
    GenericOp::Log2,
];

/// A xorshift generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

const NUMERIC: [Scalar; 6] = [
    Scalar::F32,
    Scalar::F16,
    Scalar::I32,
    Scalar::U32,
    Scalar::I16,
    Scalar::U16,
];
/// Uniform words the programs read (and the invocation holds).
pub const UNIFORMS: u32 = 8;

/// A random program: its exact values go to outputs 0.., approximated
/// ones to outputs 100.. .
struct Gen<'s, 'a> {
    vocabulary: Vocabulary,
    b: Builder<'s, 'a, GenericOp>,
    rng: Rng,
    avail: Vec<Value>,
    /// The f32 inputs and uniforms.
    base: Vec<Value>,
    approx: Vec<Value>,
}

impl Gen<'_, '_> {
    fn ty(&self, v: Value) -> Scalar {
        self.b.type_of(v).scalar
    }

    fn value(&mut self, s: Scalar) -> Value {
        let have: Vec<Value> = self
            .avail
            .iter()
            .copied()
            .filter(|&v| self.ty(v) == s)
            .collect();
        if have.is_empty() || self.rng.below(6) == 0 {
            let raw = self.rng.next() as u32;
            let bits = match s {
                Scalar::Bool => raw & 1,
                Scalar::F32 => ((raw % 81) as f32 / 4.0 - 10.0).to_bits(),
                Scalar::F16 => lathe_ir::f16::from_f32((raw % 81) as f32 / 4.0 - 10.0) as u32,
                Scalar::I16 | Scalar::U16 => raw & 0xffff,
                // Small ones fold as immediates, others need a full mov.
                _ if raw & 1 == 0 => (raw >> 8) % 300,
                _ => raw,
            };
            let v = self.b.const_bits(Type::scalar(s), bits);
            self.avail.push(v);
            return v;
        }
        self.rng.pick(&have)
    }

    fn statement(&mut self, depth: u32) {
        use GenericOp::*;
        let float = [Scalar::F32, Scalar::F16];
        let ints = [Scalar::I32, Scalar::U32, Scalar::I16, Scalar::U16];
        let v = match self.rng.below(14) {
            0 | 1 => {
                let s = self.rng.pick(&float);
                let op = self.rng.pick(&[FAdd, FSub, FMul, FMin, FMax]);
                let a = self.value(s);
                let mut b = self.value(s);
                if self.rng.below(4) == 0 {
                    b = self.b.op(
                        Mov {
                            abs: false,
                            neg: true,
                        },
                        &[b],
                        Type::scalar(s),
                    );
                }
                self.b.op(op, &[a, b], Type::scalar(s))
            }
            2 => {
                let s = self.rng.pick(&float);
                let (a, b, c) = (self.value(s), self.value(s), self.value(s));
                self.b.op(Ffma, &[a, b, c], Type::scalar(s))
            }
            3 => {
                let s = self.rng.pick(&float);
                let op = self.rng.pick(&[
                    Floor,
                    Ceil,
                    Trunc,
                    RoundEven,
                    Fract,
                    FSign,
                    Mov {
                        abs: true,
                        neg: false,
                    },
                    Mov {
                        abs: true,
                        neg: true,
                    },
                ]);
                let a = self.value(s);
                self.b.op(op, &[a], Type::scalar(s))
            }
            4 | 5 => {
                let s = self.rng.pick(&ints);
                let mut ops = vec![IAdd, ISub, IMul, And, Or, Xor];
                if s.is_signed_int() {
                    ops.extend([IMin, IMax]);
                    if self.rng.below(4) == 0 {
                        let a = self.value(s);
                        let op = self.rng.pick(&[ISign, IAbs]);
                        self.avail.push(self.b.op(op, &[a], Type::scalar(s)));
                        return;
                    }
                } else {
                    ops.extend([UMin, UMax]);
                }
                let op = self.rng.pick(&ops);
                let (a, b) = (self.value(s), self.value(s));
                self.b.op(op, &[a, b], Type::scalar(s))
            }
            6 => {
                let s = self.rng.pick(&ints);
                let op = self.rng.pick(&[Shl, Shr, AShr]);
                let a = self.value(s);
                let n = self.value(s);
                let seven = self.b.const_bits(Type::scalar(s), 7);
                let n = self.b.and(n, seven);
                self.b.op(op, &[a, n], Type::scalar(s))
            }
            7 => {
                let s = self.rng.pick(&[Scalar::I32, Scalar::U32]);
                let op = self
                    .rng
                    .pick(&[Not, BitReverse, BitCount, FindLsb, UFindMsb, IFindMsb]);
                let a = self.value(s);
                self.b.op(op, &[a], Type::scalar(s))
            }
            8 => {
                let (op, s) = self.rng.pick(&[
                    (FLt, Scalar::F32),
                    (FGe, Scalar::F16),
                    (FEq, Scalar::F32),
                    (FNe, Scalar::F16),
                    (ILt, Scalar::I32),
                    (IGe, Scalar::I16),
                    (IEq, Scalar::U32),
                    (INe, Scalar::Bool),
                    (ULt, Scalar::U32),
                    (UGe, Scalar::U16),
                ]);
                let (a, b) = (self.value(s), self.value(s));
                self.b.op(op, &[a, b], Type::BOOL)
            }
            9 => {
                let s = self.rng.pick(&[
                    Scalar::F32,
                    Scalar::I16,
                    Scalar::U32,
                    Scalar::Bool,
                    Scalar::F16,
                ]);
                let c = self.value(Scalar::Bool);
                let (a, b) = (self.value(s), self.value(s));
                self.b.op(Sel, &[c, a, b], Type::scalar(s))
            }
            10 => {
                let from = self.rng.pick(&Scalar::ALL);
                let to = self.rng.pick(&NUMERIC);
                if from == to {
                    return;
                }
                let mut a = self.value(from);
                if from.is_float() && to.is_unsigned_int() {
                    // A negative float to an unsigned integer is undefined.
                    a = self.b.op(
                        Mov {
                            abs: true,
                            neg: false,
                        },
                        &[a],
                        Type::scalar(from),
                    );
                }
                self.b.op(Cvt, &[a], Type::scalar(to))
            }
            11 if self.rng.below(3) == 0 => {
                // packHalf2x16 and back.
                let (a, b) = (self.value(Scalar::F32), self.value(Scalar::F32));
                let format = lathe_ir::PackFormat::Half2x16;
                let p = self.b.op(Pack { format }, &[a, b], Type::U32);
                self.avail.push(p);
                let lane = self.rng.below(2) as u8;
                let w = self.value(Scalar::U32);
                self.b.op(Unpack { format, lane }, &[w], Type::F32)
            }
            11 => {
                let s = self.rng.pick(&[Scalar::Bool, Scalar::I32]);
                let op = self.rng.pick(&[And, Or, Xor, Not]);
                let a = self.value(s);
                if op == Not {
                    self.b.op(Not, &[a], Type::scalar(s))
                } else {
                    let b = self.value(s);
                    self.b.op(op, &[a, b], Type::scalar(s))
                }
            }
            12 if depth < 2 => {
                let s = self.rng.pick(&NUMERIC);
                let c = self.value(Scalar::Bool);
                let saved = self.avail.clone();
                let [v] = self.b.if_else(
                    c,
                    |b| [b.fadd_or_iadd(saved[0], s)],
                    |b| [b.fadd_or_iadd(saved[1], s)],
                );
                v
            }
            _ => {
                // Approximated float results, straight to outputs, of
                // inputs and uniforms (small values: the SFU's range
                // reduction is only as accurate as Vulkan asks there).
                if self.vocabulary.approx.is_empty() {
                    return;
                }
                let op = self.rng.pick(self.vocabulary.approx);
                let a = self.rng.pick(&self.base);
                let v = if op == FDiv {
                    let b = self.rng.pick(&self.base);
                    self.b.op(op, &[a, b], Type::F32)
                } else {
                    self.b.op(op, &[a], Type::F32)
                };
                self.approx.push(v);
                return;
            }
        };
        self.avail.push(v);
    }
}

/// `fadd`/`iadd` of a value of type `s` made from `seed` (any type), for
/// the arms of a diamond.
trait ArmOp {
    fn fadd_or_iadd(&mut self, seed: Value, s: Scalar) -> Value;
}

impl ArmOp for Builder<'_, '_, GenericOp> {
    fn fadd_or_iadd(&mut self, seed: Value, s: Scalar) -> Value {
        let from = self.type_of(seed).scalar;
        let v = if from == s {
            seed
        } else if from == Scalar::Bool || from.bits() != s.bits() || from.is_float() != s.is_float()
        {
            self.const_bits(Type::scalar(s), 3)
        } else {
            self.op(
                GenericOp::Mov {
                    abs: false,
                    neg: false,
                },
                &[seed],
                Type::scalar(s),
            )
        };
        if s.is_float() {
            self.op(GenericOp::FAdd, &[v, v], Type::scalar(s))
        } else {
            self.op(GenericOp::IAdd, &[v, v], Type::scalar(s))
        }
    }
}

/// A random program and its invocation.
pub fn random_program<'a>(
    arena: &'a lathe_ir::Bump,
    seed: u64,
    vocabulary: Vocabulary,
) -> (Shader<'a, GenericOp>, Invocation) {
    let mut shader = Shader::new(arena, Stage::Fragment);
    let mut inv = Invocation::default();
    let mut rng = Rng(seed | 1);
    for _ in 0..UNIFORMS {
        inv.uniforms
            .push(((rng.next() % 64) as f32 - 20.0).to_bits());
    }
    {
        let mut g = Gen {
            vocabulary,
            b: Builder::new(&mut shader),
            rng,
            avail: Vec::new(),
            base: Vec::new(),
            approx: Vec::new(),
        };
        for (slot, s) in NUMERIC.into_iter().enumerate() {
            let interp = if s.is_float() {
                Interp::SMOOTH
            } else {
                Interp::FLAT
            };
            let v = g.b.load_input(slot as u16, 0, interp, Type::scalar(s));
            let raw = g.rng.next() as u32;
            let bits = match s {
                Scalar::F32 => ((raw % 2001) as f32 / 100.0 - 10.0).to_bits(),
                Scalar::F16 => lathe_ir::f16::from_f32((raw % 201) as f32 / 10.0 - 10.0) as u32,
                Scalar::I16 | Scalar::U16 => raw & 0xffff,
                _ => raw,
            };
            inv.inputs.insert((slot as u16, 0), bits);
            g.avail.push(v);
            if s == Scalar::F32 {
                g.base.push(v);
            }
        }
        for k in 0..3 {
            let v =
                g.b.op(GenericOp::LoadUniform { index: k * 3 }, &[], Type::F32);
            g.avail.push(v);
            g.base.push(v);
        }
        let n = 6 + g.rng.below(14);
        for _ in 0..n {
            g.statement(0);
        }
        let outputs = g.avail.len().min(8);
        for k in 0..outputs {
            let mut v = g.avail[g.avail.len() - 1 - k];
            if g.ty(v) == Scalar::Bool {
                v = g.b.op(GenericOp::Cvt, &[v], Type::U32);
            }
            g.b.store_output(k as u16, 0, v);
        }
        for (k, &v) in g.approx.clone().iter().enumerate() {
            g.b.store_output(16 + k as u16, 0, v);
        }
        g.b.ret();
    }
    (shader, inv)
}

/// Float bits compared: equal, both NaN, or (for approximated outputs)
/// within a relative and absolute tolerance.
pub fn agree(ty: Type, want: u32, got: u32, approx: bool) -> bool {
    if want == got {
        return true;
    }
    let (w, g) = match ty.scalar {
        Scalar::F32 => (f32::from_bits(want) as f64, f32::from_bits(got) as f64),
        Scalar::F16 => (
            lathe_ir::f16::to_f64(want as u16),
            lathe_ir::f16::to_f64(got as u16),
        ),
        _ => return false,
    };
    if w.is_nan() && g.is_nan() {
        return true;
    }
    approx && ((w - g).abs() <= 1e-5 + 1e-5 * w.abs().max(g.abs()) || (w.is_infinite() && w == g))
}
