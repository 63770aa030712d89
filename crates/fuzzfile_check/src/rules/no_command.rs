//! ## What it does
//! Reports a job or service with neither `command` nor `script`.
//!
//! ## Why is this bad?
//! The container has nothing to run.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   hello:
//!     image: {uri: docker://alpine:3.20}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   hello:
//!     image: {uri: docker://alpine:3.20}
//!     script: |
//!       #!/bin/sh
//!       echo hello
//! ```
//!
//! Detected while building the model (`fuzzfile_model`).

declare_rule! {
    pub struct NoCommand {
        code: "FZ031",
        name: "no-command",
        severity: Error,
        category: Schema,
        summary: "A job or service sets neither `command` nor `script`",
        fix: None,
    }
}

/// Found by another layer; this rule has no hook of its own.
impl super::Check for NoCommand {}
