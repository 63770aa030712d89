//! Application templates in the editor: a document named as a template (`template.yaml`,
//! `*.template.yaml`; [`fuzzfile_check::template::is_template_name`]) is not analysed as a
//! Fuzzfile but checked as `fuzzlint check` checks it ([`fuzzfile_check::template::check`]):
//! rendered with the values file beside it, its own errors and the rendered file's findings
//! published at template positions.
//!
//! Inside `{{ }}`:
//! - hover on `.Name` or `$.Name` shows the value's declaration in the values file (display
//!   name, kind, default, options, category, `file:line:col`);
//! - completion after `.` lists the declared values, elsewhere in an action the functions
//!   ([`fuzzfile_template::funcs::NAMES`]) and the keywords;
//! - go to definition goes from `.Name` to its `- name: Name` in the values file.
//!
//! On text the template copies into the Fuzzfile (keys, job names, launcher lines), hover and
//! completion are the Fuzzfile's, from the analysis of the rendered text at the place the
//! text was copied to, their ranges mapped back. Code actions are the fixes the check kept
//! (edits in copied text only) and "fix all" ([`template::fix_template`]).
//!
//! Which `.Name` is a value: where the template parses, its syntax tree says (a field of dot
//! where dot is the data root: not inside `with` or `range`, nor in a `define`; `$.Name`
//! anywhere but in a `define`); while it does not parse (being typed), the text of the action
//! under the cursor, by the same token rules, and only names the values file declares.
//!
//! The values file is the open document of that path when the editor has it open (so an edit
//! there re-checks the template before it is saved), else the file on disk. A values file
//! beside an open template gets its own findings (`values-file-error`) published on it.

use crate::diagnostics;
use crate::position::{Encoding, Lines};
use fuzzfile_check::template::{self, Source, TemplateAnalysis, TemplateInput};
use fuzzfile_check::{LineIndex, Options, Rule, TextRange};
use fuzzfile_template::ast::{Arg, Node, Pipeline, Template};
use fuzzfile_template::values_file::{self, ValueDecl, ValueKind};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionTextEdit, Documentation, Hover, HoverContents,
    Location, MarkupContent, MarkupKind, TextEdit, Uri,
};
use std::path::{Path, PathBuf};

/// The largest values file read from disk (a values file is a few kilobytes; the limit is
/// `fuzzlint`'s for a Fuzzfile).
const MAX_VALUES_BYTES: u64 = 64 * 1024 * 1024;

/// The last segment of a URI's path, percent-decoded.
fn file_name(uri: &str) -> Option<String> {
    if let Some(p) = crate::document::file_path(uri) {
        return p.file_name().and_then(|n| n.to_str()).map(str::to_owned);
    }
    let path = uri.split(['?', '#']).next().unwrap_or(uri);
    path.rsplit('/').next().map(str::to_owned)
}

/// Whether the document is an application template (by its name).
pub fn is_template_uri(uri: &str) -> bool {
    file_name(uri).is_some_and(|n| template::is_template_name(&n))
}

/// Whether the document is named as a values file.
pub fn is_values_uri(uri: &str) -> bool {
    file_name(uri).is_some_and(|n| template::is_values_name(&n))
}

/// The values file a template reads: where it is, its URI, its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValuesDoc {
    pub uri: Uri,
    pub path: PathBuf,
    pub source: Source,
}

/// The paths a template's values file is looked for at, in order.
pub fn values_paths(template_path: &Path) -> Vec<PathBuf> {
    if template_path.file_name().and_then(|n| n.to_str()).is_none() {
        return Vec::new();
    }
    template::values_file_paths(template_path)
}

/// Find the values file of the template at `template_path` (URI `template_uri`): the first
/// candidate that is open in the editor (`open` gives its URI and text) or a file on disk.
/// Also returns the places looked at, for the message when there is none.
pub fn find_values(
    template_uri: &Uri,
    template_path: &Path,
    open: impl Fn(&Path) -> Option<(Uri, String)>,
) -> (Option<ValuesDoc>, Vec<String>) {
    let paths = values_paths(template_path);
    let looked_for = paths.iter().map(|p| p.display().to_string()).collect();
    // The open document first, else the file on disk (when it is a file of reasonable size).
    let found = paths.into_iter().find_map(|p| {
        let (uri, text) = open(&p).or_else(|| {
            let meta = std::fs::metadata(&p).ok()?;
            if !meta.is_file() || meta.len() > MAX_VALUES_BYTES {
                return None;
            }
            let text = std::fs::read_to_string(&p).ok()?;
            Some((sibling_uri(template_uri, &p)?, text))
        })?;
        Some(ValuesDoc {
            uri,
            source: Source {
                display: p.display().to_string(),
                text,
            },
            path: p,
        })
    });
    (found, looked_for)
}

