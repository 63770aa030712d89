//! Fix verification: a fix is applied only when the text it produces still parses and has no
//! error that the text before it did not have.
//!
//! Every fix (safe or not, `fuzzlint check --fix`, the language server's quick fixes and "fix
//! all") goes through here. Verification is lazy: nothing is verified while analysing, only
//! when fixes are about to be applied or offered, and its cost is proportional to the fixes
//! applied, not to the fixes found:
//!
//! - [`fix_all`] applies every fix that does not overlap an earlier one and analyses the result
//!   once. Only when that fails does it look for the culprits, by halving the set (each bad
//!   fix costs about log₂ of the set in analyses), within a budget of
//!   [`MAX_VERIFICATIONS`] analyses; fixes it could not verify within the budget are left out.
//! - [`verified`] checks one fix in isolation (a quick fix in the editor).
//!
//! Each fix is safe or unsafe ([`Applicability`]: its rule's `fix_safety`, or its own): the
//! `_at` functions take the least safety to apply (`Safe`: `fuzzlint check --fix` and the
//! editor's "fix all"; `Unsafe`: with `--unsafe-fixes`, every fix); the functions without
//! `_at` apply safe fixes only.
//!
//! "No new error" compares counts of error-severity findings keyed by rule and message with
//! the digits masked (so a finding that only moved, or names another line number, is the same
//! finding), and the number of syntax errors, which every setting leaves alone.

use crate::{analyze_with, Analysis};
use fuzzfile_diagnostics::{Applicability, Diagnostic, Edit, Fix, Rule, Severity};
use std::collections::HashMap;

/// The most analyses one [`fix_all`] spends looking for the fixes that break a file, after the
/// first verification of all of them together.
pub const MAX_VERIFICATIONS: usize = 48;

/// A finding's identity that survives edits elsewhere: its rule and its message with every
/// run of digits replaced by `#`.
fn key(d: &Diagnostic) -> (Rule, String) {
    let mut m = String::with_capacity(d.message.len());
    let mut in_digits = false;
    for c in d.message.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                m.push('#');
            }
            in_digits = true;
        } else {
            m.push(c);
            in_digits = false;
        }
    }
    (d.rule, m)
}

fn error_counts(diags: &[Diagnostic]) -> HashMap<(Rule, String), usize> {
    let mut counts = HashMap::new();
    for d in diags.iter().filter(|d| d.severity == Severity::Error) {
        *counts.entry(key(d)).or_insert(0) += 1;
    }
    counts
}

/// What a fixed text is compared with: the errors of the text before any fix.
struct Baseline {
    errors: HashMap<(Rule, String), usize>,
    syntax_errors: usize,
}

impl Baseline {
    fn of(a: &Analysis) -> Baseline {
        Baseline {
            errors: error_counts(&a.diagnostics),
            syntax_errors: a.tree.errors.len(),
        }
    }

    /// Whether `after` (a fixed text's analysis) parses as well as before and has no error
    /// the baseline did not have.
    fn accepts(&self, after: &Analysis) -> bool {
        if after.tree.errors.len() > self.syntax_errors {
            return false;
        }
        error_counts(&after.diagnostics)
            .iter()
            .all(|(k, n)| self.errors.get(k).copied().unwrap_or(0) >= *n)
    }
}

/// Whether applying `fix` alone to `a`'s text keeps it parsing with no new error.
pub fn verified(a: &Analysis, fix: &Fix) -> bool {
    verified_against(a, &Baseline::of(a), &[fix])
}

fn verified_against(a: &Analysis, base: &Baseline, fixes: &[&Fix]) -> bool {
    let text = apply(&a.text, fixes);
    if text == a.text {
        return false;
    }
    base.accepts(&analyze_with(&text, &a.options))
}

/// Apply whole fixes (all their edits or none) to `text`; the fixes must not overlap.
fn apply(text: &str, fixes: &[&Fix]) -> String {
    fuzzfile_diagnostics::apply_edits(text, fixes.iter().flat_map(|f| f.edits.iter()))
}

/// Every fix of `diags`, safe or not, in order ([`non_overlapping_at`]).
pub fn non_overlapping(diags: &[Diagnostic]) -> Vec<&Fix> {
    non_overlapping_at(diags, Applicability::Unsafe)
}

