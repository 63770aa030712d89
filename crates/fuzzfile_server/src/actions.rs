//! Code actions: each finding's fix as a quick fix, "suppress this rule here" (a
//! `# fuzzlint: ignore[rule-name]` comment, the syntax of `fuzzfile_check::suppress`), and
//! "fix all" (the fixes `fuzzlint check --fix` applies). Every fix offered is verified first
//! (`fuzzfile_check::fixes`): its result parses and has no error the text did not have.
//!
//! Edits name the document version they were computed for, so a client applies none to a
//! text that changed since.

use crate::diagnostics::to_lsp;
use crate::server::View;
use fuzzfile_check::suppress::{self, DirectiveKind};
use fuzzfile_check::{Diagnostic, Edit, Rule, TextRange};
use fuzzfile_syntax::NodeKind;
use lsp_types::{
    CodeAction, CodeActionContext, CodeActionKind, CodeActionOrCommand, DocumentChanges, OneOf,
    OptionalVersionedTextDocumentIdentifier, TextDocumentEdit, TextEdit, WorkspaceEdit,
};

pub const FIX_ALL_KIND: &str = "source.fixAll.fuzzlint";

/// The most quick fixes one code action request verifies (each costs an analysis).
pub const MAX_QUICK_FIXES: usize = 16;

pub(crate) fn wanted(ctx: &CodeActionContext, kind: &CodeActionKind) -> bool {
    match &ctx.only {
        None => kind.as_str() != FIX_ALL_KIND,
        Some(only) => only.iter().any(|o| {
            kind.as_str() == o.as_str() || kind.as_str().starts_with(&format!("{}.", o.as_str()))
        }),
    }
}

/// The text edits of `edits` in the order `fuzzfile_diagnostics::apply_edits` applies them
/// (by position, stable), with insertions at one point made one edit that inserts them in
/// that order: the result is the CLI's, whatever order a client gives inserts at one point.
pub(crate) fn coalesced(edits: &[&Edit]) -> Vec<Edit> {
    let mut sorted: Vec<&Edit> = edits.to_vec();
    sorted.sort_by_key(|e| (e.range.start, e.range.end));
    let mut out: Vec<Edit> = Vec::with_capacity(sorted.len());
    for e in sorted {
        match out.last_mut() {
            Some(last) if last.range.is_empty() && e.range.is_empty() && last.range == e.range => {
                last.replacement.push_str(&e.replacement);
            }
            _ => out.push(e.clone()),
        }
    }
    out
}

fn workspace_edit(v: &View<'_>, edits: &[&Edit]) -> WorkspaceEdit {
    let edits = coalesced(edits);
    WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri: v.uri.clone(),
                version: Some(v.version),
            },
            edits: edits
                .iter()
                .map(|e| OneOf::Left(TextEdit::new(v.lines.range(e.range), e.replacement.clone())))
                .collect(),
        }])),
        change_annotations: None,
    }
}

pub fn code_actions(
    v: &View<'_>,
    range: lsp_types::Range,
    ctx: &CodeActionContext,
) -> Vec<CodeActionOrCommand> {
    let a = v.analysis;
    let r = v.lines.text_range(range);
    let mut out = Vec::new();
    let quickfix = CodeActionKind::QUICKFIX;
    if wanted(ctx, &quickfix) {
        // Built once: a range over thousands of findings stays linear.
        let suppressor = Suppressor::new(v);
        // Each quick fix is verified alone (its result parses and has no new error); a range
        // holding many fixable findings gets the first `MAX_QUICK_FIXES` verified ones.
        let mut verifications = 0;
        for d in a
            .diagnostics
            .iter()
            .filter(|d| d.range.start <= r.end && r.start <= d.range.end)
        {
            let lsp = to_lsp(d, &v.lines, v.uri);
            let fix = d.fix.as_ref().filter(|f| {
                verifications += 1;
                verifications <= MAX_QUICK_FIXES && fuzzfile_check::fixes::verified(a, f)
            });
            if let Some(fix) = fix {
                let edits: Vec<&Edit> = fix.edits.iter().collect();
                // An unsafe fix (it changes what runs) is offered, never as the preferred one,
                // and says so; "fix all" applies safe fixes only.
                let safe = d.fix_applicability() == Some(fuzzfile_check::Applicability::Safe);
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: if safe {
                        fix.message.clone()
                    } else {
                        format!("{} (unsafe)", fix.message)
                    },
                    kind: Some(quickfix.clone()),
                    diagnostics: Some(vec![lsp.clone()]),
                    edit: Some(workspace_edit(v, &edits)),
                    is_preferred: Some(safe),
                    ..Default::default()
                }));
            }
            if let Some(edit) = suppressor.edit(v, d) {
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Suppress `{}` on this line", d.rule.name()),
                    kind: Some(quickfix.clone()),
                    diagnostics: Some(vec![lsp]),
                    edit: Some(workspace_edit(v, &[&edit])),
                    is_preferred: Some(false),
                    ..Default::default()
                }));
            }
        }
    }
    let fix_all = CodeActionKind::new(FIX_ALL_KIND);
    if wanted(ctx, &fix_all) {
        let fixes = fuzzfile_check::fixes::verified_fixes(a);
        let edits: Vec<&Edit> = fixes.iter().flat_map(|f| f.edits.iter()).collect();
        if !edits.is_empty() {
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "Fix all fuzzlint findings".into(),
                kind: Some(fix_all),
                edit: Some(workspace_edit(v, &edits)),
                ..Default::default()
            }));
        }
    }
    out
}

