//! Time each stage of the analysis of one file, and an edit's analysis with and without the
//! findings kept per task, median of N runs:
//! `cargo run --release -p fuzzfile_check --example stages -- FILE [N]`
use fuzzfile_check::semantics::{EvaluationCache, Semantics};
use fuzzfile_check::task_cache::TaskFindingsCache;
use fuzzfile_check::{analyze_with, Options};
use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("FILE");
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(50);
    let text = std::fs::read_to_string(&path).expect("read");
    let cache = EvaluationCache::default();
    let mut t = vec![Vec::new(); 4];
    for _ in 0..n {
        let a = Instant::now();
        let tree = fuzzfile_syntax::parse(&text);
        let b = Instant::now();
        let (model, _d) = fuzzfile_model::build(&text, &tree);
        let c = Instant::now();
        let sem = Semantics::build_with(&model, Some(&cache));
        let ctx = fuzzfile_check::rules::Context::new(&text, &tree, &model, None, &sem);
        let mut out = Vec::new();
        fuzzfile_check::rules::run_all(&ctx, &mut out);
        let d = Instant::now();
        let li = fuzzfile_check::LineIndex::new(&text);
        let e = Instant::now();
        std::hint::black_box((&tree, &model, &sem, &out, &li));
        for (i, d) in [b - a, c - b, d - c, e - d].into_iter().enumerate() {
            t[i].push(d.as_secs_f64() * 1e3);
        }
    }
    for (name, v) in ["parse", "model", "facts and rules", "line index"]
        .into_iter()
        .zip(t)
    {
        println!("{name:>40}: median {:.3} ms", median(v));
    }
    // An edit in the middle of the file: one character typed and removed, as the language
    // server sees it, with the evaluations kept (as the server keeps them), with and without
    // the findings kept per task.
    // The first number written as a value after the middle of the file (`cores: 16`), a digit
    // typed after it.
    let half = text.len() / 2;
    let at = text[half..]
        .match_indices(": ")
        .map(|(i, _)| half + i + 2)
        .find(|&i| text.as_bytes().get(i).is_some_and(u8::is_ascii_digit))
        .expect("a number after the middle");
    let edited = format!("{}1{}", &text[..at], &text[at..]);
    let versions = [text.as_str(), edited.as_str()];
    let every = Options {
        evaluations: Some(cache.clone()),
        ..Options::default()
    };
    let kept = Options {
        evaluations: Some(cache.clone()),
        task_findings: Some(TaskFindingsCache::default()),
        ..Options::default()
    };
    let mut whole = Vec::new();
    let mut reusing = Vec::new();
    for i in 0..n * 2 {
        let v = versions[i % 2];
        let a = Instant::now();
        std::hint::black_box(analyze_with(v, &every));
        let b = Instant::now();
        std::hint::black_box(analyze_with(v, &kept));
        let c = Instant::now();
        whole.push((b - a).as_secs_f64() * 1e3);
        reusing.push((c - b).as_secs_f64() * 1e3);
    }
    println!(
        "{:>40}: median {:.3} ms",
        "an edit, every task checked",
        median(whole)
    );
    println!(
        "{:>40}: median {:.3} ms",
        "an edit, kept findings reused",
        median(reusing)
    );
    println!("{:>40}: {:?}", "kept", kept.task_findings);
}
