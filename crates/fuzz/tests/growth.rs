//! `fuzz plan` grows linearly with its input: instruction counts (valgrind) on generated
//! Fuzzfiles of N and 4N elements of each shape (fuzz_test_support::growth), start-up taken
//! off. Skipped without valgrind unless FUZZ_REQUIRE_SYSTEM_TESTS is set.

use fuzz_test_support::growth::{self, Run, Shape};
use fuzz_test_support::{fuzz_binary, require, ScratchDirectory};

#[test]
fn plan_grows_linearly() {
    if !require(growth::valgrind_available()) {
        return;
    }
    let scratch = ScratchDirectory::create("fuzz-growth", "plan");
    let fuzz = growth::lean_copy(fuzz_binary!().path(), scratch.path());
    // An unoptimised `fuzz plan` spends about 1.8 M instructions per job (four runtime
    // command lines per instance, the JSON), so the job shapes stay small; the shapes of one
    // job (env entries, keys) are cheap per element and go further.
    let jobs: Vec<Shape> = Shape::ALL
        .into_iter()
        .filter(|s| !matches!(s, Shape::Env | Shape::Keys))
        .collect();
    let run = |file: &std::path::Path, profile| Run {
        program: fuzz.clone(),
        args: vec!["plan".into(), file.into(), "-o".into(), "/dev/null".into()],
        copy: None,
        ok_status: vec![0],
        profile,
    };
    let mut growths = growth::grow(scratch.path(), "fuzz plan", &jobs, 25, 4, run)
        .unwrap_or_else(|e| panic!("{e}"));
    growths.extend(
        growth::grow(
            scratch.path(),
            "fuzz plan",
            &[Shape::Env, Shape::Keys],
            250,
            4,
            run,
        )
        .unwrap_or_else(|e| panic!("{e}")),
    );
    growth::assert_linear(&growths, 1.5);
}
