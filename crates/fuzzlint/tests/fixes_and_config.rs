//! `fuzzlint check` on the real binary: safe and unsafe fixes (`--fix`, `--unsafe-fixes`,
//! `--diff`), configuration (`extend`, `exclude`, `extend-exclude`, `per-file-ignores`),
//! `--show-files`, `--statistics`, `-q`/`-v`, and shell completions.

use fuzz_test_support::{fuzzlint_binary, BinaryRun, NoColorVariable, ScratchDirectory};

fn scratch(tag: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzzlint-fixes-config-test", tag)
}

fn run(dir: &ScratchDirectory, args: &[&str]) -> BinaryRun {
    fuzzlint_binary!().run_in(dir.path(), args, NoColorVariable::Set)
}

/// A misspelt key (`Image`: unknown-key, a safe rename) and `policy.retry`
/// (policy-retry-ignored: deleting the key is unsafe).
const SAFE_AND_UNSAFE: &str = "version: v4
jobs:
  a:
    Image: {uri: docker://alpine:3.20}
    command: [echo, hi]
    policy:
      retry: {attempts: 2}
      timeout: {execute: 1h}
";

#[test]
fn fix_applies_safe_fixes_and_unsafe_ones_only_with_unsafe_fixes() {
    let dir = scratch("fix");
    dir.write_file("a.fz", SAFE_AND_UNSAFE);
    let before = run(&dir, &["check", "a.fz"]);
    assert_eq!(before.code, 1, "{}{}", before.stdout, before.stderr);
    assert!(
        before
            .stdout
            .contains("1 fixable with --fix, 1 more with --unsafe-fixes"),
        "{}",
        before.stdout
    );
    assert!(
        before.stdout.contains("unsafe fix available: Remove `retry`"),
        "{}",
        before.stdout
    );

    let safe = run(&dir, &["check", "--fix", "a.fz"]);
    let text = dir.read_file("a.fz");
    assert!(text.contains("    image: {uri:"), "{text}");
    assert!(text.contains("retry:"), "--fix deleted a key:\n{text}");
    // What is left is the unsafe fix; the run fails on nothing (a warning).
    assert_eq!(safe.code, 0, "{}{}", safe.stdout, safe.stderr);
    assert!(
        safe.stdout
            .contains("no fix with --fix alone, 1 with --unsafe-fixes"),
        "{}",
        safe.stdout
    );

    let all = run(&dir, &["check", "--fix", "--unsafe-fixes", "a.fz"]);
    assert_eq!(all.code, 0, "{}{}", all.stdout, all.stderr);
    let text = dir.read_file("a.fz");
    assert!(!text.contains("retry"), "{text}");
    assert!(text.contains("timeout: {execute: 1h}"), "{text}");
    assert!(all.stdout.contains("no problems found"), "{}", all.stdout);
}

#[test]
fn unsafe_fixes_without_fix_show_them_as_available_and_write_nothing() {
    let dir = scratch("unsafe-shown");
    dir.write_file("a.fz", SAFE_AND_UNSAFE);
    let r = run(&dir, &["check", "--unsafe-fixes", "a.fz"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stdout.contains("2 fixable with --fix --unsafe-fixes"),
        "{}",
        r.stdout
    );
    assert_eq!(dir.read_file("a.fz"), SAFE_AND_UNSAFE);
    // JSON says each fix's safety.
    let j = run(&dir, &["check", "--format", "json", "a.fz"]).json();
    let safety: Vec<(String, String)> = j["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter(|d| !d["fix"].is_null())
        .map(|d| {
            (
                d["rule"].as_str().unwrap_or("").to_owned(),
                d["fix"]["applicability"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        safety,
        [
            ("unknown-key".to_owned(), "safe".to_owned()),
            ("policy-retry-ignored".to_owned(), "unsafe".to_owned())
        ]
    );
}

/// The lines a unified diff removes and adds (without the `-`/`+`), headers left out.
fn diff_lines(diff: &str) -> (Vec<String>, Vec<String>) {
    let mut removed = Vec::new();
    let mut added = Vec::new();
    for line in diff.lines() {
        if line.starts_with("--- ") || line.starts_with("+++ ") {
            continue;
        }
        if let Some(l) = line.strip_prefix('-') {
            removed.push(l.to_owned());
        } else if let Some(l) = line.strip_prefix('+') {
            added.push(l.to_owned());
        }
    }
    (removed, added)
}

/// The lines of `a` that are not in `b`, in order.
fn minus(a: &str, b: &str) -> Vec<String> {
    let mut rest: Vec<&str> = b.lines().collect();
    let mut out = Vec::new();
    for l in a.lines() {
        match rest.iter().position(|r| *r == l) {
            Some(i) => {
                rest.remove(i);
            }
            None => out.push(l.to_owned()),
        }
    }
    out
}

#[test]
fn diff_shows_what_fix_would_write_and_writes_nothing() {
    for unsafe_fixes in [false, true] {
        let dir = scratch(if unsafe_fixes { "diff-unsafe" } else { "diff" });
        dir.write_file("a.fz", SAFE_AND_UNSAFE);
        dir.write_file("b.fz", SAFE_AND_UNSAFE);
        let mut args = vec!["check", "--diff", "a.fz"];
        let mut fix_args = vec!["check", "--fix", "b.fz"];
        if unsafe_fixes {
            args.push("--unsafe-fixes");
            fix_args.push("--unsafe-fixes");
        }
        let d = run(&dir, &args);
        assert_eq!(d.code, 1, "{}{}", d.stdout, d.stderr);
        assert_eq!(dir.read_file("a.fz"), SAFE_AND_UNSAFE, "--diff wrote the file");
        assert!(d.stdout.starts_with("--- a.fz\n+++ a.fz\n@@ "), "{}", d.stdout);
        // No diagnostics: only the diff.
        assert!(!d.stdout.contains("FZ010"), "{}", d.stdout);
        // The diff is what `--fix` (with the same flags) writes.
        let _ = run(&dir, &fix_args);
        let fixed = dir.read_file("b.fz");
        let (removed, added) = diff_lines(&d.stdout);
        assert_eq!(removed, minus(SAFE_AND_UNSAFE, &fixed), "{}", d.stdout);
        assert_eq!(added, minus(&fixed, SAFE_AND_UNSAFE), "{}", d.stdout);
        assert_eq!(
            removed.iter().any(|l| l.contains("retry")),
            unsafe_fixes,
            "{}",
            d.stdout
        );
    }
}

#[test]
fn diff_of_a_file_with_nothing_to_fix_is_empty_and_succeeds() {
    let dir = scratch("diff-clean");
    dir.write_file(
        "a.fz",
        "version: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [echo, hi]\n",
    );
    let d = run(&dir, &["check", "--diff", "a.fz"]);
    assert_eq!((d.code, d.stdout.as_str()), (0, ""), "{}", d.stderr);
    // Only unsafe fixes: `--diff` alone has nothing to show.
    dir.write_file(
        "b.fz",
        "version: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [echo, hi]\n    policy:\n      retry: {attempts: 2}\n",
    );
    let d = run(&dir, &["check", "--diff", "b.fz"]);
    assert_eq!((d.code, d.stdout.as_str()), (0, ""), "{}", d.stderr);
}
