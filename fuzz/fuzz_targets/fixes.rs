//! Apply every fix `fuzzlint check --fix` would apply to arbitrary bytes, the way it applies
//! them (verified fixes, re-analyse, repeat while the text changes, at most four rounds), and check what
//! a fix promises: the result still parses when the input did, and it has no error-severity
//! finding that the input did not have (counted per rule). A violation panics with the input,
//! the fixed text and the new findings.
#![no_main]

use fuzzfile_check::{analyze_with, fix_all, Options};
use fuzzfile_diagnostics::Severity;
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

fn errors_by_rule(a: &fuzzfile_check::Analysis) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for d in &a.diagnostics {
        if d.severity == Severity::Error {
            *counts.entry(d.rule.name()).or_insert(0) += 1;
        }
    }
    counts
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let options = Options::default();
    let before = analyze_with(text, &options);
    if !before.diagnostics.iter().any(|d| d.fix.is_some()) {
        return;
    }
    // As `fuzzlint check --fix` does: verified fixes, re-analysed, at most four rounds.
    let mut fixed = fix_all(&before);
    for _ in 0..3 {
        let next = fix_all(&analyze_with(&fixed, &options));
        if next == fixed {
            break;
        }
        fixed = next;
    }
    if fixed == text {
        return;
    }
    let after = analyze_with(&fixed, &options);
    let (was, now) = (errors_by_rule(&before), errors_by_rule(&after));
    let new: Vec<_> = now
        .iter()
        .filter(|(rule, n)| was.get(*rule).copied().unwrap_or(0) < **n)
        .collect();
    if !new.is_empty() {
        let messages: Vec<_> = after
            .diagnostics
            .iter()
            .filter(|d| new.iter().any(|(r, _)| **r == d.rule.name()))
            .map(|d| format!("{}: {}", d.rule.name(), d.message))
            .collect();
        panic!(
            "--fix added errors {new:?}\ninput: {text:?}\nfixed: {fixed:?}\n{}",
            messages.join("\n")
        );
    }
});
