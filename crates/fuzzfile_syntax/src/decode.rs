//! Scalar decoding with an offset map back to the source.
//!
//! The YAML parser gives each scalar's decoded value and its source span; this module decodes
//! the span again, itself, recording for every run of decoded bytes where it came from. The
//! result is checked against the parser's value: if they differ (an exotic construct this
//! decoder does not model), the map falls back to pointing at the start of the scalar and is
//! marked inexact, so a range is never wrong by more than "somewhere in this scalar".

use crate::{ScalarStyle, TextRange};

/// Maps byte offsets in a decoded scalar to byte offsets in the source text: a view of what the
/// tree stores for one scalar (copied freely; the segments are borrowed from the tree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OffsetMap<'a> {
    /// Source offset of decoded byte 0 when `segs` is empty (the common single-line case, kept
    /// free of allocation).
    base: u32,
    /// `(decoded, source, synthesized source length)` segment starts, sorted by `decoded`.
    /// Decoded bytes `seg[i].0 .. seg[i+1].0` come from source bytes starting at `seg[i].1`;
    /// a segment the source spells differently (an escape, a line fold) has its source length
    /// plus one as third field (so a final line break that the source lacks can map to an
    /// empty range at the end of the text), copied text has 0.
    segs: &'a [(u32, u32, u32)],
    decoded_len: u32,
    exact: bool,
}

/// What the tree stores of a scalar's offset map while it is being built (the decoded length is
/// the value's).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct MapData {
    pub(crate) base: u32,
    pub(crate) segs: Vec<(u32, u32, u32)>,
    pub(crate) exact: bool,
}

impl MapData {
    /// Every decoded byte is the source byte at `start + offset`.
    pub(crate) fn identity(start: u32) -> MapData {
        MapData {
            base: start,
            segs: Vec::new(),
            exact: true,
        }
    }

    /// Inexact: every decoded byte maps to `start`.
    pub(crate) fn fallback(start: u32) -> MapData {
        MapData {
            base: start,
            segs: Vec::new(),
            exact: false,
        }
    }
}

impl<'a> OffsetMap<'a> {
    /// A map where every decoded byte is the source byte at `start + offset` (one plain line).
    pub fn identity(start: u32, len: u32) -> OffsetMap<'static> {
        OffsetMap {
            base: start,
            segs: &[],
            decoded_len: len,
            exact: true,
        }
    }

    pub(crate) fn from_parts(
        base: u32,
        segs: &'a [(u32, u32, u32)],
        decoded_len: u32,
        exact: bool,
    ) -> OffsetMap<'a> {
        OffsetMap {
            base,
            segs,
            decoded_len,
            exact,
        }
    }

    /// Whether the map was verified against the parser's decoded value.
    pub fn is_exact(self) -> bool {
        self.exact
    }

    /// Source offset of decoded byte `offset` (an offset at the end maps past the last byte).
    pub fn to_source(self, offset: usize) -> u32 {
        let offset = u32::try_from(offset)
            .unwrap_or(u32::MAX)
            .min(self.decoded_len);
        if !self.exact {
            return self.base;
        }
        if self.segs.is_empty() {
            return self.base + offset;
        }
        if offset == self.decoded_len && offset > 0 {
            return self.to_source_end(offset);
        }
        let i = match self.segs.binary_search_by_key(&offset, |s| s.0) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let (d, s, synth) = self.segs[i];
        if synth > 0 {
            return s;
        }
        s + (offset - d)
    }

    fn to_source_end(self, end: u32) -> u32 {
        if self.segs.is_empty() {
            return self.base + end;
        }
        let last = end - 1;
        let i = match self.segs.binary_search_by_key(&last, |s| s.0) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let (d, s, synth) = self.segs[i];
        if synth > 0 {
            return s + synth - 1;
        }
        s + (last - d) + 1
    }

    /// Source range covering decoded bytes `range`.
    pub fn range_to_source(self, range: std::ops::Range<usize>) -> TextRange {
        if !self.exact {
            return TextRange::new(self.base, self.base);
        }
        let start = self.to_source(range.start);
        if range.end <= range.start {
            return TextRange::new(start, start);
        }
        let end_u = u32::try_from(range.end)
            .unwrap_or(u32::MAX)
            .min(self.decoded_len);
        let end = if end_u == 0 {
            start
        } else {
            self.to_source_end(end_u)
        };
        TextRange::new(start, end.max(start))
    }
}

/// Builds a decoded string and its segments.
pub(crate) struct Builder {
    out: String,
    segs: Vec<(u32, u32, u32)>,
    /// The last segment was synthesized: the next copied text starts a new one.
    broken: bool,
}