/// The URI of the file `path` beside the template: the template's URI with its last segment
/// replaced (so the client's own spelling of the directory is kept).
fn sibling_uri(template_uri: &Uri, path: &Path) -> Option<Uri> {
    let name = path.file_name()?.to_str()?;
    let base = template_uri.as_str().split(['?', '#']).next()?;
    let dir = &base[..base.rfind('/')? + 1];
    let mut encoded = String::with_capacity(name.len());
    for b in name.bytes() {
        // RFC 3986 `pchar`: unreserved, sub-delims, `:` and `@` stay as they are.
        if b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@".contains(&b) {
            encoded.push(char::from(b));
        } else {
            encoded.push_str(&format!("%{b:02X}"));
        }
    }
    format!("{dir}{encoded}").parse().ok()
}

/// Check the template `text` (shown as `display`) with its values file.
pub fn analyse(
    display: String,
    text: String,
    values: Option<&ValuesDoc>,
    looked_for: Vec<String>,
    options: &Options,
) -> TemplateAnalysis {
    let input = TemplateInput {
        template: Source { display, text },
        values: values.map(|v| v.source.clone()),
        looked_for,
        override_files: Vec::new(),
        set: Vec::new(),
    };
    template::check(input, options)
}

/// The template's findings as LSP diagnostics (the note that cluster checks are off is left
/// out, as in a Fuzzfile).
pub fn diagnostics(
    a: &TemplateAnalysis,
    uri: &Uri,
    encoding: Encoding,
) -> Vec<lsp_types::Diagnostic> {
    let lines = Lines::new(a.text(), &a.line_index, encoding);
    a.diagnostics
        .iter()
        .filter(|d| d.rule != Rule::ClusterProfileMissing)
        .map(|d| diagnostics::to_lsp(d, &lines, uri))
        .collect()
}

/// The findings of the values file `values` from the analysis of a template that reads it.
pub fn values_diagnostics(
    a: &TemplateAnalysis,
    values: &ValuesDoc,
    encoding: Encoding,
) -> Vec<lsp_types::Diagnostic> {
    let Some(f) = a
        .values_findings
        .iter()
        .find(|f| f.display == values.source.display)
    else {
        return Vec::new();
    };
    let lines = Lines::new(&f.text, &f.line_index, encoding);
    f.diagnostics
        .iter()
        .map(|d| diagnostics::to_lsp(d, &lines, &values.uri))
        .collect()
}

/// A template document's check, kept until its text, its values file or the settings
/// change.
pub struct Entry {
    pub generation: u64,
    pub analysis: std::sync::Arc<TemplateAnalysis>,
    pub values: Option<ValuesDoc>,
    /// When it was last used (the server's clock), to keep the recent ones only.
    pub last_used: u64,
}

/// What a request about a template document works on.
pub struct Ctx<'a> {
    pub uri: &'a Uri,
    pub analysis: &'a TemplateAnalysis,
    pub values: Option<&'a ValuesDoc>,
    pub lines: Lines<'a>,
    pub encoding: Encoding,
}

impl Ctx<'_> {
    fn text(&self) -> &str {
        self.analysis.text()
    }

    /// The declarations of the values file (re-read: a few microseconds for a catalog file).
    fn decls(&self) -> Vec<ValueDecl> {
        self.values
            .map(|v| values_file::parse(&v.source.text).0.decls)
            .unwrap_or_default()
    }

    /// The value under the cursor (see [`value_at`]) and its declaration in the values file,
    /// where it has one.
    fn value_under(&self, offset: u32) -> Option<(ValueRef, Option<ValueDecl>)> {
        let decls = self.decls();
        let r = value_at(
            &self.analysis.input.template.display,
            self.text(),
            offset,
            &decls,
        )?;
        let d = decls.into_iter().find(|d| d.name.value == r.name);
        Some((r, d))
    }

    /// Where `d` declares its value: the name in the values file.
    fn declaration(&self, values: &ValuesDoc, d: &ValueDecl) -> Location {
        let index = LineIndex::new(&values.source.text);
        let lines = Lines::new(&values.source.text, &index, self.encoding);
        Location::new(
            values.uri.clone(),
            lines.range(TextRange::from_usize(d.name.span.start, d.name.span.end)),
        )
    }
}

