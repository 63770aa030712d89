//! The catalog's values files: every one of the corpus parses without an error with the types
//! and spans its text shows, each kind of mistake is an error at the right place with advice,
//! and overrides (`--set`, `--values FILE`) are typed by their declarations.

#![allow(clippy::unwrap_used)]

use fuzz_test_support::corpus::corpus_values_files;
use fuzzfile_template::values_file::{
    self, At, Override, ValueKind, ValueSource, ValuesError, ValuesFile,
};
use fuzzfile_template::Value;

fn parse_ok(text: &str) -> ValuesFile {
    let (file, errors) = values_file::parse(text);
    assert!(errors.is_empty(), "{errors:#?}");
    file
}

fn parse_err(text: &str) -> (ValuesFile, Vec<ValuesError>) {
    let (file, errors) = values_file::parse(text);
    assert!(!errors.is_empty(), "no error for:\n{text}");
    for e in &errors {
        assert!(!e.help().is_empty());
        let span = e.span();
        assert!(span.start <= span.end && span.end <= text.len(), "{e:?}");
    }
    (file, errors)
}

/// The text at an error's span.
fn at<'a>(text: &'a str, e: &ValuesError) -> &'a str {
    &text[e.span()]
}

/// Counts lines whose first word after the indentation and an optional `- ` is `key:`.
fn count_key(text: &str, key: &str) -> usize {
    text.lines()
        .filter(|l| {
            let t = l.trim_start();
            let t = t.strip_prefix("- ").unwrap_or(t).trim_start();
            t.starts_with(&format!("{key}:"))
        })
        .count()
}

#[test]
fn every_corpus_values_file_parses_with_the_types_its_text_shows() {
    let Some(files) = corpus_values_files() else {
        return;
    };
    assert_eq!(files.len(), 89, "the corpus has 89 values files");
    let (mut strings, mut uints, mut bools, mut secrets, mut options) = (0, 0, 0, 0, 0);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let (file, errors) = values_file::parse(&text);
        assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
        let count = |f: fn(&ValueKind) -> bool| file.decls.iter().filter(|d| f(&d.kind)).count();
        let name = path.display();
        assert_eq!(file.decls.len(), count_key(&text, "name"), "{name}");
        assert_eq!(
            count(|k| matches!(k, ValueKind::String(_))),
            count_key(&text, "string_value"),
            "{name}"
        );
        assert_eq!(
            count(|k| matches!(k, ValueKind::Uint(_))),
            count_key(&text, "uint_value"),
            "{name}"
        );
        assert_eq!(
            count(|k| matches!(k, ValueKind::Bool(_))),
            count_key(&text, "bool_value"),
            "{name}"
        );
        assert_eq!(
            count(|k| matches!(k, ValueKind::Secret { .. })),
            count_key(&text, "secret_value"),
            "{name}"
        );
        for d in &file.decls {
            // Every span points at what it stands for.
            assert_eq!(text[d.name.span.clone()].trim_matches('"'), d.name.value);
            assert_eq!(&text[d.field_span.clone()], d.kind.field());
            let default = &text[d.default_span.clone()];
            match &d.kind {
                ValueKind::Uint(u) => assert_eq!(default, u.to_string()),
                ValueKind::Bool(b) => assert_eq!(default, b.to_string()),
                ValueKind::String(s) | ValueKind::Secret { reference: s, .. } => {
                    assert!(default.contains(s.as_str()), "{name}: {default} / {s}")
                }
                ValueKind::Volume { .. } => {}
            }
            assert!(text[d.span.clone()].contains(&text[d.name.span.clone()]));
            if let Some(dn) = &d.display_name {
                assert!(!dn.value.is_empty());
            }
            if let Some(o) = &d.options {
                options += 1;
                assert!(o
                    .choices
                    .iter()
                    .any(|c| Value::String(c.value.clone()) == d.default_value()));
                for c in &o.choices {
                    assert_eq!(text[c.span.clone()].trim_matches('"'), c.value);
                }
            }
        }
        // The data root: one entry per declaration, each from its default.
        let data = file.data(&[]).unwrap();
        let Value::Map(root) = &data.root else {
            panic!("root is no map")
        };
        assert_eq!(root.len(), file.decls.len());
        for d in &file.decls {
            assert_eq!(root.get(&d.name.value), Some(&d.default_value()));
            assert_eq!(
                data.sources.get(&d.name.value),
                Some(&ValueSource::Default {
                    span: d.default_span.clone()
                })
            );
        }
        strings += count(|k| matches!(k, ValueKind::String(_)));
        uints += count(|k| matches!(k, ValueKind::Uint(_)));
        bools += count(|k| matches!(k, ValueKind::Bool(_)));
        secrets += count(|k| matches!(k, ValueKind::Secret { .. }));
    }
    eprintln!(
        "{} files: {strings} string, {uints} uint, {bools} bool, {secrets} secret values, {options} with options",
        files.len()
    );
    assert!(strings > 0 && uints > 0 && bools > 0 && secrets > 0 && options > 0);
}

