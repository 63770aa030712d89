//! Differential tests of the fast path: wherever it takes a text, its tree must be identical to
//! the event-parser path's (nodes, ranges, values, styles, offset maps, comments). It must
//! take the ordinary Fuzzfiles: the corpus's plain files, the examples and a large synthetic
//! file.

#![allow(clippy::unwrap_used)]

use fuzzfile_syntax::differential::check_fast_path;
use fuzzfile_syntax::{parse_fast, parse_fast_with_limits, Limits};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files_in(dir: &Path, ext: Option<&str>) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| ext.is_none_or(|x| p.extension().is_some_and(|e| e == x)))
        .collect();
    v.sort();
    v
}

fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, ext, out);
        } else if p.extension().is_some_and(|e| e == ext) {
            out.push(p);
        }
    }
}

/// Check one file; returns whether the fast path took it.
fn check_path(path: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return false;
    };
    match check_fast_path(text) {
        Ok(took) => took,
        Err(e) => panic!("{}: {e}", path.display()),
    }
}

fn check_text(text: &str) -> bool {
    match check_fast_path(text) {
        Ok(took) => took,
        Err(e) => panic!("input {text:?}:\n{e}"),
    }
}

#[test]
fn corpus_matches_reference() {
    let corpus = root().join("../shared/corpus");
    if !corpus.is_dir() {
        fuzz_test_support::system::skip(&format!("no corpus at {}", corpus.display()));
        return;
    }
    let mut taken = 0;
    let mut total = 0;
    for sub in [
        "plain",
        "plain/history",
        "docs",
        "docs/fragments",
        "templates/v3.4",
    ] {
        for path in files_in(&corpus.join(sub), None) {
            if path.extension().is_some_and(|e| e == "md") {
                continue;
            }
            let took = check_path(&path);
            total += 1;
            taken += usize::from(took);
            if sub == "plain" && path.extension().is_some_and(|e| e == "fz") {
                assert!(took, "{}: the fast path should take it", path.display());
            }
        }
    }
    eprintln!("corpus: fast path took {taken} of {total} files");
    assert!(total > 0);
}

#[test]
fn specs_examples_and_seeds_match_reference() {
    let mut specs = Vec::new();
    walk(&root().join("tests/specs"), "fz", &mut specs);
    let mut taken = 0;
    for p in &specs {
        taken += usize::from(check_path(p));
    }
    eprintln!("specs: fast path took {taken} of {}", specs.len());
    let examples = files_in(&root().join("examples"), Some("fz"));
    assert!(!examples.is_empty());
    for p in &examples {
        assert!(
            check_path(p),
            "{}: the fast path should take it",
            p.display()
        );
    }
    for p in files_in(&root().join("fuzz/seeds"), None) {
        check_path(&p);
    }
}

/// A Fuzzfile with `n` jobs, like the benchmark's (crates/fuzzfile_check/examples/bench.rs).
fn synthetic(n: usize) -> String {
    let mut s = String::from(
        "version: v4\nvolumes:\n  data:\n    reference: volume://user/ephemeral\njobs:\n",
    );
    for i in 0..n {
        let dep = if i > 0 {
            format!(
                "    depends-on:\n      - name: job-{}\n        status: FINISHED\n",
                i - 1
            )
        } else {
            String::new()
        };
        s.push_str(&format!(
            "  job-{i}:\n    image:\n      uri: docker://nvcr.io/nvidia/pytorch:25.01-py3\n    script: |\n      #!/bin/sh\n      echo \"step {i}\" && python3 /work/train.py --epoch {i}\n    env:\n      - NCCL_DEBUG=INFO\n      - STEP={i}\n    mounts:\n      /data:\n        volume: data\n    resource:\n      cpu:\n        cores: 8\n        affinity: NUMA\n      memory:\n        size: 32GiB\n      devices:\n        nvidia.com/gpu: 1\n    policy:\n      timeout:\n        execute: 2h30m\n{dep}"
        ));
    }
    s
}

#[test]
fn synthetic_file_takes_the_fast_path() {
    let text = synthetic(5000);
    assert!(
        check_text(&text),
        "the fast path should take the synthetic file"
    );
}

