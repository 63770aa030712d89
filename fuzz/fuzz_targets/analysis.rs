//! Run the whole analysis (syntax, model, every rule, with and without a cluster profile) on
//! arbitrary bytes and check `fuzzfile_check::invariants`: ranges inside the text, fixes that
//! apply cleanly and re-analyse without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let profile = fuzzfile_check::profile::parse_profile("fabric = \"infiniband\"\nmnnvl = true\nimex = true\ngpus-per-node = 4\ngpu-product = \"GB200\"\n").ok();
    for options in [fuzzfile_check::Options::default(), fuzzfile_check::Options { profile, ..Default::default() }] {
        let a = fuzzfile_check::analyze_bytes_with(data, &options);
        if let Err(violation) = fuzzfile_check::invariants::check(&a, &options) {
            panic!("{violation}\ninput: {:?}", String::from_utf8_lossy(data));
        }
    }
});
