//! Hostile inputs: the cost of `fuzzlint check` is bounded by its input.
//!
//! - every file it reads goes through one bounded reader: `/dev/zero`, a FIFO that never ends
//!   and a 10 GB sparse file are refused at the size limit, as Fuzzfile, `--config` and
//!   `--cluster` alike;
//! - the human output of a 209 KB one-line file with 19,500 findings is cut: each frame shows a
//!   window of the line, and a file shows at most `--max-diagnostics` findings.
//!
//! Every run has a deadline (a hang guard, not a measurement): a run that reads without end is
//! killed and fails the test.

use fuzz_test_support::{fuzzlint_binary, lossy_text, output_within_or_fail, ScratchDirectory};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

struct Run {
    code: i32,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs fuzzlint in `dir` with `NO_COLOR=1`, killing it (and failing the test) after
/// `deadline`.
fn run_in(dir: &Path, args: &[&str], deadline: Duration) -> Run {
    let out = output_within_or_fail(
        fuzzlint_binary!()
            .command()
            .args(args)
            .current_dir(dir)
            .env("NO_COLOR", "1"),
        deadline,
    );
    Run {
        code: out.status.code().expect("fuzzlint was killed by a signal"),
        stdout: out.stdout,
        stderr: lossy_text(&out.stderr),
    }
}

const DEADLINE: Duration = Duration::from_secs(60);

fn scratch(tag: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzzlint-hostile", tag)
}

const GOOD: &str = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine:3.20\n    command: [echo, hi]\n";

/// A FIFO at `path` whose writer (a thread) writes `chunk` until the reader goes away.
fn endless_fifo(path: &Path, line: &'static [u8]) -> std::thread::JoinHandle<()> {
    let st = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(st.success(), "mkfifo {}", path.display());
    let path = path.to_path_buf();
    std::thread::spawn(move || {
        // Blocks until the reader opens the FIFO; ends with EPIPE when it closes it.
        let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(&path) else {
            return;
        };
        let chunk = line.repeat(64 * 1024 / line.len());
        while f.write_all(&chunk).is_ok() {}
    })
}

/// A 10 GB file that takes no space.
fn sparse(path: &Path) {
    let f = std::fs::File::create(path).expect("create");
    f.set_len(10 * 1024 * 1024 * 1024).expect("sparse 10 GB");
}

#[test]
fn a_fuzzfile_that_never_ends_is_refused_at_the_limit() {
    let d = scratch("fuzzfile");
    // Named by its own path: a relative link out of the working directory is refused before
    // it is read (tests/untrusted_repo.rs).
    sparse(&d.join("sparse.fz"));
    let writer = endless_fifo(&d.join("fifo.fz"), b"version: v4\n# endless\n");
    std::fs::create_dir(d.join("dir.fz")).expect("dir");
    for (name, why) in [
        (
            "/dev/zero",
            "/dev/zero is larger than 64 MiB: it cannot be a Fuzzfile",
        ),
        (
            "sparse.fz",
            "sparse.fz is larger than 64 MiB: it cannot be a Fuzzfile",
        ),
        (
            "fifo.fz",
            "fifo.fz is larger than 64 MiB: it cannot be a Fuzzfile",
        ),
    ] {
        let r = run_in(&d, &["check", name], DEADLINE);
        assert_eq!(r.code, 2, "{name}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("error: {why}")),
            "{name}: {}",
            r.stderr
        );
    }
    writer.join().expect("writer");
    // A directory is walked, not read: none of its files is a Fuzzfile.
    let r = run_in(&d, &["check", "dir.fz"], DEADLINE);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("dir.fz: no Fuzzfile found"),
        "{}",
        r.stderr
    );
}

