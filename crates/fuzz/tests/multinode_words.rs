//! `$MULTINODE_NODE_IP` in `command:` words: Fuzzball expands it on the head before the
//! program runs, so the program receives the head's address, not the text. Three nodes on
//! this machine, each in its own network namespace (`--launcher local --local-netns`), so
//! the head's address is not this machine's.
//!
//! Needs root; without it the test prints why and passes, unless `FUZZ_REQUIRE_SYSTEM_TESTS`
//! is set.

mod support;

use std::time::Duration;
use support::{output_within, require, Hosts};

#[test]
fn multinode_node_ip_in_command_words_arrives_as_the_heads_address() {
    if !require(Hosts::available()) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let d = std::env::temp_dir().join(format!("fuzz-mn-words-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
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
    let host_list = (0..3)
        .map(|i| hosts.namespace(i).to_owned())
        .collect::<Vec<_>>()
        .join(",");
    let workdir = d.join("run");
    let argv = [
        env!("CARGO_BIN_EXE_fuzz"),
        "run",
        f.to_str().expect("utf-8"),
        "--runtime",
        "host",
        "--status",
        "never",
        "--workdir",
        workdir.to_str().expect("utf-8"),
        "--hosts",
        &host_list,
        "--launcher",
        "local",
        "--local-netns",
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
        .filter_map(|l| l.find("words-say").map(|k| l[k..].to_owned()))
        .collect();
    said.sort();
    let head = hosts.addr(0);
    let want: Vec<String> = (0..3)
        .map(|r| format!("words-say rank={r} addr={head} url=tcp://{head}:29500"))
        .collect();
    assert_eq!(said, want, "{so}\n{se}");
    let _ = std::fs::remove_dir_all(&d);
}
