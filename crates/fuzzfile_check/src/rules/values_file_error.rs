//! ## What it does
//! Reports a template's values file (`values.yaml`, `<app>.values.yaml`, or one given with
//! `--values`) that cannot be read as the catalog's values format: not valid YAML, no
//! top-level `values:` list, an entry without `name`, a value of the wrong type
//! (`uint_value: -1`, `bool_value: "yes"`), an unknown `*_value` kind or several of them in
//! one entry, a default that is not one of its `options_input` options. A `--set NAME=VALUE`
//! naming no declared value, or a value its type does not take, is reported too. The finding
//! points into the values file.
//!
//! ## Why is this bad?
//! Fuzzball refuses the values (or the application's form cannot show them), so the
//! template cannot be rendered as intended.
//!
//! ## Example
//! ```yaml template
//! version: v4
//! jobs:
//!   hello:
//!     image:
//!       uri: docker://alpine:3.20
//!     command: [sleep, "{{ .Seconds }}"]
//! ```
//!
//! ```yaml values
//! values:
//!   - name: Seconds
//!     uint_value: -5
//! ```
//!
//! ## Use instead
//! ```yaml template
//! version: v4
//! jobs:
//!   hello:
//!     image:
//!       uri: docker://alpine:3.20
//!     command: [sleep, "{{ .Seconds }}"]
//! ```
//!
//! ```yaml values
//! values:
//!   - name: Seconds
//!     uint_value: 5
//! ```

declare_rule! {
    pub struct ValuesFileError {
        code: "FZ054",
        name: "values-file-error",
        severity: Error,
        category: Template,
        summary: "A template's values file (or a `--values`/`--set` override) that is not the catalog's values format",
        fix: None,
    }
}

/// Found when the values are read (`crate::template`): no hook.
impl super::Check for ValuesFileError {}
