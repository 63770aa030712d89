//! ## What it does
//! Reports values of the wrong type or that break their grammar:
//! - sizes (`4GiB`, `512MB`, `0.5GiB`; decimal and binary units, no unit = bytes);
//! - durations in Go's `time.ParseDuration` form (`30m`, `2h30m`, `8h0m0s`); a `d` unit is a
//!   warning with a fix to hours, since Go has none;
//! - image URIs (`docker://…`, `oras://…`), `secret://<scope>/<name>`,
//!   `volume://<scope>/<class>[/<name>]`;
//! - absolute paths (`cwd`, mount locations, file paths) without a `..` component, job and
//!   service names (DNS labels: they become host names), volume keys (they become directory
//!   names: a letter or digit, then letters, digits, `-`, `_`, `.`), transfer `file://` paths
//!   without `..`, `NAME=VALUE` env entries; a NUL (`"\0"`) in a command argument, an env
//!   value, a file name or a secret reference, which no process or file can take;
//! - YAML tags as Fuzzball's decoder (Go `yaml.v3`) reads them: a value that does not match
//!   its core tag (`!!int hi`) is an error at the tag; a tag outside the core schema (`!foo`)
//!   is a warning, since Fuzzball gives it no meaning;
//! - enumerations (CPU affinity, multinode implementation, dependency status, probe scheme,
//!   port protocol, endpoint protocol/type/scope), booleans, whole numbers and ranges
//!   (`task-array` end before start, concurrency over 200, ports);
//! - mounts written in the other version's form, `script` without a `#!` line, a string where a
//!   list of arguments belongs, and a `depends-on` with `status: RUNNING` on a job (only
//!   services are ever RUNNING).
//!
//! Fix safety: safe where the fix only re-spells the same value (quotes removed, a YAML 1.1
//! boolean, letter case, days written as hours, `{uri: ...}`, `docker://` before a bare image
//! name); unsafe where it picks a value or changes what runs (the closest allowed value,
//! `/bin/sh -c` around a command string, a `#!/bin/sh` line, `concurrency` lowered to 200, a
//! `depends-on` status), so only `--unsafe-fixes` applies those.
//!
//! ## Why is this bad?
//! Fuzzball rejects the workflow, or accepts it and fails at run time (a relative `cwd`, a job
//! waiting forever for a job to be RUNNING).
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     image: {uri: nvcr.io/nvidia/pytorch:25.01-py3}
//!     resource:
//!       memory: {size: 64 gigs}
//!     policy:
//!       timeout: {execute: 2 hours}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}
//!     resource:
//!       memory: {size: 64GiB}
//!     policy:
//!       timeout: {execute: 2h}
//! ```
//!
//! Detected while building the model (`fuzzfile_model`), except the `status: RUNNING`
//! check, which needs the whole job graph and lives here.

use super::{Check, Context, TaskContext};
use fuzzfile_diagnostics::{Applicability, Diagnostic, Fix, Rule};
use fuzzfile_model::{DependencyStatus, TaskKind};

declare_rule! {
    pub struct InvalidValue {
        code: "FZ011",
        name: "invalid-value",
        severity: Error,
        category: Schema,
        summary: "A value of the wrong type, or one that breaks its grammar (size, duration, URI, name, enum)",
        fix: Sometimes,
        fix_safety: Safe,
    }
}

impl Check for InvalidValue {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        for dep in &task.depends_on {
            let (Some(name), Some(status)) = (&dep.name, &dep.status) else {
                continue;
            };
            if status.value != DependencyStatus::Running {
                continue;
            }
            if let Some(target) = ctx.model.task(&name.value) {
                if target.kind == TaskKind::Job {
                    out.push(
                        Diagnostic::new(
                            Rule::InvalidValue,
                            status.range,
                            format!(
                                "`{}` is a job, and only services are ever RUNNING",
                                name.value
                            ),
                        )
                        .with_label(target.name.range, "the job is defined here")
                        .with_help("wait for the job with `status: FINISHED`")
                        // It changes what the dependency waits for.
                        .with_fix(
                            Fix::replace("Write `FINISHED`", status.range, "FINISHED")
                                .with_applicability(Applicability::Unsafe),
                        ),
                    );
                }
            }
        }
    }
}
