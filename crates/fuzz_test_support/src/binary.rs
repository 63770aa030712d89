//! The crate's own binary under test, and the usual flags of `fuzz run`.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A binary of the workspace under test; made by [`crate::fuzz_binary!`] or
/// [`crate::fuzzlint_binary!`] (only the crate's own tests know where cargo built it).
#[derive(Clone, Debug)]
pub struct ProgramBinary {
    path: PathBuf,
}

/// Whether `fuzz run` draws its live status line on stderr (`--status never|always`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusLine {
    /// `--status never`.
    Never,
    /// `--status always`: drawn even though stderr is not a terminal.
    Always,
    /// No `--status` flag: the binary's default.
    BinaryDefault,
}

/// The `NO_COLOR` environment variable of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoColorVariable {
    /// `NO_COLOR=1`: plain text whatever the binary's own choice.
    Set,
    /// Removed from the environment: the binary decides (no terminal: no colour).
    Removed,
}

/// The `--runtime` flag of `fuzz run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeFlag {
    /// `--runtime host`.
    Host,
    /// `--runtime podman`.
    Podman,
    /// No `--runtime` flag (the caller gives one, or the binary picks).
    NotGiven,
}

/// The flags of a `fuzz run` command line as [`ProgramBinary::fuzz_run_command`] writes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FuzzRunFlags {
    /// `--runtime`.
    pub runtime: RuntimeFlag,
    /// `--status`.
    pub status: StatusLine,
}

/// A finished run of a binary: its exit code and its output as UTF-8 text.
#[derive(Clone, Debug)]
pub struct BinaryRun {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl BinaryRun {
    /// Standard output parsed as one JSON value; fails the test (showing both outputs) when
    /// it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

impl ProgramBinary {
    /// The binary at `path`.
    pub fn at(path: impl Into<PathBuf>) -> ProgramBinary {
        ProgramBinary { path: path.into() }
    }

    /// Where it is.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A command starting it, nothing else set.
    pub fn command(&self) -> Command {
        Command::new(&self.path)
    }

    /// Runs it with `args` in `dir`, `NO_COLOR` as `colour` says, to its end. Fails the test
    /// when it cannot start, is killed by a signal, or prints anything but UTF-8.
    pub fn run_in(&self, dir: &Path, args: &[&str], colour: NoColorVariable) -> BinaryRun {
        self.run_with_input(dir, args, colour, "")
    }

    /// [`ProgramBinary::run_in`] with `input` on its standard input (written from another
    /// thread, so that a large input cannot block on a full output pipe).
    pub fn run_with_input(
        &self,
        dir: &Path,
        args: &[&str],
        colour: NoColorVariable,
        input: &str,
    ) -> BinaryRun {
        let mut cmd = self.command();
        cmd.args(args).current_dir(dir);
        match colour {
            NoColorVariable::Set => {
                cmd.env("NO_COLOR", "1");
            }
            NoColorVariable::Removed => {
                cmd.env_remove("NO_COLOR");
            }
        }
        finish(&mut cmd, input)
    }
    /// `fuzz run FILE --workdir WORKDIR` with the runtime and status flags of `flags`; the
    /// caller adds the rest (more flags, environment) and runs it.
    pub fn fuzz_run_command(&self, file: &Path, workdir: &Path, flags: FuzzRunFlags) -> Command {
        let mut cmd = self.command();
        cmd.args(fuzz_run_arguments(file, workdir, flags));
        cmd
    }

    /// The binary's path followed by [`fuzz_run_arguments`]: the command line of `fuzz run`
    /// for a program that starts it (`prlimit`, a network namespace's `unshare`).
    pub fn fuzz_run_command_line(
        &self,
        file: &Path,
        workdir: &Path,
        flags: FuzzRunFlags,
    ) -> Vec<OsString> {
        let mut line = vec![self.path.clone().into_os_string()];
        line.extend(fuzz_run_arguments(file, workdir, flags));
        line
    }
}

/// The arguments `run FILE --workdir WORKDIR`, then `--runtime` and `--status` as `flags`
/// says.
pub fn fuzz_run_arguments(file: &Path, workdir: &Path, flags: FuzzRunFlags) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec![
        "run".into(),
        file.into(),
        "--workdir".into(),
        workdir.into(),
    ];
    match flags.runtime {
        RuntimeFlag::Host => args.extend(["--runtime".into(), "host".into()]),
        RuntimeFlag::Podman => args.extend(["--runtime".into(), "podman".into()]),
        RuntimeFlag::NotGiven => {}
    }
    match flags.status {
        StatusLine::Never => args.extend(["--status".into(), "never".into()]),
        StatusLine::Always => args.extend(["--status".into(), "always".into()]),
        StatusLine::BinaryDefault => {}
    }
    args
}

impl FuzzRunFlags {
    /// `--runtime host --status never`: the node's own programs, no status line.
    pub const HOST_WITHOUT_STATUS_LINE: FuzzRunFlags = FuzzRunFlags {
        runtime: RuntimeFlag::Host,
        status: StatusLine::Never,
    };
    /// `--status never` and no `--runtime` (the caller's extra flags name one).
    pub const RUNTIME_NOT_GIVEN_WITHOUT_STATUS_LINE: FuzzRunFlags = FuzzRunFlags {
        runtime: RuntimeFlag::NotGiven,
        status: StatusLine::Never,
    };
}

/// Runs `cmd` with `input` on its standard input, to its end: its exit code and UTF-8 output.
/// Fails the test when it cannot start, is killed by a signal, or prints anything but UTF-8.
pub fn finish(cmd: &mut Command, input: &str) -> BinaryRun {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    let mut stdin = child.stdin.take().expect("a piped stdin");
    let input = input.to_owned();
    let writer = std::thread::spawn(move || {
        // A program that does not read its input closes the pipe: not an error here.
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("cannot wait for {program}: {e}"));
    writer.join().expect("the input writer");
    BinaryRun {
        code: out
            .status
            .code()
            .unwrap_or_else(|| panic!("{program} was killed by a signal")),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    }
}
