//! ## What it does
//! Checks torchrun's rendezvous settings (flags, or the `PET_*` variables torchrun reads when a
//! flag is absent) for ones that are missing or ignored:
//! - a `c10d` or `etcd` backend without `--rdzv-endpoint`, in a job on several nodes (an
//!   **error**);
//! - a non-`static` backend without `--rdzv-id`, or with the default id `none` (unless the
//!   endpoint's port is 0: the store then listens on a port the OS picks for this run alone);
//! - `--master-addr` / `--master-port` with a non-`static` backend: torchrun ignores them;
//! - `--rdzv-backend`, `--rdzv-endpoint` or `--rdzv-id` together with `--standalone`, which
//!   replaces all three.
//!
//! ## Why is this bad?
//! Without an endpoint torchrun uses `localhost:29400`: every node waits for the others at
//! a rendezvous of its own until the join timeout (600 s) ends the job with
//! `RendezvousTimeoutError`. The rendezvous id must be the same on every node and unique per
//! job; with the default `none`, two jobs on the same hosts can join each other's rendezvous.
//! Ignored flags suggest a configuration that is not the one in effect.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     script: |
//!       #!/bin/sh
//!       exec_all torchrun --nnodes=2 --nproc-per-node=4 --rdzv-backend=c10d --master-addr "$MULTINODE_NODE_IP" train.py
//!     multinode: {nodes: 2, implementation: generic}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     script: |
//!       #!/bin/sh
//!       exec_all torchrun --nnodes=2 --nproc-per-node=4 --rdzv-backend=c10d --rdzv-endpoint "$MULTINODE_NODE_IP:29400" --rdzv-id train-run-1 train.py
//!     multinode: {nodes: 2, implementation: generic}
//! ```

use super::{Check, Context, TaskContext};
use crate::semantics::Resolved;
use fuzzfile_diagnostics::{Diagnostic, Rule, Severity};

declare_rule! {
    pub struct TorchrunRdzvIncomplete {
        code: "FZ206",
        name: "torchrun-rdzv-incomplete",
        severity: Warning,
        category: Gpu,
        summary: "torchrun rendezvous settings that are incomplete or ignored",
        fix: None,
    }
}

impl Check for TorchrunRdzvIncomplete {
    fn task(&self, _ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let multinode = t.facts.generic_multinode();
        for (inv, args) in t.distributed() {
            if args.has("standalone") {
                for flag in ["rdzv-backend", "rdzv-endpoint", "rdzv-id"] {
                    if let Some(f) = args.get(flag) {
                        out.push(
                            Diagnostic::new(
                                Rule::TorchrunRdzvIncomplete,
                                f.flag_range,
                                format!("`--{flag}` is ignored with `--standalone`"),
                            )
                            .with_help("`--standalone` sets its own rendezvous (c10d on localhost with a random id): remove one or the other"),
                        );
                    }
                }
                continue;
            }
            let Some(backend) = inv.setting("rdzv-backend") else {
                continue;
            };
            let Resolved::Literal(b) = &backend.value else {
                continue;
            };
            if b == "static" {
                continue;
            }
            let endpoint = inv.setting("rdzv-endpoint");
            if let (Some((n, nodes_range)), None, false) = (multinode, &endpoint, args.incomplete) {
                if matches!(b.as_str(), "c10d" | "etcd" | "etcd-v2") {
                    out.push(
                        Diagnostic::new(
                            Rule::TorchrunRdzvIncomplete,
                            backend.range,
                            format!("`--rdzv-backend={b}` without `--rdzv-endpoint` in a job on {n} nodes: each node waits at its own rendezvous on localhost"),
                        )
                        .with_severity(Severity::Error)
                        .with_label(nodes_range, format!("{n} nodes"))
                        .with_help("add `--rdzv-endpoint \"$MULTINODE_NODE_IP:29400\"` (the head node's address, the same on every node)"),
                    );
                }
            }
            // Port 0: the c10d store listens on a port the OS picks for this run alone, so no
            // other job can reach it (torchtitan's `--rdzv_endpoint localhost:0`).
            let private_port = endpoint
                .and_then(|e| e.value.literal())
                .is_some_and(|v| v.rsplit_once(':').is_some_and(|(_, p)| p == "0"));
            match inv.setting("rdzv-id") {
                None if args.incomplete || private_port => {}
                None => out.push(
                    Diagnostic::new(
                        Rule::TorchrunRdzvIncomplete,
                        backend.range,
                        format!("`--rdzv-backend={b}` without `--rdzv-id`: the id defaults to `none`"),
                    )
                    .with_help("add `--rdzv-id` with an id unique to this run and the same on every node; jobs that share an id can join each other's rendezvous"),
                ),
                Some(s) if s.value == Resolved::Literal("none".into()) => out.push(
                    Diagnostic::new(
                        Rule::TorchrunRdzvIncomplete,
                        s.range,
                        format!(
                            "`{}` is torchrun's default: jobs that share it can join each other's rendezvous",
                            if s.from_env { "PET_RDZV_ID=none" } else { "--rdzv-id none" }
                        ),
                    )
                    .with_help("use an id unique to this run and the same on every node"),
                ),
                Some(_) => {}
            }
            for flag in ["master-addr", "master-port"] {
                if let Some(f) = args.get(flag) {
                    out.push(
                        Diagnostic::new(
                            Rule::TorchrunRdzvIncomplete,
                            f.flag_range,
                            format!("`--{flag}` is ignored with `--rdzv-backend={b}`: it applies to the `static` rendezvous only"),
                        )
                        .with_help("give the address and port in `--rdzv-endpoint host:port` instead"),
                    );
                }
            }
        }
    }
}
