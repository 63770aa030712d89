//! Integration tests of `fuzzlint.toml`, `--config`, `--cluster`, `--select`, `--ignore`,
//! `--fail-on`, `--show-settings` and inline suppressions, on the real binary in temporary
//! directories (relative paths, so that output holds no machine-specific path).

use fuzz_test_support::{fuzzlint_binary, BinaryRun, NoColorVariable, ScratchDirectory};
use std::path::Path;

type Run = BinaryRun;

/// What the JSON output of a run found.
trait Findings {
    /// `(file, rule, severity)` of every diagnostic of the JSON output.
    fn findings(&self) -> Vec<(String, String, String)>;
}

impl Findings for Run {
    fn findings(&self) -> Vec<(String, String, String)> {
        self.json()["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .map(|d| {
                (
                    d["file"].as_str().expect("file").to_owned(),
                    d["rule"].as_str().expect("rule").to_owned(),
                    d["severity"].as_str().expect("severity").to_owned(),
                )
            })
            .collect()
    }
}

fn run_in(dir: &Path, args: &[&str]) -> Run {
    fuzzlint_binary!().run_in(dir, args, NoColorVariable::Set)
}

/// A fresh directory under the system temporary directory, removed on drop.
fn scratch(tag: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzzlint-config-test", tag)
}

/// `fuzzlint ARGS` in a scratch directory.
trait RunIn {
    fn run(&self, args: &[&str]) -> Run;
}

impl RunIn for ScratchDirectory {
    fn run(&self, args: &[&str]) -> Run {
        run_in(self.path(), args)
    }
}

/// One warning (`policy-retry-ignored`, line 7) and one error (`unknown-key`, line 10).
const RETRY_AND_TYPO: &str = "version: v4
jobs:
  train:
    image:
      uri: docker://alpine:3.20
    command: [echo, hi]
    policy:
      retry:
        attempts: 3
    tries: 2
";

/// Only the warning.
const RETRY: &str = "version: v4
jobs:
  train:
    image:
      uri: docker://alpine:3.20
    command: [echo, hi]
    policy:
      retry:
        attempts: 3
";

fn f(file: &str, rule: &str, severity: &str) -> (String, String, String) {
    (file.into(), rule.into(), severity.into())
}

// ---------------------------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------------------------

