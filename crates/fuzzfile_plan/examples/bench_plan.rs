//! Benchmark: lowering a Fuzzfile to its launch plan, per file, beside the analysis that
//! precedes it (parse, model, every rule) on the same input, in the same run.
//!
//! cargo run --release -p fuzzfile_plan --example bench_plan [-- --iterations N]
//!
//! For every example and every corpus Fuzzfile that lowers without refusal it prints the
//! median of N runs of: the analysis, the lowering alone (`lower`), the JSON serialisation
//! (`to_json`), and the whole `fuzz plan` path (analysis + lowering + JSON), then the mean and
//! the slowest file. The goal for the whole path is under 1 ms per file. Compare the ratios of
//! one run; absolute times depend on the machine and its load.

use fuzzfile_check::{analyze_with, Options};
use fuzzfile_plan::{lower, to_json, PlanOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<F: FnMut()>(iters: usize, mut f: F) -> Duration {
    f();
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

fn fuzzfiles(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            fuzzfiles(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "fz" || x == "yaml" || x == "yml")
        {
            out.push(p);
        }
    }
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let iters = args
        .iter()
        .position(|a| a == "--iterations")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(200usize);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    fuzzfiles(&root.join("examples"), &mut files);
    fuzzfiles(&root.join("../shared/corpus"), &mut files);

    let opts = Options::default();
    println!(
        "{:<48} {:>10} {:>10} {:>10} {:>10} {:>7}",
        "file (median of runs, µs)", "analysis", "lower", "to_json", "fuzz plan", "lower/an"
    );
    let mut rows = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        if !fuzzfile_check::looks_like_fuzzfile(&text) {
            continue;
        }
        let popts = PlanOptions {
            source: f.display().to_string(),
            hosts: None,
            profile: None,
        };
        let analysis = analyze_with(&text, &opts);
        let Ok(plan) = lower(&analysis, &popts) else {
            continue; // refused (errors in the file): nothing to lower
        };
        let t_an = time(iters, || {
            std::hint::black_box(analyze_with(&text, &opts));
        });
        let t_lo = time(iters, || {
            std::hint::black_box(lower(&analysis, &popts).ok());
        });
        let t_js = time(iters, || {
            std::hint::black_box(to_json(&plan));
        });
        let t_all = time(iters, || {
            let a = analyze_with(&text, &opts);
            if let Ok(p) = lower(&a, &popts) {
                std::hint::black_box(to_json(&p));
            }
        });
        let name = f
            .strip_prefix(&root)
            .unwrap_or(f)
            .display()
            .to_string()
            .chars()
            .rev()
            .take(48)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<String>();
        println!(
            "{name:<48} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>6.2}×",
            us(t_an),
            us(t_lo),
            us(t_js),
            us(t_all),
            t_lo.as_secs_f64() / t_an.as_secs_f64()
        );
        rows.push((name, t_an, t_lo, t_js, t_all));
    }
    if rows.is_empty() {
        println!("no Fuzzfile lowered");
        return;
    }
    let n = rows.len() as f64;
    let mean = |k: fn(&(String, Duration, Duration, Duration, Duration)) -> Duration| {
        rows.iter().map(|r| us(k(r))).sum::<f64>() / n
    };
    println!(
        "{:<48} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
        format!("mean over {} files", rows.len()),
        mean(|r| r.1),
        mean(|r| r.2),
        mean(|r| r.3),
        mean(|r| r.4)
    );
    if let Some(slow) = rows.iter().max_by_key(|r| r.4) {
        println!(
            "slowest whole path: {} at {:.1} µs (goal: under 1000 µs per file)",
            slow.0,
            us(slow.4)
        );
    }
}
