//! The streamed plan holds one job's plan at a time: the bytes allocated at the peak of
//! writing it, beyond the analysis, do not grow with the jobs as the whole plan's do.
//!
//! A counting global allocator (`peak_alloc`) counts the bytes allocated at the peak; nothing
//! is timed. One test in this file: the counts are the whole process's.

use fuzzfile_check::Analysis;
use fuzzfile_plan::{lower, streamed, write_json, PlanOptions};
use std::fmt::Write as _;

#[global_allocator]
static ALLOCATED: peak_alloc::PeakAlloc = peak_alloc::PeakAlloc;

/// `n` jobs, each after the one before, with env, a script or a command, resources, a timeout
/// and a mount (the shape of bench/big-fuzzfile.py).
fn jobs(n: usize) -> String {
    let mut s = String::from(
        "version: v4\nvolumes:\n  data:\n    reference: volume://user/ephemeral\njobs:\n",
    );
    for i in 0..n {
        let _ = writeln!(
            s,
            "  stage-{i:06}:\n    image: {{uri: 'docker://alpine:3.20'}}"
        );
        let _ = writeln!(s, "    env: [STAGE={i}, LC_ALL=C.UTF-8, OUT=/data/out-{i}]");
        if i % 3 == 0 {
            let _ = writeln!(s, "    script: |\n      #!/bin/sh\n      echo stage {i}");
        } else {
            let _ = writeln!(s, "    command: [/bin/sh, -c, 'echo stage {i}']");
        }
        s.push_str("    resource: {cpu: {cores: 2}, memory: {size: 2GiB}}\n    mounts: {/data: data}\n    policy: {timeout: {execute: 30m}}\n");
        if i > 0 {
            let _ = writeln!(s, "    depends-on: [{{name: stage-{:06}}}]", i - 1);
        }
    }
    s
}

/// The bytes allocated at the peak of `f`, beyond those allocated before it.
fn peak_of(f: impl FnOnce()) -> usize {
    let before = ALLOCATED.current_usage();
    ALLOCATED.reset_peak_usage();
    f();
    ALLOCATED.peak_usage().saturating_sub(before)
}

struct Peaks {
    streamed: usize,
    whole: usize,
}

fn peaks(n: usize) -> Peaks {
    let a: Analysis = fuzzfile_check::analyze(&jobs(n));
    let options = PlanOptions {
        source: "jobs.fz".into(),
        ..Default::default()
    };
    // Once first, unmeasured: what the analysis derives on first use (each task's facts) is
    // the analysis's, not the plan's.
    streamed(&a, &options)
        .expect("plannable")
        .write_json(std::io::sink())
        .expect("written");
    let streamed_peak = peak_of(|| {
        streamed(&a, &options)
            .expect("plannable")
            .write_json(std::io::sink())
            .expect("written");
    });
    let whole_peak = peak_of(|| {
        let plan = lower(&a, &options).expect("plannable");
        write_json(&plan, std::io::sink()).expect("written");
    });
    Peaks {
        streamed: streamed_peak,
        whole: whole_peak,
    }
}

#[test]
fn the_streamed_plan_s_peak_does_not_grow_with_the_jobs() {
    let (n, m) = (250, 1000);
    let small = peaks(n);
    let big = peaks(m);
    let per_job = |x: usize, y: usize| (y.saturating_sub(x)) as f64 / (m - n) as f64;
    let whole_per_job = per_job(small.whole, big.whole);
    let streamed_per_job = per_job(small.streamed, big.streamed);
    let report = format!(
        "peak beyond the analysis, {n} and {m} jobs: whole plan {} and {} bytes ({whole_per_job:.0} a job), streamed {} and {} bytes ({streamed_per_job:.0} a job)",
        small.whole, big.whole, small.streamed, big.streamed
    );
    eprintln!("{report}");
    // The whole plan is thousands of bytes a job: the measure sees it.
    assert!(whole_per_job > 2000.0, "{report}");
    // Streamed, what grows is the jobs' order and the graph (names and edges written before
    // the jobs), not the jobs' plans: a small fraction of a job's plan.
    assert!(streamed_per_job * 10.0 < whole_per_job, "{report}");
    // And 4× the jobs streamed take less than the whole plan of the fewer.
    assert!(big.streamed < small.whole, "{report}");
}
