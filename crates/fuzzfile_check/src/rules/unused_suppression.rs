//! ## What it does
//! Reports `# fuzzlint: ignore[...]` comments that do not do what they say:
//! - a suppression that suppresses nothing: no finding of the rules it names starts on its line
//!   (a trailing comment) or on the first line below it that is not a comment (a comment on a
//!   line of its own);
//! - one name of several that suppresses nothing, or a rule listed twice;
//! - a name that is no rule's name or code (with the closest rule name);
//! - a `# fuzzlint:` comment that is not `ignore[...]`.
//!
//! The fix deletes an unused comment (its whole line when it stands alone, else the comment
//! and the whitespace before it), or the one unused name from the list. Unknown names have no
//! fix: the comment was meant to suppress something.
//!
//! A suppression is only judged when its rule could have reported in this run: suppressions of
//! rules that the settings turn off (`ignore`, `--select`, `off`) are never reported, and
//! neither are suppressions of the cluster rules (`FZ3xx`) when no cluster profile is given,
//! since their findings depend on cluster facts (and `cluster-profile-missing` only when one
//! is given).
//!
//! The text after `]` is the reason, for the people who read the file. It is optional and its
//! absence is not reported.
//!
//! Fix safety: safe: it deletes only a comment; what runs does not change.
//!
//! ## Why is this bad?
//! A suppression outlives the problem it was written for: after the file changes, it hides
//! nothing today and may hide a new, real problem tomorrow. A misspelt rule name suppresses
//! nothing at all, while the comment suggests otherwise.
//!
//! ## Example
//! ```yaml
//! version: v4
//! jobs:
//!   train:
//!     image:
//!       uri: docker://nvcr.io/nvidia/pytorch:24.05-py3
//!     # fuzzlint: ignore[policy-retry-ignored] no retry here any more
//!     command: [python3, train.py]
//!     policy:
//!       timeout:
//!         execute: 2h  # fuzzlint: ignore[invalid-vlaue]
//! ```
//!
//! ## Use instead
//! ```yaml
//! version: v4
//! jobs:
//!   train:
//!     image:
//!       uri: docker://nvcr.io/nvidia/pytorch:24.05-py3
//!     command: [python3, train.py]
//!     policy:
//!       timeout:
//!         execute: 2h
//! ```
//!
//! ## Options
//! `ignore = ["unused-suppression"]` in `fuzzlint.toml` turns the rule off. To keep one
//! suppression that is unused on purpose (it matters with another cluster profile), list the
//! rule in it: `# fuzzlint: ignore[nccl-ib-hca-missing, unused-suppression]`.
//!
//! The detection lives in `suppress.rs`, which applies suppressions after every rule ran.

use super::Context;
use fuzzfile_diagnostics::Diagnostic;

declare_rule! {
    pub struct UnusedSuppression {
        code: "FZ040",
        name: "unused-suppression",
        severity: Warning,
        category: Meta,
        summary: "A `# fuzzlint: ignore[...]` comment that suppresses nothing",
        fix: Sometimes,
        fix_safety: Safe,
    }
}

/// Found when settings and suppressions are applied (`crate::suppress`), after every
/// other rule reported: it has no hook of its own.
impl super::Check for UnusedSuppression {}

/// Nothing to do here: suppressions are judged in [`crate::suppress::apply`], after every
/// other rule has reported.
pub fn check(_ctx: &Context<'_>, _out: &mut Vec<Diagnostic>) {}
