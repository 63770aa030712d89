//! A plain, colourless rendering of diagnostics with a one-line code frame, used by snapshot
//! tests and anywhere a stable text form is wanted. (The CLI's human format uses ariadne.)

use crate::Analysis;
use std::fmt::Write;

/// Render every diagnostic of `a` as `severity[code name] line:col-line:col message`, the
/// source line with a caret underline, labels, help and fix.
pub fn plain(a: &Analysis) -> String {
    plain_capped(a, usize::MAX)
}

/// As [`plain`], showing at most `max` diagnostics and then how many more there are: output
/// stays bounded for a file with thousands of findings.
pub fn plain_capped(a: &Analysis, max: usize) -> String {
    let shown = a.diagnostics.len().min(max);
    let mut out = plain_diagnostics(&a.text, &a.line_index, &a.diagnostics[..shown]);
    let rest = a.diagnostics.len() - shown;
    more_diagnostics(&mut out, rest);
    out
}

/// The line that ends a capped listing: how many diagnostics were not shown (none when
/// `rest` is 0).
pub fn more_diagnostics(out: &mut String, rest: usize) {
    if rest > 0 {
        let _ = writeln!(
            out,
            "… and {rest} more diagnostic{}; `fuzzlint check --format json` lists them all",
            if rest == 1 { "" } else { "s" }
        );
    }
}

/// As [`plain`], for diagnostics of any text (a template, a values file).
pub fn plain_diagnostics(
    text: &str,
    line_index: &crate::LineIndex,
    diagnostics: &[crate::Diagnostic],
) -> String {
    let a = Located { text, line_index };
    let mut out = String::new();
    for d in diagnostics {
        let s = a.line_col(d.range.start);
        let e = a.line_col(d.range.end);
        let _ = writeln!(
            out,
            "{}[{} {}] {}:{}-{}:{} {}",
            d.severity,
            d.rule.code(),
            d.rule.name(),
            s.line,
            s.column,
            e.line,
            e.column,
            printable(&d.message)
        );
        frame(&a, d.range, &mut out);
        for l in &d.labels {
            let p = a.line_col(l.range.start);
            let _ = writeln!(
                out,
                "  note {}:{}: {}",
                p.line,
                p.column,
                printable(&l.message)
            );
            frame(&a, l.range, &mut out);
        }
        if let Some(h) = &d.help {
            let _ = writeln!(out, "  help: {}", printable(h));
        }
        if let Some(f) = &d.fix {
            let kind = match d.fix_applicability() {
                Some(fuzzfile_diagnostics::Applicability::Unsafe) => "fix (unsafe)",
                _ => "fix",
            };
            let _ = writeln!(out, "  {kind}: {}", printable(&f.message));
            for ed in &f.edits {
                let p = a.line_col(ed.range.start);
                let q = a.line_col(ed.range.end);
                let _ = writeln!(
                    out,
                    "    {}:{}-{}:{} {} -> {}",
                    p.line,
                    p.column,
                    q.line,
                    q.column,
                    short_debug(ed.range.slice(a.text), EDIT_WINDOW),
                    short_debug(&ed.replacement, EDIT_WINDOW)
                );
            }
        }
    }
    out
}

/// A text and its line index.
struct Located<'a> {
    text: &'a str,
    line_index: &'a crate::LineIndex,
}

impl Located<'_> {
    fn line_col(&self, offset: u32) -> crate::LineCol {
        self.line_index.line_col(self.text, offset)
    }
}

fn frame(a: &Located<'_>, range: fuzzfile_diagnostics::TextRange, out: &mut String) {
    let line = a.line_index.line_of(range.start);
    let lr = a.line_index.line_range(a.text, line);
    let text = lr.slice(a.text);
    let start = (range.start - lr.start) as usize;
    let end = (range.end.min(lr.end).max(range.start) - lr.start) as usize;
    let x = excerpt(text, start, end, LINE_WINDOW);
    let shown = frame_source(&x.text).replace('\t', "→");
    let _ = writeln!(out, "  {:>3} | {shown}", line + 1);
    let more = if range.end > lr.end && !x.cut_span {
        "…"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "      | {}{}{more}",
        " ".repeat(x.caret_column),
        "^".repeat(x.caret_width)
    );
}

