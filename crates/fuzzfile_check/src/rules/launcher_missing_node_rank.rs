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
//! ## Launchers
//! Each launcher by its own flag, as its argument parser reads it (messages and fixes use the
//! launcher's own spelling):
//! - torchrun, `python -m torch.distributed.run` and `tune run`: `get_args_parser` in
//!   torch/distributed/run.py
//!   (<https://github.com/pytorch/pytorch/blob/010929fd3f401c3868310396e6a91ed95aa0305b/torch/distributed/run.py>):
//!   `--node-rank` (`PET_NODE_RANK`); not needed with a `c10d` or `etcd` rendezvous.
//! - `accelerate launch` (and `python -m accelerate.commands.launch`): `launch_command_parser` in
//!   src/accelerate/commands/launch.py and `prepare_multi_gpu_env` in
//!   src/accelerate/utils/launch.py
//!   (<https://github.com/huggingface/accelerate/blob/v1.14.0/src/accelerate/commands/launch.py>):
//!   `--machine_rank`, or `machine_rank` in its config file (the same file on every node: a
//!   constant); without either it stops at start-up, whatever the rendezvous.
//! - `fabric run` and `lightning run model`: the click command `_run` in
//!   src/lightning/fabric/cli.py
//!   (<https://github.com/Lightning-AI/pytorch-lightning/blob/2.6.5/src/lightning/fabric/cli.py>):
//!   `--node-rank` / `--node_rank`; default 0.
//! - `deepspeed`: `parse_args` and `main` in deepspeed/launcher/runner.py
//!   (<https://github.com/microsoft/DeepSpeed/blob/v0.16.4/deepspeed/launcher/runner.py>): with
//!   `--no_ssh`, `--node_rank` on each node (it rejects its default of -1); with a hostfile and no
//!   `--no_ssh`, deepspeed on the head node starts every host itself, so started on every node by
//!   `exec_all` it starts the whole job once per node (reported); without a hostfile it runs on one
//!   node (`torchrun-standalone-multinode`).
//!
//! Fix safety: unsafe: it changes a launcher's arguments (each node's rank, also where it only
//! quotes `$RANK` for `exec_all`).
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

use super::launcher_common::{flag_named, is_static, launcher_name, with_flag_added};
use super::{Check, Context, TaskContext};
use crate::launch::{Launcher, Origin};
use crate::semantics::{Launch, Reach, Resolved, Site};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};
use fuzzfile_model::Implementation;

declare_rule! {
    pub struct LauncherMissingNodeRank {
        code: "FZ204",
        name: "launcher-missing-node-rank",
        severity: Error,
        category: Gpu,
        summary: "Multinode launch without each node's rank (torchrun `--node-rank` and its kin) or a rendezvous that assigns ranks",
        fix: Sometimes,
        fix_safety: Unsafe,
        aliases: ["torchrun-missing-node-rank"],
    }
}

/// What a missing node rank does, by launcher.
fn without_rank(inv: &Launch, n: u64) -> String {
    match inv.launcher {
        Launcher::Accelerate => "accelerate launch stops at start-up (`prepare_multi_gpu_env` reads `int(machine_rank)`, and it is `None`)".to_owned(),
        Launcher::Deepspeed => "deepspeed stops at start-up (`--node_rank` defaults to -1, which `--no_ssh` rejects)".to_owned(),
        _ => format!("all {n} nodes claim rank 0"),
    }
}

