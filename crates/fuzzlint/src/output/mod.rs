//! Output formats. Every format shows the same diagnostics; positions are 1-based lines and
//! character columns (Unicode scalar values).

pub mod concise;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod json;
pub mod json_lines;
pub mod junit;
pub mod preflight;
pub mod sarif;
pub mod sink;

use crate::Checked;
use std::io::{self, Write};

/// `--output-format`.
#[derive(Clone, Copy, clap::ValueEnum, PartialEq, Eq, Debug)]
pub enum Format {
    /// Code frames for people, with a summary.
    Human,
    /// `path:line:col: CODE name message`, one line each (grep, editors' quickfix lists,
    /// problem matchers).
    Concise,
    /// One JSON document: `{"version": 1, "files": N, "diagnostics": [...]}`.
    Json,
    /// One JSON object per finding per line, as in the `json` format's `diagnostics`.
    JsonLines,
    /// SARIF 2.1.0 (GitHub code scanning and other dashboards).
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// GitLab Code Quality report (`artifacts: reports: codequality`).
    Gitlab,
    /// JUnit XML: a test suite per file, a failing test case per finding.
    Junit,
    /// `PATH: ready` or `PATH: not runnable` and its findings, per file (the default of
    /// `fuzz check`, the node's preflight).
    Preflight,
}

/// Writes the report of `checked` in `format`. `color` is for `human`, `max_per_file` for
/// `human` and `preflight`.
pub fn write(
    format: Format,
    out: &mut dyn Write,
    checked: &[Checked],
    color: bool,
    max_per_file: usize,
) -> io::Result<()> {
    match format {
        Format::Human => human::write(out, checked, color, max_per_file),
        Format::Concise => concise::write(out, checked),
        Format::Json => json::write(out, checked),
        Format::JsonLines => json_lines::write(out, checked),
        Format::Sarif => sarif::write(out, checked),
        Format::Github => github::write(out, checked),
        Format::Gitlab => gitlab::write(out, checked),
        Format::Junit => junit::write(out, checked),
        Format::Preflight => preflight::write(out, checked, max_per_file),
    }
}

/// `value` as `serde_json::to_writer_pretty` writes it, with every character of a string that a
/// terminal or a CI log acts on and that JSON lets through raw (DEL, the C1 controls, the line
/// and paragraph separators, the bidirectional overrides and isolates) written as a `\uXXXX`
/// escape. The document means the same to every JSON reader; only its bytes are safe to print.
pub fn write_json_pretty<T: serde::Serialize + ?Sized>(
    out: &mut dyn Write,
    value: &T,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(
        out,
        PrintableFormatter(serde_json::ser::PrettyFormatter::new()),
    );
    value.serialize(&mut ser).map_err(io::Error::from)
}

/// `value` on one line (no whitespace), escaped as [`write_json_pretty`] escapes it.
pub fn write_json_compact<T: serde::Serialize + ?Sized>(
    out: &mut dyn Write,
    value: &T,
) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(
        out,
        PrintableFormatter(serde_json::ser::CompactFormatter),
    );
    value.serialize(&mut ser).map_err(io::Error::from)
}

struct PrintableFormatter<F>(F);

/// What `render::is_unprintable` names that JSON lets through raw: serde_json escapes the C0
/// controls itself.
fn escaped_in_json(c: char) -> bool {
    c >= '\u{7f}' && fuzzfile_check::render::is_unprintable(c)
}

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for PrintableFormatter<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let mut rest = fragment;
        while let Some((i, c)) = rest.char_indices().find(|&(_, c)| escaped_in_json(c)) {
            writer.write_all(&rest.as_bytes()[..i])?;
            write!(writer, "\\u{:04x}", c as u32)?;
            rest = &rest[i + c.len_utf8()..];
        }
        writer.write_all(rest.as_bytes())
    }

    // Everything else is the pretty formatter's.
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn json_escapes_what_a_terminal_acts_on_and_reads_back_the_same() {
        let value = serde_json::json!({"k": "a\u{202e}b\u{85}c\u{7f}\u{2028}\u{1b}d é"});
        let mut out = Vec::new();
        super::write_json_pretty(&mut out, &value).expect("write");
        let text = String::from_utf8(out).expect("UTF-8");
        assert!(
            text.chars().all(|c| !c.is_control() || c == '\n'),
            "{text:?}"
        );
        assert!(
            !text.contains('\u{202e}') && !text.contains('\u{2028}'),
            "{text}"
        );
        assert!(text.contains("\\u202e") && text.contains('é'), "{text}");
        let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(back, value);
    }
}
