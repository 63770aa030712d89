//! Benchmark: parse + model + check over the corpus and over a synthetic 5,000-job Fuzzfile,
//! side by side with the bare YAML event parser on the same inputs (the floor), on one core.
//!
//! cargo run --release -p fuzzfile_check --example bench_mimalloc [-- --iterations N]
//! cargo run --release -p fuzzfile_check --example bench [-- --iterations N]   (system allocator)
//!
//! Prints per-file times, throughput and the ratio to the bare parser. Numbers are wall-clock
//! medians of N runs; compare ratios within one run, not absolute times across machines.

use std::path::Path;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<F: FnMut()>(iters: usize, mut f: F) -> Duration {
    f(); // warm up
    median(
        (0..iters)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn events_only(text: &str) -> usize {
    let mut p = granit_parser::Parser::new_from_str(text);
    let mut n = 0;
    while let Some(Ok(_)) = p.next_event() {
        n += 1;
    }
    n
}

fn events_nocomments(text: &str) -> usize {
    let mut o = granit_parser::Options::default();
    o.emit_comments = false;
    let mut p = granit_parser::Parser::new_from_str_with_options(text, o);
    let mut n = 0;
    while let Some(Ok(_)) = p.next_event() {
        n += 1;
    }
    n
}

/// A Fuzzfile with `n` jobs in the shapes the corpus uses (about 370 bytes a job).
pub fn synthetic(n: usize) -> String {
    let mut s = String::from(
        "version: v4\nvolumes:\n  data:\n    reference: volume://user/ephemeral\njobs:\n",
    );
    for i in 0..n {
        let dep = if i > 0 {
            format!(
                "    depends-on:\n      - name: job-{}\n        status: FINISHED\n",
                i - 1
            )
        } else {
            String::new()
        };
        s.push_str(&format!(
            "  job-{i}:\n    image:\n      uri: docker://nvcr.io/nvidia/pytorch:25.01-py3\n    script: |\n      #!/bin/sh\n      echo \"step {i}\" && python3 /work/train.py --epoch {i}\n    env:\n      - NCCL_DEBUG=INFO\n      - STEP={i}\n    mounts:\n      /data:\n        volume: data\n    resource:\n      cpu:\n        cores: 8\n        affinity: NUMA\n      memory:\n        size: 32GiB\n      devices:\n        nvidia.com/gpu: 1\n    policy:\n      timeout:\n        execute: 2h30m\n{dep}"
        ));
    }
    s
}

/// The typical Fuzzfiles, by file name: the plain and docs corpus beside the checkout and
/// `examples/`, each folder sorted.
pub fn typical_inputs() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut inputs: Vec<(String, String)> = Vec::new();
    for dir in [
        "../shared/corpus/plain",
        "../shared/corpus/docs",
        "examples",
    ] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        let mut paths: Vec<_> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "fz"))
            .collect();
        paths.sort();
        for p in paths {
            if let (Some(name), Ok(t)) = (p.file_name(), std::fs::read_to_string(&p)) {
                inputs.push((name.to_string_lossy().into_owned(), t));
            }
        }
    }
    inputs
}

pub fn main() {
    let iters: usize = std::env::args()
        .skip_while(|a| a != "--iterations")
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let inputs = typical_inputs();
    println!(
        "Typical Fuzzfiles ({} files, median of {iters} runs each)",
        inputs.len()
    );
    println!(
        "{:<60} {:>7} {:>12} {:>12} {:>7}",
        "file", "bytes", "full (µs)", "events (µs)", "ratio"
    );
    let mut total_full = Duration::ZERO;
    let mut total_ev = Duration::ZERO;
    let mut worst = Duration::ZERO;
    for (name, text) in &inputs {
        let full = time(iters, || {
            std::hint::black_box(fuzzfile_check::analyze(text));
        });
        let ev = time(iters, || {
            std::hint::black_box(events_only(text));
        });
        total_full += full;
        total_ev += ev;
        worst = worst.max(full);
        let short: String = name.chars().take(60).collect();
        println!(
            "{short:<60} {:>7} {:>12.1} {:>12.1} {:>6.1}x",
            text.len(),
            full.as_secs_f64() * 1e6,
            ev.as_secs_f64() * 1e6,
            full.as_secs_f64() / ev.as_secs_f64()
        );
    }
    let n = inputs.len().max(1) as f64;
    println!(
        "mean per file: full {:.1} µs, events {:.1} µs, ratio {:.1}x; slowest file {:.1} µs",
        total_full.as_secs_f64() * 1e6 / n,
        total_ev.as_secs_f64() * 1e6 / n,
        total_full.as_secs_f64() / total_ev.as_secs_f64(),
        worst.as_secs_f64() * 1e6
    );

    {
        let jobs = 5_000usize;
        let text = synthetic(jobs);
        let mb = text.len() as f64 / 1e6;
        let big_iters = (iters / 4).max(3);
        let full = time(big_iters, || {
            let a = fuzzfile_check::analyze(&text);
            assert!(
                a.diagnostics
                    .iter()
                    .all(|d| d.severity != fuzzfile_check::Severity::Error),
                "synthetic file has errors"
            );
            std::hint::black_box(a);
        });
        let ev = time(big_iters, || {
            std::hint::black_box(events_only(&text));
        });
        let evnc = time(big_iters, || {
            std::hint::black_box(events_nocomments(&text));
        });
        println!(
            "events without comments: {:.1} ms",
            evnc.as_secs_f64() * 1e3
        );
        println!(
            "\nSynthetic {jobs}-job Fuzzfile ({mb:.2} MB, median of {big_iters}): full {:.1} ms = {:.1} MB/s; events {:.1} ms = {:.1} MB/s; ratio {:.2}x",
            full.as_secs_f64() * 1e3,
            mb / full.as_secs_f64(),
            ev.as_secs_f64() * 1e3,
            mb / ev.as_secs_f64(),
            full.as_secs_f64() / ev.as_secs_f64()
        );
    }

    // A 50 MB input: one run, with peak memory.
    let big = synthetic(95_000);
    let t = Instant::now();
    let n_events = events_only(&big);
    let ev = t.elapsed();
    let t = Instant::now();
    let tree = fuzzfile_syntax::parse(&big);
    let syn = t.elapsed();
    let t = Instant::now();
    let (model, _) = fuzzfile_model::build(&big, &tree);
    let modl = t.elapsed();
    drop((tree, model));
    println!(
        "50 MB class input: events {:.2} s ({n_events} events), syntax tree {:.2} s, model {:.2} s",
        ev.as_secs_f64(),
        syn.as_secs_f64(),
        modl.as_secs_f64()
    );
    let t = Instant::now();
    let a = fuzzfile_check::analyze(&big);
    let el = t.elapsed();
    let hwm = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(|l| l.split_whitespace().nth(1).unwrap_or("0").to_owned())
        })
        .unwrap_or_default();
    println!(
        "50 MB class input ({:.1} MB, {} nodes): {:.2} s = {:.1} MB/s; peak RSS {} MiB (process, includes the input)",
        big.len() as f64 / 1e6,
        a.tree.len(),
        el.as_secs_f64(),
        big.len() as f64 / 1e6 / el.as_secs_f64(),
        hwm.parse::<u64>().unwrap_or(0) / 1024
    );
}
