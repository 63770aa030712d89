//! Checking an application template: a Fuzzfile written as a Go `text/template` (the
//! Fuzzball catalog's `template.yaml` with its `values.yaml`).
//!
//! [`check`] reads the values (the values file's declarations and defaults, then the
//! `--values` files, then `--set NAME=VALUE`), parses and renders the template with
//! `fuzzfile_template` (deterministic [`RenderOptions`] by default: a fixed seed and clock),
//! analyses the rendered text with every rule ([`crate::analyze_with`]) and maps each finding
//! back to the template through the render's source map ([`map`]):
//!
//! - a range in text the template copied maps exactly; a range in text an action printed
//!   maps to the action (`{{ ... }}`); when the printed text came from values, the message
//!   and the labels name them and where they are declared (`(from value `ContainerUri`,
//!   values.yaml:12:5)`);
//! - a fix is kept only when every edit falls in copied text ([`map::Mapper::exact`]): a fix
//!   never edits an action or the bytes a value printed;
//! - the template's own errors are findings of their own rules, at template positions:
//!   `template-syntax-error` (parse errors: unbalanced `{{ end }}`, unknown function),
//!   `template-fail` (a `fail` reached with these values: its own message),
//!   `template-exec-error` (wrong argument, bad field or index, undefined template, limits),
//!   `template-missing-value` (a `.Name` the values do not declare: Go prints `<no value>`;
//!   said once when there are no values at all) and `values-file-error` (in the values
//!   file, or about a `--set`).
//!
//! Which files are templates, and which values file belongs to one, is decided by name
//! ([`is_template_name`], [`values_file_names`]): `template.yaml` and `*.template.yaml` (`.yml`,
//! and `*.template.fz`). A Fuzzfile with another name is checked as a Fuzzfile even when it
//! holds `{{`: `{{` is common in plain Fuzzfiles (a `docker inspect --format {{.Id}}` in a
//! script), and rendering those would report errors that are not there.
//!
//! Pure: the caller reads the files ([`Source`]); each source is parsed once per check.

pub mod map;
pub mod values;

use crate::{analyze_with, fixes, Analysis, Diagnostic, Fix, LineIndex, Options, Rule, TextRange};
use fuzzfile_diagnostics::{Edit, Severity};
use fuzzfile_template::{ExecErrorKind, NoteKind, RenderOptions, Rendered, Value};
use std::collections::BTreeMap;

/// A file's text and the name it is shown by.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Source {
    pub display: String,
    pub text: String,
}

/// What a template is checked with.
#[derive(Clone, Debug, Default)]
pub struct TemplateInput {
    pub template: Source,
    /// The values file beside the template (its declarations and defaults), if one was found.
    pub values: Option<Source>,
    /// Where a values file was looked for (for the message when none was found).
    pub looked_for: Vec<String>,
    /// `--values FILE`, in order: each sets values over the ones before.
    pub override_files: Vec<Source>,
    /// `--set NAME=VALUE`, in order, applied last.
    pub set: Vec<String>,
}

/// Findings in a file other than the template (a values file).
#[derive(Clone, Debug)]
pub struct FileFindings {
    pub display: String,
    pub text: String,
    pub line_index: LineIndex,
    pub diagnostics: Vec<Diagnostic>,
}

/// The rendered text and its analysis.
#[derive(Debug)]
pub struct RenderedCheck {
    pub rendered: Rendered,
    pub analysis: Analysis,
}

/// Everything known about one template.
#[derive(Debug)]
pub struct TemplateAnalysis {
    pub input: TemplateInput,
    /// Of the template's text.
    pub line_index: LineIndex,
    /// Every finding at template positions, sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// Findings in the values file and the `--values` files (only those with findings).
    pub values_findings: Vec<FileFindings>,
    /// The render and the analysis of its text, when the template rendered.
    pub rendered: Option<RenderedCheck>,
    pub options: Options,
    pub render_options: RenderOptions,
}

impl TemplateAnalysis {
    /// The template's text.
    pub fn text(&self) -> &str {
        &self.input.template.text
    }
    pub fn line_col(&self, offset: u32) -> crate::LineCol {
        self.line_index.line_col(self.text(), offset)
    }
}