/// Inputs at the edges of the subset. Each is compared when the fast path takes it; those
/// marked `true` must be taken.
const TRICKY: &[(&str, bool)] = &[
    ("", true),
    ("# only a comment\n", true),
    ("\n\n  \n", true),
    ("a: 1\n", true),
    ("a: 1", true),
    ("a:", true),
    ("a:\n", true),
    ("a:   \nb:\n", true),
    ("a:   # c\nb: 2 # d  \n", true),
    ("a: b #c\n", true),
    ("a: b#c\n", true),
    ("a: b # c # d\n", true),
    ("a: docker://x\nb: a:b\nc: x: y\n", false),
    ("url: http://host:8080/path?q=1#frag\n", true),
    ("a: x[0]{1},2\n", true),
    ("a : b\n", true),
    ("\"c\"  : d\n'e': f\n", true),
    ("\"a b\": 1\n'c''d': 2\n", true),
    (
        "a: \"x \\\" \\\\ \\n \\t \\x41 \\u00e9 \\U0001F600 y\"\n",
        true,
    ),
    ("a: \"\\q\"\n", false),
    ("a: \"\\ud800\"\n", false),
    ("a: 'it''s'\nb: ''\nc: \"\"\n", true),
    ("a: 'x'y\n", false),
    ("a: \"unclosed\n", false),
    ("a: 'multi\n  line'\n", false),
    ("a: plain\n  continued\n", false),
    ("a: plain\n# comment\n  continued\n", false),
    (
        "a:\n  b: 1\n  c:\n    - x\n    - y: 1\n      z: 2\n    -\n    - # c\n",
        true,
    ),
    ("a:\n- x\n- y\nb: 1\n", true),
    ("a:\n- x\n-\n- y: 1\n  z:\nb: [a, b]\n", true),
    ("a:\n  - x\n  -   # c\n  -\n", true),
    ("-\n- \n- a\n", true),
    ("- a: 1\n  b:\n  - x\n- c\n", true),
    ("- - a\n", false),
    ("- a\n - b\n", false),
    ("a: 1\n b: 2\n", false),
    ("a:\n  b: 1\n c: 2\n", false),
    ("a: 1\n- b\n", false),
    ("a: [a, b, [c, d], {e: f}]\n", true),
    ("a: []\nb: {}\nc: [ ]\nd: { }\n", true),
    ("a: {x: 1, 'y': \"2\", z: [3]}  # c\n", true),
    ("a: [a, b,]\n", false),
    ("a: [a,\n  b]\n", false),
    ("a: [a: b]\n", false),
    ("a: {a}\n", false),
    ("a: {a: }\n", false),
    ("a: [a]x\n", false),
    ("a: [a]#x\n", false),
    ("a: [\"x\":1]\n", false),
    ("a: [-1, -x, - ]\n", false),
    ("a: |\n  x\n  y\n\nb: 1\n", true),
    ("a: >-  # c\n\n  x\n   y\n  z\n\n\n", true),
    ("a: |+\n  x\n\n", true),
    ("a: |+\n  x\n ", false),
    ("a: |+\n  x\n\n  ", false),
    ("a: |\n  x\n ", true),
    ("a: |-\n  x\n\n  ", true),
    ("a: |-\n  x\n", true),
    ("a: >+\n  x\n  y\n\n\nb: 1\n", true),
    (
        "a: >\n  one two\n  three\n\n  four\n    more indented\n    lines\n  back\n",
        true,
    ),
    ("a: |\nb: 1\n", false),
    ("a: |\n", false),
    ("a: |2\n   x\n", false),
    ("k: |\n  x", true),
    ("k: |\n  x\n  \n  y\n", true),
    ("k: |\n  x\n    \n  y\n", false),
    ("k: |\n\n    \n  x\n", false),
    (
        "k: |\n  # not a comment\n  x # nor this\n# but this\nz: 1\n",
        true,
    ),
    ("k: |\n  x\n # comment\nz: 1\n", true),
    ("k: |\n    x\n  y\n", false),
    ("k: |\n  x\n\ty\n", false),
    ("k: |\n  x\n  \ty\n", true),
    ("k: |\n  x\n  \t\n", false),
    ("- |\n  x\n- >\n  y\n  z\n", true),
    ("- a: |\n    x\n  b: 2\n", true),
    ("- a: |\n   x\n", false),
    ("a:\n  - |\n    x\n", true),
    ("a:\n- |\n  x\n- y\n", true),
    ("a: | # a > b\n  x\n", true),
    ("a: | # a |\n  x\n", false),
    (
        "a:\r\n  b: 1 # c\r\n  d: |\r\n    x\r\n\r\n    y\r\n  e: [1, 2]\r\n",
        true,
    ),
    ("\u{feff}a: 1\nb:\n  c: 2\n", true),
    ("\u{feff}- a\n- b\n", true),
    ("---\na: 1\n", true),
    ("--- # doc\n# c\nk: v\n", true),
    ("---\n", false),
    ("--- a: 1\n", false),
    ("a: 1\n---\nb: 2\n", false),
    ("a: 1\n...\n", false),
    ("%YAML 1.2\n---\na: 1\n", false),
    ("a: &x 1\nb: *x\n", false),
    ("a: !!str 1\n", false),
    ("? a\n: b\n", false),
    ("a:\tb\n", false),
    ("a:\n\tb: 1\n", false),
    ("a: b\tc\n", false),
    ("a: b\r\n", true),
    ("a: b\rc: d\n", false),
    ("a: \u{85}\n", false),
    ("a: x\u{feff}\n", false),
    ("a: \u{e9}t\u{e9} \u{1F600}\n# \u{e9}\n", true),
    ("a: -1\nb: --flag\nc: -\n", false),
    ("a: -1\nb: --flag\n", true),
    ("-a: 1\n", true),
    ("a: :x\n", false),
    ("a: ?x\n", false),
    ("a: @x\n", false),
    ("a: `x`\n", false),
    ("a: %x\n", false),
    ("a::\n", true),
    ("a:: b\n", true),
    ("a:b: c\n", true),
    ("a\n", false),
    ("just a scalar\n", false),
    ("[a, b]\n", false),
    ("  a: 1\n  b: 2\n", true),
    ("  a: 1\nb: 2\n", false),
    ("a:\n  b\n", false),
    ("a:\n  [x]\n", false),
    ("a: 1\na: 2\n", true),
    ("a: 'x' # c\nb: \"y\"  # d\n", true),
    ("a: 'x'# c\n", false),
    ("a:\n  # c1\n  # c2\n\n  b: 1\n", true),
    ("a:\n    b: 1\n  c: 2\n", false),
    ("- # c\n  a: 1\n", true),
    ("a:\n- # c\n  b: 1\n", true),
    ("a:\n  -\n    b: 1\n", true),
    ("- a\n-\n  - b\n", true),
    ("key with spaces: value with spaces  \n", true),
    ("a: 1 #\n", true),
    ("#\n#x\n", true),
    ("a: ~\nb: null\nc: 0x1F\n", true),
    (
        "a: {uri: docker://x/y:1.0-py3}\nb: [a:b, c:d, 'e':f]\n",
        false,
    ),
    ("a: {uri: docker://x/y:1.0-py3}\nb: [a:b, c:d]\n", true),
    ("a: [a:, b]\n", false),
    ("a: {a:b}\n", false),
    ("a: {a:b: c}\n", true),
    ("a: [a#b, c]\n", true),
    // multi-line flow collections and quoted scalars
    ("a: [\"x\", \"y \\\n    z; \\\n    w\"]\nb: 1\n", true),
    ("a: [x,\n  y, # c\n  z]\n", true),
    ("a: [x,\n  y, # c\n  z\n  ]\n", false),
    ("a: {x: 1,\n  y: [2,\n    3]}\n", true),
    ("a: [x,\ny]\n", false),
    ("a: [x\n  , y]\n", false),
    ("a: [\"x\"\n  , y]\n", true),
    ("a: \"one\n  two\n\n  three  \n  four\"\n", true),
    ("a: 'one\n  two''s\n   \n  three'\n", true),
    ("a: \"x\n\ty\"\n", false),
    ("a: \"x\ny\"\n", false),
    ("- \"x\n  y\"\n- 'a\n  b'\n", true),
    ("\"x\n y\": 1\n", false),
    ("a: {\"x\n  y\": 1}\n", false),
    ("a:\r\n  b: [\"x\", \"y \\\r\n    z\"]\r\n", true),
    ("a: \"x\\\n\n\n  y\"\n", false),
    ("a: [\"x,\\\n\n  y\"]\n", false),
];

