//! Code generation for `lathe_codegen_macros::isa!`: returns the token
//! stream the macro expands to.
//!
//! Generated: the embedded spec text (so the runtime engine can interpret
//! display and assembly with exactly the checked model), an `Opcode` enum
//! with a decision-tree `decode` written as nested `match`es on opcode
//! bits, per-opcode metadata (name, mnemonic, generations, latency class),
//! a `LatencyClass` enum with the latency table as a `match`, and an
//! `Instr` value (opcode + word) with `encode`, `decode`, `Display`,
//! `write_text`, `assemble` and `arbitrary::Arbitrary` producing only words
//! that decode.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use crate::ast::MetaValue;
use crate::check::rust_name;
use crate::decode::{DecisionTree, Node};
use crate::model::{EncId, Isa};

fn tree_tokens(isa: &Isa, t: &DecisionTree, n: usize) -> TokenStream {
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
                let body = tree_tokens(isa, t, *c);
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
                let id = format_ident!("{}", rust_name(&isa.encodings[cand.enc].name));
                let mask = Literal::u64_unsuffixed(cand.mask);
                let m = Literal::u64_unsuffixed(cand.match_bits);
                let (lo, hi) = (
                    Literal::u32_unsuffixed(cand.generation.min),
                    Literal::u32_unsuffixed(cand.generation.max),
                );
                quote! {
                    if word & #mask == #m && generation >= #lo && generation <= #hi {
                        return Some(Opcode::#id);
                    }
                }
            });
            quote! { { #(#tests)* None } }
        }
    }
}

/// The macro expansion for the checked spec `isa` whose root file is
/// `root` (the absolute path the loader used).
pub fn generate(isa: &Isa, root: &str) -> TokenStream {
    let leaves: Vec<EncId> = isa.instructions().collect();
    let idents: Vec<_> = leaves
        .iter()
        .map(|&l| format_ident!("{}", rust_name(&isa.encodings[l].name)))
        .collect();
    let names: Vec<_> = leaves.iter().map(|&l| isa.encodings[l].name.clone()).collect();
    let mnemonics: Vec<_> = leaves.iter().map(|&l| isa.mnemonic(l).to_string()).collect();
    let docs: Vec<_> = leaves
        .iter()
        .map(|&l| {
            let d = &isa.encodings[l].doc;
            if d.is_empty() {
                format!("`{}`", isa.encodings[l].name)
            } else {
                d.clone()
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

    let files: Vec<String> = isa
        .sources
        .files
        .iter()
        .map(|f| f.path.display().to_string())
        .collect();

    let decode_body = match isa.decoder(isa.root) {
        Some(t) if !t.nodes.is_empty() => tree_tokens(isa, t, 0),
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
            #[allow(clippy::absurd_extreme_comparisons, unused_comparisons)]
            pub fn latency(producer: LatencyClass, consumer: LatencyClass, operand: Option<&str>, generation: u32) -> Option<u32> {
                let _ = (&producer, &consumer, &operand);
                #(#rules)*
                None
            }
        }
    };

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

        /// The checked spec, loaded once from the embedded text; it drives
        /// display and assembly.
        pub fn isa() -> &'static ::lathe_isa::Isa {
            static ISA: ::std::sync::OnceLock<::lathe_isa::Isa> = ::std::sync::OnceLock::new();
            ISA.get_or_init(|| {
                match ::lathe_isa::load_with(::std::path::Path::new(#root), &::lathe_isa::MemReader(SPEC_FILES)) {
                    Ok(isa) => isa,
                    // The same files were checked when this code was generated.
                    Err(d) => unreachable!("embedded spec no longer loads: {d}"),
                }
            })
        }

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
            #[allow(clippy::absurd_extreme_comparisons, unused_comparisons)]
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
                isa().encoding(self.info().name).unwrap_or_default()
            }

            /// Metadata `key` from the spec (nearest definition or default).
            pub fn meta(self, key: &str) -> Option<&'static ::lathe_isa::ast::MetaValue> {
                isa().meta(self.encoding(), key)
            }
        }

        #latency_items

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
                isa().disassemble_into(self.word, self.generation, out).map(|_| ())
            }

            /// Assembles one instruction's text.
            pub fn assemble(text: &str, generation: u32) -> Result<Instr, ::lathe_isa::AsmError> {
                let word = isa().assemble(text, generation)?;
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
                let opcode = *u.choose(&Opcode::ALL)?;
                let info = opcode.info();
                let (lo, hi) = info.generations;
                let generation = u.int_in_range(lo..=hi.min(lo.saturating_add(1000)))?;
                let bits: u64 = u.arbitrary()?;
                let word = ((bits & !info.mask) | info.match_bits) & #word_mask;
                // Valid means: decodes back to this opcode and displays
                // (every sub-encoding matches).
                match Instr::decode(word, generation) {
                    Some(i) if i.opcode == opcode && isa().disassemble(word, generation).is_ok() => Ok(i),
                    _ => Err(::arbitrary::Error::IncorrectFormat),
                }
            }
        }
    }
}
