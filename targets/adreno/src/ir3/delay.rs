//! Delay slots between ir3 instructions, from the spec's latency table.
//!
//! [`required_nops`] answers: how many nop slots must come right before
//! the last instruction of a straight-line sequence, given the ones before
//! it? The cycle counts come only from the spec (the `latency` table and
//! each instruction's `meta latency`); this module adds what a table
//! cannot say:
//!
//! - which registers an instruction reads and writes, found through the
//!   fields the spec marks `role = dst` / `role = src`, down to the operand
//!   encoding the spec marks `regfile = gpr` (which also names the address
//!   register and the first special register number); consts and
//!   immediates carry no dependency;
//! - repeats: an `(rptN)` instruction acts as N+1 instructions on
//!   consecutive registers, its `(r)` sources advance with it;
//! - distance: every ALU or flow instruction in between (and its own
//!   `(nopN)` slots) counts as `1 + repeat` cycles already waited;
//! - precision: with merged registers (a6xx+) reading a register as the
//!   other precision than it was written costs the spec's `precision`
//!   rule more (3 between ALU instructions).
//!
//! a0-relative operands are not followed (they name no fixed register).
//!
//! ```
//! use lathe_adreno::ir3::{assemble, delay::required_nops, Generation};
//!
//! let g = Generation::A6xx;
//! let program = [
//!     assemble("add.f r0.x, r2.x, r2.y", g).unwrap(),
//!     assemble("rsq r0.x, r0.x", g).unwrap(),
//! ];
//! // An ALU result feeding the SFU needs 6 slots.
//! assert_eq!(required_nops(&program, g).unwrap(), 6);
//! ```

use std::sync::OnceLock;

use lathe_isa::EncId;
use lathe_isa::display::Scope;
use lathe_isa::expr::{Expr, ExprKind};
use lathe_isa::groups::Groups;
use lathe_isa::model::{Field, FieldType, Isa, ItemRef};
use lathe_isa::semantics::{SArg, SExpr, SExprKind, Stmt};

use super::{Error, Generation, spec};

/// The most slots any dependency needs; the backwards walk stops there.
const MAX_NOPS: u32 = 6;

/// One register operand: `num` is GPR * 4 + component; `elems` consecutive
/// components (more than one under `(rptN)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct RegUse {
    num: u32,
    half: bool,
    elems: u32,
    /// A special register (a0, p0): never aliased across precisions.
    special: bool,
}

impl RegUse {
    /// Extent in half-register units (a full register is two halves when
    /// registers are merged).
    fn span(self) -> (u32, u32) {
        let size = if self.half { 1 } else { 2 };
        (self.num * size, (self.num + self.elems) * size)
    }

    fn is_special(self) -> bool {
        self.special
    }
}

/// What the calculator needs to know of one decoded instruction.
#[derive(Clone, Debug)]
struct Node {
    class: usize,
    counts_as_cycle: bool,
    repeat: u32,
    nops: u32,
    dsts: Vec<RegUse>,
    /// The operand field each source is read through.
    srcs: Vec<(&'static str, RegUse)>,
}

/// Delay slots needed immediately before the last word of `program`,
/// after the words before it (a straight-line sequence).
pub fn required_nops(program: &[u64], generation: Generation) -> Result<u32, Error> {
    required_nops_cached(program, generation, &mut Decoded::default())
}

/// Decoded words, kept across queries: a legaliser asks about the same
/// words many times. Keyed by instruction word with the Fx hash: a word
/// lookup is most of a cache hit, and SipHash's flooding resistance buys
/// nothing for a map that lives for one shader's legalisation. A word
/// not seen yet shares what does not depend on its bits with the other
/// words of its leaf encoding ([`Plan`]), and its register groups with
/// the words of the leaf that agree in the values their sizes can
/// depend on (only the sizes are read: a form's `unknown` note may be
/// another word's).
#[derive(Default)]
pub(crate) struct Decoded {
    /// Each word's index in `nodes`.
    index: rustc_hash::FxHashMap<u64, usize>,
    nodes: Vec<Node>,
    plans: rustc_hash::FxHashMap<EncId, Plan>,
    groups: rustc_hash::FxHashMap<(EncId, Vec<Option<i64>>), Groups>,
    forms: Forms,
}

impl Decoded {
    /// The index in `nodes` of `word`'s node, decoding it the first time.
    fn at(&mut self, isa: &'static Isa, word: u64, generation: Generation) -> Result<usize, Error> {
        if let Some(&k) = self.index.get(&word) {
            return Ok(k);
        }
        let gen_id = generation.gpu_id();
        let leaf = isa
            .decode(word, gen_id)
            .ok_or(Error::NoMatch { word, generation })?;
        let plan = self.plans.entry(leaf).or_insert_with(|| plan(isa, leaf));
        let scope = Scope::new(isa, leaf, word, gen_id, None);
        let key = plan
            .group_names
            .iter()
            .map(|&(name, source)| value(&scope, name, source))
            .collect();
        let groups = self
            .groups
            .entry((leaf, key))
            .or_insert_with(|| lathe_isa::groups::groups(isa, word, gen_id).unwrap_or_default());
        let n = node(isa, word, &scope, plan, groups, &mut self.forms)?;
        let k = self.nodes.len();
        self.nodes.push(n);
        self.index.insert(word, k);
        Ok(k)
    }

