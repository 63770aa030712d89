//! ## What it does
//! Reports a key that Fuzzball does not accept at its place, or not in the file's version. The
//! message suggests the closest valid key ("did you mean `depends-on`?"), offers a fix for
//! camelCase or snake_case spellings of kebab-case keys (`taskArray` → `task-array`) and for
//! wrong case, and otherwise lists the valid keys. Keys removed from Fuzzball (`completed`,
//! service `ports`, `proxy`, `export`) say what replaced them.
//!
//! A rename is offered only onto a key that takes the kind of value written under the unknown
//! key (a number is not renamed to a key that takes a mapping) and that the mapping does not
//! already have; like every fix, it is applied only when the renamed file parses and has no
//! new error (renaming `dependson: [a]` in job `a` would make `a` depend on itself).
//!
//! Fix safety: safe: it renames a misspelt key (wrong case, camelCase or snake_case of the
//! valid key) to the key the author meant, and changes nothing else.
//!
//! ## Why is this bad?
//! Fuzzball 3.3 and later reject a workflow with an unknown key; older servers silently
//! dropped it, so a misspelt `depends_on` meant a job started before its input was ready.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     taskArray: {start: 1, end: 4}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     task-array: {start: 1, end: 4}
//! ```
//!
//! Detected while building the model (`fuzzfile_model`).

declare_rule! {
    pub struct UnknownKey {
        code: "FZ010",
        name: "unknown-key",
        severity: Error,
        category: Schema,
        summary: "A key that Fuzzball does not accept at this place and version",
        fix: Sometimes,
        fix_safety: Safe,
    }
}

/// Found by the model walk (`fuzzfile_model::build`) against the schema table of each
/// place and version: it has no hook of its own.
impl super::Check for UnknownKey {}
