//! Growth benchmark: the analysis of hostile inputs of size N, 2N, 4N and 8N, with the ratio of
//! each time to the previous one. A linear cost doubles (ratio ≈ 2); a quadratic one
//! quadruples. Nothing is asserted: read the ratios (docs/robustness.md has a run).
//!
//! cargo run --release -p fuzzfile_check --example growth [-- FAMILY...]
//!
//! Families: env, defaults-env, unknown-keys, one-line, script, launcher-script, jobs, fan-in,
//! fan-out, aliases, nesting, list.

use std::fmt::Write;
use std::time::{Duration, Instant};

/// The global allocator of the binaries.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const HEAD: &str = "version: v4\njobs:\n";
const JOB: &str = "    image:\n      uri: docker://alpine:3.20\n    command: [echo, hi]\n";

fn family(name: &str, n: usize) -> String {
    let mut s = String::new();
    match name {
        "env" => {
            s.push_str(HEAD);
            s.push_str("  a:\n");
            s.push_str(JOB);
            s.push_str("    env:\n");
            for i in 0..n {
                let _ = writeln!(s, "      - VAR_{i}=value{i}");
            }
        }
        "defaults-env" => {
            s.push_str("version: v4\ndefaults:\n  job:\n    env:\n");
            for i in 0..n {
                let _ = writeln!(s, "      - VAR_{i}=value{i}");
            }
            s.push_str("jobs:\n  a:\n");
            s.push_str(JOB);
        }
        "unknown-keys" => {
            s.push_str(HEAD);
            s.push_str("  a:\n");
            s.push_str(JOB);
            for i in 0..n {
                let _ = writeln!(s, "    unknown{i}: 1");
            }
        }
        "one-line" => {
            s.push_str("{version: v4, jobs: {a: {image: {uri: 'docker://alpine:3.20'}, command: [echo, hi]");
            for i in 0..n {
                let _ = write!(s, ", k{i}: 1");
            }
            s.push_str("}}}\n");
        }
        "script" => {
            s.push_str(HEAD);
            s.push_str("  a:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n");
            for i in 0..n {
                let _ = writeln!(s, "      echo line {i} $HOME && X{i}=1");
            }
        }
        "launcher-script" => {
            // A launcher word makes the script parsed; then n assignments and n commands.
            s.push_str(HEAD);
            s.push_str("  a:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n      # torchrun\n");
            for i in 0..n {
                let _ = writeln!(s, "      X{i}=1\n      echo {i}");
            }
        }
        "jobs" => {
            s.push_str(HEAD);
            for i in 0..n {
                let _ = writeln!(s, "  j{i}:");
                s.push_str(JOB);
            }
        }
        "fan-in" => {
            s.push_str(HEAD);
            for i in 0..n {
                let _ = writeln!(s, "  j{i}:");
                s.push_str(JOB);
            }
            s.push_str("  last:\n");
            s.push_str(JOB);
            s.push_str("    depends-on:\n");
            for i in 0..n {
                let _ = writeln!(s, "      - name: j{i}");
            }
        }
        "fan-out" => {
            s.push_str(HEAD);
            s.push_str("  first:\n");
            s.push_str(JOB);
            for i in 0..n {
                let _ = writeln!(s, "  j{i}:");
                s.push_str(JOB);
                s.push_str("    depends-on: [{name: first}]\n");
            }
        }
        "aliases" => {
            s.push_str("version: v4\ndefaults:\n  job:\n    env: &e\n");
            for i in 0..100 {
                let _ = writeln!(s, "      - V{i}=x");
            }
            s.push_str("jobs:\n");
            for i in 0..n {
                let _ = writeln!(s, "  j{i}:");
                s.push_str(JOB);
                s.push_str("    env: *e\n");
            }
        }
        "nesting" => {
            // Nesting up to the parser's depth limit, repeated n times.
            s.push_str(HEAD);
            s.push_str("  a:\n");
            s.push_str(JOB);
            s.push_str("    x:\n");
            for _ in 0..n {
                s.push_str("      - ");
                s.push_str(&"[".repeat(200));
                s.push_str(&"]".repeat(200));
                s.push('\n');
            }
        }
        "list" => {
            s.push_str(HEAD);
            s.push_str("  a:\n");
            s.push_str(JOB);
            s.push_str("    args:\n");
            for i in 0..n {
                let _ = writeln!(s, "      - a{i}");
            }
        }
        other => panic!("no family {other}"),
    }
    s
}

fn base(name: &str) -> usize {
    match name {
        "one-line" | "unknown-keys" | "launcher-script" | "jobs" | "fan-in" | "fan-out"
        | "aliases" => 5_000,
        "nesting" => 500,
        _ => 25_000,
    }
}

fn time(text: &str) -> Duration {
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let t = Instant::now();
        let a = fuzzfile_check::analyze(text);
        std::hint::black_box(&a);
        best = best.min(t.elapsed());
    }
    best
}

fn main() {
    let all = [
        "env",
        "defaults-env",
        "unknown-keys",
        "one-line",
        "script",
        "launcher-script",
        "jobs",
        "fan-in",
        "fan-out",
        "aliases",
        "nesting",
        "list",
    ];
    let args: Vec<String> = std::env::args().skip(1).collect();
    let chosen: Vec<&str> = if args.is_empty() {
        all.to_vec()
    } else {
        all.iter()
            .copied()
            .filter(|f| args.iter().any(|a| a == f))
            .collect()
    };
    println!(
        "{:<14} {:>9} {:>10} {:>10} {:>6}",
        "family", "N", "bytes", "ms", "ratio"
    );
    for f in chosen {
        let mut prev: Option<Duration> = None;
        for k in [1, 2, 4, 8] {
            let n = base(f) * k;
            let text = family(f, n);
            let t = time(&text);
            let ratio = prev.map_or(String::from("-"), |p| {
                format!("{:.2}", t.as_secs_f64() / p.as_secs_f64().max(1e-9))
            });
            println!(
                "{f:<14} {n:>9} {:>10} {:>10.1} {ratio:>6}",
                text.len(),
                t.as_secs_f64() * 1e3
            );
            prev = Some(t);
        }
    }
}
