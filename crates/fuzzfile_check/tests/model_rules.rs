//! Rules that read what the model walk recorded (`version_node`, `command_key`, `script_key`,
//! `read_whole`) instead of being detected inside the walk report exactly what the walk did.

use fuzzfile_check::{analyze, Rule};

fn rules_of(text: &str, rule: Rule) -> Vec<String> {
    analyze(text)
        .diagnostics
        .into_iter()
        .filter(|d| d.rule == rule)
        .map(|d| d.message)
        .collect()
}

#[test]
fn a_job_cut_off_by_the_walk_budget_is_not_reported_without_a_command() {
    // `env` of every job is an alias of a long list: the walk's budget runs out inside the
    // jobs, before their `command` keys are read.
    let mut s = String::from("version: v4\nx-env: &big\n");
    for i in 0..3000 {
        s.push_str(&format!("  - V{i}=1\n"));
    }
    s.push_str("jobs:\n");
    for i in 0..400 {
        s.push_str(&format!(
            "  j{i}:\n    image: {{uri: docker://alpine:3.20}}\n    env: *big\n    command: [echo]\n"
        ));
    }
    let a = analyze(&s);
    assert!(a
        .diagnostics
        .iter()
        .any(|d| d.rule == Rule::YamlSyntax && d.message.contains("aliases expand")));
    // The premise: some job was built without its command being read.
    assert!(a
        .model
        .jobs
        .iter()
        .any(|j| !j.read_whole && j.command_key.is_none()));
    assert!(
        a.diagnostics.iter().all(|d| d.rule != Rule::NoCommand),
        "{:?}",
        a.diagnostics
    );
}

#[test]
fn a_body_that_is_not_a_mapping_is_an_invalid_value_only() {
    let text = "version: v4\njobs:\n  a: 3\n";
    assert!(rules_of(text, Rule::NoCommand).is_empty());
    assert_eq!(rules_of(text, Rule::InvalidValue).len(), 1);
    assert_eq!(
        rules_of(
            "version: v4\njobs:\n  a: {image: {uri: docker://alpine:3.20}}\n",
            Rule::NoCommand
        ),
        ["job `a` has neither `command` nor `script`"]
    );
}

#[test]
fn command_and_script_points_at_the_command_key_and_labels_the_script_key() {
    let text = "version: v4\nservices:\n  s:\n    image: {uri: docker://alpine:3.20}\n    command: [\"a\"]\n    script: 3\n";
    let a = analyze(text);
    let d = a
        .diagnostics
        .iter()
        .find(|d| d.rule == Rule::CommandAndScript)
        .expect("command-and-script");
    assert_eq!(d.message, "service `s` sets both `command` and `script`");
    assert_eq!(d.range.slice(text), "command");
    assert_eq!(d.labels[0].range.slice(text), "script");
}

#[test]
fn versions_are_judged_from_the_node_as_written() {
    let cases: &[(&str, &str, Option<&str>)] = &[
        ("4", "unsupported Fuzzfile version `4`; the versions are `v4` (current) and `v1` (legacy)", Some("v4")),
        ("1.0", "unsupported Fuzzfile version `1.0`; the versions are `v4` (current) and `v1` (legacy)", Some("v1")),
        ("v3", "unsupported Fuzzfile version `v3`; the versions are `v4` (current) and `v1` (legacy)", None),
        ("{a: 1}", "unsupported Fuzzfile version a mapping; the versions are `v4` (current) and `v1` (legacy)", None),
    ];
    for (written, message, fix) in cases {
        let text = format!("version: {written}\njobs:\n  a:\n    image: {{uri: docker://alpine:3.20}}\n    command: [echo]\n");
        let a = analyze(&text);
        let found: Vec<_> = a
            .diagnostics
            .iter()
            .filter(|d| d.rule == Rule::UnsupportedVersion)
            .collect();
        assert_eq!(found.len(), 1, "{written}: {:?}", a.diagnostics);
        assert_eq!(found[0].message, *message);
        assert_eq!(found[0].range.slice(&text), *written);
        let replacement = found[0]
            .fix
            .as_ref()
            .map(|f| f.edits[0].replacement.as_str());
        assert_eq!(replacement, *fix, "{written}");
    }
    assert_eq!(
        rules_of("version: v1\njobs: {}\n", Rule::LegacyVersion),
        ["`v1` is the legacy Fuzzfile syntax"]
    );
    assert!(rules_of("version: v4\njobs: {}\n", Rule::LegacyVersion).is_empty());
    assert!(rules_of("version: v4\njobs: {}\n", Rule::UnsupportedVersion).is_empty());
}

#[test]
fn every_deprecated_key_is_reported_where_it_is_written_each_time() {
    let v1 = "version: v1\nvolumes:\n  data:\n    type: EPHEMERAL\n    path: /x\njobs:\n  a:\n    image: {uri: docker://alpine:3.20, secrets: {}}\n    command: [echo]\n    requires: [b]\n    requires: [b]\n  b:\n    image: {uri: docker://alpine:3.20}\n    command: [echo]\n";
    let found: Vec<(String, String)> = analyze(v1)
        .diagnostics
        .into_iter()
        .filter(|d| d.rule == Rule::DeprecatedKey)
        .map(|d| (d.range.slice(v1).to_owned(), d.message))
        .collect();
    let keys: Vec<&str> = found.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["type", "path", "secrets", "requires", "requires"]);
    assert_eq!(found[0].1, "volume `type` is replaced by `reference`");
    assert_eq!(
        found[2].1,
        "`image.secrets` is a legacy form; use `image.secret`"
    );
    // In v4, volume `type` is not accepted at all: an unknown key, not a deprecated one.
    let v4 = "version: v4\nvolumes:\n  data:\n    type: EPHEMERAL\njobs: {}\n";
    assert!(rules_of(v4, Rule::DeprecatedKey).is_empty());
    assert_eq!(rules_of(v4, Rule::UnknownKey).len(), 1);
}
