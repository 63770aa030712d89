//! What a job launches, for hover summaries and inlay hints: each launcher invocation of
//! [`fuzzfile_check::launch`] with its world size and the values of the `$VAR`s in its
//! arguments. The world size is computed from the same settings the rules check
//! (`torchrun_setting` reads the flag or its `PET_*` variable, resolved through the job's
//! environment), by the rules `fuzz plan` uses: torchrun `nnodes × nproc-per-node` (a
//! `MIN:MAX` range counts its maximum, `--standalone` one node, `gpu`/`auto` the GPUs per
//! node, `cpu` the cores), mpirun `-np`.

use fuzzfile_check::launch::{self, Launcher, Resolved};
use fuzzfile_check::{Analysis, TextRange};
use fuzzfile_model::Task;

/// Where a count came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// The flag or its `PET_*` variable.
    Given,
    /// torchrun's default (1).
    Default,
    /// `--standalone`: one node.
    Standalone,
}

/// A number and where it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count {
    pub value: u64,
    pub source: Source,
}

#[derive(Debug)]
pub struct Launch {
    pub launcher: Launcher,
    /// The launcher word (`torchrun`, or `python` of `python -m torch.distributed.run`).
    pub at: TextRange,
    pub exec_all: bool,
    pub nnodes: Option<Count>,
    pub nproc_per_node: Option<Count>,
    pub world_size: Option<u64>,
    /// Each argument word with a `$VAR`, and what it resolves to.
    pub resolved: Vec<(TextRange, String, Resolved)>,
}

