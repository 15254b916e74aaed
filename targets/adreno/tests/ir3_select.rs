//! Instruction selection proven by execution: generic programs run in the
//! IR interpreter, and the same programs selected with the ir3 rules,
//! grouped, scheduled and register-allocated on a630's and a740's facts
//! run on the generated ir3 simulator; their outputs must agree on random
//! inputs. Exact operations must give identical bits; the SFU's
//! approximations (and the reductions around them) agree within a
//! tolerance, and feed nothing but outputs, so their last-bit differences
//! never steer a compare.
//!
//! Programs come from a small random generator over the vocabulary the
//! rules cover (straight-line arithmetic over every scalar type,
//! conversions, compares and selects, if/else diamonds with phis,
//! uniforms, constants that fold as immediates) and from hand-written
//! cases. `IR3_SELECT_PROGRAMS=N` runs N random programs (default 150).

use std::collections::HashMap;

use lathe_adreno::ir3::select::{Port, select};
use lathe_adreno::ir3::{GpuModel, run, sim, target::Ir3Target};
use lathe_ir::interp::{self, Invocation, Limits};
use lathe_ir::{Builder, GenericOp, Interp, Scalar, Shader, Stage, Type, Value};
use lathe_isa::machine_run::Place;
use lathe_passes::ra::{RaOptions, allocate};
use lathe_passes::{group, sched};

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
const UNIFORMS: u32 = 8;

