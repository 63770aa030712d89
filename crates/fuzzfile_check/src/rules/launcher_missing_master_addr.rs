//! ## What it does
//! In a job on more than one node, checks that torchrun has an address every node can reach:
//! `--master-addr` (or `PET_MASTER_ADDR`) for the default `static` rendezvous, the host of
//! `--rdzv-endpoint` otherwise. A missing address (torchrun's default is `127.0.0.1`) or a
//! loopback one (`localhost`, `127.x.x.x`, `::1`, `0.0.0.0`) is reported. Fuzzball's
//! `$MULTINODE_NODE_IP`, expanded on the head node, is the head's address; expanded anywhere
//! else it is not: single-quoted in a `script:` (`'$MULTINODE_NODE_IP'`) it reaches torchrun as
//! that text, since `exec_all` substitutes only `$RANK`, and in a shell that `exec_all` starts
//! on each node (`exec_all bash -c '... $MULTINODE_NODE_IP ...'`) it is each node's own address.
//! Both are reported. A value not known before the run (`$(hostname -i)`) is no finding.
//!
//! ## Launchers
//! Each launcher by its own flag, as its argument parser reads it (messages and fixes use the
//! launcher's own spelling):
//! - torchrun, `python -m torch.distributed.run` and `tune run`: `get_args_parser` in
//!   torch/distributed/run.py
//!   (<https://github.com/pytorch/pytorch/blob/010929fd3f401c3868310396e6a91ed95aa0305b/torch/distributed/run.py>):
//!   `--master-addr` (`PET_MASTER_ADDR`), default 127.0.0.1; the host of `--rdzv-endpoint`
//!   otherwise.
//! - `accelerate launch` (and `python -m accelerate.commands.launch`): `launch_command_parser` in
//!   src/accelerate/commands/launch.py and `prepare_multi_gpu_env` in
//!   src/accelerate/utils/launch.py
//!   (<https://github.com/huggingface/accelerate/blob/v1.14.0/src/accelerate/commands/launch.py>):
//!   `--main_process_ip` (or `main_process_ip` in its config file), given to torchrun as the
//!   rendezvous endpoint's host (the master address with `--same_network`); without it torchrun
//!   gets `None`.
//! - `fabric run` and `lightning run model`: the click command `_run` in
//!   src/lightning/fabric/cli.py
//!   (<https://github.com/Lightning-AI/pytorch-lightning/blob/2.6.5/src/lightning/fabric/cli.py>):
//!   `--main-address` / `--main_address`, default 127.0.0.1.
//! - `deepspeed`: `parse_args` and `main` in deepspeed/launcher/runner.py
//!   (<https://github.com/microsoft/DeepSpeed/blob/v0.16.4/deepspeed/launcher/runner.py>):
//!   `--master_addr` with `--no_ssh`; without it deepspeed asks the first host of its hostfile over
//!   ssh. Started once with a hostfile, deepspeed finds the address itself, and without a hostfile
//!   it runs on one node: neither is checked here.
//!
//! Fix safety: unsafe: it changes a launcher's arguments (where the nodes meet).
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

use super::launcher_common::{flag_named, is_static, launcher_name, with_flag_added};
use super::{Check, Context, TaskContext};
use crate::launch::{Launcher, Origin};
use crate::semantics::{Reach, Resolved, Setting, Site};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};