#[test]
fn tricky_inputs_match_reference() {
    let mut missed = Vec::new();
    for &(text, must_take) in TRICKY {
        let took = check_text(text);
        if must_take && !took {
            missed.push(text);
        }
        // The same with CRLF line breaks.
        let crlf = text.replace('\n', "\r\n");
        check_text(&crlf);
    }
    assert!(missed.is_empty(), "the fast path should take {missed:?}");
}

#[test]
fn fast_path_bails_on_deep_nesting() {
    let mut text = String::new();
    for i in 0..300 {
        text.push_str(&" ".repeat(i));
        text.push_str("a:\n");
    }
    assert!(parse_fast(&text).is_none());
    check_text(&text);
    let flow = format!("a: {}{}\n", "[".repeat(300), "]".repeat(300));
    assert!(parse_fast(&flow).is_none());
    let limits = Limits {
        max_depth: 8,
        ..Limits::default()
    };
    assert!(parse_fast_with_limits("a:\n  b:\n    c:\n      d:\n        e: 1\n", limits).is_none());
    assert!(parse_fast_with_limits(
        &"a: 1\n".repeat(10),
        Limits {
            max_input_bytes: 10,
            ..Limits::default()
        }
    )
    .is_none());
}

/// Small deterministic generator of texts near the subset: random block structure, scalars
/// with YAML's special characters, comments, block scalars with blank lines, CRLF.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

