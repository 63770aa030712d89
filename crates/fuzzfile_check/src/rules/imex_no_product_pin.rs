//! ## What it does
//! Reports `NVIDIA_IMEX_CHANNELS` in the environment of a GPU job (its own `env` or
//! `defaults.job.env`) that has no GPU product annotation (`nvidia.com/gpu.product`, or the
//! `nvidia.com/gpu.model` the catalog uses) in `resource.annotations`, its own or that of
//! `defaults.job`. When the cluster profile names the product (`gpu-product`), the fix adds
//! `nvidia.com/gpu.product: <product>` to the job's `resource.annotations`.
//!
//! Fix safety: unsafe: it adds a scheduling constraint (the GPU product annotation).
//!
//! ## Why is this bad?
//! With `NVIDIA_IMEX_CHANNELS` set, the container needs an IMEX channel device. On a node
//! without IMEX (any node the scheduler may pick when nothing pins the product) the container
//! cannot be created and the job fails before it starts.
//!
//! ## Example
//! On `examples/clusters/gb200-nvl72.toml` (`gpu-product = "GB200"`, the value of the fix):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/gb200-nvl72.toml
//! jobs:
//!   train:
//!     env:
//!       - NVIDIA_IMEX_CHANNELS=0
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//! ```
//!
//! ## Use instead
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/gb200-nvl72.toml
//! jobs:
//!   train:
//!     env:
//!       - NVIDIA_IMEX_CHANNELS=0
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB200}
//! ```
//!
//! ## Options
//! `gpu-product` in the cluster profile is the value of the fix; without it there is no fix.

use super::{Check, Context, TaskContext};
use crate::edits::{add_nested_entry, yaml_scalar};
use crate::gpu::{env_get, product_pin, uses_gpus};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};

declare_rule! {
    pub struct ImexNoProductPin {
        code: "FZ303",
        name: "imex-no-product-pin",
        severity: Error,
        category: Gpu,
        summary: "`NVIDIA_IMEX_CHANNELS` without a GPU product annotation keeping the job on IMEX nodes",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

impl Check for ImexNoProductPin {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        if task.kind != fuzzfile_model::TaskKind::Job {
            return;
        }
        let env = &facts.env;
        let Some(e) = env_get(env, "NVIDIA_IMEX_CHANNELS") else {
            return;
        };
        if e.value.trim().is_empty() || product_pin(ctx, task).is_some() {
            return;
        }
        if !uses_gpus(ctx, task, env) {
            return;
        }
        let message = if e.from_defaults {
            format!(
                "`NVIDIA_IMEX_CHANNELS` from `defaults.job.env` applies to job `{}`, but no `nvidia.com/gpu.product` annotation keeps it on IMEX nodes",
                task.name.value
            )
        } else {
            format!(
                "`NVIDIA_IMEX_CHANNELS` is set, but no `nvidia.com/gpu.product` annotation keeps job `{}` on IMEX nodes",
                task.name.value
            )
        };
        let mut d = Diagnostic::new(Rule::ImexNoProductPin, e.name_range, message)
        .with_help(
            "on a node without IMEX the container cannot be created; add `nvidia.com/gpu.product: <product>` under `resource.annotations`",
        );
        if let Some((product, edit)) = pin_edit(ctx, task) {
            d = d.with_fix(Fix {
                message: format!("Pin job `{}` to `{product}` nodes", task.name.value),
                edits: vec![edit],
                applicability: None,
            });
        }
        out.push(d);
    }
}

/// The edit that pins `task` to the cluster profile's GPU product
/// (`nvidia.com/gpu.product: <gpu-product>` under `resource.annotations`), with the product.
/// `None` without a `gpu-product` in the profile or where the edit cannot be made. Shared
/// with the fixes that set `NVIDIA_IMEX_CHANNELS` (`nccl-mnnvl-no-imex`), which are complete
/// only with it.
pub fn pin_edit<'c>(
    ctx: &Context<'c>,
    task: &fuzzfile_model::Task,
) -> Option<(&'c str, fuzzfile_diagnostics::Edit)> {
    let product = ctx.profile?.gpu_product.as_deref()?;
    let edit = add_nested_entry(
        ctx.text,
        ctx.tree,
        task.body,
        &["resource", "annotations"],
        "nvidia.com/gpu.product",
        &yaml_scalar(product, true),
    )?;
    Some((product, edit))
}
