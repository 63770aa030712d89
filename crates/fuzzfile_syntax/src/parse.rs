//! Driving the event parser and building the span tree.

use crate::decode::{offset_map, MapData};
use crate::recovery;
use crate::{
    CollectionStyle, Comment, Entry, Node, NodeId, NodeKind, ScalarStyle, SyntaxError, TextRange,
    Tree,
};
use granit_parser::{ErrorKind, Event, Options, Parser, ScanError, Span, StructureStyle};
use std::collections::HashMap;

/// Bounds on what one parse may cost.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Larger inputs are refused with one error and an empty tree.
    pub max_input_bytes: usize,
    /// Deepest nesting of collections.
    pub max_depth: usize,
    /// How many times the parser re-parses after blanking lines with errors.
    pub max_recoveries: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: 64 * 1024 * 1024,
            max_depth: 256,
            max_recoveries: 32,
        }
    }
}

/// Parse YAML text into a span tree. Never fails: problems are in [`Tree::errors`].
pub fn parse(text: &str) -> Tree {
    parse_with_limits(text, Limits::default())
}

/// Parse bytes: invalid UTF-8 is reported with the position of the first bad byte and yields an
/// empty tree. Returns the text as read (lossy) so that positions can be shown; the error's range
/// is a range of that text (the replacement character standing for the bad bytes).
pub fn parse_bytes(bytes: &[u8]) -> (String, Tree) {
    parse_owned_bytes(bytes.to_vec())
}

/// [`parse_bytes`] of bytes the caller gives up: valid UTF-8 becomes the returned text without
/// a copy (a file read whole is then held once, not twice, while it is analysed).
pub fn parse_owned_bytes(bytes: Vec<u8>) -> (String, Tree) {
    match String::from_utf8(bytes) {
        Ok(text) => {
            let tree = parse(&text);
            (text, tree)
        }
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let bad = bytes.get(at).copied().unwrap_or(0);
            // The range is in the returned text, where the bad bytes are one U+FFFD: it starts
            // at the same offset as in `bytes` (all before it is valid) and covers that char.
            let tree = Tree {
                errors: vec![SyntaxError {
                    range: TextRange::from_usize(at, at + '\u{fffd}'.len_utf8()),
                    message: format!("invalid UTF-8: byte 0x{bad:02x} does not start or continue a valid character"),
                    detected_at: None,
                    help: Some("Fuzzfiles must be UTF-8 text; re-encode the file (for example with `iconv -t UTF-8`)".into()),
                }],
                has_bom: text.starts_with('\u{feff}'),
                ..Tree::default()
            };
            (text, tree)
        }
    }
}

pub fn parse_with_limits(text: &str, limits: Limits) -> Tree {
    if let Some(refused) = refuse_too_large(text, limits) {
        return refused;
    }
    if let Some(tree) = crate::fast::parse(text, limits) {
        return tree;
    }
    recovery::parse_recovering(text, limits, recovery::LaterPasses::FastPathFirst)
}

/// Parse with the event parser only, skipping the fast path: the reference the fast path is
/// tested against.
#[doc(hidden)]
pub fn parse_reference(text: &str) -> Tree {
    parse_reference_with_limits(text, Limits::default())
}

#[doc(hidden)]
pub fn parse_reference_with_limits(text: &str, limits: Limits) -> Tree {
    if let Some(refused) = refuse_too_large(text, limits) {
        return refused;
    }
    recovery::parse_recovering(text, limits, recovery::LaterPasses::EventParserOnly)
}

/// The fast path alone: `None` where it leaves the text to the event parser.
#[doc(hidden)]
pub fn parse_fast(text: &str) -> Option<Tree> {
    parse_fast_with_limits(text, Limits::default())
}

#[doc(hidden)]
pub fn parse_fast_with_limits(text: &str, limits: Limits) -> Option<Tree> {
    if text.len() > limits.max_input_bytes {
        return None;
    }
    crate::fast::parse(text, limits)
}

