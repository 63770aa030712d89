//! One side of a before/after comparison of the analysis (`bench/analysis-before-after.sh`
//! builds this example at two revisions and runs them alternately): analyses each input
//! `--iterations` times and prints `name<TAB>bytes<TAB>median µs` per input.
//!
//! Inputs: the typical Fuzzfiles (the plain and docs corpus, `examples/`), the synthetic
//! 5,000-job file of `bench.rs`, and a synthetic 5,000-job file whose jobs start torchrun
//! through `exec_all` from a script (the shape the language-server benchmark uses). The inputs
//! are generated here, so both revisions read the same bytes.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::{Duration, Instant};

#[path = "bench.rs"]
#[allow(dead_code)]
mod bench;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// A Fuzzfile with `n` multinode jobs, each starting torchrun on every node from a script with
/// its arguments in a variable.
pub fn synthetic_launchers(n: usize) -> String {
    let mut s = String::from("version: v4\njobs:\n");
    for i in 0..n {
        s.push_str(&format!(
            "  train-{i}:\n    image:\n      uri: docker://nvcr.io/nvidia/pytorch:25.01-py3\n    env:\n      - NCCL_DEBUG=INFO\n      - STEP={i}\n    script: |\n      #!/bin/bash\n      set -e\n      GPUS_PER_NODE=4\n      ARGS=\"--nnodes 2 --nproc-per-node $GPUS_PER_NODE\"\n      exec_all torchrun $ARGS --node-rank '$RANK' --master-addr \"$MULTINODE_NODE_IP\" --master-port 29500 train.py --step {i}\n    resource:\n      cpu:\n        cores: 16\n      memory:\n        size: 64GiB\n      devices:\n        nvidia.com/gpu: 4\n    multinode:\n      nodes: 2\n      implementation: generic\n"
        ));
    }
    s
}

fn main() {
    let iters: usize = std::env::args()
        .skip_while(|a| a != "--iterations")
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let mut inputs = bench::typical_inputs();
    inputs.push(("synthetic-5000-jobs".into(), bench::synthetic(5_000)));
    inputs.push((
        "synthetic-5000-launcher-jobs".into(),
        synthetic_launchers(5_000),
    ));
    for (name, text) in &inputs {
        let n = if text.len() > 100_000 {
            (iters / 4).max(3)
        } else {
            iters
        };
        std::hint::black_box(fuzzfile_check::analyze(text));
        // Warm: the same text again on the same thread (what an editor's re-analysis sees).
        let times: Vec<Duration> = (0..n)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(fuzzfile_check::analyze(text));
                t.elapsed()
            })
            .collect();
        println!(
            "{name}\t{}\t{:.1}",
            text.len(),
            median(times).as_secs_f64() * 1e6
        );
        // Cold: each analysis on a thread of its own, so nothing a thread keeps from an
        // earlier analysis (a parser, a memo of parsed scripts) helps: what `fuzzlint check`
        // sees for a file it reads once. The thread's start is timed outside.
        let times: Vec<Duration> = (0..n)
            .map(|_| {
                std::thread::scope(|s| {
                    s.spawn(|| {
                        let t = Instant::now();
                        std::hint::black_box(fuzzfile_check::analyze(text));
                        t.elapsed()
                    })
                    .join()
                    .unwrap_or_default()
                })
            })
            .collect();
        println!(
            "{name} (cold thread)\t{}\t{:.1}",
            text.len(),
            median(times).as_secs_f64() * 1e6
        );
    }
}
