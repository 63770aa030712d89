//! ## What it does
//! Reports an application template (`template.yaml`, `*.template.yaml`) that Go's
//! `text/template` does not parse: an `{{ end }}` without an opening `if`, `range`, `with`
//! or `define`, an action that is never closed (`{{ .Name }` ), an unknown function (Go
//! reports it when parsing), a bad number or string inside `{{ }}`. The finding points at the
//! action in the template.
//!
//! A template that does not parse is not rendered, so none of the other rules run on it.
//!
//! ## Why is this bad?
//! Fuzzball refuses to render the template: the application cannot be started at all, and
//! the catalog shows the error only when someone tries.
//!
//! ## Example
//! ```yaml template
//! version: v4
//! jobs:
//!   hello:
//!     image:
//!       uri: {{ .ContainerUri | trimm }}
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
//!       uri: {{ .ContainerUri | trim }}
//!     command: [echo, hello]
//! ```
//!
//! ```yaml values
//! values:
//!   - name: ContainerUri
//!     string_value: docker://alpine:3.20
//! ```

declare_rule! {
    pub struct TemplateSyntaxError {
        code: "FZ050",
        name: "template-syntax-error",
        severity: Error,
        category: Template,
        summary: "An application template that Go's text/template does not parse (unbalanced `{{ end }}`, unclosed action, unknown function)",
        fix: None,
    }
}

/// Found by the template parser (`crate::template`): no hook.
impl super::Check for TemplateSyntaxError {}
