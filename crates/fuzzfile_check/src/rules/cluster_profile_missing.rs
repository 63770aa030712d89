//! ## What it does
//! Notes, once per file, that the file has a GPU job or service (GPUs requested, a GPU
//! launcher or `NCCL_*` settings) but the analysis has no cluster profile, so the rules that
//! need cluster facts are off: `nccl-ib-hca-missing`, `nccl-mnnvl-no-imex`,
//! `nccl-net-unavailable`, `gpu-request-exceeds-node`, `nccl-ib-hca-unknown`,
//! `imex-channel-unavailable`, `gpu-product-not-in-cluster`, `infiniband-on-ethernet` and
//! `nvlink-domain-spanned` (FZ301, FZ302, FZ306, FZ310 to FZ313, FZ315, FZ316).
//!
//! `fuzzlint check` says it once for the whole run instead of once per file: it takes these
//! findings out of every file's list and prints one note at the top of its human output (on
//! standard error for `--format json`, `sarif` and `github`, whose standard output stays
//! machine-readable), saying how many files it concerns and how to give a profile. The
//! findings then count for no file's `--fail-on`. The rule keeps its code and name, so
//! `ignore`, `[severity]` entries and `# fuzzlint: ignore[cluster-profile-missing]` comments
//! that name it keep working, and turning it off turns the note off. The language server,
//! which shows one file at a time, shows the finding on the file's first GPU job.
//!
//! ## Why is this bad?
//! Whether a GPU job can run as written often depends on the cluster (its fabric, Multi-Node
//! NVLink and IMEX, its GPU products and NVLink domain size, what `/etc/nccl.conf` sets),
//! which the Fuzzfile does not say. Without a profile those mistakes go unreported, and a
//! clean result says less than it seems to.
//!
//! ## Example
//! ```yaml
//! # fuzzlint check train.fz   (no profile)
//! jobs:
//!   train:
//!     multinode: {nodes: 2, implementation: generic}
//!     resource: {devices: {nvidia.com/gpu: 4}}
//! ```
//!
//! ## Use instead
//! Describe the cluster in a TOML profile (`fuzzlint profile detect` on a node writes one) and
//! give it with `--cluster PATH`, or with `cluster = "clusters/h100-ib.toml"` in
//! `fuzzlint.toml`:
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h100-ib.toml
//! jobs:
//!   train:
//!     multinode: {nodes: 2, implementation: generic}
//!     resource: {devices: {nvidia.com/gpu: 4}}
//! ```

use super::{Check, Context};
use crate::gpu::uses_gpus;
use fuzzfile_diagnostics::{Diagnostic, Rule};
use fuzzfile_model::EnvVar;

declare_rule! {
    pub struct ClusterProfileMissing {
        code: "FZ309",
        name: "cluster-profile-missing",
        severity: Info,
        category: Gpu,
        summary: "GPU jobs checked without a cluster profile: rules that need cluster facts are off",
        fix: None,
    }
}

/// The rules that report nothing without a cluster profile (`tests/cluster_rules.rs` keeps
/// the list true: each is silent on its own documentation example without the profile, every
/// other rule whose example takes a profile still reports without one, and this rule's
/// documentation names each).
pub const NEEDS_PROFILE: &[Rule] = &[
    Rule::NcclIbHcaMissing,
    Rule::NcclMnnvlNoImex,
    Rule::NcclNetUnavailable,
    Rule::GpuRequestExceedsNode,
    Rule::NcclIbHcaUnknown,
    Rule::ImexChannelUnavailable,
    Rule::GpuProductNotInCluster,
    Rule::InfinibandOnEthernet,
    Rule::NvlinkDomainSpanned,
];

/// `FZ301, FZ302, ...`: the codes of [`NEEDS_PROFILE`].
pub fn needs_profile_codes() -> String {
    NEEDS_PROFILE
        .iter()
        .map(|r| r.code())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Check for ClusterProfileMissing {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        if ctx.profile.is_some() {
            return;
        }
        let Some(task) = ctx.model.tasks().find(|t| {
            let env: Vec<&EnvVar> = ctx.facts(t).env.iter().collect();
            uses_gpus(ctx, t, &env)
        }) else {
            return;
        };
        let kind = match task.kind {
            fuzzfile_model::TaskKind::Job => "job",
            fuzzfile_model::TaskKind::Service => "service",
        };
        out.push(
            Diagnostic::new(
                Rule::ClusterProfileMissing,
                task.name.range,
                format!(
                    "GPU {kind} `{}` checked without a cluster profile: the cluster checks ({}) are off",
                    task.name.value,
                    needs_profile_codes()
                ),
            )
            .with_help(
                "describe the cluster in a TOML profile (`fuzzlint profile detect` on a node writes one) and give it with `--cluster PATH` or `cluster = \"PATH\"` in fuzzlint.toml",
            ),
        );
    }
}
