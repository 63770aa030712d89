//! `fuzzlint check` on application templates: discovery, values beside the template,
//! `--values` and `--set`, positions in the template (and in the values file) in every
//! format, values named where printed text came from them, `--fix` only in copied text, and
//! the catalog corpus without an error that is not reviewed.

use fuzz_test_support::{fuzzlint_binary, BinaryRun, NoColorVariable, ScratchDirectory};
use serde_json::Value;
use std::path::Path;

fn run_in(dir: &Path, args: &[&str]) -> BinaryRun {
    fuzzlint_binary!().run_in(dir, args, NoColorVariable::Set)
}

fn scratch(tag: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzzlint-templates-test", tag)
}

/// Two lines of template actions that render to nothing come first, so every rendered line
/// is two lines above its template line: a position that was not mapped is wrong.
const TEMPLATE: &str = r#"{{- /* the application's template */}}
{{- $cores := .Cores }}
version: v4
jobs:
  hello:
    image:
      uri: {{ .ContainerUri }}
    command: [echo, hello]
    resource:
      cpu:
        cores: {{ $cores }}
      memory:
        size: 1GB
    policy:
      retry:
        attempts: 3
"#;

const VALUES: &str = r#"values:
  - name: ContainerUri
    display_name: The image
    string_value: alpine:3.20
  - name: Cores
    display_name: CPU cores
    uint_value: 2
"#;

fn app(tag: &str) -> ScratchDirectory {
    let dir = scratch(tag);
    dir.write_file("app/template.yaml", TEMPLATE);
    dir.write_file("app/values.yaml", VALUES);
    dir
}

fn line_col(v: &Value) -> (u64, u64) {
    (
        v["line"].as_u64().expect("line"),
        v["column"].as_u64().expect("column"),
    )
}

fn findings<'a>(doc: &'a Value, rule: &str) -> Vec<&'a Value> {
    doc["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["rule"] == rule)
        .collect()
}

#[test]
fn positions_are_in_the_template_and_values_are_named() {
    let dir = app("positions");
    let r = run_in(dir.path(), &["check", "--format", "json", "app"]);
    let doc = r.json();
    assert_eq!(
        doc["files"], 1,
        "the values file is no file of its own: {doc:#}"
    );
    // Copied text: exact, the template's own line (15), not the rendered one (13).
    let retry = findings(&doc, "policy-retry-ignored");
    assert_eq!(retry.len(), 1, "{doc:#}");
    assert_eq!(retry[0]["file"], "app/template.yaml");
    assert_eq!(line_col(&retry[0]["range"]["start"]), (15, 7));
    assert_eq!(line_col(&retry[0]["range"]["end"]), (15, 12));
    // Printed by an action from a value: the action's span, the value named with the place
    // of its declaration.
    let uri = findings(&doc, "invalid-value");
    assert_eq!(uri.len(), 1, "{doc:#}");
    assert_eq!(line_col(&uri[0]["range"]["start"]), (7, 12));
    assert_eq!(line_col(&uri[0]["range"]["end"]), (7, 31));
    let message = uri[0]["message"].as_str().expect("message");
    assert!(
        message.ends_with("(from value `ContainerUri`, app/values.yaml:2:11)"),
        "{message}"
    );
    assert_eq!(r.code, 1, "an error fails the run");
}

