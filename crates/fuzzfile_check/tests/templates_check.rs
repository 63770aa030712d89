//! `fuzzfile_check::template::check` on small templates: where findings land in the template
//! (copied text, printed values, `range` bodies, `define`d templates, trimmed whitespace),
//! the values they name, overrides without a values file, and fixes.

use fuzzfile_check::template::{self, Source, TemplateInput};
use fuzzfile_check::{Options, Rule};

fn src(display: &str, text: &str) -> Source {
    Source {
        display: display.into(),
        text: text.into(),
    }
}

fn check(t: &str, values: Option<&str>) -> template::TemplateAnalysis {
    template::check(
        TemplateInput {
            template: src("app.template.yaml", t),
            values: values.map(|v| src("app.values.yaml", v)),
            ..TemplateInput::default()
        },
        &Options::default(),
    )
}

/// A template with every way text reaches the output: copied text after trimmed actions,
/// a value printed in a key and in a value, a `range` body rendered twice, a `define`d
/// template called with a value.
const TEMPLATE: &str = r#"{{- define "image" -}}
docker://{{ . }}
{{- end -}}
{{- $n := 0 }}
version: v4
jobs:
{{- range $i, $name := splitList "," .Names }}
  {{ $name }}:
    image:
      uri: {{ template "image" $.Image }}
    command: [echo, {{ $name }}]
    policy:
      retry:
        attempts: 2
    resource:
      memory:
        size: {{ $.Memory }}
{{- end }}
"#;

const VALUES: &str = r#"values:
  - name: Names
    display_name: Job names
    string_value: "one,Two"
  - name: Image
    display_name: The image
    string_value: "alpine:3.20"
  - name: Memory
    display_name: Memory per job
    string_value: "lots"
"#;

#[test]
fn positions_in_the_template() {
    let t = check(TEMPLATE, Some(VALUES));
    assert!(t.rendered.is_some(), "{}", template::plain(&t));
    insta::assert_snapshot!(template::plain(&t));
    // Two iterations, one template place: each finding once.
    let retry: Vec<_> = t
        .diagnostics
        .iter()
        .filter(|d| d.rule == Rule::PolicyRetryIgnored)
        .collect();
    assert_eq!(retry.len(), 1, "{retry:#?}");
    assert_eq!(retry[0].range.slice(TEMPLATE), "retry");
    // The size came from a value: the action, and the value named with its declaration.
    let size = t
        .diagnostics
        .iter()
        .find(|d| d.rule == Rule::InvalidValue && d.message.contains("lots"))
        .expect("the memory size is invalid");
    assert_eq!(size.range.slice(TEMPLATE), "{{ $.Memory }}");
    assert!(
        size.message
            .ends_with("(from value `Memory`, app.values.yaml:8:11)"),
        "{}",
        size.message
    );
    assert!(size.fix.is_none());
}

#[test]
fn the_fix_of_a_range_body_is_one_edit_of_the_template() {
    let values = VALUES.replace("\"lots\"", "\"1GiB\"");
    let t = check(TEMPLATE, Some(&values));
    // Deleting `policy.retry` is an unsafe fix: `--fix` alone leaves the template as it is.
    assert_eq!(template::fix_template(&t), TEMPLATE);
    let fixed = template::fix_template_at(&t, fuzzfile_check::Applicability::Unsafe);
    assert_eq!(
        fixed,
        TEMPLATE.replace(
            "    policy:\n      retry:\n        attempts: 2\n",
            "    policy:\n"
        ),
    );
    let after = check(&fixed, Some(&values));
    assert!(
        !after
            .diagnostics
            .iter()
            .any(|d| d.rule == Rule::PolicyRetryIgnored),
        "{}",
        template::plain(&after)
    );
}

