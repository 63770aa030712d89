//! Analyse one Fuzzfile once with the system allocator, for heap profilers:
//! `cargo build --release -p fuzzfile_check --example analyse_file &&
//! heaptrack target/release/examples/analyse_file big.fz` (or `valgrind --tool=massif`).

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: analyse_file FUZZFILE");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let analysis = fuzzfile_check::analyze(&text);
    println!("{}", std::hint::black_box(&analysis).diagnostics.len());
}
