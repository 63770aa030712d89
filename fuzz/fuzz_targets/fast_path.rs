//! The fast path against the event parser: wherever the fast path takes an input, its tree
//! must be identical to the reference path's (nodes, ranges, values, styles, offset maps,
//! comments) and hold the tree invariants.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Err(difference) = fuzzfile_syntax::differential::check_fast_path(text) {
        panic!("{difference}\ninput: {text:?}");
    }
});