const WORDS: &[&str] = &[
    "a",
    "b",
    "x",
    "job-1",
    "docker://x/y:1",
    "a:b",
    "a #b",
    "a#b",
    "x y",
    "-1",
    "--f",
    "~",
    "null",
    "1.5",
    "é",
    "'q'",
    "\"d\"",
    "'it''s'",
    "\"\\t\\u00e9\"",
    "\"a: b\"",
    "[a, b]",
    "{a: 1}",
    "[]",
    "{}",
    "[a, [b]]",
    "{a: [1, 2], 'b': c}",
    "x[0]",
    "a,b",
    "&a x",
    "*a",
    "!t x",
    "? x",
    "- x",
    ":x",
    "a: b",
    "#c",
    "x  ",
    "%x",
    "@x",
    "x\t",
    "\"\\q\"",
    "'a",
];

/// Values the fast path takes, among them multi-line flow collections and quoted scalars.
const GOOD_WORDS: &[&str] = &[
    "a",
    "job-1",
    "docker://x/y:1.0",
    "a:b",
    "x y  z",
    "-1",
    "'it''s'",
    "\"t\\t\\u00e9\"",
    "[a, 'b', \"c\"]",
    "{a: [1, 2], 'b': c}",
    "[a,\n      b, # c\n      c]",
    "\"one\n      two \\\n      three\"",
    "'one\n\n      two'",
    "{k: docker://x:1,\n      l: [m]}",
];

fn gen_scalar(r: &mut Rng) -> String {
    if r.below(3) == 0 {
        r.pick(WORDS).to_string()
    } else {
        r.pick(GOOD_WORDS).to_string()
    }
}

fn gen_block_scalar(r: &mut Rng, indent: usize, out: &mut String) {
    out.push_str(r.pick(&["|", ">", "|-", ">-", "|+", ">+", "|2", "| # h", "> # a > b"]));
    out.push('\n');
    let m = indent + 1 + r.below(3);
    let lines = 1 + r.below(5);
    for _ in 0..lines {
        match r.below(7) {
            0 => out.push('\n'),
            1 => {
                out.push_str(&" ".repeat(r.below(m + 3)));
                out.push('\n');
            }
            2 => {
                out.push_str(&" ".repeat(m + 1 + r.below(3)));
                out.push_str("more indented\n");
            }
            3 => {
                out.push_str(&" ".repeat(m));
                out.push_str("# not a comment\n");
            }
            4 => {
                out.push_str(&" ".repeat(m));
                out.push_str("\tx\n");
            }
            _ => {
                out.push_str(&" ".repeat(m));
                out.push_str(r.pick(&["echo hi", "x", "a: b", "- y", "z  "]));
                out.push('\n');
            }
        }
    }
}

