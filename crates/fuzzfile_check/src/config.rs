//! `fuzzlint.toml`: which rules run, at which severity, when a run fails, and the cluster the
//! workflows run on.
//!
//! ```toml
//! select = ["FZ0", "FZ2"]            # rule names, codes (`FZ201`) or code prefixes (`FZ2`)
//! ignore = ["legacy-version"]        # removed from the selection
//! fail-on = "warning"                # error | warning | info | never
//! cluster = "clusters/gb200.toml"    # relative to this file; or an inline [cluster] table
//! skip-non-fuzzfiles = false         # check named YAML files that are not Fuzzfiles too
//! extend = "../fuzzlint.toml"        # inherit from this config (relative to this file)
//! extend-select = ["FZ3"]            # added to the (inherited) selection
//! exclude = ["vendor/"]              # gitignore-style globs replacing the default excludes
//! extend-exclude = ["generated/"]    # added to the (inherited or default) excludes
//!
//! [per-file-ignores]                 # glob (relative to this file) → rules off for those files
//! "legacy/**" = ["legacy-version", "FZ2"]
//!
//! [severity]                         # rule name or code → error | warning | info | off
//! policy-retry-ignored = "error"
//! ```
//!
//! Parsing is pure: the caller finds and reads the file and passes its text. Every problem is a
//! [`ConfigError`] with the 1-based line and column of the offending key or value.
//!
//! Rule selection works in layers (the file, then the command line), as in ruff: a layer's
//! `select` starts over with exactly the rules it names; its `ignore` (and, in the file,
//! `[severity]` entries set to `off`) removes rules from what the layers before it selected.
//! The result is a [`RuleSettings`], which [`crate::Options`] carries into the analysis.
//!
//! A config with `extend` inherits from the config it names, as ruff's does
//! ([`crate::settings`] reads the chain, root first): each config of the chain is one layer of
//! rule selection (so a child's `select` starts over, its `extend-select` adds and its `ignore`
//! removes); `[severity]` entries merge rule by rule, the child's winning; `fail-on`, `cluster`,
//! `skip-non-fuzzfiles` and `exclude` are the child's when it sets them, else inherited;
//! `extend-exclude` lists append; `per-file-ignores` merge glob by glob (the child's list for
//! a glob replaces its parent's). Globs are relative to the directory of the config that
//! writes them. A cycle of `extend`s is an error naming the chain.

use crate::profile::ClusterProfile;
use fuzzfile_diagnostics::{Diagnostic, Rule, RuleName, Severity};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use toml::Spanned;

/// A rule by name or code, or every rule whose code starts with a prefix (`FZ2`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    Rule(Rule),
    /// An upper-case code prefix shorter than a code (`FZ`, `FZ2`, `FZ30`).
    Prefix(String),
}

/// How a rule name is resolved: [`Rule::lookup`] (names, former names, codes). Parsing takes
/// it as a parameter so that tests can give a table with a renamed rule.
pub(crate) type Lookup = fn(&str) -> Option<RuleName<Rule>>;

impl Selector {
    /// Parse a rule name, a former name of a renamed rule, a code (any case) or a code
    /// prefix; the error says what was expected and suggests the closest rule name.
    pub fn parse(s: &str) -> Result<Selector, String> {
        Selector::parse_with(s, Rule::lookup).map(|(sel, _)| sel)
    }

    /// As [`Selector::parse`], with the former name the rule was named by, if any.
    pub(crate) fn parse_with(
        s: &str,
        lookup: Lookup,
    ) -> Result<(Selector, Option<&'static str>), String> {
        let s = s.trim();
        if let Some(found) = lookup(s) {
            return Ok((Selector::Rule(found.rule), found.alias));
        }
        let upper = s.to_ascii_uppercase();
        if let Some(digits) = upper.strip_prefix("FZ") {
            if digits.len() < 3 && digits.bytes().all(|b| b.is_ascii_digit()) {
                return if Rule::ALL.iter().any(|r| r.code().starts_with(&upper)) {
                    Ok((Selector::Prefix(upper), None))
                } else {
                    Err(format!("no rule has a code starting with `{upper}`"))
                };
            }
            if digits.len() == 3 && digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(format!(
                    "no rule has the code `{upper}`; `fuzzlint rules` lists every rule"
                ));
            }
        }
        Err(format!(
            "unknown rule `{s}`{}; expected a rule name, a code (`FZ201`) or a code prefix (`FZ2`)",
            suggestion(s)
        ))
    }

    pub fn matches(&self, rule: Rule) -> bool {
        match self {
            Selector::Rule(r) => *r == rule,
            Selector::Prefix(p) => rule.code().starts_with(p.as_str()),
        }
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Selector::Rule(r) => f.write_str(r.name()),
            Selector::Prefix(p) => f.write_str(p),
        }
    }
}