/// Every finding as [`crate::render::plain`] writes them: the template's, then each values
/// file's under a `--- FILE ---` line.
pub fn plain(t: &TemplateAnalysis) -> String {
    let mut out = crate::render::plain_diagnostics(t.text(), &t.line_index, &t.diagnostics);
    for f in &t.values_findings {
        out.push_str(&format!("--- {} ---\n", f.display));
        out.push_str(&crate::render::plain_diagnostics(
            &f.text,
            &f.line_index,
            &f.diagnostics,
        ));
    }
    out
}

/// Whether a file name names an application template: `template.yaml`, `template.yml`, or
/// `<anything>.template.yaml|yml|fz`.
pub fn is_template_name(file_name: &str) -> bool {
    ["yaml", "yml", "fz"].iter().any(|ext| {
        file_name
            .strip_suffix(ext)
            .and_then(|s| s.strip_suffix('.'))
            .is_some_and(|stem| (stem == "template" && *ext != "fz") || stem.ends_with(".template"))
    })
}

/// Whether a file name names a values file (never checked as a Fuzzfile): `values.yaml`,
/// `values.yml`, `<anything>.values.yaml|yml`.
pub fn is_values_name(file_name: &str) -> bool {
    ["yaml", "yml"].iter().any(|ext| {
        file_name
            .strip_suffix(ext)
            .and_then(|s| s.strip_suffix('.'))
            .is_some_and(|stem| stem == "values" || stem.ends_with(".values"))
    })
}

/// The names of the values file of a template, in the order they are looked for in its
/// directory: `<stem>.values.yaml` (and `.yml`) for `<stem>.template.yaml`, then
/// `values.yaml` and `values.yml`.
pub fn values_file_names(template_file_name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for ext in ["yaml", "yml", "fz"] {
        if let Some(stem) = template_file_name
            .strip_suffix(ext)
            .and_then(|s| s.strip_suffix(".template."))
        {
            out.push(format!("{stem}.values.yaml"));
            out.push(format!("{stem}.values.yml"));
        }
    }
    out.push("values.yaml".into());
    out.push("values.yml".into());
    out
}

/// The paths the values file of the template at `template_path` is looked for at, in order:
/// [`values_file_names`] in the template's directory.
pub fn values_file_paths(template_path: &std::path::Path) -> Vec<std::path::PathBuf> {
    let name = template_path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let dir = template_path.parent().unwrap_or(std::path::Path::new(""));
    values_file_names(name)
        .iter()
        .map(|c| dir.join(c))
        .collect()
}

/// Check a template with deterministic render options.
pub fn check(input: TemplateInput, options: &Options) -> TemplateAnalysis {
    check_with(input, options, &RenderOptions::default())
}

