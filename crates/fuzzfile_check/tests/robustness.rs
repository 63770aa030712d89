//! The whole analysis stays bounded on hostile input: alias bombs aimed at the model walk,
//! deep nesting, huge and invalid inputs. (Times are not asserted: the bounds are on work.)

use fuzzfile_check::{analyze, analyze_bytes, Rule};

#[test]
fn alias_bomb_through_the_model_walk_is_cut_off() {
    // 2,000 jobs, each an alias of one job with 2,000 env entries: 4 million entries if the
    // walk copied, 4 thousand nodes in the tree.
    let mut s = String::from("version: v4\nx-template: &big\n  image: {uri: docker://alpine:3.20}\n  command: [echo]\n  env:\n");
    for i in 0..2000 {
        s.push_str(&format!("    - V{i}=1\n"));
    }
    s.push_str("jobs:\n");
    for i in 0..2000 {
        s.push_str(&format!("  j{i}: *big\n"));
    }
    let a = analyze(&s);
    assert!(
        a.tree.len() < 10_000,
        "tree copied aliases: {} nodes",
        a.tree.len()
    );
    let env_entries: usize = a.model.jobs.iter().map(|j| j.env.len()).sum();
    assert!(
        env_entries < 200_000,
        "the walk expanded {env_entries} env entries"
    );
    assert!(
        a.diagnostics
            .iter()
            .any(|d| d.rule == Rule::YamlSyntax && d.message.contains("aliases expand")),
        "no budget diagnostic: {:?}",
        a.diagnostics.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
}

#[test]
fn ordinary_aliases_are_followed() {
    let s = "version: v4\nx: &res {cpu: {cores: 2}, memory: {size: 1GiB}}\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [echo]\n    resource: *res\n  b:\n    image: {uri: docker://alpine:3.20}\n    command: [echo]\n    resource: *res\n";
    let a = analyze(s);
    assert_eq!(a.model.jobs.len(), 2);
    for j in &a.model.jobs {
        assert_eq!(
            j.resource
                .as_ref()
                .and_then(|r| r.cores.as_ref())
                .map(|c| c.value),
            Some(2)
        );
    }
    // The top-level `x` is an unknown key, but nothing else is wrong.
    assert!(
        a.diagnostics.iter().all(|d| d.rule == Rule::UnknownKey),
        "{:?}",
        a.diagnostics
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let s = format!(
        "version: v4\njobs: {}{}\n",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let a = analyze(&s);
    assert!(a
        .diagnostics
        .iter()
        .any(|d| d.rule == Rule::YamlSyntax && d.message.contains("nesting")));
    let mut block = String::from("version: v4\njobs:\n");
    for depth in 0..10_000 {
        block.push_str(&" ".repeat(depth + 2));
        block.push_str("a:\n");
    }
    let a = analyze(&block);
    assert!(a.diagnostics.iter().any(|d| d.rule == Rule::YamlSyntax));
}

#[test]
fn invalid_utf8_is_one_clear_error() {
    let a = analyze_bytes(b"version: v4\njobs:\n  a:\n    command: [\xff]\n");
    assert_eq!(a.diagnostics.len(), 1, "{:?}", a.diagnostics);
    let d = &a.diagnostics[0];
    assert_eq!(d.rule, Rule::YamlSyntax);
    assert!(d.message.contains("UTF-8"));
    let p = a.line_col(d.range.start);
    assert_eq!((p.line, p.column), (4, 15));
}

#[test]
fn garbage_never_panics() {
    for s in [
        "",
        "\u{feff}",
        "---",
        "- - -",
        ":",
        "? ? ?",
        "{",
        "'",
        "\"\\",
        "&a *a",
        "*x",
        "jobs: *x",
        "version: [v4]\njobs: 3",
        "version: v4\njobs:\n  a: [1, {b: }]\n",
        "\t\t",
        "%YAML 1.2\n---\nversion: v4\n",
    ] {
        let _ = analyze(s);
    }
}

#[test]
fn duplicate_keys_are_found_in_small_and_large_mappings() {
    for n in [3usize, 40] {
        let mut s = String::from("version: v4\nfiles:\n");
        for i in 0..n {
            s.push_str(&format!("  f{i}: x\n"));
        }
        s.push_str("  f1: again\n  f1: thrice\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [echo]\n");
        let a = analyze(&s);
        let dups: Vec<_> = a
            .diagnostics
            .iter()
            .filter(|d| d.rule == Rule::DuplicateKey)
            .collect();
        assert_eq!(dups.len(), 2, "n={n}: {dups:?}");
        // Both point back at the first `f1`.
        let first = s.find("  f1:").unwrap() as u32 + 2;
        assert!(dups.iter().all(|d| d.labels[0].range.start == first));
    }
}
