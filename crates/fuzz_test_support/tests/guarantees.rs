//! What the helpers promise the tests that use them, with real directories and processes.

use fuzz_test_support::binary::fuzz_run_arguments;
use fuzz_test_support::fake_node::{install_stand_in, path_with_first};
use fuzz_test_support::process::{output_through_files_within, processes_matching};
use fuzz_test_support::{
    output_within, said_lines, FuzzRunFlags, RuntimeFlag, ScratchDirectory, StatusLine,
};
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn scratch_directories_are_fresh_unique_and_removed_on_drop() {
    let a = ScratchDirectory::create("fuzz-test-support", "same");
    let b = ScratchDirectory::create("fuzz-test-support", "same");
    assert_ne!(a.path(), b.path());
    assert!(a.is_dir() && b.is_dir());
    assert_eq!(std::fs::read_dir(a.path()).expect("read").count(), 0);
    let file = a.write_file("deep/er/file.txt", "text");
    assert_eq!(file, a.join("deep/er/file.txt"));
    assert_eq!(a.read_file("deep/er/file.txt"), "text");
    let kept = a.path().to_path_buf();
    drop(a);
    assert!(!kept.exists(), "{} was left", kept.display());
    assert!(b.is_dir(), "dropping one removed the other");
}

#[test]
fn a_scratch_directory_is_removed_when_its_test_fails() {
    let path = std::thread::spawn(|| {
        let d = ScratchDirectory::create("fuzz-test-support", "panics");
        let path = d.path().to_path_buf();
        std::panic::panic_any(path)
    })
    .join()
    .expect_err("the thread panicked")
    .downcast::<std::path::PathBuf>()
    .expect("the panic carries the path");
    assert!(!path.exists(), "{} was left", path.display());
}

#[test]
fn output_within_kills_a_program_that_overruns_and_says_what_it_printed() {
    let start = Instant::now();
    let err = output_within(
        Command::new("sh").args(["-c", "echo started; exec sleep 30"]),
        Duration::from_millis(300),
    )
    .expect_err("it overran");
    assert!(start.elapsed() < Duration::from_secs(10), "{err}");
    assert!(err.contains("did not finish within 300ms"), "{err}");
    assert!(err.contains("stdout: started"), "{err}");
}

/// Regression: the output was read only after the program ended, so one that printed more
/// than a pipe holds (64 KiB) waited for a reader until the limit killed it.
#[test]
fn output_within_reads_more_than_a_pipe_holds() {
    let out = output_within(
        Command::new("sh").args([
            "-c",
            "head -c 1048576 /dev/zero; head -c 300000 /dev/zero >&2",
        ]),
        Duration::from_secs(20),
    )
    .expect("it finished");
    assert!(out.status.success());
    assert_eq!(out.stdout.len(), 1_048_576);
    assert_eq!(out.stderr.len(), 300_000);
}

#[test]
fn output_through_files_keeps_both_streams() {
    let d = ScratchDirectory::create("fuzz-test-support", "files");
    let out = output_through_files_within(
        Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
        &d,
        Duration::from_secs(20),
    );
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"out\n");
    assert_eq!(out.stderr, b"err\n");
}

#[test]
fn a_stand_in_is_found_first_on_its_path() {
    let d = ScratchDirectory::create("fuzz-test-support", "stand-in");
    let bin = d.join("bin");
    let smi = install_stand_in(&bin, "nvidia-smi", "#!/bin/sh\necho stand-in \"$@\"\n");
    let mode = std::fs::metadata(&smi).expect("meta").permissions().mode();
    assert_eq!(mode & 0o777, 0o755);
    let out = Command::new("sh")
        .args(["-c", "nvidia-smi -q"])
        .env("PATH", path_with_first(&bin))
        .output()
        .expect("sh");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "stand-in -q\n");
}

#[test]
fn fuzz_run_arguments_hold_exactly_the_flags_asked_for() {
    let words =
        |flags| -> Vec<OsString> { fuzz_run_arguments(Path::new("a.fz"), Path::new("/w"), flags) };
    let strings = |v: &[&str]| -> Vec<OsString> { v.iter().map(OsString::from).collect() };
    assert_eq!(
        words(FuzzRunFlags::HOST_WITHOUT_STATUS_LINE),
        strings(&[
            "run",
            "a.fz",
            "--workdir",
            "/w",
            "--runtime",
            "host",
            "--status",
            "never"
        ])
    );
    assert_eq!(
        words(FuzzRunFlags {
            runtime: RuntimeFlag::Podman,
            status: StatusLine::BinaryDefault,
        }),
        strings(&["run", "a.fz", "--workdir", "/w", "--runtime", "podman"])
    );
    assert_eq!(
        words(FuzzRunFlags::RUNTIME_NOT_GIVEN_WITHOUT_STATUS_LINE),
        strings(&["run", "a.fz", "--workdir", "/w", "--status", "never"])
    );
}

#[test]
fn said_lines_start_at_the_tag_and_are_sorted() {
    let text = "[train] [node2] up-2\nnoise\n[train] [node0] up-0 x\n";
    assert_eq!(said_lines(text, "up-"), ["up-0 x", "up-2"]);
}

#[test]
fn processes_matching_finds_a_running_process_and_nothing_after_it_ends() {
    let marker = format!("fuzz-test-support-marker-{}", std::process::id());
    let mut child = Command::new("bash")
        .args(["-c", &format!("exec -a {marker} sleep 30")])
        .spawn()
        .expect("bash");
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes_matching(&marker).is_empty() {
        assert!(Instant::now() < deadline, "{marker} never seen");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(processes_matching(&marker), child.id().to_string());
    child.kill().expect("kill");
    child.wait().expect("wait");
    assert_eq!(processes_matching(&marker), "");
}
