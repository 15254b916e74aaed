//! Source files, spans and diagnostics (`file:line:col` with a caret excerpt).

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

/// Index of a loaded source file in a [`SourceMap`].
pub type FileId = usize;

/// A byte range in one source file.
#[derive(
    serde::Serialize, serde::Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, Hash,
)]
pub struct Span {
    pub file: FileId,
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(file: FileId, start: usize, end: usize) -> Self {
        Span { file, start, end }
    }
}

/// One loaded file: its display path and text (borrowed when the model
/// was read back with the text embedded in the program, see
/// [`crate::compact::from_static`]).
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: Cow<'static, str>,
}

/// Every file read while loading a spec, in load order.
#[derive(serde::Serialize, serde::Deserialize, Clone, Debug, Default)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn add(&mut self, path: PathBuf, text: String) -> FileId {
        self.files.push(SourceFile {
            path,
            text: Cow::Owned(text),
        });
        self.files.len() - 1
    }

    pub fn find(&self, path: &Path) -> Option<FileId> {
        self.files.iter().position(|f| f.path == path)
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, file: FileId, offset: usize) -> (usize, usize) {
        let text = &self.files[file].text;
        let offset = offset.min(text.len());
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = text[line_start..offset].chars().count() + 1;
        (line, col)
    }

    /// Turns a span and message into a positioned diagnostic.
    pub fn diagnostic(&self, span: Span, message: impl Into<String>) -> Diagnostic {
        let file = &self.files[span.file];
        let (line, col) = self.line_col(span.file, span.start);
        let source_line = file.text.lines().nth(line - 1).unwrap_or("").to_string();
        let end = span.end.max(span.start + 1);
        let width = file.text[span.start.min(file.text.len())..end.min(file.text.len())]
            .split('\n')
            .next()
            .map_or(1, |s| s.chars().count().max(1));
        Diagnostic {
            path: file.path.clone(),
            line,
            col,
            width,
            message: message.into(),
            source_line,
        }
    }
}

/// One error at a position in a spec file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub path: PathBuf,
    pub line: usize,
    pub col: usize,
    /// Number of characters the caret underlines.
    pub width: usize,
    pub message: String,
    pub source_line: String,
}

impl Diagnostic {
    /// A diagnostic that has no position in a spec (e.g. an unreadable file).
    pub fn unpositioned(path: &Path, message: impl Into<String>) -> Self {
        Diagnostic {
            path: path.to_path_buf(),
            line: 0,
            col: 0,
            width: 0,
            message: message.into(),
            source_line: String::new(),
        }
    }

    /// `file:line:col: message`, the first line of the rendering.
    pub fn headline(&self) -> String {
        if self.line == 0 {
            format!("{}: error: {}", self.path.display(), self.message)
        } else {
            format!(
                "{}:{}:{}: error: {}",
                self.path.display(),
                self.line,
                self.col,
                self.message
            )
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.headline())?;
        if self.line == 0 {
            return Ok(());
        }
        let num = self.line.to_string();
        let pad = " ".repeat(num.len());
        writeln!(f, "{pad} |")?;
        writeln!(f, "{num} | {}", self.source_line)?;
        let lead: String = self
            .source_line
            .chars()
            .take(self.col - 1)
            .map(|c| if c == '\t' { '\t' } else { ' ' })
            .collect();
        write!(f, "{pad} | {lead}{}", "^".repeat(self.width))
    }
}

/// All errors found in a spec; loading fails with this.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl Diagnostics {
    pub fn first(&self) -> Option<&Diagnostic> {
        self.0.first()
    }
}