impl Builder {
    pub(crate) fn new(cap: usize) -> Self {
        Builder {
            out: String::with_capacity(cap),
            segs: Vec::new(),
            broken: false,
        }
    }
    fn push_seg(&mut self, d: u32, s: u32, synth: u32) {
        match self.segs.last_mut() {
            Some(last) if last.0 == d => *last = (d, s, synth),
            _ => self.segs.push((d, s, synth)),
        }
    }
    /// Append `text` that was copied from source offset `src`.
    pub(crate) fn copied(&mut self, text: &str, src: usize) {
        if text.is_empty() {
            return;
        }
        let d = self.out.len() as u32;
        let s = src as u32;
        let contiguous = !self.broken
            && self
                .segs
                .last()
                .is_some_and(|&(pd, ps, _)| ps + (d - pd) == s);
        if !contiguous {
            self.push_seg(d, s, 0);
        }
        self.broken = false;
        self.out.push_str(text);
    }
    /// Append text that the source spells differently (a fold, an escape) with the `src_len`
    /// source bytes at `src` (0 for a line break the source does not have).
    pub(crate) fn synthesized(&mut self, text: &str, src: usize, src_len: usize) {
        if text.is_empty() {
            return;
        }
        let d = self.out.len() as u32;
        self.push_seg(d, src as u32, src_len as u32 + 1);
        self.broken = true;
        self.out.push_str(text);
    }
    pub(crate) fn finish(self) -> Decoded {
        (self.out, self.segs)
    }
}

/// Decode the scalar whose node range is `range` in `src` and build its map. `expected` is the
/// parser's decoded value; the map is exact only when our decoding equals it.
pub(crate) fn offset_map(
    src: &str,
    range: TextRange,
    style: ScalarStyle,
    expected: &str,
) -> MapData {
    let r = range.as_usize();
    let decoded = match style {
        ScalarStyle::Plain => {
            if !expected.contains([' ', '\t', '\n']) && src.get(r.clone()) == Some(expected) {
                return MapData::identity(range.start);
            }
            src.get(r.clone()).map(|s| flow(s, r.start, Quote::None))
        }
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => {
            let q = if style == ScalarStyle::SingleQuoted {
                Quote::Single
            } else {
                Quote::Double
            };
            if r.end >= r.start + 2 {
                src.get(r.start + 1..r.end - 1)
                    .map(|s| flow(s, r.start + 1, q))
            } else {
                None
            }
        }
        ScalarStyle::Literal | ScalarStyle::Folded => {
            block(src, r.start, r.end, style == ScalarStyle::Folded, expected)
        }
    };
    match decoded {
        Some((value, segs)) if value == expected => exact_map(range.start, segs),
        _ => {
            let start = match style {
                ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted => range.start + 1,
                _ => range.start,
            };
            MapData::fallback(start.min(range.end))
        }
    }
}

/// A decoded value and its map segments.
pub(crate) type Decoded = (String, Vec<(u32, u32, u32)>);

/// The exact map of a decoded value from its segments (`start`: the scalar's source start, used
/// when there are none). One copied segment from decoded byte 0 is stored as an identity map,
/// without allocation; it maps every offset the same way.
pub(crate) fn exact_map(start: u32, mut segs: Vec<(u32, u32, u32)>) -> MapData {
    let base = segs.first().map_or(start, |s| s.1);
    if segs.len() == 1 && segs[0].0 == 0 && segs[0].2 == 0 {
        segs = Vec::new();
    }
    MapData {
        base,
        segs,
        exact: true,
    }
}

#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Quote {
    None,
    Single,
    Double,
}

