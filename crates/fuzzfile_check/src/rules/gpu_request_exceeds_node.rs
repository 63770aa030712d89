//! ## What it does
//! With a cluster profile that gives `gpus-per-node`, reports a job or service that requests
//! more GPUs per node (`resource.devices["nvidia.com/gpu"]`, in the job or in
//! `defaults.job`) than the cluster's nodes have.
//!
//! ## Why is this bad?
//! `nvidia.com/gpu` is a per-node request: no node can satisfy it, so the job waits for a node
//! that does not exist. Run without a scheduler (or on a node that ignores the request), the
//! launcher starts one worker per requested GPU and the extra workers fail with CUDA's
//! `invalid device ordinal` when they select a GPU the node lacks.
//!
//! ## Example
//! On `examples/clusters/h100-ib.toml` (`gpus-per-node = 4`):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h100-ib.toml
//! jobs:
//!   train:
//!     command: [torchrun, --standalone, --nproc-per-node=8, train.py]
//!     resource:
//!       cpu: {cores: 32}
//!       memory: {size: 256GiB}
//!       devices: {nvidia.com/gpu: 8}
//! ```
//!
//! ## Use instead
//! Request at most the GPUs a node has, and spread the rest over nodes:
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h100-ib.toml
//! jobs:
//!   train:
//!     script: |
//!       #!/bin/sh
//!       exec_all torchrun --nnodes=2 --nproc-per-node=4 --node-rank '$RANK' --master-addr "$MULTINODE_NODE_IP" train.py
//!     resource:
//!       cpu: {cores: 16}
//!       memory: {size: 128GiB}
//!       devices: {nvidia.com/gpu: 4}
//!     multinode: {nodes: 2, implementation: generic}
//! ```
//!
//! ## Options
//! Reads `gpus-per-node` (and `name`) from the cluster profile; silent without one.

use super::{Check, Context, TaskContext};
use fuzzfile_diagnostics::{Diagnostic, Rule};

declare_rule! {
    pub struct GpuRequestExceedsNode {
        code: "FZ310",
        name: "gpu-request-exceeds-node",
        severity: Error,
        category: Gpu,
        summary: "A job that requests more GPUs per node than the cluster's nodes have",
        fix: None,
    }
}

impl Check for GpuRequestExceedsNode {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        let Some(profile) = ctx.profile else { return };
        let Some(have) = profile.gpus_per_node else {
            return;
        };
        let cluster = profile.described();
        let Some((want, range)) = facts.gpus else {
            return;
        };
        if want <= have {
            return;
        }
        out.push(
            Diagnostic::new(
                Rule::GpuRequestExceedsNode,
                range,
                format!(
                    "`{}` requests {want} GPUs per node; the nodes of {cluster} have {have}: no node can run it",
                    task.name.value
                ),
            )
            .with_help(format!(
                "request at most {} per node (and as many workers per node), and spread the rest over nodes with `multinode`",
                if have == 1 { "1 GPU".to_owned() } else { format!("{have} GPUs") }
            )),
        );
    }
}
