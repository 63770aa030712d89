//! ## What it does
//! Reports `policy.retry` on jobs, `defaults.job` and volume transfers. The fix removes it.
//!
//! Fix safety: unsafe: it deletes a key (Fuzzball ignores it, but its author expected retries).
//!
//! ## Why is this bad?
//! Fuzzball accepts `retry` and ignores it (API 3.3: "not implemented"). A job that is
//! expected to retry a flaky download fails on the first error.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   download:
//!     policy:
//!       retry:
//!         attempts: 3
//!       timeout:
//!         execute: 30m
//! ```
//!
//! ## Use instead
//! Retry inside the job's script, where it takes effect:
//! ```yaml
//! jobs:
//!   download:
//!     policy:
//!       timeout:
//!         execute: 30m
//!     script: |
//!       #!/bin/sh
//!       for i in 1 2 3; do curl -fO https://example.org/data.tar && break; sleep 10; done
//! ```

use super::{Check, Context, TaskContext};
use crate::edits::delete_lines;
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};
use fuzzfile_model::Policy;

declare_rule! {
    pub struct PolicyRetryIgnored {
        code: "FZ032",
        name: "policy-retry-ignored",
        severity: Warning,
        category: Schema,
        summary: "`policy.retry` is accepted by Fuzzball and ignored",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

impl Check for PolicyRetryIgnored {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        if let Some(p) = ctx.model.defaults.as_ref().and_then(|d| d.policy.as_ref()) {
            report(ctx, p, out);
        }
        for v in &ctx.model.volumes {
            for t in v.ingress.iter().chain(v.egress.iter()) {
                if let Some(p) = &t.policy {
                    report(ctx, p, out);
                }
            }
        }
    }

    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        if let Some(p) = &facts.task.policy {
            report(ctx, p, out);
        }
    }
}

/// The finding of one `policy` with a `retry` entry.
fn report(ctx: &Context<'_>, p: &Policy, out: &mut Vec<Diagnostic>) {
    let Some(range) = p.retry else { return };
    let key = fuzzfile_diagnostics::TextRange::new(range.start, range.start + 5);
    let mut d = Diagnostic::new(
        Rule::PolicyRetryIgnored,
        key,
        "Fuzzball ignores `policy.retry`: the job runs once",
    )
    .with_help("remove `retry`; to retry, loop inside the script");
    if let Some(edit) = delete_lines(ctx.text, range) {
        d = d.with_fix(Fix {
            message: "Remove `retry`".into(),
            edits: vec![edit],
            applicability: None,
        });
    }
    out.push(d);
}
