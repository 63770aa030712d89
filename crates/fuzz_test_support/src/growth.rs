//! Growth tests: how many instructions a program executes on generated Fuzzfiles of size N and
//! 4N, counted by valgrind (callgrind), so the figure does not move with the
//! machine's load. A step whose cost grows faster than the input shows as a ratio
//! `(Ir(4N) - Ir(empty)) / (Ir(N) - Ir(empty))` well above 4: 16 for a quadratic step, about 4.6
//! for `n log n` at these sizes. The start-up (the cost on a Fuzzfile of one job) is taken off
//! both sides, so a large constant does not hide a steep step.
//!
//! Each shape makes one thing grow: jobs, dependency edges (chains, fan-in, layers), `env`
//! entries, mapping keys, YAML anchors and aliases, top-level files and the jobs that ship them,
//! volumes and their mounts, `requires`. Names have one length and a long shared prefix
//! (`pipeline-stage-000017`), as generated workflows do, so comparing two names is not cut short
//! by their lengths: a lookup by scanning names costs what it would in a real file.
//!
//! Each function's own instructions are compared too: one that grows by more than half of the
//! factor squared while being at least 1 % of the cost (a scan per lookup, an edge list
//! walked per node) fails the step, however small its share of the whole.
//!
//! Sensitivity: a test build (unoptimised) spends ten times more per element than a release
//! build, so at the sizes the tests use (seconds under valgrind) the whole's ratio sees a quadratic
//! step only once it costs about a third of the whole at 4N, and the functions' ratios once a
//! quadratic function is 1 % of it. `FUZZ_GROWTH_SCALE=K` multiplies every size
//! by K, and `FUZZ_GROWTH_BIN_DIR=target/release` counts the release binaries instead:
//! `FUZZ_GROWTH_SCALE=10 FUZZ_GROWTH_BIN_DIR=target/release cargo test -p fuzzlint -p fuzz
//! --test growth` is the deep run.

use std::collections::HashMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// What grows in a generated Fuzzfile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// N independent jobs.
    Jobs,
    /// N jobs, each depending on the one before (`depends-on`).
    Chain,
    /// N jobs and one more that depends on all of them.
    FanIn,
    /// N jobs, each depending on the 8 before it (8N edges).
    Layers,
    /// One job with N `env` entries.
    Env,
    /// One job with N keys in one mapping (`resource.annotations`).
    Keys,
    /// N jobs, every second one made of aliases of the anchors of the one before.
    Aliases,
    /// N top-level files and N jobs, each shipping one of them (`file://`).
    Files,
    /// N volumes and N jobs, each mounting one of them.
    Volumes,
    /// N jobs, each `requires` the one before (deprecated, fixable).
    Requires,
}

