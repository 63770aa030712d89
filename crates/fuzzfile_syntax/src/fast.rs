//! Fast path: a byte-level parser for the YAML subset that Fuzzfiles use.
//!
//! It builds the same [`Tree`] as the event-parser path (same nodes in the same order, same
//! ranges, values, styles, offset maps and comments) or gives up with `None`, and the caller
//! then parses with the event parser, which stays the reference. It gives up on anything
//! outside the subset and on anything it is not sure about, including every syntax error.
//!
//! The subset:
//! - block mappings with plain or single-line quoted keys, block sequences (also indentless
//!   ones under a key, and `- key: value` compact mappings);
//! - single-line plain scalars; quoted scalars, also over several lines (continuation lines
//!   indented deeper than the enclosing collection), with the escapes decoded exactly;
//! - literal and folded block scalars without an indentation indicator;
//! - flow sequences and mappings of scalars and nested flow collections, also over several
//!   lines, with comments between their entries;
//! - comments, empty values, a leading BOM, CRLF line breaks, one leading `---`.
//!
//! Not in the subset: anchors, aliases, tags, directives, `?` keys, tabs outside scalars and
//! comments, multi-line plain scalars, document markers after the first, a scalar as the
//! root or alone on the line below its key, and a few corners where the decoder of
//! `decode.rs` (which builds the reference's offset maps) and the parser disagree.
//!
//! Speed: one pass over the bytes, a word-at-a-time check for unmodelled characters first, no
//! allocation per character, identity offset maps (no segments) for plain and unescaped
//! quoted scalars, one exact-size allocation per collection.

use crate::decode::{self, MapData, Quote};
use crate::parse::Limits;
use crate::{
    CollectionStyle, Comment, Entry, Node, NodeId, NodeKind, ScalarStyle, TextRange, Tree,
};
use std::borrow::Cow;

/// Parse `text` if it is in the subset; `None` otherwise.
pub(crate) fn parse(text: &str, limits: Limits) -> Option<Tree> {
    // Offsets are u32; stay well clear of the edge.
    if text.len() >= (u32::MAX / 2) as usize {
        return None;
    }
    let b = text.as_bytes();
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    if !precheck(text, bom) {
        return None;
    }
    let mut tree = Tree {
        has_bom: bom > 0,
        ..Tree::default()
    };
    // About one node per 11 bytes in typical Fuzzfiles.
    tree.nodes.reserve(text.len() / 10 + 4);
    // Scalars' decoded text is about half of a typical Fuzzfile's bytes.
    tree.reserve_values(text.len() / 2 + 16);
    let mut p = Fast {
        text,
        b,
        tree,
        depth: 0,
        // The event parser counts nesting its own way; stay far below its limit.
        max_depth: limits.max_depth / 2,
        allow_marker: true,
        entries: Vec::with_capacity(64),
        items: Vec::with_capacity(64),
        pending: Vec::new(),
    };
    p.document(bom).ok()?;
    p.tree.shrink_values();
    Some(p.tree)
}

/// Where in this file the fast path gives up on `text` (a line number), for tests and
/// tuning; `None` when it takes the text.
pub(crate) fn bail_line(text: &str, limits: Limits) -> Option<u32> {
    if text.len() >= (u32::MAX / 2) as usize {
        return Some(0);
    }
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    if !precheck(text, bom) {
        return Some(1);
    }
    let mut p = Fast {
        text,
        b: text.as_bytes(),
        tree: Tree::default(),
        depth: 0,
        max_depth: limits.max_depth / 2,
        allow_marker: true,
        entries: Vec::with_capacity(64),
        items: Vec::with_capacity(64),
        pending: Vec::new(),
    };
    p.document(bom).err().map(|b| b.0)
}

/// Reject texts with characters whose YAML meaning the fast path does not model: control
/// characters, a lone `\r`, non-ASCII line breaks, a BOM after the start, non-characters.
fn precheck(text: &str, from: usize) -> bool {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    // High bit of each byte of `x` that is zero (exact, no false positives).
    let zero = |x: u64| !(((x & LOW7).wrapping_add(LOW7)) | x) & HI;
    let b = text.as_bytes();
    let mut i = from;
    while i < b.len() {
        // Eight printable ASCII bytes, line feeds or tabs at a time.
        if let Some(Ok(chunk)) = b.get(i..i + 8).map(<[u8; 8]>::try_from) {
            let w = u64::from_le_bytes(chunk);
            if w & HI == 0 {
                let control = !((w | HI).wrapping_sub(0x20 * LO)) & HI;
                let allowed = zero(w ^ (b'\n' as u64 * LO)) | zero(w ^ (b'\t' as u64 * LO));
                if control & !allowed == 0 && zero(w ^ (0x7f * LO)) == 0 {
                    i += 8;
                    continue;
                }
            }
        }
        let c = b[i];
        if (0x20..0x7f).contains(&c) || c == b'\n' || c == b'\t' {
            i += 1;
            continue;
        }
        if c == b'\r' {
            if b.get(i + 1) != Some(&b'\n') {
                return false;
            }
            i += 1;
            continue;
        }
        if c < 0x80 {
            return false; // C0 control or DEL
        }
        let Some(ch) = text.get(i..).and_then(|s| s.chars().next()) else {
            return false;
        };
        if matches!(
            ch,
            '\u{80}'..='\u{9f}' | '\u{feff}' | '\u{2028}' | '\u{2029}' | '\u{fffe}' | '\u{ffff}'
        ) {
            return false;
        }
        i += ch.len_utf8();
    }
    true
}

