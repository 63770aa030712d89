//! ## What it does
//! Checks torchrun's `--nnodes` (`N` or `MIN:MAX`, also `PET_NNODES`) against the nodes the
//! job runs on: `multinode.nodes`, or 1 without `multinode`. Reports a count or range that
//! does not admit the node count, `--nnodes` above 1 in a job without `multinode`, and a
//! multinode job whose torchrun leaves `--nnodes` at its default of 1. The fix writes the
//! node count.
//!
//! ## Launchers
//! Each launcher by its own flag, as its argument parser reads it (messages and fixes use the
//! launcher's own spelling):
//! - torchrun, `python -m torch.distributed.run` and `tune run`: `get_args_parser` in
//!   torch/distributed/run.py
//!   (<https://github.com/pytorch/pytorch/blob/010929fd3f401c3868310396e6a91ed95aa0305b/torch/distributed/run.py>):
//!   `--nnodes` (`N` or `MIN:MAX`, `PET_NNODES`); default 1.
//! - `accelerate launch` (and `python -m accelerate.commands.launch`): `launch_command_parser` in
//!   src/accelerate/commands/launch.py and `prepare_multi_gpu_env` in
//!   src/accelerate/utils/launch.py
//!   (<https://github.com/huggingface/accelerate/blob/v1.14.0/src/accelerate/commands/launch.py>):
//!   `--num_machines` (or `num_machines` in its config file); default 1 without a config.
//! - `fabric run` and `lightning run model`: the click command `_run` in
//!   src/lightning/fabric/cli.py
//!   (<https://github.com/Lightning-AI/pytorch-lightning/blob/2.6.5/src/lightning/fabric/cli.py>):
//!   `--num-nodes` / `--num_nodes`; default 1.
//! - `deepspeed`: `parse_args` and `main` in deepspeed/launcher/runner.py
//!   (<https://github.com/microsoft/DeepSpeed/blob/v0.16.4/deepspeed/launcher/runner.py>):
//!   `--num_nodes` keeps the first N hosts of the hostfile: fewer than the job's nodes is reported,
//!   more changes nothing, none means every host.
//!
//! Fix safety: unsafe: it changes a launcher's arguments (the nodes it waits for).
//!
//! ## Why is this bad?
//! The rendezvous waits for nodes that never come (up to its 600 s join timeout, then
//! `RendezvousTimeoutError`), or each node trains alone.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     script: |
//!       #!/bin/sh
//!       exec_all torchrun --nnodes=4 --nproc-per-node=4 --node-rank '$RANK' --master-addr "$MULTINODE_NODE_IP" train.py
//!     multinode: {nodes: 2, implementation: generic}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     script: |
//!       #!/bin/sh
//!       exec_all torchrun --nnodes=2 --nproc-per-node=4 --node-rank '$RANK' --master-addr "$MULTINODE_NODE_IP" train.py
//!     multinode: {nodes: 2, implementation: generic}
//! ```

use super::launcher_common::{flag_named, launcher_name, with_flag_added};
use super::{Check, Context, TaskContext};
use crate::launch::Launcher;
use crate::semantics::Reach;
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};

declare_rule! {
    pub struct LauncherNnodesMismatch {
        code: "FZ202",
        name: "launcher-nnodes-mismatch",
        severity: Error,
        category: Gpu,
        summary: "A launcher's node count (torchrun `--nnodes`, accelerate, deepspeed, fabric) does not admit `multinode.nodes`",
        fix: Sometimes,
        fix_safety: Unsafe,
        aliases: ["torchrun-nnodes-mismatch"],
    }
}

/// `N` or `MIN:MAX` → (min, max).
pub fn parse_nnodes(v: &str) -> Option<(u64, u64)> {
    match v.split_once(':') {
        Some((a, b)) => {
            let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
            (a > 0 && a <= b).then_some((a, b))
        }
        None => v.trim().parse().ok().filter(|n| *n > 0).map(|n| (n, n)),
    }
}

