//! ## What it does
//! Compares the processes an MPI-style launch places on each node, times the GPUs each of them
//! drives, with the GPUs the job requests per node (narrowed by `CUDA_VISIBLE_DEVICES` in the
//! launch's environment):
//! - `implementation: openmpi` (`ompi`) or `mpich`: Fuzzball itself starts `procs-per-node`
//!   ranks of the command on every node, and `procs-per-node` defaults to the CPU cores of the
//!   container (the plan shows the line: `mpirun --host job-0:16,job-1:16 -np 32 ...`). An
//!   nccl-tests program (`all_reduce_perf -g 1`) is compared exactly, `procs-per-node × -t ×
//!   -g` against the GPUs; another program with more ranks per node than GPUs is a warning
//!   (ranks may share a GPU on purpose: CUDA MPS, LAMMPS' GPU package).
//! - `mpirun` in a `generic` job: `-np $MULTINODE_TOTAL_SLOTS` or `-H $MULTINODE_HOSTLIST` places
//!   ranks by the slots of each node (`procs-per-node`, else the CPU cores), so with slots that
//!   are not the GPUs it is reported (a count of ranks per node, `-N`, `--npernode`, `-ppn`,
//!   `--map-by ppr:N:node`, places them whatever the slots are, so only
//!   `-np $MULTINODE_TOTAL_SLOTS` is reported then). When the program is an nccl-tests binary,
//!   the ranks on a node (the per-node count; the slots, up to `-np`; `-np` without a host
//!   list) times `-t × -g` are compared with the GPUs instead.
//! - an nccl-tests program started alone (one process, `-t × -g` GPUs), `horovodrun` (one
//!   GPU per process: `-np` on `localhost` without `-H`/`--hostfile`, else the slots of each
//!   host up to `-np`), and `srun` (`--ntasks-per-node`, or `--ntasks` over `--nodes`, times
//!   `--gpus-per-task`; `--gpus-per-node` and `--gres=gpu:N` against the GPUs per node,
//!   `-G`/`--gpus` against the GPUs of srun's `-N` nodes).
//!
//! More GPUs than the node has is an error; fewer (for the launches whose GPUs per process are
//! known) is a warning: GPUs idle. The fix sets `procs-per-node` where the ranks follow it.
//!
//! Argument parsing: Open MPI's and MPICH's `mpirun`/`mpiexec` options, nccl-tests'
//! `getopt_long` (NVIDIA/nccl-tests src/common.cu: `-t,--nthreads`, `-g,--ngpus`),
//! horovodrun's argparse (horovod/runner/launch.py `parse_args`), srun's options (srun(1),
//! Slurm src/common/slurm_opt.c).
//!
//! Fix safety: unsafe: it changes a resource request (`procs-per-node`, the MPI ranks per
//! node).
//!
//! ## Why is this bad?
//! A job with 16 cores and 4 GPUs per node starts 16 ranks per node on 4 GPUs: NCCL programs
//! such as nccl-tests (`-g 1`, one GPU per rank) oversubscribe the GPUs or fail; with fewer
//! ranks than GPUs, GPUs you pay for sit idle.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   nccl-tests:
//!     command: [all_reduce_perf, -b, 8M, -e, 1G, -g, "1"]
//!     resource:
//!       cpu: {cores: 16}
//!       devices: {nvidia.com/gpu: 4}
//!     multinode: {nodes: 2, implementation: openmpi}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   nccl-tests:
//!     command: [all_reduce_perf, -b, 8M, -e, 1G, -g, "1"]
//!     resource:
//!       cpu: {cores: 16}
//!       devices: {nvidia.com/gpu: 4}
//!     multinode: {nodes: 2, implementation: openmpi, procs-per-node: 4}
//! ```

use super::{Check, Context, TaskContext};
use crate::edits::add_mapping_entry;
use crate::launch::Launcher;
use crate::semantics::{Launch, Quantity, Resolved};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule, Severity, TextRange};

