//! Launcher facts are derived once, in the semantics layer (`src/semantics/`): rules, the
//! language server, the plan and the runner read `Analysis::semantics`. This test fails when
//! any of them evaluates or parses shell text itself. (The launcher argument grammars, the
//! effective environment and the `PET_*` fallbacks are private to `semantics/`, so a second
//! derivation of those does not compile.)

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// (pattern, the only files allowed to contain it, why)
const FORBIDDEN: &[(&str, &[&str], &str)] = &[
    (
        "eval::evaluate",
        &["crates/fuzzfile_check/src/semantics/mod.rs"],
        "shell is evaluated once, by the semantics layer",
    ),
    (
        "fuzzfile_shell::eval",
        &["crates/fuzzfile_check/src/semantics/mod.rs"],
        "shell is evaluated once, by the semantics layer",
    ),
    (
        "fuzzfile_shell::parse",
        // Highlighting of shell words as written is not a launcher fact.
        &["crates/fuzzfile_server/src/semantic.rs"],
        "launch lines are read from the semantics layer, not parsed again",
    ),
];

#[test]
fn launcher_facts_are_derived_only_in_the_semantics_layer() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in [
        "crates/fuzzfile_check/src",
        "crates/fuzzfile_server/src",
        "crates/fuzzfile_plan/src",
        "crates/fuzz_runner/src",
        "crates/fuzzlint/src",
        "crates/fuzz/src",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 40, "the source tree was not found: {root:?}");
    let mut found = Vec::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap_or(f)
            .to_string_lossy()
            .replace('\\', "/");
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for (pattern, allowed, why) in FORBIDDEN {
            if allowed.contains(&rel.as_str()) {
                continue;
            }
            for (i, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if code.contains(pattern) {
                    found.push(format!("{rel}:{}: `{pattern}`: {why}", i + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// The test above looks at real code: a line that calls the evaluator is caught.
#[test]
fn the_scan_sees_a_call() {
    let line = "    let e = fuzzfile_shell::eval::evaluate(id, &s, &o);";
    assert!(FORBIDDEN
        .iter()
        .any(|(p, _, _)| line.split("//").next().unwrap_or("").contains(p)));
}
