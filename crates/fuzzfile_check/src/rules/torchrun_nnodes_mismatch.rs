//! ## What it does
//! Checks torchrun's `--nnodes` (`N` or `MIN:MAX`, also `PET_NNODES`) against the nodes the
//! job runs on: `multinode.nodes`, or 1 without `multinode`. Reports a count or range that
//! does not admit the node count, `--nnodes` above 1 in a job without `multinode`, and a
//! multinode job whose torchrun leaves `--nnodes` at its default of 1. The fix writes the
//! node count.
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

use super::{Check, Context, TaskContext};
use crate::launch::insert_flag;
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};

declare_rule! {
    pub struct TorchrunNnodesMismatch {
        code: "FZ202",
        name: "torchrun-nnodes-mismatch",
        severity: Error,
        category: Gpu,
        summary: "torchrun `--nnodes` does not admit `multinode.nodes`",
        fix: Sometimes,
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

impl Check for TorchrunNnodesMismatch {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = t.task;
        if t.facts.wrapped_by_fuzzball().is_some() {
            return; // launcher-double-wrap
        }
        let multinode = t.nodes;
        let node_count = multinode.map_or(1, |n| n.0);
        for (inv, args) in t.distributed() {
            let Some(setting) = inv.setting("nnodes") else {
                if node_count > 1 && !args.has("standalone") && !args.incomplete {
                    let (_, r) = multinode.unwrap_or((0, inv.range()));
                    let mut d = Diagnostic::new(
                        Rule::TorchrunNnodesMismatch,
                        inv.range(),
                        format!("torchrun's `--nnodes` defaults to 1, but the job runs on {node_count} nodes"),
                    )
                    .with_label(r, format!("{node_count} nodes"))
                    .with_help(format!("add `--nnodes={node_count}`"));
                    if let Some(e) = insert_flag(
                        ctx.text,
                        ctx.tree,
                        task,
                        inv,
                        &format!("--nnodes={node_count}"),
                    ) {
                        d = d.with_fix(Fix {
                            message: format!("Add `--nnodes={node_count}`"),
                            edits: vec![e],
                        });
                    }
                    out.push(d);
                }
                continue;
            };
            let Some(choices) = setting.value.choices() else {
                continue;
            };
            // Every value the setting may take must be wrong for a finding.
            let parsed: Vec<Option<(u64, u64)>> = choices.iter().map(|v| parse_nnodes(v)).collect();
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
                    out.push(Diagnostic::new(Rule::TorchrunNnodesMismatch, setting.at(), format!("`{v}` is not a valid `--nnodes`: torchrun accepts `N` or `MIN:MAX` with 0 < MIN <= MAX")));
                    continue;
                }
                _ => {
                    out.push(Diagnostic::new(Rule::TorchrunNnodesMismatch, setting.at(), format!("`--nnodes` is {v}, and none of them admits the {node_count} nodes the job runs on: the rendezvous never completes")));
                    continue;
                }
            };
            let shown = if min == max {
                format!("{min}")
            } else {
                format!("{min}:{max}")
            };
            let mut d = match multinode {
                Some((n, r)) => Diagnostic::new(Rule::TorchrunNnodesMismatch, setting.at(), format!("`--nnodes` is {shown}, but `multinode.nodes` is {n}: the rendezvous never completes")).with_label(r, format!("{n} nodes")),
                None => Diagnostic::new(Rule::TorchrunNnodesMismatch, setting.at(), format!("`--nnodes` is {shown}, but the job has no `multinode` section and runs on one node"))
                    .with_help(format!("add `multinode: {{nodes: {min}, implementation: generic}}` and start torchrun on every node with `exec_all`, or use `--standalone` on one node")),
            };
            if let Some(r) = setting.defined_at() {
                d = d.with_label(r, "the value is set here");
            }
            if setting.literal_in_place && multinode.is_some() {
                d = d.with_fix(Fix::replace(
                    format!("Set `--nnodes` to {node_count}"),
                    setting.range,
                    node_count.to_string(),
                ));
            }
            out.push(d);
        }
    }
}
