//! Every `--output-format` on one input set (tests/format_inputs: a file with an error, a
//! warning, an info and fixes; a file whose findings quote Unicode, control characters, a
//! bidirectional override and XML's special characters; a file without findings), as
//! snapshots, plus what each format promises: the concise and JSON Lines formats say what the
//! JSON says, the SARIF is valid SARIF 2.1.0 with rule help, the GitLab report is valid for
//! GitLab's own schema with fingerprints that survive lines added above, the JUnit is XML an
//! XML parser reads back, and `--output-file` writes a report whole or not at all.

use fuzz_test_support::{fuzzlint_binary, BinaryRun, NoColorVariable, ScratchDirectory};
use serde_json::Value;
use std::path::{Path, PathBuf};

const INPUTS: [&str; 3] = ["findings.fz", "hostile.fz", "clean.fz"];

const FORMATS: [&str; 8] = [
    "human",
    "concise",
    "json",
    "json-lines",
    "sarif",
    "github",
    "gitlab",
    "junit",
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/format_inputs")
}

fn run_in(dir: &Path, args: &[&str]) -> BinaryRun {
    fuzzlint_binary!().run_in(dir, args, NoColorVariable::Removed)
}

/// `fuzzlint check <the input set> --output-format FORMAT` in the fixtures directory.
fn report(format: &str) -> BinaryRun {
    let mut args = vec!["check"];
    args.extend(INPUTS);
    args.extend(["--output-format", format]);
    let r = run_in(&fixtures(), &args);
    assert_eq!(r.code, 1, "{format}: exit 1 for the errors\n{}", r.stderr);
    r
}

fn json_diagnostics() -> Vec<Value> {
    report("json").json()["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .clone()
}

/// The SARIF with what changes without the format changing (the version) replaced and each
/// rule cut to its id and help link (`sarif_is_valid_and_its_rules_link_their_documentation`
/// checks the rules' documentation, tests/cli.rs's SARIF snapshot the rest of a rule).
fn sarif_for_snapshot(doc: &Value) -> String {
    let mut doc = doc.clone();
    let driver = &mut doc["runs"][0]["tool"]["driver"];
    driver["version"] = "[version]".into();
    driver["semanticVersion"] = "[version]".into();
    for rule in driver["rules"].as_array_mut().expect("rules") {
        *rule = serde_json::json!({ "id": rule["id"], "helpUri": rule["helpUri"] });
    }
    // Written back with the escapes fuzzlint writes (serde_json would write U+202E raw).
    let text = serde_json::to_string_pretty(&doc).expect("serialise");
    text.chars()
        .map(|c| match c {
            c if c > '\u{7f}' && fuzzfile_check::render::is_unprintable(c) => {
                format!("\\u{:04x}", c as u32)
            }
            c => c.to_string(),
        })
        .collect::<String>()
        + "\n"
}

#[test]
fn every_format_on_the_same_input_set() {
    for format in FORMATS {
        let r = report(format);
        let shown = if format == "sarif" {
            sarif_for_snapshot(&r.json())
        } else {
            r.stdout.clone()
        };
        // No raw control character, bidirectional override or line separator reaches the
        // output of any format: the hostile key is escaped everywhere.
        let raw: Vec<char> = r
            .stdout
            .chars()
            .filter(|&c| (c.is_control() && c != '\n') || matches!(c, '\u{202e}' | '\u{2028}'))
            .collect();
        assert!(raw.is_empty(), "{format}: {raw:?}");
        assert!(
            !r.stdout.lines().any(|l| l.starts_with("::add-mask")),
            "{format}"
        );
        insta::assert_snapshot!(format!("formats_{format}"), shown);
    }
}

#[test]
fn format_is_the_short_name_of_output_format() {
    let long = report("concise");
    let mut args = vec!["check"];
    args.extend(INPUTS);
    args.extend(["--format", "concise"]);
    let short = run_in(&fixtures(), &args);
    assert_eq!(short.stdout, long.stdout);
    assert_eq!(short.code, long.code);
    let help = run_in(&fixtures(), &["check", "-h"]);
    let line = help
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("--output-format <FORMAT>"))
        .unwrap_or_else(|| panic!("{}", help.stdout));
    assert!(line.contains("[alias: --format]"), "{line}");
}

