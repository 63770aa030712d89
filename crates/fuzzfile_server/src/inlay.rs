//! Inlay hints: the world size next to each torchrun (and mpirun with a known `-np`)
//! invocation, and the value a `$VAR` launcher argument resolves to.

use crate::server::View;
use fuzzfile_check::semantics::{Count, CountFrom, Launcher, Resolved};
use lsp_types::{InlayHint, InlayHintKind, InlayHintLabel};

pub fn hints(v: &View<'_>, range: lsp_types::Range) -> Vec<InlayHint> {
    let a = v.analysis;
    let r = v.lines.text_range(range);
    let mut out = Vec::new();
    let hint = |at: u32, label: String, tooltip: Option<String>| InlayHint {
        position: v.lines.position(at),
        label: InlayHintLabel::String(label),
        kind: Some(InlayHintKind::TYPE),
        text_edits: None,
        tooltip: tooltip.map(lsp_types::InlayHintTooltip::String),
        padding_left: Some(true),
        padding_right: None,
        data: None,
    };
    for task in a.model.tasks() {
        if task.range.end < r.start || task.range.start > r.end {
            continue;
        }
        for l in &a.facts(task).launches {
            let at = l.range();
            if !r.touches(at.start) && !r.touches(at.end) {
                continue;
            }
            if let Some(w) = l.shape.world_size {
                let how = match (l.launcher, &l.shape.nnodes, &l.shape.nproc_per_node) {
                    // torchrun and the launchers that start it (accelerate, fabric) or work
                    // like it (deepspeed), by their own flags.
                    (launcher, Some(n), Some(p)) if launcher.rendezvous() => {
                        let default = match launcher {
                            Launcher::Torchrun | Launcher::DistributedLaunch => "torchrun default",
                            _ => "default",
                        };
                        format!(
                            "{} × {}",
                            describe(n, "node", "nodes", &l.flag_name("nnodes"), default),
                            describe(
                                p,
                                "process per node",
                                "processes per node",
                                &l.flag_name("nproc-per-node"),
                                default
                            )
                        )
                    }
                    _ => "-np".to_owned(),
                };
                let processes = if w == 1 { "process" } else { "processes" };
                out.push(hint(
                    at.end,
                    format!("world size {w}"),
                    Some(format!("{w} {processes}: {how}")),
                ));
            }
            // The value of each expanded argument, once per word as written (a split
            // `$ARGS` gives several arguments from one word).
            let mut last: Option<lsp_types::Position> = None;
            for w in l.args().iter().filter(|w| w.expanded) {
                if !r.touches(w.written.start) {
                    continue;
                }
                let label = match &w.value {
                    Resolved::Literal(s) => format!("= {s}"),
                    Resolved::OneOf(v) => format!("= {}", v.join(" | ")),
                    // `$RANK`, `$MULTINODE_NODE_IP`: nothing to add before the run.
                    _ => continue,
                };
                let position = v.lines.position(w.written.end);
                if last == Some(position) {
                    if let Some(h) = out.last_mut() {
                        if let InlayHintLabel::String(s) = &mut h.label {
                            s.push(' ');
                            s.push_str(label.trim_start_matches("= "));
                        }
                    }
                    continue;
                }
                last = Some(position);
                let written = w.written.slice(&a.text);
                out.push(hint(
                    w.written.end,
                    label,
                    Some(format!("`{written}` as the launcher sees it")),
                ));
            }
        }
    }
    out.sort_by_key(|h| (h.position.line, h.position.character));
    out
}

/// `2 nodes (--nnodes)`, `1 node (torchrun default)`, `1 node (--standalone)`.
fn describe(c: &Count, one: &str, many: &str, flag: &str, default: &str) -> String {
    let value = c.value.unwrap_or(0);
    let unit = if value == 1 { one } else { many };
    let from = match c.from {
        CountFrom::Default => default,
        CountFrom::Standalone => "--standalone",
        _ => flag,
    };
    format!("{value} {unit} ({from})")
}
