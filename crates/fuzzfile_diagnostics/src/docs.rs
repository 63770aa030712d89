//! Where the toolchain's documentation lives, from one source of truth: `repository` of
//! `[workspace.package]` in the workspace's Cargo.toml. Rule links (SARIF `helpUri`, the
//! language server's `codeDescription`, hover) and the schemas' `$id`s are derived here.
//!
//! The rule pages' location can be changed at run time with the environment variable
//! [`DOCS_URL_VARIABLE`] (`FUZZLINT_DOCS_URL`): a mirror of the repository, an internal
//! documentation site. Its value is either a base (`https://docs.example.org/rules`: a rule's
//! page is `<base>/<name>.md`) or a pattern with `{name}` and/or `{code}` in it
//! (`https://docs.example.org/rules/{name}.html`).

use std::borrow::Cow;

/// The project's repository, as Cargo.toml names it.
pub const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// Where the rule pages (docs/rules/<name>.md, generated from the rules) are published by
/// default: the repository's main branch.
pub const DEFAULT_RULE_DOCS_BASE: &str =
    concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/docs/rules");

/// Where the committed JSON schemas (schemas/) are published: the raw files of the main
/// branch, fetchable by an editor that follows a `$schema` link. Ends with `/`.
pub const SCHEMA_BASE_URL: &str = concat!(env!("CARGO_PKG_REPOSITORY"), "/raw/main/schemas/");

/// The environment variable that relocates the rule pages.
pub const DOCS_URL_VARIABLE: &str = "FUZZLINT_DOCS_URL";

/// The base or pattern of the rule pages: [`DOCS_URL_VARIABLE`] when set and not empty, else
/// [`DEFAULT_RULE_DOCS_BASE`].
pub fn rule_docs_base() -> Cow<'static, str> {
    match std::env::var(DOCS_URL_VARIABLE) {
        Ok(v) if !v.trim().is_empty() => Cow::Owned(v.trim().to_owned()),
        _ => Cow::Borrowed(DEFAULT_RULE_DOCS_BASE),
    }
}

/// The page of the rule `name` (code `code`) under `base` (a base or a pattern, see the
/// module documentation).
pub fn rule_doc_url_in(base: &str, name: &str, code: &str) -> String {
    if base.contains("{name}") || base.contains("{code}") {
        base.replace("{name}", name).replace("{code}", code)
    } else {
        format!("{}/{name}.md", base.trim_end_matches('/'))
    }
}

/// The page of `rule`'s documentation, where [`rule_docs_base`] puts it.
pub fn rule_doc_url(rule: crate::Rule) -> String {
    rule_doc_url_in(&rule_docs_base(), rule.name(), rule.code())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_base_gets_the_page_name_and_a_pattern_its_placeholders() {
        assert_eq!(
            rule_doc_url_in("https://d.example/rules/", "unknown-key", "FZ001"),
            "https://d.example/rules/unknown-key.md"
        );
        assert_eq!(
            rule_doc_url_in(
                "https://d.example/{code}/{name}.html",
                "unknown-key",
                "FZ001"
            ),
            "https://d.example/FZ001/unknown-key.html"
        );
    }

    #[test]
    fn the_default_is_the_repository_s_docs_rules() {
        assert!(DEFAULT_RULE_DOCS_BASE.starts_with(REPOSITORY));
        assert!(DEFAULT_RULE_DOCS_BASE.ends_with("/blob/main/docs/rules"));
        assert!(REPOSITORY.starts_with("https://") && !REPOSITORY.contains("example.invalid"));
    }
}
