//! The printer: a shader to its canonical text form.
//!
//! Canonical means: blocks are named `b0, b1, ...` in layout order and
//! values `%0, %1, ...` in order of definition, so two shaders print equal
//! exactly when they are equal up to renaming. Dangling references (which
//! the validator rejects) print as `%?N` / `b?N` and do not parse back.

use crate::opcode::{Op, Opcode};
use crate::shader::{Block, Inst, Shader, Value};
use std::fmt::{self, Write};

/// Print a shader in the canonical text form.
pub fn print<O: Opcode>(shader: &Shader<'_, O>) -> String {
    let mut out = String::with_capacity(shader.len() * 32 + 64);
    // Writing to a String cannot fail.
    let _ = write_shader(shader, &mut out);
    out
}

/// Canonical names of a shader's values and blocks.
pub struct Names {
    values: Vec<u32>,
    blocks: Vec<u32>,
}

impl Names {
    pub fn compute<O: Opcode>(shader: &Shader<'_, O>) -> Names {
        let mut values = vec![u32::MAX; shader.value_capacity()];
        let mut blocks = vec![u32::MAX; shader.block_capacity()];
        let mut next = 0;
        for (k, &b) in shader.layout().iter().enumerate() {
            blocks[b.index()] = k as u32;
            for &i in shader.block_insts(b) {
                for v in shader.inst(i).results() {
                    values[v.index()] = next;
                    next += 1;
                }
            }
        }
        Names { values, blocks }
    }

    pub fn value(&self, v: Value) -> ValueName {
        ValueName(self.values.get(v.index()).copied().unwrap_or(u32::MAX), v)
    }

    pub fn block(&self, b: Block) -> BlockName {
        BlockName(self.blocks.get(b.index()).copied().unwrap_or(u32::MAX), b)
    }
}

/// A value's printed name.
pub struct ValueName(u32, Value);

impl fmt::Display for ValueName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == u32::MAX {
            write!(f, "%?{}", self.1.0)
        } else {
            write!(f, "%{}", self.0)
        }
    }
}

/// A block's printed name.
pub struct BlockName(u32, Block);

impl fmt::Display for BlockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == u32::MAX {
            write!(f, "b?{}", self.1.0)
        } else {
            write!(f, "b{}", self.0)
        }
    }
}

/// Write a shader in the canonical text form.
pub fn write_shader<O: Opcode>(shader: &Shader<'_, O>, out: &mut dyn Write) -> fmt::Result {
    let names = Names::compute(shader);
    write!(out, "shader {}", shader.stage.name())?;
    if shader.preserve_float_specials {
        write!(out, " preserve_float_specials")?;
    }
    writeln!(out)?;
    for (k, a) in shader.arrays().iter().enumerate() {
        writeln!(out, "array a{k}: {}[{}]", a.elem, a.len)?;
    }
    if shader.private_bytes > 0 {
        writeln!(out, "private {}", shader.private_bytes)?;
    }
    if let Some([x, y, z]) = shader.workgroup_size {
        writeln!(out, "workgroup_size {x} {y} {z}")?;
    }
    if !shader.register_files().is_empty() {
        writeln!(out, "registers {}", shader.register_files().join(", "))?;
    }
    for &b in shader.layout() {
        writeln!(out, "{}:", names.block(b))?;
        for &i in shader.block_insts(b) {
            out.write_str("  ")?;
            write_inst(shader, &names, i, out)?;
            out.write_char('\n')?;
        }
    }
    Ok(())
}

/// Write one instruction (no indentation, no newline).
pub fn write_inst<O: Opcode>(
    shader: &Shader<'_, O>,
    names: &Names,
    i: Inst,
    out: &mut dyn Write,
) -> fmt::Result {
    let data = shader.inst(i);
    let result_ty = data.result.map(|v| shader.value_type(v));
    if data.result.is_some() {
        let mut sep = "";
        for v in data.results() {
            write!(out, "{sep}{}:{}", names.value(v), shader.value_type(v))?;
            if let Some(r) = shader.value_reg(v) {
                match shader.register_files().get(r.file as usize) {
                    // A name ending in a digit (ir3's `a0`) is followed
                    // by a dot before the unit.
                    Some(f) if f.ends_with(|c: char| c.is_ascii_digit()) => {
                        write!(out, "@{f}.{}", r.unit)?
                    }
                    Some(f) => write!(out, "@{f}{}", r.unit)?,
                    None => write!(out, "@?{}:{}", r.file, r.unit)?,
                }
            }
            sep = ", ";
        }
        out.write_str(" = ")?;
    }
    out.write_str(data.op.name())?;
    match data.op {
        Op::Split { lane } => write!(out, " lane={lane}")?,
        Op::Input { index } | Op::Output { index } => write!(out, " index={index}")?,
        Op::Opcode(o) => o.write_attrs(result_ty, out)?,
        _ => {}
    }
    let mut sep = " ";
    if data.op.is_phi() {
        for (v, b) in data.args.iter().zip(data.targets.iter()) {
            write!(out, "{sep}[{}, {}]", names.value(*v), names.block(*b))?;
            sep = ", ";
        }
        // A malformed phi with unpaired entries still prints everything.
        for v in data.args.iter().skip(data.targets.len()) {
            write!(out, "{sep}{}", names.value(*v))?;
            sep = ", ";
        }
        for b in data.targets.iter().skip(data.args.len()) {
            write!(out, "{sep}{}", names.block(*b))?;
            sep = ", ";
        }
    } else {
        for v in data.args.iter() {
            write!(out, "{sep}{}", names.value(*v))?;
            sep = ", ";
        }
        for b in data.targets.iter() {
            write!(out, "{sep}{}", names.block(*b))?;
            sep = ", ";
        }
    }
    if let Some(a) = data.address {
        write!(out, " addr={}", names.value(a))?;
    }
    Ok(())
}
