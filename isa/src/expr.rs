//! The side-effect-free expression language of `.isa` specs.
//!
//! Values are `i64`, arithmetic wraps, and no operation can fail: division
//! or remainder by zero gives 0 and shift counts are taken modulo 64.

use crate::diag::Span;

#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Or,
    And,
    BitOr,
    BitXor,
    BitAnd,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

impl BinOp {
    /// Binding power; higher binds tighter (C precedence).
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::BitOr => 3,
            BinOp::BitXor => 4,
            BinOp::BitAnd => 5,
            BinOp::Eq | BinOp::Ne => 6,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 7,
            BinOp::Shl | BinOp::Shr => 8,
            BinOp::Add | BinOp::Sub => 9,
            BinOp::Mul | BinOp::Div | BinOp::Rem => 10,
        }
    }

    pub fn from_token(tok: &str) -> Option<BinOp> {
        Some(match tok {
            "||" => BinOp::Or,
            "&&" => BinOp::And,
            "|" => BinOp::BitOr,
            "^" => BinOp::BitXor,
            "&" => BinOp::BitAnd,
            "==" => BinOp::Eq,
            "!=" => BinOp::Ne,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "<<" => BinOp::Shl,
            ">>" => BinOp::Shr,
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Rem,
            _ => return None,
        })
    }

    pub fn token(self) -> &'static str {
        match self {
            BinOp::Or => "||",
            BinOp::And => "&&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::BitAnd => "&",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
        }
    }

    #[inline]
    pub fn apply(self, a: i64, b: i64) -> i64 {
        match self {
            BinOp::Or => i64::from(a != 0 || b != 0),
            BinOp::And => i64::from(a != 0 && b != 0),
            BinOp::BitOr => a | b,
            BinOp::BitXor => a ^ b,
            BinOp::BitAnd => a & b,
            BinOp::Eq => i64::from(a == b),
            BinOp::Ne => i64::from(a != b),
            BinOp::Lt => i64::from(a < b),
            BinOp::Le => i64::from(a <= b),
            BinOp::Gt => i64::from(a > b),
            BinOp::Ge => i64::from(a >= b),
            BinOp::Shl => a.wrapping_shl((b & 63) as u32),
            BinOp::Shr => a.wrapping_shr((b & 63) as u32),
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div => {
                if b == 0 {
                    0
                } else {
                    a.wrapping_div(b)
                }
            }
            BinOp::Rem => {
                if b == 0 {
                    0
                } else {
                    a.wrapping_rem(b)
                }
            }
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Not,
    BitNot,
    Neg,
}

impl UnOp {
    #[inline]
    pub fn apply(self, a: i64) -> i64 {
        match self {
            UnOp::Not => i64::from(a == 0),
            UnOp::BitNot => !a,
            UnOp::Neg => a.wrapping_neg(),
        }
    }
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub enum ExprKind {
    Int(i64),
    Gen,
    /// A field, derived field or param, looked up in the evaluation scope.
    Name(crate::compact::Str),
    /// `@name` or `@name(ARGS)`: a named expression (function), resolved
    /// to an index after loading, with its arguments.
    Named(crate::compact::Str, Option<usize>, Vec<Expr>),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
}

#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// What an expression needs from its surroundings while being evaluated.
pub trait ExprEnv {
    /// Value of a field, derived field or param; `None` if unknown.
    fn lookup(&self, name: &str) -> Option<i64>;
    /// The generation being decoded or assembled for.
    fn generation(&self) -> u32;
    /// A named expression by index: its parameter names and body.
    fn named(&self, index: usize) -> Option<(&[crate::compact::Str], &Expr)>;
}

/// Most parameters an expression function may declare.
pub const MAX_PARAMS: usize = 8;

/// The environment inside an expression function's body: its parameters
/// bound to the argument values, everything else from the caller.
struct Bound<'e> {
    inner: &'e dyn ExprEnv,
    params: &'e [crate::compact::Str],
    values: &'e [i64],
}

impl ExprEnv for Bound<'_> {
    fn lookup(&self, name: &str) -> Option<i64> {
        match self.params.iter().position(|p| p == name) {
            Some(i) => self.values.get(i).copied(),
            None => self.inner.lookup(name),
        }
    }
    fn generation(&self) -> u32 {
        self.inner.generation()
    }
    fn named(&self, index: usize) -> Option<(&[crate::compact::Str], &Expr)> {
        self.inner.named(index)
    }
}

/// Callback of [`Expr::visit_named_mut`]: name, resolved index slot,
/// number of arguments, span.
pub type NamedVisitor<'f> = dyn FnMut(&str, &mut Option<usize>, usize, Span) + 'f;

/// Why an expression could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error("unknown name `{0}`")]
    UnknownName(String),
    #[error("expression nesting too deep (a derived field that depends on itself?)")]
    TooDeep,
}

