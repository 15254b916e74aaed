//! Lathe's SSA intermediate representation.
//!
//! One data structure serves both levels of the compiler: before
//! instruction selection a shader's opcodes are [`GenericOp`]s, after it a
//! target's machine opcodes. The opcode vocabulary is the type parameter
//! `O` of [`Shader<'a, O>`], constrained by the [`Opcode`] trait; the
//! structural operations every level needs (phi, the ir3 meta instructions
//! `collect`/`split`/`input`/`output`, the two-result register exchange
//! `swap`, and `jump`/`branch`/`ret`) live in [`Op`] beside it.
//!
//! # Storage
//!
//! A shader lives in one [`bumpalo::Bump`] arena per compilation: the
//! instruction, value and block tables, every operand list and every block's
//! instruction list are arena allocations, and the arena is dropped
//! wholesale when compilation ends. Building a shader therefore makes no
//! global-heap allocation per instruction (a test counts them).
//!
//! Handles ([`Inst`], [`Value`], [`Block`], [`ArrayId`]) are `u32` indices
//! into those tables rather than arena references: they are `Copy`, hash and
//! compare cheaply, print stably, index side tables (`Vec<T>` per value)
//! directly, and need no `unsafe` or interior mutability to rewrite the
//! graph. The price is that a handle is only meaningful with its shader.
//!
//! Each instruction stores its operands (use→def); [`Uses`] computes
//! def→use on demand in one linear sweep. Relative (address-register)
//! accesses carry their address as a separate virtual operand that is
//! iterated last ([`InstData::operands`]), and [`BarrierClass`] says which
//! array/buffer/output accesses must keep their order ([`ordering_deps`]).
//!
//! # Text form
//!
//! ```text
//! shader fragment                      ; stage: vertex, fragment or compute
//! array a0: f32[4]                     ; arrays, numbered a0, a1, ...
//! b0:                                  ; blocks; the first is the entry
//!   %0:f32 = load_input slot=0 comp=0 interp=smooth
//!   %1:f32 = const 0.5
//!   %2:bool = flt %0, %1
//!   branch %2, b1, b2
//! b1:
//!   %3:f32 = fmul %0, %1
//!   jump b3
//! b2:
//!   jump b3
//! b3:
//!   %4:f32 = phi [%3, b1], [%0, b2]
//!   store_output slot=0 comp=0 %4
//!   ret
//! ```
//!
//! An instruction is `[%N:TYPE =] NAME ATTRS OPERANDS [addr=%A]`: attributes
//! are `key=value` words (or a bare value, as `const 0.5` or `mov neg`),
//! operands are comma-separated values, block names, or for `phi`
//! `[%value, block]` pairs. Types are `bool f16 f32 i16 i32 u16 u32` and vectors
//! such as `f32x2`..`f32x16`, which only `collect`, `split` and the texture
//! and image opcodes handle (the opcode table is in [`generic`]).
//! Float constants print as the shortest decimal that reads back to the
//! same bits in their own type (an `f16` 0.1 prints `0.1`, not its `f32`
//! widening), and as hex bits (`0x7fc00000`, `0x7c00`) when infinite or
//! NaN. `;` starts a comment. The printer renumbers values and blocks in
//! order, so `print(parse(t)) == t` for canonical text; the parser accepts
//! any numbering and forward references. Parse errors carry `line:col` and
//! a caret excerpt; the parser never panics, and its work is linear in
//! the text's length (tables are sized once from the line count, line
//! buffers are reused, positions are never recomputed from the start). More examples are in `ir/examples/*.lir`;
//! `all_opcodes.lir` uses every opcode, attribute and type once.
//!
//! # Example
//!
//! Build a fragment shader, check it, print it, parse it back, run it.
//!
//! ```
//! use lathe_ir::{Builder, GenericOp, Interp, Invocation, Limits, Shader, Stage, Type};
//!
//! let arena = bumpalo::Bump::new();
//! let mut shader: Shader<GenericOp> = Shader::new(&arena, Stage::Fragment);
//! let mut b = Builder::new(&mut shader);
//! let x = b.load_input(0, 0, Interp::SMOOTH, Type::F32);
//! let half = b.const_f32(0.5);
//! let small = b.flt(x, half);
//! let [y] = b.if_else(small, |b| [b.fmul(x, half)], |_| [x]);
//! b.store_output(0, 0, y);
//! b.ret();
//!
//! lathe_ir::validate(&shader).unwrap();
//! let text = lathe_ir::print(&shader);
//! assert!(text.contains("%4:f32 = phi [%3, b1], [%0, b2]"));
//! let reparsed: Shader<GenericOp> = lathe_ir::parse(&arena, &text).unwrap();
//! assert_eq!(lathe_ir::print(&reparsed), text);
//!
//! let mut inv = Invocation::default();
//! inv.inputs.insert((0, 0), 0.25f32.to_bits());
//! let out = lathe_ir::interp::run(&shader, &inv, Limits::default()).unwrap();
//! assert_eq!(out.outputs[&(0, 0)], (Type::F32, 0.125f32.to_bits()));
//! ```
//!
//! Parse errors point at the problem:
//!
//! ```
//! use lathe_ir::{GenericOp, Shader};
//! let arena = bumpalo::Bump::new();
//! let err = lathe_ir::parse::<GenericOp>(&arena, "shader fragment\nb0:\n  %0:f32 = fadd %1, %2 xx\n  ret\n")
//!     .err()
//!     .unwrap();
//! assert_eq!(err.to_string(), "3:24: expected `,` between operands\n    %0:f32 = fadd %1, %2 xx\n                         ^");
//! ```

pub mod atomic_order;
pub mod attrs;
pub mod builder;
pub mod cfg;
pub mod exactness;
pub mod f16;
pub mod generic;
pub mod interp;
pub mod opcode;
pub mod parser;
pub mod printer;
pub mod races;
pub mod scalar_ops;
pub mod selection_oracle;
pub mod shader;
pub mod slot;
pub mod synthetic;
pub mod texture;
pub mod types;
pub mod uses;
pub mod validate;
pub mod verify;

pub use attrs::{AtomicOp, DerivMode, Dim, LodMode, PackFormat, Sysval, TexShape};
pub use builder::Builder;
/// The arena type shaders live in (re-exported so users need no direct dependency).
pub use bumpalo::Bump;
pub use cfg::{Cfg, DomTree, Loops};
pub use generic::{GenericOp, Interp, InterpLoc, InterpMode};
pub use interp::{Dispatch, InterpError, Invocation, Limits, Memory, Outcome, SysVals, Texture};
pub use opcode::{Attr, AttrError, BarrierClass, Effects, Op, Opcode, Signature};
pub use parser::{ParseError, SourceMap, parse, parse_with_source_map};
pub use printer::print;
pub use shader::{
    ArrayDecl, ArrayId, Block, BlockData, Inst, InstData, Reg, Shader, Stage, Value, ValueData,
};
pub use texture::{Image, Sampler};
pub use types::{Scalar, Type};
pub use uses::{Use, Uses, ordering_deps};
pub use validate::{ValidationError, Violation, validate};
