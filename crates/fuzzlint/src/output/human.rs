//! Code frames for people (ariadne), with a summary line.
//!
//! Output is bounded by the input: a frame shows at most [`LINE_WINDOW`] characters of a source
//! line (a longer line is cut around the span, `…` where it was cut; the position in the
//! header stays the real one), and at most `max_per_file` findings of a file are shown, then
//! how many more there are.

use crate::Checked;
use ariadne::{Color, Config, IndexType, Label, Report, ReportKind, Source};
use fuzzfile_check::render::{excerpt, frame_source, printable, LINE_WINDOW};
use fuzzfile_check::{Diagnostic, Severity, TextRange};
use std::io::{self, Write};

/// The most lines a span may cover for ariadne to draw it; a longer one gets the compact
/// frame (its first line only).
const MAX_SPAN_LINES: usize = 12;

/// The summary line: how many files, and how many findings of each severity
/// (`[info, warning, error]`).
pub fn summary(out: &mut dyn Write, files: usize, counts: [usize; 3]) -> io::Result<()> {
    let [info, warn, err] = counts;
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    if err + warn + info == 0 {
        writeln!(out, "{}: no problems found", plural(files, "file"))
    } else {
        writeln!(
            out,
            "{} checked: {}, {}, {info} info",
            plural(files, "file"),
            plural(err, "error"),
            plural(warn, "warning"),
        )
    }
}

/// The frames of one file's findings (at most `max_per_file`, then how many more).
pub fn entry(out: &mut dyn Write, c: &Checked, color: bool, max_per_file: usize) -> io::Result<()> {
    let diagnostics = c.diagnostics();
    if diagnostics.is_empty() {
        return Ok(());
    }
    // What the file holds reaches the terminal only in printable form: control characters
    // in the frames are replaced, byte for byte, and escaped in messages and paths.
    let text = frame_source(c.text());
    let shown = &diagnostics[..diagnostics.len().min(max_per_file)];
    let file = printable(&c.display);
    let frames: Vec<Frame> = shown
        .iter()
        .map(|d| {
            if !fits_ariadne(c, d) {
                Frame::Compact
            } else if color {
                Frame::Ariadne
            } else {
                single_line_span(&text, c.line_index(), d).map_or(Frame::Ariadne, Frame::SingleLine)
            }
        })
        .collect();
    let drawn_by_ariadne = shown
        .iter()
        .zip(&frames)
        .filter(|(_, f)| matches!(f, Frame::Ariadne))
        .map(|(d, _)| d);
    let mut frame_sources = FrameSources::for_file(c.line_index(), &text, drawn_by_ariadne);
    for (d, frame) in shown.iter().zip(&frames) {
        match frame {
            Frame::SingleLine(span) => single_line_frame(out, &file, span, d)?,
            Frame::Ariadne => {
                let (source, shift) = frame_sources.of(c.line_index(), &text, d);
                ariadne_frame(out, &file, source, shift, d, color)?;
            }
            Frame::Compact => compact_frame(out, c, d)?,
        }
    }
    let rest = diagnostics.len() - shown.len();
    if rest > 0 {
        writeln!(
            out,
            "… and {rest} more diagnostic{} in {}; use `--format json` for all of them, or `--max-diagnostics 0`",
            if rest == 1 { "" } else { "s" },
            c.display
        )?;
    }
    Ok(())
}

/// The text ariadne is given for a file's frames. ariadne draws only the lines a finding's
/// spans touch, but `Source::from` scans the whole text it is given (every character, for its
/// line table): for a file with one finding that scan was most of the frame's cost. A window
/// of the lines around a finding is given instead, after one empty line for each line before
/// it, so that ariadne numbers the lines as in the file; that costs a byte per line before the
/// window. The whole text is given once when that is cheaper (many findings in a long file).
///
/// ariadne breaks lines at `\r\n`, `\n`, `\r`, vertical tab, form feed, U+0085, U+2028 and
/// U+2029; the frame's text has only the first three (`frame_source` replaces the others), the
/// line breaks of the file's [`fuzzfile_check::LineIndex`], so a window starts on one of
/// ariadne's lines and ariadne counts the lines before it as the index does.
enum FrameSources<'t> {
    Whole(Source<&'t str>),
    /// Each finding's window, made when its frame is drawn.
    Windows(Option<Source<String>>),
}

