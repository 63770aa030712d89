//! ## What it does
//! In a job on more than one node, checks that torchrun is started on every node and that
//! each node gets its own rank. With the default `static` rendezvous, torchrun needs
//! `--node-rank` (or `PET_NODE_RANK`): Fuzzball's `exec_all` helper sets `RANK` on each node,
//! so `--node-rank '$RANK'` is the usual spelling. Reports a missing `--node-rank`, a constant
//! one under `exec_all` (every node the same rank), a `$RANK` that the head node's shell expands
//! before `exec_all` runs (`"$RANK"`, `$RANK` or `${RANK}` in a `script:`: every node gets the
//! head's rank), and a torchrun in a `generic` multinode job that is not started through
//! `exec_all` (it runs on the head node only). A `c10d` or `etcd` rendezvous assigns ranks
//! itself and needs no `--node-rank`. Flags passed through variables, arrays and `eval` count
//! as written (`torchrun $DISTRIBUTED_ARGS`); a value not known before the run is no finding.
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
use crate::launch::{insert_flag, Origin};
use crate::semantics::{Launch, Resolved, Site};
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

/// Whether the rendezvous backend is the default `static` one (in every case the value may
/// take).
pub fn is_static(inv: &Launch) -> bool {
    match inv.setting("rdzv-backend").map(|s| &s.value) {
        None => true,
        Some(v) => v
            .choices()
            .is_some_and(|c| c.iter().all(|b| *b == "static")),
    }
}

impl Check for TorchrunMissingNodeRank {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = t.task;
        let Some((n, nodes_range)) = t.facts.generic_multinode() else {
            return;
        };
        let generic = t.facts.implementation == Some(Implementation::Generic);
        for (inv, args) in t.distributed() {
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
            if !is_static(inv) {
                continue;
            }
            let Some(s) = inv.setting("node-rank") else {
                if args.incomplete {
                    continue; // an unknown argument may give it
                }
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
                continue;
            };
            if inv.exec_all.is_none() {
                continue;
            }
            match &s.value {
                Resolved::Literal(_) | Resolved::OneOf(_) => {
                    let v = s.value.display();
                    out.push(
                        Diagnostic::new(Rule::TorchrunMissingNodeRank, s.at(), format!("`--node-rank` is the constant `{v}` on every node that `exec_all` starts"))
                            .with_help("use the rank `exec_all` sets on each node: `--node-rank '$RANK'`"),
                    );
                }
                Resolved::Runtime {
                    name,
                    site: Site::Head,
                } if name == "RANK" => {
                    let written = s.written.slice(ctx.text);
                    let expansion = s.range.slice(ctx.text);
                    let mut d = Diagnostic::new(Rule::TorchrunMissingNodeRank, s.at(), format!("`{expansion}` is expanded by the head node's shell before `exec_all` runs: every node gets the head's rank"))
                        .with_help("quote it so that `exec_all` gives each node its own rank: `--node-rank '$RANK'`");
                    if let Some(r) = s.defined_at() {
                        d = d.with_label(r, "expanded here, on the head node");
                    }
                    if s.in_place
                        && s.use_site().is_none()
                        && matches!(inv.origin, Origin::Script | Origin::ShellString)
                        && matches!(written, "$RANK" | "${RANK}" | "\"$RANK\"" | "\"${RANK}\"")
                    {
                        d = d.with_fix(Fix::replace("Quote it: `'$RANK'`", s.written, "'$RANK'"));
                    }
                    out.push(d);
                }
                Resolved::Template { text, site: Site::Head } if text.contains("$RANK") => {
                    out.push(
                        Diagnostic::new(Rule::TorchrunMissingNodeRank, s.written, format!("`--node-rank` is `{text}` with `$RANK` expanded by the head node's shell before `exec_all` runs: every node gets the same rank"))
                            .with_help("quote it so that `exec_all` gives each node its own rank: `--node-rank '$RANK'`"),
                    );
                }
                _ => {}
            }
        }
    }
}
