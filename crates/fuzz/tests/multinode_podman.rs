//! Multinode jobs in containers: `fuzz run --runtime podman --launcher local --local-netns`
//! on three network namespaces of this machine (tests/support/netns.rs), the job's image the
//! local busybox test image (scripts/container-test-image.sh). The head's command runs in a
//! container; `exec_all` there is a client of the runner's bridge outside it, which starts the
//! command in a container of the same image on every node, in that node's network namespace.
//! Afterwards no container and no process of the job is left.
//!
//! Needs root, iproute2, podman, runc and busybox-static (scripts/ci-packages.txt); without
//! them it prints why and passes, unless `FUZZ_REQUIRE_SYSTEM_TESTS` is set.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use support::{output_within, require, Hosts};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn available() -> Result<(), String> {
    Hosts::available()?;
    for tool in ["podman", "runc"] {
        if !support::netns::on_path(tool) {
            return Err(format!(
                "`{tool}` is not installed; see scripts/ci-packages.txt"
            ));
        }
    }
    if !Path::new("/bin/busybox").exists() {
        return Err("/bin/busybox is missing (busybox-static)".into());
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

/// No container labelled `marker` and no process naming it is left.
fn assert_nothing_left(conf: &Path, marker: &str) {
    let left = containers(conf, marker);
    assert!(left.is_empty(), "containers left: {left:?}");
    let procs = Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .expect("pgrep");
    assert!(
        procs.stdout.is_empty(),
        "processes left: {}",
        String::from_utf8_lossy(&procs.stdout)
    );
}

fn containers(conf: &Path, label: &str) -> Vec<String> {
    let out = Command::new("podman")
        .args(["ps", "-a", "--format", "{{.Names}}"])
        .env("CONTAINERS_CONF", conf)
        .output()
        .expect("podman ps");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(label))
        .map(str::to_owned)
        .collect()
}

/// What the nodes said: every line of `text` holding `tag`, from the tag on, sorted.
fn said(text: &str, tag: &str) -> Vec<String> {
    let mut v: Vec<String> = text
        .lines()
        .filter_map(|l| l.find(tag).map(|k| l[k..].to_owned()))
        .collect();
    v.sort();
    v
}

