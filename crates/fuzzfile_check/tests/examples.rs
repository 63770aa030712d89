//! The shipped examples are clean: without a profile, and under their matching cluster
//! profile (examples/clusters/README.md), nothing at warning level or above is reported.

use fuzzfile_check::profile::parse_profile;
use fuzzfile_check::{analyze_bytes_with, render, Options, Severity};
use std::path::Path;

const WITH_PROFILE: &[(&str, &str)] = &[
    ("nccl-torchrun-1n.fz", "h100-ib.toml"),
    ("nccl-torchrun-generic.fz", "h100-ib.toml"),
    ("nccl-tests-mpirun.fz", "h100-ib.toml"),
    ("nccl-torchrun-mnnvl.fz", "gb200-nvl72.toml"),
];

fn examples() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

#[test]
fn examples_are_clean_without_a_profile() {
    let mut n = 0;
    for e in std::fs::read_dir(examples()).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x == "fz") {
            let a = analyze_bytes_with(&std::fs::read(&p).unwrap(), &Options::default());
            let bad: Vec<_> = a
                .diagnostics
                .iter()
                .filter(|d| d.severity >= Severity::Warning)
                .collect();
            assert!(bad.is_empty(), "{}:\n{}", p.display(), render::plain(&a));
            n += 1;
        }
    }
    assert!(n >= 6, "only {n} examples");
}

#[test]
fn nccl_examples_are_clean_under_their_profiles() {
    for (file, profile) in WITH_PROFILE {
        let profile_text =
            std::fs::read_to_string(examples().join("clusters").join(profile)).unwrap();
        let options = Options {
            profile: Some(parse_profile(&profile_text).unwrap()),
            ..Default::default()
        };
        let a = analyze_bytes_with(&std::fs::read(examples().join(file)).unwrap(), &options);
        let bad: Vec<_> = a
            .diagnostics
            .iter()
            .filter(|d| d.severity >= Severity::Warning)
            .collect();
        assert!(
            bad.is_empty(),
            "{file} under {profile}:\n{}",
            render::plain(&a)
        );
    }
}

#[test]
fn the_examples_break_when_their_settings_are_removed() {
    // The GPU rules really look at these files: break each scenario and see it reported.
    let read = |f: &str| std::fs::read_to_string(examples().join(f)).unwrap();
    let cases = [
        (
            "nccl-torchrun-1n.fz",
            "--nproc-per-node 4",
            "--nproc-per-node 8",
            "launcher-nproc-mismatch",
        ),
        (
            "nccl-torchrun-generic.fz",
            "--node-rank '$RANK' \\\n",
            "",
            "launcher-missing-node-rank",
        ),
        (
            "nccl-torchrun-generic.fz",
            "--nnodes 2",
            "--nnodes 3",
            "launcher-nnodes-mismatch",
        ),
        (
            "nccl-tests-mpirun.fz",
            "      procs-per-node: 4\n",
            "",
            "mpi-slots-not-gpus",
        ),
    ];
    for (file, from, to, rule) in cases {
        let text = read(file);
        assert!(text.contains(from), "{file} lacks {from:?}");
        let broken = text.replacen(from, to, 1);
        let a = fuzzfile_check::analyze(&broken);
        assert!(
            a.diagnostics.iter().any(|d| d.rule.name() == rule),
            "{file} without {from:?}: {rule} did not fire:\n{}",
            render::plain(&a)
        );
    }
}
