//! ## What it does
//! With a cluster profile that says `fabric = "ethernet"`, reports a job or service whose
//! launch plan gives its containers `/dev/infiniband`: every multinode task, since Fuzzball
//! exposes the InfiniBand devices to multinode containers. The devices come from the same
//! function the launch plan (`fuzz plan`) writes them with.
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

use super::{Check, Context, TaskContext};
use crate::devices::{planned_devices, DeviceCause, INFINIBAND_DIR};
use crate::profile::Fabric;
use fuzzfile_diagnostics::{Diagnostic, Rule};

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
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some(profile) = ctx.profile.filter(|p| p.fabric == Some(Fabric::Ethernet)) else {
            return;
        };
        let task = facts.task;
        let planned = planned_devices(task, facts.facts);
        let Some(device) = planned.devices.iter().find(|d| d.path == INFINIBAND_DIR) else {
            return;
        };
        let range = match device.cause {
            DeviceCause::Multinode(r) | DeviceCause::ImexChannels(r) => r,
        };
        let cluster = profile
            .name
            .as_deref()
            .map(|n| format!("cluster `{n}`"))
            .unwrap_or_else(|| "the cluster".into());
        let kind = match task.kind {
            fuzzfile_model::TaskKind::Job => "job",
            fuzzfile_model::TaskKind::Service => "service",
        };
        out.push(
            Diagnostic::new(
                Rule::InfinibandOnEthernet,
                range,
                format!(
                    "multinode {kind} `{}` gets `{INFINIBAND_DIR}` in its containers ({}), but {cluster} is Ethernet (`fabric = \"ethernet\"` in its profile): its nodes have no InfiniBand devices",
                    task.name.value,
                    device.reason
                ),
            )
            .with_label(task.name.range, format!("{kind} `{}`", task.name.value))
            .with_help(
                "if the nodes have RDMA adapters (`ls /sys/class/infiniband`, or `fuzzlint profile detect` on a node), set `fabric = \"infiniband\"` or `\"roce\"` in the profile; if not, a runtime handed the missing device refuses to create the container, and NCCL can only use TCP sockets between the nodes",
            ),
        );
    }
}
