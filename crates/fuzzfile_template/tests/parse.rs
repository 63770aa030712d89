//! The template parser against Go's `text/template/parse` behaviour: every construct, the
//! errors Go reports (message and where), and the 89 catalog templates.

use fuzzfile_template::ast::{Arg, Node, Number, Pipeline};
use fuzzfile_template::{parse, ParseError, Template};

fn ok(text: &str) -> Template {
    match parse("t", text) {
        Ok(t) => {
            check_text_spans(text, &t);
            t
        }
        Err(e) => panic!("{text:?} did not parse: {e:?}"),
    }
}

fn err(text: &str) -> ParseError {
    match parse("t", text) {
        Ok(t) => panic!("{text:?} parsed: {t:?}"),
        Err(mut e) => {
            assert_eq!(e.len(), 1, "{e:?}");
            let e = e.remove(0);
            assert!(
                e.span.start <= e.span.end && e.span.end <= text.len(),
                "{e:?}"
            );
            e
        }
    }
}

/// The message and the text under the span.
fn err_at(text: &str) -> (String, &str) {
    let e = err(text);
    (e.message.clone(), &text[e.span.clone()])
}

fn walk<'a>(nodes: &'a [Node], out: &mut Vec<&'a Node>) {
    for n in nodes {
        out.push(n);
        match n {
            Node::If(b) | Node::With(b) | Node::Range(b) => {
                walk(&b.list, out);
                if let Some(e) = &b.else_list {
                    walk(e, out);
                }
            }
            _ => {}
        }
    }
}

fn all_nodes(t: &Template) -> Vec<&Node> {
    let mut out = Vec::new();
    walk(&t.root, &mut out);
    for d in t.defines.values() {
        walk(&d.body, &mut out);
    }
    out
}

fn check_text_spans(text: &str, t: &Template) {
    for n in all_nodes(t) {
        if let Node::Text { span, text: s } = n {
            assert_eq!(&text[span.clone()], s, "text node span in {text:?}");
            assert!(!s.is_empty());
        }
    }
}

