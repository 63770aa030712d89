//! Parse arbitrary bytes and check the tree's invariants: ranges inside the text and on
//! character boundaries, children inside their parents, offset maps in order and exact maps
//! sending every word back to its own source bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (text, tree) = fuzzfile_syntax::parse_bytes(data);
    if let Err(violation) = fuzzfile_syntax::invariants::check_invariants(&text, &tree) {
        panic!("{violation}\ninput: {text:?}");
    }
});
