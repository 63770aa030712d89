//! The findings of each job and service kept between analyses of one document, so that an
//! edit re-runs the per-task rules (and derives the facts) of the tasks it can change only.
//!
//! The language server analyses the same document on every keystroke; a keystroke changes one
//! job or service, or the text around them. Each task's findings (those of every rule's `task`
//! hook, [`crate::rules::Check::task`]) are kept, keyed by the task's own text, and reused
//! while everything else a task hook can read is unchanged. What a task hook reads, beside its
//! own task:
//!
//! - the text outside every job and service (`version`, `defaults`, `volumes`, `files`, the
//!   section keys): a task's environment, its shipped files, its defaults;
//! - the kind and name of every task (a dependency's target: `invalid-value`);
//! - every anchored node (`&name`): a task that merges or aliases it reads its text;
//! - the newline the file uses (a fix's inserted lines) and the cluster profile.
//!
//! These make the *context*. Comments are left out of it (no rule reads a comment; the
//! suppressions apply to every finding after the rules run), so typing in a comment between
//! two jobs keeps every task's findings. When the context changes, every entry is dropped.
//!
//! A finding's positions are kept relative to the place they point into: its own task, or
//! another part of the file (a label on the job a dependency names), whose text is kept with
//! the entry and must be unchanged for a reuse. A finding with a range over several parts is
//! not kept (its task is checked again each time). After a syntax error, a task holding a line
//! that recovery blanked is checked each time, and the blanked lines outside the tasks are part
//! of the context. Reused findings equal, position for position, what running the hooks
//! again would give (`tests/task_cache.rs` compares the two over random edits of every file of
//! the corpus).
//!
//! Owned by the caller, one per document (`Options::task_findings`); nothing is kept anywhere
//! else. It holds the entries of the last analysis only (those it reused or stored), so it is
//! about the size of the document's text and its findings, whatever the number of edits.

use fuzzfile_diagnostics::{Diagnostic, TextRange};
use fuzzfile_model::{Fuzzfile, Task, TaskKind};
use fuzzfile_syntax::Tree;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The kept findings of one document's tasks (cheap to clone: shared).
#[derive(Clone, Default)]
pub struct TaskFindingsCache {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for TaskFindingsCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let counts = self.counts();
        write!(
            f,
            "TaskFindingsCache({} tasks reused, {} checked)",
            counts.reused, counts.checked
        )
    }
}

/// How many tasks the analyses with one cache reused and checked: the measure of how much an
/// edit re-analysed.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct TaskCounts {
    /// Tasks whose kept findings were used.
    pub reused: u64,
    /// Tasks whose hooks ran.
    pub checked: u64,
}

#[derive(Default)]
struct Inner {
    /// The context the entries were found in.
    context: String,
    /// The jobs' entries, keyed by the task's text from its name to the end of its body.
    jobs: HashMap<Box<str>, Entry>,
    /// The services' entries.
    services: HashMap<Box<str>, Entry>,
    /// The analysis now using the cache (counted from 1); an entry used by an earlier one
    /// only is dropped when this one ends.
    generation: u64,
    counts: TaskCounts,
}

impl Inner {
    fn entries(&mut self, kind: TaskKind) -> &mut HashMap<Box<str>, Entry> {
        match kind {
            TaskKind::Job => &mut self.jobs,
            TaskKind::Service => &mut self.services,
        }
    }
}

/// The findings of one task with their positions made relative.
struct Entry {
    /// The findings, every range set to the empty range (`places` has them).
    findings: Vec<Diagnostic>,
    /// Each range of `findings`, in the order [`for_each_range`] visits them.
    places: Vec<Place>,
    /// The other parts of the file the findings point into, with their text then.
    others: Vec<(u32, Box<str>)>,
    /// The last analysis that reused or stored it.
    used: u64,
}

/// Where a range of a kept finding points.
#[derive(Clone, Copy)]
enum Place {
    /// Into the task itself: offsets from its start.
    Own { start: u32, end: u32 },
    /// Into part `part` of the file (see [`Parts`]): offsets from its start.
    Other { part: u32, start: u32, end: u32 },
}

