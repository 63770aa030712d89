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

/// The SARIF result of one diagnostic.
fn result_json(c: &Checked, d: &fuzzfile_check::Diagnostic) -> Value {
    let a = c;
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
    result
}

/// The rule's documentation as plain text, for viewers that do not render Markdown: the
/// summary, then the page without Markdown's code fences.
fn help_text(rule: Rule, docs: &str) -> String {
    let body: Vec<&str> = docs
        .lines()
        .filter(|l| !l.trim_start().starts_with("```"))
        .collect();
    format!("{}\n\n{}", rule.summary(), body.join("\n").trim())
}

/// Every result of every file, serialised lazily (one result in memory at a time).
struct Results<'a>(&'a [Checked]);

impl serde::Serialize for Results<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.0
                .iter()
                .flat_map(|c| c.diagnostics().iter().map(|d| result_json(c, d))),
        )
    }
}

pub fn write(out: &mut dyn Write, checked: &[Checked]) -> io::Result<()> {
    let docs_base = fuzzfile_diagnostics::docs::rule_docs_base();
    let rules: Vec<Value> = Rule::ALL
        .iter()
        .map(|r| {
            let docs = fuzzfile_check::rules::documentation(*r);
            json!({
                "id": r.code(),
                "name": r.name(),
                "shortDescription": { "text": r.summary() },
                "fullDescription": { "markdown": &docs, "text": r.summary() },
                "helpUri": fuzzfile_diagnostics::docs::rule_doc_url_in(&docs_base, r.name(), r.code()),
                "help": { "text": help_text(*r, &docs), "markdown": docs },
                "defaultConfiguration": { "level": level(r.default_severity()) },
                "properties": { "category": r.category() },
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "fuzzlint",
                "informationUri": fuzzfile_diagnostics::docs::REPOSITORY,
                "version": env!("CARGO_PKG_VERSION"),
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "artifacts": checked.iter().map(|c| json!({ "location": { "uri": c.display } })).collect::<Vec<_>>(),
            "results": RESULTS_PLACEHOLDER,
        }],
    });
    let mut w = io::BufWriter::new(&mut *out);
    super::write_json_pretty(
        &mut w,
        &Splice {
            value: &doc,
            results: &Results(checked),
        },
    )?;
    writeln!(w)?;
    w.flush()
}

/// Where the results go in the document.
const RESULTS_PLACEHOLDER: &str = "\u{0}results";

/// `value` as serde_json writes it, with the lazily written results in place of
/// [`RESULTS_PLACEHOLDER`]: the output is the same as for one document in memory.
struct Splice<'a> {
    value: &'a Value,
    results: &'a Results<'a>,
}

impl serde::Serialize for Splice<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        let nested = |value| Splice {
            value,
            results: self.results,
        };
        match self.value {
            Value::String(p) if p == RESULTS_PLACEHOLDER => self.results.serialize(s),
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for v in items {
                    seq.serialize_element(&nested(v))?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut m = s.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    m.serialize_entry(k, &nested(v))?;
                }
                m.end()
            }
            other => other.serialize(s),
        }
    }
}