/// Check a template.
pub fn check_with(
    input: TemplateInput,
    options: &Options,
    render_options: &RenderOptions,
) -> TemplateAnalysis {
    let text = input.template.text.as_str();
    let line_index = LineIndex::new(text);
    let mut diagnostics = Vec::new();

    // The values: every source read once, its findings kept with it.
    let mut loaded = values::load(input.values.as_ref(), &input.override_files, &input.set);
    let sources: Vec<&Source> = input
        .values
        .iter()
        .chain(input.override_files.iter())
        .collect();
    let mut files: Vec<FileFindings> = sources
        .iter()
        .zip(std::mem::take(&mut loaded.findings))
        .map(|(s, d)| FileFindings {
            display: s.display.clone(),
            text: s.text.clone(),
            line_index: LineIndex::new(&s.text),
            diagnostics: d,
        })
        .collect();
    for p in std::mem::take(&mut loaded.set_problems) {
        diagnostics.push(Diagnostic::new(
            Rule::ValuesFileError,
            TextRange::empty(0),
            p,
        ));
    }
    let has_values = input.values.is_some() || !input.override_files.is_empty();

    let mut rendered = None;
    match fuzzfile_template::parse(&input.template.display, text) {
        Err(errors) => {
            for e in errors {
                diagnostics.push(
                    Diagnostic::new(
                        Rule::TemplateSyntaxError,
                        TextRange::from_usize(e.span.start, e.span.end),
                        e.message,
                    )
                    .with_help(e.help.unwrap_or_else(|| "Go's text/template refuses the template when parsing it: nothing is rendered until this is corrected".into())),
                );
            }
        }
        Ok(template) => {
            let data = Value::Map(loaded.data.clone());
            match fuzzfile_template::render(&template, &data, render_options) {
                Err(e) => diagnostics.push(render_error(
                    &e,
                    &template,
                    &loaded,
                    &files,
                    render_options,
                    has_values,
                )),
                Ok(out) => {
                    missing_values(&out, &input, &loaded, &files, has_values, &mut diagnostics);
                    let analysis = analyze_with(&out.text, options);
                    let mut actions = map::printing_actions(&template);
                    // Read from the syntax: keep the names the values declare (a `.Name`
                    // inside `range` or `with` is a field of another dot).
                    for (_, names) in &mut actions {
                        names.retain(|n| loaded.declared.contains_key(n));
                    }
                    let mapper = map::Mapper::new(&out.map, &out.text).with_actions(text, &actions);
                    let note = |names: &[String]| value_note(names, &loaded, &files);
                    let used = suppress_template_findings(text, &line_index, &mut diagnostics);
                    for d in &analysis.diagnostics {
                        // A `# fuzzlint: ignore[template-...]` comment that suppressed a
                        // template finding is used, though the rendered text had no finding
                        // of that rule.
                        if d.rule == Rule::UnusedSuppression {
                            let m = mapper.map(d.range);
                            if used
                                .iter()
                                .any(|u| m.range.start <= u.start && u.end <= m.range.end)
                            {
                                continue;
                            }
                        }
                        // Without any values, what a value printed is `<no value>`: the one
                        // `template-missing-value` finding says so for all of them.
                        if !has_values && !mapper.map(d.range).values.is_empty() {
                            continue;
                        }
                        diagnostics.push(map_diagnostic(d, &mapper, &note));
                    }
                    rendered = Some(RenderedCheck {
                        rendered: out,
                        analysis,
                    });
                }
            }
        }
    }

    // The template's findings where it did not render (a parse error, a `fail`) are
    // suppressible too.
    if rendered.is_none() {
        suppress_template_findings(text, &line_index, &mut diagnostics);
    }
    // The settings apply to the template's own findings as they do in an analysis (the
    // rendered text's findings had them applied already).
    let template_rule = is_template_rule;
    let rules = &options.rules;
    diagnostics.retain(|d| !template_rule(d.rule) || rules.is_enabled(d.rule));
    for d in diagnostics.iter_mut().filter(|d| template_rule(d.rule)) {
        if let Some(&s) = rules.severity.get(&d.rule) {
            d.severity = s;
        }
    }
    fuzzfile_diagnostics::sort_diagnostics(&mut diagnostics);
    for f in &mut files {
        rules.retain_enabled(&mut f.diagnostics);
        rules.rewrite_severities(&mut f.diagnostics);
        fuzzfile_diagnostics::sort_diagnostics(&mut f.diagnostics);
    }
    files.retain(|f| !f.diagnostics.is_empty());
    TemplateAnalysis {
        input,
        line_index,
        diagnostics,
        values_findings: files,
        rendered,
        options: options.clone(),
        render_options: render_options.clone(),
    }
}

/// A values file on its own (named on the command line, opened in an editor): its
/// `values-file-error` findings, with the settings applied.
pub fn check_values_file(source: Source, options: &Options) -> FileFindings {
    let mut loaded = values::load(Some(&source), &[], &[]);
    let mut diagnostics = loaded.findings.pop().unwrap_or_default();
    options.rules.retain_enabled(&mut diagnostics);
    options.rules.rewrite_severities(&mut diagnostics);
    fuzzfile_diagnostics::sort_diagnostics(&mut diagnostics);
    FileFindings {
        display: source.display,
        line_index: LineIndex::new(&source.text),
        text: source.text,
        diagnostics,
    }
}

