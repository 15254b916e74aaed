//! SPIR-V rewrites that reach instructions naga never emits from WGSL.
//!
//! Both sides of a differential test run the same rewritten module, so a
//! rewrite need not keep the WGSL's meaning — only give a valid module
//! whose results are defined:
//!
//! - ordered float comparisons become their unordered forms (the
//!   generator never makes a NaN, so nothing changes);
//! - `OpSDiv` becomes `OpSRem` or `OpSMod`, `OpUDiv` becomes `OpUMod` and
//!   back (naga guards every divisor against 0 and `MIN / -1`);
//! - GLSL.std.450 `FMin`/`FMax`/`FClamp` become `NMin`/`NMax`/`NClamp`,
//!   `ModfStruct`/`FrexpStruct` the pointer forms `Modf`/`Frexp`;
//! - `OpTranspose` of a square matrix becomes `MatrixInverse` (WGSL has no
//!   inverse; the generator writes `transpose` only as its placeholder);
//! - GLSL.std.450 `RoundEven` becomes `Round`; naga's integer clamp
//!   `UMin(UMax(x, UMin(b, c)), UMax(b, c))` (the generator's
//!   `clamp(x, min(b, c), max(b, c))`, so the bounds are ordered) becomes
//!   `UClamp(x, UMin(b, c), UMax(b, c))`, and the same for `SClamp`;
//! - `OpImageSampleExplicitLod` becomes `OpImageSampleProjExplicitLod`
//!   with the coordinate extended by `q = 1.0`;
//! - `OpIMul` in a function named `lathe_mul_high` becomes
//!   `OpUMulExtended`/`OpSMulExtended` and keeps the high word;
//! - an `OpMemoryBarrier` goes before some `OpControlBarrier`s.
//!
//! Each optional rewrite applies to about half the instructions, chosen by
//! the shader's random generator.

use super::random_compute::Rng;
use rspirv::binary::Assemble;
use rspirv::dr::{Instruction, Module, Operand};
use rspirv::spirv::{GlslStd450Op, Op, StorageClass};

/// Name of the generated helper whose multiplication keeps the high word.
pub const MUL_HIGH: &str = "lathe_mul_high";

struct Rewriter {
    module: Module,
    glsl: u32,
    next_id: u32,
    /// Variables for the current function's entry block.
    locals: Vec<Instruction>,
    /// GLSL.std.450 results seen so far: instruction number and operands.
    ext_defs: std::collections::HashMap<u32, (u32, Vec<u32>)>,
}

/// `words` with the rewrites above applied.
pub fn vary(words: &[u32], rng: &mut Rng) -> Result<Vec<u32>, String> {
    let module = rspirv::dr::load_words(words).map_err(|e| e.to_string())?;
    let glsl = module
        .ext_inst_imports
        .iter()
        .find(|i| matches!(i.operands.first(), Some(Operand::LiteralString(s)) if s == "GLSL.std.450"))
        .and_then(|i| i.result_id);
    let next_id = module.header.as_ref().map_or(0, |h| h.bound);
    let mut r = Rewriter {
        module,
        glsl: glsl.unwrap_or(0),
        next_id,
        locals: Vec::new(),
        ext_defs: Default::default(),
    };
    if glsl.is_none() {
        r.glsl = r.fresh();
        r.module.ext_inst_imports.push(Instruction::new(
            Op::ExtInstImport,
            None,
            Some(r.glsl),
            vec![Operand::LiteralString("GLSL.std.450".into())],
        ));
    }
    let mul_high: Vec<u32> = r
        .module
        .debug_names
        .iter()
        .filter(|n| matches!(n.operands.get(1), Some(Operand::LiteralString(s)) if s.starts_with(MUL_HIGH)))
        .filter_map(|n| match n.operands.first() {
            Some(Operand::IdRef(id)) => Some(*id),
            _ => None,
        })
        .collect();
    for f in 0..r.module.functions.len() {
        let id = r.module.functions[f].def.as_ref().and_then(|d| d.result_id);
        let in_mul_high = id.is_some_and(|id| mul_high.contains(&id));
        for b in 0..r.module.functions[f].blocks.len() {
            let old = std::mem::take(&mut r.module.functions[f].blocks[b].instructions);
            let mut out = Vec::with_capacity(old.len());
            for inst in old {
                r.rewrite(inst, in_mul_high, rng, &mut out);
            }
            r.module.functions[f].blocks[b].instructions = out;
        }
        let locals = std::mem::take(&mut r.locals);
        if let Some(entry) = r.module.functions[f].blocks.first_mut() {
            entry.instructions.splice(0..0, locals);
        }
    }
    if let Some(h) = r.module.header.as_mut() {
        h.bound = r.next_id;
    }
    Ok(r.module.assemble())
}