fn is_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// Decode a plain or quoted scalar body `s` starting at source offset `base`.
pub(crate) fn flow(s: &str, base: usize, q: Quote) -> (String, Vec<(u32, u32, u32)>) {
    let bytes = s.as_bytes();
    let mut b = Builder::new(s.len());
    let mut i = 0;
    // Pending whitespace run (start, end) not yet emitted: dropped before a line break.
    let mut ws: Option<(usize, usize)> = None;
    let flush = |b: &mut Builder, ws: &mut Option<(usize, usize)>| {
        if let Some((ws_s, ws_e)) = ws.take() {
            b.copied(&s[ws_s..ws_e], base + ws_s);
        }
    };
    while i < bytes.len() {
        let c = bytes[i];
        if is_break(c) {
            ws = None;
            let break_at = i;
            // consume this break, then count further empty lines
            let mut breaks = 0;
            loop {
                if i < bytes.len() && bytes[i] == b'\r' {
                    i += 1;
                }
                if i < bytes.len() && bytes[i] == b'\n' {
                    i += 1;
                }
                breaks += 1;
                while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
                    i += 1;
                }
                if i < bytes.len() && is_break(bytes[i]) {
                    continue;
                }
                break;
            }
            if breaks == 1 {
                b.synthesized(" ", base + break_at, 1);
            } else {
                b.synthesized(&"\n".repeat(breaks - 1), base + break_at, 1);
            }
            continue;
        }
        if c == b' ' || c == b'\t' {
            match &mut ws {
                Some((_, e)) => *e = i + 1,
                None => ws = Some((i, i + 1)),
            }
            i += 1;
            continue;
        }
        flush(&mut b, &mut ws);
        if q == Quote::Single && c == b'\'' && bytes.get(i + 1) == Some(&b'\'') {
            b.synthesized("'", base + i, 2);
            i += 2;
            continue;
        }
        if q == Quote::Double && c == b'\\' {
            let Some(&e) = bytes.get(i + 1) else {
                b.copied("\\", base + i);
                i += 1;
                continue;
            };
            if is_break(e) {
                // Escaped line break: join without a space, drop the next line's indentation.
                i += 1;
                if i < bytes.len() && bytes[i] == b'\r' {
                    i += 1;
                }
                if i < bytes.len() && bytes[i] == b'\n' {
                    i += 1;
                }
                while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t') {
                    i += 1;
                }
                continue;
            }
            let (text, len): (Option<String>, usize) = match e {
                b'0' => (Some("\0".into()), 2),
                b'a' => (Some("\x07".into()), 2),
                b'b' => (Some("\x08".into()), 2),
                b't' | b'\t' => (Some("\t".into()), 2),
                b'n' => (Some("\n".into()), 2),
                b'v' => (Some("\x0b".into()), 2),
                b'f' => (Some("\x0c".into()), 2),
                b'r' => (Some("\r".into()), 2),
                b'e' => (Some("\x1b".into()), 2),
                b' ' => (Some(" ".into()), 2),
                b'"' => (Some("\"".into()), 2),
                b'/' => (Some("/".into()), 2),
                b'\\' => (Some("\\".into()), 2),
                b'N' => (Some("\u{85}".into()), 2),
                b'_' => (Some("\u{a0}".into()), 2),
                b'L' => (Some("\u{2028}".into()), 2),
                b'P' => (Some("\u{2029}".into()), 2),
                b'x' | b'u' | b'U' => {
                    let n = match e {
                        b'x' => 2,
                        b'u' => 4,
                        _ => 8,
                    };
                    let hex = s.get(i + 2..i + 2 + n);
                    let ch = hex
                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                        .and_then(char::from_u32);
                    (ch.map(|c| c.to_string()), 2 + n)
                }
                _ => (None, 2),
            };
            match text {
                Some(t) => b.synthesized(&t, base + i, len),
                None => b.copied(&s[i..(i + len).min(s.len())], base + i),
            }
            i += len;
            continue;
        }
        // copy one UTF-8 character
        let ch_len = utf8_len(c);
        let end = (i + ch_len).min(bytes.len());
        if let Some(t) = s.get(i..end) {
            b.copied(t, base + i);
        }
        i = end;
    }
    flush(&mut b, &mut ws);
    b.finish()
}

