//! The `## Example` and `## Use instead` blocks of every rule's documentation run as tests:
//! the example reports the rule, the alternative does not. How a block is read (the `version:`
//! completion, cluster profiles) is described in `src/rules/mod.rs`. A ```` ```yaml template ````
//! block is an application template, checked (`fuzzfile_check::template`) with the
//! ```` ```yaml values ```` block after it as its values file.

use fuzzfile_check::profile::{parse_profile, ClusterProfile};
use fuzzfile_check::rules::{documentation, meta, FixAvailability};
use fuzzfile_check::{analyze_with, Diagnostic, Options, Rule};
use std::path::Path;

/// A fenced block of a documentation section.
struct Block {
    info: String,
    body: String,
}

/// The text of section `## heading` (up to the next `## `).
fn section<'d>(doc: &'d str, heading: &str) -> Option<&'d str> {
    let start = doc.find(&format!("## {heading}\n"))?;
    let body = &doc[start + heading.len() + 4..];
    Some(match body.find("\n## ") {
        Some(end) => &body[..end],
        None => body,
    })
}

fn blocks(section: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for line in section.lines() {
        match (open.as_mut(), line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_owned(),
                    body: String::new(),
                })
            }
            (Some(_), Some(_)) => out.extend(open.take()),
            (Some(b), None) => {
                b.body.push_str(line);
                b.body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "an unclosed fence in:\n{section}");
    out
}

/// The Fuzzfile and the cluster profile a section runs with.
fn input(rule: Rule, heading: &str, section: &str) -> (String, Option<ClusterProfile>) {
    let blocks = blocks(section);
    let Some(i) = blocks
        .iter()
        .position(|b| b.info.split_whitespace().next() == Some("yaml"))
    else {
        panic!(
            "`{}`: `## {heading}` has no ```yaml block to run",
            rule.name()
        );
    };
    let yaml = &blocks[i];
    assert_eq!(
        yaml.info,
        "yaml",
        "`{}`: unknown fence `{}`",
        rule.name(),
        yaml.info
    );
    let mut profile = None;
    // `# fuzzlint check --cluster PATH` on the first line: checked with that profile.
    let first = yaml.body.lines().next().unwrap_or("");
    if let Some(cmd) = first.strip_prefix("# fuzzlint check") {
        let mut words = cmd.split_whitespace();
        while let Some(w) = words.next() {
            if w == "--cluster" {
                let rel = words.next().expect("a path after --cluster");
                let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../..")
                    .join(rel);
                let text = std::fs::read_to_string(&path)
                    .unwrap_or_else(|e| panic!("`{}`: {}: {e}", rule.name(), path.display()));
                profile = Some(parse_profile(&text).expect("the example profile parses"));
            }
        }
    }
    if let Some(b) = i.checked_sub(1).map(|p| &blocks[p]) {
        if b.info == "toml profile" {
            assert!(profile.is_none(), "`{}`: two profiles", rule.name());
            profile = Some(parse_profile(&b.body).unwrap_or_else(|e| {
                panic!("`{}`: the profile block does not parse: {e:?}", rule.name())
            }));
        }
    }
    let has_version = yaml.body.lines().any(|l| l.starts_with("version:"));
    let text = if has_version {
        yaml.body.clone()
    } else {
        format!("version: v4\n{}", yaml.body)
    };
    (text, profile)
}

/// The template of a section with a ```` ```yaml template ```` block, and its values.
fn template_input(section: &str) -> Option<fuzzfile_check::template::TemplateInput> {
    use fuzzfile_check::template::{Source, TemplateInput};
    let blocks = blocks(section);
    let i = blocks.iter().position(|b| b.info == "yaml template")?;
    let values = blocks
        .get(i + 1)
        .filter(|b| b.info == "yaml values")
        .map(|b| Source {
            display: "values.yaml".into(),
            text: b.body.clone(),
        });
    Some(TemplateInput {
        template: Source {
            display: "template.yaml".into(),
            text: blocks[i].body.clone(),
        },
        values,
        ..TemplateInput::default()
    })
}

/// The findings of `rule` on a template, in the template and in its values file.
fn template_findings(
    rule: Rule,
    input: fuzzfile_check::template::TemplateInput,
) -> Vec<Diagnostic> {
    let t = fuzzfile_check::template::check(input, &Options::default());
    t.diagnostics
        .iter()
        .chain(t.values_findings.iter().flat_map(|f| f.diagnostics.iter()))
        .filter(|d| d.rule == rule)
        .cloned()
        .collect()
}

