//! Byte offset ↔ (line, column) conversion. Lines are split at `\n`; a `\r` before it belongs to
//! the line break, so CRLF files report the same columns as LF files.

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
        let mut starts = Vec::with_capacity(text.len() / 40 + 1);
        starts.push(0);
        starts.extend(
            memchr::memchr_iter(b'\n', text.as_bytes())
                .map(|i| u32::try_from(i + 1).unwrap_or(u32::MAX)),
        );
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
        let mut end = self.starts.get(line + 1).map_or(self.len, |s| s - 1);
        if end > start && text.as_bytes().get(end as usize - 1) == Some(&b'\r') {
            end -= 1;
        }
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
    fn utf16_round_trip() {
        let text = "k: 😀x\n";
        let idx = LineIndex::new(text);
        let x = text.find('x').unwrap() as u32;
        assert_eq!(idx.line_col_utf16(text, x), (0, 5));
        assert_eq!(idx.offset_utf16(text, 0, 5), x);
    }
}