/// What one empty line before a window costs ariadne's scan, against a byte of the text.
const EMPTY_LINE_COST: usize = 3;

/// The lines of `d`'s window: from the line before its first span (an offset at the end of a
/// text that ends with a line break is on the last line, for ariadne) to the line after its
/// last one, as the first line and the byte range.
fn window(index: &fuzzfile_check::LineIndex, d: &Diagnostic) -> (usize, std::ops::Range<usize>) {
    let (mut first, mut last) = (usize::MAX, 0);
    for r in ranges(d) {
        first = first.min(index.line_of(r.start));
        last = last.max(index.line_of(r.end));
    }
    let first = first.saturating_sub(1);
    let start = index.line_start(first) as usize;
    let end = (index.line_start(last + 2) as usize).max(start);
    (first, start..end)
}

impl<'t> FrameSources<'t> {
    fn for_file<'d>(
        index: &fuzzfile_check::LineIndex,
        text: &'t str,
        drawn_by_ariadne: impl Iterator<Item = &'d Diagnostic>,
    ) -> Self {
        let windows_cost: usize = drawn_by_ariadne
            .map(|d| {
                let (first, bytes) = window(index, d);
                first * EMPTY_LINE_COST + bytes.len()
            })
            .sum();
        if windows_cost < text.len() {
            FrameSources::Windows(None)
        } else {
            FrameSources::Whole(Source::from(text))
        }
    }

    /// The source for `d`'s frame, and what to add to its byte offsets.
    fn of(
        &mut self,
        index: &fuzzfile_check::LineIndex,
        text: &str,
        d: &Diagnostic,
    ) -> (&dyn AriadneSource, isize) {
        match self {
            FrameSources::Whole(source) => (source, 0),
            FrameSources::Windows(slot) => {
                let (first, bytes) = window(index, d);
                let mut padded = String::with_capacity(first + bytes.len());
                padded.extend(std::iter::repeat_n('\n', first));
                padded.push_str(&text[bytes.clone()]);
                let shift = first as isize - bytes.start as isize;
                (slot.insert(Source::from(padded)), shift)
            }
        }
    }
}

/// A source ariadne can draw from, whatever holds its text.
trait AriadneSource {
    fn write_report(
        &self,
        report: &Report<'_, (String, std::ops::Range<usize>)>,
        file: String,
        out: &mut Vec<u8>,
    ) -> io::Result<()>;
}

impl<I: AsRef<str>> AriadneSource for Source<I> {
    fn write_report(
        &self,
        report: &Report<'_, (String, std::ops::Range<usize>)>,
        file: String,
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        report.write((file, self), out)
    }
}

fn ranges(d: &Diagnostic) -> impl Iterator<Item = TextRange> + '_ {
    std::iter::once(d.range).chain(d.labels.iter().map(|l| l.range))
}

/// Whether every line the finding's spans touch is short, and no span covers many lines.
fn fits_ariadne(c: &Checked, d: &Diagnostic) -> bool {
    let index = c.line_index();
    ranges(d).all(|r| {
        let first = index.line_of(r.start);
        let last = index.line_of(r.end);
        last - first < MAX_SPAN_LINES
            && (first..=last).all(|l| index.line_range(c.text(), l).len() as usize <= LINE_WINDOW)
    })
}

fn kind_name(s: Severity) -> (ReportKind<'static>, Color, &'static str) {
    match s {
        Severity::Error => (ReportKind::Error, Color::Red, "Error"),
        Severity::Warning => (ReportKind::Warning, Color::Yellow, "Warning"),
        // The lowest severity is `info` everywhere fuzzlint names it (config, JSON, summary):
        // ariadne's Advice kind (coloured by its config) is renamed in the frame's header.
        Severity::Info => (ReportKind::Advice, Color::Cyan, "Info"),
    }
}

