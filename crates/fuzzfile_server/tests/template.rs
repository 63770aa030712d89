//! The language server in application templates (`*.template.yaml` with the values file
//! beside it): the template's diagnostics and the rendered file's at template positions, the
//! same as `fuzzlint check`; hover, completion and go to definition of values inside
//! `{{ }}`; a values file edited in the editor re-checks its open template. A client speaks
//! JSON-RPC to the server as an editor does (`server/common.rs`).
#![allow(clippy::unwrap_used)]

#[path = "server/common.rs"]
mod common;

use common::{caps_utf16, caps_utf8, labels, show_range, Client};
use fuzzfile_server::position::Encoding;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const TEMPLATE: &str = r#"{{- $img := default "docker://alpine:3.20" .Image }}
# Modèle d'application 🚀
version: v4
jobs:
  work:
    image:
      uri: {{ $img }}
    command: [/bin/sh, -c, "echo {{ .Greeting }} {{ $.Cores }} {{ .Nope }}"]
    resource:
      cpu:
        cores: {{ .Cores }}
      memory:
        size: {{ .Memory }}
    polcy:
      timeout: {execute: 1h}
{{- with .Image }}
    # {{ .Cores }}
{{- end }}
"#;

const VALUES: &str = r#"values:
  - name: Greeting
    display_name: What the job says
    string_value: hello
  - name: Cores
    display_name: CPU cores
    display_category: Resources
    uint_value: 4
  - name: Memory
    display_name: Memory of the job
    string_value: 1GiB
  - name: Image
    display_name: Container image
    string_value: ""
  - name: Scope
    display_name: Who sees it
    string_value: user
    options_input:
      options: [user, group]
"#;

/// A fresh directory with `app.template.yaml` (`template`) and, when given,
/// `app.values.yaml`.
fn project(name: &str, template: &str, values: Option<&str>) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("lsp-template-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("app.template.yaml"), template).unwrap();
    if let Some(v) = values {
        std::fs::write(d.join("app.values.yaml"), v).unwrap();
    }
    d
}

fn uri(dir: &Path, name: &str) -> String {
    format!("file://{}/{name}", dir.display())
}

/// Each diagnostic as `range "covered" code`, in the order published.
fn shown(text: &str, diags: &Value, enc: Encoding) -> Vec<String> {
    diags["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            format!(
                "{} {}",
                show_range(text, &d["range"], enc),
                d["code"].as_str().unwrap_or("?")
            )
        })
        .collect()
}

fn message_of<'a>(diags: &'a Value, code: &str) -> &'a str {
    diags["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == code)
        .and_then(|d| d["message"].as_str())
        .unwrap_or_else(|| panic!("no {code} in {diags}"))
}

/// The template's findings at template positions, in both encodings (non-ASCII text before
/// them): the unknown key in copied text, the missing value at its action; no finding of
/// the raw `{{ }}` text. The same findings, at the same places, as the check
/// `fuzzlint check` runs.
#[test]
fn template_diagnostics_are_published_at_template_positions() {
    let d = project("diags", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let expected = {
        let a = fuzzfile_check::template::check(
            fuzzfile_check::template::TemplateInput {
                template: fuzzfile_check::template::Source {
                    display: d.join("app.template.yaml").display().to_string(),
                    text: TEMPLATE.into(),
                },
                values: Some(fuzzfile_check::template::Source {
                    display: d.join("app.values.yaml").display().to_string(),
                    text: VALUES.into(),
                }),
                ..Default::default()
            },
            &Default::default(),
        );
        a.diagnostics
            .iter()
            .map(|x| (x.rule.code().to_owned(), x.range.start, x.range.end))
            .collect::<Vec<_>>()
    };
    for caps in [caps_utf8(), caps_utf16()] {
        let mut c = Client::start(caps, None);
        let enc = c.encoding;
        c.open(&t, "yaml", 1, TEMPLATE);
        let p = c.diagnostics(&t, Some(1));
        let got = shown(TEMPLATE, &p, enc);
        assert_eq!(
            got,
            ["8:67-8:72 \".Nope\" FZ053", "14:5-14:10 \"polcy\" FZ010",],
            "{p}"
        );
        assert!(message_of(&p, "FZ053").contains("did you mean `.Scope`"));
        // The server's ranges are the check's, byte for byte.
        let ranges: Vec<(String, u32, u32)> = p["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                let r = common::byte_range(TEMPLATE, &x["range"], enc);
                (
                    x["code"].as_str().unwrap().to_owned(),
                    r.start as u32,
                    r.end as u32,
                )
            })
            .collect();
        assert_eq!(ranges, expected);
        c.finish();
    }
}

