//! ## What it does
//! Reports a launcher (`torchrun`, `python -m torch.distributed.run`, `mpirun`/`mpiexec`,
//! `srun`, `deepspeed`, `exec_all`) in a job whose `multinode.implementation` is `openmpi`
//! (`ompi`), `mpich` or `gasnet`: Fuzzball already wraps the command in its own launcher for
//! those. For torchrun and `exec_all` the fix switches the implementation to `generic`.
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

use super::{Check, Context, TaskContext};
use crate::launch::Launcher;
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};
use fuzzfile_model::Implementation;

declare_rule! {
    pub struct LauncherDoubleWrap {
        code: "FZ210",
        name: "launcher-double-wrap",
        severity: Error,
        category: Gpu,
        summary: "A launcher inside a multinode implementation that already wraps the command",
        fix: Sometimes,
    }
}

impl Check for LauncherDoubleWrap {
    fn task(&self, _ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
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
                    out.push(
                        Diagnostic::new(Rule::LauncherDoubleWrap, r, format!("`exec_all` is the helper of `implementation: generic`; under `{}` Fuzzball already starts the command on every node", imp.value.as_str()))
                            .with_label(imp.range, "this implementation wraps the command")
                            .with_fix(Fix::replace("Use `implementation: generic`", imp.range, "generic")),
                    );
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
                    d = d
                        .with_help("NCCL has no multinode implementation: use `implementation: generic` and start torchrun on every node with `exec_all`")
                        .with_fix(Fix::replace("Use `implementation: generic`", imp.range, "generic"));
                }
                _ => {
                    d = d.with_help(format!("call the program directly and let `{}` launch it, or use `implementation: generic` to launch it yourself", imp.value.as_str()));
                }
            }
            out.push(d);
        }
    }
}