#[test]
fn overrides_without_a_values_file_are_taken_as_written() {
    let t = "version: v4\njobs:\n  a:\n    image:\n      uri: {{ .Image }}\n    command: [sleep, \"{{ add .Seconds 1 }}\"]\n";
    let r = template::check(
        TemplateInput {
            template: src("a.template.yaml", t),
            override_files: vec![src("over.yaml", "Image: docker://alpine\nSeconds: 4\n")],
            ..TemplateInput::default()
        },
        &Options::default(),
    );
    let rendered = r.rendered.as_ref().expect("renders");
    assert!(
        rendered.rendered.text.contains("uri: docker://alpine")
            && rendered.rendered.text.contains("\"5\""),
        "{}",
        rendered.rendered.text
    );
    assert!(r.diagnostics.is_empty(), "{}", template::plain(&r));
    // A values-shaped --values file declares, when no values file is beside the template.
    let r = template::check(
        TemplateInput {
            template: src("a.template.yaml", t),
            override_files: vec![src(
                "v.yaml",
                "values:\n  - name: Image\n    string_value: docker://alpine\n  - name: Seconds\n    uint_value: 4\n",
            )],
            set: vec!["Seconds=9".into()],
            ..TemplateInput::default()
        },
        &Options::default(),
    );
    let rendered = r.rendered.as_ref().expect("renders");
    assert!(
        rendered.rendered.text.contains("\"10\""),
        "{}",
        rendered.rendered.text
    );
    assert!(r.diagnostics.is_empty(), "{}", template::plain(&r));
}

#[test]
fn disabled_template_rules_report_nothing() {
    let t = "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine\n    command: [echo, \"{{ .Nope }}\"]\n";
    let v = "values:\n  - name: Other\n    string_value: x\n";
    let on = check(t, Some(v));
    assert_eq!(on.diagnostics.len(), 1, "{}", template::plain(&on));
    assert_eq!(on.diagnostics[0].rule, Rule::TemplateMissingValue);
    let mut options = Options::default();
    options.rules.disabled.insert(Rule::TemplateMissingValue);
    let off = template::check(
        TemplateInput {
            template: src("t.template.yaml", t),
            values: Some(src("values.yaml", v)),
            ..TemplateInput::default()
        },
        &options,
    );
    assert!(off.diagnostics.is_empty(), "{}", template::plain(&off));
}

/// The corpus BLAST template with `BlastDbPath` outside the data mount stops at its own
/// `fail`. Filling the empty `CustomBlastDbFetchCmd` gets past that line only into the earlier
/// `BlastDbName and CustomBlastDbFetchCmd are mutually exclusive` (BlastDbName has a default),
/// which no more filling clears: the `fail` is the template's verdict on the values, not a
/// request for `CustomBlastDbFetchCmd`. With `BlastDbName` emptied instead, the last `fail`
/// ("Either ... have to be specified") is cleared by either value and asks for both.
#[test]
fn a_value_that_leads_into_another_fail_is_not_asked_for() {
    let dir =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/templates");
    let read = |suffix: &str| {
        std::fs::read_dir(&dir).ok().and_then(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.ends_with(&format!("__blast.{suffix}")))
                })
                .and_then(|p| std::fs::read_to_string(p).ok())
        })
    };
    let (Some(t), Some(v)) = (read("template.yaml"), read("values.yaml")) else {
        fuzz_test_support::system::skip(&format!("no BLAST template in {}", dir.display()));
        return;
    };
    let run = |set: &str| {
        template::check(
            TemplateInput {
                template: src("blast.template.yaml", &t),
                values: Some(src("blast.values.yaml", &v)),
                set: vec![set.into()],
                ..TemplateInput::default()
            },
            &Options::default(),
        )
    };
    let r = run("BlastDbPath=/elsewhere/db");
    let fails: Vec<_> = r
        .diagnostics
        .iter()
        .filter(|d| d.rule == Rule::TemplateFail)
        .collect();
    assert_eq!(fails.len(), 1, "{}", template::plain(&r));
    assert!(
        fails[0]
            .message
            .contains("BlastDbPath must be an absolute path")
            && !fails[0].message.contains("asks for")
            && fails[0].severity == fuzzfile_check::Severity::Error,
        "{}",
        template::plain(&r)
    );
    let r = run("BlastDbName=");
    let fails: Vec<_> = r
        .diagnostics
        .iter()
        .filter(|d| d.rule == Rule::TemplateFail)
        .collect();
    assert_eq!(fails.len(), 1, "{}", template::plain(&r));
    assert!(
        fails[0]
            .message
            .contains("Either CustomBlastDbFetchCmd or BlastDbName")
            && fails[0]
                .message
                .contains("it asks for `BlastDbName`, `CustomBlastDbFetchCmd`"),
        "{}",
        template::plain(&r)
    );
}
