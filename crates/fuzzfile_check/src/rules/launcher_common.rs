//! What the launcher rules (`launcher_*`, `torchrun_*`, `gpu_request_missing`) share; not a
//! rule: how a finding names the launcher and its flags, whether the rendezvous is torchrun's
//! static one, and the fix that adds a missing flag.

use super::Context;
use crate::launch::{insert_flag, Launcher};
use crate::semantics::Launch;
use fuzzfile_diagnostics::{Diagnostic, Fix};
use fuzzfile_model::Task;

/// The launcher as the job writes it, for messages (`torchrun`, `accelerate launch`, `fabric
/// run`, `deepspeed`).
pub fn launcher_name(inv: &Launch) -> String {
    match inv.launcher {
        Launcher::Torchrun | Launcher::DistributedLaunch => "torchrun".to_owned(),
        _ => inv
            .words
            .get(..inv.args_start)
            .map(|w| {
                w.iter()
                    .map(|w| w.text.rsplit('/').next().unwrap_or(&w.text))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_else(|| inv.launcher.name().to_owned()),
    }
}

/// The flag a finding names for a launcher-independent setting (`nnodes`, `nproc-per-node`,
/// `node-rank`, `master-addr`): as written ([`Launch::flag_name`]), except that a `PET_*`
/// variable standing in for it names the torchrun flag it stands for (`--nnodes`).
pub fn flag_named(inv: &Launch, setting: &str) -> String {
    match inv.setting(setting) {
        Some(s) if s.from_env => format!("--{setting}"),
        _ => inv.flag_name(setting),
    }
}

/// Whether the rendezvous backend is the default `static` one (in every case the value may
/// take).
pub fn is_static(inv: &Launch) -> bool {
    match inv.setting("rdzv-backend").map(|s| &s.value) {
        None => true,
        Some(v) => v
            .choices()
            .is_some_and(|c| c.iter().all(|b| *b == "static")),
    }
}

/// `d` with the fix that adds `flag` (`--nnodes=2`) to the launcher's own arguments, where
/// [`insert_flag`] can write it in place; `d` as it is otherwise.
pub fn with_flag_added(
    d: Diagnostic,
    ctx: &Context<'_>,
    task: &Task,
    inv: &Launch,
    flag: &str,
) -> Diagnostic {
    match insert_flag(ctx.text, ctx.tree, task, inv, flag) {
        Some(e) => d.with_fix(Fix {
            message: format!("Add `{flag}`"),
            edits: vec![e],
            applicability: None,
        }),
        None => d,
    }
}
