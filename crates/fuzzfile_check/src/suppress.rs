//! Inline suppressions and the rule settings, applied to the findings of every rule at the end
//! of the analysis.
//!
//! A comment `# fuzzlint: ignore[rule-name, FZ201] reason` suppresses the findings of the rules
//! it names (by name or code) that start
//! - on its own line, when it follows something on that line (a trailing comment);
//! - on the next line that is not itself a comment, when it stands on a line of its own (so
//!   several suppression comments can be stacked above one line).
//!
//! The reason is optional and free text; it is kept for people and not reported when absent.
//! A suppression that suppresses nothing, names an unknown rule or is malformed is reported by
//! `unused-suppression` (see `rules/unused_suppression.rs` for what is and is not reported).
//!
//! Order: findings of disabled rules are dropped first, then suppressions apply, then
//! `unused-suppression` reports, and last the severity overrides rewrite severities.

use crate::config::{suggestion, Lookup};
use crate::Options;
use fuzzfile_diagnostics::{Diagnostic, Edit, Fix, LineIndex, Rule, TextRange};
use fuzzfile_syntax::Tree;
use std::collections::{HashMap, HashSet};

/// One `# fuzzlint:` comment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Directive {
    /// `#` to the end of the comment (trailing whitespace excluded).
    pub range: TextRange,
    /// 0-based line of the comment.
    pub line: usize,
    /// The comment is the only thing on its line.
    pub own_line: bool,
    pub kind: DirectiveKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DirectiveKind {
    Ignore {
        entries: Vec<Entry>,
        /// The text after `]`, if any.
        reason: Option<String>,
    },
    /// A `# fuzzlint:` comment that is not `ignore[...]`: what is wrong with it.
    Malformed(String),
}

/// One name inside `ignore[...]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub range: TextRange,
    /// `None` for a name that is no rule's name, former name or code.
    pub rule: Option<Rule>,
    /// The former name written, when the entry names a renamed rule by it (`name` is then
    /// that former name, and `rule` the rule it now is).
    pub alias: Option<&'static str>,
}

/// Parse one comment (its source text, from `#`, starting at byte `start`). `None` when it is
/// not a `fuzzlint:` comment. Rules are named by name, former name or code ([`Rule::lookup`]).
pub fn parse_comment(source: &str, start: u32) -> Option<DirectiveKind> {
    parse_comment_with(source, start, Rule::lookup)
}

fn parse_comment_with(source: &str, start: u32, lookup: Lookup) -> Option<DirectiveKind> {
    let body = source.strip_prefix('#')?;
    let lead = body.len() - body.trim_start().len();
    let rest = body[lead..].strip_prefix("fuzzlint:")?;
    let expected = "expected `# fuzzlint: ignore[rule-name] reason`";
    let rest_trim = rest.trim_start();
    let Some(after_verb) = rest_trim.strip_prefix("ignore") else {
        let verb: String = rest_trim
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        return Some(DirectiveKind::Malformed(if verb.is_empty() {
            format!("a `fuzzlint:` comment without a directive; {expected}")
        } else {
            format!("unknown directive `{verb}`; {expected}")
        }));
    };
    let after_ws = after_verb.trim_start();
    let Some(list) = after_ws.strip_prefix('[') else {
        return Some(DirectiveKind::Malformed(format!(
            "`ignore` needs the rules in brackets; {expected}"
        )));
    };
    let Some(close) = list.find(']') else {
        return Some(DirectiveKind::Malformed(format!(
            "`ignore[` is not closed; {expected}"
        )));
    };
    // Byte offset of `list` in `source`.
    let list_at = source.len() - list.len();
    let mut entries = Vec::new();
    let mut pos = 0;
    for part in list[..close].split(',') {
        let trimmed = part.trim();
        if !trimmed.is_empty() {
            let lead = part.len() - part.trim_start().len();
            let s = start as usize + list_at + pos + lead;
            let found = lookup(trimmed);
            entries.push(Entry {
                name: trimmed.to_owned(),
                range: TextRange::from_usize(s, s + trimmed.len()),
                rule: found.map(|f| f.rule),
                alias: found.and_then(|f| f.alias),
            });
        }
        pos += part.len() + 1;
    }
    if entries.is_empty() {
        return Some(DirectiveKind::Malformed(format!(
            "`ignore[]` names no rule; {expected}"
        )));
    }
    let reason = list[close + 1..].trim();
    Some(DirectiveKind::Ignore {
        entries,
        reason: (!reason.is_empty()).then(|| reason.to_owned()),
    })
}