impl Check for LauncherMissingNodeRank {
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
            let name = launcher_name(inv);
            match inv.reach() {
                Reach::OneNode => continue, // torchrun-standalone-multinode
                Reach::FromHead => {
                    // deepspeed with a hostfile starts every host itself: started on each node
                    // by `exec_all`, each node starts the whole job again.
                    let hostfile =
                        inv.launcher == Launcher::Deepspeed && inv.setting("hostfile").is_some();
                    if let (Some(at), true) = (inv.exec_all, hostfile) {
                        out.push(
                            Diagnostic::new(Rule::LauncherMissingNodeRank, inv.range(), format!("`exec_all` starts {name} on each of the {n} nodes, and each one starts the hosts of its hostfile itself: the job is started {n} times over"))
                                .with_label(at, "started on every node here")
                                .with_help(format!("start {name} once, on the head node (without `exec_all`); or give it `--no_ssh --node_rank '$RANK' --master_addr \"$MULTINODE_NODE_IP\"` so that each node runs its own part")),
                        );
                    }
                    continue;
                }
                Reach::EachNode => {}
            }
            if generic && inv.exec_all.is_none() {
                out.push(
                    Diagnostic::new(Rule::LauncherMissingNodeRank, inv.range(), format!("{name} runs on the head node only, but the job has {n} nodes"))
                        .with_label(nodes_range, format!("{n} nodes"))
                        .with_help(format!("a `generic` job runs its command once, on the head node: start {name} on every node with `exec_all {name} ... {} '$RANK'`", inv.flag_name("node-rank"))),
                );
                continue;
            }
            if !is_static(inv) {
                continue;
            }
            let flag = flag_named(inv, "node-rank");
            let Some(s) = inv.setting("node-rank") else {
                if args.incomplete {
                    continue; // an unknown argument may give it
                }
                let fixed = if inv.origin == Origin::Argv {
                    format!("{flag}=$RANK")
                } else {
                    format!("{flag} '$RANK'")
                };
                let backend = if inv.launcher.name() == "torchrun" {
                    ", or use `--rdzv-backend=c10d`"
                } else {
                    ""
                };
                let mut d = Diagnostic::new(
                    Rule::LauncherMissingNodeRank,
                    inv.range(),
                    format!(
                        "multinode {name} without `{flag}`: {}",
                        without_rank(inv, n)
                    ),
                )
                .with_label(nodes_range, format!("{n} nodes"))
                .with_help(format!(
                    "add `{fixed}` (`exec_all` sets `RANK` on each node){backend}"
                ));
                if inv.exec_all.is_some() {
                    d = with_flag_added(d, ctx, task, inv, &fixed);
                }
                out.push(d);
                continue;
            };
            if inv.exec_all.is_none() {
                continue;
            }
            let config = !s.from_env && !flag.starts_with('-');
            match &s.value {
                Resolved::Literal(_) | Resolved::OneOf(_) => {
                    let v = s.value.display();
                    let where_ = if config {
                        " in the launcher's config file"
                    } else {
                        ""
                    };
                    let mut d = Diagnostic::new(Rule::LauncherMissingNodeRank, s.at(), format!("`{flag}`{where_} is the constant `{v}` on every node that `exec_all` starts"));
                    if config {
                        let cli = match inv.launcher {
                            Launcher::Accelerate => "--machine_rank",
                            _ => "--node-rank",
                        };
                        d = d.with_help(format!("pass each node's rank on the command line, which wins over the config file: `{cli} '$RANK'`"));
                    } else {
                        d = d.with_help(format!(
                            "use the rank `exec_all` sets on each node: `{flag} '$RANK'`"
                        ));
                    }
                    out.push(d);
                }
                Resolved::Runtime {
                    name,
                    site: Site::Head,
                } if name == "RANK" => {
                    let written = s.written.slice(ctx.text);
                    let expansion = s.range.slice(ctx.text);
                    let mut d = Diagnostic::new(Rule::LauncherMissingNodeRank, s.at(), format!("`{expansion}` is expanded by the head node's shell before `exec_all` runs: every node gets the head's rank"))
                        .with_help(format!("quote it so that `exec_all` gives each node its own rank: `{flag} '$RANK'`"));
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
                Resolved::Template {
                    text,
                    site: Site::Head,
                } if text.contains("$RANK") => {
                    out.push(
                        Diagnostic::new(Rule::LauncherMissingNodeRank, s.written, format!("`{flag}` is `{text}` with `$RANK` expanded by the head node's shell before `exec_all` runs: every node gets the same rank"))
                            .with_help(format!("quote it so that `exec_all` gives each node its own rank: `{flag} '$RANK'`")),
                    );
                }
                _ => {}
            }
        }
    }
}