fn utf8_len(first: u8) -> usize {
    match first {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// Find the block scalar header (`|`, `>-`, `|2+` …) that precedes content starting at
/// `content_start`; returns (header position, chomping, explicit indentation).
pub(crate) fn find_header(src: &str, content_start: usize) -> Option<(usize, char, Option<usize>)> {
    let bytes = src.as_bytes();
    // Walk back over the whitespace and line breaks between header and content.
    let mut p = content_start.min(bytes.len());
    while p > 0 && matches!(bytes[p - 1], b' ' | b'\t' | b'\n' | b'\r') {
        p -= 1;
    }
    let line_start = fuzzfile_diagnostics::line_start_at(src, p);
    let line = &src[line_start..p];
    // Scan for the indicator: the last `|` or `>` followed only by indicators, whitespace and
    // an optional comment.
    let lb = line.as_bytes();
    let mut best = None;
    for (i, &c) in lb.iter().enumerate() {
        if c != b'|' && c != b'>' {
            continue;
        }
        if i > 0
            && !matches!(lb[i - 1], b' ' | b'\t' | b':' | b'-' | b'?' | b'!')
            && !line[..i].ends_with(']')
        {
            // `a|b` inside a plain word is not a header; anchors/tags end with a space anyway
            if !line[..i].trim_end().is_empty() && !matches!(lb[i - 1], b' ' | b'\t') {
                continue;
            }
        }
        let mut j = i + 1;
        let mut chomp = 'c';
        let mut indent = None;
        while j < lb.len() {
            match lb[j] {
                b'-' => chomp = '-',
                b'+' => chomp = '+',
                d @ b'1'..=b'9' => indent = Some((d - b'0') as usize),
                _ => break,
            }
            j += 1;
        }
        let rest = line[j..].trim_start();
        if rest.is_empty() || rest.starts_with('#') {
            best = Some((line_start + i, chomp, indent));
        }
    }
    best
}

/// Decode a block scalar. `content_start..end` is the parser's span of its content;
/// `expected` is the parser's value.
pub(crate) fn block(
    src: &str,
    content_start: usize,
    end: usize,
    folded: bool,
    expected: &str,
) -> Option<Decoded> {
    let (header, chomp, explicit) = find_header(src, content_start)?;
    let header_end = fuzzfile_diagnostics::line_end_at(src, header);
    if header_end == src.len() {
        return None;
    }
    let body_start = fuzzfile_diagnostics::next_line_start(src, header);
    let end = end.min(src.len());
    if body_start > end {
        return Some((String::new(), Vec::new()));
    }
    // Collect lines (start, end-without-break) from body_start up to `end`.
    let mut lines: Vec<(usize, usize)> = Vec::new();
    let mut p = body_start;
    while p < end {
        let le = fuzzfile_diagnostics::line_end_at(src, p);
        lines.push((p, le));
        let next = fuzzfile_diagnostics::next_line_start(src, p);
        if next == le {
            break;
        }
        p = next;
    }
    // Indentation: that of the first non-blank line.
    let indent_of = |(s, e): (usize, usize)| src[s..e].bytes().take_while(|&b| b == b' ').count();
    let is_blank = |(s, e): (usize, usize)| src[s..e].bytes().all(|b| b == b' ' || b == b'\t');
    let first_indent = lines
        .iter()
        .copied()
        .find(|&l| !is_blank(l))
        .map(indent_of)?;
    // An explicit indentation indicator counts from the parent's indentation, which is not
    // known here: take it from the spaces the parser kept on the first text line. The result
    // is checked against the parser's value like any other.
    let n = match explicit {
        None => first_indent,
        Some(_) => {
            let kept = expected
                .trim_start_matches('\n')
                .bytes()
                .take_while(|&b| b == b' ')
                .count();
            first_indent.checked_sub(kept)?
        }
    };
    // A line less indented than n that is not blank ends the scalar.
    let mut content: Vec<(usize, usize)> = Vec::new();
    for &l in &lines {
        if !is_blank(l) && indent_of(l) < n {
            break;
        }
        content.push(l);
    }
    // Trailing blank lines belong to chomping.
    let last_text = content.iter().rposition(|&l| !is_blank(l))?;
    let mut b = Builder::new(end - content_start);
    let mut pending_empty: Vec<usize> = Vec::new(); // break positions of empty lines
    let mut prev: Option<(bool, usize)> = None; // (more_indented, position of its line break)
    for &(s, e) in &content[..=last_text] {
        let blank = is_blank((s, e)) && e - s <= n;
        if blank {
            pending_empty.push(e);
            continue;
        }
        let text_start = (s + n).min(e);
        let more = matches!(src.as_bytes().get(text_start), Some(b' ' | b'\t'));
        match prev {
            None => {
                for &pe in &pending_empty {
                    b.synthesized("\n", pe, 1);
                }
            }
            Some((prev_more, prev_break)) => {
                if folded && !prev_more && !more {
                    if pending_empty.is_empty() {
                        b.synthesized(" ", prev_break, 1);
                    } else {
                        for &pe in &pending_empty {
                            b.synthesized("\n", pe, 1);
                        }
                    }
                } else {
                    b.synthesized("\n", prev_break, 1);
                    for &pe in &pending_empty {
                        b.synthesized("\n", pe, 1);
                    }
                }
            }
        }
        pending_empty.clear();
        b.copied(&src[text_start..e], text_start);
        prev = Some((more, e));
    }
    // Chomping. The last line may end the text without a line break: its `\n` then maps to
    // an empty range at the end.
    let break_len = |at: usize| usize::from(at < src.len());
    let last_break = prev.map_or(end, |p| p.1);
    match chomp {
        '-' => {}
        '+' => {
            b.synthesized("\n", last_break, break_len(last_break));
            for &(_, e) in &content[last_text + 1..] {
                b.synthesized("\n", e, break_len(e));
            }
        }
        _ => b.synthesized("\n", last_break, break_len(last_break)),
    }
    Some(b.finish())
}