/// Every `# fuzzlint:` comment of the file, in order.
pub fn directives(text: &str, index: &LineIndex, tree: &Tree) -> Vec<Directive> {
    directives_with(text, index, tree, Rule::lookup)
}

fn directives_with(text: &str, index: &LineIndex, tree: &Tree, lookup: Lookup) -> Vec<Directive> {
    let mut out = Vec::new();
    let push = |range: TextRange, out: &mut Vec<Directive>| {
        let line = index.line_of(range.start);
        let line_range = index.line_range(text, line);
        let end = range.end.min(line_range.end).max(range.start);
        let source = TextRange::new(range.start, end).slice(text).trim_end();
        let range = TextRange::new(
            range.start,
            range.start + u32::try_from(source.len()).unwrap_or(0),
        );
        if let Some(kind) = parse_comment_with(source, range.start, lookup) {
            out.push(Directive {
                range,
                line,
                own_line: is_own_line(text, line_range.start, range.start),
                kind,
            });
        }
    };
    for c in &tree.comments {
        push(c.range, &mut out);
    }
    // Lines blanked by recovery lost their comments; a trailing `# fuzzlint:` there is still
    // found, so that a syntax error can be suppressed on its own line.
    for &l in &tree.blanked_lines {
        let lr = index.line_range(text, l as usize);
        let line = lr.slice(text);
        let found = line.match_indices('#').map(|(i, _)| i).find(|&i| {
            (i == 0 || line[..i].ends_with([' ', '\t']))
                && line[i + 1..].trim_start().starts_with("fuzzlint:")
        });
        if let Some(i) = found {
            let s = lr.start as usize + i;
            push(TextRange::from_usize(s, lr.end as usize), &mut out);
        }
    }
    out.sort_by_key(|d| d.range.start);
    out.dedup_by_key(|d| d.range.start);
    out
}

fn is_own_line(text: &str, line_start: u32, at: u32) -> bool {
    TextRange::new(line_start, at)
        .slice(text)
        .trim_start_matches('\u{feff}')
        .chars()
        .all(|c| c == ' ' || c == '\t')
}

/// The 0-based line whose findings `d` suppresses.
fn target_line(d: &Directive, own_line_comments: &HashSet<usize>) -> usize {
    if !d.own_line {
        return d.line;
    }
    let mut l = d.line + 1;
    while own_line_comments.contains(&l) {
        l += 1;
    }
    l
}

/// Whether an unused suppression of `rule` can be judged in this run: the rule is enabled,
/// and its findings do not depend on a cluster profile this run lacks (or has).
fn can_judge(rule: Rule, options: &Options) -> bool {
    if !options.rules.is_enabled(rule) {
        return false;
    }
    match rule {
        Rule::ClusterProfileMissing => options.profile.is_none(),
        r if r.code().starts_with("FZ3") => options.profile.is_some(),
        _ => true,
    }
}

/// Drop findings of disabled rules, apply the suppressions, report unused ones, rewrite
/// severities.
pub fn apply(
    text: &str,
    index: &LineIndex,
    tree: &Tree,
    options: &Options,
    diags: &mut Vec<Diagnostic>,
) {
    apply_with(text, index, tree, options, diags, Rule::lookup);
}