/// Why the fast path gave up: the source line of the check (for `bail_reason`).
struct Bail(u32);
type R<T> = Result<T, Bail>;

#[track_caller]
fn bail<T>() -> R<T> {
    Err(Bail(std::panic::Location::caller().line()))
}

/// A line with content (not blank, not only a comment).
#[derive(Clone, Copy)]
struct Line {
    /// Offset of column 0 (after the BOM on the first line).
    start: usize,
    /// Offset of the first character that is not a space.
    first: usize,
    /// Column of `first`.
    col: usize,
}

/// How a single-line plain or quoted scalar ended.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// At a `:` followed by a space or line break (offset of the `:`): it is a key.
    Colon(usize),
    /// At a `#` starting a comment.
    Comment(usize),
    /// At the line break (or the end of the text).
    Eol(usize),
    /// In flow context: at a flow indicator (offset).
    Flow(usize),
    /// A quoted scalar ended; the rest of the line starts at this offset (after spaces).
    After(usize),
}

/// A scalar scanned but not yet added to the tree (children come after their parent).
struct Tok<'a> {
    start: usize,
    end: usize,
    /// Borrowed from the text unless decoding changed it.
    value: Cow<'a, str>,
    style: ScalarStyle,
    map: MapData,
    /// A quoted scalar over more than one line (never a key).
    multiline: bool,
}

struct Fast<'a> {
    text: &'a str,
    b: &'a [u8],
    tree: Tree,
    depth: usize,
    max_depth: usize,
    /// A `---` line is accepted only before the root node.
    allow_marker: bool,
    /// Entries and items of the collections being built, innermost last; each collection
    /// takes its own off the end when it is complete (one exact allocation).
    entries: Vec<Entry>,
    items: Vec<NodeId>,
    /// Blank lines of the block scalar being decoded (offsets of their line breaks).
    pending: Vec<usize>,
}

fn is_break_or_end(b: &[u8], i: usize) -> bool {
    i >= b.len() || b[i] == b'\n' || b[i] == b'\r'
}

