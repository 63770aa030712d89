//! Profile the analysis of launcher-heavy files: `perf record target/release/examples/profile_launchers N`.

#[path = "analysis_compare.rs"]
#[allow(dead_code)]
mod compare;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let text = compare::synthetic_launchers(1_000);
    for _ in 0..n {
        std::hint::black_box(fuzzfile_check::analyze(&text));
    }
}
