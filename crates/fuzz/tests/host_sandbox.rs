//! The host runtime's filesystem and limits with real processes: a job shaped like the
//! Fuzzball docs' single-node example (`files:` at `/tmp/...`, a volume mounted at `/data`,
//! `cwd`) runs on the node's own programs and sees its files at their paths, in a private
//! mount namespace that leaves nothing on the node; its locked-memory limit is its memory
//! allocation, never lower than the node's.

use fuzz_test_support::fake_node::{install_stand_in, path_with_first};
use fuzz_test_support::process::{files_below, processes_matching};
use fuzz_test_support::system::on_path;
use fuzz_test_support::{fuzz_binary, lossy_text as text, FuzzRunFlags, ScratchDirectory};
use fuzz_test_support::{RuntimeFlag, StatusLine};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzz-sandbox-test", name)
}

/// `prlimit --memlock=NODE fuzz run FILE --workdir DIR/run --runtime RUNTIME --status never`.
fn fuzz_run_under_prlimit(
    node_memlock: &str,
    file: &Path,
    dir: &Path,
    runtime: RuntimeFlag,
) -> Command {
    let flags = FuzzRunFlags {
        runtime,
        status: StatusLine::Never,
    };
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--memlock={node_memlock}"))
        .args(fuzz_binary!().fuzz_run_command_line(file, &dir.join("run"), flags));
    cmd
}

/// `fuzz run --runtime host` of `fuzzfile`, started through `prlimit --memlock=SOFT:HARD` so
/// the node's limit is known.
fn run(dir: &Path, fuzzfile: &str, memlock: &str, env: &[(&str, &str)]) -> Output {
    let f = dir.join("job.fz");
    std::fs::write(&f, fuzzfile).expect("write the Fuzzfile");
    fuzz_run_under_prlimit(memlock, &f, dir, RuntimeFlag::Host)
        .arg("--keep")
        .envs(env.iter().copied())
        .output()
        .expect("run fuzz")
}

/// The docs' single-node example with a shell instead of torchrun: the script reads the file
/// at its `/tmp` path, writes into the volume at `/data`, and prints where it runs.
fn single_node(tmp_file: &str, memory: &str) -> String {
    format!(
        r#"version: v4
files:
  allreduce.py: |
    print("all-reduce stand-in")
jobs:
  nccl-torchrun:
    image:
      uri: docker://nvcr.io/nvidia/pytorch:25.01-py3
    files:
      {tmp_file}: file://allreduce.py
    mounts:
      /data: data
    cwd: /data/work
    script: |
      #!/bin/bash
      set -e
      cat {tmp_file}
      echo written > /data/result.txt
      echo "cwd=$(pwd)"
      echo "memlock=$(ulimit -l)"
      which bash
    resource:
      memory:
        size: {memory}
volumes:
  data:
    reference: volume://user/ephemeral
"#
    )
}

#[test]
fn the_docs_single_node_job_sees_its_files_and_volume_and_leaves_nothing() {
    if !on_path("bwrap") {
        panic!("bubblewrap (`bwrap`) is not installed: CI installs scripts/ci-packages.txt");
    }
    let d = scratch("single");
    let tmp_file = format!("/tmp/fuzz-allreduce-{}.py", std::process::id());
    let data_before = Path::new("/data").exists();
    let out = run(&d, &single_node(&tmp_file, "6MiB"), "2097152:8388608", &[]);
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(
        so.contains("[nccl-torchrun] print(\"all-reduce stand-in\")"),
        "{so}"
    );
    assert!(so.contains("[nccl-torchrun] cwd=/data/work"), "{so}");
    // The node's own programs.
    assert!(
        so.contains("[nccl-torchrun] /usr/bin/bash") || so.contains("[nccl-torchrun] /bin/bash"),
        "{so}"
    );
    // 6 MiB in KiB, as bash prints it: raised from the node's 2 MiB.
    assert!(so.contains("[nccl-torchrun] memlock=6144"), "{so}");
    // Written through /data into the volume's directory.
    let vol = d.join("run/volumes");
    let found: Vec<PathBuf> = files_below(&vol)
        .into_iter()
        .filter(|p| p.ends_with("result.txt"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        std::fs::read_to_string(&found[0]).expect("result"),
        "written\n"
    );
    // Nothing on the node: no mount point at the file's path, /data as it was.
    assert!(
        !Path::new(&tmp_file).exists(),
        "{tmp_file} was left on the node"
    );
    assert_eq!(
        Path::new("/data").exists(),
        data_before,
        "/data was left on the node"
    );
}

#[test]
fn the_locked_memory_limit_is_never_lowered() {
    let d = scratch("never-lowered");
    let tmp_file = format!("/tmp/fuzz-lowered-{}.py", std::process::id());
    // A 4 MiB job on a node whose limit is 8 MiB keeps 8 MiB.
    let out = run(&d, &single_node(&tmp_file, "4MiB"), "8388608:8388608", &[]);
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("[nccl-torchrun] memlock=8192"), "{so}");
}

