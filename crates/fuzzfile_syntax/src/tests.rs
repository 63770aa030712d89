//! Snapshot tests of `debug_tree` for the YAML constructs Fuzzfiles use, error recovery, and
//! explicit checks that every word of a decoded scalar maps back to its own source bytes.
//!
//! Each snapshot starts with the input, one line per source line, prefixed with the byte
//! offset of the line start (`\r`, tabs and the BOM are shown escaped), then the tree.

#![allow(clippy::unwrap_used)]

use crate::invariants::check_invariants;
use crate::{debug_tree, parse, NodeKind, ScalarStyle, SyntaxError, Tree};

/// The input with line-start offsets, then the tree.
fn render(text: &str) -> String {
    let tree = parse(text);
    let mut out = String::from("input:\n");
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let shown = line
            .trim_end_matches('\n')
            .replace('\r', "\\r")
            .replace('\t', "\\t")
            .replace('\u{feff}', "\\u{feff}");
        out.push_str(&format!("{offset:>4} | {shown}\n"));
        offset += line.len();
    }
    out.push_str("tree:\n");
    out.push_str(&debug_tree(text, &tree));
    out
}

macro_rules! snap {
    ($name:ident, $text:expr) => {
        #[test]
        fn $name() {
            let text: &str = $text;
            insta::assert_snapshot!(stringify!($name), render(text));
            let tree = parse(text);
            if let Err(e) = check_invariants(text, &tree) {
                panic!("{e}");
            }
        }
    };
}