fn gen_value(r: &mut Rng, indent: usize, depth: usize, out: &mut String) {
    match r.below(if depth > 3 { 3 } else { 7 }) {
        0 | 1 => {
            out.push(' ');
            out.push_str(&gen_scalar(r));
            gen_trailer(r, out);
            out.push('\n');
        }
        2 => {
            out.push(' ');
            gen_block_scalar(r, indent, out);
        }
        3 => {
            gen_trailer(r, out);
            out.push('\n');
        }
        4 | 5 => {
            gen_trailer(r, out);
            out.push('\n');
            let ind = indent + 1 + r.below(3) - usize::from(r.below(8) == 0);
            gen_mapping(r, ind, depth + 1, out);
        }
        _ => {
            gen_trailer(r, out);
            out.push('\n');
            let ind = if r.below(2) == 0 { indent } else { indent + 2 };
            gen_sequence(r, ind, depth + 1, out);
        }
    }
}

fn gen_trailer(r: &mut Rng, out: &mut String) {
    match r.below(6) {
        0 => out.push_str(" # c"),
        1 => out.push_str("  "),
        _ => {}
    }
}

fn gen_between(r: &mut Rng, indent: usize, out: &mut String) {
    match r.below(10) {
        0 => out.push('\n'),
        1 => {
            out.push_str(&" ".repeat(r.below(indent + 3)));
            out.push_str("# own line\n");
        }
        _ => {}
    }
}

fn gen_mapping(r: &mut Rng, indent: usize, depth: usize, out: &mut String) {
    let n = 1 + r.below(4);
    for _ in 0..n {
        gen_between(r, indent, out);
        out.push_str(&" ".repeat(indent));
        out.push_str(r.pick(&["a", "b", "key", "'q k'", "\"d k\"", "a b", "x:y", "-k"]));
        out.push_str(r.pick(&[":", ":", ":", " :", "::"]));
        gen_value(r, indent, depth, out);
    }
}

fn gen_sequence(r: &mut Rng, indent: usize, depth: usize, out: &mut String) {
    let n = 1 + r.below(4);
    for _ in 0..n {
        gen_between(r, indent, out);
        out.push_str(&" ".repeat(indent));
        out.push('-');
        match r.below(6) {
            0 => {
                gen_trailer(r, out);
                out.push('\n');
            }
            1 => {
                // compact mapping
                out.push(' ');
                let mut inner = String::new();
                gen_mapping(r, indent + 2, depth + 1, &mut inner);
                out.push_str(inner.trim_start_matches(' '));
            }
            2 if depth < 4 => {
                out.push('\n');
                gen_mapping(r, indent + 2, depth + 1, out);
            }
            _ => gen_value(r, indent, depth, out),
        }
    }
}

fn generate(r: &mut Rng) -> String {
    let mut out = String::new();
    if r.below(10) == 0 {
        out.push('\u{feff}');
    }
    if r.below(10) == 0 {
        out.push_str("---\n");
    }
    if r.below(4) == 0 {
        gen_sequence(r, 0, 0, &mut out);
    } else {
        gen_mapping(r, 0, 0, &mut out);
    }
    if r.below(5) == 0 {
        out = out.replace('\n', "\r\n");
    }
    if r.below(6) == 0 {
        out.pop();
    }
    out
}

#[test]
fn generated_inputs_match_reference() {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let mut taken = 0;
    let n = 6000;
    for _ in 0..n {
        let text = generate(&mut r);
        taken += usize::from(check_text(&text));
    }
    eprintln!("generated: fast path took {taken} of {n}");
    assert!(taken > n / 10, "the fast path took only {taken} of {n}");
}