/// A random program: its exact values go to outputs 0.., approximated
/// ones to outputs 100.. .
struct Gen<'s, 'a> {
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
                let op = self
                    .rng
                    .pick(&[Sin, Cos, FDiv, Rcp, Rsqrt, Sqrt, Exp2, Log2]);
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
fn random_program<'a>(arena: &'a lathe_ir::Bump, seed: u64) -> (Shader<'a, GenericOp>, Invocation) {
    let mut shader = Shader::new(arena, Stage::Fragment);
    let mut inv = Invocation::default();
    let mut rng = Rng(seed | 1);
    for _ in 0..UNIFORMS {
        inv.uniforms
            .push(((rng.next() % 64) as f32 - 20.0).to_bits());
    }
    {
        let mut g = Gen {
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
fn agree(ty: Type, want: u32, got: u32, approx: bool) -> bool {
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

/// Runs `generic` in the interpreter and, selected and allocated on
/// `model`, on the simulator; `Err` names the first difference. `Ok(false)`
/// when the interpreter found undefined behaviour (nothing to compare).
fn differential(
    generic: &Shader<'_, GenericOp>,
    inv: &Invocation,
    model: &str,
) -> Result<bool, String> {
    lathe_ir::validate(generic).map_err(|e| format!("invalid program: {e:?}"))?;
    let want = match interp::run(generic, inv, Limits::default()) {
        Ok(o) => o,
        Err(e) if e.is_undefined() => return Ok(false),
        Err(e) => return Err(format!("interpreter: {e}")),
    };
    let target = Ir3Target::new(model.parse::<GpuModel>().unwrap()).unwrap();
    let selected = select(generic, &target).map_err(|e| e.to_string())?;
    let mut shader = selected.shader;
    lathe_ir::validate(&shader)
        .map_err(|e| format!("selected IR invalid: {e:?}\n{}", lathe_ir::print(&shader)))?;
    group::group(&mut shader, &target);
    sched::schedule(&mut shader, &target);
    allocate(&mut shader, &target, RaOptions::default()).map_err(|e| format!("ra: {e}"))?;
    let mut m = sim::machine(1);
    for (k, &bits) in inv.uniforms.iter().enumerate() {
        let name = format!("c{}.{}", k / 4, ['x', 'y', 'z', 'w'][k % 4]);
        let p = Place::named(&m, &name).ok_or("no const file in the simulator")?;
        m.set(p.file, p.half, p.index, 0, bits);
    }
    let inputs: Vec<u32> = selected
        .interface
        .inputs
        .iter()
        .map(|p| match *p {
            Port::Slot(slot, comp) => inv.inputs[&(slot, comp)],
            Port::Meta(k) => inv.meta_inputs[k as usize],
        })
        .collect();
    let got = run::run(&shader, &target, &mut m, &inputs)
        .map_err(|e| format!("simulator: {e}\n{}", lathe_ir::print(&shader)))?;
    for (k, port) in selected.interface.outputs.iter().enumerate() {
        let Port::Slot(slot, comp) = *port else {
            continue;
        };
        let (ty, w) = want.outputs[&(slot, comp)];
        let g = got
            .get(&(k as u32))
            .copied()
            .ok_or(format!("output {k} not written"))?;
        let mask = if ty.scalar.bits() <= 16 {
            0xffff
        } else {
            u32::MAX
        };
        if !agree(ty, w & mask, g & mask, slot >= 16) {
            return Err(format!(
                "{model}: output slot {slot} ({ty}): interpreter {w:#x}, simulator {g:#x}\n{}",
                lathe_ir::print(&shader)
            ));
        }
    }
    Ok(true)
}

#[test]
fn random_programs_agree_with_the_interpreter_on_a630_and_a740() {
    let programs: u64 = std::env::var("IR3_SELECT_PROGRAMS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(150);
    let mut compared = HashMap::new();
    for seed in 0..programs {
        let arena = lathe_ir::Bump::new();
        let (shader, inv) = random_program(&arena, 0x9e37_79b9_7f4a_7c15 ^ (seed * 0x1000_0001));
        for model in ["a630", "a740"] {
            match differential(&shader, &inv, model) {
                Ok(true) => *compared.entry(model).or_insert(0) += 1,
                Ok(false) => {}
                Err(e) => panic!("seed {seed}: {e}\n{}", lathe_ir::print(&shader)),
            }
        }
    }
    eprintln!("compared {compared:?} of {programs} programs per model");
    assert!(
        compared.values().all(|&n| n * 2 >= programs),
        "{compared:?}"
    );
}

#[test]
fn hand_written_programs_agree() {
    let cases: &[(&str, &[(u16, u32)])] = &[
        // Range-reduced sine and cosine far from zero, and a loop.
        (
            "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = sin %0
  %2:f32 = cos %0
  store_output slot=16 comp=0 %1
  store_output slot=17 comp=0 %2
  ret
",
            &[(0, 100.25f32.to_bits())],
        ),
        (
            "shader fragment
b0:
  %0:u32 = load_input slot=0 comp=0 interp=flat
  %1:u32 = const 0
  %2:u32 = const 1
  jump b1
b1:
  %3:u32 = phi [%0, b0], [%5, b1]
  %4:u32 = phi [%1, b0], [%6, b1]
  %5:u32 = isub %3, %2
  %6:u32 = iadd %4, %3
  %7:bool = ine %5, %1
  branch %7, b1, b2
b2:
  store_output slot=0 comp=0 %6
  ret
",
            &[(0, 9)],
        ),
        (
            "shader fragment
b0:
  %0:i32 = load_input slot=0 comp=0 interp=flat
  %1:i32 = const 100000
  %2:i32 = iadd %0, %1
  %3:i32 = imul %2, %0
  %4:i32 = ufind_msb %3
  %5:i32 = ifind_msb %0
  %6:i32 = find_lsb %0
  store_output slot=0 comp=0 %4
  store_output slot=1 comp=0 %5
  store_output slot=2 comp=0 %6
  ret
",
            &[(0, 0xfff0_1234)],
        ),
    ];
    for (text, inputs) in cases {
        let arena = lathe_ir::Bump::new();
        let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
        let mut inv = Invocation::default();
        for &(slot, bits) in *inputs {
            inv.inputs.insert((slot, 0), bits);
        }
        for model in ["a630", "a740"] {
            assert_eq!(differential(&shader, &inv, model), Ok(true), "{text}");
        }
    }
}
