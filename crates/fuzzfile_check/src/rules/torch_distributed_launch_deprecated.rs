//! ## What it does
//! Reports `python -m torch.distributed.launch`, in a `command:` list, a `sh -c` string or a
//! script. When the launch passes `--use-env` (the script reads `LOCAL_RANK` from the
//! environment), the fix switches to `-m torch.distributed.run` and drops `--use-env`, which
//! torchrun does not accept; without `--use-env` there is no fix, because the script then
//! expects a `--local-rank` argument that torchrun does not pass.
//!
//! Fix safety: unsafe: it changes the launcher module and its arguments.
//!
//! ## Why is this bad?
//! `torch.distributed.launch` is deprecated (`FutureWarning: The module
//! torch.distributed.launch is deprecated and will be removed in future. Use torchrun.`).
//! It is a thin layer over `torch.distributed.run` (torchrun) that, unless given `--use-env`,
//! passes each worker `--local-rank=N` (`--local_rank` in older releases) on its command line;
//! torchrun sets `LOCAL_RANK` in the environment instead.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     command: [python, -m, torch.distributed.launch, --use-env, --nproc-per-node=4, train.py]
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     command: [python, -m, torch.distributed.run, --nproc-per-node=4, train.py]
//! ```

use super::{Check, Context, TaskContext};
use crate::edits::delete_sequence_item;
use crate::launch::{Launcher, Origin};
use crate::semantics::LaunchWord;
use fuzzfile_diagnostics::{Diagnostic, Edit, Fix, Rule, TextRange};

declare_rule! {
    pub struct TorchDistributedLaunchDeprecated {
        code: "FZ207",
        name: "torch-distributed-launch-deprecated",
        severity: Warning,
        category: Gpu,
        summary: "`python -m torch.distributed.launch` is deprecated in favour of torchrun",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

/// An edit removing the word `w` of a shell string or script with one space next to it.
fn delete_shell_word(text: &str, w: &LaunchWord) -> Option<Edit> {
    if !w.exact || w.expanded {
        return None;
    }
    let r = w.range.as_usize();
    let bytes = text.as_bytes();
    let range = if r.start > 0 && bytes.get(r.start - 1) == Some(&b' ') {
        TextRange::from_usize(r.start - 1, r.end)
    } else if bytes.get(r.end) == Some(&b' ') {
        TextRange::from_usize(r.start, r.end + 1)
    } else {
        return None;
    };
    Some(Edit {
        range,
        replacement: String::new(),
    })
}

impl Check for TorchDistributedLaunchDeprecated {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = t.task;
        for (inv, args) in t.distributed() {
            if inv.launcher != Launcher::DistributedLaunch {
                continue;
            }
            let Some(module) = inv.args_start.checked_sub(1).and_then(|i| inv.words.get(i)) else {
                continue;
            };
            let use_env = args.get("use-env");
            let mut d = Diagnostic::new(
                Rule::TorchDistributedLaunchDeprecated,
                module.range,
                "`torch.distributed.launch` is deprecated: use torchrun (`python -m torch.distributed.run`)",
            );
            if use_env.is_none() {
                d = d.with_help(
                    "torchrun does not pass `--local-rank` to the script: read `LOCAL_RANK` from the environment (`int(os.environ[\"LOCAL_RANK\"])`), then replace `-m torch.distributed.launch` by `-m torch.distributed.run` (or call `torchrun`)",
                );
                out.push(d);
                continue;
            }
            d = d.with_help(
                "with `--use-env` the script already reads `LOCAL_RANK` from the environment, as under torchrun; torchrun has no `--use-env` flag",
            );
            // The fix: rename the module, drop `--use-env`.
            let flag_word = use_env.and_then(|f| {
                inv.args()
                    .iter()
                    .position(|w| w.range == f.flag_range)
                    .map(|i| (i, &inv.args()[i]))
            });
            let mut edits = Vec::new();
            if module.exact
                && !module.expanded
                && inv.via.is_empty()
                && module.range.slice(ctx.text) == "torch.distributed.launch"
            {
                edits.push(Edit {
                    range: module.range,
                    replacement: "torch.distributed.run".into(),
                });
            }
            let removal = match (inv.origin, flag_word) {
                (_, None) => None,
                (Origin::Argv, Some((_, w))) => task.command.as_ref().and_then(|cmd| {
                    let index = cmd.value.iter().position(|item| {
                        let r = ctx.tree.node(item.node).range;
                        r.start <= w.range.start && w.range.end <= r.end
                    })?;
                    delete_sequence_item(ctx.text, ctx.tree, cmd.node, index)
                }),
                (_, Some((_, w))) => delete_shell_word(ctx.text, w),
            };
            if let (1, Some(r)) = (edits.len(), removal) {
                edits.push(r);
                d = d.with_fix(Fix {
                    message: "Use `torch.distributed.run` and drop `--use-env`".into(),
                    edits,
                    applicability: None,
                });
            }
            out.push(d);
        }
    }
}