pub fn launches(a: &Analysis, task: &Task) -> Vec<Launch> {
    let env = launch::effective_env(&a.model, task);
    let gpus = launch::gpus_per_node(&a.model, task).map(|(g, _)| g);
    // The job's own cores, else those of `defaults.job` (jobs only), as for the GPUs.
    let cores = task
        .resource
        .as_ref()
        .and_then(|r| r.cores.as_ref())
        .or_else(|| {
            (task.kind == fuzzfile_model::TaskKind::Job)
                .then(|| a.model.defaults.as_ref()?.resource.as_ref()?.cores.as_ref())
                .flatten()
        })
        .map(|c| c.value);
    // `MULTINODE_TOTAL_SLOTS` of a generic multinode job: nodes × slots, a slot count that
    // is `procs-per-node`, else the CPU cores, else 1.
    let generic_slots = task.multinode.as_ref().and_then(|m| {
        let generic = m
            .implementation
            .as_ref()
            .is_none_or(|i| i.value == fuzzfile_model::Implementation::Generic);
        let nodes = m.nodes.as_ref().map(|n| n.value).filter(|n| *n >= 1)?;
        let per = m
            .procs_per_node
            .as_ref()
            .map(|p| p.value)
            .or(cores)
            .unwrap_or(1);
        generic.then(|| nodes.saturating_mul(per))
    });
    let mut out = Vec::new();
    for inv in launch::invocations(&a.text, &a.tree, task) {
        let resolved = inv
            .args()
            .iter()
            .filter(|w| w.dynamic && !w.single_quoted)
            .map(|w| {
                (
                    w.range,
                    w.text.clone(),
                    launch::resolve(&w.text, &inv, &env),
                )
            })
            .collect();
        let mut l = Launch {
            launcher: inv.launcher,
            at: inv.range(),
            exec_all: inv.exec_all.is_some(),
            nnodes: None,
            nproc_per_node: None,
            world_size: None,
            resolved,
        };
        match inv.launcher {
            Launcher::Torchrun | Launcher::DistributedLaunch => {
                let args = launch::torchrun_args(&inv);
                let literal = |name: &str| -> Option<Option<String>> {
                    launch::torchrun_setting(&inv, &args, &env, name).map(|s| match s.value {
                        Resolved::Literal(v) => Some(v),
                        _ => None,
                    })
                };
                l.nnodes = match literal("nnodes") {
                    Some(Some(v)) => v
                        .rsplit(':')
                        .next()
                        .and_then(|n| n.trim().parse().ok())
                        .map(|value| Count {
                            value,
                            source: Source::Given,
                        }),
                    Some(None) => None,
                    None => Some(Count {
                        value: 1,
                        source: if args.has("standalone") {
                            Source::Standalone
                        } else {
                            Source::Default
                        },
                    }),
                };
                l.nproc_per_node = match literal("nproc-per-node") {
                    Some(Some(v)) => match v.as_str() {
                        "gpu" | "auto" => gpus,
                        "cpu" => cores,
                        n => n.trim().parse().ok(),
                    }
                    .map(|value| Count {
                        value,
                        source: Source::Given,
                    }),
                    Some(None) => None,
                    None => Some(Count {
                        value: 1,
                        source: Source::Default,
                    }),
                };
                l.world_size = match (l.nnodes, l.nproc_per_node) {
                    (Some(a), Some(b)) => a.value.checked_mul(b.value),
                    _ => None,
                };
            }
            Launcher::Mpirun => {
                let args = launch::mpirun_args(&inv);
                l.world_size = match args.get(&["np", "n", "c"]).and_then(|f| f.value.as_ref()) {
                    Some(v) => match launch::resolve(&v.text, &inv, &env) {
                        Resolved::Literal(s) => s.trim().parse().ok(),
                        Resolved::Runtime(name) if name == "MULTINODE_TOTAL_SLOTS" => generic_slots,
                        _ => None,
                    },
                    // Without -np, mpirun starts one process per slot of the host list.
                    None => generic_slots,
                };
            }
            Launcher::ExecAll | Launcher::Srun | Launcher::Deepspeed => {}
        }
        out.push(l);
    }
    out
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One line about a job or service: nodes × GPUs, and what it launches with which world
/// size.
pub fn summary(a: &Analysis, task: &Task) -> String {
    let nodes = launch::nodes(task).map_or(1, |(n, _)| n);
    let mut parts = Vec::new();
    let shape = match launch::gpus_per_node(&a.model, task) {
        Some((g, _)) => format!(
            "{} × {}",
            plural(nodes, "node", "nodes"),
            plural(g, "GPU", "GPUs")
        ),
        None => format!("{}, no GPU", plural(nodes, "node", "nodes")),
    };
    parts.push(shape);
    if let Some(i) = task
        .multinode
        .as_ref()
        .and_then(|m| m.implementation.as_ref())
    {
        parts.push(format!("`{}` multinode", i.value.as_str()));
    }
    if let Some(imp) = launch::wrapped_by_fuzzball(task) {
        parts.push(format!("Fuzzball wraps the command in `{}`", imp.as_str()));
    }
    let launches = launches(a, task);
    let named: Vec<String> = launches
        .iter()
        .filter(|l| l.launcher != Launcher::ExecAll || launches.len() == 1)
        .map(|l| {
            let mut s = format!("`{}`", l.launcher.name());
            if l.exec_all && l.launcher != Launcher::ExecAll {
                s.push_str(" on every node (`exec_all`)");
            }
            match (l.world_size, l.nnodes, l.nproc_per_node) {
                (Some(w), Some(n), Some(p)) => {
                    s.push_str(&format!(", world size {w} ({} × {})", n.value, p.value))
                }
                (Some(w), _, _) => s.push_str(&format!(", world size {w}")),
                (None, _, _) if matches!(l.launcher, Launcher::Torchrun | Launcher::Mpirun) => {
                    s.push_str(", world size known only at run time")
                }
                _ => {}
            }
            s
        })
        .collect();
    if named.is_empty() {
        parts.push("no launcher found".into());
    } else {
        parts.push(named.join("; "));
    }
    format!(
        "{} `{}`: {}",
        task.kind.as_str(),
        task.name.value,
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn world_size_from_flags_env_and_defaults() {
        let a = fuzzfile_check::analyze("version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    env: [NP=4, PET_NNODES=1:2]\n    command: [torchrun, --nproc-per-node, $NP, x.py]\n    resource: {devices: {nvidia.com/gpu: 4}}\n    multinode: {nodes: 2, implementation: generic}\n");
        let l = launches(&a, &a.model.jobs[0]);
        assert_eq!(l.len(), 1);
        assert_eq!(l[0].world_size, Some(8));
        assert_eq!(l[0].resolved.len(), 1);
        assert_eq!(l[0].resolved[0].2, Resolved::Literal("4".into()));
        let s = summary(&a, &a.model.jobs[0]);
        assert_eq!(
            s,
            "job `t`: 2 nodes × 4 GPUs, `generic` multinode, `torchrun`, world size 8 (2 × 4)"
        );

        let a = fuzzfile_check::analyze("version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    command: [torchrun, --standalone, --nproc-per-node=gpu, x.py]\n");
        let l = launches(&a, &a.model.jobs[0]);
        assert_eq!(
            l[0].world_size, None,
            "gpu without a GPU request is unknown"
        );
        assert!(summary(&a, &a.model.jobs[0]).contains("1 node, no GPU"));

        let a = fuzzfile_check::analyze(
            "version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    command: [echo, hi]\n",
        );
        assert!(summary(&a, &a.model.jobs[0]).ends_with("no launcher found"));
    }
}
