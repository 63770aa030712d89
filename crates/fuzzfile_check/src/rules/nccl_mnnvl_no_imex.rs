//! ## What it does
//! Reports a multinode GPU job on a cluster whose nodes share a Multi-Node NVLink domain
//! (`mnnvl = true` in the cluster profile) when its environment has neither an IMEX channel
//! (`NVIDIA_IMEX_CHANNELS`) nor `NCCL_MNNVL_ENABLE=0`, and the profile's `[nccl-defaults]` set
//! neither. Settings that already keep NCCL from trying MNNVL (`NCCL_CUMEM_ENABLE=0`,
//! `NCCL_P2P_DISABLE=1`) and commands or scripts that set the variables themselves are not
//! reported.
//!
//! The fix depends on the cluster: where IMEX runs (`imex = true`) it adds
//! `NVIDIA_IMEX_CHANNELS=0`, so NCCL uses NVLink across nodes (pin the GPU product too, see
//! `imex-no-product-pin`); where it does not, it adds `NCCL_MNNVL_ENABLE=0`, so NCCL uses the
//! network.
//!
//! ## Why is this bad?
//! NCCL detects MNNVL when more than one node takes part (`NCCL_MNNVL_ENABLE` defaults to 2,
//! auto). Since NCCL 2.27.3 it stops with `MNNVL (cliqueSize N) is available but not working
//! on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels)` when
//! the container has no IMEX channel; older releases fell back silently.
//!
//! ## Example
//! On `examples/clusters/gb200-nvl72.toml` (`mnnvl = true`, `imex = true`):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/gb200-nvl72.toml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_IB_HCA=mlx5
//!     multinode: {nodes: 2, implementation: generic}
//!     resource: {devices: {nvidia.com/gpu: 4}}
//! ```
//!
//! ## Use instead
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/gb200-nvl72.toml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_IB_HCA=mlx5
//!       - NVIDIA_IMEX_CHANNELS=0   # or NCCL_MNNVL_ENABLE=0 to use the network only
//!     multinode: {nodes: 2, implementation: generic}
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB200}
//! ```
//!
//! ## Options
//! Needs a cluster profile with `mnnvl = true`; `imex` chooses the fix; `[nccl-defaults]`
//! entries count as set.

use super::{Check, Context, TaskContext};
use crate::edits::add_env_entry;
use crate::gpu::{env_get, mentions, multinode_gpu_job};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};

declare_rule! {
    pub struct NcclMnnvlNoImex {
        code: "FZ302",
        name: "nccl-mnnvl-no-imex",
        severity: Error,
        category: Gpu,
        summary: "Multinode GPU job on a Multi-Node NVLink cluster with no IMEX channel and MNNVL not disabled",
        fix: Sometimes,
    }
}

impl Check for NcclMnnvlNoImex {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        if task.kind != fuzzfile_model::TaskKind::Job {
            return;
        }
        let Some(profile) = ctx.profile.filter(|p| p.mnnvl) else {
            return;
        };
        let default_is = |name: &str, v: &str| {
            profile
                .nccl_defaults
                .get(name)
                .is_some_and(|x| x.trim() == v)
        };
        if profile.nccl_defaults.contains_key("NVIDIA_IMEX_CHANNELS")
            || default_is("NCCL_MNNVL_ENABLE", "0")
            || default_is("NCCL_CUMEM_ENABLE", "0")
            || default_is("NCCL_P2P_DISABLE", "1")
        {
            return;
        }
        let Some((n, nodes_range)) = multinode_gpu_job(ctx, task) else {
            return;
        };
        let env = &facts.env;
        let is = |name: &str, v: &str| env_get(env, name).is_some_and(|e| e.value.trim() == v);
        if env_get(env, "NVIDIA_IMEX_CHANNELS").is_some()
            || is("NCCL_MNNVL_ENABLE", "0")
            || is("NCCL_CUMEM_ENABLE", "0")
            || is("NCCL_P2P_DISABLE", "1")
            || mentions(task, "NVIDIA_IMEX_CHANNELS")
            || mentions(task, "NCCL_MNNVL_ENABLE")
        {
            return;
        }
        let (entry, help) = if profile.imex {
            (
                "NVIDIA_IMEX_CHANNELS=0",
                "IMEX runs on this cluster: add `NVIDIA_IMEX_CHANNELS=0` to `env` (Fuzzball then adds channel 0 to the container) and pin the GPU product with a `nvidia.com/gpu.product` annotation, so the job stays on IMEX nodes; or add `NCCL_MNNVL_ENABLE=0` to use the network only",
            )
        } else {
            (
                "NCCL_MNNVL_ENABLE=0",
                "the cluster profile says IMEX does not run here, so no channel can be granted: add `NCCL_MNNVL_ENABLE=0` to `env` to use the network",
            )
        };
        let mut d = Diagnostic::new(
            Rule::NcclMnnvlNoImex,
            task.name.range,
            format!(
                "multinode GPU job `{}` on a Multi-Node NVLink cluster has no IMEX channel and does not disable MNNVL: NCCL 2.27.3 and later stop at initialisation",
                task.name.value
            ),
        )
        .with_label(nodes_range, format!("runs on {n} nodes"))
        .with_help(help);
        // `NCCL_MNNVL_ENABLE=1` (or 2) in the job's own env: change its value rather than add
        // a second entry.
        let own = task
            .env
            .iter()
            .rev()
            .find(|e| e.name == "NCCL_MNNVL_ENABLE");
        let fix = match own {
            Some(e) if !profile.imex => (e.value_range.slice(ctx.text) == e.value)
                .then(|| Fix::replace("Set `NCCL_MNNVL_ENABLE=0`", e.value_range, "0")),
            _ => add_env_entry(ctx.text, ctx.tree, task.body, entry).map(|edit| Fix {
                message: format!("Add `{entry}` to `env`"),
                edits: vec![edit],
            }),
        };
        if let Some(fix) = fix {
            d = d.with_fix(fix);
        }
        out.push(d);
    }
}
