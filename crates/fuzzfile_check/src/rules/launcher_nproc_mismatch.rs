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
//! environment (`env`, or exported by the script) that lists fewer devices narrows the count, and
//! so does `NVIDIA_VISIBLE_DEVICES` in the job's `env`: the NVIDIA container runtime exposes only
//! those GPUs when it creates the container (NVIDIA Container Toolkit, "Specialized
//! Configurations with Docker", GPU Enumeration); exported later by the script it changes
//! nothing, since CUDA reads only `CUDA_VISIBLE_DEVICES`.
//!
//! ## Launchers
//! Each launcher by its own flag, as its argument parser reads it (messages and fixes use the
//! launcher's own spelling):
//! - torchrun, `python -m torch.distributed.run` and `tune run`: `get_args_parser` in
//!   torch/distributed/run.py
//!   (<https://github.com/pytorch/pytorch/blob/010929fd3f401c3868310396e6a91ed95aa0305b/torch/distributed/run.py>):
//!   `--nproc-per-node` (`PET_NPROC_PER_NODE`); default 1.
//! - `accelerate launch` (and `python -m accelerate.commands.launch`): `launch_command_parser` in
//!   src/accelerate/commands/launch.py and `prepare_multi_gpu_env` in
//!   src/accelerate/utils/launch.py
//!   (<https://github.com/huggingface/accelerate/blob/v1.14.0/src/accelerate/commands/launch.py>):
//!   `--num_processes`, or `num_processes` in its config file when the job ships it: the processes
//!   of all machines together, so `num_processes / num_machines` per node (without it and without a
//!   config, the node's GPUs are taken as the processes of all machines); without `--multi_gpu` (or
//!   FSDP, DeepSpeed, a multi-GPU config) one process; `--cpu` is no GPU run; `--gpu_ids` narrows
//!   the GPUs.
//! - `fabric run` and `lightning run model`: the click command `_run` in
//!   src/lightning/fabric/cli.py
//!   (<https://github.com/Lightning-AI/pytorch-lightning/blob/2.6.5/src/lightning/fabric/cli.py>):
//!   `--devices`: a number, a comma-separated list of GPU indices (one process each; an index the
//!   node does not have is reported), `-1` (every GPU) or `auto` (one); default 1; `--strategy dp`
//!   is one process.
//! - `deepspeed`: `parse_args` and `main` in deepspeed/launcher/runner.py
//!   (<https://github.com/microsoft/DeepSpeed/blob/v0.16.4/deepspeed/launcher/runner.py>):
//!   `--num_gpus` (`--num_accelerators`), else the slots of `--include host:0,1`; default: every
//!   GPU of the node. deepspeed ignores `CUDA_VISIBLE_DEVICES` when a flag selects GPUs and turns
//!   it into its `--include` otherwise, so it does not narrow its count.
//!
//! Fix safety: unsafe: it changes a launcher's arguments (the processes started per node).
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

use super::launcher_common::{flag_named, with_flag_added};
use super::{Check, Context, TaskContext};
use crate::semantics::{Launch, PerNode};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule, Severity};

declare_rule! {
    pub struct LauncherNprocMismatch {
        code: "FZ201",
        name: "launcher-nproc-mismatch",
        severity: Error,
        category: Gpu,
        summary: "A launcher's processes per node (torchrun `--nproc-per-node`, accelerate, deepspeed, fabric) differ from the GPUs requested per node",
        fix: Sometimes,
        fix_safety: Unsafe,
        aliases: ["torchrun-nproc-mismatch"],
    }
}