/// As [`apply`], resolving the names in suppressions with `lookup`.
fn apply_with(
    text: &str,
    index: &LineIndex,
    tree: &Tree,
    options: &Options,
    diags: &mut Vec<Diagnostic>,
    lookup: Lookup,
) {
    let settings = &options.rules;
    settings.retain_enabled(diags);
    let dirs = directives_with(text, index, tree, lookup);
    if !dirs.is_empty() {
        let own_line_comments: HashSet<usize> = tree
            .comments
            .iter()
            .map(|c| (index.line_of(c.range.start), c.range.start))
            .filter(|&(l, start)| is_own_line(text, index.line_start(l), start))
            .map(|(l, _)| l)
            .collect();
        let targets: Vec<usize> = dirs
            .iter()
            .map(|d| target_line(d, &own_line_comments))
            .collect();
        // Target line → the directives that reach it.
        let mut by_line: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, &t) in targets.iter().enumerate() {
            by_line.entry(t).or_default().push(i);
        }
        let reaching = |line: usize| by_line.get(&line).map_or(&[][..], Vec::as_slice);
        // used[i][j]: entry j of directive i suppressed something.
        let mut used: Vec<Vec<bool>> = dirs.iter().map(|d| vec![false; entry_count(d)]).collect();
        diags.retain(|diag| {
            let line = index.line_of(diag.range.start);
            let mut keep = true;
            for &i in reaching(line) {
                if let DirectiveKind::Ignore { entries, .. } = &dirs[i].kind {
                    for (j, e) in entries.iter().enumerate() {
                        if e.rule == Some(diag.rule) {
                            used[i][j] = true;
                            keep = false;
                        }
                    }
                }
            }
            keep
        });
        if settings.is_enabled(Rule::UnusedSuppression) {
            let mut unused = Vec::new();
            for (i, d) in dirs.iter().enumerate() {
                report(text, index, d, targets[i], &used[i], options, &mut unused);
            }
            // Findings about suppressions can themselves be suppressed from the line above.
            unused.retain(|diag| {
                let line = index.line_of(diag.range.start);
                !reaching(line).iter().any(|&i| {
                    matches!(&dirs[i].kind, DirectiveKind::Ignore { entries, .. }
                        if entries.iter().any(|e| e.rule == Some(Rule::UnusedSuppression)))
                })
            });
            diags.extend(unused);
        }
    }
    settings.rewrite_severities(diags);
}

fn entry_count(d: &Directive) -> usize {
    match &d.kind {
        DirectiveKind::Ignore { entries, .. } => entries.len(),
        DirectiveKind::Malformed(_) => 0,
    }
}

