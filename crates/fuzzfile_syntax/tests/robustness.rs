//! Hostile inputs: alias bombs, deep nesting, invalid UTF-8 and oversized input. Each test must
//! stay fast in a debug build.

#![allow(clippy::unwrap_used)]

use fuzzfile_syntax::invariants::check_invariants;
use fuzzfile_syntax::{parse, parse_bytes, parse_with_limits, Limits, NodeKind, Tree};
use std::time::{Duration, Instant};

fn timed<T>(what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(2), "{what} took {took:?}");
    out
}

fn assert_invariants(text: &str, tree: &Tree) {
    if let Err(e) = check_invariants(text, tree) {
        panic!("{e}");
    }
}

/// Billion laughs: 9 levels of 9 aliases to the previous level.
fn alias_bomb() -> String {
    let mut s = String::from("a0: &a0 [\"lol\"]\n");
    for level in 1..=9 {
        let prev = level - 1;
        let refs = vec![format!("*a{prev}"); 9].join(", ");
        s.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
    }
    s
}

#[test]
fn alias_bomb_costs_one_node_per_alias() {
    let text = alias_bomb();
    let tree = timed("alias bomb", || parse(&text));
    assert!(tree.errors.is_empty(), "{:#?}", tree.errors);
    // 10 keys, 10 sequences, 1 scalar, 81 aliases, the root.
    assert!(tree.len() < 200, "{} nodes", tree.len());
    let aliases = tree
        .nodes()
        .filter(|(_, n)| matches!(n.kind, NodeKind::Alias { .. }))
        .count();
    assert_eq!(aliases, 81);
    // The last level's aliases resolve to the previous level's sequence, not copies.
    let root = tree.root().unwrap();
    let a9 = tree.get(root, "a9").unwrap().value;
    let a8 = tree.get(root, "a8").unwrap().value;
    for &item in tree.items(a9).unwrap() {
        assert_eq!(tree.resolve(item), a8);
    }
    assert_invariants(&text, &tree);
}

fn assert_too_deep(text: &str) {
    let tree = timed("deep nesting", || parse(text));
    assert!(!tree.errors.is_empty(), "no error for deep nesting");
    assert!(
        tree.errors.iter().any(
            |e| e.message.contains("nesting is too deep") || e.message.contains("never closed")
        ),
        "{:#?}",
        tree.errors
    );
    assert_invariants(text, &tree);
}

#[test]
fn ten_thousand_open_brackets() {
    assert_too_deep(&"[".repeat(10_000));
}

#[test]
fn ten_thousand_closed_brackets() {
    let text = format!("{}x{}", "[".repeat(10_000), "]".repeat(10_000));
    let tree = timed("deep flow", || parse(&text));
    assert!(
        tree.errors
            .iter()
            .any(|e| e.message.contains("nesting is too deep")),
        "{:#?}",
        tree.errors
    );
    assert_invariants(&text, &tree);
}

#[test]
fn ten_thousand_flow_mappings() {
    let text = format!("{}x{}", "{a: ".repeat(10_000), "}".repeat(10_000));
    let tree = timed("deep flow mappings", || parse(&text));
    assert!(
        tree.errors
            .iter()
            .any(|e| e.message.contains("nesting is too deep")),
        "{:#?}",
        tree.errors
    );
    assert_invariants(&text, &tree);
}

#[test]
fn ten_thousand_block_sequence_levels() {
    // `- - - … x` on one line: block nesting without quadratic indentation.
    let text = format!("{}x\n", "- ".repeat(10_000));
    assert_too_deep(&text);
}

#[test]
fn deeply_nested_block_mappings() {
    // 1,000 levels, one more space each: 500 kB, well past the depth limit of 256.
    let mut text = String::new();
    for i in 0..1_000 {
        text.push_str(&" ".repeat(i));
        text.push_str("k:\n");
    }
    assert_too_deep(&text);
    // The lines nested below the limit are blanked together: one error, not one per pass.
    let tree = parse(&text);
    assert_eq!(tree.errors.len(), 1, "{:#?}", tree.errors);
    assert_eq!(tree.blanked_lines.len(), 1_000 - 256);
}

#[test]
fn siblings_after_a_too_deep_subtree_survive() {
    let text = "a:\n  b:\n    c:\n      d:\n        x: 1\n      y: 2\n    e: 3\nf: 4\n";
    let tree = parse_with_limits(
        text,
        Limits {
            max_depth: 3,
            ..Limits::default()
        },
    );
    // `d` and its sibling `y` are both too deep: one error, their lines blanked together.
    assert_eq!(tree.errors.len(), 1, "{:#?}", tree.errors);
    assert_eq!(
        tree.errors[0].message,
        "nesting is too deep: more than 3 levels of lists and mappings"
    );
    assert_eq!(tree.blanked_lines, vec![3, 4, 5]);
    let root = tree.root().unwrap();
    let a = tree.get(root, "a").unwrap().value;
    let b = tree.get(a, "b").unwrap().value;
    assert!(tree.get(b, "c").is_some());
    assert!(tree.get(b, "e").is_some());
    assert!(tree.get(root, "f").is_some());
    assert_invariants(text, &tree);
}