/// A reference to a value in the template: its name and the range of the name (after `.`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct ValueRef {
    name: String,
    range: TextRange,
}

/// The value named at `offset`, if the cursor is on the first name of `.Name…` or `$.Name…`
/// where that reads the data root.
fn value_at(name: &str, text: &str, offset: u32, decls: &[ValueDecl]) -> Option<ValueRef> {
    // Parsed under the name the check gives it (a `define` of the same name is an error
    // there too).
    match fuzzfile_template::parse(name, text) {
        Ok(t) => {
            let mut refs = Vec::new();
            collect_refs(&t, text, &mut refs);
            refs.into_iter().find(|r| r.range.touches(offset))
        }
        Err(_) => {
            lexical_value_at(text, offset).filter(|r| decls.iter().any(|d| d.name.value == r.name))
        }
    }
}

/// Every reference to a value of the data root in a parsed template.
fn collect_refs(t: &Template, text: &str, out: &mut Vec<ValueRef>) {
    nodes(&t.root, true, true, text, out);
    for d in t.defines.values() {
        // A `define`'s dot and `$` are what its caller passes.
        nodes(&d.body, false, false, text, out);
    }
}

fn nodes(list: &[Node], dot_root: bool, dollar_root: bool, text: &str, out: &mut Vec<ValueRef>) {
    for n in list {
        match n {
            Node::Action { pipe, .. } => pipeline(pipe, dot_root, dollar_root, text, out),
            Node::Template { pipe, .. } => {
                if let Some(p) = pipe {
                    pipeline(p, dot_root, dollar_root, text, out);
                }
            }
            Node::If(b) | Node::With(b) | Node::Range(b) => {
                pipeline(&b.pipe, dot_root, dollar_root, text, out);
                // `with` and `range` set dot in their body, not in their `else`.
                let body_dot = matches!(n, Node::If(_)) && dot_root;
                nodes(&b.list, body_dot, dollar_root, text, out);
                if let Some(e) = &b.else_list {
                    nodes(e, dot_root, dollar_root, text, out);
                }
            }
            Node::Text { .. }
            | Node::Comment { .. }
            | Node::Break { .. }
            | Node::Continue { .. } => {}
        }
    }
}

fn pipeline(p: &Pipeline, dot_root: bool, dollar_root: bool, text: &str, out: &mut Vec<ValueRef>) {
    for c in &p.cmds {
        for a in &c.args {
            arg(a, dot_root, dollar_root, text, out);
        }
    }
}

fn arg(a: &Arg, dot_root: bool, dollar_root: bool, text: &str, out: &mut Vec<ValueRef>) {
    match a {
        Arg::Field { span, names } if dot_root => {
            if let Some(first) = names.first() {
                push_ref(first, span.start + 1, text, out);
            }
        }
        Arg::Variable { span, name, fields } if dollar_root && name == "$" => {
            if let Some(first) = fields.first() {
                push_ref(first, span.start + 2, text, out);
            }
        }
        Arg::Chain { node, .. } => arg(node, dot_root, dollar_root, text, out),
        Arg::Pipe { pipe, .. } => pipeline(pipe, dot_root, dollar_root, text, out),
        _ => {}
    }
}

/// A reference to `name` written at `start`, when the text there is the name.
fn push_ref(name: &str, start: usize, text: &str, out: &mut Vec<ValueRef>) {
    let end = start + name.len();
    if text.get(start..end) == Some(name) {
        out.push(ValueRef {
            name: name.to_owned(),
            range: TextRange::from_usize(start, end),
        });
    }
}

