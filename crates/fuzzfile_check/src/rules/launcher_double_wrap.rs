//! ## What it does
//! Reports a launcher (`torchrun`, `python -m torch.distributed.run`, `mpirun`/`mpiexec`,
//! `srun`, `horovodrun`, `deepspeed`, `exec_all`) in a job whose `multinode.implementation` is
//! `openmpi` (`ompi`), `mpich` or `gasnet`: Fuzzball already wraps the command in its own
//! launcher for those. An nccl-tests program (`all_reduce_perf`) is what such a job runs, not a
//! launcher (`mpi-slots-not-gpus` compares its GPUs).
//!
//! The fix switches the implementation to `generic` and makes every launch of the job right
//! under it, or is not offered: `generic` runs the command once, on the head node, so a
//! torchrun (or `python -m torch.distributed.run|launch`) is put behind `exec_all` (which
//! starts it on every node), and on more than one node gets what a multinode torchrun needs
//! and did not need under the wrapper: `--nnodes` (when absent), `--node-rank '$RANK'` and
//! `--master-addr "$MULTINODE_NODE_IP"` (in place of `--standalone`, a private rendezvous on
//! each node). No fix when a launch cannot be completed that way (another launcher, a
//! rendezvous backend other than `static`, a rank or address already set, arguments not all
//! known, a launch line not written out in the command list or the script), so the fix never
//! leaves a finding of `torchrun-standalone-multinode`, `launcher-missing-node-rank` or
//! `launcher-missing-master-addr` behind.
//!
//! Fix safety: unsafe: it changes the multinode implementation and the launch lines, so what
//! runs on each node changes.
//!
//! ## Why is this bad?
//! The command runs as many times as the outer launcher starts it, and each copy starts its own
//! inner launcher: `procs-per-node × nodes` torchruns (or mpiruns), oversubscribed GPUs and
//! rendezvous chaos. NCCL has no multinode implementation of its own: torchrun jobs use
//! `generic` and start torchrun on every node with `exec_all`.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     command: [torchrun, --nnodes=2, --nproc-per-node=4, train.py]
//!     multinode: {nodes: 2, implementation: openmpi}
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

use super::launcher_common::is_static;
use super::launcher_nnodes_mismatch::parse_nnodes;
use super::{Check, Context, TaskContext};
use crate::launch::{insert_flag, Launcher, Origin};
use crate::semantics::Launch;
use fuzzfile_diagnostics::{Diagnostic, Edit, Fix, Rule, TextRange};
use fuzzfile_model::Implementation;

