//! Built-in I/O slots (the numbering agreed with `lathe-ir`; replaced by
//! `lathe_ir::slot` once it lands there).
pub const POS: u16 = 64;
pub const PSIZ: u16 = 65;
pub const CLIP_DIST0: u16 = 66;
pub const CULL_DIST0: u16 = 68;
pub const LAYER: u16 = 70;
pub const VIEWPORT: u16 = 71;
pub const FRAG_DEPTH: u16 = 96;
pub const SAMPLE_MASK: u16 = 97;
