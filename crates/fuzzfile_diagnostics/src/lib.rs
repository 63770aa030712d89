//! The vocabulary every layer of the Fuzzfile toolchain shares: byte ranges in a source text,
//! a line index that turns them into the line and column people read, the rule registry
//! (name, code, default severity) and the [`Diagnostic`] type with its optional [`Fix`].
//!
//! Invariants: positions are byte offsets into the original text (after nothing is stripped:
//! a BOM counts); lines and columns are computed only at the edges (CLI output, LSP); this crate
//! depends on nothing but `serde`.

pub mod docs;
mod line_index;
mod rules;
pub mod suggest;

pub use line_index::{
    is_break, line_end_at, line_start_at, lines, newline_of, next_line_start, LineCol, LineIndex,
};
pub use rules::{Rule, RuleCategory, RuleName};

use serde::Serialize;
use std::fmt;

/// A half-open byte range `start..end` in a source text.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize)]
pub struct TextRange {
    pub start: u32,
    pub end: u32,
}

impl TextRange {
    pub const fn new(start: u32, end: u32) -> Self {
        if start <= end {
            TextRange { start, end }
        } else {
            TextRange {
                start: end,
                end: start,
            }
        }
    }
    pub fn from_usize(start: usize, end: usize) -> Self {
        TextRange::new(clamp_u32(start), clamp_u32(end))
    }
    pub const fn empty(at: u32) -> Self {
        TextRange { start: at, end: at }
    }
    pub const fn len(self) -> u32 {
        self.end - self.start
    }
    pub const fn is_empty(self) -> bool {
        self.start == self.end
    }
    pub fn contains(self, offset: u32) -> bool {
        self.start <= offset && offset < self.end
    }
    /// Whether `offset` is inside the range or at its end (the cursor position after a word).
    pub fn touches(self, offset: u32) -> bool {
        self.start <= offset && offset <= self.end
    }
    pub fn cover(self, other: TextRange) -> TextRange {
        TextRange::new(self.start.min(other.start), self.end.max(other.end))
    }
    pub fn as_usize(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
    /// The text of this range in `source`, or `""` when the range does not fit.
    pub fn slice(self, source: &str) -> &str {
        source.get(self.as_usize()).unwrap_or("")
    }
}

fn clamp_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl fmt::Debug for TextRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
    pub fn parse(s: &str) -> Option<Severity> {
        match s.to_ascii_lowercase().as_str() {
            "info" | "information" | "note" => Some(Severity::Info),
            "warning" | "warn" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One replacement of `range` by `replacement` in the original text.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Edit {
    pub range: TextRange,
    pub replacement: String,
}

/// Whether a fix may be applied without a person looking at it (as ruff's `Applicability`).
/// Ordered: `Unsafe < Safe`; a fix is applied when it is at least as safe as asked for.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Changes what runs or what is requested (a resource request, a launcher's arguments, a
    /// deleted key, a guessed name): applied only with `--unsafe-fixes`; in an editor, a
    /// quick fix that is never the preferred one.
    Unsafe,
    /// Keeps the meaning the author evidently intended (a misspelt key renamed, quoting, a
    /// case fix): applied by `--fix` and the editor's "fix all".
    Safe,
}

impl Applicability {
    pub fn as_str(self) -> &'static str {
        match self {
            Applicability::Safe => "safe",
            Applicability::Unsafe => "unsafe",
        }
    }
}

impl fmt::Display for Applicability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A set of edits that together fix one diagnostic. Edits never overlap.
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Fix {
    /// What applying the fix does, in the imperative ("Rename to `depends-on`").
    pub message: String,
    pub edits: Vec<Edit>,
    /// This fix's safety where it differs from its rule's (`fix_safety` of the rule's
    /// `declare_rule!`, [`Rule::fix_safety`]); `None`: the rule's. Read it through
    /// [`Diagnostic::fix_applicability`].
    pub applicability: Option<Applicability>,
}

impl Fix {
    pub fn replace(
        message: impl Into<String>,
        range: TextRange,
        replacement: impl Into<String>,
    ) -> Fix {
        Fix {
            message: message.into(),
            edits: vec![Edit {
                range,
                replacement: replacement.into(),
            }],
            applicability: None,
        }
    }

    /// A fix of several edits, of its rule's safety.
    pub fn new(message: impl Into<String>, edits: Vec<Edit>) -> Fix {
        Fix {
            message: message.into(),
            edits,
            applicability: None,
        }
    }

