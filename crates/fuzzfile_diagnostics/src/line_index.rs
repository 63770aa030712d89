//! Byte offset ↔ (line, column) conversion. A line ends at `\r\n`, `\n` or a lone `\r`: the
//! three line breaks of YAML 1.2 (`b-break`) and of the Language Server Protocol. The break
//! is not part of the line, so CRLF and CR files report the same columns as LF files.
//!
//! Every layer that needs lines (syntax recovery, fixes, suppression comments, the language
//! server) uses this index or the free functions below, so they all agree on what a line is.

use crate::TextRange;
use serde::Serialize;

/// A position for people: 1-based line, 1-based column counted in characters (Unicode scalar
/// values).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

#[derive(Clone, Debug)]
pub struct LineIndex {
    /// Byte offset of the first byte of each line.
    starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let bytes = text.as_bytes();
        let mut starts = Vec::with_capacity(text.len() / 40 + 1);
        starts.push(0);
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            // The `\r` of a `\r\n` pair is not a break of its own.
            if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                continue;
            }
            starts.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
        }
        LineIndex {
            starts,
            len: u32::try_from(text.len()).unwrap_or(u32::MAX),
        }
    }

    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// 0-based line of `offset` (clamped to the text).
    pub fn line_of(&self, offset: u32) -> usize {
        let offset = offset.min(self.len);
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        }
    }

    /// Byte range of 0-based `line`, without its line break.
    pub fn line_range(&self, text: &str, line: usize) -> TextRange {
        let start = self.starts.get(line).copied().unwrap_or(self.len);
        let end = match self.starts.get(line + 1) {
            None => self.len,
            Some(&next) => {
                // Strip the break: `\n`, `\r` or `\r\n`.
                let mut end = next - 1;
                if end > start
                    && text.as_bytes().get(end as usize) == Some(&b'\n')
                    && text.as_bytes().get(end as usize - 1) == Some(&b'\r')
                {
                    end -= 1;
                }
                end
            }
        };
        TextRange::new(start, end)
    }

    pub fn line_start(&self, line: usize) -> u32 {
        self.starts.get(line).copied().unwrap_or(self.len)
    }

    /// The 0-based line of `offset` (clamped to the text) and the text of that line before it,
    /// cut back to a character boundary.
    fn line_and_prefix<'t>(&self, text: &'t str, offset: u32) -> (usize, &'t str) {
        let offset = offset.min(self.len);
        let line = self.line_of(offset);
        let start = self.starts[line] as usize;
        let mut end = offset as usize;
        while end > start && !text.is_char_boundary(end) {
            end -= 1;
        }
        (line, text.get(start..end).unwrap_or(""))
    }

    /// 1-based line and character column of `offset`.
    pub fn line_col(&self, text: &str, offset: u32) -> LineCol {
        let (line, before) = self.line_and_prefix(text, offset);
        let column = before.chars().count();
        LineCol {
            line: u32::try_from(line + 1).unwrap_or(u32::MAX),
            column: u32::try_from(column + 1).unwrap_or(u32::MAX),
        }
    }

    /// 0-based line and UTF-16 column of `offset` (the LSP default encoding).
    pub fn line_col_utf16(&self, text: &str, offset: u32) -> (u32, u32) {
        let (line, before) = self.line_and_prefix(text, offset);
        let col: usize = before.chars().map(char::len_utf16).sum();
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(col).unwrap_or(u32::MAX),
        )
    }

    /// Byte offset of a 0-based line and UTF-16 column, clamped to the line.
    pub fn offset_utf16(&self, text: &str, line: u32, col: u32) -> u32 {
        let line = line as usize;
        if line >= self.starts.len() {
            return self.len;
        }
        let range = self.line_range(text, line);
        let mut units = 0u32;
        for (i, c) in range.slice(text).char_indices() {
            if units >= col {
                return range.start + u32::try_from(i).unwrap_or(0);
            }
            units += u32::try_from(c.len_utf16()).unwrap_or(1);
        }
        range.end
    }
}

/// Whether `b` is a line-break byte (`\n` or `\r`).
pub fn is_break(b: u8) -> bool {
    b == b'\n' || b == b'\r'
}

