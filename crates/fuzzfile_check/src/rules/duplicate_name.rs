//! ## What it does
//! Reports a job and a service with the same name.
//!
//! ## Why is this bad?
//! Jobs and services share one namespace: `depends-on` names either, and both become host
//! names. Fuzzball cannot tell which one a dependency means.
//!
//! ## Example
//! ```yaml
//! services:
//!   db:
//!     image: {uri: docker://postgres:16}
//!     command: [postgres]
//! jobs:
//!   db:
//!     image: {uri: docker://postgres:16}
//!     command: [psql, -h, db.svc]
//! ```
//!
//! ## Use instead
//! ```yaml
//! services:
//!   db:
//!     image: {uri: docker://postgres:16}
//!     command: [postgres]
//! jobs:
//!   db-client:
//!     image: {uri: docker://postgres:16}
//!     command: [psql, -h, db.svc]
//! ```

use super::{Check, Context};
use fuzzfile_diagnostics::{Diagnostic, Rule};

declare_rule! {
    pub struct DuplicateName {
        code: "FZ022",
        name: "duplicate-name",
        severity: Error,
        category: Semantic,
        summary: "A job and a service with the same name",
        fix: None,
    }
}

impl Check for DuplicateName {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        for svc in &ctx.model.services {
            if let Some(job) = ctx
                .model
                .jobs
                .iter()
                .find(|j| j.name.value == svc.name.value)
            {
                out.push(
                    Diagnostic::new(
                        Rule::DuplicateName,
                        svc.name.range,
                        format!("a job and a service are both named `{}`", svc.name.value),
                    )
                    .with_label(job.name.range, "the job is defined here")
                    .with_help("jobs and services share one namespace; rename one of them"),
                );
            }
        }
    }
}
