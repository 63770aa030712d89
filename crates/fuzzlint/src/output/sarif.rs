//! SARIF 2.1.0 for code-scanning dashboards. Columns are Unicode code points
//! (`columnKind: unicodeCodePoints`), matching the other formats.

use crate::Checked;
use fuzzfile_check::{Rule, Severity};
use serde_json::{json, Value};
use std::io::{self, Write};

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

pub fn write(out: &mut dyn Write, checked: &[Checked]) -> io::Result<()> {
    let rules: Vec<Value> = Rule::ALL
        .iter()
        .map(|r| {
            json!({
                "id": r.code(),
                "name": r.name(),
                "shortDescription": { "text": r.summary() },
                "fullDescription": { "markdown": fuzzfile_check::rules::documentation(*r), "text": r.summary() },
                "defaultConfiguration": { "level": level(r.default_severity()) },
                "properties": { "category": r.category() },
            })
        })
        .collect();
    let mut results = Vec::new();
    for c in checked {
        let a = &c.analysis;
        for d in &a.diagnostics {
            let region = |r: fuzzfile_check::TextRange| {
                let s = a.line_col(r.start);
                let e = a.line_col(r.end);
                json!({ "startLine": s.line, "startColumn": s.column, "endLine": e.line, "endColumn": e.column })
            };
            let location = |r| json!({ "physicalLocation": { "artifactLocation": { "uri": c.display }, "region": region(r) } });
            let mut result = json!({
                "ruleId": d.rule.code(),
                "ruleIndex": Rule::ALL.iter().position(|r| *r == d.rule).unwrap_or(0),
                "level": level(d.severity),
                "message": { "text": match &d.help { Some(h) => format!("{} ({h})", d.message), None => d.message.clone() } },
                "locations": [location(d.range)],
            });
            if !d.labels.is_empty() {
                result["relatedLocations"] = Value::Array(
                    d.labels
                        .iter()
                        .enumerate()
                        .map(|(i, l)| {
                            let mut loc = location(l.range);
                            loc["id"] = json!(i);
                            loc["message"] = json!({ "text": l.message });
                            loc
                        })
                        .collect(),
                );
            }
            if let Some(f) = &d.fix {
                result["fixes"] = json!([{
                    "description": { "text": f.message },
                    "artifactChanges": [{
                        "artifactLocation": { "uri": c.display },
                        "replacements": f.edits.iter().map(|e| json!({
                            "deletedRegion": region(e.range),
                            "insertedContent": { "text": e.replacement },
                        })).collect::<Vec<_>>(),
                    }],
                }]);
            }
            results.push(result);
        }
    }
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "fuzzlint",
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "artifacts": checked.iter().map(|c| json!({ "location": { "uri": c.display } })).collect::<Vec<_>>(),
            "results": results,
        }],
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}
