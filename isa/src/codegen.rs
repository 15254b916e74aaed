//! Code generation for `lathe_codegen_macros::isa!`: returns the token
//! stream the macro expands to.
//!
//! Generated, per spec: the embedded spec text; an `Opcode` enum whose
//! `decode` is the decision tree written as nested `match`es on opcode
//! bits (agreeing with the runtime decoder, declared overlaps included);
//! per-opcode metadata (name, mnemonic, generations, latency class); a
//! `LatencyClass` enum with the latency table as a `match`; one Rust enum
//! per spec enum (in `enums`); a `Field` enum naming every field and
//! derived value of the instructions; a `Value` enum of typed field values;
//! and `Instr` (opcode + generation + exact word) with `decode`, `encode`,
//! `get`/`set` and a typed getter/setter per field whose type is the same
//! in every instruction, `validate`, `warnings`, `Display`, `assemble` and
//! an `arbitrary::Arbitrary` that builds instructions field by field.
//!
//! Display is generated code too (the `display` module, built by
//! [`crate::gen_display`]): straight-line writers per encoding, names
//! resolved at expansion time, enum texts as `match`es, and a `\t; ` note
//! for unexpected bits; it needs no spec at run time. So are assembly (the
//! `asm` module, [`crate::gen_asm`]), typed field access (`get`/`set`
//! through the display's per-leaf name resolution and a static table of
//! each item's type and bits), `validate` and `Opcode::meta` (static
//! tables). The `lathe-isa` engine runs on the checked model the
//! expansion embeds in compact form ([`crate::compact`]; `isa()` reads it
//! back once, well under a millisecond, and never parses the spec text):
//! it stays the oracle all of these are tested against, gives the
//! assembler's diagnostics, and serves `Arbitrary`, the machine IR tables
//! and the target facts.

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use crate::ast::MetaValue;
use crate::check::rust_name;
use crate::decode::{DecisionTree, Node};
use crate::model::{EncId, EnumId, FieldType, Isa, Str};