/// ` (did you mean `name`?)` for the rule name closest to `word`, or nothing.
pub(crate) fn suggestion(word: &str) -> String {
    // Every name a rule answers to, former names too, with the rule's current name: a former
    // name cut short or mistyped suggests the name to write now.
    let names = || {
        Rule::ALL.iter().flat_map(|r| {
            std::iter::once((r.name(), r.name())).chain(r.aliases().iter().map(|a| (*a, r.name())))
        })
    };
    let lower = word.to_ascii_lowercase();
    // A name cut short (`launcher-nproc`) first, then a typo.
    (lower.len() >= 4)
        .then(|| names().find(|(n, _)| n.starts_with(&lower)).map(|(_, r)| r))
        .flatten()
        .or_else(|| {
            let close = fuzzfile_model::schema::did_you_mean(word, names().map(|(n, _)| n))?;
            names().find(|(n, _)| *n == close).map(|(_, r)| r)
        })
        .map(|n| format!(" (did you mean `{n}`?)"))
        .unwrap_or_default()
}

/// Parse a comma-separated list of selectors (`--select FZ2,unknown-key`).
pub fn parse_selector_list(s: &str) -> Result<Vec<Selector>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(Selector::parse)
        .collect()
}

/// One layer of rule selection (the config file, or the command line).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSelection {
    /// When set, exactly these rules, replacing what earlier layers selected.
    pub select: Option<Vec<Selector>>,
    /// Rules added to the selection (`extend-select`), after `select`.
    pub extend_select: Vec<Selector>,
    /// Rules removed from the selection.
    pub ignore: Vec<Selector>,
}

/// The rule settings of one analysis: which rules report, and at which severity. The default
/// runs every rule at its default severity.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RuleSettings {
    /// Rules whose findings are dropped.
    pub disabled: BTreeSet<Rule>,
    /// Severities that replace a rule's default severity.
    pub severity: BTreeMap<Rule, Severity>,
}

impl RuleSettings {
    /// Resolve layers in order (the file first, the command line last) and severity overrides.
    pub fn resolve(layers: &[RuleSelection], severity: BTreeMap<Rule, Severity>) -> RuleSettings {
        let mut enabled: BTreeSet<Rule> = Rule::ALL.iter().copied().collect();
        for layer in layers {
            if let Some(select) = &layer.select {
                enabled = Rule::ALL
                    .iter()
                    .copied()
                    .filter(|r| select.iter().any(|s| s.matches(*r)))
                    .collect();
            }
            enabled.extend(
                Rule::ALL
                    .iter()
                    .copied()
                    .filter(|r| layer.extend_select.iter().any(|s| s.matches(*r))),
            );
            enabled.retain(|r| !layer.ignore.iter().any(|s| s.matches(*r)));
        }
        RuleSettings {
            disabled: Rule::ALL
                .iter()
                .copied()
                .filter(|r| !enabled.contains(r))
                .collect(),
            severity,
        }
    }

    pub fn is_enabled(&self, rule: Rule) -> bool {
        !self.disabled.contains(&rule)
    }

    /// The severity `rule` reports at (whether or not it is enabled).
    pub fn severity_of(&self, rule: Rule) -> Severity {
        self.severity
            .get(&rule)
            .copied()
            .unwrap_or(rule.default_severity())
    }

    /// Drop the findings of disabled rules.
    pub fn retain_enabled(&self, diags: &mut Vec<Diagnostic>) {
        if !self.disabled.is_empty() {
            diags.retain(|d| self.is_enabled(d.rule));
        }
    }

