//! The register dataflow of an instruction, read from the spec's metadata:
//! which fields are operands (`field_meta role = src | dst`), and for each
//! one the forms it can take (a register of some file, possibly addressed
//! relative to the address register, or an immediate).
//!
//! A form is a leaf of the operand field's sub-encoding tree (or the tree
//! itself when it has no children). Its class comes from the nearest
//! metadata the spec gives, in this order:
//!
//! 1. the instruction field's own `regfile` field metadata
//!    (`meta { role = src, regfile = gpr }`), for plain number fields;
//! 2. `meta regfile = F;` or `meta regfile = [F, G];` (with `meta relative
//!    = true;` for a0-relative forms) and `meta immediate = true;` on the
//!    form or its ancestors; a form with several classes is one whose
//!    instruction picks among them with another field (an immediate flag);
//! 3. otherwise the union of what the form's fields (plain, or inside a
//!    `when`) can name, by these rules (a form wrapping a register operand).
//!
//! A form none of these reach has no class: [`Operand::gaps`] counts them,
//! and a test keeps the count at zero for every shipped spec.
//!
//! ```
//! let isa = lathe_isa::load(concat!(env!("CARGO_MANIFEST_DIR"), "/../isa/specs/adreno/ir3.isa")).unwrap();
//! let add = isa.encoding("add.f").unwrap();
//! let ops = isa.operands(add);
//! let names: Vec<&str> = ops.iter().map(|o| o.field.as_str()).collect();
//! assert_eq!(names, ["DST", "SRC1", "SRC2"]);
//! let gpr = isa.regfile("gpr").unwrap();
//! assert!(ops[1].accepts_register(gpr));
//! assert!(ops[1].accepts_immediate());
//! ```

use crate::ast::MetaValue;
use crate::model::{EncId, FieldType, Isa, Str};

/// Whether an operand field is read or written.
#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Src,
    Dst,
}

/// What one form of an operand names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperandClass {
    /// A register of file `file` (index into `Isa::regfiles`); `relative`
    /// when its number is an offset from the address register.
    Register { file: usize, relative: bool },
    /// A value encoded in the instruction.
    Immediate,
}

/// One operand field of an instruction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operand {
    pub field: String,
    pub role: Role,
    /// Each form (an encoding of the operand's tree, or `None` for a plain
    /// number field) with the classes it can take (several when the
    /// instruction's other fields choose, as an immediate-or-register
    /// flag does); empty where the spec gives none.
    pub forms: Vec<(Option<EncId>, Vec<OperandClass>)>,
}

impl Operand {
    /// Forms the spec gives no class.
    pub fn gaps(&self) -> usize {
        self.forms.iter().filter(|(_, c)| c.is_empty()).count()
    }

    fn classes(&self) -> impl Iterator<Item = OperandClass> + '_ {
        self.forms.iter().flat_map(|(_, c)| c.iter().copied())
    }

    /// Can the operand be a (non-relative) register of `file`?
    pub fn accepts_register(&self, file: usize) -> bool {
        self.classes().any(|c| {
            c == OperandClass::Register {
                file,
                relative: false,
            }
        })
    }

    /// Can the operand be an address-register-relative access of `file`?
    pub fn accepts_relative(&self, file: usize) -> bool {
        self.classes().any(|c| {
            c == OperandClass::Register {
                file,
                relative: true,
            }
        })
    }

    pub fn accepts_immediate(&self) -> bool {
        self.classes().any(|c| c == OperandClass::Immediate)
    }

    /// The register files of its non-relative register forms, in form order,
    /// each once.
    pub fn register_files(&self) -> Vec<usize> {
        let mut out = Vec::new();
        for c in self.classes() {
            if let OperandClass::Register {
                file,
                relative: false,
            } = c
            {
                if !out.contains(&file) {
                    out.push(file);
                }
            }
        }
        out
    }
}

fn ident(v: Option<&MetaValue>) -> Option<&str> {
    match v {
        Some(MetaValue::Ident(s)) => Some(s),
        _ => None,
    }
}

fn truthy(v: Option<&MetaValue>) -> bool {
    match v {
        Some(MetaValue::Int(n)) => *n != 0,
        Some(MetaValue::Ident(s)) => s == "true",
        _ => false,
    }
}

