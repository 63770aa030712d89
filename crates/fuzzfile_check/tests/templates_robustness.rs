//! Any text checked as a template, with any values file, gives findings and never panics:
//! every fuzz seed, spec file and example of the repository, each as a template, as a values
//! file, and its beginnings inside an action (unbalanced actions and strings).

use fuzz_test_support::corpus::files_below;
use fuzzfile_check::template::{self, Source, TemplateInput};
use fuzzfile_check::Options;
use std::path::Path;

fn texts() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out: Vec<String> = ["fuzz/seeds", "tests/specs", "examples"]
        .iter()
        .flat_map(|d| files_below(&root.join(d)))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .filter(|t| t.len() < 200_000)
        .collect();
    out.sort();
    out
}

fn src(text: &str) -> Source {
    Source {
        display: "x".into(),
        text: text.into(),
    }
}

#[test]
fn any_text_as_a_template_or_values_file() {
    let texts = texts();
    assert!(texts.len() > 50, "the repository's files were not found");
    let values = "values:\n  - name: A\n    string_value: a\n  - name: N\n    uint_value: 3\n";
    for (i, t) in texts.iter().enumerate() {
        let r = template::check(
            TemplateInput {
                template: src(t),
                values: Some(src(values)),
                set: vec!["A=b".into()],
                ..TemplateInput::default()
            },
            &Options::default(),
        );
        for d in &r.diagnostics {
            assert!(d.range.end as usize <= t.len(), "{d:?}");
        }
        // The same text as the values file of a small template.
        let other = &texts[(i + 1) % texts.len()];
        let r = template::check(
            TemplateInput {
                template: src("a: {{ .A }}\n"),
                values: Some(src(t)),
                override_files: vec![src(other)],
                ..TemplateInput::default()
            },
            &Options::default(),
        );
        for f in &r.values_findings {
            for d in &f.diagnostics {
                assert!(d.range.end as usize <= f.text.len(), "{d:?}");
            }
        }
        // Cut: unbalanced actions and strings.
        let mut cut = 7;
        while cut < t.len().min(2000) {
            if t.is_char_boundary(cut) {
                let _ = template::check(
                    TemplateInput {
                        template: src(&format!("{{{{ {} }}}}", &t[..cut])),
                        ..TemplateInput::default()
                    },
                    &Options::default(),
                );
            }
            cut += 97;
        }
    }
}
