//! docs/rules/ is generated from the rule files; this test fails when it is stale.
//! `UPDATE_DOCS=1 cargo test -p fuzzfile_check --test docs` rewrites it.

use fuzzfile_check::rules::{markdown_index, markdown_page};
use fuzzfile_check::Rule;
use std::path::Path;

#[test]
fn rule_docs_are_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules");
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let mut expected: Vec<(String, String)> = Rule::ALL
        .iter()
        .map(|r| (format!("{}.md", r.name()), markdown_page(*r)))
        .collect();
    expected.push(("README.md".into(), markdown_index()));
    if update {
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    let mut stale = Vec::new();
    for (name, content) in &expected {
        let path = dir.join(name);
        if update {
            std::fs::write(&path, content).unwrap();
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(content.as_str()) {
            stale.push(name.clone());
        }
    }
    // No page for a rule that no longer exists.
    let names: Vec<String> = std::fs::read_dir(&dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    for n in names {
        if !expected.iter().any(|(e, _)| *e == n) {
            stale.push(format!("{n} (no such rule)"));
        }
    }
    assert!(stale.is_empty(), "docs/rules is stale: {stale:?}; run `UPDATE_DOCS=1 cargo test -p fuzzfile_check --test docs`");
}