#[test]
fn config_and_cluster_files_that_never_end_are_refused_at_one_mib() {
    let d = scratch("config");
    std::fs::write(d.join("ok.fz"), GOOD).expect("write");
    sparse(&d.join("sparse.toml"));
    std::fs::create_dir(d.join("dir.toml")).expect("dir");
    let fifo_writer = endless_fifo(&d.join("fifo.toml"), b"# endless\n");
    for (flag, what) in [("--cluster", "cluster profile")] {
        for file in ["/dev/zero", "sparse.toml", "fifo.toml"] {
            let r = run_in(&d, &["check", flag, file, "ok.fz"], DEADLINE);
            assert_eq!(r.code, 2, "{flag} {file}: {}", r.stderr);
            assert!(
                r.stderr.contains(&format!(
                    "{flag} {file}: larger than 1 MiB: it cannot be a {what}"
                )),
                "{flag} {file}: {}",
                r.stderr
            );
        }
        let r = run_in(&d, &["check", flag, "dir.toml", "ok.fz"], DEADLINE);
        assert_eq!(r.code, 2);
        assert!(
            r.stderr
                .contains(&format!("{flag} dir.toml: a directory, not a file")),
            "{}",
            r.stderr
        );
    }
    fifo_writer.join().expect("writer");
    // `--config` names a file; a sparse one is read no further than the limit.
    let r = run_in(&d, &["check", "--config", "sparse.toml", "ok.fz"], DEADLINE);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "sparse.toml: cannot read: larger than 1 MiB: it cannot be a fuzzlint config file"
        ),
        "{}",
        r.stderr
    );
    // The `fuzzlint.toml` found next to a file, and the profile it names, too.
    let sub = d.join("found");
    std::fs::create_dir(&sub).expect("dir");
    std::fs::write(sub.join("ok.fz"), GOOD).expect("write");
    sparse(&sub.join("fuzzlint.toml"));
    let r = run_in(&d, &["check", "found/ok.fz"], DEADLINE);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "found/fuzzlint.toml: cannot read: larger than 1 MiB: it cannot be a fuzzlint config file"
        ),
        "{}",
        r.stderr
    );
    std::fs::remove_file(sub.join("fuzzlint.toml")).expect("rm");
    std::fs::write(sub.join("fuzzlint.toml"), "cluster = \"zero.toml\"\n").expect("write");
    std::os::unix::fs::symlink("/dev/zero", sub.join("zero.toml")).expect("symlink");
    let r = run_in(&d, &["check", "found/ok.fz"], DEADLINE);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "cannot read the cluster profile found/zero.toml: larger than 1 MiB: it cannot be a cluster profile"
        ),
        "{}",
        r.stderr
    );
}

/// The reproducer: 209 KB on one line with `keys` unknown keys (19,500).
fn one_line_file(keys: usize) -> String {
    let keys: Vec<String> = (0..keys).map(|i| format!("k{i}: 1")).collect();
    format!(
        "{{version: v4, jobs: {{a: {{image: {{uri: 'docker://alpine:3.20'}}, command: [echo, hi], {}}}}}}}\n",
        keys.join(", ")
    )
}

