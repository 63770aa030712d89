//! The shape of the file: document symbols (jobs, services, volumes, files), folding ranges
//! (every block collection and block scalar over several lines, and runs of comment lines)
//! and selection ranges (word, scalar, entry, enclosing collections, the document).

use crate::locate;
use crate::server::View;
use fuzzfile_check::TextRange;
use fuzzfile_syntax::NodeKind;
use lsp_types::{
    DocumentSymbol, FoldingRange, FoldingRangeKind, Position, SelectionRange, SymbolKind,
};

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be written
fn symbol(
    name: String,
    detail: Option<String>,
    kind: SymbolKind,
    range: lsp_types::Range,
    selection: lsp_types::Range,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    DocumentSymbol {
        name,
        detail,
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range: selection,
        children: (!children.is_empty()).then_some(children),
    }
}

pub fn symbols(v: &View<'_>) -> Vec<DocumentSymbol> {
    let m = &v.analysis.model;
    let l = &v.lines;
    let text = v.text();
    // A section covers its key and every member's entry.
    let section = |key: Option<TextRange>,
                   members: &[TextRange]|
     -> Option<(lsp_types::Range, lsp_types::Range)> {
        let k = key?;
        let whole = members.iter().fold(k, |acc, r| acc.cover(*r));
        Some((l.range(whole), l.range(k)))
    };
    let mut out = Vec::new();
    let tasks = |list: &[fuzzfile_model::Task], kind: SymbolKind| -> Vec<DocumentSymbol> {
        list.iter()
            .map(|t| {
                let detail = t
                    .image
                    .as_ref()
                    .and_then(|i| i.uri.as_ref())
                    .map(|u| u.range.slice(text).trim_matches(['"', '\'']).to_owned());
                symbol(
                    t.name.value.clone(),
                    detail,
                    kind,
                    l.range(t.range.cover(t.name.range)),
                    l.range(t.name.range),
                    Vec::new(),
                )
            })
            .collect()
    };
    let ranges = |list: &[fuzzfile_model::Task]| -> Vec<TextRange> {
        list.iter().map(|t| t.range).collect()
    };
    if let Some((r, s)) = section(m.jobs_key, &ranges(&m.jobs)) {
        out.push(symbol(
            "jobs".into(),
            None,
            SymbolKind::NAMESPACE,
            r,
            s,
            tasks(&m.jobs, SymbolKind::FUNCTION),
        ));
    }
    if let Some((r, s)) = section(m.services_key, &ranges(&m.services)) {
        out.push(symbol(
            "services".into(),
            None,
            SymbolKind::NAMESPACE,
            r,
            s,
            tasks(&m.services, SymbolKind::CLASS),
        ));
    }
    let vol_ranges: Vec<TextRange> = m.volumes.iter().map(|v| v.range).collect();
    if let Some((r, s)) = section(m.volumes_key, &vol_ranges) {
        let children = m
            .volumes
            .iter()
            .map(|vol| {
                let detail = vol
                    .reference
                    .as_ref()
                    .map(|r| r.range.slice(text).trim_matches(['"', '\'']).to_owned());
                symbol(
                    vol.key.value.clone(),
                    detail,
                    SymbolKind::STRUCT,
                    l.range(vol.range.cover(vol.key.range)),
                    l.range(vol.key.range),
                    Vec::new(),
                )
            })
            .collect();
        out.push(symbol(
            "volumes".into(),
            None,
            SymbolKind::NAMESPACE,
            r,
            s,
            children,
        ));
    }
    let file_ranges: Vec<TextRange> = m
        .files
        .iter()
        .map(|f| f.name.range.cover(f.content.range))
        .collect();
    if let Some((r, s)) = section(m.files_key, &file_ranges) {
        let children = m
            .files
            .iter()
            .map(|f| {
                symbol(
                    f.name.value.clone(),
                    None,
                    SymbolKind::FILE,
                    l.range(f.name.range.cover(f.content.range)),
                    l.range(f.name.range),
                    Vec::new(),
                )
            })
            .collect();
        out.push(symbol(
            "files".into(),
            None,
            SymbolKind::NAMESPACE,
            r,
            s,
            children,
        ));
    }
    out
}

