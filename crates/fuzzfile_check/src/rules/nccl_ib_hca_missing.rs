//! ## What it does
//! Reports a multinode GPU job (`multinode.nodes` > 1, with GPUs requested, a GPU launcher or
//! `NCCL_*` settings) on an InfiniBand or RoCE cluster whose environment does not set
//! `NCCL_IB_HCA`, when the cluster profile does not say that the admin's `/etc/nccl.conf`
//! already sets it. Jobs that choose sockets on purpose (`NCCL_NET=Socket`,
//! `NCCL_IB_DISABLE=1`) and jobs whose command or script sets the variable themselves are not
//! reported. The fix adds `NCCL_IB_HCA` to the job's `env`: the profile's `ib-hcas` joined with
//! `,`, or the prefix `mlx5`.
//!
//! Fix safety: unsafe: it adds `NCCL_IB_HCA`, which chooses the adapters NCCL uses.
//!
//! ## Why is this bad?
//! Without a device list NCCL picks HCAs itself; in a container that sees no usable RDMA
//! device, or picks the wrong ports, it falls back to TCP sockets (`NET/IB : No device found`
//! … `Using network Socket`) and the job runs many times slower without failing.
//!
//! ## Example
//! On `examples/clusters/h100-ib.toml` (InfiniBand, `ib-hcas` listed, no `[nccl-defaults]`):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h100-ib.toml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_DEBUG=WARN
//!     multinode: {nodes: 2, implementation: generic}
//!     resource: {devices: {nvidia.com/gpu: 4}}
//! ```
//!
//! ## Use instead
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h100-ib.toml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_DEBUG=WARN
//!       - NCCL_IB_HCA=mlx5
//!     multinode: {nodes: 2, implementation: generic}
//!     resource: {devices: {nvidia.com/gpu: 4}}
//! ```
//!
//! ## Options
//! Needs a cluster profile: `fabric` (`infiniband` or `roce`), `ib-hcas` (the value of the fix)
//! and `[nccl-defaults]` (`NCCL_IB_HCA` there silences the rule).

use super::{Check, Context, TaskContext};
use crate::edits::add_env_entry;
use crate::gpu::{env_get, mentions, multinode_gpu_job};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};

declare_rule! {
    pub struct NcclIbHcaMissing {
        code: "FZ301",
        name: "nccl-ib-hca-missing",
        severity: Warning,
        category: Gpu,
        summary: "Multinode NCCL job on an InfiniBand/RoCE cluster without `NCCL_IB_HCA`",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

impl Check for NcclIbHcaMissing {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        if task.kind != fuzzfile_model::TaskKind::Job {
            return;
        }
        let Some(profile) = ctx.profile else { return };
        let Some(fabric) = profile.fabric.filter(|f| f.is_rdma()) else {
            return;
        };
        if profile.nccl_defaults.contains_key("NCCL_IB_HCA") {
            return;
        }
        let Some((n, nodes_range)) = multinode_gpu_job(ctx, task) else {
            return;
        };
        let env = &facts.env;
        if env_get(env, "NCCL_IB_HCA").is_some() || mentions(task, "NCCL_IB_HCA") {
            return;
        }
        // Sockets chosen on purpose: `nccl-net-unavailable` speaks about that.
        let sockets = env_get(env, "NCCL_NET")
            .is_some_and(|e| e.value.eq_ignore_ascii_case("socket"))
            || env_get(env, "NCCL_IB_DISABLE").is_some_and(|e| e.value.trim() == "1");
        if sockets {
            return;
        }
        let value = if profile.ib_hcas.is_empty() {
            "mlx5".to_owned()
        } else {
            profile.ib_hcas.join(",")
        };
        let fabric_name = match fabric {
            crate::profile::Fabric::Roce => "RoCE",
            _ => "InfiniBand",
        };
        let mut d = Diagnostic::new(
            Rule::NcclIbHcaMissing,
            task.name.range,
            format!(
                "multinode NCCL job `{}` on an {fabric_name} cluster does not set `NCCL_IB_HCA`",
                task.name.value
            ),
        )
        .with_label(nodes_range, format!("runs on {n} nodes"))
        .with_help(format!(
            "without it NCCL may fall back to TCP sockets (`NET/IB : No device found`); add `NCCL_IB_HCA={value}` to `env`"
        ));
        if let Some(edit) = add_env_entry(
            ctx.text,
            ctx.tree,
            task.body,
            &format!("NCCL_IB_HCA={value}"),
        ) {
            d = d.with_fix(Fix {
                message: format!("Add `NCCL_IB_HCA={value}` to `env`"),
                edits: vec![edit],
                applicability: None,
            });
        }
        out.push(d);
    }
}