    fn get(
        &mut self,
        isa: &'static Isa,
        word: u64,
        generation: Generation,
    ) -> Result<&Node, Error> {
        let k = self.at(isa, word, generation)?;
        Ok(&self.nodes[k])
    }
}

/// [`required_nops`] with decoded words kept in `cache`.
pub(crate) fn required_nops_cached(
    program: &[u64],
    generation: Generation,
    cache: &mut Decoded,
) -> Result<u32, Error> {
    let isa = spec()?;
    let Some((&consumer_word, producer_words)) = program.split_last() else {
        return Ok(0);
    };
    let c = cache.at(isa, consumer_word, generation)?;
    let mut pending: Vec<RegUse> = cache.nodes[c].srcs.iter().map(|(_, r)| *r).collect();
    let mut delay = 0u32;
    let mut distance = 0u32;
    // Backwards from the consumer: words beyond the longest delay are
    // never decoded here.
    for &w in producer_words.iter().rev() {
        let p = cache.at(isa, w, generation)?;
        let (producer, consumer) = (&cache.nodes[p], &cache.nodes[c]);
        if producer.counts_as_cycle {
            distance += producer.nops;
        }
        if distance + delay >= MAX_NOPS {
            break;
        }
        let mut needed = 0u32;
        for dst in &producer.dsts {
            if !pending.iter().any(|s| overlaps(*s, *dst)) {
                continue;
            }
            for (field, src) in &consumer.srcs {
                needed = needed.max(pair_delay(
                    isa, producer, *dst, consumer, field, *src, generation,
                ));
            }
            // Older writes of this register are hidden behind this one.
            pending.retain(|s| !overlaps(*s, *dst));
        }
        delay = delay.max(needed.saturating_sub(distance));
        if producer.counts_as_cycle {
            distance += 1 + producer.repeat;
        }
    }
    Ok(delay)
}

fn overlaps(a: RegUse, b: RegUse) -> bool {
    let (a0, a1) = a.span();
    let (b0, b1) = b.span();
    a0 < b1 && b0 < a1
}

/// Slots between `producer` writing `dst` and `consumer` reading `src`
/// through its operand `field`.
fn pair_delay(
    isa: &Isa,
    producer: &Node,
    dst: RegUse,
    consumer: &Node,
    field: &str,
    src: RegUse,
    generation: Generation,
) -> u32 {
    let merged = generation >= Generation::A6xx;
    let mismatched_half = src.half != dst.half;
    if (!merged || src.is_special() || dst.is_special()) && mismatched_half {
        return 0;
    }
    if !overlaps(src, dst) {
        return 0;
    }
    let latency = &isa.latency;
    let mut delay = latency
        .lookup(
            producer.class,
            consumer.class,
            Some(field),
            generation.gpu_id(),
        )
        .unwrap_or(0);
    if mismatched_half {
        delay += latency.precision_extra(producer.class, consumer.class, generation.gpu_id());
    }
    if (producer.repeat == 0 && consumer.repeat == 0) || mismatched_half {
        return delay;
    }
    // Under (rptN) the first sub-instructions that touch the shared
    // register decide: later producer steps and earlier consumer steps
    // already stand between them.
    let (src_start, _) = src.span();
    let (dst_start, _) = dst.span();
    let size = if dst.half { 1 } else { 2 };
    let first_num = src_start.max(dst_start) / size;
    let first_src_step = first_num - src.num;
    let first_dst_step = first_num - dst.num;
    let offset = first_src_step + (producer.repeat - first_dst_step.min(producer.repeat));
    delay.saturating_sub(offset)
}

/// What [`node`] reads of a leaf encoding whatever the word: its role
/// fields, its latency class, where the names it reads are defined, and
/// the names its register group sizes can depend on.
struct Plan {
    class_name: &'static str,
    roles: Vec<RoleField>,
    repeat: Source,
    nop: Source,
    dst_half: Source,
    half: Source,
    full: Source,
    type_half: Source,
    src_r: Source,
    /// The names the leaf's semantics evaluate where register groups
    /// can depend on them ([`stmt_names`]): words of the leaf with equal
    /// values of these have the same group sizes.
    group_names: Vec<(&'static str, Source)>,
}

/// Where a name's value comes from in every word of a leaf: the
/// definition [`Scope::find`] reaches, when no variant (`when`) can
/// change it.
#[derive(Clone, Copy)]
enum Source {
    /// No level of the leaf's chain defines the name: it has no value.
    Absent,
    /// A field of a plain level: its bits.
    Field(&'static Field),
    /// A derived value of a plain level: its expression.
    Derived(&'static Expr),
    /// A variant may define it first: the word's scope decides.
    Variant,
}

fn source(isa: &'static Isa, leaf: EncId, name: &str) -> Source {
    for enc in isa.chain(leaf).take(lathe_isa::display::MAX_DEPTH) {
        let e = &isa.encodings[enc];
        if e.whens.iter().any(|w| w.level.item(name).is_some()) {
            return Source::Variant;
        }
        match e.plain.item(name) {
            Some(ItemRef::Field(f)) => return Source::Field(f),
            Some(ItemRef::Derived(d)) => return Source::Derived(&d.expr),
            None => {}
        }
    }
    Source::Absent
}

/// The value of `name`, defined as `source` says, in the word of `scope`
/// (what `scope.value_of(name)` answers, without the search).
fn value(scope: &Scope<'_>, name: &str, source: Source) -> Option<i64> {
    match source {
        Source::Absent => None,
        Source::Field(f) => Some(f.extract(scope.value) as i64),
        Source::Derived(e) => scope.eval(e),
        Source::Variant => scope.value_of(name),
    }
}

/// A field carrying `role` metadata, nearest definition first (a child's
/// field shadows its parent's); a tied destination is listed again as a
/// source.
struct RoleField {
    name: &'static str,
    field: &'static Field,
    role: &'static str,
    /// The register file its own `regfile` metadata names (plain
    /// register-number fields such as a branch's predicate component).
    file: Option<&'static str>,
    /// The name of its `(r)` flag, `<FIELD>_R`, and where it is defined.
    r_flag: (String, Source),
}

fn plan(isa: &'static Isa, leaf: EncId) -> Plan {
    let class_name = match isa.meta(leaf, "latency") {
        Some(lathe_isa::ast::MetaValue::Ident(c)) => c.as_str(),
        _ => "",
    };
    let mut names = Vec::new();
    let mut named_seen = Vec::new();
    for block in isa.semantics.chain(isa, leaf) {
        for s in block.body.iter() {
            stmt_names(isa, s, &mut names, &mut named_seen);
        }
    }
    let at = |name| source(isa, leaf, name);
    Plan {
        class_name,
        roles: role_fields(isa, leaf),
        repeat: at("REPEAT"),
        nop: at("NOP"),
        dst_half: at("DST_HALF"),
        half: at("HALF"),
        full: at("FULL"),
        type_half: at("TYPE_HALF"),
        src_r: at("SRC_R"),
        group_names: names.into_iter().map(|n| (n, at(n))).collect(),
    }
}

/// Decodes `word` (in `scope`, with register groups `groups`) into the
/// calculator's view.
fn node(
    isa: &'static Isa,
    word: u64,
    scope: &Scope<'_>,
    plan: &Plan,
    groups: &Groups,
    forms: &mut Forms,
) -> Result<Node, Error> {
    let gen_id = scope.generation;
    let value = |name: &str, source: Source| value(scope, name, source);
    let class_name = plan.class_name;
    let class_of = |name: &str| {
        isa.latency
            .class(name)
            .ok_or_else(|| Error::Spec(format!("latency class `{name}` is not declared")))
    };
    let repeat = value("REPEAT", plan.repeat).unwrap_or(0).max(0) as u32;
    let nop_field = value("NOP", plan.nop);
    let nops = nop_field.unwrap_or(0).max(0) as u32;
    let in_nop_form = nop_field.is_some();
    let dst_half = value("DST_HALF", plan.dst_half).unwrap_or(0) != 0;
    let src_half = match value("HALF", plan.half) {
        Some(h) => h != 0,
        None => match value("FULL", plan.full) {
            Some(full) => full == 0,
            None => value("TYPE_HALF", plan.type_half).unwrap_or(0) != 0,
        },
    };

    let mut dsts = Vec::new();
    let mut srcs = Vec::new();
    let mut writes_address = false;
    for r in &plan.roles {
        let name = r.name;
        let field_value = r.field.extract(word);
        let gpr = match r.file {
            Some(file) => predicate_of(isa, file, field_value),
            None => gpr_of(isa, forms, &r.field.ty, field_value, gen_id, scope),
        };
        // A register group (texture coordinates, a load's vector) covers
        // as many registers as the spec's semantics give it.
        let group = groups.size(name);
        let Some(gpr) = gpr else {
            continue;
        };
        let num = gpr.num;
        if r.role == "dst" {
            writes_address |= gpr.address;
            dsts.push(RegUse {
                num,
                half: dst_half,
                elems: (repeat + 1).max(group),
                special: gpr.special,
            });
        } else {
            // The source's (r) flag is `<FIELD>_R`, or `SRC_R` for the
            // single source of cat1/cat4; in the (nopN) form those bits
            // count nops instead.
            let r_flag = value(&r.r_flag.0, r.r_flag.1)
                .or_else(|| value("SRC_R", plan.src_r))
                .unwrap_or(0)
                != 0;
            let elems = if r_flag && !in_nop_form {
                repeat + 1
            } else {
                group
            };
            srcs.push((
                name,
                RegUse {
                    num,
                    half: src_half,
                    elems,
                    special: gpr.special,
                },
            ));
        }
    }

    let class = if writes_address {
        class_of("addr")?
    } else {
        class_of(class_name)?
    };
    let counts_as_cycle = matches!(class_name, "alu" | "mad" | "flow");
    Ok(Node {
        class,
        counts_as_cycle,
        repeat,
        nops,
        dsts,
        srcs,
    })
}

/// The leaf's role fields ([`RoleField`]).
fn role_fields(isa: &'static Isa, leaf: EncId) -> Vec<RoleField> {
    let mut seen: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for enc in isa.chain(leaf) {
        for field in &isa.encodings[enc].plain.fields {
            if seen.contains(&field.name.as_str()) {
                continue;
            }
            seen.push(&field.name);
            let role = field
                .meta
                .iter()
                .find(|(k, _)| k == "role")
                .map(|(_, v)| match v {
                    lathe_isa::ast::MetaValue::Ident(s) => s.as_str(),
                    _ => "",
                });
            let file = field
                .meta
                .iter()
                .find(|(k, _)| k == "regfile")
                .and_then(|(_, v)| match v {
                    lathe_isa::ast::MetaValue::Ident(s) => Some(s.as_str()),
                    _ => None,
                });
            // A tied destination is read too (`tied = true`).
            let tied = role == Some("dst")
                && field.meta.iter().any(|(k, v)| {
                    k == "tied" && matches!(v, lathe_isa::ast::MetaValue::Ident(b) if b == "true")
                });
            let role_field = |role| RoleField {
                name: field.name.as_str(),
                field,
                role,
                file,
                r_flag: {
                    let name = format!("{}_R", field.name);
                    let at = source(isa, leaf, &name);
                    (name, at)
                },
            };
            if let Some(role) = role {
                out.push(role_field(role));
            }
            if tied {
                out.push(role_field("src"));
            }
        }
    }
    out
}

/// Collects the names a semantics statement evaluates where register
/// groups can depend on them ([`lathe_isa::groups`] grows a group only
/// in writes, `let`s, effects with arguments and under `mods`; an `if`
/// counts only around one of those). Operand locations (`reg`, `imm`,
/// `type`) never size a group.
fn stmt_names<'i>(isa: &'i Isa, s: &'i Stmt, names: &mut Vec<&'i str>, seen: &mut Vec<usize>) {
    match s {
        Stmt::If { cond, then, els } => {
            if then.iter().chain(els).any(sizes_groups) {
                expr_names(isa, cond, names, seen);
            }
            for s in then.iter().chain(els) {
                stmt_names(isa, s, names, seen);
            }
        }
        Stmt::Mods { mods, .. } => {
            for (_, e) in mods {
                expr_names(isa, e, names, seen);
            }
        }
        Stmt::Let { value, .. } => sexpr_names(isa, value, names, seen),
        Stmt::Effect { args, .. } => {
            for a in args {
                sarg_names(isa, a, names, seen);
            }
        }
        Stmt::Write { index, value, .. } => {
            if let Some(e) = index {
                expr_names(isa, e, names, seen);
            }
            sexpr_names(isa, value, names, seen);
        }
        Stmt::Type { .. }
        | Stmt::Reg { .. }
        | Stmt::Imm { .. }
        | Stmt::ImmBits(_)
        | Stmt::Use(_)
        | Stmt::ImmText(_) => {}
    }
}

/// Whether `s` (or a statement under it) is one register groups are
/// read from.
fn sizes_groups(s: &Stmt) -> bool {
    match s {
        Stmt::If { then, els, .. } => then.iter().chain(els).any(sizes_groups),
        Stmt::Effect { args, .. } => !args.is_empty(),
        Stmt::Mods { .. } | Stmt::Let { .. } | Stmt::Write { .. } => true,
        Stmt::Type { .. }
        | Stmt::Reg { .. }
        | Stmt::Imm { .. }
        | Stmt::ImmBits(_)
        | Stmt::Use(_)
        | Stmt::ImmText(_) => false,
    }
}

fn sarg_names<'i>(isa: &'i Isa, a: &'i SArg, names: &mut Vec<&'i str>, seen: &mut Vec<usize>) {
    match a {
        SArg::Value(v) => sexpr_names(isa, v, names, seen),
        SArg::Static(e) => expr_names(isa, e, names, seen),
    }
}

fn sexpr_names<'i>(isa: &'i Isa, v: &'i SExpr, names: &mut Vec<&'i str>, seen: &mut Vec<usize>) {
    match &v.kind {
        SExprKind::Read { .. } | SExprKind::Lit { .. } | SExprKind::Local(_) => {}
        SExprKind::RegRead { index, .. } | SExprKind::Member { index, .. } => {
            expr_names(isa, index, names, seen)
        }
        SExprKind::Call(_, args) => {
            for a in args {
                sarg_names(isa, a, names, seen);
            }
        }
        SExprKind::Select(a, b, c) => {
            for x in [a, b, c] {
                sexpr_names(isa, x, names, seen);
            }
        }
        SExprKind::Static(cond, a, b) => {
            expr_names(isa, cond, names, seen);
            sexpr_names(isa, a, names, seen);
            sexpr_names(isa, b, names, seen);
        }
    }
}

/// Collects the names `e` looks up, through the named expressions it
/// calls (each body once).
fn expr_names<'i>(isa: &'i Isa, e: &'i Expr, names: &mut Vec<&'i str>, seen: &mut Vec<usize>) {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Gen => {}
        ExprKind::Name(n) => {
            if !names.contains(&n.as_str()) {
                names.push(n);
            }
        }
        ExprKind::Named(name, index, args) => {
            for a in args {
                expr_names(isa, a, names, seen);
            }
            let by_name = isa.exprs.iter().position(|x| x.name == *name);
            for i in index.iter().copied().chain(by_name) {
                if !seen.contains(&i)
                    && let Some(n) = isa.exprs.get(i)
                {
                    seen.push(i);
                    expr_names(isa, &n.expr, names, seen);
                }
            }
        }
        ExprKind::Unary(_, a) => expr_names(isa, a, names, seen),
        ExprKind::Binary(_, a, b) => {
            expr_names(isa, a, names, seen);
            expr_names(isa, b, names, seen);
        }
        ExprKind::Cond(a, b, c) => {
            expr_names(isa, a, names, seen);
            expr_names(isa, b, names, seen);
            expr_names(isa, c, names, seen);
        }
    }
}

