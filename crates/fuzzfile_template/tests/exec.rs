//! The executor against Go: every case of `tests/exec_cases.txt` and `tests/funcs_cases.txt`
//! (the format of `tests/cases/engine.txt`: a template, its data, optional seed and clock) is
//! rendered here and compared with what Go's `text/template` with slim-sprig printed for it,
//! recorded in `tests/exec_cases.go.jsonl` and `tests/funcs_cases.go.jsonl` by
//! `scripts/go-template-render -batch` (Go 1.19, Debian's). An output must match byte for
//! byte; an error must be an error, with Go's message (what follows Go's `template: NAME:L:C:
//! executing ... at <...>: ` prefix), and a `fail` reached must be [`ExecErrorKind::Fail`]
//! with the template's message.
//!
//! `FUZZFILE_TEMPLATE_CASES=CASES.txt:RESULTS.jsonl` checks another pair the same way.

mod exec_check;

use std::path::Path;

use exec_check::{check, check_pair};

/// Go's executor: printing, missing keys, field chains, truth, if/with/range, variables and
/// their scopes, template calls, break/continue, the builtins and their errors.
#[test]
fn exec_cases_match_go() {
    check_pair("exec_cases");
}

/// The recorded results of exec_cases.txt are what Go prints for them now.
#[test]
fn exec_cases_record_is_gos() {
    exec_check::check_recorded_against_go("exec_cases");
}

/// Another case file and Go's results for it, named by `FUZZFILE_TEMPLATE_CASES`.
#[test]
fn cases_named_by_environment_match_go() {
    let Ok(spec) = std::env::var("FUZZFILE_TEMPLATE_CASES") else {
        return;
    };
    let Some((cases, results)) = spec.split_once(':') else {
        panic!("FUZZFILE_TEMPLATE_CASES=CASES.txt:RESULTS.jsonl");
    };
    let (n, bad) = check(Path::new(cases), Path::new(results));
    assert!(
        bad.is_empty(),
        "{} of {n} cases differ from Go:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

// ---- What Go cannot show: the source map, the notes, the limits, the error spans. ----------

use fuzzfile_template::{
    parse, render, ExecErrorKind, NoteKind, Origin, RenderOptions, Rendered, Value,
};

fn data(pairs: &[(&str, Value)]) -> Value {
    Value::Map(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

fn run(template: &str, data: &Value) -> Rendered {
    let t = parse("t", template).unwrap_or_else(|e| panic!("{template}: {e:?}"));
    render(&t, data, &RenderOptions::default()).unwrap_or_else(|e| panic!("{template}: {e:?}"))
}

/// Segments are in output order, cover every output byte once, and copied text is the
/// template's own bytes.
fn assert_map_covers(template: &str, r: &Rendered) {
    let mut at = 0;
    for s in &r.map.segments {
        assert_eq!(s.output.start, at, "{template}: gap or overlap at {at}");
        assert!(s.output.end > s.output.start, "{template}: empty segment");
        if let Origin::Text { template: t } = &s.origin {
            assert_eq!(
                &r.text[s.output.clone()],
                &template[t.clone()],
                "{template}: text segment"
            );
        }
        at = s.output.end;
    }
    assert_eq!(at, r.text.len(), "{template}: output not covered");
}

/// For every case of exec_cases.txt and funcs_cases.txt that renders, the source map covers
/// the output exactly and copied text maps to the same template bytes.
#[test]
fn source_map_covers_every_output_byte() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut rendered = 0;
    for stem in ["exec_cases", "funcs_cases"] {
        for (template, data) in exec_check::templates(&dir.join(format!("{stem}.txt"))) {
            let Ok(t) = parse("t", &template) else {
                continue;
            };
            if let Ok(r) = render(&t, &data, &RenderOptions::default()) {
                assert_map_covers(&template, &r);
                rendered += 1;
            }
        }
    }
    assert!(rendered > 100, "only {rendered} cases rendered");
}

fn origin_at<'a>(r: &'a Rendered, needle: &str) -> &'a Origin {
    let at = r
        .text
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} in {:?}", r.text));
    &r.map
        .segment_at(at)
        .unwrap_or_else(|| panic!("no segment at {at}"))
        .origin
}

fn action_values(o: &Origin) -> Vec<String> {
    match o {
        Origin::Action { values, .. } => values.clone(),
        o => panic!("not an action: {o:?}"),
    }
}