/// The line of `fast.rs` where the fast path gives up on `text`, `None` when it takes it.
#[doc(hidden)]
pub fn fast_path_bail_line(text: &str) -> Option<u32> {
    crate::fast::bail_line(text, Limits::default())
}

fn refuse_too_large(text: &str, limits: Limits) -> Option<Tree> {
    if text.len() > limits.max_input_bytes {
        return Some(Tree {
            errors: vec![SyntaxError {
                range: TextRange::new(0, 0),
                message: format!(
                    "input is {} bytes, over the limit of {} bytes",
                    text.len(),
                    limits.max_input_bytes
                ),
                detected_at: None,
                help: Some("split the workflow into smaller Fuzzfiles".into()),
            }],
            ..Tree::default()
        });
    }
    None
}

enum Frame {
    Seq {
        id: NodeId,
        items: Vec<NodeId>,
        flow: bool,
        end: u32,
    },
    Map {
        id: NodeId,
        entries: Vec<Entry>,
        key: Option<NodeId>,
        flow: bool,
        end: u32,
    },
}

/// What one pass of the event parser produced.
pub(crate) struct Pass {
    pub tree: Tree,
    /// The first error of this pass, if any, with the lines to blank before trying again.
    pub error: Option<(SyntaxError, Vec<usize>)>,
}

fn offset(m: &granit_parser::Marker) -> u32 {
    u32::try_from(m.byte_offset().unwrap_or(0)).unwrap_or(u32::MAX)
}

fn span_range(span: &Span) -> TextRange {
    TextRange::new(offset(&span.start), offset(&span.end))
}