fn names(rules: &[&Entry]) -> String {
    let v: Vec<String> = rules.iter().map(|e| shown(e)).collect();
    match v.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

const WHERE_HELP: &str = "a suppression applies to findings that start on its own line (a trailing comment) or on the next line (a comment on a line of its own); remove it once the problem is gone";

/// The `unused-suppression` findings of one directive.
fn report(
    text: &str,
    index: &LineIndex,
    d: &Directive,
    target: usize,
    used: &[bool],
    options: &Options,
    out: &mut Vec<Diagnostic>,
) {
    let entries = match &d.kind {
        DirectiveKind::Malformed(msg) => {
            out.push(Diagnostic::new(
                Rule::UnusedSuppression,
                d.range,
                format!("not a suppression: {msg}"),
            ));
            return;
        }
        DirectiveKind::Ignore { entries, .. } => entries,
    };
    // Listing `unused-suppression` itself keeps the comment quiet.
    if entries
        .iter()
        .any(|e| e.rule == Some(Rule::UnusedSuppression))
    {
        return;
    }
    #[derive(PartialEq)]
    enum State {
        Used,
        Unjudged,
        Unknown,
        Duplicate,
        Unused,
    }
    let mut seen = HashSet::new();
    let states: Vec<State> = entries
        .iter()
        .zip(used)
        .map(|(e, &u)| match e.rule {
            None => State::Unknown,
            Some(r) if !seen.insert(r) => State::Duplicate,
            Some(_) if u => State::Used,
            Some(r) if !can_judge(r, options) => State::Unjudged,
            Some(_) => State::Unused,
        })
        .collect();
    let line_no = target + 1;
    if states
        .iter()
        .all(|s| matches!(s, State::Unused | State::Duplicate))
    {
        let unused: Vec<&Entry> = entries
            .iter()
            .zip(&states)
            .filter(|(_, s)| **s == State::Unused)
            .map(|(e, _)| e)
            .collect();
        let mut diag = Diagnostic::new(
            Rule::UnusedSuppression,
            d.range,
            format!(
                "unused suppression: no {} finding starts on line {line_no}",
                names(&unused)
            ),
        )
        .with_help(WHERE_HELP);
        if let Some(edit) = delete_comment(text, index, d) {
            diag = diag.with_fix(Fix {
                message: "Remove the unused suppression".into(),
                edits: vec![edit],
                applicability: None,
            });
        }
        out.push(diag);
        return;
    }
    for (j, (e, s)) in entries.iter().zip(&states).enumerate() {
        let (message, help) = match s {
            State::Used | State::Unjudged => continue,
            State::Unknown => {
                let hint = suggestion(&e.name);
                out.push(
                    Diagnostic::new(
                        Rule::UnusedSuppression,
                        e.range,
                        format!("unknown rule `{}` in a suppression", e.name),
                    )
                    .with_help(format!(
                        "a suppression names rules by name or code{hint}; `fuzzlint rules` lists them"
                    )),
                );
                continue;
            }
            State::Duplicate => (
                format!("{} is listed twice in this suppression", shown(e)),
                None,
            ),
            State::Unused => (
                format!(
                    "unused suppression of {}: no `{}` finding starts on line {line_no}",
                    shown(e),
                    e.rule.map_or(e.name.as_str(), |r| r.name())
                ),
                Some(WHERE_HELP),
            ),
        };
        let mut diag = Diagnostic::new(Rule::UnusedSuppression, e.range, message);
        if let Some(h) = help {
            diag = diag.with_help(h);
        }
        let edit = remove_entry(entries, j);
        diag = diag.with_fix(Fix {
            message: format!("Remove `{}` from the suppression", e.name),
            edits: vec![edit],
            applicability: None,
        });
        out.push(diag);
    }
}

/// An entry as messages name it: `` `name` ``, or for a former name
/// `` `old-name` (now `new-name`) ``.
fn shown(e: &Entry) -> String {
    match (e.alias, e.rule) {
        (Some(_), Some(rule)) => format!("`{}` (now `{}`)", e.name, rule.name()),
        _ => format!("`{}`", e.name),
    }
}

/// Delete entry `j` of a list with at least two entries, with the comma that separates it
/// from a neighbour.
fn remove_entry(entries: &[Entry], j: usize) -> Edit {
    let range = if j + 1 < entries.len() {
        TextRange::new(entries[j].range.start, entries[j + 1].range.start)
    } else if j > 0 {
        TextRange::new(entries[j - 1].range.end, entries[j].range.end)
    } else {
        entries[j].range
    };
    Edit {
        range,
        replacement: String::new(),
    }
}

/// Delete a comment: its whole line when it stands alone, else from the whitespace before `#`.
fn delete_comment(text: &str, index: &LineIndex, d: &Directive) -> Option<Edit> {
    let line_range = index.line_range(text, d.line);
    let range = if d.own_line {
        let mut start = index.line_start(d.line);
        if start == 0 && text.starts_with('\u{feff}') {
            start = 3;
        }
        let end = index.line_start(d.line + 1).max(line_range.end);
        TextRange::new(start, end)
    } else {
        let before = TextRange::new(line_range.start, d.range.start).slice(text);
        let ws = before.len() - before.trim_end_matches([' ', '\t']).len();
        TextRange::new(
            d.range.start - u32::try_from(ws).ok()?,
            line_range.end.max(d.range.end),
        )
    };
    Some(Edit {
        range,
        replacement: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{RuleSelection, RuleSettings, Selector};
    use crate::{analyze, analyze_with, apply_fixes};
    use fuzzfile_diagnostics::Severity;
    use std::collections::BTreeMap;

    const RETRY: &str = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine\n    command: [true]\n    policy:\n      retry:\n        attempts: 3\n";

    fn rules(a: &crate::Analysis) -> Vec<(&'static str, u32)> {
        a.diagnostics
            .iter()
            .map(|d| (d.rule.name(), a.line_col(d.range.start).line))
            .collect()
    }

    fn with_comment_on(line: usize, comment: &str, trailing: bool) -> String {
        let mut lines: Vec<String> = RETRY.lines().map(str::to_owned).collect();
        if trailing {
            lines[line - 1].push_str(&format!("  {comment}"));
        } else {
            let indent: String = lines[line - 1].chars().take_while(|c| *c == ' ').collect();
            lines.insert(line - 1, format!("{indent}{comment}"));
        }
        lines.join("\n") + "\n"
    }

    #[test]
    fn without_suppression_the_finding_is_there() {
        assert_eq!(rules(&analyze(RETRY)), vec![("policy-retry-ignored", 8)]);
    }

    #[test]
    fn a_trailing_comment_suppresses_its_line() {
        let t = with_comment_on(
            8,
            "# fuzzlint: ignore[policy-retry-ignored] kept for old runners",
            true,
        );
        assert_eq!(rules(&analyze(&t)), vec![]);
    }

    #[test]
    fn a_comment_on_its_own_line_suppresses_the_next_line() {
        let t = with_comment_on(8, "# fuzzlint: ignore[policy-retry-ignored]", false);
        assert_eq!(rules(&analyze(&t)), vec![]);
        // ... and not the line after that.
        let t = with_comment_on(7, "# fuzzlint: ignore[policy-retry-ignored]", false);
        assert_eq!(
            rules(&analyze(&t)),
            vec![("unused-suppression", 7), ("policy-retry-ignored", 9)]
        );
    }

    #[test]
    fn stacked_comments_reach_the_first_line_below_them() {
        let t = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine\n    command: [true]\n    policy:\n      # fuzzlint: ignore[policy-retry-ignored]\n      # fuzzlint: ignore[unknown-key]\n      retry:\n        attempts: 3\n        tries: 2\n";
        let a = analyze(t);
        assert_eq!(
            rules(&a),
            vec![("unused-suppression", 9), ("unknown-key", 12)]
        );
    }

    #[test]
    fn codes_and_several_rules() {
        let t = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine\n    command: [true]\n    policy:\n      retry: {attempts: 3, tries: 2}  # fuzzlint: ignore[FZ010, policy-retry-ignored]\n";
        assert_eq!(rules(&analyze(t)), vec![]);
        let a = analyze(&t.replace("FZ010, ", "fz010,"));
        assert_eq!(rules(&a), vec![]);
    }

    #[test]
    fn a_suppression_that_suppresses_nothing_is_reported_with_a_fix() {
        let t = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine  # fuzzlint: ignore[unknown-key] why\n    # fuzzlint: ignore[no-command]\n    command: [true]\n";
        let a = analyze(t);
        assert_eq!(
            rules(&a),
            vec![("unused-suppression", 5), ("unused-suppression", 6)]
        );
        assert_eq!(
            a.diagnostics[0].message,
            "unused suppression: no `unknown-key` finding starts on line 5"
        );
        assert_eq!(
            a.diagnostics[1].message,
            "unused suppression: no `no-command` finding starts on line 7"
        );
        assert_eq!(a.diagnostics[0].severity, Severity::Warning);
        let fixed = apply_fixes(t, &a.diagnostics);
        assert_eq!(
            fixed,
            "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine\n    command: [true]\n"
        );
        assert!(analyze(&fixed).diagnostics.is_empty());
    }

    #[test]
    fn one_unused_name_of_several_is_removed_alone() {
        let t = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine\n    command: [true]\n    policy:\n      retry:  # fuzzlint: ignore[unknown-key, policy-retry-ignored, FZ032]\n        attempts: 3\n";
        let a = analyze(t);
        let msgs: Vec<&str> = a.diagnostics.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            msgs,
            vec![
                "unused suppression of `unknown-key`: no `unknown-key` finding starts on line 8",
                "`FZ032` is listed twice in this suppression",
            ]
        );
        let mut fixed = t.to_owned();
        for _ in 0..3 {
            fixed = apply_fixes(&fixed, &analyze(&fixed).diagnostics);
        }
        assert!(
            fixed.contains("retry:  # fuzzlint: ignore[policy-retry-ignored]\n"),
            "{fixed}"
        );
        assert!(analyze(&fixed).diagnostics.is_empty());
    }

    #[test]
    fn unknown_names_are_reported_with_a_suggestion() {
        let t = with_comment_on(8, "# fuzzlint: ignore[policy-retry-ignord]", true);
        let a = analyze(&t);
        assert_eq!(
            rules(&a),
            vec![("policy-retry-ignored", 8), ("unused-suppression", 8)]
        );
        let d = &a.diagnostics[1];
        assert_eq!(
            d.message,
            "unknown rule `policy-retry-ignord` in a suppression"
        );
        assert!(
            d.help
                .as_deref()
                .unwrap_or("")
                .contains("did you mean `policy-retry-ignored`?"),
            "{:?}",
            d.help
        );
        assert_eq!(d.range.slice(&t), "policy-retry-ignord");
        assert!(d.fix.is_none());
    }

    #[test]
    fn malformed_directives_are_reported() {
        for (comment, expect) in [
            ("# fuzzlint: disable[x]", "unknown directive `disable`"),
            ("# fuzzlint: ignore", "needs the rules in brackets"),
            ("# fuzzlint: ignore[unknown-key", "is not closed"),
            ("# fuzzlint: ignore[ , ]", "names no rule"),
        ] {
            let t = with_comment_on(6, comment, true);
            let a = analyze(&t);
            let d = a
                .diagnostics
                .iter()
                .find(|d| d.rule == Rule::UnusedSuppression)
                .unwrap_or_else(|| panic!("{comment}: {:?}", a.diagnostics));
            assert!(d.message.contains(expect), "{}", d.message);
        }
        // Other comments that mention fuzzlint are not directives.
        let t = with_comment_on(6, "# run fuzzlint: ignore[x] first", true);
        assert_eq!(rules(&analyze(&t)), vec![("policy-retry-ignored", 8)]);
    }

    #[test]
    fn syntax_errors_can_be_suppressed() {
        let own = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine\n    # fuzzlint: ignore[yaml-syntax]\n    command: [true\n    cwd: /x\n";
        let a = analyze(own);
        assert!(
            !a.diagnostics.iter().any(|d| d.rule == Rule::YamlSyntax),
            "{:?}",
            a.diagnostics
        );
        assert!(!a
            .diagnostics
            .iter()
            .any(|d| d.rule == Rule::UnusedSuppression));
        let plain = analyze(&own.replace("    # fuzzlint: ignore[yaml-syntax]\n", ""));
        assert!(plain.diagnostics.iter().any(|d| d.rule == Rule::YamlSyntax));

        // A trailing comment on a line that recovery blanked still counts.
        let trailing = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine\n    command: [true]\n    cwd: \"/x  # fuzzlint: ignore[yaml-syntax]\n";
        let before = analyze(&trailing.replace("  # fuzzlint: ignore[yaml-syntax]", ""));
        assert!(before
            .diagnostics
            .iter()
            .any(|d| d.rule == Rule::YamlSyntax));
        let errs: Vec<_> = before
            .diagnostics
            .iter()
            .filter(|d| d.rule == Rule::YamlSyntax)
            .map(|d| before.line_col(d.range.start).line)
            .collect();
        assert_eq!(errs, vec![7]);
        let a = analyze(trailing);
        assert!(
            !a.diagnostics.iter().any(|d| d.rule == Rule::YamlSyntax),
            "{:?}",
            a.diagnostics
        );
    }

    #[test]
    fn settings_drop_rules_and_rewrite_severities() {
        let opts =
            |select: Option<Vec<Selector>>, ignore: Vec<Selector>, sev: &[(Rule, Severity)]| {
                crate::Options {
                    rules: RuleSettings::resolve(
                        &[RuleSelection {
                            select,
                            ignore,
                            ..Default::default()
                        }],
                        sev.iter().copied().collect::<BTreeMap<_, _>>(),
                    ),
                    ..Default::default()
                }
            };
        let t = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine\n    command: [true]\n    tries: 1\n    policy:\n      retry:\n        attempts: 3\n";
        assert_eq!(
            rules(&analyze(t)),
            vec![("unknown-key", 7), ("policy-retry-ignored", 9)]
        );
        let a = analyze_with(t, &opts(None, vec![Selector::Rule(Rule::UnknownKey)], &[]));
        assert_eq!(rules(&a), vec![("policy-retry-ignored", 9)]);
        let a = analyze_with(
            t,
            &opts(Some(vec![Selector::Prefix("FZ01".into())]), vec![], &[]),
        );
        assert_eq!(rules(&a), vec![("unknown-key", 7)]);
        let a = analyze_with(
            t,
            &opts(None, vec![], &[(Rule::PolicyRetryIgnored, Severity::Error)]),
        );
        assert_eq!(a.diagnostics[1].severity, Severity::Error);
        assert_eq!(a.diagnostics[0].severity, Severity::Error);
    }

    #[test]
    fn unused_suppression_follows_the_settings() {
        let t = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine  # fuzzlint: ignore[unknown-key]\n    command: [true]\n";
        let ignore = |sel: Selector| crate::Options {
            rules: RuleSettings::resolve(
                &[RuleSelection {
                    ignore: vec![sel],
                    ..Default::default()
                }],
                BTreeMap::new(),
            ),
            ..Default::default()
        };
        // `unused-suppression` itself can be turned off ...
        let a = analyze_with(t, &ignore(Selector::Rule(Rule::UnusedSuppression)));
        assert_eq!(rules(&a), vec![]);
        // ... and a suppression of a rule that does not run is not judged.
        let a = analyze_with(t, &ignore(Selector::Rule(Rule::UnknownKey)));
        assert_eq!(rules(&a), vec![]);
        // Its severity can be changed.
        let o = crate::Options {
            rules: RuleSettings::resolve(
                &[],
                [(Rule::UnusedSuppression, Severity::Error)]
                    .into_iter()
                    .collect(),
            ),
            ..Default::default()
        };
        assert_eq!(analyze_with(t, &o).diagnostics[0].severity, Severity::Error);
        // Listing `unused-suppression` keeps a suppression quiet.
        let keep = t.replace("[unknown-key]", "[unknown-key, unused-suppression]");
        assert_eq!(rules(&analyze(&keep)), vec![]);
    }

    #[test]
    fn an_unused_suppression_can_be_suppressed_from_the_line_above() {
        let t = "version: v4\njobs:\n  a:\n    image:\n      # fuzzlint: ignore[unused-suppression] kept for the next image\n      uri: docker://alpine  # fuzzlint: ignore[unknown-key]\n    command: [true]\n";
        assert_eq!(rules(&analyze(t)), vec![]);
        let without = t.replace(
            "      # fuzzlint: ignore[unused-suppression] kept for the next image\n",
            "",
        );
        assert_eq!(rules(&analyze(&without)), vec![("unused-suppression", 5)]);
    }

    #[test]
    fn cluster_rules_are_judged_only_with_a_profile() {
        let t = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine  # fuzzlint: ignore[nccl-ib-hca-missing]\n    command: [true]\n";
        assert_eq!(rules(&analyze(t)), vec![]);
        let with_profile = crate::Options {
            profile: Some(crate::profile::ClusterProfile::default()),
            ..Default::default()
        };
        assert_eq!(
            rules(&analyze_with(t, &with_profile)),
            vec![("unused-suppression", 5)]
        );
        let t = t.replace("nccl-ib-hca-missing", "cluster-profile-missing");
        assert_eq!(rules(&analyze(&t)), vec![("unused-suppression", 5)]);
        assert_eq!(rules(&analyze_with(&t, &with_profile)), vec![]);
    }

    #[test]
    fn crlf_and_bom_are_kept_by_the_fix() {
        let t = "\u{feff}# fuzzlint: ignore[unknown-key]\r\nversion: v4\r\njobs:\r\n  a:\r\n    image:\r\n      uri: docker://alpine # fuzzlint: ignore[FZ010]\r\n    command: [true]\r\n";
        let a = analyze(t);
        assert_eq!(
            rules(&a),
            vec![("unused-suppression", 1), ("unused-suppression", 6)]
        );
        let fixed = apply_fixes(t, &a.diagnostics);
        assert_eq!(
            fixed,
            "\u{feff}version: v4\r\njobs:\r\n  a:\r\n    image:\r\n      uri: docker://alpine\r\n    command: [true]\r\n"
        );
    }

    /// The findings of `t` after the suppression pass with a table in which
    /// `policy-retry-ignored` was formerly named `retry-ignored`.
    fn with_renamed_rule(t: &str) -> Vec<(&'static str, u32, String)> {
        // The findings without suppressions: the same text with its `# fuzzlint:` comments
        // blanked (spaces, so every offset stays).
        let mut blank = t.to_owned();
        while let Some(at) = blank.find("# fuzzlint:") {
            let end = blank[at..].find('\n').map_or(blank.len(), |e| at + e);
            blank.replace_range(at..end, &" ".repeat(end - at));
        }
        let mut diags = analyze(&blank).diagnostics;
        let a = analyze(t);
        apply_with(
            t,
            &a.line_index,
            &a.tree,
            &Options::default(),
            &mut diags,
            crate::config::renamed_fixture_lookup,
        );
        diags.sort_by_key(|d| d.range.start);
        diags
            .iter()
            .map(|d| {
                (
                    d.rule.name(),
                    a.line_col(d.range.start).line,
                    d.message.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn a_former_rule_name_suppresses_as_the_name_does() {
        let t = with_comment_on(8, "# fuzzlint: ignore[retry-ignored] old runners", true);
        // The real table does not know the name: nothing is suppressed.
        assert_eq!(
            rules(&analyze(&t)),
            vec![("policy-retry-ignored", 8), ("unused-suppression", 8)]
        );
        assert_eq!(with_renamed_rule(&t), vec![]);
        let own_line = with_comment_on(8, "# fuzzlint: ignore[retry-ignored]", false);
        assert_eq!(with_renamed_rule(&own_line), vec![]);

        // Unused, it is reported with the rule's current name.
        let early = with_comment_on(7, "# fuzzlint: ignore[retry-ignored]", false);
        let found = with_renamed_rule(&early);
        let at: Vec<(&str, u32)> = found.iter().map(|f| (f.0, f.1)).collect();
        assert_eq!(
            at,
            vec![("unused-suppression", 7), ("policy-retry-ignored", 9)]
        );
        assert_eq!(
            found[0].2,
            "unused suppression: no `retry-ignored` (now `policy-retry-ignored`) finding starts on line 8"
        );
        let mixed = with_comment_on(
            8,
            "# fuzzlint: ignore[FZ010, retry-ignored, policy-retry-ignored]",
            true,
        );
        let found = with_renamed_rule(&mixed);
        let messages: Vec<&str> = found.iter().map(|f| f.2.as_str()).collect();
        assert_eq!(
            messages,
            vec![
                "unused suppression of `FZ010`: no `unknown-key` finding starts on line 8",
                "`policy-retry-ignored` is listed twice in this suppression",
            ]
        );
    }

    #[test]
    fn parse_comment_gives_exact_ranges() {
        let src = "#fuzzlint:ignore[ a ,FZ201 ]  because";
        let Some(DirectiveKind::Ignore { entries, reason }) = parse_comment(src, 10) else {
            panic!()
        };
        assert_eq!(reason.as_deref(), Some("because"));
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].rule, None);
        assert_eq!(
            &src[entries[0].range.start as usize - 10..entries[0].range.end as usize - 10],
            "a"
        );
        assert_eq!(
            &src[entries[1].range.start as usize - 10..entries[1].range.end as usize - 10],
            "FZ201"
        );
        assert_eq!(entries[1].rule, Some(Rule::LauncherNprocMismatch));
        assert_eq!(parse_comment("# just a comment", 0), None);
    }
}