fn ariadne_frame(
    out: &mut dyn Write,
    file: &str,
    source: &dyn AriadneSource,
    shift: isize,
    d: &Diagnostic,
    color: bool,
) -> io::Result<()> {
    let (kind, col, _) = kind_name(d.severity);
    let shifted = |r: TextRange| {
        let r = r.as_usize();
        r.start.saturating_add_signed(shift)..r.end.saturating_add_signed(shift)
    };
    let span = shifted(d.range);
    let file = file.to_owned();
    // ariadne starts a new frame, headed by the primary position, for a label above an
    // earlier one: order the labels by position so that one frame shows them all.
    let order = |start: u32| i32::try_from(start).unwrap_or(i32::MAX);
    let mut report = Report::build(kind, (file.clone(), span.clone()))
        .with_config(
            Config::default()
                .with_index_type(IndexType::Byte)
                .with_color(color),
        )
        .with_code(format!("{} {}", d.rule.code(), d.rule.name()))
        .with_message(printable(&d.message))
        .with_label(
            Label::new((file.clone(), span))
                .with_message(printable(&d.message))
                .with_color(col)
                .with_order(order(d.range.start)),
        );
    for l in &d.labels {
        report = report.with_label(
            Label::new((file.clone(), shifted(l.range)))
                .with_message(printable(&l.message))
                .with_color(Color::Blue)
                .with_order(order(l.range.start)),
        );
    }
    if let Some(h) = &d.help {
        report = report.with_help(printable(h));
    }
    if let Some(f) = &d.fix {
        report = report.with_note(crate::fix_apply::note(d, &printable(&f.message)));
    }
    let mut buf = Vec::new();
    source.write_report(&report.finish(), file, &mut buf)?;
    // The header line is `[CODE name] Advice: message`: ariadne's name of the kind, first.
    if d.severity == Severity::Info {
        let header_end = buf.iter().position(|&b| b == b'\n').unwrap_or(buf.len());
        let header = &buf[..header_end];
        if let Some(at) = header.windows(9).position(|w| w == b"] Advice:") {
            buf.splice(at..at + 9, b"] Info:".iter().copied());
        }
    }
    out.write_all(&buf)
}

/// How a finding's frame is drawn.
enum Frame<'t> {
    /// By [`single_line_frame`].
    SingleLine(SingleLineSpan<'t>),
    /// By ariadne.
    Ariadne,
    /// By [`compact_frame`] (a long line, a span over many lines).
    Compact,
}

/// A finding's span within one line of printable ASCII text, and no other label: the frame
/// most findings get, which [`single_line_frame`] draws as ariadne does.
struct SingleLineSpan<'t> {
    /// 1-based.
    line_number: usize,
    /// The line without its break and trailing spaces (ariadne trims them).
    line_text: &'t str,
    /// Columns of the span in the line (bytes and characters alike), `start < end`.
    start: usize,
    end: usize,
}

fn single_line_span<'t>(
    text: &'t str,
    index: &fuzzfile_check::LineIndex,
    d: &Diagnostic,
) -> Option<SingleLineSpan<'t>> {
    if !d.labels.is_empty() || d.range.start >= d.range.end {
        return None;
    }
    let line = index.line_of(d.range.start);
    let range = index.line_range(text, line);
    if d.range.end > range.end {
        return None;
    }
    let line_text = text.get(range.as_usize())?;
    // Each character one column wide, drawn as itself: no tab (ariadne widens it), no other
    // whitespace than the space (ariadne draws it as a space), no wide or combining character.
    if !line_text.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        return None;
    }
    Some(SingleLineSpan {
        line_number: line + 1,
        line_text: line_text.trim_end(),
        start: (d.range.start - range.start) as usize,
        end: (d.range.end - range.start) as usize,
    })
}

/// The frame of a finding with one span on one line of ASCII text, without colour, byte for
/// byte as ariadne draws it (`Config::default()`, label attached in the middle of the span):
/// ariadne's general layout took about 35,000 instructions a frame, and its `Source` a scan of
/// the whole file. The test `single_line_frames_are_ariadnes` compares the two.
fn single_line_frame(
    out: &mut dyn Write,
    file: &str,
    span: &SingleLineSpan,
    d: &Diagnostic,
) -> io::Result<()> {
    use std::fmt::Write as _;
    let (_, _, kind) = kind_name(d.severity);
    let message = printable(&d.message);
    let line_number = span.line_number.to_string();
    let margin = " ".repeat(line_number.len() + 2);
    let arrow_len = span.end + 2;
    let attached = (span.start + span.end) / 2;
    let mut s = String::with_capacity(4 * (message.len() + span.line_text.len() + 64));
    let _ = writeln!(s, "[{} {}] {kind}: {message}", d.rule.code(), d.rule.name());
    let _ = writeln!(s, "{margin}╭─[ {file}:{line_number}:{} ]", span.start + 1);
    let _ = writeln!(s, "{margin}│");
    let _ = writeln!(s, " {line_number} │ {}", span.line_text);
    s.push_str(&margin);
    s.push_str("│ ");
    for column in 0..arrow_len {
        s.push(if column == attached {
            '┬'
        } else if (span.start..span.end).contains(&column) {
            '─'
        } else {
            ' '
        });
    }
    s.push('\n');
    s.push_str(&margin);
    s.push_str("│ ");
    s.extend(std::iter::repeat_n(' ', attached));
    s.push('╰');
    s.extend(std::iter::repeat_n('─', arrow_len - attached - 1));
    let _ = writeln!(s, " {message}");
    let mut section = |name: &str, text: &str| {
        let _ = writeln!(s, "{margin}│ ");
        for (i, line) in text.lines().enumerate() {
            if i == 0 {
                let _ = writeln!(s, "{margin}│ {name}: {line}");
            } else {
                let _ = writeln!(s, "{margin}│       {line}");
            }
        }
    };
    if let Some(h) = &d.help {
        section("Help", &printable(h));
    }
    if let Some(f) = &d.fix {
        section("Note", &crate::fix_apply::note(d, &printable(&f.message)));
    }
    s.extend(std::iter::repeat_n('─', margin.len()));
    s.push_str("╯\n");
    out.write_all(s.as_bytes())
}

