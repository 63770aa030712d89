//! The rule that tells a Fuzzfile from other YAML (`fuzzfile_check::recognise`) takes the
//! text of every Fuzzfile and template of the external corpus (../shared/corpus), of
//! `examples/` and of the rule specs (tests/specs), except the specs whose top level is broken
//! on purpose (named below: they are `.fz` files, Fuzzfiles by their name), and every values
//! file of the corpus and the specs is a values file by its text.

use fuzzfile_check::recognise::{recognise, recognise_values, NotFuzzfile};
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    walk(dir, &mut v);
    v.sort();
    v
}

fn name(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

fn is_values(p: &Path) -> bool {
    fuzzfile_check::template::is_values_name(name(p))
}

fn is_fuzzfile_or_template(p: &Path) -> bool {
    let n = name(p);
    !is_values(p) && (n.ends_with(".fz") || n.ends_with(".yaml") || n.ends_with(".yml"))
}

/// Spec files whose top level is wrong on purpose, with what the rule says of them.
const BROKEN_ON_PURPOSE: &[(&str, NotFuzzfile)] = &[
    ("missing-field/bad.fz", NotFuzzfile::NoVersion),
    ("missing-field/bad-empty.fz", NotFuzzfile::NoVersion),
    ("missing-field/bad-comments-only.fz", NotFuzzfile::NoVersion),
    ("missing-field/bad-indented-root.fz", NotFuzzfile::NoVersion),
    (
        "missing-field/bad-no-jobs.fz",
        NotFuzzfile::NoJobsOrServices,
    ),
];

#[test]
fn every_fuzzfile_of_the_repository_and_the_corpus_is_recognised() {
    let specs = repo().join("tests/specs");
    let mut files: Vec<PathBuf> = files_under(&specs);
    files.extend(files_under(&repo().join("examples")));
    let corpus = repo().join("../shared/corpus");
    let corpus_files = files_under(&corpus);
    // Fragments of documentation pages are not whole Fuzzfiles.
    files.extend(
        corpus_files
            .iter()
            .filter(|p| !p.components().any(|c| c.as_os_str() == "fragments"))
            .cloned(),
    );
    let mut checked = 0;
    let mut seen_broken = 0;
    let mut values = 0;
    for path in &files {
        if is_values(path) {
            let text = std::fs::read_to_string(path).expect("read");
            assert_eq!(recognise_values(&text), Ok(()), "{}", path.display());
            values += 1;
            continue;
        }
        if !is_fuzzfile_or_template(path) {
            continue;
        }
        // A few specs are not UTF-8 on purpose (`.fz` files: Fuzzfiles by their name).
        let text = String::from_utf8_lossy(&std::fs::read(path).expect("read")).into_owned();
        let verdict = recognise(&text);
        let rel = path.strip_prefix(&specs).ok();
        let expected = rel.and_then(|r| {
            BROKEN_ON_PURPOSE
                .iter()
                .find(|(f, _)| Path::new(f) == r)
                .map(|(_, why)| why.clone())
        });
        match expected {
            Some(why) => {
                assert_eq!(verdict, Err(why), "{}", path.display());
                seen_broken += 1;
            }
            None => assert_eq!(verdict, Ok(()), "{}", path.display()),
        }
        checked += 1;
    }
    assert_eq!(
        seen_broken,
        BROKEN_ON_PURPOSE.len(),
        "a listed spec is gone"
    );
    assert!(checked > 190, "only {checked} files");
    assert!(values > 10, "only {values} values files");
    if corpus.is_dir() {
        assert!(
            checked > 300 && values > 100,
            "the corpus was not read: {checked} files, {values} values files"
        );
    } else {
        eprintln!("shared/corpus not found next to the repository: only the repository's files");
    }
}
