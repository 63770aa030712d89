//! Inlay hints: the world size next to each torchrun (and mpirun with a known `-np`)
//! invocation, and the value a `$VAR` launcher argument resolves to.

use crate::launch_info::{self, Count, Source};
use crate::server::View;
use fuzzfile_check::launch::{Launcher, Resolved};
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
        for l in launch_info::launches(a, task) {
            if !r.touches(l.at.start) && !r.touches(l.at.end) {
                continue;
            }
            if let Some(w) = l.world_size {
                let how = match (l.launcher, l.nnodes, l.nproc_per_node) {
                    (Launcher::Torchrun | Launcher::DistributedLaunch, Some(n), Some(p)) => {
                        format!(
                            "{} × {}",
                            describe(n, "node", "nodes", "--nnodes"),
                            describe(
                                p,
                                "process per node",
                                "processes per node",
                                "--nproc-per-node"
                            )
                        )
                    }
                    _ => "-np".to_owned(),
                };
                let processes = if w == 1 { "process" } else { "processes" };
                out.push(hint(
                    l.at.end,
                    format!("world size {w}"),
                    Some(format!("{w} {processes}: {how}")),
                ));
            }
            for (word, text, value) in &l.resolved {
                if !r.touches(word.start) {
                    continue;
                }
                let label = match value {
                    Resolved::Literal(s) => format!("= {s}"),
                    // `$RANK`, `$MULTINODE_NODE_IP`: nothing to add before the run.
                    Resolved::Runtime(_) | Resolved::Unknown => continue,
                };
                out.push(hint(
                    word.end,
                    label,
                    Some(format!("`{text}` as the launcher sees it")),
                ));
            }
        }
    }
    out.sort_by_key(|h| (h.position.line, h.position.character));
    out
}

/// `2 nodes (--nnodes)`, `1 node (torchrun default)`, `1 node (--standalone)`.
fn describe(c: Count, one: &str, many: &str, flag: &str) -> String {
    let unit = if c.value == 1 { one } else { many };
    let from = match c.source {
        Source::Given => flag,
        Source::Default => "torchrun default",
        Source::Standalone => "--standalone",
    };
    format!("{} {unit} ({from})", c.value)
}