/// Go's identifier characters (letters, digits, `_`; non-ASCII letters too).
fn is_ident(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Where the name that ends at `at` (a char boundary) begins: `at` when none does.
fn ident_start(text: &str, at: usize) -> usize {
    text[..at]
        .char_indices()
        .rev()
        .take_while(|(_, c)| is_ident(*c))
        .last()
        .map_or(at, |(i, _)| i)
}

/// The start of the action (`{{`) the offset is in, if it is in one: the last `{{` before it
/// with no `}}` between. Comments (`{{/*`) are not actions.
fn action_start(text: &str, offset: usize) -> Option<usize> {
    let before = text.get(..offset)?;
    let open = before.rfind("{{")?;
    if before[open..].contains("}}") {
        return None;
    }
    let inner = before[open + 2..].trim_start_matches('-').trim_start();
    if inner.starts_with("/*") {
        return None;
    }
    Some(open)
}

/// The value named at `offset` read from the text of the action around it (for a template
/// that does not parse).
fn lexical_value_at(text: &str, offset: u32) -> Option<ValueRef> {
    let offset = usize::try_from(offset).ok()?;
    if !text.is_char_boundary(offset) {
        return None;
    }
    action_start(text, offset)?;
    let start = ident_start(text, offset);
    let end = text[offset..]
        .char_indices()
        .find(|(_, c)| !is_ident(*c))
        .map_or(text.len(), |(i, _)| offset + i);
    if start == end || !root_dot_before(text, start) {
        return None;
    }
    Some(ValueRef {
        name: text[start..end].to_owned(),
        range: TextRange::from_usize(start, end),
    })
}

/// Whether the name starting at `start` follows a `.` that reads the data root: `.Name` after
/// a space, `(`, `{{` or `|`, or `$.Name`; not `.A.Name` nor `$x.Name`.
fn root_dot_before(text: &str, start: usize) -> bool {
    let before = &text[..start];
    let Some(rest) = before.strip_suffix('.') else {
        return false;
    };
    match rest.chars().next_back() {
        None => true,
        Some('$') => !rest[..rest.len() - 1]
            .chars()
            .next_back()
            .is_some_and(is_ident),
        Some(c) => !(is_ident(c) || c == ')' || c == '.'),
    }
}

/// The default as the template sees it, for people.
fn default_text(d: &ValueDecl) -> String {
    match &d.kind {
        ValueKind::String(s) => format!("{s:?}"),
        ValueKind::Uint(n) => n.to_string(),
        ValueKind::Bool(b) => b.to_string(),
        ValueKind::Secret { reference, .. } | ValueKind::Volume { reference } => {
            format!("{reference:?}")
        }
    }
}

/// `file:line:col` of a byte offset of the values file.
fn values_place(values: &ValuesDoc, offset: usize) -> String {
    let index = LineIndex::new(&values.source.text);
    let p = index.line_col(
        &values.source.text,
        u32::try_from(offset).unwrap_or(u32::MAX),
    );
    format!("{}:{}:{}", values.source.display, p.line, p.column)
}

/// A declaration in Markdown: what hover and completion show.
fn decl_markdown(d: &ValueDecl, values: &ValuesDoc) -> String {
    let mut out = format!("**`.{}`**", d.name.value);
    if let Some(n) = &d.display_name {
        out.push_str(&format!(": {}", n.value.trim()));
    }
    out.push_str(&format!(
        "\n\n`{}` ({}), default `{}`",
        d.kind.field(),
        d.kind.type_word(),
        default_text(d).replace('`', "'")
    ));
    if let ValueKind::Secret {
        secret_type: Some(t),
        ..
    } = &d.kind
    {
        out.push_str(&format!(", secret type `{t}`"));
    }
    if let Some(o) = &d.options {
        let choices: Vec<String> = o.choices.iter().map(|c| format!("`{}`", c.value)).collect();
        out.push_str(&format!("\n\noptions: {}", choices.join(", ")));
    }
    if let Some(c) = &d.display_category {
        out.push_str(&format!("\n\ncategory: {}", c.value.trim()));
    }
    out.push_str(&format!(
        "\n\ndeclared at `{}`",
        values_place(values, d.name.span.start)
    ));
    out
}

/// Hover on a value: its declaration. Outside actions, on text the template copies into the
/// Fuzzfile (keys, job names, a launcher line): the Fuzzfile's hover there, from the analysis
/// of the rendered text.
pub fn hover(ctx: &Ctx<'_>, offset: u32) -> Option<Hover> {
    let at = usize::try_from(offset).ok()?;
    if ctx.text().is_char_boundary(at) && action_start(ctx.text(), at).is_none() {
        if let Some(h) = rendered_hover(ctx, at) {
            return Some(h);
        }
    }
    let values = ctx.values?;
    let (r, d) = ctx.value_under(offset)?;
    let d = d?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: decl_markdown(&d, values),
        }),
        range: Some(ctx.lines.range(r.range)),
    })
}

/// The output byte of template byte `offset` where the template copied it (its first copy,
/// for text inside a `range`).
fn rendered_offset(map: &fuzzfile_template::SourceMap, offset: usize) -> Option<usize> {
    map.segments.iter().find_map(|s| match &s.origin {
        fuzzfile_template::Origin::Text { template } if template.contains(&offset) => {
            Some(s.output.start + (offset - template.start))
        }
        _ => None,
    })
}