/// The finding of a render that stopped: `template-fail` (a note when the `fail` only asks
/// for a value that is empty, [`required_values`]) or `template-exec-error`, its help naming
/// the values the stopping action (for a `fail`, the conditions around it) computed with.
fn render_error(
    e: &fuzzfile_template::ExecError,
    template: &fuzzfile_template::Template,
    loaded: &values::Values,
    files: &[FileFindings],
    render_options: &RenderOptions,
    has_values: bool,
) -> Diagnostic {
    let range = TextRange::from_usize(e.span.start, e.span.end);
    let required = if e.kind == ExecErrorKind::Fail {
        required_values(template, &loaded.data, render_options, &e.span)
    } else {
        Vec::new()
    };
    let d = match e.kind {
        ExecErrorKind::Fail if !required.is_empty() => {
            let names = required
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ");
            let example = required
                .iter()
                .map(|n| format!("--set {n}=..."))
                .collect::<Vec<_>>()
                .join(" ");
            Diagnostic::new(
                Rule::TemplateFail,
                range,
                format!(
                    "{} (the template's `fail`: it asks for {names}, empty in these values)",
                    e.message.clone()
                ),
            )
            .with_severity(Severity::Info)
            .with_help(format!(
                "this is how the template asks for a value it has no default for; the Fuzzfile it renders is checked once the value is given: `{example}` or `--values FILE`"
            ))
        }
        ExecErrorKind::Fail => Diagnostic::new(Rule::TemplateFail, range, e.message.clone())
            .with_help(if has_values {
                "the template stops here with these values: change the values (the values file, `--values`, `--set`) or the condition that leads to this `fail`"
            } else {
                "the template stops here with no values at all: give it its values file (beside it, or `--values FILE`)"
            }),
        _ => Diagnostic::new(Rule::TemplateExecError, range, e.message.clone())
            .with_help(if has_values {
                "Go's text/template stops rendering here with these values"
            } else {
                "Go's text/template stops rendering here; no values were given (every `.Name` is missing), so give the values file beside the template or with `--values FILE`"
            }),
    };
    // What the stopping action computed with (for a `fail`, what the
    // conditions around it read): each value, as given and where it is
    // declared.
    let read = if e.kind == ExecErrorKind::Fail {
        map::values_deciding(template, &e.span)
    } else {
        map::values_read_at(template, &e.span)
    };
    let read: Vec<String> = read
        .into_iter()
        .filter(|n| loaded.data.contains_key(n))
        .collect();
    let d = if read.is_empty() || d.severity == Severity::Info {
        d
    } else {
        let shown = read
            .iter()
            .map(|n| {
                let v = loaded.data.get(n).map(show_value).unwrap_or_default();
                let place = declared_place(n, loaded, files)
                    .map(|p| format!(", {p}"))
                    .unwrap_or_default();
                format!("`{n}` = {v}{place}")
            })
            .collect::<Vec<_>>()
            .join("; ");
        let help = d.help.clone().unwrap_or_default();
        let reads = if e.kind == ExecErrorKind::Fail {
            "the conditions that lead here read"
        } else {
            "it reads"
        };
        d.with_help(format!("{help}; {reads} {shown}"))
    };
    d
}

/// The most values tried one at a time by [`required_values`].
const MAX_REQUIRED_TRIALS: usize = 32;

/// The most trial renders one [`required_values`] search makes, the second level included.
const MAX_TRIAL_RENDERS: usize = 96;

/// The output bound of each trial render of [`required_values`].
const MAX_TRIAL_OUTPUT: usize = 4 << 20;

/// The values, empty in `data`, that the `fail` at `span` asks for: filling one of them alone
/// (with a placeholder text) makes the render pass that `fail` without stopping at another
/// `fail` that stays. A trial that stops at another `fail` counts only when filling more of
/// the empty values (one more, or all of them) gets past that one too and never back to the
/// `fail` at `span`: a value that leads into a mutually exclusive `fail` (the BLAST template's
/// `BlastDbName and CustomBlastDbFetchCmd are mutually exclusive`) is not what the template
/// asks for. Empty when the `fail` does not depend on an empty value: then it is the
/// template's verdict on the values given.
fn required_values(
    template: &fuzzfile_template::Template,
    data: &BTreeMap<String, Value>,
    render_options: &RenderOptions,
    span: &fuzzfile_template::Span,
) -> Vec<String> {
    let empty: Vec<&String> = data
        .iter()
        .filter(|(_, v)| matches!(v, Value::String(s) if s.trim().is_empty()))
        .map(|(k, _)| k)
        .take(MAX_REQUIRED_TRIALS)
        .collect();
    // The trials are bounded tighter than a render: a hostile template cannot make the
    // search cost many renders of the full output bound. A trial that hits a bound (of
    // output or of the number of trials) proves nothing.
    let trial = RenderOptions {
        max_output_bytes: render_options.max_output_bytes.min(MAX_TRIAL_OUTPUT),
        ..render_options.clone()
    };
    let search = TrialSearch {
        template,
        data,
        options: &trial,
        span,
        empty: &empty,
        renders: std::cell::Cell::new(0),
    };
    let one: Vec<String> = empty
        .iter()
        .filter(|n| search.passes(&[**n], true))
        .map(|n| (*n).clone())
        .collect();
    if !one.is_empty() || empty.is_empty() {
        return one;
    }
    if search.passes(&empty, false) {
        empty.into_iter().cloned().collect()
    } else {
        Vec::new()
    }
}

