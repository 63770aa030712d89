//! ## What it does
//! Notes, once per file, that the file has a multinode GPU job (`multinode.nodes` > 1, with
//! GPUs requested, a GPU launcher or `NCCL_*` settings) but the analysis has no cluster
//! profile, so the rules that need cluster facts are off: `nccl-ib-hca-missing` (FZ301),
//! `nccl-mnnvl-no-imex` (FZ302) and `nccl-net-unavailable` (FZ306).
//!
//! ## Why is this bad?
//! Whether a multinode NCCL job needs `NCCL_IB_HCA`, an IMEX channel, or must not force a
//! transport depends on the cluster (its fabric, Multi-Node NVLink, what `/etc/nccl.conf`
//! sets), which the Fuzzfile does not say. Without a profile those mistakes go unreported.
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
//! Describe the cluster in a TOML profile and give it with `--cluster PATH`, or with
//! `cluster = "clusters/h100-ib.toml"` in `fuzzlint.toml`:
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h100-ib.toml
//! jobs:
//!   train:
//!     multinode: {nodes: 2, implementation: generic}
//!     resource: {devices: {nvidia.com/gpu: 4}}
//! ```

use super::{Check, Context};
use crate::gpu::multinode_gpu_job;
use fuzzfile_diagnostics::{Diagnostic, Rule};

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

impl Check for ClusterProfileMissing {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        if ctx.profile.is_some() {
            return;
        }
        let Some(task) = ctx
            .model
            .jobs
            .iter()
            .find(|t| multinode_gpu_job(ctx, t).is_some())
        else {
            return;
        };
        out.push(
            Diagnostic::new(
                Rule::ClusterProfileMissing,
                task.name.range,
                format!(
                    "multinode GPU job `{}` checked without a cluster profile: the fabric, MNNVL and NCCL transport checks (FZ301, FZ302, FZ306) are off",
                    task.name.value
                ),
            )
            .with_help(
                "describe the cluster in a TOML profile (fabric, mnnvl, imex, gpu-product, [nccl-defaults]) and give it with `--cluster PATH` or `cluster = \"PATH\"` in fuzzlint.toml",
            ),
        );
    }
}