/// First `\n` at or after `i`, or the end of `b`.
fn find_nl(b: &[u8], mut i: usize) -> usize {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    const NL: u64 = LO * b'\n' as u64;
    while i + 8 <= b.len() {
        let Ok(chunk) = <[u8; 8]>::try_from(&b[i..i + 8]) else {
            break;
        };
        let x = u64::from_le_bytes(chunk) ^ NL;
        let t = x.wrapping_sub(LO) & !x & HI;
        if t != 0 {
            return i + (t.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() {
        if b[i] == b'\n' {
            return i;
        }
        i += 1;
    }
    b.len()
}

fn u(x: usize) -> u32 {
    x as u32 // the text is shorter than u32::MAX / 2 (checked in `parse`)
}

impl<'a> Fast<'a> {
    fn enter(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > self.max_depth {
            return bail();
        }
        Ok(())
    }

    /// End of the line containing `i`: the offset of its `\r\n` or `\n`, or the text's end.
    fn eol(&self, i: usize) -> usize {
        let n = find_nl(self.b, i);
        if n > i && self.b[n - 1] == b'\r' {
            n - 1
        } else {
            n
        }
    }

    /// Start of the line after the line break at `e` (as returned by [`Self::eol`]).
    fn after_break(&self, e: usize) -> usize {
        match self.b.get(e) {
            Some(b'\r') => e + 2,
            Some(_) => e + 1,
            None => e,
        }
    }

    /// Record the comment starting at the `#` at `h`; returns the end of its line.
    fn comment(&mut self, h: usize) -> usize {
        let e = self.eol(h);
        self.tree.comments.push(Comment {
            range: TextRange::new(u(h), u(e)),
            text: self.text[h + 1..e].to_owned(),
        });
        e
    }

    /// From `i` (inside a line, after a node): only spaces, then a comment (after at least one
    /// space) or the line break. Returns the start of the next line.
    fn rest_of_line(&mut self, mut i: usize) -> R<usize> {
        let b = self.b;
        let from = i;
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        if is_break_or_end(b, i) {
            return Ok(self.after_break(i));
        }
        if b[i] == b'#' && (i > from || b.get(i.wrapping_sub(1)) == Some(&b' ')) {
            let e = self.comment(i);
            return Ok(self.after_break(e));
        }
        bail()
    }

    /// The next line with content at or after line start `i`, recording comment lines.
    fn next_line(&mut self, mut i: usize) -> R<Option<Line>> {
        let b = self.b;
        loop {
            if i >= b.len() {
                return Ok(None);
            }
            let start = i;
            while i < b.len() && b[i] == b' ' {
                i += 1;
            }
            if i >= b.len() {
                return Ok(None);
            }
            match b[i] {
                b'\n' => {
                    i += 1;
                    continue;
                }
                b'\r' => {
                    i += 2;
                    continue;
                }
                b'#' => {
                    let e = self.comment(i);
                    i = self.after_break(e);
                    continue;
                }
                b'\t' => return bail(),
                _ => {}
            }
            if i == start && !self.allow_marker {
                let rest = &b[i..];
                if (rest.starts_with(b"---") || rest.starts_with(b"..."))
                    && (rest.len() == 3 || matches!(rest[3], b' ' | b'\t' | b'\r' | b'\n'))
                {
                    return bail();
                }
            }
            return Ok(Some(Line {
                start,
                first: i,
                col: i - start,
            }));
        }
    }

    fn document(&mut self, bom: usize) -> R<()> {
        let mut next = self.next_line(bom)?;
        if let Some(l) = next {
            let rest = &self.b[l.first..];
            if l.col == 0 && rest.starts_with(b"---") {
                if !(rest.len() == 3 || matches!(rest[3], b' ' | b'\r' | b'\n')) {
                    return bail();
                }
                self.allow_marker = false;
                let nl = self.rest_of_line(l.first + 3)?;
                next = self.next_line(nl)?;
                if next.is_none() {
                    return bail(); // an explicit empty document
                }
            } else if l.col == 0 && rest.starts_with(b"...") {
                return bail();
            }
        }
        self.allow_marker = false;
        let Some(l) = next else {
            return Ok(());
        };
        let (root, after) = self.block_node(l)?;
        if after.is_some() {
            return bail();
        }
        self.tree.set_root(root);
        Ok(())
    }

    fn is_dash(&self, i: usize) -> R<bool> {
        let b = self.b;
        if b[i] != b'-' {
            return Ok(false);
        }
        match b.get(i + 1) {
            None | Some(b' ' | b'\r' | b'\n') => Ok(true),
            Some(b'\t') => bail(),
            _ => Ok(false),
        }
    }

    /// A block collection starting at the content of line `l`.
    fn block_node(&mut self, l: Line) -> R<(NodeId, Option<Line>)> {
        if self.is_dash(l.first)? {
            return self.sequence(l, false);
        }
        let (tok, stop) = self.scalar_block(l.first, l.col)?;
        match stop {
            Stop::Colon(colon) => self.mapping(l, tok, colon),
            _ => bail(),
        }
    }

    fn push_scalar(&mut self, t: Tok<'a>) -> NodeId {
        self.tree.push_scalar(
            TextRange::new(u(t.start), u(t.end)),
            &t.value,
            t.style,
            t.map,
        )
    }

    fn push_empty(&mut self, at: usize) -> NodeId {
        self.tree.push_scalar(
            TextRange::empty(u(at)),
            "",
            ScalarStyle::Plain,
            MapData::identity(u(at)),
        )
    }

    fn push_collection(&mut self, start: usize, kind: NodeKind) -> NodeId {
        self.tree.push(Node {
            kind,
            range: TextRange::empty(u(start)),
        })
    }

    fn end_of(&self, id: NodeId) -> u32 {
        self.tree.node(id).range.end
    }

    /// A block mapping whose first key `key` (ended by the `:` at `colon`) is on line `l`,
    /// at the column of `l.first`.
    fn mapping(&mut self, l: Line, key: Tok<'a>, colon: usize) -> R<(NodeId, Option<Line>)> {
        self.enter()?;
        let col = l.col;
        let start = key.start;
        let id = self.push_collection(
            start,
            NodeKind::Mapping {
                style: CollectionStyle::Block,
                entries: Box::default(),
            },
        );
        let base = self.entries.len();
        let mut end = u(start);
        let (mut key, mut colon) = (key, colon);
        let next = loop {
            if colon - key.start > 1000 {
                return bail(); // simple keys are limited to 1024 characters
            }
            let kid = self.push_scalar(key);
            let (vid, next) = self.value_after_colon(colon, col)?;
            self.entries.push(Entry {
                key: kid,
                value: vid,
            });
            end = end.max(self.end_of(kid)).max(self.end_of(vid));
            match next {
                Some(n) if n.col == col => {
                    if self.is_dash(n.first)? {
                        return bail();
                    }
                    let (k, stop) = self.scalar_block(n.first, col)?;
                    let Stop::Colon(c) = stop else {
                        return bail();
                    };
                    key = k;
                    colon = c;
                }
                Some(n) if n.col < col => break Some(n),
                None => break None,
                Some(_) => return bail(),
            }
        };
        let entries = self.entries.split_off(base).into_boxed_slice();
        let node = self.tree.node_mut(id);
        node.range = TextRange::new(u(start), end);
        node.kind = NodeKind::Mapping {
            style: CollectionStyle::Block,
            entries,
        };
        self.depth -= 1;
        Ok((id, next))
    }

    /// The value of the mapping entry whose `:` is at `colon`, in a mapping at column `col`.
    fn value_after_colon(&mut self, colon: usize, col: usize) -> R<(NodeId, Option<Line>)> {
        let b = self.b;
        let mut q = colon + 1;
        while q < b.len() && b[q] == b' ' {
            q += 1;
        }
        if is_break_or_end(b, q) || b[q] == b'#' {
            // `#` right after the `:` cannot happen: the key scan requires a space there.
            let nl = self.rest_of_line(q)?;
            let next = self.next_line(nl)?;
            return match next {
                Some(n) if n.col > col => self.block_node(n),
                Some(n) if n.col == col && self.is_dash(n.first)? => self.sequence(n, true),
                _ => Ok((self.push_empty(colon), next)),
            };
        }
        self.inline_node(q, col)
    }

    /// A node starting at `q` on the current line (after `key: ` or `- `), in a collection at
    /// column `col`. Compact mappings are handled by the caller.
    fn inline_node(&mut self, q: usize, col: usize) -> R<(NodeId, Option<Line>)> {
        match self.b[q] {
            b'|' | b'>' => {
                let (tok, end) = self.block_scalar(q, col)?;
                let id = self.push_scalar(tok);
                let next = self.next_line(end)?;
                Ok((id, next))
            }
            b'[' | b'{' => {
                let (id, after) = self.flow(q, col)?;
                let nl = self.rest_of_line(after)?;
                let next = self.next_line(nl)?;
                Ok((id, next))
            }
            _ => {
                let (tok, stop) = self.scalar_block(q, col)?;
                let nl = match stop {
                    Stop::Colon(_) | Stop::Flow(_) => return bail(),
                    Stop::Comment(h) => {
                        let e = self.comment(h);
                        self.after_break(e)
                    }
                    Stop::Eol(e) => self.after_break(e),
                    Stop::After(a) => self.rest_of_line(a)?,
                };
                let id = self.push_scalar(tok);
                let next = self.next_line(nl)?;
                Ok((id, next))
            }
        }
    }

    /// A block sequence whose first `-` starts line `l`. An indentless sequence (the value of
    /// a key at the key's column) starts at its first entry's content, and ends at a line of
    /// its column that is not an entry.
    fn sequence(&mut self, l: Line, indentless: bool) -> R<(NodeId, Option<Line>)> {
        self.enter()?;
        let col = l.col;
        let b = self.b;
        let mut dash = l.first;
        let mut line = l;
        let base = self.items.len();
        let mut id = None;
        let mut start = dash;
        let mut end = 0u32;
        let next = loop {
            // After `-`: spaces, then content, a comment or the line break.
            let mut q = dash + 1;
            while q < b.len() && b[q] == b' ' {
                q += 1;
            }
            let mut mark = q;
            let inline = if is_break_or_end(b, q) {
                false
            } else if b[q] == b'#' {
                mark = self.comment(q);
                false
            } else if b[q] == b'\t' {
                return bail();
            } else {
                true
            };
            let sid = match id {
                Some(s) => s,
                None => {
                    if indentless {
                        start = mark;
                    }
                    end = u(start);
                    let s = self.push_collection(
                        start,
                        NodeKind::Sequence {
                            style: CollectionStyle::Block,
                            items: Box::default(),
                        },
                    );
                    id = Some(s);
                    s
                }
            };
            let _ = sid;
            let (item, next) = if inline {
                if self.is_dash(q)? {
                    return bail(); // `- - x`
                }
                match b[q] {
                    b'|' | b'>' | b'[' | b'{' => self.inline_node(q, col)?,
                    _ => {
                        let (tok, stop) = self.scalar_block(q, col)?;
                        if let Stop::Colon(c) = stop {
                            let inner = Line {
                                start: line.start,
                                first: q,
                                col: q - line.start,
                            };
                            self.mapping(inner, tok, c)?
                        } else {
                            let nl = match stop {
                                Stop::Comment(h) => {
                                    let e = self.comment(h);
                                    self.after_break(e)
                                }
                                Stop::Eol(e) => self.after_break(e),
                                Stop::After(a) => self.rest_of_line(a)?,
                                Stop::Colon(_) | Stop::Flow(_) => return bail(),
                            };
                            let id = self.push_scalar(tok);
                            (id, self.next_line(nl)?)
                        }
                    }
                }
            } else {
                let nl = self.after_break(self.eol(mark));
                let next = self.next_line(nl)?;
                match next {
                    Some(n) if n.col > col => self.block_node(n)?,
                    _ => (self.push_empty(mark), next),
                }
            };
            self.items.push(item);
            end = end.max(self.end_of(item));
            match next {
                Some(n) if n.col == col && self.is_dash(n.first)? => {
                    dash = n.first;
                    line = n;
                }
                Some(n) if n.col == col && indentless => break Some(n),
                Some(n) if n.col < col => break Some(n),
                None => break None,
                Some(_) => return bail(),
            }
        };
        let Some(id) = id else {
            return bail();
        };
        let items = self.items.split_off(base).into_boxed_slice();
        let node = self.tree.node_mut(id);
        node.range = TextRange::new(u(start), end.max(u(start)));
        node.kind = NodeKind::Sequence {
            style: CollectionStyle::Block,
            items,
        };
        self.depth -= 1;
        Ok((id, next))
    }

    /// A single-line plain or a quoted scalar at `p` in block context, in a collection at
    /// column `n`; a `Stop::Colon` makes it a key.
    fn scalar_block(&mut self, p: usize, n: usize) -> R<(Tok<'a>, Stop)> {
        let b = self.b;
        match b[p] {
            b'"' | b'\'' => {
                let (tok, after) = self.quoted(p, n)?;
                let mut i = after;
                while i < b.len() && b[i] == b' ' {
                    i += 1;
                }
                if i < b.len() && b[i] == b':' && is_sep(b, i + 1)? {
                    if tok.multiline {
                        return bail(); // implicit keys are single-line
                    }
                    return Ok((tok, Stop::Colon(i)));
                }
                Ok((tok, Stop::After(after)))
            }
            _ => {
                if !plain_start(b, p, false) {
                    return bail();
                }
                let (end, stop) = plain_block(b, p)?;
                Ok((self.plain_tok(p, end), stop))
            }
        }
    }

    fn plain_tok(&self, p: usize, end: usize) -> Tok<'a> {
        Tok {
            start: p,
            end,
            value: Cow::Borrowed(&self.text[p..end]),
            style: ScalarStyle::Plain,
            map: MapData::identity(u(p)),
            multiline: false,
        }
    }

    /// A quoted scalar at `p`, in a collection at column `n`; returns it and the offset after
    /// the closing quote. Continuation lines must be indented more than `n`.
    fn quoted(&self, p: usize, n: usize) -> R<(Tok<'a>, usize)> {
        let b = self.b;
        let q = b[p];
        let mut i = p + 1;
        let mut escapes = false;
        let mut multiline = false;
        let close = loop {
            if i >= b.len() {
                return bail();
            }
            match b[i] {
                b'\n' | b'\r' => {
                    multiline = true;
                    i = self.after_break(i);
                    let mut j = i;
                    while j < b.len() && b[j] == b' ' {
                        j += 1;
                    }
                    match b.get(j) {
                        None | Some(b'\t') => return bail(),
                        Some(b'\n' | b'\r') => {}
                        Some(_) if j - i <= n => return bail(),
                        Some(_) => {}
                    }
                    i = j;
                }
                c if c == q => {
                    if q == b'\'' && b.get(i + 1) == Some(&b'\'') {
                        escapes = true;
                        i += 2;
                        continue;
                    }
                    break i;
                }
                b'\\' if q == b'"' => {
                    escapes = true;
                    if matches!(b.get(i + 1), Some(b'\n' | b'\r')) {
                        // An escaped line break. Empty lines after it are folded differently
                        // by the decoder of `decode.rs` than by the parser: leave those.
                        let mut j = self.after_break(i + 1);
                        while j < b.len() && matches!(b[j], b' ' | b'\t') {
                            j += 1;
                        }
                        if is_break_or_end(b, j) {
                            return bail();
                        }
                        i += 1;
                    } else {
                        i += 1 + double_escape_len(b, i)?;
                    }
                }
                _ => i += 1,
            }
        };
        let (style, quote) = if q == b'\'' {
            (ScalarStyle::SingleQuoted, Quote::Single)
        } else {
            (ScalarStyle::DoubleQuoted, Quote::Double)
        };
        let body = &self.text[p + 1..close];
        let (value, map) = if !escapes && !multiline {
            let map = if body.is_empty() {
                MapData::identity(u(p))
            } else {
                MapData::identity(u(p + 1))
            };
            (Cow::Borrowed(body), map)
        } else {
            let (value, segs) = decode::flow(body, p + 1, quote);
            let map = decode::exact_map(u(p), segs);
            (Cow::Owned(value), map)
        };
        Ok((
            Tok {
                start: p,
                end: close + 1,
                value,
                style,
                map,
                multiline,
            },
            close + 1,
        ))
    }

    /// A block scalar whose `|` or `>` is at `p`, in a collection at column `n`. Returns the
    /// scalar and the start of the line that ends it.
    fn block_scalar(&mut self, p: usize, n: usize) -> R<(Tok<'a>, usize)> {
        let b = self.b;
        let folded = b[p] == b'>';
        let mut q = p + 1;
        let chomp = match b.get(q) {
            Some(b'-') => {
                q += 1;
                '-'
            }
            Some(b'+') => {
                q += 1;
                '+'
            }
            _ => 'c',
        };
        if !is_sep(b, q)? {
            return bail(); // an indentation indicator, or garbage
        }
        let body = self.rest_of_line(q)?;
        if body >= b.len() {
            return bail();
        }
        // Lines of the body: the first non-blank line sets the indentation `m`; the first
        // non-blank line indented less ends the scalar.
        let mut i = body;
        let mut lead_blank = 0usize;
        let mut m = None;
        let mut content_start = 0;
        let end = loop {
            if i >= b.len() {
                break b.len();
            }
            let mut j = i;
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
            let sp = j - i;
            if is_break_or_end(b, j) {
                match m {
                    None => lead_blank = lead_blank.max(sp),
                    Some(m) if sp > m => return bail(),
                    Some(_) => {}
                }
                i = self.after_break(if j < b.len() { j } else { b.len() });
                if j >= b.len() {
                    break b.len();
                }
                continue;
            }
            match m {
                None => {
                    if sp <= n || lead_blank > sp || b[j] == b'\t' {
                        return bail();
                    }
                    m = Some(sp);
                    content_start = j;
                }
                Some(m) if sp < m => break i,
                Some(_) => {
                    if b[j] == b'\t' && (folded || self.blank_rest(j)) {
                        // tab-led lines: more-indented folding rules; tabs in blank lines
                        return bail();
                    }
                }
            }
            let e = self.eol(j);
            i = self.after_break(e);
        };
        let Some(m) = m else {
            return bail();
        };
        // The reference path finds the header again from the content (`find_header`,
        // `block_header_start`): it finds this one when no other `|` or `>` and no ` #` come
        // before it on its line, and `find_header` picks no later one (in the comment).
        let line_start = b[..p]
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        if b[line_start..p].iter().any(|&c| c == b'|' || c == b'>')
            || b[line_start..p].windows(2).any(|w| w == b" #")
        {
            return bail();
        }
        let header_end = self.eol(p);
        if b[p + 1..header_end].iter().any(|&c| c == b'|' || c == b'>')
            && decode::find_header(self.text, content_start) != Some((p, chomp, None))
        {
            return bail();
        }
        // Decode the lines as `decode::block` does.
        let mut out = decode::Builder::new(end - content_start);
        let mut pending = std::mem::take(&mut self.pending);
        pending.clear();
        let mut prev: Option<(bool, usize)> = None; // (more indented, its line break)
        let mut i = body;
        while i < end {
            let mut j = i;
            while j < b.len() && b[j] == b' ' {
                j += 1;
            }
            if is_break_or_end(b, j) {
                pending.push(j);
                if j >= b.len() {
                    break;
                }
                i = self.after_break(j);
                continue;
            }
            let e = self.eol(j);
            let ts = i + m;
            let more = matches!(b[ts], b' ' | b'\t');
            match prev {
                None => {
                    for &pe in &pending {
                        out.synthesized("\n", pe, 1);
                    }
                }
                Some((prev_more, prev_break)) => {
                    if folded && !prev_more && !more {
                        if pending.is_empty() {
                            out.synthesized(" ", prev_break, 1);
                        } else {
                            for &pe in &pending {
                                out.synthesized("\n", pe, 1);
                            }
                        }
                    } else {
                        out.synthesized("\n", prev_break, 1);
                        for &pe in &pending {
                            out.synthesized("\n", pe, 1);
                        }
                    }
                }
            }
            pending.clear();
            out.copied(&self.text[ts..e], ts);
            prev = Some((more, e));
            i = self.after_break(e);
        }
        let Some((_, last_break)) = prev else {
            return bail();
        };
        let break_len = |at: usize| usize::from(at < b.len());
        match chomp {
            '-' => {}
            '+' => {
                // A last line of spaces without a line break is no empty line to the parser,
                // but one to the decoder of `decode.rs`.
                if pending.last() == Some(&b.len()) {
                    return bail();
                }
                out.synthesized("\n", last_break, break_len(last_break));
                for &pe in &pending {
                    out.synthesized("\n", pe, break_len(pe));
                }
            }
            _ => out.synthesized("\n", last_break, break_len(last_break)),
        }
        self.pending = pending;
        let (value, segs) = out.finish();
        // The node ends at the last text, without trailing whitespace (`trim_block_end`).
        let mut node_end = last_break;
        while node_end > content_start && matches!(b[node_end - 1], b' ' | b'\t') {
            node_end -= 1;
        }
        let map = decode::exact_map(u(content_start), segs);
        Ok((
            Tok {
                start: p,
                end: node_end,
                value: Cow::Owned(value),
                style: if folded {
                    ScalarStyle::Folded
                } else {
                    ScalarStyle::Literal
                },
                map,
                multiline: true,
            },
            end,
        ))
    }

    /// Skip spaces, line breaks and comments inside a flow collection in a block collection at
    /// column `n`, up to the next token. Continuation lines must be indented more than `n`.
    fn flow_ws(&mut self, mut i: usize, n: usize) -> R<usize> {
        let b = self.b;
        loop {
            if i >= b.len() {
                return bail();
            }
            match b[i] {
                b' ' => i += 1,
                b'\n' | b'\r' => {
                    i = self.after_break(i);
                    let start = i;
                    while i < b.len() && b[i] == b' ' {
                        i += 1;
                    }
                    if !is_break_or_end(b, i) && b[i] != b'#' && i - start <= n {
                        return bail();
                    }
                }
                b'#' if matches!(b[i - 1], b' ' | b'\n') => {
                    i = self.comment(i);
                }
                b'\t' | b'#' => return bail(),
                _ => return Ok(i),
            }
        }
    }

    /// Whether the line from `j` holds only whitespace.
    fn blank_rest(&self, j: usize) -> bool {
        let e = self.eol(j);
        self.b[j..e].iter().all(|&c| c == b' ' || c == b'\t')
    }

    /// A flow collection starting at the `[` or `{` at `p`, in a block collection at column
    /// `n`; returns it and the offset after its closing bracket.
    fn flow(&mut self, p: usize, n: usize) -> R<(NodeId, usize)> {
        self.enter()?;
        let b = self.b;
        let is_map = b[p] == b'{';
        let close = if is_map { b'}' } else { b']' };
        let id = self.push_collection(
            p,
            if is_map {
                NodeKind::Mapping {
                    style: CollectionStyle::Flow,
                    entries: Box::default(),
                }
            } else {
                NodeKind::Sequence {
                    style: CollectionStyle::Flow,
                    items: Box::default(),
                }
            },
        );
        let (items_base, entries_base) = (self.items.len(), self.entries.len());
        let mut i = self.flow_ws(p + 1, n)?;
        if b[i] == close {
            i += 1;
        } else {
            loop {
                if is_map {
                    let (tok, stop) = self.scalar_flow(i, n)?;
                    let Stop::Colon(c) = stop else {
                        return bail();
                    };
                    if tok.multiline {
                        return bail();
                    }
                    let kid = self.push_scalar(tok);
                    let v = self.flow_ws(c + 1, n)?;
                    let (vid, after) = self.flow_item(v, n)?;
                    self.entries.push(Entry {
                        key: kid,
                        value: vid,
                    });
                    i = after;
                } else {
                    let (vid, after) = self.flow_item(i, n)?;
                    self.items.push(vid);
                    i = after;
                }
                i = self.flow_ws(i, n)?;
                match b[i] {
                    b',' => {
                        i = self.flow_ws(i + 1, n)?;
                        if b[i] == close || b[i] == b',' {
                            return bail(); // trailing or empty entry
                        }
                    }
                    c if c == close => {
                        i += 1;
                        break;
                    }
                    _ => return bail(),
                }
            }
        }
        let kind = if is_map {
            NodeKind::Mapping {
                style: CollectionStyle::Flow,
                entries: self.entries.split_off(entries_base).into_boxed_slice(),
            }
        } else {
            NodeKind::Sequence {
                style: CollectionStyle::Flow,
                items: self.items.split_off(items_base).into_boxed_slice(),
            }
        };
        let node = self.tree.node_mut(id);
        node.range = TextRange::new(u(p), u(i));
        node.kind = kind;
        self.depth -= 1;
        Ok((id, i))
    }

    /// A value inside a flow collection: a nested collection or a scalar (not a key).
    /// Returns it and the offset after it.
    fn flow_item(&mut self, i: usize, n: usize) -> R<(NodeId, usize)> {
        match self.b[i] {
            b'[' | b'{' => self.flow(i, n),
            _ => {
                let (tok, stop) = self.scalar_flow(i, n)?;
                let after = match stop {
                    Stop::Flow(f) => f,
                    Stop::After(a) => a,
                    _ => return bail(),
                };
                let end = tok.end;
                let id = self.push_scalar(tok);
                Ok((id, after.max(end)))
            }
        }
    }

    /// A plain or quoted scalar inside a flow collection. Plain scalars stop at a flow
    /// indicator (`Stop::Flow`, the offset after trailing spaces) or at `: ` (`Stop::Colon`).
    fn scalar_flow(&mut self, p: usize, n: usize) -> R<(Tok<'a>, Stop)> {
        let b = self.b;
        match b[p] {
            b'"' | b'\'' => {
                let (tok, after) = self.quoted(p, n)?;
                let mut i = after;
                while i < b.len() && b[i] == b' ' {
                    i += 1;
                }
                if i < b.len() && b[i] == b':' {
                    if b.get(i + 1) == Some(&b' ') {
                        return Ok((tok, Stop::Colon(i)));
                    }
                    return bail();
                }
                Ok((tok, Stop::After(after)))
            }
            _ => {
                if !plain_start(b, p, true) {
                    return bail();
                }
                let mut i = p;
                let mut end = p;
                loop {
                    if is_break_or_end(b, i) {
                        return bail();
                    }
                    match b[i] {
                        b' ' => i += 1,
                        b'\t' => return bail(),
                        b',' | b']' | b'}' => {
                            return Ok((self.plain_tok(p, end), Stop::Flow(i)));
                        }
                        b'[' | b'{' => return bail(),
                        b':' => match b.get(i + 1) {
                            Some(b' ') => {
                                return Ok((self.plain_tok(p, end), Stop::Colon(i)));
                            }
                            // `docker://x:1`: a `:` inside the scalar
                            Some(&c)
                                if !matches!(
                                    c,
                                    b'\t' | b'\r' | b'\n' | b',' | b'[' | b']' | b'{' | b'}'
                                ) =>
                            {
                                i += 1;
                                end = i;
                            }
                            _ => return bail(),
                        },
                        b'#' if b[i - 1] == b' ' => return bail(),
                        _ => {
                            i += 1;
                            end = i;
                        }
                    }
                }
            }
        }
    }
}

/// Whether `i` is a space, a line break or the end; a tab there is not modelled.
fn is_sep(b: &[u8], i: usize) -> R<bool> {
    match b.get(i) {
        None | Some(b' ' | b'\r' | b'\n') => Ok(true),
        Some(b'\t') => bail(),
        _ => Ok(false),
    }
}

/// Whether a plain scalar may start at `p`.
fn plain_start(b: &[u8], p: usize, flow: bool) -> bool {
    match b[p] {
        b'-' => match b.get(p + 1) {
            None | Some(b' ' | b'\t' | b'\r' | b'\n') => false,
            Some(b',' | b'[' | b']' | b'{' | b'}') => !flow,
            Some(_) => true,
        },
        b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!' | b'|'
        | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' | b'\t' | b'\r' | b'\n' => false,
        _ => true,
    }
}

/// Scan a single-line plain scalar in block context from `p`: returns the end of its text
/// (without trailing spaces) and what stopped it.
fn plain_block(b: &[u8], p: usize) -> R<(usize, Stop)> {
    let mut i = p;
    let mut end = p;
    loop {
        // Skip the bytes that cannot end the scalar.
        while i < b.len() && !PLAIN_SPECIAL[b[i] as usize] {
            i += 1;
        }
        if i > end && b[i - 1] != b' ' {
            end = i;
        }
        if i >= b.len() {
            return Ok((end, Stop::Eol(i)));
        }
        match b[i] {
            b'\n' | b'\r' => return Ok((end, Stop::Eol(i))),
            b' ' => i += 1,
            b'\t' => return bail(),
            b':' => {
                if is_sep(b, i + 1)? {
                    return Ok((end, Stop::Colon(i)));
                }
                i += 1;
                end = i;
            }
            b'#' if b[i - 1] == b' ' => return Ok((end, Stop::Comment(i))),
            _ => {
                i += 1;
                end = i;
            }
        }
    }
}

/// Bytes at which a plain scalar in block context may end (or its text pause).
static PLAIN_SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    t[b'\n' as usize] = true;
    t[b'\r' as usize] = true;
    t[b' ' as usize] = true;
    t[b'\t' as usize] = true;
    t[b':' as usize] = true;
    t[b'#' as usize] = true;
    t
};

/// Length after the `\` at `i` of a double-quoted escape the fast path decodes exactly.
fn double_escape_len(b: &[u8], i: usize) -> R<usize> {
    let Some(&e) = b.get(i + 1) else {
        return bail();
    };
    let hex = match e {
        b'0' | b'a' | b'b' | b't' | b'\t' | b'n' | b'v' | b'f' | b'r' | b'e' | b' ' | b'"'
        | b'/' | b'\\' | b'N' | b'_' | b'L' | b'P' => return Ok(1),
        b'x' => 2,
        b'u' => 4,
        b'U' => 8,
        _ => return bail(),
    };
    let digits = b.get(i + 2..i + 2 + hex).ok_or(Bail(line!()))?;
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return bail();
    }
    let mut v = 0u32;
    for &d in digits {
        v = v.checked_mul(16).ok_or(Bail(line!()))?
            + (d as char).to_digit(16).ok_or(Bail(line!()))?;
    }
    if char::from_u32(v).is_none() {
        return bail();
    }
    Ok(1 + hex)
}