/// The analysis of the rendered text as a Fuzzfile document of the template's URI, for the
/// Fuzzfile's own hover and completion.
fn rendered_view<'a>(ctx: &Ctx<'a>, a: &'a fuzzfile_check::Analysis) -> crate::server::View<'a> {
    crate::server::View {
        uri: ctx.uri,
        version: 0,
        analysis: a,
        lines: Lines::new(&a.text, &a.line_index, ctx.encoding),
    }
}

/// The Fuzzfile hover at the rendered place of copied template text, its range mapped back.
fn rendered_hover(ctx: &Ctx<'_>, offset: usize) -> Option<Hover> {
    let r = ctx.analysis.rendered.as_ref()?;
    let out = &r.rendered;
    let at = u32::try_from(rendered_offset(&out.map, offset)?).ok()?;
    let view = rendered_view(ctx, &r.analysis);
    let h = crate::hover::hover(&view, at)?;
    let mapper = fuzzfile_check::template::map::Mapper::new(&out.map, &out.text);
    let range = h
        .range
        .map(|rg| ctx.lines.range(mapper.map(view.lines.text_range(rg)).range));
    Some(Hover {
        contents: h.contents,
        range,
    })
}

/// The Fuzzfile's completion where the cursor is in text the template copies (a key being
/// typed), from the rendered text; the edits mapped back to the template, and only items whose
/// edits fall in copied text.
fn rendered_complete(ctx: &Ctx<'_>, at: usize) -> Option<Vec<CompletionItem>> {
    let r = ctx.analysis.rendered.as_ref()?;
    let out = &r.rendered;
    // The cursor at the end of copied text (the usual place while typing) is one past it.
    let ro = rendered_offset(&out.map, at)
        .or_else(|| rendered_offset(&out.map, at.checked_sub(1)?).map(|o| o + 1))?;
    let view = rendered_view(ctx, &r.analysis);
    let items = crate::completion::complete(&view, u32::try_from(ro).ok()?)?;
    let mapper = fuzzfile_check::template::map::Mapper::new(&out.map, &out.text);
    let back = |rg: lsp_types::Range| {
        let tr = view.lines.text_range(rg);
        let exact = if tr.is_empty() {
            // An insertion point: where the copied text it follows or precedes is.
            let m = mapper.map(tr);
            m.exact.then_some(m.range)
        } else {
            mapper.exact(tr)
        };
        exact.map(|t| ctx.lines.range(t))
    };
    Some(
        items
            .into_iter()
            .filter_map(|mut item| {
                item.text_edit = match item.text_edit.take() {
                    Some(CompletionTextEdit::Edit(mut e)) => {
                        e.range = back(e.range)?;
                        Some(CompletionTextEdit::Edit(e))
                    }
                    Some(CompletionTextEdit::InsertAndReplace(mut e)) => {
                        e.insert = back(e.insert)?;
                        e.replace = back(e.replace)?;
                        Some(CompletionTextEdit::InsertAndReplace(e))
                    }
                    None => None,
                };
                if let Some(edits) = item.additional_text_edits.take() {
                    let mapped: Option<Vec<TextEdit>> = edits
                        .into_iter()
                        .map(|mut e| {
                            e.range = back(e.range)?;
                            Some(e)
                        })
                        .collect();
                    item.additional_text_edits = Some(mapped?);
                }
                Some(item)
            })
            .collect(),
    )
}

/// The `{{define "name"}}` a `{{template "name"}}` at `offset` (on its name) calls: the
/// range of the definition's whole `define` (or `block`).
fn called_definition(name: &str, text: &str, offset: u32) -> Option<TextRange> {
    let t = fuzzfile_template::parse(name, text).ok()?;
    fn find(list: &[Node], offset: usize) -> Option<&str> {
        list.iter().find_map(|n| match n {
            Node::Template {
                name, name_span, ..
            } if name_span.start <= offset && offset <= name_span.end => Some(name.as_str()),
            Node::If(b) | Node::With(b) | Node::Range(b) => find(&b.list, offset)
                .or_else(|| b.else_list.as_deref().and_then(|e| find(e, offset))),
            _ => None,
        })
    }
    let offset = usize::try_from(offset).ok()?;
    let called =
        find(&t.root, offset).or_else(|| t.defines.values().find_map(|d| find(&d.body, offset)))?;
    let d = t.defines.get(called)?;
    Some(TextRange::from_usize(d.span.start, d.span.end))
}