/// Without bubblewrap (the `unshare` fallback forced), a destination that does not exist on
/// the node is refused before anything starts, naming the package to install.
#[test]
fn without_bubblewrap_a_missing_destination_is_refused_with_what_to_install() {
    let d = scratch("no-bwrap");
    let tmp_file = format!("/tmp/fuzz-nobwrap-{}.py", std::process::id());
    let out = run(
        &d,
        &single_node(&tmp_file, "4MiB"),
        "8388608:8388608",
        &[("FUZZ_SANDBOX", "unshare")],
    );
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(se.contains("job `nccl-torchrun`"), "{se}");
    assert!(se.contains("apt-get install bubblewrap"), "{se}");
    assert!(!d.join("run/logs").exists(), "something started");
}

/// podman gets `--ulimit memlock=SOFT:HARD`: the job's memory allocation, or the node's limit
/// where that is higher. A stand-in `podman` on PATH records its command line.
#[test]
fn podman_gets_the_memory_allocation_as_its_memlock_ulimit_never_lower() {
    let d = scratch("podman-ulimit");
    let bin = d.join("bin");
    let record = d.join("argv");
    install_stand_in(
        &bin,
        "podman",
        &format!("#!/bin/sh\nprintf '%s\\n' \"$@\" > {}\n", record.display()),
    );
    let path = path_with_first(&bin);
    for (memory, node, want) in [
        ("6MiB", "2097152:8388608", "memlock=6291456:8388608"),
        ("4MiB", "8388608:8388608", "memlock=8388608:8388608"),
        ("4MiB", "unlimited:unlimited", "memlock=-1:-1"),
    ] {
        let f = d.join("p.fz");
        std::fs::write(
            &f,
            format!("version: v4\njobs:\n  p:\n    image:\n      uri: docker://alpine:3.20\n    command: [true]\n    resource:\n      memory:\n        size: {memory}\n"),
        )
        .expect("write");
        let out = fuzz_run_under_prlimit(node, &f, &d, RuntimeFlag::Podman)
            .env("PATH", &path)
            .output()
            .expect("run fuzz");
        let se = text(&out.stderr);
        if node.starts_with("unlimited") && !out.status.success() && se.contains("prlimit") {
            // Raising the node's own hard limit to unlimited needs CAP_SYS_RESOURCE.
            continue;
        }
        assert_eq!(out.status.code(), Some(0), "{se}");
        let argv = std::fs::read_to_string(&record).expect("argv");
        let words: Vec<&str> = argv.lines().collect();
        // `--ulimit host` comes first (podman's own defaults kept); then the memlock one.
        let k = words
            .windows(2)
            .position(|w| w[0] == "--ulimit" && w[1].starts_with("memlock="))
            .expect("--ulimit memlock=");
        assert_eq!(
            words[k + 1],
            want,
            "{memory} on a node at {node}: {words:?}"
        );
    }
}

/// apptainer's containers inherit its limits: it starts through `prlimit` too. A stand-in
/// `apptainer` prints the limit it was started with.
#[test]
fn apptainer_starts_with_the_memory_allocation_as_its_memlock() {
    let d = scratch("apptainer-memlock");
    let bin = d.join("bin");
    install_stand_in(&bin, "apptainer", "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'apptainer version 1.3.0'; exit 0; fi\necho \"memlock=$(ulimit -l)\"\n");
    let path = path_with_first(&bin);
    let f = d.write_file(
        "a.fz",
        "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine:3.20\n    command: [true]\n    resource:\n      memory:\n        size: 6MiB\n",
    );
    let out = fuzz_run_under_prlimit("2097152:8388608", &f, &d, RuntimeFlag::NotGiven)
        .args(["--runtime", "apptainer"])
        .env("PATH", &path)
        .output()
        .expect("run fuzz");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("[a] memlock=6144"), "{so}\n{se}");
}