#[test]
fn data_types_each_kind_as_the_template_sees_it() {
    let text = r#"values:
  - name: Image
    display_name: "Image"
    display_category: Container
    string_value: "docker://alpine:3.20"
  - name: Cores
    display_name: Cores
    uint_value: 8
  - name: Debug
    display_name: Debug
    bool_value: false
  - name: Token
    display_name: Token
    secret_value:
      reference: "secret://user/TOKEN"
      type: VALUE
  - name: Data
    display_name: Data
    volume_value: {reference: "volume://user/persistent/data"}
  - name: Scope
    display_name: Scope
    string_value: group
    options_input:
      options: [user, group, organization]
  - name: Timeout
    display_name: unquoted scalars of a string value are their text
    string_value: 30m
"#;
    let file = parse_ok(text);
    let data = file.data(&[]).unwrap();
    let Value::Map(root) = data.root else {
        panic!()
    };
    assert_eq!(root["Image"], Value::String("docker://alpine:3.20".into()));
    assert_eq!(root["Cores"], Value::Uint(8));
    assert_eq!(root["Debug"], Value::Bool(false));
    assert_eq!(root["Token"], Value::String("secret://user/TOKEN".into()));
    assert_eq!(
        root["Data"],
        Value::String("volume://user/persistent/data".into())
    );
    assert_eq!(root["Scope"], Value::String("group".into()));
    assert_eq!(root["Timeout"], Value::String("30m".into()));
    let token = file.decl("Token").unwrap();
    assert_eq!(
        token.kind,
        ValueKind::Secret {
            reference: "secret://user/TOKEN".into(),
            secret_type: Some("VALUE".into())
        }
    );
    assert_eq!(&text[token.default_span.clone()], "\"secret://user/TOKEN\"");
    assert_eq!(
        file.decl("Image")
            .unwrap()
            .display_category
            .as_ref()
            .unwrap()
            .value,
        "Container"
    );
    assert_eq!(
        file.decl("Scope").unwrap().choices(),
        Some(vec![
            Value::String("user".into()),
            Value::String("group".into()),
            Value::String("organization".into())
        ])
    );
    assert_eq!(
        file.decl("Debug").unwrap().choices(),
        Some(vec![Value::Bool(false), Value::Bool(true)])
    );
    assert_eq!(file.decl("Cores").unwrap().choices(), None);
}

