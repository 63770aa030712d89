//! Replays inputs through the whole analysis and checks `fuzzfile_check::invariants`: the fuzz
//! seeds, every spec file and example, under no profile and under each example profile.

use fuzzfile_check::profile::parse_profile;
use fuzzfile_check::{analyze_bytes_with, invariants, Options};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "fz" || x == "yaml" || x == "yml")
        {
            out.push(p);
        }
    }
}

#[test]
fn seeds_specs_and_examples_keep_the_invariants() {
    let mut files = Vec::new();
    for d in ["fuzz/seeds", "tests/specs", "examples"] {
        collect(&root().join(d), &mut files);
    }
    assert!(files.len() > 50, "only {} inputs", files.len());
    let mut profiles = vec![Options::default()];
    for p in [
        "examples/clusters/h100-ib.toml",
        "examples/clusters/gb200-nvl72.toml",
    ] {
        let text = std::fs::read_to_string(root().join(p)).unwrap();
        profiles.push(Options {
            profile: Some(parse_profile(&text).unwrap()),
            ..Default::default()
        });
    }
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        for o in &profiles {
            let a = analyze_bytes_with(&bytes, o);
            if let Err(e) = invariants::check(&a, o) {
                panic!("{}: {e}", f.display());
            }
        }
    }
}

#[test]
fn fixes_add_no_error_on_seeds_specs_examples_and_the_corpus() {
    // What the `fixes` fuzz target checks, on everything it starts from and what it found.
    let mut files = Vec::new();
    for d in ["fuzz/seeds", "tests/specs", "examples"] {
        collect(&root().join(d), &mut files);
    }
    collect(&root().join("../shared/corpus/plain"), &mut files);
    let mut fixed_some = 0;
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        let a = analyze_bytes_with(&bytes, &Options::default());
        if a.diagnostics.iter().any(|d| d.fix.is_some()) {
            fixed_some += 1;
        }
        if let Err(e) = invariants::check_fixes(&a) {
            panic!("{}: {e}", f.display());
        }
    }
    assert!(fixed_some > 20, "only {fixed_some} inputs have a fix");
}

#[test]
fn truncated_inputs_keep_the_invariants() {
    // Every prefix of a few rich files: half-typed edits are what an editor sees.
    for f in [
        "examples/nccl-torchrun-generic.fz",
        "examples/pipeline.fz",
        "tests/specs/invalid-value/bad.fz",
    ] {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        let o = Options::default();
        for cut in (0..text.len())
            .filter(|i| text.is_char_boundary(*i))
            .step_by(7)
        {
            let a = fuzzfile_check::analyze_with(&text[..cut], &o);
            if let Err(e) = invariants::check(&a, &o) {
                panic!("{f} cut at {cut}: {e}");
            }
        }
    }
}
