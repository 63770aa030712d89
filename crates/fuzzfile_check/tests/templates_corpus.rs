//! The catalog's application templates (../shared/corpus/templates: 89 templates of the
//! Fuzzball catalog, main and older versions, each with its values file): every one is
//! rendered with its shipped values and checked, and every finding, at template positions,
//! is in one snapshot (`snapshots/templates_corpus__corpus_templates_render_and_every_finding_is_reviewed.snap`).
//!
//! Reviewed, finding by finding (what the snapshot holds and why each is real):
//! - `policy-retry-ignored` (warnings; alphafold2, hello_world, immune_builder, open-webui, in
//!   main and v3.4): the templates set `policy.retry`, which Fuzzball accepts and ignores.
//!   The position is the `retry` key in the template's own text (copied text: exact).
//! - `legacy-version` (notes): the templates of the older catalog versions are `version: v1`.
//! - `deprecated-key` (openpbs-example@14f5c0f): `requires`, replaced by `depends-on`.
//! - `mpi-slots-not-gpus` (lammps_gpu, main and v3.4): `implementation: openmpi` starts one
//!   rank per CPU core (2 by the shipped default of the cores value) while the job asks 1
//!   GPU per node: two ranks share one GPU. The message names the values it came from.
//! - `template-missing-value`: cesm tests `.PersistentVolumeName`, which its values file does
//!   not declare (the branch can never be taken: a leftover); ansys_ls_dyna_desktop@v3.4 reads
//!   four values its values file does not declare (`AnsysMechanicalDesktopContainerURI`, ...:
//!   the values file of that version names them otherwise).
//! - `invalid-value` errors (ansys_ls_dyna_desktop@v3.4 only): consequences of those missing
//!   values, really rendered as `<no value>` into the image URI, the secret, `cpu.cores` and
//!   `memory.size`; Fuzzball refuses that file. The only errors of the corpus.
//! - `template-fail` notes (nim_flux_webui, unsloth-studio, vllm-server, main and v3.4): the
//!   template's `fail` asks for a value shipped empty (an API key, a password); a note, not
//!   an error: it is how a template asks for a required value.
//!
//! Every branch (`check_branches`: each other option and boolean, the rest as shipped; the
//! findings only a branch reaches in `snapshots/templates_corpus__corpus_branches.snap`):
//! - cesm with `UseInlineAnimationScript=false`: the ingress `source.uri` is
//!   `{{.AnimationScriptURL}}`, shipped empty, and the template does not `fail` for it: a user
//!   who unchecks the box and gives no URL gets a workflow Fuzzball refuses. Real.

use fuzz_test_support::corpus::corpus_templates;
use fuzzfile_check::template::{self, Source, TemplateInput};
use fuzzfile_check::{Options, Severity};
use std::path::Path;

fn input(path: &Path) -> TemplateInput {
    let name = path
        .file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned();
    let values = template::values_file_paths(path)
        .into_iter()
        .find(|p| p.is_file())
        .map(|p| Source {
            display: p
                .file_name()
                .expect("a file name")
                .to_string_lossy()
                .into_owned(),
            text: std::fs::read_to_string(&p).expect("read values"),
        });
    TemplateInput {
        template: Source {
            display: name,
            text: std::fs::read_to_string(path).expect("read template"),
        },
        values,
        ..TemplateInput::default()
    }
}

#[test]
fn corpus_branches() {
    let Some(files) = corpus_templates() else {
        return;
    };
    let mut snap = String::new();
    for path in &files {
        let inp = input(path);
        let name = inp.template.display.clone();
        let t = template::check_branches(inp, &Options::default());
        let only_in_branches: Vec<_> = t
            .diagnostics
            .iter()
            .filter(|d| d.message.contains(" [with `"))
            .cloned()
            .collect();
        if !only_in_branches.is_empty() {
            snap.push_str(&format!(
                "=== {name}\n{}",
                fuzzfile_check::render::plain_diagnostics(
                    t.text(),
                    &t.line_index,
                    &only_in_branches
                )
            ));
        }
    }
    insta::assert_snapshot!(snap);
}

/// `--fix` on the catalog: the only fixes are the removal of `policy.retry` (copied template
/// text); each fixed template loses exactly those lines, renders, and has no finding it did
/// not have but for the ones fixed.
#[test]
fn corpus_fixes() {
    let Some(files) = corpus_templates() else {
        return;
    };
    let mut fixed_files = 0;
    for path in &files {
        let t = template::check(input(path), &Options::default());
        // Deleting `policy.retry` is unsafe: `--fix` alone leaves every template as it is.
        assert_eq!(template::fix_template(&t), t.text(), "{}", path.display());
        let fixed = template::fix_template_at(&t, fuzzfile_check::Applicability::Unsafe);
        if fixed == t.text() {
            continue;
        }
        fixed_files += 1;
        let removed: Vec<&str> = t
            .text()
            .lines()
            .filter(|l| !fixed.lines().any(|f| f == *l))
            .collect();
        assert!(
            removed
                .iter()
                .all(|l| l.trim() == "retry:" || l.trim().starts_with("attempts:")),
            "{}: {removed:?}",
            path.display()
        );
        assert_eq!(
            t.text().lines().count() - fixed.lines().count(),
            t.diagnostics
                .iter()
                .filter(|d| d.rule == fuzzfile_check::Rule::PolicyRetryIgnored)
                .count()
                * 2,
            "{}",
            path.display()
        );
        let mut again = input(path);
        again.template.text = fixed;
        let after = template::check(again, &Options::default());
        assert!(after.rendered.is_some());
        let key = |d: &fuzzfile_check::Diagnostic| (d.rule, d.message.clone());
        let before: Vec<_> = t.diagnostics.iter().map(key).collect();
        for d in &after.diagnostics {
            assert!(
                d.rule != fuzzfile_check::Rule::PolicyRetryIgnored && before.contains(&key(d)),
                "{}: after --fix: {d:#?}",
                path.display()
            );
        }
    }
    assert_eq!(fixed_files, 8, "the templates with policy.retry");
}

/// Templates whose errors are real (see the module comment).
const REVIEWED_ERRORS: &[&str] = &["ctrliq-ciq-fuzzball-catalog@v3.4__ansys_ls_dyna_desktop"];

#[test]
fn corpus_templates_render_and_every_finding_is_reviewed() {
    let Some(files) = corpus_templates() else {
        return;
    };
    assert_eq!(files.len(), 89, "the corpus has 89 templates");
    let mut snap = String::new();
    for path in &files {
        let inp = input(path);
        assert!(inp.values.is_some(), "{}: no values file", path.display());
        let name = inp.template.display.clone();
        let t = template::check(inp, &Options::default());
        // Every template parses and renders, or stops at its own reviewed `fail`.
        assert!(
            t.rendered.is_some()
                || t.diagnostics
                    .iter()
                    .all(|d| d.rule == fuzzfile_check::Rule::TemplateFail
                        && d.severity == Severity::Info),
            "{name}:\n{}",
            template::plain(&t)
        );
        let stem = name.trim_end_matches(".template.yaml");
        let errors = t
            .diagnostics
            .iter()
            .chain(t.values_findings.iter().flat_map(|f| f.diagnostics.iter()))
            .filter(|d| d.severity == Severity::Error)
            .count();
        assert!(
            errors == 0 || REVIEWED_ERRORS.contains(&stem),
            "{name}: an error not reviewed:\n{}",
            template::plain(&t)
        );
        let findings = template::plain(&t);
        if !findings.is_empty() {
            snap.push_str(&format!("=== {name}\n{findings}"));
        }
    }
    insta::assert_snapshot!(snap);
}
