//! Structural checks on a parsed [`Tree`], shared by the fuzz target and the seed regression
//! tests. Not part of the public API.
//!
//! [`check_invariants`] verifies what every later layer relies on:
//! - every node, comment and error range lies inside the text and on character boundaries;
//! - child ids are valid and each child lies inside its parent's range;
//! - alias targets are valid ids of earlier nodes;
//! - a mapping read with its merge keys keeps its written entries and adds each merged key
//!   once, never one it writes;
//! - every scalar's offset map sends each decoded character to a range inside the text, in
//!   order, on character boundaries when the map is exact;
//! - with an exact map, a decoded character that is not whitespace maps into the scalar's node
//!   range and to itself, unless the source spells it as an escape (`\…` in double quotes,
//!   `''` in single quotes);
//! - with an exact map, a whitespace-separated word maps to identical source text unless its
//!   source holds an escape.

use crate::debug::words;
use crate::{NodeId, NodeKind, ScalarStyle, TextRange, Tree};

/// Check the tree built from `text`. Returns a description of the first violation.
pub fn check_invariants(text: &str, tree: &Tree) -> Result<(), String> {
    let len = tree.len();
    let fits = |r: TextRange| r.start <= r.end && r.end as usize <= text.len();
    let on_boundaries = |r: TextRange| {
        text.is_char_boundary(r.start as usize) && text.is_char_boundary(r.end as usize)
    };
    let check_range = |what: &str, r: TextRange| -> Result<(), String> {
        if !fits(r) {
            return Err(format!(
                "{what}: range {r:?} outside text of {} bytes",
                text.len()
            ));
        }
        if !on_boundaries(r) {
            return Err(format!("{what}: range {r:?} not on char boundaries"));
        }
        Ok(())
    };

    if let Some(root) = tree.root() {
        if root.0 as usize >= len {
            return Err(format!("root {root:?} out of {len} nodes"));
        }
    }
    if tree.has_bom != text.starts_with('\u{feff}') {
        return Err(format!(
            "has_bom = {} disagrees with the text",
            tree.has_bom
        ));
    }
    for c in &tree.comments {
        check_range("comment", c.range)?;
        if !c.range.slice(text).starts_with('#') {
            return Err(format!("comment {:?} does not start with `#`", c.range));
        }
    }
    for e in &tree.errors {
        check_range(&format!("error `{}`", e.message), e.range)?;
        if let Some(d) = e.detected_at {
            check_range(&format!("error `{}` detected_at", e.message), d)?;
        }
    }
    // Lines as the recovery numbers them: `\n`, `\r\n` and a lone `\r` end a line.
    let line_count = fuzzfile_diagnostics::LineIndex::new(text).line_count();
    if let Some(&l) = tree
        .blanked_lines
        .iter()
        .find(|&&l| l as usize >= line_count)
    {
        return Err(format!("blanked line {l} of {line_count} lines"));
    }

    for (id, node) in tree.nodes() {
        let what = format!("node {}", id.0);
        check_range(&what, node.range)?;
        if let Some((name, r)) = tree.anchor(id) {
            check_range(&format!("{what} anchor &{name}"), r)?;
        }
        let child = |c: NodeId| -> Result<(), String> {
            if c.0 as usize >= len {
                return Err(format!("{what}: child {c:?} out of {len} nodes"));
            }
            let cr = tree.node(c).range;
            if cr.start < node.range.start || cr.end > node.range.end {
                return Err(format!(
                    "{what} {:?}: child {} {cr:?} outside its parent",
                    node.range, c.0
                ));
            }
            Ok(())
        };
        match &node.kind {
            NodeKind::Sequence { items, .. } => {
                for &i in items.iter() {
                    child(i)?;
                }
            }
            NodeKind::Mapping { entries, .. } => {
                for e in entries.iter() {
                    child(e.key)?;
                    child(e.value)?;
                }
                // With its merge keys applied: every written entry but `<<` stays, and each
                // merged key is a valid node that appears once.
                let merged = tree
                    .merged_entries(id)
                    .ok_or_else(|| format!("{what}: a mapping without merged entries"))?;
                let written = entries.iter().filter(|e| !tree.is_merge_key(e.key)).count();
                if merged.len() < written {
                    return Err(format!("{what}: merging lost written entries"));
                }
                let mut keys = std::collections::HashSet::new();
                for e in merged.iter().skip(written) {
                    if e.key.0 as usize >= len || e.value.0 as usize >= len {
                        return Err(format!("{what}: merged entry out of {len} nodes"));
                    }
                    if let Some(k) = tree.text(e.key) {
                        if !keys.insert(k) || entries.iter().any(|w| tree.text(w.key) == Some(k)) {
                            return Err(format!("{what}: merged key `{k}` twice"));
                        }
                    }
                }
            }
            NodeKind::Alias { target, .. } => {
                if let Some(t) = target {
                    if t.0 >= id.0 {
                        return Err(format!("{what}: alias target {t:?} is not an earlier node"));
                    }
                }
            }
            NodeKind::Scalar(s) => {
                let s = tree.scalar_of(s);
                let value = s.value;
                let exact = s.map.is_exact();
                let whole = s.map.range_to_source(0..value.len());
                if !fits(whole) {
                    return Err(format!(
                        "{what}: whole value maps to {whole:?}, outside the text"
                    ));
                }
                let mut prev_start = 0u32;
                for (i, ch) in value.char_indices() {
                    let r = s.map.range_to_source(i..i + ch.len_utf8());
                    let cw = format!("{what} {:?}: decoded char {ch:?} at {i}", node.range);
                    if !fits(r) {
                        return Err(format!("{cw} maps to {r:?}, outside the text"));
                    }
                    if !exact {
                        continue;
                    }
                    if !on_boundaries(r) {
                        return Err(format!("{cw} maps to {r:?}, not on char boundaries"));
                    }
                    if r.start < prev_start {
                        return Err(format!("{cw} maps to {r:?}, before the previous char"));
                    }
                    prev_start = r.start;
                    if ch.is_whitespace() {
                        continue;
                    }
                    if r.start < node.range.start || r.end > node.range.end {
                        return Err(format!("{cw} maps to {r:?}, outside the scalar"));
                    }
                    let src = r.slice(text);
                    if src != ch.encode_utf8(&mut [0; 4]) && !spelled_as_escape(s.style, src) {
                        return Err(format!("{cw} maps to {r:?} = {src:?}"));
                    }
                }
                if exact {
                    for (start, word) in words(value) {
                        let r = s.map.range_to_source(start..start + word.len());
                        let src = r.slice(text);
                        if src != word && !has_escape(s.style, src) {
                            return Err(format!("{what}: word {word:?} maps to {r:?} = {src:?}"));
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether `src` is how `style` spells one decoded character other than itself.
fn spelled_as_escape(style: ScalarStyle, src: &str) -> bool {
    match style {
        ScalarStyle::DoubleQuoted => src.starts_with('\\'),
        ScalarStyle::SingleQuoted => src == "''",
        _ => false,
    }
}

/// Whether source text `src` holds an escape of `style` (so the decoded text may differ).
fn has_escape(style: ScalarStyle, src: &str) -> bool {
    match style {
        ScalarStyle::DoubleQuoted => src.contains('\\'),
        ScalarStyle::SingleQuoted => src.contains("''"),
        _ => false,
    }
}
