//! One finished run of a command-line binary: its exit status and its output as text.

use std::path::Path;
use std::process::Command;

/// What a run of a binary left: exit status, standard output, standard error.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Standard output read as JSON; a panic with both outputs when it is not.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

/// `bin args` run in `dir` with `NO_COLOR=1`, to its end. Its output must be UTF-8 and it
/// must end by itself, not by a signal.
pub fn run_in(bin: &str, dir: &Path, args: &[&str]) -> Run {
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap_or_else(|e| panic!("run {bin}: {e}"));
    Run {
        code: out
            .status
            .code()
            .unwrap_or_else(|| panic!("{bin} was killed by a signal")),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}