/// A job in the namespace that outlives its timeout ends with everything it started:
/// bubblewrap, the job's shell and its background child.
#[test]
fn a_namespaced_job_that_times_out_leaves_nothing_running() {
    let d = scratch("timeout");
    let marker = format!("fuzz-sandbox-sleep-{}", std::process::id());
    let tmp_file = format!("/tmp/fuzz-timeout-{}.sh", std::process::id());
    let f = d.write_file(
        "job.fz",
        format!(
            "version: v4\nfiles:\n  s: |\n    sleep 300 &\n    exec -a {marker} sleep 301\njobs:\n  slow:\n    image:\n      uri: docker://alpine:3.20\n    files:\n      {tmp_file}: file://s\n    command: [bash, {tmp_file}]\n    policy:\n      timeout:\n        execute: 1s\n"
        ),
    );
    let out = fuzz_binary!()
        .fuzz_run_command(&f, &d.join("run"), FuzzRunFlags::HOST_WITHOUT_STATUS_LINE)
        .args(["--grace", "1"])
        .output()
        .expect("run fuzz");
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(se.contains("timed out"), "{se}");
    let left = processes_matching(&marker);
    assert!(left.is_empty(), "left: {left}");
    let bwraps = processes_matching(&tmp_file);
    assert!(bwraps.is_empty(), "left: {bwraps}");
    assert!(!Path::new(&tmp_file).exists());
}

/// A job in the namespace killed by a signal is reported as such (bubblewrap exits 128 + N),
/// as it is without the namespace.
#[test]
fn a_namespaced_job_killed_by_a_signal_says_so() {
    let d = scratch("signal");
    let tmp_file = format!("/tmp/fuzz-signal-{}.txt", std::process::id());
    let f = d.write_file(
        "job.fz",
        format!(
            "version: v4\nfiles:\n  s: x\njobs:\n  sig:\n    image:\n      uri: docker://alpine:3.20\n    files:\n      {tmp_file}: file://s\n    command: [/bin/sh, -c, 'cat {tmp_file}; kill -SEGV $$']\n"
        ),
    );
    let out = fuzz_binary!()
        .fuzz_run_command(&f, &d.join("run"), FuzzRunFlags::HOST_WITHOUT_STATUS_LINE)
        .output()
        .expect("run fuzz");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(so.contains("[sig] x"), "{so}");
    assert!(se.contains("sig failed: killed by signal 11"), "{se}");
}

/// A service's `exec` readiness probe sees the service's view: a file the service writes into
/// its volume, at the volume's path that exists only in the namespace.
#[test]
fn an_exec_probe_sees_the_services_mounts() {
    let d = scratch("probe");
    let data = format!("/fuzz-probe-data-{}", std::process::id());
    let f = d.write_file(
        "svc.fz",
        format!(
            r#"version: v4
volumes:
  cache:
    reference: volume://user/ephemeral
services:
  cache:
    image:
      uri: docker://redis:7.4
    mounts:
      {data}: cache
    command: [/bin/sh, -c, 'sleep 0.3; echo up > {data}/ready; sleep 30']
    readiness-probe:
      exec:
        command: [test, -e, {data}/ready]
      period-seconds: 1
jobs:
  use:
    image:
      uri: docker://alpine:3.20
    mounts:
      {data}: cache
    command: [cat, {data}/ready]
    depends-on:
      - name: cache
        status: RUNNING
"#
        ),
    );
    let out = fuzz_binary!()
        .fuzz_run_command(&f, &d.join("run"), FuzzRunFlags::HOST_WITHOUT_STATUS_LINE)
        .args(["--ready-timeout", "10"])
        .output()
        .expect("run fuzz");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(se.contains("[cache] readiness probe passed"), "{se}");
    assert!(so.contains("[use] up"), "{so}");
    assert!(!Path::new(&data).exists(), "{data} was left");
}
