//! Hover: what the thing under the cursor is, then the rules of the findings there. What it
//! is: a one-line summary of a job, service, volume or file where it is defined or
//! referenced, the documentation of a key (from the schema table), of an environment
//! variable, a torchrun flag or `exec_all` (with what it starts here), and a launch as it
//! runs on its launcher word.

use crate::diagnostics::rule_doc_url;
use crate::knowledge;
use crate::launch_info;
use crate::locate::{self, Seg};
use crate::navigation::{self, Symbol, SymbolKind};
use crate::server::View;
use fuzzfile_check::{Rule, TextRange};
use fuzzfile_model::schema::{self, KeySpec, Status, Versions};
use fuzzfile_model::{Fuzzfile, Task};
use fuzzfile_syntax::NodeId;
use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind};

pub fn hover(v: &View<'_>, offset: u32) -> Option<Hover> {
    let a = v.analysis;
    // What the thing under the cursor is, first; the rules of the findings there after it
    // (a finding on a job's name, such as the note that cluster checks are off, does not
    // hide what the job is).
    let mut sections: Vec<String> = Vec::new();
    let mut range: Option<TextRange> = None;
    let mut rules: Vec<String> = Vec::new();
    let mut rule_range: Option<TextRange> = None;
    let mut seen = Vec::new();
    for d in a.diagnostics.iter().filter(|d| d.range.touches(offset)) {
        if !seen.contains(&d.rule) {
            seen.push(d.rule);
            rules.push(rule_markdown(d.rule));
            rule_range.get_or_insert(d.range);
        }
    }

    let hit = locate::at(&a.tree, offset);
    let version = a.model.version();
    let mut on_name = false;
    if let Some(sym) = navigation::symbol_at(a, offset) {
        if let Some(md) = symbol_markdown(&a.model, a, &sym) {
            sections.push(md);
            range = Some(sym.range);
            on_name = true;
        }
    }
    if let Some((entry, true)) = hit.entry {
        if a.tree.is_merge_key(entry.key) {
            if let Some(md) = merge_key_markdown(a, entry) {
                sections.push(md);
                range.get_or_insert(a.tree.node(entry.key).range);
            }
        }
    }
    if let Some((entry, on_key)) = hit.entry {
        let key = a.tree.text(entry.key).unwrap_or_default();
        let key_range = a.tree.node(entry.key).range;
        // The mapping holding the entry: for a key, the path itself; for a value, one up.
        let container: &[Seg] = if on_key {
            &hit.segs
        } else {
            hit.segs.split_last().map_or(&[][..], |(_, rest)| rest)
        };
        if !on_name {
            if let Some(place) = locate::place_of(container, version) {
                if let Some(spec) = place.key(key) {
                    // On a value: the key's documentation for a one-line value (an enum, a
                    // size); inside a script or a multi-line string only words say more.
                    let one_line_value = hit.scalar == Some(entry.value) && {
                        let r = a.tree.node(entry.value).range;
                        !r.slice(&a.text).contains('\n')
                    };
                    if on_key || one_line_value {
                        sections.push(key_markdown(place, spec, version));
                        range.get_or_insert(if on_key {
                            key_range
                        } else {
                            a.tree.node(entry.value).range
                        });
                    }
                }
            }
        }
    }
    // A launcher word: the launch as it runs; `exec_all`: what it is and what it starts.
    if let Some(task) = a.model.tasks().find(|t| t.range.touches(offset)) {
        if let Some((r, md)) = exec_all_markdown(a, task, offset) {
            sections.push(md);
            range.get_or_insert(r);
        }
        let launches = &a.facts(task).launches;
        if let Some(l) = launches.iter().find(|l| {
            l.launcher != fuzzfile_check::semantics::Launcher::ExecAll
                && l.range().touches(offset)
                && !l.range().is_empty()
        }) {
            sections.push(launch_info::launch_markdown(a, task, l));
            range.get_or_insert(l.range());
        }
    }
    // Words inside values: environment variables and launcher flags.
    if let Some(id) = hit.scalar {
        let node_range = a.tree.node(id).range;
        if let Some((word_range, md)) = word_markdown(v, &hit.segs, node_range, offset) {
            sections.push(md);
            range = Some(word_range);
        }
    }
    if range.is_none() {
        range = rule_range;
    }
    sections.extend(rules);
    if sections.is_empty() {
        return None;
    }
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: sections.join("\n\n---\n\n"),
        }),
        range: range.map(|r| v.lines.range(r)),
    })
}

