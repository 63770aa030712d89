//! Running a program with a time limit and reading what it printed.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` (stdin from `/dev/null`, stdout and stderr captured) to its end or until
/// `limit` has passed; then it is killed, and the error says so with what it printed. The
/// error also says when it could not be started or waited for. Both outputs are read while it
/// runs (by a thread each), so a program that prints more than a pipe holds never blocks.
pub fn output_within(cmd: &mut Command, limit: Duration) -> Result<Output, String> {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let stdout = read_to_end_in_a_thread(child.stdout.take());
    let stderr = read_to_end_in_a_thread(child.stderr.take());
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{shown} did not finish within {limit:?}\nstdout: {}\nstderr: {}",
                    String::from_utf8_lossy(&stdout.join().unwrap_or_default()),
                    String::from_utf8_lossy(&stderr.join().unwrap_or_default())
                ));
            }
            Err(e) => return Err(format!("waiting for {shown}: {e}")),
        }
    };
    let stdout = stdout
        .join()
        .map_err(|_| format!("reading the stdout of {shown} failed"))?;
    let stderr = stderr
        .join()
        .map_err(|_| format!("reading the stderr of {shown} failed"))?;
    Ok(Output {
        status,
        stdout,
        stderr,
    })
}

/// Reads `pipe` to its end on a thread of its own; the thread returns what it read (nothing
/// for no pipe; what came before a read error).
fn read_to_end_in_a_thread<R: std::io::Read + Send + 'static>(
    pipe: Option<R>,
) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// [`output_within`], failing the test with its error (not started, or still running after
/// `limit`, with what it printed).
pub fn output_within_or_fail(cmd: &mut Command, limit: Duration) -> Output {
    output_within(cmd, limit).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `cmd` with its stdout and stderr written to `stdout.txt` and `stderr.txt` in `dir`
/// (a program that prints megabytes would fill a pipe nobody reads while waiting), stdin
/// from `/dev/null`; fails the test if it cannot start or still runs after `limit` (it is
/// killed first; the message holds its stderr). Returns its status and both outputs.
pub fn output_through_files_within(cmd: &mut Command, dir: &Path, limit: Duration) -> Output {
    let so = dir.join("stdout.txt");
    let se = dir.join("stderr.txt");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&so).expect("stdout file"))
        .stderr(std::fs::File::create(&se).expect("stderr file"))
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    let status = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} did not finish within {limit:?}: {}",
                std::fs::read_to_string(&se).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: std::fs::read(&so).unwrap_or_default(),
        stderr: std::fs::read(&se).unwrap_or_default(),
    }
}

/// `bytes` as text, invalid UTF-8 replaced by U+FFFD (for messages and `contains` checks).
pub fn lossy_text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The lines of `text`, sorted (output of several nodes, whose order is not fixed).
pub fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

/// What the nodes said: every line of `text` holding `tag`, from the tag on (output
/// prefixes such as `[job] [host] ` dropped), sorted.
pub fn said_lines(text: &str, tag: &str) -> Vec<String> {
    let mut v: Vec<String> = text
        .lines()
        .filter_map(|l| l.find(tag).map(|k| l[k..].to_owned()))
        .collect();
    v.sort();
    v
}

/// Every file (not directory) below `dir`, at any depth; nothing for a directory that cannot
/// be read. The order is not defined.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// The ids of the processes whose command line matches `pattern` (`pgrep -f`), one per
/// line, trimmed; empty when none does.
pub fn processes_matching(pattern: &str) -> String {
    let out = Command::new("pgrep")
        .args(["-f", pattern])
        .output()
        .expect("pgrep");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Each line of the file at `path` parsed as JSON (an events file); fails the test when the
/// file cannot be read or a line is not JSON.
pub fn json_lines_of_file(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .lines()
        .map(|l| {
            serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("a line of {} is not JSON ({e}): {l}", path.display()))
        })
        .collect()
}