/// A GPR operand found in an instruction.
struct Gpr {
    /// GPR * 4 + component.
    num: u32,
    /// It is the address register (the spec's `address_gpr`).
    address: bool,
    /// It is at or above the spec's `special_gpr_from` (a0, p0).
    special: bool,
}

fn meta_int(isa: &Isa, enc: EncId, key: &str) -> Option<i64> {
    match isa.meta(enc, key) {
        Some(lathe_isa::ast::MetaValue::Int(n)) => Some(*n),
        _ => None,
    }
}

/// A plain field naming a component of the predicate file (`br p0.x`):
/// the GPR number GPR operands name that component by (the spec's
/// `predicate_gpr`), so a compare writing `p0.x` meets the branch reading
/// it. Other files named this way carry no tracked dependency.
fn predicate_of(isa: &Isa, file: &str, value: u64) -> Option<Gpr> {
    let f = isa.regfile(file)?;
    if isa.regfiles[f].kind != lathe_isa::model::RegfileKind::Predicate {
        return None;
    }
    let base = gpr_base("predicate_gpr")?;
    Some(Gpr {
        num: base * 4 + u32::try_from(value).ok()?,
        address: false,
        special: true,
    })
}

fn gpr_base_in(isa: &Isa, key: &str) -> Option<u32> {
    (0..isa.encodings.len())
        .find_map(|e| meta_int(isa, e, key))
        .and_then(|n| u32::try_from(n).ok())
}