impl Shape {
    pub const ALL: [Shape; 10] = [
        Shape::Jobs,
        Shape::Chain,
        Shape::FanIn,
        Shape::Layers,
        Shape::Env,
        Shape::Keys,
        Shape::Aliases,
        Shape::Files,
        Shape::Volumes,
        Shape::Requires,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Jobs => "jobs",
            Shape::Chain => "chain of depends-on",
            Shape::FanIn => "fan-in depends-on",
            Shape::Layers => "8 depends-on per job",
            Shape::Env => "env entries",
            Shape::Keys => "mapping keys",
            Shape::Aliases => "anchors and aliases",
            Shape::Files => "files shipped",
            Shape::Volumes => "volumes mounted",
            Shape::Requires => "requires",
        }
    }

    /// The Fuzzfile of size `n` (`n` ≥ 1).
    pub fn fuzzfile(self, n: usize) -> String {
        let mut s = String::from("version: v4\n");
        match self {
            Shape::Jobs => {
                s.push_str("jobs:\n");
                (0..n).for_each(|i| job(&mut s, i));
            }
            Shape::Chain | Shape::Requires => {
                s.push_str("jobs:\n");
                for i in 0..n {
                    job(&mut s, i);
                    if i > 0 {
                        let before = stage(i - 1);
                        if self == Shape::Chain {
                            let _ = write!(
                                s,
                                "    depends-on:\n      - name: {before}\n        status: FINISHED\n"
                            );
                        } else {
                            let _ = writeln!(s, "    requires: [{before}]");
                        }
                    }
                }
            }
            Shape::FanIn => {
                s.push_str("jobs:\n");
                (0..n).for_each(|i| job(&mut s, i));
                s.push_str("  sink:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/true]\n    depends-on:\n");
                for i in 0..n {
                    let _ = write!(s, "      - name: {}\n        status: FINISHED\n", stage(i));
                }
            }
            Shape::Layers => {
                s.push_str("jobs:\n");
                for i in 0..n {
                    job(&mut s, i);
                    if i > 0 {
                        s.push_str("    depends-on:\n");
                        for d in i.saturating_sub(8)..i {
                            let _ =
                                write!(s, "      - name: {}\n        status: FINISHED\n", stage(d));
                        }
                    }
                }
            }
            Shape::Env => {
                s.push_str("jobs:\n");
                job(&mut s, 0);
                s.push_str("    env:\n");
                for i in 0..n {
                    let _ = writeln!(s, "      - STAGE_SETTING_{i:06}=value-{i}");
                }
            }
            Shape::Keys => {
                s.push_str("jobs:\n");
                job(&mut s, 0);
                s.push_str("    resource:\n      annotations:\n");
                for i in 0..n {
                    let _ = writeln!(s, "        {}: value-{i}", stage(i));
                }
            }
            Shape::Aliases => {
                s.push_str("jobs:\n");
                for i in 0..n {
                    let name = stage(i);
                    if i % 2 == 0 {
                        let _ = write!(
                            s,
                            "  {name}:\n    image: &image{i}\n      uri: docker://alpine:3.20\n    command: &command{i} [/bin/true]\n"
                        );
                    } else {
                        let _ = write!(
                            s,
                            "  {name}:\n    image: *image{}\n    command: *command{}\n",
                            i - 1,
                            i - 1
                        );
                    }
                }
            }
            Shape::Files => {
                s.push_str("files:\n");
                for i in 0..n {
                    let _ = write!(s, "  {}.sh: |\n    echo {i}\n", stage(i));
                }
                s.push_str("jobs:\n");
                for i in 0..n {
                    job(&mut s, i);
                    let _ = write!(s, "    files:\n      /opt/run.sh: file://{}.sh\n", stage(i));
                }
            }
            Shape::Volumes => {
                s.push_str("volumes:\n");
                for i in 0..n {
                    let _ = write!(
                        s,
                        "  {}:\n    reference: volume://user/ephemeral\n",
                        stage(i)
                    );
                }
                s.push_str("jobs:\n");
                for i in 0..n {
                    job(&mut s, i);
                    let _ = write!(
                        s,
                        "    mounts:\n      /data:\n        volume: {}\n",
                        stage(i)
                    );
                }
            }
        }
        s
    }
}

/// The name of the `i`th element: one length, a long shared prefix.
pub fn stage(i: usize) -> String {
    format!("pipeline-stage-{i:06}")
}

fn job(s: &mut String, i: usize) {
    let _ = write!(
        s,
        "  {}:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/true]\n",
        stage(i)
    );
}

/// The Fuzzfile the start-up cost is measured on: one job.
pub fn smallest() -> String {
    Shape::Jobs.fuzzfile(1)
}

/// `FUZZ_GROWTH_SCALE` (a whole number ≥ 1), else 1.
pub fn scale() -> usize {
    std::env::var("FUZZ_GROWTH_SCALE")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&k| k >= 1)
        .unwrap_or(1)
}

/// `Ok` when valgrind can count instructions here.
pub fn valgrind_available() -> Result<(), String> {
    crate::system::installed("valgrind")
        .map_err(|e| format!("{e} (the growth tests count instructions with it)"))
}

/// A copy of `program` without its debug information in `dir` (valgrind reads a debug build's
/// 100+ MB of it at every start otherwise; the symbol table stays, for the functions' names),
/// or `program` itself where `objcopy` is missing or fails.
///
/// `FUZZ_GROWTH_BIN_DIR=DIR` counts `DIR/<the same name>` instead (a release build, or an
/// older build to compare with).
pub fn lean_copy(program: &Path, dir: &Path) -> PathBuf {
    let Some(name) = program.file_name() else {
        return program.to_path_buf();
    };
    let other = std::env::var_os("FUZZ_GROWTH_BIN_DIR").map(|d| PathBuf::from(d).join(name));
    let program = other.as_deref().unwrap_or(program);
    let copy = dir.join(name);
    let ok = Command::new("objcopy")
        .arg("--strip-debug")
        .arg(program)
        .arg(&copy)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if ok {
        copy
    } else {
        program.to_path_buf()
    }
}

/// One program run to count.
#[derive(Clone, Debug)]
pub struct Run {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// A file copied to `args`' path `copy.1` first, each time (for `--fix`, which rewrites it).
    pub copy: Option<(PathBuf, PathBuf)>,
    /// Exit statuses that count as the program having done its work.
    pub ok_status: Vec<i32>,
    /// Where valgrind writes its profile (read, then removed).
    pub profile: PathBuf,
}

