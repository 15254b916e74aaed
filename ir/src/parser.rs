//! The parser: text form to a shader, with `line:col` caret diagnostics.
//!
//! The parser checks syntax and names (every `%N` and `bN` defined exactly
//! once, opcodes and attributes known to the vocabulary); typing and SSA
//! rules are the validator's job. It never panics: every malformed input
//! is a [`ParseError`].

use crate::opcode::{Attr, Op, Opcode, STRUCTURAL_NAMES};
use crate::shader::{ArrayDecl, Block, Inst, Reg, Shader, Stage, Value};
use crate::types::Type;
use bumpalo::Bump;
use std::collections::HashMap;

/// A parse failure at a 1-based line and column.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseError {
    pub line: u32,
    pub col: u32,
    pub message: String,
    /// The offending source line, for the caret excerpt.
    pub source_line: String,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: {}\n{}",
            self.line,
            self.col,
            self.message,
            caret(&self.source_line, self.col)
        )
    }
}

impl std::error::Error for ParseError {}

impl ParseError {
    /// The diagnostic with a file name in front: `file:line:col: message`.
    pub fn with_file(&self, file: &str) -> String {
        format!("{file}:{self}")
    }
}

/// Two lines: the source and a caret under column `col`.
pub fn caret(source_line: &str, col: u32) -> String {
    let pad: String = source_line
        .chars()
        .take(col.saturating_sub(1) as usize)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    format!("  {source_line}\n  {pad}^")
}

/// Where each instruction came from, for diagnostics after parsing.
#[derive(Default, Debug)]
pub struct SourceMap {
    /// Indexed by instruction; the parser creates instructions in order.
    lines: Vec<(u32, u32)>,
}

impl SourceMap {
    /// The `(line, column)` an instruction was parsed from.
    pub fn position(&self, i: Inst) -> Option<(u32, u32)> {
        self.lines.get(i.index()).copied()
    }
}

/// Parse a shader of vocabulary `O` into `arena`.
pub fn parse<'a, O: Opcode>(arena: &'a Bump, text: &str) -> Result<Shader<'a, O>, ParseError> {
    parse_with_source_map(arena, text).map(|(s, _)| s)
}

/// Like [`parse`], also returning each instruction's source position.
pub fn parse_with_source_map<'a, O: Opcode>(
    arena: &'a Bump,
    text: &str,
) -> Result<(Shader<'a, O>, SourceMap), ParseError> {
    Parser::new(arena, text).run()
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Tok<'t> {
    Value(&'t str),
    Word(&'t str),
    Punct(char),
}

#[derive(Clone, Copy, Debug)]
struct Token<'t> {
    tok: Tok<'t>,
    col: u32,
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'+')
}

/// Split one line into `toks` (cleared first); `Err((col, message))` on a
/// stray character.
///
/// Works on bytes: every character the syntax uses is ASCII, so the first
/// non-ASCII byte outside a comment is an error, and until then the byte
/// index is also the character column.
fn tokenize<'t>(line: &'t str, toks: &mut Vec<Token<'t>>) -> Result<(), (u32, String)> {
    toks.clear();
    let bytes = line.as_bytes();
    let mut k = 0;
    while k < bytes.len() {
        let c = bytes[k];
        let col = k as u32 + 1;
        match c {
            b';' => break,
            b' ' | b'\t' | b'\r' => k += 1,
            b':' | b'=' | b',' | b'[' | b']' | b'@' => {
                toks.push(Token {
                    tok: Tok::Punct(c as char),
                    col,
                });
                k += 1;
            }
            _ if c == b'%' || is_word_byte(c) => {
                let start = if c == b'%' { k + 1 } else { k };
                let mut end = start;
                while end < bytes.len() && is_word_byte(bytes[end]) {
                    end += 1;
                }
                let body = &line[start..end];
                toks.push(Token {
                    tok: if c == b'%' {
                        Tok::Value(body)
                    } else {
                        Tok::Word(body)
                    },
                    col,
                });
                k = end;
            }
            _ => {
                let ch = line[k..].chars().next().unwrap_or('?');
                return Err((col, format!("unexpected character `{ch}`")));
            }
        }
    }
    Ok(())
}

