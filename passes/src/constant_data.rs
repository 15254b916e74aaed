//! Constant arrays indexed at run time become constant data: a block of
//! words the compiled shader carries and the driver uploads as one more
//! uniform buffer, read with `load_ubo` (Mesa's `nir_opt_large_constants`).
//! Promoted to SSA values instead ([`crate::promote_arrays`]) each load
//! at a computed index costs a compare and a select per element.
//!
//! **Which arrays move** ([`moves`]): arrays of 32-bit scalars whose
//! every store writes a `const` at a constant index (each element one
//! value: a table initialised in place, as `var pos = array(...)` is),
//! with at least one load at a computed index and at least
//! [`MIN_ELEMENTS`] elements. A load before the initialising store reads
//! an undefined element in the IR, so reading the constant is a valid
//! result too. Arrays written at computed indices or with computed values
//! stay where they are.
//!
//! Element `k` of a moved array is at byte `base + k * stride` of the
//! block; the target chooses the stride (4 packs the words; a target that
//! addresses uniform buffers in 16-byte vectors gives each element a
//! vector of its own, so its word in the vector is known). Loads at a
//! constant index become the constant; the stores go away.
//!
//! ```
//! use lathe_passes::constant_data::move_constant_arrays;
//!
//! let text = "shader vertex\narray a0: f32[4]\nb0:\n  %0:u32 = load_sysval sv=vertex_index\n  %1:f32 = const 1.0\n  %2:f32 = const 2.0\n  array_store array=a0 offset=0 %1\n  array_store array=a0 offset=1 %2\n  array_store array=a0 offset=2 %1\n  array_store array=a0 offset=3 %2\n  %3:f32 = array_load array=a0 offset=0 addr=%0\n  store_output slot=0 comp=0 %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! let data = move_constant_arrays(&mut shader, 4).unwrap().unwrap();
//! assert_eq!(data.binding, 0);
//! assert_eq!(data.words, [0x3f80_0000, 0x4000_0000, 0x3f80_0000, 0x4000_0000]);
//! let printed = lathe_ir::print(&shader);
//! assert!(printed.contains("load_ubo binding=0 %"), "{printed}");
//! assert!(!printed.contains("array_"), "{printed}");
//! lathe_ir::validate(&shader).unwrap();
//! ```

use crate::u32_code::{const_bits, constant, emit};
use lathe_ir::{GenericOp, Inst, Invocation, Op, Shader, Type, Value};

/// Arrays shorter than this stay to be promoted: a computed-index load
/// of three elements is two compares and two selects, no more than a
/// buffer load and its offset.
pub const MIN_ELEMENTS: u32 = 4;

/// The constant data a compiled shader reads: the driver uploads `words`
/// as uniform buffer `binding`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConstantData {
    pub binding: u8,
    pub words: Vec<u32>,
}

impl ConstantData {
    /// `threads` with the block bound as their uniform buffer `binding`
    /// (what a test harness does for the driver).
    pub fn bind(&self, threads: &[Invocation]) -> Vec<Invocation> {
        threads
            .iter()
            .map(|t| {
                let mut t = t.clone();
                let b = usize::from(self.binding);
                if t.ubos.len() <= b {
                    t.ubos.resize(b + 1, Vec::new());
                }
                t.ubos[b] = self.words.clone();
                t
            })
            .collect()
    }
}

