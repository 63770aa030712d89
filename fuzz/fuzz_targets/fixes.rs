//! Apply every fix `fuzzlint check --fix` would apply to arbitrary bytes, the way it applies
//! them (`fuzzfile_check::fix_until_stable`), and check what a fix promises
//! (`fuzzfile_check::invariants::check_fixes`): the result has no error, of any rule, that the
//! input did not have, and no more syntax errors. A violation panics with the input, the fixed
//! text and the new findings. `crates/fuzzfile_check/tests/invariants.rs` replays the seeds,
//! specs, examples and corpus through the same check on stable Rust.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let profile = fuzzfile_check::profile::parse_profile(
        "fabric = \"infiniband\"\nmnnvl = true\nimex = true\ngpus-per-node = 4\ngpu-product = \"GB200\"\n",
    )
    .ok();
    for options in [
        fuzzfile_check::Options::default(),
        fuzzfile_check::Options {
            profile,
            ..Default::default()
        },
    ] {
        let a = fuzzfile_check::analyze_bytes_with(data, &options);
        if let Err(violation) = fuzzfile_check::invariants::check_fixes(&a) {
            panic!("{violation}");
        }
    }
});
