//! Completion: the keys valid at the cursor for the file's version (from the schema table),
//! enumerated values, names of jobs/services/volumes/files where a reference is expected,
//! environment variable names in `env` and in scripts, and a job skeleton snippet.
//!
//! The context comes from indentation ([`locate::line_context`]), because the line being
//! typed is rarely valid YAML yet; scripts and commands are recognised from the tree.

use crate::knowledge;
use crate::locate::{self, Seg};
use crate::server::View;
use fuzzfile_check::TextRange;
use fuzzfile_model::schema::{self, Place, Status};
use fuzzfile_model::{Fuzzfile, Version};
use lsp_types::{
    CompletionItem, CompletionItemKind, CompletionItemTag, CompletionTextEdit, Documentation,
    InsertTextFormat, MarkupContent, MarkupKind, TextEdit,
};

pub fn complete(v: &View<'_>, offset: u32) -> Option<Vec<CompletionItem>> {
    let a = v.analysis;
    // Inside a script or a command: variable names after `$`.
    if let Some(items) = in_shell(v, offset) {
        return Some(items);
    }
    let ctx = locate::line_context(&a.text, &a.line_index, offset);
    let version = a.model.version();
    let replace = TextRange::new(ctx.word_start, offset);
    let mut items = Vec::new();
    let segs: Vec<&str> = ctx
        .segs
        .iter()
        .map(|s| match s {
            Seg::Key(k) => k.as_str(),
            Seg::Item => "[]",
        })
        .collect();

    if let Some(key) = &ctx.key {
        // `key: |`: a value.
        let value_items = values_for(v, &ctx.segs, key, version, &ctx.word);
        for (label, kind, doc) in value_items {
            items.push(item(v, &label, kind, doc, replace, None));
        }
        return Some(items);
    }
    if ctx.item {
        // `- |` in a list of scalars.
        match segs.as_slice() {
            [.., "env", "[]"] => env_items(v, replace, &ctx.word, &mut items),
            [.., "requires", "[]"] => {
                for (name, kind) in task_names(&a.model, own_task(&ctx.segs)) {
                    items.push(item(v, name, kind, None, replace, None));
                }
            }
            _ => {}
        }
        if !items.is_empty() {
            return Some(items);
        }
    }
    // A key.
    match segs.as_slice() {
        ["jobs"] | ["services"] => {
            items.push(skeleton(v, replace, segs[0] == "services"));
            return Some(items);
        }
        ["volumes"] => return Some(items),
        [.., "mounts"] if version == Some(Version::V1) => {
            for vol in &a.model.volumes {
                items.push(item(
                    v,
                    &vol.key.value,
                    CompletionItemKind::REFERENCE,
                    None,
                    replace,
                    Some(format!("{}:\n  location: ", vol.key.value)),
                ));
            }
            return Some(items);
        }
        _ => {}
    }
    let Some(place) = locate::place_of(&ctx.segs, version) else {
        return Some(items);
    };
    let present = sibling_keys(&a.text, &a.line_index, offset, ctx.key_col);
    for spec in place.keys() {
        if !spec.versions.allows(version) || matches!(spec.status, Status::Removed(_)) {
            continue;
        }
        if present.iter().any(|k| k == spec.name) && spec.name != ctx.word {
            continue;
        }
        let mut it = item(
            v,
            spec.name,
            CompletionItemKind::PROPERTY,
            Some(crate::hover::key_markdown(place, spec, version)),
            replace,
            Some(format!("{}: ", spec.name)),
        );
        if matches!(spec.status, Status::Deprecated(_)) {
            it.tags = Some(vec![CompletionItemTag::DEPRECATED]);
            it.sort_text = Some(format!("z{}", spec.name));
        }
        it.detail = Some(place.describe().to_owned());
        items.push(it);
    }
    if place == Place::Root && !present.iter().any(|k| k == "jobs") {
        items.push(skeleton_root(v, replace));
    }
    Some(items)
}

fn item(
    v: &View<'_>,
    label: &str,
    kind: CompletionItemKind,
    doc: Option<String>,
    replace: TextRange,
    insert: Option<String>,
) -> CompletionItem {
    CompletionItem {
        label: label.to_owned(),
        kind: Some(kind),
        documentation: doc.map(|d| {
            Documentation::MarkupContent(MarkupContent {
                kind: MarkupKind::Markdown,
                value: d,
            })
        }),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
            v.lines.range(replace),
            insert.unwrap_or_else(|| label.to_owned()),
        ))),
        ..Default::default()
    }
}