/// The GPR number GPR operand encodings name a special file by (the
/// spec's `predicate_gpr` or `address_gpr` metadata, given as `key`),
/// searched for once.
pub(crate) fn gpr_base(key: &str) -> Option<u32> {
    static PREDICATE: OnceLock<Option<u32>> = OnceLock::new();
    static ADDRESS: OnceLock<Option<u32>> = OnceLock::new();
    let isa = spec().ok()?;
    let found = match key {
        "predicate_gpr" => &PREDICATE,
        "address_gpr" => &ADDRESS,
        _ => return gpr_base_in(isa, key),
    };
    *found.get_or_init(|| gpr_base_in(isa, key))
}

/// A register `word` reads or writes, as its operand encodes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Access {
    /// GPR number × 4 + component.
    pub num: u32,
    pub half: bool,
    /// Consecutive components (more than one under `(rptN)`).
    pub elems: u32,
    /// A special register (a0, p0), not a general one.
    pub special: bool,
}

/// What the statistics need of one word, from one decoding.
pub(crate) struct WordFacts {
    /// The `(rptN)` repeat count.
    pub repeat: u32,
    /// The `(nopN)` slots after it.
    pub nops: u32,
    /// Every register it names, destinations first.
    pub accesses: Vec<Access>,
}

/// The facts of `word`, decoded through `cache` (emission passes the
/// legaliser's: most final words were measured there).
pub(crate) fn facts(
    word: u64,
    generation: Generation,
    cache: &mut Decoded,
) -> Result<WordFacts, Error> {
    let n = cache.get(spec()?, word, generation)?;
    let accesses = n
        .dsts
        .iter()
        .chain(n.srcs.iter().map(|(_, r)| r))
        .map(|r| Access {
            num: r.num,
            half: r.half,
            elems: r.elems,
            special: r.special,
        })
        .collect();
    Ok(WordFacts {
        repeat: n.repeat,
        nops: n.nops,
        accesses,
    })
}

