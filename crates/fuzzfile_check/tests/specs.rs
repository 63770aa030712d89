//! Rule specs: `tests/specs/<rule-name>/{bad,good}*.fz` at the top of the repository.
//!
//! For every bad file: the diagnostics (with code frames, help and fixes) and the file after
//! `--fix` are snapshots next to it; the rule of the directory fires; applying the fixes is
//! idempotent and removes every diagnostic that had a fix. For every good file: the rule of
//! the directory does not fire, and nothing at error level does.

use fuzzfile_check::{analyze, analyze_bytes, apply_fixes, render, Rule, Severity};
use std::path::{Path, PathBuf};

fn specs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/specs")
}

fn fix_to_fixpoint(text: &str) -> String {
    let mut text = text.to_owned();
    for _ in 0..4 {
        let next = apply_fixes(&text, &analyze(&text).diagnostics);
        if next == text {
            break;
        }
        text = next;
    }
    text
}

#[test]
fn every_rule_has_a_spec_directory() {
    for r in Rule::ALL {
        let dir = specs_dir().join(r.name());
        assert!(
            dir.join("good.fz").is_file(),
            "missing {}",
            dir.join("good.fz").display()
        );
        let bad = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .any(|e| e.file_name().to_string_lossy().starts_with("bad"));
        assert!(bad, "no bad*.fz in {}", dir.display());
    }
}

#[test]
fn specs() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(specs_dir())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let rule_name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let rule = Rule::from_name(&rule_name)
            .unwrap_or_else(|| panic!("{} names no rule", dir.display()));
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|e| e == "fz"))
            .collect();
        files.sort();
        for file in files {
            let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&file).unwrap();
            let a = analyze_bytes(&bytes);
            if stem.starts_with("good") {
                let fired: Vec<_> = a
                    .diagnostics
                    .iter()
                    .filter(|d| d.rule == rule || d.severity == Severity::Error)
                    .collect();
                assert!(fired.is_empty(), "{}: {:#?}", file.display(), fired);
                continue;
            }
            assert!(
                a.diagnostics.iter().any(|d| d.rule == rule),
                "{}: rule {rule_name} did not fire:\n{}",
                file.display(),
                render::plain(&a)
            );
            let fixed = fix_to_fixpoint(&a.text);
            let mut snap = render::plain(&a);
            if fixed != a.text {
                let after = analyze(&fixed);
                // Fixes are idempotent, and each fixed problem is gone.
                assert_eq!(
                    fix_to_fixpoint(&fixed),
                    fixed,
                    "{}: fixes are not idempotent",
                    file.display()
                );
                for d in a.diagnostics.iter().filter(|d| d.fix.is_some()) {
                    assert!(
                        !after
                            .diagnostics
                            .iter()
                            .any(|x| x.rule == d.rule && x.message == d.message),
                        "{}: fix for `{}` did not remove it",
                        file.display(),
                        d.message
                    );
                }
                snap.push_str("\n--- after --fix ---\n");
                snap.push_str(&fixed);
                snap.push_str("--- remaining ---\n");
                snap.push_str(&render::plain(&after));
            }
            insta::with_settings!({
                snapshot_path => dir.join("snapshots"),
                prepend_module_to_snapshot => false,
                omit_expression => true,
                description => format!("{rule_name}/{stem}.fz"),
            }, {
                insta::assert_snapshot!(stem.clone(), snap);
            });
        }
    }
}