    /// This fix with its own safety instead of its rule's (a rule that offers both kinds).
    pub fn with_applicability(mut self, applicability: Applicability) -> Fix {
        self.applicability = Some(applicability);
        self
    }

    /// Apply the edits to `source`. Overlapping or out-of-range edits are skipped.
    pub fn apply(&self, source: &str) -> String {
        apply_edits(source, self.edits.iter())
    }
}

/// Apply non-overlapping edits to `source`; edits that overlap an earlier one, or do not fall on
/// character boundaries, are skipped.
pub fn apply_edits<'a>(source: &str, edits: impl IntoIterator<Item = &'a Edit>) -> String {
    let mut edits: Vec<&Edit> = edits.into_iter().collect();
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out = String::with_capacity(source.len());
    let mut pos = 0usize;
    for e in edits {
        let r = e.range.as_usize();
        if r.start < pos
            || r.end > source.len()
            || !source.is_char_boundary(r.start)
            || !source.is_char_boundary(r.end)
        {
            continue;
        }
        out.push_str(&source[pos..r.start]);
        out.push_str(&e.replacement);
        pos = r.end;
    }
    out.push_str(&source[pos..]);
    out
}

/// A secondary location that explains the primary one ("the `[` opened here").
#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct Label {
    pub range: TextRange,
    pub message: String,
}

/// A finding at a place in one file.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Diagnostic {
    pub rule: Rule,
    pub severity: Severity,
    pub message: String,
    pub range: TextRange,
    pub labels: Vec<Label>,
    /// What to do about it, when the message alone does not say.
    pub help: Option<String>,
    pub fix: Option<Fix>,
}

impl Diagnostic {
    /// A diagnostic with the rule's default severity.
    pub fn new(rule: Rule, range: TextRange, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            rule,
            severity: rule.default_severity(),
            message: message.into(),
            range,
            labels: Vec::new(),
            help: None,
            fix: None,
        }
    }
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
    pub fn with_label(mut self, range: TextRange, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            range,
            message: message.into(),
        });
        self
    }
    pub fn with_fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }
    /// The safety of the fix, if there is one: its own ([`Fix::applicability`]), else its
    /// rule's ([`Rule::fix_safety`]); unsafe for a rule that declares none.
    pub fn fix_applicability(&self) -> Option<Applicability> {
        self.fix.as_ref().map(|f| {
            f.applicability
                .or(self.rule.fix_safety())
                .unwrap_or(Applicability::Unsafe)
        })
    }
    /// The fix, when it is at least as safe as `required`.
    pub fn fix_at(&self, required: Applicability) -> Option<&Fix> {
        self.fix
            .as_ref()
            .filter(|_| self.fix_applicability().is_some_and(|a| a >= required))
    }
}

/// Sort diagnostics into reading order (position, then rule) and drop exact duplicates.
pub fn sort_diagnostics(diags: &mut Vec<Diagnostic>) {
    diags.sort_by(|a, b| {
        (a.range.start, a.range.end, a.rule.code(), &a.message).cmp(&(
            b.range.start,
            b.range.end,
            b.rule.code(),
            &b.message,
        ))
    });
    diags.dedup_by(|a, b| a.rule == b.rule && a.range == b.range && a.message == b.message);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_apply_in_order_and_skip_overlaps() {
        let src = "abcdef";
        let edits = [
            Edit {
                range: TextRange::new(4, 5),
                replacement: "E".into(),
            },
            Edit {
                range: TextRange::new(0, 2),
                replacement: "XY".into(),
            },
            Edit {
                range: TextRange::new(1, 3),
                replacement: "overlap".into(),
            },
        ];
        assert_eq!(apply_edits(src, edits.iter()), "XYcdEf");
    }

    #[test]
    fn edits_off_char_boundaries_are_skipped() {
        let src = "é!";
        let edits = [Edit {
            range: TextRange::new(1, 2),
            replacement: "x".into(),
        }];
        assert_eq!(apply_edits(src, edits.iter()), "é!");
    }

    #[test]
    fn reversed_range_is_normalised() {
        assert_eq!(TextRange::new(5, 2), TextRange::new(2, 5));
        assert!(TextRange::new(2, 5).touches(5));
        assert!(!TextRange::new(2, 5).contains(5));
    }
}
