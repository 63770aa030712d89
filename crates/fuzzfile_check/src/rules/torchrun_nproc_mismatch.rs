//! ## What it does
//! Compares torchrun's `--nproc-per-node` (also `--nproc_per_node`, `PET_NPROC_PER_NODE`, and
//! `python -m torch.distributed.run` / `.launch`), after resolving `$VAR` from the job's `env`,
//! `defaults.job.env` and shell assignments, with the GPUs the job requests per node
//! (`resource.devices["nvidia.com/gpu"]`). More processes than GPUs is an error; fewer is a
//! warning (idle GPUs). A missing flag means 1 process per node. `gpu` and `auto` are fine.
//! The fix sets the value to the GPU count.
//!
//! ## Why is this bad?
//! Each worker calls `torch.cuda.set_device(LOCAL_RANK)`: with more workers than GPUs the
//! extra ones fail with `CUDA error: invalid device ordinal`; with fewer, GPUs you pay for sit
//! idle.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     command: [torchrun, --standalone, --nproc-per-node=8, train.py]
//!     resource:
//!       devices:
//!         nvidia.com/gpu: 4
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     command: [torchrun, --standalone, --nproc-per-node=4, train.py]
//!     resource:
//!       devices:
//!         nvidia.com/gpu: 4
//! ```

use super::{Check, Context, TaskContext};
use crate::launch::{insert_flag, torchrun_setting, Resolved};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule, Severity};

declare_rule! {
    pub struct TorchrunNprocMismatch {
        code: "FZ201",
        name: "torchrun-nproc-mismatch",
        severity: Error,
        category: Gpu,
        summary: "torchrun `--nproc-per-node` differs from the GPUs requested per node",
        fix: Sometimes,
    }
}

impl Check for TorchrunNprocMismatch {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        let Some((gpus, gpu_range)) = facts.gpus else {
            return;
        };
        if gpus == 0 {
            return;
        }
        let env = &facts.env;
        for (inv, args) in &facts.torchruns {
            let Some(setting) = torchrun_setting(inv, args, env, "nproc-per-node") else {
                if gpus > 1 {
                    let mut d = Diagnostic::new(
                        Rule::TorchrunNprocMismatch,
                        inv.range(),
                        format!("torchrun starts 1 process per node by default, but `{}` requests {gpus} GPUs per node", task.name.value),
                    )
                    .with_severity(Severity::Warning)
                    .with_label(gpu_range, format!("{gpus} GPUs per node"))
                    .with_help(format!("add `--nproc-per-node={gpus}` (one process per GPU)"));
                    if let Some(e) = insert_flag(
                        ctx.text,
                        ctx.tree,
                        task,
                        inv,
                        &format!("--nproc-per-node={gpus}"),
                    ) {
                        d = d.with_fix(Fix {
                            message: format!("Add `--nproc-per-node={gpus}`"),
                            edits: vec![e],
                        });
                    }
                    out.push(d);
                }
                continue;
            };
            let Resolved::Literal(v) = &setting.value else {
                continue;
            };
            let v = v.trim();
            if matches!(v, "gpu" | "auto") {
                continue;
            }
            let Ok(n) = v.parse::<u64>() else {
                if v != "cpu" && v != "xpu" {
                    out.push(Diagnostic::new(Rule::TorchrunNprocMismatch, setting.range, format!("`{v}` is not a valid `--nproc-per-node`: torchrun accepts a number, `gpu`, `cpu`, `xpu` or `auto`")).with_fix(Fix::replace(format!("Set to {gpus}"), setting.range, gpus.to_string())));
                }
                continue;
            };
            if n == gpus {
                continue;
            }
            let from = if setting.literal_in_place {
                String::new()
            } else {
                " (after resolving its variable)".to_owned()
            };
            let (sev, msg) = if n > gpus {
                (Severity::Error, format!("`--nproc-per-node` is {n}{from}, but the job requests {gpus} GPUs per node: the extra processes fail with `invalid device ordinal`"))
            } else {
                (Severity::Warning, format!("`--nproc-per-node` is {n}{from}, but the job requests {gpus} GPUs per node: {} GPUs stay idle", gpus - n))
            };
            let mut d = Diagnostic::new(Rule::TorchrunNprocMismatch, setting.range, msg)
                .with_severity(sev)
                .with_label(gpu_range, format!("{gpus} GPUs per node"));
            if setting.literal_in_place {
                d = d.with_fix(Fix::replace(
                    format!("Set `--nproc-per-node` to {gpus}"),
                    setting.range,
                    gpus.to_string(),
                ));
            } else {
                d = d.with_help(format!("make the value {gpus}, or change the GPU request"));
            }
            out.push(d);
        }
    }
}