    /// Give every finding of a rule with a severity override that severity.
    pub fn rewrite_severities(&self, diags: &mut [Diagnostic]) {
        if self.severity.is_empty() {
            return;
        }
        for d in diags {
            if let Some(&s) = self.severity.get(&d.rule) {
                d.severity = s;
            }
        }
    }
}

/// `[severity]` values.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warning,
    Info,
    /// The rule does not report.
    Off,
}

impl Level {
    pub fn severity(self) -> Option<Severity> {
        match self {
            Level::Error => Some(Severity::Error),
            Level::Warning => Some(Severity::Warning),
            Level::Info => Some(Severity::Info),
            Level::Off => None,
        }
    }
}

/// When a run fails (exit status 1): a finding at or above a severity, or never.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    #[default]
    Error,
    Warning,
    Info,
    Never,
}

impl FailOn {
    pub fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Info => Some(Severity::Info),
            FailOn::Never => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            FailOn::Error => "error",
            FailOn::Warning => "warning",
            FailOn::Info => "info",
            FailOn::Never => "never",
        }
    }
}

/// Where the cluster profile of a config comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum ClusterSource {
    /// `cluster = "path"`: a profile file, relative to the config file. `line` and `column` are
    /// those of the value, for errors about the file (it cannot be read).
    Path {
        path: String,
        line: u32,
        column: u32,
    },
    /// An inline `[cluster]` table.
    Inline(ClusterProfile),
}

/// A parsed `fuzzlint.toml`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Config {
    pub select: Option<Vec<Selector>>,
    pub ignore: Vec<Selector>,
    pub severity: BTreeMap<Rule, Level>,
    pub fail_on: Option<FailOn>,
    pub cluster: Option<ClusterSource>,
    /// `skip-non-fuzzfiles`: whether a YAML file named on the command line that does not look
    /// like a Fuzzfile (`crate::recognise`) is skipped (default) or checked.
    pub skip_non_fuzzfiles: Option<bool>,
    /// `extend`: the config this one inherits from, relative to this file.
    pub extend: Option<ExtendSource>,
    /// `extend-select`: rules added to the inherited selection.
    pub extend_select: Vec<Selector>,
    /// `exclude`: gitignore-style globs (relative to this file's directory) that replace the
    /// default excludes ([`DEFAULT_EXCLUDE`]) of directory walks.
    pub exclude: Option<Vec<String>>,
    /// `extend-exclude`: globs added to the excludes.
    pub extend_exclude: Vec<String>,
    /// `per-file-ignores`: glob (relative to this file's directory) → rules turned off for
    /// the files it matches, in the order written.
    pub per_file_ignores: Vec<(String, Vec<Selector>)>,
    /// Things accepted but worth saying: a rule named by its former name.
    pub notes: Vec<ConfigNote>,
}

/// The directories a directory walk skips unless `exclude` says otherwise (hidden directories
/// and what `.gitignore` names are skipped too, whatever `exclude` says).
pub const DEFAULT_EXCLUDE: &[&str] = &[
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    "node_modules",
    "__pycache__",
];

/// Every key of `fuzzlint.toml`, for "did you mean".
pub const CONFIG_KEYS: &[&str] = &[
    "select",
    "extend-select",
    "ignore",
    "severity",
    "fail-on",
    "cluster",
    "skip-non-fuzzfiles",
    "extend",
    "exclude",
    "extend-exclude",
    "per-file-ignores",
];

/// `extend = "path"` and where it is written (for errors about the file it names).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtendSource {
    pub path: String,
    pub line: u32,
    pub column: u32,
}

/// A remark about an accepted config (1-based line and column of what it is about).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigNote {
    pub message: String,
    pub line: u32,
    pub column: u32,
}

impl fmt::Display for ConfigNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: note: {}", self.line, self.column, self.message)
    }
}

/// The note for a rule named by its former name.
pub fn renamed_note(alias: &str, rule: Rule) -> String {
    format!(
        "`{alias}` is the former name of `{}`; it is still accepted, and `{}` is the name to write",
        rule.name(),
        rule.name()
    )
}

