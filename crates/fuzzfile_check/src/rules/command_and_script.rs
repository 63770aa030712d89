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

use super::{Check, Context, TaskContext};
use fuzzfile_diagnostics::{Diagnostic, Rule};

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

impl Check for CommandAndScript {
    fn task(&self, _ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let t = facts.task;
        if let (Some(c), Some(s)) = (t.command_key, t.script_key) {
            out.push(
                Diagnostic::new(Rule::CommandAndScript, c, format!("{} `{}` sets both `command` and `script`", t.kind.as_str(), t.name.value))
                    .with_label(s, "`script` is set here")
                    .with_help("keep one: `script` for a shell script, `command` for a program and its arguments"),
            );
        }
    }
}
