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
    let fits: Vec<bool> = shown.iter().map(|d| fits_ariadne(c, d)).collect();
    let mut frame_sources = FrameSources::for_file(c, &text, shown, &fits);
    for (d, fits) in shown.iter().zip(fits) {
        if fits {
            let (source, shift) = frame_sources.of(c, &text, d);
            ariadne_frame(out, c, source, shift, d, color)?;
        } else {
            compact_frame(out, c, d)?;
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
fn window(c: &Checked, d: &Diagnostic) -> (usize, std::ops::Range<usize>) {
    let index = c.line_index();
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
    fn for_file(c: &Checked, text: &'t str, shown: &[Diagnostic], fits: &[bool]) -> Self {
        let windows_cost: usize = shown
            .iter()
            .zip(fits)
            .filter(|(_, fits)| **fits)
            .map(|(d, _)| {
                let (first, bytes) = window(c, d);
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
    fn of(&mut self, c: &Checked, text: &str, d: &Diagnostic) -> (&dyn AriadneSource, isize) {
        match self {
            FrameSources::Whole(source) => (source, 0),
            FrameSources::Windows(slot) => {
                let (first, bytes) = window(c, d);
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
    c: &Checked,
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
    let file = printable(&c.display).into_owned();
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