impl Check for LauncherNnodesMismatch {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = t.task;
        if t.facts.wrapped_by_fuzzball().is_some() {
            return; // launcher-double-wrap
        }
        let multinode = t.nodes;
        let node_count = multinode.map_or(1, |n| n.0);
        for (inv, args) in t.distributed() {
            let flag = flag_named(inv, "nnodes");
            let name = launcher_name(inv);
            let Some(setting) = inv.setting("nnodes") else {
                let Some(default) = inv.default_nnodes() else {
                    continue;
                };
                if node_count > default
                    && !args.has("standalone")
                    && !args.incomplete
                    && inv.reach() == Reach::EachNode
                {
                    let (_, r) = multinode.unwrap_or((0, inv.range()));
                    let fixed = format!("{flag}={node_count}");
                    let d = Diagnostic::new(
                        Rule::LauncherNnodesMismatch,
                        inv.range(),
                        format!("{name}'s `{flag}` defaults to {default}, but the job runs on {node_count} nodes"),
                    )
                    .with_label(r, format!("{node_count} nodes"))
                    .with_help(format!("add `{fixed}`"));
                    out.push(with_flag_added(d, ctx, task, inv, &fixed));
                }
                continue;
            };
            let Some(choices) = setting.value.choices() else {
                continue;
            };
            let config = if !flag.starts_with('-') && !setting.from_env {
                " (in the launcher's config file)"
            } else {
                ""
            };
            if inv.launcher == Launcher::Deepspeed {
                // `--num_nodes` keeps the first N hosts of the hostfile (runner.py `main`): fewer
                // than the job's nodes leaves the others out; more changes nothing.
                let fewer: Option<Vec<u64>> = choices
                    .iter()
                    .map(|v| {
                        v.trim()
                            .parse::<u64>()
                            .ok()
                            .filter(|n| *n >= 1 && *n < node_count)
                    })
                    .collect();
                if let (Some(_), Some((n, r))) = (fewer, multinode) {
                    let v = setting.value.display();
                    let mut d = Diagnostic::new(Rule::LauncherNnodesMismatch, setting.at(), format!("`{flag}` is {v}, but `multinode.nodes` is {n}: deepspeed uses only {v} of the hosts of its hostfile"))
                        .with_label(r, format!("{n} nodes"));
                    if setting.literal_in_place && choices.len() == 1 {
                        d = d.with_fix(Fix::replace(
                            format!("Set `{flag}` to {n}"),
                            setting.range,
                            n.to_string(),
                        ));
                    }
                    out.push(d);
                }
                continue;
            }
            // Every value the setting may take must be wrong for a finding.
            let ranges = inv.nnodes_range_allowed();
            let parsed: Vec<Option<(u64, u64)>> = choices
                .iter()
                .map(|v| parse_nnodes(v).filter(|(a, b)| ranges || a == b && !v.contains(':')))
                .collect();
            if parsed
                .iter()
                .any(|p| p.is_some_and(|(min, max)| (min..=max).contains(&node_count)))
            {
                continue;
            }
            let v = setting.value.display();
            let (min, max) = match parsed.as_slice() {
                [Some(one)] => *one,
                [None] => {
                    let accepted = if ranges {
                        "torchrun accepts `N` or `MIN:MAX` with 0 < MIN <= MAX"
                    } else {
                        "it takes a whole number above 0"
                    };
                    out.push(Diagnostic::new(
                        Rule::LauncherNnodesMismatch,
                        setting.at(),
                        format!("`{v}` is not a valid `{flag}`{config}: {accepted}"),
                    ));
                    continue;
                }
                _ => {
                    out.push(Diagnostic::new(Rule::LauncherNnodesMismatch, setting.at(), format!("`{flag}` is {v}{config}, and none of them admits the {node_count} nodes the job runs on: the rendezvous never completes")));
                    continue;
                }
            };
            let shown = if min == max {
                format!("{min}")
            } else {
                format!("{min}:{max}")
            };
            let mut d = match multinode {
                Some((n, r)) => Diagnostic::new(Rule::LauncherNnodesMismatch, setting.at(), format!("`{flag}` is {shown}{config}, but `multinode.nodes` is {n}: the rendezvous never completes")).with_label(r, format!("{n} nodes")),
                None => Diagnostic::new(Rule::LauncherNnodesMismatch, setting.at(), format!("`{flag}` is {shown}{config}, but the job has no `multinode` section and runs on one node"))
                    .with_help(format!("add `multinode: {{nodes: {min}, implementation: generic}}` and start {name} on every node with `exec_all`, or {}", if inv.nnodes_range_allowed() { "use `--standalone` on one node".to_owned() } else { format!("make `{flag}` 1") })),
            };
            if let Some(r) = setting.defined_at() {
                d = d.with_label(r, "the value is set here");
            }
            if setting.literal_in_place && multinode.is_some() {
                d = d.with_fix(Fix::replace(
                    format!("Set `{flag}` to {node_count}"),
                    setting.range,
                    node_count.to_string(),
                ));
            }
            out.push(d);
        }
    }
}
