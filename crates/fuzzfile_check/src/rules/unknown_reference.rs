//! ## What it does
//! Reports references to things the Fuzzfile does not define:
//! - `depends-on[].name` and `requires` entries that name no job or service;
//! - mounts (of jobs, services and `defaults.job`) that name no volume under `volumes`;
//! - `file://<name>` in a job's `files` or a volume ingress `source` with no such key under
//!   the top-level `files`;
//! - a service endpoint's `port-name` that matches no `network.ports[].name`.
//!
//! Each message suggests the closest defined name.
//!
//! Fix safety: unsafe: the closest defined name is a guess, and the job, service or volume it
//! picks changes what runs.
//!
//! ## Why is this bad?
//! Fuzzball refuses to start the workflow, or (for a dependency) the job never starts.
//!
//! ## Example
//! ```yaml
//! volumes:
//!   data: {reference: volume://user/ephemeral}
//! jobs:
//!   train:
//!     mounts:
//!       /data: {volume: dta}
//! ```
//!
//! ## Use instead
//! ```yaml
//! volumes:
//!   data: {reference: volume://user/ephemeral}
//! jobs:
//!   train:
//!     mounts:
//!       /data: {volume: data}
//! ```

use super::{Check, Context};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};
use fuzzfile_model::schema::did_you_mean;
use fuzzfile_model::{FileSource, Mount, Spanned};
use std::collections::HashSet;

declare_rule! {
    pub struct UnknownReference {
        code: "FZ020",
        name: "unknown-reference",
        severity: Error,
        category: Semantic,
        summary: "A reference to a job, service, volume or file that the Fuzzfile does not define",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

fn missing(what: &str, name: &Spanned<String>, candidates: &[&str], out: &mut Vec<Diagnostic>) {
    let mut d = Diagnostic::new(
        Rule::UnknownReference,
        name.range,
        format!("no {what} is named `{}`", name.value),
    );
    if let Some(s) = did_you_mean(&name.value, candidates.iter().copied()) {
        d = d
            .with_help(format!("did you mean `{s}`?"))
            .with_fix(Fix::replace(format!("Change to `{s}`"), name.range, s));
    } else if candidates.is_empty() {
        d = d.with_help(format!("the Fuzzfile defines no {what}"));
    } else {
        let shown: Vec<String> = candidates
            .iter()
            .take(8)
            .map(|c| format!("`{c}`"))
            .collect();
        d = d.with_help(format!("defined: {}", shown.join(", ")));
    }
    out.push(d);
}

impl Check for UnknownReference {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        let m = ctx.model;
        let tasks: Vec<&str> = m.tasks().map(|t| t.name.value.as_str()).collect();
        let volumes: Vec<&str> = m.volumes.iter().map(|v| v.key.value.as_str()).collect();
        let files: Vec<&str> = m.files.iter().map(|f| f.name.value.as_str()).collect();
        // Sets for the lookups (a file may have thousands of jobs); the lists keep file order for
        // the suggestions.
        let task_set: HashSet<&str> = tasks.iter().copied().collect();
        let volume_set: HashSet<&str> = volumes.iter().copied().collect();
        let file_set: HashSet<&str> = files.iter().copied().collect();

        let check_mounts = |mounts: &[Mount], out: &mut Vec<Diagnostic>| {
            for mount in mounts {
                if !volume_set.contains(mount.volume.value.as_str()) {
                    missing("volume", &mount.volume, &volumes, out);
                }
            }
        };
        if let Some(d) = &m.defaults {
            check_mounts(&d.mounts, out);
        }
        for task in m.tasks() {
            for dep in &task.depends_on {
                if let Some(name) = &dep.name {
                    if !task_set.contains(name.value.as_str()) {
                        missing("job or service", name, &tasks, out);
                    }
                }
            }
            for name in &task.requires {
                if !task_set.contains(name.value.as_str()) {
                    missing("job or service", name, &tasks, out);
                }
            }
            check_mounts(&task.mounts, out);
            for f in &task.files {
                if let FileSource::Ref(name) = &f.source {
                    if !file_set.contains(name.value.as_str()) {
                        missing("entry of the top-level `files`", name, &files, out);
                    }
                }
            }
            if let Some(net) = &task.network {
                let ports: Vec<&str> = net
                    .ports
                    .iter()
                    .filter_map(|p| p.name.as_ref())
                    .map(|n| n.value.as_str())
                    .collect();
                for e in &net.endpoints {
                    if let Some(pn) = &e.port_name {
                        if !ports.contains(&pn.value.as_str()) {
                            missing("port of this service", pn, &ports, out);
                        }
                    }
                }
            }
        }
        for vol in &m.volumes {
            for t in &vol.ingress {
                let Some(uri) = t.source.as_ref().and_then(|s| s.uri.as_ref()) else {
                    continue;
                };
                let Some(name) = uri.value.strip_prefix("file://") else {
                    continue;
                };
                if file_set.contains(name) || name.starts_with('/') {
                    continue;
                }
                let range = ctx
                    .tree
                    .scalar(uri.node)
                    .map_or(uri.range, |s| s.map.range_to_source(7..uri.value.len()));
                let r = if range.is_empty() { uri.range } else { range };
                missing(
                    "entry of the top-level `files`",
                    &Spanned::new(name.to_owned(), r, uri.node),
                    &files,
                    out,
                );
            }
        }
    }
}
