//! `fuzzlint check` and `fuzzlint check --fix` grow linearly with their input: instruction
//! counts (valgrind) on generated Fuzzfiles of N and 4N elements of each shape
//! (fuzz_test_support::growth), start-up taken off; and `check` of a directory of 1 → many
//! files. Skipped without valgrind unless FUZZ_REQUIRE_SYSTEM_TESTS is set.

use fuzz_test_support::growth::{self, Growth, Run, Shape};
use fuzz_test_support::{fuzzlint_binary, require, ScratchDirectory};
use std::path::Path;

/// Exit statuses of a check that ran: 0 clean, 1 findings (the `requires` shape warns).
const CHECKED: [i32; 2] = [0, 1];

#[test]
fn check_grows_linearly() {
    if !require(growth::valgrind_available()) {
        return;
    }
    let scratch = ScratchDirectory::create("fuzzlint-growth", "check");
    let fuzzlint = growth::lean_copy(fuzzlint_binary!().path(), scratch.path());
    let growths = growth::grow(
        scratch.path(),
        "check",
        &Shape::ALL,
        150,
        4,
        |file, profile| Run {
            program: fuzzlint.clone(),
            args: vec!["check".into(), file.into()],
            copy: None,
            ok_status: CHECKED.to_vec(),
            profile,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    growth::assert_linear(&growths, 1.5);
}

#[test]
fn fix_grows_linearly() {
    if !require(growth::valgrind_available()) {
        return;
    }
    let scratch = ScratchDirectory::create("fuzzlint-growth", "fix");
    let fuzzlint = growth::lean_copy(fuzzlint_binary!().path(), scratch.path());
    // `--fix` rewrites the file: each run fixes a fresh copy. `requires` has a fix per job.
    let growths = growth::grow(
        scratch.path(),
        "check --fix",
        &[Shape::Requires, Shape::Chain, Shape::Files],
        150,
        4,
        |file, profile| {
            let copy = file.with_extension("fix.fz");
            Run {
                program: fuzzlint.clone(),
                args: vec!["check".into(), "--fix".into(), copy.clone().into()],
                copy: Some((file.to_path_buf(), copy)),
                ok_status: CHECKED.to_vec(),
                profile,
            }
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    growth::assert_linear(&growths, 1.5);
}

/// A directory of `count` copies of examples/pipeline.fz (with a deprecated key, so that every
/// file has a finding to render).
fn directory(root: &Path, count: usize) -> std::path::PathBuf {
    let text =
        std::fs::read_to_string(fuzz_test_support::workspace_root().join("examples/pipeline.fz"))
            .unwrap_or_else(|e| panic!("examples/pipeline.fz: {e}"));
    let dir = root.join(format!("files-{count}"));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for i in 0..count {
        let mut t = text.clone();
        t.push_str(&format!("  extra-{i}:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/true]\n    requires: [report]\n"));
        std::fs::write(dir.join(format!("workflow-{i:05}.fz")), t)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    }
    dir
}

#[test]
fn check_of_many_files_grows_linearly() {
    if !require(growth::valgrind_available()) {
        return;
    }
    let scratch = ScratchDirectory::create("fuzzlint-growth", "files");
    let fuzzlint = growth::lean_copy(fuzzlint_binary!().path(), scratch.path());
    let n = 10 * growth::scale();
    let runs: Vec<Run> = [1, n, 4 * n]
        .into_iter()
        .map(|count| Run {
            program: fuzzlint.clone(),
            args: vec!["check".into(), directory(scratch.path(), count).into()],
            copy: None,
            ok_status: CHECKED.to_vec(),
            profile: scratch.path().join(format!("files-{count}.callgrind")),
        })
        .collect();
    // Files named one by one (as pre-commit and bench/compare.sh pass them): YAML files that
    // are not Fuzzfiles, skipped after a cheap look, so that a per-file cost of the list of
    // named paths shows (fuzzfile_kind::skip_named scanned every named path per file: 65 % of
    // checking 1,500 named files).
    let named_n = 10 * n;
    let named: Vec<Run> = [1, named_n, 4 * named_n]
        .into_iter()
        .map(|count| {
            let dir = scratch.path().join(format!("yaml-{count}"));
            std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
            let mut args = vec!["check".to_string()];
            for i in 0..count {
                let path = dir.join(format!("ci-configuration-of-the-project-{i:05}.yaml"));
                std::fs::write(&path, "name: build\nsteps: []\n")
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                args.push(path.to_string_lossy().into_owned());
            }
            Run {
                program: fuzzlint.clone(),
                args: args.into_iter().map(Into::into).collect(),
                copy: None,
                ok_status: CHECKED.to_vec(),
                profile: scratch.path().join(format!("named-{count}.callgrind")),
            }
        })
        .collect();
    let counts = growth::instructions_all(&runs).unwrap_or_else(|e| panic!("{e}"));
    let named_counts = growth::instructions_all(&named).unwrap_or_else(|e| panic!("{e}"));
    growth::assert_linear(
        &[
            Growth::of(
                "check DIR: files".into(),
                n,
                4,
                &counts[0],
                &counts[1],
                &counts[2],
            ),
            Growth::of(
                "check FILE...: named files skipped".into(),
                named_n,
                4,
                &named_counts[0],
                &named_counts[1],
                &named_counts[2],
            ),
        ],
        1.5,
    );
}
