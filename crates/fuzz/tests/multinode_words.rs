//! `$MULTINODE_NODE_IP` in `command:` words: Fuzzball expands it on the head before the
//! program runs, so the program receives the head's address, not the text. Three nodes on
//! this machine, each in its own network namespace (`--launcher local --local-netns`), so
//! the head's address is not this machine's.
//!
//! Needs root; without it the test prints why and passes, unless `FUZZ_REQUIRE_SYSTEM_TESTS`
//! is set.

use fuzz_test_support::{fuzz_binary, output_within_or_fail, require, said_lines};
use fuzz_test_support::{Hosts, NodeLauncher, ScratchDirectory};
use std::time::Duration;

#[test]
fn multinode_node_ip_in_command_words_arrives_as_the_heads_address() {
    if !require(Hosts::available()) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let d = ScratchDirectory::create("fuzz-mn-words", "netns");
    let f = d.join("words.fz");
    // A word that is the variable, one that holds it, and `$RANK`, which is `exec_all`'s.
    std::fs::write(
        &f,
        r#"version: v4
jobs:
  train:
    image:
      uri: docker://alpine:3.20
    command:
      - exec_all
      - /bin/sh
      - -c
      - 'echo "words-say rank=$RANK addr=$1 url=$2"'
      - sh
      - $MULTINODE_NODE_IP
      - tcp://${MULTINODE_NODE_IP}:29500
    resource:
      cpu:
        cores: 1
      memory:
        size: 1GiB
    multinode:
      nodes: 3
      implementation: generic
      procs-per-node: 1
"#,
    )
    .expect("write Fuzzfile");
    let argv = hosts.fuzz_run_on_every_host_command_line(
        &fuzz_binary!(),
        &f,
        &d.join("run"),
        NodeLauncher::LocalNetworkNamespaces,
    );
    let out = output_within_or_fail(&mut hosts.exec(0, &argv), Duration::from_secs(60));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    let said = said_lines(&so, "words-say");
    let head = hosts.addr(0);
    let want: Vec<String> = (0..3)
        .map(|r| format!("words-say rank={r} addr={head} url=tcp://{head}:29500"))
        .collect();
    assert_eq!(said, want, "{so}\n{se}");
}
