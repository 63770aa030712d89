//! Benchmark: what `fuzz run` adds to a multinode job over three real hosts (network
//! namespaces with their own addresses and an sshd each, as in tests/multinode.rs), against
//! doing the same by hand, alternating the two in one run.
//!
//! cargo bench -p fuzz --bench multinode_overhead [-- --iterations N]
//!
//! The job is `exec_all true` on 3 nodes (generic, ssh launcher): the head runs `true`, the
//! two other nodes are reached over ssh. By hand, on host 0: `true` and one `ssh HOST true` to
//! each other host, all at once, then `wait`. Both are timed from spawn to exit on host 0,
//! median of N. Needs root, iproute2 and OpenSSH; without them it says why and stops.

mod common;

use common::{iterations, median, ms};
use fuzz_test_support::{Hosts, Sshd};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn timed(cmd: &mut std::process::Command) -> Duration {
    let t = Instant::now();
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("spawn");
    let d = t.elapsed();
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    d
}

fn main() {
    let iters = iterations(20);
    if let Err(why) = Hosts::available().and_then(|()| Sshd::available()) {
        println!("multinode_overhead: not run: {why}");
        return;
    }
    let hosts = Hosts::create(3).expect("three hosts");
    let sshd = Sshd::start(&hosts, 22).expect("sshd on each host");
    let dir = std::env::temp_dir().join(format!("fuzz-bench-mn-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let file = dir.join("mn.fz");
    std::fs::write(
        &file,
        "version: v4\njobs:\n  mn:\n    image:\n      uri: docker://alpine:3.20\n    command: [exec_all, 'true']\n    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 1GiB\n    multinode:\n      nodes: 3\n      implementation: generic\n      procs-per-node: 1\n",
    )
    .expect("write Fuzzfile");
    let cfg = sshd.client_config().display().to_string();
    let names = "node0,node1,node2";
    let by_hand = format!(
        "true & for h in node1 node2; do ssh -F {cfg} -o BatchMode=yes $h true & done; wait"
    );
    let (mut fuzz, mut hand) = (Vec::new(), Vec::new());
    for i in 0..=iters {
        let workdir = dir.join(format!("run-{i}")).display().to_string();
        let f = timed(&mut hosts.exec(
            0,
            &[
                env!("CARGO_BIN_EXE_fuzz"),
                "run",
                file.to_str().expect("utf-8"),
                "--runtime",
                "host",
                "--status",
                "never",
                "--workdir",
                &workdir,
                "--hosts",
                names,
                "--launcher",
                "ssh",
                "--ssh-config",
                &cfg,
            ],
        ));
        let h = timed(&mut hosts.exec(0, &["sh", "-c", &by_hand]));
        if i > 0 {
            fuzz.push(f);
            hand.push(h);
        }
    }
    let (f, h) = (median(fuzz), median(hand));
    println!("3 nodes over ssh, `true` on each, median of {iters} runs, alternating:");
    println!("  by hand (true + 2 × ssh, at once)   {:8.2} ms", ms(h));
    println!(
        "  fuzz run (exec_all true)            {:8.2} ms   overhead {:6.2} ms   ratio {:4.2}×",
        ms(f),
        ms(f.saturating_sub(h)),
        f.as_secs_f64() / h.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&dir);
}
