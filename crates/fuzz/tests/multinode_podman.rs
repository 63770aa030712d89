//! Multinode jobs in containers: `fuzz run --runtime podman --launcher local --local-netns`
//! on three network namespaces of this machine (fuzz_test_support::netns), the job's image the
//! local busybox test image (scripts/container-test-image.sh). The head's command runs in a
//! container; `exec_all` there is a client of the runner's bridge outside it, which starts the
//! command in a container of the same image on every node, in that node's network namespace.
//! Afterwards no container and no process of the job is left.
//!
//! Needs root, iproute2, podman, runc and busybox-static (scripts/ci-packages.txt); without
//! them it prints why and passes, unless `FUZZ_REQUIRE_SYSTEM_TESTS` is set.

use fuzz_test_support::podman::{
    assert_no_container_or_process_left, fuzz_run_in_podman, import_podman_open_mpi_image,
    import_podman_test_image, podman_containers, podman_test_prerequisites, ContainerListing,
    PodmanTestImage,
};
use fuzz_test_support::{fuzz_binary, require, said_lines, Hosts, ScratchDirectory};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

fn available() -> Result<(), String> {
    Hosts::available()?;
    podman_test_prerequisites()
}

/// Whether the nodes' output is forwarded to the runner's (`--forward-streams`).
#[derive(Clone, Copy)]
enum NodeStreams {
    Forwarded,
    NotForwarded,
}

/// `fuzz run FILE` in podman on the three hosts' network namespaces (`--launcher local
/// --local-netns`), the run directory `DIR/run`.
fn run_on_netns_nodes(
    image: &PodmanTestImage,
    file: &Path,
    dir: &Path,
    hosts: &Hosts,
    streams: NodeStreams,
) -> Output {
    let names: Vec<&str> = (0..3).map(|i| hosts.namespace(i)).collect();
    let host_list = names.join(",");
    let mut extra = vec![
        "--hosts",
        &host_list,
        "--launcher",
        "local",
        "--local-netns",
    ];
    if let NodeStreams::Forwarded = streams {
        extra.push("--forward-streams");
    }
    fuzz_run_in_podman(&fuzz_binary!(), image, file, &dir.join("run"), &extra)
}

#[test]
fn exec_all_in_a_container_runs_in_a_container_on_every_netns_node() {
    if !require(available()) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let d = ScratchDirectory::create("fuzz-mn-podman", "exec-all");
    let image = import_podman_test_image(&d);
    let uri = &image.reference;
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
            "version: v4\njobs:\n  {marker}:\n    image:\n      uri: {uri}\n    script: |\n      #!/bin/sh\n{body}    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 256MiB\n    multinode:\n      nodes: 3\n      implementation: generic\n      procs-per-node: 1\n"
        ),
    )
    .expect("write Fuzzfile");
    let out = run_on_netns_nodes(&image, &file, &d, &hosts, NodeStreams::Forwarded);
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
    assert_eq!(said_lines(&so, "pod-says"), want, "{so}\n{se}");
    assert!(
        so.contains(&format!("wrap-says {} busybox", hosts.namespace(2))),
        "the SSH wrapper in the container did not reach node 2's container: {so}\n{se}"
    );
    assert_no_container_or_process_left(&image.containers_conf, &marker);
}

/// The first node that fails stops the others, in their containers on their nodes; the job
/// fails with its code and nothing is left: no container, no process.
#[test]
fn a_failing_node_in_a_container_stops_the_others_and_nothing_is_left() {
    if !require(available()) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let d = ScratchDirectory::create("fuzz-mn-podman", "fail");
    let image = import_podman_test_image(&d);
    let uri = &image.reference;
    let marker = format!("mnfail{}", std::process::id());
    let file = d.write_file(
        "fail.fz",
        format!(
            "version: v4\njobs:\n  {marker}:\n    image:\n      uri: {uri}\n    script: |\n      #!/bin/sh\n      exec_all sh -c '[ \"$RANK\" = 1 ] && {{ sleep 1; exit 7; }}; exec sleep 300 # {marker}'\n    multinode:\n      nodes: 3\n      implementation: generic\n      procs-per-node: 1\n"
        ),
    );
    let started = std::time::Instant::now();
    let out = run_on_netns_nodes(&image, &file, &d, &hosts, NodeStreams::NotForwarded);
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
    assert_no_container_or_process_left(&image.containers_conf, &marker);
}

/// A job that times out while `exec_all` runs in its container: the head's container is
/// stopped, and with it every node's container and process.
#[test]
fn a_container_job_that_times_out_leaves_no_node_behind() {
    if !require(available()) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let d = ScratchDirectory::create("fuzz-mn-podman", "timeout");
    let image = import_podman_test_image(&d);
    let uri = &image.reference;
    let marker = format!("mnslow{}", std::process::id());
    let file = d.write_file(
        "slow.fz",
        format!(
            "version: v4\njobs:\n  {marker}:\n    image:\n      uri: {uri}\n    script: |\n      #!/bin/sh\n      exec_all sh -c 'echo up-$RANK; trap \"\" TERM; exec sleep 300 # {marker}'\n    policy:\n      timeout:\n        execute: 4s\n    multinode:\n      nodes: 3\n      implementation: generic\n      procs-per-node: 1\n"
        ),
    );
    let out = run_on_netns_nodes(&image, &file, &d, &hosts, NodeStreams::Forwarded);
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(se.contains("timed out"), "{so}\n{se}");
    assert_eq!(
        said_lines(&so, "up-").len(),
        3,
        "not every node started: {so}\n{se}"
    );
    assert_no_container_or_process_left(&image.containers_conf, &marker);
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
    let d = ScratchDirectory::create("fuzz-mn-podman", "ompi");
    let test_image = import_podman_test_image(&d);
    let image = PodmanTestImage {
        reference: import_podman_open_mpi_image(),
        ..test_image
    };
    let uri = &image.reference;
    let marker = format!("mnompi{}", std::process::id());
    let subnet = hosts.subnet();
    let file = d.write_file(
        "ompi.fz",
        format!(
            "version: v4\njobs:\n  {marker}:\n    image:\n      uri: {uri}\n    script: |\n      #!/bin/sh\n      echo \"ompi-says $(hostname) $OMPI_COMM_WORLD_RANK $(readlink /bin/sh)\"\n    env:\n      - OMPI_ALLOW_RUN_AS_ROOT=1\n      - OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n      - OMPI_MCA_plm_rsh_no_tree_spawn=1\n      - OMPI_MCA_oob_tcp_if_include={subnet}\n      - OMPI_MCA_btl_tcp_if_include={subnet}\n    multinode:\n      nodes: 3\n      implementation: openmpi\n      procs-per-node: 1\n"
        ),
    );
    let out = run_on_netns_nodes(&image, &file, &d, &hosts, NodeStreams::Forwarded);
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    let want: Vec<String> = (0..3)
        .map(|r| format!("ompi-says {} {r} busybox", hosts.namespace(r)))
        .collect();
    assert_eq!(said_lines(&so, "ompi-says"), want, "{so}\n{se}");
    let left = podman_containers(&image.containers_conf, &marker, ContainerListing::Names);
    assert!(left.is_empty(), "containers left: {left:?}");
    let procs = Command::new("pgrep")
        .args(["-f", "orted"])
        .output()
        .expect("pgrep");
    assert!(
        !String::from_utf8_lossy(&procs.stdout).contains(&marker),
        "processes left"
    );
}
