//! ## What it does
//! Reports torchrun `--standalone` in a job that runs on more than one node, and the same
//! single-node mode of deepspeed: without a hostfile (`--hostfile`, default `/job/hostfile`,
//! shipped in `files:` or written by the job's script) deepspeed runs on its own node only,
//! with the master address forced to `127.0.0.1` and `--num_nodes` above 1 an error
//! (`main` in deepspeed/launcher/runner.py,
//! <https://github.com/microsoft/DeepSpeed/blob/v0.16.4/deepspeed/launcher/runner.py>).
//!
//! ## Launchers
//! Each launcher by its own flag, as its argument parser reads it (messages and fixes use the
//! launcher's own spelling):
//! - torchrun, `python -m torch.distributed.run` and `tune run`: `get_args_parser` in
//!   torch/distributed/run.py
//!   (<https://github.com/pytorch/pytorch/blob/010929fd3f401c3868310396e6a91ed95aa0305b/torch/distributed/run.py>):
//!   `--standalone`.
//! - `deepspeed`: `parse_args` and `main` in deepspeed/launcher/runner.py
//!   (<https://github.com/microsoft/DeepSpeed/blob/v0.16.4/deepspeed/launcher/runner.py>): no
//!   hostfile: `--hostfile` (default `/job/hostfile`) neither shipped in `files:` nor named by a
//!   text of the job.
//!
//! ## Why is this bad?
//! `--standalone` makes torchrun start a private rendezvous on `localhost` with a random id:
//! every node forms a world of its own, and the nodes never train together. A deepspeed
//! without a hostfile started on each node does the same; started on the head node only, it
//! leaves the other nodes idle.
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

use super::launcher_common::launcher_name;
use super::{Check, Context, TaskContext};
use crate::semantics::Reach;
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
        for (inv, args) in t.distributed() {
            if inv.reach() == Reach::OneNode {
                // deepspeed without a hostfile: this node's GPUs only, the master at 127.0.0.1.
                let name = launcher_name(inv);
                let mut d = match inv.exec_all {
                    Some(at) => Diagnostic::new(Rule::TorchrunStandaloneMultinode, inv.range(), format!("{name} without a hostfile runs on its own node only: `exec_all` starts it on each of the {n} nodes, and each node forms its own world"))
                        .with_label(at, "started on every node here"),
                    None => Diagnostic::new(Rule::TorchrunStandaloneMultinode, inv.range(), format!("{name} without a hostfile runs on the head node only, but the job has {n} nodes")),
                };
                d = d.with_label(r, format!("{n} nodes")).with_help(format!(
                    "write the job's hosts to a hostfile (`host slots=<GPUs>` lines, from `$MULTINODE_HOSTLIST`) and pass it with `--hostfile`: started once on the head node, {name} then starts every host itself; or, with that hostfile, add `--no_ssh --node_rank '$RANK' --master_addr \"$MULTINODE_NODE_IP\"` and start it on each node with `exec_all`"
                ));
                if let Some(f) = args.get("num_nodes") {
                    d = d.with_label(
                        f.flag_range,
                        "more than 1 node without a hostfile is an error",
                    );
                }
                out.push(d);
                continue;
            }
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
