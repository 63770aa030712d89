//! The whole external corpus of real Fuzzfiles (../shared/corpus): every complete file is
//! parsed and modelled with no `yaml-syntax`, `unknown-key` or `invalid-value` false
//! positives; every finding on it is in a reviewed snapshot; the fragments run without a crash.

use fuzzfile_check::{analyze_bytes, Rule, Severity};
use std::fmt::Write;
use std::path::{Path, PathBuf};

fn corpus() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    p.is_dir().then_some(p)
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.extension()
                    .is_some_and(|e| e == "fz" || e == "yaml" || e == "yml")
        })
        .collect();
    v.sort();
    v
}

/// Corpus files that really are wrong, with the reason. Anything else at these rules fails.
const KNOWN_WRONG: &[(&str, Rule, &str)] = &[
    // Earlier versions of the examples left the egress destination `uri:` empty (it loads as
    // null): Fuzzball cannot upload the results anywhere.
    (
        "ctrliq-fuzzball-workflow-examples@6aaabc0__lammps-lammps-gpu-ngc.fz",
        Rule::InvalidValue,
        "empty egress destination uri",
    ),
    (
        "ctrliq-fuzzball-workflow-examples@ce3f9a6__lammps-lammps-gpu-ngc.fz",
        Rule::InvalidValue,
        "empty egress destination uri",
    ),
    (
        "ctrliq-fuzzball-workflow-examples@c94f1bd__blast-blast.fz",
        Rule::InvalidValue,
        "empty egress destination uri",
    ),
    (
        "ctrliq-fuzzball-workflow-examples@f0b76ae__openfoam-openfoam-motorbike-mpi.fz",
        Rule::InvalidValue,
        "empty egress destination uri",
    ),
];

#[test]
fn complete_files_have_no_false_positives() {
    let Some(root) = corpus() else {
        fuzz_test_support::system::skip("shared/corpus not found next to the repository");
        return;
    };
    let mut all: Vec<PathBuf> = Vec::new();
    for sub in ["plain", "plain/history", "docs"] {
        all.extend(files(&root.join(sub)));
    }
    assert!(
        all.len() >= 25,
        "expected the whole corpus, found {} files",
        all.len()
    );
    let mut report = String::new();
    for path in &all {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let a = analyze_bytes(&std::fs::read(path).unwrap());
        assert!(a.tree.errors.is_empty(), "{name}: {:?}", a.tree.errors);
        assert!(
            !a.model.jobs.is_empty() || !a.model.services.is_empty(),
            "{name}: no jobs modelled"
        );
        for d in &a.diagnostics {
            if matches!(
                d.rule,
                Rule::YamlSyntax | Rule::UnknownKey | Rule::InvalidValue
            ) || d.severity == Severity::Error
            {
                let known = KNOWN_WRONG
                    .iter()
                    .any(|(f, r, _)| *f == name && *r == d.rule);
                assert!(
                    known,
                    "{name}: unexpected {} at {:?}: {}",
                    d.rule.name(),
                    a.line_col(d.range.start),
                    d.message
                );
            }
            let p = a.line_col(d.range.start);
            let _ = writeln!(
                report,
                "{name}:{}:{} {} {}: {}",
                p.line,
                p.column,
                d.severity,
                d.rule.name(),
                d.message
            );
        }
    }
    insta::assert_snapshot!("corpus_findings", report);
}

#[test]
fn every_scalar_offset_map_in_the_corpus_is_exact() {
    let Some(root) = corpus() else { return };
    for sub in [
        "plain",
        "plain/history",
        "docs",
        "docs/fragments",
        "templates/v3.4",
    ] {
        let dir = root.join(sub);
        if !dir.is_dir() {
            continue;
        }
        for path in files(&dir) {
            let a = analyze_bytes(&std::fs::read(&path).unwrap());
            if !a.tree.errors.is_empty() {
                continue; // templates that are not YAML before rendering
            }
            for (_, node) in a.tree.nodes() {
                if let fuzzfile_syntax::NodeKind::Scalar(s) = &node.kind {
                    let s = a.tree.scalar_of(s);
                    assert!(
                        s.map.is_exact(),
                        "{}: inexact map for {:?}",
                        path.display(),
                        s.value
                    );
                }
            }
        }
    }
}

#[test]
fn fragments_and_templates_never_crash() {
    let Some(root) = corpus() else { return };
    let mut n = 0;
    for sub in [
        "docs/fragments",
        "templates",
        "templates/v3.4",
        "templates/history",
    ] {
        let dir = root.join(sub);
        if !dir.is_dir() {
            continue;
        }
        for path in files(&dir) {
            let a = analyze_bytes(&std::fs::read(&path).unwrap());
            // Every range must lie inside the text, on character boundaries.
            for d in &a.diagnostics {
                assert!(
                    d.range.end as usize <= a.text.len(),
                    "{}: {:?}",
                    path.display(),
                    d
                );
                assert!(
                    a.text.is_char_boundary(d.range.start as usize)
                        && a.text.is_char_boundary(d.range.end as usize)
                );
            }
            n += 1;
        }
    }
    assert!(n > 50, "only {n} fragment and template files found");
}
