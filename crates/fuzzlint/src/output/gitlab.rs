//! GitLab Code Quality report (`artifacts: reports: codequality:`): a JSON array of Code
//! Climate issues, the subset GitLab reads (docs.gitlab.com, "Code Quality", "Implement a
//! custom tool"; validated against GitLab's own schema, `app/validators/json_schemas/
//! codeclimate.json`, in tests/gitlab_schema.rs):
//!
//! - `description`: `CODE name: message`; `check_name`: the rule's code;
//! - `severity`: info for `info`, major for `warning`, critical for `error` (a Fuzzfile with
//!   an error is refused by the platform);
//! - `location.path` (relative: as given without a leading `./`, or an absolute path under the
//!   working directory made relative to it) and `location.positions`
//!   (1-based lines and character columns);
//! - `fingerprint`: what GitLab compares between the base and the head of a merge request to
//!   tell new findings from fixed ones, so it must not change when lines are added above a
//!   finding: the SHA-256 of the path, the rule, the message and the flagged text, with the
//!   finding's rank among identical ones (two identical findings in a file stay two), as 32 hex
//!   digits. Moving a finding keeps its fingerprint; changing what it flags changes it.

use crate::Checked;
use fuzzfile_check::{Diagnostic, Severity};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{self, Write};

pub fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "critical",
        Severity::Warning => "major",
        Severity::Info => "info",
    }
}

/// The path as GitLab matches it against the repository: relative, without `./`; an
/// absolute path under the working directory (where CI runs, the repository's root) is
/// made relative to it.
fn report_path(display: &str, cwd: Option<&std::path::Path>) -> String {
    let absolute = std::path::Path::new(display);
    if let Some(rest) = cwd.and_then(|cwd| absolute.strip_prefix(cwd).ok()) {
        if let Some(rest) = rest.to_str().filter(|r| !r.is_empty()) {
            return rest.to_owned();
        }
    }
    let mut p = display;
    while let Some(rest) = p.strip_prefix("./") {
        p = rest;
    }
    p.to_owned()
}

/// The flagged text, at most its first line and 200 bytes (a finding on a whole job keeps its
/// fingerprint when the job's body changes).
fn flagged(c: &Checked, d: &Diagnostic) -> String {
    let text = c.text();
    let start = (d.range.start as usize).min(text.len());
    let end = (d.range.end as usize).clamp(start, text.len());
    let slice = text.get(start..end).unwrap_or("");
    let first = slice.lines().next().unwrap_or("");
    let mut cut = first.len().min(200);
    while !first.is_char_boundary(cut) {
        cut -= 1;
    }
    first[..cut].to_owned()
}

fn fingerprint(path: &str, d: &Diagnostic, flagged: &str, rank: usize) -> String {
    let key = format!(
        "{path}\0{}\0{}\0{flagged}\0{rank}",
        d.rule.code(),
        d.message
    );
    let mut hex = fuzzfile_template::funcs::sha256_hex(key.as_bytes());
    hex.truncate(32);
    hex
}

/// The report's issue of `d`, with its fingerprint.
fn issue(c: &Checked, d: &Diagnostic, path: &str, fingerprint: String) -> Value {
    let s = c.line_col(d.range.start);
    let e = c.line_col(d.range.end);
    let mut description = format!("{} {}: {}", d.rule.code(), d.rule.name(), d.message);
    if let Some(h) = &d.help {
        description.push_str(&format!(" ({h})"));
    }
    json!({
        "description": description,
        "check_name": d.rule.code(),
        "fingerprint": fingerprint,
        "severity": severity(d.severity),
        "location": {
            "path": path,
            "positions": {
                "begin": { "line": s.line, "column": s.column },
                "end": { "line": e.line, "column": e.column },
            },
        },
    })
}

/// The report's issues, in the order of the other formats, each turned into JSON only as it
/// is written: memory stays at one issue's JSON (and the keys that rank identical findings).
struct Issues<'a>(&'a [Checked]);

impl serde::Serialize for Issues<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        let mut seen: HashMap<(String, String), usize> = HashMap::new();
        let cwd = std::env::current_dir().ok();
        for c in self.0 {
            let path = report_path(&c.display, cwd.as_deref());
            for d in c.diagnostics() {
                let text = flagged(c, d);
                let key = format!("{path}\0{}\0{}", d.rule.code(), d.message);
                let rank = seen.entry((key, text.clone())).or_insert(0);
                let fp = fingerprint(&path, d, &text, *rank);
                *rank += 1;
                seq.serialize_element(&issue(c, d, &path, fp))?;
            }
        }
        seq.end()
    }
}

pub fn write(out: &mut dyn Write, checked: &[Checked]) -> io::Result<()> {
    let mut w = io::BufWriter::new(out);
    super::write_json_pretty(&mut w, &Issues(checked))?;
    writeln!(w)?;
    w.flush()
}
