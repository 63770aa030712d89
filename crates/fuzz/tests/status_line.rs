//! The live status line of `fuzz run --status always` (drawn on stderr, `\r` before each
//! redraw) counts a job as running only once its first instance has its place on the node: a
//! job waiting for GPUs held by another is "waiting".

use fuzz_test_support::{fuzz_binary, FuzzRunFlags, RuntimeFlag, ScratchDirectory, StatusLine};

#[test]
fn a_job_waiting_for_gpus_is_counted_as_waiting_not_running() {
    let d = ScratchDirectory::create("fuzz-status-line", "gpus");
    let job = |name: &str| {
        format!("  {name}:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/sleep, '0.4']\n    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 1GiB\n      devices:\n        nvidia.com/gpu: 4\n")
    };
    let file = d.write_file(
        "gpus.fz",
        format!("version: v1\njobs:\n{}{}", job("a"), job("b")),
    );
    let flags = FuzzRunFlags {
        runtime: RuntimeFlag::Host,
        status: StatusLine::Always,
    };
    let out = fuzz_binary!()
        .fuzz_run_command(&file, &d.join("run"), flags)
        .args(["--gpus", "4"])
        .output()
        .expect("run fuzz");
    let se = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{se}");
    let lines: Vec<&str> = se
        .split(['\r', '\n'])
        .map(|l| l.trim_start_matches("\x1b[K"))
        .filter(|l| l.starts_with("fuzz run: ") && l.contains(" waiting, "))
        .collect();
    assert!(!lines.is_empty(), "no status line drawn: {se:?}");
    // One job holds the node's 4 GPUs at a time: never two running.
    assert!(
        lines.iter().all(|l| !l.contains(" 2 running")),
        "two jobs counted as running on a node with GPUs for one: {lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("1 waiting, 1 running")),
        "the second job was never shown waiting: {lines:?}"
    );
}
