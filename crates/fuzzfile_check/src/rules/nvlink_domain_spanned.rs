//! ## What it does
//! With a cluster profile of a Multi-Node NVLink cluster (`mnnvl = true`) that gives the size
//! of its NVLink domains (`nvlink-domain-nodes`), notes a multinode GPU job of more nodes than
//! one domain holds, with the job's numbers: nodes, GPUs, and the domain's nodes and GPUs.
//! A job that keeps NCCL off Multi-Node NVLink (`NCCL_MNNVL_ENABLE=0`, `NCCL_P2P_DISABLE=1` or
//! `NCCL_CUMEM_ENABLE=0`, in its environment or the profile's `[nccl-defaults]`) is not noted.
//!
//! ## Why is this bad?
//! Multi-Node NVLink joins the GPUs of one domain (a GB200 NVL72 rack: 18 compute trays of 4
//! GPUs, NVIDIA's MNNVL user guide), not of the whole cluster. Fuzzball places a job inside
//! one domain when one has enough free nodes, and spans domains otherwise; a job of more nodes
//! than a domain holds always spans, and NCCL moves the data between domains over the network
//! (InfiniBand or Ethernet), an order of magnitude slower than NVLink. Nothing fails, but a
//! job sized for NVLink bandwidth everywhere does not get it.
//!
//! ## Example
//! On `examples/clusters/gb200-nvl72.toml` (`nvlink-domain-nodes = 18`, 4 GPUs per node):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/gb200-nvl72.toml
//! jobs:
//!   train:
//!     env:
//!       - NVIDIA_IMEX_CHANNELS=0
//!     multinode: {nodes: 36, implementation: generic}
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB200}
//! ```
//!
//! ## Use instead
//! Run on at most one domain's nodes, or keep the job and plan for the network between
//! domains (parallelism that keeps its heaviest traffic inside a domain) and acknowledge it
//! with a suppression comment:
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/gb200-nvl72.toml
//! jobs:
//!   train:
//!     env:
//!       - NVIDIA_IMEX_CHANNELS=0
//!     multinode: {nodes: 18, implementation: generic}
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB200}
//! ```
//!
//! ## Options
//! Reads `mnnvl`, `nvlink-domain-nodes`, `gpus-per-node` and `name` from the cluster
//! profile; silent without them.

use super::{Check, Context, TaskContext};
use crate::gpu::{env_get, multinode_gpu_job};
use fuzzfile_diagnostics::{Diagnostic, Rule};

declare_rule! {
    pub struct NvlinkDomainSpanned {
        code: "FZ316",
        name: "nvlink-domain-spanned",
        severity: Info,
        category: Gpu,
        summary: "A multinode job of more nodes than one NVLink domain holds: NCCL uses the network between domains",
        fix: None,
    }
}

/// `4 GPUs`, `1 GPU`.
fn gpus(n: u64) -> String {
    format!("{n} GPU{}", if n == 1 { "" } else { "s" })
}

impl Check for NvlinkDomainSpanned {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some(profile) = ctx.profile.filter(|p| p.mnnvl) else {
            return;
        };
        let Some(domain) = profile.nvlink_domain_nodes.filter(|d| *d > 0) else {
            return;
        };
        let task = facts.task;
        let Some((nodes, nodes_range)) = multinode_gpu_job(ctx, task) else {
            return;
        };
        // NCCL does not use Multi-Node NVLink at all: the network carries everything anyway.
        let mnnvl_off = |name: &str, off: &str| {
            env_get(&facts.env, name).is_some_and(|e| e.value.trim() == off)
                || profile
                    .nccl_defaults
                    .get(name)
                    .is_some_and(|v| v.trim() == off)
        };
        if mnnvl_off("NCCL_MNNVL_ENABLE", "0")
            || mnnvl_off("NCCL_P2P_DISABLE", "1")
            || mnnvl_off("NCCL_CUMEM_ENABLE", "0")
        {
            return;
        }
        if nodes <= domain {
            return;
        }
        let per_node = facts.gpus.map(|g| g.0).filter(|g| *g > 0);
        let job = match per_node {
            Some(g) => format!(
                "{nodes} nodes ({}, {g} per node)",
                gpus(nodes.saturating_mul(g))
            ),
            None => format!("{nodes} nodes"),
        };
        let holds = match profile.gpus_per_node {
            Some(g) => format!("{domain} nodes, {}", gpus(domain.saturating_mul(g))),
            None => format!("{domain} nodes"),
        };
        let cluster = profile.described();
        let spans = nodes.div_ceil(domain);
        out.push(
            Diagnostic::new(
                Rule::NvlinkDomainSpanned,
                nodes_range,
                format!(
                    "job `{}` runs on {job}, more than one NVLink domain of {cluster} holds ({holds}): it spans at least {spans} domains, and NCCL uses the network between them",
                    task.name.value
                ),
            )
            .with_label(task.name.range, format!("job `{}`", task.name.value))
            .with_help(format!(
                "to keep all of the job's traffic on NVLink, run it on at most {domain} nodes; a larger job gets NVLink bandwidth only inside each domain, so keep its heaviest traffic (tensor or expert parallelism) inside one"
            )),
        );
    }
}