/// What the suppress action needs to know of the document, computed once per request: the
/// trailing `# fuzzlint:` directives by line, and the scalars' ranges sorted by start (with
/// the largest end so far, so that "inside a scalar" is one binary search).
struct Suppressor {
    directives: std::collections::HashMap<usize, suppress::Directive>,
    scalars: Vec<(u32, u32)>,
}

impl Suppressor {
    fn new(v: &View<'_>) -> Suppressor {
        let a = v.analysis;
        let mut directives = std::collections::HashMap::new();
        for dir in suppress::directives(&a.text, &a.line_index, &a.tree) {
            if !dir.own_line {
                // The first on its line, as a scan in order would find.
                directives.entry(dir.line).or_insert(dir);
            }
        }
        let mut scalars: Vec<(u32, u32)> = a
            .tree
            .nodes()
            .filter(|(_, n)| matches!(n.kind, NodeKind::Scalar(_)))
            .map(|(_, n)| (n.range.start, n.range.end))
            .collect();
        scalars.sort_unstable();
        let mut max_end = 0;
        for s in &mut scalars {
            max_end = max_end.max(s.1);
            s.1 = max_end;
        }
        Suppressor {
            directives,
            scalars,
        }
    }

    /// Whether `offset` lies strictly inside a scalar (a comment there would become text).
    fn inside_scalar(&self, offset: u32) -> bool {
        // Scalars starting before `offset`; the largest end among them.
        let before = self.scalars.partition_point(|(start, _)| *start < offset);
        before > 0 && offset < self.scalars[before - 1].1
    }

    /// The edit that suppresses `d`'s rule on the line where it starts: add the rule to a
    /// trailing `# fuzzlint: ignore[...]` already there, else append one, else (the line ends
    /// inside a multi-line scalar) put one on its own line above. `None` where no comment can
    /// reach the finding (inside a block scalar's body), and for `unused-suppression` itself.
    fn edit(&self, v: &View<'_>, d: &Diagnostic) -> Option<Edit> {
        if d.rule == Rule::UnusedSuppression {
            return None;
        }
        let a = v.analysis;
        let text = &a.text;
        let index = &a.line_index;
        let line = index.line_of(d.range.start);
        let lr = index.line_range(text, line);
        let name = d.rule.name();
        if let Some(dir) = self.directives.get(&line) {
            if let DirectiveKind::Ignore { entries, .. } = &dir.kind {
                let last = entries.last()?;
                return Some(Edit {
                    range: TextRange::empty(last.range.end),
                    replacement: format!(", {name}"),
                });
            }
            return None;
        }
        if !self.inside_scalar(lr.end) {
            return Some(Edit {
                range: TextRange::empty(lr.end),
                replacement: format!("  # fuzzlint: ignore[{name}]"),
            });
        }
        if self.inside_scalar(lr.start) {
            return None;
        }
        let indent: String = lr.slice(text).chars().take_while(|c| *c == ' ').collect();
        Some(Edit {
            range: TextRange::empty(lr.start),
            replacement: format!(
                "{indent}# fuzzlint: ignore[{name}]{}",
                fuzzfile_diagnostics::newline_of(text)
            ),
        })
    }
}