#[test]
fn depth_limit_is_configurable() {
    let text = "a: [[[[x]]]]\nb: 1\n";
    let tree = parse_with_limits(
        text,
        Limits {
            max_depth: 3,
            ..Limits::default()
        },
    );
    assert!(
        tree.errors
            .iter()
            .any(|e| e.message.contains("nesting is too deep")),
        "{:#?}",
        tree.errors
    );
    // Only the line with the brackets is blanked: the error is inside it, not at its key.
    assert_eq!(tree.blanked_lines, vec![0]);
    assert!(tree.get(tree.root().unwrap(), "b").is_some());
    assert!(parse(text).errors.is_empty());
}

#[test]
fn invalid_utf8_gives_one_error_at_the_bad_byte() {
    let bytes = b"version: v1\njobs:\n  a: caf\xe9\n";
    let (text, tree) = parse_bytes(bytes);
    assert_eq!(tree.errors.len(), 1, "{:#?}", tree.errors);
    let e = &tree.errors[0];
    let bad = bytes.iter().position(|&b| b == 0xe9).unwrap();
    assert_eq!(e.range.start as usize, bad);
    assert!(e.message.contains("invalid UTF-8"), "{}", e.message);
    assert!(e.message.contains("0xe9"), "{}", e.message);
    // The range is one of the returned text: the replacement character.
    assert_eq!(e.range.slice(&text), "\u{fffd}");
    assert!(tree.root().is_none());
    assert_invariants(&text, &tree);
}

#[test]
fn invalid_utf8_after_multibyte_text_and_bom() {
    let bytes = b"\xef\xbb\xbfa: \xc3\xa9\nb: \xc3\n";
    let (text, tree) = parse_bytes(bytes);
    assert_eq!(tree.errors.len(), 1);
    assert_eq!(tree.errors[0].range.start as usize, 12);
    assert!(tree.has_bom);
    assert_invariants(&text, &tree);
}

#[test]
fn valid_bytes_parse_like_text() {
    let (text, tree) = parse_bytes(b"a: b\n");
    assert_eq!(text, "a: b\n");
    assert!(tree.errors.is_empty());
    assert!(tree.root().is_some());
}

#[test]
fn input_over_the_size_limit() {
    let text = "a: b\n".repeat(100);
    let tree = parse_with_limits(
        &text,
        Limits {
            max_input_bytes: 100,
            ..Limits::default()
        },
    );
    assert_eq!(tree.errors.len(), 1);
    let e = &tree.errors[0];
    assert_eq!(e.message, "input is 500 bytes, over the limit of 100 bytes");
    assert!(e.range.is_empty());
    assert!(tree.root().is_none());
    assert!(tree.is_empty());
    // At the limit is fine.
    let tree = parse_with_limits(
        &text[..100],
        Limits {
            max_input_bytes: 100,
            ..Limits::default()
        },
    );
    assert!(tree.errors.is_empty());
}

#[test]
fn recovery_attempts_are_bounded() {
    // Every line is an error: at most `max_recoveries` re-parses, then the rest is reported
    // as it stands.
    let text = "a: [\n".repeat(2_000);
    let tree = timed("many errors", || parse(&text));
    assert!(!tree.errors.is_empty());
    assert!(tree.errors.len() <= Limits::default().max_recoveries + 1);
    assert_invariants(&text, &tree);
}

/// A realistic 50 MB file: many jobs. Slow in debug builds; run with
/// `cargo test --release -p fuzzfile_syntax --test robustness -- --ignored`.
#[test]
#[ignore = "50 MB input; run in release with --ignored"]
fn fifty_megabytes() {
    let job = "  job-NNNN:\n    image:\n      uri: docker://alpine:3.19\n    command: [\"/bin/sh\", \"-c\", \"echo hello && sleep 1\"]\n    script: |\n      echo one\n      echo two\n    resource:\n      cpu: {cores: 2}\n";
    let mut text = String::from("version: v1\njobs:\n");
    let mut i = 0;
    while text.len() < 50 * 1024 * 1024 {
        text.push_str(&job.replace("NNNN", &i.to_string()));
        i += 1;
    }
    let start = Instant::now();
    let tree = parse(&text);
    let took = start.elapsed();
    eprintln!("{} bytes, {} nodes in {took:?}", text.len(), tree.len());
    assert!(tree.errors.is_empty());
    assert!(took < Duration::from_secs(30), "took {took:?}");

    // The same with an unclosed bracket near the end: recovery re-parses, a bounded number of
    // times for large inputs.
    text.push_str("  last:\n    command: [echo\n    image: x\n");
    let start = Instant::now();
    let tree = parse(&text);
    let took = start.elapsed();
    eprintln!("with an error: {} errors in {took:?}", tree.errors.len());
    assert_eq!(tree.errors.len(), 1);
    assert!(took < Duration::from_secs(60), "took {took:?}");
}
