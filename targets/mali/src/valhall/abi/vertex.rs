//! Vertex outputs the IDVS way (Mesa's `bi_emit_store_vary` on v9+ with
//! its memory-allocated index-driven vertex shading): a vertex shader is
//! compiled twice ([`Variant`]), a *position* shader that stores the
//! position and point size and a *varying* shader that stores the other
//! outputs, each from the generic IR with the other variant's
//! `store_output`s removed ([`specialise`]).
//!
//! Both store to memory the hardware allocates per vertex. `LEA_BUF_IMM`
//! of the structure index the hardware preloads in r59
//! ([`Preload::IdvsIndex`]) with table 0xD, index 0 ([`OUTPUT_TABLE`],
//! [`OUTPUT_BUFFER`]: what Mesa's Valhall packer always writes) gives the
//! vertex's 64-bit address; then
//!
//! - the **position** is one `STORE.i128.istream` at offset 0 (Mesa's
//!   `BI_SEG_POS`, which the packer encodes as the `.istream` access);
//! - the **point size** is narrowed to f16 (Mesa lowers it to 16 bits
//!   on Valhall) and stored with `STORE.i16.istream` at offset 0 of
//!   structure r59 + 4 ([`POINT_SIZE_STRUCTURE`]);
//! - every other output is a **varying**: `STORE.i32`..`.i128` with
//!   `.estream` (`BI_SEG_VARY`) at its byte offset in the varying
//!   buffer ([`layout`]: 16 bytes per slot, the built-in varyings first,
//!   packed, then location `n` at `16 * (built-ins + n)`, as Mesa's
//!   `bi_varying_base_bytes` lays them out).
//!
//! Components are stored in contiguous runs of one type from the lowest
//! written one (each run at its own offset), so a component the shader
//! never writes is never overwritten. Clip and cull distances are
//! built-in varyings like any other (Mesa's panfrost clips in the
//! fragment shader, which reads them back as varyings). The layer and
//! the viewport index are `unsupported:` (the version of Mesa's v9/v10
//! backend followed here stores neither where the tiler reads it), as
//! are 16-bit and 64-bit outputs other than the point size. The non-IDVS path (Mesa's `no_idvs`: `LEA_ATTR_IMM` and
//! `ST_CVT` through attribute descriptors) is not built: every vertex
//! shader takes the IDVS path. Newer Mesa versions' `LEA_VARY` is not in
//! the v9/v10 instruction set Lathe's spec describes.

use std::collections::BTreeMap;

use indexmap::IndexMap;
use lathe_ir::{GenericOp, Inst, Op, Scalar, Shader, Stage, Type, Value, slot};
use lathe_isa::select::{Interface, Port, SelectError};

use super::{Lowering, Preload, group, unsupported, working_copy};

/// Resource table of the buffer `LEA_BUF_IMM` addresses IDVS outputs in.
pub const OUTPUT_TABLE: u8 = 0xD;
/// Buffer index in [`OUTPUT_TABLE`].
pub const OUTPUT_BUFFER: u8 = 0;
/// The point size is stored in structure r59 + this.
pub const POINT_SIZE_STRUCTURE: u32 = 4;
/// Bytes per varying slot in the varying buffer.
pub const SLOT_BYTES: u32 = 16;

/// One of the two shaders an IDVS vertex shader is compiled to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Stores the position and point size (Mesa's `BI_IDVS_POSITION`).
    Position,
    /// Stores the varyings (Mesa's `BI_IDVS_VARYING`, the secondary
    /// shader).
    Varying,
}

impl Variant {
    /// Its name in the statistics line (Mesa prints
    /// `MESA_SHADER_POSITION` and `MESA_SHADER_VARYING`).
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Position => "position",
            Variant::Varying => "varying",
        }
    }

    /// Whether this variant stores output slot `slot`.
    pub const fn stores(self, slot: u16) -> bool {
        let position = slot == slot::POS || slot == slot::PSIZ;
        match self {
            Variant::Position => position,
            Variant::Varying => !position,
        }
    }
}