/// The instructions of one run: the whole and each function's own (without its callees).
#[derive(Clone, Debug, Default)]
pub struct Counts {
    pub total: u64,
    pub by_function: HashMap<String, u64>,
}

/// The instructions `run` executes, counted by callgrind, with one worker thread (rayon's pool
/// would otherwise make the count depend on scheduling).
pub fn instructions(run: &Run) -> Result<Counts, String> {
    if let Some((from, to)) = &run.copy {
        std::fs::copy(from, to).map_err(|e| format!("copying {}: {e}", from.display()))?;
    }
    let mut out_file = OsString::from("--callgrind-out-file=");
    out_file.push(&run.profile);
    let out = Command::new("valgrind")
        .args([
            "--tool=callgrind",
            "--compress-strings=no",
            "--compress-pos=no",
        ])
        .arg(out_file)
        .arg(&run.program)
        .args(&run.args)
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .map_err(|e| format!("valgrind: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let status = out.status.code().unwrap_or(-1);
    let what = || format!("{} {:?}", run.program.display(), run.args);
    if !run.ok_status.contains(&status) {
        return Err(format!(
            "{} exited with {status} under valgrind:\n{}",
            what(),
            tail(&stderr)
        ));
    }
    let profile = std::fs::read_to_string(&run.profile)
        .map_err(|e| format!("the profile of {} ({}): {e}", what(), run.profile.display()))?;
    let _ = std::fs::remove_file(&run.profile);
    let counts = self_costs(&profile, &run.program.to_string_lossy());
    if counts.total == 0 {
        return Err(format!(
            "no instructions in the profile of {}:\n{}",
            what(),
            tail(&stderr)
        ));
    }
    Ok(counts)
}

/// Each function's own instructions in a callgrind profile written with
/// `--compress-strings=no --compress-pos=no` (`fn=NAME`, then `LINE COST` lines; the line after
/// `calls=` is the callee's cost, not the caller's), and their sum; only functions of the object
/// `program` are named.
pub fn self_costs(profile: &str, program: &str) -> Counts {
    let mut counts = Counts::default();
    let mut function: Option<&str> = None;
    let mut object = "";
    let mut call_cost_next = false;
    for line in profile.lines() {
        if let Some(name) = line.strip_prefix("ob=") {
            object = name.trim();
            continue;
        }
        if let Some(name) = line.strip_prefix("fn=") {
            // The program's own functions only: the C library's (its allocator's free lists,
            // with size thresholds of their own) count in the total.
            function = (object.is_empty() || object == program).then(|| name.trim());
            continue;
        }
        if line.starts_with("calls=") {
            call_cost_next = true;
            continue;
        }
        let positional = line
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || b == b'+' || b == b'-' || b == b'*');
        if !positional {
            continue;
        }
        if std::mem::take(&mut call_cost_next) {
            continue;
        }
        let cost = line
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse::<u64>().ok())
            .unwrap_or(0);
        counts.total += cost;
        if let Some(f) = function {
            *counts.by_function.entry(f.to_owned()).or_default() += cost;
        }
    }
    counts
}

fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// Counts every run, two at a time (the counts do not depend on it; the wall time halves).
pub fn instructions_all(runs: &[Run]) -> Result<Vec<Counts>, String> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Counts, String>>>> = Mutex::new(vec![None; runs.len()]);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(run) = runs.get(i) else { break };
                let r = instructions(run);
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                }
            });
        }
    });
    let all = results
        .into_inner()
        .map_err(|_| "a counting thread panicked".to_owned())?;
    all.into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not counted".into())))
        .collect()
}

/// The counts of one step at the start-up size, at N and at `factor`·N.
#[derive(Clone, Debug)]
pub struct Growth {
    pub what: String,
    pub n: usize,
    pub factor: usize,
    pub base: u64,
    pub small: u64,
    pub large: u64,
    /// Functions whose own instructions grew by more than `factor`² / 2 from N to
    /// `factor`·N while being at least 1 % of the step's cost at `factor`·N and 0.1 % at N:
    /// (name, at N, at `factor`·N). A quadratic function gives `factor`² however small the whole's ratio.
    pub steep_functions: Vec<(String, u64, u64)>,
}

impl Growth {
    /// Of the whole run, without the start-up: `(large - base) / (small - base)`, `factor`
    /// for a linear step, `factor`² for a quadratic one.
    pub fn ratio(&self) -> f64 {
        let small = self.small.saturating_sub(self.base).max(1) as f64;
        self.large.saturating_sub(self.base) as f64 / small
    }

