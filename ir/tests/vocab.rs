//! The generic vocabulary's interpreter semantics against independent
//! references: Rust `std` float operations, the `f16` module, integer
//! arithmetic in `i128`, bit loops, and hand-computed texture results.
//! Each operation is run end to end (built, validated, interpreted).

use lathe_ir::builder::{Lod, SampleOperands};
use lathe_ir::exactness::Exactness;
use lathe_ir::interp::{self, Dispatch, InterpError, Invocation, Limits, Memory};
use lathe_ir::texture::{CompareOp, Filter, Wrap};
use lathe_ir::{
    AtomicOp, Builder, DerivMode, Dim, GenericOp, Image, Interp, PackFormat, Sampler, Scalar,
    Shader, Stage, Sysval, TexShape, Texture, Type, Value,
};

/// xorshift64: deterministic operands, with the edge values mixed in.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }

    fn word(&mut self) -> u32 {
        const EDGES: [u32; 12] = [
            0,
            1,
            u32::MAX,
            0x8000_0000,
            0x7fff_ffff,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x3f00_0000,
            0xbf00_0000,
            0x4b00_0001,
            0x0000_0001,
        ];
        let r = self.next();
        match r % 8 {
            0 => EDGES[(r / 8) as usize % EDGES.len()],
            // Small floats with fractions, both signs.
            1 | 2 => ((r as i32 % 4000) as f32 / 64.0).to_bits(),
            _ => self.next(),
        }
    }
}