/// The `(nopN)` slots `word` carries after itself, decoded through `cache`
/// (the legaliser asks about the words it has just measured).
pub(crate) fn nop_slots(
    word: u64,
    generation: Generation,
    cache: &mut Decoded,
) -> Result<u32, Error> {
    Ok(cache.get(spec()?, word, generation)?.nops)
}

/// The GPR an operand value names, following sub-encodings down to an
/// operand encoding the spec marks `regfile = gpr`; `None` for consts,
/// immediates and relative forms. `caller` is the scope of the
/// instruction (or operand) holding the field: it decides the forms whose
/// params choose between a register and an immediate.
fn gpr_of(
    isa: &Isa,
    forms: &mut Forms,
    ty: &FieldType,
    value: u64,
    generation: u32,
    caller: &Scope<'_>,
) -> Option<Gpr> {
    let FieldType::Sub(tree, binds) = ty else {
        return None;
    };
    let form = form(isa, forms, *tree);
    // Relative forms name no fixed register.
    if form.relative {
        return None;
    }
    // A form that may be an immediate is the plain register only when
    // its params (bound to the caller's fields) pick no other variant.
    if !form.immediate
        && let Some(gpr) = plain_gpr(form, value)
    {
        return Some(gpr);
    }
    let sub_leaf = isa.decode_in(*tree, value, generation)?;
    let scope = Scope::new(isa, sub_leaf, value, generation, Some((caller, binds)));
    let mut variant = false;
    for (k, enc) in isa.chain(sub_leaf).enumerate() {
        let e = &isa.encodings[enc];
        let active = scope.active_when(k, enc);
        variant |= active.is_some();
        let fields = active
            .map(|j| &e.whens[j].level.fields[..])
            .into_iter()
            .flatten()
            .chain(&e.plain.fields);
        for field in fields {
            let v = field.extract(value);
            if let Some(gpr) = gpr_of(isa, forms, &field.ty, v, generation, &scope) {
                return Some(gpr);
            }
        }
    }
    if form.immediate && !variant && !isa.encodings[sub_leaf].plain.fields.is_empty() {
        return plain_gpr(form, value);
    }
    None
}