fn snippet(
    v: &View<'_>,
    label: &str,
    detail: &str,
    replace: TextRange,
    body: String,
) -> CompletionItem {
    CompletionItem {
        label: label.to_owned(),
        kind: Some(CompletionItemKind::SNIPPET),
        detail: Some(detail.to_owned()),
        insert_text_format: Some(InsertTextFormat::SNIPPET),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(
            v.lines.range(replace),
            body,
        ))),
        ..Default::default()
    }
}

/// The indentation of the line the cursor is on, for multi-line snippets.
fn indent_at(v: &View<'_>, offset: u32) -> String {
    let a = v.analysis;
    let line = a.line_index.line_of(offset);
    let r = a.line_index.line_range(&a.text, line);
    r.slice(&a.text).chars().take_while(|c| *c == ' ').collect()
}

/// A new job (or service): image, command, resources.
fn skeleton(v: &View<'_>, replace: TextRange, service: bool) -> CompletionItem {
    let i = indent_at(v, replace.start);
    let body = if service {
        format!("${{1:name}}:\n{i}  image:\n{i}    uri: docker://${{2:redis:7.4}}\n{i}  command: [${{3:redis-server}}]\n{i}  readiness-probe:\n{i}    tcp-socket:\n{i}      port: ${{4:6379}}\n$0")
    } else {
        format!("${{1:name}}:\n{i}  image:\n{i}    uri: docker://${{2:alpine:3.20}}\n{i}  command: [${{3:echo, hello}}]\n{i}  resource:\n{i}    cpu:\n{i}      cores: ${{4:1}}\n{i}    memory:\n{i}      size: ${{5:1GiB}}\n$0")
    };
    snippet(
        v,
        if service {
            "service skeleton"
        } else {
            "job skeleton"
        },
        "a new entry with image, command and resources",
        replace,
        body,
    )
}

fn skeleton_root(v: &View<'_>, replace: TextRange) -> CompletionItem {
    let body = "jobs:\n  ${1:name}:\n    image:\n      uri: docker://${2:alpine:3.20}\n    command: [${3:echo, hello}]\n    resource:\n      cpu:\n        cores: ${4:1}\n      memory:\n        size: ${5:1GiB}\n$0".to_owned();
    snippet(
        v,
        "jobs: skeleton",
        "a `jobs:` section with one job",
        replace,
        body,
    )
}

/// Keys already written in the mapping the cursor's line belongs to (same indentation,
/// between the nearest shallower lines above and below).
fn sibling_keys(
    text: &str,
    index: &fuzzfile_check::LineIndex,
    offset: u32,
    col: usize,
) -> Vec<String> {
    let line = index.line_of(offset);
    let mut out = Vec::new();
    let shape = |l: usize| -> Option<(usize, String)> {
        let s = index.line_range(text, l).slice(text);
        let body = s.trim_start_matches(' ');
        let ind = s.len() - body.len();
        if body.is_empty() || body.starts_with('#') {
            return None;
        }
        let body = body.strip_prefix("- ").unwrap_or(body);
        let key = body
            .split_once(':')
            .map(|(k, _)| k.trim().to_owned())
            .unwrap_or_default();
        let ind = if s.trim_start().starts_with("- ") {
            ind + 2
        } else {
            ind
        };
        Some((ind, key))
    };
    for dir in [-1i64, 1] {
        let mut l = line as i64 + dir;
        while l >= 0 && (l as usize) < index.line_count() {
            if let Some((ind, key)) = shape(l as usize) {
                if ind < col {
                    break;
                }
                if ind == col && !key.is_empty() {
                    out.push(key);
                }
            }
            l += dir;
        }
    }
    out
}

fn own_task(segs: &[Seg]) -> Option<&str> {
    match segs {
        [Seg::Key(s), Seg::Key(name), ..] if s == "jobs" || s == "services" => Some(name),
        _ => None,
    }
}

fn task_names<'m>(model: &'m Fuzzfile, except: Option<&str>) -> Vec<(&'m str, CompletionItemKind)> {
    model
        .tasks()
        .filter(|t| Some(t.name.value.as_str()) != except)
        .map(|t| {
            let kind = match t.kind {
                fuzzfile_model::TaskKind::Job => CompletionItemKind::FUNCTION,
                fuzzfile_model::TaskKind::Service => CompletionItemKind::CLASS,
            };
            (t.name.value.as_str(), kind)
        })
        .collect()
}

