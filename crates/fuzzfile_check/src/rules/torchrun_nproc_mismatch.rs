//! ## What it does
//! Compares torchrun's `--nproc-per-node` (also `--nproc_per_node`, a prefix argparse accepts,
//! `PET_NPROC_PER_NODE`, `python -m torch.distributed.run` / `.launch` and `tune run`) with the
//! GPUs the job requests per node (`resource.devices["nvidia.com/gpu"]`). The launch line is
//! read as the job's shell runs it: in `script:`, a `sh -c` string or a shipped file the job
//! runs, through variables (`torchrun $DISTRIBUTED_ARGS`), arrays (`"${ARGS[@]}"`), defaults
//! (`${NGPU:-8}` with `env` or the script setting `NGPU`), `eval`, `bash -c '...' arg0 args`
//! and heredocs. More processes than GPUs is an error; fewer is a warning (idle GPUs). A
//! missing flag means 1 process per node, unless an argument of unknown value could give it.
//! A value known only at run time is no finding; a value that depends on a branch is reported
//! only when every value it may take is wrong. `gpu` and `auto` are fine. The fix sets the
//! value to the GPU count where it is written in place. `CUDA_VISIBLE_DEVICES` in the launch's
//! environment (`env`, or exported by the script) that lists fewer devices narrows the count.
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
use crate::launch::insert_flag;
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

/// What a `--nproc-per-node` value means against `gpus` GPUs per node.
enum Verdict {
    Fine,
    /// Not a value torchrun accepts.
    Invalid,
    More(u64),
    Fewer(u64),
}

fn verdict(v: &str, gpus: u64) -> Verdict {
    let v = v.trim();
    if matches!(v, "gpu" | "auto") {
        return Verdict::Fine;
    }
    match v.parse::<u64>() {
        Ok(n) if n == gpus => Verdict::Fine,
        Ok(n) if n > gpus => Verdict::More(n),
        Ok(n) => Verdict::Fewer(n),
        Err(_) if v == "cpu" || v == "xpu" => Verdict::Fine,
        Err(_) => Verdict::Invalid,
    }
}

impl Check for TorchrunNprocMismatch {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = t.task;
        let Some((requested, requested_range)) = t.gpus else {
            return;
        };
        if requested == 0 {
            return;
        }
        for (inv, args) in t.distributed() {
            // `CUDA_VISIBLE_DEVICES` in the launch's environment narrows the GPUs it can use.
            let (gpus, gpu_range, gpus_are, label) = match inv.visible_gpus {
                Some((v, r)) if v < requested && v > 0 => (
                    v,
                    r,
                    format!("`CUDA_VISIBLE_DEVICES` leaves {v} of the job's {requested} GPUs per node visible"),
                    format!("{v} GPUs visible"),
                ),
                _ => (
                    requested,
                    requested_range,
                    format!("the job requests {requested} GPUs per node"),
                    format!("{requested} GPUs per node"),
                ),
            };
            let Some(setting) = inv.setting("nproc-per-node") else {
                if gpus > 1 && !args.incomplete {
                    let mut d = Diagnostic::new(
                        Rule::TorchrunNprocMismatch,
                        inv.range(),
                        if gpus == requested {
                            format!("torchrun starts 1 process per node by default, but `{}` requests {gpus} GPUs per node", task.name.value)
                        } else {
                            format!("torchrun starts 1 process per node by default, but {gpus_are}")
                        },
                    )
                    .with_severity(Severity::Warning)
                    .with_label(gpu_range, label.clone())
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
            // Every value the setting may take must be wrong for a finding.
            let Some(choices) = setting.value.choices() else {
                continue;
            };
            let verdicts: Vec<Verdict> = choices.iter().map(|v| verdict(v, gpus)).collect();
            if verdicts.iter().any(|v| matches!(v, Verdict::Fine)) {
                continue;
            }
            let shown = setting.value.display();
            let from = if setting.literal_in_place {
                String::new()
            } else if setting.from_env {
                " (from `PET_NPROC_PER_NODE`)".to_owned()
            } else {
                " (after resolving its variable)".to_owned()
            };
            if verdicts.iter().all(|v| matches!(v, Verdict::Invalid)) {
                let mut d = Diagnostic::new(Rule::TorchrunNprocMismatch, setting.at(), format!("`{shown}` is not a valid `--nproc-per-node`{from}: torchrun accepts a number, `gpu`, `cpu`, `xpu` or `auto`"));
                if setting.literal_in_place {
                    d = d.with_fix(Fix::replace(format!("Set to {gpus}"), setting.range, gpus.to_string()));
                }
                out.push(d);
                continue;
            }
            let more = verdicts.iter().any(|v| matches!(v, Verdict::More(_)));
            let (sev, msg) = match verdicts.as_slice() {
                [Verdict::More(n)] => (Severity::Error, format!("`--nproc-per-node` is {n}{from}, but {gpus_are}: the extra processes fail with `invalid device ordinal`")),
                [Verdict::Fewer(n)] => (Severity::Warning, format!("`--nproc-per-node` is {n}{from}, but {gpus_are}: {} GPUs stay idle", gpus - n)),
                _ if more => (Severity::Error, format!("`--nproc-per-node` is {shown}{from}, and {gpus_are}: more processes than GPUs fail with `invalid device ordinal`")),
                _ => (Severity::Warning, format!("`--nproc-per-node` is {shown}{from}, and {gpus_are}: GPUs stay idle")),
            };
            let mut d = Diagnostic::new(Rule::TorchrunNprocMismatch, setting.at(), msg)
                .with_severity(sev)
                .with_label(gpu_range, label.clone());
            if let Some(r) = setting.defined_at() {
                d = d.with_label(r, "the value is set here");
            }
            if setting.literal_in_place && choices.len() == 1 {
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