/// A template error is a diagnostic of its own rule at its place, and goes away when the
/// template is corrected; a finding printed from a value names the value.
#[test]
fn template_errors_come_and_go_with_edits() {
    let d = project("edits", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let mut c = Client::start(caps_utf8(), None);
    let broken = TEMPLATE.replace("version: v4\n", "version: v4\n{{ end }}\n");
    c.open(&t, "yaml", 1, &broken);
    let p = c.diagnostics(&t, Some(1));
    let got = shown(&broken, &p, c.encoding);
    assert_eq!(got, ["4:1-4:10 \"{{ end }}\" FZ050"], "{p}");
    assert!(message_of(&p, "FZ050").contains("unexpected {{end}}"));

    let bad_memory = TEMPLATE.replace("{{ .Memory }}", "{{ .Memory }}X");
    c.change_full(&t, 2, &bad_memory);
    let p = c.diagnostics(&t, Some(2));
    let m = message_of(&p, "FZ011");
    assert!(m.contains("(from value `Memory`"), "{m}");
    assert!(m.contains("app.values.yaml:9:"), "{m}");
    c.finish();
}

/// Hover on `.Cores` and `$.Cores` shows the declaration; `.Cores` inside `with` (dot is
/// the greeting there) shows nothing; hover still works while the template does not parse.
#[test]
fn hover_shows_the_declaration_of_a_value() {
    let d = project("hover", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let mut c = Client::start(caps_utf16(), None);
    c.open(&t, "yaml", 1, TEMPLATE);
    let hover = |c: &mut Client, text: &str, needle: &str, delta: usize| {
        let pos = c.at(text, needle, delta);
        c.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": t}, "position": pos}),
        )
        .unwrap()
    };
    let h = hover(&mut c, TEMPLATE, "{{ .Cores }}", 5);
    let md = h["contents"]["value"].as_str().unwrap();
    let values_path = d.join("app.values.yaml").display().to_string();
    assert_eq!(
        md,
        format!(
            "**`.Cores`**: CPU cores\n\n`uint_value` (unsigned integer), default `4`\n\ncategory: Resources\n\ndeclared at `{values_path}:5:11`"
        )
    );
    assert_eq!(
        show_range(TEMPLATE, &h["range"], c.encoding),
        "11:20-11:25 \"Cores\""
    );
    let h = hover(&mut c, TEMPLATE, "$.Cores", 3);
    assert!(h["contents"]["value"]
        .as_str()
        .unwrap()
        .starts_with("**`.Cores`**"));
    // Options of an enum, a string default.
    let with_scope = TEMPLATE.replace("{{ .Nope }}", "{{ .Scope }}");
    c.change_full(&t, 2, &with_scope);
    let h = hover(&mut c, &with_scope, ".Scope", 2);
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(
        md.contains("default `\"user\"`") && md.contains("options: `user`, `group`"),
        "{md}"
    );
    // Inside `with .Image`, `.Cores` is a field of the image, not a value.
    assert_eq!(hover(&mut c, &with_scope, "# {{ .Cores", 6), Value::Null);
    // On a function name: nothing.
    assert_eq!(hover(&mut c, &with_scope, "default", 1), Value::Null);
    // On copied text: the Fuzzfile's hover of the rendered file, at the template's range.
    let h = hover(&mut c, &with_scope, "memory:", 2);
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(md.starts_with("**`memory`**"), "{md}");
    assert_eq!(
        show_range(&with_scope, &h["range"], c.encoding),
        "12:7-12:13 \"memory\""
    );
    let h = hover(&mut c, &with_scope, "  work:", 3);
    let md = h["contents"]["value"].as_str().unwrap();
    assert!(md.contains("job `work`"), "{md}");
    // The rule of a finding in copied text.
    let h = hover(&mut c, &with_scope, "polcy", 2);
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .contains("unknown-key"),
        "{h}"
    );
    // Being typed: an unclosed `{{ if`; the values are still found.
    let typing = format!("{with_scope}{{{{ if .Memory ");
    c.change_full(&t, 3, &typing);
    let h = hover(&mut c, &typing, "if .Memory", 5);
    assert!(
        h["contents"]["value"]
            .as_str()
            .unwrap()
            .starts_with("**`.Memory`**: Memory of the job"),
        "{h}"
    );
    c.finish();
}