declare_rule! {
    pub struct LauncherDoubleWrap {
        code: "FZ210",
        name: "launcher-double-wrap",
        severity: Error,
        category: Gpu,
        summary: "A launcher inside a multinode implementation that already wraps the command",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

impl Check for LauncherDoubleWrap {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = t.task;
        let Some(imp) = task
            .multinode
            .as_ref()
            .and_then(|m| m.implementation.as_ref())
        else {
            return;
        };
        if !imp.value.wraps_command() {
            return;
        }
        let outer = match imp.value {
            Implementation::Gasnet => "GASNet's launcher",
            _ => "mpirun",
        };
        // One fix for the whole job, shared by its findings: after it, every launch is right
        // under `generic`.
        let fix = to_generic(ctx, t, imp.range);
        let mut seen_exec_all = None;
        for inv in t.launches() {
            // The program an MPI implementation is there to start.
            if inv.launcher == Launcher::NcclTest {
                continue;
            }
            // An exec_all in front of a launcher: report the exec_all once, then the launcher.
            if let Some(r) = inv.exec_all {
                if seen_exec_all != Some(r) {
                    seen_exec_all = Some(r);
                    let mut d = Diagnostic::new(Rule::LauncherDoubleWrap, r, format!("`exec_all` is the helper of `implementation: generic`; under `{}` Fuzzball already starts the command on every node", imp.value.as_str()))
                        .with_label(imp.range, "this implementation wraps the command");
                    if let Some(f) = &fix {
                        d = d.with_fix(f.clone());
                    }
                    out.push(d);
                }
                if inv.launcher == Launcher::ExecAll {
                    continue;
                }
            }
            let word = inv.words.first().map_or(inv.range(), |w| w.range);
            let name = inv.launcher.name();
            let mut d = Diagnostic::new(
                Rule::LauncherDoubleWrap,
                word,
                format!("`{name}` inside `implementation: {}`: Fuzzball already runs the command under {outer}, so every rank starts its own `{name}`", imp.value.as_str()),
            )
            .with_label(imp.range, "this implementation wraps the command");
            match inv.launcher {
                Launcher::Torchrun | Launcher::DistributedLaunch | Launcher::Deepspeed => {
                    d = d.with_help(if inv.launcher == Launcher::Deepspeed {
                        "NCCL has no multinode implementation: use `implementation: generic` and give deepspeed the job's nodes (`--hostfile`), or start it on every node with `exec_all`".to_owned()
                    } else {
                        format!("NCCL has no multinode implementation: use `implementation: generic` and start `{name}` on every node with `exec_all`")
                    });
                    if let Some(f) = &fix {
                        d = d.with_fix(f.clone());
                    }
                }
                _ => {
                    d = d.with_help(format!("call the program directly and let `{}` launch it, or use `implementation: generic` to launch it yourself", imp.value.as_str()));
                }
            }
            out.push(d);
        }
    }
}

/// The fix of a job under a wrapping implementation: `implementation: generic`, with each
/// launch made right under it (see the rule's documentation), or `None` when one cannot be.
fn to_generic(ctx: &Context<'_>, t: &TaskContext<'_>, implementation: TextRange) -> Option<Fix> {
    let nodes = t.nodes.map_or(1, |(n, _)| n);
    let mut edits = vec![Edit {
        range: implementation,
        replacement: "generic".into(),
    }];
    let mut message = String::from("Use `implementation: generic`");
    let mut started = Vec::new();
    for inv in t.launches() {
        match inv.launcher {
            // Runs its command on every node under `generic` too.
            Launcher::ExecAll => {}
            Launcher::Torchrun | Launcher::DistributedLaunch => {
                let name = inv.launcher.name();
                let mut e = rendezvous_on_every_node(ctx, t, inv, nodes)?;
                edits.append(&mut e);
                if !started.contains(&name) {
                    started.push(name);
                }
            }
            // Another launcher (mpirun, srun, deepspeed, ...) or a program the implementation
            // was there to start: what it needs under `generic` is not a mechanical edit.
            _ => return None,
        }
    }
    if !started.is_empty() {
        let list: Vec<String> = started.iter().map(|n| format!("`{n}`")).collect();
        message.push_str(&format!(
            " and start {} on every node with `exec_all`",
            list.join(", ")
        ));
    }
    edits.sort_by(|a, b| {
        (a.range.start, a.range.end, &a.replacement).cmp(&(
            b.range.start,
            b.range.end,
            &b.replacement,
        ))
    });
    // One launch line read in several forms (a word of a few possible values) asks for the
    // same edit more than once.
    edits.dedup();
    // Edits of different launches must not touch.
    // (Two insertions at one point would depend on their order: none is made.)
    if edits
        .windows(2)
        .any(|w| w[0].range.end > w[1].range.start || w[0].range.start == w[1].range.start)
    {
        return None;
    }
    Some(Fix { message, edits, applicability: None })
}

/// The edits that make a torchrun launch right in a `generic` job of `nodes` nodes: `exec_all`
/// in front of it (when not there), and on several nodes `--nnodes` (when absent),
/// `--node-rank` and `--master-addr` (replacing `--standalone`). `None` when that cannot be
/// done with certainty.
fn rendezvous_on_every_node(
    ctx: &Context<'_>,
    t: &TaskContext<'_>,
    inv: &Launch,
    nodes: u64,
) -> Option<Vec<Edit>> {
    let args = inv.parsed.as_ref()?;
    if args.incomplete || !inv.via.is_empty() || !inv.environment.is_empty() {
        return None;
    }
    let first = inv.words.first()?;
    if !first.exact || first.expanded {
        return None;
    }
    let argv = match inv.origin {
        Origin::Argv => true,
        Origin::Script => false,
        // Inside a `sh -c` string or a shipped file the quoting is not the file's.
        Origin::ShellString | Origin::File => return None,
    };
    let mut edits = Vec::new();
    if inv.exec_all.is_none() {
        edits.push(exec_all_in_front(ctx, t, inv, argv)?);
    }
    if nodes <= 1 {
        return Some(edits);
    }
    if !is_static(inv)
        || inv.setting("rdzv-endpoint").is_some()
        || inv.setting("node-rank").is_some()
        || inv.setting("master-addr").is_some()
    {
        return None;
    }
    let mut flags = Vec::new();
    match inv.setting("nnodes") {
        None => flags.push(format!("--nnodes={nodes}")),
        Some(s) => {
            let admits = s.value.choices().is_some_and(|c| {
                c.iter()
                    .all(|v| parse_nnodes(v).is_some_and(|(lo, hi)| lo <= nodes && nodes <= hi))
            });
            if !admits {
                return None;
            }
        }
    }
    if argv {
        flags.push("--node-rank=$RANK".into());
        flags.push("--master-addr=$MULTINODE_NODE_IP".into());
    } else {
        flags.push("--node-rank '$RANK'".into());
        flags.push("--master-addr \"$MULTINODE_NODE_IP\"".into());
    }
    match args.get("standalone") {
        Some(f) => {
            // The flag word itself, written out as `--standalone`.
            let word = inv.words.iter().find(|w| w.range == f.flag_range)?;
            if !word.exact || word.expanded || word.range.slice(ctx.text) != "--standalone" {
                return None;
            }
            edits.push(replace_word(ctx, t, word.range, &flags, argv)?);
        }
        None => {
            let mut joined: Option<Edit> = None;
            for flag in &flags {
                let e = insert_flag(ctx.text, ctx.tree, t.task, inv, flag)?;
                match &mut joined {
                    Some(j) if j.range == e.range => j.replacement.push_str(&e.replacement),
                    Some(_) => return None,
                    None => joined = Some(e),
                }
            }
            edits.extend(joined);
        }
    }
    Some(edits)
}

/// `exec_all` in front of the launch: a first item of the command list, or a word before the
/// launcher in the script.
fn exec_all_in_front(
    ctx: &Context<'_>,
    t: &TaskContext<'_>,
    inv: &Launch,
    argv: bool,
) -> Option<Edit> {
    let first = inv.words.first()?;
    if !argv {
        return Some(Edit {
            range: TextRange::empty(first.range.start),
            replacement: "exec_all ".into(),
        });
    }
    let seq = t.task.command.as_ref()?.node;
    let items = ctx.tree.items(seq)?;
    let item = ctx.tree.node(*items.first()?).range;
    // The launcher must be the command list's program.
    if !(item.start <= first.range.start && first.range.end <= item.end) {
        return None;
    }
    Some(Edit {
        range: TextRange::empty(item.start),
        replacement: format!("exec_all{}", item_separator(ctx, seq, item)?),
    })
}

/// What stands between two items of the command list `seq`, written as `item` is: `, ` in a
/// flow list, a line break and the item's indentation and dash in a block list.
fn item_separator(
    ctx: &Context<'_>,
    seq: fuzzfile_syntax::NodeId,
    item: TextRange,
) -> Option<String> {
    Some(match &ctx.tree.node(seq).kind {
        fuzzfile_syntax::NodeKind::Sequence {
            style: fuzzfile_syntax::CollectionStyle::Flow,
            ..
        } => ", ".to_owned(),
        _ => format!(
            "{}{}",
            fuzzfile_diagnostics::newline_of(ctx.text),
            block_prefix(ctx.text, item)?
        ),
    })
}

/// The text from the start of a block list item's line to the item (`      - `), when it is
/// only indentation and the dash.
fn block_prefix(text: &str, item: TextRange) -> Option<String> {
    let ls = fuzzfile_diagnostics::line_start_at(text, item.start as usize);
    let prefix = text.get(ls..item.start as usize)?;
    let dash = prefix.trim_start_matches(' ');
    (dash.starts_with('-') && dash[1..].bytes().all(|b| b == b' ')).then(|| prefix.to_owned())
}

/// Replace the word at `range` with `flags`: words of the script, or items of the command list.
fn replace_word(
    ctx: &Context<'_>,
    t: &TaskContext<'_>,
    range: TextRange,
    flags: &[String],
    argv: bool,
) -> Option<Edit> {
    if !argv {
        return Some(Edit {
            range,
            replacement: flags.join(" "),
        });
    }
    let seq = t.task.command.as_ref()?.node;
    let item = ctx
        .tree
        .items(seq)?
        .iter()
        .map(|&i| ctx.tree.node(i).range)
        .find(|r| r.start <= range.start && range.end <= r.end)?;
    let separator = item_separator(ctx, seq, item)?;
    Some(Edit {
        range: item,
        replacement: flags.join(&separator),
    })
}
