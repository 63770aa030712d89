//! The fuzz target's seed inputs (`fuzz/seeds/`) as regression tests: each is parsed and
//! checked with the same invariants as `fuzz/fuzz_targets/syntax.rs`, so CI runs them on stable
//! Rust without cargo-fuzz. Inputs that once crashed the fuzzer belong in that folder.

#![allow(clippy::unwrap_used)]

use fuzzfile_syntax::invariants::check_invariants;
use fuzzfile_syntax::parse_bytes;
use std::path::Path;

#[test]
fn fuzz_seeds_hold_the_invariants() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    assert!(entries.len() >= 5, "too few seeds in {}", dir.display());
    for path in &entries {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (text, tree) = parse_bytes(&bytes);
        if let Err(violation) = check_invariants(&text, &tree) {
            panic!("{}: {violation}", path.display());
        }
    }
}
