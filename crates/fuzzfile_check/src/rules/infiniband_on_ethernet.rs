//! ## What it does
//! With a cluster profile that says `fabric = "ethernet"`, reports, once per file, the jobs and
//! services whose launch plan gives their containers `/dev/infiniband`: every multinode task,
//! since Fuzzball exposes the InfiniBand devices to multinode containers. The finding is at the
//! first of them and names each. The devices come from the same function the launch plan
//! (`fuzz plan`) writes them with, and the plan notes the same.
//!
//! ## Why is this bad?
//! An Ethernet cluster's nodes have no `/dev/infiniband`. Either the profile is wrong (the
//! nodes do have RDMA adapters, and the fabric rules judge NCCL against the wrong fabric), or
//! the device cannot be given: a container runtime handed a device the node lacks refuses to
//! create the container (`podman run --device /dev/infiniband` on such a node stops with
//! `Error: stat /dev/infiniband: no such file or directory`, and `fuzz run` runs that line),
//! and NCCL can only use TCP sockets between the nodes.
//!
//! ## Example
//! On `examples/clusters/h200-1gpu.toml` (`fabric = "ethernet"`):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h200-1gpu.toml
//! jobs:
//!   train:
//!     script: |
//!       #!/bin/sh
//!       exec_all torchrun --nnodes=2 --nproc-per-node=1 --node-rank '$RANK' --master-addr "$MULTINODE_NODE_IP" train.py
//!     multinode: {nodes: 2, implementation: generic}
//!     resource: {devices: {nvidia.com/gpu: 1}}
//! ```
//!
//! ## Use instead
//! On an Ethernet cluster, run on one node; for several nodes, correct `fabric` in the profile
//! if the nodes have RDMA adapters (`ls /sys/class/infiniband` on a node):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h200-1gpu.toml
//! jobs:
//!   train:
//!     command: [torchrun, --standalone, --nproc-per-node=1, train.py]
//!     resource: {devices: {nvidia.com/gpu: 1}}
//! ```
//!
//! ## Options
//! Reads `fabric` (and `name`) from the cluster profile; silent without one, and for
//! `infiniband` and `roce`.

use super::{Check, Context};
use crate::devices::{planned_devices, DeviceCause, INFINIBAND_DIR};
use crate::profile::Fabric;
use fuzzfile_diagnostics::{Diagnostic, Rule, TextRange};

declare_rule! {
    pub struct InfinibandOnEthernet {
        code: "FZ315",
        name: "infiniband-on-ethernet",
        severity: Warning,
        category: Gpu,
        summary: "`/dev/infiniband` planned for a multinode task on a cluster whose profile says Ethernet",
        fix: None,
    }
}

impl Check for InfinibandOnEthernet {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        let Some(profile) = ctx.profile.filter(|p| p.fabric == Some(Fabric::Ethernet)) else {
            return;
        };
        // The tasks that get the device, in file order, with where they ask for it.
        let mut tasks: Vec<(&fuzzfile_model::Task, TextRange, String)> = Vec::new();
        for task in ctx.model.tasks() {
            let planned = planned_devices(task, ctx.facts(task));
            if let Some(d) = planned
                .devices
                .into_iter()
                .find(|d| d.path == INFINIBAND_DIR)
            {
                let range = match d.cause {
                    DeviceCause::Multinode(r) | DeviceCause::ImexChannels(r) => r,
                };
                tasks.push((task, range, d.reason));
            }
        }
        tasks.sort_by_key(|(t, _, _)| t.name.range.start);
        let Some((first, range, reason)) = tasks.first() else {
            return;
        };
        let cluster = profile.described();
        let named = |t: &fuzzfile_model::Task| {
            let kind = match t.kind {
                fuzzfile_model::TaskKind::Job => "job",
                fuzzfile_model::TaskKind::Service => "service",
            };
            format!("{kind} `{}`", t.name.value)
        };
        let who = match tasks.len() {
            1 => format!("multinode {}", named(first)),
            n => format!(
                "{} and {} other multinode task{}",
                named(first),
                n - 1,
                if n == 2 { "" } else { "s" }
            ),
        };
        let mut d = Diagnostic::new(
            Rule::InfinibandOnEthernet,
            *range,
            format!(
                "{who} get{} `{INFINIBAND_DIR}` in {} containers ({reason}), but {cluster} is Ethernet (`fabric = \"ethernet\"` in its profile): its nodes have no InfiniBand devices",
                if tasks.len() == 1 { "s" } else { "" },
                if tasks.len() == 1 { "its" } else { "their" },
            ),
        )
        .with_help(
            "if the nodes have RDMA adapters (`ls /sys/class/infiniband`, or `fuzzlint profile detect` on a node), set `fabric = \"infiniband\"` or `\"roce\"` in the profile; if not, a runtime handed the missing device refuses to create the container, and NCCL can only use TCP sockets between the nodes",
        );
        for (t, _, _) in &tasks {
            d = d.with_label(t.name.range, named(t));
        }
        out.push(d);
    }
}
