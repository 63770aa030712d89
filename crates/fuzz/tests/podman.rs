//! A real container run: `fuzz run --runtime podman` on a local busybox image
//! (scripts/container-test-image.sh imports it; no registry is contacted). The job graph, the
//! environment, the working directory and a volume shared by two jobs all go through podman's
//! own flags, as the plan shows them; a job that times out inside a container leaves no
//! container behind.
//!
//! Needs podman, runc and busybox-static (scripts/ci-packages.txt) and root; without them it
//! prints why and passes, unless `FUZZ_REQUIRE_SYSTEM_TESTS` is set.

use fuzz_test_support::podman::{
    fuzz_run_in_podman, import_podman_test_image, podman_containers, podman_test_prerequisites,
    ContainerListing, PodmanTestImage,
};
use fuzz_test_support::{fuzz_binary, require, ScratchDirectory};
use std::path::Path;
use std::process::Output;

fn fuzz_run(image: &PodmanTestImage, file: &Path, workdir: &Path) -> Output {
    fuzz_run_in_podman(&fuzz_binary!(), image, file, workdir, &[] as &[&str])
}

#[test]
fn podman_runs_a_job_chain_with_env_cwd_and_a_shared_volume() {
    if !require(podman_test_prerequisites()) {
        return;
    }
    let d = ScratchDirectory::create("fuzz-podman", "chain");
    let image = import_podman_test_image(&d);
    let uri = &image.reference;
    let file = d.write_file(
        "chain.fz",
        format!(
            r#"version: v4
volumes:
  shared:
    reference: volume://user/ephemeral
jobs:
  write:
    image:
      uri: {uri}
    cwd: /work
    env:
      - GREETING=hello from a container
    command: [/bin/sh, -c, 'pwd; echo "$GREETING" > /work/msg.txt; echo "job=$FB_JOB_NAME"']
    mounts:
      /work: shared
  read:
    image:
      uri: {uri}
    cwd: /data
    command: [/bin/sh, -c, 'cat msg.txt; test ! -e /etc/fuzz-host-marker && echo isolated']
    mounts:
      /data: shared
    depends-on:
      - name: write
        status: FINISHED
"#
        ),
    );
    let out = fuzz_run(&image, &file, &d.join("run"));
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
}

#[test]
fn a_container_that_times_out_is_stopped_and_removed() {
    if !require(podman_test_prerequisites()) {
        return;
    }
    let d = ScratchDirectory::create("fuzz-podman", "timeout");
    let image = import_podman_test_image(&d);
    let uri = &image.reference;
    let marker = format!("sleep-{}", std::process::id());
    let file = d.write_file(
        "slow.fz",
        format!(
            "version: v4\njobs:\n  slow:\n    image:\n      uri: {uri}\n    command: [/bin/sh, -c, ': {marker}; trap \"\" TERM; echo started; sleep 300']\n    policy:\n      timeout:\n        execute: 3s\n"
        ),
    );
    let out = fuzz_run(&image, &file, &d.join("run"));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(se.contains("timed out"), "{se}");
    let left = podman_containers(
        &image.containers_conf,
        &marker,
        ContainerListing::NamesAndCommands,
    );
    assert!(left.is_empty(), "containers left behind: {left:?}");
}

/// A job with a memory size gets `--ulimit memlock=…` (as Fuzzball raises RLIMIT_MEMLOCK);
/// podman 4 then dropped containers.conf's other limits and asked for nofile and nproc of
/// 1048576, which a root without CAP_SYS_RESOURCE cannot set: the container failed to start
/// ("error setting rlimit type 7"). `--ulimit host` keeps them, and memlock is what the runner
/// computed: the allocation where the hard limit may be raised, else the node's hard limit.
#[test]
fn a_job_with_a_memory_size_starts_and_gets_its_locked_memory_limit() {
    if !require(podman_test_prerequisites()) {
        return;
    }
    let d = ScratchDirectory::create("fuzz-podman", "memlock");
    let image = import_podman_test_image(&d);
    let uri = &image.reference;
    let file = d.write_file(
        "mem.fz",
        format!(
            "version: v4\njobs:\n  mem:\n    image:\n      uri: {uri}\n    command: [/bin/sh, -c, 'echo \"memlock=$(ulimit -l) nofile=$(ulimit -n)\"']\n    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 512MiB\n"
        ),
    );
    let out = fuzz_run(&image, &file, &d.join("run"));
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
}
