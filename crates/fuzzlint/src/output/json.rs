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

/// The document, with each diagnostic turned into JSON only as it is written: memory stays at
/// one diagnostic's JSON however many there are. Keys are written in sorted order, as a
/// `serde_json` map writes them.
pub fn write(out: &mut dyn Write, checked: &[Checked]) -> io::Result<()> {
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        diagnostics: Stream<'a>,
        files: usize,
        version: u32,
    }
    let doc = Doc {
        diagnostics: Stream(checked),
        files: checked.iter().filter(|c| c.counted()).count(),
        version: 1,
    };
    let mut w = io::BufWriter::new(&mut *out);
    super::write_json_pretty(&mut w, &doc)?;
    writeln!(w)?;
    w.flush()
}

/// Every diagnostic of every file, serialised lazily.
struct Stream<'a>(&'a [Checked]);

impl serde::Serialize for Stream<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().flat_map(|c| {
            c.diagnostics()
                .iter()
                .map(|d| diagnostic_json(&c.display, c, d))
        }))
    }
}