/// The JSON's path, start and message of a diagnostic, as the concise line writes them
/// (what the file holds escaped as for a terminal).
fn concise_of(d: &Value) -> String {
    let escaped: String = d["message"]
        .as_str()
        .expect("message")
        .chars()
        .map(|c| match c {
            '\n' => "\\n".to_owned(),
            c if fuzzfile_check::render::is_unprintable(c) => format!("\\u{{{:x}}}", c as u32),
            c => c.to_string(),
        })
        .collect();
    format!(
        "{}:{}:{}: {} {} {escaped}",
        d["file"].as_str().expect("file"),
        d["range"]["start"]["line"],
        d["range"]["start"]["column"],
        d["code"].as_str().expect("code"),
        d["rule"].as_str().expect("rule"),
    )
}

#[test]
fn concise_is_one_line_per_json_diagnostic() {
    let diags = json_diagnostics();
    let concise = report("concise").stdout;
    let lines: Vec<&str> = concise.lines().collect();
    assert_eq!(lines.len(), diags.len(), "{concise}");
    for (line, d) in lines.iter().zip(&diags) {
        assert_eq!(*line, concise_of(d));
    }
    // A clean run prints nothing.
    let clean = run_in(
        &fixtures(),
        &["check", "clean.fz", "--output-format", "concise"],
    );
    assert_eq!((clean.code, clean.stdout.as_str()), (0, ""));
}

#[test]
fn json_lines_are_the_json_diagnostics_one_per_line() {
    let diags = json_diagnostics();
    let lines = report("json-lines").stdout;
    assert!(lines.ends_with('\n'));
    let parsed: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(parsed, diags);
}

// ---------------------------------------------------------------------------------------------
// SARIF
// ---------------------------------------------------------------------------------------------

fn schema(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/schemas")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).expect("read schema")).expect("JSON")
}

fn errors(validator: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn sarif_is_valid_and_its_rules_link_their_documentation() {
    let validator = jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&schema("sarif-2.1.0.json"))
        .expect("the SARIF schema compiles");
    let doc = report("sarif").json();
    assert_eq!(errors(&validator, &doc), Vec::<String>::new());

    let repository = fuzzfile_diagnostics::docs::REPOSITORY;
    let driver = &doc["runs"][0]["tool"]["driver"];
    assert_eq!(driver["informationUri"], repository);
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules");
    for (rule, r) in fuzzfile_check::Rule::ALL
        .iter()
        .zip(driver["rules"].as_array().expect("rules"))
    {
        let uri = r["helpUri"].as_str().expect("helpUri");
        assert_eq!(
            uri,
            format!("{repository}/blob/main/docs/rules/{}.md", rule.name())
        );
        // The page exists in the repository.
        let page = uri.rsplit('/').next().expect("page");
        assert!(docs.join(page).is_file(), "{uri}");
        let markdown = fuzzfile_check::rules::documentation(*rule);
        assert_eq!(r["help"]["markdown"], markdown);
        let text = r["help"]["text"].as_str().expect("help text");
        assert!(text.starts_with(rule.summary()), "{text}");
        assert!(!text.contains("```"), "{text}");
    }

    // FUZZLINT_DOCS_URL moves the links: a base, or a pattern.
    for (value, want) in [
        (
            "https://docs.example.org/fuzzlint/rules/",
            "https://docs.example.org/fuzzlint/rules/unknown-key.md",
        ),
        (
            "https://docs.example.org/r/{code}.html#{name}",
            "https://docs.example.org/r/FZ010.html#unknown-key",
        ),
    ] {
        let out = fuzzlint_binary!()
            .command()
            .args(["check", "clean.fz", "--output-format", "sarif"])
            .current_dir(fixtures())
            .env(fuzzfile_diagnostics::docs::DOCS_URL_VARIABLE, value)
            .output()
            .expect("run fuzzlint");
        let doc: Value = serde_json::from_slice(&out.stdout).expect("SARIF");
        let rules = doc["runs"][0]["tool"]["driver"]["rules"]
            .as_array()
            .expect("rules");
        let unknown_key = rules
            .iter()
            .find(|r| r["name"] == "unknown-key")
            .expect("unknown-key");
        assert_eq!(unknown_key["helpUri"], want);
    }
}

// ---------------------------------------------------------------------------------------------
// GitLab Code Quality
// ---------------------------------------------------------------------------------------------