/// The fixes of `diags` at least as safe as `required`, in order, each taken whole, leaving
/// out a fix with an edit that overlaps an edit of a fix taken before it (an insertion
/// strictly inside a replaced range overlaps it; insertions at the same point do not).
/// `O(k log k)` in the number of edits.
pub fn non_overlapping_at(diags: &[Diagnostic], required: Applicability) -> Vec<&Fix> {
    use std::collections::BTreeSet;
    // Taken edits as (start, end, serial): non-overlapping among themselves.
    let mut taken: BTreeSet<(u32, u32, usize)> = BTreeSet::new();
    let overlaps = |e: &Edit, t: (u32, u32)| {
        let (ts, te) = t;
        let (es, ee) = (e.range.start, e.range.end);
        (es < te && ts < ee) || (es == ee && ts < es && es < te) || (ts == te && es < ts && ts < ee)
    };
    let clashes = |taken: &BTreeSet<(u32, u32, usize)>, e: &Edit| {
        let (es, ee) = (e.range.start, e.range.end);
        // The taken edit that starts last before `e` (the longest one at that start)...
        let before = taken
            .range(..(es, 0, 0))
            .next_back()
            .is_some_and(|&(ts, te, _)| overlaps(e, (ts, te)));
        // ...and every taken edit that starts inside `e`.
        before
            || taken
                .range((es, 0, 0)..(ee.max(es + 1), 0, 0))
                .any(|&(ts, te, _)| overlaps(e, (ts, te)))
    };
    let mut out = Vec::new();
    let mut serial = 0;
    for f in diags.iter().filter_map(|d| d.fix_at(required)) {
        if f.edits.is_empty() || f.edits.iter().any(|e| clashes(&taken, e)) {
            continue;
        }
        for e in &f.edits {
            serial += 1;
            taken.insert((e.range.start, e.range.end, serial));
        }
        out.push(f);
    }
    out
}

/// The safe fixes of `a` that [`fix_all`] applies ([`verified_fixes_at`]).
pub fn verified_fixes(a: &Analysis) -> Vec<&Fix> {
    verified_fixes_at(a, Applicability::Safe)
}

/// The fixes of `a` at least as safe as `required` that [`fix_all_at`] applies: every
/// non-overlapping one when they verify together, else the largest verified subset found
/// within the budget.
pub fn verified_fixes_at(a: &Analysis, required: Applicability) -> Vec<&Fix> {
    let candidates = non_overlapping_at(&a.diagnostics, required);
    if candidates.is_empty() {
        return candidates;
    }
    let base = Baseline::of(a);
    if verified_against(a, &base, &candidates) {
        return candidates;
    }
    // Find the culprits by halving: a group that verifies (with what is already accepted) is
    // taken whole, one that does not is split, a single fix that does not is dropped.
    let mut accepted = vec![false; candidates.len()];
    let mut budget = MAX_VERIFICATIONS;
    let mid = candidates.len() / 2;
    let mut pending: Vec<std::ops::Range<usize>> = vec![mid..candidates.len(), 0..mid];
    while let Some(group) = pending.pop() {
        if group.is_empty() {
            continue;
        }
        if budget == 0 {
            break;
        }
        budget -= 1;
        let trial: Vec<&Fix> = candidates
            .iter()
            .enumerate()
            .filter(|(i, _)| accepted[*i] || group.contains(i))
            .map(|(_, f)| *f)
            .collect();
        if verified_against(a, &base, &trial) {
            for i in group {
                accepted[i] = true;
            }
        } else if group.len() > 1 {
            let mid = group.start + group.len() / 2;
            pending.push(mid..group.end);
            pending.push(group.start..mid);
        }
    }
    candidates
        .into_iter()
        .zip(accepted)
        .filter_map(|(f, ok)| ok.then_some(f))
        .collect()
}

/// `a`'s text with every verified safe fix applied (see [`verified_fixes`]); `a.text` itself
/// when no fix could be applied.
pub fn fix_all(a: &Analysis) -> String {
    fix_all_at(a, Applicability::Safe)
}

/// `a`'s text with every verified fix at least as safe as `required` applied.
pub fn fix_all_at(a: &Analysis, required: Applicability) -> String {
    apply(&a.text, &verified_fixes_at(a, required))
}

/// The most rounds of [`fix_until_stable`].
pub const MAX_FIX_ROUNDS: usize = 4;

/// What `fuzzlint check --fix` writes: [`fix_all`], re-analysed and fixed again while the text
/// changes (a fix can reveal or enable another), at most [`MAX_FIX_ROUNDS`] rounds. Each round
/// is verified against the text before it, so the result has no error the input did not have.
pub fn fix_until_stable(a: &Analysis) -> String {
    fix_until_stable_at(a, Applicability::Safe)
}

