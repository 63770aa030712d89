//! Property tests over the external Fuzzfile corpus (`shared/corpus` beside the repository):
//! every file parses without syntax errors, every scalar's offset map is exact, and every word
//! maps back to identical source text unless its source spells an escape.

#![allow(clippy::unwrap_used)]

use fuzzfile_syntax::invariants::check_invariants;
use fuzzfile_syntax::{parse, parse_bytes, NodeKind, ScalarStyle};
use std::path::{Path, PathBuf};

fn corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: no corpus at {} (shared/corpus is not checked out beside the repository)",
            dir.display()
        );
        None
    }
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    v.sort();
    v
}

/// Whitespace-separated words with their byte offsets.
fn words(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(st)) => {
                out.push((st, &s[st..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(st) = start {
        out.push((st, &s[st..]));
    }
    out
}

/// Checks one clean file; returns how many words were compared.
fn check_file(path: &Path) -> usize {
    let name = path.display();
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{name}: {e}"));
    let (text, tree) = parse_bytes(&bytes);
    assert!(
        tree.errors.is_empty(),
        "{name}: syntax errors {:#?}",
        tree.errors
    );
    assert!(tree.root().is_some(), "{name}: empty tree");
    if let Err(e) = check_invariants(&text, &tree) {
        panic!("{name}: {e}");
    }
    let mut compared = 0;
    for (id, node) in tree.nodes() {
        let NodeKind::Scalar(s) = &node.kind else {
            continue;
        };
        let s = tree.scalar_of(s);
        assert!(
            s.map.is_exact(),
            "{name}: inexact map for node {} at {:?}: {:?}",
            id.0,
            node.range,
            s.value
        );
        for (start, word) in words(s.value) {
            let r = s.map.range_to_source(start..start + word.len());
            let src = r.slice(&text);
            let plain_word = !word.contains(['\\', '\'', '"']);
            let escaped = match s.style {
                ScalarStyle::DoubleQuoted => src.contains('\\'),
                ScalarStyle::SingleQuoted => src.contains("''"),
                _ => false,
            };
            if plain_word && !escaped {
                assert_eq!(
                    src, word,
                    "{name}: word {word:?} of node {} maps to {r:?}",
                    id.0
                );
                compared += 1;
            }
        }
    }
    compared
}

fn check_dir(sub: &str) {
    let Some(root) = corpus_dir() else { return };
    let dir = root.join(sub);
    let list = files(&dir);
    assert!(!list.is_empty(), "no files in {}", dir.display());
    let mut words = 0;
    for f in &list {
        words += check_file(f);
    }
    assert!(words > 0, "{sub}: no word compared");
    eprintln!(
        "{sub}: {} files, {words} words map back exactly",
        list.len()
    );
}

#[test]
fn corpus_plain() {
    check_dir("plain");
}

#[test]
fn corpus_plain_history() {
    check_dir("plain/history");
}

#[test]
fn corpus_docs() {
    check_dir("docs");
}

#[test]
fn corpus_docs_fragments() {
    check_dir("docs/fragments");
}

/// Templates are Go `text/template` files, mostly not YAML: they exercise error recovery on
/// real text. No panic, and the invariants hold whatever the errors.
#[test]
fn corpus_templates_recover_with_invariants() {
    let Some(root) = corpus_dir() else { return };
    for sub in ["templates", "templates/v3.4", "templates/history"] {
        let dir = root.join(sub);
        if !dir.is_dir() {
            continue;
        }
        for f in files(&dir) {
            let bytes = std::fs::read(&f).unwrap_or_default();
            let (text, tree) = parse_bytes(&bytes);
            if let Err(e) = check_invariants(&text, &tree) {
                panic!("{}: {e}", f.display());
            }
        }
    }
}

/// A few words at known places, so the property above cannot pass vacuously.
#[test]
fn corpus_spot_checks() {
    let Some(root) = corpus_dir() else { return };
    let path =
        root.join("plain/ctrliq-fuzzball-workflow-examples__openfoam-openfoam-motorbike-mpi.fz");
    let Ok(text) = std::fs::read_to_string(&path) else {
        fuzz_test_support::system::skip(&format!("{} not found", path.display()));
        return;
    };
    let tree = parse(&text);
    let root_id = tree.root().unwrap();
    let jobs = tree.get(root_id, "jobs").unwrap().value;
    let job = tree.get(jobs, "prepare-motorbike-case").unwrap().value;
    let command = tree.get(job, "command").unwrap().value;
    let items = tree.items(command).unwrap();
    let script = tree.scalar(items[2]).unwrap();
    // A double-quoted string continued with `\` line breaks.
    for word in ["decomposeParDict;", "motorBike/system/decomposeParDict.6"] {
        let at = script.value.find(word).unwrap();
        let r = script.map.range_to_source(at..at + word.len());
        assert_eq!(r.slice(&text), word);
    }
}