/// Printed text names the root values it came from: read directly, through `$`, through a
/// variable, through `range`'s and `with`'s dot, through a template call's dot, and from all
/// of a function's arguments.
#[test]
fn printed_values_name_their_root_keys() {
    let d = data(&[
        ("A", Value::String("aaa".into())),
        ("B", Value::String("bbb".into())),
        ("L", Value::List(vec![Value::String("lll".into())])),
        (
            "M",
            Value::Map([("K".to_string(), Value::String("kkk".into()))].into()),
        ),
    ]);
    let template = concat!(
        "{{ .A }}|{{ $x := .B }}{{ $x }}|{{ range .L }}{{ . }}{{ end }}|",
        "{{ with .M }}{{ .K }}{{ end }}|{{ printf \"%s-%s\" .A $.B }}|",
        "{{ define \"sub\" }}{{ .B }}{{ end }}{{ template \"sub\" . }}|{{ \"lit\" }}|",
        "{{ range $i, $v := .L }}{{ $i }}{{ end }}|{{ $x = .A }}{{ $x }}"
    );
    let r = run(template, &d);
    assert_eq!(r.text, "aaa|bbb|lll|kkk|aaa-bbb|bbb|lit|0|aaa");
    assert_map_covers(template, &r);
    let values: Vec<Vec<String>> = r
        .map
        .segments
        .iter()
        .filter_map(|s| match &s.origin {
            Origin::Action { values, .. } => Some(values.clone()),
            Origin::Text { .. } => None,
        })
        .collect();
    let v = |k: &[&str]| k.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        values,
        vec![
            v(&["A"]),
            v(&["B"]),
            v(&["L"]),
            v(&["M"]),
            v(&["A", "B"]),
            v(&["B"]),
            v(&[]),
            v(&["L"]),
            v(&["A"]),
        ]
    );
    // The action's span is the action with its delimiters.
    match origin_at(&r, "kkk") {
        Origin::Action { action, .. } => assert_eq!(&template[action.clone()], "{{ .K }}"),
        o => panic!("{o:?}"),
    }
    assert_eq!(action_values(origin_at(&r, "aaa-bbb")), v(&["A", "B"]));
}

/// Copied text keeps exact template offsets; adjacent pieces merge only where they are
/// adjacent in the template too.
#[test]
fn text_segments_map_exactly() {
    let template = "ab{{/* c */}}cd{{ if true }}ef{{ end }}";
    let r = run(template, &data(&[]));
    assert_eq!(r.text, "abcdef");
    let texts: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = r
        .map
        .segments
        .iter()
        .map(|s| match &s.origin {
            Origin::Text { template } => (s.output.clone(), template.clone()),
            o => panic!("{o:?}"),
        })
        .collect();
    let cd = template.find("cd").unwrap_or(0);
    let ef = template.find("ef").unwrap_or(0);
    assert_eq!(
        texts,
        vec![(0..2, 0..2), (2..4, cd..cd + 2), (4..6, ef..ef + 2)]
    );
    assert_eq!(r.map.template_offset(3), Some(cd + 1));
    // Text inside a template called twice maps to the define's text both times.
    let template = "{{ define \"x\" }}X{{ end }}a{{ template \"x\" }}{{ template \"x\" }}";
    let r = run(template, &data(&[]));
    assert_eq!(r.text, "aXX");
    let x = template.find('X').unwrap_or(0);
    assert_eq!(r.map.template_range_exact(1..2), Some(x..x + 1));
    assert_eq!(r.map.template_range_exact(2..3), Some(x..x + 1));
    assert_eq!(r.map.segments.len(), 3);
}

/// A missing key is a note with the field's span and its path (`<no value>` printed, the
/// zero value in an argument), also when it is only an argument.
#[test]
fn missing_keys_are_noted() {
    let template = "{{ .Nope }}|{{ default \"d\" .Gone }}|{{ .M.Sub }}";
    let d = data(&[("M", Value::Map(Default::default()))]);
    let r = run(template, &d);
    assert_eq!(r.text, "<no value>|d|<no value>");
    let notes: Vec<(String, &str)> = r
        .notes
        .iter()
        .map(|n| match &n.kind {
            NoteKind::MissingKey { name } => (name.clone(), &template[n.span.clone()]),
        })
        .collect();
    assert_eq!(
        notes,
        vec![
            ("Nope".to_string(), ".Nope"),
            ("Gone".to_string(), ".Gone"),
            ("M.Sub".to_string(), ".M.Sub"),
        ]
    );
    assert_eq!(
        action_values(origin_at(&r, "<no value>")),
        vec!["Nope".to_string()]
    );
}

/// Errors point at the node Go reports: the field, the call.
#[test]
fn errors_have_go_spans_and_kinds() {
    let d = data(&[("S", Value::String("s".into()))]);
    let cases = [
        ("x {{ .S.Field }}", ".S.Field", ExecErrorKind::BadOperand),
        ("{{ index .S 9 }}", "index .S 9", ExecErrorKind::BadOperand),
        (
            "{{ template \"none\" }}",
            "\"none\"",
            ExecErrorKind::UndefinedTemplate,
        ),
        ("{{ trim 1 }}", "1", ExecErrorKind::WrongArgument),
    ];
    for (template, at, kind) in cases {
        let t = parse("t", template).unwrap_or_else(|e| panic!("{template}: {e:?}"));
        let e = render(&t, &d, &RenderOptions::default()).expect_err(template);
        assert_eq!(e.kind, kind, "{template}: {}", e.message);
        assert_eq!(&template[e.span.clone()], at, "{template}: {}", e.message);
    }
}

