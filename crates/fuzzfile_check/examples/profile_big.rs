//! Analyse a synthetic large Fuzzfile in a loop, for profilers:
//! `cargo build --release -p fuzzfile_check --example profile_big && perf record target/release/examples/profile_big`
#[path = "bench.rs"]
#[allow(dead_code)]
mod bench;

fn main() {
    let jobs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000);
    let text = bench::synthetic(jobs);
    for _ in 0..10 {
        std::hint::black_box(fuzzfile_check::analyze(&text));
    }
}
