//! ## What it does
//! In a job on more than one node, checks that torchrun is started on every node and that
//! each node gets its own rank. With the default `static` rendezvous, torchrun needs
//! `--node-rank` (or `PET_NODE_RANK`): Fuzzball's `exec_all` helper sets `RANK` on each node,
//! so `--node-rank '$RANK'` is the usual spelling. Reports a missing `--node-rank`, a constant
//! one under `exec_all` (every node the same rank), and a torchrun in a `generic` multinode job
//! that is not started through `exec_all` (it runs on the head node only). A `c10d` or `etcd`
//! rendezvous assigns ranks itself and needs no `--node-rank`.
//!
//! ## Why is this bad?
//! Every node claims rank 0 (the default): the rendezvous fails with duplicate ranks, or hangs
//! until its join timeout. A torchrun started on the head node alone waits for nodes that
//! never start it.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     script: |
//!       #!/bin/sh
//!       exec_all torchrun --nnodes=2 --nproc-per-node=4 --master-addr "$MULTINODE_NODE_IP" train.py
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
use crate::launch::{
    generic_multinode, insert_flag, torchrun_setting, Origin, Resolved,
};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};
use fuzzfile_model::Implementation;

declare_rule! {
    pub struct TorchrunMissingNodeRank {
        code: "FZ204",
        name: "torchrun-missing-node-rank",
        severity: Error,
        category: Gpu,
        summary: "Multinode torchrun without `--node-rank` or a rendezvous that assigns ranks",
        fix: Sometimes,
    }
}

/// Whether the rendezvous backend is the default `static` one.
pub fn is_static(
    inv: &crate::launch::Invocation,
    args: &crate::launch::TorchrunArgs,
    env: &[&fuzzfile_model::EnvVar],
) -> bool {
    match torchrun_setting(inv, args, env, "rdzv-backend").map(|s| s.value) {
        None => true,
        Some(Resolved::Literal(b)) => b == "static",
        Some(_) => false,
    }
}

impl Check for TorchrunMissingNodeRank {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        let Some((n, nodes_range)) = generic_multinode(task) else {
            return;
        };
        let generic = task
            .multinode
            .as_ref()
            .and_then(|m| m.implementation.as_ref())
            .is_some_and(|i| i.value == Implementation::Generic);
        let env = &facts.env;
        for (inv, args) in &facts.torchruns {
            if args.has("standalone") {
                continue; // torchrun-standalone-multinode
            }
            if generic && inv.exec_all.is_none() {
                out.push(
                    Diagnostic::new(Rule::TorchrunMissingNodeRank, inv.range(), format!("torchrun runs on the head node only, but the job has {n} nodes"))
                        .with_label(nodes_range, format!("{n} nodes"))
                        .with_help("a `generic` job runs its command once, on the head node: start torchrun on every node with `exec_all torchrun ... --node-rank '$RANK'`"),
                );
                continue;
            }
            if !is_static(inv, args, env) {
                continue;
            }
            match torchrun_setting(inv, args, env, "node-rank") {
                None => {
                    let flag = if inv.origin == Origin::Argv {
                        "--node-rank=$RANK"
                    } else {
                        "--node-rank '$RANK'"
                    };
                    let mut d = Diagnostic::new(Rule::TorchrunMissingNodeRank, inv.range(), format!("multinode torchrun without `--node-rank`: all {n} nodes claim rank 0"))
                        .with_label(nodes_range, format!("{n} nodes"))
                        .with_help(format!("add `{flag}` (`exec_all` sets `RANK` on each node), or use `--rdzv-backend=c10d`"));
                    if inv.exec_all.is_some() {
                        if let Some(e) = insert_flag(ctx.text, ctx.tree, task, inv, flag) {
                            d = d.with_fix(Fix {
                                message: format!("Add `{flag}`"),
                                edits: vec![e],
                            });
                        }
                    }
                    out.push(d);
                }
                Some(s) => {
                    if let (Resolved::Literal(v), true) = (&s.value, inv.exec_all.is_some()) {
                        out.push(
                            Diagnostic::new(Rule::TorchrunMissingNodeRank, s.range, format!("`--node-rank` is the constant `{v}` on every node that `exec_all` starts"))
                                .with_help("use the rank `exec_all` sets on each node: `--node-rank '$RANK'`"),
                        );
                    }
                }
            }
        }
    }
}
