//! Specs of the template rules: `tests/specs/<rule>/{good,bad*}.template.yaml` at the top of
//! the repository, each checked with the `<stem>.values.yaml` beside it (none: no values).
//!
//! For every bad template the rule of its directory fires, and every finding (template and
//! values file) is a snapshot next to it; for every good template nothing of that rule and
//! nothing at error level is found.

use fuzzfile_check::template::{self, Source, TemplateInput};
use fuzzfile_check::{Options, Rule, RuleCategory, Severity};
use std::path::{Path, PathBuf};

fn specs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/specs")
}

fn source(path: &Path) -> Source {
    Source {
        display: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        text: std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    }
}

#[test]
fn template_specs() {
    let mut checked = 0;
    for &rule in Rule::ALL
        .iter()
        .filter(|r| r.category() == RuleCategory::Template)
    {
        let dir = specs_dir().join(rule.name());
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".template.yaml"))
            .collect();
        files.sort();
        for file in files {
            let name = file
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned();
            let stem = name.trim_end_matches(".template.yaml").to_owned();
            let values = dir.join(format!("{stem}.values.yaml"));
            let input = TemplateInput {
                template: source(&file),
                values: values.is_file().then(|| source(&values)),
                looked_for: vec![format!("{stem}.values.yaml")],
                ..TemplateInput::default()
            };
            let t = template::check(input, &Options::default());
            let all: Vec<_> = t
                .diagnostics
                .iter()
                .chain(t.values_findings.iter().flat_map(|f| f.diagnostics.iter()))
                .collect();
            checked += 1;
            if stem.starts_with("good") {
                let fired: Vec<_> = all
                    .iter()
                    .filter(|d| d.rule == rule || d.severity == Severity::Error)
                    .collect();
                assert!(fired.is_empty(), "{}: {fired:#?}", file.display());
                continue;
            }
            assert!(
                all.iter().any(|d| d.rule == rule),
                "{}: rule {} did not fire:\n{}",
                file.display(),
                rule.name(),
                template::plain(&t)
            );
            insta::with_settings!({
                snapshot_path => dir.join("snapshots"),
                prepend_module_to_snapshot => false,
                omit_expression => true,
                description => format!("{}/{name}", rule.name()),
            }, {
                insta::assert_snapshot!(stem.clone(), template::plain(&t));
            });
        }
    }
    assert!(checked >= 10, "only {checked} template specs found");
}