impl TaskFindingsCache {
    /// How many tasks' findings are kept (those of the last analysis).
    pub fn kept_tasks(&self) -> usize {
        self.inner
            .lock()
            .map(|c| c.jobs.len() + c.services.len())
            .unwrap_or(0)
    }

    /// Tasks reused and checked so far.
    pub fn counts(&self) -> TaskCounts {
        self.inner.lock().map(|c| c.counts).unwrap_or_default()
    }
}

/// The file cut into parts: the text before the first task, the first task, the text between
/// it and the next, and so on, ending with the text after the last task (tasks in the order of
/// the text).
pub(crate) struct Parts {
    /// `(start, end)` of each part; tasks at odd indexes.
    bounds: Vec<(u32, u32)>,
    /// The part of each task of the model (jobs then services), by its body node.
    by_body: HashMap<fuzzfile_syntax::NodeId, u32>,
    /// The tasks' parts holding a line recovery blanked.
    blanked: Vec<u32>,
}

impl Parts {
    /// The parts of `text`; `None` when tasks overlap (a file the cache does not serve).
    fn of(text: &str, model: &Fuzzfile) -> Option<Parts> {
        let mut tasks: Vec<&Task> = model.tasks().collect();
        tasks.sort_by_key(|t| (t.range.start, t.range.end));
        let mut bounds = Vec::with_capacity(tasks.len() * 2 + 1);
        let mut by_body = HashMap::with_capacity(tasks.len());
        let mut at = 0u32;
        for (i, t) in tasks.iter().enumerate() {
            if t.range.start < at || t.range.end as usize > text.len() {
                return None;
            }
            bounds.push((at, t.range.start));
            if by_body.insert(t.body, bounds.len() as u32).is_some() {
                return None;
            }
            let limit = tasks
                .get(i + 1)
                .map_or(text.len() as u32, |n| n.range.start);
            let end = body_lines_end(text, t.range, limit);
            bounds.push((t.range.start, end));
            at = end;
        }
        bounds.push((at, text.len() as u32));
        Some(Parts {
            bounds,
            by_body,
            blanked: Vec::new(),
        })
    }

    /// The part holding all of `range` (its ends may touch the part's ends); a task's part
    /// before the text around it.
    fn holding(&self, range: TextRange) -> Option<u32> {
        // The first part that ends at or after the range's start.
        let first = self.bounds.partition_point(|&(_, end)| end < range.start);
        (first..self.bounds.len())
            .take_while(|&i| self.bounds[i].0 <= range.start)
            .filter(|&i| range.end <= self.bounds[i].1)
            // Prefer a task (odd index) to the text that touches it.
            .max_by_key(|&i| i % 2)
            .map(|i| i as u32)
    }

    fn text<'t>(&self, text: &'t str, part: u32) -> &'t str {
        let (s, e) = self.bounds[part as usize];
        &text[s as usize..e as usize]
    }
}

/// Where a task's part ends: after the lines below its entry that are indented more than its
/// name (with the comment and blank lines among them), up to `limit` (the next task). In a valid
/// file they are the task's own lines; after a syntax error, recovery may have cut the task short
/// and blanked some of them, and they stay with the task rather than with the context of every
/// task. A task whose entry ends inside a line (flow style) ends where its entry ends.
fn body_lines_end(text: &str, range: TextRange, limit: u32) -> u32 {
    let bytes = text.as_bytes();
    let (start, limit) = (range.start as usize, (limit as usize).min(text.len()));
    let column = start - text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = |from: usize| text[from..].find('\n').map_or(text.len(), |i| from + i);
    let first_end = line_end(range.end as usize);
    let rest = text[range.end as usize..first_end].trim();
    if !(rest.is_empty() || rest.starts_with('#')) {
        return range.end;
    }
    // The rest of its last line (a comment), then each following line: kept when indented more
    // than the name (blank lines only with such a line after them).
    let mut end = first_end.min(limit);
    let mut committed = end;
    while end < limit && bytes.get(end) == Some(&b'\n') {
        let line_start = end + 1;
        if line_start >= limit {
            break;
        }
        let this_end = line_end(line_start).min(limit);
        let line = &text[line_start..this_end];
        let indent = line.len() - line.trim_start_matches([' ', '\t']).len();
        let content = line.trim();
        end = this_end;
        if content.is_empty() {
            continue;
        }
        if indent <= column {
            break;
        }
        committed = this_end;
    }
    committed as u32
}