/// Moves the arrays [`moves`] picks into constant data, element `k` at
/// `stride * k` bytes from its array's start (`stride` a multiple of 4);
/// `None` when none moves. Fails, naming what is unsupported, when every
/// uniform-buffer binding is taken.
pub fn move_constant_arrays(
    shader: &mut Shader<'_, GenericOp>,
    stride: u32,
) -> Result<Option<ConstantData>, String> {
    let values = initial_values(shader);
    let moved: Vec<bool> = (0..shader.arrays().len())
        .map(|a| moves(shader, a, &values[a]))
        .collect();
    if !moved.contains(&true) {
        return Ok(None);
    }
    let binding = match max_ubo_binding(shader) {
        None => 0,
        Some(b) => b
            .checked_add(1)
            .ok_or("constant data with every uniform-buffer binding in use")?,
    };
    // Each moved array's first byte, and the block.
    let mut base = vec![0u32; moved.len()];
    let mut words = Vec::new();
    for (a, _) in moved.iter().enumerate().filter(|&(_, &m)| m) {
        base[a] = 4 * words.len() as u32;
        for v in &values[a] {
            words.push(v.unwrap_or(0));
            words.extend(std::iter::repeat_n(0, (stride / 4).max(1) as usize - 1));
        }
    }
    for b in shader.layout().to_vec() {
        let old = shader.block_insts(b).to_vec();
        let mut out = Vec::with_capacity(old.len());
        for i in old {
            let d = shader.inst(i);
            let (array, offset, store) = match d.op {
                Op::Opcode(GenericOp::ArrayLoad { array, offset }) => (array, offset, false),
                Op::Opcode(GenericOp::ArrayStore { array, offset }) => (array, offset, true),
                _ => {
                    out.push(i);
                    continue;
                }
            };
            let a = array.index();
            if !moved[a] {
                out.push(i);
                continue;
            }
            if store {
                continue;
            }
            match d.address {
                None => {
                    let bits = values[a][offset as usize].unwrap_or(0);
                    shader.inst_mut(i).op = Op::Opcode(GenericOp::Const { bits });
                    shader.set_args(i, &[]);
                }
                Some(addr) => {
                    let index = widen(shader, &mut out, addr);
                    let k = constant(shader, &mut out, stride);
                    let scaled = emit(shader, &mut out, GenericOp::IMul, &[index, k]);
                    let first = constant(shader, &mut out, base[a] + offset * stride);
                    let at = emit(shader, &mut out, GenericOp::IAdd, &[scaled, first]);
                    shader.inst_mut(i).op = Op::Opcode(GenericOp::LoadUbo { binding });
                    shader.inst_mut(i).address = None;
                    shader.set_args(i, &[at]);
                }
            }
            out.push(i);
        }
        shader.set_block_insts(b, &out);
    }
    Ok(Some(ConstantData { binding, words }))
}

/// Whether array `a` moves: 32-bit scalars, every store a constant at a
/// constant index with one value per element (`values`), a load at a
/// computed index, and at least [`MIN_ELEMENTS`] elements.
fn moves(shader: &Shader<'_, GenericOp>, a: usize, values: &[Option<u32>]) -> bool {
    let decl = shader.arrays()[a];
    if decl.elem.lanes != 1 || decl.elem.scalar.bits() != 32 || decl.len < MIN_ELEMENTS {
        return false;
    }
    let mut dynamic_load = false;
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        match d.op {
            Op::Opcode(GenericOp::ArrayLoad { array, .. }) if array.index() == a => {
                dynamic_load |= d.address.is_some();
            }
            Op::Opcode(GenericOp::ArrayStore { array, offset }) if array.index() == a => {
                let constant = d.address.is_none()
                    && const_bits(shader, d.args[0]).is_some()
                    && values.get(offset as usize).is_some_and(Option::is_some);
                if !constant {
                    return false;
                }
            }
            _ => {}
        }
    }
    dynamic_load
}