/// Byte offset of the start of the line holding `offset` (after the last `\n` or `\r` before
/// it). `offset` is clamped to the text.
pub fn line_start_at(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    memchr::memrchr2(b'\n', b'\r', &text.as_bytes()[..offset]).map_or(0, |i| i + 1)
}

/// Byte offset of the end of the line holding `offset`, before its line break (`\n`, `\r\n`
/// or `\r`), or the end of the text.
pub fn line_end_at(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    memchr::memchr2(b'\n', b'\r', &text.as_bytes()[offset..]).map_or(text.len(), |i| offset + i)
}

/// Byte offset of the start of the line after the one holding `offset` (past its line break),
/// or the end of the text on the last line.
pub fn next_line_start(text: &str, offset: usize) -> usize {
    let end = line_end_at(text, offset);
    let b = text.as_bytes();
    match b.get(end) {
        Some(b'\r') if b.get(end + 1) == Some(&b'\n') => end + 2,
        Some(_) => end + 1,
        None => end,
    }
}

/// The line break a text uses for new lines: that of its first line break, else `\n`.
pub fn newline_of(text: &str) -> &'static str {
    let b = text.as_bytes();
    match memchr::memchr2(b'\n', b'\r', b) {
        Some(i) if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') => "\r\n",
        Some(i) if b[i] == b'\r' => "\r",
        _ => "\n",
    }
}

/// The lines of `text` without their breaks, split at `\r\n`, `\n` and `\r` (unlike
/// [`str::lines`], which keeps a lone `\r` inside a line). A text ending in a break has no
/// empty last line, as with [`str::lines`].
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = line_end_at(rest, 0);
        let line = &rest[..end];
        rest = &rest[next_line_start(rest, end)..];
        Some(line)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters_and_ignore_cr() {
        let text = "a: é\r\nbb: x\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 0), LineCol { line: 1, column: 1 });
        // 'x' on line 2
        let x = text.find('x').unwrap() as u32;
        assert_eq!(idx.line_col(text, x), LineCol { line: 2, column: 5 });
        // after é (2 bytes) is column 5 in characters
        assert_eq!(idx.line_col(text, 5), LineCol { line: 1, column: 5 });
        assert_eq!(idx.line_range(text, 0).slice(text), "a: é");
    }

    #[test]
    fn lone_cr_crlf_and_lf_are_all_line_breaks() {
        let text = "a: 1\rb: 2\r\nc: 3\nd: é\r";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 5);
        let at = |s: &str| text.find(s).unwrap() as u32;
        assert_eq!(idx.line_col(text, at("b")), LineCol { line: 2, column: 1 });
        assert_eq!(idx.line_col(text, at("c")), LineCol { line: 3, column: 1 });
        assert_eq!(idx.line_col(text, at("é")), LineCol { line: 4, column: 4 });
        assert_eq!(idx.line_range(text, 0).slice(text), "a: 1");
        assert_eq!(idx.line_range(text, 1).slice(text), "b: 2");
        assert_eq!(idx.line_range(text, 3).slice(text), "d: é");
        assert_eq!(idx.line_range(text, 4).slice(text), "");
        assert_eq!(idx.offset_utf16(text, 1, 99), at("b") + 4);
        // The helpers agree with the index.
        let lines: Vec<&str> = lines(text).collect();
        assert_eq!(lines, ["a: 1", "b: 2", "c: 3", "d: é"]);
        for line in 0..idx.line_count() {
            let start = idx.line_start(line) as usize;
            assert_eq!(line_start_at(text, start), start);
            assert_eq!(
                line_end_at(text, start),
                idx.line_range(text, line).end as usize
            );
            if line + 1 < idx.line_count() {
                assert_eq!(
                    next_line_start(text, start),
                    idx.line_start(line + 1) as usize
                );
            }
        }
        assert_eq!(newline_of(text), "\r");
        assert_eq!(newline_of("a\r\nb\rc"), "\r\n");
        assert_eq!(newline_of("a"), "\n");
    }

    #[test]
    fn utf16_round_trip() {
        let text = "k: 😀x\n";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(idx.line_col_utf16(text, x), (0, 5));
        assert_eq!(idx.offset_utf16(text, 0, 5), x);
    }
}
