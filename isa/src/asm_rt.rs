//! Run-time support for the assembler `isa!` generates.
//!
//! The generator (`gen_asm`) turns every display template, per leaf and
//! per combination of its `when`s, into a static [`Form`]: the pieces in
//! order with each name already resolved to where its value goes (bit
//! ranges of the word, a sub-encoding tree, a param bound by the caller,
//! or a derived value that is only shown). Mnemonics are found by
//! generated code (a tree of byte matches over the sorted mnemonics, one
//! walk per token; no allocation), so a line only tries the forms whose
//! mnemonic it contains, and a sub-encoding operand only the forms whose
//! text can start with the byte at hand (first-byte sets worked out at
//! expansion time for each call site's binds). Reading a form fills the
//! word directly: literals are compared, flags and enum texts looked up,
//! numbers parsed and inserted into their bit ranges, sub-encoding
//! operands read the same way and placed into their field. A value with
//! only one reading is read on in a loop; only a choice (several
//! readings, sub-encoding forms) recurses and saves the scopes it may
//! have to restore.
//!
//! Bits the text does not show are mostly resolved by facts the generator
//! worked out from the spec: a `when` that must hold (or must not) pins
//! its fields; a shown derived value that reads only unshown bits carries
//! a table of those bits per value (evaluated at expansion time), and one
//! that reads a sub-encoding operand's bits pins them for the values only
//! one assignment shows (`.rck` sets the type to 7); a field
//! plus a constant is inverted; a sub-encoding form whose `when`s test
//! params the caller has already fixed is skipped by a tabulated guard.
//! The rest take their defaults. The word is then confirmed by the
//! generated disassembler with the spec's `check` rules: it must print
//! exactly the text. Only when that fails are the unshown bits varied
//! (bounded). A miss says whether a limit cut the search short (the
//! caller then asks the engine, which also gives the diagnostics) or
//! every reading of every candidate form ran to its end ([`Miss::NoForm`]:
//! no word prints the text, which instruction selection trusts without
//! asking the engine). Nothing here knows about an instruction set.

use crate::format::read_scalar;
use crate::model::FieldType;

/// Most sub-encoding nesting a form can have.
const MAX_NEST: usize = 5;
/// Most unshown bits varied when the default word does not print back,
/// and most words tried for one reading (then other readings get
/// their turn).
const MAX_HIDDEN_BITS: u32 = 16;
const MAX_TRIES_PER_READING: u32 = 8192;
/// Most steps (piece readings) spent on one line before giving up.
const STEP_BUDGET: usize = 40_000;
/// Most readings of one piece considered.
const MAX_READINGS: usize = 12;

/// Why [`assemble`] found no word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// Every reading of every candidate form was followed to its end and
    /// none gave a word that prints the text: no form reads it.
    NoForm,
    /// A limit cut the search short (steps, readings of a piece, nesting,
    /// unshown bits to vary, words tried): a word may exist.
    Limit,
}

/// A numeric value type (the scalar types whose text is a number).
#[derive(Clone, Copy, Debug)]
pub enum Num {
    Uint,
    Int,
    Hex,
    HexUpper,
    Offset,
    Uoffset,
    Float,
    Fixed(u32),
    Branch,
    AbsBranch,
    /// `bool` without a text: `0` or `1`.
    Bool,
}

impl Num {
    fn field_type(self) -> FieldType {
        match self {
            Num::Uint => FieldType::Uint,
            Num::Int => FieldType::Int,
            Num::Hex => FieldType::Hex,
            Num::HexUpper => FieldType::HexUpper,
            Num::Offset => FieldType::Offset,
            Num::Uoffset => FieldType::Uoffset,
            Num::Float => FieldType::Float,
            Num::Fixed(r) => FieldType::Fixed(r),
            Num::Branch => FieldType::Branch,
            Num::AbsBranch => FieldType::AbsBranch,
            Num::Bool => FieldType::Bool(None),
        }
    }
}

/// How a value is read from the text.
#[derive(Clone, Copy, Debug)]
pub enum Read {
    Num(Num),
    /// `bool "text"`: the text when set.
    Flag(&'static str),
    /// `bool_inv "text"`: the text when clear.
    FlagInv(&'static str),
    /// An enum: (value, text), longest text first; a number reads a value
    /// with no text.
    Enum(&'static [(u64, &'static str)]),
}

/// Bit ranges `(low, width)` of a word, least significant part first.
pub type Ranges = &'static [(u32, u32)];
/// One part of a derived value made of fields side by side: `(shift,
/// width, where it goes)`.
pub type Part = (u32, u32, Slot);

/// Where one part of a [`To::Parts`] value goes.
#[derive(Clone, Copy, Debug)]
pub enum Slot {
    /// Bit ranges of the scope's word.
    Field(Ranges),
    /// The caller's field the sub-encoding's param `n` is bound to: the
    /// value's bits from the part's shift up (the part's width is that
    /// field's); bound to anything else, nothing is set.
    Param(u16),
}