fn block_number(word: &str) -> Option<u32> {
    let digits = word.strip_prefix('b')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

struct NameEntry<H> {
    handle: H,
    defined: bool,
    first_use: (u32, u32),
}

/// Names `%N` / `bN` to handles: a vector for numbers up to the text
/// length (canonical text is dense), a hash map for the rest.
struct Names<H> {
    dense: Vec<Option<NameEntry<H>>>,
    sparse: HashMap<u32, NameEntry<H>>,
    dense_limit: usize,
}

impl<H: Copy> Names<H> {
    fn new(text_len: usize) -> Self {
        Names {
            dense: Vec::new(),
            sparse: HashMap::new(),
            dense_limit: text_len,
        }
    }

    fn get(&self, n: u32) -> Option<&NameEntry<H>> {
        match self.dense.get(n as usize) {
            Some(e) => e.as_ref(),
            None => self.sparse.get(&n),
        }
    }

    fn get_mut(&mut self, n: u32) -> Option<&mut NameEntry<H>> {
        match self.dense.get_mut(n as usize) {
            Some(e) => e.as_mut(),
            None => self.sparse.get_mut(&n),
        }
    }

    fn insert(&mut self, n: u32, e: NameEntry<H>) {
        let k = n as usize;
        if k < self.dense_limit {
            if self.dense.len() <= k {
                self.dense.resize_with(k + 1, || None);
            }
            self.dense[k] = Some(e);
        } else {
            self.sparse.insert(n, e);
        }
    }

    /// `(number, entry)` of every name that was used but never defined.
    fn undefined(&self) -> impl Iterator<Item = (u32, &NameEntry<H>)> {
        let dense = self
            .dense
            .iter()
            .enumerate()
            .filter_map(|(n, e)| e.as_ref().map(|e| (n as u32, e)));
        dense
            .chain(self.sparse.iter().map(|(&n, e)| (n, e)))
            .filter(|(_, e)| !e.defined)
    }
}

/// Per-line buffers, reused so parsing allocates per shader, not per line.
#[derive(Default)]
struct Scratch<'t> {
    attrs: Vec<Attr<'t>>,
    attr_cols: Vec<u32>,
    args: Vec<Value>,
    targets: Vec<Block>,
}

struct Parser<'a, 't, O> {
    text: &'t str,
    shader: Shader<'a, O>,
    values: Names<Value>,
    blocks: Names<Block>,
    map: SourceMap,
    line_no: u32,
    line: &'t str,
    scratch: Scratch<'t>,
}

impl<'a, 't, O: Opcode> Parser<'a, 't, O> {
    fn new(arena: &'a Bump, text: &'t str) -> Self {
        // At most one instruction (and value) per line that is not blank
        // or a comment: reserving that up front keeps the tables from being
        // regrown and copied in the arena, and never reserves more than
        // the text can fill.
        let lines = text
            .lines()
            .filter(|l| {
                let l = l.trim_start();
                !l.is_empty() && !l.starts_with(';')
            })
            .count();
        Parser {
            text,
            shader: Shader::with_capacity(arena, Stage::Fragment, lines, 0),
            values: Names::new(text.len()),
            blocks: Names::new(text.len()),
            map: SourceMap {
                lines: Vec::with_capacity(lines),
            },
            line_no: 0,
            line: "",
            scratch: Scratch::default(),
        }
    }

