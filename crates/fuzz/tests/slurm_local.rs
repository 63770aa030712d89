//! A real Slurm launch on this machine (scripts/slurm-local.sh: slurmctld and three slurmd):
//! inside an allocation, `srun --overlap --nodes=1 --ntasks=1 -w HOST` reaches each node of
//! `SLURM_JOB_NODELIST`, one step at a time and all at once, as the runner's slurm launcher
//! does.
//!
//! Needs root and Slurm; without them it prints why and passes, unless
//! `FUZZ_REQUIRE_SYSTEM_TESTS` is set.

use fuzz_test_support::{fuzz_binary, output_within, output_within_or_fail, require};
use fuzz_test_support::{said_lines, sorted_lines, FuzzRunFlags, LocalSlurm, ScratchDirectory};
use std::time::Duration;

#[test]
fn srun_reaches_each_node_of_the_allocation() {
    if !require(LocalSlurm::available()) {
        return;
    }
    let slurm = LocalSlurm::start(3).expect("start a local Slurm cluster");
    // One step per node, first in turn, then all at once (as exec_all runs them).
    let script = r#"
        echo "nodelist $SLURM_JOB_NODELIST"
        for h in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
            srun --overlap --nodes=1 --ntasks=1 -w "$h" sh -c 'echo "one $SLURMD_NODENAME $SLURM_NNODES"'
        done
        for h in $(scontrol show hostnames "$SLURM_JOB_NODELIST"); do
            srun --overlap --nodes=1 --ntasks=1 -w "$h" sh -c 'echo "all $SLURMD_NODENAME"' &
        done
        wait
    "#;
    let out = output_within(
        slurm
            .command("salloc")
            .args(["-N3", "--time=2", "sh", "-c", script]),
        Duration::from_secs(120),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "salloc failed:\n{stdout}\n{stderr}");
    assert_eq!(
        sorted_lines(&stdout),
        [
            "all n1",
            "all n2",
            "all n3",
            "nodelist n[1-3]",
            "one n1 1",
            "one n2 1",
            "one n3 1"
        ],
        "{stderr}"
    );
}

/// `fuzz run` inside an allocation, with no host given: the nodes come from
/// `SLURM_JOB_NODELIST`, the launcher is slurm (`srun --overlap -w HOST`), and `exec_all`
/// reaches every node with its rank.
#[test]
fn fuzz_run_in_an_allocation_reaches_every_node_through_srun() {
    if !require(LocalSlurm::available()) {
        return;
    }
    let slurm = LocalSlurm::start(3).expect("start a local Slurm cluster");
    let d = ScratchDirectory::create("fuzz-slurm-run", "salloc");
    let f = d.write_file(
        "gen.fz",
        "version: v4\njobs:\n  gen:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n      exec_all sh -c 'echo \"rank $RANK on $SLURMD_NODENAME of $MULTINODE_HOSTLIST_NOSLOTS\"'\n    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 1GiB\n    multinode:\n      nodes: 3\n      implementation: generic\n      procs-per-node: 1\n",
    );
    let out = output_within_or_fail(
        slurm
            .command("salloc")
            .args(["-N3", "--time=2"])
            .args(fuzz_binary!().fuzz_run_command_line(
                &f,
                &d.join("run"),
                FuzzRunFlags::HOST_WITHOUT_STATUS_LINE,
            ))
            .arg("--forward-streams"),
        Duration::from_secs(120),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let said = said_lines(&stdout, "rank ");
    // The head runs on the node salloc runs on (outside a step: no SLURMD_NODENAME there).
    assert_eq!(said.len(), 3, "{stdout}\n{stderr}");
    assert!(said[0].starts_with("rank 0 on "), "{said:?}");
    assert_eq!(
        &said[1..],
        ["rank 1 on n2 of n1,n2,n3", "rank 2 on n3 of n1,n2,n3"],
        "{stdout}\n{stderr}"
    );
}