/// Completion of value names after `.` and `$.`, of functions and keywords where an action or
/// a command starts; nothing after `.A.` (a field of a value) or in a string.
#[test]
fn completion_of_values_and_functions() {
    let d = project("complete", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let mut c = Client::start(caps_utf8(), None);
    c.open(&t, "yaml", 1, TEMPLATE);
    let mut version = 1;
    let mut complete = |c: &mut Client, text: &str| {
        version += 1;
        c.change_full(&t, version, text);
        let pos = c.pos(text, text.len());
        c.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": t}, "position": pos}),
        )
        .unwrap()
    };
    let all = ["Greeting", "Cores", "Memory", "Image", "Scope"];
    let r = complete(&mut c, &format!("{TEMPLATE}{{{{ .Me"));
    assert_eq!(labels(&r), all);
    let memory = &r[2];
    assert_eq!(memory["detail"], "string_value: Memory of the job");
    // The edit replaces the typed part of the name.
    let text = format!("{TEMPLATE}{{{{ .Me");
    assert_eq!(
        show_range(&text, &memory["textEdit"]["range"], c.encoding),
        format!(
            "{}:5-{}:7 \"Me\"",
            text.lines().count(),
            text.lines().count()
        )
    );
    assert_eq!(
        labels(&complete(&mut c, &format!("{TEMPLATE}{{{{ $."))),
        all
    );
    assert_eq!(
        labels(&complete(
            &mut c,
            &format!("{TEMPLATE}{{{{ printf \"%s\" .")
        )),
        all
    );
    assert!(labels(&complete(&mut c, &format!("{TEMPLATE}{{{{ .Cores."))).is_empty());
    assert!(labels(&complete(&mut c, &format!("{TEMPLATE}{{{{ \"a ."))).is_empty());
    // Functions and keywords at the start of an action; functions after `|` and `(`.
    let start = labels(&complete(&mut c, &format!("{TEMPLATE}{{{{- tr")));
    for f in ["trim", "printf", "default", "if", "range", "end"] {
        assert!(start.contains(&f.to_owned()), "{f}: {start:?}");
    }
    assert_eq!(
        start.len(),
        fuzzfile_template::funcs::NAMES.len() + 10,
        "every function and the keywords"
    );
    let piped = labels(&complete(&mut c, &format!("{TEMPLATE}{{{{ .Greeting | up")));
    assert!(piped.contains(&"upper".to_owned()) && !piped.contains(&"if".to_owned()));
    let nested = labels(&complete(&mut c, &format!("{TEMPLATE}{{{{ if (eq ")));
    assert!(nested.contains(&"len".to_owned()));
    // Outside an action, in text the template copies: the Fuzzfile's completion (a job key
    // being typed), its edit at the template's place.
    let typing = TEMPLATE.replace("    polcy:", "    pol");
    let typing = typing[..typing.find("    pol").unwrap() + "    pol".len()].to_owned();
    let r = complete(&mut c, &typing);
    let policy = r
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "policy")
        .unwrap_or_else(|| panic!("no `policy` in {r}"));
    assert_eq!(
        show_range(&typing, &policy["textEdit"]["range"], c.encoding),
        format!(
            "{}:5-{}:8 \"pol\"",
            typing.lines().count(),
            typing.lines().count()
        )
    );
    assert!(!labels(&r).contains(&"printf".to_owned()));
    c.finish();
}