/// Run `f` (which maps the loaded inputs to one result) on `inputs`,
/// returning the stored bits or the interpreter's error.
fn eval(
    types: &[Type],
    inputs: &[u32],
    f: impl FnOnce(&mut Builder<'_, '_, GenericOp>, &[Value]) -> Value,
) -> Result<u32, InterpError> {
    let arena = lathe_ir::Bump::new();
    let mut shader: Shader<GenericOp> = Shader::new(&arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let args: Vec<Value> = types
        .iter()
        .enumerate()
        .map(|(k, &t)| b.load_input(k as u16, 0, Interp::FLAT, t))
        .collect();
    let r = f(&mut b, &args);
    b.store_output(0, 0, r);
    b.ret();
    lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{e}"));
    let mut inv = Invocation::default();
    for (k, &bits) in inputs.iter().enumerate() {
        inv.inputs.insert((k as u16, 0), bits);
    }
    interp::run(&shader, &inv, Limits::default()).map(|o| o.outputs[&(0, 0)].1)
}

/// A builder helper for a one-operand opcode.
type UnaryOp = fn(&mut Builder<'_, '_, GenericOp>, Value) -> Value;
/// The `std` reference for it.
type Reference = fn(f32) -> f32;

fn same_f32(got: u32, want: f32) -> bool {
    got == want.to_bits() || (f32::from_bits(got).is_nan() && want.is_nan())
}

#[test]
fn float_ops_match_rust_std() {
    let mut rng = Rng(7);
    for _ in 0..300 {
        let (a, b) = (rng.word(), rng.word());
        let (x, y) = (f32::from_bits(a), f32::from_bits(b));
        let two = [Type::F32, Type::F32];
        let got = eval(&two, &[a, b], |b, v| b.fdiv(v[0], v[1])).unwrap();
        assert!(same_f32(got, x / y), "fdiv {x} {y}");
        let unary: [(UnaryOp, Reference); 5] = [
            (|b, v| b.ceil(v), f32::ceil),
            (|b, v| b.trunc(v), f32::trunc),
            (|b, v| b.round_even(v), f32::round_ties_even),
            (|b, v| b.fract(v), |x| x - x.floor()),
            (
                |b, v| b.fsign(v),
                |x| {
                    if x.is_nan() {
                        0.0
                    } else if x == 0.0 {
                        x
                    } else {
                        x.signum()
                    }
                },
            ),
        ];
        for (op, reference) in unary {
            let got = eval(&[Type::F32], &[a], |b, v| op(b, v[0])).unwrap();
            assert!(same_f32(got, reference(x)), "{x}: {got:#x}");
        }
    }
}

#[test]
fn f16_rounding_ops_match_f32_then_f16() {
    // Every binary16 value: the integral results and fract are exact in
    // f32, so the f32 operation converted once is the reference.
    for h in (0..=u16::MAX).step_by(7) {
        let x = lathe_ir::f16::to_f32(h);
        let cases: [(UnaryOp, f32); 3] = [
            (|b, v| b.ceil(v), x.ceil()),
            (|b, v| b.round_even(v), x.round_ties_even()),
            (|b, v| b.fract(v), x - x.floor()),
        ];
        for (op, want) in cases {
            let got = eval(&[Type::F16], &[h as u32], |b, v| op(b, v[0])).unwrap();
            let want = lathe_ir::f16::from_f32(want) as u32;
            let nan = |b: u32| lathe_ir::f16::to_f32(b as u16).is_nan();
            assert!(got == want || (nan(got) && nan(want)), "{h:#x}");
        }
    }
}

#[test]
fn integer_ops_match_wide_arithmetic() {
    let mut rng = Rng(11);
    for _ in 0..300 {
        let (a, b) = (rng.word(), rng.word());
        let i = [Type::I32, Type::I32];
        let u = [Type::U32, Type::U32];
        let hi = eval(&i, &[a, b], |b, v| b.imul_high(v[0], v[1])).unwrap();
        assert_eq!(hi, ((a as i32 as i128 * b as i32 as i128) >> 32) as u32);
        let uhi = eval(&u, &[a, b], |b, v| b.umul_high(v[0], v[1])).unwrap();
        assert_eq!(uhi, ((a as u128 * b as u128) >> 32) as u32);
        let abs = eval(&[Type::I32], &[a], |b, v| b.iabs(v[0])).unwrap();
        assert_eq!(abs, (a as i32 as i128).unsigned_abs() as u32);
        let sign = eval(&[Type::I32], &[a], |b, v| b.isign(v[0])).unwrap();
        assert_eq!(sign as i32, (a as i32 > 0) as i32 - ((a as i32) < 0) as i32);
    }
    // i16 wraps too: |MIN| is MIN.
    let abs16 = eval(&[Type::I16], &[0x8000], |b, v| b.iabs(v[0])).unwrap();
    assert_eq!(abs16, 0x8000);
}

/// Bit `k` of `x`, by division rather than shifts.
fn bit(x: u32, k: u32) -> u32 {
    ((x as u64 / 2u64.pow(k)) % 2) as u32
}

#[test]
fn bit_ops_match_bit_loops() {
    let mut rng = Rng(13);
    for _ in 0..300 {
        let (base, insert) = (rng.word(), rng.word());
        let offset = rng.next() % 33;
        let count = rng.next() % (33 - offset);
        let three = [Type::U32; 3];
        let ext = eval(&three, &[base, offset, count], |b, v| {
            b.ubitfield_extract(v[0], v[1], v[2])
        })
        .unwrap();
        let want: u32 = (0..count).map(|k| bit(base, offset + k) << k).sum();
        assert_eq!(ext, want, "ubfe {base:#x} {offset} {count}");
        let sext = eval(&[Type::I32; 3], &[base, offset, count], |b, v| {
            b.ibitfield_extract(v[0], v[1], v[2])
        })
        .unwrap();
        let top = if count > 0 {
            bit(base, offset + count - 1)
        } else {
            0
        };
        let swant = (0..32)
            .map(|k| {
                let b = if k < count {
                    bit(base, offset + k)
                } else {
                    top
                };
                b << k
            })
            .fold(0u32, |a, b| a | b);
        assert_eq!(sext, swant, "ibfe {base:#x} {offset} {count}");
        let ins = eval(&[Type::U32; 4], &[base, insert, offset, count], |b, v| {
            b.bitfield_insert(v[0], v[1], v[2], v[3])
        })
        .unwrap();
        let iwant = (0..32)
            .map(|k| {
                let inside = k >= offset && k < offset + count;
                (if inside {
                    bit(insert, k - offset)
                } else {
                    bit(base, k)
                }) << k
            })
            .fold(0u32, |a, b| a | b);
        assert_eq!(ins, iwant);
        let one = [Type::U32];
        let rev = eval(&one, &[base], |b, v| b.bit_reverse(v[0])).unwrap();
        assert_eq!(rev, (0..32).fold(0, |a, k| a | bit(base, k) << (31 - k)));
        let cnt = eval(&one, &[base], |b, v| b.bit_count(v[0])).unwrap();
        assert_eq!(cnt, (0..32).map(|k| bit(base, k)).sum::<u32>());
        let lsb = eval(&one, &[base], |b, v| b.find_lsb(v[0])).unwrap();
        assert_eq!(
            lsb,
            (0..32).find(|&k| bit(base, k) == 1).unwrap_or(u32::MAX)
        );
        let msb = eval(&one, &[base], |b, v| b.ufind_msb(v[0])).unwrap();
        assert_eq!(
            msb,
            (0..32)
                .rev()
                .find(|&k| bit(base, k) == 1)
                .unwrap_or(u32::MAX)
        );
        let smsb = eval(&[Type::I32], &[base], |b, v| b.ifind_msb(v[0])).unwrap();
        let sign = bit(base, 31);
        let swant = (0..31).rev().find(|&k| bit(base, k) != sign);
        assert_eq!(smsb, swant.unwrap_or(u32::MAX));
    }
    // offset + count > 32 is undefined, never a value.
    let r = eval(&[Type::U32; 3], &[1, 20, 13], |b, v| {
        b.ubitfield_extract(v[0], v[1], v[2])
    });
    assert!(r.is_err_and(|e| e.is_undefined()));
}

/// GLSL's `round(clamp(c, lo, 1) * scale)` with ties to even, written with
/// floor and a comparison.
fn quantize(c: f32, lo: f32, scale: f32) -> i32 {
    let c = if c.is_nan() { lo } else { c.clamp(lo, 1.0) };
    let p = c * scale;
    let f = p.floor();
    let d = p - f;
    let up = d > 0.5 || (d == 0.5 && (f as i32) % 2 != 0);
    f as i32 + up as i32
}

#[test]
fn pack_and_unpack_follow_the_glsl_formulas() {
    let mut rng = Rng(17);
    for _ in 0..300 {
        let lanes: [u32; 4] = std::array::from_fn(|_| rng.word());
        let f: [f32; 4] = lanes.map(f32::from_bits);
        for (format, bits, lo, scale) in [
            (PackFormat::Unorm4x8, 8, 0.0, 255.0),
            (PackFormat::Snorm4x8, 8, -1.0, 127.0),
            (PackFormat::Unorm2x16, 16, 0.0, 65535.0),
            (PackFormat::Snorm2x16, 16, -1.0, 32767.0),
            (PackFormat::Half2x16, 16, 0.0, 0.0),
        ] {
            let n = format.lanes() as usize;
            let got = eval(&vec![Type::F32; n], &lanes[..n], |b, v| b.pack(format, v)).unwrap();
            let want = (0..n).fold(0u32, |w, k| {
                let q = if format == PackFormat::Half2x16 {
                    lathe_ir::f16::from_f32(f[k]) as u32
                } else {
                    quantize(f[k], lo, scale) as u32 & ((1 << bits) - 1)
                };
                w | q << (bits * k)
            });
            assert_eq!(got, want, "{format:?} {f:?}");
            for lane in 0..n as u8 {
                let word = rng.next();
                let got = eval(&[Type::U32], &[word], |b, v| b.unpack(format, lane, v[0])).unwrap();
                let field = (word >> (bits * lane as usize)) & ((1 << bits) - 1);
                let want = match format {
                    PackFormat::Half2x16 => lathe_ir::f16::to_f32(field as u16),
                    PackFormat::Unorm4x8 | PackFormat::Unorm2x16 => field as f32 / scale,
                    _ => {
                        let signed = field as i32
                            - if field >> (bits - 1) == 1 {
                                1 << bits
                            } else {
                                0
                            };
                        (signed as f32 / scale).max(-1.0)
                    }
                };
                assert!(same_f32(got, want), "{format:?} {word:#x} lane {lane}");
            }
        }
    }
}

#[test]
fn conversions_from_bool_and_u16() {
    let t = eval(&[Type::I32], &[5], |b, v| {
        let z = b.const_i32(0);
        let c = b.ilt(z, v[0]);
        b.cvt(c, Type::F32)
    });
    assert_eq!(t.unwrap(), 1.0f32.to_bits());
    let u = eval(&[Type::F32], &[65535.5f32.to_bits()], |b, v| {
        b.cvt(v[0], Type::U16)
    });
    assert_eq!(u.unwrap(), 0xffff);
    let over = eval(&[Type::F32], &[65536.0f32.to_bits()], |b, v| {
        b.cvt(v[0], Type::U16)
    });
    assert!(over.is_err_and(|e| e.is_undefined()));
}

/// A fragment shader storing `ddx`/`ddy` (coarse and fine) of input 0.
fn derivative_shader<'a>(arena: &'a lathe_ir::Bump) -> Shader<'a, GenericOp> {
    let mut shader = Shader::new(arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let x = b.load_input(0, 0, Interp::SMOOTH, Type::F32);
    let outs = [
        b.ddx(x, DerivMode::Coarse),
        b.ddy(x, DerivMode::Coarse),
        b.ddx(x, DerivMode::Fine),
        b.ddy(x, DerivMode::Fine),
    ];
    for (k, v) in outs.into_iter().enumerate() {
        b.store_output(k as u16, 0, v);
    }
    b.ret();
    lathe_ir::validate(&shader).unwrap();
    shader
}