#[test]
fn human_output_of_a_long_line_is_bounded() {
    let d = scratch("oneline");
    let text = one_line_file(19_500);
    assert!(text.len() > 200_000);
    std::fs::write(d.join("one.fz"), &text).expect("write");

    // Default: 100 findings, then how many more, then the summary of all of them.
    let r = run_in(&d, &["check", "one.fz"], DEADLINE);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let out = String::from_utf8(r.stdout).expect("UTF-8");
    assert!(
        out.len() < text.len(),
        "{} bytes of output for {} bytes of input",
        out.len(),
        text.len()
    );
    assert!(
        out.contains("… and 19400 more diagnostics in one.fz; use `--format json` for all of them, or `--max-diagnostics 0`"),
        "{}",
        &out[out.len().saturating_sub(500)..]
    );
    assert!(out.ends_with("1 file checked: 19500 errors, 0 warnings, 0 info\n"));
    // The header keeps the real column; the frame shows the key under the carets.
    let k50 = text.find("k50:").expect("k50") + 1;
    assert!(out.contains(&format!("one.fz:1:{k50} ]")), "column of k50");
    let frame: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains(&format!("one.fz:1:{k50} ]")))
        .take(4)
        .collect();
    let (src, carets) = (frame[2], frame[3]);
    let src = src.split_once(" │ ").expect("gutter").1;
    let carets = carets.split_once("│ ").expect("gutter").1;
    let col = carets.chars().take_while(|c| *c == ' ').count();
    let under: String = src.chars().skip(col).take(3).collect();
    assert_eq!(under, "k50", "{src}\n{carets}");
    assert!(src.starts_with('…') && src.ends_with('…'), "{src}");

    // Every finding (of a shorter line, to keep the test fast): each frame is still bounded,
    // whatever the line's length.
    let text = one_line_file(3_000);
    std::fs::write(d.join("short.fz"), &text).expect("write");
    let r = run_in(
        &d,
        &["check", "--max-diagnostics", "0", "short.fz"],
        DEADLINE,
    );
    let out = String::from_utf8(r.stdout).expect("UTF-8");
    assert!(!out.contains("more diagnostics"));
    let longest = out.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(longest < 400, "a line of {longest} characters");
    assert_eq!(out.matches("[FZ010 unknown-key]").count(), 3_000);

    // JSON lists every finding.
    let r = run_in(&d, &["check", "--format", "json", "short.fz"], DEADLINE);
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).expect("JSON");
    assert_eq!(v["diagnostics"].as_array().map(Vec::len), Some(3_000));
}

#[test]
fn many_files_each_show_their_own_cap() {
    let d = scratch("cap");
    let mut text = String::from(GOOD);
    for i in 0..150 {
        text.push_str(&format!("    unknown{i}: 1\n"));
    }
    std::fs::write(d.join("a.fz"), &text).expect("write");
    std::fs::write(d.join("b.fz"), &text).expect("write");
    let r = run_in(
        &d,
        &["check", "--max-diagnostics", "7", "a.fz", "b.fz"],
        DEADLINE,
    );
    let out = String::from_utf8(r.stdout).expect("UTF-8");
    assert_eq!(out.matches("[FZ010 unknown-key]").count(), 14);
    assert!(out.contains("… and 143 more diagnostics in a.fz"));
    assert!(out.contains("… and 143 more diagnostics in b.fz"));
    assert!(out.ends_with("2 files checked: 300 errors, 0 warnings, 0 info\n"));
}

#[test]
fn standard_input_is_read_with_the_same_limit() {
    let run_stdin = |args: &[&str], feed: Box<dyn FnOnce(std::process::ChildStdin) + Send>| {
        let mut child = fuzzlint_binary!()
            .command()
            .args(args)
            .env("NO_COLOR", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start fuzzlint");
        let stdin = child.stdin.take().expect("stdin");
        let writer = std::thread::spawn(move || feed(stdin));
        let out = child.wait_with_output().expect("wait");
        writer.join().expect("writer");
        (
            out.status.code().expect("exit code"),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // An endless stream: refused at the limit (the writer ends when the reader closes).
    let (code, _, err) = run_stdin(
        &["check", "-"],
        Box::new(|mut w| {
            let chunk = vec![b'#'; 64 * 1024];
            while w.write_all(&chunk).is_ok() {}
        }),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("error: - is larger than 64 MiB: it cannot be a Fuzzfile"),
        "{err}"
    );
    // A Fuzzfile on standard input is checked like a file; `--fix` prints the fixed text on
    // standard output (tests/stdin.rs has the rest).
    let bad = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine:3.20\n    command: [echo, hi]\n    Cwd: /tmp\n";
    let (code, out, _) = run_stdin(
        &["check", "-"],
        Box::new(move |mut w| {
            let _ = w.write_all(bad.as_bytes());
        }),
    );
    assert_eq!(code, 1);
    assert!(out.contains("unknown key `Cwd` in a job"), "{out}");
    let (code, out, err) = run_stdin(
        &["check", "--fix", "-"],
        Box::new(move |mut w| {
            let _ = w.write_all(bad.as_bytes());
        }),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, bad.replace("Cwd:", "cwd:"));
}
