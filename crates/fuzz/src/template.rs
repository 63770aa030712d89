//! Application templates for `fuzz plan` and `fuzz run`: a file named as a template
//! (`template.yaml`, `*.template.yaml`; `fuzzfile_check::template::is_template_name`) is
//! rendered with the values file beside it (`<name>.values.yaml`, else `values.yaml`:
//! `values_file_names`), then the `--values FILE`s, then the `--set NAME=VALUE`s, exactly as
//! `fuzzlint check` renders it (`fuzzfile_check::template::check`: a fixed seed and clock, so
//! the same template and values always give the same Fuzzfile). The rendered Fuzzfile is what
//! is lowered and run.
//!
//! A template that does not render (a parse error, a `fail` reached, an execution error) or
//! whose values are wrong (an unknown or ill-typed `--set`, a broken values file) is refused
//! with exit status 2, each problem as `FILE:LINE:COL: severity[code name]: message` at the
//! template's (or the values file's) own position. Findings of the rendered Fuzzfile are shown
//! at template positions too.

use fuzzfile_check::template::{self, FileFindings, Source, TemplateAnalysis, TemplateInput};
use fuzzfile_check::{Analysis, Diagnostic, LineIndex, Options, Rule, Severity};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `--values FILE` and `--set NAME=VALUE` of `fuzz plan` and `fuzz run`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct TemplateArgs {
    /// For an application template (`template.yaml`, `*.template.yaml`): values over the
    /// defaults of the values file beside it, from a file shaped like `values.yaml` or a
    /// mapping `Name: value`. May be given several times (later wins).
    #[arg(long = "values", value_name = "FILE")]
    pub values: Vec<PathBuf>,
    /// For an application template: a value over the defaults and `--values`:
    /// `--set Cores=8`. May be given several times.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
}

impl TemplateArgs {
    fn given(&self) -> bool {
        !self.values.is_empty() || !self.set.is_empty()
    }
}

/// Whether `path` is read as an application template (by its name).
pub fn is_template(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(template::is_template_name)
}

/// Why a template gives no Fuzzfile to lower: the message to print (every line of it), for
/// exit status 2.
#[derive(Debug)]
pub struct Refused(pub String);

/// `--values`/`--set` given for a file that is not a template: the message, else `None`.
pub fn misplaced_args(file: &Path, args: &TemplateArgs) -> Option<String> {
    (args.given() && !is_template(file)).then(|| {
        format!(
            "--values and --set are for application templates (`template.yaml`, `NAME.template.yaml`); {} is not named as one",
            file.display()
        )
    })
}

/// A template rendered into a Fuzzfile: the template's analysis (its findings at template
/// positions) and the analysis of the rendered text, which is what gets lowered.
pub struct RenderedTemplate {
    pub template: TemplateAnalysis,
    pub analysis: Analysis,
    /// The rendered text and its source map.
    pub rendered: fuzzfile_template::Rendered,
}

impl RenderedTemplate {
    /// The findings at template positions, at most `max` of them (then how many more),
    /// one `FILE:LINE:COL: …` line each with its help, and the values files' findings.
    pub fn describe(&self, max: usize) -> String {
        describe(&self.template, |_| true, max)
    }

    /// The number of error findings (template positions and values files).
    pub fn errors(&self) -> usize {
        count_errors(&self.template)
    }

    /// Rewrite the plan's source positions (`at`: line and column of the rendered Fuzzfile)
    /// as positions in the template, which is the file the plan names as its source: copied
    /// text maps exactly, printed text to the start of the action that printed it. The plan
    /// is left as it is if it does not go through JSON and back unchanged in shape.
    pub fn plan_positions_in_template(&self, plan: &mut fuzzfile_plan::Plan) {
        let Ok(mut v) = serde_json::to_value(&*plan) else {
            return;
        };
        let mapper =
            fuzzfile_check::template::map::Mapper::new(&self.rendered.map, &self.rendered.text);
        let index = LineIndex::new(&self.rendered.text);
        let text = self.rendered.text.as_str();
        let to_template = |line: u64, column: u64| -> Option<(u32, u32)> {
            let line = usize::try_from(line.checked_sub(1)?).ok()?;
            if line >= index.line_count() {
                return None;
            }
            let start = index.line_start(line) as usize;
            let skip = usize::try_from(column.checked_sub(1)?).ok()?;
            let mut chars = text.get(start..)?.char_indices().skip(skip);
            let (i, c) = chars.next()?;
            let off = start + i;
            let r = fuzzfile_check::TextRange::from_usize(off, off + c.len_utf8());
            let p = self.template.line_col(mapper.map(r).range.start);
            Some((p.line, p.column))
        };
        map_positions(&mut v, &to_template);
        if let Ok(p) = serde_json::from_value(v) {
            *plan = p;
        }
    }

    /// The template's own findings that did not stop it (a value it reads but nobody
    /// declares, printed as Go's `<no value>`): said on standard error before planning.
    pub fn template_notes(&self) -> String {
        describe(&self.template, is_template_rule, usize::MAX)
    }
}