/// Where a value read goes: bit ranges `(low, width)` of the scope's word,
/// least significant part first; for a derived value made of fields side
/// by side (a sub-encoding's param among them), each part into its field; or nowhere
/// (any other derived value, which the confirmation checks).
#[derive(Clone, Copy, Debug)]
pub enum To {
    Drop,
    Field(&'static [(u32, u32)]),
    Parts(&'static [Part]),
    /// A field plus a constant: `(constant, field width, field ranges)`.
    Add(i64, u32, Ranges),
    /// A derived value of unshown bits, evaluated at expansion time for
    /// every assignment of them: `(their mask, (value shown, bits))`,
    /// default first; reading a value tries its assignments in order.
    Table(u64, &'static [(u64, u64)]),
    /// A derived value that reads nothing: the only value it shows.
    Const(u64),
    /// A sub-encoding's derived value that reads only its param `n`:
    /// `(value shown, param value)` for every param value below 8;
    /// reading a value sets the caller's field the param is bound to when
    /// that field has at most 3 bits and exactly one of the values it can
    /// hold shows it (else nothing is set and the confirmation decides).
    Param(u16, &'static [(u64, u64)]),
    /// A derived value that reads a sub-encoding operand's bits
    /// (`RCK = TYPE == 7`): `(their mask, (value shown, bits))` for each
    /// value only one assignment of them shows. Reading such a value sets
    /// those bits, and the operand's form leaves them alone (not unshown,
    /// not searched); any other value sets nothing.
    Pin(u64, &'static [(u64, u64)]),
}

/// What a sub-encoding's param is bound to in the caller.
#[derive(Clone, Copy, Debug)]
pub enum Bind {
    /// Not bound (or bound to something that cannot be shown): a form
    /// showing it cannot be read.
    Never,
    /// An item of the caller, read as the caller shows it.
    Item { read: Read, width: u32, to: To },
    /// The caller's own param number `n`.
    Up(u16),
}

/// One piece of a form.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Lit(&'static str),
    Value {
        read: Read,
        width: u32,
        to: To,
        /// A flag whose text what follows it cannot begin with: read
        /// whenever the text has it, without a choice point.
        alone: bool,
    },
    /// The sub-encoding's param number `n`.
    Param(u16),
    /// A sub-encoding operand: the forms of its tree, the field's ranges,
    /// the binds of the tree's params in order, and per form the bytes its
    /// text can start with given those binds (all bytes if it can be
    /// empty or is not known; empty slice: nothing known).
    Sub {
        forms: &'static [Form],
        ranges: &'static [(u32, u32)],
        binds: &'static [Bind],
        firsts: &'static [[u64; 4]],
        /// The caller's default for the operand's unshown bits, if the
        /// field has one.
        default: Option<u64>,
    },
}

/// One leaf with one combination of active `when`s: its template read
/// backwards.
#[derive(Clone, Copy, Debug)]
pub struct Form {
    pub gen_min: u32,
    pub gen_max: u32,
    /// Pattern and `assert` bits, and their values.
    pub fixed_mask: u64,
    pub fixed: u64,
    /// Text an instruction's line must contain (its longest literal of
    /// at least 3 bytes), or empty: a line without it is not tried.
    pub needs: &'static str,
    /// Bits of the fields in scope, and their defaults.
    pub hidden: u64,
    pub defaults: u64,
    /// Of those, the bits that derived values, `when` conditions, checks
    /// and sub-encoding params read: the only ones varied.
    pub search: u64,
    /// For a sub-encoding: params its `when`s test, and which of their
    /// values (each below 8, the first param counting fastest) let this
    /// form be the one shown, as a bit set; empty if nothing is known.
    pub guard: &'static [u16],
    pub allowed: &'static [u64],
    pub ops: &'static [Op],
}

/// Calls its second argument with the forms of every mnemonic that is a
/// prefix of the first.
pub type Lookup = fn(&[u8], &mut dyn FnMut(&'static [u16]));

/// Everything the generated assembler of one ISA knows.
#[derive(Debug)]
pub struct Table {
    /// Instruction forms in the engine's order (leaf, then `when`s).
    pub forms: &'static [Form],
    /// Forms tried for every line (their mnemonic is not a token of its own).
    pub always: &'static [u16],
    /// Calls its second argument with the forms of every mnemonic
    /// (dispatch key) that is a prefix of the first (generated code).
    pub lookup: Lookup,
    /// Per byte: [`IN_KEYS`] if it occurs in mnemonics; [`BEFORE_KEY`] if
    /// some text before a key may end with it (a number before a
    /// mnemonic) and [`LATE_FIRST`] if such a key starts with it: a key is
    /// also looked up after such a byte inside a token.
    pub classes: [u8; 256],
}

/// Byte classes of [`Table::classes`].
pub const IN_KEYS: u8 = 1;
pub const BEFORE_KEY: u8 = 2;
pub const LATE_FIRST: u8 = 4;

/// Whether byte `b` is in `set`.
#[inline]
pub fn in_set(set: &[u64; 4], b: u8) -> bool {
    set[usize::from(b >> 6)] >> (b & 63) & 1 != 0
}

/// Whether a form whose text starts with a byte of `first` (every byte:
/// it may also be empty) can be read at byte `pos` of `text`.
#[inline]
fn can_start(first: &[u64; 4], text: &[u8], pos: usize) -> bool {
    match text.get(pos) {
        Some(&b) => in_set(first, b),
        None => *first == [u64::MAX; 4],
    }
}

/// Most candidate forms kept on the stack; a line with more (none of the
/// specs comes close) tries every form.
const MAX_PICKS: usize = 128;

/// The candidate forms of one line, without heap allocation.
struct Picks {
    ids: [u16; MAX_PICKS],
    len: usize,
    overflow: bool,
}

impl Picks {
    fn extend(&mut self, ids: &[u16]) {
        match self.ids.get_mut(self.len..self.len + ids.len()) {
            Some(dst) => {
                dst.copy_from_slice(ids);
                self.len += ids.len();
            }
            None => self.overflow = true,
        }
    }
}

impl Table {
    /// The forms of every key that is a prefix of `token`, into `out`.
    fn lookups(&self, token: &[u8], out: &mut Picks) {
        (self.lookup)(token, &mut |ids| out.extend(ids));
    }

    /// The forms worth trying for `text`, in the engine's order, into
    /// `out`: those whose mnemonic starts some token of the text (any
    /// prefix of it), and the forms tried for every line.
    fn candidates(&self, text: &str, out: &mut Picks) {
        let b = text.as_bytes();
        let class = |i: usize| self.classes[usize::from(b[i])];
        let mut i = 0;
        while i < b.len() {
            if class(i) & IN_KEYS == 0 {
                i += 1;
                continue;
            }
            let mut end = i + 1;
            while end < b.len() && class(end) & IN_KEYS != 0 {
                if class(end) & LATE_FIRST != 0 && class(end - 1) & BEFORE_KEY != 0 {
                    self.lookups(&b[end..], out);
                }
                end += 1;
            }
            self.lookups(&b[i..end], out);
            i = end;
        }
        out.extend(self.always);
        let ids = &mut out.ids[..out.len];
        ids.sort_unstable();
        let mut n = 0;
        for j in 0..ids.len() {
            if j == 0 || ids[j] != ids[n - 1] {
                ids[n] = ids[j];
                n += 1;
            }
        }
        out.len = n;
    }
}

#[derive(Clone, Copy, Default)]
struct Scope {
    value: u64,
    known: u64,
    hidden: u64,
    defaults: u64,
    search: u64,
    /// Bits of sub-encodings their text left unshown.
    free: u64,
    /// Bits a [`To::Pin`] set: never free.
    pinned: u64,
}

impl Scope {
    fn of(form: &Form) -> Scope {
        Scope {
            value: form.fixed,
            known: form.fixed_mask,
            hidden: form.hidden,
            defaults: form.defaults,
            search: form.search,
            free: 0,
            pinned: 0,
        }
    }

    /// Whether `value` agrees with the known bits under `mask`.
    #[inline(always)]
    fn agrees(&self, mask: u64, value: u64) -> bool {
        (self.value ^ value) & self.known & mask == 0
    }

    /// Sets bits; `false` if they contradict bits already known.
    #[inline(always)]
    fn set(&mut self, mask: u64, value: u64) -> bool {
        if (self.value ^ value) & self.known & mask != 0 {
            return false;
        }
        self.value = (self.value & !mask) | (value & mask);
        self.known |= mask;
        true
    }
}

/// The scopes `0..=depth` (a choice point saves only those it may have to
/// restore: element by element, which is cheaper than copying every scope
/// through `memcpy`).
// Element by element on purpose: one to three scopes, where a `memcpy`
// call (what `copy_from_slice` becomes) cost more than the copy.
#[allow(clippy::manual_memcpy)]
#[inline(always)]
fn save_scopes(scopes: &[Scope; MAX_NEST], depth: usize) -> [Scope; MAX_NEST] {
    // Filled from a scope rather than zeroed: no `memset` call.
    let mut saved = [scopes[0]; MAX_NEST];
    for d in 1..=depth.min(MAX_NEST - 1) {
        saved[d] = scopes[d];
    }
    saved
}

#[allow(clippy::manual_memcpy)]
#[inline(always)]
fn restore_scopes(scopes: &mut [Scope; MAX_NEST], saved: &[Scope; MAX_NEST], depth: usize) {
    for d in 0..=depth.min(MAX_NEST - 1) {
        scopes[d] = saved[d];
    }
}

#[inline]
fn low_bits(width: u32) -> u64 {
    if width >= 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    }
}

#[inline]
fn deposit(ranges: &[(u32, u32)], mut v: u64) -> u64 {
    // Most fields are one range.
    if let [(low, width)] = *ranges {
        return (v & low_bits(width)) << low;
    }
    let mut out = 0;
    for &(low, width) in ranges {
        out |= (v & low_bits(width)) << low;
        v = v.checked_shr(width).unwrap_or(0);
    }
    out
}

/// The value whose bits `deposit` would place: `word`'s bits in `ranges`.
fn gather(ranges: &[(u32, u32)], word: u64) -> u64 {
    let mut v = 0;
    let mut shift = 0u32;
    for &(low, width) in ranges {
        let m = if width >= 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        v |= ((word >> low) & m).checked_shl(shift).unwrap_or(0);
        shift += width;
    }
    v
}

#[inline]
fn ranges_mask(ranges: &[(u32, u32)]) -> u64 {
    deposit(ranges, u64::MAX)
}

/// The rest of a caller's form, resumed when a sub-encoding is read.
struct Resume<'r> {
    ops: &'static [Op],
    at: usize,
    ranges: &'static [(u32, u32)],
    default: Option<u64>,
    up: Option<&'r Resume<'r>>,
    /// Where the sub-encoding's text starts, and the bits choosing its
    /// form fixes (scope, mask, value; see [`Run::guard_pin`]), set
    /// once it has read some text.
    start: usize,
    pin: Option<(usize, u64, u64)>,
}

struct Run<'t, 'c> {
    text: &'t str,
    generation: u32,
    scopes: [Scope; MAX_NEST],
    binds: [&'static [Bind]; MAX_NEST],
    steps: usize,
    confirm: &'c mut dyn FnMut(u64) -> bool,
    /// Whether unshown bits are varied (the second pass).
    vary: bool,
    found: Option<u64>,
    /// Words the confirmation rejected lately, and (word, free bits) pairs
    /// already varied: readings often lead to the same word.
    rejected: Recent<u64>,
    varied: Recent<(u64, u64)>,
    /// The first pass's readings whose default word did not print back
    /// (word, free bits), in order, for the second pass to vary; a
    /// repeated one only once. On overflow the second pass reads again.
    pending_list: [(u64, u64); MAX_PENDING],
    npending: usize,
    pending_overflow: bool,
    /// A limit cut some reading short: a miss is not definitive.
    cut: bool,
}

/// Most readings the first pass keeps for the second.
const MAX_PENDING: usize = 16;

/// How many rejected words and varied readings a line remembers.
const RECENT: usize = 8;

/// The last few values seen (a ring, on the stack).
struct Recent<T> {
    items: [T; RECENT],
    len: usize,
    next: usize,
}

impl<T: Copy + PartialEq + Default> Recent<T> {
    fn new() -> Self {
        Recent {
            items: [T::default(); RECENT],
            len: 0,
            next: 0,
        }
    }

    fn contains(&self, x: T) -> bool {
        self.items[..self.len].contains(&x)
    }

    /// Remembers `x`; `false` if it was already remembered.
    fn insert(&mut self, x: T) -> bool {
        if self.contains(x) {
            return false;
        }
        self.items[self.next] = x;
        self.next = (self.next + 1) % RECENT;
        self.len = (self.len + 1).min(RECENT);
        true
    }
}

/// Whether `here` starts with `t` (the texts are short and most tries
/// fail at the first byte).
#[inline(always)]
fn has_prefix(here: &[u8], t: &[u8]) -> bool {
    if here.len() < t.len() {
        return false;
    }
    // No `memcmp` call for a few bytes.
    let mut i = 0;
    while i < t.len() {
        if here[i] != t[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Whether `t` occurs in `text` (both short).
fn contains(text: &[u8], t: &[u8]) -> bool {
    let Some((&first, rest)) = t.split_first() else {
        return true;
    };
    let last = text.len().saturating_sub(rest.len());
    (0..last).any(|i| text[i] == first && text[i + 1..].starts_with(rest))
}

/// How a decimal number at the start of a text reads.
enum Decimal {
    /// One reading: the value and how many digits.
    One(u64, usize),
    /// None: no digit, or a value wider than the field.
    None,
    /// More than 19 digits: left to the general reading.
    Long,
}

/// The decimal number at the start of `b`, if it fits `width` bits (as
/// [`readings`] reads `uint`).
#[inline(always)]
fn decimal(b: &[u8], width: u32) -> Decimal {
    let d = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if d == 0 {
        return Decimal::None;
    }
    if d > 19 {
        return Decimal::Long;
    }
    let v = b[..d]
        .iter()
        .fold(0u64, |v, c| v * 10 + u64::from(c - b'0'));
    if width >= 64 || v >> width == 0 {
        Decimal::One(v, d)
    } else {
        Decimal::None
    }
}

/// Every reading of `read` at the start of `here`: (value, bytes).
fn readings(read: Read, width: u32, here: &str, out: &mut [(u64, usize); MAX_READINGS]) -> usize {
    let mut n = 0;
    let mut push = |v: u64, len: usize| {
        if n < MAX_READINGS {
            out[n] = (v, len);
            n += 1;
        }
    };
    match read {
        // Register numbers and the like: decimal digits, read here as
        // `read_scalar` reads them.
        Read::Num(Num::Uint | Num::AbsBranch) => match decimal(here.as_bytes(), width) {
            Decimal::One(v, d) => push(v, d),
            Decimal::None => {}
            Decimal::Long => read_scalar(None, &FieldType::Uint, here, width, &mut push),
        },
        Read::Num(num) => read_scalar(None, &num.field_type(), here, width, &mut push),
        Read::Flag(t) => {
            if !t.is_empty() && here.starts_with(t) {
                push(1, t.len());
            }
            push(0, 0);
            if t.is_empty() {
                push(1, 0);
            }
        }
        Read::FlagInv(t) => {
            if !t.is_empty() && here.starts_with(t) {
                push(0, t.len());
            }
            push(1, 0);
            if t.is_empty() {
                push(0, 0);
            }
        }
        Read::Enum(values) => {
            let m = if width >= 64 {
                u64::MAX
            } else {
                (1u64 << width) - 1
            };
            for &(v, t) in values {
                if v & !m == 0 && has_prefix(here.as_bytes(), t.as_bytes()) {
                    push(v, t.len());
                }
            }
            let d = here.bytes().take_while(u8::is_ascii_digit).count();
            if let Some(v) = (d > 0).then(|| here[..d].parse::<u64>().ok()).flatten() {
                if v & !m == 0 && !values.iter().any(|&(x, _)| x == v) {
                    push(v, d);
                }
            }
        }
    }
    n
}

impl Run<'_, '_> {
    fn miss(&self) -> Miss {
        if self.cut { Miss::Limit } else { Miss::NoForm }
    }

    /// Whether the line's step budget is spent (recorded as a cut).
    #[inline(always)]
    fn spent(&mut self) -> bool {
        let over = self.steps > STEP_BUDGET;
        self.cut |= over;
        over
    }

    /// Reads `ops[at..]` of the form at nesting `depth` from byte `pos`,
    /// then whatever `up` resumes; `true` once a confirmed word is found.
    fn seq(
        &mut self,
        ops: &'static [Op],
        mut at: usize,
        depth: usize,
        mut pos: usize,
        up: Option<&Resume<'_>>,
    ) -> bool {
        loop {
            self.steps += 1;
            if self.spent() {
                return false;
            }
            let Some(op) = ops.get(at) else {
                return self.close(depth, pos, up);
            };
            at += 1;
            match *op {
                Op::Lit(s) => {
                    if !has_prefix(&self.text.as_bytes()[pos..], s.as_bytes()) {
                        return false;
                    }
                    pos += s.len();
                }
                // An absent flag's only reading is its default, as
                // `readings` would say, without the general reading.
                Op::Value {
                    read: Read::Flag(t),
                    to,
                    ..
                } if !t.is_empty()
                    && !matches!(to, To::Table(..))
                    && !has_prefix(&self.text.as_bytes()[pos..], t.as_bytes()) =>
                {
                    if !self.store(0, to, depth) {
                        return false;
                    }
                }
                Op::Value {
                    read: Read::FlagInv(t),
                    to,
                    ..
                } if !t.is_empty()
                    && !matches!(to, To::Table(..))
                    && !has_prefix(&self.text.as_bytes()[pos..], t.as_bytes()) =>
                {
                    if !self.store(1, to, depth) {
                        return false;
                    }
                }
                Op::Value {
                    read: Read::Flag(t),
                    to,
                    alone: true,
                    ..
                } if !matches!(to, To::Table(..)) => {
                    if !self.store(1, to, depth) {
                        return false;
                    }
                    pos += t.len();
                }
                Op::Value {
                    read: Read::FlagInv(t),
                    to,
                    alone: true,
                    ..
                } if !matches!(to, To::Table(..)) => {
                    if !self.store(0, to, depth) {
                        return false;
                    }
                    pos += t.len();
                }
                Op::Value { .. } | Op::Param(..) => {
                    let (into, read, width, to) = match *op {
                        Op::Value {
                            read, width, to, ..
                        } => (depth, read, width, to),
                        Op::Param(n) => match self.param(n, depth) {
                            // The item lives in the scope that bound the param.
                            Some((d, read, width, to)) => (d - 1, read, width, to),
                            None => return false,
                        },
                        _ => unreachable!("matched above"),
                    };
                    // A decimal number (register numbers and the like)
                    // has at most one reading: read here, as `readings`
                    // would, without the table of readings.
                    if let (Read::Num(Num::Uint | Num::AbsBranch), false) =
                        (read, matches!(to, To::Table(..)))
                    {
                        match decimal(&self.text.as_bytes()[pos..], width) {
                            Decimal::One(v, len) => {
                                if !self.store(v, to, into) {
                                    return false;
                                }
                                pos += len;
                                continue;
                            }
                            Decimal::None => return false,
                            Decimal::Long => {}
                        }
                    }
                    let mut rs = [(0u64, 0usize); MAX_READINGS];
                    let n = readings(read, width, &self.text[pos..], &mut rs);
                    // A full table may have dropped readings.
                    self.cut |= n == MAX_READINGS;
                    // One reading needs no choice point: read on in this
                    // loop. What it sets is undone by the last choice
                    // point, which saved every scope up to its depth.
                    if n == 1 {
                        if let To::Table(mask, entries) = to {
                            // Of the assignments showing the value, those
                            // the known bits allow: none fails, exactly
                            // one is set without a choice point.
                            let scope = &self.scopes[into];
                            let mut fit = entries
                                .iter()
                                .filter(|&&(key, bits)| key == rs[0].0 && scope.agrees(mask, bits));
                            match (fit.next(), fit.next()) {
                                (None, _) => return false,
                                (Some(&(_, bits)), None) => {
                                    self.scopes[into].set(mask, bits);
                                    pos += rs[0].1;
                                    continue;
                                }
                                _ => {}
                            }
                        } else {
                            if !self.store(rs[0].0, to, into) {
                                return false;
                            }
                            pos += rs[0].1;
                            continue;
                        }
                    }
                    return self.value(&rs[..n], to, into, ops, at, depth, pos, up);
                }
                Op::Sub {
                    forms,
                    ranges,
                    binds,
                    firsts,
                    default,
                } => {
                    if depth + 1 >= MAX_NEST {
                        self.cut = true;
                        return false;
                    }
                    let mut resume = Resume {
                        ops,
                        at,
                        ranges,
                        default,
                        up,
                        start: pos,
                        pin: None,
                    };
                    // Reading the sub-encoding and the rest of the line
                    // changes scopes up to `depth + 1` only.
                    let saved = save_scopes(&self.scopes, depth + 1);
                    for (i, form) in forms.iter().enumerate() {
                        if !(form.gen_min <= self.generation && self.generation <= form.gen_max) {
                            continue;
                        }
                        if firsts
                            .get(i)
                            .is_some_and(|f| !can_start(f, self.text.as_bytes(), pos))
                        {
                            continue;
                        }
                        // A form that starts with text the line does not
                        // have here is skipped before anything is set up.
                        if let Some(Op::Lit(s)) = form.ops.first() {
                            if !has_prefix(&self.text.as_bytes()[pos..], s.as_bytes()) {
                                continue;
                            }
                        }
                        self.scopes[depth + 1] = Scope::of(form);
                        self.binds[depth + 1] = binds;
                        if !self.guard_holds(form, depth + 1) {
                            continue;
                        }
                        let Some(pin) = self.guard_pin(form, depth + 1) else {
                            continue;
                        };
                        resume.pin = pin;
                        if self.seq(form.ops, 0, depth + 1, pos, Some(&resume)) {
                            return true;
                        }
                        restore_scopes(&mut self.scopes, &saved, depth + 1);
                        if self.spent() {
                            return false;
                        }
                    }
                    return false;
                }
            }
        }
    }
}

impl Run<'_, '_> {
    /// What param `n` of the form at `depth` is bound to: the depth of the
    /// form that bound it (its item lives one scope up) and the item.
    fn param(&self, n: u16, depth: usize) -> Option<(usize, Read, u32, To)> {
        let mut d = depth;
        let mut bind = self.binds[d].get(usize::from(n)).copied();
        while let Some(Bind::Up(j)) = bind {
            d = d.checked_sub(1)?;
            bind = self.binds[d].get(usize::from(j)).copied();
        }
        match bind {
            Some(Bind::Item { read, width, to }) if d > 0 => Some((d, read, width, to)),
            _ => None,
        }
    }

    /// Whether the params of a sub-encoding form at `depth` that are
    /// already known allow it (unknown ones allow anything).
    fn guard_holds(&self, form: &Form, depth: usize) -> bool {
        const VALUES: u64 = 8;
        let mut idx = 0u64;
        let mut scale = 1u64;
        for &n in form.guard {
            let v = match self.param(n, depth) {
                Some((_, _, _, To::Const(c))) => c,
                Some((d, _, _, To::Field(ranges))) => {
                    let scope = &self.scopes[d - 1];
                    let m = ranges_mask(ranges);
                    if scope.known & m != m {
                        return true;
                    }
                    gather(ranges, scope.value)
                }
                _ => return true,
            };
            if v >= VALUES {
                return true;
            }
            idx += v * scale;
            scale *= VALUES;
        }
        form.guard.is_empty()
            || form
                .allowed
                .get((idx / 64) as usize)
                .is_some_and(|b| b >> (idx % 64) & 1 == 1)
    }

    /// Choosing a sub-encoding form at `depth` fixes the params its
    /// `when`s test: when exactly one guard param is bound to a caller's
    /// field not yet known, of at most 3 bits, and the guard allows
    /// exactly one of its values (the others known), that value, as
    /// `(scope, mask, bits)` (`.base{BASE}` shown sets the caller's
    /// BINDLESS bit). It is set only once the form has read some text:
    /// an empty text may also be another form's (`{OFF}` of offset 0 and
    /// `""`), where the default decides. `None` if the guard allows none
    /// of its values.
    fn guard_pin(&self, form: &Form, depth: usize) -> Option<Option<(usize, u64, u64)>> {
        const VALUES: u64 = 8;
        let (mut idx, mut scale) = (0u64, 1u64);
        let mut open = None;
        for &n in form.guard {
            let v = match self.param(n, depth) {
                Some((_, _, _, To::Const(c))) => c,
                Some((d, _, width, To::Field(ranges))) => {
                    let m = ranges_mask(ranges);
                    if self.scopes[d - 1].known & m == m {
                        gather(ranges, self.scopes[d - 1].value)
                    } else if open.is_none() && width <= 3 {
                        open = Some((scale, d - 1, width, ranges));
                        0
                    } else {
                        return Some(None);
                    }
                }
                _ => return Some(None),
            };
            if v >= VALUES {
                return Some(None);
            }
            idx += v * scale;
            scale *= VALUES;
        }
        let Some((step, into, width, ranges)) = open else {
            return Some(None);
        };
        let allowed = |i: u64| {
            form.allowed
                .get((i / 64) as usize)
                .is_some_and(|b| b >> (i % 64) & 1 == 1)
        };
        let mut only = None;
        for v in 0..1u64 << width {
            if allowed(idx + v * step) {
                if only.is_some() {
                    return Some(None);
                }
                only = Some(v);
            }
        }
        only.map(|v| Some((into, ranges_mask(ranges), deposit(ranges, v))))
    }

    /// Stores value `v` read for `to` into scope `into`; `false` if it
    /// contradicts what is known (the scope may then be partly changed).
    /// Fields (most values) inline; the rest in [`Run::store_other`].
    #[inline(always)]
    fn store(&mut self, v: u64, to: To, into: usize) -> bool {
        match to {
            To::Drop => true,
            To::Field(ranges) => self.scopes[into].set(ranges_mask(ranges), deposit(ranges, v)),
            _ => self.store_other(v, to, into),
        }
    }

    #[inline(never)]
    fn store_other(&mut self, v: u64, to: To, into: usize) -> bool {
        if let To::Parts(parts) = to {
            return parts.iter().all(|&(shift, width, slot)| {
                let high = v.checked_shr(shift).unwrap_or(0);
                match slot {
                    Slot::Field(ranges) => {
                        let part = high & (u64::MAX >> (64 - width.clamp(1, 64)));
                        self.scopes[into].set(ranges_mask(ranges), deposit(ranges, part))
                    }
                    // The param is the field's value: the rest of the
                    // value must fit it.
                    Slot::Param(n) => match self.param(n, into) {
                        Some((d, _, width, To::Field(ranges))) => {
                            (width >= 64 || high >> width == 0)
                                && self.scopes[d - 1]
                                    .set(ranges_mask(ranges), deposit(ranges, high))
                        }
                        _ => true,
                    },
                }
            });
        }
        let scope = &mut self.scopes[into];
        match to {
            To::Drop | To::Parts(_) => true,
            To::Field(ranges) => scope.set(ranges_mask(ranges), deposit(ranges, v)),
            To::Add(add, width, ranges) => {
                let f = (v as i64).wrapping_sub(add) as u64;
                (width >= 64 || f >> width == 0)
                    && scope.set(ranges_mask(ranges), deposit(ranges, f))
            }
            To::Table(..) => false,
            To::Const(c) => v == c,
            To::Pin(mask, entries) => match entries.iter().find(|&&(k, _)| k == v) {
                Some(&(_, bits)) => {
                    scope.pinned |= mask;
                    scope.free &= !mask;
                    scope.set(mask, bits)
                }
                None => true,
            },
            To::Param(n, entries) => match self.param(n, into) {
                // Of the param values the field can hold, the one that
                // shows `v`, if only one does.
                Some((d, _, width, to @ To::Field(_))) if width <= 3 => {
                    let mut fit = entries
                        .iter()
                        .filter(|&&(k, pv)| k == v && pv >> width == 0);
                    match (fit.next(), fit.next()) {
                        (Some(&(_, pv)), None) => self.store(pv, to, d - 1),
                        _ => true,
                    }
                }
                _ => true,
            },
        }
    }

    /// Tries each of the readings `rs` of one value (stored into scope
    /// `into`), then the rest of the form; every scope up to `depth` is
    /// restored after each failed reading.
    #[allow(clippy::too_many_arguments)]
    fn value(
        &mut self,
        rs: &[(u64, usize)],
        to: To,
        into: usize,
        ops: &'static [Op],
        at: usize,
        depth: usize,
        pos: usize,
        up: Option<&Resume<'_>>,
    ) -> bool {
        let saved = save_scopes(&self.scopes, depth);
        for (k, &(v, len)) in rs.iter().enumerate() {
            if let To::Table(mask, entries) = to {
                for &(_, bits) in entries.iter().filter(|&&(key, _)| key == v) {
                    // An assignment the known bits contradict changes nothing.
                    if !self.scopes[into].agrees(mask, bits) {
                        continue;
                    }
                    if self.scopes[into].set(mask, bits) && self.seq(ops, at, depth, pos + len, up)
                    {
                        return true;
                    }
                    restore_scopes(&mut self.scopes, &saved, depth);
                    if self.spent() {
                        return false;
                    }
                }
                continue;
            }
            // A shown derived value: only how much text it takes matters.
            let ok = match to {
                To::Drop => !rs[..k].iter().any(|&(_, l)| l == len),
                _ => self.store(v, to, into),
            };
            if ok && self.seq(ops, at, depth, pos + len, up) {
                return true;
            }
            restore_scopes(&mut self.scopes, &saved, depth);
            if self.spent() {
                return false;
            }
        }
        false
    }

    /// Whether `w` prints exactly the text; a word already rejected for
    /// this line (another reading that led to it) is not printed again.
    fn try_word(&mut self, w: u64) -> bool {
        if self.rejected.contains(w) {
            return false;
        }
        if (self.confirm)(w) {
            return true;
        }
        self.rejected.insert(w);
        false
    }

    /// The form at `depth` has been read up to `pos`: hand a sub-encoding
    /// to its caller, or finish the instruction.
    fn close(&mut self, depth: usize, pos: usize, up: Option<&Resume<'_>>) -> bool {
        if let Some(r) = up {
            if let Some((into, mask, bits)) = r.pin.filter(|_| pos > r.start) {
                if !self.scopes[into].set(mask, bits) {
                    return false;
                }
            }
            let sub = self.scopes[depth];
            let caller = &mut self.scopes[depth - 1];
            if !caller.set(deposit(r.ranges, sub.known), deposit(r.ranges, sub.value)) {
                return false;
            }
            // A sub-encoding's unshown bits stay free even where the
            // caller asserts a value (as in the engine): the confirmation
            // decides. Bits a caller's shown value pinned do not.
            let free = deposit(r.ranges, (sub.hidden & !sub.known) | sub.free) & !caller.pinned;
            caller.free |= free;
            let defaults = deposit(r.ranges, r.default.unwrap_or(sub.defaults));
            caller.defaults = (caller.defaults & !free) | (defaults & free);
            caller.search |= deposit(r.ranges, sub.search);
            return self.seq(r.ops, r.at, depth - 1, pos, r.up);
        }
        if pos != self.text.len() {
            return false;
        }
        let top = self.scopes[0];
        let unshown = (top.hidden & !top.known) | top.free;
        let first = (top.value & !unshown) | (top.defaults & unshown);
        if self.try_word(first) {
            self.found = Some(first);
            return true;
        }
        // The text fixes every shown bit; what is left feeds derived
        // values or `when` conditions: varied, default first, only after
        // every reading's default word has had its turn.
        let free = top.search & unshown;
        if free == 0 {
            return false;
        }
        if free.count_ones() > MAX_HIDDEN_BITS {
            self.cut = true;
            return false;
        }
        if !self.vary {
            // Kept for the second pass, which then need not read again.
            if self.pending_list[..self.npending].contains(&(first, free)) {
                return false;
            }
            if self.npending < MAX_PENDING {
                self.pending_list[self.npending] = (first, free);
                self.npending += 1;
            } else {
                self.pending_overflow = true;
            }
            return false;
        }
        // Another reading that left the same word and the same free bits
        // was varied already.
        if !self.varied.insert((first, free)) {
            return false;
        }
        self.vary_word(first, free)
    }

    /// Tries the words that differ from `first` in the `free` bits.
    fn vary_word(&mut self, first: u64, free: u64) -> bool {
        let base = first & !free;
        let default = first & free;
        // Ascending over the free bits: low fields first, small values first.
        let mut sub = 0u64;
        for _ in 0..MAX_TRIES_PER_READING {
            sub = (sub | !free).wrapping_add(1) & free;
            if sub == 0 {
                return false;
            }
            let w = base | (default ^ sub);
            self.steps += 1;
            if self.spent() {
                return false;
            }
            if self.try_word(w) {
                self.found = Some(w);
                return true;
            }
        }
        self.cut = true;
        false
    }
}

/// Assembles `text` at `generation` with the generated `table`; `confirm`
/// prints a word (validated) and tells whether it prints exactly `text`.
/// [`Miss::NoForm`]: no form reads the text; [`Miss::Limit`]: a reading
/// may exist past a limit (the caller asks the engine).
pub fn assemble(
    table: &Table,
    text: &str,
    generation: u32,
    confirm: &mut dyn FnMut(u64) -> bool,
) -> Result<u64, Miss> {
    let mut picks = Picks {
        ids: [0; MAX_PICKS],
        len: 0,
        overflow: false,
    };
    table.candidates(text, &mut picks);
    let all: Vec<u16>;
    let candidates: &[u16] = if picks.overflow {
        all = (0..table.forms.len() as u16).collect();
        &all
    } else {
        &picks.ids[..picks.len]
    };
    let mut run = Run {
        text,
        generation,
        scopes: [Scope::default(); MAX_NEST],
        binds: [&[]; MAX_NEST],
        steps: 0,
        confirm,
        vary: false,
        found: None,
        rejected: Recent::new(),
        varied: Recent::new(),
        pending_list: [(0, 0); MAX_PENDING],
        npending: 0,
        pending_overflow: false,
        cut: false,
    };
    // Every reading with its default word first; only then, reading by
    // reading, the unshown bits varied.
    for vary in [false, true] {
        run.vary = vary;
        run.steps = 0;
        if vary && !run.pending_overflow {
            // The first pass read everything within its budget and kept
            // what to vary, in the order reading again would find it.
            for k in 0..run.npending {
                let (first, free) = run.pending_list[k];
                if run.vary_word(first, free) {
                    return run.found.ok_or(Miss::Limit);
                }
                if run.spent() {
                    break;
                }
            }
            return Err(run.miss());
        }
        // Reading everything again: only this pass's cuts count.
        run.cut = false;
        for &i in candidates {
            let form = &table.forms[usize::from(i)];
            let live = form.gen_min <= generation && generation <= form.gen_max;
            if !live || !contains(text.as_bytes(), form.needs.as_bytes()) {
                continue;
            }
            run.scopes[0] = Scope::of(form);
            if run.seq(form.ops, 0, 0, 0, None) {
                return run.found.ok_or(Miss::Limit);
            }
            if run.spent() {
                // The first pass stopped short: the second reads again.
                run.pending_overflow = true;
                break;
            }
        }
    }
    Err(run.miss())
}
