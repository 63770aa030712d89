//! The rules. Each file is one rule: its `//!` comment is the rule's documentation (What it
//! does · Why is this bad? · Example · Use instead), printed by `fuzzlint rule NAME` and
//! generated into docs/rules/. Rules found while building the model (`unknown-key`,
//! `invalid-value`, ...) have their documentation here too, and their detection in
//! `fuzzfile_model`.

use fuzzfile_diagnostics::{Diagnostic, Rule};
use fuzzfile_model::Fuzzfile;
use fuzzfile_syntax::Tree;

pub mod command_and_script;
pub mod dependency_cycle;
pub mod deprecated_key;
pub mod duplicate_key;
pub mod duplicate_name;
pub mod invalid_value;
pub mod legacy_version;
pub mod missing_field;
pub mod no_command;
pub mod policy_retry_ignored;
pub mod unknown_key;
pub mod unknown_reference;
pub mod unsupported_version;
pub mod yaml_syntax;

/// What a rule sees.
pub struct Context<'a> {
    pub text: &'a str,
    pub tree: &'a Tree,
    pub model: &'a Fuzzfile,
}

/// Run every semantic rule over the model.
pub fn run_all(ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    unknown_reference::check(ctx, out);
    dependency_cycle::check(ctx, out);
    duplicate_name::check(ctx, out);
    invalid_value::check(ctx, out);
    policy_retry_ignored::check(ctx, out);
}

macro_rules! docs {
    ($($rule:ident => $file:literal,)*) => {
        fn source(rule: Rule) -> &'static str {
            match rule { $( Rule::$rule => include_str!($file), )* }
        }
    };
}

docs! {
    YamlSyntax => "yaml_syntax.rs",
    UnsupportedVersion => "unsupported_version.rs",
    LegacyVersion => "legacy_version.rs",
    UnknownKey => "unknown_key.rs",
    InvalidValue => "invalid_value.rs",
    MissingField => "missing_field.rs",
    DuplicateKey => "duplicate_key.rs",
    DeprecatedKey => "deprecated_key.rs",
    UnknownReference => "unknown_reference.rs",
    DependencyCycle => "dependency_cycle.rs",
    DuplicateName => "duplicate_name.rs",
    CommandAndScript => "command_and_script.rs",
    NoCommand => "no_command.rs",
    PolicyRetryIgnored => "policy_retry_ignored.rs",
}

/// The Markdown documentation of `rule`, taken from the `//!` comment of its file.
pub fn documentation(rule: Rule) -> String {
    let mut out = String::new();
    for line in source(rule).lines() {
        let Some(rest) = line.strip_prefix("//!") else {
            if line.trim().is_empty() && out.is_empty() {
                continue;
            }
            break;
        };
        out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_documents_the_fixed_headings() {
        for &rule in Rule::ALL {
            let doc = documentation(rule);
            for heading in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "## Use instead",
            ] {
                assert!(
                    doc.contains(heading),
                    "{} lacks `{heading}`:\n{doc}",
                    rule.name()
                );
            }
        }
    }
}

/// The generated page `docs/rules/<name>.md` of `rule`.
pub fn markdown_page(rule: Rule) -> String {
    format!(
        "<!-- Generated from crates/fuzzfile_check/src/rules/; do not edit. Regenerate: UPDATE_DOCS=1 cargo test -p fuzzfile_check --test docs -->\n# {} ({})\n\nDefault severity: **{}**. {}\n\n{}",
        rule.name(),
        rule.code(),
        rule.default_severity(),
        rule.summary(),
        documentation(rule)
    )
}

/// The generated index `docs/rules/README.md`.
pub fn markdown_index() -> String {
    let mut s = String::from(
        "<!-- Generated from crates/fuzzfile_check/src/rules/; do not edit. Regenerate: UPDATE_DOCS=1 cargo test -p fuzzfile_check --test docs -->\n# Rules\n\n| code | name | default | what it detects |\n|---|---|---|---|\n",
    );
    for r in Rule::ALL {
        s.push_str(&format!(
            "| {} | [`{}`]({}.md) | {} | {} |\n",
            r.code(),
            r.name(),
            r.name(),
            r.default_severity(),
            r.summary()
        ));
    }
    s
}