/// Template recursion stops at max_depth; output stops at max_output_bytes; deep nesting
/// stops at NEST_LIMIT, each as a Limit error and without exhausting the stack.
#[test]
fn limits_stop_the_render() {
    let d = data(&[("A", Value::Bool(true))]);
    let recurse = parse(
        "t",
        "{{ define \"r\" }}{{ if . }}{{ with . }}{{ template \"r\" . }}{{ end }}{{ end }}{{ end }}{{ template \"r\" . }}",
    )
    .expect("parses");
    let options = RenderOptions {
        max_depth: 50,
        ..RenderOptions::default()
    };
    let e = render(&recurse, &d, &options).expect_err("recursion");
    assert_eq!(e.kind, ExecErrorKind::Limit);
    assert_eq!(e.message, "exceeded maximum template depth (50)");
    // Deeper than the nesting bound: an error, not a stack overflow.
    let options = RenderOptions {
        max_depth: 1_000_000,
        ..RenderOptions::default()
    };
    let e = render(&recurse, &d, &options).expect_err("nesting");
    assert_eq!(e.kind, ExecErrorKind::Limit);
    assert!(e.message.contains("nested deeper than"), "{}", e.message);

    let big = parse("t", "{{ range until 1000 }}0123456789{{ end }}").expect("parses");
    let options = RenderOptions {
        max_output_bytes: 5_000,
        ..RenderOptions::default()
    };
    let e = render(&big, &d, &options).expect_err("output bound");
    assert_eq!(e.kind, ExecErrorKind::Limit);
    assert!(render(&big, &d, &RenderOptions::default()).is_ok());
    let e = render(
        &parse("t", "{{ repeat 1000000 \"0123456789\" }}").expect("parses"),
        &d,
        &options,
    )
    .expect_err("repeat bound");
    assert_eq!(e.kind, ExecErrorKind::Limit);

    // Nesting past what runs on the caller's stack runs on the executor's own, the same.
    let mut deep = String::from("{{ template \"d0\" . }}{{ define \"d30\" }}x{{ end }}");
    for k in 0..30 {
        deep.push_str(&format!(
            "{{{{ define \"d{k}\" }}}}{}{{{{ template \"d{}\" . }}}}{}{{{{ end }}}}",
            "{{ if true }}".repeat(5),
            k + 1,
            "{{ end }}".repeat(5)
        ));
    }
    let r = render(
        &parse("t", &deep).expect("parses"),
        &d,
        &RenderOptions::default(),
    );
    assert_eq!(r.map(|r| r.text), Ok("x".to_string()));

    // Loops that print nothing stop at max_steps.
    let spin = parse(
        "t",
        "{{ range until 1000 }}{{ range until 1000 }}{{ $x := 1 }}{{ end }}{{ end }}",
    )
    .expect("parses");
    let options = RenderOptions {
        max_steps: 100_000,
        ..RenderOptions::default()
    };
    let e = render(&spin, &d, &options).expect_err("step bound");
    assert_eq!(e.kind, ExecErrorKind::Limit);
    assert_eq!(e.message, "the template ran more than 100000 steps");
    // A map put into itself, and a list doubled into itself 40 times, stop printing with a
    // Limit error (Go recurses until its stack is exhausted, or prints terabytes).
    for template in [
        "{{ $d := dict }}{{ $_ := set $d \"self\" $d }}{{ $d }}",
        "{{ $d := dict }}{{ $_ := set $d \"self\" $d }}{{ toJson $d }}",
        "{{ $l := list 1 }}{{ range until 40 }}{{ $l = list $l $l }}{{ end }}{{ $l }}",
    ] {
        let small = RenderOptions {
            max_output_bytes: 100_000,
            ..RenderOptions::default()
        };
        let e = render(&parse("t", template).expect("parses"), &d, &small).expect_err(template);
        assert_eq!(e.kind, ExecErrorKind::Limit, "{template}: {}", e.message);
    }
    // Lists nested deeper than the printing bound by a loop are a Limit error where they are
    // made (dropping 100,000 nested lists overflowed the stack).
    let nest = parse(
        "t",
        "{{ $l := list }}{{ range until 100000 }}{{ $l = list $l }}{{ end }}x",
    )
    .expect("parses");
    let e = render(&nest, &d, &RenderOptions::default()).expect_err("nesting");
    assert_eq!(e.kind, ExecErrorKind::Limit);
    assert_eq!(e.message, "list made lists or maps nested deeper than 100");

    // A list longer than until's bound is an error, not a silent cut.
    let e = render(
        &parse("t", "{{ len (until 2000000) }}").expect("parses"),
        &d,
        &RenderOptions::default(),
    )
    .expect_err("until bound");
    assert_eq!(e.kind, ExecErrorKind::Limit);
}
