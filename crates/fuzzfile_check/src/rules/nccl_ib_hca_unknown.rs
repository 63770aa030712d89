//! ## What it does
//! With a cluster profile that lists the nodes' adapters (`ib-hcas`), reports an
//! `NCCL_IB_HCA` (in a job's or service's `env`, or `defaults.job.env`) whose entries match
//! none of them. NCCL reads the value as a comma-separated list of `device[:port]`, matched
//! as prefixes, or exactly when the list starts with `=`; a list starting with `^` excludes
//! devices instead, and is not checked here.
//!
//! ## Why is this bad?
//! A device that matches no adapter is ignored. When no entry matches, NCCL finds no RDMA
//! device (`NET/IB : No device found`) and falls back to TCP sockets: the job runs, much more
//! slowly between nodes, and nothing fails to tell you.
//!
//! ## Example
//! With `ib-hcas = ["mlx5_0", "mlx5_1"]` in the cluster profile:
//! ```toml profile
//! ib-hcas = ["mlx5_0", "mlx5_1"]
//! ```
//! ```yaml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_IB_HCA=mlx5_9
//! ```
//!
//! ## Use instead
//! ```toml profile
//! ib-hcas = ["mlx5_0", "mlx5_1"]
//! ```
//! ```yaml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_IB_HCA=mlx5_0,mlx5_1
//! ```
//!
//! ## Options
//! Reads `ib-hcas` (and `name`) from the cluster profile; silent without them.

use super::{Check, Context, TaskContext};
use crate::gpu::env_get;
use fuzzfile_diagnostics::{Diagnostic, Rule};

declare_rule! {
    pub struct NcclIbHcaUnknown {
        code: "FZ311",
        name: "nccl-ib-hca-unknown",
        severity: Warning,
        category: Gpu,
        summary: "`NCCL_IB_HCA` naming adapters the cluster's nodes do not have",
        fix: None,
    }
}

/// The device names of an include list, and whether they match exactly; `None` for an
/// exclusion list or a value that is not static.
fn devices(value: &str) -> Option<(Vec<&str>, bool)> {
    let v = value.trim();
    if v.is_empty() || v.starts_with('^') || v.contains('$') {
        return None;
    }
    let (v, exact) = match v.strip_prefix('=') {
        Some(rest) => (rest, true),
        None => (v, false),
    };
    let names = v
        .split(',')
        .map(|e| e.split(':').next().unwrap_or("").trim())
        .filter(|e| !e.is_empty())
        .collect();
    Some((names, exact))
}

impl Check for NcclIbHcaUnknown {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some(profile) = ctx.profile else { return };
        if profile.ib_hcas.is_empty() {
            return;
        }
        let cluster = profile.described();
        let have = profile.ib_hcas.join(", ");
        let env = &facts.env;
        let Some(e) = env_get(env, "NCCL_IB_HCA") else {
            return;
        };
        // A value from `defaults` is reported once, at the defaults, by the first task.
        let Some((names, exact)) = devices(&e.value) else {
            return;
        };
        let matches = |n: &str| {
            profile
                .ib_hcas
                .iter()
                .any(|h| if exact { h == n } else { h.starts_with(n) })
        };
        let unknown: Vec<&str> = names.iter().copied().filter(|n| !matches(n)).collect();
        if unknown.is_empty() {
            return;
        }
        let shown: Vec<String> = unknown.iter().map(|u| format!("`{u}`")).collect();
        let message = if unknown.len() == names.len() {
            format!(
                "`NCCL_IB_HCA={}` matches none of the adapters of {cluster}: NCCL will find no InfiniBand device and fall back to TCP sockets",
                e.value
            )
        } else {
            format!(
                "`NCCL_IB_HCA` names {} that {cluster} does not have",
                shown.join(", ")
            )
        };
        let d = Diagnostic::new(Rule::NcclIbHcaUnknown, e.value_range, message)
            .with_help(format!("the nodes' adapters are {have}"));
        if !out
            .iter()
            .any(|o| o.rule == Rule::NcclIbHcaUnknown && o.range == d.range)
        {
            out.push(d);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::devices;

    #[test]
    fn the_value_is_read_as_nccl_reads_it() {
        assert_eq!(
            devices("mlx5_0:1,mlx5_1"),
            Some((vec!["mlx5_0", "mlx5_1"], false))
        );
        assert_eq!(devices("=mlx5_0"), Some((vec!["mlx5_0"], true)));
        assert_eq!(devices("^mlx5_0"), None);
        assert_eq!(devices("^=mlx5_0"), None);
        assert_eq!(devices("$HCAS"), None);
    }
}
