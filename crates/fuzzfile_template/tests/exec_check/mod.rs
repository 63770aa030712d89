//! The check shared by tests/exec.rs and tests/funcs.rs: a case file in the format of
//! `tests/cases/engine.txt` rendered here and compared with Go's recorded results.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;

use fuzzfile_template::{parse, render, ExecErrorKind, RenderOptions, Value};
use serde_json::Value as Json;

struct Case {
    name: String,
    line: usize,
    template: String,
    data: Json,
    seed: Option<u64>,
    now: Option<i64>,
}

/// The case format of `tests/cases/engine.txt`.
fn parse_cases(file: &str, text: &str) -> Vec<Case> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut cases = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(name) = lines[i].strip_prefix("### ") else {
            i += 1;
            continue;
        };
        let line = i + 1;
        let mut case = Case {
            name: name.trim().to_string(),
            line,
            template: String::new(),
            data: Json::Object(Default::default()),
            seed: None,
            now: None,
        };
        i += 1;
        while i < lines.len() && lines[i].trim_end() != "---" {
            let l = lines[i].trim_end();
            if let Some(d) = l.strip_prefix("data:") {
                case.data = serde_json::from_str(d.trim())
                    .unwrap_or_else(|e| panic!("{file}:{}: data: {e}", i + 1));
            } else if let Some(s) = l.strip_prefix("seed:") {
                case.seed = Some(s.trim().parse().expect("seed"));
            } else if let Some(s) = l.strip_prefix("now:") {
                case.now = Some(s.trim().parse().expect("now"));
            } else if !l.is_empty() {
                panic!("{file}:{}: expected data:, seed:, now: or ---", i + 1);
            }
            i += 1;
        }
        assert!(i < lines.len(), "{file}:{line}: case without ---");
        i += 1;
        let start = i;
        while i < lines.len() && !lines[i].starts_with("### ") {
            i += 1;
        }
        let mut template: String = lines[start..i].concat();
        if template.ends_with('\n') {
            template.pop();
        }
        case.template = template;
        cases.push(case);
    }
    cases
}

/// The data typing of `scripts/go-template-render`: an integer of 0 or more is a `uint64`, a
/// negative one an `int`, another number a `float64`; `{"$int": n}`, `{"$uint": n}`,
/// `{"$float": n}`, `{"$time": unix}` force a type.
fn data_value(j: &Json) -> Value {
    match j {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => {
            if let Some(u) = n.as_u64() {
                Value::Uint(u)
            } else if let Some(i) = n.as_i64() {
                Value::Int(i)
            } else {
                Value::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Json::String(s) => Value::String(s.clone()),
        Json::Array(a) => Value::List(a.iter().map(data_value).collect()),
        Json::Object(m) => {
            if m.len() == 1 {
                if let Some((k, Json::Number(n))) = m.iter().next() {
                    match k.as_str() {
                        "$int" => return Value::Int(n.as_i64().unwrap_or(0)),
                        "$uint" => return Value::Uint(n.as_u64().unwrap_or(0)),
                        "$float" => return Value::Float(n.as_f64().unwrap_or(0.0)),
                        "$time" => {
                            return Value::Time {
                                unix_seconds: n.as_i64().unwrap_or(0),
                                nanos: 0,
                            }
                        }
                        _ => {}
                    }
                }
            }
            Value::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), data_value(v)))
                    .collect::<BTreeMap<_, _>>(),
            )
        }
    }
}

/// Renders every case and compares with Go's recorded results; returns the mismatches.
pub fn check(cases_path: &Path, results_path: &Path) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(cases_path)
        .unwrap_or_else(|e| panic!("{}: {e}", cases_path.display()));
    let file = cases_path.display().to_string();
    let cases = parse_cases(&file, &text);
    let results = std::fs::read_to_string(results_path)
        .unwrap_or_else(|e| panic!("{}: {e}", results_path.display()));
    let go: BTreeMap<String, Json> = results
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let j: Json = serde_json::from_str(l).expect("a JSON line");
            (j["id"].as_str().unwrap_or("").to_string(), j)
        })
        .collect();
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
        if g["ok"].as_bool() == Some(true) {
            let want = g["output"].as_str().unwrap_or("");
            match &ours {
                Ok(r) if r.text == want => {}
                Ok(r) => bad.push(format!("{at}: Go printed {want:?}, here {:?}", r.text)),
                Err(e) => bad.push(format!("{at}: Go printed {want:?}, here {e}")),
            }
            continue;
        }
        let phase = g["phase"].as_str().unwrap_or("");
        let cause = g["cause"].as_str().unwrap_or("");
        let fail = g.get("fail").and_then(Json::as_str);
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
                "{at}: Go: {phase} error {:?}; here {:?}",
                g["error"].as_str().unwrap_or(""),
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
    let text = std::fs::read_to_string(cases_path)
        .unwrap_or_else(|e| panic!("{}: {e}", cases_path.display()));
    parse_cases(&cases_path.display().to_string(), &text)
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
    let text = std::fs::read_to_string(&cases_path).expect("the case file");
    let cases = parse_cases(&cases_path.display().to_string(), &text);
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
    let parse = |t: &str| -> BTreeMap<String, Json> {
        t.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let j: Json = serde_json::from_str(l).expect("a JSON line");
                (j["id"].as_str().unwrap_or("").to_string(), j)
            })
            .collect()
    };
    let (now, recorded) = (parse(&now), parse(&recorded));
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
