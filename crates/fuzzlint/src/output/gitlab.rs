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
    fingerprint_of(&identity(path, d), flagged, rank)
}

/// What identical findings share, with the flagged text: the path, the rule, the message.
fn identity(path: &str, d: &Diagnostic) -> String {
    format!("{path}\0{}\0{}", d.rule.code(), d.message)
}

/// The fingerprint of the `rank`th finding of `identity` flagging `flagged`.
pub fn fingerprint_of(identity: &str, flagged: &str, rank: usize) -> String {
    let key = format!("{identity}\0{flagged}\0{rank}");
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

/// Where a finding's fingerprint is in its file's part of the report, and what it is made of.
/// Identical findings are ranked within a file as it is checked; one path listed twice (a
/// values file named and also listed with its template) continues the ranks of its first
/// listing, and the report's writer writes such a fingerprint again
/// ([`crate::output::emit`]).
pub struct FingerprintSlot {
    /// Where its [`FINGERPRINT_DIGITS`] hex digits start in the file's part.
    pub offset: usize,
    /// The path, the rule and the message ([`fingerprint_of`]).
    pub identity: String,
    pub flagged: String,
    /// Its rank among the identical findings of this listing of the file.
    pub local_rank: usize,
}

/// How many hex digits a fingerprint has.
pub const FINGERPRINT_DIGITS: usize = 32;

/// One file's issues as elements of the report's array ([`super::write_element`]), in the
/// order of the other formats, with where each fingerprint is.
pub fn entry(
    out: &mut Vec<u8>,
    c: &Checked,
    cwd: Option<&std::path::Path>,
    slots: &mut Vec<FingerprintSlot>,
) -> io::Result<()> {
    let path = report_path(&c.display, cwd);
    let mut seen: HashMap<(String, String), usize> = HashMap::new();
    for d in c.diagnostics() {
        let text = flagged(c, d);
        let identity = identity(&path, d);
        let rank = seen.entry((identity.clone(), text.clone())).or_insert(0);
        let local_rank = *rank;
        *rank += 1;
        let fp = fingerprint(&path, d, &text, local_rank);
        let start = out.len();
        super::write_element(out, &issue(c, d, &path, fp.clone()), 1)?;
        // The fingerprint is the first string with these quotes around it: the keys before
        // it (`check_name`, `description`) are strings whose quotes are escaped.
        let written = format!("\"fingerprint\": \"{fp}\"");
        let at = out[start..]
            .windows(written.len())
            .position(|w| w == written.as_bytes())
            .ok_or_else(|| io::Error::other("an issue without its fingerprint"))?;
        slots.push(FingerprintSlot {
            offset: start + at + "\"fingerprint\": \"".len(),
            identity,
            flagged: text,
            local_rank,
        });
    }
    Ok(())
}

/// The end of the report: the array closed (`any`: it has elements).
pub fn tail(out: &mut dyn Write, any: bool) -> io::Result<()> {
    super::close_array(out, any, 0)?;
    writeln!(out)
}
