//! ## What it does
//! Reports text that is not valid YAML: unclosed brackets and quotes, bad indentation, tabs
//! used for indentation, a second document, invalid UTF-8, and inputs beyond the size and
//! nesting limits. The error points at where the problem starts (an unclosed `[` or quote is
//! reported where it opens) and says where the parser noticed it.
//!
//! After an error the offending lines are set aside and the rest of the file is still checked,
//! so one typo does not hide every other finding.
//!
//! ## Why is this bad?
//! Fuzzball cannot read the workflow at all.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     command: [python3, train.py
//!     cwd: /work
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     command: [python3, train.py]
//!     cwd: /work
//! ```

use fuzzfile_diagnostics::{Diagnostic, Rule};
use fuzzfile_syntax::SyntaxError;

declare_rule! {
    pub struct YamlSyntax {
        code: "FZ001",
        name: "yaml-syntax",
        severity: Error,
        category: Syntax,
        summary: "The text is not valid YAML, or exceeds the size and nesting limits",
        fix: None,
    }
}

/// Found by the parser (its errors become findings in `crate::finish`, also for a text
/// that is not UTF-8, when no rule runs) and by the model walk when aliases exhaust its
/// budget: it has no hook of its own.
impl super::Check for YamlSyntax {}

pub fn to_diagnostic(e: &SyntaxError) -> Diagnostic {
    let mut d = Diagnostic::new(Rule::YamlSyntax, e.range, e.message.clone());
    if let Some(at) = e.detected_at {
        d = d.with_label(at, "the parser noticed the problem here");
    }
    if let Some(h) = &e.help {
        d = d.with_help(h.clone());
    }
    d
}