/// Go to the declaration of the value under the cursor (or the `define` a `template` calls).
pub fn definition(ctx: &Ctx<'_>, offset: u32) -> Option<Location> {
    if let Some(r) = called_definition(&ctx.analysis.input.template.display, ctx.text(), offset) {
        return Some(Location::new(ctx.uri.clone(), ctx.lines.range(r)));
    }
    let values = ctx.values?;
    let (_, d) = ctx.value_under(offset)?;
    Some(ctx.declaration(values, &d?))
}

/// The most quick fixes one code action request verifies (each costs a check of the
/// template), as for Fuzzfiles.
const MAX_QUICK_FIXES: usize = crate::actions::MAX_QUICK_FIXES;

/// Errors of an analysis, by rule.
fn errors_by_rule(a: &TemplateAnalysis) -> std::collections::BTreeMap<Rule, usize> {
    let mut m = std::collections::BTreeMap::new();
    for d in &a.diagnostics {
        if d.severity == fuzzfile_check::Severity::Error {
            *m.entry(d.rule).or_insert(0) += 1;
        }
    }
    m
}

/// Whether the template with `edits` applied still renders, has no more errors of any rule
/// and fewer findings of `rule` at all: a fix in copied template text that does what it says.
fn fix_verifies(a: &TemplateAnalysis, edits: &[&fuzzfile_check::Edit], rule: Rule) -> bool {
    let fixed = fuzzfile_diagnostics::apply_edits(a.text(), edits.iter().copied());
    if fixed == a.text() {
        return false;
    }
    let mut input = a.input.clone();
    input.template.text = fixed;
    let after = template::check_with(input, &a.options, &a.render_options);
    let before = errors_by_rule(a);
    let count = |x: &TemplateAnalysis| x.diagnostics.iter().filter(|d| d.rule == rule).count();
    after.rendered.is_some()
        && errors_by_rule(&after)
            .iter()
            .all(|(r, n)| before.get(r).copied().unwrap_or(0) >= *n)
        && count(&after) < count(a)
}

fn workspace_edit(
    ctx: &Ctx<'_>,
    uri: &Uri,
    version: i32,
    edits: &[&fuzzfile_check::Edit],
) -> lsp_types::WorkspaceEdit {
    let edits = crate::actions::coalesced(edits);
    lsp_types::WorkspaceEdit {
        changes: None,
        document_changes: Some(lsp_types::DocumentChanges::Edits(vec![
            lsp_types::TextDocumentEdit {
                text_document: lsp_types::OptionalVersionedTextDocumentIdentifier {
                    uri: uri.clone(),
                    version: Some(version),
                },
                edits: edits
                    .iter()
                    .map(|e| {
                        lsp_types::OneOf::Left(TextEdit::new(
                            ctx.lines.range(e.range),
                            e.replacement.clone(),
                        ))
                    })
                    .collect(),
            },
        ])),
        change_annotations: None,
    }
}

/// Code actions in a template: each finding's fix (mapped into copied template text by the
/// check, never into an action or a value's bytes) as a quick fix, verified on the template;
/// and "fix all", what `fuzzlint check --fix` writes for the template
/// ([`template::fix_template`]).
pub fn code_actions(
    ctx: &Ctx<'_>,
    uri: &Uri,
    version: i32,
    range: lsp_types::Range,
    cc: &lsp_types::CodeActionContext,
) -> Vec<lsp_types::CodeActionOrCommand> {
    use lsp_types::{CodeAction, CodeActionKind, CodeActionOrCommand};
    let a = ctx.analysis;
    let r = ctx.lines.text_range(range);
    let mut out = Vec::new();
    let quickfix = CodeActionKind::QUICKFIX;
    if crate::actions::wanted(cc, &quickfix) {
        let mut verifications = 0;
        for d in a
            .diagnostics
            .iter()
            .filter(|d| d.range.start <= r.end && r.start <= d.range.end)
        {
            let Some(fix) = &d.fix else { continue };
            verifications += 1;
            let edits: Vec<&fuzzfile_check::Edit> = fix.edits.iter().collect();
            if verifications > MAX_QUICK_FIXES || !fix_verifies(a, &edits, d.rule) {
                continue;
            }
            // An unsafe fix is offered, never as the preferred one (as for a Fuzzfile).
            let safe = d.fix_applicability() == Some(fuzzfile_check::Applicability::Safe);
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: if safe {
                    fix.message.clone()
                } else {
                    format!("{} (unsafe)", fix.message)
                },
                kind: Some(quickfix.clone()),
                diagnostics: Some(vec![diagnostics::to_lsp(d, &ctx.lines, uri)]),
                edit: Some(workspace_edit(ctx, uri, version, &edits)),
                is_preferred: Some(safe),
                ..Default::default()
            }));
        }
    }
    let fix_all = CodeActionKind::new(crate::actions::FIX_ALL_KIND);
    if crate::actions::wanted(cc, &fix_all) {
        let fixed = template::fix_template(a);
        let text = a.text();
        if fixed != text {
            // One edit: the bytes between the common prefix and the common suffix.
            let prefix = text
                .char_indices()
                .zip(fixed.chars())
                .find(|((_, x), y)| x != y)
                .map_or(text.len().min(fixed.len()), |((i, _), _)| i);
            let suffix = text[prefix..]
                .chars()
                .rev()
                .zip(fixed[prefix..].chars().rev())
                .take_while(|(x, y)| x == y)
                .map(|(x, _)| x.len_utf8())
                .sum::<usize>();
            let edit = fuzzfile_check::Edit {
                range: TextRange::from_usize(prefix, text.len() - suffix),
                replacement: fixed[prefix..fixed.len() - suffix].to_owned(),
            };
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "Fix all fuzzlint findings".into(),
                kind: Some(fix_all),
                edit: Some(workspace_edit(ctx, uri, version, &[&edit])),
                ..Default::default()
            }));
        }
    }
    out
}