/// The widest source line a frame shows whole, in bytes (real Fuzzfile lines stay whole); a
/// longer line is cut to this many characters around the span, with `…` where it was cut.
/// Without the cut, a 200 KB one-line file with thousands of findings printed the whole line
/// for each of them.
pub const LINE_WINDOW: usize = 160;

/// The most characters of a fix's edit (old text, new text) that [`plain`] shows.
pub const EDIT_WINDOW: usize = 2000;

/// What a frame shows of one source line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Excerpt<'a> {
    /// The part of the line shown, with `…` before and after where it was cut.
    pub text: std::borrow::Cow<'a, str>,
    /// Characters of `text` before the span.
    pub caret_column: usize,
    /// Characters of the span in `text` (at least 1).
    pub caret_width: usize,
    /// Whether the span itself was cut at the end of the window.
    pub cut_span: bool,
}

/// At most `width` characters (plus the `…` markers) of `line` around the span `start..end`
/// (byte offsets into `line`, clamped to it). Costs O(`width`), not O(line length), so that
/// many findings on one long line stay linear.
pub fn excerpt(line: &str, start: usize, end: usize, width: usize) -> Excerpt<'_> {
    let floor = |mut i: usize| {
        i = i.min(line.len());
        while !line.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let start = floor(start);
    let end = floor(end.max(start));
    let width = width.max(8);
    if line.len() <= width {
        // Bytes bound characters: the whole line fits.
        return Excerpt {
            text: std::borrow::Cow::Borrowed(line),
            caret_column: line[..start].chars().count(),
            caret_width: line[start..end].chars().count().max(1),
            cut_span: false,
        };
    }
    // Bytes around the span; a byte window of `width` holds at most `width` characters.
    let span = end - start;
    let before = if span + 2 * (width / 4) >= width {
        width / 4
    } else {
        (width - span) / 2
    };
    let mut from = start.saturating_sub(before);
    let mut to = (from + width).min(line.len());
    if to == line.len() {
        from = to.saturating_sub(width);
    }
    from = floor(from);
    to = floor(to);
    let mut text = String::with_capacity(to - from + 8);
    if from > 0 {
        text.push('…');
    }
    text.push_str(&line[from..to]);
    if to < line.len() {
        text.push('…');
    }
    let lead = usize::from(from > 0);
    let shown_end = end.min(to);
    Excerpt {
        text: std::borrow::Cow::Owned(text),
        caret_column: lead + line[from..start.max(from)].chars().count(),
        caret_width: line[start.max(from)..shown_end.max(start)]
            .chars()
            .count()
            .max(1),
        cut_span: end > to,
    }
}

/// Whether `c` must not reach a terminal or a CI log as it is: C0 controls other than tab,
/// DEL, C1 controls, the Unicode line and paragraph separators, and the bidirectional
/// overrides and isolates (which reorder what a reader sees, "Trojan Source").
pub fn is_unprintable(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Text taken from a checked file (a key, a value, a path), as a terminal or a CI log may show
/// it: every unprintable character (see `is_unprintable`) is written as an escape (`\n`,
/// `\r`, `\u{1b}`), so a hostile file cannot move the cursor, clear the screen, set a
/// hyperlink, start a line with a CI workflow command (`::error`) or reorder what is shown.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    if all_printable(text, false) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if is_unprintable(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `text` has no unprintable character (`breaks`: `\n` and `\r` allowed): its ASCII
/// prefix by bytes, the rest (from the first non-ASCII character) by characters. The same
/// answer as `!text.chars().any(is_unprintable)`, at a fraction of the cost: every file with a
/// finding is scanned whole before its frames are drawn.
fn all_printable(text: &str, breaks: bool) -> bool {
    let bytes = text.as_bytes();
    // Printable ASCII, tabs (and line breaks): tested 32 bytes at a time without branches, so
    // that the compiler vectorises it.
    let plain = |b: u8| {
        (b.wrapping_sub(0x20) < 0x5f) | (b == b'\t') | (breaks & ((b == b'\n') | (b == b'\r')))
    };
    let mut clean = 0;
    for chunk in bytes.chunks(32) {
        if !chunk.iter().fold(true, |ok, &b| ok & plain(b)) {
            break;
        }
        clean += chunk.len();
    }
    // `clean` follows only ASCII bytes: a character boundary.
    text[clean..]
        .chars()
        .all(|c| !is_unprintable(c) || (breaks && matches!(c, '\n' | '\r')))
}

/// The source text as a code frame may show it: every unprintable character other than the
/// line breaks (`\n`, `\r`) is replaced by a visible character of the same UTF-8 length (`?`,
/// `¿` or `�`), so byte offsets, columns and line breaks stay exactly those of the file.
pub fn frame_source(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| is_unprintable(c) && c != '\n' && c != '\r';
    if all_printable(text, true) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| match c.len_utf8() {
                _ if !hidden(c) => c,
                1 => '?',
                2 => '\u{bf}',
                _ => '\u{fffd}',
            })
            .collect(),
    )
}