/// Where a stored output lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Byte `offset` of the vertex's position record (`.istream`).
    Position { offset: u32 },
    /// The f16 point size, in structure r59 + [`POINT_SIZE_STRUCTURE`].
    PointSize,
    /// Byte `offset` of the vertex's varying record (`.estream`).
    Varying { offset: u32 },
}

/// One component a variant stores, and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stored {
    pub slot: u16,
    pub comp: u8,
    /// The IR's type of the component (the point size is stored as f16).
    pub scalar: Scalar,
    pub place: Place,
}

/// The varying buffer's layout: output slot → its byte offset, in
/// offset order (built-in varyings first, then the locations).
pub type Layout = IndexMap<u16, u32>;

/// The varying layout of the output slots `slots` (any order; the
/// position and point size are not varyings).
pub fn layout(slots: impl IntoIterator<Item = u16>) -> Layout {
    let mut slots: Vec<u16> = slots
        .into_iter()
        .filter(|&s| Variant::Varying.stores(s))
        .collect();
    slots.sort_unstable();
    slots.dedup();
    let builtins: Vec<u16> = slots.iter().copied().filter(|&s| s >= slot::POS).collect();
    let mut map = Layout::new();
    for (k, &s) in builtins.iter().enumerate() {
        map.insert(s, SLOT_BYTES * k as u32);
    }
    for &s in slots.iter().filter(|&&s| s < slot::POS) {
        map.insert(s, SLOT_BYTES * (builtins.len() as u32 + u32::from(s)));
    }
    map
}

/// The output slots a vertex shader stores, `unsupported:` for the ones
/// the IDVS path does not carry.
pub fn output_slots(generic: &Shader<'_, GenericOp>) -> Result<Vec<u16>, SelectError> {
    let mut slots = Vec::new();
    for (_, i) in generic.insts_in_order() {
        if let Op::Opcode(GenericOp::StoreOutput { slot: s, .. }) = generic.inst(i).op {
            let unsupported_builtin = matches!(s, slot::LAYER | slot::VIEWPORT);
            if unsupported_builtin {
                return Err(unsupported(format!(
                    "vertex output {} (not stored by Mesa's v9/v10 IDVS path)",
                    slot_name(s)
                )));
            }
            slots.push(s);
        }
    }
    slots.sort_unstable();
    slots.dedup();
    Ok(slots)
}

/// `generic` with the `store_output`s of the other variant removed;
/// `None` when it has none to remove.
pub fn specialise<'a>(
    generic: &Shader<'a, GenericOp>,
    variant: Variant,
) -> Result<Option<Shader<'a, GenericOp>>, SelectError> {
    let foreign = |s: &Shader<'_, GenericOp>, i: Inst| matches!(s.inst(i).op, Op::Opcode(GenericOp::StoreOutput { slot, .. }) if !variant.stores(slot));
    if !generic.insts_in_order().any(|(_, i)| foreign(generic, i)) {
        return Ok(None);
    }
    let mut copy = working_copy(generic)?;
    for b in copy.layout().to_vec() {
        let kept: Vec<Inst> = copy
            .block_insts(b)
            .iter()
            .copied()
            .filter(|&i| !foreign(&copy, i))
            .collect();
        copy.set_block_insts(b, &kept);
    }
    Ok(Some(copy))
}

/// Whether `generic` is a vertex shader with varyings to store (it is
/// then compiled as the two IDVS variants).
pub fn has_varyings(generic: &Shader<'_, GenericOp>) -> bool {
    generic.stage == Stage::Vertex
        && generic.insts_in_order().any(|(_, i)| {
            matches!(generic.inst(i).op,
                Op::Opcode(GenericOp::StoreOutput { slot, .. }) if Variant::Varying.stores(slot))
        })
}

