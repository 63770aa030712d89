//! The launch corpus (tests/launch_corpus/): real launch scripts taken from public training
//! repositories, each with the source it came from (`NN-repo-name.sh`), put into a Fuzzfile job
//! as written (`NN-repo-name.fz`) and, where natural, with one realistic misconfiguration
//! (`NN-repo-name.bad.fz`). `expected.tsv` lists what the launcher, GPU and NCCL rules must
//! report on each Fuzzfile, reasoned from how bash, torchrun and Fuzzball behave (not from what
//! the checker says): `file<TAB>rule<TAB>line<TAB>reason`. A Fuzzfile with no row must produce
//! no finding from those rules.
//!
//! - `every_script_has_its_source_and_its_fuzzfile`: the corpus is complete and traceable.
//! - `expected_findings_are_well_formed`: every row names a corpus file, a launch rule and a
//!   line of that file; every misconfiguration is expected to be found.
//! - `launch_rules_agree_with_expected_findings`: the comparison (ignored until the launch
//!   semantics layer lands; run it with `--ignored` to list the disagreements).
//! - `launch_corpus_diagnostics`: every diagnostic on every corpus file, in a reviewed snapshot.

use fuzzfile_check::analyze_bytes;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The rules this corpus is about: launches, GPUs and NCCL. Findings of other rules (unknown
/// keys, cluster-profile hints) are in the snapshot but not compared.
const LAUNCH_RULES: &[&str] = &[
    "torchrun-nproc-mismatch",
    "torchrun-nnodes-mismatch",
    "torchrun-standalone-multinode",
    "torchrun-missing-node-rank",
    "torchrun-missing-master-addr",
    "torchrun-rdzv-incomplete",
    "torch-distributed-launch-deprecated",
    "launcher-double-wrap",
    "mpi-slots-not-gpus",
    "gpu-request-missing",
];

fn is_launch_rule(name: &str) -> bool {
    LAUNCH_RULES.contains(&name) || name.starts_with("nccl-")
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/launch_corpus")
}

/// The corpus files with this suffix, sorted by name.
fn names(suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir())
        .expect("tests/launch_corpus is readable")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// `NN-repo-name` of a corpus file name (`NN-repo-name.bad.fz` → `NN-repo-name`).
fn stem(name: &str) -> &str {
    let n = name
        .strip_suffix(".fz")
        .or_else(|| name.strip_suffix(".sh"))
        .unwrap_or(name);
    n.strip_suffix(".bad").unwrap_or(n)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

struct Row {
    file: String,
    rule: String,
    line: usize,
    reason: String,
    /// 1-based line of the row in expected.tsv.
    at: usize,
}

fn expected() -> Vec<Row> {
    let text = read("expected.tsv");
    let mut rows = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.is_empty() || l.starts_with('#') || (i == 0 && l.starts_with("file\t")) {
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        assert_eq!(
            f.len(),
            4,
            "expected.tsv:{}: want 4 tab-separated columns (file, rule, line, reason), got {}",
            i + 1,
            f.len()
        );
        let line = f[2]
            .parse()
            .unwrap_or_else(|_| panic!("expected.tsv:{}: line `{}` is not a number", i + 1, f[2]));
        rows.push(Row {
            file: f[0].to_owned(),
            rule: f[1].to_owned(),
            line,
            reason: f[3].to_owned(),
            at: i + 1,
        });
    }
    rows
}

/// The `# key: value` lines of a script's source header.
fn header(text: &str) -> BTreeMap<String, String> {
    let mut h = BTreeMap::new();
    for l in text.lines() {
        if l == "# ---- verbatim from here ----" {
            h.insert("verbatim".to_owned(), String::new());
            break;
        }
        if let Some((k, v)) = l.strip_prefix("# ").and_then(|r| r.split_once(": ")) {
            h.insert(k.to_owned(), v.trim().to_owned());
        }
    }
    h
}

#[test]
fn every_script_has_its_source_and_its_fuzzfile() {
    let scripts = names(".sh");
    let fuzzfiles = names(".fz");
    assert!(
        scripts.len() >= 40,
        "{} scripts, want at least 40",
        scripts.len()
    );
    let mut repos = BTreeSet::new();
    for s in &scripts {
        let h = header(&read(s));
        for key in [
            "launch-corpus source",
            "repository",
            "path",
            "commit",
            "licence",
            "verbatim",
        ] {
            assert!(
                h.contains_key(key),
                "{s}: the source header has no `{key}` line"
            );
        }
        let repo = &h["repository"];
        assert!(
            repo.split('/').count() == 2 && !repo.contains(' '),
            "{s}: repository `{repo}` is not owner/name"
        );
        let commit = &h["commit"];
        assert!(
            commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
            "{s}: commit `{commit}` is not a full hash"
        );
        assert!(
            h["launch-corpus source"]
                == format!("https://github.com/{repo}/blob/{commit}/{}", h["path"]),
            "{s}: the source URL does not match repository, commit and path"
        );
        repos.insert(repo.clone());
        let fz = format!("{}.fz", stem(s));
        assert!(fuzzfiles.contains(&fz), "{s}: no {fz}");
    }
    assert!(
        repos.len() >= 8,
        "scripts from {} repositories, want at least 8",
        repos.len()
    );
    for f in &fuzzfiles {
        let sh = format!("{}.sh", stem(f));
        assert!(
            scripts.contains(&sh),
            "{f}: no script {sh} it was made from"
        );
        if f.ends_with(".bad.fz") {
            let good = format!("{}.fz", stem(f));
            assert!(
                fuzzfiles.contains(&good),
                "{f}: a misconfiguration without its correct variant {good}"
            );
        }
        let text = read(f);
        assert!(
            text.starts_with('#'),
            "{f}: starts with no comment saying what it runs"
        );
        assert!(text.contains("version: v4"), "{f}: not a v4 Fuzzfile");
    }
}

#[test]
fn expected_findings_are_well_formed() {
    let fuzzfiles: BTreeSet<String> = names(".fz").into_iter().collect();
    let mut seen = BTreeSet::new();
    let rows = expected();
    for r in &rows {
        let at = format!("expected.tsv:{}", r.at);
        assert!(
            fuzzfiles.contains(&r.file),
            "{at}: no corpus file {}",
            r.file
        );
        assert!(
            is_launch_rule(&r.rule),
            "{at}: `{}` is not a launch, GPU or NCCL rule",
            r.rule
        );
        assert!(
            fuzzfile_check::Rule::from_name(&r.rule).is_some(),
            "{at}: no rule named `{}`",
            r.rule
        );
        let lines = read(&r.file).lines().count();
        assert!(
            r.line >= 1 && r.line <= lines,
            "{at}: line {} is outside {} ({lines} lines)",
            r.line,
            r.file
        );
        assert!(r.reason.len() > 20, "{at}: the reason says too little");
        assert!(
            seen.insert((r.file.clone(), r.rule.clone())),
            "{at}: {} {} listed twice",
            r.file,
            r.rule
        );
    }
    for f in fuzzfiles.iter().filter(|f| f.ends_with(".bad.fz")) {
        assert!(
            rows.iter().any(|r| &r.file == f),
            "{f}: a misconfiguration with no expected finding"
        );
    }
}

#[test]
#[ignore = "the launch semantics layer lands later"]
fn launch_rules_agree_with_expected_findings() {
    let rows = expected();
    let mut missing = Vec::new();
    let mut unexpected = Vec::new();
    let mut agree = 0;
    for f in names(".fz") {
        let a = analyze_bytes(read(&f).as_bytes());
        let want: BTreeMap<&str, &Row> = rows
            .iter()
            .filter(|r| r.file == f)
            .map(|r| (r.rule.as_str(), r))
            .collect();
        let mut got: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for d in &a.diagnostics {
            if is_launch_rule(d.rule.name()) {
                let p = a.line_col(d.range.start);
                got.entry(d.rule.name())
                    .or_default()
                    .push(format!("line {}: {}", p.line, d.message));
            }
        }
        for (rule, r) in &want {
            if got.contains_key(rule) {
                agree += 1;
            } else {
                missing.push(format!(
                    "{f}: {rule} (expected at line {}: {})",
                    r.line, r.reason
                ));
            }
        }
        for (rule, found) in &got {
            if !want.contains_key(rule) {
                unexpected.push(format!("{f}: {rule} ({})", found.join("; ")));
            }
        }
    }
    assert!(
        missing.is_empty() && unexpected.is_empty(),
        "{agree} expected findings reported; {} missing, {} unexpected\n\nmissing:\n  {}\n\nunexpected:\n  {}\n",
        missing.len(),
        unexpected.len(),
        missing.join("\n  "),
        unexpected.join("\n  ")
    );
}

#[test]
fn launch_corpus_diagnostics() {
    let mut report = String::new();
    for f in names(".fz") {
        let a = analyze_bytes(read(&f).as_bytes());
        let _ = writeln!(report, "{f}");
        for d in &a.diagnostics {
            let p = a.line_col(d.range.start);
            let _ = writeln!(
                report,
                "  {}:{} {} {}: {}",
                p.line,
                p.column,
                d.severity,
                d.rule.name(),
                d.message
            );
        }
    }
    insta::assert_snapshot!("launch_corpus_diagnostics", report);
}