declare_rule! {
    pub struct MpiSlotsNotGpus {
        code: "FZ211",
        name: "mpi-slots-not-gpus",
        severity: Error,
        category: Gpu,
        summary: "MPI ranks per node (the slots: CPU cores by default) times the GPUs each drives differ from the GPUs per node",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

/// `1 GPU`, `2 GPUs`.
fn gpus_word(n: u64) -> String {
    if n == 1 {
        "1 GPU".into()
    } else {
        format!("{n} GPUs")
    }
}

/// The ranks per node that use `gpus` GPUs at `per_rank` each, when that is a whole number
/// of at least one.
fn ranks_for(gpus: u64, per_rank: u64) -> Option<u64> {
    (per_rank > 0 && gpus >= per_rank && gpus.is_multiple_of(per_rank)).then(|| gpus / per_rank)
}

/// `1 rank`, `2 ranks`.
fn ranks_word(n: u64) -> String {
    if n == 1 {
        "1 rank".into()
    } else {
        format!("{n} ranks")
    }
}

/// `d` with its help: `reason`, and where `procs-per-node: v` mends it (`mend`: `v` and what
/// it gives), that setting and the fix that writes it.
fn with_help(
    ctx: &Context<'_>,
    t: &TaskContext<'_>,
    d: Diagnostic,
    reason: String,
    mend: Option<(u64, String)>,
) -> Diagnostic {
    let Some((v, so)) = mend else {
        return d.with_help(reason);
    };
    let d = d.with_help(format!(
        "{reason}; set `procs-per-node: {v}` in `multinode` so {so}"
    ));
    match procs_per_node_fix(ctx, t, v) {
        Some(f) => d.with_fix(f),
        None => d,
    }
}

/// The fix that sets `procs-per-node` to `value`.
fn procs_per_node_fix(ctx: &Context<'_>, t: &TaskContext<'_>, value: u64) -> Option<Fix> {
    let task = t.task;
    let ppn = task.multinode.as_ref()?.procs_per_node.as_ref();
    let edit = match ppn {
        Some(p) => Some(fuzzfile_diagnostics::Edit {
            range: p.range,
            replacement: value.to_string(),
        }),
        None => ctx.tree.get(task.body, "multinode").and_then(|e| {
            add_mapping_entry(
                ctx.text,
                ctx.tree,
                e.value,
                "procs-per-node",
                &value.to_string(),
            )
        }),
    }?;
    Some(Fix {
        message: format!("Set `procs-per-node: {value}`"),
        edits: vec![edit],
        applicability: None,
    })
}

/// The GPUs a launch can use on a node: the job's, narrowed by `CUDA_VISIBLE_DEVICES`.
fn usable_gpus(l: &Launch, gpus: u64) -> u64 {
    l.visible_gpus.map_or(gpus, |(v, _)| v.min(gpus))
}

/// The ranks per node of Fuzzball's own launcher (`openmpi`, `mpich`): `procs-per-node`, else
/// the CPU cores.
fn fuzzball_ranks(t: &TaskContext<'_>) -> Option<(u64, String, TextRange)> {
    let mn = t.task.multinode.as_ref()?;
    let imp = mn.implementation.as_ref()?;
    match &mn.procs_per_node {
        Some(p) => Some((p.value, format!("`procs-per-node: {}`", p.value), p.range)),
        None => {
            let cores = t.facts.cores?;
            Some((
                cores,
                format!("`procs-per-node` unset: the {cores} CPU cores"),
                imp.range,
            ))
        }
    }
}

impl MpiSlotsNotGpus {
    /// `openmpi`/`mpich`: Fuzzball starts `procs-per-node` ranks of the command on every node.
    fn wrapped(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some((gpus, gpu_range)) = t.gpus.filter(|g| g.0 > 0) else {
            return;
        };
        let Some(imp) = t.facts.wrapped_by_fuzzball() else {
            return;
        };
        if !matches!(
            imp,
            fuzzfile_model::Implementation::OpenMpi { .. } | fuzzfile_model::Implementation::Mpich
        ) {
            return;
        }
        let Some((ranks, how, at)) = fuzzball_ranks(t) else {
            return;
        };
        // A launcher inside is `launcher-double-wrap`'s; an nccl-tests program is compared
        // exactly.
        let launches = t.launches();
        if launches.iter().any(|l| l.launcher != Launcher::NcclTest) {
            return;
        }
        let nccl = launches
            .iter()
            .find_map(|l| Some((l, l.shape.gpus_per_process.as_ref()?)));
        let (need, per, gpus) = match nccl {
            Some((l, gpp)) => (
                ranks.saturating_mul(gpp.value),
                Some(gpp),
                usable_gpus(l, gpus),
            ),
            None if launches.is_empty() => (ranks, None, gpus),
            None => return,
        };
        if need == gpus || (per.is_none() && need < gpus) {
            return;
        }
        let name = imp.as_str();
        let message = match per {
            Some(q) => format!(
                "`implementation: {name}` starts {} of the command on each node ({how}), each driving {} ({}): {need} GPUs per node, but the job has {gpus}",
                ranks_word(ranks),
                gpus_word(q.value),
                q.how
            ),
            None => format!(
                "`implementation: {name}` starts {} of the command on each node ({how}), more than the {gpus} GPUs per node",
                ranks_word(ranks)
            ),
        };
        let mut d = Diagnostic::new(Rule::MpiSlotsNotGpus, at, message)
            .with_label(gpu_range, format!("{gpus} GPUs per node"));
        if let Some(q) = per {
            if let Some(r) = q.at {
                d = d.with_label(r, format!("{} per rank", gpus_word(q.value)));
            }
        }
        let per_value = per.map_or(1, |q| q.value);
        let reason = if need < gpus {
            // Only a program whose GPUs per rank are known gets here.
            d = d.with_severity(Severity::Warning);
            format!("{} of the {gpus} GPUs sit idle", gpus - need)
        } else if per.is_some() {
            "more GPUs than the node has: the ranks oversubscribe the GPUs or fail".to_owned()
        } else {
            // The program may share a GPU between ranks on purpose (CUDA MPS, LAMMPS' GPU
            // package); one that drives a GPU per rank oversubscribes them.
            d = d.with_severity(Severity::Warning);
            "the ranks share the GPUs: a program that drives one GPU per rank oversubscribes them"
                .to_owned()
        };
        let mend =
            ranks_for(gpus, per_value).map(|v| (v, format!("the ranks use the {gpus} GPUs")));
        out.push(with_help(ctx, t, d, reason, mend));
    }

    /// A launch whose ranks per node and GPUs per rank are both known.
    fn exact(
        &self,
        ctx: &Context<'_>,
        t: &TaskContext<'_>,
        l: &Launch,
        ranks: &Quantity,
        per: &Quantity,
        slots_based: bool,
    ) -> Option<Diagnostic> {
        let (gpus, gpu_range) = t.gpus.filter(|g| g.0 > 0)?;
        let gpus = usable_gpus(l, gpus);
        let need = ranks.value.checked_mul(per.value)?;
        if need == gpus {
            return None;
        }
        let at = ranks.at.or(per.at).unwrap_or_else(|| l.range());
        let message = if l.launcher == Launcher::NcclTest {
            let program = l
                .words
                .first()
                .map_or("", |w| w.text.rsplit('/').next().unwrap_or(""));
            format!(
                "`{program}` started alone is one process driving {} ({}), but the job has {gpus} GPUs per node",
                gpus_word(need),
                per.how
            )
        } else {
            format!(
                "`{}` places {} on a node ({}), each driving {} ({}): {need} GPUs per node, but the job has {gpus}",
                l.launcher.name(),
                ranks_word(ranks.value),
                ranks.how,
                gpus_word(per.value),
                per.how
            )
        };
        let mut d = Diagnostic::new(Rule::MpiSlotsNotGpus, at, message)
            .with_label(gpu_range, format!("{gpus} GPUs per node"));
        if let Some((_, r)) = l.visible_gpus {
            d = d.with_label(r, "`CUDA_VISIBLE_DEVICES` narrows the GPUs");
        }
        if let Some(r) = per.at.filter(|r| Some(*r) != ranks.at) {
            d = d.with_label(r, format!("{} per rank", gpus_word(per.value)));
        }
        let reason = if need < gpus {
            d = d.with_severity(Severity::Warning);
            format!("{} of the {gpus} GPUs sit idle", gpus - need)
        } else {
            "more GPUs than the node has: the ranks oversubscribe the GPUs or fail".to_owned()
        };
        let mend = ranks_for(gpus, per.value)
            .filter(|_| slots_based)
            .map(|v| (v, format!("each node has {v} slots")));
        Some(with_help(ctx, t, d, reason, mend))
    }
}

impl Check for MpiSlotsNotGpus {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        if t.facts.wrapped_by_fuzzball().is_some() {
            self.wrapped(ctx, t, out);
            return;
        }
        let task = t.task;
        let Some((gpus, gpu_range)) = t.gpus.filter(|g| g.0 > 0) else {
            return;
        };
        let mn = task.multinode.as_ref();
        let ppn = mn.and_then(|m| m.procs_per_node.as_ref());
        let mut slots_reported = false;
        for inv in t.launches() {
            let exact = match (&inv.shape.ranks_per_node, &inv.shape.gpus_per_process) {
                (Some(r), Some(p)) => Some((r, p)),
                _ => None,
            };
            match inv.launcher {
                Launcher::NcclTest | Launcher::Horovodrun => {
                    if let Some((r, p)) = exact {
                        // horovodrun's ranks follow the slots of `-H $MULTINODE_HOSTLIST`.
                        let slots_based = inv.setting("hosts").is_some_and(|h| {
                            matches!(&h.value, Resolved::Runtime { name, .. } if name == "MULTINODE_HOSTLIST")
                        });
                        out.extend(self.exact(ctx, t, inv, r, p, slots_based));
                    }
                    continue;
                }
                Launcher::Srun => {
                    if let Some((r, p)) = exact {
                        out.extend(self.exact(ctx, t, inv, r, p, false));
                    }
                    out.extend(srun_per_node(inv, gpus, gpu_range, t.nodes.map(|n| n.0)));
                    continue;
                }
                Launcher::Mpirun => {}
                _ => continue,
            }
            let Some(m) = &inv.parsed else { continue };
            // A count of ranks per node (`-N 8`, `--npernode 8`, `-ppn 8`, `--map-by
            // ppr:8:node`) places them whatever the slots of the host list are (but not a
            // total of `$MULTINODE_TOTAL_SLOTS` ranks).
            let per_node = m.get_any(&["N", "npernode", "ppn", "pernode"]).is_some()
                || m.get_any(&["map-by"])
                    .and_then(|f| f.value.as_ref())
                    .is_some_and(|v| v.text.to_ascii_lowercase().starts_with("ppr:"));
            let uses_slots = |names: &[&str], var: &str| {
                m.get_any(names)
                    .and_then(|f| f.value.as_ref())
                    .filter(|v| match &v.value {
                        Resolved::Runtime { name, .. } => name == var,
                        _ => v.text.contains(var) && !v.text.contains(&format!("{var}_")),
                    })
                    .map(|v| v.range)
            };
            let slots_at: Option<TextRange> = mn.and(
                uses_slots(&["np", "n", "c"], "MULTINODE_TOTAL_SLOTS").or_else(|| {
                    (!per_node)
                        .then(|| uses_slots(&["H", "host", "hosts"], "MULTINODE_HOSTLIST"))
                        .flatten()
                }),
            );
            // An nccl-tests program: its ranks on a node times `-t × -g` GPUs each.
            if let Some((r, p)) = exact {
                if let Some(d) = self.exact(ctx, t, inv, r, p, slots_at.is_some() && !per_node) {
                    out.push(d);
                    continue;
                }
                // The ranks per node fit; a total of `$MULTINODE_TOTAL_SLOTS` with a per-node
                // count is still more (or fewer) ranks than that count places.
                if !per_node {
                    continue;
                }
            }
            let Some(at) = slots_at else { continue };
            if slots_reported {
                continue;
            }
            let per_rank = inv.shape.gpus_per_process.as_ref().map_or(1, |q| q.value);
            let slots = ppn.map(|p| p.value).or(t.facts.cores);
            if slots.is_some_and(|s| s.saturating_mul(per_rank) == gpus) {
                continue;
            }
            let slots = match ppn {
                Some(p) => format!("`procs-per-node` is {}", p.value),
                None => {
                    let cores = t
                        .facts
                        .cores
                        .map(|c| format!(" ({c} here)"))
                        .unwrap_or_default();
                    format!("`procs-per-node` is unset, so the slots are the CPU cores{cores}")
                }
            };
            let each = match &inv.shape.gpus_per_process {
                Some(q) if q.value != 1 => {
                    format!(" and each rank drives {} ({})", gpus_word(q.value), q.how)
                }
                _ => String::new(),
            };
            let mut d = Diagnostic::new(Rule::MpiSlotsNotGpus, at, format!("MPI starts one rank per slot and {slots}{each}, but the job has {gpus} GPUs per node"))
                .with_label(gpu_range, format!("{gpus} GPUs per node"));
            if let Some(v) = ranks_for(gpus, per_rank) {
                d = d.with_help(format!(
                    "set `procs-per-node: {v}` in `multinode` so the ranks use the {gpus} GPUs"
                ));
                if let Some(f) = procs_per_node_fix(ctx, t, v) {
                    d = d.with_fix(f);
                }
            }
            out.push(d);
            slots_reported = true;
        }
    }
}

/// srun's `--gpus-per-node` or `--gres=gpu:N` asking more GPUs of a node than the job has, or
/// `-G`/`--gpus` (in all) more than its nodes (`-N`, else the job's one node) have together.
fn srun_per_node(
    l: &Launch,
    gpus: u64,
    gpu_range: TextRange,
    job_nodes: Option<u64>,
) -> Option<Diagnostic> {
    let gpus = usable_gpus(l, gpus);
    let per_node = ["gpus-per-node", "gres"].iter().find_map(|name| {
        let s = l.setting(name)?;
        let v = s.value.literal()?;
        let n = if *name == "gres" {
            crate::semantics::srun_gres_gpus(v)?
        } else {
            crate::semantics::srun_typed_count(v)?
        };
        Some((s, n))
    });
    let (s, n, message) = match per_node {
        Some((s, n)) => (
            s,
            n,
            format!(
                "`srun {}` asks {n} GPUs of each node, but the job has {gpus} GPUs per node",
                s.given_as
            ),
        ),
        None => {
            // `-G N` over srun's nodes: the first nodes take the extra GPUs.
            let s = l.setting("gpus")?;
            let total = crate::semantics::srun_typed_count(s.value.literal()?)?;
            let nodes = match l.setting("nodes") {
                Some(ns) => ns
                    .value
                    .literal()?
                    .rsplit('-')
                    .next()?
                    .trim()
                    .parse()
                    .ok()?,
                None if job_nodes.is_none_or(|n| n <= 1) => 1u64,
                None => return None,
            };
            let n = total.div_ceil(nodes.max(1));
            (
                s,
                n,
                format!(
                    "`srun {}` asks {total} GPUs on {nodes} {}: {n} of a node, but the job has {gpus} GPUs per node",
                    s.given_as,
                    if nodes == 1 { "node" } else { "nodes" }
                ),
            )
        }
    };
    (n > gpus).then(|| {
        Diagnostic::new(Rule::MpiSlotsNotGpus, s.at(), message)
            .with_label(gpu_range, format!("{gpus} GPUs per node"))
            .with_help(
                "srun cannot place the step on the job's nodes: ask at most the GPUs the job requests",
            )
    })
}