#[test]
fn exec_all_in_a_container_runs_in_a_container_on_every_netns_node() {
    if !require(available()) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let d = std::env::temp_dir().join(format!("fuzz-mn-podman-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    let (image, conf) = image(&d);
    let marker = format!("mnpod{}", std::process::id());
    let file = d.join("gen.fz");
    // `readlink /bin/sh` is `busybox` only in the image (the node's own is not busybox).
    let script = format!(
        "echo \"head-says ip=$MULTINODE_NODE_IP sh=$(readlink /bin/sh)\"\n\
         exec_all sh -c 'echo \"pod-says rank=$RANK host=$(hostname) sh=$(readlink /bin/sh) own=$(ip addr | awk \"/inet / && !/127.0.0.1/ {{print \\$2}}\" | cut -d/ -f1) head=$0 {marker}\"' \"$MULTINODE_NODE_IP\"\n\
         \"$MULTINODE_SSH_WRAPPER\" -o BatchMode=yes {h2} 'echo wrap-says $(hostname) $(readlink /bin/sh)'\n",
        h2 = hosts.namespace(2)
    );
    let body: String = script.lines().map(|l| format!("      {l}\n")).collect();
    std::fs::write(
        &file,
        format!(
            "version: v4\njobs:\n  {marker}:\n    image:\n      uri: {image}\n    script: |\n      #!/bin/sh\n{body}    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 256MiB\n    multinode:\n      nodes: 3\n      implementation: generic\n      procs-per-node: 1\n"
        ),
    )
    .expect("write Fuzzfile");
    let names: Vec<&str> = (0..3).map(|i| hosts.namespace(i)).collect();
    let out = output_within(
        Command::new(env!("CARGO_BIN_EXE_fuzz"))
            .arg("run")
            .arg(&file)
            .args(["--runtime", "podman", "--status", "never", "--grace", "1"])
            .arg("--workdir")
            .arg(d.join("run"))
            .args(["--hosts", &names.join(",")])
            .args(["--launcher", "local", "--local-netns", "--forward-streams"])
            .env("CONTAINERS_CONF", &conf),
        Duration::from_secs(180),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    let head = hosts.addr(0);
    assert!(
        so.contains(&format!("head-says ip={head} sh=busybox")),
        "the head's command did not run in the image: {so}\n{se}"
    );
    let want: Vec<String> = (0..3)
        .map(|r| {
            format!(
                "pod-says rank={r} host={} sh=busybox own={} head={head} {marker}",
                hosts.namespace(r),
                hosts.addr(r)
            )
        })
        .collect();
    assert_eq!(said(&so, "pod-says"), want, "{so}\n{se}");
    assert!(
        so.contains(&format!("wrap-says {} busybox", hosts.namespace(2))),
        "the SSH wrapper in the container did not reach node 2's container: {so}\n{se}"
    );
    assert_nothing_left(&conf, &marker);
    let _ = std::fs::remove_dir_all(&d);
}

/// The first node that fails stops the others, in their containers on their nodes; the job
/// fails with its code and nothing is left: no container, no process.
#[test]
fn a_failing_node_in_a_container_stops_the_others_and_nothing_is_left() {
    if !require(available()) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let d = std::env::temp_dir().join(format!("fuzz-mn-podman-fail-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    let (image, conf) = image(&d);
    let marker = format!("mnfail{}", std::process::id());
    let file = d.join("fail.fz");
    std::fs::write(
        &file,
        format!(
            "version: v4\njobs:\n  {marker}:\n    image:\n      uri: {image}\n    script: |\n      #!/bin/sh\n      exec_all sh -c '[ \"$RANK\" = 1 ] && {{ sleep 1; exit 7; }}; exec sleep 300 # {marker}'\n    multinode:\n      nodes: 3\n      implementation: generic\n      procs-per-node: 1\n"
        ),
    )
    .expect("write Fuzzfile");
    let names: Vec<&str> = (0..3).map(|i| hosts.namespace(i)).collect();
    let started = std::time::Instant::now();
    let out = output_within(
        Command::new(env!("CARGO_BIN_EXE_fuzz"))
            .arg("run")
            .arg(&file)
            .args(["--runtime", "podman", "--status", "never", "--grace", "1"])
            .arg("--workdir")
            .arg(d.join("run"))
            .args(["--hosts", &names.join(",")])
            .args(["--launcher", "local", "--local-netns"])
            .env("CONTAINERS_CONF", &conf),
        Duration::from_secs(180),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(
        se.contains(&format!(
            "node {} (rank 1) exited with code 7 first",
            hosts.namespace(1)
        )),
        "{so}\n{se}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the other nodes were not stopped"
    );
    assert_nothing_left(&conf, &marker);
    let _ = std::fs::remove_dir_all(&d);
}

/// A job that times out while `exec_all` runs in its container: the head's container is
/// stopped, and with it every node's container and process.
#[test]
fn a_container_job_that_times_out_leaves_no_node_behind() {
    if !require(available()) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let d = std::env::temp_dir().join(format!("fuzz-mn-podman-timeout-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    let (image, conf) = image(&d);
    let marker = format!("mnslow{}", std::process::id());
    let file = d.join("slow.fz");
    std::fs::write(
        &file,
        format!(
            "version: v4\njobs:\n  {marker}:\n    image:\n      uri: {image}\n    script: |\n      #!/bin/sh\n      exec_all sh -c 'echo up-$RANK; trap \"\" TERM; exec sleep 300 # {marker}'\n    policy:\n      timeout:\n        execute: 4s\n    multinode:\n      nodes: 3\n      implementation: generic\n      procs-per-node: 1\n"
        ),
    )
    .expect("write Fuzzfile");
    let names: Vec<&str> = (0..3).map(|i| hosts.namespace(i)).collect();
    let out = output_within(
        Command::new(env!("CARGO_BIN_EXE_fuzz"))
            .arg("run")
            .arg(&file)
            .args(["--runtime", "podman", "--status", "never", "--grace", "1"])
            .arg("--workdir")
            .arg(d.join("run"))
            .args(["--hosts", &names.join(",")])
            .args(["--launcher", "local", "--local-netns", "--forward-streams"])
            .env("CONTAINERS_CONF", &conf),
        Duration::from_secs(180),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(se.contains("timed out"), "{so}\n{se}");
    assert_eq!(
        said(&so, "up-").len(),
        3,
        "not every node started: {so}\n{se}"
    );
    assert_nothing_left(&conf, &marker);
    let _ = std::fs::remove_dir_all(&d);
}

/// Open MPI in the job's image: `mpirun` in the head's container starts its daemons through
/// the SSH wrapper there, which the bridge runs outside; each `orted` runs in a container of
/// the image on its node, and every rank reports from its node. Nothing is left.
#[test]
fn open_mpi_in_containers_runs_a_rank_on_every_netns_node() {
    let has_ompi = Path::new("/usr/bin/mpirun.openmpi").exists();
    if !require(available().and_then(|()| {
        if has_ompi {
            Ok(())
        } else {
            Err("Open MPI is not installed (openmpi-bin)".into())
        }
    })) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let d = std::env::temp_dir().join(format!("fuzz-mn-podman-ompi-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    let (_, conf) = image(&d);
    let out = output_within(
        Command::new("bash").arg(root().join("scripts/container-test-image-ompi.sh")),
        Duration::from_secs(120),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "container-test-image-ompi.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let image = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let marker = format!("mnompi{}", std::process::id());
    let subnet = hosts.subnet();
    let file = d.join("ompi.fz");
    std::fs::write(
        &file,
        format!(
            "version: v4\njobs:\n  {marker}:\n    image:\n      uri: {image}\n    script: |\n      #!/bin/sh\n      echo \"ompi-says $(hostname) $OMPI_COMM_WORLD_RANK $(readlink /bin/sh)\"\n    env:\n      - OMPI_ALLOW_RUN_AS_ROOT=1\n      - OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n      - OMPI_MCA_plm_rsh_no_tree_spawn=1\n      - OMPI_MCA_oob_tcp_if_include={subnet}\n      - OMPI_MCA_btl_tcp_if_include={subnet}\n    multinode:\n      nodes: 3\n      implementation: openmpi\n      procs-per-node: 1\n"
        ),
    )
    .expect("write Fuzzfile");
    let names: Vec<&str> = (0..3).map(|i| hosts.namespace(i)).collect();
    let out = output_within(
        Command::new(env!("CARGO_BIN_EXE_fuzz"))
            .arg("run")
            .arg(&file)
            .args(["--runtime", "podman", "--status", "never", "--grace", "1"])
            .arg("--workdir")
            .arg(d.join("run"))
            .args(["--hosts", &names.join(",")])
            .args(["--launcher", "local", "--local-netns", "--forward-streams"])
            .env("CONTAINERS_CONF", &conf),
        Duration::from_secs(180),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    let want: Vec<String> = (0..3)
        .map(|r| format!("ompi-says {} {r} busybox", hosts.namespace(r)))
        .collect();
    assert_eq!(said(&so, "ompi-says"), want, "{so}\n{se}");
    let left = containers(&conf, &marker);
    assert!(left.is_empty(), "containers left: {left:?}");
    let procs = Command::new("pgrep")
        .args(["-f", "orted"])
        .output()
        .expect("pgrep");
    assert!(
        !String::from_utf8_lossy(&procs.stdout).contains(&marker),
        "processes left"
    );
    let _ = std::fs::remove_dir_all(&d);
}