/// Single-byte edits of the examples: the fast path must agree or bail.
#[test]
fn mutated_examples_match_reference() {
    let mut r = Rng(0x1234_5678_9abc_def1);
    let edits: &[&str] = &[
        " ", "  ", "\n", ":", "#", "-", "|", ">", "'", "\"", "[", "]", "{", "}", ",", "\t", "\r\n",
        "a", "&", "*", "!", "?", "\\", "é",
    ];
    for path in files_in(&root().join("examples"), Some("fz")) {
        let text = std::fs::read_to_string(&path).unwrap();
        for _ in 0..300 {
            let mut t = text.clone();
            for _ in 0..1 + r.below(3) {
                let mut at = r.below(t.len() + 1);
                while !t.is_char_boundary(at) {
                    at -= 1;
                }
                match r.below(3) {
                    0 => {
                        let end = t[at..].chars().next().map_or(at, |c| at + c.len_utf8());
                        t.replace_range(at..end, "");
                    }
                    _ => t.insert_str(at, r.pick(edits)),
                }
            }
            check_text(&t);
        }
    }
}

/// Characters the fast path does not model make it bail wherever they are, also inside
/// scalars and comments, and CRLF is accepted at every alignment.
#[test]
fn precheck_rejects_unmodelled_characters() {
    let base = "k: abcdefghijklmnopqrstuvwxyz # abcdefghijklmnop\n";
    for bad in [
        "\u{1}", "\u{7f}", "\r", "\u{85}", "\u{9f}", "\u{2028}", "\u{feff}", "\u{fffe}", "\u{0}",
        "\u{1b}",
    ] {
        for at in 4..base.len() - 1 {
            let mut t = base.to_string();
            t.insert_str(at, bad);
            assert!(parse_fast(&t).is_none(), "took {t:?}");
            check_text(&t);
        }
    }
    for pad in 0..16 {
        let t = format!(
            "{}k: v\r\nl: |\r\n  x\r\n",
            " ".repeat(pad).replace(' ', "\n")
        );
        assert!(check_text(&t), "should take {t:?}");
    }
    assert!(check_text("k: \"tab\there\" # tab\there\nl: |\n  a\tb\n"));
    assert!(check_text(
        "k: \u{e9}\u{e8}\u{20ac}\u{1F600}abcdefgh # \u{e9}\n"
    ));
}

/// Texts with syntax errors, as an editor holds them while a person types: every Fuzzfile of
/// the corpus, the examples and the syntax-error specs, each with errors typed into some of its
/// lines (a character after a key's colon, a colon deleted, an unclosed quote or bracket, a
/// tab in the indentation).
fn texts_with_errors() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for dir in [
        "../shared/corpus/plain",
        "../shared/corpus/docs",
        "examples",
    ] {
        files.extend(files_in(&root().join(dir), Some("fz")));
    }
    walk(&root().join("tests/specs/yaml-syntax"), "fz", &mut files);
    walk(&root().join("tests/specs/duplicate-key"), "fz", &mut files);
    let mut out = Vec::new();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        out.push((path.clone(), text.clone()));
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        for (n, line) in lines.iter().enumerate().filter(|(n, _)| n % 2 == 1) {
            let mutated: Vec<String> = match n % 4 {
                0 => vec![
                    line.replacen(": ", ":x ", 1),
                    line.replacen(":\n", ":x\n", 1),
                ],
                1 => vec![line.replacen(':', "", 1)],
                2 => vec![
                    line.replacen(": ", ": \"", 1),
                    line.replacen(": ", ": [", 1),
                ],
                _ => vec![format!("\t{line}")],
            };
            for m in mutated {
                if m == **line {
                    continue;
                }
                let mut t = String::with_capacity(text.len() + 2);
                t.extend(lines[..n].iter().copied());
                t.push_str(&m);
                t.extend(lines[n + 1..].iter().copied());
                out.push((path.clone(), t));
            }
        }
    }
    out
}

#[test]
fn recovery_with_fast_passes_matches_the_event_parser_alone() {
    let mut recovered = 0;
    for (path, text) in texts_with_errors() {
        match fuzzfile_syntax::differential::check_recovery(&text) {
            Ok(true) => recovered += 1,
            Ok(false) => {}
            Err(e) => panic!("{}, text {text:?}:\n{e}", path.display()),
        }
    }
    // Not vacuous: most mutations are syntax errors that recovery blanks lines for.
    assert!(recovered > 200, "{recovered} texts recovered");
}
