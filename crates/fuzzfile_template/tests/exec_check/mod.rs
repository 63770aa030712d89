//! The check shared by tests/exec.rs and tests/funcs.rs: a case file in the format of
//! `tests/cases/engine.txt` (read by `tests/cases/mod.rs`) rendered here and compared with
//! Go's recorded results.

#![allow(dead_code)]

#[path = "../cases/mod.rs"]
mod cases;

use std::path::Path;

use cases::{data_value, GoResult};
use fuzzfile_template::{parse, render, ExecErrorKind, RenderOptions, Value};
use serde_json::Value as Json;

/// Renders every case and compares with Go's recorded results; returns the mismatches.
pub fn check(cases_path: &Path, results_path: &Path) -> (usize, Vec<String>) {
    let file = cases_path.display().to_string();
    let cases = cases::load_file(cases_path);
    assert!(
        results_path.is_file(),
        "{}: no such file",
        results_path.display()
    );
    let go = cases::go_results(results_path);
    let mut bad = Vec::new();
    let mut names = std::collections::BTreeSet::new();
    for c in &cases {
        assert!(
            names.insert(c.name.clone()),
            "{file}:{}: duplicate case {:?}",
            c.line,
            c.name
        );
        let Some(g) = go.get(&c.name) else {
            bad.push(format!(
                "{file}:{}: {:?}: no Go result recorded",
                c.line, c.name
            ));
            continue;
        };
        let mut opts = RenderOptions::default();
        if let Some(s) = c.seed {
            opts.seed = s;
        }
        if let Some(n) = c.now {
            opts.now_unix_seconds = n;
        }
        let ours = parse(&c.name, &c.template)
            .map_err(|e| format!("parse: {}", e[0].message))
            .and_then(|t| {
                render(&t, &data_value(&c.data), &opts)
                    .map_err(|e| format!("exec {:?}: {}", e.kind, e.message))
            });
        let at = format!("{file}:{}: {:?}", c.line, c.name);
        let (phase, error, cause, fail) = match g {
            GoResult::Output(want) => {
                match &ours {
                    Ok(r) if r.text == *want => {}
                    Ok(r) => bad.push(format!("{at}: Go printed {want:?}, here {:?}", r.text)),
                    Err(e) => bad.push(format!("{at}: Go printed {want:?}, here {e}")),
                }
                continue;
            }
            GoResult::Error {
                phase,
                error,
                cause,
                fail,
            } => (phase.as_str(), error, cause.as_str(), fail.as_deref()),
        };
        let ok = match (&ours, phase) {
            (Err(e), "parse") => e.starts_with("parse:"),
            (Err(e), "exec") => match fail {
                Some(m) => *e == format!("exec {:?}: {m}", ExecErrorKind::Fail),
                None => e.starts_with("exec") && e.split_once(": ").map(|x| x.1) == Some(cause),
            },
            _ => false,
        };
        if !ok {
            bad.push(format!(
                "{at}: Go: {phase} error {error:?}; here {:?}",
                ours.map(|r| r.text)
            ));
        }
    }
    (cases.len(), bad)
}

pub fn check_pair(stem: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let (n, bad) = check(
        &dir.join(format!("{stem}.txt")),
        &dir.join(format!("{stem}.go.jsonl")),
    );
    assert!(n > 0, "{stem}.txt has no case");
    assert!(
        bad.is_empty(),
        "{} of {n} cases differ from Go:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The templates of a case file with their data (for checks that need no Go result).
pub fn templates(cases_path: &Path) -> Vec<(String, Value)> {
    cases::load_file(cases_path)
        .into_iter()
        .map(|c| (c.template, data_value(&c.data)))
        .collect()
}

/// Renders every case of `{stem}.txt` with Go now and compares with `{stem}.go.jsonl`: the
/// recorded expectations are Go's. With `FUZZ_UPDATE_GO_EXPECTED` set, rewrites the record.
/// Without Go, prints why and passes, unless `FUZZ_REQUIRE_SYSTEM_TESTS` is set.
pub fn check_recorded_against_go(stem: &str) {
    let Some(bin) = cases::go::go_or_skip() else {
        return;
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let cases = cases::load_file(&dir.join(format!("{stem}.txt")));
    // Each case under its own name (Go's messages name the template).
    let requests: Vec<Json> = cases
        .iter()
        .map(|c| cases::go::request(&c.name, &c.template, &c.data, c.seed, c.now))
        .collect();
    let now = cases::go::run_go(bin, &requests, &[]);
    let results_path = dir.join(format!("{stem}.go.jsonl"));
    if std::env::var_os("FUZZ_UPDATE_GO_EXPECTED").is_some() {
        let mut text = String::new();
        for (c, r) in cases.iter().zip(&now) {
            text.push_str(&r.to_json(&c.name).to_string());
            text.push('\n');
        }
        std::fs::write(&results_path, text).expect("write the record");
        return;
    }
    let recorded = cases::go_results(&results_path);
    let differ: Vec<String> = cases
        .iter()
        .zip(&now)
        .filter(|(c, r)| recorded.get(&c.name) != Some(*r))
        .map(|(c, r)| {
            format!(
                "{}: Go now {r:?}, recorded {:?}",
                c.name,
                recorded.get(&c.name)
            )
        })
        .collect();
    assert!(
        differ.is_empty() && now.len() == recorded.len(),
        "{stem}.go.jsonl is not what Go prints now (FUZZ_UPDATE_GO_EXPECTED=1 rewrites it):\n{}",
        differ.join("\n")
    );
}
