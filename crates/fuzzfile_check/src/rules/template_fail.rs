//! ## What it does
//! Reports a template whose `{{ fail "message" }}` is reached with the values it is checked
//! with (the values file beside it, `--values`, `--set`). The finding shows the template's own
//! message at the `fail` action.
//!
//! `fail` is how catalog templates refuse a combination of values (an output path without
//! its secret, a GPU count the application cannot use), and how they ask for a value that has
//! no default (`{{ if not (trim .ApiKey) }}{{ fail "ApiKey is required" }}{{ end }}`).
//!
//! - When filling one value that is empty in the values checked with (alone, with a
//!   placeholder text) makes the render pass that `fail`, the finding is a note (severity
//!   info) naming the value the template asks for: that is the template working as meant.
//!   Give the value (`--set ApiKey=...`) to check the Fuzzfile the template renders.
//! - Otherwise it is an error: these values cannot be rendered.
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
