//! The catalog's application templates (../shared/corpus/templates: 89 templates with their
//! `<name>.values.yaml` beside them) opened in the language server: each publishes exactly
//! the findings of `fuzzfile_check::template::check` with the same values file, at the same
//! places; hover and go to definition on every `{{ .Name }}` action of the template's top
//! level reach the value's declaration in the values file beside it.
#![allow(clippy::unwrap_used)]

#[path = "server/common.rs"]
mod common;

use common::{byte_range, caps_utf16, Client};
use fuzz_test_support::corpus::corpus_templates;
use fuzzfile_check::template::{self, Source, TemplateInput};
use fuzzfile_template::ast::{Arg, Node};
use serde_json::json;
use std::path::Path;
use std::time::Instant;

/// What `fuzzlint check` finds in the template at `path`: (code, start, end, message).
fn expected(path: &Path, text: &str) -> Vec<(String, usize, usize, String)> {
    let candidates = template::values_file_paths(path);
    let values = candidates.iter().find(|p| p.is_file());
    let input = TemplateInput {
        template: Source {
            display: path.display().to_string(),
            text: text.to_owned(),
        },
        values: values.map(|p| Source {
            display: p.display().to_string(),
            text: std::fs::read_to_string(p).unwrap(),
        }),
        looked_for: candidates.iter().map(|p| p.display().to_string()).collect(),
        ..Default::default()
    };
    let a = template::check(input, &Default::default());
    a.diagnostics
        .iter()
        .filter(|d| d.rule != fuzzfile_check::Rule::ClusterProfileMissing)
        .map(|d| {
            let mut m = d.message.clone();
            if let Some(h) = &d.help {
                m.push_str("\nhelp: ");
                m.push_str(h);
            }
            (
                d.rule.code().to_owned(),
                d.range.start as usize,
                d.range.end as usize,
                m,
            )
        })
        .collect()
}

#[test]
fn corpus_templates_in_the_editor() {
    let Some(files) = corpus_templates() else {
        return;
    };
    assert_eq!(files.len(), 89, "the corpus has 89 templates");
    let mut c = Client::start(caps_utf16(), None);
    let enc = c.encoding;
    let mut hovers = 0;
    // The first hover: asked again at the end, when that template's check is long evicted.
    let mut first: Option<(serde_json::Value, serde_json::Value)> = None;
    let mut findings = 0;
    let start = Instant::now();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let uri = format!("file://{}", path.display());
        c.open(&uri, "yaml", 1, &text);
        let p = c.diagnostics(&uri, Some(1));
        let got: Vec<(String, usize, usize, String)> = p["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let r = byte_range(&text, &d["range"], enc);
                (
                    d["code"].as_str().unwrap().to_owned(),
                    r.start,
                    r.end,
                    d["message"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        assert_eq!(got, expected(path, &text), "{}", path.display());
        findings += got.len();

        // Every top-level `{{ .Name }}`: hover shows its declaration, definition goes there.
        let name = path.file_name().unwrap().to_str().unwrap();
        let values_path = path
            .parent()
            .unwrap()
            .join(name.replace(".template.yaml", ".values.yaml"));
        let values_text = std::fs::read_to_string(&values_path).unwrap();
        let decls = fuzzfile_template::values_file::parse(&values_text).0.decls;
        let Ok(t) = fuzzfile_template::parse(&path.display().to_string(), &text) else {
            continue;
        };
        for n in &t.root {
            let Node::Action { pipe, .. } = n else {
                continue;
            };
            let Some(Arg::Field { span, names }) = pipe.cmds.first().and_then(|c| c.args.first())
            else {
                continue;
            };
            let Some(d) = decls.iter().find(|d| Some(&d.name.value) == names.first()) else {
                continue;
            };
            let pos = c.pos(&text, span.start + 1);
            let doc = json!({"textDocument": {"uri": uri}, "position": pos});
            let h = c.request("textDocument/hover", doc.clone()).unwrap();
            let md = h["contents"]["value"].as_str().unwrap_or_default();
            assert!(
                md.starts_with(&format!("**`.{}`**", d.name.value)),
                "{}:{}: {h}",
                path.display(),
                span.start
            );
            let loc = c.request("textDocument/definition", doc).unwrap();
            assert_eq!(
                loc["uri"],
                format!("file://{}", values_path.display()),
                "{}",
                path.display()
            );
            assert_eq!(
                byte_range(&values_text, &loc["range"], enc),
                d.name.span.clone()
            );
            hovers += 1;
            first.get_or_insert_with(|| {
                (
                    json!({"textDocument": {"uri": uri}, "position": pos}),
                    h.clone(),
                )
            });
        }
    }
    let elapsed = start.elapsed();
    eprintln!(
        "{} templates opened, checked and published ({findings} findings) in {:.0} ms ({:.2} ms each, debug build, with {hovers} hovers and definitions)",
        files.len(),
        elapsed.as_secs_f64() * 1e3,
        elapsed.as_secs_f64() * 1e3 / files.len() as f64
    );
    assert!(
        hovers > files.len(),
        "hover checked on {hovers} actions only"
    );
    let (doc, h) = first.unwrap();
    assert_eq!(c.request("textDocument/hover", doc).unwrap(), h);
    c.finish();
}
