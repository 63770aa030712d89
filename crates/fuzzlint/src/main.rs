//! `fuzzlint`: the binary. The command line and `fuzzlint check` live in the library
//! (lib.rs), which `fuzz check` shares.

/// The analysis allocates many small strings; mimalloc makes a large file about 1.7× faster
/// to check than the system allocator (docs/benchmarks.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    fuzzlint::run()
}
