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

use super::{Check, Context, TaskContext};
use fuzzfile_diagnostics::{Diagnostic, Rule};

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

impl Check for NoCommand {
    fn task(&self, _ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let t = facts.task;
        // A body that is not a mapping is an `invalid-value`; a body the walk could not read
        // to its end may hold the command in what is unread.
        if !t.read_whole || t.command_key.is_some() || t.script_key.is_some() {
            return;
        }
        out.push(
            Diagnostic::new(
                Rule::NoCommand,
                t.name.range,
                format!(
                    "{} `{}` has neither `command` nor `script`",
                    t.kind.as_str(),
                    t.name.value
                ),
            )
            .with_help("add `script: |` with a `#!/bin/sh` line, or `command: [program, args...]`"),
        );
    }
}