/// A YAML merge key `<<`: what it brings into its mapping (the keys the mapping does not write
/// itself, and where each comes from), as Fuzzball's decoder merges them.
fn merge_key_markdown(
    a: &fuzzfile_check::Analysis,
    entry: fuzzfile_syntax::Entry,
) -> Option<String> {
    let tree = &a.tree;
    // The mapping holding this entry.
    let map = tree.nodes().find_map(|(id, n)| match &n.kind {
        fuzzfile_syntax::NodeKind::Mapping { entries, .. }
            if entries.iter().any(|e| e.key == entry.key) =>
        {
            Some(id)
        }
        _ => None,
    })?;
    let own: Vec<NodeId> = tree.entries(map)?.iter().map(|e| e.key).collect();
    let merged = tree.merged_entries(map)?;
    let brought: Vec<String> = merged
        .iter()
        .filter(|e| !own.contains(&e.key))
        .take(20)
        .map(|e| {
            let line = a
                .line_index
                .line_col(&a.text, tree.node(e.key).range.start)
                .line;
            format!("`{}` (line {line})", tree.text(e.key).unwrap_or("?"))
        })
        .collect();
    let mut s = String::from("**`<<`** YAML merge key: the entries of the mapping it names (or of each mapping of a list, the first one winning) belong to this mapping too, as Fuzzball's decoder (Go `yaml.v3`) reads them; a key written here wins, and a merged value is replaced whole, not merged.");
    if brought.is_empty() {
        s.push_str("\n\nHere it brings nothing this mapping does not write itself.");
    } else {
        s.push_str(&format!("\n\nHere it brings {}.", brought.join(", ")));
    }
    if let Some((_, message)) = tree.merge_problem(entry.value) {
        s.push_str(&format!("\n\nFuzzball refuses this value: {message}."));
    }
    Some(s)
}

/// `exec_all` under the cursor (the helper word of a launch): what it is, and what it starts
/// on how many nodes here.
fn exec_all_markdown(
    a: &fuzzfile_check::Analysis,
    task: &Task,
    offset: u32,
) -> Option<(TextRange, String)> {
    use fuzzfile_check::semantics::Launcher;
    let facts = a.facts(task);
    // A launch behind `exec_all` records the helper's word; its own words are what it starts.
    let (word, l) = facts.launches.iter().find_map(|l| {
        let r = l.exec_all?;
        (r.touches(offset) && !r.is_empty()).then_some((r, l))
    })?;
    let mut s = format!("**`exec_all`**\n\n{}", knowledge::EXEC_ALL);
    let started = if l.launcher == Launcher::ExecAll {
        let words: Vec<&str> = l.words.iter().take(6).map(|w| w.text.as_str()).collect();
        let more = if l.words.len() > 6 { " …" } else { "" };
        if words.is_empty() {
            None
        } else {
            Some(format!("`{}{more}`", words.join(" ").replace('`', "'")))
        }
    } else {
        Some(format!("`{}`", l.launcher.name()))
    };
    let nodes = facts.nodes.map(|(n, _)| n);
    match (facts.wrapped_by_fuzzball(), nodes, started) {
        (Some(imp), _, _) => s.push_str(&format!(
            "\n\nHere the job's implementation is `{}`: Fuzzball already starts the command on every node, and `exec_all` is not the helper of that implementation (see `launcher-double-wrap`).",
            imp.as_str()
        )),
        (None, Some(n), Some(what)) if n > 1 => s.push_str(&format!(
            "\n\nHere: starts {what} on each of the {n} nodes (`multinode.nodes`), `RANK` 0 to {}.",
            n - 1
        )),
        (None, Some(_), Some(what)) => {
            s.push_str(&format!("\n\nHere: starts {what} on the job's one node."))
        }
        (None, None, Some(what)) => s.push_str(&format!(
            "\n\nHere: starts {what}, but this job has no `multinode` section, and `exec_all` is provided in `generic` multinode jobs."
        )),
        (None, _, None) => {}
    }
    Some((word, s))
}

