//! Benchmark: what `fuzz run` adds to a trivial job, against running the same command directly,
//! alternating the two in one run so both see the same machine load.
//!
//! cargo bench -p fuzz --bench run_overhead [-- --iterations N] [--before PATH] [--fuzz PATH]
//!
//! The job is `command: [/bin/true]` on the host runtime. Three ways are timed, each the median
//! of N wall-clock runs from spawn to exit: `/bin/true` spawned directly; `fuzz run` on the
//! Fuzzfile (analysis, lowering, run directory, process group, log files, summary); and
//! `fuzz run` on the plan written beforehand by `fuzz plan` (no analysis). The overhead is the
//! difference of medians; the goal is under 2 ms. With `--before PATH` (an earlier build of
//! `fuzz`; repeatable), that build runs both ways too, in the same loop, for before/after
//! figures side by side; `--fuzz PATH` measures that build instead of this tree's (the bench binary copied to another
//! machine). The process tracking is the runner's default (`FUZZ_PROCESS_TRACKING` from the
//! environment: `subreaper` for the other way).

mod common;

use common::{iterations, median, ms, path_arg, path_args};
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
    let this_tree = Path::new(env!("CARGO_BIN_EXE_fuzz"));
    let chosen = path_arg("--fuzz");
    let fuzz = chosen.as_deref().unwrap_or(this_tree);
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

    let before = path_args("--before");
    let run_with = |fuzz: &Path, input: &Path, i: usize| {
        let mut c = Command::new(fuzz);
        c.args(["run", "--runtime", "host", "--status", "never", "--workdir"])
            .arg(dir.join(format!("run-{i}")))
            .arg(input);
        c
    };
    let (mut direct, mut from_file, mut from_plan) = (Vec::new(), Vec::new(), Vec::new());
    let mut before_times: Vec<(Vec<Duration>, Vec<Duration>)> =
        before.iter().map(|_| (Vec::new(), Vec::new())).collect();
    let stride = 2 + 2 * before.len();
    for i in 0..iters + 1 {
        let d = timed(&mut Command::new("/bin/true"));
        let f = timed(&mut run_with(fuzz, &file, stride * i));
        let p = timed(&mut run_with(fuzz, &plan, stride * i + 1));
        let b: Vec<(Duration, Duration)> = before
            .iter()
            .enumerate()
            .map(|(k, old)| {
                (
                    timed(&mut run_with(old, &file, stride * i + 2 + 2 * k)),
                    timed(&mut run_with(old, &plan, stride * i + 3 + 2 * k)),
                )
            })
            .collect();
        if i > 0 {
            // the first round warms the page cache
            direct.push(d);
            from_file.push(f);
            from_plan.push(p);
            for ((bf, bp), (f, p)) in b.into_iter().zip(before_times.iter_mut()) {
                f.push(bf);
                p.push(bp);
            }
        }
    }
    let d = median(direct);
    let line = |what: &str, t: Duration| {
        println!(
            "  {what:<26}{:8.2} ms   overhead {:6.2} ms   ratio {:5.1}×",
            ms(t),
            ms(t.saturating_sub(d)),
            t.as_secs_f64() / d.as_secs_f64()
        );
    };
    println!("trivial job (/bin/true), median of {iters} runs, alternating:");
    println!("  {:<26}{:8.2} ms", "direct spawn", ms(d));
    line("fuzz run FILE.fz", median(from_file));
    line("fuzz run PLAN.json", median(from_plan));
    for (old, (f, p)) in before.iter().zip(before_times) {
        let name = old.file_name().map_or_else(
            || old.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        line(&format!("{name}: FILE.fz"), median(f));
        line(&format!("{name}: PLAN.json"), median(p));
    }
    println!("  goal: overhead under 2 ms");
    let _ = std::fs::remove_dir_all(&dir);
}
