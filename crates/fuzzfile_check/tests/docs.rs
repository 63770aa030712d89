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

/// The `Rule` table of `fuzzfile_diagnostics` is generated from the rules' `declare_rule!`
/// metadata; this test fails when the committed file differs and rewrites it with
/// `UPDATE_DOCS=1`.
#[test]
fn rule_table_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzzfile_diagnostics/src/rules_generated.rs");
    let expected = fuzzfile_check::rules::generated_rule_table();
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, &expected).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "crates/fuzzfile_diagnostics/src/rules_generated.rs differs from the rules' `declare_rule!` metadata; run `UPDATE_DOCS=1 cargo test -p fuzzfile_check --test docs`"
    );
}

/// The registry and the generated enum agree rule by rule: each `Rule` maps to the metadata
/// declared in its own file, and the registry lists each rule once.
#[test]
fn every_rule_is_registered_once_with_its_own_metadata() {
    use fuzzfile_check::rules::{meta, REGISTRY};
    assert_eq!(REGISTRY.len(), Rule::ALL.len());
    for &rule in Rule::ALL {
        let m = meta(rule);
        assert_eq!(m.variant, format!("{rule:?}"));
        assert_eq!(m.code, rule.code());
        assert_eq!(m.name, rule.name());
        assert_eq!(m.severity, rule.default_severity());
        assert_eq!(m.category, rule.category());
        assert_eq!(m.summary, rule.summary());
        assert_eq!(m.aliases, rule.aliases());
        assert_eq!(
            REGISTRY.iter().filter(|r| r.variant == m.variant).count(),
            1,
            "{} is registered more than once",
            m.name
        );
    }
}
