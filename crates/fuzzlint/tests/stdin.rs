//! `fuzzlint check -`: a Fuzzfile on standard input, named by `--stdin-filename` for config
//! lookup, template detection and messages; `--fix` prints the fixed text on standard output
//! and the report on standard error, writing no file.

use fuzz_test_support::binary::finish;
use fuzz_test_support::{fuzzlint_binary, BinaryRun, ScratchDirectory};
use std::path::Path;

/// `fuzzlint ARGS` in `dir` with `input` on standard input (`NO_COLOR` and the rule
/// documentation's URL variable removed).
fn run_with_stdin(dir: &Path, args: &[&str], input: &str) -> BinaryRun {
    finish(
        fuzzlint_binary!()
            .command()
            .args(args)
            .current_dir(dir)
            .env_remove("NO_COLOR")
            .env_remove(fuzzfile_diagnostics::docs::DOCS_URL_VARIABLE),
        input,
    )
}

const BROKEN: &str = "version: v4
jobs:
  hello:
    image: {uri: docker://alpine:3.20}
    command: [echo, hello]
    cwdd: /work
    policy:
      timeout:
        execute: 2d
";

fn scratch(tag: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzzlint-stdin", tag)
}

#[test]
fn standard_input_is_checked_like_a_file() {
    let dir = scratch("plain");
    dir.write_file("w.fz", BROKEN);
    let from_file = run_with_stdin(
        dir.path(),
        &["check", "w.fz", "--output-format", "concise"],
        "",
    );
    let from_stdin = run_with_stdin(
        dir.path(),
        &["check", "-", "--output-format", "concise"],
        BROKEN,
    );
    assert_eq!(from_stdin.code, 1, "{}", from_stdin.stderr);
    assert_eq!(from_stdin.code, from_file.code);
    // The same findings, named `-`.
    assert_eq!(from_stdin.stdout, from_file.stdout.replace("w.fz:", "-:"));
    assert!(from_stdin.stdout.starts_with("-:6:5: FZ010 unknown-key "));

    // --stdin-filename names it in every format.
    let named = run_with_stdin(
        dir.path(),
        &[
            "check",
            "-",
            "--stdin-filename",
            "jobs/w.fz",
            "--output-format",
            "json",
        ],
        BROKEN,
    );
    let doc: serde_json::Value = serde_json::from_str(&named.stdout).expect("JSON");
    let files: Vec<&str> = doc["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["file"].as_str().expect("file"))
        .collect();
    assert!(!files.is_empty());
    assert!(files.iter().all(|f| *f == "jobs/w.fz"), "{files:?}");
    // Nothing was created under that name.
    assert!(!dir.join("jobs").exists());
}

#[test]
fn stdin_filename_picks_the_config_of_its_directory() {
    let dir = scratch("config");
    std::fs::create_dir(dir.join("strict")).expect("mkdir");
    // In strict/, unknown keys are turned off and warnings fail the run.
    dir.write_file(
        "strict/fuzzlint.toml",
        "fail-on = \"warning\"\nignore = [\"unknown-key\"]\n",
    );
    let plain = run_with_stdin(
        dir.path(),
        &["check", "-", "--output-format", "concise"],
        BROKEN,
    );
    assert!(
        plain.stdout.contains("FZ010 unknown-key"),
        "{}",
        plain.stdout
    );
    let strict = run_with_stdin(
        dir.path(),
        &[
            "check",
            "-",
            "--stdin-filename",
            "strict/w.fz",
            "--output-format",
            "concise",
        ],
        BROKEN,
    );
    assert!(!strict.stdout.contains("unknown-key"), "{}", strict.stdout);
    assert!(
        strict
            .stdout
            .contains("strict/w.fz:9:18: FZ011 invalid-value"),
        "{}",
        strict.stdout
    );
    // fail-on = "warning": the warning alone fails it.
    assert_eq!(strict.code, 1, "{}", strict.stderr);

    // --show-settings names it and shows that config.
    let settings = run_with_stdin(
        dir.path(),
        &[
            "check",
            "-",
            "--stdin-filename",
            "strict/w.fz",
            "--show-settings",
        ],
        "",
    );
    assert!(
        settings.stdout.starts_with("strict/w.fz\n"),
        "{}",
        settings.stdout
    );
    assert!(
        settings.stdout.contains("strict/fuzzlint.toml"),
        "{}",
        settings.stdout
    );
}

const TEMPLATE: &str = "version: v4
jobs:
  greet:
    image: {uri: docker://alpine:3.20}
    command: [echo, \"{{ .Who }}\"]
    resource:
      memory: {size: \"{{ .Memory }}\"}
";

const VALUES: &str = "values:
  - name: Who
    display_name: Who is greeted
    string_value: world
  - name: Memory
    display_name: Memory of the job
    string_value: 1GiB
";

#[test]
fn stdin_filename_of_a_template_renders_it_with_the_values_beside_that_name() {
    let dir = scratch("template");
    std::fs::create_dir(dir.join("app")).expect("mkdir");
    dir.write_file("app/values.yaml", VALUES);
    // Read as a template: clean (its values come from app/values.yaml).
    let ok = run_with_stdin(
        dir.path(),
        &[
            "check",
            "-",
            "--stdin-filename",
            "app/template.yaml",
            "--output-format",
            "concise",
        ],
        TEMPLATE,
    );
    assert_eq!((ok.code, ok.stdout.as_str()), (0, ""), "{}", ok.stderr);
    // A wrong value, found at the template's position under the given name.
    let bad = run_with_stdin(
        dir.path(),
        &[
            "check",
            "-",
            "--stdin-filename",
            "app/template.yaml",
            "--set",
            "Memory=lots",
            "--output-format",
            "concise",
        ],
        TEMPLATE,
    );
    assert_eq!(bad.code, 1, "{}", bad.stderr);
    assert!(
        bad.stdout
            .starts_with("app/template.yaml:7:22: FZ011 invalid-value "),
        "{}",
        bad.stdout
    );
    // Without the name, the same text is no template: its `{{ }}` is checked as YAML text.
    let plain = run_with_stdin(dir.path(), &["check", "-"], TEMPLATE);
    assert_ne!(plain.stdout, bad.stdout);
}

#[test]
fn fix_of_standard_input_prints_the_fixed_text_and_reports_on_standard_error() {
    let dir = scratch("fix");
    let r = run_with_stdin(
        dir.path(),
        &[
            "check",
            "-",
            "--fix",
            "--stdin-filename",
            "w.fz",
            "--output-format",
            "concise",
        ],
        BROKEN,
    );
    // The safe fixes applied: `cwdd` renamed, `2d` written in hours.
    assert_eq!(
        r.stdout,
        BROKEN
            .replace("cwdd:", "cwd:")
            .replace("execute: 2d", "execute: 48h"),
        "{}",
        r.stderr
    );
    // What is left is reported on standard error; nothing is left, so exit 0.
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("FZ010"), "{}", r.stderr);
    assert!(!dir.join("w.fz").exists(), "nothing is written to the name");

    // Text with nothing to fix comes back as it was, the findings on standard error.
    let unfixable = "version: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [true]\n    depends-on: [{name: nowhere}]\n";
    let r = run_with_stdin(
        dir.path(),
        &["check", "-", "--fix", "--output-format", "concise"],
        unfixable,
    );
    assert_eq!(r.stdout, unfixable);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("-:6:25: FZ020 unknown-reference"),
        "{}",
        r.stderr
    );

    // With --output-file, the report goes there and standard output stays the fixed text.
    let r = run_with_stdin(
        dir.path(),
        &[
            "check",
            "-",
            "--fix",
            "--output-format",
            "json",
            "--output-file",
            "report.json",
        ],
        unfixable,
    );
    assert_eq!(r.stdout, unfixable);
    let report: serde_json::Value =
        serde_json::from_str(&dir.read_file("report.json")).expect("JSON report");
    assert_eq!(report["diagnostics"][0]["code"], "FZ020");
}
