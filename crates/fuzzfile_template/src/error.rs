//! The engine's errors: where in the template, what is wrong.

use crate::Span;

/// A template that does not parse: `{{ end }}` without an opening action, an unclosed
/// action, an unknown function (Go reports it at parse time), a bad number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    pub span: Span,
    /// What is wrong, in Go's words where Go has them (`unexpected {{end}}`, `unclosed action`).
    pub message: String,
    /// What to do about it, where there is something to say.
    pub help: Option<String>,
}

/// A render that stopped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ExecError {
    pub span: Span,
    pub kind: ExecErrorKind,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExecErrorKind {
    /// `{{ fail "message" }}` reached: the template's own message.
    Fail,
    /// A function called with arguments of the wrong number or type.
    WrongArgument,
    /// A field of something that is not a map, `index` out of range, a nil where Go fails.
    BadOperand,
    /// `{{template "x"}}` with no such definition.
    UndefinedTemplate,
    /// Nesting deeper than [`crate::RenderOptions::max_depth`] or output larger than its
    /// bound.
    Limit,
}
