//! A real container run: `fuzz run --runtime podman` on a local busybox image
//! (scripts/container-test-image.sh imports it; no registry is contacted). The job graph, the
//! environment, the working directory and a volume shared by two jobs all go through podman's
//! own flags, as the plan shows them; a job that times out inside a container leaves no
//! container behind.
//!
//! Needs podman, runc and busybox-static (scripts/ci-packages.txt) and root; without them it
//! prints why and passes, unless `FUZZ_REQUIRE_SYSTEM_TESTS` is set.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;
use support::{output_within, require};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn available() -> Result<(), String> {
    for tool in ["podman", "runc"] {
        let found = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
            .unwrap_or(false);
        if !found {
            return Err(format!(
                "`{tool}` is not installed; see scripts/ci-packages.txt"
            ));
        }
    }
    if !Path::new("/bin/busybox").exists() {
        return Err("/bin/busybox is missing (busybox-static)".into());
    }
    if !nix::unistd::geteuid().is_root() {
        return Err("podman runs here as root only".into());
    }
    Ok(())
}

/// Imports the test image (idempotent) and writes the containers.conf the runs use.
fn image(dir: &Path) -> (String, PathBuf) {
    let conf = dir.join("containers.conf");
    let out = output_within(
        Command::new("bash")
            .arg(root().join("scripts/container-test-image.sh"))
            .arg("--conf")
            .arg(&conf),
        Duration::from_secs(120),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "container-test-image.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (String::from_utf8_lossy(&out.stdout).trim().to_owned(), conf)
}

fn fuzz_run(conf: &Path, file: &Path, workdir: &Path, extra: &[&str]) -> Output {
    output_within(
        Command::new(env!("CARGO_BIN_EXE_fuzz"))
            .args([
                "run",
                "--runtime",
                "podman",
                "--status",
                "never",
                "--grace",
                "1",
            ])
            .args(extra)
            .arg("--workdir")
            .arg(workdir)
            .arg(file)
            .env("CONTAINERS_CONF", conf),
        Duration::from_secs(180),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn containers(conf: &Path, label: &str) -> Vec<String> {
    let out = Command::new("podman")
        .args([
            "ps",
            "-a",
            "--no-trunc",
            "--format",
            "{{.Names}} {{.Command}}",
        ])
        .env("CONTAINERS_CONF", conf)
        .output()
        .expect("podman ps");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(label))
        .map(str::to_owned)
        .collect()
}

#[test]
fn podman_runs_a_job_chain_with_env_cwd_and_a_shared_volume() {
    if !require(available()) {
        return;
    }
    let d = std::env::temp_dir().join(format!("fuzz-podman-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    let (image, conf) = image(&d);
    let file = d.join("chain.fz");
    std::fs::write(
        &file,
        format!(
            r#"version: v4
volumes:
  shared:
    reference: volume://user/ephemeral
jobs:
  write:
    image:
      uri: {image}
    cwd: /work
    env:
      - GREETING=hello from a container
    command: [/bin/sh, -c, 'pwd; echo "$GREETING" > /work/msg.txt; echo "job=$FB_JOB_NAME"']
    mounts:
      /work: shared
  read:
    image:
      uri: {image}
    cwd: /data
    command: [/bin/sh, -c, 'cat msg.txt; test ! -e /etc/fuzz-host-marker && echo isolated']
    mounts:
      /data: shared
    depends-on:
      - name: write
        status: FINISHED
"#
        ),
    )
    .expect("write Fuzzfile");
    let out = fuzz_run(&conf, &file, &d.join("run"), &[]);
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("[write] /work"), "cwd not applied: {so}");
    assert!(so.contains("[write] job=write"), "FB_JOB_NAME: {so}");
    assert!(
        so.contains("[read] hello from a container"),
        "the volume did not carry the file: {so}"
    );
    assert!(so.contains("[read] isolated"), "{so}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_container_that_times_out_is_stopped_and_removed() {
    if !require(available()) {
        return;
    }
    let d = std::env::temp_dir().join(format!("fuzz-podman-timeout-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    let (image, conf) = image(&d);
    let marker = format!("sleep-{}", std::process::id());
    let file = d.join("slow.fz");
    std::fs::write(
        &file,
        format!(
            "version: v4\njobs:\n  slow:\n    image:\n      uri: {image}\n    command: [/bin/sh, -c, ': {marker}; trap \"\" TERM; echo started; sleep 300']\n    policy:\n      timeout:\n        execute: 3s\n"
        ),
    )
    .expect("write Fuzzfile");
    let out = fuzz_run(&conf, &file, &d.join("run"), &[]);
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(se.contains("timed out"), "{se}");
    let left = containers(&conf, &marker);
    assert!(left.is_empty(), "containers left behind: {left:?}");
    let _ = std::fs::remove_dir_all(&d);
}
