//! What a job launches, in words, for hover summaries: nodes × GPUs, the multinode
//! implementation, and each launcher with its world size. The facts (launches, their
//! evaluated arguments, world sizes) come from the semantics layer of the analysis
//! ([`fuzzfile_check::semantics`]); this module only words them.

use fuzzfile_check::semantics::{Certainty, Entry, Launch, Launcher, Resolved, Site};
use fuzzfile_check::Analysis;
use fuzzfile_model::Task;

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One line about a job or service: nodes × GPUs, and what it launches with which world
/// size.
pub fn summary(a: &Analysis, task: &Task) -> String {
    let facts = a.facts(task);
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

/// One launch as it runs, for a hover on its launcher word: the arguments the launcher
/// receives (variables, arrays and `eval` resolved; a value known only at run time says whose
/// it is), where it runs and how the job's shell reached it, and its world size.
pub fn launch_markdown(a: &Analysis, task: &Task, l: &Launch) -> String {
    let facts = a.facts(task);
    let mut words = Vec::new();
    for w in &l.words {
        let shown = match &w.value {
            Resolved::Literal(s) => s.clone(),
            Resolved::OneOf(v) => format!("{{{}}}", v.join("|")),
            Resolved::Runtime { name, site } => format!("${name}{}", site_note(*site)),
            Resolved::Template { text, site } => format!("{text}{}", site_note(*site)),
            Resolved::Unknown if w.splat => format!("{}…", w.text),
            Resolved::Unknown => format!("{}?", w.text),
        };
        words.push(shown.replace('`', "'"));
    }
    let mut s = format!("**`{}`** as it runs", l.launcher.name());
    let mut how = Vec::new();
    if l.exec_all.is_some() {
        how.push("on every node".to_owned());
    }
    for e in &l.via {
        how.push(match e {
            Entry::ShellString => "through `sh -c`".to_owned(),
            Entry::Eval => "through `eval`".to_owned(),
            Entry::Heredoc => "from a heredoc".to_owned(),
            Entry::Source { path } => format!("sourced from `{path}`"),
            Entry::File { path } => format!("in `{path}`"),
            Entry::Function { name } => format!("in function `{name}`"),
        });
    }
    if l.certainty == Certainty::Maybe {
        how.push("in a branch that may not run".to_owned());
    }
    if !how.is_empty() {
        s.push_str(&format!(" ({})", how.join(", ")));
    }
    s.push_str(&format!("\n\n```sh\n{}\n```", words.join(" ")));
    if let Some(w) = l.shape.world_size {
        s.push_str(&format!("\n\nworld size {w}"));
    }
    if facts.truncated {
        s.push_str("\n\nThe job's shell was evaluated only in part (a bound was reached).");
    }
    s
}

fn site_note(site: Site) -> &'static str {
    match site {
        Site::Head => " (the head node's)",
        Site::EachNode => " (each node's)",
    }
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

    #[test]
    fn a_launch_as_it_runs() {
        let a = fuzzfile_check::analyze("version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    script: |\n      ARGS=\"--nproc_per_node 4 --nnodes 2\"\n      exec_all torchrun $ARGS --node_rank \"$RANK\" --master_addr \"$MULTINODE_NODE_IP\" x.py\n    resource: {devices: {nvidia.com/gpu: 4}}\n    multinode: {nodes: 2, implementation: generic}\n");
        let t = &a.model.jobs[0];
        let l = &a.facts(t).launches[0];
        let md = launch_markdown(&a, t, l);
        assert!(
            md.starts_with("**`torchrun`** as it runs (on every node)"),
            "{md}"
        );
        assert!(
            md.contains("torchrun --nproc_per_node 4 --nnodes 2 --node_rank $RANK (the head node's) --master_addr $MULTINODE_NODE_IP (the head node's) x.py"),
            "{md}"
        );
        assert!(md.contains("world size 8"), "{md}");
    }
}
