//! Go's `text/template` with slim-sprig (`scripts/go-template-render`): the program built
//! once per version of its sources into the target directory, and templates rendered by it
//! in one batch. Shared by `tests/differential_go.rs` and the Go checks of `tests/exec_check`.

#![allow(clippy::unwrap_used)]

use super::GoResult;
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub const SPRIG_DIR: &str = "/usr/share/gocode/src/github.com/Masterminds/sprig";

/// `true` when the test can run; else prints why (or panics when `FUZZ_REQUIRE_SYSTEM_TESTS`
/// is set).
pub fn require<T>(check: &Result<T, String>) -> bool {
    match check {
        Ok(_) => true,
        Err(why) => {
            if std::env::var_os("FUZZ_REQUIRE_SYSTEM_TESTS").is_some() {
                panic!("FUZZ_REQUIRE_SYSTEM_TESTS is set but this test cannot run: {why}");
            }
            fuzz_test_support::system::skip(why);
            false
        }
    }
}

pub fn source_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/go-template-render")
}

/// FNV-1a, 64 bits: the cache key of the Go program's sources.
fn fnv1a(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

/// The Go program, or `None` (after [`require`] printed why, or failing the test where
/// `FUZZ_REQUIRE_SYSTEM_TESTS` is set) where it cannot be had.
pub fn go_or_skip() -> Option<&'static PathBuf> {
    let bin = go_program();
    if !require(bin) {
        return None;
    }
    bin.as_ref().ok()
}

/// The Go program, built once per version of its sources into the target directory.
pub fn go_program() -> &'static Result<PathBuf, String> {
    static BIN: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(build_go_program)
}

fn build_go_program() -> Result<PathBuf, String> {
    let src = source_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&src)
        .map_err(|e| format!("{}: {e}", src.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "go"))
        .collect();
    files.sort();
    let mut h = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        let text = std::fs::read(f).map_err(|e| format!("{}: {e}", f.display()))?;
        h = fnv1a(f.file_name().unwrap().as_encoded_bytes(), h);
        h = fnv1a(&text, h);
    }
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("go-template-render-{h:016x}"));
    let bin = out.join("go-template-render");
    if bin.is_file() {
        return Ok(bin);
    }
    match Command::new("go").arg("version").output() {
        Ok(o) if o.status.success() => {}
        _ => return Err("`go` is not installed (Debian package golang-go)".into()),
    }
    if !Path::new(SPRIG_DIR).is_dir() {
        return Err(format!(
            "no sprig at {SPRIG_DIR} (Debian package golang-github-masterminds-sprig-dev)"
        ));
    }
    std::fs::create_dir_all(&out).map_err(|e| format!("{}: {e}", out.display()))?;
    let tmp = out.join(format!("go-template-render.{}", std::process::id()));
    let built = Command::new("go")
        .args(["build", "-o"])
        .arg(&tmp)
        .arg(".")
        .current_dir(&src)
        .env("GO111MODULE", "off")
        .env("GOPATH", "/usr/share/gocode")
        .env("GOCACHE", out.join("cache"))
        .env("GOFLAGS", "")
        .output()
        .map_err(|e| format!("go build: {e}"))?;
    if !built.status.success() {
        // A broken Go program is a failure, not a reason to skip.
        panic!(
            "go build of {} failed:\n{}",
            src.display(),
            String::from_utf8_lossy(&built.stderr)
        );
    }
    std::fs::rename(&tmp, &bin).map_err(|e| format!("{}: {e}", bin.display()))?;
    Ok(bin)
}

/// Renders `requests` (JSON objects: template, data, name, seed, now) in one Go process.
pub fn run_go(bin: &Path, requests: &[Json], extra: &[&str]) -> Vec<GoResult> {
    let mut child = Command::new(bin)
        .arg("-batch")
        .args(extra)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = String::new();
    for (i, r) in requests.iter().enumerate() {
        let mut r = r.clone();
        r["id"] = json!(i.to_string());
        input.push_str(&r.to_string());
        input.push('\n');
    }
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().unwrap();
    let written = writer.join().unwrap();
    assert!(
        out.status.success(),
        "go-template-render {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
            .chars()
            .take(3000)
            .collect::<String>()
    );
    written.unwrap();
    let results: Vec<GoResult> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let j: Json = serde_json::from_str(l).unwrap();
            assert_eq!(j["id"], json!(i.to_string()), "results out of order");
            GoResult::from_json(&j)
        })
        .collect();
    assert_eq!(results.len(), requests.len());
    results
}

pub fn request(
    name: &str,
    template: &str,
    data: &Json,
    seed: Option<u64>,
    now: Option<i64>,
) -> Json {
    let mut r = json!({"name": name, "template": template, "data": data});
    if let Some(s) = seed {
        r["seed"] = json!(s);
    }
    if let Some(n) = now {
        r["now"] = json!(n);
    }
    r
}
