//! `fuzz check` is `fuzzlint check` (the `fuzzlint` library's `CheckArgs` and `check`): the
//! node preflight and CI read a Fuzzfile the same way. The same arguments give the same
//! report, byte for byte, and the same exit status, in every output format, also with a
//! fuzzlint.toml, `--cluster`, a directory and a template; only the default output differs
//! (`preflight` for `fuzz check`, `human` for `fuzzlint check`).

use fuzz_test_support::{fuzz_binary, ScratchDirectory};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `fuzzlint` binary beside `fuzz` (a workspace build has both; `cargo test -p fuzz`
/// alone builds only `fuzz`, so then it is built here, with the same profile and target
/// directory).
fn fuzzlint_binary() -> PathBuf {
    let fuzz = Path::new(env!("CARGO_BIN_EXE_fuzz"));
    let fuzzlint = fuzz.with_file_name(format!("fuzzlint{}", std::env::consts::EXE_SUFFIX));
    if !fuzzlint.is_file() {
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let mut build = Command::new(cargo);
        build.args(["build", "-p", "fuzzlint", "--bin", "fuzzlint"]);
        // target/<profile>/fuzz: the profile is the directory's name ("debug": the dev profile).
        let profile = fuzz
            .parent()
            .and_then(Path::file_name)
            .and_then(|n| n.to_str())
            .unwrap_or("debug");
        if profile != "debug" {
            build.args(["--profile", profile]);
        }
        let status = build.status().expect("run cargo build -p fuzzlint");
        assert!(status.success(), "cargo build -p fuzzlint failed");
    }
    fuzzlint
}

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn run(program: &Path, dir: &Path, args: &[&str]) -> Out {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    Out {
        code: out.status.code(),
        stdout: String::from_utf8(out.stdout).expect("UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("UTF-8"),
    }
}

const BROKEN: &str = "version: v4
jobs:
  train:
    image: {uri: docker://nvcr.io/nvidia/pytorch:24.05-py3}
    command: [torchrun, --nproc-per-node=8, train.py]
    cwdd: /work
    resource:
      cpu: {cores: 8}
      memory: {size: 64GiB}
      devices: {nvidia.com/gpu: 4}
    policy:
      timeout: {execute: 2d}
";

const CLEAN: &str = "version: v4
jobs:
  hello:
    image: {uri: docker://alpine:3.20}
    command: [echo, hello]
";

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
    string_value: lots
";

const CLUSTER: &str = "name = \"two-gpu nodes\"\ngpus-per-node = 2\n";

#[test]
fn fuzz_check_and_fuzzlint_check_give_the_same_report() {
    let dir = ScratchDirectory::create("fuzz-check-shared", "inputs");
    dir.write_file("jobs/broken.fz", BROKEN);
    dir.write_file("jobs/clean.fz", CLEAN);
    dir.write_file("app/template.yaml", TEMPLATE);
    dir.write_file("app/values.yaml", VALUES);
    dir.write_file("cluster.toml", CLUSTER);
    // In strict/, a fuzzlint.toml makes warnings fail and turns a rule off.
    dir.write_file("strict/broken.fz", BROKEN);
    dir.write_file(
        "strict/fuzzlint.toml",
        "fail-on = \"warning\"\nignore = [\"unknown-key\"]\n",
    );
    let fuzz = fuzz_binary!();
    let fuzzlint = fuzzlint_binary();
    let cases: &[&[&str]] = &[
        &["jobs/broken.fz"],
        &["jobs"],
        &["jobs/clean.fz"],
        &["app/template.yaml"],
        &["app/template.yaml", "--set", "Memory=1GiB"],
        &["strict"],
        &["jobs/broken.fz", "--cluster", "cluster.toml"],
        &["jobs/broken.fz", "--select", "FZ0", "--fail-on", "never"],
    ];
    for case in cases {
        for format in ["json", "sarif", "concise", "gitlab", "preflight", "human"] {
            let mut args = vec!["check"];
            args.extend_from_slice(case);
            args.extend(["--output-format", format]);
            let a = run(fuzz.path(), dir.path(), &args);
            let b = run(&fuzzlint, dir.path(), &args);
            assert_eq!(a.stdout, b.stdout, "{args:?}");
            assert_eq!(a.stderr, b.stderr, "{args:?}");
            assert_eq!(a.code, b.code, "{args:?}");
            assert!(a.code.is_some_and(|c| c <= 1), "{args:?}: {}", a.stderr);
        }
    }
    // The reports say something: the broken file's error, the cluster's GPU limit, the
    // config's fail-on, the template's value.
    let json = |args: &[&str]| {
        let mut all = vec!["check"];
        all.extend_from_slice(args);
        all.extend(["--output-format", "json"]);
        run(fuzz.path(), dir.path(), &all)
    };
    assert!(json(&["jobs/broken.fz"]).stdout.contains("\"FZ010\""));
    assert!(json(&["jobs/broken.fz", "--cluster", "cluster.toml"])
        .stdout
        .contains("gpu-request-exceeds-node"));
    let strict = json(&["strict"]);
    assert!(!strict.stdout.contains("unknown-key"), "{}", strict.stdout);
    assert_eq!(strict.code, Some(1));
    assert!(json(&["app/template.yaml"]).stdout.contains("`lots`"));
}

#[test]
fn the_defaults_differ_only_in_the_output_format() {
    let dir = ScratchDirectory::create("fuzz-check-shared", "defaults");
    dir.write_file("broken.fz", BROKEN);
    dir.write_file("clean.fz", CLEAN);
    let fuzz = run(
        fuzz_binary!().path(),
        dir.path(),
        &["check", "broken.fz", "clean.fz"],
    );
    let preflight = run(
        &fuzzlint_binary(),
        dir.path(),
        &[
            "check",
            "broken.fz",
            "clean.fz",
            "--output-format",
            "preflight",
        ],
    );
    assert_eq!(fuzz.stdout, preflight.stdout);
    assert_eq!(fuzz.code, Some(1));
    assert!(
        fuzz.stdout.starts_with("broken.fz: not runnable\n"),
        "{}",
        fuzz.stdout
    );
    assert!(
        fuzz.stdout.ends_with("clean.fz: ready\n"),
        "{}",
        fuzz.stdout
    );
    assert!(
        fuzz.stdout
            .contains("broken.fz:6:5: error[FZ010 unknown-key]: unknown key `cwdd` in a job\n  help: did you mean `cwd`?\n"),
        "{}",
        fuzz.stdout
    );
    // `--format` is `--output-format` for both.
    let short = run(
        fuzz_binary!().path(),
        dir.path(),
        &["check", "clean.fz", "--format", "json"],
    );
    assert!(short.stdout.contains("\"version\": 1"), "{}", short.stdout);
}
