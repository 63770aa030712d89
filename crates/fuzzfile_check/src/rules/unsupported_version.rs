//! ## What it does
//! Checks that `version` is one of the Fuzzfile versions: `v4` (current) or `v1` (legacy).
//! There is no `v2` or `v3`. A numeric `4` or `1` gets a fix to the right spelling.
//!
//! ## Why is this bad?
//! Fuzzball rejects a workflow with any other version, and every other check depends on the
//! version (v1 and v4 key mounts in opposite directions).
//!
//! ## Example
//! ```yaml
//! version: 4
//! ```
//!
//! ## Use instead
//! ```yaml
//! version: v4
//! ```
//!
//! Detected while building the model (`fuzzfile_model`).

declare_rule! {
    pub struct UnsupportedVersion {
        code: "FZ002",
        name: "unsupported-version",
        severity: Error,
        category: Schema,
        summary: "`version` is missing or is not one of the Fuzzfile versions `v1` and `v4`",
        fix: Sometimes,
    }
}

/// Found by another layer; this rule has no hook of its own.
impl super::Check for UnsupportedVersion {}
