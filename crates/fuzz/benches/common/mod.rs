//! What the benchmarks of `fuzz` share: `--iterations N` and medians.

use std::time::Duration;

/// `--iterations N` from the command line, else `default`.
pub fn iterations(default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--iterations")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// `NAME PATH` from the command line (`--before PATH`), if given.
#[allow(dead_code)] // not every benchmark takes a path
pub fn path_arg(name: &str) -> Option<std::path::PathBuf> {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(std::path::PathBuf::from)
}

/// Every `NAME PATH` of the command line (`--before A --before B`), in order.
#[allow(dead_code)] // not every benchmark takes paths
pub fn path_args(name: &str) -> Vec<std::path::PathBuf> {
    let args: Vec<String> = std::env::args().collect();
    args.windows(2)
        .filter(|w| w[0] == name)
        .map(|w| std::path::PathBuf::from(&w[1]))
        .collect()
}

pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