/// `text` as `{:?}` shows it, cut to about `width` characters (edits of fixes can span many
/// lines).
pub fn short_debug(text: &str, width: usize) -> String {
    let mut cut = text.len().min(width);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    if cut == text.len() {
        format!("{text:?}")
    } else {
        format!("{:?}…", &text[..cut])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_printable_agrees_with_the_character_test() {
        let specials = [
            '\u{85}', '\u{a0}', '\u{2028}', '\u{202e}', '\u{2066}', 'é', '…', '\u{1b}',
        ];
        let chars = (0u8..=0x7f).map(char::from).chain(specials);
        for c in chars {
            for text in [
                format!("{c}"),
                format!("key: {c} value"),
                format!("é{c}"),
                format!("ab\ncd{c}…"),
                format!("{}{c}{}", "k: v\n".repeat(9), "w".repeat(40)),
            ] {
                for breaks in [false, true] {
                    let slow = !text
                        .chars()
                        .any(|c| is_unprintable(c) && !(breaks && matches!(c, '\n' | '\r')));
                    assert_eq!(all_printable(&text, breaks), slow, "{text:?} {breaks}");
                }
            }
        }
    }

    #[test]
    fn short_lines_are_whole() {
        let x = excerpt("  uri: alpine", 7, 13, 120);
        assert_eq!(x.text, "  uri: alpine");
        assert_eq!((x.caret_column, x.caret_width, x.cut_span), (7, 6, false));
    }

    #[test]
    fn long_lines_are_cut_around_the_span() {
        let line: String = (0..5000).map(|i| format!("k{i}: 1, ")).collect();
        let at = line.find("k2500:").expect("key");
        let x = excerpt(&line, at, at + 5, 120);
        assert!(
            x.text.starts_with('…') && x.text.ends_with('…'),
            "{}",
            x.text
        );
        assert!(x.text.chars().count() <= 122, "{}", x.text.chars().count());
        let shown: String = x
            .text
            .chars()
            .skip(x.caret_column)
            .take(x.caret_width)
            .collect();
        assert_eq!(shown, "k2500");
        // At the very end of the line: no trailing marker, the span still under the carets.
        let x = excerpt(&line, line.len() - 2, line.len(), 120);
        assert!(x.text.starts_with('…') && !x.text.ends_with('…'));
        let shown: String = x
            .text
            .chars()
            .skip(x.caret_column)
            .take(x.caret_width)
            .collect();
        assert_eq!(shown, ", ");
    }

    #[test]
    fn multibyte_characters_are_not_split() {
        let line = "é".repeat(1000);
        let x = excerpt(&line, 1001, 1003, 40);
        assert!(x.text.chars().count() <= 42);
        assert_eq!(x.caret_width, 1);
        let long = excerpt(&line, 0, line.len(), 40);
        assert!(long.cut_span && long.caret_column == 0);
        assert_eq!(short_debug("ééé", 3), "\"é\"…");
    }

    #[test]
    fn more_diagnostics_line() {
        let mut out = String::new();
        more_diagnostics(&mut out, 0);
        assert_eq!(out, "");
        more_diagnostics(&mut out, 1);
        assert_eq!(
            out,
            "… and 1 more diagnostic; `fuzzlint check --format json` lists them all\n"
        );
        out.clear();
        more_diagnostics(&mut out, 3);
        assert!(out.starts_with("… and 3 more diagnostics;"), "{out}");
    }
}