/// Values of `key: |` at `segs`.
fn values_for(
    v: &View<'_>,
    segs: &[Seg],
    key: &str,
    version: Option<Version>,
    word: &str,
) -> Vec<(String, CompletionItemKind, Option<String>)> {
    let m = &v.analysis.model;
    let names: Vec<&str> = segs
        .iter()
        .map(|s| match s {
            Seg::Key(k) => k.as_str(),
            Seg::Item => "[]",
        })
        .collect();
    let mut out = Vec::new();
    let refs = |kind: CompletionItemKind,
                list: Vec<&str>|
     -> Vec<(String, CompletionItemKind, Option<String>)> {
        list.into_iter()
            .map(|n| (n.to_owned(), kind, None))
            .collect()
    };
    match (names.as_slice(), key) {
        ([.., "depends-on", "[]"], "name") | (_, "requires") => {
            return task_names(m, own_task(segs))
                .into_iter()
                .map(|(n, k)| (n.to_owned(), k, None))
                .collect();
        }
        ([.., "mounts"], _) if version != Some(Version::V1) => {
            return refs(
                CompletionItemKind::REFERENCE,
                m.volumes.iter().map(|x| x.key.value.as_str()).collect(),
            );
        }
        ([.., "mounts", _], "volume") => {
            return refs(
                CompletionItemKind::REFERENCE,
                m.volumes.iter().map(|x| x.key.value.as_str()).collect(),
            );
        }
        ([s, _, "files"], _) if s == &"jobs" || s == &"services" => {
            return m
                .files
                .iter()
                .map(|f| {
                    (
                        format!("file://{}", f.name.value),
                        CompletionItemKind::FILE,
                        None,
                    )
                })
                .collect();
        }
        _ => {}
    }
    if key == "env" || word.contains('=') {
        return out;
    }
    if let Some(place) = locate::place_of(segs, version) {
        if let Some(values) = schema::allowed_values(place, key) {
            for val in values {
                out.push((
                    val.to_string(),
                    CompletionItemKind::ENUM_MEMBER,
                    place.key(key).map(|s| s.doc.to_owned()),
                ));
            }
        }
        if place == Place::Volume && key == "use" {
            for val in ["ephemeral", "persistent"] {
                out.push((val.to_owned(), CompletionItemKind::ENUM_MEMBER, None));
            }
        }
        if place == Place::Volume && key == "reference" {
            for val in ["volume://user/ephemeral", "volume://user/persistent"] {
                out.push((val.to_owned(), CompletionItemKind::VALUE, None));
            }
        }
    }
    out
}

/// Variable names for an `env` entry being typed.
fn env_items(v: &View<'_>, replace: TextRange, word: &str, out: &mut Vec<CompletionItem>) {
    if word.contains('=') {
        return;
    }
    let upper = word.to_ascii_uppercase();
    for e in knowledge::VARIABLES.iter().filter(|e| settable(e.name)) {
        if e.name.starts_with(&upper) || upper.is_empty() {
            out.push(variable_item(v, e, replace));
        }
    }
    if "PET_".starts_with(&upper) || upper.starts_with("PET_") {
        for f in knowledge::TORCHRUN_FLAGS {
            let name = format!("PET_{}", f.name.to_ascii_uppercase().replace('-', "_"));
            if name.starts_with(&upper) {
                let doc = format!(
                    "torchrun reads it when `--{}` is not given. {}",
                    f.name, f.doc
                );
                let mut it = item(
                    v,
                    &name,
                    CompletionItemKind::VARIABLE,
                    Some(doc),
                    replace,
                    Some(format!("{name}=")),
                );
                rank_variable(&mut it);
                out.push(it);
            }
        }
    }
}

/// Variables a user sets (Fuzzball sets the other `MULTINODE_*`, `FB_*` and `RANK` itself).
/// A variable to set: its name, then `=` inserted.
fn variable_item(v: &View<'_>, e: &knowledge::Entry, replace: TextRange) -> CompletionItem {
    let mut it = item(
        v,
        e.name,
        CompletionItemKind::VARIABLE,
        Some(e.doc.to_owned()),
        replace,
        Some(format!("{}=", e.name)),
    );
    it.detail = Some("environment variable".into());
    rank_variable(&mut it);
    it
}

/// Every variable item is ranked by its name, and a deprecated name (one `nccl-invalid-value`
/// reports, such as `NCCL_ASYNC_ERROR_HANDLING`) after every current one, tagged deprecated
/// and saying its replacement: a client sorts by `sortText`, and without one by the label,
/// which put `NCCL_ASYNC_ERROR_HANDLING` first among `NCCL_`.
fn rank_variable(it: &mut CompletionItem) {
    rank_variable_in(it, '1');
}

