//! Shader I/O slot numbers of `load_input` / `store_output`.
//!
//! Slots `0..=31` are user locations (`layout(location = N)`); built-in
//! inputs and outputs are slots `64..`, named here. The frontend, the
//! varying linker and the backends agree on these numbers. The text form
//! writes built-in slots by name (`slot=pos`, `slot=tex3`,
//! `slot=frag_depth`) and user locations as numbers.

/// The last user location.
pub const MAX_USER: u16 = 31;

pub const POS: u16 = 64;
pub const PSIZ: u16 = 65;
pub const CLIP_DIST0: u16 = 66;
pub const CLIP_DIST1: u16 = 67;
pub const CULL_DIST0: u16 = 68;
pub const CULL_DIST1: u16 = 69;
pub const LAYER: u16 = 70;
pub const VIEWPORT: u16 = 71;
pub const PRIMITIVE_ID: u16 = 72;
pub const COL0: u16 = 73;
pub const COL1: u16 = 74;
pub const BFC0: u16 = 75;
pub const BFC1: u16 = 76;
pub const FOGC: u16 = 77;
/// `TEX0 + k` for `k` in `0..8`.
pub const TEX0: u16 = 78;
pub const TEX7: u16 = 85;
pub const FRAG_DEPTH: u16 = 96;
pub const SAMPLE_MASK: u16 = 97;
pub const FRAG_STENCIL: u16 = 98;

/// Named built-in slots with their text spellings.
const NAMED: [(u16, &str); 25] = [
    (POS, "pos"),
    (PSIZ, "psiz"),
    (CLIP_DIST0, "clip_dist0"),
    (CLIP_DIST1, "clip_dist1"),
    (CULL_DIST0, "cull_dist0"),
    (CULL_DIST1, "cull_dist1"),
    (LAYER, "layer"),
    (VIEWPORT, "viewport"),
    (PRIMITIVE_ID, "primitive_id"),
    (COL0, "col0"),
    (COL1, "col1"),
    (BFC0, "bfc0"),
    (BFC1, "bfc1"),
    (FOGC, "fogc"),
    (TEX0, "tex0"),
    (TEX0 + 1, "tex1"),
    (TEX0 + 2, "tex2"),
    (TEX0 + 3, "tex3"),
    (TEX0 + 4, "tex4"),
    (TEX0 + 5, "tex5"),
    (TEX0 + 6, "tex6"),
    (TEX7, "tex7"),
    (FRAG_DEPTH, "frag_depth"),
    (SAMPLE_MASK, "sample_mask"),
    (FRAG_STENCIL, "frag_stencil"),
];

/// The text spelling of a built-in slot, `None` for user locations and
/// unnamed numbers.
pub fn name(slot: u16) -> Option<&'static str> {
    NAMED.iter().find(|&&(s, _)| s == slot).map(|&(_, n)| n)
}

/// The slot a built-in name stands for.
pub fn from_name(text: &str) -> Option<u16> {
    NAMED.iter().find(|&&(_, n)| n == text).map(|&(s, _)| s)
}

/// A slot is a user location or a named built-in.
pub fn is_valid(slot: u16) -> bool {
    slot <= MAX_USER || name(slot).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_name_round_trips_and_users_are_unnamed() {
        let mut named = 0;
        for slot in 0..=u16::MAX {
            if let Some(n) = name(slot) {
                assert!(slot >= 64);
                assert_eq!(from_name(n), Some(slot));
                named += 1;
            }
        }
        assert_eq!(named, 25);
        assert_eq!(name(TEX0 + 3), Some("tex3"));
        assert_eq!(from_name("frag_depth"), Some(98 - 2));
        assert!(is_valid(31) && !is_valid(32) && !is_valid(63) && is_valid(85));
    }
}
