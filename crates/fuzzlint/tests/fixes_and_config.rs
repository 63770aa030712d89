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
        before
            .stdout
            .contains("unsafe fix available: Remove `retry`"),
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
        assert_eq!(
            dir.read_file("a.fz"),
            SAFE_AND_UNSAFE,
            "--diff wrote the file"
        );
        assert!(
            d.stdout.starts_with("--- a.fz\n+++ a.fz\n@@ "),
            "{}",
            d.stdout
        );
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

/// What bash's completion function offers for `words` (the last one being completed), with
/// the script of `fuzzlint completions bash` sourced: `complete -p` must name the function.
fn bash_completes(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let program = format!(
        "source {script}\n\
         spec=$(complete -p fuzzlint) || exit 3\n\
         fn=$(printf '%s\\n' \"$spec\" | sed -n 's/.*-F \\([^ ]*\\).*/\\1/p')\n\
         COMP_WORDS=({line}); COMP_CWORD={cword}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}\n\
         \"$fn\" fuzzlint \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        script = script.display(),
        cword = words.len() - 1,
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(program)
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn bash_completions_are_valid_and_complete_check_options() {
    let dir = scratch("completions-bash");
    let r = run(&dir, &["completions", "bash"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let script = dir.write_file("fuzzlint.bash", &r.stdout);
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&script)
        .status()
        .expect("run bash -n");
    assert!(syntax.success(), "bash -n rejects the script");
    let offered = bash_completes(&script, &["fuzzlint", "check", "--out"]);
    assert!(
        offered.iter().any(|o| o == "--output-format"),
        "{offered:?}"
    );
    assert!(
        offered.iter().all(|o| o.starts_with("--out")),
        "{offered:?}"
    );
    let offered = bash_completes(&script, &["fuzzlint", "check", "--unsafe"]);
    assert_eq!(offered, ["--unsafe-fixes"]);
    let offered = bash_completes(&script, &["fuzzlint", "comp"]);
    assert_eq!(offered, ["completions"]);
}

#[test]
fn zsh_fish_elvish_and_powershell_completions_name_the_subcommands() {
    let dir = scratch("completions-other");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let r = run(&dir, &["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        for sub in [
            "check",
            "rules",
            "schema",
            "completions",
            "output-format",
            "unsafe-fixes",
        ] {
            assert!(r.stdout.contains(sub), "{shell}: `{sub}` missing");
        }
    }
    let r = run(&dir, &["completions", "tcsh"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("possible values"), "{}", r.stderr);
}

/// A job with `policy.retry` (policy-retry-ignored, a warning by default).
const RETRY: &str = "version: v4
jobs:
  a:
    image: {uri: docker://alpine:3.20}
    command: [echo, hi]
    policy:
      retry: {attempts: 2}
";

/// `(file, rule, severity)` of each finding of a JSON run, and the number of files checked.
fn findings(r: &BinaryRun) -> (u64, Vec<(String, String, String)>) {
    let j = r.json();
    let list = j["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap_or("").to_owned(),
                d["rule"].as_str().unwrap_or("").to_owned(),
                d["severity"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    (j["files"].as_u64().unwrap_or(0), list)
}

fn finding(file: &str, rule: &str, severity: &str) -> (String, String, String) {
    (file.to_owned(), rule.to_owned(), severity.to_owned())
}

#[test]
fn a_nested_config_extends_its_parent() {
    let dir = scratch("extend");
    dir.write_file(
        "fuzzlint.toml",
        "fail-on = \"warning\"\nignore = [\"legacy-version\"]\n[severity]\npolicy-retry-ignored = \"error\"\nunknown-key = \"warning\"\n",
    );
    dir.write_file(
        "team/fuzzlint.toml",
        "extend = \"../fuzzlint.toml\"\n[severity]\nunknown-key = \"info\"\n",
    );
    let typo = RETRY.replace("command:", "Command:");
    dir.write_file("team/a.fz", &typo);
    let (_, found) = findings(&run(&dir, &["check", "--format", "json", "team/a.fz"]));
    // The parent's severity of policy-retry-ignored is inherited; the child's of unknown-key
    // wins over the parent's.
    assert!(
        found.contains(&finding("team/a.fz", "policy-retry-ignored", "error")),
        "{found:?}"
    );
    assert!(
        found.contains(&finding("team/a.fz", "unknown-key", "info")),
        "{found:?}"
    );
    // The parent's fail-on (warning) is inherited: an error fails, as it would anyway; with
    // only the child's info finding left, `fail-on = "warning"` of the parent still applies.
    dir.write_file(
        "team/b.fz",
        RETRY.replace(
            "    policy:\n      retry: {attempts: 2}\n",
            "    Cwd: /tmp\n",
        ),
    );
    let r = run(&dir, &["check", "team/b.fz"]);
    assert_eq!(r.code, 0, "an info finding fails nothing: {}", r.stdout);
    dir.write_file(
        "team/fuzzlint.toml",
        "extend = \"../fuzzlint.toml\"\n[severity]\nunknown-key = \"warning\"\n",
    );
    let r = run(&dir, &["check", "team/b.fz"]);
    assert_eq!(r.code, 1, "the parent's fail-on = warning: {}", r.stdout);
    // Without `extend`, the nested config replaces its parent.
    dir.write_file("team/fuzzlint.toml", "[severity]\nunknown-key = \"info\"\n");
    let (_, found) = findings(&run(&dir, &["check", "--format", "json", "team/a.fz"]));
    assert!(
        found.contains(&finding("team/a.fz", "policy-retry-ignored", "warning")),
        "{found:?}"
    );
    // A child's extend-select adds back what its parent ignored.
    dir.write_file("team/v1.fz", "version: v1\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [echo, hi]\n");
    dir.write_file("team/fuzzlint.toml", "extend = \"../fuzzlint.toml\"\n");
    let (_, found) = findings(&run(&dir, &["check", "--format", "json", "team/v1.fz"]));
    assert!(!found.iter().any(|f| f.1 == "legacy-version"), "{found:?}");
    dir.write_file(
        "team/fuzzlint.toml",
        "extend = \"../fuzzlint.toml\"\nextend-select = [\"FZ003\"]\n",
    );
    let (_, found) = findings(&run(&dir, &["check", "--format", "json", "team/v1.fz"]));
    assert!(found.iter().any(|f| f.1 == "legacy-version"), "{found:?}");
}

#[test]
fn extend_errors_name_the_place_and_the_chain() {
    let dir = scratch("extend-errors");
    dir.write_file("a.fz", RETRY);
    dir.write_file("fuzzlint.toml", "extend = \"b/fuzzlint.toml\"\n");
    dir.write_file(
        "b/fuzzlint.toml",
        "fail-on = \"info\"\nextend = \"../fuzzlint.toml\"\n",
    );
    let r = run(&dir, &["check", "a.fz"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(
            "b/fuzzlint.toml:2:10: `extend` makes a cycle: fuzzlint.toml → b/fuzzlint.toml → fuzzlint.toml"
        ),
        "{}",
        r.stderr
    );
    dir.write_file(
        "fuzzlint.toml",
        "select = [\"FZ0\"]\nextend = \"missing.toml\"\n",
    );
    let r = run(&dir, &["check", "a.fz"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("fuzzlint.toml:2:10: `extend`: cannot read missing.toml"),
        "{}",
        r.stderr
    );
    // An unknown key says the closest one.
    dir.write_file("fuzzlint.toml", "extend-exlude = [\"x\"]\n");
    let r = run(&dir, &["check", "a.fz"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .starts_with("error: fuzzlint.toml:1:1: unknown field `extend-exlude`")
            && r.stderr.contains("(did you mean `extend-exclude`?)"),
        "{}",
        r.stderr
    );
    // A rule of per-file-ignores that does not exist: where, and the closest name.
    dir.write_file(
        "fuzzlint.toml",
        "[per-file-ignores]\n\"*.fz\" = [\"policy-retry-ignore\"]\n",
    );
    let r = run(&dir, &["check", "a.fz"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("fuzzlint.toml:2:11: `per-file-ignores`: unknown rule `policy-retry-ignore` (did you mean `policy-retry-ignored`?)"),
        "{}",
        r.stderr
    );
}

#[test]
fn exclude_and_extend_exclude_apply_to_walks_and_force_exclude_to_named_files() {
    let dir = scratch("exclude");
    for f in [
        "a.fz",
        "vendor/v.fz",
        "sub/s.fz",
        "sub/gen/g.fz",
        "node_modules/n.fz",
    ] {
        dir.write_file(f, RETRY);
    }
    let files = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["check", "--format", "json", "--fail-on", "never"];
        all.extend_from_slice(args);
        let mut f: Vec<String> = findings(&run(&dir, &all))
            .1
            .into_iter()
            .map(|f| f.0)
            .collect();
        f.sort();
        f
    };
    // The default excludes skip node_modules.
    assert_eq!(
        files(&["."]),
        ["a.fz", "sub/gen/g.fz", "sub/s.fz", "vendor/v.fz"]
    );
    // extend-exclude adds to the defaults, relative to the config's directory, also in a
    // nested config that extends it.
    dir.write_file("fuzzlint.toml", "extend-exclude = [\"vendor/\"]\n");
    dir.write_file(
        "sub/fuzzlint.toml",
        "extend = \"../fuzzlint.toml\"\nextend-exclude = [\"/gen\"]\n",
    );
    assert_eq!(files(&["."]), ["a.fz", "sub/s.fz"]);
    // exclude replaces the defaults.
    dir.write_file("fuzzlint.toml", "exclude = [\"vendor\"]\n");
    dir.write_file("sub/fuzzlint.toml", "extend = \"../fuzzlint.toml\"\n");
    assert_eq!(
        files(&["."]),
        ["a.fz", "node_modules/n.fz", "sub/gen/g.fz", "sub/s.fz"]
    );
    // A named file is checked anyway, unless --force-exclude.
    assert_eq!(files(&["vendor/v.fz", "a.fz"]), ["a.fz", "vendor/v.fz"]);
    assert_eq!(files(&["--force-exclude", "vendor/v.fz", "a.fz"]), ["a.fz"]);
}

#[test]
fn per_file_ignores_turn_rules_off_for_matching_files() {
    let dir = scratch("per-file-ignores");
    // unknown-key (`Cwd`) and policy-retry-ignored.
    let typo = format!("{RETRY}    Cwd: /tmp\n");
    for f in ["a.fz", "legacy/old.fz", "legacy/deep/older.fz", "team/t.fz"] {
        dir.write_file(f, &typo);
    }
    dir.write_file(
        "fuzzlint.toml",
        "[per-file-ignores]\n\"legacy/**\" = [\"policy-retry-ignored\", \"FZ01\"]\n\"a.fz\" = [\"FZ032\"]\n",
    );
    dir.write_file(
        "team/fuzzlint.toml",
        "extend = \"../fuzzlint.toml\"\n[per-file-ignores]\n\"*.fz\" = [\"unknown-key\"]\n",
    );
    let (n, found) = findings(&run(
        &dir,
        &["check", "--format", "json", "--fail-on", "never", "."],
    ));
    assert_eq!(n, 4);
    let mut rules: Vec<(String, String)> = found.into_iter().map(|f| (f.0, f.1)).collect();
    rules.sort();
    assert_eq!(
        rules,
        [
            ("a.fz".to_owned(), "unknown-key".to_owned()),
            ("team/t.fz".to_owned(), "policy-retry-ignored".to_owned()),
        ]
    );
}

#[test]
fn show_files_statistics_quiet_and_verbose() {
    let dir = scratch("show-files");
    let typo = format!("{RETRY}    Cwd: /tmp\n");
    dir.write_file("a.fz", &typo);
    dir.write_file("team/b.fz", &typo);
    dir.write_file(
        "team/fuzzlint.toml",
        "[per-file-ignores]\n\"b.fz\" = [\"unknown-key\"]\n",
    );
    dir.write_file("vendor/c.fz", RETRY);
    dir.write_file("fuzzlint.toml", "extend-exclude = [\"vendor\"]\n");
    dir.write_file(
        "team/fuzzlint.toml",
        "extend = \"../fuzzlint.toml\"\n[per-file-ignores]\n\"b.fz\" = [\"unknown-key\"]\n",
    );
    let r = run(&dir, &["check", "--show-files", "."]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "a.fz\tfuzzlint.toml\n\
         team/b.fz\tteam/fuzzlint.toml (extends fuzzlint.toml)\tper-file-ignores: b.fz (team/fuzzlint.toml)\n"
    );

    // Statistics: most findings first, `[*]` for a safe fix, `[-]` for unsafe ones only.
    dir.write_file("c.fz", typo.replace("Cwd", "Image"));
    let r = run(&dir, &["check", "--statistics", "."]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let rows: Vec<Vec<&str>> = r.stdout.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(
        rows,
        [
            vec!["3", "FZ032", "[-] policy-retry-ignored"],
            vec!["2", "FZ010", "[*] unknown-key"],
        ],
        "{}",
        r.stdout
    );
    let j = run(&dir, &["check", "--statistics", "--format", "json", "."]).json();
    assert_eq!(j[1]["code"], "FZ010");
    assert_eq!(j[1]["count"], 2);
    assert_eq!(j[1]["fixable"], 1);

    // Quiet: the findings, nothing else; verbose: configs and time on standard error.
    let normal = run(&dir, &["check", "--color", "never", "a.fz"]);
    let quiet = run(&dir, &["check", "-q", "--color", "never", "a.fz"]);
    assert_eq!(quiet.code, normal.code);
    assert!(
        normal.stdout.contains("1 file checked"),
        "{}",
        normal.stdout
    );
    assert!(
        !quiet.stdout.contains("checked") && !quiet.stdout.contains("fixable"),
        "{}",
        quiet.stdout
    );
    assert!(
        quiet.stdout.contains("unknown key `Cwd`"),
        "{}",
        quiet.stdout
    );
    assert_eq!(quiet.stderr, "");
    let verbose = run(&dir, &["check", "-v", "--format", "json", "."]);
    assert!(
        verbose
            .stderr
            .contains("fuzzlint: config fuzzlint.toml: 2 files"),
        "{}",
        verbose.stderr
    );
    assert!(
        verbose
            .stderr
            .contains("fuzzlint: config team/fuzzlint.toml (extends fuzzlint.toml): 1 file"),
        "{}",
        verbose.stderr
    );
    assert!(
        verbose.stderr.contains("fuzzlint: checked 3 files in "),
        "{}",
        verbose.stderr
    );
    let _ = verbose.json();
}
