//! What a job launches, in words, for hover summaries: nodes × GPUs, the multinode
//! implementation, and each launcher with its world size. The facts (launches, their
//! evaluated arguments, world sizes) come from the semantics layer of the analysis
//! ([`fuzzfile_check::semantics`]); this module only words them.

use fuzzfile_check::semantics::Launcher;
use fuzzfile_check::Analysis;
use fuzzfile_model::Task;

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One line about a job or service: nodes × GPUs, and what it launches with which world
/// size.
pub fn summary(a: &Analysis, task: &Task) -> String {
    let facts = a.semantics.task(task);
    let nodes = facts.nodes.map_or(1, |(n, _)| n);
    let mut parts = Vec::new();
    let shape = match facts.gpus_per_node {
        Some((g, _)) => format!(
            "{} × {}",
            plural(nodes, "node", "nodes"),
            plural(g, "GPU", "GPUs")
        ),
        None => format!("{}, no GPU", plural(nodes, "node", "nodes")),
    };
    parts.push(shape);
    if let Some(i) = facts.implementation {
        parts.push(format!("`{}` multinode", i.as_str()));
    }
    if let Some(imp) = facts.wrapped_by_fuzzball() {
        parts.push(format!("Fuzzball wraps the command in `{}`", imp.as_str()));
    }
    let launches = &facts.launches;
    let named: Vec<String> = launches
        .iter()
        .filter(|l| l.launcher != Launcher::ExecAll || launches.len() == 1)
        .map(|l| {
            let mut s = format!("`{}`", l.launcher.name());
            if l.exec_all.is_some() && l.launcher != Launcher::ExecAll {
                s.push_str(" on every node (`exec_all`)");
            }
            let count =
                |c: &Option<fuzzfile_check::semantics::Count>| c.as_ref().and_then(|c| c.value);
            match (
                l.shape.world_size,
                count(&l.shape.nnodes),
                count(&l.shape.nproc_per_node),
            ) {
                (Some(w), Some(n), Some(p)) => s.push_str(&format!(", world size {w} ({n} × {p})")),
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
        let a = fuzzfile_check::analyze("version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    env: [NP=4, PET_NNODES=1:2]\n    command: [/bin/sh, -c, 'torchrun --nproc-per-node $NP x.py']\n    resource: {devices: {nvidia.com/gpu: 4}}\n    multinode: {nodes: 2, implementation: generic}\n");
        let s = summary(&a, &a.model.jobs[0]);
        assert_eq!(
            s,
            "job `t`: 2 nodes × 4 GPUs, `generic` multinode, `torchrun`, world size 8 (2 × 4)"
        );

        let a = fuzzfile_check::analyze("version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    command: [torchrun, --standalone, --nproc-per-node=gpu, x.py]\n");
        assert!(summary(&a, &a.model.jobs[0]).contains("1 node, no GPU"));

        let a = fuzzfile_check::analyze(
            "version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    command: [echo, hi]\n",
        );
        assert!(summary(&a, &a.model.jobs[0]).ends_with("no launcher found"));
    }
}