/// What one value of the setting means against `gpus` GPUs per node.
enum Verdict {
    Fine,
    /// Not a value the launcher accepts: what it accepts.
    Invalid(&'static str),
    More(u64),
    Fewer(u64),
    /// A GPU index the node does not have (`--devices 0,5` on 4 GPUs).
    NoSuchDevice(u64),
}

fn verdict(inv: &Launch, v: &str, gpus: u64) -> Verdict {
    match inv.per_node(v, Some(gpus)) {
        PerNode::EachGpu | PerNode::NotGpus | PerNode::Unknown => Verdict::Fine,
        PerNode::Invalid(accepted) => Verdict::Invalid(accepted),
        PerNode::Devices(ids) => match ids.iter().find(|&&i| i >= gpus) {
            Some(&i) => Verdict::NoSuchDevice(i),
            None if (ids.len() as u64) < gpus => Verdict::Fewer(ids.len() as u64),
            None => Verdict::Fine,
        },
        PerNode::Processes(n) if n == gpus => Verdict::Fine,
        PerNode::Processes(n) if n > gpus => Verdict::More(n),
        PerNode::Processes(n) => Verdict::Fewer(n),
    }
}

impl Check for LauncherNprocMismatch {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = t.task;
        let Some((requested, requested_range)) = t.gpus else {
            return;
        };
        if requested == 0 {
            return;
        }
        for (inv, args) in t.distributed() {
            // `CUDA_VISIBLE_DEVICES` (and the like) narrows the GPUs the launch can use.
            let (gpus, gpu_range, gpus_are, label) = match (inv.visible_gpus, inv.visible_gpus_by())
            {
                (Some((v, r)), Some(by)) if v < requested && v > 0 => (
                    v,
                    r,
                    format!("`{by}` leaves {v} of the job's {requested} GPUs per node visible"),
                    format!("{v} GPUs visible"),
                ),
                _ => (
                    requested,
                    requested_range,
                    format!("the job requests {requested} GPUs per node"),
                    format!("{requested} GPUs per node"),
                ),
            };
            // The flag as written; the variable standing in for it names the flag it stands for.
            let flag = flag_named(inv, "nproc-per-node");
            let Some(setting) = inv.setting("nproc-per-node") else {
                if args.incomplete {
                    continue;
                }
                let Some((n, why)) = inv.default_per_node(gpus) else {
                    continue;
                };
                if n == gpus {
                    continue;
                }
                let Some(value) = inv.nproc_value(gpus) else {
                    continue;
                };
                let fixed = format!("{flag}={value}");
                let d = Diagnostic::new(
                    Rule::LauncherNprocMismatch,
                    inv.range(),
                    if gpus == requested {
                        format!(
                            "{why}, but `{}` requests {gpus} GPUs per node",
                            task.name.value
                        )
                    } else {
                        format!("{why}, but {gpus_are}")
                    },
                )
                .with_severity(if n > gpus {
                    Severity::Error
                } else {
                    Severity::Warning
                })
                .with_label(gpu_range, label.clone())
                .with_help(format!("add `{fixed}` (one process per GPU)"));
                out.push(with_flag_added(d, ctx, task, inv, &fixed));
                continue;
            };
            // Every value the setting may take must be wrong for a finding.
            let Some(choices) = setting.value.choices() else {
                continue;
            };
            let verdicts: Vec<Verdict> = choices.iter().map(|v| verdict(inv, v, gpus)).collect();
            if verdicts.iter().any(|v| matches!(v, Verdict::Fine)) {
                continue;
            }
            let shown = setting.value.display();
            let config = !setting.from_env && !flag.starts_with('-');
            let from = if config {
                " (in the launcher's config file)".to_owned()
            } else if setting.literal_in_place {
                String::new()
            } else if setting.from_env {
                format!(" (from `{}`)", setting.given_as)
            } else {
                " (after resolving its variable)".to_owned()
            };
            // accelerate's `--num_processes` counts all machines: say what it is per node.
            let per_node = |n: u64| match inv.per_node(&n.to_string(), Some(gpus)) {
                PerNode::Processes(p) if p != n => format!(" ({p} per node)"),
                _ => String::new(),
            };
            let fix_value = inv.nproc_value(gpus);
            if let Some(accepted) = verdicts.iter().find_map(|v| match v {
                Verdict::Invalid(a)
                    if verdicts.iter().all(|v| matches!(v, Verdict::Invalid(_))) =>
                {
                    Some(*a)
                }
                _ => None,
            }) {
                let mut d = Diagnostic::new(
                    Rule::LauncherNprocMismatch,
                    setting.at(),
                    format!("`{shown}` is not a valid `{flag}`{from}: {accepted}"),
                );
                if let (true, Some(v)) = (setting.literal_in_place, &fix_value) {
                    d = d.with_fix(Fix::replace(
                        format!("Set to {v}"),
                        setting.range,
                        v.clone(),
                    ));
                }
                out.push(d);
                continue;
            }
            let more = verdicts
                .iter()
                .any(|v| matches!(v, Verdict::More(_) | Verdict::NoSuchDevice(_)));
            let raw = |n: u64| -> u64 {
                setting
                    .value
                    .literal()
                    .and_then(|v| v.trim().parse().ok())
                    .unwrap_or(n)
            };
            let (sev, msg) = match verdicts.as_slice() {
                [Verdict::More(n)] => (Severity::Error, format!("`{flag}` is {}{}{from}, but {gpus_are}: the extra processes fail with `invalid device ordinal`", raw(*n), per_node(raw(*n)))),
                [Verdict::NoSuchDevice(i)] => (Severity::Error, format!("`{flag}` is {shown}{from}, but {gpus_are}: GPU {i} does not exist, and its process fails with `invalid device ordinal`")),
                [Verdict::Fewer(n)] => (Severity::Warning, format!("`{flag}` is {shown}{}{from}, but {gpus_are}: {} GPUs stay idle", per_node(raw(*n)), gpus - n)),
                _ if more => (Severity::Error, format!("`{flag}` is {shown}{from}, and {gpus_are}: more processes than GPUs fail with `invalid device ordinal`")),
                _ => (Severity::Warning, format!("`{flag}` is {shown}{from}, and {gpus_are}: GPUs stay idle")),
            };
            let mut d = Diagnostic::new(Rule::LauncherNprocMismatch, setting.at(), msg)
                .with_severity(sev)
                .with_label(gpu_range, label.clone());
            if let Some(r) = setting.defined_at() {
                d = d.with_label(r, "the value is set here");
            }
            match (&fix_value, setting.literal_in_place && choices.len() == 1) {
                (Some(v), true) => {
                    d = d.with_fix(Fix::replace(
                        format!("Set `{flag}` to {v}"),
                        setting.range,
                        v.clone(),
                    ));
                }
                (Some(v), false) => {
                    d = d.with_help(format!("make the value {v}, or change the GPU request"));
                }
                (None, _) => {
                    d = d.with_help(format!(
                        "use {gpus} GPUs per node, or change the GPU request"
                    ));
                }
            }
            out.push(d);
        }
    }
}