/// The rule's code, name, summary, the first two sections of its documentation and a link.
pub fn rule_markdown(rule: Rule) -> String {
    let doc = fuzzfile_check::rules::documentation(rule);
    // "What it does" and "Why is this bad?", by name (a rule may have other sections, such as
    // the launchers it reads, between them): the rest is behind the link.
    let mut body = String::new();
    let mut shown = true;
    for line in doc.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            shown = matches!(heading.trim(), "What it does" | "Why is this bad?");
        }
        if shown {
            body.push_str(line);
            body.push('\n');
        }
    }
    // A renamed rule says its former names (still accepted in configs and suppressions).
    let former = fuzzfile_check::rules::former_names_sentence(fuzzfile_check::rules::meta(rule))
        .map(|s| format!("{s}\n\n"))
        .unwrap_or_default();
    format!(
        "**{} `{}`** ({}): {}\n\n{former}{}\n[Documentation of `{}`]({})",
        rule.code(),
        rule.name(),
        rule.default_severity(),
        rule.summary(),
        body.trim_end(),
        rule.name(),
        rule_doc_url(rule)
    )
}

pub fn key_markdown(
    place: schema::Place,
    spec: &KeySpec,
    version: Option<fuzzfile_model::Version>,
) -> String {
    let mut s = format!("**`{}`** {}\n\n{}", spec.name, place.describe(), spec.doc);
    if let Some(values) = schema::allowed_values(place, spec.name) {
        let list: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
        s.push_str(&format!("\n\nValues: {}", list.join(", ")));
    }
    let versions = match spec.versions {
        Versions::Both => "Fuzzfile `v1` and `v4`",
        Versions::V1Only => "Fuzzfile `v1` only",
        Versions::V4Only => "Fuzzfile `v4` only",
    };
    s.push_str(&format!("\n\nValid in: {versions}"));
    if !spec.versions.allows(version) {
        if let Some(v) = version {
            s.push_str(&format!(" (this file is `{}`)", v.as_str()));
        }
    }
    match spec.status {
        Status::Current => {}
        Status::Deprecated(why) => s.push_str(&format!("\n\n**Deprecated**: {why}.")),
        Status::Removed(why) => s.push_str(&format!("\n\n**Removed**: {why}.")),
    }
    s
}

fn task_of<'m>(model: &'m Fuzzfile, name: &str) -> Option<&'m Task> {
    model.task(name)
}

/// A summary of the job, service, volume or file a name defines or refers to.
fn symbol_markdown(model: &Fuzzfile, a: &fuzzfile_check::Analysis, sym: &Symbol) -> Option<String> {
    match sym.kind {
        SymbolKind::Task => {
            let t = task_of(model, &sym.name)?;
            let mut s = launch_info::summary(a, t);
            if let Some(uri) = t.image.as_ref().and_then(|i| i.uri.as_ref()) {
                s.push_str(&format!(
                    "\n\nimage `{}`",
                    uri.range.slice(&a.text).trim_matches(['"', '\''])
                ));
            }
            let deps: Vec<String> = t
                .depends_on
                .iter()
                .filter_map(|d| d.name.as_ref().map(|n| format!("`{}`", n.value)))
                .chain(t.requires.iter().map(|r| format!("`{}`", r.value)))
                .collect();
            if !deps.is_empty() {
                s.push_str(&format!("\n\nwaits for {}", deps.join(", ")));
            }
            Some(s)
        }
        SymbolKind::Volume => {
            let vol = model.volume(&sym.name)?;
            let mut s = format!("volume `{}`", vol.key.value);
            if let Some(r) = &vol.reference {
                s.push_str(&format!(
                    ": `{}`",
                    r.range.slice(&a.text).trim_matches(['"', '\''])
                ));
            } else if let Some(u) = &vol.use_ {
                s.push_str(&format!(": use `{}`", u.value));
            }
            let users: Vec<String> = model
                .tasks()
                .filter(|t| t.mounts.iter().any(|m| m.volume.value == vol.key.value))
                .map(|t| {
                    let path = t
                        .mounts
                        .iter()
                        .find(|m| m.volume.value == vol.key.value)
                        .map(|m| m.path.value.clone())
                        .unwrap_or_default();
                    format!("`{}` at `{path}`", t.name.value)
                })
                .collect();
            if !users.is_empty() {
                s.push_str(&format!("\n\nmounted by {}", users.join(", ")));
            }
            if !vol.ingress.is_empty() || !vol.egress.is_empty() {
                s.push_str(&format!(
                    "\n\n{} ingress, {} egress transfer(s)",
                    vol.ingress.len(),
                    vol.egress.len()
                ));
            }
            Some(s)
        }
        SymbolKind::File => {
            let f = model.file(&sym.name)?;
            let lines = f.content.value.lines().count();
            let first = f.content.value.lines().next().unwrap_or("");
            let short: String = first.chars().take(60).collect();
            Some(format!(
                "file `{}`: {lines} line(s), starting `{}`",
                f.name.value,
                short.replace('`', "'")
            ))
        }
    }
}

