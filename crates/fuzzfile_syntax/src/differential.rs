//! The fast path checked against the event-parser path, shared by the differential test and
//! the fuzz target. Not part of the public API.

use crate::invariants::check_invariants;
use crate::{debug_tree, parse_fast, parse_reference, NodeKind, Tree};

/// Parse `text` with the fast path and, when it takes the text, with the reference path too,
/// and compare the two trees: every node (kind, range, anchor, tag, scalar value, style and
/// offset map), the root, comments, errors, the BOM flag and blanked lines, and the
/// `debug_tree` renderings. Returns whether the fast path took the text, or the first
/// difference.
pub fn check_fast_path(text: &str) -> Result<bool, String> {
    let Some(fast) = parse_fast(text) else {
        return Ok(false);
    };
    let reference = parse_reference(text);
    compare(text, &fast, &reference)?;
    check_invariants(text, &fast).map_err(|e| format!("fast tree: {e}"))?;
    Ok(true)
}

/// Parse a text the fast path does not take, as [`crate::parse`] does (error recovery whose
/// passes after the first try the fast path) and with the event parser alone, and compare the
/// two trees. Returns whether the text needed recovery (had a syntax error), or the first
/// difference.
pub fn check_recovery(text: &str) -> Result<bool, String> {
    if parse_fast(text).is_some() {
        return Ok(false);
    }
    let recovered = crate::parse(text);
    let reference = parse_reference(text);
    compare(text, &recovered, &reference)?;
    Ok(!recovered.blanked_lines.is_empty())
}

/// Compare two trees of `text`; describes the first difference.
pub fn compare(text: &str, fast: &Tree, reference: &Tree) -> Result<(), String> {
    let df = debug_tree(text, fast);
    let dr = debug_tree(text, reference);
    if df != dr {
        return Err(format!(
            "debug_tree differs\n--- fast\n{df}\n--- reference\n{dr}"
        ));
    }
    if fast.len() != reference.len() {
        return Err(format!(
            "{} nodes, reference {}",
            fast.len(),
            reference.len()
        ));
    }
    if fast.root() != reference.root() {
        return Err(format!(
            "root {:?}, reference {:?}",
            fast.root(),
            reference.root()
        ));
    }
    for ((id, f), (_, r)) in fast.nodes().zip(reference.nodes()) {
        let what = format!("node {} {:?}", id.0, r.range);
        let (f_anchor, r_anchor) = (fast.anchor(id), reference.anchor(id));
        let (f_tag, r_tag) = (fast.tag(id), reference.tag(id));
        if f.range != r.range || f_anchor != r_anchor || f_tag != r_tag {
            return Err(format!(
                "{what}: range/anchor/tag {:?} {f_anchor:?} {f_tag:?}, reference {:?} {r_anchor:?} {r_tag:?}",
                f.range, r.range
            ));
        }
        let same = match (&f.kind, &r.kind) {
            (NodeKind::Scalar(a), NodeKind::Scalar(b)) => {
                fast.scalar_of(a) == reference.scalar_of(b)
            }
            (
                NodeKind::Sequence {
                    style: s1,
                    items: i1,
                },
                NodeKind::Sequence {
                    style: s2,
                    items: i2,
                },
            ) => s1 == s2 && i1 == i2,
            (
                NodeKind::Mapping {
                    style: s1,
                    entries: e1,
                },
                NodeKind::Mapping {
                    style: s2,
                    entries: e2,
                },
            ) => {
                s1 == s2
                    && e1.len() == e2.len()
                    && e1
                        .iter()
                        .zip(e2.iter())
                        .all(|(a, b)| a.key == b.key && a.value == b.value)
            }
            (NodeKind::Alias { target: t1 }, NodeKind::Alias { target: t2 }) => {
                fast.alias_name(id) == reference.alias_name(id) && t1 == t2
            }
            _ => false,
        };
        if !same {
            return Err(format!("{what}: {:?}\nreference {:?}", f.kind, r.kind));
        }
    }
    let comments = |t: &Tree| {
        t.comments
            .iter()
            .map(|c| (c.range, c.text.clone()))
            .collect::<Vec<_>>()
    };
    if comments(fast) != comments(reference) {
        return Err(format!(
            "comments {:?}\nreference {:?}",
            comments(fast),
            comments(reference)
        ));
    }
    if fast.errors != reference.errors {
        return Err(format!(
            "errors {:?}\nreference {:?}",
            fast.errors, reference.errors
        ));
    }
    if fast.has_bom != reference.has_bom || fast.blanked_lines != reference.blanked_lines {
        return Err("has_bom or blanked_lines differ".into());
    }
    Ok(())
}
