//! The check shared by tests/exec.rs and tests/funcs.rs: a case file in the format of
//! `tests/cases/engine.txt` (read by `tests/cases/mod.rs`) rendered here and compared with
//! Go's recorded results.

#![allow(dead_code)]

#[path = "../cases/mod.rs"]
mod cases;

use std::collections::BTreeMap;
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

/// `scripts/go-template-render`, built with Debian's Go into the target directory; `Err`
/// (why) where Go or sprig is missing.
fn go_program() -> Result<std::path::PathBuf, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/go-template-render");
    if !Path::new("/usr/share/gocode/src/github.com/Masterminds/sprig").is_dir() {
        return Err("sprig (golang-github-masterminds-sprig-dev) is not installed".into());
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("exec-check-go");
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let bin = out.join(format!("go-template-render-{}", std::process::id()));
    let built = std::process::Command::new("go")
        .arg("build")
        .arg("-o")
        .arg(&bin)
        .arg(".")
        .current_dir(&src)
        .env("GO111MODULE", "off")
        .env("GOPATH", "/usr/share/gocode")
        .env("GOCACHE", out.join("cache"))
        .env("GOFLAGS", "")
        .output()
        .map_err(|e| format!("go build: {e}"))?;
    if !built.status.success() {
        return Err(format!(
            "go build of {} failed: {}",
            src.display(),
            String::from_utf8_lossy(&built.stderr)
        ));
    }
    Ok(bin)
}

/// Renders every case of `{stem}.txt` with Go now and compares with `{stem}.go.jsonl`: the
/// recorded expectations are Go's. With `FUZZ_UPDATE_GO_EXPECTED` set, rewrites the record.
/// Without Go, prints why and passes, unless `FUZZ_REQUIRE_SYSTEM_TESTS` is set.
pub fn check_recorded_against_go(stem: &str) {
    let bin = match go_program() {
        Ok(b) => b,
        Err(why) => {
            assert!(
                std::env::var_os("FUZZ_REQUIRE_SYSTEM_TESTS").is_none(),
                "FUZZ_REQUIRE_SYSTEM_TESTS is set but Go cannot run: {why}"
            );
            eprintln!("skipped: {why}");
            return;
        }
    };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let cases_path = dir.join(format!("{stem}.txt"));
    let cases = cases::load_file(&cases_path);
    let mut input = String::new();
    for c in &cases {
        let mut r = serde_json::json!({
            "id": c.name, "name": c.name, "template": c.template, "data": c.data,
        });
        if let Some(s) = c.seed {
            r["seed"] = serde_json::json!(s);
        }
        if let Some(n) = c.now {
            r["now"] = serde_json::json!(n);
        }
        input.push_str(&r.to_string());
        input.push('\n');
    }
    let mut child = std::process::Command::new(&bin)
        .arg("-batch")
        .env_clear()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("go-template-render starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes())
    });
    let out = child.wait_with_output().expect("go-template-render ends");
    writer
        .join()
        .expect("writer")
        .expect("write to go-template-render");
    let _ = std::fs::remove_file(&bin);
    assert!(out.status.success(), "go-template-render failed");
    let now = String::from_utf8(out.stdout).expect("UTF-8 from go-template-render");
    let results_path = dir.join(format!("{stem}.go.jsonl"));
    if std::env::var_os("FUZZ_UPDATE_GO_EXPECTED").is_some() {
        std::fs::write(&results_path, &now).expect("write the record");
        return;
    }
    let recorded = std::fs::read_to_string(&results_path).unwrap_or_default();
    let file = results_path.display().to_string();
    let (now, recorded): (BTreeMap<String, Json>, _) = (
        cases::json_lines_by_id(&file, &now),
        cases::json_lines_by_id(&file, &recorded),
    );
    let differ: Vec<String> = now
        .iter()
        .filter(|(id, j)| recorded.get(*id) != Some(j))
        .map(|(id, j)| format!("{id}: Go now {j}, recorded {:?}", recorded.get(id)))
        .collect();
    assert!(
        differ.is_empty() && now.len() == recorded.len(),
        "{stem}.go.jsonl is not what Go prints now (FUZZ_UPDATE_GO_EXPECTED=1 rewrites it):\n{}",
        differ.join("\n")
    );
}
