//! A real Slurm launch on this machine (scripts/slurm-local.sh: slurmctld and three slurmd):
//! inside an allocation, `srun --overlap --nodes=1 --ntasks=1 -w HOST` reaches each node of
//! `SLURM_JOB_NODELIST`, one step at a time and all at once, as the runner's slurm launcher
//! does.
//!
//! Needs root and Slurm; without them it prints why and passes, unless
//! `FUZZ_REQUIRE_SYSTEM_TESTS` is set.

mod support;

use std::time::Duration;
use support::{output_within, require, LocalSlurm};

fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

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
