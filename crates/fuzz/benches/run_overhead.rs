//! Benchmark: what `fuzz run` adds to a trivial job, against running the same command directly,
//! alternating the two in one run so both see the same machine load.
//!
//! cargo bench -p fuzz --bench run_overhead [-- --iterations N]
//!
//! The job is `command: [/bin/true]` on the host runtime. Three ways are timed, each the median
//! of N wall-clock runs from spawn to exit: `/bin/true` spawned directly; `fuzz run` on the
//! Fuzzfile (analysis, lowering, run directory, process group, log files, summary); and
//! `fuzz run` on the plan written beforehand by `fuzz plan` (no analysis). The overhead is the
//! difference of medians; the goal is under 10 ms.

mod common;

use common::{iterations, median, ms};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn timed(cmd: &mut Command) -> Duration {
    let t = Instant::now();
    let status = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    let d = t.elapsed();
    assert!(status.success(), "{cmd:?}: {status}");
    d
}

fn main() {
    let iters = iterations(50);
    let fuzz = Path::new(env!("CARGO_BIN_EXE_fuzz"));
    let dir = std::env::temp_dir().join(format!("fuzz-bench-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let file = dir.join("true.fz");
    std::fs::write(
        &file,
        "version: v4\njobs:\n  noop:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/true]\n",
    )
    .expect("write Fuzzfile");
    let plan = dir.join("true.json");
    let st = Command::new(fuzz)
        .args(["plan", "-o"])
        .arg(&plan)
        .arg(&file)
        .status()
        .expect("fuzz plan");
    assert!(st.success(), "fuzz plan failed");

    let run = |input: &Path, i: usize| {
        let mut c = Command::new(fuzz);
        c.args(["run", "--runtime", "host", "--status", "never", "--workdir"])
            .arg(dir.join(format!("run-{i}")))
            .arg(input);
        c
    };
    let (mut direct, mut from_file, mut from_plan) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..iters + 1 {
        let d = timed(&mut Command::new("/bin/true"));
        let f = timed(&mut run(&file, 2 * i));
        let p = timed(&mut run(&plan, 2 * i + 1));
        if i > 0 {
            // the first round warms the page cache
            direct.push(d);
            from_file.push(f);
            from_plan.push(p);
        }
    }
    let (d, f, p) = (median(direct), median(from_file), median(from_plan));
    println!("trivial job (/bin/true), median of {iters} runs, alternating:");
    println!("  direct spawn          {:8.2} ms", ms(d));
    println!(
        "  fuzz run FILE.fz      {:8.2} ms   overhead {:6.2} ms   ratio {:5.1}×",
        ms(f),
        ms(f.saturating_sub(d)),
        f.as_secs_f64() / d.as_secs_f64()
    );
    println!(
        "  fuzz run PLAN.json    {:8.2} ms   overhead {:6.2} ms   ratio {:5.1}×",
        ms(p),
        ms(p.saturating_sub(d)),
        p.as_secs_f64() / d.as_secs_f64()
    );
    println!("  goal: overhead under 10 ms");
    let _ = std::fs::remove_dir_all(&dir);
}