/// What [`gpr_of`] reads of an operand encoding's metadata.
#[derive(Clone, Copy)]
struct Form {
    /// `relative = true`: names no fixed register.
    relative: bool,
    /// `immediate = true`: may be an immediate instead.
    immediate: bool,
    /// `regfile = gpr`: its value is the register number; with the
    /// `address_gpr` and `special_gpr_from` register numbers.
    gpr: Option<(Option<i64>, Option<i64>)>,
}

/// Operand encodings' [`Form`]s, read once per shader.
type Forms = rustc_hash::FxHashMap<EncId, Form>;

fn form(isa: &Isa, forms: &mut Forms, tree: EncId) -> Form {
    *forms.entry(tree).or_insert_with(|| {
        let ident = |key: &str| match isa.meta(tree, key) {
            Some(lathe_isa::ast::MetaValue::Ident(v)) => Some(v.as_str()),
            _ => None,
        };
        Form {
            relative: ident("relative") == Some("true"),
            immediate: ident("immediate") == Some("true"),
            gpr: (ident("regfile") == Some("gpr")).then(|| {
                (
                    meta_int(isa, tree, "address_gpr"),
                    meta_int(isa, tree, "special_gpr_from"),
                )
            }),
        }
    })
}

/// `value` as the register an operand encoding marked `regfile = gpr`
/// names; `None` for other encodings.
fn plain_gpr(form: Form, value: u64) -> Option<Gpr> {
    let (address, special_from) = form.gpr?;
    let num = u32::try_from(value).ok()?;
    let reg = i64::from(num / 4);
    Some(Gpr {
        num,
        address: address == Some(reg),
        special: special_from.is_some_and(|from| reg >= from),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir3::assemble;

    fn nops(program: &[&str]) -> u32 {
        let g = Generation::A6xx;
        let words: Vec<u64> = program.iter().map(|t| assemble(t, g).unwrap()).collect();
        required_nops(&words, g).unwrap()
    }

    #[test]
    fn texture_coordinates_and_load_offsets_are_read_registers() {
        // The second coordinate of the (r0.x, r0.y) group, an ALU result,
        // needs the ALU -> tex 6 slots; a register offset of ldc (a source
        // that could have been an immediate) the ALU -> mem 6.
        assert_eq!(
            nops(&[
                "mov.f32f32 r0.y, r1.y",
                "sam (f32)(xyzw)r2.x, r0.x, s#0, t#0"
            ]),
            6
        );
        assert_eq!(
            nops(&[
                "mov.u32u32 r2.y, 4",
                "ldc.offset0.1.uniform r2.w, r2.z, r2.y"
            ]),
            6
        );
        assert_eq!(
            nops(&["mov.u32u32 r0.w, 4", "getsize (s32)(xy)r1.w, r0.w, t#0"]),
            6
        );
    }

    #[test]
    fn address_register_writes_take_the_addr_latency() {
        // The spec's `address_gpr` on `reg-gpr` marks a0 writes: 6 slots,
        // where the same ALU result in a plain GPR needs 3.
        assert_eq!(nops(&["mova a0.x, hr0.x", "add.s hr0.x, ha0.x, hr1.x"]), 6);
        assert_eq!(
            nops(&["add.u r2.x, r3.x, r1.x", "add.u r0.x, r2.x, r1.x"]),
            3
        );
    }
}
