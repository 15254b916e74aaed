//! Step 1 of the design: which varying slots may be optimised, and how.
//!
//! Slot numbers are the IR's ([`lathe_ir::slot`]): `0..=31` are user
//! locations (the design's VARn), built-ins start at 64.

/// Built-in varying slots: `lathe_ir::slot`, plus the VARn count.
pub mod slot {
    pub use lathe_ir::slot::*;
    /// User locations (VARn) are `0..VAR_COUNT`.
    pub const VAR_COUNT: u16 = MAX_USER + 1;
}

/// How the pass may treat one varying slot of a (vertex, fragment) pair.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Class {
    /// VARn and FOGC: every optimisation, compaction into VARn.
    Var,
    /// TEXn: removed when dead, otherwise untouched (point-sprite coordinate
    /// replacement may overwrite `.xy`, and makes `.zw` read `(0, 1)`).
    Tex,
    /// COLn (`back: false`) or BFCn (`back: true`), `n` in 0..=1: constants
    /// only within [0, 1] (vertex colour clamping), deduplicated only among
    /// colours (flat shading, provoking vertex, two-sided selection).
    Color { back: bool, n: u16 },
    /// A system-value output (position, point size, clip and cull
    /// distances, layer, viewport): never removed, but demoted to
    /// "no varying" when the fragment shader does not read it.
    Sysval,
    /// Anything else (other built-ins, unknown numbers, fragment-side
    /// system values such as the primitive ID): left alone.
    Fixed,
}

/// The class of a slot as written by the vertex shader.
pub(crate) fn output_class(s: u16) -> Class {
    use slot::*;
    match s {
        0..VAR_COUNT | FOGC => Class::Var,
        POS | PSIZ | CLIP_DIST0..=CULL_DIST1 | LAYER | VIEWPORT => Class::Sysval,
        COL0 | COL1 => Class::Color {
            back: false,
            n: s - COL0,
        },
        BFC0 | BFC1 => Class::Color {
            back: true,
            n: s - BFC0,
        },
        TEX0..=TEX7 => Class::Tex,
        _ => Class::Fixed,
    }
}

/// The class of a slot as read by the fragment shader. The position and
/// the primitive ID are produced by the rasteriser there, not the vertex
/// shader.
pub(crate) fn input_class(s: u16) -> Class {
    match s {
        slot::POS | slot::PSIZ | slot::PRIMITIVE_ID => Class::Fixed,
        _ => output_class(s),
    }
}

/// Constants and uniform expressions stored to these outputs are always
/// propagated into the fragment shader (the store stays as a system value).
pub(crate) fn always_propagated(s: u16) -> bool {
    matches!(
        s,
        slot::CLIP_DIST0..=slot::CULL_DIST1 | slot::LAYER | slot::VIEWPORT
    )
}

/// The front-colour slot a back colour is selected into.
pub(crate) fn front_of(s: u16) -> u16 {
    match output_class(s) {
        Class::Color { back: true, n } => slot::COL0 + n,
        _ => s,
    }
}

/// The back-colour slot paired with a front colour.
pub(crate) fn back_of(s: u16) -> Option<u16> {
    match output_class(s) {
        Class::Color { back: false, n } => Some(slot::BFC0 + n),
        _ => None,
    }
}

/// The conventional name of a slot (`VAR3`, `POS`, `TEX0`, ...).
pub fn slot_name(s: u16) -> String {
    match lathe_ir::slot::name(s) {
        _ if s < slot::VAR_COUNT => format!("VAR{s}"),
        Some(name) => name.to_uppercase(),
        None => format!("SLOT{s}"),
    }
}