fn texts(t: &Template) -> Vec<String> {
    all_nodes(t)
        .into_iter()
        .filter_map(|n| match n {
            Node::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

fn only_pipe(t: &Template) -> &Pipeline {
    match t.root.as_slice() {
        [Node::Action { pipe, .. }] => pipe,
        other => panic!("not one action: {other:?}"),
    }
}

fn first_arg(text: &str) -> Arg {
    let t = ok(text);
    only_pipe(&t).cmds[0].args[0].clone()
}

fn corpus_templates() -> Vec<std::path::PathBuf> {
    fn find(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                find(&p, out);
            } else if p.to_string_lossy().ends_with(".template.yaml") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    find(
        std::path::Path::new("/work/shared/corpus/templates"),
        &mut out,
    );
    out.sort();
    out
}

#[test]
fn corpus_templates_parse() {
    let files = corpus_templates();
    if files.is_empty() {
        fuzz_test_support::system::skip("no corpus at /work/shared/corpus/templates");
        return;
    }
    assert_eq!(files.len(), 89);
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        match parse(&f.to_string_lossy(), &text) {
            Ok(t) => check_text_spans(&text, &t),
            Err(e) => panic!("{}: {:?}", f.display(), e),
        }
    }
}

// ---- text, actions, trim markers, comments ----

#[test]
fn text_and_actions_have_spans() {
    let src = "a{{.A}}b{{ .B }}";
    let t = ok(src);
    match t.root.as_slice() {
        [Node::Text { span: s1, text: t1 }, Node::Action { span: a1, pipe }, Node::Text { span: s2, .. }, Node::Action { span: a2, .. }] =>
        {
            assert_eq!((s1.clone(), t1.as_str()), (0..1, "a"));
            assert_eq!(&src[a1.clone()], "{{.A}}");
            assert_eq!(&src[s2.clone()], "b");
            assert_eq!(&src[a2.clone()], "{{ .B }}");
            assert_eq!(&src[pipe.span.clone()], ".A");
            assert!(matches!(&pipe.cmds[0].args[0], Arg::Field { names, .. } if names == &["A"]));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(texts(&ok("no actions at all")), vec!["no actions at all"]);
    assert!(ok("").root.is_empty());
}

#[test]
fn trim_markers_remove_ascii_whitespace_next_to_the_action() {
    // lex.go: "{{- " trims the text before, " -}}" the text after: space, \t, \r, \n.
    assert_eq!(texts(&ok("a \t\r\n{{- .A -}} \n\tb")), vec!["a", "b"]);
    // The marker's space may be any of them.
    assert_eq!(texts(&ok("a \n{{-\n.A\t-}}\n b")), vec!["a", "b"]);
    // Other whitespace (a no-break space) stays.
    assert_eq!(texts(&ok("a\u{a0} {{- .A}}")), vec!["a\u{a0}"]);
    // Text of only whitespace goes away altogether.
    assert_eq!(texts(&ok("  \n{{- .A -}}  \n")), Vec::<String>::new());
    // Without the space, `-` is a sign: {{-3}} prints -3, nothing is trimmed.
    let t = ok("a {{-3}} b");
    assert_eq!(texts(&t), vec!["a ", " b"]);
    assert!(matches!(
        &only_action_arg(&t, 0),
        Arg::Number {
            value: Number::Int(-3),
            ..
        }
    ));
    // `3 -}}`: the trim marker after a number.
    assert_eq!(texts(&ok("{{3 -}}  x")), vec!["x"]);
    // Spans are the kept bytes.
    let src = "ab  \n{{- .A }}";
    let t = ok(src);
    match &t.root[0] {
        Node::Text { span, .. } => assert_eq!(span.clone(), 0..2),
        other => panic!("{other:?}"),
    }
    // `3-}}` is a bad number, not a trim marker.
    assert_eq!(err_at("{{3-}}").0, "bad number syntax: \"3-\"");
}

fn only_action_arg(t: &Template, i: usize) -> Arg {
    t.root
        .iter()
        .find_map(|n| match n {
            Node::Action { pipe, .. } => Some(pipe.cmds[0].args[i].clone()),
            _ => None,
        })
        .expect("an action")
}

#[test]
fn comments_with_and_without_trim_markers() {
    let src = "a {{/* one\ntwo */}} b";
    let t = ok(src);
    match t.root.as_slice() {
        [Node::Text { .. }, Node::Comment { span }, Node::Text { .. }] => {
            assert_eq!(&src[span.clone()], "{{/* one\ntwo */}}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(texts(&ok("a \n{{- /* c */ -}}\n b")), vec!["a", "b"]);
    // A comment must be the whole action.
    let (m, at) = err_at("{{/* c */ .A}}");
    assert_eq!(m, "comment ends before closing delimiter");
    assert!(at.starts_with("/*") || at.starts_with(' '), "{at:?}");
    assert_eq!(err_at("x {{/* c").0, "unclosed comment");
    // `{{ /*` is no comment: `/` is an unexpected character.
    assert_eq!(err_at("{{ /* c */ }}").0, "unexpected \"/\" in command");
}

// ---- pipelines, declarations, variables ----

#[test]
fn pipelines_and_commands() {
    let src = r#"{{ .A | printf "%s-%d" 3 | len }}"#;
    let t = ok(src);
    let p = only_pipe(&t);
    assert_eq!(p.cmds.len(), 3);
    assert_eq!(&src[p.cmds[1].span.clone()], r#"printf "%s-%d" 3"#);
    assert!(matches!(&p.cmds[1].args[0], Arg::Identifier { name, .. } if name == "printf"));
    assert!(matches!(&p.cmds[1].args[1], Arg::String { value, .. } if value == "%s-%d"));
    assert_eq!(&src[p.span.clone()], r#".A | printf "%s-%d" 3 | len"#);
    // Go accepts a trailing `|`.
    assert_eq!(only_pipe(&ok("{{ .A | }}")).cmds.len(), 1);
    // Only the first command may be a constant.
    let (m, at) = err_at("{{ .A | 3 }}");
    assert_eq!(
        (m.as_str(), at),
        ("non executable command in pipeline stage 2", "3")
    );
    assert_eq!(
        err_at(r#"{{ .A | len | "x" }}"#).0,
        "non executable command in pipeline stage 3"
    );
    assert_eq!(err_at("{{ | .A }}").0, "unexpected \"|\" in command");
    assert_eq!(err_at("{{ }}").0, "missing value for command");
    assert_eq!(err_at("{{ .A,.B }}").0, "unexpected \",\" in operand");
}

#[test]
fn declarations_and_assignments() {
    let t = ok("{{ $x := .A }}{{ $x = 2 }}{{ $x }}");
    let decls: Vec<(Vec<String>, bool)> = t
        .root
        .iter()
        .filter_map(|n| match n {
            Node::Action { pipe, .. } => Some((
                pipe.decl.iter().map(|v| v.name.clone()).collect(),
                pipe.is_assign,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(
        decls,
        vec![
            (vec!["$x".to_string()], false),
            (vec!["$x".to_string()], true),
            (vec![], false)
        ]
    );
    // range declares index and element.
    let t = ok("{{ range $i, $v := .L }}{{ $i }}={{ $v }}{{ end }}");
    match &t.root[0] {
        Node::Range(b) => {
            let names: Vec<&str> = b.pipe.decl.iter().map(|v| v.name.as_str()).collect();
            assert_eq!(names, ["$i", "$v"]);
        }
        other => panic!("{other:?}"),
    }
    // `$i, $v` without := : $i is declared, $v is the command (Go's parse.go pipeline()).
    match &ok("{{ $v := 1 }}{{ range $i, $v }}{{ end }}").root[1] {
        Node::Range(b) => {
            assert_eq!(b.pipe.decl.len(), 1);
            assert!(matches!(&b.pipe.cmds[0].args[0], Arg::Variable { name, .. } if name == "$v"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        err_at("{{ range $i, $v, $w := . }}{{end}}").0,
        "too many declarations in range"
    );
    assert_eq!(
        err_at("{{ range $i, 3 }}{{end}}").0,
        "range can only initialize variables"
    );
    assert_eq!(
        err_at("{{ with $x, $y := . }}{{end}}").0,
        "too many declarations in with"
    );
    assert_eq!(
        err_at("{{ $x, $y := 1 }}").0,
        "too many declarations in command"
    );
    // `=` must follow a space or the name ends badly (atTerminator has no '=').
    assert_eq!(err_at("{{ $x=1 }}").0, "bad character U+003D '='");
    assert_eq!(err_at("{{ $x := 1 }}{{ $x: 1 }}").0, "expected :=");
    // As in Go, `$x:` is no declaration, so an undeclared $x is reported first.
    assert_eq!(err_at("{{ $x: 1 }}").0, "undefined variable \"$x\"");
}

#[test]
fn variables_must_be_declared_before_use() {
    let (m, at) = err_at("{{ .A }}{{ $y }}");
    assert_eq!((m.as_str(), at), ("undefined variable \"$y\"", "$y"));
    // `$` is always there.
    assert!(
        matches!(first_arg("{{ $.A }}"), Arg::Variable { name, fields, .. } if name == "$" && fields == ["A"])
    );
    // A variable declared in a control ends at its {{end}} ...
    assert_eq!(
        err_at("{{ if .A }}{{ $x := 1 }}{{ end }}{{ $x }}").0,
        "undefined variable \"$x\""
    );
    assert_eq!(
        err_at("{{ range $i, $v := .A }}{{ end }}{{ $i }}").0,
        "undefined variable \"$i\""
    );
    // ... but reaches the else branch, and one declared in the pipeline reaches both.
    ok("{{ if .A }}{{ $x := 1 }}{{ else }}{{ $x }}{{ end }}");
    ok("{{ with $x := .A }}{{ $x }}{{ else }}{{ $x }}{{ end }}");
    // A definition has a scope of its own.
    assert_eq!(
        err_at(r#"{{ $x := 1 }}{{ define "d" }}{{ $x }}{{ end }}"#).0,
        "undefined variable \"$x\""
    );
    assert_eq!(
        err_at(r#"{{ $x := 1 }}{{ block "b" . }}{{ $x }}{{ end }}"#).0,
        "undefined variable \"$x\""
    );
    // A declaration is visible in its own pipeline (Go adds it before the commands).
    ok("{{ $x := 1 }}{{ $x := $x }}");
    // Assignment to an undeclared variable parses (Go fails when it runs).
    ok("{{ $z = 1 }}");
    // The first error in reading order wins.
    assert_eq!(err_at("{{ $a }}{{ end }}").0, "undefined variable \"$a\"");
    assert_eq!(err_at("{{ end }}{{ $a }}").0, "unexpected {{end}}");
}

// ---- control structures ----

#[test]
fn if_else_if_else_chains() {
    let src = "{{if .A}}a{{else if .B}}b{{else if .C}}c{{else}}d{{end}}";
    let t = ok(src);
    let Node::If(b) = &t.root[0] else {
        panic!("{:?}", t.root)
    };
    assert_eq!(&src[b.span.clone()], src);
    assert_eq!(texts_of(&b.list), ["a"]);
    // {{else if}} is an else list holding one If, ending at the same {{end}}.
    let [Node::If(b2)] = b.else_list.as_deref().unwrap() else {
        panic!("{b:?}")
    };
    assert_eq!(
        &src[b2.span.clone()],
        "{{else if .B}}b{{else if .C}}c{{else}}d{{end}}"
    );
    let [Node::If(b3)] = b2.else_list.as_deref().unwrap() else {
        panic!("{b2:?}")
    };
    assert_eq!(texts_of(b3.else_list.as_deref().unwrap()), ["d"]);
    assert_eq!(err_at("{{if}}{{end}}").0, "missing value for if");
    let (m, at) = err_at("{{if .}}a{{else}}b{{else}}c{{end}}");
    assert_eq!(
        (m.as_str(), at),
        ("expected end; found {{else}}", "{{else}}")
    );
    assert_eq!(
        err_at("{{if .}}a{{else x}}{{end}}").0,
        "unexpected \"x\" in else"
    );
}

fn texts_of(list: &[Node]) -> Vec<String> {
    list.iter()
        .filter_map(|n| match n {
            Node::Text { text, .. } => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn with_and_else_with() {
    let t = ok("{{with .A}}a{{else with .B}}b{{else}}c{{end}}");
    let Node::With(b) = &t.root[0] else { panic!() };
    assert!(matches!(b.else_list.as_deref(), Some([Node::With(_)])));
    // else if belongs to if only; Go then reads `if` as the else list's first item.
    assert_eq!(
        err_at("{{with .A}}{{else if .B}}{{end}}").0,
        "unexpected <if> in input"
    );
    assert_eq!(
        err_at("{{if .A}}{{else with .B}}{{end}}").0,
        "unexpected <with> in input"
    );
    assert_eq!(
        err_at("{{range .A}}{{else if .B}}{{end}}").0,
        "unexpected <if> in input"
    );
}

#[test]
fn range_else_break_continue() {
    let src = "{{range .L}}{{if .}}{{break}}{{end}}{{continue}}{{else}}none{{end}}";
    let t = ok(src);
    let Node::Range(b) = &t.root[0] else { panic!() };
    assert!(matches!(&b.list[1], Node::Continue { span } if &src[span.clone()] == "{{continue}}"));
    assert_eq!(texts_of(b.else_list.as_deref().unwrap()), ["none"]);
    let (m, at) = err_at("{{break}}");
    assert_eq!((m.as_str(), at), ("{{break}} outside {{range}}", "break"));
    assert_eq!(
        err_at("{{if .}}{{continue}}{{end}}").0,
        "{{continue}} outside {{range}}"
    );
    // The else list is outside the loop.
    assert_eq!(
        err_at("{{range .}}{{else}}{{break}}{{end}}").0,
        "{{break}} outside {{range}}"
    );
    // A block body is a template of its own.
    assert_eq!(
        err_at(r#"{{range .}}{{block "b" .}}{{break}}{{end}}{{end}}"#).0,
        "{{break}} outside {{range}}"
    );
    assert_eq!(
        err_at("{{range .}}{{break 1}}{{end}}").0,
        "unexpected \"1\" in {{break}}"
    );
}

#[test]
fn unbalanced_end_else_and_eof() {
    let (m, at) = err_at("a\n{{ end }}");
    assert_eq!((m.as_str(), at), ("unexpected {{end}}", "{{ end }}"));
    assert_eq!(err_at("{{else}}").0, "unexpected {{else}}");
    assert_eq!(err_at("{{else if .}}").0, "unexpected {{else}}");
    // Go reports it at the end; the span is the innermost action still open.
    let src = "{{if .}}\n{{range .}}{{with .}}{{end}}x{{end}}";
    let e = err(src);
    assert_eq!(e.message, "unexpected EOF");
    assert_eq!(&src[e.span.clone()], "{{");
    assert_eq!(e.span.start, 0);
    assert_eq!(
        e.help.as_deref(),
        Some("this {{if}} has no {{end}}: add one where its body ends")
    );
    let e = err("{{define \"d\"}}{{if .}}{{else if .}}x");
    assert_eq!((e.message.as_str(), e.span.start), ("unexpected EOF", 22));
    let e = err("{{define \"d\"}}{{block \"b\" .}}{{end}}");
    assert_eq!(
        (e.span.start, e.help.unwrap().contains("{{define}}")),
        (0, true)
    );
    assert_eq!(err_at("{{end x}}").0, "unexpected \"x\" in end");
    assert_eq!(err_at("{{if .}}{{end}}{{end}}").0, "unexpected {{end}}");
}

// ---- define, template, block ----

#[test]
fn define_template_block() {
    let src = r#"{{define "a"}}A{{.}}{{end}}x{{template "a" .B}}{{template `a`}}{{block "b" .C}}B{{end}}"#;
    let t = ok(src);
    assert_eq!(t.defines.keys().collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(texts_of(&t.defines["a"].body), ["A"]);
    assert_eq!(
        &src[t.defines["a"].span.clone()],
        r#"{{define "a"}}A{{.}}{{end}}"#
    );
    let calls: Vec<(String, bool, &str)> = t
        .root
        .iter()
        .filter_map(|n| match n {
            Node::Template {
                name,
                pipe,
                name_span,
                ..
            } => Some((name.clone(), pipe.is_some(), &src[name_span.clone()])),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("a".to_string(), true, r#""a""#),
            ("a".to_string(), false, "`a`"),
            ("b".to_string(), true, r#""b""#)
        ]
    );
    assert_eq!(texts_of(&t.defines["b"].body), ["B"]);
    // Go's Tree.add: two non-empty definitions of a name are an error; an empty one is replaced.
    assert_eq!(
        err_at(r#"{{define "a"}}x{{end}}{{define "a"}}y{{end}}"#).0,
        "template: multiple definition of template \"a\""
    );
    let t = ok(r#"{{define "a"}} {{end}}{{define "a"}}y{{end}}{{define "a"}}{{end}}"#);
    assert_eq!(texts_of(&t.defines["a"].body), ["y"]);
    // A definition of the template's own name stands in for an empty main text.
    let t = ok(r#"{{define "t"}}main{{end}}"#);
    assert_eq!(texts_of(&t.root), ["main"]);
    // ... and the main text replaces an empty definition of its name (whitespace only).
    let t = ok(r#"{{define "t"}} {{end}}main"#);
    assert_eq!(texts_of(&t.root), ["main"]);
    assert_eq!(texts_of(&t.defines["t"].body), ["main"]);
    let t = ok(r#"{{define "t"}} {{end}}"#);
    assert!(t.root.is_empty());
    assert_eq!(
        err_at(r#"{{define "t"}}x{{end}}y"#).0,
        "template: multiple definition of template \"t\""
    );
    // define only at the top level.
    assert_eq!(
        err_at(r#"{{if .}}{{define "a"}}x{{end}}{{end}}"#).0,
        "unexpected <define> in command"
    );
    assert_eq!(
        err_at("{{define a}}x{{end}}").0,
        "unexpected \"a\" in define clause"
    );
    assert_eq!(
        err_at(r#"{{define "a"}}x{{else}}y{{end}}"#).0,
        "unexpected {{else}} in define clause"
    );
    assert_eq!(
        err_at(r#"{{block "b"}}x{{end}}"#).0,
        "missing value for block clause"
    );
    assert_eq!(
        err_at("{{template}}").0,
        "unexpected \"}}\" in template clause"
    );
    assert_eq!(err_at(r#"{{define "\q"}}{{end}}"#).0, "invalid syntax");
}

// ---- operands: fields, chains, identifiers, constants ----

#[test]
fn fields_variables_and_chains() {
    assert!(
        matches!(first_arg("{{ .A.B.C }}"), Arg::Field { names, .. } if names == ["A", "B", "C"])
    );
    let t = ok("{{ $x := . }}{{ $x.A.B }}");
    assert!(
        matches!(only_action_arg_at(&t, 1), Arg::Variable { name, fields, .. } if name == "$x" && fields == ["A", "B"])
    );
    let src = "{{ (index .L 0).Name.First }}";
    match first_arg(src) {
        Arg::Chain { span, node, fields } => {
            assert_eq!(&src[span], "(index .L 0).Name.First");
            assert_eq!(fields, ["Name", "First"]);
            assert!(matches!(*node, Arg::Pipe { .. }));
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(first_arg("{{ (.A).B }}"), Arg::Chain { .. }));
    assert_eq!(err_at("{{ true.A }}").0, "unexpected . after term \"true\"");
    assert_eq!(
        err_at(r#"{{ "x".A }}"#).0,
        "unexpected . after term \"\\\"x\\\"\""
    );
    assert_eq!(err_at("{{ ..A }}").0, "unexpected . after term \".\"");
    assert_eq!(err_at("{{ nil.A }}").0, "unexpected . after term \"nil\"");
    assert_eq!(err_at("{{ (1)(2) }}").0, "unexpected \"(\" in operand");
}

fn only_action_arg_at(t: &Template, action: usize) -> Arg {
    t.root
        .iter()
        .filter_map(|n| match n {
            Node::Action { pipe, .. } => Some(pipe.cmds[0].args[0].clone()),
            _ => None,
        })
        .nth(action)
        .expect("action")
}

#[test]
fn functions_must_be_defined() {
    assert!(matches!(first_arg("{{ len .A }}"), Arg::Identifier { name, .. } if name == "len"));
    let (m, at) = err_at("{{ .A | nosuch 1 }}");
    assert_eq!(
        (m.as_str(), at),
        ("function \"nosuch\" not defined", "nosuch")
    );
    // A near miss is named.
    let e = err("{{ .A | trimm }}");
    assert_eq!(e.message, "function \"trimm\" not defined");
    assert_eq!(e.help.as_deref(), Some("did you mean `trim`?"));
    assert_eq!(
        err("{{ toJSON . }}").help.as_deref(),
        Some("did you mean `toJson`?")
    );
    // Keywords are no functions.
    assert_eq!(err_at("{{ end 1 }}").0, "unexpected \"1\" in end");
}

#[test]
fn nil_bools_and_numbers() {
    assert!(matches!(first_arg("{{ nil }}"), Arg::Nil { .. }));
    assert!(matches!(
        first_arg("{{ true }}"),
        Arg::Bool { value: true, .. }
    ));
    assert!(matches!(
        first_arg("{{ false }}"),
        Arg::Bool { value: false, .. }
    ));
    let cases: &[(&str, Number)] = &[
        ("42", Number::Int(42)),
        ("-7", Number::Int(-7)),
        ("+7", Number::Int(7)),
        ("0x1F", Number::Int(31)),
        ("0X1f", Number::Int(31)),
        ("0o17", Number::Int(15)),
        ("017", Number::Int(15)),
        ("0b101", Number::Int(5)),
        ("1_000_000", Number::Int(1_000_000)),
        ("0x_FF", Number::Int(255)),
        ("1.5", Number::Float(1.5)),
        (".5", Number::Float(0.5)),
        ("1e3", Number::Float(1000.0)),
        ("1E-2", Number::Float(0.01)),
        ("1_0.2_5", Number::Float(10.25)),
        ("0x1p-2", Number::Float(0.25)),
        ("0x1.8p1", Number::Float(3.0)),
        ("0x1e", Number::Int(30)),
        ("9223372036854775807", Number::Int(i64::MAX)),
        ("-9223372036854775808", Number::Int(i64::MIN)),
        ("18446744073709551615", Number::Uint(u64::MAX)),
        ("'a'", Number::Int(97)),
        ("'\\n'", Number::Int(10)),
        ("'\\''", Number::Int(39)),
        ("'\\x41'", Number::Int(65)),
        ("'\\101'", Number::Int(65)),
        ("'\\u00e9'", Number::Int(0xe9)),
        ("'é'", Number::Int(0xe9)),
    ];
    for (text, want) in cases {
        let src = format!("{{{{ {text} }}}}");
        match first_arg(&src) {
            Arg::Number {
                text: t,
                value,
                span,
            } => {
                assert_eq!((t.as_str(), value), (*text, *want), "{src}");
                assert_eq!(&src[span], *text);
            }
            other => panic!("{src}: {other:?}"),
        }
    }
    let bad: &[(&str, &str)] = &[
        ("08", "integer overflow: \"08\""),
        (
            "99999999999999999999",
            "integer overflow: \"99999999999999999999\"",
        ),
        (
            "-9223372036854775809",
            "integer overflow: \"-9223372036854775809\"",
        ),
        ("1__0", "illegal number syntax: \"1__0\""),
        ("1_", "illegal number syntax: \"1_\""),
        ("0x", "illegal number syntax: \"0x\""),
        ("1e400", "illegal number syntax: \"1e400\""),
        ("1.2.3", "unexpected \".3\" in operand"),
        ("0b102", "bad number syntax: \"0b102\""),
        ("12ab", "bad number syntax: \"12a\""),
        ("''", "invalid syntax"),
        ("'ab'", "malformed character constant: 'ab'"),
        ("'\\q'", "invalid syntax"),
        ("'a", "unterminated character constant"),
        // Go's complex constants have no place in the syntax tree.
        (
            "0i",
            "complex constant 0i is not supported (the template engine has real numbers only)",
        ),
        (
            "1+2i",
            "complex constant 1+2i is not supported (the template engine has real numbers only)",
        ),
    ];
    for (text, want) in bad {
        let src = format!("{{{{ {text} }}}}");
        assert_eq!(err_at(&src).0, *want, "{src}");
    }
}

#[test]
fn strings_interpreted_and_raw() {
    let cases: &[(&str, &str)] = &[
        (r#""plain""#, "plain"),
        (r#""a\tb\n\\\"""#, "a\tb\n\\\""),
        (r#""\x41\101\u00e9\U0001F600""#, "AAé😀"),
        (r#""é""#, "é"),
        ("`raw \\n {{ }}`", "raw \\n {{ }}"),
        ("`two\nlines`", "two\nlines"),
        ("`cr\r\nlf`", "cr\nlf"),
    ];
    for (text, want) in cases {
        let src = format!("{{{{ print {text} }}}}");
        let t = ok(&src);
        match &only_pipe(&t).cmds[0].args[1] {
            Arg::String { value, span, .. } => {
                assert_eq!(value, want, "{src}");
                assert_eq!(&src[span.clone()], *text);
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(err_at(r#"{{ print "\q" }}"#).0, "invalid syntax");
    assert_eq!(err_at(r#"{{ print "\'" }}"#).0, "invalid syntax");
    assert_eq!(err_at(r#"{{ print "\400" }}"#).0, "invalid syntax");
    // A backslash before a non-ASCII character (regression: this once sliced inside it).
    assert_eq!(err_at("{{ print \"\\é\" }}").0, "invalid syntax");
    assert_eq!(err_at("{{ '\\é' }}").0, "invalid syntax");
    assert_eq!(err_at("{{ print \"abc }}").0, "unterminated quoted string");
    assert_eq!(
        err_at("{{ print \"a\nb\" }}").0,
        "unterminated quoted string"
    );
    assert_eq!(
        err_at("{{ print `abc }}").0,
        "unterminated raw quoted string"
    );
}

// ---- lexer errors and where they are ----

#[test]
fn lexer_errors_with_spans() {
    let (m, at) = err_at("x {{ .A");
    // Go reports it at the end; the span is the `{{` left open.
    assert_eq!((m.as_str(), at), ("unclosed action", "{{"));
    // Newlines are spaces inside an action (Go 1.16): an action may span lines ...
    ok("{{ .A\n| len }}");
    // ... and an unclosed one says where it started.
    assert_eq!(err_at("a\n{{ .A\n\n").0, "unclosed action started at t:2");
    let e = err("{{ print (len (.A) }}");
    assert_eq!(
        (e.message.as_str(), e.span.clone()),
        ("unclosed left paren", 9..10)
    );
    // Go 1.19's lexer emits the `)` before its own error, so the parser reports it.
    assert_eq!(err_at("{{ .A) }}").0, "unexpected \")\" in command");
    assert_eq!(err_at("{{if .A)}}x{{end}}").0, "unexpected \")\" in if");
    let (m, at) = err_at("{{ .A# }}");
    assert_eq!((m.as_str(), at), ("bad character U+0023 '#'", ".A"));
    assert_eq!(
        err_at("{{ \u{1} }}").0,
        "unrecognized character in action: U+0001"
    );
    assert_eq!(err_at("{{ # }}").0, "unexpected \"#\" in command");
    // U+00A0 is no space to Go, and not printable either.
    assert_eq!(
        err_at("{{ \u{a0} }}").0,
        "unrecognized character in action: U+00A0"
    );
    assert_eq!(
        err_at("{{ end \"a\u{a0}\" }}").0,
        "unexpected \"\\\"a\\u00a0\\\"\" in end"
    );
    assert_eq!(err_at("{{ .A}x }}").0, "bad character U+007D '}'");
    assert_eq!(err_at("{{ .A }x}}").0, "unexpected \"}\" in operand");
    assert_eq!(
        err_at("{{ printf \"%d\" 1 \"\\q }}").0,
        "unterminated quoted string"
    );
}

#[test]
fn long_tokens_are_shown_as_go_shows_them() {
    // item.String(): `%.10q...` for a value over 10 bytes.
    assert_eq!(
        err_at("{{ end abcdefghijklmn }}").0,
        "unexpected \"abcdefghij\"... in end"
    );
    assert_eq!(err_at("{{ end if }}").0, "unexpected <if> in end");
}

// ---- robustness ----

#[test]
fn nesting_is_bounded() {
    use fuzzfile_template::parse::MAX_NESTING;
    let n = MAX_NESTING;
    ok(&format!(
        "{{{{ print {}1{} }}}}",
        "(".repeat(n),
        ")".repeat(n)
    ));
    ok(&format!("{}x{}", "{{if .}}".repeat(n), "{{end}}".repeat(n)));
    for deep in [
        format!(
            "{{{{ print {}1{} }}}}",
            "(".repeat(n + 1),
            ")".repeat(n + 1)
        ),
        format!("{}x{}", "{{if .}}".repeat(n + 1), "{{end}}".repeat(n + 1)),
        format!("{{{{if .}}}}{}x{{{{end}}}}", "{{else if .}}".repeat(n)),
        "{{ print (".repeat(10_000),
        "{{range .}}{{with .}}".repeat(50_000),
    ] {
        let e = err(&deep);
        assert!(
            e.message.starts_with("nesting deeper than"),
            "{}",
            e.message
        );
    }
}

/// A small deterministic generator (xorshift), so the test needs no crate.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn parses_or_errs_sanely(text: &str) {
    match parse("fuzz", text) {
        Ok(t) => check_text_spans(text, &t),
        Err(errs) => {
            assert_eq!(errs.len(), 1);
            let e = &errs[0];
            assert!(
                e.span.start <= e.span.end && e.span.end <= text.len(),
                "{text:?}: {e:?}"
            );
            assert!(text.is_char_boundary(e.span.start) && text.is_char_boundary(e.span.end));
            assert!(!e.message.is_empty());
            // Every failure names its cause; the parser's last-resort message never shows.
            assert_ne!(e.message, "syntax error", "{text:?}");
        }
    }
}

#[test]
fn never_panics_on_random_input() {
    let atoms = [
        "{{",
        "}}",
        "{{- ",
        " -}}",
        " ",
        "\n",
        "\t",
        "x",
        "if",
        "else",
        "end",
        "range",
        "with",
        "define",
        "template",
        "block",
        "break",
        "continue",
        ".",
        ".A",
        "$",
        "$x",
        ":=",
        "=",
        ",",
        "|",
        "(",
        ")",
        "\"s\"",
        "`r`",
        "'c'",
        "1",
        "-2",
        "0x1F",
        "1e3",
        "nil",
        "true",
        "len",
        "nosuch",
        "\\",
        "\\é",
        "\"\\é\"",
        "'\\é'",
        "\\u",
        "\\x4",
        "/*",
        "*/",
        "\"\\q\"",
        "_",
        "-",
        "}",
        "{",
        "'",
        "\"",
        "`",
        "é",
        "\u{0}",
        "{{end}}",
        "{{else}}",
        "{{if .}}",
        "{{range $i, $v := .}}",
        "{{define \"a\"}}",
        "{{block \"b\" .}}",
        "{{template \"a\"}}",
        "{{/* c */}}",
        "{{$x := 1}}",
    ];
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let n = 1 + rng.below(30);
        let text: String = (0..n).map(|_| atoms[rng.below(atoms.len())]).collect();
        parses_or_errs_sanely(&text);
    }
    // Arbitrary bytes, made UTF-8 as a file read lossily would be.
    for _ in 0..1000 {
        let n = rng.below(64);
        let bytes: Vec<u8> = (0..n)
            .map(|_| match rng.below(4) {
                0 => b"{}-$.()| \"'`\n"[rng.below(13)],
                _ => rng.next() as u8,
            })
            .collect();
        parses_or_errs_sanely(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn never_panics_on_cut_or_mutated_corpus_templates() {
    let mut rng = Rng(12345);
    for f in corpus_templates() {
        let text = std::fs::read_to_string(&f).unwrap();
        let bounds: Vec<usize> = (0..=text.len())
            .filter(|i| text.is_char_boundary(*i))
            .collect();
        for _ in 0..12 {
            let cut = bounds[rng.below(bounds.len())];
            parses_or_errs_sanely(&text[..cut]);
            let from = bounds[rng.below(bounds.len())];
            parses_or_errs_sanely(&text[from..]);
        }
        for _ in 0..4 {
            let mut bytes = text.clone().into_bytes();
            for _ in 0..3 {
                if bytes.is_empty() {
                    break;
                }
                let i = rng.below(bytes.len());
                let alphabet = b"{}-$.()| \"'`\nx";
                bytes[i] = alphabet[rng.below(alphabet.len())];
            }
            parses_or_errs_sanely(&String::from_utf8_lossy(&bytes));
        }
    }
}

/// Parse time of each catalog template (release build): prints the median, mean and
/// slowest; fails if one takes 10 ms.
#[test]
#[ignore = "timing: cargo test --release -p fuzzfile_template --test parse -- --ignored --nocapture"]
fn parse_time_per_catalog_template() {
    let files = corpus_templates();
    let mut times: Vec<(f64, usize)> = files
        .iter()
        .map(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            for _ in 0..3 {
                parse("t", &text).unwrap();
            }
            let rounds = 20;
            let t0 = std::time::Instant::now();
            for _ in 0..rounds {
                parse("t", &text).unwrap();
            }
            (
                t0.elapsed().as_secs_f64() * 1e6 / f64::from(rounds),
                text.len(),
            )
        })
        .collect();
    if times.is_empty() {
        return;
    }
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    let n = times.len();
    let mean = times.iter().map(|t| t.0).sum::<f64>() / n as f64;
    let (max, bytes) = times[n - 1];
    eprintln!(
        "{n} templates: median {:.0} us, mean {mean:.0} us, slowest {max:.0} us ({bytes} bytes)",
        times[n / 2].0
    );
    assert!(max < 10_000.0, "a template took {max:.0} us to parse");
}
