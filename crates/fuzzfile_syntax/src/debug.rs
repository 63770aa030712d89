//! A readable dump of a tree, used by snapshot tests and the `probe` example.

use crate::{NodeId, NodeKind, ScalarStyle, Tree};
use std::fmt::Write;

/// Render `tree` as indented text: every node with its range and source text; for scalars
/// whose decoded value differs from the source, every word with the source bytes it maps to.
pub fn debug_tree(text: &str, tree: &Tree) -> String {
    let mut out = String::new();
    if tree.has_bom {
        out.push_str("bom\n");
    }
    if let Some(root) = tree.root() {
        node(text, tree, root, 0, "", &mut out);
    } else {
        out.push_str("(empty)\n");
    }
    for c in &tree.comments {
        let _ = writeln!(out, "comment {:?} {:?}", c.range, c.text);
    }
    for e in &tree.errors {
        let _ = write!(out, "error {:?} {}", e.range, e.message);
        if let Some(d) = e.detected_at {
            let _ = write!(out, " (detected at {d:?})");
        }
        out.push('\n');
    }
    if !tree.blanked_lines.is_empty() {
        let _ = writeln!(out, "blanked lines {:?}", tree.blanked_lines);
    }
    out
}

fn node(text: &str, tree: &Tree, id: NodeId, depth: usize, prefix: &str, out: &mut String) {
    let n = tree.node(id);
    let pad = "  ".repeat(depth);
    let mut props = String::new();
    if let Some((a, r)) = tree.anchor(id) {
        let _ = write!(props, " &{a}@{r:?}");
    }
    if let Some(t) = tree.tag(id) {
        let _ = write!(props, " tag={t}");
    }
    match &n.kind {
        NodeKind::Scalar(s) => {
            let s = tree.scalar_of(s);
            let style = match s.style {
                ScalarStyle::Plain => "plain",
                ScalarStyle::SingleQuoted => "single",
                ScalarStyle::DoubleQuoted => "double",
                ScalarStyle::Literal => "literal",
                ScalarStyle::Folded => "folded",
            };
            let src = n.range.slice(text);
            let _ = write!(
                out,
                "{pad}{prefix}{style} {:?}{props} {:?}",
                n.range, s.value
            );
            if !s.map.is_exact() {
                out.push_str(" [inexact map]");
            }
            out.push('\n');
            if src != s.value && !s.value.is_empty() {
                for (start, word) in words(s.value) {
                    let r = s.map.range_to_source(start..start + word.len());
                    let _ = writeln!(out, "{pad}    word {word:?} -> {:?} {:?}", r, r.slice(text));
                }
            }
        }
        NodeKind::Sequence { style, items } => {
            let _ = writeln!(out, "{pad}{prefix}seq({style:?}) {:?}{props}", n.range);
            for &i in items.iter() {
                node(text, tree, i, depth + 1, "- ", out);
            }
        }
        NodeKind::Mapping { style, entries } => {
            let _ = writeln!(out, "{pad}{prefix}map({style:?}) {:?}{props}", n.range);
            for e in entries.iter() {
                node(text, tree, e.key, depth + 1, "? ", out);
                node(text, tree, e.value, depth + 2, ": ", out);
            }
        }
        NodeKind::Alias { target } => {
            let name = tree.alias_name(id).unwrap_or_default();
            let _ = writeln!(
                out,
                "{pad}{prefix}alias *{name} {:?} -> {:?}",
                n.range,
                target.map(|t| t.0)
            );
        }
    }
}

/// Whitespace-separated words of `s` with their byte offsets (separators may be multi-byte,
/// like U+00A0 or U+2028).
pub(crate) fn words(s: &str) -> impl Iterator<Item = (usize, &str)> {
    s.char_indices()
        .filter(|&(i, c)| {
            !c.is_whitespace() && s[..i].chars().next_back().is_none_or(char::is_whitespace)
        })
        .map(move |(start, _)| {
            let len = s[start..]
                .find(char::is_whitespace)
                .unwrap_or(s.len() - start);
            (start, &s[start..start + len])
        })
}
