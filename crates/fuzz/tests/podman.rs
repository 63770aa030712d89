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

/// A job with a memory size gets `--ulimit memlock=…` (as Fuzzball raises RLIMIT_MEMLOCK);
/// podman 4 then dropped containers.conf's other limits and asked for nofile and nproc of
/// 1048576, which a root without CAP_SYS_RESOURCE cannot set: the container failed to start
/// ("error setting rlimit type 7"). `--ulimit host` keeps them, and memlock is what the runner
/// computed: the allocation where the hard limit may be raised, else the node's hard limit.
#[test]
fn a_job_with_a_memory_size_starts_and_gets_its_locked_memory_limit() {
    if !require(available()) {
        return;
    }
    let d = std::env::temp_dir().join(format!("fuzz-podman-memlock-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    let (image, conf) = image(&d);
    let file = d.join("mem.fz");
    std::fs::write(
        &file,
        format!(
            "version: v4\njobs:\n  mem:\n    image:\n      uri: {image}\n    command: [/bin/sh, -c, 'echo \"memlock=$(ulimit -l) nofile=$(ulimit -n)\"']\n    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 512MiB\n"
        ),
    )
    .expect("write Fuzzfile");
    let out = fuzz_run(&conf, &file, &d.join("run"), &[]);
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};
    let (soft, hard) = getrlimit(Resource::RLIMIT_MEMLOCK).expect("rlimit");
    let alloc: u64 = 512 << 20;
    let caps = std::fs::read_to_string("/proc/self/status").expect("status");
    let raise = caps
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|c| c & (1 << 24) != 0);
    let want = if soft == RLIM_INFINITY {
        "unlimited".to_owned()
    } else if raise || hard == RLIM_INFINITY || hard >= alloc {
        (soft.max(alloc) / 1024).to_string()
    } else {
        (hard / 1024).to_string()
    };
    assert!(
        so.contains(&format!("[mem] memlock={want} nofile=")),
        "want memlock={want}: {so}\n{se}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
