//! The engine cases of `tests/cases/engine.txt` (a template and its data each; the format is
//! described at the top of that file) and Go's results for them (`engine.go.jsonl`, written by
//! `tests/differential_go.rs` from `scripts/go-template-render`). Any test of this crate can
//! use them: `mod cases;` then [`load`], [`data_value`], [`go_expected`]; the same format in
//! other files (`tests/exec_cases.txt`, `tests/funcs_cases.txt`): [`load_file`], [`go_results`].

#![allow(dead_code)]

pub mod go;

use fuzzfile_template::Value;
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cases")
}

/// One case of `engine.txt`.
#[derive(Clone, Debug)]
pub struct Case {
    pub name: String,
    /// Line of its `###` header (1-based).
    pub line: usize,
    pub template: String,
    /// The `data:` JSON (`{}` when absent).
    pub data: Json,
    pub seed: Option<u64>,
    pub now: Option<i64>,
}

/// Reads `engine.txt`. Panics with the line on a malformed case (a test input).
pub fn load() -> Vec<Case> {
    load_file(&dir().join("engine.txt"))
}

/// Reads a case file in the format of `engine.txt` (`tests/exec_cases.txt`, ...). Panics
/// with the line on a malformed case (a test input).
pub fn load_file(path: &Path) -> Vec<Case> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    parse(&name, &text)
}

/// The cases of `text`, the case file `file` (named in the panics).
pub fn parse(file: &str, text: &str) -> Vec<Case> {
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
            data: json!({}),
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
                case.seed = Some(
                    s.trim()
                        .parse()
                        .unwrap_or_else(|e| panic!("{file}:{}: seed: {e}", i + 1)),
                );
            } else if let Some(s) = l.strip_prefix("now:") {
                case.now = Some(
                    s.trim()
                        .parse()
                        .unwrap_or_else(|e| panic!("{file}:{}: now: {e}", i + 1)),
                );
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

/// The data of a case as the template sees it, typed as `scripts/go-template-render` types
/// it: an integer of 0 or more is a `uint64`, a negative one an `int`, any other number a
/// `float64`; `{"$int": n}`, `{"$uint": n}`, `{"$float": n}`, `{"$time": unix}` force a type.
pub fn data_value(j: &Json) -> Value {
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

/// The JSON of `v` that [`data_value`] (and the Go program) read back as `v`.
pub fn value_json(v: &Value) -> Json {
    match v {
        Value::Nil => Json::Null,
        Value::Bool(b) => json!(b),
        Value::Int(i) => json!({ "$int": i }),
        Value::Uint(u) => json!(u),
        Value::Float(f) => json!({ "$float": f }),
        Value::String(s) => json!(s),
        Value::List(l) => Json::Array(l.iter().map(value_json).collect()),
        Value::Map(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), value_json(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Time { unix_seconds, .. } => json!({ "$time": unix_seconds }),
    }
}

/// What Go printed for a case (or a template).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GoResult {
    Output(String),
    Error {
        /// `data`, `parse` or `exec`.
        phase: String,
        /// Go's whole message.
        error: String,
        /// After Go's `template: NAME:LINE:COL: executing "NAME" at <...>: ` prefix.
        cause: String,
        /// The message of a `fail` reached.
        fail: Option<String>,
    },
}

impl GoResult {
    pub fn from_json(j: &Json) -> GoResult {
        let s = |k: &str| j.get(k).and_then(Json::as_str).map(str::to_string);
        if j.get("ok").and_then(Json::as_bool) == Some(true) {
            GoResult::Output(s("output").unwrap_or_default())
        } else {
            GoResult::Error {
                phase: s("phase").unwrap_or_default(),
                error: s("error").unwrap_or_default(),
                cause: s("cause").unwrap_or_default(),
                fail: s("fail"),
            }
        }
    }

    pub fn to_json(&self, id: &str) -> Json {
        match self {
            GoResult::Output(o) => json!({"id": id, "ok": true, "output": o}),
            GoResult::Error {
                phase,
                error,
                cause,
                fail,
            } => {
                let mut m = json!({"id": id, "ok": false, "phase": phase, "error": error});
                if !cause.is_empty() {
                    m["cause"] = json!(cause);
                }
                if let Some(f) = fail {
                    m["fail"] = json!(f);
                }
                m
            }
        }
    }
}

/// Go's recorded results of `engine.txt` by case name (`engine.go.jsonl`).
pub fn go_expected() -> BTreeMap<String, GoResult> {
    go_results(&dir().join("engine.go.jsonl"))
}

/// Go's recorded results of a case file by case name (its `.go.jsonl`; none where the file
/// is missing).
pub fn go_results(path: &Path) -> BTreeMap<String, GoResult> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return BTreeMap::new();
    };
    json_lines_by_id(&path.display().to_string(), &text)
        .into_iter()
        .map(|(id, j)| (id, GoResult::from_json(&j)))
        .collect()
}

/// The JSON lines of `text` (blank lines passed over) by their `id`. Panics with `file` on a
/// line that is not JSON.
pub fn json_lines_by_id(file: &str, text: &str) -> BTreeMap<String, Json> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let j: Json = serde_json::from_str(l).unwrap_or_else(|e| panic!("{file}: {e}: {l}"));
            let id = j.get("id").and_then(Json::as_str).unwrap_or("").to_string();
            (id, j)
        })
        .collect()
}