/// The trial renders of [`required_values`], counted against [`MAX_TRIAL_RENDERS`].
struct TrialSearch<'a> {
    template: &'a fuzzfile_template::Template,
    data: &'a BTreeMap<String, Value>,
    options: &'a RenderOptions,
    /// The `fail` whose values are looked for.
    span: &'a fuzzfile_template::Span,
    /// The empty values, in order.
    empty: &'a [&'a String],
    renders: std::cell::Cell<usize>,
}

impl<'a> TrialSearch<'a> {
    /// Whether the template, with the values in `fill` given a placeholder, renders past the
    /// `fail` at `self.span`. Stopping at another `fail` passes only when `deeper` and filling
    /// one more empty value, or all the rest, gets past it too (with `deeper` off below).
    fn passes(&self, fill: &[&'a String], deeper: bool) -> bool {
        if self.renders.get() >= MAX_TRIAL_RENDERS {
            return false;
        }
        self.renders.set(self.renders.get() + 1);
        let mut d = self.data.clone();
        for name in fill {
            d.insert(
                (*name).clone(),
                Value::String(format!("{name}-placeholder")),
            );
        }
        let e = match fuzzfile_template::render(self.template, &Value::Map(d), self.options) {
            Ok(_) => return true,
            Err(e) => e,
        };
        match e.kind {
            ExecErrorKind::Fail if e.span == *self.span => false,
            ExecErrorKind::Fail => {
                if !deeper {
                    return false;
                }
                let rest: Vec<&String> = self
                    .empty
                    .iter()
                    .filter(|n| !fill.contains(n))
                    .copied()
                    .collect();
                let with = |more: &[&'a String]| -> Vec<&'a String> {
                    let mut f = fill.to_vec();
                    f.extend_from_slice(more);
                    f
                };
                rest.iter().any(|n| self.passes(&with(&[*n]), false))
                    || (rest.len() > 1 && self.passes(&with(&rest), false))
            }
            ExecErrorKind::Limit => false,
            _ => true,
        }
    }
}

/// `template-missing-value` findings from the render's notes: one per place with values,
/// one for the whole template without any.
fn missing_values(
    out: &Rendered,
    input: &TemplateInput,
    loaded: &values::Values,
    files: &[FileFindings],
    has_values: bool,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let mut seen = std::collections::HashSet::new();
    for note in &out.notes {
        let NoteKind::MissingKey { name } = &note.kind;
        let range = TextRange::from_usize(note.span.start, note.span.end);
        if !has_values {
            let looked = if input.looked_for.is_empty() {
                String::new()
            } else {
                format!(" (looked for {})", input.looked_for.join(", "))
            };
            diagnostics.push(
                Diagnostic::new(
                    Rule::TemplateMissingValue,
                    range,
                    format!("no values file beside the template{looked}: it is checked with no values, so `.{name}` and every other value are missing"),
                )
                .with_help("put the template's values file beside it (`values.yaml`, or `<name>.values.yaml` for `<name>.template.yaml`), or give one with `--values FILE`"),
            );
            return;
        }
        if !seen.insert((note.span.start, name.clone())) {
            continue;
        }
        // A declaration the values file has but could not read (its error is reported
        // there) is not a missing declaration.
        if has_broken_declaration(files.first(), name) {
            continue;
        }
        let file = files
            .first()
            .map(|f| f.display.as_str())
            .unwrap_or("the values");
        let mut d = Diagnostic::new(
            Rule::TemplateMissingValue,
            range,
            format!("`.{name}` is not declared in {file}: the template reads it as missing (Go prints `<no value>` where it is printed)"),
        );
        d = match closest(name, loaded.declared.keys()) {
            Some(k) => d.with_help(format!("did you mean `.{k}`?")),
            None => d.with_help(format!(
                "declare `{name}` in {file} (`- name: {name}` with its `string_value`, `uint_value` or `bool_value`)"
            )),
        };
        diagnostics.push(d);
    }
}

/// Whether the values file has findings and writes a declaration `name: NAME` (quoted or
/// not) that it could not read.
fn has_broken_declaration(file: Option<&FileFindings>, name: &str) -> bool {
    let Some(f) = file.filter(|f| !f.diagnostics.is_empty()) else {
        return false;
    };
    fuzzfile_diagnostics::lines(&f.text).any(|line| {
        let line = line.trim_start().trim_start_matches("- ").trim();
        line.strip_prefix("name:")
            .map(|v| v.trim().trim_matches(|c| c == '"' || c == '\''))
            == Some(name)
    })
}

/// The declared name closest to `name` (a case difference, or at most two edits).
fn closest<'a>(name: &str, names: impl Iterator<Item = &'a String>) -> Option<&'a String> {
    let mut best: Option<(usize, &String)> = None;
    for k in names {
        let d = if k.eq_ignore_ascii_case(name) {
            0
        } else {
            fuzzfile_diagnostics::suggest::levenshtein(name, k)
        };
        if d <= 2 && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

/// `values.yaml:12:5`: where `name` is declared.
fn declared_place(name: &str, loaded: &values::Values, files: &[FileFindings]) -> Option<String> {
    let span = loaded.declared.get(name)?;
    let f = files.first()?;
    let p = f
        .line_index
        .line_col(&f.text, u32::try_from(span.start).ok()?);
    Some(format!("{}:{}:{}", f.display, p.line, p.column))
}

/// A value as a message shows it: a string quoted (and cut), a number or boolean as is.
fn show_value(v: &Value) -> String {
    match v {
        Value::String(s) => {
            let cut: String = s.chars().take(60).collect();
            let more = if cut.len() < s.len() { "…" } else { "" };
            format!("{cut:?}{more}")
        }
        Value::Int(i) => i.to_string(),
        Value::Uint(u) => u.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Nil => "nil".into(),
        other => other.type_name().to_owned(),
    }
}

/// `(from value `X`, values.yaml:12:5)`: the values printed text came from, each with the
/// place of its declaration.
fn value_note(names: &[String], loaded: &values::Values, files: &[FileFindings]) -> String {
    let one = |name: &String| {
        let place = declared_place(name, loaded, files);
        match place {
            Some(p) => format!("`{name}`, {p}"),
            None => format!("`{name}`"),
        }
    };
    match names {
        [] => String::new(),
        [n] => format!("(from value {})", one(n)),
        _ => format!(
            "(from values {})",
            names.iter().map(one).collect::<Vec<_>>().join("; ")
        ),
    }
}

/// A finding of the rendered text at template positions.
fn map_diagnostic(
    d: &Diagnostic,
    mapper: &map::Mapper<'_>,
    note: &dyn Fn(&[String]) -> String,
) -> Diagnostic {
    let m = mapper.map(d.range);
    let mut out = d.clone();
    out.range = m.range;
    if !m.values.is_empty() {
        out.message = format!("{} {}", d.message, note(&m.values));
    }
    for l in &mut out.labels {
        let lm = mapper.map(l.range);
        l.range = lm.range;
        if !lm.values.is_empty() {
            l.message = format!("{} {}", l.message, note(&lm.values));
        }
    }
    out.fix = d.fix.as_ref().and_then(|f| map_fix(f, mapper));
    out
}

/// A fix of the rendered text as a fix of the template: only when every edit is in copied
/// text.
fn map_fix(f: &Fix, mapper: &map::Mapper<'_>) -> Option<Fix> {
    let edits = f
        .edits
        .iter()
        .map(|e| {
            mapper.exact(e.range).map(|range| Edit {
                range,
                replacement: e.replacement.clone(),
            })
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Fix {
        message: f.message.clone(),
        edits,
        applicability: f.applicability,
    })
}

/// Apply the template's `# fuzzlint: ignore[...]` comments to the findings of the template
/// rules (the rendered text's findings had them applied by the analysis): a comment
/// suppresses the findings that start on its line (trailing) or on the next line that is not
/// a comment (on a line of its own). The ranges of the rule names that suppressed something.
fn suppress_template_findings(
    text: &str,
    line_index: &LineIndex,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<TextRange> {
    let mut used = Vec::new();
    if !text.contains("fuzzlint:") {
        return used;
    }
    let lines: Vec<&str> = fuzzfile_diagnostics::lines(text).collect();
    for (n, line) in lines.iter().enumerate() {
        let Some(hash) = line.find("# fuzzlint:").or_else(|| line.find("#fuzzlint:")) else {
            continue;
        };
        let start = line_index.line_start(n) as usize + hash;
        let Ok(start32) = u32::try_from(start) else {
            continue;
        };
        let Some(crate::suppress::DirectiveKind::Ignore { entries, .. }) =
            crate::suppress::parse_comment(&line[hash..], start32)
        else {
            continue;
        };
        let own_line = line[..hash].trim().is_empty();
        let target = if own_line {
            (n + 1..lines.len()).find(|&k| !lines[k].trim_start().starts_with('#'))
        } else {
            Some(n)
        };
        let Some(target) = target else { continue };
        for e in &entries {
            let Some(rule) = e.rule else { continue };
            let before = diagnostics.len();
            diagnostics.retain(|d| {
                !(d.rule == rule
                    && line_index.line_of(d.range.start) == target
                    && is_template_rule(rule))
            });
            if diagnostics.len() != before {
                used.push(e.range);
            }
        }
    }
    used
}

fn is_template_rule(r: Rule) -> bool {
    r.category() == crate::RuleCategory::Template
}

/// The most variants [`check_branches`] renders besides the defaults.
pub const MAX_BRANCHES: usize = 64;

/// Check a template with its values as given, then once for each other choice of each value
/// that has choices (an `options_input` option, the other boolean), the other values as
/// given: a branch no default reaches is checked too. A finding of a variant that the check
/// with the values as given does not have is added, its message ending with the choice that
/// reaches it (``[with `Type=pytorch`]``); one finding reached by several choices is listed
/// once, with the first. At most [`MAX_BRANCHES`] variants.
pub fn check_branches(input: TemplateInput, options: &Options) -> TemplateAnalysis {
    let variants = branch_variants(&input);
    let mut base = check(input, options);
    let mut seen: std::collections::HashSet<(Rule, TextRange, String)> = base
        .diagnostics
        .iter()
        .map(|d| (d.rule, d.range, d.message.clone()))
        .collect();
    for set in variants {
        let mut v = base.input.clone();
        v.set.push(set.clone());
        let t = check(v, options);
        for mut d in t.diagnostics {
            if !seen.insert((d.rule, d.range, d.message.clone())) {
                continue;
            }
            d.message = format!("{} [with `{set}`]", d.message);
            // A fix found in one variant is not verified for the values as given.
            d.fix = None;
            base.diagnostics.push(d);
        }
    }
    fuzzfile_diagnostics::sort_diagnostics(&mut base.diagnostics);
    base
}

/// `NAME=VALUE` for each choice of each declared value with choices, other than the one the
/// input gives it (the last `--set` of it, else its default).
fn branch_variants(input: &TemplateInput) -> Vec<String> {
    let declaring = input.values.as_ref().or(input.override_files.first());
    let Some(src) = declaring else {
        return Vec::new();
    };
    let (file, _) = fuzzfile_template::values_file::parse(&src.text);
    let mut out = Vec::new();
    for d in &file.decls {
        let name = &d.name.value;
        let given = input
            .set
            .iter()
            .rev()
            .find_map(|s| s.strip_prefix(name.as_str())?.strip_prefix('='))
            .map(str::to_owned);
        let current = given.unwrap_or_else(|| match d.default_value() {
            Value::String(s) => s,
            Value::Bool(b) => b.to_string(),
            other => format!("{other:?}"),
        });
        for choice in d.choices().unwrap_or_default() {
            let text = match choice {
                Value::String(s) => s,
                Value::Bool(b) => b.to_string(),
                _ => continue,
            };
            if text != current && !text.contains('\n') {
                out.push(format!("{name}={text}"));
            }
        }
    }
    out.truncate(MAX_BRANCHES);
    out
}

/// Errors by rule and message, digits masked (a finding that only moved is the same).
fn error_counts(diags: &[Diagnostic]) -> BTreeMap<(Rule, String), usize> {
    let mut m = BTreeMap::new();
    for d in diags.iter().filter(|d| d.severity == Severity::Error) {
        let msg: String = d
            .message
            .chars()
            .map(|c| if c.is_ascii_digit() { '#' } else { c })
            .collect();
        *m.entry((d.rule, msg)).or_insert(0) += 1;
    }
    m
}

/// What `fuzzlint check --fix` writes for a template: the fixes of the rendered text that
/// verify there ([`fixes::verified_fixes`]) and whose edits all fall in copied template text,
/// applied to the template; the result is checked again with the same values and options,
/// and kept only when it renders and has no error the template did not have. The template's
/// own text when nothing applies.
pub fn fix_template(t: &TemplateAnalysis) -> String {
    fix_template_at(t, fuzzfile_diagnostics::Applicability::Safe)
}

/// [`fix_template`] with the fixes at least as safe as `required` (`Unsafe`: with
/// `--unsafe-fixes`).
pub fn fix_template_at(
    t: &TemplateAnalysis,
    required: fuzzfile_diagnostics::Applicability,
) -> String {
    let text = t.text();
    let Some(r) = &t.rendered else {
        return text.to_owned();
    };
    let mapper = map::Mapper::new(&r.rendered.map, &r.rendered.text);
    let mapped: Vec<Fix> = fixes::verified_fixes_at(&r.analysis, required)
        .into_iter()
        .filter_map(|f| map_fix(f, &mapper))
        .collect();
    if mapped.is_empty() {
        return text.to_owned();
    }
    // One template edit can stand for several rendered ones (text inside a `range`): each
    // template edit once.
    let mut edits: Vec<&Edit> = mapped.iter().flat_map(|f| f.edits.iter()).collect();
    edits.sort_by(|a, b| {
        (a.range.start, a.range.end, &a.replacement).cmp(&(
            b.range.start,
            b.range.end,
            &b.replacement,
        ))
    });
    edits.dedup_by(|a, b| a.range == b.range && a.replacement == b.replacement);
    let fixed = fuzzfile_diagnostics::apply_edits(text, edits);
    if fixed == text {
        return fixed;
    }
    let mut input = t.input.clone();
    input.template.text = fixed.clone();
    let after = check_with(input, &t.options, &t.render_options);
    let before = error_counts(&t.diagnostics);
    let ok = after.rendered.is_some()
        && error_counts(&after.diagnostics)
            .iter()
            .all(|(k, n)| before.get(k).copied().unwrap_or(0) >= *n);
    if ok {
        fixed
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_names() {
        for yes in [
            "template.yaml",
            "template.yml",
            "a__b.template.yaml",
            "x.template.yml",
            "x.template.fz",
        ] {
            assert!(is_template_name(yes), "{yes}");
        }
        for no in [
            "templates.yaml",
            "template.fz",
            "mytemplate.yaml",
            "x.yaml",
            "values.yaml",
            "x.template",
        ] {
            assert!(!is_template_name(no), "{no}");
        }
        assert!(is_values_name("values.yaml") && is_values_name("a__b.values.yaml"));
        assert!(!is_values_name("myvalues.yaml") && !is_values_name("a.template.yaml"));
    }

    #[test]
    fn values_file_names_beside_a_template() {
        assert_eq!(
            values_file_names("a__b.template.yaml"),
            [
                "a__b.values.yaml",
                "a__b.values.yml",
                "values.yaml",
                "values.yml"
            ]
        );
        assert_eq!(
            values_file_names("template.yaml"),
            ["values.yaml", "values.yml"]
        );
        let d = std::path::Path::new("d");
        assert_eq!(
            values_file_paths(&d.join("a.template.yaml")),
            [
                d.join("a.values.yaml"),
                d.join("a.values.yml"),
                d.join("values.yaml"),
                d.join("values.yml")
            ]
        );
    }

    #[test]
    fn closest_name() {
        let names = ["ContainerUri".to_owned(), "Cores".to_owned()];
        assert_eq!(closest("ContainerURI", names.iter()), Some(&names[0]));
        assert_eq!(closest("Core", names.iter()), Some(&names[1]));
        assert_eq!(closest("Memory", names.iter()), None);
    }
}