#[test]
fn human_and_sarif_show_template_lines() {
    let dir = app("formats");
    let human = run_in(dir.path(), &["check", "app/template.yaml"]);
    assert!(
        human.stdout.contains("app/template.yaml:15:7"),
        "{}",
        human.stdout
    );
    assert!(human.stdout.contains("1 file checked"), "{}", human.stdout);
    let sarif = run_in(
        dir.path(),
        &["check", "--format", "sarif", "app/template.yaml"],
    )
    .json();
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let retry = results
        .iter()
        .find(|r| r["ruleId"] == "FZ032")
        .expect("policy-retry-ignored");
    let region = &retry["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 15);
    assert_eq!(region["startColumn"], 7);
}

#[test]
fn set_and_values_override_the_defaults() {
    let dir = app("overrides");
    // A valid image through --set: the error is gone, the warning stays.
    let r = run_in(
        dir.path(),
        &[
            "check",
            "--format",
            "json",
            "--set",
            "ContainerUri=docker://alpine:3.20",
            "app",
        ],
    );
    let doc = r.json();
    assert!(findings(&doc, "invalid-value").is_empty(), "{doc:#}");
    assert_eq!(findings(&doc, "policy-retry-ignored").len(), 1);
    assert_eq!(r.code, 0, "{doc:#}");
    // The same through --values (a plain mapping).
    dir.write_file("over.yaml", "ContainerUri: docker://alpine:3.20\n");
    let doc = run_in(
        dir.path(),
        &["check", "--format", "json", "--values", "over.yaml", "app"],
    )
    .json();
    assert!(findings(&doc, "invalid-value").is_empty(), "{doc:#}");
    // --set of a value of the wrong type, or of no value: values-file-error.
    let doc = run_in(
        dir.path(),
        &[
            "check",
            "--format",
            "json",
            "--set",
            "Cores=many",
            "--set",
            "Corse=2",
            "app",
        ],
    )
    .json();
    let errors = findings(&doc, "values-file-error");
    assert_eq!(errors.len(), 2, "{doc:#}");
    let text: Vec<&str> = errors
        .iter()
        .filter_map(|e| e["message"].as_str())
        .collect();
    assert!(text.iter().any(|m| m.contains("Cores")), "{text:?}");
    assert!(text.iter().any(|m| m.contains("Corse")), "{text:?}");
}

#[test]
fn values_file_errors_are_reported_in_the_values_file() {
    let dir = scratch("values-error");
    dir.write_file("app/template.yaml", TEMPLATE);
    dir.write_file(
        "app/values.yaml",
        "values:\n  - name: ContainerUri\n    string_value: docker://alpine:3.20\n  - name: Cores\n    uint_value: -2\n",
    );
    let doc = run_in(dir.path(), &["check", "--format", "json", "app"]).json();
    let errors = findings(&doc, "values-file-error");
    assert_eq!(errors.len(), 1, "{doc:#}");
    assert_eq!(errors[0]["file"], "app/values.yaml");
    assert_eq!(line_col(&errors[0]["range"]["start"]), (5, 17));
}

#[test]
fn a_values_file_named_alone_is_checked_as_one() {
    let dir = scratch("values-alone");
    dir.write_file("good.values.yaml", VALUES);
    let r = run_in(
        dir.path(),
        &["check", "--format", "json", "good.values.yaml"],
    );
    let doc = r.json();
    assert_eq!(doc["files"], 1);
    assert_eq!(
        doc["diagnostics"],
        serde_json::json!([]),
        "not checked as a Fuzzfile"
    );
    assert_eq!(r.code, 0);
    dir.write_file(
        "values.yaml",
        VALUES.replace("uint_value: 2", "uint_value: two"),
    );
    let r = run_in(dir.path(), &["check", "--format", "json", "values.yaml"]);
    let doc = r.json();
    let errors = findings(&doc, "values-file-error");
    assert_eq!(errors.len(), 1, "{doc:#}");
    assert_eq!(line_col(&errors[0]["range"]["start"]), (7, 17));
    assert_eq!(r.code, 1);
}

#[test]
fn a_template_without_values_is_said_once() {
    let dir = scratch("no-values");
    dir.write_file("x.template.yaml", TEMPLATE);
    let doc = run_in(
        dir.path(),
        &["check", "--format", "json", "x.template.yaml"],
    )
    .json();
    let missing = findings(&doc, "template-missing-value");
    assert_eq!(missing.len(), 1, "{doc:#}");
    let m = missing[0]["message"].as_str().expect("message");
    assert!(m.contains("x.values.yaml"), "{m}");
    // What the missing values printed (`<no value>` as the image) is not reported on top;
    // the template's own text is still checked.
    assert!(findings(&doc, "invalid-value").is_empty(), "{doc:#}");
    assert_eq!(findings(&doc, "policy-retry-ignored").len(), 1, "{doc:#}");
}

#[test]
fn template_errors_are_findings_at_the_action() {
    let dir = scratch("errors");
    dir.write_file(
        "a.template.yaml",
        "version: v4\njobs:\n  hello:\n    image:\n      uri: {{ .ContainerUri | trimm }}\n    command: [echo]\n",
    );
    dir.write_file("a.values.yaml", VALUES);
    dir.write_file(
        "b.template.yaml",
        "{{- if not .Cores }}{{ fail \"Cores must be set\" }}{{ end }}\nversion: v4\njobs:\n  hello:\n    image:\n      uri: docker://alpine\n    command: [echo]\n",
    );
    dir.write_file(
        "b.values.yaml",
        VALUES.replace("uint_value: 2", "uint_value: 0"),
    );
    let r = run_in(dir.path(), &["check", "--format", "json", "."]);
    let doc = r.json();
    assert_eq!(doc["files"], 2, "{doc:#}");
    let syntax = findings(&doc, "template-syntax-error");
    assert_eq!(syntax.len(), 1, "{doc:#}");
    assert_eq!(line_col(&syntax[0]["range"]["start"]), (5, 31));
    let fail = findings(&doc, "template-fail");
    assert_eq!(fail.len(), 1, "{doc:#}");
    assert_eq!(fail[0]["message"], "Cores must be set");
    assert_eq!(fail[0]["severity"], "error");
    assert_eq!(r.code, 1);
}

#[test]
fn a_fail_that_asks_for_an_empty_value_is_a_note_until_it_is_given() {
    let dir = scratch("required");
    dir.write_file(
        "app/template.yaml",
        "{{- if not (trim .ApiKey) }}\n  {{- fail \"ApiKey is required\" }}\n{{- end }}\nversion: v4\njobs:\n  hello:\n    image:\n      uri: docker://alpine\n    command: [echo, \"{{ .ApiKey }}\"]\n    policy:\n      retry:\n        attempts: 2\n",
    );
    dir.write_file(
        "app/values.yaml",
        "values:\n  - name: ApiKey\n    display_name: The key\n    string_value: \"\"\n  - name: Other\n    display_name: Another empty value\n    string_value: \"\"\n",
    );
    let r = run_in(dir.path(), &["check", "--format", "json", "app"]);
    let doc = r.json();
    let fail = findings(&doc, "template-fail");
    assert_eq!(fail.len(), 1, "{doc:#}");
    assert_eq!(fail[0]["severity"], "info");
    let m = fail[0]["message"].as_str().expect("message");
    assert!(
        m.starts_with("ApiKey is required") && m.contains("`ApiKey`"),
        "{m}"
    );
    assert!(
        !m.contains("`Other`"),
        "only the value the fail asks for: {m}"
    );
    assert_eq!(line_col(&fail[0]["range"]["start"]), (2, 7));
    assert_eq!(r.code, 0, "a note does not fail the run");
    // Given, the template renders and its Fuzzfile is checked.
    let doc = run_in(
        dir.path(),
        &["check", "--format", "json", "--set", "ApiKey=k", "app"],
    )
    .json();
    assert!(findings(&doc, "template-fail").is_empty(), "{doc:#}");
    assert_eq!(findings(&doc, "policy-retry-ignored").len(), 1, "{doc:#}");
    // Given as blanks: still asked for.
    let doc = run_in(
        dir.path(),
        &["check", "--format", "json", "--set", "ApiKey=  ", "app"],
    )
    .json();
    assert_eq!(findings(&doc, "template-fail").len(), 1, "{doc:#}");
}

#[test]
fn all_branches_checks_each_choice() {
    let dir = scratch("branches");
    dir.write_file(
        "app/template.yaml",
        "version: v4\njobs:\n  hello:\n    image:\n      uri: {{ if eq .Flavor \"custom\" }}{{ .CustomImage }}{{ else }}docker://alpine{{ end }}\n    command: [echo, hello]\n{{- if .Debug }}\n    policy:\n      retry:\n        attempts: 2\n{{- end }}\n",
    );
    dir.write_file(
        "app/values.yaml",
        "values:\n  - name: Flavor\n    display_name: Which image\n    string_value: stock\n    options_input:\n      options: [stock, custom]\n  - name: CustomImage\n    display_name: Your image\n    string_value: \"\"\n  - name: Debug\n    display_name: Debug\n    bool_value: false\n",
    );
    let plain = run_in(dir.path(), &["check", "--format", "json", "app"]);
    assert_eq!(
        plain.json()["diagnostics"],
        serde_json::json!([]),
        "the defaults are clean"
    );
    assert_eq!(plain.code, 0);
    let r = run_in(
        dir.path(),
        &["check", "--format", "json", "--all-branches", "app"],
    );
    let doc = r.json();
    let uri = findings(&doc, "invalid-value");
    assert_eq!(uri.len(), 1, "{doc:#}");
    let m = uri[0]["message"].as_str().expect("message");
    assert!(m.ends_with("[with `Flavor=custom`]"), "{m}");
    let retry = findings(&doc, "policy-retry-ignored");
    assert_eq!(retry.len(), 1, "{doc:#}");
    assert!(
        retry[0]["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("[with `Debug=true`]")),
        "{doc:#}"
    );
    assert_eq!(line_col(&retry[0]["range"]["start"]), (9, 7));
    assert_eq!(r.code, 1, "a branch's error fails the run");
}

#[test]
fn suppressions_in_the_template_apply() {
    let dir = scratch("suppress");
    dir.write_file(
        "app/template.yaml",
        TEMPLATE.replace(
            "      retry:\n",
            "      # fuzzlint: ignore[policy-retry-ignored] kept on purpose\n      retry:\n",
        ),
    );
    dir.write_file("app/values.yaml", VALUES);
    let doc = run_in(dir.path(), &["check", "--format", "json", "app"]).json();
    assert!(findings(&doc, "policy-retry-ignored").is_empty(), "{doc:#}");
    assert!(findings(&doc, "unused-suppression").is_empty(), "{doc:#}");
    assert_eq!(findings(&doc, "invalid-value").len(), 1, "{doc:#}");
    // The template's own rules: a comment above the line, used (no unused-suppression from
    // the rendered text, where no finding of that rule can be); one that suppresses nothing
    // is still reported.
    dir.write_file(
        "app/template.yaml",
        TEMPLATE
            .replace(
                "    command: [echo, hello]\n",
                "    # fuzzlint: ignore[template-missing-value] read by older values files\n    command: [echo, \"{{ .Greeting }}\"]\n",
            )
            .replace(
                "    policy:\n",
                "    policy: # fuzzlint: ignore[template-fail]\n",
            ),
    );
    let doc = run_in(dir.path(), &["check", "--format", "json", "app"]).json();
    assert!(
        findings(&doc, "template-missing-value").is_empty(),
        "{doc:#}"
    );
    let unused = findings(&doc, "unused-suppression");
    assert_eq!(unused.len(), 1, "{doc:#}");
    assert!(
        unused[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("template-fail")),
        "{doc:#}"
    );
}

#[test]
fn fix_edits_copied_text_only() {
    let dir = app("fix");
    // The retry lines are template text: removed. Nothing printed by an action changes.
    let r = run_in(dir.path(), &["check", "--fix", "--unsafe-fixes", "app"]);
    let fixed = std::fs::read_to_string(dir.path().join("app/template.yaml")).expect("read");
    assert!(
        !fixed.contains("retry"),
        "{fixed}\n{}{}",
        r.stdout,
        r.stderr
    );
    assert!(fixed.contains("uri: {{ .ContainerUri }}"), "{fixed}");
    assert_eq!(
        fixed,
        TEMPLATE.replace(
            "    policy:\n      retry:\n        attempts: 3\n",
            "    policy:\n"
        ),
        "only the retry entry is removed"
    );
    let values = std::fs::read_to_string(dir.path().join("app/values.yaml")).expect("read");
    assert_eq!(values, VALUES, "the values file is never edited");
}

#[test]
fn discovery_takes_templates_and_leaves_values_files_and_other_templates() {
    let dir = app("discover");
    // An AWS SAM template is named template.yaml too: not a Fuzzfile, not checked.
    dir.write_file(
        "sam/template.yaml",
        "AWSTemplateFormatVersion: '2010-09-09'\nResources: {}\n",
    );
    dir.write_file("sam/values.yaml", "values: []\n");
    let doc = run_in(dir.path(), &["check", "--format", "json", "."]).json();
    assert_eq!(doc["files"], 1, "{doc:#}");
    for d in doc["diagnostics"].as_array().expect("diagnostics") {
        assert_eq!(d["file"], "app/template.yaml", "{d:#}");
    }
}

/// The catalog: no error but the reviewed ones (see fuzzfile_check's
/// tests/templates_corpus.rs for the review of every finding).
#[test]
fn corpus_has_no_unreviewed_error() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/templates");
    if !dir.is_dir() {
        fuzz_test_support::system::skip(&format!("no template corpus at {}", dir.display()));
        return;
    }
    let r = run_in(&dir, &["check", "--format", "json", "."]);
    let doc = r.json();
    assert_eq!(doc["files"], 89, "{}", r.stderr);
    let errors: Vec<&Value> = doc["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["severity"] == "error")
        .collect();
    for e in &errors {
        assert_eq!(
            e["file"], "v3.4/ctrliq-ciq-fuzzball-catalog@v3.4__ansys_ls_dyna_desktop.template.yaml",
            "an error not reviewed: {e:#}"
        );
    }
    assert_eq!(errors.len(), 4, "{errors:#?}");
}
