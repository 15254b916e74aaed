//! Typed access to the per-instruction metadata the spec records: the
//! execution unit and whether the instruction is message-passing.

use lathe_isa::ast::MetaRef;

use super::Opcode;

/// The execution unit an instruction is issued to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// Fused multiply-add arithmetic unit.
    Fma,
    /// Conversion / integer arithmetic unit.
    Cvt,
    /// Special-function unit (transcendentals, shifts, cross-lane).
    Sfu,
    /// Load/store unit.
    Ls,
    /// Varying unit.
    V,
    /// Texture unit.
    T,
    /// Fused varying + texture.
    Vt,
    /// Fixed-function messages (blend, tilebuffer, barrier, alpha test).
    Other,
}

impl Unit {
    /// The unit `opcode` runs on, from its `unit` metadata.
    pub fn of(opcode: Opcode) -> Unit {
        match opcode.meta("unit") {
            Some(MetaRef::Ident(u)) => match u {
                "FMA" => Unit::Fma,
                "CVT" => Unit::Cvt,
                "SFU" => Unit::Sfu,
                "LS" => Unit::Ls,
                "V" => Unit::V,
                "T" => Unit::T,
                "VT" => Unit::Vt,
                _ => Unit::Other,
            },
            _ => Unit::Other,
        }
    }

    /// Whether instructions on this unit are arithmetic (results
    /// interlocked) rather than message-passing (results signalled through
    /// a dependency slot).
    pub fn is_arithmetic(self) -> bool {
        matches!(self, Unit::Fma | Unit::Cvt | Unit::Sfu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::valhall::{LatencyClass, OPCODES};

    #[test]
    fn units_match_the_reference_for_sampled_opcodes() {
        assert_eq!(Unit::of(Opcode::FaddF32), Unit::Fma);
        assert_eq!(Unit::of(Opcode::IaddU32), Unit::Cvt);
        assert_eq!(Unit::of(Opcode::FrcpF32), Unit::Sfu);
        assert_eq!(Unit::of(Opcode::LoadI32), Unit::Ls);
        assert_eq!(Unit::of(Opcode::LdVarBufImmF32), Unit::V);
        assert_eq!(Unit::of(Opcode::TexFetch), Unit::T);
        assert_eq!(Unit::of(Opcode::VarTexSingle), Unit::Vt);
        assert_eq!(Unit::of(Opcode::Blend), Unit::Other);
    }

    #[test]
    fn every_opcode_has_a_unit_and_a_consistent_latency_class() {
        for info in &OPCODES {
            let unit = Unit::of(info.opcode);
            assert!(
                info.opcode.meta("unit").is_some(),
                "{} has no unit",
                info.name
            );
            // Control instructions on the CVT unit are arithmetic too.
            let expected = if unit.is_arithmetic() {
                LatencyClass::Alu
            } else {
                LatencyClass::Message
            };
            assert_eq!(info.latency_class, Some(expected), "{}", info.name);
        }
    }
}
