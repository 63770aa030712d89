//! Names that refer to each other inside one Fuzzfile: jobs and services (defined under
//! `jobs:`/`services:`, used by `depends-on[].name` and `requires`), volumes (defined under
//! `volumes:`, used by `mounts`, also in `defaults.job`) and files (defined under `files:`,
//! used as `file://<name>`). Every occurrence comes from the typed model, so a reference is
//! found exactly where the checker's `unknown-reference` rule looks for it.

use crate::server::View;
use fuzzfile_check::{Analysis, TextRange};
use fuzzfile_model::{FileSource, Fuzzfile};
use lsp_types::{
    DocumentChanges, Location, OneOf, OptionalVersionedTextDocumentIdentifier,
    PrepareRenameResponse, TextDocumentEdit, TextEdit, WorkspaceEdit,
};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SymbolKind {
    /// A job or a service: one namespace (`depends-on` names either).
    Task,
    Volume,
    File,
}

impl SymbolKind {
    fn describe(self) -> &'static str {
        match self {
            SymbolKind::Task => "job or service",
            SymbolKind::Volume => "volume",
            SymbolKind::File => "file",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub kind: SymbolKind,
    pub name: String,
    pub range: TextRange,
    pub is_def: bool,
}

/// Every definition and reference of the file, in no particular order.
pub fn occurrences(model: &Fuzzfile) -> Vec<Symbol> {
    let mut out = Vec::new();
    let mut push = |kind, name: &str, range, is_def| {
        out.push(Symbol {
            kind,
            name: name.to_owned(),
            range,
            is_def,
        })
    };
    for t in model.tasks() {
        push(SymbolKind::Task, &t.name.value, t.name.range, true);
        for d in &t.depends_on {
            if let Some(n) = &d.name {
                push(SymbolKind::Task, &n.value, n.range, false);
            }
        }
        for r in &t.requires {
            push(SymbolKind::Task, &r.value, r.range, false);
        }
        for m in &t.mounts {
            push(SymbolKind::Volume, &m.volume.value, m.volume.range, false);
        }
        for f in &t.files {
            if let FileSource::Ref(n) = &f.source {
                push(SymbolKind::File, &n.value, n.range, false);
            }
        }
    }
    if let Some(d) = &model.defaults {
        for m in &d.mounts {
            push(SymbolKind::Volume, &m.volume.value, m.volume.range, false);
        }
    }
    for v in &model.volumes {
        push(SymbolKind::Volume, &v.key.value, v.key.range, true);
    }
    for f in &model.files {
        push(SymbolKind::File, &f.name.value, f.name.range, true);
    }
    out
}

/// The definition or reference under the cursor.
pub fn symbol_at(a: &Analysis, offset: u32) -> Option<Symbol> {
    occurrences(&a.model)
        .into_iter()
        .filter(|s| s.range.touches(offset))
        .min_by_key(|s| s.range.len())
}

fn same(a: &Symbol, b: &Symbol) -> bool {
    a.kind == b.kind && a.name == b.name
}

pub fn definition(v: &View<'_>, offset: u32) -> Option<Location> {
    let sym = symbol_at(v.analysis, offset)?;
    let def = occurrences(&v.analysis.model)
        .into_iter()
        .filter(|s| s.is_def && same(s, &sym))
        .min_by_key(|s| s.range.start)?;
    Some(Location::new(v.uri.clone(), v.lines.range(def.range)))
}

pub fn references(v: &View<'_>, offset: u32, include_declaration: bool) -> Option<Vec<Location>> {
    let sym = symbol_at(v.analysis, offset)?;
    let mut all: Vec<Symbol> = occurrences(&v.analysis.model)
        .into_iter()
        .filter(|s| same(s, &sym) && (include_declaration || !s.is_def))
        .collect();
    all.sort_by_key(|s| s.range.start);
    Some(
        all.into_iter()
            .map(|s| Location::new(v.uri.clone(), v.lines.range(s.range)))
            .collect(),
    )
}

/// The bytes to replace for an occurrence: the name itself, or the inside of its quotes.
/// `None` when the source spells the name with escapes (a rename could not keep them).
fn name_range(text: &str, s: &Symbol) -> Option<TextRange> {
    let src = s.range.slice(text);
    if src == s.name {
        return Some(s.range);
    }
    let quoted = (src.starts_with('"') && src.ends_with('"'))
        || (src.starts_with('\'') && src.ends_with('\''));
    if quoted && src.len() == s.name.len() + 2 && src[1..src.len() - 1] == s.name {
        return Some(TextRange::new(s.range.start + 1, s.range.end - 1));
    }
    None
}

pub fn prepare_rename(v: &View<'_>, offset: u32) -> Option<PrepareRenameResponse> {
    let sym = symbol_at(v.analysis, offset)?;
    let r = name_range(v.text(), &sym)?;
    Some(PrepareRenameResponse::RangeWithPlaceholder {
        range: v.lines.range(r),
        placeholder: sym.name,
    })
}

/// Whether `name` can stand unquoted where the old one stood (and stays a valid name).
fn check_new_name(kind: SymbolKind, name: &str) -> Result<(), String> {
    match kind {
        SymbolKind::Task => fuzzfile_model::values::check_dns_label(name)
            .map_err(|e| format!("`{name}` is not a valid job or service name: {e}")),
        SymbolKind::Volume | SymbolKind::File => {
            let ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                && !name.starts_with(['-', '.']);
            if ok {
                Ok(())
            } else {
                Err(format!(
                    "`{name}` is not a valid {} name: use letters, digits, `-`, `_` and `.`",
                    kind.describe()
                ))
            }
        }
    }
}

/// Rename a job, service, volume or file and every reference to it. `Ok(None)` when the
/// cursor is on no name.
pub fn rename(v: &View<'_>, offset: u32, new_name: &str) -> Option<Result<WorkspaceEdit, String>> {
    let sym = symbol_at(v.analysis, offset)?;
    Some(rename_symbol(v, &sym, new_name))
}

fn rename_symbol(v: &View<'_>, sym: &Symbol, new_name: &str) -> Result<WorkspaceEdit, String> {
    check_new_name(sym.kind, new_name)?;
    let all = occurrences(&v.analysis.model);
    if new_name != sym.name
        && all
            .iter()
            .any(|s| s.is_def && s.kind == sym.kind && s.name == new_name)
    {
        return Err(format!(
            "a {} named `{new_name}` exists already",
            sym.kind.describe()
        ));
    }
    let mut edits = Vec::new();
    let mut ranges: Vec<TextRange> = Vec::new();
    for s in all.iter().filter(|s| same(s, sym)) {
        let r = name_range(v.text(), s).ok_or_else(|| {
            format!(
                "`{}` is written with escapes at {}; rename it by hand",
                s.name,
                v.analysis.line_col(s.range.start).line
            )
        })?;
        if !ranges.contains(&r) {
            ranges.push(r);
        }
    }
    ranges.sort();
    for r in ranges {
        edits.push(OneOf::Left(TextEdit::new(
            v.lines.range(r),
            new_name.to_owned(),
        )));
    }
    Ok(WorkspaceEdit {
        changes: None,
        document_changes: Some(DocumentChanges::Edits(vec![TextDocumentEdit {
            text_document: OptionalVersionedTextDocumentIdentifier {
                uri: v.uri.clone(),
                version: Some(v.version),
            },
            edits,
        }])),
        change_annotations: None,
    })
}