#[test]
fn unknown_field_is_reported_at_its_key_with_the_field_it_is_likely_a_typo_of() {
    let text = "values:\n  - name: A\n    display_nme: a\n    uint_values: 3\n    uint_value: 3\n    displayCategory: x\n    colour: red\n";
    let (file, errors) = parse_err(text);
    assert_eq!(file.decls.len(), 1, "the declaration itself still counts");
    let found: Vec<(&str, Option<String>)> = errors
        .iter()
        .map(|e| match e {
            ValuesError::UnknownField { suggestion, .. } => (at(text, e), suggestion.clone()),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        found,
        vec![
            ("display_nme", Some("display_name".into())),
            ("uint_values", Some("uint_value".into())),
            ("displayCategory", Some("display_category".into())),
            ("colour", None),
        ]
    );
    assert_eq!(
        errors[0].to_string(),
        "unknown field `display_nme` in a value declaration (did you mean `display_name`?)"
    );
    assert_eq!(errors[0].help(), "write `display_name`");
    assert!(
        errors[3].help().contains("`string_value`"),
        "{}",
        errors[3].help()
    );
    // Inside secret_value, and at the top level.
    let text = "value:\n  - name: A\n";
    let (_, errors) = parse_err(text);
    assert!(
        matches!(&errors[0], ValuesError::UnknownField { suggestion: Some(s), .. } if s == "values")
    );
    let text = "values:\n  - name: S\n    secret_value:\n      refrence: x\n";
    let (_, errors) = parse_err(text);
    assert!(errors.iter().any(
        |e| matches!(e, ValuesError::UnknownField { suggestion: Some(s), .. } if s == "reference")
            && at(text, e) == "refrence"
    ));
    assert!(errors
        .iter()
        .any(|e| matches!(e, ValuesError::MissingReference { .. })));
}

#[test]
fn missing_and_duplicate_names() {
    let text = "values:\n  - display_name: no name\n    uint_value: 1\n  - name: \"\"\n    uint_value: 2\n";
    let (file, errors) = parse_err(text);
    assert!(file.decls.is_empty());
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert!(matches!(errors[0], ValuesError::MissingName { .. }));
    assert!(at(text, &errors[0]).starts_with("display_name: no name"));
    assert!(matches!(errors[1], ValuesError::MissingName { .. }));
    assert_eq!(at(text, &errors[1]), "\"\"");

    let text = "values:\n  - name: A\n    uint_value: 1\n  - name: B\n    bool_value: true\n  - name: A\n    string_value: x\n";
    let (file, errors) = parse_err(text);
    assert_eq!(file.names().collect::<Vec<_>>(), ["A", "B"]);
    let [ValuesError::DuplicateName {
        at: At::Decls(span),
        name,
        first,
    }] = errors.as_slice()
    else {
        panic!("{errors:#?}")
    };
    assert_eq!(name, "A");
    assert_eq!(
        *span,
        text.rfind("A").unwrap()..text.rfind("A").unwrap() + 1
    );
    assert_eq!(*first, text.find("A").unwrap()..text.find("A").unwrap() + 1);
    assert_eq!(
        file.decl("A").unwrap().kind,
        ValueKind::Uint(1),
        "the first one stays"
    );
}

#[test]
fn a_declaration_needs_exactly_one_value_field() {
    let text = "values:\n  - name: A\n    display_name: nothing\n  - name: B\n    string_value: x\n    uint_value: 2\n";
    let (file, errors) = parse_err(text);
    assert!(file.decls.is_empty());
    assert!(matches!(&errors[0], ValuesError::NoValue { name, .. } if name == "A"));
    assert_eq!(at(text, &errors[0]), "A");
    let ValuesError::TwoValues {
        name,
        first,
        second,
        first_span,
        ..
    } = &errors[1]
    else {
        panic!("{errors:#?}")
    };
    assert_eq!(
        (name.as_str(), *first, *second),
        ("B", "string_value", "uint_value")
    );
    assert_eq!(at(text, &errors[1]), "uint_value");
    assert_eq!(&text[first_span.clone()], "string_value");
    assert_eq!(errors.len(), 2);
}

#[test]
fn ill_typed_defaults_name_the_value_the_field_and_what_is_there() {
    let cases: &[(&str, &str, &str)] = &[
        ("uint_value: -1", "-1", "`uint_value` of value `V` must be an unsigned integer (0 to 9223372036854775807), not the integer `-1`"),
        ("uint_value: \"8\"", "\"8\"", "`uint_value` of value `V` must be an unsigned integer (0 to 9223372036854775807), not the string `8`"),
        ("uint_value: 1.5", "1.5", "`uint_value` of value `V` must be an unsigned integer (0 to 9223372036854775807), not the number `1.5`"),
        ("uint_value: 9223372036854775808", "9223372036854775808", "`uint_value` of value `V` must be an unsigned integer (0 to 9223372036854775807), not the number `9223372036854775808`"),
        ("bool_value: yes", "yes", "`bool_value` of value `V` must be a boolean (true or false), not the string `yes`"),
        ("bool_value: \"true\"", "\"true\"", "`bool_value` of value `V` must be a boolean (true or false), not the string `true`"),
        ("string_value: [a, b]", "[a, b]", "`string_value` of value `V` must be a string, not a list"),
        ("secret_value: \"secret://user/X\"", "\"secret://user/X\"", "`secret_value` of value `V` must be a mapping with a `reference`, not the string `secret://user/X`"),
    ];
    for (line, bad, message) in cases {
        let text = format!("values:\n  - name: V\n    display_name: v\n    {line}\n");
        let (file, errors) = parse_err(&text);
        assert!(file.decls.is_empty(), "{line}");
        assert_eq!(errors.len(), 1, "{line}: {errors:#?}");
        assert!(matches!(errors[0], ValuesError::WrongType { .. }), "{line}");
        assert_eq!(at(&text, &errors[0]), *bad, "{line}");
        assert_eq!(errors[0].to_string(), *message, "{line}");
    }
    let text = "values:\n  - name: V\n    uint_value: -1\n";
    let (_, errors) = parse_err(text);
    assert_eq!(
        errors[0].help(),
        "write a whole number of 0 or more without quotes, e.g. `8`"
    );
}

#[test]
fn options_input_default_must_be_among_the_options() {
    let text = "values:\n  - name: Scope\n    string_value: team\n    options_input:\n      options: [user, group]\n";
    let (file, errors) = parse_err(text);
    assert_eq!(file.decls.len(), 1);
    assert_eq!(errors.len(), 1);
    assert_eq!(at(text, &errors[0]), "team");
    assert_eq!(
        errors[0].to_string(),
        "`team` is not an option of value `Scope` (options: `user`, `group`)"
    );
    assert_eq!(
        errors[0].help(),
        "use one of `user`, `group`, or add it to `options_input.options`"
    );
    // Options on a value that is not a string, and options that are no list.
    let text = "values:\n  - name: N\n    uint_value: 1\n    options_input: {options: [1, 2]}\n  - name: S\n    string_value: a\n    options_input: {options: a}\n  - name: E\n    string_value: a\n    options_input: {options: []}\n";
    let (_, errors) = parse_err(text);
    assert!(matches!(&errors[0], ValuesError::OptionsNotString { name, .. } if name == "N"));
    assert_eq!(at(text, &errors[0]), "options_input");
    assert!(
        matches!(&errors[1], ValuesError::WrongType { field, .. } if *field == "options_input.options")
    );
    assert_eq!(at(text, &errors[1]), "a");
    assert!(
        matches!(&errors[2], ValuesError::WrongType { field, .. } if *field == "options_input.options")
    );
    assert_eq!(at(text, &errors[2]), "[]");
    assert_eq!(errors.len(), 3);
}

#[test]
fn bad_shapes_and_yaml_errors_are_errors_not_panics() {
    for text in [
        "",
        "- a\n- b\n",
        "values: 3\n",
        "values:\n  - just a string\n",
        "values: [\n",
        "other: 1\n",
    ] {
        let (_, errors) = parse_err(text);
        assert!(!errors.is_empty(), "{text:?}");
    }
    let text = "values:\n  - name: A\n    uint_value: [\n";
    let (_, errors) = parse_err(text);
    assert!(
        errors
            .iter()
            .any(|e| matches!(e, ValuesError::Syntax { .. })),
        "{errors:#?}"
    );
    // `values:` with nothing is an empty list.
    assert!(parse_ok("values:\n").decls.is_empty());
    assert!(parse_ok("values: []\n").decls.is_empty());
}

const DECLS: &str = r#"values:
  - name: Cores
    display_name: Cores
    uint_value: 4
  - name: Debug
    display_name: Debug
    bool_value: false
  - name: Image
    display_name: Image
    string_value: docker://alpine
  - name: Scope
    display_name: Scope
    string_value: group
    options_input:
      options: [user, group, organization]
  - name: Token
    display_name: Token
    secret_value:
      reference: ""
"#;

fn root(file: &ValuesFile, overrides: &[Override]) -> std::collections::BTreeMap<String, Value> {
    match file.data(overrides).unwrap().root {
        Value::Map(m) => m,
        other => panic!("{other:?}"),
    }
}

#[test]
fn set_overrides_are_typed_by_their_declaration_and_the_last_one_wins() {
    let file = parse_ok(DECLS);
    let sets: Vec<Override> = [
        "Cores=16",
        "Debug=true",
        "Image=docker://busybox:1=2",
        "Scope=user",
        "Token=secret://user/T",
        "Cores=32",
    ]
    .iter()
    .map(|s| Override::parse_set(s).unwrap())
    .collect();
    let data = file.data(&sets).unwrap();
    let Value::Map(m) = &data.root else { panic!() };
    assert_eq!(m["Cores"], Value::Uint(32));
    assert_eq!(m["Debug"], Value::Bool(true));
    assert_eq!(m["Image"], Value::String("docker://busybox:1=2".into()));
    assert_eq!(m["Scope"], Value::String("user".into()));
    assert_eq!(m["Token"], Value::String("secret://user/T".into()));
    assert_eq!(
        data.sources["Cores"],
        ValueSource::Override {
            at: At::Set {
                arg: "Cores=32".into(),
                span: 6..8
            }
        }
    );
    // An empty string is a string.
    assert_eq!(
        root(&file, &[Override::parse_set("Image=").unwrap()])["Image"],
        Value::String(String::new())
    );
}

#[test]
fn set_errors_say_what_is_wrong_and_all_are_reported() {
    let file = parse_ok(DECLS);
    let sets: Vec<Override> = [
        "cores=2",
        "Core=2",
        "Cores=four",
        "Cores=-1",
        "Cores=8.0",
        "Debug=yes",
        "Scope=team",
        "Nope=1",
    ]
    .iter()
    .map(|s| Override::parse_set(s).unwrap())
    .collect();
    let errors = file.data(&sets).unwrap_err();
    let shown: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        shown,
        [
            "no value is named `cores` (did you mean `Cores`?)",
            "no value is named `Core` (did you mean `Cores`?)",
            "`uint_value` of value `Cores` must be an unsigned integer (0 to 9223372036854775807), not `four`",
            "`uint_value` of value `Cores` must be an unsigned integer (0 to 9223372036854775807), not `-1`",
            "`uint_value` of value `Cores` must be an unsigned integer (0 to 9223372036854775807), not `8.0`",
            "`bool_value` of value `Debug` must be a boolean (true or false), not `yes`",
            "`team` is not an option of value `Scope` (options: `user`, `group`, `organization`)",
            "no value is named `Nope`",
        ]
    );
    assert_eq!(
        errors[7].help(),
        "the template's values are `Cores`, `Debug`, `Image`, `Scope`, `Token`"
    );
    assert_eq!(
        errors[0].at(),
        &At::Set {
            arg: "cores=2".into(),
            span: 0..5
        }
    );
    assert_eq!(
        errors[2].at(),
        &At::Set {
            arg: "Cores=four".into(),
            span: 6..10
        }
    );
    for bad in ["Cores", "=3", ""] {
        let e = Override::parse_set(bad).unwrap_err();
        assert!(matches!(e, ValuesError::BadSet { .. }), "{bad}");
        assert_eq!(e.to_string(), format!("`--set {bad}` is not NAME=VALUE"));
    }
}