#[test]
fn config_is_found_upward_and_the_nearest_wins() {
    let t = scratch("upward");
    t.write_file(
        "proj/fuzzlint.toml",
        "ignore = [\"policy-retry-ignored\"]\n",
    );
    t.write_file("proj/deep/er/train.fz", RETRY_AND_TYPO);
    // A nearer config replaces the outer one (no merging): this one ignores unknown-key only.
    t.write_file("proj/near/fuzzlint.toml", "ignore = [\"FZ010\"]\n");
    t.write_file("proj/near/train.fz", RETRY_AND_TYPO);
    t.write_file("elsewhere/train.fz", RETRY_AND_TYPO);
    let r = t.run(&["check", "--format", "json", "proj", "elsewhere"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert_eq!(
        r.findings(),
        vec![
            f("elsewhere/train.fz", "policy-retry-ignored", "warning"),
            f("elsewhere/train.fz", "unknown-key", "error"),
            f("proj/deep/er/train.fz", "unknown-key", "error"),
            f("proj/near/train.fz", "policy-retry-ignored", "warning"),
        ]
    );

    // The same when run from inside the tree, with the config above the working directory.
    let r = run_in(
        &t.path().join("proj/deep"),
        &["check", "--format", "json", "er/train.fz"],
    );
    assert_eq!(
        r.findings(),
        vec![f("er/train.fz", "unknown-key", "error")],
        "{}",
        r.stderr
    );
}

#[test]
fn config_flag_applies_to_every_file() {
    let t = scratch("config-flag");
    t.write_file(
        "proj/fuzzlint.toml",
        "ignore = [\"policy-retry-ignored\"]\n",
    );
    t.write_file("proj/train.fz", RETRY_AND_TYPO);
    t.write_file("other/train.fz", RETRY_AND_TYPO);
    t.write_file("settings/strict.toml", "ignore = [\"unknown-key\"]\n");
    let r = t.run(&[
        "check",
        "--format",
        "json",
        "--config",
        "settings/strict.toml",
        "proj",
        "other",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.findings(),
        vec![
            f("other/train.fz", "policy-retry-ignored", "warning"),
            f("proj/train.fz", "policy-retry-ignored", "warning"),
        ]
    );

    let r = t.run(&["check", "--config", "missing.toml", "proj"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --config missing.toml: no such file or directory\n"
    );
}

// ---------------------------------------------------------------------------------------------
// Errors in configs and profiles: exit 2 with path:line:column
// ---------------------------------------------------------------------------------------------

#[test]
fn a_bad_cluster_profile_is_a_usage_error_with_its_position() {
    let t = scratch("bad-cluster");
    t.write_file("train.fz", RETRY);
    t.write_file(
        "clusters/bad.toml",
        "name = \"lab\"\ngpus-per-node = 4\nfabric = \"omnipath\"\n",
    );
    let r = t.run(&["check", "--cluster", "clusters/bad.toml", "train.fz"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert_eq!(r.stdout, "");
    assert!(
        r.stderr
            .starts_with("error: clusters/bad.toml:3:10: unknown variant `omnipath`"),
        "{}",
        r.stderr
    );

    let r = t.run(&["check", "--cluster", "clusters/none.toml", "train.fz"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --cluster clusters/none.toml: no such file or directory\n"
    );
}

#[test]
fn a_bad_config_is_a_usage_error_with_its_position() {
    let t = scratch("bad-config");
    t.write_file("a/train.fz", RETRY);
    t.write_file(
        "a/fuzzlint.toml",
        "select = [\"FZ0\"]\n\n[severity]\npolicy-retry-ignored = \"fatal\"\n",
    );
    let r = t.run(&["check", "a"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr
            .starts_with("error: a/fuzzlint.toml:4:24: unknown variant `fatal`"),
        "{}",
        r.stderr
    );

    t.write_file("a/fuzzlint.toml", "fail_on = \"warning\"\n");
    let r = t.run(&["check", "a"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with("error: a/fuzzlint.toml:1:1: unknown field `fail_on`, expected one of"),
        "{}",
        r.stderr
    );

    t.write_file(
        "a/fuzzlint.toml",
        "ignore = [\"FZ032\", \"policy-retry\"]\n",
    );
    let r = t.run(&["check", "a"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: a/fuzzlint.toml:1:20: `ignore`: unknown rule `policy-retry` (did you mean `policy-retry-ignored`?); expected a rule name, a code (`FZ201`) or a code prefix (`FZ2`)\n"
    );

    // A profile named by the config is read relative to the config; its errors are its own.
    t.write_file("a/fuzzlint.toml", "cluster = \"clusters/lab.toml\"\n");
    t.write_file("a/clusters/lab.toml", "gpus_per_node = 4\n");
    let r = t.run(&["check", "a"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with("error: a/clusters/lab.toml:1:1: unknown field `gpus_per_node`"),
        "{}",
        r.stderr
    );
    t.write_file("a/fuzzlint.toml", "\ncluster = \"clusters/gone.toml\"\n");
    let r = t.run(&["check", "a"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: a/fuzzlint.toml:2:11: cannot read the cluster profile a/clusters/gone.toml: no such file or directory\n"
    );

    // An inline [cluster] table is checked like a profile, at its place in the config.
    t.write_file(
        "a/fuzzlint.toml",
        "fail-on = \"never\"\n[cluster]\ngpus-per-node = 4\nimex = \"yes\"\n",
    );
    let r = t.run(&["check", "a"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.starts_with("error: a/fuzzlint.toml:4:8: "),
        "{}",
        r.stderr
    );
}

#[test]
fn bad_selectors_on_the_command_line_are_usage_errors() {
    let t = scratch("bad-flags");
    t.write_file("train.fz", RETRY);
    let r = t.run(&["check", "--select", "FZ9", "train.fz"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr,
        "error: --select: no rule has a code starting with `FZ9`\n"
    );
    let r = t.run(&["check", "--ignore", "unknown-key,unknwn-key", "train.fz"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--ignore: unknown rule `unknwn-key` (did you mean `unknown-key`?)"),
        "{}",
        r.stderr
    );
}

// ---------------------------------------------------------------------------------------------
// Settings from the file, overridden by the flags
// ---------------------------------------------------------------------------------------------

#[test]
fn select_and_ignore_from_the_file_and_the_flags() {
    let t = scratch("select");
    t.write_file("train.fz", RETRY_AND_TYPO);
    let findings = |args: &[&str]| {
        let mut all = vec!["check", "--format", "json", "--fail-on", "never"];
        all.extend_from_slice(args);
        all.push("train.fz");
        let r = t.run(&all);
        assert_eq!(r.code, 0, "{}", r.stderr);
        r.findings()
            .into_iter()
            .map(|(_, rule, _)| rule)
            .collect::<Vec<_>>()
    };
    assert_eq!(findings(&[]), vec!["policy-retry-ignored", "unknown-key"]);

    t.write_file("fuzzlint.toml", "select = [\"FZ01\"]\n");
    assert_eq!(findings(&[]), vec!["unknown-key"]);
    // --select replaces the file's selection; --ignore removes from it.
    assert_eq!(
        findings(&["--select", "FZ03"]),
        vec!["policy-retry-ignored"]
    );
    assert_eq!(findings(&["--ignore", "FZ010"]), Vec::<String>::new());
    assert_eq!(
        findings(&["--select", "policy-retry-ignored,unknown-key"]),
        vec!["policy-retry-ignored", "unknown-key"]
    );
    assert_eq!(
        findings(&["--select", "FZ0", "--ignore", "unknown-key"]),
        vec!["policy-retry-ignored"]
    );

    t.write_file("fuzzlint.toml", "ignore = [\"unknown-key\"]\n");
    assert_eq!(findings(&[]), vec!["policy-retry-ignored"]);
    assert_eq!(findings(&["--ignore", "FZ03"]), Vec::<String>::new());
    // A flag-level --select starts over, the file's ignore included.
    assert_eq!(
        findings(&["--select", "FZ"]),
        vec!["policy-retry-ignored", "unknown-key"]
    );
}

#[test]
fn severity_and_fail_on_from_the_file_and_the_flags() {
    let t = scratch("severity");
    t.write_file("train.fz", RETRY);
    let r = t.run(&["check", "--format", "json", "train.fz"]);
    assert_eq!(r.code, 0);
    assert_eq!(
        r.findings(),
        vec![f("train.fz", "policy-retry-ignored", "warning")]
    );

    t.write_file("fuzzlint.toml", "[severity]\nFZ032 = \"error\"\n");
    let r = t.run(&["check", "--format", "json", "train.fz"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.findings(),
        vec![f("train.fz", "policy-retry-ignored", "error")]
    );
    let r = t.run(&[
        "check",
        "--format",
        "json",
        "--fail-on",
        "never",
        "train.fz",
    ]);
    assert_eq!(r.code, 0);

    t.write_file(
        "fuzzlint.toml",
        "[severity]\npolicy-retry-ignored = \"off\"\n",
    );
    let r = t.run(&["check", "--format", "json", "train.fz"]);
    assert_eq!(r.findings(), vec![]);

    t.write_file(
        "fuzzlint.toml",
        "fail-on = \"info\"\n[severity]\npolicy-retry-ignored = \"info\"\n",
    );
    let r = t.run(&["check", "--format", "json", "train.fz"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.findings(),
        vec![f("train.fz", "policy-retry-ignored", "info")]
    );
    let r = t.run(&["check", "--fail-on", "warning", "train.fz"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout
            .contains("1 file checked: 0 errors, 0 warnings, 1 info"),
        "{}",
        r.stdout
    );
}

#[test]
fn each_file_fails_by_its_own_fail_on() {
    let t = scratch("fail-on");
    t.write_file("strict/fuzzlint.toml", "fail-on = \"warning\"\n");
    t.write_file("strict/train.fz", RETRY);
    t.write_file("lax/train.fz", RETRY);
    assert_eq!(t.run(&["check", "lax"]).code, 0);
    assert_eq!(t.run(&["check", "strict"]).code, 1);
    assert_eq!(t.run(&["check", "lax", "strict"]).code, 1);
    assert_eq!(
        t.run(&["check", "--fail-on", "error", "lax", "strict"])
            .code,
        0
    );
}

// ---------------------------------------------------------------------------------------------
// --show-settings
// ---------------------------------------------------------------------------------------------

#[test]
fn show_settings() {
    let t = scratch("show");
    t.write_file(
        "team/fuzzlint.toml",
        "ignore = [\"legacy-version\", \"FZ2\"]\nfail-on = \"warning\"\ncluster = \"../clusters/gb200.toml\"\n\n[severity]\npolicy-retry-ignored = \"error\"\nunused-suppression = \"info\"\n",
    );
    t.write_file(
        "clusters/gb200.toml",
        "name = \"gb200-nvl72\"\ngpus-per-node = 4\ngpu-product = \"GB200\"\nfabric = \"infiniband\"\nmnnvl = true\nimex = true\n[nccl-defaults]\nNCCL_IB_HCA = \"mlx5\"\n",
    );
    t.write_file("team/train.fz", RETRY);
    t.write_file("solo/train.fz", RETRY);
    let r = t.run(&["check", "--show-settings", "team", "solo"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr, "");
    insta::assert_snapshot!("show_settings", r.stdout);

    // Flags override the file, and show as such.
    t.write_file("lab.toml", "gpus-per-node = 8\nfabric = \"roce\"\n");
    let r = t.run(&[
        "check",
        "--show-settings",
        "--cluster",
        "lab.toml",
        "--select",
        "FZ03",
        "--fail-on",
        "never",
        "team/train.fz",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    insta::assert_snapshot!("show_settings_flags", r.stdout);
}

// ---------------------------------------------------------------------------------------------
// Inline suppressions through the binary
// ---------------------------------------------------------------------------------------------

const SUPPRESSED: &str = "version: v4
jobs:
  train:
    image:
      uri: docker://alpine:3.20  # fuzzlint: ignore[unknown-key] nothing to suppress here
    command: [echo, hi]
    policy:
      # fuzzlint: ignore[policy-retry-ignored] the old runner reads it
      retry:
        attempts: 3
";

#[test]
fn suppressions_and_unused_ones() {
    let t = scratch("suppress");
    t.write_file("train.fz", SUPPRESSED);
    let r = t.run(&["check", "--format", "json", "train.fz"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.findings(),
        vec![f("train.fz", "unused-suppression", "warning")]
    );
    let d = &r.json()["diagnostics"][0];
    assert_eq!(d["range"]["start"]["line"], 5);
    assert_eq!(d["range"]["start"]["column"], 34);

    // The config can turn it off; then --fix leaves the comment alone.
    t.write_file("fuzzlint.toml", "ignore = [\"unused-suppression\"]\n");
    let r = t.run(&["check", "--format", "json", "train.fz"]);
    assert_eq!(r.findings(), vec![]);
    let r = t.run(&["check", "--fix", "train.fz"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(t.read_file("train.fz"), SUPPRESSED);

    // Ignoring the suppressed rule in the config means its suppression is not judged.
    t.write_file("fuzzlint.toml", "ignore = [\"unknown-key\"]\n");
    let r = t.run(&["check", "--format", "json", "train.fz"]);
    assert_eq!(r.findings(), vec![]);

    // Without a config, --fix deletes the unused comment and keeps the used one.
    std::fs::remove_file(t.path().join("fuzzlint.toml")).expect("remove config");
    let r = t.run(&["check", "--fix", "train.fz"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        t.read_file("train.fz"),
        SUPPRESSED.replace(
            "  # fuzzlint: ignore[unknown-key] nothing to suppress here",
            ""
        )
    );
    assert!(
        r.stdout.contains("1 file: no problems found"),
        "{}",
        r.stdout
    );
}

#[test]
fn fix_uses_each_files_settings() {
    let t = scratch("fix-settings");
    // Here policy-retry-ignored is off, so its fix (deleting `retry`) must not run.
    t.write_file(
        "keep/fuzzlint.toml",
        "ignore = [\"policy-retry-ignored\"]\n",
    );
    t.write_file("keep/train.fz", RETRY);
    t.write_file("fix/train.fz", RETRY);
    let r = t.run(&["check", "--fix", "--unsafe-fixes", "keep", "fix"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(t.read_file("keep/train.fz"), RETRY);
    assert!(!t.read_file("fix/train.fz").contains("retry"));
}

/// A torchrun job asking 8 processes per node on 4 GPUs (`launcher-nproc-mismatch`, formerly
/// `torchrun-nproc-mismatch`), with the former name in a suppression when `suppressed`.
fn nproc_mismatch(suppression: &str) -> String {
    format!(
        "version: v4
jobs:
  train:
    image:
      uri: docker://nvcr.io/nvidia/pytorch:24.05-py3
    resource:
      devices:
        nvidia.com/gpu: 4
    command: [torchrun, --nproc-per-node=8, train.py]{suppression}
"
    )
}

#[test]
fn a_former_rule_name_still_works_in_the_config_the_flags_and_suppressions() {
    let t = scratch("former-name");
    t.write_file("train.fz", nproc_mismatch(""));
    let rules = |r: &Run| {
        r.findings()
            .into_iter()
            .map(|(_, rule, _)| rule)
            .collect::<Vec<_>>()
    };
    let check = |args: &[&str]| {
        let mut all = vec!["check", "--format", "json", "--fail-on", "never"];
        all.extend_from_slice(args);
        all.push("train.fz");
        t.run(&all)
    };
    // The finding carries the current name.
    let r = check(&[]);
    assert!(
        rules(&r).contains(&"launcher-nproc-mismatch".to_owned()),
        "{}",
        r.stdout
    );

    // fuzzlint.toml: the former name turns the rule off, with a note naming the current one.
    t.write_file("fuzzlint.toml", "ignore = [\"torchrun-nproc-mismatch\"]\n");
    let r = check(&[]);
    assert!(
        !rules(&r).contains(&"launcher-nproc-mismatch".to_owned()),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr.contains("torchrun-nproc-mismatch")
            && r.stderr.contains("launcher-nproc-mismatch"),
        "no note naming the current name: {}",
        r.stderr
    );
    t.write_file(
        "fuzzlint.toml",
        "[severity]\ntorchrun-nproc-mismatch = \"warning\"\n",
    );
    let r = check(&[]);
    assert!(
        r.findings()
            .contains(&f("train.fz", "launcher-nproc-mismatch", "warning")),
        "{}",
        r.stdout
    );
    std::fs::remove_file(t.path().join("fuzzlint.toml")).expect("remove config");

    // The flags take it too.
    let r = check(&["--ignore", "torchrun-nproc-mismatch"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !rules(&r).contains(&"launcher-nproc-mismatch".to_owned()),
        "{}",
        r.stdout
    );

    // A suppression naming the former name suppresses, and is not reported unused.
    t.write_file(
        "train.fz",
        nproc_mismatch("  # fuzzlint: ignore[torchrun-nproc-mismatch]"),
    );
    let r = check(&[]);
    let found = rules(&r);
    assert!(
        !found.contains(&"launcher-nproc-mismatch".to_owned())
            && !found.contains(&"unused-suppression".to_owned()),
        "{}",
        r.stdout
    );
}