/// The decision tree `t` from node `n` as nested `match`es on the word's
/// bits, returning `Some(leaf(enc))` for the matching leaf, `None` for no
/// match or an ambiguous one (a declared overlap).
pub(crate) fn tree_tokens(
    t: &DecisionTree,
    n: usize,
    leaf: &dyn Fn(EncId) -> TokenStream,
) -> TokenStream {
    match &t.nodes[n] {
        Node::Switch {
            low,
            bits,
            children,
        } => {
            let mask = Literal::u64_unsuffixed((1u64 << bits) - 1);
            let low = Literal::u32_unsuffixed(*low);
            let arms = children.iter().enumerate().map(|(v, c)| {
                let v = Literal::u64_unsuffixed(v as u64);
                let body = tree_tokens(t, *c, leaf);
                quote! { #v => #body }
            });
            quote! {
                match (word >> #low) & #mask {
                    #(#arms,)*
                    _ => None,
                }
            }
        }
        Node::Leaves(list) => {
            let tests = list.iter().map(|&c| {
                let cand = &t.candidates[c];
                let id = leaf(cand.enc);
                let mask = Literal::u64_unsuffixed(cand.mask);
                let m = Literal::u64_unsuffixed(cand.match_bits);
                let (lo, hi) = (
                    Literal::u32_unsuffixed(cand.generation.min),
                    Literal::u32_unsuffixed(cand.generation.max),
                );
                // A word also matching a declared overlap partner is
                // ambiguous and decodes to nothing, as in the engine.
                let partners = cand.partners.iter().map(|&p| {
                    let p = &t.candidates[p];
                    let mask = Literal::u64_unsuffixed(p.mask);
                    let m = Literal::u64_unsuffixed(p.match_bits);
                    let (lo, hi) = (
                        Literal::u32_unsuffixed(p.generation.min),
                        Literal::u32_unsuffixed(p.generation.max),
                    );
                    quote! {
                        if word & #mask == #m && generation >= #lo && generation <= #hi {
                            return None;
                        }
                    }
                });
                quote! {
                    if word & #mask == #m && generation >= #lo && generation <= #hi {
                        #(#partners)*
                        return Some(#id);
                    }
                }
            });
            quote! { { #(#tests)* None } }
        }
    }
}

/// The Rust value a field type reads as in the generated API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Uint,
    Int,
    Bool,
    Float,
    Enum(EnumId),
    Sub,
}

fn kind(ty: &FieldType) -> Kind {
    match ty {
        FieldType::Uint
        | FieldType::Hex
        | FieldType::HexUpper
        | FieldType::Uoffset
        | FieldType::AbsBranch => Kind::Uint,
        FieldType::Int | FieldType::Offset | FieldType::Branch => Kind::Int,
        FieldType::Bool(_) | FieldType::BoolInv(_) => Kind::Bool,
        FieldType::Float | FieldType::Fixed(_) => Kind::Float,
        FieldType::Enum(e) => Kind::Enum(*e),
        FieldType::Sub(..) => Kind::Sub,
    }
}

/// One name of the generated `Field` enum.
struct FieldName {
    name: String,
    /// The kind of every definition, over all instructions and overrides.
    kinds: Vec<Kind>,
    /// Whether some definition is a real field (not derived).
    settable: bool,
    /// How many instructions define it somewhere in their chain.
    instructions: usize,
}

/// Every field and derived name of the instruction tree, in first-seen order.
fn instruction_fields(isa: &Isa) -> Vec<FieldName> {
    let mut out: Vec<FieldName> = Vec::new();
    for leaf in isa.instructions() {
        let mut here: Vec<String> = Vec::new();
        for enc in isa.chain(leaf) {
            let e = &isa.encodings[enc];
            let levels = std::iter::once(&*e.plain).chain(e.whens.iter().map(|w| &w.level));
            for level in levels {
                let items = level
                    .fields
                    .iter()
                    .map(|f| (&f.name, &f.ty, true))
                    .chain(level.deriveds.iter().map(|d| (&d.name, &d.ty, false)));
                for (name, ty, is_field) in items {
                    let entry = match out.iter().position(|f| f.name == *name) {
                        Some(i) => &mut out[i],
                        None => {
                            out.push(FieldName {
                                name: name.to_string(),
                                kinds: Vec::new(),
                                settable: false,
                                instructions: 0,
                            });
                            out.last_mut().expect("just pushed")
                        }
                    };
                    let k = kind(ty);
                    if !entry.kinds.contains(&k) {
                        entry.kinds.push(k);
                    }
                    entry.settable |= is_field;
                    if !here.iter().any(|h| h == name) {
                        here.push(name.to_string());
                        entry.instructions += 1;
                    }
                }
            }
        }
    }
    out
}

/// Names a generated accessor must not take.
const RESERVED_METHODS: &[&str] = &[
    "decode",
    "encode",
    "get",
    "set",
    "fields",
    "assemble",
    "write_text",
    "validate",
    "warnings",
    "opcode",
    "generation",
    "to_string",
    "clone",
    "fmt",
    "arbitrary",
    "eq",
    "hash",
    "as",
    "break",
    "const",
    "continue",
    "crate",
    "else",
    "enum",
    "extern",
    "false",
    "fn",
    "for",
    "if",
    "impl",
    "in",
    "let",
    "loop",
    "match",
    "mod",
    "move",
    "mut",
    "pub",
    "ref",
    "return",
    "self",
    "static",
    "struct",
    "super",
    "trait",
    "true",
    "type",
    "unsafe",
    "use",
    "where",
    "while",
    "async",
    "await",
    "dyn",
    "abstract",
    "become",
    "box",
    "do",
    "final",
    "macro",
    "override",
    "priv",
    "typeof",
    "unsized",
    "virtual",
    "yield",
    "try",
    "gen",
];

/// `base`, or `base` with a numeric suffix, not yet in `used`.
fn unique(base: String, used: &mut Vec<String>) -> String {
    let mut name = base.clone();
    let mut n = 2;
    while used.contains(&name) {
        name = format!("{base}{n}");
        n += 1;
    }
    used.push(name.clone());
    name
}

/// Rust variant names for an enum's values, from their display texts.
fn enum_variants(values: &[(u64, Str, Str)]) -> Vec<String> {
    let mut used = Vec::new();
    values
        .iter()
        .map(|(v, text, _)| {
            let clean: String = text
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            let base = rust_name(&clean);
            let base = if base.is_empty() {
                format!("V{v}")
            } else {
                base
            };
            unique(base, &mut used)
        })
        .collect()
}

/// The `enums` module and, per spec enum, (id, type ident, `Value` variant).
fn enum_items(isa: &Isa) -> (TokenStream, Vec<(EnumId, Ident, Ident)>) {
    let mut types = Vec::new();
    let mut used_types = Vec::new();
    let mut used_values: Vec<String> = ["Uint", "Int", "Bool", "Float", "Sub", "Unlisted"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut items = Vec::new();
    for (id, def) in isa.enums.iter().enumerate() {
        let base = rust_name(&def.name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"));
        let ty = format_ident!("{}", unique(base.clone(), &mut used_types));
        let value_variant = format_ident!("{}", unique(base, &mut used_values));
        let doc = if def.doc.is_empty() {
            format!("Values of the spec's enum `{}`.", def.name)
        } else {
            def.doc.to_string()
        };
        let vars: Vec<Ident> = enum_variants(&def.values)
            .into_iter()
            .map(|v| format_ident!("{}", v))
            .collect();
        let vals: Vec<Literal> = def
            .values
            .iter()
            .map(|(v, _, _)| Literal::u64_unsuffixed(*v))
            .collect();
        let texts: Vec<&Str> = def.values.iter().map(|(_, t, _)| t).collect();
        let vdocs: Vec<String> = def
            .values
            .iter()
            .map(|(v, t, d)| {
                if d.is_empty() {
                    format!("`{t:?}` ({v})")
                } else {
                    format!("`{t:?}` ({v}): {d}")
                }
            })
            .collect();
        let n = vars.len();
        let strict = def.strict;
        let repr = if n == 0 {
            quote! {}
        } else {
            quote! { #[repr(u64)] }
        };
        items.push(quote! {
            #[doc = #doc]
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
            #repr
            pub enum #ty { #(#[doc = #vdocs] #vars = #vals,)* }

            impl #ty {
                /// Every listed value, in spec order.
                pub const ALL: [#ty; #n] = [#(#ty::#vars,)*];
                /// Whether values the spec does not list are reserved.
                pub const STRICT: bool = #strict;

                /// The value with these bits, if the spec lists it.
                #[allow(clippy::match_single_binding)]
                pub fn from_bits(bits: u64) -> Option<#ty> {
                    match bits { #(#vals => Some(#ty::#vars),)* _ => None }
                }

                /// The value's bits.
                pub fn bits(self) -> u64 {
                    match self { #(#ty::#vars => #vals,)* }
                }

                /// What the disassembler prints for it.
                pub fn text(self) -> &'static str {
                    match self { #(#ty::#vars => #texts,)* }
                }
            }
        });
        types.push((id, ty, value_variant));
    }
    (
        quote! {
            /// One Rust enum per enum of the spec.
            pub mod enums {
                #(#items)*
            }
        },
        types,
    )
}

/// The `Field` enum, `Value`, and the typed accessors of `Instr`.
fn field_items(isa: &Isa, fields: &[FieldName], enums: &[(EnumId, Ident, Ident)]) -> TokenStream {
    let mut used = Vec::new();
    let variants: Vec<Ident> = fields
        .iter()
        .map(|f| {
            let base = rust_name(&f.name);
            format_ident!("{}", unique(base, &mut used))
        })
        .collect();
    let names: Vec<&String> = fields.iter().map(|f| &f.name).collect();
    let docs: Vec<String> = fields
        .iter()
        .map(|f| {
            format!(
                "`{}` ({} in {} instruction(s)).",
                f.name,
                if f.settable { "field" } else { "derived value" },
                f.instructions
            )
        })
        .collect();
    let count = fields.len();

    let enum_ids: Vec<Literal> = enums
        .iter()
        .map(|(id, _, _)| Literal::usize_unsuffixed(*id))
        .collect();
    let enum_types: Vec<&Ident> = enums.iter().map(|(_, t, _)| t).collect();
    let enum_values: Vec<&Ident> = enums.iter().map(|(_, _, v)| v).collect();
    let enum_docs: Vec<String> = enums
        .iter()
        .map(|(id, _, _)| format!("A value of the spec's enum `{}`.", isa.enums[*id].name))
        .collect();

    // Typed accessors for names whose kind is the same everywhere.
    let mut used_methods: Vec<String> = RESERVED_METHODS.iter().map(|s| s.to_string()).collect();
    let mut accessors = Vec::new();
    for (f, var) in fields.iter().zip(&variants) {
        let [k] = f.kinds.as_slice() else { continue };
        let base = f.name.to_lowercase();
        let getter = unique(base.clone(), &mut used_methods);
        let getter = format_ident!("{}", getter);
        let setter = format_ident!("{}", unique(format!("set_{base}"), &mut used_methods));
        let name = &f.name;
        let gdoc = format!("`{name}`, if this instruction (with its active overrides) has it.");
        let sdoc = format!("Sets field `{name}` (range-checked; the opcode must not change).");
        let (ret, arm, set_ty, set_value) = match k {
            Kind::Uint => (
                quote! { u64 },
                quote! { Value::Uint(v) => Some(v) },
                quote! { u64 },
                quote! { Value::Uint(v) },
            ),
            Kind::Int => (
                quote! { i64 },
                quote! { Value::Int(v) => Some(v) },
                quote! { i64 },
                quote! { Value::Int(v) },
            ),
            Kind::Bool => (
                quote! { bool },
                quote! { Value::Bool(v) => Some(v) },
                quote! { bool },
                quote! { Value::Bool(v) },
            ),
            Kind::Float => (
                quote! { f64 },
                quote! { Value::Float(v) => Some(v) },
                quote! { f64 },
                quote! { Value::Float(v) },
            ),
            Kind::Sub => (
                quote! { SubValue },
                quote! { Value::Sub(v) => Some(v) },
                quote! { u64 },
                quote! { Value::Sub(SubValue { bits: v, leaf: None }) },
            ),
            Kind::Enum(id) => {
                let Some((_, ty, vv)) = enums.iter().find(|(e, _, _)| e == id) else {
                    continue;
                };
                (
                    quote! { Result<enums::#ty, u64> },
                    quote! { Value::#vv(v) => Some(Ok(v)), Value::Unlisted(b) => Some(Err(b)) },
                    quote! { enums::#ty },
                    quote! { Value::#vv(v) },
                )
            }
        };
        accessors.push(quote! {
            #[doc = #gdoc]
            pub fn #getter(&self) -> Option<#ret> {
                match self.get(Field::#var)? {
                    #arm,
                    _ => None,
                }
            }
        });
        if f.settable {
            accessors.push(quote! {
                #[doc = #sdoc]
                pub fn #setter(&mut self, v: #set_ty) -> Result<(), ::lathe_isa::FieldError> {
                    self.set(Field::#var, #set_value)
                }
            });
        }
    }

    quote! {
        /// Every field and derived value name of the instructions.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Field { #(#[doc = #docs] #variants,)* }

        impl Field {
            /// All names, in spec order.
            pub const ALL: [Field; #count] = [#(Field::#variants,)*];

            /// The name in the spec.
            pub fn name(self) -> &'static str {
                match self { #(Field::#variants => #names,)* }
            }

            /// The `Field` with this spec name.
            pub fn from_name(name: &str) -> Option<Field> {
                Field::ALL.iter().copied().find(|f| f.name() == name)
            }
        }

        /// A sub-encoding field: its raw bits and the leaf they decode to.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct SubValue {
            pub bits: u64,
            /// Name of the sub-encoding leaf (`None` if no leaf matches, or
            /// when given to a setter, where it is ignored).
            pub leaf: Option<&'static str>,
        }

        /// A typed field value: enum fields as the generated enums, `int`,
        /// `offset` and `branch` sign-extended, `float`/`fixed` as numbers.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum Value {
            /// `uint`, `hex`, `HEX`, `uoffset`, `absbranch`.
            Uint(u64),
            /// `int`, `offset`, `branch`, sign-extended from the field width.
            Int(i64),
            /// `bool`, `bool_inv` (the raw bit, whatever is displayed).
            Bool(bool),
            /// `float` (16 or 32 bits) and `fixed(R)`.
            Float(f64),
            /// A sub-encoding field.
            Sub(SubValue),
            #(#[doc = #enum_docs] #enum_values(enums::#enum_types),)*
            /// An enum value its table does not list (raw bits).
            Unlisted(u64),
        }

        #[allow(clippy::match_single_binding)]
        fn enum_value(id: usize, bits: u64) -> Value {
            match id {
                #(#enum_ids => enums::#enum_types::from_bits(bits).map_or(Value::Unlisted(bits), Value::#enum_values),)*
                _ => Value::Unlisted(bits),
            }
        }

        #[allow(clippy::match_single_binding)]
        fn value_enum(v: &Value) -> Option<usize> {
            match v {
                #(Value::#enum_values(_) => Some(#enum_ids),)*
                _ => None,
            }
        }

        fn value_of(info: &::lathe_isa::gen_rt::ItemInfo, raw: u64, generation: u32) -> Value {
            use ::lathe_isa::gen_rt::ItemTy as T;
            use ::lathe_isa::format::{float_value, sign_extend};
            match info.ty {
                T::Uint => Value::Uint(raw),
                T::Int => Value::Int(sign_extend(raw, info.width)),
                T::Bool => Value::Bool(raw != 0),
                T::Float => Value::Float(float_value(raw, info.width)),
                T::Fixed(radix) => Value::Float(sign_extend(raw, info.width) as f64 / (1u64 << radix) as f64),
                T::Enum(id) => enum_value(id, raw),
                T::Sub { tree, width } => {
                    let m = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
                    Value::Sub(SubValue { bits: raw, leaf: display::sub_leaf(tree, raw & m, generation) })
                }
            }
        }

        impl Instr {
            /// The typed value of `field` (resolved with the active `when`
            /// overrides); `None` if this instruction has no such field.
            /// Generated code: no spec at run time.
            pub fn get(&self, field: Field) -> Option<Value> {
                let (info, v) = display::field(self.word, self.generation, field as u16)?;
                Some(value_of(info, v as u64, self.generation))
            }

            /// Sets `field` to `value` (converted by the field's type and
            /// range-checked). Fails for derived values, values of another
            /// enum, and changes that would alter the opcode.
            pub fn set(&mut self, field: Field, value: Value) -> Result<(), ::lathe_isa::FieldError> {
                use ::lathe_isa::FieldInput as I;
                use ::lathe_isa::FieldError as E;
                let name = field.name();
                let (info, _) = display::field(self.word, self.generation, field as u16).ok_or_else(|| E::NoField {
                    leaf: self.opcode.info().name.to_string(),
                    field: name.to_string(),
                })?;
                if info.derived {
                    return Err(E::Derived { leaf: self.opcode.info().name.to_string(), field: name.to_string() });
                }
                if let ::lathe_isa::gen_rt::ItemTy::Enum(id) = info.ty {
                    if value_enum(&value).is_some_and(|v| v != id) {
                        return Err(E::WrongKind {
                            field: name.to_string(),
                            ty: info.describe.to_string(),
                            value: format!("{value:?}"),
                        });
                    }
                }
                let input = match value {
                    Value::Uint(v) | Value::Unlisted(v) => I::Bits(v),
                    Value::Int(v) => I::Signed(v),
                    Value::Bool(b) => I::Bits(u64::from(b)),
                    Value::Float(x) => I::Float(x),
                    Value::Sub(s) => I::Bits(s.bits),
                    #(Value::#enum_values(e) => I::Bits(e.bits()),)*
                };
                let bits = ::lathe_isa::fields::input_bits(name, info.width, info.conv, &|| info.describe.to_string(), input)?;
                let word = info.insert(self.word, bits);
                if Opcode::decode(word, self.generation) != Some(self.opcode) {
                    return Err(E::ChangesInstruction { field: name.to_string() });
                }
                self.word = word;
                Ok(())
            }

            /// Every field and derived value this instruction has, typed.
            pub fn fields(&self) -> Vec<(Field, Value)> {
                Field::ALL
                    .iter()
                    .filter_map(|&f| self.get(f).map(|v| (f, v)))
                    .collect()
            }

            #(#accessors)*
        }
    }
}

/// The macro expansion for the checked spec `isa`.
pub fn generate(isa: &Isa) -> TokenStream {
    let model = match crate::compact::to_bytes(isa) {
        Ok(bytes) => Literal::byte_string(&bytes),
        Err(e) => {
            let msg = e.to_string();
            return quote! { compile_error!(#msg); };
        }
    };
    let leaves: Vec<EncId> = isa.instructions().collect();
    let idents: Vec<_> = leaves
        .iter()
        .map(|&l| format_ident!("{}", rust_name(&isa.encodings[l].name)))
        .collect();
    let names: Vec<_> = leaves
        .iter()
        .map(|&l| isa.encodings[l].name.clone())
        .collect();
    let mnemonics: Vec<_> = leaves
        .iter()
        .map(|&l| isa.mnemonic(l).to_string())
        .collect();
    let docs: Vec<_> = leaves
        .iter()
        .map(|&l| {
            let d = &isa.encodings[l].doc;
            if d.is_empty() {
                format!("`{}`", isa.encodings[l].name)
            } else {
                d.to_string()
            }
        })
        .collect();
    let gmin: Vec<_> = leaves
        .iter()
        .map(|&l| Literal::u32_unsuffixed(isa.encodings[l].generation.min))
        .collect();
    let gmax: Vec<_> = leaves
        .iter()
        .map(|&l| Literal::u32_unsuffixed(isa.encodings[l].generation.max))
        .collect();
    let masks: Vec<_> = leaves
        .iter()
        .map(|&l| Literal::u64_unsuffixed(isa.encodings[l].mask))
        .collect();
    let matches: Vec<_> = leaves
        .iter()
        .map(|&l| Literal::u64_unsuffixed(isa.encodings[l].match_bits))
        .collect();
    let count = leaves.len();
    // Metadata per opcode: every key with a value (nearest definition or
    // the key's default), as static tables.
    let metas: Vec<TokenStream> = leaves
        .iter()
        .map(|&l| {
            let mut keys: Vec<&str> = isa.meta_keys.iter().map(|k| k.name.as_str()).collect();
            for enc in isa.chain(l) {
                for (k, _, _) in &isa.encodings[enc].meta {
                    if !keys.contains(&k.as_str()) {
                        keys.push(k);
                    }
                }
            }
            let pairs = keys.iter().filter_map(|&k| {
                let v = match isa.meta(l, k)? {
                    MetaValue::Int(i) => quote! { ::lathe_isa::ast::MetaRef::Int(#i) },
                    MetaValue::Str(s) => quote! { ::lathe_isa::ast::MetaRef::Str(#s) },
                    MetaValue::Ident(s) => quote! { ::lathe_isa::ast::MetaRef::Ident(#s) },
                    MetaValue::List(items) => {
                        quote! { ::lathe_isa::ast::MetaRef::List(&[#(#items),*]) }
                    }
                };
                Some(quote! { (#k, #v) })
            });
            quote! { &[#(#pairs),*] }
        })
        .collect();
    let enc_ids: Vec<_> = leaves
        .iter()
        .map(|&l| Literal::usize_unsuffixed(l))
        .collect();
    let table_index = {
        let index = crate::machine::TableIndex::of(isa);
        let leaves = index.leaf_infos(isa);
        let leaf_count = leaves.len();
        let leaves = leaves.iter().map(crate::statics::ToStatic::to_static);
        let names = index.by_name.iter().map(|(n, _)| n.as_ref());
        let leaf_of = index
            .by_name
            .iter()
            .map(|(_, i)| Literal::u16_unsuffixed(*i));
        let by_enc = index.by_enc.iter().map(|i| match i {
            Some(i) => {
                let i = Literal::u16_unsuffixed(*i);
                quote! { Some(#i) }
            }
            None => quote! { None },
        });
        quote! {
            ::lathe_isa::machine::TableIndex {
                encs: ::std::borrow::Cow::Borrowed(&ENC_IDS),
                by_name: ::std::borrow::Cow::Borrowed(&[#((::std::borrow::Cow::Borrowed(#names), #leaf_of)),*]),
                by_enc: ::std::borrow::Cow::Borrowed(&[#(#by_enc),*]),
                leaves: {
                    static LEAVES: [::lathe_isa::machine::LeafInfo; #leaf_count] = [#(#leaves),*];
                    &LEAVES
                },
            }
        }
    };
    let fields = instruction_fields(isa);
    let field_names: Vec<String> = fields.iter().map(|f| f.name.clone()).collect();
    let display_mod = crate::gen_display::display_module(isa, &field_names);
    let sim_mod = crate::gen_sim::sim_module(isa);
    let asm_mod = crate::gen_asm::asm_module(isa);
    let (enums_mod, enum_types) = enum_items(isa);
    let typed = field_items(isa, &fields, &enum_types);

    let files: Vec<String> = isa
        .sources
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();

    let decode_body = match isa.decoder(isa.root) {
        Some(t) if !t.nodes.is_empty() => tree_tokens(t, 0, &|enc| {
            let id = format_ident!("{}", rust_name(&isa.encodings[enc].name));
            quote! { Opcode::#id }
        }),
        _ => quote! { None },
    };

    // Latency classes and table.
    let classes: Vec<_> = isa
        .latency
        .classes
        .iter()
        .map(|c| format_ident!("{}", rust_name(c)))
        .collect();
    let class_names = isa.latency.classes.clone();
    let class_of: Vec<TokenStream> = leaves
        .iter()
        .map(|&l| {
            let key = isa
                .meta_keys
                .iter()
                .find(|k| k.ty == crate::ast::MetaType::Class)
                .map(|k| k.name.clone());
            match key.and_then(|k| isa.meta(l, &k).cloned()) {
                Some(MetaValue::Ident(c)) if isa.latency.class(&c).is_some() => {
                    let id = format_ident!("{}", rust_name(&c));
                    quote! { Some(LatencyClass::#id) }
                }
                _ => quote! { None },
            }
        })
        .collect();
    let rules = isa.latency.rules.iter().map(|r| {
        let set = |v: &Option<Vec<usize>>, var: TokenStream| match v {
            None => quote! { true },
            Some(v) => {
                let ids = v
                    .iter()
                    .map(|c| format_ident!("{}", rust_name(&isa.latency.classes[*c])));
                quote! { matches!(#var, #(LatencyClass::#ids)|*) }
            }
        };
        let p = set(&r.producers, quote! { producer });
        let c = set(&r.consumers, quote! { consumer });
        let f = match &r.field {
            None => quote! { true },
            Some(f) => quote! { operand == Some(#f) },
        };
        let (lo, hi) = (
            Literal::u32_unsuffixed(r.generation.min),
            Literal::u32_unsuffixed(r.generation.max),
        );
        let cycles = Literal::u32_unsuffixed(r.cycles);
        quote! {
            if #p && #c && #f && generation >= #lo && generation <= #hi {
                return Some(#cycles);
            }
        }
    });
    let latency_items = if classes.is_empty() {
        quote! {
            /// Latency classes (the spec declares none).
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
            pub enum LatencyClass {}
            /// Cycles between producer and consumer (no rules in the spec).
            pub fn latency(producer: LatencyClass, _consumer: LatencyClass, _operand: Option<&str>, _generation: u32) -> Option<u32> {
                match producer {}
            }
        }
    } else {
        quote! {
            /// Latency classes declared in the spec's `latency` block.
            #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
            pub enum LatencyClass { #(#classes,)* }

            impl LatencyClass {
                /// The class's name in the spec.
                pub fn name(self) -> &'static str {
                    match self { #(LatencyClass::#classes => #class_names,)* }
                }
            }

            /// Cycles a consumer of class `consumer` reading `operand` must
            /// wait after a producer of class `producer`: the first matching
            /// rule of the spec's latency table.
            #[allow(clippy::absurd_extreme_comparisons, clippy::manual_range_contains, unused_comparisons)]
            pub fn latency(producer: LatencyClass, consumer: LatencyClass, operand: Option<&str>, generation: u32) -> Option<u32> {
                let _ = (&producer, &consumer, &operand);
                #(#rules)*
                None
            }
        }
    };

    let mut by_name: Vec<(&str, usize)> = isa
        .encodings
        .iter()
        .enumerate()
        .map(|(id, e)| (e.name.as_str(), id))
        .collect();
    by_name.sort();
    let encoding_count = by_name.len();
    let encoding_names = by_name.iter().map(|(n, _)| n);
    let encoding_ids = by_name.iter().map(|(_, id)| Literal::usize_unsuffixed(*id));

    let isa_name = &isa.name;
    let width = Literal::u32_unsuffixed(isa.width);
    let word_mask = Literal::u64_unsuffixed(if isa.width >= 64 {
        u64::MAX
    } else {
        (1u64 << isa.width) - 1
    });

    quote! {
        // Rebuild when any spec file changes.
        #(const _: &str = include_str!(#files);)*

        /// The spec files this module was generated from, embedded.
        pub static SPEC_FILES: &[(&str, &str)] = &[#((#files, include_str!(#files))),*];

        /// The checked spec model, written when this code was generated
        /// (`lathe_isa::compact`; the texts are `SPEC_FILES`).
        static MODEL: &[u8] = #model;

        /// Every encoding's `(name, id)`, sorted by name.
        static ENCODING_NAMES: [(&str, usize); #encoding_count] = [#((#encoding_names, #encoding_ids)),*];

        /// The spec, read once from the model checked when this code was
        /// generated (no parsing at run time); it drives display, assembly,
        /// field resolution and the target facts.
        pub fn isa() -> &'static ::lathe_isa::Isa {
            static ISA: ::std::sync::OnceLock<::lathe_isa::Isa> = ::std::sync::OnceLock::new();
            ISA.get_or_init(|| {
                match ::lathe_isa::compact::from_static(MODEL, SPEC_FILES) {
                    Ok(mut isa) => {
                        isa.generated = Some(::lathe_isa::model::Generated {
                            trees: display::decode_tree,
                            encoding_names: &ENCODING_NAMES,
                        });
                        isa
                    }
                    // Written by this crate's own `to_bytes` at build time.
                    Err(e) => unreachable!("the embedded spec model no longer reads: {e}"),
                }
            })
        }

        /// This spec as an IR opcode vocabulary: machine-level IR is
        /// `Shader<MachineOp>` (see `lathe_isa::machine`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct Spec;

        impl ::lathe_isa::machine::MachineSpec for Spec {
            fn isa() -> &'static ::lathe_isa::Isa {
                isa()
            }
            fn table() -> &'static ::lathe_isa::machine::MachineTable {
                static TABLE: ::std::sync::OnceLock<::lathe_isa::machine::MachineTable> = ::std::sync::OnceLock::new();
                /// Its name and encoding indexes, derived from the spec
                /// when this code was generated.
                static INDEX: ::lathe_isa::machine::TableIndex = #table_index;
                TABLE.get_or_init(|| ::lathe_isa::machine::MachineTable::with_index(::std::borrow::Cow::Borrowed(&INDEX)))
            }
        }

        /// An instruction with its modifiers, as an IR opcode.
        pub type MachineOp = ::lathe_isa::machine::MachineOp<Spec>;

        /// Name of the instruction set.
        pub const ISA_NAME: &str = #isa_name;
        /// Instruction word width in bits.
        pub const WORD_BITS: u32 = #width;

        /// Every instruction (leaf encoding) of the spec.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Opcode {
            #(#[doc = #docs] #idents,)*
        }

        /// Static facts about one opcode.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct OpcodeInfo {
            pub opcode: Opcode,
            /// The encoding's name in the spec.
            pub name: &'static str,
            /// What `{NAME}` prints.
            pub mnemonic: &'static str,
            /// Generations in which it exists (inclusive).
            pub generations: (u32, u32),
            /// Pattern bits (mask, value) that identify it.
            pub mask: u64,
            pub match_bits: u64,
            pub latency_class: Option<LatencyClass>,
        }

        /// The engine's encoding index of each opcode (loading is
        /// deterministic, so these match `isa()`).
        static ENC_IDS: [usize; #count] = [#(#enc_ids,)*];

        /// Every opcode's metadata `(key, value)`, in `Opcode` order.
        static META: [&[(&str, ::lathe_isa::ast::MetaRef<'static>)]; #count] = [#(#metas,)*];

        /// Metadata table, in `Opcode` order.
        pub static OPCODES: [OpcodeInfo; #count] = [
            #(OpcodeInfo {
                opcode: Opcode::#idents,
                name: #names,
                mnemonic: #mnemonics,
                generations: (#gmin, #gmax),
                mask: #masks,
                match_bits: #matches,
                latency_class: #class_of,
            },)*
        ];

        impl Opcode {
            /// All opcodes.
            pub const ALL: [Opcode; #count] = [#(Opcode::#idents,)*];

            /// This opcode's metadata.
            pub fn info(self) -> &'static OpcodeInfo {
                &OPCODES[self as usize]
            }

            /// The opcode `word` decodes to at `generation` (decision tree on
            /// the opcode bits; never panics).
            #[allow(clippy::absurd_extreme_comparisons, clippy::manual_range_contains, unused_comparisons)]
            #[inline]
            pub fn decode(word: u64, generation: u32) -> Option<Opcode> {
                let word = word & #word_mask;
                #decode_body
            }

            /// Whether the opcode exists at `generation`.
            pub fn exists_at(self, generation: u32) -> bool {
                let (lo, hi) = self.info().generations;
                lo <= generation && generation <= hi
            }

            /// The spec's encoding index for the runtime engine.
            pub fn encoding(self) -> ::lathe_isa::EncId {
                ENC_IDS[self as usize]
            }

            /// Metadata `key` from the spec (nearest definition or default),
            /// from generated tables.
            pub fn meta(self, key: &str) -> Option<::lathe_isa::ast::MetaRef<'static>> {
                META[self as usize].iter().find(|(k, _)| *k == key).map(|&(_, v)| v)
            }
        }

        #latency_items

        #display_mod
        #asm_mod

        #enums_mod

        #typed

        #sim_mod

        /// One instruction: its opcode, the generation it was decoded or
        /// assembled for, and its exact word (every bit kept).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct Instr {
            pub opcode: Opcode,
            pub generation: u32,
            word: u64,
        }

        impl Instr {
            /// Decodes one word; `None` if no instruction matches.
            #[inline]
            pub fn decode(word: u64, generation: u32) -> Option<Instr> {
                let word = word & #word_mask;
                Opcode::decode(word, generation).map(|opcode| Instr { opcode, generation, word })
            }

            /// The instruction word.
            #[inline]
            pub fn encode(&self) -> u64 {
                self.word
            }

            /// Writes the disassembly into `out` (no allocation).
            pub fn write_text(&self, out: &mut dyn ::std::fmt::Write) -> Result<(), ::lathe_isa::DisasmError> {
                display::write_word(self.word, self.generation, true, false, out).map(|_| ())
            }

            /// Like [`Instr::write_text`], followed by a `\t; ` note naming
            /// the don't-care bits this word sets, and with `notes asserts;`
            /// in the spec the `assert` bits that differ (Mesa's decoder
            /// with errors shown).
            pub fn write_text_with_note(&self, out: &mut dyn ::std::fmt::Write) -> Result<(), ::lathe_isa::DisasmError> {
                display::write_word(self.word, self.generation, true, true, out).map(|_| ())
            }

            /// Applies the spec's validity rules (`check`s, strict enums,
            /// sub-encodings that must match).
            pub fn validate(&self) -> Result<(), ::lathe_isa::DisasmError> {
                display::validate(self.word, self.generation).map(|_| ())
            }

            /// Set don't-care bits and `assert` mismatches of the
            /// instruction and of the sub-encodings its text shows (what
            /// [`Instr::write_text_with_note`] appends).
            pub fn warnings(&self) -> Vec<::lathe_isa::DecodeWarning> {
                display::warnings(self.word, self.generation)
            }

            /// Assembles one instruction's text.
            pub fn assemble(text: &str, generation: u32) -> Result<Instr, ::lathe_isa::AsmError> {
                // Generated forms first; the engine only when they cannot
                // tell (and for its diagnostics).
                let word = match asm::assemble(text, generation) {
                    Some(w) => w,
                    None => isa().assemble(text, generation)?,
                };
                Instr::decode(word, generation).ok_or_else(|| ::lathe_isa::AsmError::NoMatch {
                    text: text.to_string(),
                    generation,
                })
            }
        }

        impl ::std::fmt::Display for Instr {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                self.write_text(f).map_err(|_| ::std::fmt::Error)
            }
        }

        impl<'a> ::arbitrary::Arbitrary<'a> for Instr {
            fn arbitrary(u: &mut ::arbitrary::Unstructured<'a>) -> ::arbitrary::Result<Self> {
                // Field by field: a leaf valid at the generation, every field
                // a value of its type (listed values for strict enums), the
                // active overrides' fields by their types; verified against
                // every `check` rule by the engine.
                let opcode = *u.choose(&Opcode::ALL)?;
                let (lo, hi) = opcode.info().generations;
                let generation = u.int_in_range(lo..=hi.min(lo.saturating_add(1000)))?;
                let mut pick = |max: u64| u.int_in_range(0..=max).unwrap_or(0);
                match isa().build_word(opcode.encoding(), generation, &mut pick) {
                    Some(word) => Ok(Instr { opcode, generation, word }),
                    None => Err(::arbitrary::Error::IncorrectFormat),
                }
            }
        }
    }
}

/// What `isa!("…")` expands to for the root spec file `path` (already
/// joined to the calling crate's directory): the generated items, or, if
/// the spec does not load, one `compile_error!` carrying every diagnostic
/// (`file:line:col: error: …` with the caret excerpt). Either way every
/// spec file that was read is `include_str!`'d so cargo rebuilds when one
/// changes.
pub fn expand(path: &std::path::Path) -> TokenStream {
    let path = crate::load::normalize(path);
    match crate::load(&path) {
        Ok(isa) => generate(&isa),
        Err(d) => {
            let msg = d.to_string();
            let mut files: Vec<String> = Vec::new();
            for x in &d.0 {
                let p = x.path.display().to_string();
                if x.path.exists() && !files.contains(&p) {
                    files.push(p);
                }
            }
            quote! {
                #(const _: &str = include_str!(#files);)*
                compile_error!(#msg);
            }
        }
    }
}
