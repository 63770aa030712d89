//! A multinode job's `files:` and volume mounts on every node, on the host runtime: the head
//! runs in its mount namespace, and the nodes reached over ssh run `fuzz __sandbox`, which
//! builds the same view from that node's own filesystem. Three network-namespace hosts with
//! an OpenSSH server each (tests/support/netns.rs).
//!
//! Needs root; without it the test prints why and passes, unless `FUZZ_REQUIRE_SYSTEM_TESTS`
//! is set.

mod support;

use std::path::Path;
use std::time::Duration;
use support::{output_within, require, Hosts, Sshd};

#[test]
fn every_node_over_ssh_sees_the_jobs_files_and_volume_at_their_paths() {
    if !require(Hosts::available().and_then(|()| Sshd::available())) {
        return;
    }
    if !support::netns::on_path("bwrap") {
        panic!("bubblewrap (`bwrap`) is not installed: CI installs scripts/ci-packages.txt");
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let sshd = Sshd::start(&hosts, 22).expect("start sshd on each host");
    let d = std::env::temp_dir().join(format!("fuzz-mn-files-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    let tmp_file = format!("/tmp/fuzz-mn-file-{}.py", std::process::id());
    let data = format!("/fuzz-mn-data-{}", std::process::id());
    let f = d.join("files.fz");
    std::fs::write(
        &f,
        format!(
            r#"version: v4
files:
  train.py: |
    print("the job's file")
volumes:
  data:
    reference: volume://user/ephemeral
jobs:
  train:
    image:
      uri: docker://alpine:3.20
    files:
      {tmp_file}: file://train.py
    mounts:
      {data}: data
    cwd: {data}
    command:
      - exec_all
      - /bin/sh
      - -c
      - 'echo "node-sees rank=$RANK file=$(cat {tmp_file}) cwd=$(pwd)"; echo "$RANK" > {data}/rank-$RANK'
    resource:
      cpu:
        cores: 1
      memory:
        size: 1GiB
    multinode:
      nodes: 3
      implementation: generic
      procs-per-node: 1
"#
        ),
    )
    .expect("write Fuzzfile");
    let names: Vec<String> = (0..3).map(|i| hosts.host_name(i)).collect();
    let cfg = sshd.client_config().display().to_string();
    let workdir = d.join("run").display().to_string();
    let file = f.display().to_string();
    let host_list = names.join(",");
    let argv = [
        env!("CARGO_BIN_EXE_fuzz"),
        "run",
        &file,
        "--runtime",
        "host",
        "--status",
        "never",
        "--grace",
        "1",
        "--keep",
        "--workdir",
        &workdir,
        "--hosts",
        &host_list,
        "--launcher",
        "ssh",
        "--ssh-config",
        &cfg,
        "--forward-streams",
    ];
    let out = output_within(&mut hosts.exec(0, &argv), Duration::from_secs(60))
        .unwrap_or_else(|e| panic!("{e}"));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    let mut said: Vec<String> = so
        .lines()
        .filter_map(|l| l.find("node-sees").map(|k| l[k..].to_owned()))
        .collect();
    said.sort();
    let want: Vec<String> = (0..3)
        .map(|r| format!("node-sees rank={r} file=print(\"the job's file\") cwd={data}"))
        .collect();
    assert_eq!(said, want, "{so}\n{se}");
    // Every node wrote into the one volume through its path.
    let vol = d.join("run/volumes/data");
    for r in 0..3 {
        assert!(vol.join(format!("rank-{r}")).exists(), "rank {r}: {se}");
    }
    // Nothing on the node.
    assert!(!Path::new(&tmp_file).exists(), "{tmp_file} was left");
    assert!(!Path::new(&data).exists(), "{data} was left");
    let _ = std::fs::remove_dir_all(&d);
}
