//! Render and check every application template of the catalog corpus
//! (../shared/corpus/templates, or the directory given) with its values file, as
//! `fuzzlint check` does (`fuzzfile_check::template::check`: values, parse, render, analysis of
//! the rendered text, mapping of every finding), one thread, mimalloc as in the binaries:
//!
//! ```sh
//! cargo run --release -p fuzzfile_check --example bench_templates -- [--iterations N] [DIR]
//! ```
//!
//! Prints the median time per template (of N runs each), the slowest ones, and the mean.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use fuzzfile_check::template::{self, Source, TemplateInput};
use fuzzfile_check::Options;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn templates(dir: &Path) -> Vec<PathBuf> {
    let mut out = fuzz_test_support::corpus::files_below(dir);
    out.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(template::is_template_name)
    });
    out
}

fn input(path: &Path) -> Option<TemplateInput> {
    let name = path.file_name()?.to_str()?.to_owned();
    let values = template::values_file_paths(path)
        .into_iter()
        .find(|p| p.is_file())
        .and_then(|p| {
            Some(Source {
                display: p.display().to_string(),
                text: std::fs::read_to_string(&p).ok()?,
            })
        });
    Some(TemplateInput {
        template: Source {
            display: name,
            text: std::fs::read_to_string(path).ok()?,
        },
        values,
        ..TemplateInput::default()
    })
}

/// Medians of the parts of one check: parsing the template, rendering it with the values
/// file's defaults, analysing the rendered text.
fn split(inp: &TemplateInput, iterations: usize) -> (Duration, Duration, Duration) {
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let data = match &inp.values {
        Some(v) => {
            fuzzfile_template::values_file::parse(&v.text)
                .0
                .defaults()
                .root
        }
        None => fuzzfile_template::Value::Map(Default::default()),
    };
    let (mut p, mut r, mut a) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..iterations.max(1) {
        let start = Instant::now();
        let Ok(t) = fuzzfile_template::parse(&inp.template.display, &inp.template.text) else {
            return Default::default();
        };
        p.push(start.elapsed());
        let start = Instant::now();
        let out = fuzzfile_template::render(&t, &data, &Default::default());
        r.push(start.elapsed());
        let start = Instant::now();
        if let Ok(out) = out {
            std::hint::black_box(fuzzfile_check::analyze(&out.text));
        }
        a.push(start.elapsed());
    }
    (median(p), median(r), median(a))
}

fn main() {
    let mut iterations = 20usize;
    let mut dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/templates");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--iterations" {
            iterations = args
                .next()
                .and_then(|n| n.parse().ok())
                .unwrap_or(iterations);
        } else {
            dir = PathBuf::from(a);
        }
    }
    let inputs: Vec<(String, TemplateInput)> = templates(&dir)
        .iter()
        .filter_map(|p| Some((p.file_name()?.to_string_lossy().into_owned(), input(p)?)))
        .collect();
    if inputs.is_empty() {
        eprintln!("no templates under {}", dir.display());
        std::process::exit(2);
    }
    let options = Options::default();
    let mut medians: Vec<(Duration, &str, usize)> = Vec::new();
    for (name, inp) in &inputs {
        let mut times = Vec::with_capacity(iterations);
        let mut findings = 0;
        for _ in 0..iterations.max(1) {
            let i = inp.clone();
            let start = Instant::now();
            let t = template::check(i, &options);
            times.push(start.elapsed());
            findings = t.diagnostics.len();
            std::hint::black_box(&t);
        }
        times.sort();
        medians.push((times[times.len() / 2], name, findings));
    }
    let total: Duration = medians.iter().map(|m| m.0).sum();
    let n = u32::try_from(medians.len()).unwrap_or(u32::MAX);
    medians.sort_by_key(|m| std::cmp::Reverse(m.0));
    println!(
        "{} templates, median of {iterations} runs each: mean {:.1} µs per template, total {:.2} ms",
        medians.len(),
        total.as_secs_f64() * 1e6 / f64::from(n),
        total.as_secs_f64() * 1e3
    );
    let under = medians
        .iter()
        .filter(|m| m.0 < Duration::from_millis(1))
        .count();
    println!("{under} of {} under 1 ms", medians.len());
    println!("slowest (whole check; of it: parse, render, analysis of the rendered text):");
    for (d, name, findings) in medians.iter().take(5) {
        let Some((_, inp)) = inputs.iter().find(|(n, _)| n == name) else {
            continue;
        };
        let (parse, render, analysis) = split(inp, iterations);
        println!(
            "  {:>8.1} µs  {name} ({findings} findings): parse {:.1} µs, render {:.1} µs, analysis {:.1} µs",
            d.as_secs_f64() * 1e6,
            parse.as_secs_f64() * 1e6,
            render.as_secs_f64() * 1e6,
            analysis.as_secs_f64() * 1e6,
        );
    }
}
