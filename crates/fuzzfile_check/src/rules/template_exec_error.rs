//! ## What it does
//! Reports a template that stops while it is rendered, other than by `fail`: a function
//! called with an argument of the wrong type or the wrong number of arguments (`substr` of
//! a number, `add` of a string that is no number), a field of something that is not a map,
//! `index` out of range, `{{ template "x" }}` with no such definition, output or nesting
//! beyond the renderer's limits. The finding points at the action that stopped, with Go's
//! words for what went wrong.
//!
//! ## Why is this bad?
//! Fuzzball's renderer stops at the same place: the application cannot be started with
//! these values.
//!
//! ## Example
//! ```yaml template
//! version: v4
//! jobs:
//!   hello:
//!     image:
//!       uri: docker://alpine:3.20
//!     command: [echo, {{ index (splitList "," .Names) 3 }}]
//! ```
//!
//! ```yaml values
//! values:
//!   - name: Names
//!     string_value: "a,b"
//! ```
//!
//! ## Use instead
//! ```yaml template
//! version: v4
//! jobs:
//!   hello:
//!     image:
//!       uri: docker://alpine:3.20
//!     command: [echo, {{ index (splitList "," .Names) 1 }}]
//! ```
//!
//! ```yaml values
//! values:
//!   - name: Names
//!     string_value: "a,b"
//! ```

declare_rule! {
    pub struct TemplateExecError {
        code: "FZ052",
        name: "template-exec-error",
        severity: Error,
        category: Template,
        summary: "A template that stops while rendering: wrong argument type or count, bad field or index, undefined template",
        fix: None,
    }
}

/// Found when the template is rendered (`crate::template`): no hook.
impl super::Check for TemplateExecError {}
