//! ## What it does
//! Reports MPI launches whose rank count follows Fuzzball's slot count while the slots are not
//! the GPUs: `mpirun -np $MULTINODE_TOTAL_SLOTS` or `-H $MULTINODE_HOSTLIST` in a job that
//! requests GPUs, when `multinode.procs-per-node` is unset (slots then default to the CPU cores
//! of the container) or differs from the GPUs per node. A count of ranks per node (`-N`,
//! `--npernode`, `-ppn`, `--map-by ppr:N:node`) places the ranks whatever the host list's slots
//! are, so only `-np $MULTINODE_TOTAL_SLOTS` is reported then. The fix sets `procs-per-node` to
//! the GPU count.
//!
//! ## Why is this bad?
//! A job with 16 cores and 4 GPUs per node starts 16 ranks per node on 4 GPUs: NCCL programs
//! such as nccl-tests (`-g 1`, one GPU per rank) oversubscribe the GPUs or fail.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   nccl-tests:
//!     command: [mpirun, -H, $MULTINODE_HOSTLIST, --mca, plm_rsh_agent, $MULTINODE_SSH_WRAPPER, -np, $MULTINODE_TOTAL_SLOTS, all_reduce_perf, -g, "1"]
//!     resource:
//!       cpu: {cores: 16}
//!       devices: {nvidia.com/gpu: 4}
//!     multinode: {nodes: 2, implementation: generic}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   nccl-tests:
//!     command: [mpirun, -H, $MULTINODE_HOSTLIST, --mca, plm_rsh_agent, $MULTINODE_SSH_WRAPPER, -np, $MULTINODE_TOTAL_SLOTS, all_reduce_perf, -g, "1"]
//!     resource:
//!       cpu: {cores: 16}
//!       devices: {nvidia.com/gpu: 4}
//!     multinode: {nodes: 2, implementation: generic, procs-per-node: 4}
//! ```

use super::{Check, Context, TaskContext};
use crate::edits::add_mapping_entry;
use crate::launch::Launcher;
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule, TextRange};

declare_rule! {
    pub struct MpiSlotsNotGpus {
        code: "FZ211",
        name: "mpi-slots-not-gpus",
        severity: Error,
        category: Gpu,
        summary: "MPI ranks follow the slot count (CPU cores by default), not the GPU count",
        fix: Sometimes,
    }
}

impl Check for MpiSlotsNotGpus {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = t.task;
        let Some(mn) = &task.multinode else { return };
        let Some((gpus, gpu_range)) = t.gpus.filter(|g| g.0 > 0) else {
            return;
        };
        let ppn = mn.procs_per_node.as_ref();
        if ppn.is_some_and(|p| p.value == gpus) {
            return;
        }
        for inv in t.launches() {
            if inv.launcher != Launcher::Mpirun {
                continue;
            }
            let Some(m) = &inv.parsed else { continue };
            // A count of ranks per node (`-N 8`, `--npernode 8`, `-ppn 8`, `--map-by
            // ppr:8:node`) places them whatever the slots of the host list are (but not a
            // total of `$MULTINODE_TOTAL_SLOTS` ranks).
            let per_node = m.get_any(&["N", "npernode", "ppn", "pernode"]).is_some()
                || m.get_any(&["map-by"]).and_then(|f| f.value.as_ref()).is_some_and(|v| {
                    v.text.to_ascii_lowercase().starts_with("ppr:")
                });

            let uses_slots = |names: &[&str], var: &str| {
                m.get_any(names)
                    .and_then(|f| f.value.as_ref())
                    .filter(|v| v.text.contains(var))
                    .map(|v| v.range)
            };
            let at: Option<TextRange> = uses_slots(&["np", "n", "c"], "MULTINODE_TOTAL_SLOTS")
                .or_else(|| {
                    (!per_node)
                        .then(|| uses_slots(&["H", "host", "hosts"], "MULTINODE_HOSTLIST"))
                        .flatten()
                });
            let Some(at) = at else { continue };
            let slots = match ppn {
                Some(p) => format!("`procs-per-node` is {}", p.value),
                None => {
                    let cores = task
                        .resource
                        .as_ref()
                        .and_then(|r| r.cores.as_ref())
                        .map(|c| format!(" ({} here)", c.value))
                        .unwrap_or_default();
                    format!("`procs-per-node` is unset, so the slots are the CPU cores{cores}")
                }
            };
            let mut d = Diagnostic::new(Rule::MpiSlotsNotGpus, at, format!("MPI starts one rank per slot and {slots}, but the job has {gpus} GPUs per node"))
                .with_label(gpu_range, format!("{gpus} GPUs per node"))
                .with_help(format!("set `procs-per-node: {gpus}` in `multinode` so there is one rank per GPU"));
            let edit = match ppn {
                Some(p) => Some(fuzzfile_diagnostics::Edit {
                    range: p.range,
                    replacement: gpus.to_string(),
                }),
                None => ctx.tree.get(task.body, "multinode").and_then(|e| {
                    add_mapping_entry(
                        ctx.text,
                        ctx.tree,
                        e.value,
                        "procs-per-node",
                        &gpus.to_string(),
                    )
                }),
            };
            if let Some(e) = edit {
                d = d.with_fix(Fix {
                    message: format!("Set `procs-per-node: {gpus}`"),
                    edits: vec![e],
                });
            }
            out.push(d);
            break;
        }
    }
}