/// Where the template reads the value `name` (`.Name`, `$.Name` of the data root), as LSP
/// locations in the template at `uri`; none while the template does not parse.
pub fn value_references(
    name: &str,
    a: &TemplateAnalysis,
    uri: &Uri,
    encoding: Encoding,
) -> Vec<Location> {
    let Ok(t) = fuzzfile_template::parse(&a.input.template.display, a.text()) else {
        return Vec::new();
    };
    let mut refs = Vec::new();
    collect_refs(&t, a.text(), &mut refs);
    refs.sort_by_key(|r| r.range.start);
    let lines = Lines::new(a.text(), &a.line_index, encoding);
    refs.into_iter()
        .filter(|r| r.name == name)
        .map(|r| Location::new(uri.clone(), lines.range(r.range)))
        .collect()
}

/// The declaration whose `name` is at `offset` of a values file's text: its name and the
/// name's range.
pub fn declaration_at(values_text: &str, offset: u32) -> Option<(String, TextRange)> {
    values_file::parse(values_text)
        .0
        .decls
        .into_iter()
        .map(|d| {
            let r = TextRange::from_usize(d.name.span.start, d.name.span.end);
            (d.name.value, r)
        })
        .find(|(_, r)| r.touches(offset))
}

/// References of the value under the cursor in a template: its uses in the template, and
/// its declaration when asked for.
pub fn references(ctx: &Ctx<'_>, offset: u32, include_declaration: bool) -> Option<Vec<Location>> {
    let (r, d) = ctx.value_under(offset)?;
    let mut out = Vec::new();
    if include_declaration {
        if let (Some(values), Some(d)) = (ctx.values, d) {
            out.push(ctx.declaration(values, &d));
        }
    }
    out.extend(value_references(
        &r.name,
        ctx.analysis,
        ctx.uri,
        ctx.encoding,
    ));
    Some(out)
}

/// Go's builtin functions (text/template/funcs.go `builtins`); the others of
/// [`fuzzfile_template::funcs::NAMES`] are slim-sprig's.
const GO_BUILTINS: &[&str] = &[
    "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf",
    "println", "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
];

/// The words that start an action of their own (text/template/parse lex.go `key`).
const KEYWORDS: &[&str] = &[
    "if", "else", "end", "range", "with", "define", "template", "block", "break", "continue", "nil",
];

