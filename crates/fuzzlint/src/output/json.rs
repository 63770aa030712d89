//! `{"version": 1, "files": N, "diagnostics": [...]}`.

use crate::Checked;
use fuzzfile_check::{Diagnostic, TextRange};
use serde_json::{json, Value};
use std::io::{self, Write};

pub fn range_json(a: &Checked, r: TextRange) -> Value {
    let s = a.line_col(r.start);
    let e = a.line_col(r.end);
    json!({ "start": { "line": s.line, "column": s.column }, "end": { "line": e.line, "column": e.column } })
}

pub fn diagnostic_json(file: &str, a: &Checked, d: &Diagnostic) -> Value {
    let fix = d.fix.as_ref().map(|f| {
        json!({
            "message": f.message,
            "applicability": d.fix_applicability().map(|s| s.as_str()),
            "edits": f.edits.iter().map(|e| json!({
                "range": range_json(a, e.range),
                "offsets": { "start": e.range.start, "end": e.range.end },
                "replacement": e.replacement,
            })).collect::<Vec<_>>(),
        })
    });
    json!({
        "file": file,
        "rule": d.rule.name(),
        "code": d.rule.code(),
        "severity": d.severity.as_str(),
        "message": d.message,
        "range": range_json(a, d.range),
        "offsets": { "start": d.range.start, "end": d.range.end },
        "help": d.help,
        "labels": d.labels.iter().map(|l| json!({ "message": l.message, "range": range_json(a, l.range) })).collect::<Vec<_>>(),
        "fix": fix,
    })
}

/// The document's head, as the pretty printer writes `{"diagnostics": [...], "files": N,
/// "version": 1}` (keys in sorted order, as a `serde_json` map writes them): the diagnostics
/// come as each file is checked ([`entry`]), the file count at the end ([`tail`]).
pub const HEAD: &str = "{\n  \"diagnostics\": [";

/// One file's diagnostics as elements of `diagnostics` ([`super::write_element`]).
pub fn entry(out: &mut Vec<u8>, c: &Checked) -> io::Result<()> {
    for d in c.diagnostics() {
        super::write_element(out, &diagnostic_json(&c.display, c, d), 2)?;
    }
    Ok(())
}

/// The end of the document: `diagnostics` closed (`any`: it has elements), the file count.
pub fn tail(out: &mut dyn Write, any: bool, files: usize) -> io::Result<()> {
    super::close_array(out, any, 1)?;
    writeln!(out, ",\n  \"files\": {files},\n  \"version\": 1\n}}")
}
