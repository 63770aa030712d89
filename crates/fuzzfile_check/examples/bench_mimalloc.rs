//! The benchmark of `bench.rs` with mimalloc as the global allocator, as the `fuzzlint` and
//! `fuzz` binaries have it: `cargo run --release -p fuzzfile_check --example bench_mimalloc`.

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "bench.rs"]
mod bench;

fn main() {
    bench::main();
}