/// The context of a document's tasks: everything a task hook reads besides its task (see the
/// module's documentation).
fn context(
    text: &str,
    tree: &Tree,
    model: &Fuzzfile,
    parts: &Parts,
    profile: Option<&crate::profile::ClusterProfile>,
) -> String {
    let mut out = String::with_capacity(1024);
    out.push_str(fuzzfile_diagnostics::newline_of(text));
    // Each piece with its length in front: a name may hold any character (a `\0` escape too).
    use std::fmt::Write;
    // The text outside the tasks, without its comments.
    let mut comments = tree.comments.iter().map(|c| c.range).peekable();
    let mut gap = String::new();
    for part in parts.bounds.iter().step_by(2) {
        gap.clear();
        let mut at = part.0;
        while let Some(c) = comments.peek().copied() {
            if c.start >= part.1 {
                break;
            }
            comments.next();
            if c.end <= at {
                continue;
            }
            let start = c.start.max(at);
            gap.push_str(&text[at as usize..start as usize]);
            at = c.end.min(part.1);
        }
        gap.push_str(&text[at as usize..part.1 as usize]);
        let _ = write!(out, "{}:{gap}", gap.len());
    }
    for t in model.tasks() {
        let _ = write!(
            out,
            "{} {}:{}",
            t.kind.as_str(),
            t.name.value.len(),
            t.name.value
        );
    }
    for id in tree.anchored_nodes() {
        let r = tree.node(id).range;
        let anchored = text.get(r.start as usize..r.end as usize).unwrap_or("");
        let _ = write!(out, "&{}:{anchored}", anchored.len());
    }
    if let Some(p) = profile {
        let p = format!("{p:?}");
        let _ = write!(out, "{}:{p}", p.len());
    }
    out
}

/// Calls `f` on every range of a finding, in one fixed order.
fn for_each_range(d: &mut Diagnostic, mut f: impl FnMut(&mut TextRange)) {
    f(&mut d.range);
    for l in &mut d.labels {
        f(&mut l.range);
    }
    if let Some(fix) = &mut d.fix {
        for e in &mut fix.edits {
            f(&mut e.range);
        }
    }
}

/// One analysis's use of the cache: the parts and context computed once, then each task looked
/// up or stored.
pub(crate) struct Session<'c> {
    cache: &'c TaskFindingsCache,
    parts: Parts,
    text_len: u32,
}