impl Config {
    /// This file's layer of rule selection: its `select`, and its `ignore` plus every rule
    /// whose `[severity]` is `off`.
    pub fn selection(&self) -> RuleSelection {
        let mut ignore = self.ignore.clone();
        ignore.extend(
            self.severity
                .iter()
                .filter(|(_, l)| **l == Level::Off)
                .map(|(r, _)| Selector::Rule(*r)),
        );
        RuleSelection {
            select: self.select.clone(),
            extend_select: self.extend_select.clone(),
            ignore,
        }
    }

    /// The severity overrides (without the rules turned `off`).
    pub fn severities(&self) -> BTreeMap<Rule, Severity> {
        self.severity
            .iter()
            .filter_map(|(r, l)| Some((*r, l.severity()?)))
            .collect()
    }
}

/// A config that could not be read: what is wrong and where (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub message: String,
    pub line: u32,
    pub column: u32,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

impl std::error::Error for ConfigError {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct RawConfig {
    select: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    ignore: Vec<Spanned<String>>,
    #[serde(default)]
    severity: BTreeMap<Spanned<String>, Level>,
    fail_on: Option<FailOn>,
    cluster: Option<Spanned<RawCluster>>,
    skip_non_fuzzfiles: Option<bool>,
    extend: Option<Spanned<String>>,
    #[serde(default)]
    extend_select: Vec<Spanned<String>>,
    exclude: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    extend_exclude: Vec<Spanned<String>>,
    #[serde(default)]
    per_file_ignores: BTreeMap<Spanned<String>, Vec<Spanned<String>>>,
}

enum RawCluster {
    Path(String),
    Inline(ClusterProfile),
}

impl<'de> Deserialize<'de> for RawCluster {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawCluster;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a path to a cluster profile, or a [cluster] table")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawCluster, E> {
                Ok(RawCluster::Path(v.to_owned()))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<RawCluster, A::Error> {
                ClusterProfile::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(RawCluster::Inline)
            }
        }
        d.deserialize_any(V)
    }
}

/// Parse a `fuzzlint.toml` from its text.
pub fn parse_config(text: &str) -> Result<Config, ConfigError> {
    parse_config_with(text, Rule::lookup)
}

