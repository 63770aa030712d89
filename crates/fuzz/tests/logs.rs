//! The run's logs: every line from every node goes through the run's redaction, log files are
//! readable by their owner only, and a log that cannot be written in full (a full disk) is a
//! warning, an event and exit 3, never a silent success.
//!
//! The full-disk test mounts a 1 MiB tmpfs in a mount namespace of its own (`unshare -m`), so
//! it needs root and util-linux; without them it prints why and passes, unless
//! `FUZZ_REQUIRE_SYSTEM_TESTS` is set.

use fuzz_test_support::fake_node::{write_with_mode, FileMode};
use fuzz_test_support::process::{files_below, output_through_files_within};
use fuzz_test_support::system::{is_root, on_path};
use fuzz_test_support::{
    fuzz_binary, lossy_text as text, multinode_fuzzfile, output_within_or_fail,
};
use fuzz_test_support::{require, FuzzRunFlags, ScratchDirectory};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

fn scratch(name: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzz-logs", name)
}

/// A generic multinode job running `script` on its head, with `env` lines.
fn multinode(nodes: u32, script: &str, env: &str) -> String {
    multinode_fuzzfile(nodes, "generic", script, env)
}

/// Runs `cmd` with its output in files in `dir`, killed after [`LIMIT`].
fn run_bounded(cmd: &mut Command, dir: &Path) -> Output {
    output_through_files_within(cmd, dir, LIMIT)
}

/// Regression: a multinode job whose env holds a `secret://` value, printed by every node on
/// both streams, and by a rank that fails first (whose last error lines `exec_all` repeats):
/// no log file, event, or line of the runner's output holds the value; each node's log has
/// `***` where it was; log files are 0600 and the logs directory 0700.
#[test]
fn secrets_printed_by_member_nodes_are_redacted_in_every_log() {
    let d = scratch("secret");
    let value = format!("s3cr3t-node-{}", std::process::id());
    let secrets = d.join("secrets.toml");
    write_with_mode(
        &secrets,
        &format!("[user]\ntok = \"{value}\"\n"),
        FileMode::OwnerOnly,
    );
    let f = d.write_file(
        "secret.fz",
        multinode(
            3,
            "echo \"head says $TOKEN\"\nexec_all sh -c 'echo \"rank $RANK out $TOKEN\"; echo \"rank $RANK err $TOKEN\" >&2; if [ \"$RANK\" = 2 ]; then sleep 0.5; exit 3; fi; sleep 5'",
            "    env:\n      - TOKEN=secret://user/tok\n",
        ),
    );
    let events = d.join("events.jsonl");
    let run = d.join("run");
    let out = output_within_or_fail(
        fuzz_binary!()
            .fuzz_run_command(&f, &run, FuzzRunFlags::HOST_WITHOUT_STATUS_LINE)
            .args(["--launcher", "local", "--grace", "1"])
            .arg("--secrets")
            .arg(&secrets)
            .arg("--events")
            .arg(&events),
        LIMIT,
    );
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    // Rank 2 failed first: the job failed, with its error lines repeated by exec_all.
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(se.contains("rank 2 err ***"), "{se}");
    assert!(!so.contains(&value) && !se.contains(&value), "{so}\n{se}");
    let logs = run.join("logs");
    let mode = |p: &Path| std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777;
    assert_eq!(mode(&logs), 0o700, "{}", logs.display());
    let mut seen = Vec::new();
    for p in files_below(&logs).into_iter().chain([events.clone()]) {
        let body = std::fs::read(&p).expect("read");
        assert!(
            !String::from_utf8_lossy(&body).contains(&value),
            "{} holds the secret in clear",
            p.display()
        );
        assert_eq!(mode(&p) & 0o077, 0, "{} is {:o}", p.display(), mode(&p));
        seen.push(p.file_name().map(|n| n.to_string_lossy().into_owned()));
    }
    // Every node's own log, both streams, with the value masked.
    for rank in 1..3 {
        for (ext, stream) in [("out", "out"), ("err", "err")] {
            let p = logs.join(format!("train-{rank}.{ext}"));
            let body = std::fs::read_to_string(&p).unwrap_or_default();
            assert!(
                body.contains(&format!("rank {rank} {stream} ***")),
                "{}: {body:?}",
                p.display()
            );
        }
    }
    let head = std::fs::read_to_string(logs.join("train-0.out")).expect("head log");
    assert!(head.contains("head says ***"), "{head}");
}