fn id(k: u32) -> Operand {
    Operand::IdRef(k)
}

impl Rewriter {
    fn fresh(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id - 1
    }

    fn type_inst(&self, ty: u32) -> Option<&Instruction> {
        self.module
            .types_global_values
            .iter()
            .find(|i| i.result_id == Some(ty))
    }

    /// The member types of struct `ty`.
    fn members(&self, ty: u32) -> Vec<u32> {
        self.type_inst(ty)
            .map(|i| {
                i.operands
                    .iter()
                    .filter_map(|o| match o {
                        Operand::IdRef(t) => Some(*t),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A new plain `struct { ty, ty }` (structs may repeat).
    fn pair_struct(&mut self, ty: u32) -> u32 {
        let s = self.fresh();
        self.module.types_global_values.push(Instruction::new(
            Op::TypeStruct,
            None,
            Some(s),
            vec![id(ty), id(ty)],
        ));
        s
    }

    /// `OpTypePointer Function ty`, reused when the module has it.
    fn function_pointer(&mut self, ty: u32) -> u32 {
        let existing = self.module.types_global_values.iter().find(|i| {
            i.class.opcode == Op::TypePointer
                && i.operands.first() == Some(&Operand::StorageClass(StorageClass::Function))
                && i.operands.get(1) == Some(&id(ty))
        });
        if let Some(p) = existing.and_then(|i| i.result_id) {
            return p;
        }
        let p = self.fresh();
        self.module.types_global_values.push(Instruction::new(
            Op::TypePointer,
            None,
            Some(p),
            vec![Operand::StorageClass(StorageClass::Function), id(ty)],
        ));
        p
    }

    /// A new function-local variable of `ty` (placed in the entry block
    /// once the function is rewritten).
    fn local(&mut self, ty: u32) -> u32 {
        let ptr = self.function_pointer(ty);
        let var = self.fresh();
        self.locals.push(Instruction::new(
            Op::Variable,
            Some(ptr),
            Some(var),
            vec![Operand::StorageClass(StorageClass::Function)],
        ));
        var
    }

    /// A constant 31 of the 32-bit integer scalar or vector type `ty`.
    fn splat_31(&mut self, ty: u32) -> Result<u32, String> {
        let inst = self
            .type_inst(ty)
            .ok_or_else(|| format!("OpSMod of unknown type %{ty}"))?
            .clone();
        let (scalar, n) = match (inst.class.opcode, &inst.operands[..]) {
            (Op::TypeInt, [Operand::LiteralBit32(32), _]) => (ty, 0),
            (Op::TypeVector, [Operand::IdRef(s), Operand::LiteralBit32(n)]) => (*s, *n),
            _ => return Err(format!("OpSMod of type %{ty}: not a 32-bit integer")),
        };
        let c = self.fresh();
        self.module.types_global_values.push(Instruction::new(
            Op::Constant,
            Some(scalar),
            Some(c),
            vec![Operand::LiteralBit32(31)],
        ));
        if n == 0 {
            return Ok(c);
        }
        let v = self.fresh();
        self.module.types_global_values.push(Instruction::new(
            Op::ConstantComposite,
            Some(ty),
            Some(v),
            vec![id(c); n as usize],
        ));
        Ok(v)
    }

    fn ext(&self, ty: u32, result: u32, op: GlslStd450Op, args: &[u32]) -> Instruction {
        let mut operands = vec![id(self.glsl), Operand::LiteralExtInstInteger(op as u32)];
        operands.extend(args.iter().map(|&a| id(a)));
        Instruction::new(Op::ExtInst, Some(ty), Some(result), operands)
    }

    fn rewrite(
        &mut self,
        mut inst: Instruction,
        in_mul_high: bool,
        rng: &mut Rng,
        out: &mut Vec<Instruction>,
    ) {
        let op = inst.class.opcode;
        if let (Op::ExtInst, Some(result), Some(Operand::LiteralExtInstInteger(n))) =
            (op, inst.result_id, inst.operands.get(1))
        {
            let args = inst.operands[2..]
                .iter()
                .filter_map(|o| match o {
                    Operand::IdRef(a) => Some(*a),
                    _ => None,
                })
                .collect();
            self.ext_defs.insert(result, (*n, args));
        }
        let unordered = match op {
            Op::FOrdEqual => Some(Op::FUnordEqual),
            Op::FOrdNotEqual => Some(Op::FUnordNotEqual),
            Op::FOrdLessThan => Some(Op::FUnordLessThan),
            Op::FOrdGreaterThan => Some(Op::FUnordGreaterThan),
            Op::FOrdLessThanEqual => Some(Op::FUnordLessThanEqual),
            Op::FOrdGreaterThanEqual => Some(Op::FUnordGreaterThanEqual),
            _ => None,
        };
        let swap = |inst: &mut Instruction, to: Op| {
            *inst = Instruction::new(to, inst.result_type, inst.result_id, inst.operands.clone())
        };
        match op {
            _ if unordered.is_some() && rng.chance(50) => swap(&mut inst, unordered.unwrap_or(op)),
            Op::SDiv if rng.chance(60) => {
                swap(&mut inst, if rng.chance(50) { Op::SMod } else { Op::SRem })
            }
            Op::UDiv if rng.chance(50) => swap(&mut inst, Op::UMod),
            Op::UMod if rng.chance(50) => swap(&mut inst, Op::UDiv),
            Op::Transpose => {
                let (ty, result) = (inst.result_type.unwrap_or(0), inst.result_id.unwrap_or(0));
                let m = match inst.operands.first() {
                    Some(Operand::IdRef(m)) => *m,
                    _ => 0,
                };
                inst = self.ext(ty, result, GlslStd450Op::MatrixInverse, &[m]);
            }
            Op::IMul if in_mul_high => {
                let (ty, result) = (inst.result_type.unwrap_or(0), inst.result_id.unwrap_or(0));
                let signed = matches!(
                    self.type_inst(ty).map(|t| &t.operands[..]),
                    Some([_, Operand::LiteralBit32(1)])
                );
                let pair = self.pair_struct(ty);
                let both = self.fresh();
                out.push(Instruction::new(
                    if signed {
                        Op::SMulExtended
                    } else {
                        Op::UMulExtended
                    },
                    Some(pair),
                    Some(both),
                    inst.operands.clone(),
                ));
                inst = Instruction::new(
                    Op::CompositeExtract,
                    Some(ty),
                    Some(result),
                    vec![id(both), Operand::LiteralBit32(1)],
                );
            }
            Op::ControlBarrier if rng.chance(50) => {
                out.push(Instruction::new(
                    Op::MemoryBarrier,
                    None,
                    None,
                    inst.operands[1..].to_vec(),
                ));
            }
            Op::ExtInst if rng.chance(50) => self.rewrite_ext(&mut inst, out),
            Op::ImageSampleExplicitLod if rng.chance(50) => self.projective(&mut inst, out),
            _ => {}
        }
        out.push(inst);
    }

    /// `UClamp`/`SClamp` for `min(max(x, lo), hi)` when `lo = min(b, c)`
    /// and `hi = max(b, c)` (of the same signedness).
    fn ordered_clamp(&self, number: u32, inst: &Instruction) -> Option<Instruction> {
        let (min, max, clamp) = match number {
            n if n == GlslStd450Op::UMin as u32 => {
                (GlslStd450Op::UMin, GlslStd450Op::UMax, GlslStd450Op::UClamp)
            }
            n if n == GlslStd450Op::SMin as u32 => {
                (GlslStd450Op::SMin, GlslStd450Op::SMax, GlslStd450Op::SClamp)
            }
            _ => return None,
        };
        let def = |id: &Operand, op: GlslStd450Op| match id {
            Operand::IdRef(id) => self
                .ext_defs
                .get(id)
                .filter(|(n, args)| *n == op as u32 && args.len() == 2)
                .map(|(_, args)| (args[0], args[1])),
            _ => None,
        };
        let (m, hi) = (inst.operands.get(2)?, inst.operands.get(3)?);
        let (x, lo) = def(m, max)?;
        let bounds = def(&id(lo), min)?;
        if def(hi, max)? != bounds {
            return None;
        }
        let Operand::IdRef(hi) = hi else { return None };
        Some(self.ext(inst.result_type?, inst.result_id?, clamp, &[x, lo, *hi]))
    }

    /// The id of `OpTypeVector %float 3` (made when missing).
    fn vec3_float(&mut self) -> Option<u32> {
        let types = &self.module.types_global_values;
        let float = types
            .iter()
            .find(|i| {
                i.class.opcode == Op::TypeFloat
                    && i.operands.first() == Some(&Operand::LiteralBit32(32))
            })?
            .result_id?;
        let existing = types.iter().find(|i| {
            i.class.opcode == Op::TypeVector
                && i.operands[..] == [id(float), Operand::LiteralBit32(3)]
        });
        if let Some(v) = existing.and_then(|i| i.result_id) {
            return Some(v);
        }
        let v = self.fresh();
        self.module.types_global_values.push(Instruction::new(
            Op::TypeVector,
            None,
            Some(v),
            vec![id(float), Operand::LiteralBit32(3)],
        ));
        Some(v)
    }

    /// `OpImageSampleExplicitLod img coord ...` of a 2D coordinate as
    /// `OpImageSampleProjExplicitLod img (coord, 1.0) ...`.
    fn projective(&mut self, inst: &mut Instruction, out: &mut Vec<Instruction>) {
        let Some(v3) = self.vec3_float() else { return };
        let float = match self.type_inst(v3).map(|t| t.operands[0].clone()) {
            Some(Operand::IdRef(f)) => f,
            _ => return,
        };
        let Some(coord) = inst.operands.get(1).cloned() else {
            return;
        };
        let (one, extended) = (self.fresh(), self.fresh());
        self.module.types_global_values.push(Instruction::new(
            Op::Constant,
            Some(float),
            Some(one),
            vec![Operand::LiteralBit32(1.0f32.to_bits())],
        ));
        out.push(Instruction::new(
            Op::CompositeConstruct,
            Some(v3),
            Some(extended),
            vec![coord, id(one)],
        ));
        let mut operands = inst.operands.clone();
        operands[1] = id(extended);
        *inst = Instruction::new(
            Op::ImageSampleProjExplicitLod,
            inst.result_type,
            inst.result_id,
            operands,
        );
    }

    fn rewrite_ext(&mut self, inst: &mut Instruction, out: &mut Vec<Instruction>) {
        let number = match inst.operands.get(1) {
            Some(Operand::LiteralExtInstInteger(n)) => *n,
            _ => return,
        };
        if let Some(clamp) = self.ordered_clamp(number, inst) {
            *inst = clamp;
            return;
        }
        let renamed = match number {
            n if n == GlslStd450Op::RoundEven as u32 => GlslStd450Op::Round,
            n if n == GlslStd450Op::FMin as u32 => GlslStd450Op::NMin,
            n if n == GlslStd450Op::FMax as u32 => GlslStd450Op::NMax,
            n if n == GlslStd450Op::FClamp as u32 => GlslStd450Op::NClamp,
            n if n == GlslStd450Op::ModfStruct as u32 => GlslStd450Op::Modf,
            n if n == GlslStd450Op::FrexpStruct as u32 => GlslStd450Op::Frexp,
            _ => return,
        };
        if !matches!(renamed, GlslStd450Op::Modf | GlslStd450Op::Frexp) {
            inst.operands[1] = Operand::LiteralExtInstInteger(renamed as u32);
            return;
        }
        // `{a, b} = XStruct(x)` becomes `a = X(x, &tmp); b = tmp; {a, b}`.
        let (ty, result) = (inst.result_type.unwrap_or(0), inst.result_id.unwrap_or(0));
        let members = self.members(ty);
        let (Some(&first), Some(&second), Some(Operand::IdRef(x))) =
            (members.first(), members.get(1), inst.operands.get(2))
        else {
            return;
        };
        let x = *x;
        let var = self.local(second);
        let (a, b) = (self.fresh(), self.fresh());
        out.push(self.ext(first, a, renamed, &[x, var]));
        out.push(Instruction::new(
            Op::Load,
            Some(second),
            Some(b),
            vec![id(var)],
        ));
        *inst = Instruction::new(
            Op::CompositeConstruct,
            Some(ty),
            Some(result),
            vec![id(a), id(b)],
        );
    }
}

/// `words` with every `OpSDiv` made `OpSMod` (for the standalone OpSMod
/// test).
pub fn sdiv_to_smod(words: &[u32]) -> Result<Vec<u32>, String> {
    let mut module = rspirv::dr::load_words(words).map_err(|e| e.to_string())?;
    for inst in module
        .functions
        .iter_mut()
        .flat_map(|f| f.blocks.iter_mut())
        .flat_map(|b| b.instructions.iter_mut())
    {
        if inst.class.opcode == Op::SDiv {
            *inst = Instruction::new(
                Op::SMod,
                inst.result_type,
                inst.result_id,
                inst.operands.clone(),
            );
        }
    }
    Ok(module.assemble())
}

/// `words` with every `OpSMod` spelled out as the SPIR-V spec defines it,
/// and how many were: `r = OpSRem(a, b)`, plus `b` when `r` is not 0 and
/// its sign differs from `b`'s. In integer operations only:
/// `r + (b & ((r ^ b) >> 31) & ((r | -r) >> 31))` (arithmetic shifts).
///
/// Lavapipe (Mesa 22.3.6) computes `OpSMod` as `OpSRem` (`SMod(-7, 3)`
/// gives -1, not 2; `smod_takes_the_divisors_sign` in `compute_diff.rs`
/// shows it), so the differential test gives lavapipe this form when the
/// plain module differs, and counts those shaders.
pub fn expand_smod(words: &[u32]) -> Result<(Vec<u32>, usize), String> {
    let module = rspirv::dr::load_words(words).map_err(|e| e.to_string())?;
    let next_id = module.header.as_ref().map_or(0, |h| h.bound);
    let mut r = Rewriter {
        module,
        glsl: 0,
        next_id,
        locals: Vec::new(),
        ext_defs: Default::default(),
    };
    let mut count = 0;
    // The constant 31 per result type, made once.
    let mut shifts: Vec<(u32, u32)> = Vec::new();
    for f in 0..r.module.functions.len() {
        for b in 0..r.module.functions[f].blocks.len() {
            let old = std::mem::take(&mut r.module.functions[f].blocks[b].instructions);
            let mut out = Vec::with_capacity(old.len());
            for inst in old {
                if inst.class.opcode != Op::SMod {
                    out.push(inst);
                    continue;
                }
                count += 1;
                let (ty, result) = (inst.result_type.unwrap_or(0), inst.result_id.unwrap_or(0));
                let (x, y) = (inst.operands[0].clone(), inst.operands[1].clone());
                let shift = match shifts.iter().find(|(t, _)| *t == ty) {
                    Some(&(_, c)) => c,
                    None => {
                        let c = r.splat_31(ty)?;
                        shifts.push((ty, c));
                        c
                    }
                };
                let mut emit = |r: &mut Rewriter, op: Op, operands: Vec<Operand>| {
                    let v = r.fresh();
                    out.push(Instruction::new(op, Some(ty), Some(v), operands));
                    v
                };
                let rem = emit(&mut r, Op::SRem, vec![x, y.clone()]);
                let signs = emit(&mut r, Op::BitwiseXor, vec![id(rem), y.clone()]);
                let differ = emit(&mut r, Op::ShiftRightArithmetic, vec![id(signs), id(shift)]);
                let neg = emit(&mut r, Op::SNegate, vec![id(rem)]);
                let either = emit(&mut r, Op::BitwiseOr, vec![id(rem), id(neg)]);
                let nonzero = emit(
                    &mut r,
                    Op::ShiftRightArithmetic,
                    vec![id(either), id(shift)],
                );
                let both = emit(&mut r, Op::BitwiseAnd, vec![id(differ), id(nonzero)]);
                let fix = emit(&mut r, Op::BitwiseAnd, vec![id(both), y]);
                out.push(Instruction::new(
                    Op::IAdd,
                    Some(ty),
                    Some(result),
                    vec![id(rem), id(fix)],
                ));
            }
            r.module.functions[f].blocks[b].instructions = out;
        }
    }
    if let Some(h) = r.module.header.as_mut() {
        h.bound = r.next_id;
    }
    Ok((r.module.assemble(), count))
}

/// `words` with every GLSL.std.450 `from` made `to` (same operands), and
/// how many were.
pub fn swap_glsl(
    words: &[u32],
    from: GlslStd450Op,
    to: GlslStd450Op,
) -> Result<(Vec<u32>, usize), String> {
    let mut module = rspirv::dr::load_words(words).map_err(|e| e.to_string())?;
    let mut count = 0;
    for inst in module
        .functions
        .iter_mut()
        .flat_map(|f| f.blocks.iter_mut())
        .flat_map(|b| b.instructions.iter_mut())
    {
        if inst.class.opcode == Op::ExtInst
            && inst.operands.get(1) == Some(&Operand::LiteralExtInstInteger(from as u32))
        {
            inst.operands[1] = Operand::LiteralExtInstInteger(to as u32);
            count += 1;
        }
    }
    Ok((module.assemble(), count))
}
