//! Rule specs: `tests/specs/<rule-name>/{bad,good}*.fz` at the top of the repository.
//!
//! For every bad file: the diagnostics (with code frames, help and fixes) and the file after
//! `--fix` are snapshots next to it; the rule of the directory fires; applying the fixes is
//! idempotent, removes every diagnostic whose fix was applied, and adds no error (a fix whose
//! result would have a new error is not applied: `fuzzfile_check::fixes`), and every fix the
//! rule offers applies alone with no new error (a fix is complete or not offered; `bad-fix-*`
//! files show fixes the verifier refuses). For every good file: the rule of
//! the directory does not fire, and nothing at error level does. A `profile.toml` in a spec
//! directory is the cluster profile every file of that directory is analysed (and fixed) with;
//! a `<stem>.profile.toml` next to a file replaces it for that file.
//!
//! The snapshot shows the file after every fix (`--fix --unsafe-fixes`), labelled
//! `after --fix` when every applied fix is safe, and the file after the safe fixes alone when
//! it differs from both.

mod spec_options;

use fuzzfile_check::{
    analyze_bytes_with, analyze_with, fix_all_at, fixes, render, Analysis, Applicability, Options,
    Rule, Severity,
};
use spec_options::options_for;
use std::path::{Path, PathBuf};

fn specs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/specs")
}

fn analyze(text: &str, options: &Options) -> Analysis {
    analyze_with(text, options)
}

fn fix_to_fixpoint(text: &str, options: &Options) -> String {
    fix_to_fixpoint_at(text, options, Applicability::Unsafe)
}

fn fix_to_fixpoint_at(text: &str, options: &Options, required: Applicability) -> String {
    let mut text = text.to_owned();
    for _ in 0..4 {
        let next = fix_all_at(&analyze(&text, options), required);
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
        // A template rule's specs are templates (`tests/templates_specs.rs` runs them).
        let good = if r.category() == fuzzfile_check::RuleCategory::Template {
            dir.join("good.template.yaml")
        } else {
            dir.join("good.fz")
        };
        assert!(good.is_file(), "missing {}", good.display());
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
            let options = options_for(&dir, &stem);
            let bytes = std::fs::read(&file).unwrap();
            let a = analyze_bytes_with(&bytes, &options);
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
            // A fix the rule offers is one that applies: alone, it adds no error (the editor
            // offers each quick fix alone; `--fix` would leave it out). `bad-fix-*` files show
            // fixes the verifier refuses.
            for d in a
                .diagnostics
                .iter()
                .filter(|d| d.rule == rule && !stem.starts_with("bad-fix-"))
            {
                if let Some(f) = &d.fix {
                    assert!(
                        fixes::verified(&a, f),
                        "{}: the fix `{}` of `{}` adds an error",
                        file.display(),
                        f.message,
                        d.message
                    );
                }
            }
            let fixed = fix_to_fixpoint(&a.text, &options);
            let mut snap = render::plain(&a);
            if fixed != a.text {
                let after = analyze(&fixed, &options);
                // Fixes are idempotent, and each fixed problem is gone.
                assert_eq!(
                    fix_to_fixpoint(&fixed, &options),
                    fixed,
                    "{}: fixes are not idempotent",
                    file.display()
                );
                let applied = fixes::verified_fixes_at(&a, Applicability::Unsafe);
                let was_applied = |d: &fuzzfile_check::Diagnostic| {
                    d.fix
                        .as_ref()
                        .is_some_and(|f| applied.iter().any(|g| std::ptr::eq(f, *g)))
                };
                for d in a.diagnostics.iter().filter(|d| was_applied(d)) {
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
                // No error that the file did not have.
                for d in after
                    .diagnostics
                    .iter()
                    .filter(|d| d.severity == Severity::Error)
                {
                    assert!(
                        a.diagnostics.iter().any(|x| x.severity == Severity::Error
                            && x.rule == d.rule
                            && x.message == d.message),
                        "{}: --fix added the error `{}`:\n{fixed}",
                        file.display(),
                        d.message
                    );
                }
                let safe = fix_to_fixpoint_at(&a.text, &options, Applicability::Safe);
                if safe == fixed {
                    snap.push_str("\n--- after --fix ---\n");
                } else {
                    if safe != a.text {
                        snap.push_str("\n--- after --fix ---\n");
                        snap.push_str(&safe);
                    }
                    snap.push_str("\n--- after --fix --unsafe-fixes ---\n");
                }
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