/// Per array, per element: the one constant its stores write (`None`
/// when unwritten, or when written twice with different values, which
/// makes [`moves`] refuse the array).
fn initial_values(shader: &Shader<'_, GenericOp>) -> Vec<Vec<Option<u32>>> {
    let mut values: Vec<Vec<Option<u32>>> = shader
        .arrays()
        .iter()
        .map(|d| vec![None; d.len as usize])
        .collect();
    let mut conflict: Vec<Vec<bool>> = values.iter().map(|v| vec![false; v.len()]).collect();
    for (_, i) in shader.insts_in_order() {
        let d = shader.inst(i);
        if let Op::Opcode(GenericOp::ArrayStore { array, offset }) = d.op
            && d.address.is_none()
            && let Some(bits) = const_bits(shader, d.args[0])
            && let Some(slot) = values[array.index()].get_mut(offset as usize)
        {
            let c = &mut conflict[array.index()][offset as usize];
            *c |= slot.is_some_and(|old| old != bits);
            *slot = Some(bits);
        }
    }
    for (v, c) in values.iter_mut().zip(&conflict) {
        for (slot, &bad) in v.iter_mut().zip(c) {
            if bad {
                *slot = None;
            }
        }
    }
    values
}

fn max_ubo_binding(shader: &Shader<'_, GenericOp>) -> Option<u8> {
    shader
        .insts_in_order()
        .filter_map(|(_, i)| match shader.inst(i).op {
            Op::Opcode(GenericOp::LoadUbo { binding } | GenericOp::LoadUboVec4 { binding, .. }) => {
                Some(binding)
            }
            _ => None,
        })
        .max()
}

/// An index as a `u32` (16-bit indices extended, `i32` reinterpreted:
/// a negative index is out of bounds either way).
fn widen(shader: &mut Shader<'_, GenericOp>, out: &mut Vec<Inst>, v: Value) -> Value {
    let ty = shader.value_type(v);
    match (ty.scalar.bits(), ty == Type::U32) {
        (32, true) => v,
        (32, false) => emit(
            shader,
            out,
            GenericOp::Mov {
                abs: false,
                neg: false,
            },
            &[v],
        ),
        _ => emit(shader, out, GenericOp::Cvt, &[v]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shader with array `a0: f32[len]`, the given stores, and a load
    /// at the vertex index (`%0`).
    fn moved(len: u32, stores: &str) -> Option<ConstantData> {
        let text = format!(
            "shader vertex\narray a0: f32[{len}]\nb0:\n  %0:u32 = load_sysval sv=vertex_index\n  %1:f32 = const 1.0\n  %2:f32 = const 2.0\n{stores}  %3:f32 = array_load array=a0 offset=0 addr=%0\n  store_output slot=0 comp=0 %3\n  ret\n"
        );
        let arena = lathe_ir::Bump::new();
        let mut shader = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
        let data = move_constant_arrays(&mut shader, 16).unwrap();
        lathe_ir::validate(&shader).unwrap();
        data
    }

    fn stores(values: &[u32]) -> String {
        (0..)
            .zip(values)
            .map(|(k, v)| format!("  array_store array=a0 offset={k} %{v}\n"))
            .collect()
    }

    #[test]
    fn a_table_moves_with_each_element_in_its_stride() {
        let data = moved(4, &stores(&[1, 2, 1, 2])).unwrap();
        assert_eq!(data.words.len(), 16);
        assert_eq!(data.words[4], 0x4000_0000);
        assert_eq!(data.words[5], 0);
    }

    #[test]
    fn short_tables_stay() {
        assert_eq!(moved(3, &stores(&[1, 2, 1])), None);
    }

    #[test]
    fn two_values_for_one_element_stay() {
        assert_eq!(
            moved(
                4,
                &stores(&[1, 2, 1, 2, 2])[..].replace("offset=4", "offset=0")
            ),
            None
        );
    }

    #[test]
    fn computed_stores_stay() {
        let s = stores(&[1, 2, 1, 2]) + "  array_store array=a0 offset=0 %1 addr=%0\n";
        assert_eq!(moved(4, &s), None);
    }

    #[test]
    fn computed_values_stay() {
        let s = stores(&[1, 2, 1]) + "  %9:f32 = fadd %1, %2\n  array_store array=a0 offset=3 %9\n";
        assert_eq!(moved(4, &s), None);
    }
}