/// [`fix_until_stable`] with the fixes at least as safe as `required` (`Unsafe`:
/// `fuzzlint check --fix --unsafe-fixes`).
pub fn fix_until_stable_at(a: &Analysis, required: Applicability) -> String {
    let mut text = fix_all_at(a, required);
    for _ in 1..MAX_FIX_ROUNDS {
        if text == a.text {
            break;
        }
        let next = fix_all_at(&analyze_with(&text, &a.options), required);
        if next == text {
            break;
        }
        text = next;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze;

    #[test]
    fn keys_ignore_numbers() {
        let d = |m: &str| Diagnostic::new(Rule::UnusedSuppression, Default::default(), m);
        assert_eq!(
            key(&d("no finding starts on line 12")),
            key(&d("no finding starts on line 3"))
        );
        assert_ne!(key(&d("a")), key(&d("b")));
    }

    #[test]
    fn a_fix_that_adds_an_error_is_refused_and_the_others_are_kept() {
        // Two case fixes to the same key would write it twice (a duplicate key); either one
        // alone is fine, so exactly one is applied. The unrelated `Image` fix is kept.
        let text = "version: v4\njobs:\n  a:\n    Image: {uri: docker://x:1}\n    Command: [a]\n    COMMAND: [b]\n";
        let a = analyze(text);
        let fixes = non_overlapping(&a.diagnostics);
        assert_eq!(fixes.len(), 3, "{:?}", a.diagnostics);
        let fixed = fix_all(&a);
        let after = analyze(&fixed);
        assert!(after.tree.errors.is_empty(), "{fixed}");
        assert!(
            !after
                .diagnostics
                .iter()
                .any(|d| d.rule == Rule::DuplicateKey),
            "{fixed}"
        );
        assert!(fixed.contains("    image:"), "{fixed}");
        assert_eq!(fixed.matches("command:").count(), 1, "{fixed}");
    }

    #[test]
    fn overlapping_fixes_are_left_out_whole() {
        let fix = |edits: &[(u32, u32)]| Fix {
            message: "f".into(),
            edits: edits
                .iter()
                .map(|&(s, e)| Edit {
                    range: fuzzfile_diagnostics::TextRange::new(s, e),
                    replacement: "x".into(),
                })
                .collect(),
            applicability: None,
        };
        let d = |f: Fix| Diagnostic::new(Rule::UnknownKey, Default::default(), "m").with_fix(f);
        let diags = vec![
            d(fix(&[(2, 5)])),
            d(fix(&[(0, 1), (4, 6)])), // second edit overlaps the first fix: left out whole
            d(fix(&[(5, 5)])),         // an insertion at the end of a replacement: kept
            d(fix(&[(5, 5)])),         // another at the same point: kept
            d(fix(&[(3, 3)])),         // an insertion inside a replacement: left out
            d(fix(&[(0, 2)])),         // touches the first at its start: kept
            d(fix(&[(6, 9)])),
            d(fix(&[(8, 10)])), // overlaps the one before
        ];
        let kept: Vec<Vec<(u32, u32)>> = non_overlapping(&diags)
            .iter()
            .map(|f| {
                f.edits
                    .iter()
                    .map(|e| (e.range.start, e.range.end))
                    .collect()
            })
            .collect();
        assert_eq!(
            kept,
            vec![
                vec![(2, 5)],
                vec![(5, 5)],
                vec![(5, 5)],
                vec![(0, 2)],
                vec![(6, 9)]
            ]
        );
    }

    #[test]
    fn unsafe_fixes_wait_for_unsafe_and_safe_ones_do_not() {
        // `Image` (a case fix of unknown-key: safe) and `policy.retry` (deleted by
        // policy-retry-ignored: unsafe).
        let text = "version: v4\njobs:\n  a:\n    Image: {uri: docker://x:1}\n    command: [a]\n    policy:\n      retry: {attempts: 2}\n      timeout: {execute: 1h}\n";
        let a = analyze(text);
        let safety: Vec<_> = a
            .diagnostics
            .iter()
            .filter_map(|d| d.fix_applicability().map(|s| (d.rule, s)))
            .collect();
        assert!(
            safety.contains(&(Rule::UnknownKey, Applicability::Safe)),
            "{safety:?}"
        );
        assert!(
            safety.contains(&(Rule::PolicyRetryIgnored, Applicability::Unsafe)),
            "{safety:?}"
        );
        let safe = fix_until_stable(&a);
        assert!(
            safe.contains("    image:") && safe.contains("retry"),
            "{safe}"
        );
        let all = fix_until_stable_at(&a, Applicability::Unsafe);
        assert!(
            all.contains("    image:") && !all.contains("retry"),
            "{all}"
        );
    }

    #[test]
    fn a_fix_of_its_own_safety_overrides_its_rules() {
        let d = Diagnostic::new(Rule::PolicyRetryIgnored, Default::default(), "m");
        let fix = Fix::replace("f", Default::default(), "x");
        assert_eq!(
            d.clone().with_fix(fix.clone()).fix_applicability(),
            Some(Applicability::Unsafe)
        );
        let own = d.with_fix(fix.with_applicability(Applicability::Safe));
        assert_eq!(own.fix_applicability(), Some(Applicability::Safe));
        assert!(own.fix_at(Applicability::Safe).is_some());
    }

    #[test]
    fn a_clean_file_is_left_alone() {
        let text = "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [a]\n";
        assert_eq!(fix_all(&analyze(text)), text);
    }
}