declare_rule! {
    pub struct LauncherMissingMasterAddr {
        code: "FZ205",
        name: "launcher-missing-master-addr",
        severity: Error,
        category: Gpu,
        summary: "Multinode launch without a reachable master or rendezvous address",
        fix: Sometimes,
        fix_safety: Unsafe,
        aliases: ["torchrun-missing-master-addr"],
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

/// Why an address given to torchrun is not the head's address on every node, if it is not.
fn not_the_heads(s: &Setting, flag: &str, launcher: &str) -> Option<(String, &'static str)> {
    let ip = "MULTINODE_NODE_IP";
    match &s.value {
        Resolved::Runtime { name, site: Site::EachNode } if name == ip => Some((
            format!("`{flag}` is `${ip}` expanded on each node: every node takes its own address for the master's"),
            "expand it on the head node, where `exec_all` is called: `\"$MULTINODE_NODE_IP\"` outside the quoted command",
        )),
        Resolved::Template { text, site: Site::EachNode } if text.contains(ip) => Some((
            format!("`{flag}` is `{text}` expanded on each node: every node takes its own address for the master's"),
            "expand `$MULTINODE_NODE_IP` on the head node, where `exec_all` is called",
        )),
        Resolved::Literal(v) if v.contains('$') => Some((
            format!("`{flag}` reaches {launcher} as the text `{v}`: no shell expands it (single quotes keep it from the head's shell, and `exec_all` substitutes only `$RANK`)"),
            "use double quotes so that the head node's shell expands it: `\"$MULTINODE_NODE_IP\"`",
        )),
        _ => None,
    }
}

impl Check for LauncherMissingMasterAddr {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = t.task;
        let Some((n, nodes_range)) = t.facts.generic_multinode() else {
            return;
        };
        for (inv, args) in t.distributed() {
            if args.has("standalone") || inv.reach() != Reach::EachNode {
                continue;
            }
            let name = launcher_name(inv);
            let flag = flag_named(inv, "master-addr");
            let argv = inv.origin == Origin::Argv;
            let addr = if argv {
                "$MULTINODE_NODE_IP"
            } else {
                "\"$MULTINODE_NODE_IP\""
            };
            let endpoint = inv.setting("rdzv-endpoint");
            if is_static(inv) && endpoint.is_none() {
                let Some(s) = inv.setting("master-addr") else {
                    if args.incomplete {
                        continue; // an unknown argument may give it
                    }
                    let fixed = if argv {
                        format!("{flag}=$MULTINODE_NODE_IP")
                    } else {
                        format!("{flag} {addr}")
                    };
                    let consequence = match inv.launcher {
                        Launcher::Accelerate => "accelerate launch gives torchrun `None` as the master's address".to_owned(),
                        Launcher::Deepspeed => format!("each of the {n} nodes looks the master up with `ssh <first host> hostname -I`, which a `--no_ssh` job cannot count on"),
                        _ => format!("each of the {n} nodes looks for the master at 127.0.0.1"),
                    };
                    let d = Diagnostic::new(
                        Rule::LauncherMissingMasterAddr,
                        inv.range(),
                        format!("multinode {name} without `{flag}`: {consequence}"),
                    )
                    .with_label(nodes_range, format!("{n} nodes"))
                    .with_help(format!("add `{fixed}` (the head node's address)"));
                    out.push(with_flag_added(d, ctx, task, inv, &fixed));
                    continue;
                };
                if let Some(choices) = s.value.choices() {
                    if choices.iter().all(|v| is_loopback(v)) {
                        let v = s.value.display();
                        let mut d = Diagnostic::new(Rule::LauncherMissingMasterAddr, s.at(), format!("`{flag}` is `{v}`, a loopback address: the other nodes cannot reach it"))
                            .with_help("use the head node's address: `\"$MULTINODE_NODE_IP\"`");
                        if s.literal_in_place && !s.from_env && choices.len() == 1 {
                            d = d.with_fix(Fix::replace("Use `$MULTINODE_NODE_IP`", s.range, addr));
                        }
                        out.push(d);
                        continue;
                    }
                }
                if let Some((message, help)) = not_the_heads(s, &flag, &name) {
                    let mut d =
                        Diagnostic::new(Rule::LauncherMissingMasterAddr, s.written, message)
                            .with_help(help);
                    if s.in_place
                        && inv.origin == Origin::Script
                        && s.written.slice(ctx.text) == "'$MULTINODE_NODE_IP'"
                    {
                        d = d.with_fix(Fix::replace(
                            "Use `\"$MULTINODE_NODE_IP\"`",
                            s.written,
                            "\"$MULTINODE_NODE_IP\"",
                        ));
                    }
                    out.push(d);
                }
            } else if let Some(s) = endpoint {
                if let Some(choices) = s.value.choices() {
                    if choices.iter().all(|v| is_loopback(host_of(v))) {
                        let v = s.value.display();
                        out.push(
                            Diagnostic::new(Rule::LauncherMissingMasterAddr, s.at(), format!("`--rdzv-endpoint` is `{v}`, a loopback address: the other nodes cannot reach it"))
                                .with_help("use the head node's address: `\"$MULTINODE_NODE_IP:29400\"`"),
                        );
                        continue;
                    }
                }
                if let Some((message, help)) = not_the_heads(s, "--rdzv-endpoint", &name) {
                    out.push(
                        Diagnostic::new(Rule::LauncherMissingMasterAddr, s.written, message)
                            .with_help(help),
                    );
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
