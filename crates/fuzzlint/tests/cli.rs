//! Integration tests of the `fuzzlint` binary: every output format, exit codes, discovery,
//! `--fix` and the rule documentation commands.
//!
//! The binary runs with its working directory set to `tests/fixtures` (or a temporary
//! directory) and relative paths, so that the snapshots hold no machine-specific path.

use fuzz_test_support::{fuzzlint_binary, BinaryRun, NoColorVariable, ScratchDirectory};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn fixture_text(name: &str) -> String {
    std::fs::read_to_string(fixtures().join(name)).expect("read fixture")
}

/// What one run of the binary produced.
type Run = BinaryRun;

/// `fuzzlint ARGS` in `dir`, `NO_COLOR` removed from its environment.
fn run_in(dir: &Path, args: &[&str]) -> Run {
    fuzzlint_binary!().run_in(dir, args, NoColorVariable::Removed)
}

fn run(args: &[&str]) -> Run {
    run_in(&fixtures(), args)
}

/// A fresh directory under the system temporary directory, removed on drop.
fn scratch(tag: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzzlint-cli-test", tag)
}

/// The byte offset of a 1-based line and 1-based character column of `text`.
fn offset_of(text: &str, line: u64, column: u64) -> usize {
    let mut start = 0;
    for _ in 1..line {
        start += text[start..].find('\n').expect("line exists") + 1;
    }
    let rest = &text[start..];
    let mut chars = rest.char_indices().map(|(i, _)| i).chain([rest.len()]);
    start
        + chars
            .nth(usize::try_from(column - 1).expect("small column"))
            .expect("column exists")
}

fn line_col(v: &Value) -> (u64, u64) {
    (
        v["line"].as_u64().expect("line"),
        v["column"].as_u64().expect("column"),
    )
}

/// The text a diagnostic's (line, character column) range covers.
fn covered<'t>(text: &'t str, range: &Value) -> &'t str {
    let (sl, sc) = line_col(&range["start"]);
    let (el, ec) = line_col(&range["end"]);
    &text[offset_of(text, sl, sc)..offset_of(text, el, ec)]
}

// ---------------------------------------------------------------------------------------------
// 1. Every format on bad.fz and good.fz
// ---------------------------------------------------------------------------------------------