/// One pass over `text` (already partly blanked by recovery: same length as the original).
pub(crate) fn parse_pass(text: &str, limits: Limits) -> Pass {
    let mut opts = Options::default();
    opts.emit_anchor_events = true;
    // An alias without an anchor becomes an alias node with no target (and an error), so the
    // rest of its line stays in the tree.
    opts.emit_unresolved_aliases = true;
    opts.emit_comments = true;
    opts.max_buffered_comment_events = usize::MAX / 2;
    opts.flow_nesting_limit = limits.max_depth;
    opts.block_nesting_limit = limits.max_depth;
    let mut parser = Parser::new_from_str_with_options(text, opts);

    let mut tree = Tree {
        has_bom: text.starts_with('\u{feff}'),
        ..Tree::default()
    };
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, NodeId> = HashMap::new();
    let mut last_node: Option<NodeId> = None;
    let mut documents = 0usize;
    let mut error = None;

    while let Some(result) = parser.next_event() {
        let (event, span) = match result {
            Ok(ev) => ev,
            Err(e) => {
                error = Some(describe_error(text, &e, &stack, &tree, limits.max_depth));
                break;
            }
        };
        let range = span_range(&span);
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd => {}
            Event::DocumentStart(..) => {
                documents += 1;
                if documents > 1 {
                    let line_end = fuzzfile_diagnostics::line_end_at(text, range.start as usize);
                    tree.errors.push(SyntaxError {
                        range: TextRange::from_usize(range.start as usize, line_end),
                        message: "a second YAML document starts here; a Fuzzfile holds exactly one".into(),
                        detected_at: None,
                        help: Some("remove the `---` separator and merge the documents, or split them into two files".into()),
                    });
                    break;
                }
            }
            Event::Comment(t, _) => {
                tree.comments.push(Comment {
                    range,
                    text: t.into_owned(),
                });
            }
            Event::Anchor(_, name) => {
                if let Some(id) = last_node {
                    tree.set_anchor(id, &name, range);
                }
            }
            Event::Alias(anchor_id) => {
                let name = range.slice(text).trim_start_matches('*');
                let target = anchors.get(&anchor_id).copied();
                let id = tree.push(Node {
                    kind: NodeKind::Alias { target },
                    range,
                });
                tree.set_alias_name(id, name);
                last_node = Some(id);
                attach(&mut tree, &mut stack, id);
            }
            Event::UnresolvedAlias(name) => {
                tree.errors.push(SyntaxError {
                    range,
                    message: format!("unknown alias `*{name}`: no anchor `&{name}` is defined before it"),
                    detected_at: None,
                    help: Some("define the anchor with `&name` on a node before this alias, or check the spelling".into()),
                });
                let id = tree.push(Node {
                    kind: NodeKind::Alias { target: None },
                    range,
                });
                tree.set_alias_name(id, &name);
                attach(&mut tree, &mut stack, id);
            }
            Event::Scalar(value, style, anchor_id, tag) => {
                let style = match style {
                    granit_parser::ScalarStyle::Plain => ScalarStyle::Plain,
                    granit_parser::ScalarStyle::SingleQuoted => ScalarStyle::SingleQuoted,
                    granit_parser::ScalarStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
                    granit_parser::ScalarStyle::Literal => ScalarStyle::Literal,
                    granit_parser::ScalarStyle::Folded => ScalarStyle::Folded,
                };
                let (node_range, map) = if style.is_block() {
                    let content = trim_block_end(text, range);
                    let header = block_header_start(text, range.start).unwrap_or(range.start);
                    (
                        TextRange::new(header, content.end),
                        offset_map(text, range, style, &value),
                    )
                } else if range.is_empty() {
                    (range, MapData::identity(range.start))
                } else {
                    (range, offset_map(text, range, style, &value))
                };
                let value = if range.is_empty() && style == ScalarStyle::Plain {
                    ""
                } else {
                    &value
                };
                let tag = tag.map(|t| tag_text(text, &span, &t).into_boxed_str());
                let id = tree.push_scalar(node_range, value, style, map);
                if let Some(tag) = tag {
                    tree.set_tag(id, tag);
                }
                if anchor_id != 0 {
                    anchors.insert(anchor_id, id);
                }
                last_node = Some(id);
                attach(&mut tree, &mut stack, id);
            }
            Event::SequenceStart(style, anchor_id, tag) => {
                let flow = style == StructureStyle::Flow;
                let tag = tag.map(|t| tag_text(text, &span, &t).into_boxed_str());
                let id = tree.push(Node {
                    kind: NodeKind::Sequence {
                        style: cstyle(flow),
                        items: Box::default(),
                    },
                    range,
                });
                if let Some(tag) = tag {
                    tree.set_tag(id, tag);
                }
                if anchor_id != 0 {
                    anchors.insert(anchor_id, id);
                }
                last_node = Some(id);
                stack.push(Frame::Seq {
                    id,
                    items: Vec::new(),
                    flow,
                    end: range.end,
                });
            }
            Event::MappingStart(style, anchor_id, tag) => {
                let flow = style == StructureStyle::Flow;
                let tag = tag.map(|t| tag_text(text, &span, &t).into_boxed_str());
                let id = tree.push(Node {
                    kind: NodeKind::Mapping {
                        style: cstyle(flow),
                        entries: Box::default(),
                    },
                    range,
                });
                if let Some(tag) = tag {
                    tree.set_tag(id, tag);
                }
                if anchor_id != 0 {
                    anchors.insert(anchor_id, id);
                }
                last_node = Some(id);
                stack.push(Frame::Map {
                    id,
                    entries: Vec::new(),
                    key: None,
                    flow,
                    end: range.end,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some(frame) = stack.pop() {
                    let id = close(&mut tree, frame, Some(range));
                    attach(&mut tree, &mut stack, id);
                }
            }
            _ => {}
        }
    }
    // Close whatever the error left open, so the partial tree is usable.
    while let Some(frame) = stack.pop() {
        let id = close(&mut tree, frame, None);
        attach(&mut tree, &mut stack, id);
    }
    tree.shrink_values();
    Pass { tree, error }
}

fn cstyle(flow: bool) -> CollectionStyle {
    if flow {
        CollectionStyle::Flow
    } else {
        CollectionStyle::Block
    }
}

fn tag_text(text: &str, span: &Span, tag: &granit_parser::Tag) -> String {
    if let Some(m) = &span.tag_start {
        let s = m.byte_offset().unwrap_or(0);
        let e = text[s..]
            .find([' ', '\t', '\n', '\r'])
            .map_or(text.len(), |i| s + i);
        if let Some(t) = text.get(s..e) {
            return t.to_owned();
        }
    }
    format!("{tag}")
}

/// The end of a block scalar's content without the trailing blank lines and indentation that
/// the parser's span includes.
pub(crate) fn trim_block_end(text: &str, range: TextRange) -> TextRange {
    let s = range.slice(text);
    let trimmed = s.trim_end_matches([' ', '\t', '\n', '\r']);
    TextRange::new(range.start, range.start + trimmed.len() as u32)
}

/// Start of the `|`/`>` header of the block scalar whose content starts at `content_start`.
pub(crate) fn block_header_start(text: &str, content_start: u32) -> Option<u32> {
    let before = text.get(..content_start as usize)?;
    let trimmed = before.trim_end_matches([' ', '\t', '\n', '\r']);
    let line_start = fuzzfile_diagnostics::line_start_at(trimmed, trimmed.len());
    let line = &trimmed[line_start..];
    // strip a trailing comment
    let code = match line.find(" #") {
        Some(i) => line[..i].trim_end(),
        None => line,
    };
    let pos = code.rfind(['|', '>'])?;
    Some((line_start + pos) as u32)
}

fn attach(tree: &mut Tree, stack: &mut [Frame], id: NodeId) {
    let end = tree.node(id).range.end;
    match stack.last_mut() {
        None => {
            if tree.root().is_none() {
                tree.set_root(id);
            }
        }
        Some(Frame::Seq { items, end: e, .. }) => {
            items.push(id);
            *e = (*e).max(end);
        }
        Some(Frame::Map {
            entries,
            key,
            end: e,
            ..
        }) => {
            match key.take() {
                None => *key = Some(id),
                Some(k) => entries.push(Entry { key: k, value: id }),
            }
            *e = (*e).max(end);
        }
    }
}

fn close(tree: &mut Tree, frame: Frame, end_event: Option<TextRange>) -> NodeId {
    match frame {
        Frame::Seq {
            id,
            items,
            flow,
            end,
        } => {
            let end = match end_event {
                Some(r) if flow => r.end.max(end),
                _ => end,
            };
            let node = tree.node_mut(id);
            node.range = TextRange::new(node.range.start, end.max(node.range.start));
            if let NodeKind::Sequence { items: slot, .. } = &mut node.kind {
                *slot = items.into_boxed_slice();
            }
            id
        }
        Frame::Map {
            id,
            mut entries,
            key,
            flow,
            end,
        } => {
            if let Some(k) = key {
                // A key whose value the error cut off: give it an empty value.
                let at = tree.node(k).range.end;
                let v = tree.push_scalar(
                    TextRange::empty(at),
                    "",
                    ScalarStyle::Plain,
                    MapData::identity(at),
                );
                entries.push(Entry { key: k, value: v });
            }
            let end = match end_event {
                Some(r) if flow => r.end.max(end),
                _ => end,
            };
            let node = tree.node_mut(id);
            // A block mapping's start event sits at its first key already.
            node.range = TextRange::new(node.range.start, end.max(node.range.start));
            if let NodeKind::Mapping { entries: slot, .. } = &mut node.kind {
                *slot = entries.into_boxed_slice();
            }
            id
        }
    }
}

/// 0-based line of `offset`, with the line breaks of [`fuzzfile_diagnostics::LineIndex`]
/// (`\n`, `\r\n`, lone `\r`), so blanked line numbers mean the same lines everywhere.
fn line_of(text: &str, offset: usize) -> usize {
    let b = &text.as_bytes()[..offset.min(text.len())];
    b.iter()
        .enumerate()
        .filter(|&(i, &c)| c == b'\n' || (c == b'\r' && text.as_bytes().get(i + 1) != Some(&b'\n')))
        .count()
}

/// Turn a parser error into a [`SyntaxError`] that starts where the problem starts, and say
/// which lines to blank for the next attempt.
fn describe_error(
    text: &str,
    e: &ScanError,
    stack: &[Frame],
    tree: &Tree,
    max_depth: usize,
) -> (SyntaxError, Vec<usize>) {
    let at = e.marker().byte_offset().unwrap_or(0).min(text.len());
    let mut at_end = at;
    while at_end < text.len() && !text.is_char_boundary(at_end + 1) {
        at_end += 1;
    }
    let at_end = (at_end + 1).min(text.len()).max(at);
    let here = TextRange::from_usize(at, at_end);
    let info = clean_message(&e.info());
    let err_line = line_of(text, at);

    // Tab errors are noticed after the tab (in the indentation) or at the start of the plain
    // scalar whose next line is indented with one: point at the tab and blank its line.
    if matches!(
        e.kind(),
        ErrorKind::TabInBlockIndentation | ErrorKind::TabNotAllowed | ErrorKind::TabInPlainScalar
    ) {
        if let Some(tab) = indentation_tab(text, at) {
            return (
                SyntaxError {
                    range: TextRange::from_usize(tab, tab + 1),
                    message: "a tab is used for indentation; YAML indentation must be spaces"
                        .to_string(),
                    detected_at: None,
                    help: Some("replace the tab with spaces".to_string()),
                },
                vec![line_of(text, tab)],
            );
        }
    }

    // An open flow collection is the usual cause of a later error: point at its opener. A
    // single `key: value` pair inside `[...]` is a flow mapping without braces: skip it.
    let open_flow = stack
        .iter()
        .rev()
        .filter_map(|f| match f {
            Frame::Seq { id, flow: true, .. } => Some((*id, '[')),
            Frame::Map { id, flow: true, .. } => Some((*id, '{')),
            _ => None,
        })
        .find(|&(id, open)| {
            text.as_bytes().get(tree.node(id).range.start as usize) == Some(&(open as u8))
        });
    if let Some((id, open)) = open_flow {
        let start = tree.node(id).range.start as usize;
        let open_line = line_of(text, start);
        let flow_error = matches!(
            e.kind(),
            ErrorKind::UnexpectedEofFlowSequence
                | ErrorKind::UnexpectedEofFlowMapping
                | ErrorKind::UnexpectedEofImplicitFlowMapping
                | ErrorKind::ExpectedFlowSequenceSeparator
                | ErrorKind::ExpectedFlowMappingSeparator
                | ErrorKind::UnexpectedEof
                | ErrorKind::InvalidColonPlacement
        ) || open_line < err_line;
        if flow_error {
            return (
                SyntaxError {
                    range: TextRange::from_usize(start, start + 1),
                    message: format!("this `{open}` is never closed"),
                    detected_at: Some(here),
                    help: Some(unclosed_help(open)),
                },
                vec![open_line],
            );
        }
    }

    // `key: x` then a deeper line `  other: y`: the deeper line continues the plain value `x`,
    // and the parser only complains at its `:`. Say what happened, at the line's start.
    if matches!(e.kind(), ErrorKind::MappingValueNotAllowed) {
        if let Some(d) = deeper_line_error(text, at, err_line) {
            return d;
        }
    }
    let (message, help) = match e.kind() {
        // Reported at the opener when the text ends inside the collection.
        ErrorKind::UnclosedFlowCollection { open } => {
            (
                format!("this `{open}` is never closed"),
                Some(unclosed_help(*open)),
            )
        }
        ErrorKind::UnclosedQuotedScalar => (
            "this quoted string is never closed".to_string(),
            Some("add the closing quote; inside single quotes write `''` for a quote, inside double quotes `\\\"`".to_string()),
        ),
        ErrorKind::RecursionLimitExceeded => (
            format!("nesting is too deep: more than {max_depth} levels of lists and mappings"),
            Some("a Fuzzfile needs fewer than 10 levels; check for runaway brackets".to_string()),
        ),
        ErrorKind::TabInBlockIndentation | ErrorKind::TabNotAllowed => (
            "a tab is used for indentation; YAML indentation must be spaces".to_string(),
            Some("replace the tab with spaces".to_string()),
        ),
        ErrorKind::InvalidIndentation | ErrorKind::ExpectedBlockMappingKey | ErrorKind::ExpectedBlockSequenceEntry => (
            format!("{info}; the indentation of this line does not match the lines around it"),
            Some("indent the line like its siblings (the keys of one mapping start in the same column)".to_string()),
        ),
        ErrorKind::BomInsideDocument => (
            "a byte order mark inside the document".to_string(),
            Some("remove the invisible U+FEFF character; only the very first bytes of a file may hold one".to_string()),
        ),
        _ => (info.clone(), None),
    };
    // Too deep: every line nested below the one that crossed the limit would cross it again,
    // one recovery pass each; blank them together. When the line's own key or item crossed it
    // (the error is at its first character), so do its siblings.
    let lines = if matches!(e.kind(), ErrorKind::RecursionLimitExceeded) {
        let line_start = fuzzfile_diagnostics::line_start_at(text, at);
        let siblings = text[line_start..at].bytes().all(|b| b == b' ');
        nested_lines(text, err_line, siblings)
    } else {
        vec![err_line]
    };
    (
        SyntaxError {
            range: here,
            message,
            detected_at: None,
            help,
        },
        lines,
    )
}

/// Line `first` and the non-blank lines after it that are indented more than it (or as much,
/// with `siblings`), up to the first that is not (blank lines are skipped: recovery would blank
/// an earlier line for them).
fn nested_lines(text: &str, first: usize, siblings: bool) -> Vec<usize> {
    let indent = |l: &str| l.len() - l.trim_start_matches(' ').len();
    let mut lines = fuzzfile_diagnostics::lines(text).enumerate().skip(first);
    let Some((_, head)) = lines.next() else {
        return vec![first];
    };
    let base = indent(head);
    let mut out = vec![first];
    for (i, l) in lines {
        if l.trim().is_empty() {
            continue;
        }
        if indent(l) < base || (indent(l) == base && !siblings) {
            break;
        }
        out.push(i);
    }
    out
}

/// The first tab in the indentation (leading spaces and tabs) of the line holding `at` or of a
/// later line.
fn indentation_tab(text: &str, at: usize) -> Option<usize> {
    let mut p = fuzzfile_diagnostics::line_start_at(text, at);
    loop {
        let rest = &text[p..];
        let indent = rest.find(|c| c != ' ' && c != '\t').unwrap_or(rest.len());
        if let Some(i) = rest[..indent].find('\t') {
            return Some(p + i);
        }
        if fuzzfile_diagnostics::line_end_at(text, p) == text.len() {
            return None;
        }
        p = fuzzfile_diagnostics::next_line_start(text, p);
    }
}

/// The error for a line indented deeper than the key line above it.
fn deeper_line_error(text: &str, at: usize, err_line: usize) -> Option<(SyntaxError, Vec<usize>)> {
    let lines: Vec<&str> = fuzzfile_diagnostics::lines(text).collect();
    let line = lines.get(err_line)?;
    let indent = line.len() - line.trim_start_matches(' ').len();
    let prev = lines[..err_line]
        .iter()
        .rev()
        .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
    let prev_indent = prev.len() - prev.trim_start_matches(' ').len();
    let prev_is_key = prev
        .trim_start()
        .split_once(": ")
        .is_some_and(|(k, v)| !k.is_empty() && !v.trim().is_empty());
    if indent <= prev_indent || !prev_is_key {
        return None;
    }
    let line_start = fuzzfile_diagnostics::line_start_at(text, at);
    let start = line_start + indent;
    let end = start + line.trim_start_matches(' ').find(':').unwrap_or(1).max(1);
    Some((
        SyntaxError {
            range: TextRange::from_usize(start, end),
            message: format!("this line is indented deeper ({indent} spaces) than the key above it ({prev_indent}), so YAML reads it as part of that key's value"),
            detected_at: None,
            help: Some(format!("indent it with {prev_indent} spaces, like the key above, if it is a sibling key")),
        },
        vec![err_line],
    ))
}

/// What to do about an unclosed `[` or `{`.
fn unclosed_help(open: char) -> String {
    if open == '{' {
        "add the closing `}`, or write the mapping as indented `key: value` lines".to_owned()
    } else {
        "add the closing `]`, or write the list as indented `- ` lines".to_owned()
    }
}

fn clean_message(info: &str) -> String {
    // granit appends " at char N line L column C"; positions are shown separately.
    let s = match info.find(" at char ") {
        Some(i) => &info[..i],
        None => info,
    };
    let s = s.trim();
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    if let Some(c) = chars.next() {
        out.extend(c.to_lowercase());
    }
    out.push_str(chars.as_str());
    out
}

#[cfg(test)]
mod owned_bytes_tests {
    use super::{parse_bytes, parse_owned_bytes};
    use crate::debug_tree;

    /// Bytes read whole, owned or borrowed: valid UTF-8 is the text itself, parsed as `parse`
    /// parses it; otherwise the text is the lossy one and the tree is empty with one error at
    /// the first bad byte (where `std::str::from_utf8` stops).
    #[test]
    fn owned_and_borrowed_bytes_parse_as_text_does() {
        let inputs: [&[u8]; 6] = [
            b"version: v4\njobs:\n  a:\n    command: [echo, hi]\n",
            b"\xef\xbb\xbfversion: v4\njobs: {}\n",
            b"version: v4\njobs:\n  a:\n    command: [echo, \xff]\n",
            b"\xef\xbb\xbf\xc3",
            b"\x80version: v4\n",
            b"",
        ];
        for bytes in inputs {
            let lossy = String::from_utf8_lossy(bytes).into_owned();
            for (text, tree) in [parse_bytes(bytes), parse_owned_bytes(bytes.to_vec())] {
                assert_eq!(text, lossy, "{bytes:?}");
                assert_eq!(tree.has_bom, lossy.starts_with('\u{feff}'), "{bytes:?}");
                match std::str::from_utf8(bytes) {
                    Ok(valid) => {
                        let expected = crate::parse(valid);
                        assert_eq!(tree.errors, expected.errors, "{bytes:?}");
                        assert_eq!(
                            debug_tree(&text, &tree),
                            debug_tree(valid, &expected),
                            "{bytes:?}"
                        );
                    }
                    Err(e) => {
                        assert!(tree.root().is_none(), "{bytes:?}");
                        assert_eq!(tree.errors.len(), 1, "{bytes:?}");
                        assert_eq!(tree.errors[0].range.start as usize, e.valid_up_to());
                        assert!(tree.errors[0].message.starts_with("invalid UTF-8"));
                    }
                }
            }
        }
        // An invalid byte is reported at its offset, whichever path read it.
        let (_, tree) = parse_owned_bytes(b"version: v4\n\xffjobs: {}\n".to_vec());
        assert_eq!(tree.errors.len(), 1);
        assert_eq!(tree.errors[0].range.start, 12);
        assert!(tree.errors[0].message.contains("byte 0xff"));
    }
}
