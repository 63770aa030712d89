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
            assert!(e.span.start <= e.span.end && e.span.end <= text.len(), "{e:?}");
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
    find(std::path::Path::new("/work/shared/corpus/templates"), &mut out);
    out.sort();
    out
}

#[test]
fn corpus_templates_parse() {
    let files = corpus_templates();
    if files.is_empty() {
        eprintln!("no corpus at /work/shared/corpus/templates; skipped");
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