/// The frame of a finding on a long line (or over many lines): ariadne's layout, each span's
/// first line cut to a window around it, carets under the span.
fn compact_frame(out: &mut dyn Write, c: &Checked, d: &Diagnostic) -> io::Result<()> {
    let (text, index) = (c.text(), c.line_index());
    let (_, _, kind) = kind_name(d.severity);
    let pos = c.line_col(d.range.start);
    let file = printable(&c.display);
    let mut spans: Vec<(TextRange, &str)> = std::iter::once((d.range, d.message.as_str()))
        .chain(d.labels.iter().map(|l| (l.range, l.message.as_str())))
        .collect();
    spans.sort_by_key(|(r, _)| r.start);
    let last_line = spans
        .iter()
        .map(|(r, _)| index.line_of(r.start) + 1)
        .max()
        .unwrap_or(1);
    let gutter = last_line.to_string().len();
    let pad = " ".repeat(gutter + 2);
    writeln!(
        out,
        "[{} {}] {kind}: {}",
        d.rule.code(),
        d.rule.name(),
        printable(&d.message)
    )?;
    writeln!(out, "{pad}╭─[ {file}:{}:{} ]", pos.line, pos.column)?;
    writeln!(out, "{pad}│")?;
    for (r, message) in spans {
        let line = index.line_of(r.start);
        let lr = index.line_range(text, line);
        let start = (r.start - lr.start) as usize;
        let end = (r.end.min(lr.end).max(r.start) - lr.start) as usize;
        let x = excerpt(lr.slice(text), start, end, LINE_WINDOW);
        let more = if r.end > lr.end || x.cut_span {
            "…"
        } else {
            ""
        };
        writeln!(out, " {:>gutter$} │ {}", line + 1, frame_source(&x.text))?;
        writeln!(
            out,
            "{pad}│ {}{}{more} {}",
            " ".repeat(x.caret_column),
            "^".repeat(x.caret_width),
            printable(message)
        )?;
    }
    if let Some(h) = &d.help {
        writeln!(out, "{pad}│ ")?;
        writeln!(out, "{pad}│ Help: {}", printable(h))?;
    }
    if let Some(f) = &d.fix {
        writeln!(out, "{pad}│ ")?;
        writeln!(
            out,
            "{pad}│ Note: {}",
            crate::fix_apply::note(d, &printable(&f.message))
        )?;
    }
    writeln!(out, "{}╯", "─".repeat(gutter + 2))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fuzzfile_check::{Fix, LineIndex, Rule};

    /// A small deterministic generator (xorshift), so that a failure can be replayed.
    struct Random(u64);

    impl Random {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n.max(1) as u64) as usize
        }
        fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
            &items[self.below(items.len())]
        }
    }

    /// Pieces of lines: printable ASCII first ([`ASCII_PIECES`] of them), then what a frame
    /// drawn without ariadne must not meet (tab, wide, combining, control characters).
    const PIECES: &[&str] = &[
        "a", "b", "key", ": ", " ", " ", "  ", "-", "[x]", "{{ v }}", "'", "\"", "#", "~", "0",
        "9", "\t", "é", "中", "\u{1}", "\u{2028}", "\u{85}", "\u{301}",
    ];
    const ASCII_PIECES: usize = 16;
    const BREAKS: &[&str] = &["\n", "\n", "\n", "\n", "\r\n", "\r", "  \n", "\n\n"];

    /// A text of `lines` lines of `pieces` (more or fewer: some breaks are doubled or are `\r\n`).
    fn text(random: &mut Random, lines: usize, pieces: &[&str]) -> String {
        let mut text = String::new();
        for _ in 0..lines {
            for _ in 0..random.below(12) {
                text.push_str(random.pick::<&str>(pieces));
            }
            text.push_str(random.pick::<&str>(BREAKS));
        }
        if random.below(3) == 0 {
            text.truncate(text.trim_end().len());
        }
        text
    }

    /// A finding at random places of `text` (on character boundaries, at most a few lines
    /// long), with or without labels, help and fix.
    fn finding(random: &mut Random, text: &str) -> Diagnostic {
        let boundaries: Vec<u32> = text
            .char_indices()
            .map(|(i, _)| i as u32)
            .chain([text.len() as u32])
            .collect();
        let range = |random: &mut Random| {
            let start = random.below(boundaries.len());
            let end = (start + random.below(20)).min(boundaries.len() - 1);
            TextRange::new(boundaries[start], boundaries[end])
        };
        let rule = *random.pick(Rule::ALL);
        let messages = ["", "a message", "`x` is `y`", "two\nlines", "é 中 ~"];
        let mut d = Diagnostic::new(rule, range(random), *random.pick(&messages))
            .with_severity(*random.pick(&[Severity::Error, Severity::Warning, Severity::Info]));
        for _ in 0..random.below(3).saturating_sub(1) {
            d = d.with_label(range(random), *random.pick(&messages));
        }
        if random.below(2) == 0 {
            d = d.with_help(*random.pick(&messages));
        }
        if random.below(3) == 0 {
            d = d.with_fix(Fix::new(*random.pick(&messages), Vec::new()));
        }
        d
    }

    fn by_ariadne(
        file: &str,
        source: &dyn AriadneSource,
        shift: isize,
        d: &Diagnostic,
        color: bool,
    ) -> String {
        let mut out = Vec::new();
        ariadne_frame(&mut out, file, source, shift, d, color).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// Texts of 1 to about 1,200 lines (line numbers of one to four digits) and findings all
    /// over them.
    fn cases(mut check: impl FnMut(&str, &str, &LineIndex, &Diagnostic)) {
        let mut random = Random(0x9e37_79b9_7f4a_7c15);
        for round in 0..300 {
            let lines = [1, 3, 12, 40, 120, 1200][round % 6];
            let pieces = if round % 2 == 0 {
                &PIECES[..ASCII_PIECES]
            } else {
                PIECES
            };
            let original = text(&mut random, lines, pieces);
            let framed = frame_source(&original);
            let index = LineIndex::new(&original);
            for _ in 0..40 {
                let d = finding(&mut random, &original);
                check(&original, &framed, &index, &d);
            }
        }
    }

    #[test]
    fn single_line_frames_are_ariadnes() {
        let mut compared = 0;
        let mut drawn_by_ariadne = 0;
        cases(|_, framed, index, d| {
            let Some(span) = single_line_span(framed, index, d) else {
                drawn_by_ariadne += 1;
                return;
            };
            let file = "dir/a file.fz";
            let mut out = Vec::new();
            single_line_frame(&mut out, file, &span, d).unwrap();
            let expected = by_ariadne(file, &Source::from(framed), 0, d, false);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                expected,
                "{d:?}\n{framed:?}"
            );
            compared += 1;
        });
        // Both kinds are exercised, and many frames are compared.
        assert!(compared > 1_000, "{compared}");
        assert!(drawn_by_ariadne > 1_000, "{drawn_by_ariadne}");
    }

    #[test]
    fn a_window_of_the_text_draws_as_the_whole_text() {
        cases(|_, framed, index, d| {
            let whole = Source::from(framed);
            let mut windows = FrameSources::Windows(None);
            for color in [false, true] {
                let expected = by_ariadne("f.fz", &whole, 0, d, color);
                let (source, shift) = windows.of(index, framed, d);
                assert_eq!(
                    by_ariadne("f.fz", source, shift, d, color),
                    expected,
                    "{d:?}\n{framed:?}"
                );
            }
        });
    }
}