/// `fuzz run` inside a mount namespace whose `dir` is a 1 MiB tmpfs.
fn run_on_small_fs(dir: &Path, args: &[&str]) -> Output {
    let fuzz = fuzz_binary!();
    let fuzz = fuzz.path().display();
    let mut script = format!(
        "mount -t tmpfs -o size=1m tmpfs '{}' || exit 99; exec '{fuzz}'",
        dir.display()
    );
    for a in args {
        script.push_str(&format!(" '{a}'"));
    }
    let out_dir = dir.parent().unwrap_or(dir);
    run_bounded(
        Command::new("unshare").args(["-m", "sh", "-c", &script]),
        out_dir,
    )
}

fn small_fs_available() -> Result<(), String> {
    if !is_root() {
        return Err("mounting a tmpfs needs root".into());
    }
    if !on_path("unshare") {
        return Err("`unshare` is not installed (Debian: util-linux)".into());
    }
    Ok(())
}

/// Regression: with a 1 MiB file system for the run directory, a job that prints 4 MB used to
/// leave a cut log and exit 0. Now its log failure is a warning, an event and exit 3; a member
/// node's log (written by `exec_all`) counts the same; a failing job still exits 1.
#[test]
fn a_full_log_file_system_is_a_warning_an_event_and_exit_3() {
    if !require(small_fs_available()) {
        return;
    }
    let d = scratch("full");
    let small = d.join("small");
    std::fs::create_dir_all(&small).expect("mount point");
    let workdir = small.join("run").display().to_string();
    // 4 MB in lines of 100 bytes.
    let print = format!("yes {} | head -n 40000", "x".repeat(99));
    let cases = [
        (
            "single",
            format!(
                "version: v4\njobs:\n  big:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n      {print}\n      echo done\n"
            ),
            3,
        ),
        (
            "failing",
            format!(
                "version: v4\njobs:\n  big:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n      {print}\n      exit 4\n"
            ),
            1,
        ),
        (
            "member",
            multinode(
                2,
                &format!("exec_all sh -c 'if [ \"$RANK\" = 1 ]; then {print}; fi'"),
                "",
            ),
            3,
        ),
    ];
    for (name, fuzzfile, want) in cases {
        let f = d.join(format!("{name}.fz"));
        std::fs::write(&f, &fuzzfile).expect("write Fuzzfile");
        let events = d.join(format!("{name}.jsonl"));
        let out = run_on_small_fs(
            &small,
            &[
                "run",
                &f.display().to_string(),
                "--status",
                "never",
                "--runtime",
                "host",
                "--launcher",
                "local",
                "--workdir",
                &workdir,
                "--events",
                &events.display().to_string(),
            ],
        );
        let se = text(&out.stderr);
        assert_eq!(out.status.code(), Some(want), "{name}: {se}");
        assert!(
            se.contains("No space left on device"),
            "{name}: no warning: {se}"
        );
        assert!(
            se.contains("the logs of this run are incomplete"),
            "{name}: {se}"
        );
        let ev = std::fs::read_to_string(&events).expect("events");
        let failed: Vec<serde_json::Value> = ev
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["event"] == "log_write_failed")
            .collect();
        assert!(
            !failed.is_empty(),
            "{name}: no log_write_failed event:\n{ev}"
        );
        let error = failed[0]["error"].as_str().unwrap_or_default();
        let log = if name == "member" {
            "train-1.out"
        } else {
            "big.out"
        };
        assert!(error.contains(log), "{name}: {error}");
    }
}

/// A run whose logs were all written exits 0 (exit 3 is only for incomplete logs).
#[test]
fn complete_logs_exit_0() {
    let d = scratch("complete");
    let f = d.write_file(
        "ok.fz",
        format!(
            "version: v4\njobs:\n  ok:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n      yes {} | head -n 2000\n",
            "y".repeat(99)
        ),
    );
    let out = run_bounded(
        &mut fuzz_binary!().fuzz_run_command(
            &f,
            &d.join("run"),
            FuzzRunFlags::HOST_WITHOUT_STATUS_LINE,
        ),
        &d,
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let log = std::fs::read(d.join("run/logs/ok.out")).expect("log");
    assert_eq!(log.len(), 200_000);
}

/// `fuzz run --help` documents exit 3.
#[test]
fn run_help_documents_exit_3() {
    let out = fuzz_binary!()
        .command()
        .args(["run", "--help"])
        .output()
        .expect("fuzz run --help");
    let help = text(&out.stdout);
    assert!(
        help.contains("3 when every job finished but a log"),
        "{help}"
    );
}