/// Go to definition from `{{ .Cores }}` (and `$.Cores`) to `- name: Cores` in the values file.
#[test]
fn definition_goes_to_the_values_file() {
    let d = project("definition", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let v = uri(&d, "app.values.yaml");
    let mut c = Client::start(caps_utf16(), None);
    c.open(&t, "yaml", 1, TEMPLATE);
    for (needle, delta) in [("{{ .Cores }}", 5), ("$.Cores", 2), ("{{ .Memory", 4)] {
        let pos = c.at(TEMPLATE, needle, delta);
        let r = c
            .request(
                "textDocument/definition",
                json!({"textDocument": {"uri": t}, "position": pos}),
            )
            .unwrap();
        assert_eq!(r["uri"], v.as_str(), "{needle}");
        let name = needle
            .trim_start_matches("{{ ")
            .trim_start_matches(['$', '.']);
        let name = name.trim_end_matches(" }}");
        assert_eq!(
            show_range(VALUES, &r["range"], c.encoding),
            match name {
                "Cores" => "5:11-5:16 \"Cores\"",
                _ => "9:11-9:17 \"Memory\"",
            },
            "{needle}"
        );
    }
    // Not a value: a variable, a function.
    for needle in ["$img }}", "default"] {
        let pos = c.at(TEMPLATE, needle, 1);
        let r = c
            .request(
                "textDocument/definition",
                json!({"textDocument": {"uri": t}, "position": pos}),
            )
            .unwrap();
        assert_eq!(r, Value::Null, "{needle}");
    }
    c.finish();
}

/// The values file open in the editor is what the template is checked with: an edit there
/// (not saved) re-checks the template; its own problems are published on it; closed, the
/// file on disk counts again.
#[test]
fn editing_the_values_file_rechecks_the_open_template() {
    let d = project("values-edit", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let v = uri(&d, "app.values.yaml");
    let mut c = Client::start(caps_utf8(), None);
    c.open(&t, "yaml", 1, TEMPLATE);
    let p = c.diagnostics(&t, Some(1));
    assert!(!shown(TEMPLATE, &p, c.encoding)
        .iter()
        .any(|s| s.contains("FZ011")));

    c.open(&v, "yaml", 1, VALUES);
    let p = c.diagnostics(&v, Some(1));
    assert_eq!(p["diagnostics"], json!([]), "a clean values file");
    // Opening it checked the template again (with the same text: the same findings).
    let p = c.diagnostics(&t, Some(1));
    assert!(!shown(TEMPLATE, &p, c.encoding)
        .iter()
        .any(|s| s.contains("FZ011")));
    let bad = VALUES.replace("string_value: 1GiB", "string_value: lots");
    c.change_full(&v, 2, &bad);
    let p = c.diagnostics(&t, Some(1));
    let m = message_of(&p, "FZ011");
    assert!(
        m.contains("`lots` is not a size") && m.contains("(from value `Memory`"),
        "{m}"
    );
    let at = shown(TEMPLATE, &p, c.encoding);
    assert!(
        at.contains(&"13:15-13:28 \"{{ .Memory }}\" FZ011".to_owned()),
        "{at:?}"
    );

    // A problem of the values file itself is published on it.
    let broken = bad.replace("uint_value: 4", "uint_value: four");
    c.change_full(&v, 3, &broken);
    let p = c.diagnostics(&v, Some(3));
    let got = shown(&broken, &p, c.encoding);
    assert_eq!(got.len(), 1, "{got:?}");
    assert!(got[0].contains("\"four\" FZ054"), "{got:?}");
    // The template was checked again too: without a readable `Cores`, it prints `<no value>`.
    let p = c.diagnostics(&t, Some(1));
    assert!(
        message_of(&p, "FZ011").contains("(from value `Cores`)"),
        "{p}"
    );

    // Closed: the file on disk (1GiB) is read again and the template is clean of FZ011.
    c.notify("textDocument/didClose", json!({"textDocument": {"uri": v}}));
    let p = c.diagnostics(&t, Some(1));
    assert!(
        !shown(TEMPLATE, &p, c.encoding)
            .iter()
            .any(|s| s.contains("FZ011")),
        "{p}"
    );
    c.finish();
}

/// A `values.yaml` with no template beside it (a Helm chart's) gets nothing; a template with
/// no values file is checked with none and says where it looked.
#[test]
fn values_without_a_template_and_a_template_without_values() {
    let d = project("alone", TEMPLATE, None);
    std::fs::remove_file(d.join("app.template.yaml")).unwrap();
    let chart = d.join("chart");
    std::fs::create_dir_all(&chart).unwrap();
    let helm = uri(&chart, "values.yaml");
    let mut c = Client::start(caps_utf8(), None);
    c.open(
        &helm,
        "yaml",
        1,
        "replicaCount: 1\nimage:\n  repository: nginx\n",
    );
    assert!(c.no_diagnostics_for(&helm));

    let t = uri(&d, "other.template.yaml");
    c.open(&t, "yaml", 1, TEMPLATE);
    let p = c.diagnostics(&t, Some(1));
    let m = message_of(&p, "FZ053");
    assert!(m.contains("no values file beside the template"), "{m}");
    assert!(m.contains("other.values.yaml"), "{m}");
    // Hover has no declaration to show.
    let pos = c.at(TEMPLATE, "{{ .Cores }}", 5);
    let h = c
        .request(
            "textDocument/hover",
            json!({"textDocument": {"uri": t}, "position": pos}),
        )
        .unwrap();
    assert_eq!(h, Value::Null);
    c.finish();
}

/// A client that pulls (Neovim): after an edit of the values file the template's version is
/// the same, yet its diagnostics changed; the server asks the client to pull again and does
/// not answer "unchanged" to the old result id.
#[test]
fn pulled_template_diagnostics_follow_the_values_file() {
    let d = project("pull", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let v = uri(&d, "app.values.yaml");
    let caps = json!({
        "general": {"positionEncodings": ["utf-8"]},
        "textDocument": {"diagnostic": {"dynamicRegistration": false}},
        "workspace": {"diagnostic": {"refreshSupport": true}}
    });
    let mut c = Client::start(caps, None);
    c.open(&t, "yaml", 1, TEMPLATE);
    c.open(&v, "yaml", 1, VALUES);
    let pull = |c: &mut Client, previous: Option<&str>| {
        let mut params = json!({"textDocument": {"uri": t}});
        if let Some(p) = previous {
            params["previousResultId"] = json!(p);
        }
        c.request("textDocument/diagnostic", params).unwrap()
    };
    let first = pull(&mut c, None);
    assert_eq!(first["kind"], "full");
    assert!(!first["items"].to_string().contains("FZ011"));
    let id = first["resultId"].as_str().unwrap().to_owned();
    assert_eq!(pull(&mut c, Some(&id))["kind"], "unchanged");
    let refreshes = |c: &Client| {
        c.server_requests
            .iter()
            .filter(|r| r.method == "workspace/diagnostic/refresh")
            .count()
    };
    let before = refreshes(&c);
    c.change_full(
        &v,
        2,
        &VALUES.replace("string_value: 1GiB", "string_value: lots"),
    );
    let after = pull(&mut c, Some(&id));
    assert_eq!(after["kind"], "full", "{after}");
    assert!(after["items"].to_string().contains("FZ011"), "{after}");
    assert!(refreshes(&c) > before, "a refresh was asked for");
    c.finish();
}

/// A values file that is not open changed on disk (the client's file watcher says so): the
/// open template is checked again with the new text.
#[test]
fn a_values_file_changed_on_disk_rechecks_the_open_template() {
    let d = project("watched", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let v = uri(&d, "app.values.yaml");
    let caps = json!({
        "general": {"positionEncodings": ["utf-8"]},
        "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}
    });
    let mut c = Client::start(caps, None);
    c.open(&t, "yaml", 1, TEMPLATE);
    let p = c.diagnostics(&t, Some(1));
    assert!(!p.to_string().contains("FZ011"));
    let reg = c
        .server_requests
        .iter()
        .find(|r| r.method == "client/registerCapability")
        .expect("the watcher registration");
    assert!(
        reg.params.to_string().contains("values.{yaml,yml}"),
        "{:?}",
        reg.params
    );
    std::fs::write(
        d.join("app.values.yaml"),
        VALUES.replace("string_value: 1GiB", "string_value: lots"),
    )
    .unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": v, "type": 2}]}),
    );
    let p = c.diagnostics(&t, Some(1));
    assert!(message_of(&p, "FZ011").contains("`lots`"), "{p}");
    c.finish();
}

/// Hostile template texts (unclosed actions, `{{` at the very end, non-ASCII names, a `.` at
/// the end, CR line breaks, a NUL) with a values file that has errors: no request at any
/// character position fails or crashes, and the template's findings are published for each.
#[test]
fn hostile_templates_do_not_crash_any_feature() {
    let d = project(
        "hostile",
        "",
        Some("values:\n  - name: Ünï\n    string_value: é\n  - name: 1\n    uint_value: -3\n  - bool_value: x\n"),
    );
    let t = uri(&d, "app.template.yaml");
    let texts = [
        "",
        "{{",
        "{{ .",
        "{{ $.",
        "{{- .Ünï",
        "{{ if .Ünï }}\r{{ .Ünï.x }}\r{{ else }}{{ end",
        "{{/* .Ünï */}}{{ \"{{ .Ünï\" }}{{ `.` }}.\u{0}🚀{{ $x := . }}{{ $x.Ünï }}{{ (.Ünï).y }}",
        "{{ define \"app.template.yaml\" }}{{ .Ünï }}{{ end }}x",
        "version: v4\njobs:\n  a:\n    command: [echo, \"{{ .Ünï | printf \"%q\" }}\"]\n{{ range $i, $v := list 1 2 }}{{ $.Ünï }}{{ end }}",
    ];
    let mut c = Client::start(caps_utf16(), None);
    for (i, text) in texts.iter().enumerate() {
        let v = i as i32 + 1;
        if i == 0 {
            c.open(&t, "yaml", 1, text);
        } else {
            c.change_full(&t, v, text);
        }
        let _ = c.diagnostics(&t, Some(i64::from(v)));
        let mut offsets: Vec<usize> = text.char_indices().map(|(k, _)| k).collect();
        offsets.push(text.len());
        for o in offsets {
            let pos = c.pos(text, o);
            for m in [
                "textDocument/hover",
                "textDocument/completion",
                "textDocument/definition",
            ] {
                let r = c.request(m, json!({"textDocument": {"uri": t}, "position": pos}));
                assert!(r.is_ok(), "{m} on text {i} at {pos}: {r:?}");
            }
        }
    }
    c.finish();
}

/// Code actions in a template: the fix of a finding in copied text (`polcy`) as a quick fix
/// and in "fix all", applied to the template and checked again without the finding; none
/// for a finding whose bytes a value printed.
#[test]
fn quick_fixes_edit_copied_template_text_only() {
    let d = project("actions", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let mut c = Client::start(caps_utf8(), None);
    let text = TEMPLATE.replace("{{ .Memory }}", "{{ .Memory }}X");
    c.open(&t, "yaml", 1, &text);
    let _ = c.diagnostics(&t, Some(1));
    let actions = |c: &mut Client, needle: &str, only: Option<&str>| {
        let start = c.at(&text, needle, 0);
        let end = c.at(&text, needle, needle.len());
        let mut context = json!({"diagnostics": []});
        if let Some(o) = only {
            context["only"] = json!([o]);
        }
        c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": t}, "range": {"start": start, "end": end}, "context": context}),
        )
        .unwrap()
    };
    let a = actions(&mut c, "polcy", None);
    let titles: Vec<&str> = a
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Rename to `policy`"], "{a}");
    let (edits, version) = common::document_edits(&a[0]["edit"]);
    assert_eq!(version, Some(1));
    let fixed = common::apply_edits(&text, &edits, c.encoding);
    assert_eq!(fixed, text.replace("polcy:", "policy:"));
    // The value's bytes (`1GiBX`, printed by `{{ .Memory }}`) get no edit.
    assert_eq!(actions(&mut c, "{{ .Memory }}X", None), json!([]));
    // Fix all: what `fuzzlint check --fix` writes.
    let all = actions(&mut c, "polcy", Some("source.fixAll.fuzzlint"));
    let (edits, _) = common::document_edits(&all[0]["edit"]);
    let fixed_all = common::apply_edits(&text, &edits, c.encoding);
    let check = fuzzfile_check::template::check(
        fuzzfile_check::template::TemplateInput {
            template: fuzzfile_check::template::Source {
                display: d.join("app.template.yaml").display().to_string(),
                text: text.clone(),
            },
            values: Some(fuzzfile_check::template::Source {
                display: d.join("app.values.yaml").display().to_string(),
                text: VALUES.into(),
            }),
            ..Default::default()
        },
        &Default::default(),
    );
    assert_eq!(fixed_all, fuzzfile_check::template::fix_template(&check));
    assert!(fixed_all.contains("    policy:\n"));
    // Applied, the template has no unknown key any more.
    c.change_full(&t, 2, &fixed);
    let p = c.diagnostics(&t, Some(2));
    assert!(!p.to_string().contains("FZ010"), "{p}");
    c.finish();
}

/// `.` triggers completion (the editor asks as soon as `{{ .` is typed): a template answers
/// with its values, a Fuzzfile with nothing (a path or a version being typed there).
#[test]
fn a_dot_triggers_value_completion_in_templates_only() {
    let d = project("trigger", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let mut c = Client::start(caps_utf8(), None);
    let triggers = &c.init_result["capabilities"]["completionProvider"]["triggerCharacters"];
    assert!(
        triggers.as_array().unwrap().contains(&json!(".")),
        "{triggers}"
    );
    let text = format!("{TEMPLATE}{{{{ .");
    c.open(&t, "yaml", 1, &text);
    let ctx = json!({"triggerKind": 2, "triggerCharacter": "."});
    let pos = c.pos(&text, text.len());
    let r = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": t}, "position": pos, "context": ctx}),
        )
        .unwrap();
    assert_eq!(labels(&r).len(), 5, "{r}");
    let f = "file:///w/train.fz";
    let plain = "version: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3.}\n";
    c.open(f, "fuzzfile", 1, plain);
    let pos = c.at(plain, "3.}", 2);
    let r = c
        .request(
            "textDocument/completion",
            json!({"textDocument": {"uri": f}, "position": pos, "context": ctx}),
        )
        .unwrap();
    assert_eq!(r, json!([]));
    c.finish();
}

/// Find references of a value: from `- name: Cores` in the open values file and from
/// `{{ .Cores }}` in the template, every place the template reads it at its root (not the
/// `.Cores` inside `with`), with the declaration when asked for.
#[test]
fn references_of_a_value_from_the_values_file_and_the_template() {
    let d = project("references", TEMPLATE, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let v = uri(&d, "app.values.yaml");
    let mut c = Client::start(caps_utf16(), None);
    c.open(&t, "yaml", 1, TEMPLATE);
    c.open(&v, "yaml", 1, VALUES);
    let refs = |c: &mut Client, uri: &str, pos: Value, decl: bool| {
        let r = c
            .request(
                "textDocument/references",
                json!({"textDocument": {"uri": uri}, "position": pos, "context": {"includeDeclaration": decl}}),
            )
            .unwrap();
        r.as_array()
            .unwrap()
            .iter()
            .map(|l| {
                let text = if l["uri"] == t.as_str() {
                    TEMPLATE
                } else {
                    VALUES
                };
                let file = if l["uri"] == t.as_str() { "t" } else { "v" };
                format!("{file} {}", show_range(text, &l["range"], c.encoding))
            })
            .collect::<Vec<_>>()
    };
    let pos = c.at(VALUES, "name: Cores", 7);
    let from_values = refs(&mut c, &v, pos, true);
    assert_eq!(
        from_values,
        [
            "v 5:11-5:16 \"Cores\"",
            "t 8:55-8:60 \"Cores\"",
            "t 11:20-11:25 \"Cores\""
        ]
    );
    let pos = c.at(TEMPLATE, "{{ .Cores }}", 5);
    let from_template = refs(&mut c, &t, pos, false);
    assert_eq!(from_template, from_values[1..]);
    // On a key of the values file that is no name: nothing.
    let r = c
        .request(
            "textDocument/references",
            json!({"textDocument": {"uri": v}, "position": c.at(VALUES, "uint_value", 1), "context": {"includeDeclaration": true}}),
        )
        .unwrap();
    assert_eq!(r, Value::Null);
    c.finish();
}

/// Go to definition from `{{ template "name" }}` (also inside `if` and in another `define`)
/// to its `{{ define "name" }} … {{ end }}`.
#[test]
fn definition_of_a_called_template() {
    let text = "{{- define \"env\" }}\n      - A=1\n{{- end }}\n{{- define \"both\" }}{{ template \"env\" . }}{{ end }}\nversion: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [echo]\n    env:\n{{- if true }}{{ template \"env\" . }}{{ end }}\n{{- template \"both\" . }}\n";
    let d = project("define", text, Some(VALUES));
    let t = uri(&d, "app.template.yaml");
    let mut c = Client::start(caps_utf8(), None);
    c.open(&t, "yaml", 1, text);
    let p = c.diagnostics(&t, Some(1));
    assert!(!p.to_string().contains("FZ05"), "the template renders: {p}");
    let def = |c: &mut Client, nth: usize, needle: &str| {
        let i = text.match_indices(needle).nth(nth).map(|(i, _)| i).unwrap();
        let pos = c.pos(text, i + needle.len() - 3);
        let r = c
            .request(
                "textDocument/definition",
                json!({"textDocument": {"uri": t}, "position": pos}),
            )
            .unwrap();
        show_range(text, &r["range"], c.encoding)
    };
    let env = "1:1-3:11 \"{{- define \\\"env\\\" }}\\n      - A=1\\n{{- end }}\"";
    assert_eq!(def(&mut c, 0, "template \"env\""), env, "inside a define");
    assert_eq!(def(&mut c, 1, "template \"env\""), env, "inside an if");
    let both = def(&mut c, 0, "template \"both\"");
    assert!(both.starts_with("4:1-4:"), "{both}");
    c.finish();
}
