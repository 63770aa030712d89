//! ## What it does
//! In a job on more than one node, checks that torchrun has an address every node can reach:
//! `--master-addr` (or `PET_MASTER_ADDR`) for the default `static` rendezvous, the host of
//! `--rdzv-endpoint` otherwise. A missing address (torchrun's default is `127.0.0.1`) or a
//! loopback one (`localhost`, `127.x.x.x`, `::1`, `0.0.0.0`) is reported. Fuzzball's
//! `$MULTINODE_NODE_IP`, expanded on the head node, is the head's address.
//!
//! ## Why is this bad?
//! Each node looks for the master on itself: workers wait until the rendezvous times out
//! (`The client socket has timed out`, `RendezvousConnectionError`).
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     script: |
//!       #!/bin/sh
//!       exec_all torchrun --nnodes=2 --nproc-per-node=4 --node-rank '$RANK' --master-addr localhost train.py
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

use super::torchrun_missing_node_rank::is_static;
use super::{Check, Context, TaskContext};
use crate::launch::{
    generic_multinode, insert_flag, torchrun_setting, Origin, Resolved,
};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};

declare_rule! {
    pub struct TorchrunMissingMasterAddr {
        code: "FZ205",
        name: "torchrun-missing-master-addr",
        severity: Error,
        category: Gpu,
        summary: "Multinode torchrun without a reachable master or rendezvous address",
        fix: Sometimes,
    }
}

pub fn is_loopback(host: &str) -> bool {
    let h = host.trim().trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost")
        || h.eq_ignore_ascii_case("ip6-localhost")
        || h.starts_with("127.")
        || h == "::1"
        || h == "0.0.0.0"
}

/// The host part of `host[:port]` (IPv6 in brackets).
fn host_of(endpoint: &str) -> &str {
    if let Some(rest) = endpoint.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest);
    }
    match endpoint.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => endpoint,
    }
}

impl Check for TorchrunMissingMasterAddr {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        let Some((n, nodes_range)) = generic_multinode(task) else {
            return;
        };
        let env = &facts.env;
        for (inv, args) in &facts.torchruns {
            if args.has("standalone") {
                continue;
            }
            let argv = inv.origin == Origin::Argv;
            let addr = if argv {
                "$MULTINODE_NODE_IP"
            } else {
                "\"$MULTINODE_NODE_IP\""
            };
            if is_static(inv, args, env)
                && torchrun_setting(inv, args, env, "rdzv-endpoint").is_none()
            {
                match torchrun_setting(inv, args, env, "master-addr") {
                    None => {
                        let flag = if argv {
                            "--master-addr=$MULTINODE_NODE_IP".to_owned()
                        } else {
                            format!("--master-addr {addr}")
                        };
                        let mut d = Diagnostic::new(Rule::TorchrunMissingMasterAddr, inv.range(), format!("multinode torchrun without `--master-addr`: each of the {n} nodes looks for the master at 127.0.0.1"))
                            .with_label(nodes_range, format!("{n} nodes"))
                            .with_help(format!("add `{flag}` (the head node's address)"));
                        if let Some(e) = insert_flag(ctx.text, ctx.tree, task, inv, &flag) {
                            d = d.with_fix(Fix {
                                message: format!("Add `{flag}`"),
                                edits: vec![e],
                            });
                        }
                        out.push(d);
                    }
                    Some(s) => {
                        if let Resolved::Literal(v) = &s.value {
                            if is_loopback(v) {
                                let mut d = Diagnostic::new(Rule::TorchrunMissingMasterAddr, s.range, format!("`--master-addr` is `{v}`, a loopback address: the other nodes cannot reach it"))
                                    .with_help("use the head node's address: `\"$MULTINODE_NODE_IP\"`");
                                if s.literal_in_place && !s.from_env {
                                    d = d.with_fix(Fix::replace(
                                        "Use `$MULTINODE_NODE_IP`",
                                        s.range,
                                        addr,
                                    ));
                                }
                                out.push(d);
                            }
                        }
                    }
                }
            } else if let Some(s) = torchrun_setting(inv, args, env, "rdzv-endpoint") {
                if let Resolved::Literal(v) = &s.value {
                    let host = host_of(v);
                    if is_loopback(host) {
                        out.push(
                            Diagnostic::new(Rule::TorchrunMissingMasterAddr, s.range, format!("`--rdzv-endpoint` is `{v}`, a loopback address: the other nodes cannot reach it"))
                                .with_help("use the head node's address: `\"$MULTINODE_NODE_IP:29400\"`"),
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_and_hosts() {
        assert!(
            is_loopback("localhost")
                && is_loopback("127.0.0.1")
                && is_loopback("[::1]")
                && is_loopback("0.0.0.0")
        );
        assert!(!is_loopback("10.0.0.1") && !is_loopback("head-0"));
        assert_eq!(host_of("localhost:29400"), "localhost");
        assert_eq!(host_of("[::1]:29400"), "::1");
        assert_eq!(host_of("node1"), "node1");
    }
}
