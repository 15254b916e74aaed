//! Parsing of `machine { … }` and `semantics ENC { … }` items.

use super::{Cx, P, Rule, keep};
use crate::ast::Name;
use crate::diag::Diagnostic;
use crate::semantics::{MachineDecl, Mod, SArg, SExpr, SExprKind, SemDecl, Stmt};

impl Cx<'_> {
    pub(super) fn machine_decl(&self, p: P) -> Result<MachineDecl, Diagnostic> {
        let mut out = MachineDecl::default();
        for x in p.into_inner().filter(keep) {
            match x.as_rule() {
                Rule::docs => {}
                Rule::sync_item => {
                    let key = x.into_inner().find(keep).expect("sync key");
                    out.sync_key = Some(self.name(key));
                }
                r => unreachable!("grammar: machine item {r:?}"),
            }
        }
        Ok(out)
    }

    pub(super) fn semantics_decl(&self, doc: String, p: P) -> Result<SemDecl, Diagnostic> {
        let span = self.span(&p);
        let mut it = p.into_inner().filter(keep);
        let enc = self.name(it.next().expect("semantics encoding"));
        let body = self.sem_block(it.next().expect("semantics block"))?;
        Ok(SemDecl {
            doc,
            enc,
            body,
            span,
        })
    }

    fn sem_block(&self, p: P) -> Result<Vec<Stmt>, Diagnostic> {
        p.into_inner()
            .filter(keep)
            .map(|s| self.sem_stmt(s.into_inner().find(keep).expect("statement")))
            .collect()
    }

    fn sem_stmt(&self, s: P) -> Result<Stmt, Diagnostic> {
        let rule = s.as_rule();
        let span = self.span(&s);
        let mut it = s.into_inner().filter(keep);
        Ok(match rule {
            Rule::sem_if => {
                let cond = self.expr(it.next().expect("if condition"))?;
                let then = self.sem_block(it.next().expect("if block"))?;
                let els = match it.next() {
                    Some(e) if e.as_rule() == Rule::sem_if => vec![self.sem_stmt(e)?],
                    Some(b) => self.sem_block(b)?,
                    None => Vec::new(),
                };
                Stmt::If { cond, then, els }
            }
            Rule::sem_type => {
                let name = self.name(it.next().expect("type name"));
                let mut choices = Vec::new();
                let mut c = it.next().expect("type choice");
                loop {
                    let mut ci = c.into_inner().filter(keep);
                    let first = ci.next().expect("choice");
                    if first.as_rule() == Rule::ident {
                        choices.push((None, self.name(first)));
                        break;
                    }
                    let cond = self.binary(first)?;
                    choices.push((Some(cond), self.name(ci.next().expect("choice type"))));
                    c = ci.next().expect("rest of choices");
                }
                Stmt::Type { name, choices }
            }
            Rule::sem_mods => {
                let field = self.name(it.next().expect("mods field"));
                let mut mods = Vec::new();
                for m in it {
                    let mut mi = m.into_inner().filter(keep);
                    let kind = Mod::from_name(mi.next().expect("mod kind").as_str())
                        .expect("grammar: mod kinds");
                    mods.push((kind, self.expr(mi.next().expect("mod expr"))?));
                }
                Stmt::Mods { field, mods }
            }
            Rule::sem_loc => {
                let l = it.next().expect("location");
                let lr = l.as_rule();
                let mut li = l.into_inner().filter(keep);
                match lr {
                    Rule::sem_loc_reg => {
                        let file = self.name(li.next().expect("file"));
                        let second = li.next().expect("index");
                        if second.as_rule() == Rule::ident {
                            let a = self.name(second);
                            let k = self.expr(li.next().expect("addr index"))?;
                            let index = self.expr(li.next().expect("index"))?;
                            Stmt::Reg {
                                file,
                                addr: Some((a, k)),
                                index,
                            }
                        } else {
                            Stmt::Reg {
                                file,
                                addr: None,
                                index: self.expr(second)?,
                            }
                        }
                    }
                    Rule::sem_loc_imm => {
                        let kind = li.next().expect("imm kind").as_str();
                        let value = self.expr(li.next().expect("imm value"))?;
                        match kind {
                            "immr" => Stmt::ImmBits(value),
                            k => Stmt::Imm {
                                float: k == "immf",
                                value,
                            },
                        }
                    }
                    Rule::sem_loc_immt => {
                        let field = li.find(|x| x.as_rule() == Rule::ident).expect("immt field");
                        Stmt::ImmText(self.name(field))
                    }
                    _ => Stmt::Use(self.name(li.next().expect("use field"))),
                }
            }
            Rule::sem_let => {
                let name = self.name(it.next().expect("let name"));
                Stmt::Let {
                    name,
                    value: self.sexpr(it.next().expect("let value"))?,
                }
            }
            Rule::sem_effect => {
                let name = self.name(it.next().expect("effect name"));
                let args = it.map(|a| self.sem_arg(a)).collect::<Result<_, _>>()?;
                Stmt::Effect { name, args, span }
            }
            Rule::sem_write => {
                let dst = self.name(it.next().expect("write target"));
                let mut next = it.next().expect("write value");
                let index = if next.as_rule() == Rule::expr {
                    let i = self.expr(next)?;
                    next = it.next().expect("write value");
                    Some(i)
                } else {
                    None
                };
                Stmt::Write {
                    dst,
                    index,
                    value: self.sexpr(next)?,
                }
            }
            r => unreachable!("grammar: semantics statement {r:?}"),
        })
    }

    fn sem_arg(&self, a: P) -> Result<SArg, Diagnostic> {
        let x = a.into_inner().find(keep).expect("argument");
        Ok(if x.as_rule() == Rule::expr {
            SArg::Static(self.expr(x)?)
        } else {
            SArg::Value(self.sexpr(x)?)
        })
    }

    fn sexpr(&self, p: P) -> Result<SExpr, Diagnostic> {
        let span = self.span(&p);
        let mut it = p.into_inner().filter(keep);
        let first = it.next().expect("sexpr");
        if first.as_rule() == Rule::sem_static {
            let mut si = first.into_inner().filter(keep);
            let cond = self.expr(si.next().expect("static condition"))?;
            let a = self.sexpr(si.next().expect("static then"))?;
            let b = self.sexpr(si.next().expect("static else"))?;
            return Ok(SExpr {
                kind: SExprKind::Static(cond, Box::new(a), Box::new(b)),
                span,
            });
        }
        let term = self.sterm(first)?;
        match (it.next(), it.next()) {
            (Some(a), Some(b)) => Ok(SExpr {
                kind: SExprKind::Select(
                    Box::new(term),
                    Box::new(self.sexpr(a)?),
                    Box::new(self.sexpr(b)?),
                ),
                span,
            }),
            _ => Ok(term),
        }
    }

    fn sterm(&self, p: P) -> Result<SExpr, Diagnostic> {
        let span = self.span(&p);
        let x = p.into_inner().find(keep).expect("term");
        let rule = x.as_rule();
        if rule == Rule::ident {
            return Ok(SExpr {
                kind: SExprKind::Local(self.name(x)),
                span,
            });
        }
        if rule == Rule::sexpr {
            return self.sexpr(x);
        }
        let mut it = x.into_inner().filter(keep);
        let kind = match rule {
            Rule::sem_call => {
                let name: Name = self.name(it.next().expect("call name"));
                let args = it.map(|a| self.sem_arg(a)).collect::<Result<_, _>>()?;
                SExprKind::Call(name, args)
            }
            Rule::sem_regread => {
                let file = self.name(it.next().expect("file"));
                let index = self.expr(it.next().expect("index"))?;
                let ty = self.name(it.next().expect("type"));
                SExprKind::RegRead { file, index, ty }
            }
            Rule::sem_read => {
                let field = self.name(it.next().expect("operand"));
                let ty = self.name(it.next().expect("type"));
                SExprKind::Read { field, ty }
            }
            Rule::sem_lit => {
                let text = it.next().expect("number").as_str().to_string();
                let ty = self.name(it.next().expect("type"));
                SExprKind::Lit { text, ty }
            }
            r => unreachable!("grammar: term {r:?}"),
        };
        Ok(SExpr { kind, span })
    }
}