    /// From the counts at start-up, N and `factor`·N.
    pub fn of(
        what: String,
        n: usize,
        factor: usize,
        base: &Counts,
        small: &Counts,
        large: &Counts,
    ) -> Growth {
        let grown = large.total.saturating_sub(base.total);
        let grown_small = small.total.saturating_sub(base.total);
        let mut steep_functions: Vec<(String, u64, u64)> = large
            .by_function
            .iter()
            .filter(|(_, &l)| l as f64 >= 0.01 * grown as f64)
            .filter_map(|(f, &l)| {
                let s = small.by_function.get(f).copied().unwrap_or(0);
                let limit = (factor * factor) as f64 / 2.0;
                // Present at N already (0.1 % of it; a quadratic function that is 1 % at
                // `factor`·N is about 1/`factor` % at N): a function that only starts past a
                // threshold (glibc's malloc_consolidate once blocks are large) is a step, not
                // a growth.
                let present = s as f64 >= 0.001 * grown_small as f64;
                (present && l as f64 > limit * s.max(1) as f64).then(|| (f.clone(), s, l))
            })
            .collect();
        steep_functions.sort();
        Growth {
            what,
            n,
            factor,
            base: base.total,
            small: small.total,
            large: large.total,
            steep_functions,
        }
    }
}

/// A table of `growths`, one a line, then their steep functions.
pub fn table(growths: &[Growth]) -> String {
    let mut t = format!(
        "{:<40} {:>7} {:>12} {:>12} {:>16} {:>6}\n",
        "step", "N", "start-up Ir", "Ir(N)", "Ir(k·N)", "ratio"
    );
    for g in growths {
        let _ = writeln!(
            t,
            "{:<40} {:>7} {:>12} {:>12} {:>16} {:>6.2}",
            g.what,
            g.n,
            g.base,
            g.small,
            format!("{} (k={})", g.large, g.factor),
            g.ratio()
        );
        for (f, s, l) in &g.steep_functions {
            let _ = writeln!(t, "    steep function: {f}: {s} → {l} instructions");
        }
    }
    t
}

/// Fails (panics) with the table when a step's ratio is over `limit` × its factor (`limit`
/// 1.5 lets `n log n` and noise through and stops a quadratic step once it is about a third of
/// the cost), or when a function of it grows quadratically (see [`Growth::steep_functions`]).
pub fn assert_linear(growths: &[Growth], limit: f64) {
    let t = table(growths);
    eprintln!("{t}");
    let mut steep: Vec<String> = Vec::new();
    for g in growths {
        if g.ratio() > limit * g.factor as f64 {
            steep.push(format!(
                "{}: {:.2}× the instructions for {}× the input (limit {:.1})",
                g.what,
                g.ratio(),
                g.factor,
                limit * g.factor as f64
            ));
        }
        for (f, s, l) in &g.steep_functions {
            steep.push(format!(
                "{}: the function {f} went from {s} to {l} instructions for {}× the input",
                g.what, g.factor
            ));
        }
    }
    assert!(
        steep.is_empty(),
        "steps that grow faster than linearly:\n{}\n\n{t}",
        steep.join("\n")
    );
}

/// The growth of one step over `shapes`: writes the start-up Fuzzfile and each shape at `n`
/// and `factor`·`n` (times [`scale`]) into `dir`, counts `run(file, profile)` on each (see
/// [`instructions_all`]) and returns one [`Growth`] per shape, named `step: shape`.
pub fn grow(
    dir: &Path,
    step: &str,
    shapes: &[Shape],
    n: usize,
    factor: usize,
    run: impl Fn(&Path, PathBuf) -> Run,
) -> Result<Vec<Growth>, String> {
    let n = n * scale();
    let slug: String = step.chars().filter(char::is_ascii_alphanumeric).collect();
    let write = |name: String, text: String| -> Result<Run, String> {
        let path = dir.join(&name);
        std::fs::write(&path, text).map_err(|e| format!("writing {}: {e}", path.display()))?;
        Ok(run(&path, dir.join(format!("{name}.{slug}.callgrind"))))
    };
    let mut runs = vec![write(format!("smallest-{slug}.fz"), smallest())?];
    for (k, shape) in shapes.iter().enumerate() {
        for size in [n, n * factor] {
            runs.push(write(
                format!("shape{k}-{size}-{slug}.fz"),
                shape.fuzzfile(size),
            )?);
        }
    }
    let counts = instructions_all(&runs)?;
    Ok(shapes
        .iter()
        .enumerate()
        .map(|(k, shape)| {
            Growth::of(
                format!("{step}: {}", shape.name()),
                n,
                factor,
                &counts[0],
                &counts[1 + 2 * k],
                &counts[2 + 2 * k],
            )
        })
        .collect())
}
