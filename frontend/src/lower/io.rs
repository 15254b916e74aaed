//! Global variables: shader inputs and outputs by location, component and
//! built-in; descriptor resources numbered per kind; push constants; and
//! their records in the [`Interface`](crate::Interface).

use super::Lowerer;
use super::memory::Storage;
use crate::error::Error;
use crate::interface::{PushConstants, Resource, Varying};
use crate::module::{Decos, Ty};
use lathe_ir::{Interp, InterpLoc, InterpMode, Stage, Type, Value};
use rspirv::spirv::{BuiltIn, Dim, StorageClass};
use rustc_hash::FxHashSet as HashSet;

/// Where one scalar leaf of an input or output lives.
#[derive(Clone, Copy, Debug)]
pub(crate) struct IoLeaf {
    /// `load_input` / `store_output` slot; `None` for built-ins read as system values.
    pub slot: Option<u16>,
    pub comp: u8,
    pub interp: Interp,
    pub builtin: Option<BuiltIn>,
    /// Element of an arrayed built-in (`ClipDistance[k]`), else the vector lane.
    pub element: u32,
}

/// The IR slot and component of a built-in output (or varying input) element.
fn builtin_slot(b: BuiltIn, element: u32) -> Option<(u16, u8)> {
    use lathe_ir::slot;
    let one = |s: u16| (element < 4).then_some((s, element as u8));
    match b {
        BuiltIn::Position => one(slot::POS),
        BuiltIn::PointSize => one(slot::PSIZ),
        // Eight distances over two four-component slots.
        BuiltIn::ClipDistance if element < 8 => {
            Some((slot::CLIP_DIST0 + (element / 4) as u16, (element % 4) as u8))
        }
        BuiltIn::CullDistance if element < 8 => {
            Some((slot::CULL_DIST0 + (element / 4) as u16, (element % 4) as u8))
        }
        BuiltIn::Layer => one(slot::LAYER),
        BuiltIn::ViewportIndex => one(slot::VIEWPORT),
        BuiltIn::PrimitiveId => one(slot::PRIMITIVE_ID),
        BuiltIn::FragDepth => one(slot::FRAG_DEPTH),
        BuiltIn::SampleMask => one(slot::SAMPLE_MASK),
        _ => None,
    }
}

