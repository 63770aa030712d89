//! ## What it does
//! Reports a job or service that sets both `command` and `script`.
//!
//! ## Why is this bad?
//! Every published Fuzzfile uses exactly one of them, and the Fuzzball documentation does not
//! say how the two combine; the intent is unclear to readers, and one of them is likely a
//! leftover.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   hello:
//!     command: [echo, hello]
//!     script: |
//!       #!/bin/sh
//!       echo hello
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   hello:
//!     script: |
//!       #!/bin/sh
//!       echo hello
//! ```
//!
//! Detected while building the model (`fuzzfile_model`).

declare_rule! {
    pub struct CommandAndScript {
        code: "FZ030",
        name: "command-and-script",
        severity: Warning,
        category: Schema,
        summary: "A job or service sets both `command` and `script`",
        fix: None,
    }
}

/// Found by another layer; this rule has no hook of its own.
impl super::Check for CommandAndScript {}