/// Documentation of the word at `offset` inside a value: `$VAR`, `NAME=` of an env entry, a
/// torchrun flag.
fn word_markdown(
    v: &View<'_>,
    segs: &[Seg],
    node_range: TextRange,
    offset: u32,
) -> Option<(TextRange, String)> {
    let text = v.text();
    let (start, end) = word_bounds(text, node_range, offset)?;
    let word = text.get(start..end)?;
    let range = TextRange::from_usize(start, end);
    // `NAME=VALUE` of an env list: the name.
    if matches!(segs, [.., Seg::Key(k), Seg::Item] if k == "env") {
        let name = word.split('=').next().unwrap_or(word);
        let name_end = start + name.len();
        if (offset as usize) <= name_end {
            if let Some(md) = knowledge::variable_markdown(name) {
                return Some((TextRange::from_usize(start, name_end), md));
            }
        }
    }
    // `$NAME`, `${NAME}` anywhere in a value.
    let at = (offset as usize).saturating_sub(start);
    for (i, _) in word.match_indices('$') {
        let rest = &word[i + 1..];
        let (name, skip) = match rest.strip_prefix('{') {
            Some(r) => (r.split('}').next().unwrap_or(""), 1),
            None => (
                rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or(""),
                0,
            ),
        };
        let span = i..i + 1 + skip + name.len() + skip;
        if span.contains(&at) || span.end == at {
            let range = TextRange::from_usize(start + span.start, start + span.end);
            // A variable of the job's environment: its value, then what it is.
            let own = v
                .analysis
                .model
                .tasks()
                .find(|t| t.range.touches(offset))
                .and_then(|t| {
                    v.analysis.facts(t).env_var(name).map(|e| {
                        let from = if e.from_defaults {
                            "`defaults.job.env`"
                        } else {
                            "the job's `env`"
                        };
                        format!(
                            "**`{name}`** = `{}` (from {from})",
                            e.value.replace('`', "'")
                        )
                    })
                });
            let doc = knowledge::variable_markdown(name);
            match (own, doc) {
                (Some(own), Some(doc)) => return Some((range, format!("{own}\n\n{doc}"))),
                (Some(own), None) => return Some((range, own)),
                _ => {}
            }
            if let Some(md) = knowledge::variable_markdown(name) {
                return Some((
                    TextRange::from_usize(start + span.start, start + span.end),
                    md,
                ));
            }
        }
    }
    // A torchrun flag of an invocation the launcher analysis found here.
    if word.starts_with('-') {
        let task = v.analysis.model.tasks().find(|t| t.range.touches(offset))?;
        let is_flag = v
            .analysis
            .facts(task)
            .distributed()
            // torchrun's own flags (accelerate, fabric and deepspeed are torchrun-like too,
            // with flags of their own).
            .filter(|(l, _)| {
                use fuzzfile_check::semantics::Launcher;
                matches!(l.launcher, Launcher::Torchrun | Launcher::DistributedLaunch)
            })
            .any(|(_, args)| args.flags.iter().any(|f| f.flag_range.touches(offset)));
        if is_flag {
            if let Some(e) = knowledge::torchrun_flag(word) {
                let name_end = word.find('=').map_or(end, |i| start + i);
                return Some((
                    TextRange::from_usize(start, name_end),
                    format!(
                        "**torchrun `--{}`**\n\n{}\n\nWhen absent, torchrun reads `PET_{}`.",
                        e.name,
                        e.doc,
                        e.name.to_ascii_uppercase().replace('-', "_")
                    ),
                ));
            }
        }
    }
    let _ = range;
    None
}

/// The shell-ish word around `offset` within `node` (letters, digits and `_-=${}.:/`).
fn word_bounds(text: &str, node: TextRange, offset: u32) -> Option<(usize, usize)> {
    crate::locate::word_around(text, node, offset, |c| {
        c.is_ascii_alphanumeric() || "_-=${}.:/".contains(c)
    })
}