#[test]
fn values_file_overrides_in_both_shapes() {
    let file = parse_ok(DECLS);
    let plain = "Cores: 12\nDebug: true\nImage: 3.5\nScope: organization\nToken: {reference: \"secret://user/X\"}\n";
    let o = Override::parse_file("mine.yaml", plain).unwrap();
    let data = file.data(&[o]).unwrap();
    let Value::Map(m) = &data.root else { panic!() };
    assert_eq!(m["Cores"], Value::Uint(12));
    assert_eq!(m["Debug"], Value::Bool(true));
    assert_eq!(
        m["Image"],
        Value::String("3.5".into()),
        "a string value takes any scalar's text"
    );
    assert_eq!(m["Scope"], Value::String("organization".into()));
    assert_eq!(m["Token"], Value::String("secret://user/X".into()));
    let ValueSource::Override {
        at: At::File { path, span },
    } = &data.sources["Cores"]
    else {
        panic!("{:?}", data.sources["Cores"])
    };
    assert_eq!((&**path, &plain[span.clone()]), ("mine.yaml", "12"));

    let shaped = "values:\n  - name: Cores\n    display_name: ignored\n    uint_value: 2\n  - name: Token\n    secret_value: {reference: \"secret://user/Y\"}\n";
    let o = Override::parse_file("shaped.yaml", shaped).unwrap();
    let m = root(&file, &[o]);
    assert_eq!(m["Cores"], Value::Uint(2));
    assert_eq!(m["Token"], Value::String("secret://user/Y".into()));
    assert_eq!(
        m["Debug"],
        Value::Bool(false),
        "the others keep their defaults"
    );

    // Ill-typed entries of a file, in both shapes.
    let o =
        Override::parse_file("bad.yaml", "Cores: \"8\"\nDebug: 1\nScope: [a]\nCorse: 3\n").unwrap();
    let errors = file.data(&[o]).unwrap_err();
    let shown: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        shown,
        [
            "`uint_value` of value `Cores` must be an unsigned integer (0 to 9223372036854775807), not the string `8`",
            "`bool_value` of value `Debug` must be a boolean (true or false), not the integer `1`",
            "`string_value` of value `Scope` must be a string, not a list",
            "no value is named `Corse` (did you mean `Cores`?)",
        ]
    );
    let o = Override::parse_file(
        "bad.yaml",
        "values:\n  - name: Cores\n    string_value: x\n",
    )
    .unwrap();
    let errors = file.data(&[o]).unwrap_err();
    assert_eq!(errors[0].to_string(), "`uint_value` of value `Cores` must be an unsigned integer (0 to 9223372036854775807), not a `string_value`");
    let errors = Override::parse_file("bad.yaml", "values:\n  - name: Cores\n    uint_value: -3\n")
        .unwrap_err();
    assert!(
        matches!(&errors[0], ValuesError::WrongType { at: At::File { path, span }, .. } if &**path == "bad.yaml" && *span == (40..42)),
        "{errors:#?}"
    );
    let errors = Override::parse_file("bad.yaml", "Cores: [\n").unwrap_err();
    assert!(matches!(
        &errors[0],
        ValuesError::Syntax {
            at: At::File { .. },
            ..
        }
    ));
    assert!(Override::parse_file("empty.yaml", "")
        .unwrap()
        .entries
        .is_empty());
}

#[test]
fn anchors_aliases_and_merge_keys_are_read_as_yaml_v3_reads_them() {
    let text = "values:\n  - &base\n    name: A\n    display_name: shared label\n    uint_value: 2\n  - <<: *base\n    name: B\n  - name: C\n    display_name: *x\n    string_value: &x label\n";
    let (file, errors) = values_file::parse(text);
    // `*x` before `&x` is an unresolved alias: the YAML error at it (and no second one about
    // its type); the rest parses.
    assert_eq!(file.names().collect::<Vec<_>>(), ["A", "B", "C"]);
    assert_eq!(file.decl("B").unwrap().kind, ValueKind::Uint(2));
    assert_eq!(
        file.decl("B").unwrap().display_name.as_ref().unwrap().value,
        "shared label"
    );
    // The merged field's span is in the anchor's text.
    let b = file.decl("B").unwrap();
    assert_eq!(&text[b.default_span.clone()], "2");
    assert!(b.default_span.start < text.find("<<").unwrap());
    let [ValuesError::Syntax { message, .. }] = errors.as_slice() else {
        panic!("one error, the YAML one: {errors:#?}")
    };
    assert!(message.contains("*x"), "{message}");
}