impl Lowering<'_, '_> {
    /// Vertex outputs: every meta output of a `Port::Slot` becomes part of
    /// a store where its last component in the block stands.
    pub(super) fn vertex_outputs(
        &mut self,
        interface: &Interface,
        layout: &Layout,
    ) -> Result<Vec<Stored>, SelectError> {
        let mut stored = Vec::new();
        for b in self.shader.layout().to_vec() {
            let insts = self.shader.block_insts(b).to_vec();
            // This block's components by slot, and where the last one is.
            let mut slots: BTreeMap<u16, BTreeMap<u8, Value>> = BTreeMap::new();
            let mut last = None;
            for (k, &i) in insts.iter().enumerate() {
                let d = self.shader.inst(i);
                if let Op::Output { index } = d.op
                    && let Some(&Port::Slot(s, c)) = interface.outputs.get(index as usize)
                {
                    slots.entry(s).or_default().insert(c, d.args[0]);
                    last = Some(k);
                }
            }
            let Some(last) = last else { continue };
            let mut tail = Vec::new();
            let mut address = None;
            for (&s, comps) in &slots {
                for run in runs(comps, |v| self.shader.value_type(v)) {
                    stored.extend(self.store(s, &run, layout, &mut address, &mut tail)?);
                }
            }
            let mut list = Vec::new();
            for (k, &i) in insts.iter().enumerate() {
                let is_slot = matches!(self.shader.inst(i).op, Op::Output { index }
                    if matches!(interface.outputs.get(index as usize), Some(Port::Slot(..))));
                if !is_slot {
                    list.push(i);
                }
                if k == last {
                    list.append(&mut tail);
                }
            }
            self.shader.set_block_insts(b, &list);
        }
        Ok(stored)
    }

    /// The vertex's output address: `LEA_BUF_IMM` of `structure`.
    fn output_address(
        &mut self,
        structure: Value,
        tail: &mut Vec<Inst>,
    ) -> Result<Value, SelectError> {
        let op = self.op(&format!(
            "LEA_BUF_IMM.slot0 @r0:r1, r2, table:0x{OUTPUT_TABLE:X}, index:0x{OUTPUT_BUFFER:X}"
        ))?;
        let lea = self.shader.create_inst(
            Op::Opcode(op),
            &[structure],
            &[],
            None,
            Some(Type::vector(Scalar::U32, 2)),
        );
        tail.push(lea);
        Ok(self.result(lea))
    }

    /// A new machine instruction of `text` appended to `tail`, its result.
    fn emit(
        &mut self,
        text: &str,
        args: &[Value],
        ty: Type,
        tail: &mut Vec<Inst>,
    ) -> Result<Value, SelectError> {
        let op = self.op(text)?;
        let i = self
            .shader
            .create_inst(Op::Opcode(op), args, &[], None, Some(ty));
        tail.push(i);
        Ok(self.result(i))
    }

    fn result(&self, i: Inst) -> Value {
        self.shader
            .inst(i)
            .result
            .unwrap_or_else(|| unreachable!("created with a result"))
    }