#[test]
fn human_format() {
    let bad = run(&["check", "bad.fz", "--format", "human", "--color", "never"]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    assert_eq!(bad.stderr, "");
    assert!(
        !bad.stdout.contains('\u{1b}'),
        "no colour with --color never"
    );
    insta::assert_snapshot!("human_bad", bad.stdout);

    let good = run(&["check", "good.fz", "--format", "human", "--color", "never"]);
    assert_eq!(good.code, 0, "{}", good.stderr);
    insta::assert_snapshot!("human_good", good.stdout);

    let coloured = run(&["check", "bad.fz", "--color", "always"]);
    assert!(coloured.stdout.contains('\u{1b}'), "--color always colours");
}

#[test]
fn json_format() {
    let bad = run(&["check", "bad.fz", "--format", "json"]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    insta::assert_snapshot!("json_bad", bad.stdout);

    let good = run(&["check", "good.fz", "--format", "json"]);
    assert_eq!(good.code, 0, "{}", good.stderr);
    insta::assert_snapshot!("json_good", good.stdout);
}

/// The SARIF output with the parts that change without the output format changing (the tool
/// version, the rule documentation) replaced; `sarif_rules_carry_the_documentation` checks
/// the documentation.
fn sarif_for_snapshot(stdout: &str) -> String {
    let mut doc: Value = serde_json::from_str(stdout).expect("SARIF is JSON");
    let driver = &mut doc["runs"][0]["tool"]["driver"];
    assert_eq!(driver["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(driver["semanticVersion"], env!("CARGO_PKG_VERSION"));
    driver["version"] = "[version]".into();
    driver["semanticVersion"] = "[version]".into();
    for rule in driver["rules"].as_array_mut().expect("rules") {
        let name = rule["name"].as_str().expect("name").to_owned();
        rule["fullDescription"]["markdown"] = format!("[documentation of {name}]").into();
        rule["help"]["markdown"] = format!("[documentation of {name}]").into();
        rule["help"]["text"] = format!("[documentation of {name}, as text]").into();
    }
    let mut s = serde_json::to_string_pretty(&doc).expect("serialise");
    s.push('\n');
    s
}

#[test]
fn sarif_format() {
    let bad = run(&["check", "bad.fz", "--format", "sarif"]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    insta::assert_snapshot!("sarif_bad", sarif_for_snapshot(&bad.stdout));

    let good = run(&["check", "good.fz", "--format", "sarif"]);
    assert_eq!(good.code, 0, "{}", good.stderr);
    insta::assert_snapshot!("sarif_good", sarif_for_snapshot(&good.stdout));
}

#[test]
fn github_format() {
    let bad = run(&["check", "bad.fz", "--format", "github"]);
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    insta::assert_snapshot!("github_bad", bad.stdout);

    let good = run(&["check", "good.fz", "--format", "github"]);
    assert_eq!(good.code, 0, "{}", good.stderr);
    assert_eq!(good.stdout, "", "a clean file gives no annotation");
}

/// Each diagnostic of bad.fz points at the text it is about, in 1-based lines and character
/// columns; the byte offsets of the JSON output agree with them.
#[test]
fn ranges_are_character_columns_on_the_right_text() {
    let text = fixture_text("bad.fz");
    let out = run(&["check", "bad.fz", "--format", "json"]).json();
    let diags = out["diagnostics"].as_array().expect("diagnostics");

    let mut seen = Vec::new();
    let mut bytes_differ = false;
    for d in diags {
        let range = &d["range"];
        let (sl, sc) = line_col(&range["start"]);
        let (el, ec) = line_col(&range["end"]);
        assert!(sl >= 1 && sc >= 1 && el >= 1 && ec >= 1, "1-based: {d}");
        let start = offset_of(&text, sl, sc);
        let end = offset_of(&text, el, ec);
        assert_eq!(d["offsets"]["start"].as_u64(), Some(start as u64), "{d}");
        assert_eq!(d["offsets"]["end"].as_u64(), Some(end as u64), "{d}");
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        if start - line_start + 1 != usize::try_from(sc).expect("small") {
            bytes_differ = true;
        }
        seen.push((
            d["rule"].as_str().expect("rule").to_owned(),
            &text[start..end],
        ));
    }
    assert!(
        bytes_differ,
        "bad.fz must have a diagnostic after non-ASCII text on its line"
    );

    let expected: &[(&str, &str)] = &[
        ("legacy-version", "v1"),
        ("invalid-value", "alpine:3.20"),
        ("unknown-key", "cwdd"),
        ("unknown-reference", "scratch"),
        ("invalid-value", "4 gigs"),
        ("policy-retry-ignored", "retry"),
        ("invalid-value", "2d"),
        ("unknown-key", "taskArray"),
        ("dependency-cycle", "evaluate"),
        ("invalid-value", "\"größer als 4 gigs\""),
        ("invalid-value", "RUNNING"),
    ];
    let seen: Vec<(&str, &str)> = seen.iter().map(|(r, t)| (r.as_str(), *t)).collect();
    assert_eq!(seen, expected);

    // The cycle is reported on line 30, after `zurück zur Évaluation`: character column 54,
    // byte column 56.
    let cycle = diags
        .iter()
        .find(|d| d["rule"] == "dependency-cycle")
        .expect("cycle");
    assert_eq!(line_col(&cycle["range"]["start"]), (30, 54));
    assert_eq!(line_col(&cycle["range"]["end"]), (30, 62));
    let human = run(&["check", "bad.fz", "--color", "never"]);
    assert!(human.stdout.contains("bad.fz:30:54 "), "{}", human.stdout);

    // Labels too: `status: RUNNING` on a job points back at the job's name.
    let running = diags
        .iter()
        .find(|d| d["message"].as_str().is_some_and(|m| m.contains("RUNNING")))
        .expect("RUNNING diagnostic");
    let labels = running["labels"].as_array().expect("labels");
    assert_eq!(labels.len(), 1);
    assert_eq!(covered(&text, &labels[0]["range"]), "train");
    assert_eq!(line_col(&labels[0]["range"]["start"]), (23, 3));
}

/// A label above the primary range is shown in the same code frame, under one header that
/// names the primary position.
#[test]
fn human_frames_a_label_above_the_primary_range_once() {
    let human = run(&["check", "bad.fz", "--color", "never"]);
    let report = human
        .stdout
        .split("\n[")
        .find(|r| r.contains("only services are ever RUNNING"))
        .expect("RUNNING report");
    let headers: Vec<&str> = report.lines().filter(|l| l.contains("[ bad.fz:")).collect();
    assert_eq!(headers.len(), 1, "{report}");
    assert!(headers[0].contains("[ bad.fz:37:17 ]"), "{report}");
    let label_line = report.find(" 23 │   train:").expect("label line");
    let primary_line = report
        .find(" 37 │         status: RUNNING")
        .expect("primary line");
    assert!(label_line < primary_line, "{report}");
}

// ---------------------------------------------------------------------------------------------
// 2. JSON shape
// ---------------------------------------------------------------------------------------------

fn assert_range_shape(r: &Value, what: &str) {
    for end in ["start", "end"] {
        let pos = r[end].as_object().unwrap_or_else(|| panic!("{what}.{end}"));
        assert_eq!(pos.len(), 2, "{what}.{end}: {pos:?}");
        for k in ["line", "column"] {
            let n = pos[k]
                .as_u64()
                .unwrap_or_else(|| panic!("{what}.{end}.{k}"));
            assert!(n >= 1, "{what}.{end}.{k} is 1-based");
        }
    }
    let (sl, sc) = line_col(&r["start"]);
    let (el, ec) = line_col(&r["end"]);
    assert!((sl, sc) <= (el, ec), "{what}: start after end");
}

fn assert_json_shape(doc: &Value, files: u64) {
    let top = doc.as_object().expect("an object");
    let mut keys: Vec<&str> = top.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["diagnostics", "files", "version"]);
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["files"].as_u64(), Some(files));
    for d in doc["diagnostics"].as_array().expect("diagnostics array") {
        for k in ["file", "rule", "code", "message"] {
            assert!(
                d[k].as_str().is_some_and(|s| !s.is_empty()),
                "`{k}` is a non-empty string: {d}"
            );
        }
        let code = d["code"].as_str().expect("code");
        assert!(
            code.len() == 5
                && code.starts_with("FZ")
                && code[2..].bytes().all(|b| b.is_ascii_digit()),
            "code {code}"
        );
        assert!(
            ["error", "warning", "info"].contains(&d["severity"].as_str().expect("severity")),
            "{d}"
        );
        assert_range_shape(&d["range"], "range");
        assert!(d["help"].is_null() || d["help"].is_string(), "{d}");
        for l in d["labels"].as_array().expect("labels array") {
            assert!(l["message"].is_string(), "{l}");
            assert_range_shape(&l["range"], "label range");
        }
        match &d["fix"] {
            Value::Null => {}
            Value::Object(fix) => {
                assert!(fix["message"].is_string(), "{d}");
                let edits = fix["edits"].as_array().expect("edits");
                assert!(!edits.is_empty(), "a fix has edits: {d}");
                for e in edits {
                    assert_range_shape(&e["range"], "edit range");
                    assert!(e["replacement"].is_string(), "{e}");
                    let (s, t) = (&e["offsets"]["start"], &e["offsets"]["end"]);
                    assert!(s.as_u64().expect("start") <= t.as_u64().expect("end"));
                }
            }
            other => panic!("fix is null or an object, not {other}"),
        }
    }
}

#[test]
fn json_shape() {
    let bad = run(&["check", "bad.fz", "--format", "json"]).json();
    assert_json_shape(&bad, 1);
    let diags = bad["diagnostics"].as_array().expect("diagnostics");
    assert!(diags.iter().all(|d| d["file"] == "bad.fz"));
    for sev in ["error", "warning", "info"] {
        assert!(
            diags.iter().any(|d| d["severity"] == sev),
            "a {sev} in bad.fz"
        );
    }
    assert!(diags.iter().any(|d| d["fix"].is_null()));
    assert!(diags.iter().any(|d| d["fix"].is_object()));

    let good = run(&["check", "good.fz", "--format", "json"]).json();
    assert_json_shape(&good, 1);
    assert_eq!(good["diagnostics"], Value::Array(vec![]));

    let both = run(&["check", "good.fz", "bad.fz", "--format", "json"]).json();
    assert_json_shape(&both, 2);
    assert_eq!(both["diagnostics"], bad["diagnostics"]);
}

// ---------------------------------------------------------------------------------------------
// 3. SARIF
// ---------------------------------------------------------------------------------------------

fn sarif_validator() -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemas/sarif-2.1.0.json");
    let schema: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read schema")).expect("JSON");
    jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

fn schema_errors(validator: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn sarif_is_valid_against_the_schema() {
    let validator = sarif_validator();
    for args in [
        &["check", "bad.fz", "--format", "sarif"][..],
        &["check", "good.fz", "--format", "sarif"],
        &["check", "bad.fz", "good.fz", "--format", "sarif"],
    ] {
        let doc = run(args).json();
        let errors = schema_errors(&validator, &doc);
        assert!(errors.is_empty(), "{args:?}:\n{}", errors.join("\n"));
    }
}

/// The validator catches broken SARIF, so the test above can fail.
#[test]
fn sarif_schema_rejects_broken_output() {
    let validator = sarif_validator();
    let good = run(&["check", "bad.fz", "--format", "sarif"]).json();
    assert!(schema_errors(&validator, &good).is_empty());

    type Breakage = (&'static str, fn(&mut Value));
    let breakages: [Breakage; 5] = [
        ("level `fatal`", |d| {
            d["runs"][0]["results"][0]["level"] = "fatal".into()
        }),
        ("region column 0", |d| {
            d["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
                ["startColumn"] = 0.into()
        }),
        ("no driver name", |d| {
            d["runs"][0]["tool"]["driver"]
                .as_object_mut()
                .expect("driver")
                .remove("name");
        }),
        ("an unknown property", |d| {
            d["runs"][0]["results"][0]["severity"] = "error".into()
        }),
        ("version 2.0", |d| d["version"] = "2.0.0".into()),
    ];
    for (what, mut_fn) in breakages {
        let mut broken = good.clone();
        mut_fn(&mut broken);
        assert!(
            !schema_errors(&validator, &broken).is_empty(),
            "the schema accepts SARIF with {what}"
        );
    }
}

/// SARIF says the same as JSON: the same positions (code points), rules that resolve.
#[test]
fn sarif_agrees_with_json() {
    let sarif = run(&["check", "bad.fz", "--format", "sarif"]).json();
    let json = run(&["check", "bad.fz", "--format", "json"]).json();
    let run0 = &sarif["runs"][0];
    assert_eq!(run0["columnKind"], "unicodeCodePoints");
    assert_eq!(run0["tool"]["driver"]["name"], "fuzzlint");
    let rules = run0["tool"]["driver"]["rules"].as_array().expect("rules");
    assert_eq!(rules.len(), fuzzfile_check::Rule::ALL.len());
    assert_eq!(
        run0["artifacts"],
        serde_json::json!([{ "location": { "uri": "bad.fz" } }])
    );
    let results = run0["results"].as_array().expect("results");
    let diags = json["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(results.len(), diags.len());
    for (r, d) in results.iter().zip(diags) {
        let index = usize::try_from(r["ruleIndex"].as_u64().expect("ruleIndex")).expect("small");
        assert_eq!(rules[index]["id"], r["ruleId"]);
        assert_eq!(r["ruleId"], d["code"]);
        assert_eq!(rules[index]["name"], d["rule"]);
        let level = match d["severity"].as_str().expect("severity") {
            "error" => "error",
            "warning" => "warning",
            _ => "note",
        };
        assert_eq!(r["level"], level);
        assert!(r["message"]["text"]
            .as_str()
            .expect("text")
            .starts_with(d["message"].as_str().expect("message")));
        let loc = &r["locations"][0]["physicalLocation"];
        assert_eq!(loc["artifactLocation"]["uri"], d["file"]);
        let region = &loc["region"];
        let (s, e) = (&d["range"]["start"], &d["range"]["end"]);
        assert_eq!(region["startLine"], s["line"]);
        assert_eq!(region["startColumn"], s["column"]);
        assert_eq!(region["endLine"], e["line"]);
        assert_eq!(region["endColumn"], e["column"]);
        assert_eq!(r.get("fixes").is_some(), d["fix"].is_object(), "{r}");
    }
}

#[test]
fn sarif_rules_carry_the_documentation() {
    let sarif = run(&["check", "good.fz", "--format", "sarif"]).json();
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .clone();
    for (rule, r) in fuzzfile_check::Rule::ALL.iter().zip(&rules) {
        assert_eq!(r["id"], rule.code());
        assert_eq!(r["name"], rule.name());
        assert_eq!(
            r["fullDescription"]["markdown"],
            fuzzfile_check::rules::documentation(*rule)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 4. GitHub workflow commands
// ---------------------------------------------------------------------------------------------

/// One parsed `::level prop=v,...::message` line.
struct Annotation {
    level: String,
    props: Vec<(String, String)>,
    message: String,
}

fn parse_annotation(line: &str) -> Annotation {
    let rest = line
        .strip_prefix("::")
        .unwrap_or_else(|| panic!("starts with `::`: {line}"));
    let (head, message) = rest
        .split_once("::")
        .unwrap_or_else(|| panic!("has a second `::`: {line}"));
    let (level, props) = head.split_once(' ').expect("level and properties");
    let props = props
        .split(',')
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or_else(|| panic!("k=v: {p}"));
            (k.to_owned(), v.to_owned())
        })
        .collect();
    Annotation {
        level: level.to_owned(),
        props,
        message: message.to_owned(),
    }
}

#[test]
fn github_lines_are_workflow_commands() {
    let gh = run(&["check", "bad.fz", "--format", "github"]);
    let json = run(&["check", "bad.fz", "--format", "json"]).json();
    let diags = json["diagnostics"].as_array().expect("diagnostics");
    let lines: Vec<&str> = gh.stdout.lines().collect();
    assert!(gh.stdout.ends_with('\n'));
    assert_eq!(lines.len(), diags.len(), "one line per diagnostic");
    for (line, d) in lines.iter().zip(diags) {
        let a = parse_annotation(line);
        let level = match d["severity"].as_str().expect("severity") {
            "error" => "error",
            "warning" => "warning",
            _ => "notice",
        };
        assert_eq!(a.level, level, "{line}");
        let keys: Vec<&str> = a.props.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            ["file", "line", "col", "endLine", "endColumn", "title"],
            "{line}"
        );
        let prop = |k: &str| {
            a.props
                .iter()
                .find(|(p, _)| p == k)
                .expect("prop")
                .1
                .clone()
        };
        let (s, e) = (&d["range"]["start"], &d["range"]["end"]);
        assert_eq!(prop("file"), "bad.fz");
        assert_eq!(prop("line"), s["line"].to_string());
        assert_eq!(prop("col"), s["column"].to_string());
        assert_eq!(prop("endLine"), e["line"].to_string());
        assert_eq!(prop("endColumn"), e["column"].to_string());
        assert_eq!(
            prop("title"),
            format!(
                "{} {}",
                d["code"].as_str().expect("code"),
                d["rule"].as_str().expect("rule")
            )
        );
        assert!(prop("title").starts_with("FZ"));
        // The message starts with the location and the rule (GitHub shows only the first
        // annotations of a step; the log keeps every line); a help text follows after an
        // escaped newline.
        let mut expected = format!(
            "bad.fz:{}:{}: {} {} {}",
            s["line"],
            s["column"],
            d["code"].as_str().expect("code"),
            d["rule"].as_str().expect("rule"),
            d["message"].as_str().expect("message")
        );
        if let Some(h) = d["help"].as_str() {
            expected.push_str("%0A");
            expected.push_str(h);
        }
        assert_eq!(a.message, expected.replace('\n', "%0A"), "{line}");
        assert!(!a.message.contains('\r'));
    }
    assert!(lines.iter().any(|l| l.contains("%0A")));
    assert_eq!(gh.code, 1);
}

#[test]
fn github_escapes_properties_and_data() {
    // A file name with `,` and `:` must not break the property list.
    let dir = scratch("github-escape");
    dir.write_file("a,b:c.fz", fixture_text("bad.fz"));
    let gh = run_in(dir.path(), &["check", "a,b:c.fz", "--format", "github"]);
    assert_eq!(gh.code, 1, "{}", gh.stderr);
    for line in gh.stdout.lines() {
        assert!(line.contains(" file=a%2Cb%3Ac.fz,line="), "{line}");
        assert_eq!(parse_annotation(line).props[0].1, "a%2Cb%3Ac.fz");
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Exit codes
// ---------------------------------------------------------------------------------------------

const ONLY_WARNINGS: &str = "version: v4
jobs:
  download:
    image: {uri: docker://alpine:3.20}
    command: [wget, https://example.org/data.tar]
    policy:
      timeout:
        execute: 2d
";

#[test]
fn exit_codes() {
    assert_eq!(run(&["check", "good.fz"]).code, 0);
    assert_eq!(run(&["check", "bad.fz"]).code, 1);
    assert_eq!(run(&["check", "bad.fz", "--fail-on", "never"]).code, 0);
    assert_eq!(run(&["check", "good.fz", "--fail-on", "info"]).code, 0);

    let dir = scratch("warnings");
    dir.write_file("warn.fz", ONLY_WARNINGS);
    let json = run_in(dir.path(), &["check", "warn.fz", "--format", "json"]);
    let sevs: Vec<Value> = json.json()["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["severity"].clone())
        .collect();
    assert!(
        !sevs.is_empty() && sevs.iter().all(|s| s == "warning"),
        "{sevs:?}"
    );
    assert_eq!(json.code, 0, "warnings do not fail by default");
    assert_eq!(
        run_in(dir.path(), &["check", "warn.fz", "--fail-on", "warning"]).code,
        1
    );
    assert_eq!(
        run_in(dir.path(), &["check", "warn.fz", "--fail-on", "info"]).code,
        1
    );
    assert_eq!(
        run_in(dir.path(), &["check", "warn.fz", "--fail-on", "error"]).code,
        0
    );
    assert_eq!(
        run_in(dir.path(), &["check", "warn.fz", "--fail-on", "never"]).code,
        0
    );
}

#[test]
fn missing_path_is_a_usage_error() {
    let r = run(&["check", "does-not-exist.fz"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("does-not-exist.fz"), "{}", r.stderr);
    assert!(
        r.stderr.contains("no such file or directory"),
        "{}",
        r.stderr
    );

    // Also when another, valid path is given.
    let r = run(&["check", "good.fz", "nope/"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("nope/"), "{}", r.stderr);
}

#[test]
fn directory_without_fuzzfiles_is_a_usage_error() {
    let dir = scratch("empty");
    dir.write_file("README.md", "# nothing here\n");
    dir.write_file(
        "ci.yml",
        "name: CI\non: push\njobs:\n  a:\n    runs-on: x\n",
    );
    let r = run_in(dir.path(), &["check", "."]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(r.stderr.contains("no Fuzzfile found"), "{}", r.stderr);
    // The default path is the current directory.
    let r = run_in(dir.path(), &["check"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no Fuzzfile found"), "{}", r.stderr);
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let r = run(&["check", "--no-such-flag", "good.fz"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--no-such-flag"), "{}", r.stderr);
    assert_eq!(run(&["check", "good.fz", "--format", "xml"]).code, 2);
    assert_eq!(run(&["check", "good.fz", "--fail-on", "sometimes"]).code, 2);
    assert_eq!(run(&["frobnicate"]).code, 2);
    assert_eq!(run(&[]).code, 2);
    // --help and --version are not errors.
    let help = run(&["--help"]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("check"));
    let version = run(&["--version"]);
    assert_eq!(version.code, 0);
    assert!(version.stdout.contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn invalid_utf8_is_a_yaml_syntax_diagnostic() {
    let dir = scratch("utf8");
    let mut bytes = b"version: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n".to_vec();
    bytes.extend_from_slice(b"    command: [echo, \"caf\xe9\"]\n");
    dir.write_file("latin1.fz", &bytes);

    let json = run_in(dir.path(), &["check", "latin1.fz", "--format", "json"]);
    assert_eq!(json.code, 1, "{}", json.stderr);
    let doc = json.json();
    assert_json_shape(&doc, 1);
    let diags = doc["diagnostics"].as_array().expect("diagnostics");
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert_eq!(d["rule"], "yaml-syntax");
    assert_eq!(d["severity"], "error");
    assert!(
        d["message"].as_str().expect("message").contains("UTF-8"),
        "{d}"
    );
    // `    command: [echo, "caf` is 24 characters: the bad byte is at line 5, column 25.
    assert_eq!(line_col(&d["range"]["start"]), (5, 25));
    assert_eq!(line_col(&d["range"]["end"]), (5, 26));

    let human = run_in(dir.path(), &["check", "latin1.fz", "--color", "never"]);
    assert_eq!(human.code, 1);
    assert!(human.stdout.contains("latin1.fz:5:25"), "{}", human.stdout);
    assert!(human.stdout.contains("yaml-syntax"), "{}", human.stdout);
    for format in ["sarif", "github"] {
        let r = run_in(dir.path(), &["check", "latin1.fz", "--format", format]);
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
    }
    let gh = run_in(dir.path(), &["check", "latin1.fz", "--format", "github"]);
    assert!(
        gh.stdout.contains("line=5,col=25,endLine=5,endColumn=26"),
        "{}",
        gh.stdout
    );
}

// ---------------------------------------------------------------------------------------------
// 6. Discovery
// ---------------------------------------------------------------------------------------------

const WORKFLOW: &str = "name: CI
on: [push]
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: cargo test
";

#[test]
fn discovery_honours_gitignore_and_fuzzfile_detection() {
    let dir = scratch("discover");
    dir.write_file("a.fz", fixture_text("good.fz"));
    dir.write_file("b.yaml", fixture_text("bad.fz"));
    dir.write_file("c.yml", WORKFLOW);
    dir.write_file("ignored/d.fz", fixture_text("bad.fz"));
    dir.write_file(".gitignore", "ignored/\n");
    dir.write_file("notes.txt", "version: v4\njobs:\n");

    let r = run_in(dir.path(), &["check", "--format", "json"]);
    let doc = r.json();
    assert_json_shape(&doc, 2);
    let mut files: Vec<&str> = doc["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["file"].as_str().expect("file"))
        .collect();
    files.dedup();
    assert_eq!(files, ["b.yaml"], "a.fz is clean, b.yaml is bad.fz");
    assert_eq!(r.code, 1);

    // The same through an explicit directory argument, and from outside it.
    let doc = run_in(dir.path(), &["check", ".", "--format", "json"]).json();
    assert_eq!(doc["files"], 2);
    let parent = dir.path().parent().expect("parent");
    let name = dir
        .path()
        .file_name()
        .expect("name")
        .to_str()
        .expect("UTF-8");
    let doc = run_in(parent, &["check", name, "--format", "json"]).json();
    assert_eq!(doc["files"], 2);
    assert!(doc["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .all(|d| d["file"] == format!("{name}/b.yaml")));

    // An explicit file is checked even where a walk would skip it (.gitignore); a named YAML
    // file that is not a Fuzzfile (the workflow) is skipped, unless `--no-skip`.
    let doc = run_in(
        dir.path(),
        &["check", "c.yml", "ignored/d.fz", "--format", "json"],
    )
    .json();
    assert_eq!(doc["files"], 1);
    let doc = run_in(
        dir.path(),
        &[
            "check",
            "c.yml",
            "ignored/d.fz",
            "--format",
            "json",
            "--no-skip",
        ],
    )
    .json();
    assert_eq!(doc["files"], 2);
}

/// A file named both explicitly and through its directory is checked once.
#[test]
fn a_file_given_twice_is_checked_once() {
    let doc = run(&["check", ".", "bad.fz", "--format", "json"]).json();
    let files = std::fs::read_dir(fixtures())
        .expect("read fixtures")
        .filter(|e| {
            e.as_ref()
                .expect("entry")
                .path()
                .extension()
                .is_some_and(|x| x == "fz")
        })
        .count();
    assert_eq!(doc["files"].as_u64(), Some(files as u64));
    let doc2 = run(&["check", "bad.fz", "./bad.fz", "--format", "json"]).json();
    assert_eq!(doc2["files"], 1);
    assert_eq!(
        doc2["diagnostics"],
        run(&["check", "bad.fz", "--format", "json"]).json()["diagnostics"]
    );
}

// ---------------------------------------------------------------------------------------------
// 7. --fix
// ---------------------------------------------------------------------------------------------

/// The 1-based lines that the fix edits of `doc` touch.
fn lines_touched_by_fixes(doc: &Value) -> Vec<u64> {
    let mut lines = Vec::new();
    for d in doc["diagnostics"].as_array().expect("diagnostics") {
        let Some(edits) = d["fix"]["edits"].as_array() else {
            continue;
        };
        for e in edits {
            let (sl, _) = line_col(&e["range"]["start"]);
            let (el, ec) = line_col(&e["range"]["end"]);
            // An edit that ends at the start of a line does not touch that line.
            let last = if ec == 1 && el > sl { el - 1 } else { el };
            lines.extend(sl..=last);
        }
    }
    lines.sort_unstable();
    lines.dedup();
    lines
}

#[test]
fn fix_rewrites_only_what_it_fixes_and_is_idempotent() {
    let original = fixture_text("bad.fz");
    let dir = scratch("fix");
    let file = dir.write_file("work.fz", &original);

    let before = run_in(dir.path(), &["check", "work.fz", "--format", "json"]).json();
    let fixable: Vec<(String, String)> = before["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["fix"].is_object())
        .map(|d| {
            (
                d["rule"].as_str().expect("rule").to_owned(),
                d["message"].as_str().expect("message").to_owned(),
            )
        })
        .collect();
    assert!(fixable.len() >= 4, "{fixable:?}");
    let touched = lines_touched_by_fixes(&before);

    let fixed_run = run_in(
        dir.path(),
        &[
            "check",
            "--fix",
            "--unsafe-fixes",
            "work.fz",
            "--color",
            "never",
        ],
    );
    assert_eq!(fixed_run.stderr, "fixed 1 file\n");
    assert_eq!(fixed_run.code, 1, "errors without a fix remain");
    let fixed = std::fs::read_to_string(&file).expect("read fixed");
    assert_ne!(fixed, original);

    // Nothing fixable, and none of the fixed findings, is left.
    let after = run_in(dir.path(), &["check", "work.fz", "--format", "json"]).json();
    let after_diags = after["diagnostics"].as_array().expect("diagnostics");
    assert!(
        after_diags.iter().all(|d| d["fix"].is_null()),
        "{after_diags:?}"
    );
    for (rule, message) in &fixable {
        assert!(
            !after_diags
                .iter()
                .any(|d| d["rule"] == rule.as_str() && d["message"] == message.as_str()),
            "`{rule}: {message}` survives --fix"
        );
    }
    // The findings without a fix are still there.
    let unfixable = before["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| d["fix"].is_null())
        .count();
    assert_eq!(after_diags.len(), unfixable, "{after_diags:?}");

    // Lines that no edit touched are kept byte for byte, in order.
    let untouched: Vec<&str> = original
        .split_inclusive('\n')
        .enumerate()
        .filter(|(i, _)| !touched.contains(&(*i as u64 + 1)))
        .map(|(_, l)| l)
        .collect();
    let fixed_lines: Vec<&str> = fixed.split_inclusive('\n').collect();
    let mut it = fixed_lines.iter();
    for line in &untouched {
        assert!(
            it.any(|f| f == line),
            "untouched line {line:?} is missing or reordered in:\n{fixed}"
        );
    }
    assert!(fixed_lines.len() >= untouched.len());
    assert!(fixed_lines.len() - untouched.len() <= touched.len());

    insta::assert_snapshot!("fixed_bad", fixed);

    // A second run changes nothing and says nothing about fixing.
    let again = run_in(
        dir.path(),
        &[
            "check",
            "--fix",
            "--unsafe-fixes",
            "work.fz",
            "--color",
            "never",
        ],
    );
    assert_eq!(again.stderr, "");
    assert_eq!(again.code, 1);
    assert_eq!(std::fs::read_to_string(&file).expect("read"), fixed);

    // --fix with a machine format keeps stdout machine-readable and reports the fixed file.
    let dir2 = scratch("fix-json");
    dir2.write_file("work.fz", &original);
    let r = run_in(
        dir2.path(),
        &[
            "check",
            "--fix",
            "--unsafe-fixes",
            "work.fz",
            "--format",
            "json",
        ],
    );
    assert_eq!(r.stderr, "");
    assert_eq!(r.json()["diagnostics"], after["diagnostics"]);
}

#[test]
fn fix_leaves_a_clean_file_alone() {
    let dir = scratch("fix-clean");
    let file = dir.write_file("good.fz", fixture_text("good.fz"));
    let r = run_in(dir.path(), &["check", "--fix", "good.fz"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stderr, "");
    assert_eq!(
        std::fs::read_to_string(file).expect("read"),
        fixture_text("good.fz")
    );
}

/// A file that cannot be read does not make `--fix` write another file's text elsewhere.
#[cfg(target_os = "linux")]
#[test]
fn fix_with_an_unreadable_file_fixes_the_right_file() {
    let dir = scratch("fix-unreadable");
    let file = dir.write_file("work.fz", fixture_text("bad.fz"));
    // /proc/self/mem is a regular file whose read fails; it sorts before the temp dir.
    let file_arg = file.to_str().expect("UTF-8 path");
    let r = run_in(dir.path(), &["check", "--fix", "/proc/self/mem", file_arg]);
    assert_eq!(r.code, 2, "a read error exits 2");
    assert!(
        r.stderr.contains("cannot read /proc/self/mem"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("cannot write"), "{}", r.stderr);
    let fixed = std::fs::read_to_string(&file).expect("read");
    assert_ne!(fixed, fixture_text("bad.fz"), "work.fz was fixed");
    assert!(r.stdout.contains(file_arg), "{}", r.stdout);
}

// ---------------------------------------------------------------------------------------------
// 8. Rule documentation
// ---------------------------------------------------------------------------------------------

#[test]
fn rules_lists_every_rule() {
    let r = run(&["rules"]);
    assert_eq!(r.code, 0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), fuzzfile_check::Rule::ALL.len());
    for (rule, line) in fuzzfile_check::Rule::ALL.iter().zip(&lines) {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[0], rule.code(), "{line}");
        assert_eq!(words[1], rule.name(), "{line}");
        assert_eq!(words[2], rule.default_severity().to_string(), "{line}");
        assert!(line.ends_with(rule.summary()), "{line}");
    }
}

#[test]
fn rule_prints_the_documentation() {
    let r = run(&["rule", "unknown-key"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout.starts_with("# unknown-key (FZ010)\n"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("## What it does"), "{}", r.stdout);
    for rule in fuzzfile_check::Rule::ALL {
        let by_name = run(&["rule", rule.name()]);
        assert_eq!(by_name.code, 0, "{}", rule.name());
        assert!(by_name
            .stdout
            .contains(&fuzzfile_check::rules::documentation(*rule)));
        for heading in [
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "## Use instead",
        ] {
            assert!(
                by_name.stdout.contains(heading),
                "{}: {heading}",
                rule.name()
            );
        }
        let by_code = run(&["rule", rule.code()]);
        assert_eq!(by_code.code, 0, "{}", rule.code());
        assert_eq!(by_code.stdout, by_name.stdout);
    }
}

#[test]
fn unknown_rule_exits_2() {
    let r = run(&["rule", "nope"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.stdout, "");
    assert!(r.stderr.contains("`nope`"), "{}", r.stderr);
    let r = run(&["rule", "unknwn-key"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("did you mean `unknown-key`?"),
        "{}",
        r.stderr
    );
}

#[test]
fn fix_keeps_a_bom_and_crlf_line_ends() {
    let dir = scratch("fix-crlf");
    let original = "\u{feff}version: v4\r\njobs:\r\n  a:\r\n    image: {uri: docker://alpine}\r\n    command: [echo]\r\n    policy:\r\n      retry:\r\n        attempts: 3\r\n      timeout:\r\n        execute: 2d\r\n    taskArray: {start: 1, end: 2}\r\n";
    let file = dir.write_file("crlf.fz", original);
    let r = run_in(
        dir.path(),
        &[
            "check",
            "--fix",
            "--unsafe-fixes",
            "crlf.fz",
            "--format",
            "json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert_eq!(r.json()["diagnostics"], Value::Array(vec![]));
    let expected = "\u{feff}version: v4\r\njobs:\r\n  a:\r\n    image: {uri: docker://alpine}\r\n    command: [echo]\r\n    policy:\r\n      timeout:\r\n        execute: 48h\r\n    task-array: {start: 1, end: 2}\r\n";
    assert_eq!(std::fs::read_to_string(file).expect("read"), expected);
}

// ---------------------------------------------------------------------------------------------
// Correctness regressions: line breaks, fixes, empty files
// ---------------------------------------------------------------------------------------------

/// Regression: a lone CR is a line break (YAML 1.2, LSP). Lines and columns in every format
/// count it as one, for model findings and for syntax errors alike.
#[test]
fn lone_cr_line_breaks_give_the_right_line_and_column() {
    let dir = scratch("lone-cr");
    let text = "version: v4\rjobs:\r  a:\r    image: {uri: docker://x:1}\r    command: [x]\r    bogus: 1\r";
    dir.write_file("cr.fz", text);
    dir.write_file("cr-syntax.fz", "version: v4\rjobs:\r  a: [\r");
    let r = run_in(
        dir.path(),
        &["check", "--format", "json", "cr.fz", "cr-syntax.fz"],
    );
    let doc = r.json();
    let diags = doc["diagnostics"].as_array().expect("diagnostics");
    let find = |rule: &str| {
        diags
            .iter()
            .find(|d| d["rule"] == rule)
            .unwrap_or_else(|| panic!("no {rule} in {diags:?}"))
    };
    let unknown = find("unknown-key");
    assert_eq!(line_col(&unknown["range"]["start"]), (6, 5));
    assert_eq!(line_col(&unknown["range"]["end"]), (6, 10));
    let syntax = find("yaml-syntax");
    assert_eq!(line_col(&syntax["range"]["start"]), (3, 6), "{syntax}");
    let r = run_in(dir.path(), &["check", "--format", "sarif", "cr.fz"]);
    let region = &r.json()["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 6, "{region}");
    assert_eq!(region["startColumn"], 5, "{region}");
    let r = run_in(dir.path(), &["check", "--color", "never", "cr.fz"]);
    assert!(r.stdout.contains("cr.fz:6:5"), "{}", r.stdout);
}

/// Regression: `--fix` never breaks a file or changes its meaning. An indented root keeps its
/// indentation when `version` is added; a probe key one level too high is not renamed to a
/// key that takes a mapping; a list under a key that is no typo of `depends-on` stays; a
/// rename that would add an error (a self-dependency) is not applied.
#[test]
fn fix_never_breaks_a_file_or_changes_its_meaning() {
    let dir = scratch("fix-meaning");
    let indented = "  jobs:\n    a:\n      image: {uri: docker://x:1}\n      command: [x]\n";
    let probe = "version: v4\nservices:\n  s:\n    image: {uri: docker://x:1}\n    command: [x]\n    initial-delay-seconds: 15\n";
    let unknown = "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [x]\n    commtimeout:nd: [a, b]\n";
    let cycle = "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [x]\n    dependson: [a]\n";
    dir.write_file("indented.fz", indented);
    dir.write_file("probe.fz", probe);
    dir.write_file("unknown.fz", unknown);
    dir.write_file("cycle.fz", cycle);
    let r = run_in(
        dir.path(),
        &[
            "check",
            "--fix",
            "--unsafe-fixes",
            "indented.fz",
            "probe.fz",
            "unknown.fz",
            "cycle.fz",
        ],
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).expect("read");
    assert_eq!(read("indented.fz"), format!("  version: v4\n{indented}"));
    assert_eq!(read("probe.fz"), probe);
    assert_eq!(read("unknown.fz"), unknown);
    assert_eq!(read("cycle.fz"), cycle);
    // The fixed file has no finding at all: it parses and is a complete Fuzzfile.
    let r = run_in(dir.path(), &["check", "--format", "json", "indented.fz"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    // No misleading suggestion either.
    let r = run_in(
        dir.path(),
        &["check", "--format", "json", "probe.fz", "unknown.fz"],
    );
    for d in r.json()["diagnostics"].as_array().expect("diagnostics") {
        assert!(d["fix"].is_null(), "{d}");
        let help = d["help"].as_str().unwrap_or("");
        assert!(!help.contains("did you mean"), "{help}");
    }
}

/// Regression: invalid UTF-8 in a TOML file (`fuzzlint.toml`, a cluster profile) is reported
/// with the file, line and column of the bad byte.
#[test]
fn invalid_utf8_in_toml_has_a_position() {
    let dir = scratch("toml-utf8");
    dir.write_file(
        "a.fz",
        "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [x]\n",
    );
    dir.write_file("p.toml", b"name = \"x\"\n# \xff\n".as_slice());
    let r = run_in(dir.path(), &["check", "--cluster", "p.toml", "a.fz"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("p.toml"), "{}", r.stderr);
    assert!(r.stderr.contains("line 2, column 3"), "{}", r.stderr);
    dir.write_file(
        "fuzzlint.toml",
        b"fail-on = \"error\"\n# caf\xe9\n".as_slice(),
    );
    let r = run_in(dir.path(), &["check", "a.fz"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("fuzzlint.toml"), "{}", r.stderr);
    assert!(r.stderr.contains("line 2, column 6"), "{}", r.stderr);
}