fn quad_inputs(values: [f32; 4]) -> [Invocation; 4] {
    values.map(|v| {
        let mut inv = Invocation::default();
        inv.inputs.insert((0, 0), v.to_bits());
        inv
    })
}

#[test]
fn quad_derivatives_coarse_and_fine() {
    let arena = lathe_ir::Bump::new();
    let shader = derivative_shader(&arena);
    // Positions: 0 top left, 1 top right, 2 bottom left, 3 bottom right.
    let quad = quad_inputs([1.0, 3.0, 10.0, 19.0]);
    let out = interp::run_quad(&shader, &quad, &mut Memory::default(), Limits::default()).unwrap();
    let get = |k: usize, slot: u16| f32::from_bits(out[k].outputs[&(slot, 0)].1);
    for k in 0..4 {
        assert_eq!(get(k, 0), 2.0, "coarse ddx");
        assert_eq!(get(k, 1), 9.0, "coarse ddy");
    }
    assert_eq!([get(0, 2), get(2, 2)], [2.0, 9.0], "fine ddx per row");
    assert_eq!([get(0, 3), get(1, 3)], [9.0, 16.0], "fine ddy per column");
    // One invocation alone sees copies of itself: derivatives are zero.
    let single = interp::run(&shader, &quad[0], Limits::default()).unwrap();
    assert_eq!(single.outputs[&(0, 0)].1, 0.0f32.to_bits());
}