impl Isa {
    /// The operand fields of instruction `leaf`, nearest definition first
    /// for shadowed names, in the order the fields are declared from the
    /// root down (so a parent's `DST` comes before a child's `SRC1`).
    pub fn operands(&self, leaf: EncId) -> Vec<Operand> {
        let chain: Vec<EncId> = self.chain(leaf).collect();
        let mut seen: Vec<&str> = Vec::new();
        let mut found = Vec::new();
        for &enc in &chain {
            let e = &self.encodings[enc];
            let levels = std::iter::once(&*e.plain).chain(e.whens.iter().map(|w| &w.level));
            for level in levels {
                for f in &level.fields {
                    if seen.contains(&f.name.as_str()) {
                        continue;
                    }
                    let Some(role) = f.meta.iter().find(|(k, _)| k == "role") else {
                        continue;
                    };
                    let role = match ident(Some(&role.1)) {
                        Some("src") => Role::Src,
                        Some("dst") => Role::Dst,
                        _ => continue,
                    };
                    seen.push(&f.name);
                    let own_file = f
                        .meta
                        .iter()
                        .find(|(k, _)| k == "regfile")
                        .and_then(|(_, v)| ident(Some(v)))
                        .and_then(|n| self.regfile(n));
                    let forms = match (own_file, &f.ty) {
                        (Some(file), _) => vec![(
                            None,
                            vec![OperandClass::Register {
                                file,
                                relative: false,
                            }],
                        )],
                        (None, FieldType::Sub(tree, _)) => self.forms(*tree),
                        (None, _) => vec![(None, Vec::new())],
                    };
                    // A tied destination is read first: a source too,
                    // listed right after it.
                    let tied = role == Role::Dst
                        && truthy(f.meta.iter().find(|(k, _)| k == "tied").map(|(_, v)| v));
                    if tied {
                        found.push((
                            f.span.start,
                            f.span.file,
                            Operand {
                                field: f.name.to_string(),
                                role,
                                forms: forms.clone(),
                            },
                        ));
                    }
                    found.push((
                        f.span.start,
                        f.span.file,
                        Operand {
                            field: f.name.to_string(),
                            role: if tied { Role::Src } else { role },
                            forms,
                        },
                    ));
                }
            }
        }
        // The order the leaf's text shows them in; fields it does not show
        // come last, in declaration order.
        let template = chain
            .iter()
            .find_map(|&e| self.encodings[e].plain.display.as_ref());
        let shown = |name: &str| {
            template
                .and_then(|t| {
                    t.pieces
                        .iter()
                        .position(|p| matches!(p, crate::model::Piece::Field(n, _) if n == name))
                })
                .unwrap_or(usize::MAX)
        };
        found.sort_by_key(|(start, file, o)| (shown(&o.field), *file, *start));
        found.into_iter().map(|(_, _, o)| o).collect()
    }

    /// The forms of the operand tree rooted at `tree`, with their classes.
    fn forms(&self, tree: EncId) -> Vec<(Option<EncId>, Vec<OperandClass>)> {
        self.tree_forms(tree)
            .into_iter()
            .map(|l| (Some(l), self.form_classes_at(l, 0)))
            .collect()
    }

    fn tree_forms(&self, tree: EncId) -> Vec<EncId> {
        if self.encodings[tree].is_leaf() {
            vec![tree]
        } else {
            self.leaves(tree).collect()
        }
    }

    /// The classes of one form: from its `regfile` (one file or a list)
    /// and `immediate` metadata, else the union of what its fields (plain
    /// or inside `when`s) can name.
    /// The classes one operand form can take (see the module docs).
    pub fn form_classes(&self, form: EncId) -> Vec<OperandClass> {
        self.form_classes_at(form, 0)
    }

    fn form_classes_at(&self, form: EncId, depth: usize) -> Vec<OperandClass> {
        let relative = truthy(self.meta(form, "relative"));
        let mut out: Vec<OperandClass> = match self.meta(form, "regfile") {
            Some(MetaValue::Ident(n)) => vec![n.as_str()],
            Some(MetaValue::List(v)) => v.iter().map(Str::as_str).collect(),
            _ => Vec::new(),
        }
        .into_iter()
        .filter_map(|n| self.regfile(n))
        .map(|file| OperandClass::Register { file, relative })
        .collect();
        if truthy(self.meta(form, "immediate")) {
            out.push(OperandClass::Immediate);
        }
        if !out.is_empty() || depth > 8 {
            return out;
        }
        for enc in self.chain(form) {
            let e = &self.encodings[enc];
            let levels = std::iter::once(&*e.plain).chain(e.whens.iter().map(|w| &w.level));
            for f in levels.flat_map(|l| l.fields.iter()) {
                if let FieldType::Sub(tree, _) = &f.ty {
                    for l in self.tree_forms(*tree) {
                        for c in self.form_classes_at(l, depth + 1) {
                            if !out.contains(&c) {
                                out.push(c);
                            }
                        }
                    }
                }
            }
        }
        out
    }
}
