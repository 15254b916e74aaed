//! Property tests for the generated Valhall instruction set: structure-aware
//! random instructions round-trip through text, decoding never panics, and
//! operand fields land in the bits the reference gives them.

use arbitrary::{Arbitrary, Unstructured};
use lathe_mali::valhall::fuzzing::ArbitraryWord;
use lathe_mali::valhall::{Arch, Error, Instr, Opcode, assemble, decode, disassemble};
use proptest::prelude::*;

fn arch() -> impl Strategy<Value = Arch> {
    prop_oneof![Just(Arch::V9), Just(Arch::V10)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// A word built from an opcode's pattern decodes to that opcode; if it
    /// displays, its text assembles to a word with the same text, and that
    /// word is a fixed point of assembling.
    #[test]
    fn arbitrary_words_round_trip_through_text(bytes in proptest::collection::vec(any::<u8>(), 16)) {
        let mut u = Unstructured::new(&bytes);
        let Ok(ArbitraryWord { arch, opcode, word }) = ArbitraryWord::arbitrary(&mut u) else {
            return Ok(());
        };
        prop_assert_eq!(decode(word, arch).map(|i| i.opcode).ok(), Some(opcode));
        let Ok(text) = disassemble(word, arch) else { return Ok(()) };
        let canonical = assemble(&text, arch).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(disassemble(canonical, arch).ok(), Some(text.clone()));
        prop_assert_eq!(assemble(&text, arch).ok(), Some(canonical));
    }

    /// The generated `Arbitrary` only produces instructions that decode to
    /// themselves (`decode(encode(i)) == i`).
    #[test]
    fn generated_arbitrary_instructions_decode_to_themselves(bytes in proptest::collection::vec(any::<u8>(), 16)) {
        let mut u = Unstructured::new(&bytes);
        let Ok(instr) = Instr::arbitrary(&mut u) else { return Ok(()) };
        prop_assert_eq!(Instr::decode(instr.encode(), instr.generation), Some(instr));
    }

    /// Any word either decodes or is reported as a typed error; never a panic.
    #[test]
    fn any_word_decodes_or_is_rejected(word in any::<u64>(), arch in arch()) {
        match disassemble(word, arch) {
            Ok(text) => prop_assert!(!text.is_empty()),
            Err(Error::Undefined { word: w, .. } | Error::Disassemble { word: w, .. }) => prop_assert_eq!(w, word),
            Err(e) => return Err(TestCaseError::fail(e.to_string())),
        }
    }

    /// Register operands: destination in bits 40..=45 (full write mask
    /// 0b11 above it), source in bits 0..=5, `^` sets bit 6.
    #[test]
    fn register_moves_place_their_registers(d in 0u64..64, s in 0u64..64, last in any::<bool>(), arch in arch()) {
        let text = format!("MOV.i32 r{d}, r{s}{}", if last { "^" } else { "" });
        let word = assemble(&text, arch).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(word, 0x0091_0000_0000_0000 | (0xc0 | d) << 40 | u64::from(last) << 6 | s);
        prop_assert_eq!(decode(word, arch).map(|i| i.opcode).ok(), Some(Opcode::MovI32));
    }

    /// Uniform `uN`: the low six bits in the source slot (type 0b10), the
    /// rest in the FAU page (bits 57..=58).
    #[test]
    fn uniforms_split_into_slot_and_page(n in 0u64..256, arch in arch()) {
        let text = format!("MOV.i32 r1, u{n}");
        let word = assemble(&text, arch).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(word & 0xff, 0x80 | (n & 63));
        prop_assert_eq!((word >> 57) & 3, n >> 6);
        prop_assert_eq!(disassemble(word, arch).ok(), Some(text));
    }

    /// Staging tuples: the base register in bits 40..=45, the count in
    /// 33..=35; odd bases of tuples longer than one are rejected.
    #[test]
    fn staging_tuples_carry_base_and_count(base in 0u64..56, count in 1u64..=4, arch in arch()) {
        let regs: Vec<String> = (base..base + count).map(|r| format!("r{r}")).collect();
        let text = format!("STORE.i32.slot0 @{}, r0^, offset:0", regs.join(":"));
        match assemble(&text, arch) {
            Ok(word) => {
                prop_assert!(count == 1 || base % 2 == 0);
                prop_assert_eq!((word >> 40) & 0x3f, base);
                prop_assert_eq!((word >> 33) & 7, count);
                prop_assert_eq!(disassemble(word, arch).ok(), Some(text));
            }
            Err(e) => {
                prop_assert!(count > 1 && base % 2 == 1, "{}: {}", text, e);
                prop_assert!(e.to_string().contains("even register"));
            }
        }
    }
}