pub fn folding(v: &View<'_>) -> Vec<FoldingRange> {
    let a = v.analysis;
    let tree = &a.tree;
    let index = &a.line_index;
    let mut out: Vec<FoldingRange> = Vec::new();
    let mut push = |start: u32, end: u32, kind: Option<FoldingRangeKind>| {
        let l1 = index.line_of(start);
        // A range ending right after a line break ends on the line before.
        let mut l2 = index.line_of(end);
        if l2 > l1 && index.line_start(l2) == end {
            l2 -= 1;
        }
        if l2 > l1 {
            out.push(FoldingRange {
                start_line: u32::try_from(l1).unwrap_or(u32::MAX),
                start_character: None,
                end_line: u32::try_from(l2).unwrap_or(u32::MAX),
                end_character: None,
                kind,
                collapsed_text: None,
            });
        }
    };
    for (_, node) in tree.nodes() {
        match &node.kind {
            NodeKind::Mapping { entries, .. } => {
                for e in entries {
                    let value = tree.node(e.value);
                    let foldable = match &value.kind {
                        NodeKind::Mapping { .. } | NodeKind::Sequence { .. } => true,
                        NodeKind::Scalar(s) => {
                            s.style().is_block() || tree.scalar_of(s).value.contains('\n')
                        }
                        NodeKind::Alias { .. } => false,
                    };
                    if foldable {
                        push(tree.node(e.key).range.start, value.range.end, None);
                    }
                }
            }
            NodeKind::Sequence { items, .. } => {
                for &i in items {
                    let item = tree.node(i);
                    if matches!(item.kind, NodeKind::Mapping { .. }) {
                        push(item.range.start, item.range.end, None);
                    }
                }
            }
            _ => {}
        }
    }
    // Runs of two or more comment lines.
    let mut run: Option<(usize, usize)> = None;
    let flush = |run: &mut Option<(usize, usize)>, out: &mut Vec<FoldingRange>| {
        if let Some((s, e)) = run.take() {
            if e > s {
                out.push(FoldingRange {
                    start_line: u32::try_from(s).unwrap_or(u32::MAX),
                    start_character: None,
                    end_line: u32::try_from(e).unwrap_or(u32::MAX),
                    end_character: None,
                    kind: Some(FoldingRangeKind::Comment),
                    collapsed_text: None,
                });
            }
        }
    };
    for c in &tree.comments {
        let line = index.line_of(c.range.start);
        let own = index
            .line_range(&a.text, line)
            .slice(&a.text)
            .trim_start()
            .starts_with('#');
        if !own {
            continue;
        }
        match run {
            Some((s, e)) if e + 1 == line => run = Some((s, line)),
            _ => {
                flush(&mut run, &mut out);
                run = Some((line, line));
            }
        }
    }
    flush(&mut run, &mut out);
    // One range per start line (editors keep one): the longest, which folds the whole
    // `- source: ...` item rather than its first entry.
    out.sort_by_key(|f| (f.start_line, std::cmp::Reverse(f.end_line)));
    out.dedup_by_key(|f| f.start_line);
    out
}

pub fn selection(v: &View<'_>, positions: &[Position]) -> Vec<SelectionRange> {
    let a = v.analysis;
    let whole = TextRange::new(0, u32::try_from(a.text.len()).unwrap_or(u32::MAX));
    positions
        .iter()
        .map(|&p| {
            let offset = v.lines.offset(p);
            let hit = locate::at(&a.tree, offset);
            let mut chain: Vec<TextRange> = Vec::new();
            // The word under the cursor first, when it is smaller than its scalar.
            if let Some(id) = hit.scalar {
                let r = a.tree.node(id).range;
                let is_word = |c: char| !c.is_whitespace() && !"\"',[]{}".contains(c);
                if let Some((s, e)) = crate::locate::word_around(&a.text, r, offset, is_word) {
                    chain.push(TextRange::from_usize(s, e));
                }
            }
            chain.extend(hit.chain.iter().copied());
            chain.push(whole);
            // Each range must contain the one before it.
            let mut kept: Vec<TextRange> = Vec::new();
            for r in chain {
                if kept
                    .last()
                    .is_none_or(|last| *last != r && r.start <= last.start && last.end <= r.end)
                {
                    kept.push(r);
                }
            }
            let mut sel: Option<SelectionRange> = None;
            for r in kept.into_iter().rev() {
                sel = Some(SelectionRange {
                    range: v.lines.range(r),
                    parent: sel.map(Box::new),
                });
            }
            sel.unwrap_or(SelectionRange {
                range: lsp_types::Range::new(p, p),
                parent: None,
            })
        })
        .collect()
}
