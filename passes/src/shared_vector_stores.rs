//! One store per run of shared-memory words: the one-word `store_shared`s
//! of a block that write at constant distances from one base address
//! (`base + 4k`), with no other shared-memory access between them,
//! become one vector `store_shared` of up to four consecutive words, for
//! hardware whose shared store reads consecutive registers (ir3's `stl`
//! of up to four words). WGSL's zero-initialisation of a workgroup
//! `array<vec3f, N>` stores each vector's three words this way. The
//! merged store takes the place of the run's last store: the stores it
//! moves past write other words of the same base, so nothing can read or
//! write between them. Runs that store the same values share one
//! `collect`.
//!
//! ```
//! use lathe_passes::shared_vector_stores::merge_shared_stores;
//!
//! let text = "shader compute\nb0:\n  %0:u32 = load_sysval sv=local_invocation_index\n  %1:u32 = const 4\n  %2:u32 = iadd %0, %1\n  %3:f32 = const 1.0\n  store_shared %2, %3\n  store_shared %0, %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! assert!(merge_shared_stores(&mut shader));
//! let printed = lathe_ir::print(&shader);
//! // Words 0 and 1 from the base, in one store.
//! assert!(printed.contains(":f32x2 = collect %"), "{printed}");
//! assert!(printed.contains("store_shared %0, %"), "{printed}");
//! lathe_ir::validate(&shader).unwrap();
//! ```

use std::collections::{HashMap, HashSet};

use crate::manager::{Pass, PassFailure};
use crate::ssbo_vector_loads::split_offset;
use lathe_ir::{BarrierClass, GenericOp, Inst, Op, Scalar, Shader, Type, Value};

/// The `shared-vector-stores` pass (generic IR only).
pub struct SharedVectorStores;

impl Pass<GenericOp> for SharedVectorStores {
    fn name(&self) -> &'static str {
        "shared-vector-stores"
    }

    fn run(&mut self, shader: &mut Shader<'_, GenericOp>) -> Result<bool, PassFailure> {
        Ok(merge_shared_stores(shader))
    }
}

/// Words one store writes at most.
const MAX_WORDS: u32 = 4;

/// What the stores of a window share: base address (none for constant
/// addresses), value kind.
type Key = (Option<Value>, Scalar);

/// A store of a window: the instruction, its byte distance from the
/// base, its address and its value.
type Member = (Inst, u32, Value, Value);

/// Merges the one-word `store_shared`s of each block that write nearby
/// words; returns whether anything changed.
pub fn merge_shared_stores(shader: &mut Shader<'_, GenericOp>) -> bool {
    let mut changed = false;
    for b in shader.layout().to_vec() {
        // Windows: stores of one base and kind with no other shared-memory
        // access between them, in block order.
        let mut windows: Vec<Vec<Member>> = Vec::new();
        let mut open: Option<(Key, Vec<Member>)> = None;
        for &i in shader.block_insts(b) {
            let store = scalar_store(shader, i);
            let touches = shader
                .inst(i)
                .op
                .effects()
                .barrier
                .intersects(BarrierClass::SHARED_R.union(BarrierClass::SHARED_W));
            if !touches && store.is_none() {
                continue;
            }
            let key = store.map(|(base, _, _, value)| (base, shader.value_type(value).scalar));
            let same = matches!((&open, key), (Some((k, _)), Some(key)) if *k == key);
            if !same && let Some((_, w)) = open.take() {
                windows.push(w);
            }
            if let (Some(key), Some((base_distance, address, value))) =
                (key, store.map(|(_, d, a, v)| (d, a, v)))
            {
                open.get_or_insert_with(|| (key, Vec::new())).1.push((
                    i,
                    base_distance,
                    address,
                    value,
                ));
            }
        }
        windows.extend(open.map(|(_, w)| w));
        let position: HashMap<Inst, usize> = (shader.block_insts(b).iter().enumerate())
            .map(|(k, &i)| (i, k))
            .collect();
        // Each run's stores, and the last of them, which becomes the merged
        // store; in block order of that last store, so a shared collect is
        // made before its first reader.
        let mut merged: Vec<(Inst, Vec<Member>)> = Vec::new();
        for mut window in windows {
            window.sort_by_key(|m| (m.1, position[&m.0]));
            // A word stored twice: the later store must stay later.
            if window.windows(2).any(|w| w[0].1 == w[1].1) {
                continue;
            }
            for run in runs(&window).into_iter().filter(|r| r.len() > 1) {
                let last = run.iter().map(|m| m.0).max_by_key(|i| position[i]);
                merged.extend(last.map(|l| (l, run.to_vec())));
            }
        }
        merged.sort_by_key(|(last, _)| position[last]);
        // The collects made in this block, by the values they group.
        let mut collects: HashMap<Vec<Value>, Value> = HashMap::new();
        let mut before: HashMap<Inst, Inst> = HashMap::new();
        let mut removed: HashSet<Inst> = HashSet::new();
        for (last, run) in merged {
            let values: Vec<Value> = run.iter().map(|m| m.3).collect();
            let vector = match collects.get(&values) {
                Some(&v) => v,
                None => {
                    let scalar = shader.value_type(values[0]).scalar;
                    let ty = Type::vector(scalar, values.len() as u8);
                    let c = shader.create_inst(Op::Collect, &values, &[], None, Some(ty));
                    before.insert(last, c);
                    let v = shader
                        .inst(c)
                        .result
                        .unwrap_or_else(|| unreachable!("made with a result"));
                    collects.insert(values, v);
                    v
                }
            };
            // The lowest word's address, read by a store at or before `last`.
            shader.set_args(last, &[run[0].2, vector]);
            removed.extend(run.iter().map(|m| m.0).filter(|&i| i != last));
        }
        if !before.is_empty() || !removed.is_empty() {
            changed = true;
            shader.retain_insts(b, |i, _| !removed.contains(&i));
            shader.insert_before(&before);
        }
    }
    changed
}

/// The runs of `stores` (sorted by distance, each word once) one store
/// can write: consecutive words, up to [`MAX_WORDS`].
fn runs(stores: &[Member]) -> Vec<&[Member]> {
    let mut out = Vec::new();
    let mut start = 0;
    for k in 1..=stores.len() {
        let ends = k == stores.len()
            || stores[k - 1].1.checked_add(4) != Some(stores[k].1)
            || (stores[k].1 - stores[start].1) / 4 >= MAX_WORDS;
        if ends {
            out.push(&stores[start..k]);
            start = k;
        }
    }
    out
}

/// A one-word `store_shared`: its base (none for a constant address),
/// distance from it, address and value.
fn scalar_store(
    shader: &Shader<'_, GenericOp>,
    i: Inst,
) -> Option<(Option<Value>, u32, Value, Value)> {
    let d = shader.inst(i);
    let (Op::Opcode(GenericOp::StoreShared), &[address, value]) = (d.op, &d.args[..]) else {
        return None;
    };
    if !shader.value_type(value).is_scalar() {
        return None;
    }
    let (base, distance) = split_offset(shader, address);
    Some((base, distance, address, value))
}
