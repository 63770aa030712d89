//! ## What it does
//! Reports keys that Fuzzball still accepts but has replaced: `requires` (by `depends-on`),
//! volume `type` and `path` (by `reference`), and the legacy `secrets` maps.
//!
//! ## Why is this bad?
//! `requires` is ignored as soon as a job also has `depends-on`, which makes mixed files
//! misleading; the other keys are kept only for old workflows and may stop working.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   analyse:
//!     requires: [download]
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   analyse:
//!     depends-on:
//!       - name: download
//!         status: FINISHED
//! ```
//!
//! Detected while building the model (`fuzzfile_model`).

declare_rule! {
    pub struct DeprecatedKey {
        code: "FZ014",
        name: "deprecated-key",
        severity: Warning,
        category: Schema,
        summary: "A key that Fuzzball still accepts but has replaced or stopped honouring",
        fix: None,
    }
}

/// Found by the model walk (`fuzzfile_model::build`): the schema table gives each key of
/// each place its status (current, deprecated, removed), and the walk looks every key up
/// there as it reads it, as for `unknown-key`. It has no hook of its own.
impl super::Check for DeprecatedKey {}