impl<'c> Session<'c> {
    /// Start using `cache` for one analysis; `None` when this file is analysed without it.
    pub(crate) fn start(
        cache: &'c TaskFindingsCache,
        text: &str,
        line_index: &fuzzfile_diagnostics::LineIndex,
        tree: &Tree,
        model: &Fuzzfile,
        profile: Option<&crate::profile::ClusterProfile>,
    ) -> Option<Session<'c>> {
        let mut parts = Parts::of(text, model)?;
        let blanked: Vec<u32> = tree
            .blanked_lines
            .iter()
            .map(|&l| line_index.line_start(l as usize))
            .collect();
        let mut context = context(text, tree, model, &parts, profile);
        // Lines recovery blanked (a syntax error): a task holding one was parsed from other text
        // than its own, so it is checked each time; one outside the tasks is in the context
        // (where the parse saw spaces, the context's text may hold anything).
        for start in blanked {
            let part = parts.holding(TextRange::new(start, start))?;
            if part % 2 == 1 {
                parts.blanked.push(part);
            } else {
                use std::fmt::Write;
                let _ = write!(
                    context,
                    "\u{1}{part}:{}",
                    start - parts.bounds[part as usize].0
                );
            }
        }
        let mut inner = cache.inner.lock().ok()?;
        if inner.context != context {
            inner.jobs.clear();
            inner.services.clear();
            inner.context = context;
        }
        inner.generation += 1;
        Some(Session {
            cache,
            parts,
            text_len: text.len() as u32,
        })
    }

    /// The kept findings of `task`, placed in `text`, if they are kept and still hold.
    pub(crate) fn reuse(&self, text: &str, task: &Task, out: &mut Vec<Diagnostic>) -> bool {
        let Some(&own) = self.parts.by_body.get(&task.body) else {
            return false;
        };
        if self.parts.blanked.contains(&own) {
            return false;
        }
        let Ok(mut inner) = self.cache.inner.lock() else {
            return false;
        };
        let generation = inner.generation;
        let Some(entry) = inner.entries(task.kind).get_mut(self.parts.text(text, own)) else {
            return false;
        };
        let holds = entry.others.iter().all(|(part, then)| {
            (*part as usize) < self.parts.bounds.len() && self.parts.text(text, *part) == &**then
        });
        if !holds {
            return false;
        }
        entry.used = generation;
        let base = self.parts.bounds[own as usize].0;
        let mut places = entry.places.iter();
        let first = out.len();
        for d in &entry.findings {
            let mut d = d.clone();
            let mut placed = true;
            for_each_range(&mut d, |r| {
                let Some(place) = places.next() else {
                    placed = false;
                    return;
                };
                *r = match *place {
                    Place::Own { start, end } => TextRange::new(base + start, base + end),
                    Place::Other { part, start, end } => {
                        let b = self.parts.bounds[part as usize].0;
                        TextRange::new(b + start, b + end)
                    }
                };
                placed &= r.end <= self.text_len;
            });
            if !placed {
                out.truncate(first);
                return false;
            }
            out.push(d);
        }
        inner.counts.reused += 1;
        true
    }

    /// Keep `findings`, those of `task` just found.
    pub(crate) fn store(&self, text: &str, task: &Task, findings: &[Diagnostic]) {
        let own = match self.parts.by_body.get(&task.body) {
            Some(&own) if !self.parts.blanked.contains(&own) => own,
            _ => {
                if let Ok(mut inner) = self.cache.inner.lock() {
                    inner.counts.checked += 1;
                }
                return;
            }
        };
        let (own_start, own_end) = self.parts.bounds[own as usize];
        let mut places = Vec::new();
        let mut others: Vec<(u32, Box<str>)> = Vec::new();
        let mut kept = Vec::with_capacity(findings.len());
        let mut whole = true;
        for d in findings {
            let mut d = d.clone();
            for_each_range(&mut d, |r| {
                let place = if own_start <= r.start && r.end <= own_end {
                    Place::Own {
                        start: r.start - own_start,
                        end: r.end - own_start,
                    }
                } else if let Some(part) = self.parts.holding(*r) {
                    let b = self.parts.bounds[part as usize].0;
                    if !others.iter().any(|(p, _)| *p == part) {
                        others.push((part, self.parts.text(text, part).into()));
                    }
                    Place::Other {
                        part,
                        start: r.start - b,
                        end: r.end - b,
                    }
                } else {
                    whole = false;
                    Place::Own { start: 0, end: 0 }
                };
                places.push(place);
                *r = TextRange::default();
            });
            kept.push(d);
        }
        let Ok(mut inner) = self.cache.inner.lock() else {
            return;
        };
        inner.counts.checked += 1;
        let generation = inner.generation;
        if whole {
            let key: Box<str> = self.parts.text(text, own).into();
            inner.entries(task.kind).insert(
                key,
                Entry {
                    findings: kept,
                    places,
                    others,
                    used: generation,
                },
            );
        }
    }

    /// End the analysis: drop the entries it did not use (those of the tasks' earlier texts).
    pub(crate) fn finish(self) {
        if let Ok(mut inner) = self.cache.inner.lock() {
            let generation = inner.generation;
            inner.jobs.retain(|_, e| e.used == generation);
            inner.services.retain(|_, e| e.used == generation);
        }
    }
}
