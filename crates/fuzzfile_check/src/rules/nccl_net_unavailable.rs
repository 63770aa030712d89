//! ## What it does
//! Compares the transport a job forces on NCCL with the cluster's fabric (from the cluster
//! profile):
//! - `NCCL_NET=IB` on an Ethernet cluster: an **error**, NCCL cannot initialise;
//! - `NCCL_NET=Socket` or `NCCL_IB_DISABLE=1` in a multinode job on an InfiniBand or RoCE
//!   cluster: a **warning**, traffic between nodes goes over TCP sockets.
//!
//! ## Why is this bad?
//! `NCCL_NET` is compared (without regard to case) with the names of the available network
//! plugins; when none matches, NCCL fails with `Failed to initialize any NET plugin` and does
//! not fall back. Forcing sockets on an RDMA fabric works, but leaves the InfiniBand or RoCE
//! links idle and makes every collective between nodes many times slower.
//!
//! ## Example
//! On an InfiniBand cluster (`examples/clusters/h100-ib.toml`):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h100-ib.toml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_IB_DISABLE=1
//!     multinode: {nodes: 2, implementation: generic}
//! ```
//!
//! ## Use instead
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h100-ib.toml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_IB_HCA=mlx5
//!     multinode: {nodes: 2, implementation: generic}
//! ```
//!
//! ## Options
//! Needs a cluster profile with `fabric`.

use super::{Check, Context, TaskContext};
use crate::gpu::{env_get, is_literal, multinode};
use crate::profile::Fabric;
use fuzzfile_diagnostics::{Diagnostic, Rule, Severity};

declare_rule! {
    pub struct NcclNetUnavailable {
        code: "FZ306",
        name: "nccl-net-unavailable",
        severity: Error,
        category: Gpu,
        summary: "`NCCL_NET` or `NCCL_IB_DISABLE` forcing a transport the cluster lacks or slows",
        fix: None,
    }
}

impl Check for NcclNetUnavailable {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        let Some(fabric) = ctx.profile.and_then(|p| p.fabric) else {
            return;
        };
        let env = &facts.env;
        let net = env_get(env, "NCCL_NET").filter(|e| is_literal(e));
        if fabric == Fabric::Ethernet {
            if let Some(e) = net.filter(|e| e.value.trim().eq_ignore_ascii_case("ib")) {
                out.push(
                    Diagnostic::new(
                        Rule::NcclNetUnavailable,
                        e.value_range,
                        format!("`NCCL_NET={}` on an Ethernet cluster: NCCL finds no InfiniBand transport and fails (`Failed to initialize any NET plugin`)", e.value.trim()),
                    )
                    .with_help("remove `NCCL_NET`, or set `NCCL_NET=Socket`; the cluster profile says the fabric is `ethernet`"),
                );
            }
            return;
        }
        if multinode(ctx, task).is_none() {
            return;
        }
        let fabric_name = if fabric == Fabric::Roce {
            "RoCE"
        } else {
            "InfiniBand"
        };
        if let Some(e) = net.filter(|e| e.value.trim().eq_ignore_ascii_case("socket")) {
            out.push(
                Diagnostic::new(
                    Rule::NcclNetUnavailable,
                    e.value_range,
                    format!("`NCCL_NET={}` on an {fabric_name} cluster: traffic between nodes goes over TCP instead of RDMA", e.value.trim()),
                )
                .with_severity(Severity::Warning)
                .with_help("remove `NCCL_NET` so NCCL uses its IB transport, and select the HCAs with `NCCL_IB_HCA`"),
            );
        }
        if let Some(e) =
            env_get(env, "NCCL_IB_DISABLE").filter(|e| is_literal(e) && e.value.trim() == "1")
        {
            out.push(
                Diagnostic::new(
                    Rule::NcclNetUnavailable,
                    e.value_range,
                    format!("`NCCL_IB_DISABLE=1` on an {fabric_name} cluster: traffic between nodes goes over TCP instead of RDMA"),
                )
                .with_severity(Severity::Warning)
                .with_help("remove `NCCL_IB_DISABLE`, and select the HCAs with `NCCL_IB_HCA`"),
            );
        }
    }
}