/// As [`rank_variable`], in the group `group` (`0` before `1`) for current names.
fn rank_variable_in(it: &mut CompletionItem, group: char) {
    match knowledge::replacement(&it.label) {
        Some(new) => {
            it.tags = Some(vec![CompletionItemTag::DEPRECATED]);
            it.sort_text = Some(format!("9{}", it.label));
            it.detail = Some(format!("deprecated: use `{new}`"));
        }
        None => it.sort_text = Some(format!("{group}{}", it.label)),
    }
}

fn settable(name: &str) -> bool {
    !fuzzfile_check::semantics::PROVIDED_VARIABLES.contains(&name)
}

/// In a `script:` body or a `command:` word: after `$` or `${`, variable names (the job's
/// own env, Fuzzball's variables, the known NCCL/torchrun ones).
fn in_shell(v: &View<'_>, offset: u32) -> Option<Vec<CompletionItem>> {
    let a = v.analysis;
    let hit = locate::at(&a.tree, offset);
    let id = hit.scalar?;
    let in_shell_value = matches!(hit.segs.as_slice(), [Seg::Key(s), _, .., Seg::Key(k)] if (s == "jobs" || s == "services") && k == "script")
        || matches!(hit.segs.as_slice(), [Seg::Key(s), _, .., Seg::Key(k), Seg::Item] if (s == "jobs" || s == "services") && k == "command")
        || matches!(hit.segs.as_slice(), [Seg::Key(s), _, .., Seg::Key(k)] if (s == "jobs" || s == "services") && k == "command");
    if !in_shell_value {
        return None;
    }
    let node = a.tree.node(id).range;
    // A line typed below a block scalar, less indented than its content, is not part of it
    // (while it is invalid YAML, recovery blanks it and the scalar seems to reach over it).
    let line = a.line_index.line_of(offset);
    let first_content = a.line_index.line_of(node.start) + 1;
    if line >= first_content {
        let indent = |l: usize| {
            let s = a.line_index.line_range(&a.text, l).slice(&a.text);
            s.len() - s.trim_start_matches(' ').len()
        };
        let typed = a.line_index.line_range(&a.text, line).slice(&a.text);
        if !typed.trim().is_empty() && indent(line) < indent(first_content) {
            return None;
        }
    }
    let lo = node.start as usize;
    let at = (offset as usize).clamp(lo, node.end as usize);
    let before = a.text.get(lo..at)?;
    let name_len = before
        .bytes()
        .rev()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    let head = &before[..before.len() - name_len];
    let braced = head.ends_with("${");
    let typed = &before[before.len() - name_len..];
    let replace = TextRange::from_usize(at - name_len, at);
    if !(head.ends_with('$') || braced) {
        // Not an expansion: a variable being set (`export NCCL_IB_HCA=...`, `NCCL_DEBUG=INFO
        // torchrun ...`) when the word is upper case and starts like a known name.
        let upper = typed.len() >= 3
            && typed
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        let mut items = Vec::new();
        if upper && head.ends_with([' ', '\t', '\n', ';', '(']) {
            for e in knowledge::VARIABLES
                .iter()
                .filter(|e| settable(e.name) && e.name.starts_with(typed))
            {
                items.push(variable_item(v, e, replace));
            }
        }
        return Some(items);
    }
    let task = a.model.tasks().find(|t| t.range.touches(offset));
    // The job's own variables first (group `0`), then the documented ones.
    let mut names: Vec<(String, String, char)> = Vec::new();
    if let Some(t) = task {
        for e in a.facts(t).env.iter() {
            names.push((
                e.name.to_string(),
                format!("from `env`: `{}`", e.value),
                '0',
            ));
        }
    }
    for e in knowledge::VARIABLES {
        names.push((e.name.to_owned(), e.doc.to_owned(), '1'));
    }
    let mut seen = std::collections::HashSet::new();
    let items = names
        .into_iter()
        .filter(|(n, _, _)| n.starts_with(typed) && seen.insert(n.clone()))
        .map(|(n, doc, group)| {
            let mut it = item(
                v,
                &n,
                CompletionItemKind::VARIABLE,
                Some(doc),
                replace,
                None,
            );
            it.detail = Some("environment variable".into());
            rank_variable_in(&mut it, group);
            it
        })
        .collect();
    Some(items)
}
