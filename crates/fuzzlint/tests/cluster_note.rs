//! The run's one note that the cluster checks are off (`cluster-profile-missing`), through
//! the real binary: once at the top of the human output, on stderr for the machine formats,
//! never as a finding per file, and off with the rule.

use fuzz_test_support::{fuzzlint_binary, BinaryRun, NoColorVariable, ScratchDirectory};
use std::path::Path;

const NOTE: &str = "note: the cluster checks are off";

fn run_in(dir: &Path, args: &[&str]) -> BinaryRun {
    fuzzlint_binary!().run_in(dir, args, NoColorVariable::Set)
}

/// A fresh directory with `files`, removed on drop.
fn tree(tag: &str, files: &[(&str, &str)]) -> ScratchDirectory {
    let dir = ScratchDirectory::create("fuzzlint-cluster-note", tag);
    for (name, text) in files {
        dir.write_file(name, text);
    }
    dir
}

const MULTINODE: &str = "version: v4
jobs:
  train:
    image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}
    env:
      - NCCL_IB_HCA=mlx5
    script: |
      #!/bin/sh
      exec_all torchrun --nnodes=2 --nproc-per-node=4 --node-rank '$RANK' --master-addr \"$MULTINODE_NODE_IP\" /opt/train.py
    multinode: {nodes: 2, implementation: generic}
    resource:
      devices: {nvidia.com/gpu: 4}
";

const ONE_GPU: &str = "version: v4
jobs:
  smoke:
    image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}
    command: [nvidia-smi]
    resource:
      devices: {nvidia.com/gpu: 1}
";

const NO_GPU: &str = "version: v4
jobs:
  hello:
    image: {uri: docker://alpine:3.20}
    command: [echo, hello]
";

const PROFILE: &str =
    "name = \"h100-ib\"\ngpus-per-node = 4\ngpu-product = \"H100\"\nfabric = \"infiniband\"\n";

fn gpu_tree(tag: &str) -> ScratchDirectory {
    tree(
        tag,
        &[
            ("a/train.fz", MULTINODE),
            ("b/smoke.fz", ONE_GPU),
            ("c/hello.fz", NO_GPU),
            ("h100-ib.toml", PROFILE),
        ],
    )
}

#[test]
fn human_output_says_it_once_at_the_top_and_not_per_file() {
    let t = gpu_tree("human");
    let r = run_in(&t, &["check", "--fail-on", "info", "."]);
    assert!(r.stdout.starts_with(NOTE), "{}", r.stdout);
    assert_eq!(r.stdout.matches(NOTE).count(), 1, "{}", r.stdout);
    assert!(r.stdout.contains("2 files have GPU jobs"), "{}", r.stdout);
    assert!(r.stdout.contains("--cluster PATH"), "{}", r.stdout);
    assert!(r.stdout.contains("cluster = \"PATH\""), "{}", r.stdout);
    assert!(!r.stdout.contains("FZ309 "), "{}", r.stdout);
    assert!(!r.stdout.contains("[FZ309"), "{}", r.stdout);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    // The note is no finding: `--fail-on info` does not fail on it.
    assert_eq!(r.code, 0, "{}", r.stdout);
    assert!(
        r.stdout.contains("3 files: no problems found"),
        "{}",
        r.stdout
    );
}

#[test]
fn one_file_is_counted_as_one() {
    let t = gpu_tree("one");
    let r = run_in(&t, &["check", "b/smoke.fz", "c/hello.fz"]);
    assert!(r.stdout.starts_with(NOTE), "{}", r.stdout);
    assert!(r.stdout.contains("1 file has GPU jobs"), "{}", r.stdout);
}

#[test]
fn no_note_with_a_profile_or_without_gpu_jobs() {
    let t = gpu_tree("profile");
    let r = run_in(&t, &["check", "--cluster", "h100-ib.toml", "a", "b"]);
    assert!(!r.stdout.contains(NOTE), "{}", r.stdout);
    assert!(!r.stderr.contains(NOTE), "{}", r.stderr);
    let r = run_in(&t, &["check", "c/hello.fz"]);
    assert!(!r.stdout.contains(NOTE), "{}", r.stdout);
    assert_eq!(r.stdout, "1 file: no problems found\n");
}

#[test]
fn a_config_with_a_cluster_removes_its_files_from_the_count() {
    let t = gpu_tree("config");
    std::fs::write(t.join("a/fuzzlint.toml"), "cluster = \"../h100-ib.toml\"\n")
        .expect("write config");
    let r = run_in(&t, &["check", "."]);
    assert!(r.stdout.contains("1 file has GPU jobs"), "{}", r.stdout);
}

#[test]
fn machine_formats_keep_stdout_clean_and_say_it_on_stderr() {
    let t = gpu_tree("machine");
    for format in ["json", "sarif", "github"] {
        let r = run_in(&t, &["check", "--format", format, "."]);
        assert!(!r.stdout.contains(NOTE), "{format}: {}", r.stdout);
        assert_eq!(r.stderr.matches(NOTE).count(), 1, "{format}: {}", r.stderr);
        let codes: Vec<String> = match format {
            "github" => r
                .stdout
                .lines()
                .map(|l| l.split("title=").nth(1).unwrap_or("").to_owned())
                .collect(),
            _ => {
                let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap_or_else(|e| {
                    panic!("{format}: stdout is not JSON ({e}):\n{}", r.stdout)
                });
                let (list, key) = if format == "json" {
                    (&v["diagnostics"], "code")
                } else {
                    (&v["runs"][0]["results"], "ruleId")
                };
                list.as_array()
                    .unwrap_or_else(|| panic!("{format}: no list of findings:\n{v}"))
                    .iter()
                    .map(|d| d[key].as_str().unwrap_or("").to_owned())
                    .collect()
            }
        };
        assert!(
            !codes.iter().any(|c| c.contains("FZ309")),
            "{format}: {codes:?}"
        );
    }
    // SARIF still describes the rule itself (its driver lists every rule).
    let r = run_in(&t, &["check", "--format", "sarif", "c/hello.fz"]);
    assert!(r.stdout.contains("cluster-profile-missing"), "{}", r.stdout);
}

#[test]
fn turning_the_rule_off_turns_the_note_off() {
    let t = gpu_tree("off");
    let r = run_in(&t, &["check", "--ignore", "cluster-profile-missing", "."]);
    assert!(!r.stdout.contains(NOTE), "{}", r.stdout);
    let r = run_in(&t, &["check", "--ignore", "FZ309", "--format", "json", "."]);
    assert!(!r.stderr.contains(NOTE), "{}", r.stderr);
    std::fs::write(
        t.join("fuzzlint.toml"),
        "[severity]\ncluster-profile-missing = \"off\"\n",
    )
    .expect("write config");
    let r = run_in(&t, &["check", "."]);
    assert!(!r.stdout.contains(NOTE), "{}", r.stdout);
    // A suppression in the file keeps that file out of the count, and is not unused.
    std::fs::remove_file(t.join("fuzzlint.toml")).expect("rm config");
    std::fs::write(
        t.join("b/smoke.fz"),
        ONE_GPU.replace(
            "  smoke:\n",
            "  smoke:  # fuzzlint: ignore[cluster-profile-missing]\n",
        ),
    )
    .expect("write");
    let r = run_in(&t, &["check", "."]);
    assert!(r.stdout.contains("1 file has GPU jobs"), "{}", r.stdout);
    assert!(!r.stdout.contains("unused-suppression"), "{}", r.stdout);
}
