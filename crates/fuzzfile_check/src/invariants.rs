//! Properties every analysis must have, whatever the input: shared by the fuzz target and the
//! regression tests that replay its seeds.

use crate::{analyze_with, apply_fixes, Analysis, Options};

/// Check `a` (the analysis of its own text): every diagnostic, label and fix edit lies inside
/// the text on character boundaries; a fix's edits do not overlap; applying all fixes yields
/// text that analyses again without a panic.
pub fn check(a: &Analysis, options: &Options) -> Result<(), String> {
    let len = a.text.len();
    let ok = |r: fuzzfile_diagnostics::TextRange| {
        (r.end as usize) <= len
            && a.text.is_char_boundary(r.start as usize)
            && a.text.is_char_boundary(r.end as usize)
            && r.start <= r.end
    };
    for d in &a.diagnostics {
        if !ok(d.range) {
            return Err(format!(
                "{} range {:?} outside the text ({len} bytes): {}",
                d.rule.name(),
                d.range,
                d.message
            ));
        }
        if d.message.is_empty() {
            return Err(format!("{} has an empty message", d.rule.name()));
        }
        for l in &d.labels {
            if !ok(l.range) {
                return Err(format!(
                    "{} label {:?} outside the text",
                    d.rule.name(),
                    l.range
                ));
            }
        }
        if let Some(f) = &d.fix {
            let mut edits: Vec<_> = f.edits.iter().collect();
            edits.sort_by_key(|e| (e.range.start, e.range.end));
            for w in edits.windows(2) {
                if w[0].range.end > w[1].range.start {
                    return Err(format!("{} fix has overlapping edits", d.rule.name()));
                }
            }
            for e in &f.edits {
                if !ok(e.range) {
                    return Err(format!(
                        "{} fix edit {:?} outside the text",
                        d.rule.name(),
                        e.range
                    ));
                }
            }
        }
    }
    let fixed = apply_fixes(&a.text, &a.diagnostics);
    if fixed != a.text {
        let _ = analyze_with(&fixed, options);
    }
    Ok(())
}

/// What `--fix` promises, on `a` (the analysis of its own text): the text
/// [`crate::fix_until_stable`] writes has no more errors of any rule than `a`, and no more
/// syntax errors. Shared by the `fixes` fuzz target and the tests that replay its seeds.
pub fn check_fixes(a: &Analysis) -> Result<(), String> {
    if !a.diagnostics.iter().any(|d| d.fix.is_some()) {
        return Ok(());
    }
    let fixed = crate::fix_until_stable(a);
    if fixed == a.text {
        return Ok(());
    }
    let after = analyze_with(&fixed, &a.options);
    let count = |a: &Analysis| {
        let mut by_rule = std::collections::BTreeMap::new();
        for d in &a.diagnostics {
            if d.severity == fuzzfile_diagnostics::Severity::Error {
                *by_rule.entry(d.rule.name()).or_insert(0usize) += 1;
            }
        }
        by_rule
    };
    let (was, now) = (count(a), count(&after));
    let new: Vec<_> = now
        .iter()
        .filter(|(rule, n)| was.get(*rule).copied().unwrap_or(0) < **n)
        .map(|(rule, _)| *rule)
        .collect();
    if after.tree.errors.len() > a.tree.errors.len() || !new.is_empty() {
        let messages: Vec<String> = after
            .diagnostics
            .iter()
            .filter(|d| new.contains(&d.rule.name()))
            .map(|d| format!("{}: {}", d.rule.name(), d.message))
            .collect();
        return Err(format!(
            "--fix added errors {new:?} (syntax errors {} -> {})\ninput: {:?}\nfixed: {fixed:?}\n{}",
            a.tree.errors.len(),
            after.tree.errors.len(),
            a.text,
            messages.join("\n")
        ));
    }
    Ok(())
}
