//! Property tests over arbitrary valid ir3 instructions (a leaf valid at
//! the generation, random bits in every field): decoding finds the leaf the
//! word was built from, and text round-trips to a fixed point.

use arbitrary::{Arbitrary, Unstructured};
use lathe_adreno::ir3::fuzzing::ArbitraryInstr;
use lathe_adreno::ir3::{assemble, decode_leaf, disassemble};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn decode_then_text_round_trips(bytes in proptest::collection::vec(any::<u8>(), 32)) {
        let mut u = Unstructured::new(&bytes);
        let Ok(instr) = ArbitraryInstr::arbitrary(&mut u) else { return Ok(()); };
        let g = instr.generation;
        // decode(encode(i)) == i: the word decodes to the leaf it was built
        // from, unless it is one of the words two leaves of Mesa's
        // description share (ldib.b/stib.b offsets vs. a3xx-layout cat6),
        // which decode as no match.
        let decoded = decode_leaf(instr.word, g);
        prop_assert!(decoded.is_none() || decoded == Some(instr.leaf));
        if decoded.is_none() { return Ok(()); }
        let Ok(text) = disassemble(instr.word, g) else { return Ok(()); };
        let word = assemble(&text, g).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(disassemble(word, g).ok(), Some(text.clone()));
        prop_assert_eq!(assemble(&text, g).ok(), Some(word));
    }
}
