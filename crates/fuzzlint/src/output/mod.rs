//! Output formats. Every format shows the same diagnostics; positions are 1-based lines and
//! character columns (Unicode scalar values).

pub mod concise;
pub mod emit;
pub mod github;
pub mod gitlab;
pub mod human;
pub mod json;
pub mod json_lines;
pub mod junit;
mod nested;
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

/// How each file's part of the report is written.
pub struct RenderOptions {
    pub format: Format,
    /// Colour in `human`.
    pub color: bool,
    /// The most findings shown per file in `human` and `preflight`.
    pub max_per_file: usize,
    /// The working directory, which `gitlab` makes paths relative to.
    pub cwd: Option<std::path::PathBuf>,
}

/// What one listed file (or a values file listed with its template) leaves for the report once
/// its analysis is dropped: its part of the report, written in the chosen format, and what
/// the report's end, the summary and the exit status need of it.
pub struct EntryReport {
    /// The path as shown.
    pub display: String,
    /// A values file listed with its template (not counted as a file checked).
    pub companion: bool,
    /// Its part of the report: `human` frames, `concise` or `github` lines, the elements of
    /// the `json`, `sarif` or `gitlab` array (each preceded by its comma), its JUnit test
    /// suite, its `preflight` finding lines.
    pub fragment: Vec<u8>,
    /// Its findings by severity: `[info, warning, error]`.
    pub severity_counts: [usize; 3],
    /// Whether it fails the run by its own `fail-on`.
    pub fails: bool,
    /// Its findings with a safe fix, and with an unsafe one.
    pub safe_fixes: usize,
    pub unsafe_fixes: usize,
    /// Whether its `cluster-profile-missing` finding was taken out for the run's note.
    pub cluster_profile_missing: bool,
    /// `preflight`: where each finding's lines end in `fragment`.
    pub finding_ends: Vec<usize>,
    /// `gitlab`: where each fingerprint is in `fragment`.
    pub fingerprints: Vec<gitlab::FingerprintSlot>,
}

impl EntryReport {
    /// How many findings it has.
    pub fn findings(&self) -> usize {
        self.severity_counts.iter().sum()
    }
}

/// `c`'s part of the report in `options.format`, and its facts.
pub fn render_entry(c: &Checked, options: &RenderOptions) -> io::Result<EntryReport> {
    let mut fragment = Vec::new();
    let mut finding_ends = Vec::new();
    let mut fingerprints = Vec::new();
    match options.format {
        Format::Human => human::entry(&mut fragment, c, options.color, options.max_per_file)?,
        Format::Concise => concise::entry(&mut fragment, c)?,
        Format::Json => json::entry(&mut fragment, c)?,
        Format::JsonLines => json_lines::entry(&mut fragment, c)?,
        Format::Sarif => sarif::entry(&mut fragment, c)?,
        Format::Github => github::entry(&mut fragment, c)?,
        Format::Gitlab => {
            gitlab::entry(&mut fragment, c, options.cwd.as_deref(), &mut fingerprints)?
        }
        Format::Junit => junit::entry(&mut fragment, c)?,
        Format::Preflight => preflight::entry(&mut fragment, c, &mut finding_ends)?,
    }
    let diagnostics = c.diagnostics();
    let mut severity_counts = [0usize; 3];
    let (mut safe_fixes, mut unsafe_fixes) = (0, 0);
    for d in diagnostics {
        severity_counts[d.severity as usize] += 1;
        match d.fix_applicability() {
            Some(fuzzfile_check::Applicability::Safe) => safe_fixes += 1,
            Some(fuzzfile_check::Applicability::Unsafe) => unsafe_fixes += 1,
            None => {}
        }
    }
    let fails = c
        .settings
        .fail_on
        .threshold()
        .is_some_and(|t| diagnostics.iter().any(|d| d.severity >= t));
    Ok(EntryReport {
        display: c.display.clone(),
        companion: c.companion,
        fragment,
        severity_counts,
        fails,
        safe_fixes,
        unsafe_fixes,
        cluster_profile_missing: false,
        finding_ends,
        fingerprints,
    })
}

/// An array element as the pretty printer writes it `depth` levels deep: a comma, a line
/// break, the indent, then `value` with its own lines indented as deep. The report's writer
/// drops the comma before the array's first element.
pub fn write_element<T: serde::Serialize + ?Sized>(
    out: &mut Vec<u8>,
    value: &T,
    depth: usize,
) -> io::Result<()> {
    out.extend_from_slice(b",\n");
    nested::indent(out, depth)?;
    let mut ser = serde_json::Serializer::with_formatter(
        out,
        PrintableFormatter(nested::NestedPretty::at(depth)),
    );
    value.serialize(&mut ser).map_err(io::Error::from)
}

/// The end of an array whose `[` is `depth` levels deep, as the pretty printer writes it: `]`
/// on a line of its own after elements (`any`), `[]` without.
pub fn close_array(out: &mut dyn Write, any: bool, depth: usize) -> io::Result<()> {
    if any {
        write!(out, "\n{}", "  ".repeat(depth))?;
    }
    out.write_all(b"]")
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
