//! The `fuzz` binary: `fuzz plan` output, refusals and exit codes.

use fuzz_test_support::ScratchDirectory;
use fuzz_test_support::{fuzz_binary, lossy_text as text, workspace_root as root};
use std::process::Output;

/// `fuzz ARGS` in the workspace's root with `NO_COLOR=1`.
fn fuzz(args: &[&str]) -> Output {
    fuzz_binary!()
        .command()
        .args(args)
        .current_dir(root())
        .env("NO_COLOR", "1")
        .output()
        .expect("run fuzz")
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

#[test]
fn plan_prints_json_and_writes_it_with_o() {
    let scratch = ScratchDirectory::create("fuzz-cli", "plan-o");
    let o = fuzz(&["plan", "examples/pipeline.fz"]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    assert_eq!(v["plan_version"], 1);
    assert_eq!(v["workflow"]["source"], "pipeline.fz");

    let out = scratch.join("plan.json");
    let o = fuzz(&[
        "plan",
        "examples/pipeline.fz",
        "-o",
        out.to_str().expect("utf-8"),
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&out).expect("written"), stdout);
}

#[test]
fn plan_output_does_not_depend_on_the_directory_it_runs_in() {
    let a = fuzz(&["plan", "examples/pipeline.fz"]);
    let abs = root().join("examples/pipeline.fz");
    let b = fuzz_binary!()
        .command()
        .args(["plan", abs.to_str().expect("utf-8")])
        .current_dir(std::env::temp_dir())
        .output()
        .expect("run fuzz");
    assert_eq!(code(&b), 0);
    assert_eq!(a.stdout, b.stdout);
}

#[test]
fn plan_with_a_cluster_and_hosts() {
    let o = fuzz(&[
        "plan",
        "examples/nccl-torchrun-generic.fz",
        "--cluster",
        "examples/clusters/h100-ib.toml",
        "--hosts",
        "gpu-a,gpu-b",
    ]);
    assert_eq!(code(&o), 0, "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&text(&o.stdout)).expect("JSON");
    assert_eq!(v["cluster"]["name"], "h100-ib");
    assert_eq!(
        v["jobs"][0]["multinode"]["hosts"],
        serde_json::json!(["gpu-a", "gpu-b"])
    );
    assert_eq!(v["jobs"][0]["launchers"][0]["world_size"], 8);
}

/// Hosts in Slurm's bracket syntax and from an MPICH hostfile give the same plan as a list.
#[test]
fn plan_hosts_from_a_node_list_or_a_hostfile() {
    let scratch = ScratchDirectory::create("fuzz-cli", "hostfile");
    let listed = fuzz(&[
        "plan",
        "examples/nccl-torchrun-generic.fz",
        "--hosts",
        "gpu01,gpu02",
    ]);
    assert_eq!(code(&listed), 0, "{}", text(&listed.stderr));
    let bracket = fuzz(&[
        "plan",
        "examples/nccl-torchrun-generic.fz",
        "--hosts",
        "gpu[01-02]:4",
    ]);
    assert_eq!(code(&bracket), 0, "{}", text(&bracket.stderr));
    assert_eq!(listed.stdout, bracket.stdout);
    let hostfile = scratch.join("hostfile");
    std::fs::write(&hostfile, "# two nodes\ngpu01:4\ngpu02:4\n").expect("hostfile");
    let from_file = fuzz(&[
        "plan",
        "examples/nccl-torchrun-generic.fz",
        "--hostfile",
        hostfile.to_str().expect("utf-8"),
    ]);
    assert_eq!(code(&from_file), 0, "{}", text(&from_file.stderr));
    assert_eq!(listed.stdout, from_file.stdout);
    let bad = fuzz(&[
        "plan",
        "examples/nccl-torchrun-generic.fz",
        "--hosts",
        "gpu[02-01]",
    ]);
    assert_eq!(code(&bad), 2);
    assert!(
        text(&bad.stderr).contains("--hosts"),
        "{}",
        text(&bad.stderr)
    );
}

#[test]
fn graph_formats() {
    let o = fuzz(&["plan", "examples/pipeline.fz", "--format", "dot"]);
    assert_eq!(code(&o), 0);
    assert!(text(&o.stdout).starts_with("digraph \"pipeline.fz\" {"));
    let o = fuzz(&["plan", "examples/pipeline.fz", "--format", "mermaid"]);
    assert_eq!(code(&o), 0);
    assert!(text(&o.stdout).starts_with("flowchart LR\n"));
}

#[test]
fn a_fuzzfile_with_errors_is_refused_with_its_diagnostics() {
    let scratch = ScratchDirectory::create("fuzz-cli", "refused");
    let bad = scratch.join("bad.fz");
    std::fs::write(
        &bad,
        "version: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3}\n    command: [echo, hi]\n    depends-on: [{name: nowhere, status: FINISHED}]\n",
    )
    .expect("write");
    let o = fuzz(&["plan", bad.to_str().expect("utf-8")]);
    assert_eq!(code(&o), 1);
    assert!(o.stdout.is_empty(), "no plan is printed");
    let err = text(&o.stderr);
    assert!(err.contains("1 error — not plannable"), "{err}");
    assert!(err.contains("error[FZ020 unknown-reference] 6:"), "{err}");
    assert!(err.contains("nowhere"), "{err}");
}

#[test]
fn usage_and_io_errors_exit_2() {
    for args in [
        &["plan"][..],
        &["plan", "examples/pipeline.fz", "--format", "yaml"],
        &["plan", "examples/pipeline.fz", "--no-such-flag"],
        &["plan", "examples/does-not-exist.fz"],
        &[
            "plan",
            "examples/pipeline.fz",
            "--cluster",
            "examples/clusters/none.toml",
        ],
        &["plan", "examples/pipeline.fz", "--hosts", ""],
        &["plan", "examples/pipeline.fz", "--hosts", "a,,b"],
        &[
            "plan",
            "examples/nccl-tests-mpirun.fz",
            "--hosts",
            "only-one",
        ],
        &["frobnicate"],
    ] {
        let o = fuzz(args);
        assert_eq!(code(&o), 2, "{args:?}: {}", text(&o.stderr));
        assert!(o.stdout.is_empty(), "{args:?}");
        assert!(!o.stderr.is_empty(), "{args:?} says why");
    }
    let o = fuzz(&[
        "plan",
        "examples/nccl-tests-mpirun.fz",
        "--hosts",
        "only-one",
    ]);
    assert!(
        text(&o.stderr).contains("runs on 2 nodes but --hosts names 1"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_bad_profile_is_reported_with_its_position() {
    let scratch = ScratchDirectory::create("fuzz-cli", "bad-profile");
    let p = scratch.join("bad-profile.toml");
    std::fs::write(&p, "name = \"x\"\nfabric = \"omnipath\"\n").expect("write");
    let o = fuzz(&[
        "plan",
        "examples/pipeline.fz",
        "--cluster",
        p.to_str().expect("utf-8"),
    ]);
    assert_eq!(code(&o), 2);
    assert!(text(&o.stderr).contains(":2:"), "{}", text(&o.stderr));
}

#[test]
fn check_still_works() {
    let o = fuzz(&["check", "examples/pipeline.fz"]);
    assert_eq!(code(&o), 0);
    assert!(text(&o.stdout).contains("ready"));
}