/// As [`parse_config`], resolving rule names with `lookup`.
pub(crate) fn parse_config_with(text: &str, lookup: Lookup) -> Result<Config, ConfigError> {
    let raw: RawConfig = toml::from_str(text).map_err(|e| {
        let span = e.span();
        let (line, column) = span.as_ref().map_or((1, 1), |s| line_col(text, s.start));
        // toml names the expected keys and values itself (`expected one of ...`); an unknown
        // key gets the closest one too.
        let message = with_key_suggestion(e.message().trim());
        ConfigError {
            message,
            line,
            column,
        }
    })?;
    let at = |span: std::ops::Range<usize>, message: String| {
        let (line, column) = line_col(text, span.start);
        ConfigError {
            message,
            line,
            column,
        }
    };
    let mut notes = Vec::new();
    let mut note = |span: std::ops::Range<usize>, alias: &str, rule: Rule| {
        let (line, column) = line_col(text, span.start);
        notes.push(ConfigNote {
            message: renamed_note(alias, rule),
            line,
            column,
        });
    };
    let mut selectors =
        |key: &str, list: &[Spanned<String>]| -> Result<Vec<Selector>, ConfigError> {
            list.iter()
                .map(|s| {
                    let (sel, alias) = Selector::parse_with(s.get_ref(), lookup)
                        .map_err(|m| at(s.span(), format!("`{key}`: {m}")))?;
                    if let (Some(alias), Selector::Rule(rule)) = (alias, &sel) {
                        note(s.span(), alias, *rule);
                    }
                    Ok(sel)
                })
                .collect()
        };
    let select = match &raw.select {
        Some(list) => Some(selectors("select", list)?),
        None => None,
    };
    let ignore = selectors("ignore", &raw.ignore)?;
    let extend_select = selectors("extend-select", &raw.extend_select)?;
    let mut per_file_ignores = Vec::new();
    let mut pfi: Vec<_> = raw.per_file_ignores.iter().collect();
    pfi.sort_by_key(|(k, _)| k.span().start);
    for (glob, rules) in pfi {
        check_glob(glob).map_err(|m| at(glob.span(), format!("`per-file-ignores`: {m}")))?;
        per_file_ignores.push((
            glob.get_ref().clone(),
            selectors("per-file-ignores", rules)?,
        ));
    }
    let globs = |key: &str, list: &[Spanned<String>]| -> Result<Vec<String>, ConfigError> {
        list.iter()
            .map(|g| {
                check_glob(g).map_err(|m| at(g.span(), format!("`{key}`: {m}")))?;
                Ok(g.get_ref().clone())
            })
            .collect()
    };
    let exclude = match &raw.exclude {
        Some(list) => Some(globs("exclude", list)?),
        None => None,
    };
    let extend_exclude = globs("extend-exclude", &raw.extend_exclude)?;
    let extend = match &raw.extend {
        None => None,
        Some(p) if p.get_ref().trim().is_empty() => {
            return Err(at(p.span(), "`extend` is an empty path".into()))
        }
        Some(p) => {
            let (line, column) = line_col(text, p.span().start);
            Some(ExtendSource {
                path: p.get_ref().clone(),
                line,
                column,
            })
        }
    };
    let mut severity = BTreeMap::new();
    let mut entries: Vec<_> = raw.severity.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    // The key each rule was set by, for the message about setting it twice.
    let mut set_by: BTreeMap<Rule, &str> = BTreeMap::new();
    for (key, level) in entries {
        let Some(found) = lookup(key.get_ref()) else {
            return Err(at(
                key.span(),
                format!(
                    "`[severity]`: unknown rule `{}`{}; keys are rule names or codes",
                    key.get_ref(),
                    suggestion(key.get_ref())
                ),
            ));
        };
        let rule = found.rule;
        if severity.insert(rule, *level).is_some() {
            let first = set_by.get(&rule).copied().unwrap_or(rule.name());
            let written = key.get_ref().as_str();
            let how = if first == written {
                String::new()
            } else {
                format!(" (as `{first}` and as `{written}`)")
            };
            return Err(at(
                key.span(),
                format!("`[severity]`: `{}` is set twice{how}", rule.name()),
            ));
        }
        set_by.insert(rule, key.get_ref().as_str());
        if let Some(alias) = found.alias {
            note(key.span(), alias, rule);
        }
    }
    let cluster = match raw.cluster {
        None => None,
        Some(spanned) => {
            let span = spanned.span();
            match spanned.into_inner() {
                RawCluster::Path(path) => {
                    let (line, column) = line_col(text, span.start);
                    if path.trim().is_empty() {
                        return Err(at(span, "`cluster` is an empty path".into()));
                    }
                    Some(ClusterSource::Path { path, line, column })
                }
                RawCluster::Inline(profile) => {
                    if let Some((key, message)) = profile.invalid_value() {
                        let start = text[span.start.min(text.len())..]
                            .find(key)
                            .map_or(span.start, |o| span.start + o);
                        return Err(at(start..start, message));
                    }
                    Some(ClusterSource::Inline(profile))
                }
            }
        }
    };
    Ok(Config {
        select,
        ignore,
        severity,
        fail_on: raw.fail_on,
        cluster,
        skip_non_fuzzfiles: raw.skip_non_fuzzfiles,
        extend,
        extend_select,
        exclude,
        extend_exclude,
        per_file_ignores,
        notes,
    })
}

/// A glob of `exclude`, `extend-exclude` or `per-file-ignores`: gitignore syntax, not empty.
fn check_glob(g: &Spanned<String>) -> Result<(), String> {
    let glob = g.get_ref();
    if glob.trim().is_empty() {
        return Err("an empty glob".into());
    }
    let mut b = ignore::gitignore::GitignoreBuilder::new("/");
    b.add_line(None, glob)
        .map(|_| ())
        .map_err(|e| format!("`{glob}` is not a glob: {e}"))
}

/// toml's message, with " (did you mean `key`?)" after an unknown key close to a known one.
fn with_key_suggestion(message: &str) -> String {
    let unknown = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next());
    match unknown
        .and_then(|k| fuzzfile_diagnostics::suggest::did_you_mean(k, CONFIG_KEYS.iter().copied()))
    {
        Some(key) => format!("{message} (did you mean `{key}`?)"),
        None => message.to_owned(),
    }
}

fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let lc = fuzzfile_diagnostics::LineIndex::new(text)
        .line_col(text, u32::try_from(offset).unwrap_or(u32::MAX));
    (lc.line, lc.column)
}

/// A lookup in which `policy-retry-ignored` was formerly named `retry-ignored`: no rule has
/// been renamed yet, so the tests of configs and suppressions rename one here.
#[cfg(test)]
pub(crate) fn renamed_fixture_lookup(name: &str) -> Option<RuleName<Rule>> {
    match name {
        "retry-ignored" => Some(RuleName {
            rule: Rule::PolicyRetryIgnored,
            alias: Some("retry-ignored"),
        }),
        _ => Rule::lookup(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Fabric;

    #[test]
    fn a_former_rule_name_is_accepted_everywhere_with_a_note() {
        let text = "select = [\"FZ0\", \"retry-ignored\"]\nignore = [\"retry-ignored\"]\n\n[severity]\nretry-ignored = \"error\"\n";
        // The real table has no such name (yet): the fixture is what makes it valid.
        assert!(parse_config(text).is_err());
        let c = match parse_config_with(text, renamed_fixture_lookup) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(
            c.select,
            Some(vec![
                Selector::Prefix("FZ0".into()),
                Selector::Rule(Rule::PolicyRetryIgnored)
            ])
        );
        assert_eq!(c.ignore, vec![Selector::Rule(Rule::PolicyRetryIgnored)]);
        assert_eq!(
            c.severity.get(&Rule::PolicyRetryIgnored),
            Some(&Level::Error)
        );
        let notes: Vec<String> = c.notes.iter().map(ToString::to_string).collect();
        assert_eq!(
            notes,
            vec![
                "1:18: note: `retry-ignored` is the former name of `policy-retry-ignored`; it is still accepted, and `policy-retry-ignored` is the name to write",
                "2:11: note: `retry-ignored` is the former name of `policy-retry-ignored`; it is still accepted, and `policy-retry-ignored` is the name to write",
                "5:1: note: `retry-ignored` is the former name of `policy-retry-ignored`; it is still accepted, and `policy-retry-ignored` is the name to write",
            ]
        );
        // The former name selects and turns off the rule as its name does.
        let by_name = parse_config(&text.replace("retry-ignored", "policy-retry-ignored"))
            .unwrap_or_default();
        assert_eq!(
            (by_name.select, by_name.ignore, by_name.severity),
            (c.select.clone(), c.ignore.clone(), c.severity.clone())
        );
        assert!(by_name.notes.is_empty());
        let off = parse_config_with(
            "[severity]\nretry-ignored = \"off\"\n",
            renamed_fixture_lookup,
        )
        .unwrap_or_default();
        let s = RuleSettings::resolve(&[off.selection()], off.severities());
        assert!(!s.is_enabled(Rule::PolicyRetryIgnored));
        assert!(s.is_enabled(Rule::UnknownKey));

        // The former and the current name of one rule are one key.
        let e = match parse_config_with(
            "[severity]\nretry-ignored = \"off\"\npolicy-retry-ignored = \"error\"\n",
            renamed_fixture_lookup,
        ) {
            Ok(c) => panic!("expected an error, got {c:?}"),
            Err(e) => e,
        };
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        assert_eq!(
            e.message,
            "`[severity]`: `policy-retry-ignored` is set twice (as `retry-ignored` and as `policy-retry-ignored`)"
        );
    }

    fn err(text: &str) -> ConfigError {
        match parse_config(text) {
            Ok(c) => panic!("expected an error, got {c:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn the_documented_shape_parses() {
        let c = parse_config(
            "select = [\"FZ0\", \"FZ2\"]\nignore = [\"legacy-version\"]\nfail-on = \"warning\"\ncluster = \"clusters/gb200.toml\"\n\n[severity]\npolicy-retry-ignored = \"error\"\nFZ207 = \"off\"\n",
        )
        .unwrap();
        assert_eq!(
            c.select,
            Some(vec![
                Selector::Prefix("FZ0".into()),
                Selector::Prefix("FZ2".into())
            ])
        );
        assert_eq!(c.ignore, vec![Selector::Rule(Rule::LegacyVersion)]);
        assert_eq!(c.fail_on, Some(FailOn::Warning));
        assert_eq!(
            c.cluster,
            Some(ClusterSource::Path {
                path: "clusters/gb200.toml".into(),
                line: 4,
                column: 11
            })
        );
        assert_eq!(
            c.severity.get(&Rule::PolicyRetryIgnored),
            Some(&Level::Error)
        );
        assert_eq!(
            c.severity.get(&Rule::TorchDistributedLaunchDeprecated),
            Some(&Level::Off)
        );
        assert_eq!(parse_config("").unwrap(), Config::default());
    }

    #[test]
    fn an_inline_cluster_table_is_a_profile() {
        let c = parse_config(
            "fail-on = \"never\"\n[cluster]\ngpus-per-node = 8\nfabric = \"roce\"\n[cluster.nccl-defaults]\nNCCL_IB_HCA = \"mlx5\"\n",
        )
        .unwrap();
        let Some(ClusterSource::Inline(p)) = c.cluster else {
            panic!("{:?}", c.cluster)
        };
        assert_eq!(p.gpus_per_node, Some(8));
        assert_eq!(p.fabric, Some(Fabric::Roce));
        assert_eq!(p.nccl_defaults.len(), 1);
    }

    #[test]
    fn unknown_keys_are_errors_at_the_key() {
        let e = err("select = []\nfail_on = \"warning\"\n");
        assert_eq!((e.line, e.column), (2, 1), "{e}");
        assert!(e.message.contains("unknown field `fail_on`"), "{e}");
        assert!(
            e.message.contains("expected one of `select`, `ignore`"),
            "{e}"
        );

        let e = err("[cluster]\ngpus-per-node = 4\ngpus = 4\n");
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        assert!(e.message.contains("`gpus-per-node`"), "{e}");
    }

    #[test]
    fn bad_values_are_errors_at_the_value() {
        let e = err("fail-on = \"warnings\"\n");
        assert_eq!((e.line, e.column), (1, 11), "{e}");
        assert!(e.message.contains("`never`"), "{e}");

        let e = err("[severity]\nunknown-key = \"fatal\"\n");
        assert_eq!((e.line, e.column), (2, 15), "{e}");
        assert!(e.message.contains("`off`"), "{e}");

        let e = err("ignore = [\"legacy-version\", \"unknwon-key\"]\n");
        assert_eq!((e.line, e.column), (1, 29), "{e}");
        assert!(e.message.contains("did you mean `unknown-key`?"), "{e}");

        let e = err("select = [\"FZ9\"]\n");
        assert_eq!((e.line, e.column), (1, 11), "{e}");
        assert!(
            e.message.contains("no rule has a code starting with `FZ9`"),
            "{e}"
        );

        let e = err("select = [\"FZ299\"]\n");
        assert!(e.message.contains("no rule has the code `FZ299`"), "{e}");

        let e = err("\n[severity]\nlauncher-nproc = \"off\"\n");
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        assert!(
            e.message
                .contains("did you mean `launcher-nproc-mismatch`?"),
            "{e}"
        );
        // A former name cut short suggests the current name.
        let e = err("\n[severity]\ntorchrun-nproc = \"off\"\n");
        assert!(
            e.message
                .contains("did you mean `launcher-nproc-mismatch`?"),
            "{e}"
        );

        let e = err("select = \"FZ2\"\n");
        assert_eq!((e.line, e.column), (1, 10), "{e}");

        let e = err("[cluster]\nfabric = \"omnipath\"\n");
        assert_eq!((e.line, e.column), (2, 10), "{e}");
        assert!(
            e.message.contains("`infiniband`, `roce`, `ethernet`"),
            "{e}"
        );

        let e = err("[cluster]\nname = \"x\"\ngpus-per-node = 0\n");
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        let e = err("[cluster]\nmnnvl = true\nnvlink-domain-nodes = 0\n");
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        assert!(
            e.message
                .contains("`nvlink-domain-nodes` must be at least 1"),
            "{e}"
        );

        let e = err("cluster = 4\n");
        assert_eq!((e.line, e.column), (1, 11), "{e}");
        assert!(e.message.contains("a path to a cluster profile"), "{e}");

        let e = err("select = [\"FZ0\"\n");
        assert_eq!(e.line, 1, "{e}");
    }

    #[test]
    fn the_same_rule_twice_in_severity_is_an_error() {
        let e = err("[severity]\nlegacy-version = \"off\"\nFZ003 = \"error\"\n");
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        assert!(e.message.contains("set twice"), "{e}");
    }

    #[test]
    fn selectors() {
        assert_eq!(
            Selector::parse("fz201"),
            Ok(Selector::Rule(Rule::LauncherNprocMismatch))
        );
        assert_eq!(Selector::parse("fz2"), Ok(Selector::Prefix("FZ2".into())));
        assert!(Selector::parse("FZ").is_ok());
        assert!(Selector::parse("gpu").is_err());
        assert_eq!(
            parse_selector_list("unknown-key, FZ02,").unwrap(),
            vec![
                Selector::Rule(Rule::UnknownKey),
                Selector::Prefix("FZ02".into())
            ]
        );
        let p = Selector::Prefix("FZ2".into());
        assert!(p.matches(Rule::LauncherNprocMismatch));
        assert!(!p.matches(Rule::UnknownReference));
    }

    #[test]
    fn layers_resolve_like_ruff() {
        let file = RuleSelection {
            select: Some(vec![Selector::Prefix("FZ0".into())]),
            ignore: vec![Selector::Rule(Rule::LegacyVersion)],
            ..Default::default()
        };
        let s = RuleSettings::resolve(std::slice::from_ref(&file), BTreeMap::new());
        assert!(s.is_enabled(Rule::UnknownKey));
        assert!(s.is_enabled(Rule::DependencyCycle));
        assert!(!s.is_enabled(Rule::LegacyVersion));
        assert!(!s.is_enabled(Rule::LauncherNprocMismatch));

        // A later `ignore` removes more; a later `select` starts over.
        let cli_ignore = RuleSelection {
            select: None,
            ignore: vec![Selector::Rule(Rule::UnknownKey)],
            ..Default::default()
        };
        let s = RuleSettings::resolve(&[file.clone(), cli_ignore], BTreeMap::new());
        assert!(!s.is_enabled(Rule::UnknownKey) && !s.is_enabled(Rule::LegacyVersion));
        let cli_select = RuleSelection {
            select: Some(vec![Selector::Rule(Rule::LegacyVersion)]),
            ignore: vec![],
            ..Default::default()
        };
        let s = RuleSettings::resolve(&[file.clone(), cli_select], BTreeMap::new());
        assert!(s.is_enabled(Rule::LegacyVersion));
        assert!(!s.is_enabled(Rule::UnknownKey));
        // A later `extend-select` adds to what is selected, and its layer's `ignore` still
        // removes.
        let child = RuleSelection {
            extend_select: vec![
                Selector::Prefix("FZ2".into()),
                Selector::Rule(Rule::LegacyVersion),
            ],
            ignore: vec![Selector::Rule(Rule::LauncherNnodesMismatch)],
            ..Default::default()
        };
        let s = RuleSettings::resolve(&[file, child], BTreeMap::new());
        assert!(s.is_enabled(Rule::UnknownKey) && s.is_enabled(Rule::LegacyVersion));
        assert!(s.is_enabled(Rule::LauncherNprocMismatch));
        assert!(!s.is_enabled(Rule::LauncherNnodesMismatch));
        assert!(!s.is_enabled(Rule::NcclIbHcaMissing));
    }

    #[test]
    fn severity_off_is_an_ignore_of_the_file() {
        let c = parse_config("[severity]\nlegacy-version = \"off\"\nunknown-key = \"warning\"\n")
            .unwrap();
        let s = RuleSettings::resolve(&[c.selection()], c.severities());
        assert!(!s.is_enabled(Rule::LegacyVersion));
        assert_eq!(s.severity_of(Rule::UnknownKey), Severity::Warning);
        assert_eq!(s.severity_of(Rule::MissingField), Severity::Error);
    }
}