/// Completion inside an action: value names after a root `.`, functions and keywords where
/// a command starts.
pub fn complete(ctx: &Ctx<'_>, offset: u32) -> Option<Vec<CompletionItem>> {
    let text = ctx.text();
    let at = usize::try_from(offset).ok()?;
    if !text.is_char_boundary(at) {
        return None;
    }
    let Some(open) = action_start(text, at) else {
        return rendered_complete(ctx, at);
    };
    // Not inside a string.
    let inside = &text[open + 2..at];
    if inside.matches('"').count() % 2 == 1 || inside.matches('`').count() % 2 == 1 {
        return Some(Vec::new());
    }
    let word_start = ident_start(text, at);
    let replace = ctx.lines.range(TextRange::from_usize(word_start, at));
    let edit = |label: &str| {
        Some(CompletionTextEdit::Edit(TextEdit::new(
            replace,
            label.to_owned(),
        )))
    };
    let before = &text[..word_start];
    let mut items = Vec::new();
    if before.ends_with('.') {
        if !root_dot_before(text, word_start) {
            return Some(items);
        }
        let Some(values) = ctx.values else {
            return Some(items);
        };
        for d in ctx.decls() {
            items.push(CompletionItem {
                label: d.name.value.clone(),
                kind: Some(CompletionItemKind::FIELD),
                detail: Some(match &d.display_name {
                    Some(n) => format!("{}: {}", d.kind.field(), n.value.trim()),
                    None => d.kind.field().to_owned(),
                }),
                documentation: Some(Documentation::MarkupContent(MarkupContent {
                    kind: MarkupKind::Markdown,
                    value: decl_markdown(&d, values),
                })),
                text_edit: edit(&d.name.value),
                ..Default::default()
            });
        }
        return Some(items);
    }
    // A function or keyword where a command or an argument starts.
    let prev = before.trim_end_matches([' ', '\t', '\r', '\n']);
    let starts_command = prev.ends_with("{{")
        || prev.ends_with("{{-")
        || prev.ends_with('(')
        || prev.ends_with('|')
        || before.len() != prev.len();
    if !starts_command || before.ends_with('$') {
        return Some(items);
    }
    for name in fuzzfile_template::funcs::NAMES {
        let builtin = GO_BUILTINS.contains(name);
        items.push(CompletionItem {
            label: (*name).to_owned(),
            kind: Some(CompletionItemKind::FUNCTION),
            detail: Some(
                if builtin {
                    "Go text/template function"
                } else {
                    "slim-sprig function"
                }
                .to_owned(),
            ),
            text_edit: edit(name),
            ..Default::default()
        });
    }
    let action_begins = prev.ends_with("{{") || prev.ends_with("{{-");
    if action_begins {
        for k in KEYWORDS.iter().filter(|k| **k != "nil") {
            items.push(CompletionItem {
                label: (*k).to_owned(),
                kind: Some(CompletionItemKind::KEYWORD),
                text_edit: edit(k),
                ..Default::default()
            });
        }
    }
    Some(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<(String, String)> {
        let t = fuzzfile_template::parse("t", text).expect("parses");
        let mut out = Vec::new();
        collect_refs(&t, text, &mut out);
        out.into_iter()
            .map(|r| (r.name, r.range.slice(text).to_owned()))
            .collect()
    }

    #[test]
    fn root_references_only() {
        let text = "{{ .A }} {{ $.B.x }} {{ with .C }}{{ .D }}{{ $.E }}{{ else }}{{ .F }}{{ end }}\
                    {{ range .G }}{{ .H }}{{ end }}{{ if .I }}{{ .J }}{{ end }}\
                    {{ define \"x\" }}{{ .K }}{{ $.L }}{{ end }}{{ printf \"%s\" (.M) }}{{ $x := 1 }}{{ $x.N }}";
        let got: Vec<String> = names(text).into_iter().map(|(n, _)| n).collect();
        assert_eq!(got, ["A", "B", "C", "E", "F", "G", "I", "J", "M"]);
        assert!(names(text).iter().all(|(n, s)| n == s));
    }

    #[test]
    fn lexical_references_while_the_template_does_not_parse() {
        let text = "{{ if .Alpha }}x {{ $.Beta }} {{ .A.Gamma }} {{ $v.Delta }} .Eps";
        let at = |needle: &str| {
            let i = text.find(needle).expect("needle") + 1;
            lexical_value_at(text, u32::try_from(i).expect("small")).map(|r| r.name)
        };
        assert_eq!(at("Alpha"), Some("Alpha".into()));
        assert_eq!(at("Beta"), Some("Beta".into()));
        assert_eq!(at("Gamma"), None);
        assert_eq!(at("Delta"), None);
        assert_eq!(at("Eps"), None, "outside an action");
    }

    #[test]
    fn sibling_uris_keep_the_directory_and_encode_the_name() {
        let t: Uri = "file:///w/a%20b/x.template.yaml".parse().expect("uri");
        let u = sibling_uri(&t, Path::new("/w/a b/x y.values.yaml")).expect("uri");
        assert_eq!(u.as_str(), "file:///w/a%20b/x%20y.values.yaml");
    }
}