#[test]
fn derivatives_in_divergent_flow_are_undefined_but_discard_keeps_the_quad() {
    let arena = lathe_ir::Bump::new();
    let mut shader = Shader::new(&arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let x = b.load_input(0, 0, Interp::SMOOTH, Type::F32);
    let limit = b.const_f32(5.0);
    let big = b.flt(limit, x);
    let [d] = b.if_else(big, |b| [b.ddx(x, DerivMode::Default)], |_| [x]);
    b.store_output(0, 0, d);
    b.ret();
    // Lanes 2 and 3 take the derivative without lanes 0 and 1: its value
    // is undefined (poison), not the behaviour; lanes 0 and 1 are exact.
    let quad = quad_inputs([1.0, 3.0, 10.0, 19.0]);
    let out = interp::run_quad(&shader, &quad, &mut Memory::default(), Limits::default()).unwrap();
    let exactness: Vec<Exactness> = out
        .iter()
        .map(|o| o.inexact.get(&(0, 0)).copied().unwrap_or_default())
        .collect();
    assert_eq!(
        exactness,
        [
            Exactness::Exact,
            Exactness::Exact,
            Exactness::Undefined,
            Exactness::Undefined
        ]
    );

    // Discard in two lanes, then a derivative: the discarded lanes run on
    // as helpers, so it is defined; their outputs are dropped.
    let mut shader = Shader::new(&arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let x = b.load_input(0, 0, Interp::SMOOTH, Type::F32);
    let limit = b.const_f32(5.0);
    let big = b.flt(limit, x);
    let kill = b.new_block();
    let join = b.new_block();
    b.branch(big, kill, join);
    b.switch_to(kill);
    b.discard();
    b.jump(join);
    b.switch_to(join);
    let d = b.ddy(x, DerivMode::Coarse);
    let h = b.load_sysval(Sysval::HelperInvocation, 0, Type::BOOL);
    let hf = b.cvt(h, Type::F32);
    b.store_output(0, 0, d);
    b.store_output(0, 1, hf);
    b.ret();
    lathe_ir::validate(&shader).unwrap();
    let out = interp::run_quad(&shader, &quad, &mut Memory::default(), Limits::default()).unwrap();
    assert!(!out[0].discarded && out[2].discarded && out[3].discarded);
    assert_eq!(out[0].outputs[&(0, 0)].1, 9.0f32.to_bits());
    assert_eq!(out[1].outputs[&(0, 1)].1, 0.0f32.to_bits());
    assert!(out[2].outputs.is_empty());
}

#[test]
fn demote_turns_an_invocation_into_a_helper() {
    let arena = lathe_ir::Bump::new();
    let mut shader = Shader::new(&arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let before = b.load_sysval(Sysval::HelperInvocation, 0, Type::BOOL);
    b.demote();
    let after = b.load_sysval(Sysval::HelperInvocation, 0, Type::BOOL);
    let (x, y) = (b.cvt(before, Type::U32), b.cvt(after, Type::U32));
    let off = b.const_u32(0);
    let sum = b.iadd(x, y);
    b.store_ssbo(0, off, sum);
    b.ret();
    lathe_ir::validate(&shader).unwrap();
    let mut mem = Memory {
        ssbos: vec![vec![7]],
        ..Memory::default()
    };
    let out = interp::run_with_memory(&shader, &Invocation::default(), &mut mem, Limits::default())
        .unwrap();
    assert!(out.discarded);
    assert_eq!(mem.ssbos[0], vec![7], "helpers do not write memory");
}

#[test]
fn compute_dispatch_with_atomics_shared_memory_and_barriers() {
    // Each invocation writes its local index to shared[i], waits, reads
    // shared[size - 1 - i] into ssbo 0, and adds 1 to ssbo 1's counter.
    let arena = lathe_ir::Bump::new();
    let mut shader = Shader::new(&arena, Stage::Compute);
    let mut b = Builder::new(&mut shader);
    let i = b.load_sysval(Sysval::LocalInvocationIndex, 0, Type::U32);
    let g = b.load_sysval(Sysval::GlobalInvocationId, 0, Type::U32);
    let four = b.const_u32(4);
    let at = b.imul(i, four);
    b.store_shared(at, g);
    b.control_barrier();
    let last = b.const_u32(3);
    let mirror = b.isub(last, i);
    let mat = b.imul(mirror, four);
    let v = b.load_shared(mat, Type::U32);
    let gat = b.imul(g, four);
    b.store_ssbo(0, gat, v);
    let zero = b.const_u32(0);
    let one = b.const_u32(1);
    let old = b.ssbo_atomic(1, AtomicOp::Add, zero, one, None);
    b.store_ssbo(2, gat, old);
    b.ret();
    lathe_ir::validate(&shader).unwrap();
    let mut mem = Memory {
        ssbos: vec![vec![0; 8], vec![100], vec![0; 8]],
        ..Memory::default()
    };
    let d = Dispatch {
        workgroup_size: [4, 1, 1],
        num_workgroups: [2, 1, 1],
        shared_words: 4,
    };
    interp::dispatch(
        &shader,
        &Invocation::default(),
        &d,
        &mut mem,
        Limits::default(),
    )
    .unwrap();
    assert_eq!(mem.ssbos[0], vec![3, 2, 1, 0, 7, 6, 5, 4]);
    assert_eq!(mem.ssbos[1], vec![108]);
    // Atomics happen in invocation order.
    assert_eq!(mem.ssbos[2], (100..108).collect::<Vec<u32>>());
}

#[test]
fn atomic_operations_and_images() {
    let mut rng = Rng(23);
    for op in AtomicOp::ALL.iter().copied() {
        let (old, v, cmp) = (rng.word(), rng.word(), rng.word());
        let cmp = if rng.next() % 2 == 0 { old } else { cmp };
        let arena = lathe_ir::Bump::new();
        let mut shader = Shader::new(&arena, Stage::Compute);
        let mut b = Builder::new(&mut shader);
        let coord_x = b.const_i32(1);
        let coord_y = b.const_i32(0);
        let coord = b.collect(&[coord_x, coord_y]);
        let value = b.const_u32(v);
        let c = (op == AtomicOp::CompareExchange).then(|| b.const_u32(cmp));
        let r = b.image_atomic(0, TexShape::D2, op, coord, None, value, c);
        let zero = b.const_u32(0);
        b.store_ssbo(0, zero, r);
        b.ret();
        lathe_ir::validate(&shader).unwrap();
        let mut image = Image::new_2d(2, 1, 1);
        image.texels[1][0] = old;
        let mut mem = Memory {
            ssbos: vec![vec![0]],
            images: vec![image],
            ..Memory::default()
        };
        interp::run_with_memory(&shader, &Invocation::default(), &mut mem, Limits::default())
            .unwrap();
        let want = match op {
            AtomicOp::Add => old.wrapping_add(v),
            AtomicOp::IMin => std::cmp::min(old as i32, v as i32) as u32,
            AtomicOp::IMax => std::cmp::max(old as i32, v as i32) as u32,
            AtomicOp::UMin => std::cmp::min(old, v),
            AtomicOp::UMax => std::cmp::max(old, v),
            AtomicOp::And => old & v,
            AtomicOp::Or => old | v,
            AtomicOp::Xor => old ^ v,
            AtomicOp::Exchange => v,
            AtomicOp::CompareExchange => {
                if old == cmp {
                    v
                } else {
                    old
                }
            }
        };
        assert_eq!(mem.ssbos[0][0], old, "{op:?} gives the old value");
        assert_eq!(mem.images[0].texels[1][0], want, "{op:?}");
    }
}

/// Sample texture 0 through sampler 0 at `coord` (f32 lanes), explicit
/// LOD `lod`; returns the texel.
fn sample_at(
    tex: Texture,
    sampler: Sampler,
    shape: TexShape,
    coord: &[f32],
    lod: f32,
    compare: Option<f32>,
) -> Result<[f32; 4], InterpError> {
    let arena = lathe_ir::Bump::new();
    let mut shader = Shader::new(&arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let parts: Vec<Value> = coord.iter().map(|&c| b.const_f32(c)).collect();
    let coord = if parts.len() == 1 {
        parts[0]
    } else {
        b.collect(&parts)
    };
    let lod = b.const_f32(lod);
    let dref = compare.map(|d| b.const_f32(d));
    let ops = SampleOperands {
        coord,
        compare: dref,
        lod: Lod::Explicit(lod),
        offset: None,
    };
    let t = b.sample_with(0, 0, shape, Scalar::F32, &ops);
    let lanes = if dref.is_some() { 1 } else { 4 };
    for k in 0..lanes {
        let v = if lanes == 1 { t } else { b.split(t, k) };
        b.store_output(0, k, v);
    }
    b.ret();
    lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{e}"));
    let inv = Invocation {
        textures: vec![tex],
        samplers: vec![sampler],
        ..Invocation::default()
    };
    let out = interp::run(&shader, &inv, Limits::default())?;
    Ok(std::array::from_fn(|k| {
        out.outputs
            .get(&(0, k as u8))
            .map_or(0.0, |&(_, b)| f32::from_bits(b))
    }))
}

/// A 4×2 texture whose texel (x, y) at level l is `[x, y, l, 1]`, with mips.
fn grid() -> Texture {
    Texture::from_fn(Dim::D2, [4, 2, 1], 1, 3, |l, _, x, y, _| {
        [x as f32, y as f32, l as f32, 1.0]
    })
}

#[test]
fn texture_wrap_modes_mips_and_filters() {
    let nearest = Sampler::default();
    let s = TexShape::D2;
    // u = 1.3 * 4 = 5.2 -> texel 5: clamp 3, repeat 1, mirror 2.
    let at = |wrap: Wrap| {
        let sampler = Sampler {
            wrap: [wrap; 3],
            ..nearest
        };
        sample_at(grid(), sampler, s, &[1.3, 0.25], 0.0, None).unwrap()[0]
    };
    assert_eq!(at(Wrap::ClampToEdge), 3.0);
    assert_eq!(at(Wrap::Repeat), 1.0);
    assert_eq!(at(Wrap::MirroredRepeat), 2.0);
    assert_eq!(at(Wrap::ClampToBorder), 0.0);
    // Explicit LOD 1.2 with nearest mips reads level 1 (2×1).
    let t = sample_at(grid(), nearest, s, &[0.9, 0.9], 1.2, None).unwrap();
    assert_eq!(t, [1.0, 0.0, 1.0, 1.0]);
    // Linear between texels 0 and 1 of row 0: u = 0.25 * 4 - 0.5 = 0.5.
    let linear = Sampler {
        mag_filter: Filter::Linear,
        ..nearest
    };
    let t = sample_at(grid(), linear, s, &[0.25, 0.25], 0.0, None).unwrap();
    assert_eq!(t, [0.5, 0.0, 0.0, 1.0]);
    // Linear mips: LOD 0.5 halfway between levels 0 and 1.
    let mips = Sampler {
        mipmap_mode: Filter::Linear,
        ..nearest
    };
    let t = sample_at(grid(), mips, s, &[0.1, 0.1], 0.5, None).unwrap();
    assert_eq!(t[2], 0.5);
    // Depth compare: texel x = 2 at u = 0.6; 1.5 <= 2 passes, 2.5 fails.
    let cmp = Sampler {
        compare: CompareOp::LessOrEqual,
        ..nearest
    };
    let t = sample_at(grid(), cmp, s, &[0.6, 0.1], 0.0, Some(1.5)).unwrap();
    assert_eq!(t[0], 1.0);
    let t = sample_at(grid(), cmp, s, &[0.6, 0.1], 0.0, Some(2.5)).unwrap();
    assert_eq!(t[0], 0.0);
    let nan = sample_at(grid(), nearest, s, &[f32::NAN, 0.1], 0.0, None);
    assert!(nan.is_err_and(|e| e.is_undefined()));
}

#[test]
fn cube_faces_follow_the_vulkan_table() {
    // Each face's texels hold the face index; the centre of each face.
    let cube = Texture::from_fn(Dim::Cube, [2, 2, 1], 6, 1, |_, face, x, y, _| {
        [face as f32, x as f32, y as f32, 1.0]
    });
    let s = TexShape::new(Dim::Cube, false);
    let dirs: [([f32; 3], f32); 6] = [
        ([1.0, 0.1, 0.2], 0.0),
        ([-1.0, 0.1, 0.2], 1.0),
        ([0.1, 1.0, 0.2], 2.0),
        ([0.1, -1.0, 0.2], 3.0),
        ([0.1, 0.2, 1.0], 4.0),
        ([0.1, 0.2, -1.0], 5.0),
    ];
    for (dir, face) in dirs {
        let t = sample_at(cube.clone(), Sampler::default(), s, &dir, 0.0, None).unwrap();
        assert_eq!(t[0], face, "{dir:?}");
    }
    // +X: s = 0.5 * (-z / |x|) + 0.5 -> -0.2 -> s = 0.4 -> texel 0;
    // t = 0.5 * (-y / |x|) + 0.5 = 0.45 -> texel 0.
    let t = sample_at(cube, Sampler::default(), s, &[1.0, 0.1, 0.2], 0.0, None).unwrap();
    assert_eq!([t[1], t[2]], [0.0, 0.0]);
}

#[test]
fn gather_fetch_and_size_queries() {
    let arena = lathe_ir::Bump::new();
    let mut shader = Shader::new(&arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let (u, v) = (b.const_f32(0.5), b.const_f32(0.5));
    let coord = b.collect(&[u, v]);
    let g = b.gather(0, 0, TexShape::D2, 0, Scalar::F32, coord, None, None);
    let (x, y) = (b.const_i32(3), b.const_i32(1));
    let icoord = b.collect(&[x, y]);
    let zero = b.const_i32(0);
    let one = b.const_i32(1);
    let f = b.texel_fetch(0, TexShape::D2, Scalar::F32, icoord, zero, None);
    let size = b.texture_size(0, TexShape::D2, Some(one));
    let levels = b.texture_levels(0);
    for k in 0..4u8 {
        let gk = b.split(g, k);
        b.store_output(0, k, gk);
    }
    let fx = b.split(f, 0);
    let fy = b.split(f, 1);
    b.store_output(1, 0, fx);
    b.store_output(1, 1, fy);
    let (sw, sh) = (b.split(size, 0), b.split(size, 1));
    b.store_output(2, 0, sw);
    b.store_output(2, 1, sh);
    b.store_output(2, 2, levels);
    b.ret();
    lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{e}"));
    let inv = Invocation {
        textures: vec![grid()],
        ..Invocation::default()
    };
    let out = interp::run(&shader, &inv, Limits::default()).unwrap();
    let word = |slot: u16, c: u8| out.outputs[&(slot, c)].1;
    // Centre of a 4×2 texture: i0 = 1, j0 = 0; order (i0,j1) (i1,j1) (i1,j0) (i0,j0).
    let gathered: Vec<f32> = (0..4).map(|c| f32::from_bits(word(0, c))).collect();
    assert_eq!(gathered, vec![1.0, 2.0, 2.0, 1.0]);
    assert_eq!(
        [word(1, 0), word(1, 1)],
        [3.0f32.to_bits(), 1.0f32.to_bits()]
    );
    assert_eq!([word(2, 0), word(2, 1), word(2, 2)], [2, 1, 3]);

    // Out-of-bounds fetch is undefined.
    let mut shader = Shader::new(&arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let (x, y) = (b.const_i32(4), b.const_i32(0));
    let icoord = b.collect(&[x, y]);
    let zero = b.const_i32(0);
    let f = b.texel_fetch(0, TexShape::D2, Scalar::F32, icoord, zero, None);
    let fx = b.split(f, 0);
    b.store_output(0, 0, fx);
    b.ret();
    let r = interp::run(&shader, &inv, Limits::default());
    assert!(r.is_err_and(|e| e.is_undefined()));
}

#[test]
fn system_values_come_from_the_invocation() {
    let mut inv = Invocation::default();
    inv.sysvals.frag_coord = [0.5, 1.5, 0.25, 1.0];
    inv.sysvals.front_facing = true;
    let y = eval(&[], &[], |b, _| {
        b.load_sysval(Sysval::FragCoord, 1, Type::F32)
    });
    assert_eq!(y.unwrap(), 0.0f32.to_bits(), "defaults are zero");
    let arena = lathe_ir::Bump::new();
    let mut shader = Shader::new(&arena, Stage::Fragment);
    let mut b = Builder::new(&mut shader);
    let fy = b.load_sysval(Sysval::FragCoord, 1, Type::F32);
    let ff = b.load_sysval(Sysval::FrontFacing, 0, Type::BOOL);
    let ffi = b.cvt(ff, Type::U32);
    b.store_output(lathe_ir::slot::COL0, 0, fy);
    b.store_output(0, 1, ffi);
    b.ret();
    let out = interp::run(&shader, &inv, Limits::default()).unwrap();
    assert_eq!(out.outputs[&(lathe_ir::slot::COL0, 0)].1, 1.5f32.to_bits());
    assert_eq!(out.outputs[&(0, 1)].1, 1);
    assert!(lathe_ir::print(&shader).contains("slot=col0"));
}