#[test]
fn gitlab_report_is_valid_for_gitlab() {
    let validator = jsonschema::draft7::options()
        .build(&schema("gitlab-codeclimate.json"))
        .expect("GitLab's schema compiles");
    let report = report("gitlab").json();
    let issues = report.as_array().expect("an array of issues");
    let diags = json_diagnostics();
    assert_eq!(issues.len(), diags.len());
    let mut fingerprints = std::collections::HashSet::new();
    for (issue, d) in issues.iter().zip(&diags) {
        assert_eq!(errors(&validator, issue), Vec::<String>::new(), "{issue}");
        // What GitLab's documentation asks for beyond its schema.
        let severity = issue["severity"].as_str().expect("severity");
        let want = match d["severity"].as_str().expect("severity") {
            "error" => "critical",
            "warning" => "major",
            _ => "info",
        };
        assert_eq!(severity, want);
        assert_eq!(issue["check_name"], d["code"]);
        assert_eq!(issue["location"]["path"], d["file"]);
        assert_eq!(
            issue["location"]["positions"]["begin"], d["range"]["start"],
            "{issue}"
        );
        assert!(issue["location"]["positions"]["begin"]["line"].as_u64() >= Some(1));
        let fp = issue["fingerprint"].as_str().expect("fingerprint");
        assert!(
            fp.len() == 32 && fp.chars().all(|c| c.is_ascii_hexdigit()),
            "{fp}"
        );
        assert!(
            fingerprints.insert(fp.to_owned()),
            "fingerprint twice: {fp}"
        );
        assert!(issue["description"]
            .as_str()
            .expect("description")
            .contains(d["message"].as_str().expect("message")));
    }
    // An absolute path under the working directory is given relative to it, as GitLab
    // matches paths against the repository.
    let absolute = fixtures().join("findings.fz");
    let r = run_in(
        &fixtures(),
        &[
            "check",
            absolute.to_str().expect("UTF-8 path"),
            "--output-format",
            "gitlab",
        ],
    );
    assert_eq!(r.json()[0]["location"]["path"], "findings.fz");
    // No findings: an empty report, which GitLab reads as "no degradations".
    let clean = run_in(
        &fixtures(),
        &["check", "clean.fz", "--output-format", "gitlab"],
    );
    assert_eq!(clean.json(), serde_json::json!([]));
}

fn gitlab_fingerprints(dir: &Path, file: &str) -> Vec<(String, String)> {
    let r = run_in(dir, &["check", file, "--output-format", "gitlab"]);
    r.json()
        .as_array()
        .expect("issues")
        .iter()
        .map(|i| {
            (
                i["check_name"].as_str().expect("check").to_owned(),
                i["fingerprint"].as_str().expect("fingerprint").to_owned(),
            )
        })
        .collect()
}

#[test]
fn gitlab_fingerprints_follow_the_finding_not_its_line() {
    let dir = ScratchDirectory::create("fuzzlint-formats", "fingerprints");
    let text = std::fs::read_to_string(fixtures().join("findings.fz")).expect("read");
    dir.write_file("w.fz", &text);
    let before = gitlab_fingerprints(dir.path(), "w.fz");
    assert!(before.len() >= 3);

    // Lines added above every finding: the same fingerprints.
    dir.write_file("w.fz", format!("# a comment\n# another\n{text}"));
    assert_eq!(gitlab_fingerprints(dir.path(), "w.fz"), before);

    // One finding changed (`cwdd` → `cwdx`): only its fingerprint changes.
    dir.write_file("w.fz", text.replace("cwdd:", "cwdx:"));
    let changed = gitlab_fingerprints(dir.path(), "w.fz");
    assert_eq!(changed.len(), before.len());
    let differ: Vec<_> = before
        .iter()
        .zip(&changed)
        .filter(|(a, b)| a != b)
        .collect();
    assert_eq!(differ.len(), 1, "{differ:?}");
    assert_eq!(differ[0].0 .0, "FZ010");

    // The same file under another name: other fingerprints (the path is part of them).
    dir.write_file("v.fz", &text);
    let other = gitlab_fingerprints(dir.path(), "v.fz");
    assert!(before.iter().zip(&other).all(|(a, b)| a.1 != b.1));

    // Two identical findings in one file stay two issues.
    dir.write_file(
        "twice.fz",
        "version: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [true]\n    cwdd: /a\n  b:\n    image: {uri: docker://alpine:3.20}\n    command: [true]\n    cwdd: /a\n",
    );
    let twice = gitlab_fingerprints(dir.path(), "twice.fz");
    let unknown: Vec<_> = twice.iter().filter(|(c, _)| c == "FZ010").collect();
    assert_eq!(unknown.len(), 2, "{twice:?}");
    assert_ne!(unknown[0].1, unknown[1].1);
}

// ---------------------------------------------------------------------------------------------
// JUnit
// ---------------------------------------------------------------------------------------------