/// Read `file` (already read as `bytes`), its values file and the `--values` files; render
/// it. Refused when it does not render or a value is wrong.
pub fn render(
    file: &Path,
    bytes: Vec<u8>,
    args: &TemplateArgs,
    options: &Options,
) -> Result<RenderedTemplate, Refused> {
    let text = String::from_utf8(bytes).map_err(|e| {
        Refused(format!(
            "error: {}: not UTF-8 text (invalid byte at offset {}): a template is a text file",
            file.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    let candidates = template::values_file_paths(file);
    let mut values = None;
    for p in &candidates {
        if p.is_file() {
            let text = fuzzfile_io::read_to_string(p, fuzzfile_io::Kind::FUZZFILE)
                .map_err(|e| Refused(format!("error: values file beside the template: {e}")))?;
            values = Some(Source {
                display: p.display().to_string(),
                text,
            });
            break;
        }
    }
    let mut override_files = Vec::new();
    for p in &args.values {
        let text = fuzzfile_io::read_to_string(p, fuzzfile_io::Kind::FUZZFILE)
            .map_err(|e| Refused(format!("error: --values: {e}")))?;
        override_files.push(Source {
            display: p.display().to_string(),
            text,
        });
    }
    let input = TemplateInput {
        template: Source {
            display: file.display().to_string(),
            text,
        },
        values,
        looked_for: candidates.iter().map(|p| p.display().to_string()).collect(),
        override_files,
        set: args.set.clone(),
    };
    let mut t = template::check(input, options);
    let template_errors = t
        .diagnostics
        .iter()
        .any(|d| is_template_rule(d.rule) && d.severity == Severity::Error)
        || t.values_findings
            .iter()
            .any(|f| f.diagnostics.iter().any(|d| d.severity == Severity::Error));
    match t.rendered.take() {
        Some(r) if !template_errors => Ok(RenderedTemplate {
            template: t,
            analysis: r.analysis,
            rendered: r.rendered,
        }),
        _ => {
            let n = count_template_errors(&t).max(1);
            let mut out = format!(
                "{}: the template does not render with these values ({n} error{}) — nothing to plan or run\n",
                t.input.template.display,
                if n == 1 { "" } else { "s" }
            );
            // Only the template's own findings: the rendered text's mean little when the
            // template is wrong.
            out.push_str(&describe(&t, is_template_rule, usize::MAX));
            Err(Refused(out))
        }
    }
}

/// Every `"at": {"line": L, "column": C}` in `v`, rewritten by `f`.
fn map_positions(v: &mut serde_json::Value, f: &dyn Fn(u64, u64) -> Option<(u32, u32)>) {
    match v {
        serde_json::Value::Object(o) => {
            for (k, x) in o.iter_mut() {
                if k == "at" {
                    let line = x.get("line").and_then(serde_json::Value::as_u64);
                    let column = x.get("column").and_then(serde_json::Value::as_u64);
                    if let (Some(l), Some(c)) = (line, column) {
                        if let Some((l, c)) = f(l, c) {
                            x["line"] = l.into();
                            x["column"] = c.into();
                        }
                        continue;
                    }
                }
                map_positions(x, f);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                map_positions(x, f);
            }
        }
        _ => {}
    }
}

/// The rules about the template itself (not about the Fuzzfile it renders).
fn is_template_rule(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::TemplateSyntaxError
            | Rule::TemplateFail
            | Rule::TemplateExecError
            | Rule::TemplateMissingValue
            | Rule::ValuesFileError
    )
}

fn count_errors(t: &TemplateAnalysis) -> usize {
    t.diagnostics
        .iter()
        .chain(t.values_findings.iter().flat_map(|f| f.diagnostics.iter()))
        .filter(|d| d.severity == Severity::Error)
        .count()
}

/// Template-rule errors and values-file errors, plus a `fail` of any severity (a `fail`
/// reached stops the render, whatever its severity says about the values).
fn count_template_errors(t: &TemplateAnalysis) -> usize {
    t.diagnostics
        .iter()
        .filter(|d| {
            is_template_rule(d.rule)
                && (d.severity == Severity::Error || d.rule == Rule::TemplateFail)
        })
        .count()
        + t.values_findings
            .iter()
            .flat_map(|f| f.diagnostics.iter())
            .filter(|d| d.severity == Severity::Error)
            .count()
}

/// `FILE:LINE:COL: severity[code name]: message` and `  help: …` for each finding of the
/// template that `keep` selects, then each values file's findings; at most `max` in all.
fn describe(t: &TemplateAnalysis, keep: impl Fn(Rule) -> bool, max: usize) -> String {
    let mut out = String::new();
    let mut shown = 0usize;
    let mut rest = 0usize;
    let template = FileFindings {
        display: t.input.template.display.clone(),
        text: t.input.template.text.clone(),
        line_index: LineIndex::new(&t.input.template.text),
        diagnostics: t
            .diagnostics
            .iter()
            .filter(|d| keep(d.rule))
            .cloned()
            .collect(),
    };
    let files =
        std::iter::once((&template, true)).chain(t.values_findings.iter().map(|f| (f, false)));
    for (f, is_template) in files {
        for d in &f.diagnostics {
            if shown == max {
                rest += 1;
                continue;
            }
            shown += 1;
            line(&mut out, f, is_template, d);
        }
    }
    fuzzfile_check::render::more_diagnostics(&mut out, rest);
    out
}

fn line(out: &mut String, f: &FileFindings, is_template: bool, d: &Diagnostic) {
    // A `values-file-error` among the template's findings is about a `--set` argument (its
    // message names it), which is in no file.
    let place = if is_template && d.rule == Rule::ValuesFileError {
        String::new()
    } else {
        let p = f.line_index.line_col(&f.text, d.range.start);
        format!("{}:{}:{}: ", f.display, p.line, p.column)
    };
    let _ = writeln!(
        out,
        "{place}{}[{} {}]: {}",
        d.severity,
        d.rule.code(),
        d.rule.name(),
        fuzzfile_check::render::printable(&d.message)
    );
    if let Some(h) = &d.help {
        let _ = writeln!(out, "  help: {}", fuzzfile_check::render::printable(h));
    }
}
