//! LSP positions ↔ byte offsets, in the encoding negotiated at `initialize`.
//!
//! Inside the server every position is a byte offset into the document text; an LSP
//! `Position` (0-based line, column in code units of the negotiated encoding) exists only at
//! the edge. Conversions never fail: a line past the end maps to the end of the text, a column
//! past the end of its line to the end of that line, and a column inside a character to the
//! start of that character.

use fuzzfile_diagnostics::{LineIndex, TextRange};
use lsp_types::{Position, Range};

/// The unit of `Position.character`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Encoding {
    /// Bytes of UTF-8 (offered by the client, preferred: no conversion cost).
    Utf8,
    /// UTF-16 code units (the LSP default).
    Utf16,
}

impl Encoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Utf8 => "utf-8",
            Encoding::Utf16 => "utf-16",
        }
    }
}

/// A text and its line index, the pair every conversion needs.
#[derive(Clone, Copy)]
pub struct Lines<'a> {
    pub text: &'a str,
    pub index: &'a LineIndex,
    pub encoding: Encoding,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str, index: &'a LineIndex, encoding: Encoding) -> Lines<'a> {
        Lines {
            text,
            index,
            encoding,
        }
    }

    /// The byte offset of `pos`, clamped into the text.
    pub fn offset(&self, pos: Position) -> u32 {
        let line = pos.line as usize;
        if line >= self.index.line_count() {
            return clamp(self.text.len());
        }
        match self.encoding {
            Encoding::Utf16 => {
                // Walk the line's characters; a column inside a surrogate pair maps to the
                // start of its character, not past it.
                let r = self.index.line_range(self.text, line);
                let mut units = 0u32;
                for (i, c) in r.slice(self.text).char_indices() {
                    let next = units.saturating_add(u32::try_from(c.len_utf16()).unwrap_or(2));
                    if next > pos.character {
                        return r.start + u32::try_from(i).unwrap_or(0);
                    }
                    units = next;
                }
                r.end
            }
            Encoding::Utf8 => {
                let r = self.index.line_range(self.text, line);
                let mut at = r
                    .start
                    .saturating_add(pos.character)
                    .min(r.end)
                    .min(clamp(self.text.len()));
                while at > r.start && !self.text.is_char_boundary(at as usize) {
                    at -= 1;
                }
                at
            }
        }
    }

    /// The byte offset of `pos` when the position is inside the text (its line exists), else
    /// `None`: requests about positions past the end get an empty answer.
    pub fn offset_checked(&self, pos: Position) -> Option<u32> {
        ((pos.line as usize) < self.index.line_count()).then(|| self.offset(pos))
    }

    pub fn position(&self, offset: u32) -> Position {
        let offset = offset.min(clamp(self.text.len()));
        match self.encoding {
            Encoding::Utf16 => {
                let (line, character) = self.index.line_col_utf16(self.text, offset);
                Position { line, character }
            }
            Encoding::Utf8 => {
                let line = self.index.line_of(offset);
                let start = self.index.line_start(line);
                let mut at = offset;
                while at > start && !self.text.is_char_boundary(at as usize) {
                    at -= 1;
                }
                Position {
                    line: clamp(line),
                    character: at - start,
                }
            }
        }
    }

    pub fn range(&self, r: TextRange) -> Range {
        Range {
            start: self.position(r.start),
            end: self.position(r.end),
        }
    }

    pub fn text_range(&self, r: Range) -> TextRange {
        TextRange::new(self.offset(r.start), self.offset(r.end))
    }

    /// The length of `text[r]` in code units of the encoding.
    pub fn len(&self, r: TextRange) -> u32 {
        let s = r.slice(self.text);
        match self.encoding {
            Encoding::Utf8 => clamp(s.len()),
            Encoding::Utf16 => clamp(s.chars().map(char::len_utf16).sum()),
        }
    }
}

fn clamp(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn non_ascii_columns_in_both_encodings() {
        // `é` is 2 bytes and 1 UTF-16 unit; `😀` is 4 bytes and 2 UTF-16 units.
        let text = "a: é😀x\nb: y\n";
        let index = LineIndex::new(text);
        let x = text.find('x').unwrap_or(0) as u32;
        let u16 = Lines::new(text, &index, Encoding::Utf16);
        assert_eq!(u16.position(x), pos(0, 6));
        assert_eq!(u16.offset(pos(0, 6)), x);
        let u8 = Lines::new(text, &index, Encoding::Utf8);
        assert_eq!(u8.position(x), pos(0, 9));
        assert_eq!(u8.offset(pos(0, 9)), x);
        // Inside the emoji: back to its start.
        assert_eq!(u8.offset(pos(0, 7)), 5);
        assert_eq!(u16.offset(pos(0, 5)), 5);
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let text = "ab\ncd";
        let index = LineIndex::new(text);
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            let l = Lines::new(text, &index, enc);
            assert_eq!(l.offset(pos(0, 99)), 2, "{enc:?}");
            assert_eq!(l.offset(pos(9, 0)), 5, "{enc:?}");
            assert_eq!(l.offset_checked(pos(9, 0)), None);
            assert_eq!(l.position(999), pos(1, 2));
        }
    }

    #[test]
    fn a_lone_cr_ends_a_line_in_both_directions() {
        // `\r`, `\n` and `\r\n` all end a line, as the LSP specification says.
        let text = "ab\rcé\r\nd\ne";
        let index = LineIndex::new(text);
        for enc in [Encoding::Utf8, Encoding::Utf16] {
            let l = Lines::new(text, &index, enc);
            assert_eq!(l.position(3), pos(1, 0), "{enc:?}");
            assert_eq!(l.offset(pos(1, 0)), 3, "{enc:?}");
            assert_eq!(l.offset(pos(2, 0)), 8, "{enc:?}");
            assert_eq!(l.offset(pos(3, 0)), 10, "{enc:?}");
            // Past the end of line 0: before its `\r`, not on the next line.
            assert_eq!(l.offset(pos(0, 9)), 2, "{enc:?}");
        }
        let u16 = Lines::new(text, &index, Encoding::Utf16);
        assert_eq!(u16.position(6), pos(1, 2));
        assert_eq!(u16.offset(pos(1, 9)), 6);
    }

    #[test]
    fn crlf_line_ends_are_not_columns() {
        let text = "ab\r\ncd\r\n";
        let index = LineIndex::new(text);
        let l = Lines::new(text, &index, Encoding::Utf8);
        assert_eq!(l.offset(pos(0, 5)), 2);
        assert_eq!(l.position(4), pos(1, 0));
    }
}
