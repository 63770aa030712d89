//! ## What it does
//! Reports `policy.retry` on jobs, `defaults.job` and volume transfers. The fix removes it.
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

use super::Context;
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
    }
}

impl super::Check for PolicyRetryIgnored {
    fn file(&self, ctx: &super::Context<'_>, out: &mut Vec<fuzzfile_diagnostics::Diagnostic>) {
        check(ctx, out);
    }
}

pub fn check(ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let mut policies: Vec<&Policy> = Vec::new();
    if let Some(p) = ctx.model.defaults.as_ref().and_then(|d| d.policy.as_ref()) {
        policies.push(p);
    }
    policies.extend(ctx.model.tasks().filter_map(|t| t.policy.as_ref()));
    for v in &ctx.model.volumes {
        policies.extend(
            v.ingress
                .iter()
                .chain(v.egress.iter())
                .filter_map(|t| t.policy.as_ref()),
        );
    }
    for p in policies {
        let Some(range) = p.retry else { continue };
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
            });
        }
        out.push(d);
    }
}
