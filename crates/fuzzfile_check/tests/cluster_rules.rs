//! Which rules need a cluster profile: `cluster_profile_missing::NEEDS_PROFILE` is what the
//! note of `cluster-profile-missing` (and of `fuzzlint check`) names, so it is checked against
//! the rules' own documentation examples.

use fuzzfile_check::rules::cluster_profile_missing::NEEDS_PROFILE;
use fuzzfile_check::rules::documentation;
use fuzzfile_check::{analyze_with, Options, Rule};

/// The first ```yaml block of `## Example`, and whether it is checked with a profile (a
/// `# fuzzlint check --cluster` first line, or a ```toml profile block before it).
fn example(rule: Rule) -> (String, bool) {
    let doc = documentation(rule);
    let start = doc.find("## Example\n").expect("an Example section");
    let section = &doc[start..];
    let section = match section[3..].find("\n## ") {
        Some(end) => &section[..end + 3],
        None => section,
    };
    let yaml_at = section.find("```yaml\n").expect("a yaml block");
    let body = &section[yaml_at + 8..];
    let body = &body[..body.find("```").expect("a closed fence")];
    let with_profile = body.starts_with("# fuzzlint check --cluster")
        || section[..yaml_at].contains("```toml profile");
    let text = if body.lines().any(|l| l.starts_with("version:")) {
        body.to_owned()
    } else {
        format!("version: v4\n{body}")
    };
    (text, with_profile)
}

fn reports_without_profile(rule: Rule, text: &str) -> bool {
    analyze_with(text, &Options::default())
        .diagnostics
        .iter()
        .any(|d| d.rule == rule)
}

#[test]
fn the_rules_needing_a_profile_are_the_listed_ones() {
    // A template rule's example is a template, and no template rule needs a profile.
    for &rule in Rule::ALL
        .iter()
        .filter(|r| r.category() != fuzzfile_check::RuleCategory::Template)
    {
        let (text, with_profile) = example(rule);
        let listed = NEEDS_PROFILE.contains(&rule);
        if listed {
            assert!(
                with_profile,
                "`{}` is listed as needing a profile, but its example takes none",
                rule.name()
            );
        }
        if with_profile {
            assert_eq!(
                !reports_without_profile(rule, &text),
                listed,
                "`{}`: {} on its example without the profile; NEEDS_PROFILE {} it",
                rule.name(),
                if listed { "reports" } else { "is silent" },
                if listed { "lists" } else { "does not list" },
            );
        }
    }
}

#[test]
fn the_note_and_the_documentation_name_every_listed_rule() {
    let doc = documentation(Rule::ClusterProfileMissing);
    let a = analyze_with(
        "version: v4\njobs:\n  t:\n    image: {uri: docker://x}\n    command: [nvidia-smi]\n    resource: {devices: {nvidia.com/gpu: 1}}\n",
        &Options::default(),
    );
    let note = a
        .diagnostics
        .iter()
        .find(|d| d.rule == Rule::ClusterProfileMissing)
        .expect("a single-node GPU job gets the note");
    for r in NEEDS_PROFILE {
        assert!(doc.contains(&format!("`{}`", r.name())), "{}", r.name());
        assert!(note.message.contains(r.code()), "{}", note.message);
    }
}
