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

/// One file's results as elements of `results` ([`super::write_element`]).
pub fn entry(out: &mut Vec<u8>, c: &Checked) -> io::Result<()> {
    for d in c.diagnostics() {
        super::write_element(out, &result_json(c, d), 4)?;
    }
    Ok(())
}

/// The tool and its rules (all of them: a result's `ruleIndex` is its rule's place in
/// `Rule::ALL`).
fn tool() -> Value {
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
    json!({ "driver": {
        "name": "fuzzlint",
        "informationUri": fuzzfile_diagnostics::docs::REPOSITORY,
        "version": env!("CARGO_PKG_VERSION"),
        "semanticVersion": env!("CARGO_PKG_VERSION"),
        "rules": rules,
    }})
}

/// The log with its one run.
#[derive(serde::Serialize)]
struct Document<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    runs: [Run<'a>; 1],
    version: &'static str,
}

/// The run, its keys in the order written: `results` as each file is checked, then
/// `artifacts` (the files listed, known once every file is checked) and `tool`.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    column_kind: &'static str,
    results: &'static str,
    artifacts: Vec<Value>,
    tool: &'a Value,
}

/// Where the results go in the document: the text before it is the head, after it the tail.
const RESULTS_PLACEHOLDER: &str = "\u{0}results";
/// How the placeholder is written (a file's name, escaped in a string, cannot be this).
const RESULTS_WRITTEN: &[u8] = br#""results": "\u0000results""#;

/// The document's text before and after the results' array, as the pretty printer writes it.
fn around_results(artifacts: &[String], tool: &Value) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let doc = Document {
        schema: "https://json.schemastore.org/sarif-2.1.0.json",
        runs: [Run {
            column_kind: "unicodeCodePoints",
            results: RESULTS_PLACEHOLDER,
            artifacts: artifacts
                .iter()
                .map(|uri| json!({ "location": { "uri": uri } }))
                .collect(),
            tool,
        }],
        version: "2.1.0",
    };
    let mut text = Vec::new();
    super::write_json_pretty(&mut text, &doc)?;
    let at = text
        .windows(RESULTS_WRITTEN.len())
        .position(|w| w == RESULTS_WRITTEN)
        .ok_or_else(|| io::Error::other("the SARIF document has no place for its results"))?;
    let key = br#""results": "#.len();
    let tail = text.split_off(at + RESULTS_WRITTEN.len());
    text.truncate(at + key);
    Ok((text, tail))
}

/// The document up to the opening of `results`.
pub fn head(out: &mut dyn Write) -> io::Result<()> {
    let (head, _) = around_results(&[], &Value::Null)?;
    out.write_all(&head)?;
    out.write_all(b"[")
}

/// The end of the document: `results` closed (`any`: it has elements), the files listed
/// (`artifacts`), the tool and its rules.
pub fn tail(out: &mut dyn Write, any: bool, artifacts: &[String]) -> io::Result<()> {
    super::close_array(out, any, 3)?;
    let (_, tail) = around_results(artifacts, &tool())?;
    out.write_all(&tail)?;
    writeln!(out)
}