impl Lowerer<'_, '_, '_> {
    /// Set up every global the entry point uses.
    pub(super) fn declare_globals(&mut self, used: &HashSet<u32>) -> Result<(), Error> {
        let mut resources: Vec<(u32, u32, u32, String, Option<u32>, u32)> = Vec::new();
        let mut push: Option<PushConstants> = None;
        let mut shared_bytes = 0u32;
        let globals = self.m.globals.clone();
        for var in globals {
            if !used.contains(&var) {
                continue;
            }
            let Some(d) = self.m.def(var) else { continue };
            self.at = d;
            let inst = &self.m.insts[d];
            let Some(Ty::Pointer { class, pointee }) =
                inst.result_type.and_then(|t| self.m.ty(t)).cloned()
            else {
                return Err(self.invalid("global variable of a non-pointer type"));
            };
            let init = crate::module::id_operand(inst, 1);
            match class {
                StorageClass::Input => self.declare_io(var, pointee, true)?,
                StorageClass::Output => {
                    self.declare_io(var, pointee, false)?;
                    if let Some(init) = init {
                        let ptr = super::memory::Ptr {
                            var,
                            ty: pointee,
                            path: Vec::new(),
                        };
                        let v = self.get(init)?;
                        self.store(&ptr, v)?;
                    }
                }
                StorageClass::Private | StorageClass::Function => {
                    let mut dynamic = false;
                    let mut functions: Vec<u32> = self.m.functions.keys().copied().collect();
                    functions.sort();
                    for f in functions {
                        dynamic |= self.func_cfg(f)?.dynamic_locals.contains(&var);
                    }
                    let s = if dynamic {
                        self.array_storage(pointee)?
                    } else {
                        self.ssa_storage(pointee)?
                    };
                    if let Storage::Ssa { base, count } = s {
                        let cur = self.b.current_block();
                        for k in 0..count {
                            let ty = self.ssa.var_type(base + k);
                            let z = self.constant(ty, 0);
                            self.ssa.write(base + k, cur, z);
                        }
                    }
                    self.vars.insert(var, s);
                    if let Some(init) = init {
                        let ptr = super::memory::Ptr {
                            var,
                            ty: pointee,
                            path: Vec::new(),
                        };
                        let v = self.get(init)?;
                        self.store(&ptr, v)?;
                    }
                }
                StorageClass::PushConstant => {
                    let (lo, hi) = self.block_range(pointee)?;
                    push = Some(PushConstants {
                        offset: lo,
                        size: hi - lo,
                    });
                    self.vars.insert(var, Storage::PushConstant);
                }
                StorageClass::Uniform
                | StorageClass::StorageBuffer
                | StorageClass::UniformConstant => {
                    let decos = self.m.deco(var).cloned().unwrap_or_default();
                    let (set, binding) = (decos.set.unwrap_or(0), decos.binding.unwrap_or(0));
                    let (kind, count) = self.resource_kind(class, pointee)?;
                    resources.push((set, binding, var, kind.to_string(), count, pointee));
                }
                StorageClass::Workgroup => {
                    let words = self.leaf_count(pointee)?;
                    self.vars
                        .insert(var, Storage::Workgroup { base: shared_bytes });
                    shared_bytes += 4 * words;
                }
                other => return Err(self.unsupported(format!("{other:?} variables"))),
            }
            self.set(
                var,
                super::Val::Ptr(std::rc::Rc::new(super::memory::Ptr {
                    var,
                    ty: pointee,
                    path: Vec::new(),
                })),
            );
        }
        // Number resources per kind in (set, binding) order.
        resources.sort_by_key(|r| (r.0, r.1));
        let mut next = std::collections::HashMap::<&'static str, u32>::new();
        for (set, binding, var, kind, count, pointee) in resources {
            let n = count.unwrap_or(1);
            let mut take = |space: &'static str| {
                let slot = next.entry(space).or_insert(0);
                let first = *slot;
                *slot += n;
                first
            };
            let (index, sampler) = match kind.as_str() {
                "uniform_buffer" => (take("ubo"), None),
                "storage_buffer" => (take("ssbo"), None),
                "combined_image_sampler" => (take("texture"), Some(take("sampler"))),
                "sampled_image" | "input_attachment" => (take("texture"), None),
                "storage_image" => (take("image"), None),
                _ => (take("sampler"), None),
            };
            let handle_ty = self.handle_type(pointee);
            match kind.as_str() {
                "uniform_buffer" => {
                    self.vars.insert(var, Storage::Ubo { index });
                }
                "storage_buffer" => {
                    self.vars.insert(var, Storage::Ssbo { index });
                }
                _ => {
                    self.vars.insert(
                        var,
                        Storage::Handle {
                            index,
                            sampler,
                            ty: handle_ty,
                        },
                    );
                }
            }
            self.iface.resources.push(Resource {
                name: self.m.names.get(&var).cloned(),
                set,
                binding,
                kind,
                array_size: count,
                index,
                sampler_index: sampler,
            });
        }
        self.iface.push_constants = push;
        Ok(())
    }

    /// The element type of a (possibly arrayed) handle type.
    fn handle_type(&self, mut ty: u32) -> u32 {
        while let Some(Ty::Array { elem, .. } | Ty::RuntimeArray { elem }) = self.m.ty(ty) {
            ty = *elem;
        }
        ty
    }

    fn resource_kind(
        &self,
        class: StorageClass,
        pointee: u32,
    ) -> Result<(&'static str, Option<u32>), Error> {
        let mut ty = pointee;
        let mut count = Some(1);
        match self.ty(ty)? {
            Ty::Array { elem, len } => {
                count = Some(
                    crate::consts::array_len(&self.c.values, *len)
                        .map_err(|e| self.unsupported(e))?,
                );
                ty = *elem;
            }
            Ty::RuntimeArray { elem } => {
                count = None;
                ty = *elem;
            }
            _ => {}
        }
        let kind = match (class, self.ty(ty)?) {
            (StorageClass::StorageBuffer, _) => "storage_buffer",
            (StorageClass::Uniform, _) => {
                if self.m.deco(ty).is_some_and(|d| d.buffer_block) {
                    "storage_buffer"
                } else {
                    "uniform_buffer"
                }
            }
            (_, Ty::SampledImage { .. }) => "combined_image_sampler",
            (_, Ty::Sampler) => "sampler",
            (_, Ty::Image(img)) if img.dim == Dim::DimSubpassData => "input_attachment",
            (_, Ty::Image(img)) if img.sampled == 2 => "storage_image",
            (_, Ty::Image(_)) => "sampled_image",
            (_, other) => return Err(self.unsupported(format!("resource of type {other:?}"))),
        };
        Ok((kind, count))
    }

    /// Byte range a push-constant block's members cover.
    fn block_range(&mut self, ty: u32) -> Result<(u32, u32), Error> {
        let Ty::Struct { members } = self.ty(ty)?.clone() else {
            return Err(self.unsupported("push constants that are not a block"));
        };
        let (mut lo, mut hi) = (u32::MAX, 0);
        for (k, &mem) in members.iter().enumerate() {
            let off = self
                .m
                .member_deco(ty, k as u32)
                .and_then(|d| d.offset)
                .unwrap_or(0);
            let size = self.byte_size(mem, self.m.member_deco(ty, k as u32).cloned())?;
            lo = lo.min(off);
            hi = hi.max(u64::from(off).saturating_add(size));
        }
        let hi = u32::try_from(hi).map_err(|_| self.invalid("push-constant block past 4 GiB"))?;
        Ok((if lo == u32::MAX { 0 } else { lo }, hi))
    }

    /// Size in bytes of a member with an explicit layout (64-bit: the
    /// decorations of a malformed module can ask for more than 4 GiB).
    fn byte_size(&mut self, ty: u32, decos: Option<Decos>) -> Result<u64, Error> {
        Ok(match self.ty(ty)?.clone() {
            Ty::Vector { elem, n } => u64::from(n).saturating_mul(self.byte_size(elem, None)?),
            Ty::Matrix { column, n } => {
                let stride = u64::from(decos.as_ref().and_then(|d| d.matrix_stride).unwrap_or(16));
                let rows = match self.ty(column)? {
                    Ty::Vector { n, .. } => u64::from(*n),
                    _ => 1,
                };
                let n = u64::from(n);
                if decos.as_ref().is_some_and(|d| d.row_major) {
                    stride * (rows - 1) + 4 * n
                } else {
                    stride * (n - 1) + 4 * rows
                }
            }
            Ty::Array { elem, len } => {
                let n = crate::consts::array_len(&self.c.values, len)
                    .map_err(|e| self.unsupported(e))?;
                let stride = u64::from(self.m.deco(ty).and_then(|d| d.array_stride).unwrap_or(0));
                if n == 0 {
                    0
                } else {
                    (stride * (u64::from(n) - 1)).saturating_add(self.byte_size(elem, decos)?)
                }
            }
            Ty::Struct { members } => {
                let mut hi = 0;
                for (k, &mem) in members.iter().enumerate() {
                    let d = self.m.member_deco(ty, k as u32).cloned();
                    let off = d.as_ref().and_then(|d| d.offset).unwrap_or(0);
                    hi = hi.max(u64::from(off).saturating_add(self.byte_size(mem, d)?));
                }
                hi
            }
            Ty::Int { bits, .. } | Ty::Float { bits } => u64::from(bits / 8),
            Ty::Bool => 4,
            _ => 0,
        })
    }

    /// Inputs and outputs: one table entry per scalar leaf.
    fn declare_io(&mut self, var: u32, pointee: u32, input: bool) -> Result<(), Error> {
        let decos = self.m.deco(var).cloned().unwrap_or_default();
        let mut leaves = Vec::new();
        let mut records = Vec::new();
        let is_block = matches!(self.ty(pointee)?, Ty::Struct { .. })
            && (self.m.deco(pointee).is_some_and(|d| d.block)
                || decos.location.is_none() && decos.builtin.is_none());
        if is_block {
            let Ty::Struct { members } = self.ty(pointee)?.clone() else {
                unreachable!("checked above")
            };
            let mut location = decos.location.unwrap_or(0);
            for (k, &mem) in members.iter().enumerate() {
                let md = self
                    .m
                    .member_deco(pointee, k as u32)
                    .cloned()
                    .unwrap_or_default();
                let merged = Decos {
                    location: md.location.or(Some(location)),
                    flat: md.flat || decos.flat,
                    noperspective: md.noperspective || decos.noperspective,
                    centroid: md.centroid || decos.centroid,
                    sample: md.sample || decos.sample,
                    ..md.clone()
                };
                let start = leaves.len();
                let used = self.io_walk(mem, &merged, input, &mut leaves)?;
                let name = self.m.member_names.get(&(pointee, k as u32)).cloned();
                location = merged.location.unwrap_or(0).saturating_add(used);
                records.push((name, merged, mem, start, used));
            }
        } else {
            let start = leaves.len();
            let used = self.io_walk(pointee, &decos, input, &mut leaves)?;
            records.push((
                self.m.names.get(&var).cloned(),
                decos.clone(),
                pointee,
                start,
                used,
            ));
        }
        for (name, d, ty, start, used) in records {
            let end = leaves.len();
            let first: Option<&IoLeaf> = leaves.get(start);
            let tys = self.leaf_types(ty)?;
            let Some(first) = first else { continue };
            let varying = Varying {
                name,
                location: if d.builtin.is_some() {
                    None
                } else {
                    d.location
                },
                component: d.component.unwrap_or(0),
                locations: used,
                scalar: tys.first().map_or("f32".into(), |t| t.to_string()),
                lanes: match self.ty(ty)? {
                    Ty::Vector { n, .. } => *n,
                    Ty::Matrix { column, .. } => match self.ty(*column)? {
                        Ty::Vector { n, .. } => *n,
                        _ => 1,
                    },
                    _ => 1,
                },
                interpolation: (input && self.stage == Stage::Fragment && d.builtin.is_none())
                    .then(|| {
                        match first.interp.mode {
                            InterpMode::Flat => "flat",
                            InterpMode::Smooth => "smooth",
                            InterpMode::NoPerspective => "noperspective",
                        }
                        .to_string()
                    }),
                sampling: match first.interp.loc {
                    InterpLoc::Center => None,
                    InterpLoc::Centroid => Some("centroid".into()),
                    InterpLoc::Sample => Some("sample".into()),
                },
                builtin: d.builtin.map(|b| format!("{b:?}")),
                slot: first.slot,
            };
            let _ = end;
            if input {
                self.iface.inputs.push(varying);
            } else {
                self.iface.outputs.push(varying);
            }
        }
        if input {
            let first = self.inputs.len();
            self.inputs.extend(leaves);
            self.vars.insert(var, Storage::Input { first });
        } else {
            let first = self.outputs.len();
            let tys = self.leaf_types(pointee)?;
            for (leaf, &t) in leaves.into_iter().zip(tys.iter()) {
                let v = self.ssa.new_var(t);
                let cur = self.b.current_block();
                let z = self.constant(t, 0);
                self.ssa.write(v, cur, z);
                self.outputs.push((v, leaf, false));
            }
            self.vars.insert(var, Storage::Output { first });
        }
        Ok(())
    }

    /// Append the leaves of an I/O value of type `ty`; returns the locations used.
    fn io_walk(
        &mut self,
        ty: u32,
        d: &Decos,
        input: bool,
        out: &mut Vec<IoLeaf>,
    ) -> Result<u32, Error> {
        let interp = if input && self.stage == Stage::Fragment {
            Interp {
                mode: if d.flat {
                    InterpMode::Flat
                } else if d.noperspective {
                    InterpMode::NoPerspective
                } else {
                    InterpMode::Smooth
                },
                loc: if d.sample {
                    InterpLoc::Sample
                } else if d.centroid {
                    InterpLoc::Centroid
                } else {
                    InterpLoc::Center
                },
            }
        } else {
            Interp::FLAT
        };
        let location = d.location.unwrap_or(0);
        let component = d.component.unwrap_or(0);
        let tys = self.leaf_types(ty)?;
        if let Some(b) = d.builtin {
            for k in 0..tys.len() as u32 {
                let slot = if input { None } else { builtin_slot(b, k) };
                if !input && slot.is_none() {
                    return Err(self.unsupported(format!("built-in output {b:?}")));
                }
                out.push(IoLeaf {
                    slot: slot.map(|s| s.0),
                    comp: slot.map_or(0, |s| s.1),
                    interp,
                    builtin: Some(b),
                    element: k,
                });
            }
            return Ok(0);
        }
        let lanes_per_location = match self.ty(ty)?.clone() {
            Ty::Vector { n, .. } => n,
            Ty::Matrix { column, .. } => match self.ty(column)? {
                Ty::Vector { n, .. } => *n,
                _ => 1,
            },
            Ty::Array { elem, .. } => match self.ty(elem)?.clone() {
                Ty::Vector { n, .. } => n,
                Ty::Matrix { column, .. } => match self.ty(column)? {
                    Ty::Vector { n, .. } => *n,
                    _ => 1,
                },
                Ty::Struct { .. } | Ty::Array { .. } => {
                    return Err(self.unsupported("arrays of structs or arrays as shader I/O"));
                }
                _ => 1,
            },
            Ty::Struct { .. } => return Err(self.unsupported("nested structs as shader I/O")),
            _ => 1,
        };
        let n = tys.len() as u32;
        let locations = n.div_ceil(lanes_per_location);
        for k in 0..n {
            let loc = location.saturating_add(k / lanes_per_location);
            let comp = component.saturating_add(k % lanes_per_location);
            if loc > 31 || comp > 3 {
                return Err(self.unsupported(format!(
                    "location {loc} component {comp} (at most 32 locations of 4)"
                )));
            }
            out.push(IoLeaf {
                slot: Some(loc as u16),
                comp: comp as u8,
                interp,
                builtin: None,
                element: k,
            });
        }
        Ok(locations)
    }

    /// A built-in input: a system value, or a varying slot for the few
    /// built-ins the previous stage writes.
    pub(super) fn builtin_input(&mut self, leaf: IoLeaf, ty: Type) -> Result<Value, Error> {
        use lathe_ir::Sysval as S;
        let b = leaf.builtin.unwrap_or(BuiltIn::Position);
        let sysval = match b {
            BuiltIn::FragCoord => S::FragCoord,
            BuiltIn::FrontFacing => S::FrontFacing,
            BuiltIn::SampleId => S::SampleId,
            BuiltIn::SamplePosition => S::SamplePos,
            BuiltIn::SampleMask => S::SampleMaskIn,
            BuiltIn::PointCoord => S::PointCoord,
            BuiltIn::HelperInvocation => S::HelperInvocation,
            BuiltIn::VertexIndex => S::VertexIndex,
            BuiltIn::InstanceIndex => S::InstanceIndex,
            BuiltIn::BaseVertex => S::BaseVertex,
            BuiltIn::BaseInstance => S::BaseInstance,
            BuiltIn::ViewIndex => S::ViewIndex,
            BuiltIn::LocalInvocationId => S::LocalInvocationId,
            BuiltIn::GlobalInvocationId => S::GlobalInvocationId,
            BuiltIn::WorkgroupId => S::WorkgroupId,
            BuiltIn::NumWorkgroups => S::NumWorkgroups,
            BuiltIn::LocalInvocationIndex => S::LocalInvocationIndex,
            BuiltIn::PrimitiveId
            | BuiltIn::Layer
            | BuiltIn::ViewportIndex
            | BuiltIn::ClipDistance
            | BuiltIn::CullDistance
                if self.stage == Stage::Fragment =>
            {
                let Some((slot, comp)) = builtin_slot(b, leaf.element) else {
                    return Err(self.unsupported(format!("built-in input {b:?}")));
                };
                return Ok(self.b.load_input(slot, comp, Interp::FLAT, ty));
            }
            _ => return Err(self.unsupported(format!("built-in input {b:?}"))),
        };
        if leaf.element >= sysval.comps() as u32 {
            return Err(self.unsupported(format!("component {} of built-in {b:?}", leaf.element)));
        }
        Ok(self.b.load_sysval(sysval, leaf.element as u8, ty))
    }
}