/// Deepest nesting of named expressions and derived fields followed before
/// giving up; protects against cycles without a separate pass.
pub const MAX_EVAL_DEPTH: usize = 48;

impl Expr {
    pub fn eval(&self, env: &dyn ExprEnv, depth: usize) -> Result<i64, EvalError> {
        if depth > MAX_EVAL_DEPTH {
            return Err(EvalError::TooDeep);
        }
        Ok(match &self.kind {
            ExprKind::Int(v) => *v,
            ExprKind::Gen => i64::from(env.generation()),
            ExprKind::Name(n) => env
                .lookup(n)
                .ok_or_else(|| EvalError::UnknownName(n.to_string()))?,
            ExprKind::Named(n, idx, args) => {
                let (params, body) = idx
                    .and_then(|i| env.named(i))
                    .ok_or_else(|| EvalError::UnknownName(format!("@{n}")))?;
                if args.is_empty() {
                    body.eval(env, depth + 1)?
                } else {
                    // Arguments are evaluated in the caller, by value.
                    let mut values = [0i64; MAX_PARAMS];
                    for (v, a) in values.iter_mut().zip(args) {
                        *v = a.eval(env, depth + 1)?;
                    }
                    let n = args.len().min(MAX_PARAMS);
                    let bound = Bound {
                        inner: env,
                        params,
                        values: &values[..n],
                    };
                    body.eval(&bound, depth + 1)?
                }
            }
            ExprKind::Unary(op, a) => op.apply(a.eval(env, depth + 1)?),
            ExprKind::Binary(op, a, b) => {
                let a = a.eval(env, depth + 1)?;
                // Short-circuit so that guarded lookups do not fail.
                match op {
                    BinOp::And if a == 0 => return Ok(0),
                    BinOp::Or if a != 0 => return Ok(1),
                    _ => {}
                }
                op.apply(a, b.eval(env, depth + 1)?)
            }
            ExprKind::Cond(c, a, b) => {
                if c.eval(env, depth + 1)? != 0 {
                    a.eval(env, depth + 1)?
                } else {
                    b.eval(env, depth + 1)?
                }
            }
        })
    }

    /// Calls `f` for every plain name (not `@named`) used, with its span.
    pub fn visit_names(&self, f: &mut dyn FnMut(&str, crate::diag::Span)) {
        match &self.kind {
            ExprKind::Name(n) => f(n, self.span),
            ExprKind::Int(_) | ExprKind::Gen => {}
            ExprKind::Named(_, _, args) => {
                for a in args {
                    a.visit_names(f);
                }
            }
            ExprKind::Unary(_, a) => a.visit_names(f),
            ExprKind::Binary(_, a, b) => {
                a.visit_names(f);
                b.visit_names(f);
            }
            ExprKind::Cond(c, a, b) => {
                c.visit_names(f);
                a.visit_names(f);
                b.visit_names(f);
            }
        }
    }

    /// Calls `f` for every `@named` reference (mutable, to resolve
    /// indices) with its number of arguments.
    pub fn visit_named_mut(&mut self, f: &mut NamedVisitor<'_>) {
        let span = self.span;
        match &mut self.kind {
            ExprKind::Named(n, idx, args) => {
                f(n, idx, args.len(), span);
                for a in args {
                    a.visit_named_mut(f);
                }
            }
            ExprKind::Int(_) | ExprKind::Gen | ExprKind::Name(_) => {}
            ExprKind::Unary(_, a) => a.visit_named_mut(f),
            ExprKind::Binary(_, a, b) => {
                a.visit_named_mut(f);
                b.visit_named_mut(f);
            }
            ExprKind::Cond(c, a, b) => {
                c.visit_named_mut(f);
                a.visit_named_mut(f);
                b.visit_named_mut(f);
            }
        }
    }
}

impl std::fmt::Display for Expr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            ExprKind::Int(v) => write!(f, "{v}"),
            ExprKind::Gen => write!(f, "gen"),
            ExprKind::Name(n) => write!(f, "{n}"),
            ExprKind::Named(n, _, args) => {
                write!(f, "@{n}")?;
                if !args.is_empty() {
                    write!(f, "(")?;
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            write!(f, ", ")?;
                        }
                        write!(f, "{a}")?;
                    }
                    write!(f, ")")?;
                }
                Ok(())
            }
            ExprKind::Unary(op, a) => {
                let t = match op {
                    UnOp::Not => "!",
                    UnOp::BitNot => "~",
                    UnOp::Neg => "-",
                };
                write!(f, "{t}{a}")
            }
            ExprKind::Binary(op, a, b) => write!(f, "({a} {} {b})", op.token()),
            ExprKind::Cond(c, a, b) => write!(f, "({c} ? {a} : {b})"),
        }
    }
}
