//! The launchers the semantics layer recognises, and the edit that adds a flag to a launch
//! line. The launches themselves, their evaluated arguments and every fact derived from them
//! are in [`crate::semantics`].

use crate::semantics::Launch;
use fuzzfile_diagnostics::TextRange;
use fuzzfile_model::Task;
use fuzzfile_syntax::Tree;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Launcher {
    /// `torchrun`, or `python -m torch.distributed.run`.
    Torchrun,
    /// `python -m torch.distributed.launch` (deprecated).
    DistributedLaunch,
    /// `mpirun`, `mpiexec`, `mpiexec.hydra`, `orterun`.
    Mpirun,
    /// Fuzzball's generic multinode helper: runs the rest once per node with `RANK` set.
    ExecAll,
    /// `srun` inside a job (Slurm's launcher).
    Srun,
    /// DeepSpeed's `deepspeed` runner.
    Deepspeed,
    /// Hugging Face `accelerate launch`.
    Accelerate,
    /// Lightning's `lightning run model` / `fabric run`.
    Lightning,
    /// Horovod's `horovodrun`.
    Horovodrun,
    /// An nccl-tests program (`all_reduce_perf`, ...) started directly: one process driving
    /// `-g` GPUs.
    NcclTest,
}

impl Launcher {
    /// Starts one group of processes per node that meet at a master address and need the
    /// node count, each node's rank and that address (torchrun and its front ends: `accelerate
    /// launch`, `fabric run`; deepspeed, whose [`Launch::reach`](crate::semantics::Launch::reach)
    /// says whether it is started on each node).
    pub fn rendezvous(self) -> bool {
        matches!(
            self,
            Launcher::Torchrun
                | Launcher::DistributedLaunch
                | Launcher::Accelerate
                | Launcher::Lightning
                | Launcher::Deepspeed
        )
    }
    pub fn name(self) -> &'static str {
        match self {
            Launcher::Torchrun => "torchrun",
            Launcher::NcclTest => "nccl-tests",
            Launcher::DistributedLaunch => "torch.distributed.launch",
            Launcher::Mpirun => "mpirun",
            Launcher::ExecAll => "exec_all",
            Launcher::Srun => "srun",
            Launcher::Deepspeed => "deepspeed",
            Launcher::Accelerate => "accelerate launch",
            Launcher::Lightning => "fabric run",
            Launcher::Horovodrun => "horovodrun",
        }
    }
}

/// Where a command line was written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Origin {
    /// The YAML list `command:`.
    Argv,
    /// A `sh -c` string inside `command:`.
    ShellString,
    Script,
    /// A file the job ships (`files:`) and runs or sources.
    File,
}

/// An edit that adds `flag` (`--nnodes=2`) to the launcher's own arguments, right after the
/// launcher word, keeping everything else byte for byte. `None` when the words are not exact
/// in the file (an escaped or folded spelling a fix could break).
pub fn insert_flag(
    text: &str,
    tree: &Tree,
    task: &Task,
    inv: &Launch,
    flag: &str,
) -> Option<fuzzfile_diagnostics::Edit> {
    let last = inv.words.get(inv.args_start.checked_sub(1)?)?;
    // Only where the launch line is written out in place: inside a nested shell string, an
    // `eval`'d value or an array, the quoting the flag needs is not the script's.
    if !last.exact || last.expanded || !inv.via.is_empty() {
        return None;
    }
    match inv.origin {
        Origin::Script | Origin::ShellString | Origin::File => Some(fuzzfile_diagnostics::Edit {
            range: TextRange::empty(last.range.end),
            replacement: format!(" {flag}"),
        }),
        Origin::Argv => {
            let seq = task.command.as_ref()?.node;
            let style = match &tree.node(seq).kind {
                fuzzfile_syntax::NodeKind::Sequence { style, .. } => *style,
                _ => return None,
            };
            // The item's node range includes quotes; insert after it.
            let item = tree
                .items(seq)?
                .iter()
                .map(|&i| tree.node(i).range)
                .find(|r| r.start <= last.range.start && last.range.end <= r.end)?;
            match style {
                fuzzfile_syntax::CollectionStyle::Flow => Some(fuzzfile_diagnostics::Edit {
                    range: TextRange::empty(item.end),
                    replacement: format!(", {}", yaml_item(flag)),
                }),
                fuzzfile_syntax::CollectionStyle::Block => {
                    let line_start = fuzzfile_diagnostics::line_start_at(text, item.start as usize);
                    let prefix = &text[line_start..item.start as usize];
                    if !prefix.trim_end().ends_with('-') || !prefix.trim_start().starts_with('-') {
                        return None;
                    }
                    let line_end = fuzzfile_diagnostics::line_end_at(text, item.end as usize);
                    Some(fuzzfile_diagnostics::Edit {
                        range: TextRange::from_usize(line_end, line_end),
                        replacement: format!(
                            "{}{prefix}{}",
                            fuzzfile_diagnostics::newline_of(text),
                            yaml_item(flag)
                        ),
                    })
                }
            }
        }
    }
}

/// `s` as a YAML flow or block sequence item (quoted when plain would change its meaning).
fn yaml_item(s: &str) -> String {
    let plain_ok = !s.is_empty()
        && !s.starts_with([
            '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%',
            '@', '`',
        ])
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.contains([',', '[', ']', '{', '}']);
    if plain_ok || (s.starts_with("--") && !s.contains([',', '[', ']', '{', '}', '#', ' '])) {
        s.to_owned()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}
