//! The flow field every Valhall instruction carries, and the dependency
//! slots, as the spec states them: which flow value waits on which slots
//! (`flow_waits(F)`), which one ends the thread (`flow_ends(F)`) and which
//! marks a reconvergence point (`flow_reconverges(F)`), all named
//! expressions of `isa/specs/mali/semantics.isa` that the simulator's own
//! `instruction` semantics read. The general slots, which the compiler
//! hands out to message instructions, are those one flow value waits on
//! alone (0, 1 and 2; slots 6 and 7 are only waited on together with
//! others, for ATEST and barriers).

use super::generated::Spec;
use lathe_isa::machine::MachineSpec;

/// The modifier key of the flow field (the field `FLOW` of every
/// instruction, lower-cased as in the machine IR's text form).
pub(crate) const FLOW: &str = "flow";
/// The modifier key of a message instruction's dependency slot.
pub(crate) const SLOT: &str = "slot";

/// Flow values and slots, read once from the spec.
#[derive(Clone, Debug)]
pub(crate) struct FlowFacts {
    /// Every flow value with the slots it waits on (bit N: slot N).
    waits: Vec<(u64, u32)>,
    /// The flow value of an instruction that neither waits nor ends.
    pub none: u64,
    /// The value ending the thread after the instruction.
    pub end: u64,
    /// The value marking a reconvergence point.
    pub reconverge: u64,
    /// The slots message instructions are given in turn.
    pub general: Vec<u8>,
}

/// Why the spec does not describe the flow field as legalisation needs.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the Valhall spec does not say {0}")]
pub struct MissingFact(pub &'static str);

impl FlowFacts {
    /// Reads the facts at `generation`.
    pub(crate) fn new(generation: u32) -> Result<FlowFacts, MissingFact> {
        let isa = Spec::isa();
        let values: Vec<u64> = isa
            .enums
            .iter()
            .find(|e| e.name == FLOW)
            .ok_or(MissingFact("which values the flow field takes (enum flow)"))?
            .values
            .iter()
            .map(|(v, _, _)| *v)
            .collect();
        let call = |name: &'static str, v: u64| {
            isa.call(name, &[v as i64], generation)
                .ok_or(MissingFact(name))
        };
        let mut waits = Vec::new();
        let (mut none, mut end, mut reconverge) = (None, None, None);
        for &v in &values {
            let mask = call("flow_waits", v)? as u32;
            let ends = call("flow_ends", v)? != 0;
            let reconverges = call("flow_reconverges", v)? != 0;
            waits.push((v, mask));
            if ends {
                end.get_or_insert(v);
            } else if reconverges {
                reconverge.get_or_insert(v);
            } else if mask == 0 {
                none.get_or_insert(v);
            }
        }
        let mut general: Vec<u8> = waits
            .iter()
            .filter(|(_, m)| m.count_ones() == 1)
            .map(|(_, m)| m.trailing_zeros() as u8)
            .collect();
        general.sort_unstable();
        general.dedup();
        if general.is_empty() {
            return Err(MissingFact("a flow value that waits on one slot alone"));
        }
        Ok(FlowFacts {
            waits,
            none: none.ok_or(MissingFact("a flow value that does nothing"))?,
            end: end.ok_or(MissingFact("a flow value that ends the thread"))?,
            reconverge: reconverge.ok_or(MissingFact("a reconverging flow value"))?,
            general,
        })
    }

    /// The flow value waiting on at least the slots in `mask` and as few
    /// others as possible; `None` when no value covers them.
    pub(crate) fn wait(&self, mask: u32) -> Option<u64> {
        if mask == 0 {
            return Some(self.none);
        }
        self.waits
            .iter()
            .filter(|(_, m)| m & mask == mask)
            .min_by_key(|(v, m)| (m.count_ones(), *v))
            .map(|(v, _)| *v)
    }

    /// The slots flow value `flow` waits on.
    pub(crate) fn waits_of(&self, flow: u64) -> u32 {
        self.waits
            .iter()
            .find(|(v, _)| *v == flow)
            .map_or(0, |(_, m)| *m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_names_three_general_slots_and_the_flow_values_mesa_prints() {
        for generation in [9, 10] {
            let f = FlowFacts::new(generation).unwrap();
            assert_eq!(f.general, [0, 1, 2]);
            let name = |v: u64| {
                Spec::isa()
                    .enums
                    .iter()
                    .find(|e| e.name == FLOW)
                    .and_then(|e| e.display(v))
                    .unwrap()
                    .to_string()
            };
            assert_eq!(name(f.none), "");
            assert_eq!(name(f.end), ".end");
            assert_eq!(name(f.reconverge), ".reconverge");
            assert_eq!(name(f.wait(0b101).unwrap()), ".wait02");
            assert_eq!(name(f.wait(0b10).unwrap()), ".wait1");
            // Slot 6 only comes with 0, 1 and 2; slot 7 with everything.
            assert_eq!(name(f.wait(0x40).unwrap()), ".wait0126");
            assert_eq!(name(f.wait(0x80).unwrap()), ".wait");
            assert_eq!(f.waits_of(f.wait(0b11).unwrap()), 0b11);
            assert_eq!(f.wait(0x100), None);
        }
    }
}