    /// One contiguous run `run` (component, value) of slot `s`, of one
    /// type: its store, appended to `tail`.
    fn store(
        &mut self,
        s: u16,
        run: &[(u8, Value)],
        layout: &Layout,
        address: &mut Option<Value>,
        tail: &mut Vec<Inst>,
    ) -> Result<Vec<Stored>, SelectError> {
        let scalar = self.shader.value_type(run[0].1).scalar;
        let first = run[0].0;
        // Each component's place, from the place of the run's first.
        let stored = |place: fn(u32) -> Place, base: u32| {
            run.iter()
                .map(|&(comp, _)| Stored {
                    slot: s,
                    comp,
                    scalar,
                    place: place(base + 4 * u32::from(comp - first)),
                })
                .collect::<Vec<_>>()
        };
        if s == slot::PSIZ {
            if scalar != Scalar::F32 || run.len() != 1 || first != 0 {
                return Err(unsupported("a point size that is not one f32".to_string()));
            }
            let index = self.preload(Preload::IdvsIndex);
            let structure = self.emit(
                &format!("IADD_IMM.i32 r0, r1, #0x{POINT_SIZE_STRUCTURE:X}"),
                &[index],
                Type::U32,
                tail,
            )?;
            let at = self.output_address(structure, tail)?;
            let v = run[0].1;
            let half = self.emit("V2F32_TO_V2F16 r0, r1, r1", &[v, v], Type::U32, tail)?;
            let op = self.op("STORE.i16.istream.slot0 @r0, r1, offset:0")?;
            tail.push(
                self.shader
                    .create_inst(Op::Opcode(op), &[half, at], &[], None, None),
            );
            return Ok(stored(|_| Place::PointSize, 0));
        }
        if scalar.bits() != 32 {
            return Err(unsupported(format!(
                "{}-bit vertex output {}",
                scalar.bits(),
                slot_name(s)
            )));
        }
        let (access, offset, place): (_, _, fn(u32) -> Place) = if s == slot::POS {
            let offset = 4 * u32::from(first);
            (".istream", offset, |offset| Place::Position { offset })
        } else {
            let base = layout.get(&s).copied().ok_or_else(|| {
                unsupported(format!("vertex output {} has no varying", slot_name(s)))
            })?;
            let offset = base + 4 * u32::from(first);
            (".estream", offset, |offset| Place::Varying { offset })
        };
        let at = match *address {
            Some(a) => a,
            None => {
                let index = self.preload(Preload::IdvsIndex);
                let a = self.output_address(index, tail)?;
                *address = Some(a);
                a
            }
        };
        let n = run.len() as u8;
        let values: Vec<Value> = run.iter().map(|&(_, v)| v).collect();
        let data = if n == 1 {
            values[0]
        } else {
            let collect = self.shader.create_inst(
                Op::Collect,
                &values,
                &[],
                None,
                Some(Type::vector(scalar, n)),
            );
            tail.push(collect);
            self.result(collect)
        };
        let text = format!(
            "STORE.i{}{access}.slot0 {}, r{n}, offset:{offset}",
            32 * u32::from(n),
            group(n)
        );
        let op = self.op(&text)?;
        tail.push(
            self.shader
                .create_inst(Op::Opcode(op), &[data, at], &[], None, None),
        );
        Ok(stored(place, offset))
    }
}

/// The text name of output slot `s` (its number when it has none).
fn slot_name(s: u16) -> String {
    slot::name(s).map_or_else(|| s.to_string(), str::to_string)
}

/// The components of `comps` in runs of consecutive components of one
/// type (`ty` of a value; a register group is of one type).
fn runs(comps: &BTreeMap<u8, Value>, ty: impl Fn(Value) -> Type) -> Vec<Vec<(u8, Value)>> {
    let mut runs: Vec<Vec<(u8, Value)>> = Vec::new();
    for (&c, &v) in comps {
        match runs.last_mut() {
            Some(run)
                if run
                    .last()
                    .is_some_and(|&(p, w)| p + 1 == c && ty(w) == ty(v)) =>
            {
                run.push((c, v))
            }
            _ => runs.push(vec![(c, v)]),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_varyings_come_first_and_locations_stay_sparse() {
        let map = layout([3, slot::POS, slot::COL0, 0, slot::PSIZ, slot::FOGC]);
        let got: Vec<(u16, u32)> = map.into_iter().collect();
        assert_eq!(got, [(slot::COL0, 0), (slot::FOGC, 16), (0, 32), (3, 80)],);
    }

    #[test]
    fn each_variant_stores_its_own_slots() {
        for s in [slot::POS, slot::PSIZ] {
            assert!(Variant::Position.stores(s) && !Variant::Varying.stores(s));
        }
        for s in [0, 31, slot::COL0] {
            assert!(Variant::Varying.stores(s) && !Variant::Position.stores(s));
        }
    }
}