#[test]
fn junit_is_xml_that_reads_back_to_the_findings() {
    let xml = report("junit").stdout;
    let doc = roxmltree::Document::parse(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let diags = json_diagnostics();
    assert_eq!(
        root.attribute("failures"),
        Some(diags.len().to_string().as_str())
    );

    let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    // A suite per file, in the order files are checked (sorted by path).
    let names: Vec<_> = suites.iter().map(|s| s.attribute("name")).collect();
    let mut sorted = INPUTS.to_vec();
    sorted.sort_unstable();
    assert_eq!(names, sorted.into_iter().map(Some).collect::<Vec<_>>());

    // The failures, in order, carry the JSON's messages (escaped as for a terminal).
    let failures: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("failure"))
        .collect();
    assert_eq!(failures.len(), diags.len());
    for (f, d) in failures.iter().zip(&diags) {
        assert_eq!(f.attribute("type"), d["severity"].as_str());
        let body = f.text().expect("failure text");
        assert_eq!(body.lines().next(), Some(concise_of(d).as_str()));
        let case = f.parent_element().expect("testcase");
        assert_eq!(case.attribute("classname"), d["file"].as_str());
        assert_eq!(
            case.attribute("line"),
            Some(d["range"]["start"]["line"].to_string().as_str())
        );
    }
    // `<`, `&` and quotes of a message come back as they were.
    assert!(failures
        .iter()
        .any(|f| f.attribute("message") == Some("unknown key `a<b>&\"quoted\"'` in a job")));

    // The clean file: one passing test case.
    let clean = suites.first().expect("clean suite");
    assert_eq!(clean.attribute("name"), Some("clean.fz"));
    assert_eq!(clean.attribute("failures"), Some("0"));
    let cases: Vec<_> = clean.children().filter(|n| n.is_element()).collect();
    assert_eq!(cases.len(), 1);
    assert!(cases[0].children().all(|n| !n.is_element()));
}

// ---------------------------------------------------------------------------------------------
// --output-file
// ---------------------------------------------------------------------------------------------

#[test]
fn output_file_gets_the_report_and_standard_output_nothing() {
    let dir = ScratchDirectory::create("fuzzlint-formats", "output-file");
    for name in INPUTS {
        std::fs::copy(fixtures().join(name), dir.join(name)).expect("copy");
    }
    for format in FORMATS {
        let mut args = vec!["check"];
        args.extend(INPUTS);
        args.extend(["--output-format", format, "--output-file", "out/report"]);
        std::fs::create_dir_all(dir.join("out")).expect("mkdir");
        let r = run_in(dir.path(), &args);
        assert_eq!(r.code, 1, "{format}: {}", r.stderr);
        assert_eq!(r.stdout, "", "{format}");
        let written = std::fs::read_to_string(dir.join("out/report")).expect("report");
        let mut stdout_args = vec!["check"];
        stdout_args.extend(INPUTS);
        stdout_args.extend(["--output-format", format, "--color", "never"]);
        let to_stdout = run_in(dir.path(), &stdout_args);
        assert_eq!(written, to_stdout.stdout, "{format}");
        // Nothing else is left beside it (the temporary file was renamed).
        let entries: Vec<_> = std::fs::read_dir(dir.join("out"))
            .expect("ls")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(entries, ["report"], "{format}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("out/report"))
            .expect("stat")
            .permissions()
            .mode();
        assert_ne!(mode & 0o044, 0, "a report is readable by others: {mode:o}");
    }
}

#[test]
fn output_file_errors_name_the_path_and_leave_no_partial_report() {
    let dir = ScratchDirectory::create("fuzzlint-formats", "output-file-errors");
    std::fs::copy(fixtures().join("clean.fz"), dir.join("clean.fz")).expect("copy");

    // A directory that does not exist.
    let r = run_in(
        dir.path(),
        &["check", "clean.fz", "--output-file", "missing/report.json"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("--output-file missing/report.json: "),
        "{}",
        r.stderr
    );
    assert!(!dir.join("missing").exists());

    // A directory in place of the file.
    std::fs::create_dir(dir.join("taken")).expect("mkdir");
    let r = run_in(dir.path(), &["check", "clean.fz", "--output-file", "taken"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--output-file taken: is a directory"),
        "{}",
        r.stderr
    );

    // A run that fails before its report leaves the earlier report as it was.
    std::fs::write(dir.join("report.json"), "earlier").expect("write");
    let r = run_in(
        dir.path(),
        &[
            "check",
            "nowhere.fz",
            "--output-format",
            "json",
            "--output-file",
            "report.json",
        ],
    );
    assert_eq!(r.code, 2);
    assert_eq!(
        std::fs::read_to_string(dir.join("report.json")).expect("read"),
        "earlier"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".fuzzlint-report-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
