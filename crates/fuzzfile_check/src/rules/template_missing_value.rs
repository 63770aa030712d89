//! ## What it does
//! Reports `{{ .Name }}` (or `$.Name`) in a template where the values do not declare
//! `Name`: Go prints `<no value>` there (or uses the zero value in a function's argument), so
//! a misspelt value name goes unnoticed until the job fails. The finding points at the
//! action and names the values file that lacks it.
//!
//! A template checked without any values file (none beside it and no `--values`) gets one
//! finding, at the first value it reads, instead of one per name: every `.Name` is missing.
//! A value the values file declares but could not read (its error is reported there) is not
//! reported again. A `.Name` only read where the render does not go is not seen.
//!
//! ## Why is this bad?
//! The rendered Fuzzfile holds `<no value>` where a value was meant: an image
//! `docker://<no value>`, a command argument `<no value>`.
//!
//! ## Example
//! ```yaml template
//! version: v4
//! jobs:
//!   hello:
//!     image:
//!       uri: {{ .ContainerURI }}
//!     command: [echo, hello]
//! ```
//!
//! ```yaml values
//! values:
//!   - name: ContainerUri
//!     string_value: docker://alpine:3.20
//! ```
//!
//! ## Use instead
//! ```yaml template
//! version: v4
//! jobs:
//!   hello:
//!     image:
//!       uri: {{ .ContainerUri }}
//!     command: [echo, hello]
//! ```
//!
//! ```yaml values
//! values:
//!   - name: ContainerUri
//!     string_value: docker://alpine:3.20
//! ```

declare_rule! {
    pub struct TemplateMissingValue {
        code: "FZ053",
        name: "template-missing-value",
        severity: Warning,
        category: Template,
        summary: "A template reads a value its values file does not declare (Go prints `<no value>`)",
        fix: None,
    }
}

/// Found when the template is rendered (`crate::template`): no hook.
impl super::Check for TemplateMissingValue {}
