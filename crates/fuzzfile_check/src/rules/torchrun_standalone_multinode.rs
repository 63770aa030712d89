//! ## What it does
//! Reports torchrun `--standalone` in a job that runs on more than one node.
//!
//! ## Why is this bad?
//! `--standalone` makes torchrun start a private rendezvous on `localhost` with a random id:
//! every node forms a world of its own, and the nodes never train together.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     script: |
//!       #!/bin/sh
//!       exec_all torchrun --standalone --nproc-per-node=4 train.py
//!     multinode: {nodes: 2, implementation: generic}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     script: |
//!       #!/bin/sh
//!       exec_all torchrun --nnodes=2 --nproc-per-node=4 --node-rank '$RANK' --master-addr "$MULTINODE_NODE_IP" --master-port 29500 train.py
//!     multinode: {nodes: 2, implementation: generic}
//! ```

use super::{Check, Context, TaskContext};
use fuzzfile_diagnostics::{Diagnostic, Rule};

declare_rule! {
    pub struct TorchrunStandaloneMultinode {
        code: "FZ203",
        name: "torchrun-standalone-multinode",
        severity: Error,
        category: Gpu,
        summary: "torchrun `--standalone` in a multinode job",
        fix: None,
    }
}

impl Check for TorchrunStandaloneMultinode {
    fn task(&self, _ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some((n, r)) = t.facts.generic_multinode() else {
            return;
        };
        for (_, args) in t.distributed() {
            if let Some(f) = args.get("standalone") {
                out.push(
                    Diagnostic::new(Rule::TorchrunStandaloneMultinode, f.flag_range, format!("`--standalone` in a job on {n} nodes: each node forms its own world"))
                        .with_label(r, format!("{n} nodes"))
                        .with_help(format!("replace `--standalone` with `--nnodes={n} --node-rank '$RANK' --master-addr \"$MULTINODE_NODE_IP\" --master-port 29500`, and start it on every node with `exec_all`")),
                );
            }
        }
    }
}