/// Every scalar's map is exact and every word that the source spells without escapes maps to
/// exactly its own source bytes.
fn assert_words_map_back(text: &str, tree: &Tree) {
    let mut checked = 0;
    for (id, node) in tree.nodes() {
        let NodeKind::Scalar(s) = &node.kind else {
            continue;
        };
        let s = tree.scalar_of(s);
        assert!(
            s.map.is_exact(),
            "inexact map for node {} {:?} {:?}",
            id.0,
            node.range,
            s.value
        );
        for (start, word) in crate::debug::words(s.value) {
            let r = s.map.range_to_source(start..start + word.len());
            let src = r.slice(text);
            let escaped = match s.style {
                ScalarStyle::DoubleQuoted => src.contains('\\'),
                ScalarStyle::SingleQuoted => src.contains("''"),
                _ => false,
            };
            if !escaped {
                assert_eq!(src, word, "word {word:?} of {:?} maps to {r:?}", s.value);
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no word was checked");
}

fn assert_clean(text: &str) -> Tree {
    let tree = parse(text);
    assert!(tree.errors.is_empty(), "errors: {:#?}", tree.errors);
    assert_words_map_back(text, &tree);
    if let Err(e) = check_invariants(text, &tree) {
        panic!("{e}");
    }
    tree
}

// --- scalar styles -------------------------------------------------------------------------

const PLAIN_MULTILINE: &str = "\
version: v1
jobs:
  build:
    command: make all
      install
      clean

      done
    script: plain  with   inner    spaces
";
snap!(plain_multiline, PLAIN_MULTILINE);

const SINGLE_QUOTED: &str = "\
a: 'it''s a ''quoted'' word'
b: 'multi
  line  ''x''

  para'
c: ''
";
snap!(single_quoted, SINGLE_QUOTED);

const DOUBLE_QUOTED: &str = r#"a: "say \"hi\"	now\tcaf\u00e9 ok"
b: "line one \
   continued here"
c: "folded
   line\x41 \U0001F600 end"
d: "nb\_sp \/ back\\slash"
"#;
snap!(double_quoted, DOUBLE_QUOTED);

const LITERAL_BLOCKS: &str = "\
lit: |
  echo one
    indented
  echo two
strip: |-
  a
  b


keep: |+
  a
  b

end: x
";
snap!(literal_blocks, LITERAL_BLOCKS);

const FOLDED_BLOCKS: &str = "\
fold: >
  one two
  three

  four
    more indented
    lines
  back
foldstrip: >-
  alpha
  beta


  gamma
    deeper
  delta
end: x
";
snap!(folded_blocks, FOLDED_BLOCKS);

const EXPLICIT_INDENT: &str = "\
a: |1
  x
   y
b: >2-

    m
   n
  o
list:
  - |2
      explicit
";
snap!(explicit_indentation_indicator, EXPLICIT_INDENT);

const FLOW: &str = r#"command: ["/bin/sh", "-c", 'echo hi', plain word]
env: {A: "1", B: two words, C: [x, y]}
nested: [{a: 1}, [2, 3], {}]
empty: []
multi: [one
  two, "three
  four"]
"#;
snap!(flow_collections, FLOW);

const ANCHORS: &str = "\
defaults: &defaults
  image: &img docker://alpine
  cores: 2
jobs:
  one:
    <<: *defaults
    image: *img
  two: *defaults
  list: &l [a, b]
  again: *l
";
snap!(anchors_and_aliases, ANCHORS);

const COMMENTS: &str = "\
# leading comment
version: v1 # trailing
jobs:
  # own line, indented
  a:
    command: echo \"x\" # not part of the value
    script: |  # header comment
      echo # inside a block scalar this is content
    # between keys
    cwd: /tmp
# last line";
snap!(comments, COMMENTS);

const CRLF: &str = "version: v1\r\njobs:\r\n  a:\r\n    command: echo one\r\n      two\r\n    script: |\r\n      l1\r\n\r\n      l2\r\n    f: >-\r\n      a\r\n      b\r\n\r\n      c\r\n    q: \"x\r\n      y\"\r\n";
snap!(crlf_line_endings, CRLF);

const BOM: &str = "\u{feff}version: v1\njobs:\n  a:\n    image: \"caf\\u00e9\"\n    cwd: /tmp\n";
snap!(leading_bom, BOM);

const EMPTY_AND_TAGS: &str = "\
version:
jobs:
  a:
    command:
  b: ~
tagged: !!str 8
custom: !local/tag value
seq: !!seq [a]
";
snap!(empty_values_and_tags, EMPTY_AND_TAGS);

snap!(empty_text, "");
snap!(only_comment, "# nothing here\n");

#[test]
fn words_map_back_in_every_style() {
    for text in [
        PLAIN_MULTILINE,
        SINGLE_QUOTED,
        DOUBLE_QUOTED,
        LITERAL_BLOCKS,
        FOLDED_BLOCKS,
        EXPLICIT_INDENT,
        FLOW,
        ANCHORS,
        COMMENTS,
        CRLF,
        BOM,
        EMPTY_AND_TAGS,
    ] {
        assert_clean(text);
    }
}

/// Source text of decoded bytes `range` of the scalar at `path` (mapping keys).
fn source_of(text: &str, tree: &Tree, path: &[&str], decoded: &str) -> String {
    let mut id = tree.root().expect("root");
    for key in path {
        id = tree
            .get(id, key)
            .unwrap_or_else(|| panic!("no key {key}"))
            .value;
    }
    let s = tree.scalar(id).expect("a scalar");
    let at = s
        .value
        .find(decoded)
        .unwrap_or_else(|| panic!("{decoded:?} not in {:?}", s.value));
    s.map
        .range_to_source(at..at + decoded.len())
        .slice(text)
        .to_owned()
}

#[test]
fn escapes_map_to_their_source_spelling() {
    let tree = assert_clean(DOUBLE_QUOTED);
    let t = DOUBLE_QUOTED;
    assert_eq!(source_of(t, &tree, &["a"], "\"hi\""), r#"\"hi\""#);
    assert_eq!(source_of(t, &tree, &["a"], "\tcaf"), r"\tcaf");
    assert_eq!(source_of(t, &tree, &["a"], "café"), r"caf\u00e9");
    assert_eq!(source_of(t, &tree, &["a"], "é"), r"\u00e9");
    assert_eq!(source_of(t, &tree, &["c"], "😀"), r"\U0001F600");
    assert_eq!(source_of(t, &tree, &["c"], "A"), r"\x41");
    assert_eq!(source_of(t, &tree, &["d"], "\u{a0}"), r"\_");
    assert_eq!(source_of(t, &tree, &["d"], "\\"), r"\\");
    // The escaped line break joins without a space; the words on both sides keep their bytes.
    assert_eq!(
        tree.text(tree.get(tree.root().unwrap(), "b").unwrap().value),
        Some("line one continued here")
    );
    assert_eq!(source_of(t, &tree, &["b"], "continued"), "continued");

    let tree = assert_clean(SINGLE_QUOTED);
    assert_eq!(source_of(SINGLE_QUOTED, &tree, &["a"], "it's"), "it''s");
    assert_eq!(source_of(SINGLE_QUOTED, &tree, &["a"], "'"), "''");
}

#[test]
fn folds_map_to_line_breaks() {
    let tree = assert_clean(FOLDED_BLOCKS);
    let t = FOLDED_BLOCKS;
    // "two three": the space between them is the folded line break.
    assert_eq!(source_of(t, &tree, &["fold"], "two three"), "two\n  three");
    assert_eq!(
        source_of(t, &tree, &["fold"], "more indented"),
        "more indented"
    );
    let tree = assert_clean(PLAIN_MULTILINE);
    assert_eq!(
        source_of(
            PLAIN_MULTILINE,
            &tree,
            &["jobs", "build", "command"],
            "all install"
        ),
        "all\n      install"
    );
    let tree = assert_clean(CRLF);
    assert_eq!(
        source_of(CRLF, &tree, &["jobs", "a", "command"], "one two"),
        "one\r\n      two"
    );
}

#[test]
fn bom_counts_in_offsets() {
    let tree = assert_clean(BOM);
    assert!(tree.has_bom);
    let root = tree.root().unwrap();
    let key = tree.node(tree.entries(root).unwrap()[0].key);
    assert_eq!(key.range.start, 3);
    assert_eq!(key.range.slice(BOM), "version");
}

#[test]
fn empty_value_and_tag() {
    let tree = parse(EMPTY_AND_TAGS);
    assert!(tree.errors.is_empty());
    let root = tree.root().unwrap();
    let version = tree.get(root, "version").unwrap().value;
    assert!(tree.is_null(version));
    assert!(tree.node(version).range.is_empty());
    let tagged = tree.get(root, "tagged").unwrap().value;
    assert_eq!(tree.tag(tagged), Some("!!str"));
    assert_eq!(tree.core_value(tagged), Some(crate::CoreValue::Str("8")));
    assert_eq!(tree.node(tagged).range.slice(EMPTY_AND_TAGS), "8");
}

#[test]
fn core_tags_decide_the_type_when_the_content_matches() {
    use crate::CoreValue;
    let text = "a: !!int \"12\"\nb: !!int hi\nc: !!float 1\nd: !<tag:yaml.org,2002:bool> true\ne: ! 12\nf: !foo 12\ng: !!map [x]\nh: !!mystr 5\n";
    let tree = parse(text);
    assert!(tree.errors.is_empty(), "{:?}", tree.errors);
    let root = tree.root().unwrap();
    let v = |k: &str| tree.get(root, k).unwrap().value;
    assert_eq!(tree.core_value(v("a")), Some(CoreValue::Int(12)));
    assert_eq!(tree.core_value(v("b")), Some(CoreValue::Str("hi")));
    assert_eq!(
        tree.tag_mismatch(v("b")).as_deref(),
        Some("cannot decode !!str `hi` as a !!int")
    );
    assert_eq!(tree.core_value(v("c")), Some(CoreValue::Float(1.0)));
    assert_eq!(tree.tag_mismatch(v("c")), None);
    assert_eq!(tree.core_value(v("d")), Some(CoreValue::Bool(true)));
    assert_eq!(tree.core_value(v("e")), Some(CoreValue::Str("12")));
    // Other tags change nothing and are no core mismatch (the model warns about them).
    assert_eq!(tree.core_value(v("f")), Some(CoreValue::Int(12)));
    assert_eq!(tree.tag_mismatch(v("f")), None);
    assert_eq!(tree.core_value(v("h")), Some(CoreValue::Int(5)));
    assert!(tree.tag_mismatch(v("g")).is_some());
}

#[test]
fn block_scalar_at_end_of_text_without_line_break() {
    // The clipped "\n" has no source byte: it maps to an empty range at the end.
    for text in ["a: |\n  n", "a: >\n  x\n  y", "|\nn", "a: |+\n  n"] {
        let tree = parse(text);
        if let Err(e) = check_invariants(text, &tree) {
            panic!("{text:?}: {e}");
        }
        let id = tree
            .nodes()
            .filter(|(_, n)| matches!(&n.kind, NodeKind::Scalar(s) if s.style.is_block()))
            .map(|(id, _)| id)
            .next()
            .unwrap();
        let s = tree.scalar(id).unwrap();
        assert!(s.value.ends_with('\n'), "{text:?}");
        let n = s.value.len();
        let r = s.map.range_to_source(n - 1..n);
        assert_eq!(r, crate::TextRange::empty(text.len() as u32), "{text:?}");
    }
}

#[test]
fn words_after_multibyte_whitespace() {
    // U+2028 and the `\_` escape (U+00A0) are whitespace of more than one byte.
    let text = "a: >\n  x\n  \u{2028}y\nb: \"p\\_q r\"\n";
    let tree = parse(text);
    assert!(tree.errors.is_empty(), "{:?}", tree.errors);
    let out = debug_tree(text, &tree);
    let y = text.find('y').unwrap();
    let r = text.find(" r").unwrap() + 1;
    assert!(
        out.contains(&format!("word \"y\" -> {y}..{} \"y\"", y + 1)),
        "{out}"
    );
    assert!(
        out.contains(&format!("word \"r\" -> {r}..{} \"r\"", r + 1)),
        "{out}"
    );
    if let Err(e) = check_invariants(text, &tree) {
        panic!("{e}");
    }
}

const UNKNOWN_ALIAS: &str = "a: &x 1\nb: *y\nc: [*x, *z]\nd: 2\n";
snap!(unknown_alias, UNKNOWN_ALIAS);

#[test]
fn unknown_alias_is_an_alias_node_and_an_error() {
    let text = UNKNOWN_ALIAS;
    let tree = parse(text);
    assert_eq!(tree.errors.len(), 2, "{:#?}", tree.errors);
    assert_eq!(tree.errors[0].range.slice(text), "*y");
    assert!(tree.errors[0].message.contains("unknown alias `*y`"));
    assert_eq!(tree.errors[1].range.slice(text), "*z");
    assert!(tree.blanked_lines.is_empty());
    let root = tree.root().unwrap();
    let b = tree.get(root, "b").unwrap().value;
    assert!(matches!(
        &tree.node(b).kind,
        NodeKind::Alias { target: None }
    ));
    assert_eq!(tree.alias_name(b), Some("y"));
    let items = tree.items(tree.get(root, "c").unwrap().value).unwrap();
    assert_eq!(tree.text(items[0]), Some("1"));
    assert!(tree.get(root, "d").is_some());
}

// --- error recovery --------------------------------------------------------------------------

fn error_at<'a>(tree: &'a Tree, text: &str, needle: &str) -> &'a SyntaxError {
    let at = text.find(needle).unwrap() as u32;
    tree.errors
        .iter()
        .find(|e| e.range.start == at)
        .unwrap_or_else(|| panic!("no error at {at} ({needle:?}): {:#?}", tree.errors))
}

fn has_path(tree: &Tree, path: &[&str]) -> bool {
    let mut id = match tree.root() {
        Some(r) => r,
        None => return false,
    };
    for key in path {
        match tree.get(id, key) {
            Some(e) => id = e.value,
            None => return false,
        }
    }
    true
}

const UNCLOSED_BRACKET: &str = "\
jobs:
  one:
    command: [echo, \"hi\"
    image: alpine
  two:
    image: busybox
    command: [ls]
";
snap!(unclosed_bracket, UNCLOSED_BRACKET);

#[test]
fn unclosed_bracket_reports_at_the_bracket() {
    let text = UNCLOSED_BRACKET;
    let tree = parse(text);
    assert_eq!(tree.errors.len(), 1, "{:#?}", tree.errors);
    let e = error_at(&tree, text, "[echo");
    assert_eq!(e.range.slice(text), "[");
    assert!(e.message.contains("never closed"), "{}", e.message);
    // Noticed later, at the `:` of the next line.
    let d = e.detected_at.expect("detected_at");
    assert!(d.start > e.range.start);
    assert!(has_path(&tree, &["jobs", "one", "image"]));
    assert!(has_path(&tree, &["jobs", "two", "image"]));
    assert!(has_path(&tree, &["jobs", "two", "command"]));
    assert_eq!(tree.blanked_lines, vec![2]);
}

#[test]
fn unclosed_bracket_around_a_key_value_pair() {
    // `b: c` inside `[...]` is a flow mapping without braces; the error is the `[`.
    for text in ["x: [a, b: c\ny: 1\n", "x: [a, \u{e9}: c\ny: 1\n"] {
        let tree = parse(text);
        assert_eq!(tree.errors.len(), 1, "{text:?}: {:#?}", tree.errors);
        assert_eq!(tree.errors[0].range.slice(text), "[", "{text:?}");
        assert_eq!(tree.errors[0].message, "this `[` is never closed");
        assert!(has_path(&tree, &["y"]), "{text:?}");
        if let Err(e) = check_invariants(text, &tree) {
            panic!("{e}");
        }
    }
}

const UNCLOSED_BRACE: &str = "a: {x: 1, y: 2\nb: ok\n";
snap!(unclosed_brace, UNCLOSED_BRACE);

#[test]
fn unclosed_brace_reports_at_the_brace() {
    let tree = parse(UNCLOSED_BRACE);
    assert_eq!(tree.errors.len(), 1);
    assert_eq!(tree.errors[0].range.slice(UNCLOSED_BRACE), "{");
    assert!(has_path(&tree, &["b"]));
}

const UNCLOSED_DOUBLE_QUOTE: &str = "\
jobs:
  one:
    image: \"alpine
  two:
    image: busybox
";
snap!(unclosed_double_quote, UNCLOSED_DOUBLE_QUOTE);

#[test]
fn unclosed_quote_reports_at_the_quote() {
    let text = UNCLOSED_DOUBLE_QUOTE;
    let tree = parse(text);
    assert_eq!(tree.errors.len(), 1, "{:#?}", tree.errors);
    let e = error_at(&tree, text, "\"alpine");
    assert_eq!(e.range.slice(text), "\"");
    assert!(e.message.contains("quoted string is never closed"));
    assert!(has_path(&tree, &["jobs", "two", "image"]));

    let text = "a: 'unclosed single\nb: ok\n";
    let tree = parse(text);
    assert_eq!(tree.errors.len(), 1);
    assert_eq!(tree.errors[0].range, crate::TextRange::new(3, 4));
    assert!(has_path(&tree, &["b"]));
}

const BAD_INDENT: &str = "\
jobs:
  one:
    image: alpine
     cwd: /tmp
    command: [ls]
  two:
    image: busybox
";
snap!(badly_indented_line, BAD_INDENT);

#[test]
fn badly_indented_line_is_blanked() {
    let text = BAD_INDENT;
    let tree = parse(text);
    assert_eq!(tree.errors.len(), 1, "{:#?}", tree.errors);
    assert_eq!(tree.blanked_lines, vec![3]);
    let line3 = text.lines().nth(3).unwrap();
    let start = text.find(line3).unwrap() as u32;
    let e = &tree.errors[0];
    assert!(e.range.start >= start && e.range.end <= start + line3.len() as u32);
    assert!(has_path(&tree, &["jobs", "one", "image"]));
    assert!(has_path(&tree, &["jobs", "one", "command"]));
    assert!(has_path(&tree, &["jobs", "two", "image"]));
    assert!(!has_path(&tree, &["jobs", "one", "cwd"]));
}

const TWO_ERRORS: &str = "\
jobs:
  one:
    command: [echo, hi
    image: alpine
  two:
    image: busybox
      bad: indent
    cwd: /data
  three:
    image: x
";
snap!(two_independent_errors, TWO_ERRORS);

#[test]
fn two_independent_errors_are_both_reported() {
    let text = TWO_ERRORS;
    let tree = parse(text);
    assert_eq!(tree.errors.len(), 2, "{:#?}", tree.errors);
    assert_eq!(error_at(&tree, text, "[echo").range.slice(text), "[");
    let bad = text.find("bad: indent").unwrap() as u32;
    assert!(tree.errors[1].range.start >= bad);
    assert_eq!(tree.blanked_lines, vec![2, 6]);
    assert!(has_path(&tree, &["jobs", "one", "image"]));
    assert!(has_path(&tree, &["jobs", "two", "cwd"]));
    assert!(has_path(&tree, &["jobs", "three", "image"]));
}

const TAB_INDENT: &str = "jobs:\n  one:\n\timage: alpine\n  two:\n    image: busybox\n";
snap!(tab_in_indentation, TAB_INDENT);

#[test]
fn tab_in_indentation_is_reported_at_the_tab() {
    let tree = parse(TAB_INDENT);
    assert_eq!(tree.errors.len(), 1, "{:#?}", tree.errors);
    let e = &tree.errors[0];
    assert!(e.message.contains("tab"), "{}", e.message);
    assert_eq!(e.range.slice(TAB_INDENT), "\t");
    assert!(has_path(&tree, &["jobs", "two", "image"]));
}

#[test]
fn tab_before_a_key_on_a_continuation_line() {
    // The parser notices these at the start of the plain scalar before the tab; the error
    // must point at the tab and blank its line, not the scalar's.
    for (text, kept) in [
        ("a: 1\n\t\tb: 2\n", &["a"][..]),
        ("a:\n  b: 1\n \t c: 2\n", &["a", "b"][..]),
        ("a:\n  - x\n\t- y\n", &["a"][..]),
        ("a:\n\tb: 1\n", &["a"][..]),
    ] {
        let tree = parse(text);
        assert_eq!(tree.errors.len(), 1, "{text:?}: {:#?}", tree.errors);
        let e = &tree.errors[0];
        assert_eq!(e.range.start as usize, text.find('\t').unwrap(), "{text:?}");
        assert_eq!(e.range.slice(text), "\t", "{text:?}");
        assert!(e.message.contains("tab"), "{}", e.message);
        assert_eq!(
            tree.blanked_lines,
            vec![text[..e.range.start as usize].matches('\n').count() as u32],
            "{text:?}"
        );
        assert!(has_path(&tree, kept), "{text:?}");
    }
}

#[test]
fn unclosed_bracket_at_end_of_text() {
    for (text, open) in [("a: [\n", "["), ("a: [x, y\n", "["), ("a: {\n", "{")] {
        let tree = parse(text);
        assert_eq!(tree.errors.len(), 1, "{text:?}: {:#?}", tree.errors);
        let e = &tree.errors[0];
        assert_eq!(e.range.slice(text), open);
        assert_eq!(e.message, format!("this `{open}` is never closed"));
        assert!(e.help.is_some());
    }
}

const SECOND_DOCUMENT: &str = "\
version: v1
jobs:
  one:
    image: alpine
---
version: v2
";
snap!(second_document, SECOND_DOCUMENT);

#[test]
fn second_document_is_an_error() {
    let tree = parse(SECOND_DOCUMENT);
    assert_eq!(tree.errors.len(), 1, "{:#?}", tree.errors);
    let e = &tree.errors[0];
    assert_eq!(e.range.slice(SECOND_DOCUMENT), "---");
    assert!(e.message.contains("second YAML document"));
    let root = tree.root().unwrap();
    assert_eq!(
        tree.text(tree.get(root, "version").unwrap().value),
        Some("v1")
    );
    assert!(has_path(&tree, &["jobs", "one", "image"]));
}

#[test]
fn leading_document_marker_is_not_a_second_document() {
    let text = "---\nversion: v1\n...\n";
    let tree = parse(text);
    assert!(tree.errors.is_empty(), "{:#?}", tree.errors);
}

#[test]
fn recovery_keeps_ranges_of_the_original_text() {
    for text in [
        UNCLOSED_BRACKET,
        UNCLOSED_DOUBLE_QUOTE,
        BAD_INDENT,
        TWO_ERRORS,
        TAB_INDENT,
    ] {
        let tree = parse(text);
        if let Err(e) = check_invariants(text, &tree) {
            panic!("{e}");
        }
        for (_, n) in tree.nodes() {
            if let NodeKind::Scalar(s) = &n.kind {
                let s = tree.scalar_of(s);
                if s.style == ScalarStyle::Plain && !s.value.contains(' ') {
                    assert_eq!(n.range.slice(text), s.value);
                }
            }
        }
    }
}

#[test]
fn blanked_multibyte_line_does_not_split_characters() {
    // Blanking writes one space per byte; the block scalar that keeps those spaces must not
    // get a map into the middle of the original U+2028.
    let text = ">\n `\n\u{2028}\n \u{feff}";
    let tree = parse(text);
    assert!(!tree.errors.is_empty());
    if let Err(e) = check_invariants(text, &tree) {
        panic!("{e}");
    }
}