    fn error(&self, col: u32, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line_no,
            col,
            message: message.into(),
            source_line: self.line.to_string(),
        }
    }

    fn error_at(&self, (line, col): (u32, u32), message: impl Into<String>) -> ParseError {
        let source_line = self
            .text
            .lines()
            .nth(line.saturating_sub(1) as usize)
            .unwrap_or("")
            .to_string();
        ParseError {
            line,
            col,
            message: message.into(),
            source_line,
        }
    }

    fn run(mut self) -> Result<(Shader<'a, O>, SourceMap), ParseError> {
        let mut seen_header = false;
        let mut current: Option<Block> = None;
        let text = self.text;
        let mut toks = Vec::new();
        for (k, line) in text.lines().enumerate() {
            self.line_no = k as u32 + 1;
            self.line = line;
            tokenize(line, &mut toks).map_err(|(c, m)| self.error(c, m))?;
            let Some(first) = toks.first() else {
                continue;
            };
            if !seen_header {
                self.header(&toks)?;
                seen_header = true;
                continue;
            }
            match (first.tok, toks.get(1).map(|t| t.tok)) {
                (Tok::Word("array"), _) => {
                    if current.is_some() {
                        return Err(
                            self.error(first.col, "arrays are declared before the first block")
                        );
                    }
                    self.array(&toks)?;
                }
                (Tok::Word("private"), Some(Tok::Word(n))) if toks.len() == 2 => {
                    if current.is_some() {
                        return Err(self.error(
                            first.col,
                            "private memory is declared before the first block",
                        ));
                    }
                    self.shader.private_bytes = n.parse().map_err(|_| {
                        self.error(toks[1].col, "private memory is a number of bytes")
                    })?;
                }
                (Tok::Word("workgroup_size"), _) if toks.len() == 4 => {
                    if current.is_some() {
                        return Err(self.error(
                            first.col,
                            "the workgroup size is declared before the first block",
                        ));
                    }
                    let mut size = [0; 3];
                    for (s, t) in size.iter_mut().zip(&toks[1..]) {
                        *s = match t.tok {
                            Tok::Word(n) => n.parse().ok(),
                            _ => None,
                        }
                        .ok_or_else(|| self.error(t.col, "the workgroup size is three numbers"))?;
                    }
                    self.shader.workgroup_size = Some(size);
                }
                (Tok::Word("registers"), _) => {
                    if current.is_some() || !self.shader.register_files().is_empty() {
                        return Err(self.error(
                            first.col,
                            "register files are declared once, before the first block",
                        ));
                    }
                    self.registers(&toks)?;
                }
                (Tok::Word(w), Some(Tok::Punct(':'))) if block_number(w).is_some() => {
                    current = Some(self.label(&toks)?);
                }
                _ => {
                    let Some(b) = current else {
                        return Err(self.error(
                            first.col,
                            "instruction outside a block (expected a label like `b0:`)",
                        ));
                    };
                    self.instruction(b, &toks)?;
                }
            }
        }
        if !seen_header {
            self.line_no = 1;
            self.line = text.lines().next().unwrap_or("");
            return Err(self.error(1, "expected `shader <stage>` header"));
        }
        // Report the earliest use of anything left undefined.
        let mut missing: Vec<((u32, u32), String)> = Vec::new();
        for (n, e) in self.values.undefined() {
            missing.push((e.first_use, format!("value %{n} is never defined")));
        }
        for (n, e) in self.blocks.undefined() {
            missing.push((e.first_use, format!("block b{n} is never defined")));
        }
        if let Some((pos, msg)) = missing.into_iter().min() {
            return Err(self.error_at(pos, msg));
        }
        Ok((self.shader, self.map))
    }

    fn header(&mut self, toks: &[Token<'_>]) -> Result<(), ParseError> {
        match toks {
            [
                Token {
                    tok: Tok::Word("shader"),
                    ..
                },
                stage,
                flags @ ..,
            ] => {
                for flag in flags {
                    match flag.tok {
                        Tok::Word("preserve_float_specials") => {
                            self.shader.preserve_float_specials = true
                        }
                        _ => {
                            return Err(self.error(
                                flag.col,
                                "the only header flag is `preserve_float_specials`",
                            ));
                        }
                    }
                }
                match stage.tok {
                    Tok::Word(w) => match Stage::from_name(w) {
                        Some(s) => {
                            self.shader.stage = s;
                            Ok(())
                        }
                        None => Err(self.error(stage.col, "stage is vertex, fragment or compute")),
                    },
                    _ => Err(self.error(stage.col, "stage is vertex, fragment or compute")),
                }
            }
            [t, ..] => Err(self.error(t.col, "expected `shader <stage>` header")),
            [] => Err(self.error(1, "expected `shader <stage>` header")),
        }
    }

    /// `array aK: TYPE[LEN]`
    fn array(&mut self, toks: &[Token<'_>]) -> Result<(), ParseError> {
        let expected_name = format!("a{}", self.shader.arrays().len());
        let end_col = toks.last().map_or(1, |t| t.col);
        let bad = |p: &Self, col: u32| {
            p.error(
                col,
                format!("expected `array {expected_name}: <type>[<length>]`"),
            )
        };
        let [_, name, colon, ty, open, len, close] = toks else {
            return Err(bad(self, end_col));
        };
        if name.tok != Tok::Word(&expected_name) {
            return Err(self.error(
                name.col,
                format!("arrays are numbered in order: expected `{expected_name}`"),
            ));
        }
        if colon.tok != Tok::Punct(':') {
            return Err(bad(self, colon.col));
        }
        let elem = match ty.tok {
            Tok::Word(w) => {
                Type::parse(w).ok_or_else(|| self.error(ty.col, format!("unknown type `{w}`")))?
            }
            _ => return Err(bad(self, ty.col)),
        };
        if open.tok != Tok::Punct('[') {
            return Err(bad(self, open.col));
        }
        let len_val = match len.tok {
            Tok::Word(w) => w
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| self.error(len.col, "array length is a positive number"))?,
            _ => return Err(bad(self, len.col)),
        };
        if close.tok != Tok::Punct(']') {
            return Err(bad(self, close.col));
        }
        if !elem.is_scalar() {
            return Err(self.error(ty.col, "array elements are scalars"));
        }
        self.shader.add_array(ArrayDecl { elem, len: len_val });
        Ok(())
    }

    /// `registers NAME, NAME, ...`: the register files `@NAMEunit` refers to
    /// (a letter, then letters and digits; `@NAME.unit` when the name ends
    /// in a digit, as ir3's `a0` and `p0` do).
    fn registers(&mut self, toks: &[Token<'_>]) -> Result<(), ParseError> {
        let mut names = Vec::new();
        for (k, t) in toks.iter().enumerate().skip(1) {
            let want_name = k % 2 == 1;
            match t.tok {
                Tok::Word(w)
                    if want_name
                        && w.bytes().next().is_some_and(|b| b.is_ascii_alphabetic())
                        && w.bytes().all(|b| b.is_ascii_alphanumeric()) =>
                {
                    if names.contains(&w) {
                        return Err(
                            self.error(t.col, format!("register file `{w}` is declared twice"))
                        );
                    }
                    names.push(w);
                }
                Tok::Punct(',') if !want_name => {}
                _ => {
                    return Err(self.error(
                        t.col,
                        "expected `registers NAME, NAME, ...` (a letter, then letters and digits)",
                    ));
                }
            }
        }
        if names.is_empty() || toks.len() % 2 == 1 {
            let col = toks.last().map_or(1, |t| t.col);
            return Err(self.error(col, "expected a register file name"));
        }
        self.shader.set_register_files(&names);
        Ok(())
    }

    /// `NAMEunit` after `@`: a declared file and a unit number.
    fn register(&self, t: Token<'_>) -> Result<Reg, ParseError> {
        let bad = || {
            self.error(
                t.col,
                "expected a register like `r4` (a declared file and a unit)",
            )
        };
        let Tok::Word(w) = t.tok else {
            return Err(bad());
        };
        let (name, unit) = match w.rsplit_once('.') {
            Some((name, unit)) => (name, unit),
            None => w.split_at(w.bytes().position(|b| b.is_ascii_digit()).ok_or_else(bad)?),
        };
        let file = self
            .shader
            .register_files()
            .iter()
            .position(|&f| f == name)
            .ok_or_else(|| {
                self.error(
                    t.col,
                    format!("register file `{name}` is not declared (`registers ...`)"),
                )
            })?;
        let unit = parse_number(unit)
            .and_then(|u| u16::try_from(u).ok())
            .ok_or_else(bad)?;
        Ok(Reg {
            file: file as u8,
            unit,
        })
    }

    fn label(&mut self, toks: &[Token<'_>]) -> Result<Block, ParseError> {
        let t = toks[0];
        if toks.len() > 2 {
            return Err(self.error(toks[2].col, "nothing may follow a block label"));
        }
        let Tok::Word(w) = t.tok else {
            return Err(self.error(t.col, "expected a block label"));
        };
        let n = block_number(w).ok_or_else(|| self.error(t.col, "expected a block label"))?;
        let pos = (self.line_no, t.col);
        let b = match self.blocks.get_mut(n) {
            Some(e) if e.defined => {
                return Err(self.error(t.col, format!("block b{n} is defined twice")));
            }
            Some(e) => {
                e.defined = true;
                e.handle
            }
            None => {
                let b = self.shader.create_block();
                self.blocks.insert(
                    n,
                    NameEntry {
                        handle: b,
                        defined: true,
                        first_use: pos,
                    },
                );
                b
            }
        };
        self.shader.append_to_layout(b);
        Ok(b)
    }

    fn value_ref(&mut self, t: Token<'_>) -> Result<Value, ParseError> {
        let Tok::Value(body) = t.tok else {
            return Err(self.error(t.col, "expected a value like `%3`"));
        };
        let n: u32 = parse_number(body)
            .ok_or_else(|| self.error(t.col, "values are named `%` and a number"))?;
        if let Some(e) = self.values.get(n) {
            return Ok(e.handle);
        }
        // Forward reference: a placeholder fixed up at the definition.
        let v = self.shader.new_value(Type::F32, Inst(u32::MAX));
        self.values.insert(
            n,
            NameEntry {
                handle: v,
                defined: false,
                first_use: (self.line_no, t.col),
            },
        );
        Ok(v)
    }

    /// Mark `%N` defined (it may have been referenced already).
    fn define_value(&mut self, t: Token<'_>) -> Result<Value, ParseError> {
        let v = self.value_ref(t)?;
        let Tok::Value(body) = t.tok else {
            return Err(self.error(t.col, "expected a value like `%3`"));
        };
        let n = parse_number(body).unwrap_or(u32::MAX);
        match self.values.get_mut(n) {
            Some(e) if e.defined => Err(self.error(t.col, format!("value %{n} is defined twice"))),
            Some(e) => {
                e.defined = true;
                Ok(v)
            }
            None => Err(self.error(t.col, "expected a value like `%3`")),
        }
    }

    fn block_ref(&mut self, t: Token<'_>) -> Result<Block, ParseError> {
        let n = match t.tok {
            Tok::Word(w) => block_number(w),
            _ => None,
        }
        .ok_or_else(|| self.error(t.col, "expected a block like `b1`"))?;
        if let Some(e) = self.blocks.get(n) {
            return Ok(e.handle);
        }
        let b = self.shader.create_block();
        self.blocks.insert(
            n,
            NameEntry {
                handle: b,
                defined: false,
                first_use: (self.line_no, t.col),
            },
        );
        Ok(b)
    }

    fn instruction(&mut self, block: Block, toks: &[Token<'t>]) -> Result<(), ParseError> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let result = self.instruction_with(block, toks, &mut scratch);
        self.scratch = scratch;
        result
    }

    fn instruction_with(
        &mut self,
        block: Block,
        toks: &[Token<'t>],
        scratch: &mut Scratch<'t>,
    ) -> Result<(), ParseError> {
        let Scratch {
            attrs,
            attr_cols,
            args,
            targets,
        } = scratch;
        attrs.clear();
        attr_cols.clear();
        args.clear();
        targets.clear();
        let mut pos = 0;
        // Optional `%N:TYPE[@REG] =`, or two of them (`swap`).
        let mut result: Option<(Token<'_>, Type)> = None;
        let mut reg = None;
        let mut second: Option<(Token<'_>, Type, Option<Reg>)> = None;
        if let Tok::Value(_) = toks[0].tok {
            let (ty, r, next) = self.result_decl(toks, 0)?;
            result = Some((toks[0], ty));
            reg = r;
            pos = next;
            if toks.get(pos).is_some_and(|t| t.tok == Tok::Punct(','))
                && toks
                    .get(pos + 1)
                    .is_some_and(|t| matches!(t.tok, Tok::Value(_)))
            {
                let (ty2, r2, next) = self.result_decl(toks, pos + 1)?;
                second = Some((toks[pos + 1], ty2, r2));
                pos = next;
            }
            match toks.get(pos) {
                Some(t) if t.tok == Tok::Punct('=') => {}
                Some(t) => return Err(self.error(t.col, "expected `=`")),
                None => return Err(self.error(toks[pos - 1].col, "expected `=` after the type")),
            }
            pos += 1;
        }
        let Some(name_tok) = toks.get(pos).copied() else {
            return Err(self.error(toks[pos - 1].col, "expected an opcode"));
        };
        let Tok::Word(name) = name_tok.tok else {
            return Err(self.error(name_tok.col, "expected an opcode"));
        };
        pos += 1;

        // Attributes: words (not block refs), `key=value` or bare.
        let mut address: Option<Value> = None;
        while let Some(t) = toks.get(pos).copied() {
            let Tok::Word(w) = t.tok else { break };
            if block_number(w).is_some() {
                break;
            }
            if toks.get(pos + 1).map(|t| t.tok) == Some(Tok::Punct('=')) {
                let Some(v) = toks.get(pos + 2).copied() else {
                    return Err(self.error(toks[pos + 1].col, "expected a value after `=`"));
                };
                match (w, v.tok) {
                    ("addr", Tok::Value(_)) => {
                        address = Some(self.value_ref(v)?);
                        pos += 3;
                        if let Some(extra) = toks.get(pos) {
                            return Err(self.error(extra.col, "`addr=` comes last"));
                        }
                        break;
                    }
                    (_, Tok::Word(val)) => {
                        attrs.push(Attr {
                            key: Some(w),
                            value: val,
                        });
                        attr_cols.push(t.col);
                        pos += 3;
                    }
                    _ => return Err(self.error(v.col, "expected an attribute value")),
                }
            } else {
                attrs.push(Attr {
                    key: None,
                    value: w,
                });
                attr_cols.push(t.col);
                pos += 1;
            }
        }

        // Operands: values, blocks and `[value, block]` pairs, comma separated.
        let mut pairs = 0usize;
        let mut first = true;
        while pos < toks.len() {
            if let (Tok::Word("addr"), Some(Tok::Punct('='))) =
                (toks[pos].tok, toks.get(pos + 1).map(|x| x.tok))
            {
                let Some(v) = toks.get(pos + 2).copied() else {
                    return Err(self.error(toks[pos + 1].col, "expected a value after `addr=`"));
                };
                address = Some(self.value_ref(v)?);
                pos += 3;
                if let Some(extra) = toks.get(pos) {
                    return Err(self.error(extra.col, "`addr=` comes last"));
                }
                break;
            }
            if !first {
                if toks[pos].tok != Tok::Punct(',') {
                    return Err(self.error(toks[pos].col, "expected `,` between operands"));
                }
                pos += 1;
            }
            let Some(t) = toks.get(pos).copied() else {
                return Err(self.error(toks[pos - 1].col, "expected an operand after `,`"));
            };
            match t.tok {
                Tok::Value(_) => {
                    args.push(self.value_ref(t)?);
                    pos += 1;
                }
                Tok::Word(_) => {
                    targets.push(self.block_ref(t)?);
                    pos += 1;
                }
                Tok::Punct('[') => {
                    let (Some(v), Some(c), Some(b), Some(close)) = (
                        toks.get(pos + 1),
                        toks.get(pos + 2),
                        toks.get(pos + 3),
                        toks.get(pos + 4),
                    ) else {
                        return Err(self.error(t.col, "expected `[%value, block]`"));
                    };
                    if c.tok != Tok::Punct(',') || close.tok != Tok::Punct(']') {
                        return Err(self.error(t.col, "expected `[%value, block]`"));
                    }
                    args.push(self.value_ref(*v)?);
                    targets.push(self.block_ref(*b)?);
                    pairs += 1;
                    pos += 5;
                }
                _ => return Err(self.error(t.col, "expected an operand")),
            }
            first = false;
        }

        let result_ty = result.map(|r| r.1);
        let op = self.opcode(name, name_tok.col, attrs, attr_cols, result_ty)?;
        let is_phi = op.is_phi();
        if is_phi && (pairs != args.len() || pairs != targets.len()) {
            return Err(self.error(name_tok.col, "phi operands are `[%value, block]` pairs"));
        }
        if !is_phi && pairs > 0 {
            return Err(self.error(name_tok.col, "only phi takes `[%value, block]` pairs"));
        }
        let inst = self
            .shader
            .append_inst(block, op, args, targets, address, None);
        if self.map.lines.len() == inst.index() {
            self.map.lines.push((self.line_no, name_tok.col));
        }
        if let Some((tok, ty)) = result {
            let v = self.define_value(tok)?;
            let data = self.shader.value_data_mut(v);
            data.ty = ty;
            data.def = inst;
            data.reg = reg;
            self.shader.inst_mut(inst).result = Some(v);
        }
        let wants_two = matches!(op, Op::Swap);
        match second {
            Some((tok, ty, reg)) if wants_two => {
                let v = self.define_value(tok)?;
                let data = self.shader.value_data_mut(v);
                data.ty = ty;
                data.def = inst;
                data.reg = reg;
                self.shader.inst_mut(inst).second_result = Some(v);
            }
            Some((tok, ..)) => {
                return Err(self.error(tok.col, format!("`{name}` has one result")));
            }
            None if wants_two => {
                return Err(self.error(
                    name_tok.col,
                    "`swap` defines two results: `%a:T, %b:T = swap %x, %y`",
                ));
            }
            None => {}
        }
        Ok(())
    }

    /// `%N:TYPE[@REG]` at `toks[at]`: the type, the register and the
    /// position after it.
    fn result_decl(
        &self,
        toks: &[Token<'_>],
        at: usize,
    ) -> Result<(Type, Option<Reg>, usize), ParseError> {
        let ty_tok = match (toks.get(at + 1), toks.get(at + 2)) {
            (Some(c), Some(t)) if c.tok == Tok::Punct(':') => *t,
            _ => return Err(self.error(toks[at].col, "expected `%N:<type> = ...`")),
        };
        let ty = match ty_tok.tok {
            Tok::Word(w) => Type::parse(w)
                .ok_or_else(|| self.error(ty_tok.col, format!("unknown type `{w}`")))?,
            _ => return Err(self.error(ty_tok.col, "expected a type")),
        };
        let mut pos = at + 3;
        let mut reg = None;
        if toks.get(pos).is_some_and(|t| t.tok == Tok::Punct('@')) {
            let r = toks
                .get(pos + 1)
                .copied()
                .ok_or_else(|| self.error(toks[pos].col, "expected a register after `@`"))?;
            reg = Some(self.register(r)?);
            pos += 2;
        }
        Ok((ty, reg, pos))
    }

    fn opcode(
        &self,
        name: &str,
        name_col: u32,
        attrs: &[Attr<'_>],
        attr_cols: &[u32],
        result: Option<Type>,
    ) -> Result<Op<O>, ParseError> {
        let no_attrs = |op: Op<O>| -> Result<Op<O>, ParseError> {
            match attr_cols.first() {
                Some(&c) => Err(self.error(c, format!("`{name}` takes no attributes"))),
                None => Ok(op),
            }
        };
        let one_number = |key: &str| -> Result<u32, ParseError> {
            match attrs {
                [
                    Attr {
                        key: Some(k),
                        value,
                    },
                ] if *k == key => value
                    .parse()
                    .map_err(|_| self.error(attr_cols[0], format!("`{key}` needs a number"))),
                _ => Err(self.error(
                    attr_cols.first().copied().unwrap_or(name_col),
                    format!("`{name}` takes exactly `{key}=N`"),
                )),
            }
        };
        Ok(match name {
            "phi" => no_attrs(Op::Phi)?,
            "collect" => no_attrs(Op::Collect)?,
            "swap" => no_attrs(Op::Swap)?,
            "jump" => no_attrs(Op::Jump)?,
            "branch" => no_attrs(Op::Branch)?,
            "ret" => no_attrs(Op::Return)?,
            "split" => {
                let lane = one_number("lane")?;
                let lane = u8::try_from(lane)
                    .map_err(|_| self.error(attr_cols[0], "lane out of range"))?;
                Op::Split { lane }
            }
            "input" => Op::Input {
                index: one_number("index")?,
            },
            "output" => Op::Output {
                index: one_number("index")?,
            },
            _ => match O::parse(name, attrs, result) {
                Ok(o) if STRUCTURAL_NAMES.contains(&o.name()) => {
                    return Err(self.error(name_col, "vocabulary reuses a structural name"));
                }
                Ok(o) => Op::Opcode(o),
                Err(e) => {
                    let col = e
                        .attr
                        .and_then(|k| attr_cols.get(k).copied())
                        .unwrap_or(name_col);
                    return Err(self.error(col, e.message));
                }
            },
        })
    }
}

fn parse_number(body: &str) -> Option<u32> {
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    body.parse().ok()
}