/// The findings of `rule` on a section: its template, or its Fuzzfile.
fn section_findings(rule: Rule, heading: &str, section: &str) -> Vec<Diagnostic> {
    match template_input(section) {
        Some(t) => template_findings(rule, t),
        None => {
            let (text, profile) = input(rule, heading, section);
            findings(rule, &text, profile)
        }
    }
}

fn findings(rule: Rule, text: &str, profile: Option<ClusterProfile>) -> Vec<Diagnostic> {
    let options = Options {
        profile,
        ..Options::default()
    };
    analyze_with(text, &options)
        .diagnostics
        .into_iter()
        .filter(|d| d.rule == rule)
        .collect()
}

#[test]
fn every_example_fires_its_rule_and_every_alternative_does_not() {
    let mut failures = Vec::new();
    for &rule in Rule::ALL {
        let doc = documentation(rule);
        for (heading, fires) in [("Example", true), ("Use instead", false)] {
            let Some(section) = section(&doc, heading) else {
                failures.push(format!("`{}` has no `## {heading}`", rule.name()));
                continue;
            };
            if let Some(t) = template_input(section) {
                let found = template_findings(rule, t);
                if found.is_empty() == fires {
                    failures.push(format!(
                        "`{}`: the template of `## {heading}` {}:\n{found:#?}",
                        rule.name(),
                        if fires {
                            "does not report the rule"
                        } else {
                            "reports the rule"
                        }
                    ));
                }
                continue;
            }
            let (text, profile) = input(rule, heading, section);
            // A block that does not parse would trivially not report most rules.
            if !(rule == Rule::YamlSyntax && fires) {
                let syntax = findings(Rule::YamlSyntax, &text, profile.clone());
                if !syntax.is_empty() {
                    failures.push(format!(
                        "`{}`: `## {heading}` is not valid YAML:\n{text}\n{syntax:#?}",
                        rule.name()
                    ));
                }
            }
            let found = findings(rule, &text, profile);
            if found.is_empty() == fires {
                failures.push(format!(
                    "`{}`: `## {heading}` {}:\n{text}\n{found:#?}",
                    rule.name(),
                    if fires {
                        "does not report the rule"
                    } else {
                        "reports the rule"
                    }
                ));
            }
            // The declared fix availability holds on the example.
            let fixed = found.iter().filter(|d| d.fix.is_some()).count();
            let bad = match meta(rule).fix {
                FixAvailability::None => fixed > 0,
                FixAvailability::Always => fixed < found.len(),
                FixAvailability::Sometimes => false,
            };
            if bad {
                failures.push(format!(
                    "`{}` declares fix `{}`, but {fixed} of the {} findings of `## {heading}` have a fix",
                    rule.name(),
                    meta(rule).fix.as_str(),
                    found.len()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Rules whose example cannot show their fix, and why.
const FIX_NOT_SHOWN: &[(&str, &str)] = &[(
    "missing-field",
    "its fix adds a missing `version:`, which the completion of fragments supplies",
)];

/// Rules that declare that some findings have a fix show one in their example, so the
/// declaration is not a guess.
#[test]
fn rules_that_declare_a_fix_show_one_in_their_example() {
    let mut missing = Vec::new();
    for &rule in Rule::ALL {
        if meta(rule).fix == FixAvailability::None
            || FIX_NOT_SHOWN.iter().any(|(name, _)| *name == rule.name())
        {
            continue;
        }
        let doc = documentation(rule);
        let Some(section) = section(&doc, "Example") else {
            continue;
        };
        if !section_findings(rule, "Example", section)
            .iter()
            .any(|d| d.fix.is_some())
        {
            missing.push(rule.name());
        }
    }
    assert!(
        missing.is_empty(),
        "these rules declare a fix but their `## Example` gets none: {missing:?}"
    );
}

#[test]
fn sections_and_fences_are_read_as_documented() {
    let doc = "## Example\ntext\n```toml profile\ngpus-per-node = 2\n```\n```yaml\njobs: {}\n```\n\n## Use instead\n```text\n$ fuzzlint\n```\n```yaml\nversion: v1\n```\n";
    let ex = section(doc, "Example").expect("example");
    let (text, profile) = input(Rule::NoCommand, "Example", ex);
    assert_eq!(text, "version: v4\njobs: {}\n");
    assert_eq!(profile.and_then(|p| p.gpus_per_node), Some(2));
    let alt = section(doc, "Use instead").expect("use instead");
    assert_eq!(
        input(Rule::NoCommand, "Use instead", alt).0,
        "version: v1\n"
    );
}
