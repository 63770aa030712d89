//! The job graph of a plan as Graphviz DOT or a Mermaid flowchart: jobs (boxes), services
//! (rounded), volumes (cylinders), dependencies with the status they wait for (`FINISHED`
//! solid, `RUNNING` dashed) and mounts (dotted, labelled with the container path). Drawn from
//! the plan alone, so the picture shows what would run.

use crate::types::*;
use std::fmt::Write;

fn task_lines(t: &Task) -> Vec<String> {
    let mut lines = vec![t.name.clone()];
    let mut what = match t.kind {
        TaskKind::Job => "job".to_owned(),
        TaskKind::Service => "service".to_owned(),
    };
    if let Some(ta) = &t.task_array {
        let _ = write!(what, ", tasks {}..{}", ta.start, ta.end);
        if let Some(c) = ta.concurrency {
            let _ = write!(what, " ({c} at a time)");
        }
    }
    if let Some(mn) = &t.multinode {
        let _ = write!(what, ", {} nodes ({})", mn.nodes, mn.implementation);
    }
    if t.service.as_ref().is_some_and(|s| s.persist) {
        what.push_str(", persists");
    }
    lines.push(what);
    lines.push(t.image.reference.clone());
    lines
}

fn volume_lines(v: &Volume) -> Vec<String> {
    let kind = match v.kind {
        VolumeKind::Ephemeral => "ephemeral".to_owned(),
        VolumeKind::Persistent => "persistent".to_owned(),
        VolumeKind::Provisioned => v
            .provisioner
            .clone()
            .unwrap_or_else(|| "provisioned".into()),
    };
    let mut lines = vec![v.key.clone(), format!("volume, {kind}")];
    if !v.ingress.is_empty() || !v.egress.is_empty() {
        lines.push(format!(
            "ingress {}, egress {}",
            v.ingress.len(),
            v.egress.len()
        ));
    }
    lines
}

fn tasks(plan: &Plan) -> impl Iterator<Item = &Task> {
    plan.jobs.iter().chain(plan.services.iter())
}

fn dot_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Graphviz DOT.
pub fn dot(plan: &Plan) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "digraph {} {{", dot_str(&plan.workflow.source));
    o.push_str("  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=11];\n  edge [fontname=\"Helvetica\", fontsize=9];\n");
    for t in tasks(plan) {
        let label = task_lines(t).join("\\n");
        let shape = match t.kind {
            TaskKind::Job => "shape=box",
            TaskKind::Service => "shape=box, style=rounded",
        };
        let _ = writeln!(
            o,
            "  {} [{shape}, label=\"{}\"];",
            dot_str(&format!("task:{}", t.name)),
            label.replace('"', "\\\"")
        );
    }
    for v in &plan.volumes {
        let label = volume_lines(v).join("\\n");
        let _ = writeln!(
            o,
            "  {} [shape=cylinder, label=\"{}\"];",
            dot_str(&format!("volume:{}", v.key)),
            label.replace('"', "\\\"")
        );
    }
    for e in &plan.graph.edges {
        let style = match e.status {
            DependencyStatus::Finished => "solid",
            DependencyStatus::Running => "dashed",
        };
        let status = match e.status {
            DependencyStatus::Finished => "FINISHED",
            DependencyStatus::Running => "RUNNING",
        };
        let _ = writeln!(
            o,
            "  {} -> {} [label=\"{status}\", style={style}];",
            dot_str(&format!("task:{}", e.from)),
            dot_str(&format!("task:{}", e.to))
        );
    }
    for t in tasks(plan) {
        for m in &t.mounts {
            let _ = writeln!(
                o,
                "  {} -> {} [label={}, style=dotted, arrowhead=none];",
                dot_str(&format!("volume:{}", m.volume)),
                dot_str(&format!("task:{}", t.name)),
                dot_str(&m.path)
            );
        }
    }
    o.push_str("}\n");
    o
}

fn mermaid_str(s: &str) -> String {
    s.replace('"', "#quot;")
        .replace('|', "#124;")
        .replace('<', "#lt;")
        .replace('>', "#gt;")
}

/// A Mermaid flowchart.
pub fn mermaid(plan: &Plan) -> String {
    let mut o = String::from("flowchart LR\n");
    let all: Vec<&Task> = tasks(plan).collect();
    let id_of = |name: &str| {
        all.iter()
            .position(|t| t.name == name)
            .map_or_else(|| "missing".to_owned(), |i| format!("t{i}"))
    };
    for (i, t) in all.iter().enumerate() {
        let label = task_lines(t)
            .iter()
            .map(|l| mermaid_str(l))
            .collect::<Vec<_>>()
            .join("<br/>");
        let _ = match t.kind {
            TaskKind::Job => writeln!(o, "  t{i}[\"{label}\"]"),
            TaskKind::Service => writeln!(o, "  t{i}([\"{label}\"])"),
        };
    }
    for (i, v) in plan.volumes.iter().enumerate() {
        let label = volume_lines(v)
            .iter()
            .map(|l| mermaid_str(l))
            .collect::<Vec<_>>()
            .join("<br/>");
        let _ = writeln!(o, "  v{i}[(\"{label}\")]");
    }
    for e in &plan.graph.edges {
        let _ = match e.status {
            DependencyStatus::Finished => {
                writeln!(o, "  {} -->|FINISHED| {}", id_of(&e.from), id_of(&e.to))
            }
            DependencyStatus::Running => {
                writeln!(o, "  {} -.->|RUNNING| {}", id_of(&e.from), id_of(&e.to))
            }
        };
    }
    for (i, t) in all.iter().enumerate() {
        for m in &t.mounts {
            if let Some(v) = plan.volumes.iter().position(|v| v.key == m.volume) {
                let _ = writeln!(o, "  v{v} -.-|\"{}\"| t{i}", mermaid_str(&m.path));
            }
        }
    }
    o
}
