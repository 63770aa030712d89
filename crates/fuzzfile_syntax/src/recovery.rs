//! Error recovery: blank the lines where an error starts and parse again.
//!
//! Blanking replaces every byte of a line except its line break with a space, so the text keeps
//! its length and every range computed on it is a range in the original text.

use crate::parse::{parse_pass, Limits, Pass};
use crate::{NodeId, NodeKind, Tree};

/// How the passes after the first (each on the text with more lines blanked) parse.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum LaterPasses {
    /// The fast path, and the event parser where it does not take the text.
    FastPathFirst,
    /// The event parser only (the reference the fast-path passes are compared with).
    EventParserOnly,
}

pub(crate) fn parse_recovering(text: &str, limits: Limits, later: LaterPasses) -> Tree {
    let mut pass = parse_pass(text, limits);
    let Some((first_error, first_lines)) = pass.error.take() else {
        return pass.tree;
    };
    let mut errors = vec![first_error];
    let mut blanked: Vec<u32> = Vec::new();
    let mut work = text.as_bytes().to_vec();
    let starts = line_starts(text);
    // Large inputs get fewer attempts: each one is a full parse.
    let attempts = if text.len() > 1 << 20 {
        limits.max_recoveries.min(3)
    } else {
        limits.max_recoveries
    };
    let mut to_blank = first_lines;
    let mut best = pass.tree;
    for _ in 0..attempts {
        let mut progressed = false;
        for line in to_blank.drain(..) {
            if let Some(l) = blank_line_or_earlier(&mut work, &starts, line) {
                blanked.push(l as u32);
                progressed = true;
            }
        }
        if !progressed {
            break;
        }
        // Blanking only writes ASCII spaces over whole lines, so the bytes stay valid UTF-8.
        let Ok(work_text) = std::str::from_utf8(&work) else {
            break;
        };
        // The fast path first: most texts are valid once the bad lines are blanked, and where
        // it takes a text its tree is the event parser's (`crate::differential`); the event
        // parser, several times slower, only where it does not.
        let fast = match later {
            LaterPasses::FastPathFirst => crate::fast::parse(work_text, limits),
            LaterPasses::EventParserOnly => None,
        };
        let mut next = match fast {
            Some(tree) => Pass { tree, error: None },
            None => parse_pass(work_text, limits),
        };
        let err = next.error.take();
        if next.tree.len() >= best.len() || err.is_none() {
            best = next.tree;
        }
        match err {
            None => break,
            Some((e, lines)) => {
                if !errors.contains(&e) {
                    errors.push(e);
                }
                to_blank = lines;
            }
        }
    }
    // Errors from the passes come first, in the order found; the tree's own (second
    // document, ...) follow.
    errors.append(&mut best.errors);
    errors.sort_by_key(|e| (e.range.start, e.range.end));
    errors.dedup_by(|a, b| a.range == b.range && a.message == b.message);
    best.errors = errors;
    best.comments.retain(|c| {
        !blanked
            .iter()
            .any(|&l| line_index_of(&starts, c.range.start as usize) == l as usize)
    });
    blanked.sort_unstable();
    blanked.dedup();
    best.blanked_lines = blanked;
    best.has_bom = text.starts_with('\u{feff}');
    if !best.blanked_lines.is_empty() && !text.is_ascii() {
        demote_split_maps(text, &mut best);
    }
    best
}

/// Blanking writes one space per byte, so where a blanked line held multi-byte characters, the
/// spaces a block scalar keeps from it map into the middle of an original character. Such maps
/// are demoted to inexact ones (pointing at the scalar's start).
fn demote_split_maps(text: &str, tree: &mut Tree) {
    for i in 0..tree.len() {
        let id = NodeId(i as u32);
        let node = tree.node(id);
        let NodeKind::Scalar(s) = &node.kind else {
            continue;
        };
        let s = tree.scalar_of(s);
        let split = s.map.is_exact()
            && s.value.char_indices().any(|(i, c)| {
                let r = s.map.range_to_source(i..i + c.len_utf8());
                !text.is_char_boundary(r.start as usize) || !text.is_char_boundary(r.end as usize)
            });
        if split {
            let start = node.range.start;
            tree.demote_map(id, start);
        }
    }
}

/// Line starts as [`fuzzfile_diagnostics::LineIndex`] computes them (`\n`, `\r\n` and a lone
/// `\r` end a line), so the blanked line numbers are the index's line numbers.
fn line_starts(text: &str) -> Vec<usize> {
    let index = fuzzfile_diagnostics::LineIndex::new(text);
    (0..index.line_count())
        .map(|l| index.line_start(l) as usize)
        .collect()
}

fn line_index_of(starts: &[usize], offset: usize) -> usize {
    match starts.binary_search(&offset) {
        Ok(i) => i,
        Err(i) => i - 1,
    }
}

/// Blank `line`, or when it is already blank the nearest earlier non-blank line. Returns the
/// line blanked, or `None` when nothing was left to blank.
fn blank_line_or_earlier(work: &mut [u8], starts: &[usize], line: usize) -> Option<usize> {
    let mut l = line.min(starts.len().saturating_sub(1));
    loop {
        let s = starts[l];
        let e = starts.get(l + 1).map_or(work.len(), |&n| n - 1);
        let slice = &mut work[s..e];
        if slice
            .iter()
            .any(|b| !matches!(b, b' ' | b'\r' | b'\n' | b'\t'))
        {
            for b in slice.iter_mut() {
                if !fuzzfile_diagnostics::is_break(*b) {
                    *b = b' ';
                }
            }
            return Some(l);
        }
        if l == 0 {
            return None;
        }
        l -= 1;
    }
}
