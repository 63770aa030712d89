//! ## What it does
//! Checks that `version` is one of the Fuzzfile versions: `v4` (current) or `v1` (legacy).
//! There is no `v2` or `v3`. A numeric `4` or `1` gets a fix to the right spelling.
//!
//! Fix safety: safe: `4` becomes `v4` (and `1` `v1`), the version the number names.
//!
//! ## Why is this bad?
//! Fuzzball rejects a workflow with any other version, and every other check depends on the
//! version (v1 and v4 key mounts in opposite directions).
//!
//! ## Example
//! ```yaml
//! version: 4
//! ```
//!
//! ## Use instead
//! ```yaml
//! version: v4
//! ```

use super::{Check, Context};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};

declare_rule! {
    pub struct UnsupportedVersion {
        code: "FZ002",
        name: "unsupported-version",
        severity: Error,
        category: Schema,
        summary: "`version` is missing or is not one of the Fuzzfile versions `v1` and `v4`",
        fix: Sometimes,
        fix_safety: Safe,
    }
}

impl Check for UnsupportedVersion {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        let Some(node) = ctx.model.version_node else {
            return;
        };
        let tree = ctx.tree;
        let other = tree.text(node).unwrap_or("");
        if other == "v1" || other == "v4" {
            return;
        }
        let vr = tree.node(tree.resolve(node)).range;
        let shown = if tree.scalar(node).is_some() {
            format!("`{other}`")
        } else {
            tree.describe(node)
        };
        let mut d = Diagnostic::new(
            Rule::UnsupportedVersion,
            vr,
            format!("unsupported Fuzzfile version {shown}; the versions are `v4` (current) and `v1` (legacy)"),
        );
        let lower = other.trim().to_ascii_lowercase();
        if lower == "4" || lower == "v4" || lower == "4.0" {
            d = d.with_fix(Fix::replace("Write `v4`", vr, "v4"));
        } else if lower == "1" || lower == "v1" || lower == "1.0" {
            d = d.with_fix(Fix::replace("Write `v1`", vr, "v1"));
        } else if lower == "v2" || lower == "v3" || lower == "2" || lower == "3" {
            d = d.with_help("there is no Fuzzfile v2 or v3: Fuzzball 4 introduced v4 after v1");
        }
        out.push(d);
    }
}
