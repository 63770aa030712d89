//! ## What it does
//! Reports a template whose `{{ fail "message" }}` is reached with the values it is checked
//! with (the values file beside it, `--values`, `--set`). The finding shows the template's own
//! message at the `fail` action.
//!
//! `fail` is how catalog templates refuse a combination of values (an output path without
//! its secret, a GPU count the application cannot use). A `fail` reached with the *shipped*
//! defaults means the application cannot be started without changing a value first.
//!
//! ## Why is this bad?
//! Fuzzball stops rendering at `fail` and shows its message: nothing runs.
//!
//! ## Example
//! ```yaml template
//! {{- if not (hasPrefix "docker://" .ContainerUri) }}
//! {{- fail "ContainerUri must start with docker://" }}
//! {{- end }}
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
//!     string_value: alpine:3.20
//! ```
//!
//! ## Use instead
//! ```yaml template
//! {{- if not (hasPrefix "docker://" .ContainerUri) }}
//! {{- fail "ContainerUri must start with docker://" }}
//! {{- end }}
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
    pub struct TemplateFail {
        code: "FZ051",
        name: "template-fail",
        severity: Error,
        category: Template,
        summary: "A template's `fail` is reached with the values it is checked with",
        fix: None,
    }
}

/// Found when the template is rendered (`crate::template`): no hook.
impl super::Check for TemplateFail {}
