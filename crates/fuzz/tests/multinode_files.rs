//! A multinode job's `files:` and volume mounts on every node, on the host runtime: the head
//! runs in its mount namespace, and the nodes reached over ssh run `fuzz __sandbox`, which
//! builds the same view from that node's own filesystem. Three network-namespace hosts with
//! an OpenSSH server each (fuzz_test_support::netns).
//!
//! Needs root; without it the test prints why and passes, unless `FUZZ_REQUIRE_SYSTEM_TESTS`
//! is set.

use fuzz_test_support::{fuzz_binary, output_within_or_fail, require, said_lines};
use fuzz_test_support::{Hosts, NodeLauncher, ScratchDirectory, Sshd};
use std::path::Path;
use std::time::Duration;

#[test]
fn every_node_over_ssh_sees_the_jobs_files_and_volume_at_their_paths() {
    if !require(Hosts::available().and_then(|()| Sshd::available())) {
        return;
    }
    if !fuzz_test_support::system::on_path("bwrap") {
        panic!("bubblewrap (`bwrap`) is not installed: CI installs scripts/ci-packages.txt");
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let sshd = Sshd::start(&hosts, 22).expect("start sshd on each host");
    let d = ScratchDirectory::create("fuzz-mn-files", "ssh");
    let tmp_file = format!("/tmp/fuzz-mn-file-{}.py", std::process::id());
    let data = format!("/fuzz-mn-data-{}", std::process::id());
    let f = d.write_file(
        "files.fz",
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
    );
    let mut argv = hosts.fuzz_run_on_every_host_command_line(
        &fuzz_binary!(),
        &f,
        &d.join("run"),
        NodeLauncher::Ssh {
            client_config: &sshd.client_config(),
        },
    );
    argv.extend(["--grace", "1", "--keep"].map(Into::into));
    let out = output_within_or_fail(&mut hosts.exec(0, &argv), Duration::from_secs(60));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    let said = said_lines(&so, "node-sees");
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
}
