//! Span tree → typed [`Fuzzfile`] plus the schema-level diagnostics found on the way.
//!
//! The walk never stops at a problem: an unknown key, a wrong type or a bad value is reported
//! and the walk goes on with the next key, so one mistake does not hide the others.

use crate::model::*;
use crate::schema::{self, did_you_mean, kebab_case, Place, Status};
use crate::values::{self, DurationError};
use fuzzfile_diagnostics::{Applicability, Diagnostic, Fix, Rule, Severity, TextRange};
use fuzzfile_syntax::{CoreValue, NodeId, NodeKind, ScalarStyle, Tree};
use std::collections::HashMap;
use std::sync::Arc;

/// Build the model of `tree` (parsed from `text`).
pub fn build(text: &str, tree: &Tree) -> (Fuzzfile, Vec<Diagnostic>) {
    let mut b = Builder {
        text,
        tree,
        version: None,
        diags: Vec::new(),
        budget: tree.len().saturating_mul(8) + 10_000,
        exhausted: false,
        deprecated_keys: Vec::new(),
    };
    let mut file = Fuzzfile::default();
    b.duplicate_keys();
    b.tags();
    match tree.root() {
        Some(root) if !tree.is_null(root) => b.root(root, &mut file),
        // Nothing but comments, blank lines or `---`: not a Fuzzfile. (A text that does not
        // parse has its syntax errors instead.)
        _ if tree.errors.is_empty() => b.emit(
            Diagnostic::new(
                Rule::MissingField,
                TextRange::empty(0),
                "the file holds no YAML content: a Fuzzfile needs `version` and `jobs` or `services`",
            )
            .with_help("start the file with `version: v4` and a `jobs:` mapping"),
        ),
        _ => {}
    }
    file.deprecated_keys = b.deprecated_keys;
    (file, b.diags)
}

struct Builder<'a> {
    text: &'a str,
    tree: &'a Tree,
    version: Option<Version>,
    diags: Vec<Diagnostic>,
    /// Nodes the walk may still visit: aliases can make a small tree look huge.
    budget: usize,
    exhausted: bool,
    /// Deprecated keys as read (`Fuzzfile::deprecated_keys`).
    deprecated_keys: Vec<KeyAt>,
}

/// A key of a mapping, borrowed from the tree (keys are read far more often than kept).
type Key<'a> = Spanned<&'a str>;

impl<'a> Builder<'a> {
    fn emit(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn range(&self, id: NodeId) -> TextRange {
        self.tree.node(self.tree.resolve(id)).range
    }

    /// Spend walk budget; false once exhausted (reported once).
    fn spend(&mut self, n: usize, at: NodeId) -> bool {
        if self.exhausted {
            return false;
        }
        if self.budget < n {
            self.exhausted = true;
            let r = self.range(at);
            self.emit(
                Diagnostic::new(Rule::YamlSyntax, r, "aliases expand this document beyond what a Fuzzfile can hold; stopped reading here")
                    .with_help("write the repeated parts out, or use fewer nested aliases"),
            );
            return false;
        }
        self.budget -= n;
        true
    }

    // ---- generic accessors -------------------------------------------------------------

    fn invalid(&mut self, id: NodeId, expected: impl std::fmt::Display) {
        let r = self.range(id);
        let found = self.tree.describe(id);
        self.emit(Diagnostic::new(
            Rule::InvalidValue,
            r,
            format!("expected {expected}, found {found}"),
        ));
    }

    /// Entries of a mapping whose keys are fixed by `place`. Unknown keys are reported and left
    /// out. A null value (`key:` with nothing after it) has no entries.
    fn object(&mut self, id: NodeId, place: Place) -> Vec<(Key<'a>, NodeId)> {
        let entries = self.map_entries(id, place.describe());
        let mut out = Vec::with_capacity(entries.len());
        // Did-you-mean needs the sibling keys; collect them only when a key is unknown.
        let mut unknown: Vec<(Key<'a>, NodeId)> = Vec::new();
        for (key, value) in entries {
            match place.key(key.value) {
                Some(spec) => {
                    if !spec.versions.allows(self.version) {
                        let v = self.version.map_or("", |v| v.as_str());
                        let other = if v == "v1" { "v4" } else { "v1" };
                        self.emit(
                            Diagnostic::new(
                                Rule::UnknownKey,
                                key.range,
                                format!(
                                    "`{}` is a {other} key; this file is version {v}",
                                    key.value
                                ),
                            )
                            .with_help(format!("{}: {}", key.value, spec.doc)),
                        );
                        continue;
                    }
                    match spec.status {
                        Status::Current => {}
                        // `deprecated-key` is a rule of `fuzzfile_check` reading these.
                        Status::Deprecated(_) => self.deprecated_keys.push(KeyAt {
                            key: owned(key.clone()),
                            place,
                        }),
                        Status::Removed(why) => {
                            self.emit(Diagnostic::new(
                                Rule::UnknownKey,
                                key.range,
                                format!(
                                    "`{}` is not accepted {}: {why}",
                                    key.value,
                                    place.describe()
                                ),
                            ));
                            continue;
                        }
                    }
                    out.push((key, value));
                }
                None => unknown.push((key, value)),
            }
        }
        if !unknown.is_empty() {
            let siblings: std::collections::HashSet<&str> = out
                .iter()
                .map(|(k, _)| k.value)
                .chain(unknown.iter().map(|(k, _)| k.value))
                .collect();
            for (key, value) in &unknown {
                self.unknown_key(key, *value, place, &siblings);
            }
        }
        out
    }

    /// Report an unknown key. A rename fix is offered only when the new name is not already a
    /// key of the same mapping (renaming would create a duplicate) and takes the kind of value
    /// written under the key (a list does not become a mapping key's value); "did you mean"
    /// only proposes keys that take that kind of value.
    fn unknown_key(
        &mut self,
        key: &Key<'a>,
        value: NodeId,
        place: Place,
        siblings: &std::collections::HashSet<&str>,
    ) {
        let valid: Vec<&'static str> = place
            .keys()
            .iter()
            .filter(|k| k.versions.allows(self.version) && !matches!(k.status, Status::Removed(_)))
            .map(|k| k.name)
            .collect();
        let tree = self.tree;
        let fits = |name: &str| schema::value_kind(place, name).fits(tree, value);
        let same_kind: Vec<&'static str> = valid.iter().copied().filter(|k| fits(k)).collect();
        let kebab = kebab_case(key.value);
        let mut d = Diagnostic::new(
            Rule::UnknownKey,
            key.range,
            format!("unknown key `{}` {}", key.value, place.describe()),
        );
        let rename = |d: &mut Diagnostic, to: &str, help: String| {
            if siblings.contains(to) {
                d.help = Some(format!(
                    "{help} (but `{to}` is already set in this mapping: merge the two)"
                ));
            } else if !fits(to) {
                d.help = Some(format!(
                    "{help} (but `{to}` takes {}, not {})",
                    kind_text(schema::value_kind(place, to)),
                    tree.describe(value)
                ));
            } else {
                d.help = Some(help);
                d.fix = Some(Fix::replace(format!("Rename to `{to}`"), key.range, to));
            }
        };
        if let Some(s) = valid.iter().find(|v| v.eq_ignore_ascii_case(key.value)) {
            rename(&mut d, s, format!("keys are case-sensitive: write `{s}`"));
        } else if kebab != key.value && valid.contains(&kebab.as_str()) {
            rename(
                &mut d,
                &kebab,
                format!("Fuzzfile keys are kebab-case: write `{kebab}`"),
            );
        } else if let Some(s) = did_you_mean(key.value, same_kind.iter().copied())
            .or_else(|| did_you_mean(key.value, valid.iter().copied()))
        {
            // A close key of another kind stays a suggestion, without a fix (`rename` says
            // what the key takes).
            rename(&mut d, s, format!("did you mean `{s}`?"));
        } else if let Some(other) = crate::schema::ALL_PLACES.iter().find(|p| {
            **p != place
                && p.key(key.value)
                    .is_some_and(|k| matches!(k.status, Status::Current))
        }) {
            d.help = Some(format!(
                "`{}` belongs {}; valid keys here: {}",
                key.value,
                other.describe(),
                list(&valid)
            ));
        } else {
            d.help = Some(format!("valid keys here: {}", list(&valid)));
        }
        self.emit(d);
    }

    /// Entries of any mapping (free-form keys such as job names or annotation keys), with its
    /// YAML merge keys applied as Fuzzball's decoder applies them (`<<: *defaults`: keys
    /// written in the mapping win, merged entries keep the anchor's ranges; see
    /// `fuzzfile_syntax`'s `merge.rs`). A merge value the decoder refuses is an
    /// `invalid-value` error.
    fn map_entries(&mut self, id: NodeId, what: &str) -> Vec<(Key<'a>, NodeId)> {
        // Once the walk budget is spent, nothing is read (merging costs what it brings).
        if self.exhausted {
            return Vec::new();
        }
        let rid = self.tree.resolve(id);
        let tree: &'a Tree = self.tree;
        let Some(entries) = tree.merged_entries(rid) else {
            if !tree.is_null(rid) {
                self.invalid(id, format_args!("a mapping {what}"));
            }
            return Vec::new();
        };
        if let Some(raw) = tree.entries(rid) {
            for e in raw.iter().filter(|e| tree.is_merge_key(e.key)) {
                if let Some((at, message)) = tree.merge_problem(e.value) {
                    let found = tree.describe(at);
                    // At the alias itself (`*e`), not at the list it names.
                    let r = tree.node(at).range;
                    self.emit(
                        Diagnostic::new(
                            Rule::InvalidValue,
                            r,
                            format!("{message} (found {found})"),
                        )
                        .with_help(
                            "a merge key `<<` takes an alias of a mapping (`<<: *defaults`) or a list of them (`<<: [*a, *b]`)",
                        ),
                    );
                }
            }
        }
        if !self.spend(entries.len() + 1, id) {
            return Vec::new();
        }
        let mut out = Vec::with_capacity(entries.len());
        for e in entries.iter() {
            let krid = self.tree.resolve(e.key);
            let tree: &'a Tree = self.tree;
            match tree.scalar(krid) {
                Some(s) => out.push((Spanned::new(s.value, tree.node(krid).range, krid), e.value)),
                None => {
                    let r = self.range(e.key);
                    self.emit(Diagnostic::new(
                        Rule::InvalidValue,
                        r,
                        "a key must be a plain string, not a list or mapping",
                    ));
                }
            }
        }
        out
    }

    /// `what` is written only into a finding (a `format_args!` costs nothing until then).
    fn seq(&mut self, id: NodeId, what: impl std::fmt::Display) -> Vec<NodeId> {
        let rid = self.tree.resolve(id);
        match &self.tree.node(rid).kind {
            NodeKind::Sequence { items, .. } => {
                if !self.spend(items.len() + 1, id) {
                    return Vec::new();
                }
                items.to_vec()
            }
            _ => {
                if !self.tree.is_null(rid) {
                    self.invalid(id, what);
                }
                Vec::new()
            }
        }
    }

    /// A string value; numbers and booleans are taken as written (Fuzzball coerces them).
    fn string(&mut self, id: NodeId, what: impl std::fmt::Display) -> Option<Spanned<String>> {
        let rid = self.tree.resolve(id);
        match &self.tree.node(rid).kind {
            NodeKind::Scalar(s) => {
                if self.tree.is_null(rid) {
                    let r = self.range(id);
                    self.emit(
                        Diagnostic::new(Rule::InvalidValue, r, format!("{what} is empty"))
                            .with_help(format!("give {what} a value, or remove the key")),
                    );
                    return None;
                }
                Some(Spanned::new(
                    self.tree.scalar_of(s).value.to_owned(),
                    self.tree.node(rid).range,
                    rid,
                ))
            }
            _ => {
                self.invalid(id, what);
                None
            }
        }
    }

    fn string_opt_null(
        &mut self,
        id: NodeId,
        what: impl std::fmt::Display,
    ) -> Option<Spanned<String>> {
        if self.tree.is_null(id) {
            return None;
        }
        self.string(id, what)
    }

    fn uint(&mut self, id: NodeId, what: impl std::fmt::Display, min: u64) -> Option<Spanned<u64>> {
        let rid = self.tree.resolve(id);
        let r = self.range(id);
        match self.tree.core_value(rid) {
            Some(CoreValue::Int(i)) if i >= 0 && (i as u64) >= min => {
                Some(Spanned::new(i as u64, r, rid))
            }
            Some(CoreValue::Int(i)) => {
                self.emit(Diagnostic::new(
                    Rule::InvalidValue,
                    r,
                    format!("{what} must be at least {min}, found {i}"),
                ));
                None
            }
            Some(CoreValue::Str(s))
                if s.trim().parse::<u64>().is_ok()
                    && self.tree.scalar(rid).is_some_and(|s| s.style.is_quoted()) =>
            {
                let n: u64 = s.trim().parse().unwrap_or(0);
                self.emit(
                    Diagnostic::new(
                        Rule::InvalidValue,
                        r,
                        format!("{what} must be a number, not the string \"{s}\""),
                    )
                    .with_fix(Fix::replace(
                        "Remove the quotes",
                        r,
                        n.to_string(),
                    )),
                );
                None
            }
            _ => {
                self.invalid(id, format_args!("{what} as a whole number"));
                None
            }
        }
    }

    fn int(&mut self, id: NodeId, what: &str) -> Option<Spanned<i64>> {
        let rid = self.tree.resolve(id);
        match self.tree.core_value(rid) {
            Some(CoreValue::Int(i)) => Some(Spanned::new(i, self.range(id), rid)),
            _ => {
                self.invalid(id, format_args!("{what} as a whole number"));
                None
            }
        }
    }

    fn boolean(&mut self, id: NodeId, what: &str) -> Option<Spanned<bool>> {
        let rid = self.tree.resolve(id);
        let r = self.range(id);
        match self.tree.core_value(rid) {
            Some(CoreValue::Bool(b)) => Some(Spanned::new(b, r, rid)),
            Some(CoreValue::Str(s))
                if matches!(s.to_ascii_lowercase().as_str(), "true" | "false") =>
            {
                let fixed = s.to_ascii_lowercase();
                self.emit(
                    Diagnostic::new(
                        Rule::InvalidValue,
                        r,
                        format!("{what} must be `true` or `false`, not the string \"{s}\""),
                    )
                    .with_fix(Fix::replace("Write a boolean", r, fixed)),
                );
                None
            }
            Some(CoreValue::Str(s))
                if matches!(
                    s,
                    "yes" | "no" | "on" | "off" | "y" | "n" | "Yes" | "No" | "On" | "Off"
                ) =>
            {
                let fixed = if matches!(s, "yes" | "on" | "y" | "Yes" | "On") {
                    "true"
                } else {
                    "false"
                };
                self.emit(
                    Diagnostic::new(
                        Rule::InvalidValue,
                        r,
                        format!("{what} must be `true` or `false`; `{s}` is a string in YAML 1.2"),
                    )
                    .with_fix(Fix::replace(
                        format!("Write `{fixed}`"),
                        r,
                        fixed,
                    )),
                );
                None
            }
            _ => {
                self.invalid(id, format_args!("{what} as `true` or `false`"));
                None
            }
        }
    }

    /// A string that must be one of `options` (exact case). A case-only mismatch is a warning
    /// with a fix, since the server's case handling is not documented.
    fn enumeration(
        &mut self,
        id: NodeId,
        what: &str,
        options: &[&'static str],
    ) -> Option<(Spanned<String>, &'static str)> {
        let s = self.string(id, what)?;
        if let Some(o) = options.iter().find(|o| **o == s.value) {
            return Some((s, o));
        }
        if let Some(o) = options.iter().find(|o| o.eq_ignore_ascii_case(&s.value)) {
            self.emit(
                Diagnostic::new(
                    Rule::InvalidValue,
                    s.range,
                    format!("{what} is written `{o}`, not `{}`", s.value),
                )
                .with_severity(Severity::Warning)
                .with_fix(Fix::replace(format!("Write `{o}`"), s.range, *o)),
            );
            return Some((s, o));
        }
        let mut d = Diagnostic::new(
            Rule::InvalidValue,
            s.range,
            format!(
                "`{}` is not a valid {what}; expected one of {}",
                s.value,
                list(options)
            ),
        );
        if let Some(m) = did_you_mean(&s.value, options.iter().copied()) {
            d = d.with_help(format!("did you mean `{m}`?")).with_fix(
                // The closest allowed value is a guess.
                Fix::replace(format!("Write `{m}`"), s.range, m)
                    .with_applicability(Applicability::Unsafe),
            );
        }
        self.emit(d);
        None
    }

    fn abs_path<S: AsRef<str>>(&mut self, s: &Spanned<S>, what: &str) -> bool {
        let value = s.value.as_ref();
        if value.starts_with('/') {
            if let Err(m) = values::check_contained_path(value) {
                self.emit(Diagnostic::new(
                    Rule::InvalidValue,
                    s.range,
                    format!("{what} `{}` {m}", value.escape_debug()),
                ));
                return false;
            }
            return true;
        }
        self.emit(
            Diagnostic::new(
                Rule::InvalidValue,
                s.range,
                format!("{what} must be an absolute path, found `{value}`"),
            )
            .with_help(format!("write `/{}`", value.trim_start_matches("./"))),
        );
        false
    }

    fn string_map(&mut self, id: NodeId, what: &str) -> Vec<KeyValue> {
        let mut out = Vec::new();
        for (key, v) in self.map_entries(id, what) {
            let rid = self.tree.resolve(v);
            if let Some(s) = self.tree.scalar(rid) {
                out.push(KeyValue {
                    key: owned(key),
                    value: Spanned::new(s.value.to_owned(), self.tree.node(rid).range, rid),
                });
            } else {
                self.invalid(v, format_args!("a string value for `{}`", key.value));
            }
        }
        out
    }

    fn secret(&mut self, id: NodeId, what: &str) -> Option<Spanned<values::SecretRef>> {
        let s = self.string_opt_null(id, what)?;
        match values::parse_secret_ref(&s.value) {
            Ok(r) => {
                self.secret_scope(&r, s.range);
                Some(Spanned::new(r, s.range, s.node))
            }
            Err(m) => {
                self.emit(Diagnostic::new(Rule::InvalidValue, s.range, m));
                None
            }
        }
    }

    fn secret_scope(&mut self, r: &values::SecretRef, range: TextRange) {
        if !values::SECRET_SCOPES.contains(&r.scope.as_str()) {
            self.emit(
                Diagnostic::new(
                    Rule::InvalidValue,
                    range,
                    format!(
                        "`{}` is not a known secret scope; expected one of {}",
                        r.scope,
                        list(values::SECRET_SCOPES)
                    ),
                )
                .with_severity(Severity::Warning),
            );
        }
    }

    // ---- the Fuzzfile ------------------------------------------------------------------

    fn root(&mut self, root: NodeId, file: &mut Fuzzfile) {
        let rid = self.tree.resolve(root);
        if !matches!(self.tree.node(rid).kind, NodeKind::Mapping { .. }) {
            if !self.tree.is_null(rid) {
                self.invalid(root, "a mapping with `version` and `jobs` at the top level");
            }
            return;
        }
        // The version decides which keys are valid everywhere else: read it first.
        let mut version_key = None;
        if let Some(e) = self.tree.get_merged(rid, "version") {
            version_key = Some(self.range(e.key));
            file.version_node = Some(e.value);
            let vr = self.range(e.value);
            // `legacy-version` and `unsupported-version` are rules of `fuzzfile_check`
            // reading `version` and `version_node`.
            match self.tree.text(e.value).unwrap_or("") {
                "v1" => {
                    self.version = Some(Version::V1);
                    file.version = Some(Spanned::new(Version::V1, vr, self.tree.resolve(e.value)));
                }
                "v4" => {
                    self.version = Some(Version::V4);
                    file.version = Some(Spanned::new(Version::V4, vr, self.tree.resolve(e.value)));
                }
                _ => {}
            }
        }
        let entries = self.object(root, Place::Root);
        if version_key.is_none() {
            let r = TextRange::empty(self.tree.node(rid).range.start);
            let mut d = Diagnostic::new(Rule::MissingField, r, "the Fuzzfile has no `version`")
                .with_help("start the file with `version: v4`");
            if let Some(edit) = self.version_insertion(rid) {
                d = d.with_fix(Fix::new("Add `version: v4`", vec![edit]));
            }
            self.emit(d);
        }
        let mut has_tasks = false;
        for (key, value) in &entries {
            match key.value {
                "version" => {}
                "jobs" => {
                    file.jobs_key = Some(key.range);
                    file.jobs = self.tasks(*value, TaskKind::Job);
                    has_tasks |= !file.jobs.is_empty();
                }
                "services" => {
                    file.services_key = Some(key.range);
                    file.services = self.tasks(*value, TaskKind::Service);
                    has_tasks |= !file.services.is_empty();
                }
                "volumes" => {
                    file.volumes_key = Some(key.range);
                    file.volumes = self.volumes(*value);
                }
                "files" => {
                    file.files_key = Some(key.range);
                    for kv in self.string_map(*value, "in `files`") {
                        // Referenced as `file://<name>`; Fuzzball allows any name, but an
                        // empty one cannot be referenced and a NUL cannot reach the runner.
                        let bad = if kv.key.value.is_empty() {
                            Some("is empty: it cannot be referenced as `file://<name>`")
                        } else if kv.key.value.contains('\0') {
                            Some("holds a NUL character, which no file name can hold")
                        } else {
                            None
                        };
                        if let Some(m) = bad {
                            self.emit(Diagnostic::new(
                                Rule::InvalidValue,
                                kv.key.range,
                                format!("the file name `{}` {m}", kv.key.value.escape_debug()),
                            ));
                        }
                        file.files.push(InlineFile {
                            name: kv.key,
                            content: kv.value,
                        });
                    }
                }
                "annotations" => file.annotations = self.string_map(*value, "in `annotations`"),
                "defaults" => {
                    for (k, v) in self.object(*value, Place::Defaults) {
                        if k.value == "job" {
                            file.defaults = Some(self.defaults_job(v));
                        }
                    }
                }
                _ => {}
            }
        }
        if !has_tasks && !self.exhausted {
            let r = file
                .jobs_key
                .or(file.services_key)
                .unwrap_or(TextRange::empty(self.tree.node(rid).range.start));
            self.emit(
                Diagnostic::new(
                    Rule::MissingField,
                    r,
                    "the workflow has no jobs and no services",
                )
                .with_help(
                    "a workflow needs at least one job or service under `jobs:` or `services:`",
                ),
            );
        }
    }

    /// Report a NUL character (written as the escape `\0` or `\x00` in a double-quoted
    /// scalar) in the string `id`: no process argument, environment entry or path can hold
    /// one, so the job would fail only when it starts.
    /// `what` is written only into a finding (a `format_args!` costs nothing until then).
    fn no_nul(&mut self, id: NodeId, what: impl std::fmt::Display) {
        let Some(s) = self.tree.scalar(id) else {
            return;
        };
        let Some(at) = s.value.find('\0') else {
            return;
        };
        let r = s.map.range_to_source(at..at + 1);
        self.emit(
            Diagnostic::new(
                Rule::InvalidValue,
                r,
                format!("{what} holds a NUL character, which no process argument or environment entry can hold"),
            )
            .with_help("remove the `\\0` (NUL) escape; the job would fail when it starts"),
        );
    }

    /// The edit that adds `version: v4` as the first key of the root mapping `rid`, at the
    /// column of its keys (an indented root keeps its indentation: `  jobs:` becomes
    /// `  version: v4` and `  jobs:`). `None` when the root is not a block mapping whose first
    /// key starts its line after spaces only (a flow mapping, `--- jobs:`, a tab).
    fn version_insertion(&self, rid: NodeId) -> Option<fuzzfile_diagnostics::Edit> {
        let node = self.tree.node(rid);
        if !matches!(
            node.kind,
            NodeKind::Mapping {
                style: fuzzfile_syntax::CollectionStyle::Block,
                ..
            }
        ) {
            return None;
        }
        let start = node.range.start as usize;
        let line_start = fuzzfile_diagnostics::line_start_at(self.text, start);
        let indent = self.text.get(line_start..start)?;
        let indent = indent.strip_prefix('\u{feff}').unwrap_or(indent);
        if !indent.bytes().all(|b| b == b' ') {
            return None;
        }
        Some(fuzzfile_diagnostics::Edit {
            range: TextRange::empty(node.range.start),
            replacement: format!(
                "version: v4{}{indent}",
                fuzzfile_diagnostics::newline_of(self.text)
            ),
        })
    }

    fn defaults_job(&mut self, id: NodeId) -> DefaultsJob {
        let mut d = DefaultsJob {
            range: self.range(id),
            ..DefaultsJob::default()
        };
        for (k, v) in self.object(id, Place::DefaultsJob) {
            match k.value {
                "env" => d.env = self.env(v, true).into(),
                "mounts" => d.mounts = self.mounts(v),
                "policy" => d.policy = Some(self.policy(v)),
                "resource" => d.resource = Some(self.resource(v)),
                _ => {}
            }
        }
        d
    }

    fn tasks(&mut self, id: NodeId, kind: TaskKind) -> Vec<Task> {
        let what = if kind == TaskKind::Job {
            "in `jobs`"
        } else {
            "in `services`"
        };
        let entries = self.map_entries(id, what);
        // Exactly as many as there are entries: a task is large, and doubling would leave up to
        // half of a big file's tasks as spare capacity.
        let mut out = Vec::with_capacity(entries.len());
        for (name, body) in entries {
            if let Err(m) = values::check_dns_label(name.value) {
                // No automatic fix: renaming would break the references to this name.
                self.emit(Diagnostic::new(
                    Rule::InvalidValue,
                    name.range,
                    format!("invalid {} name: {m}", kind.as_str()),
                ));
            }
            out.push(self.task(name, body, kind));
        }
        out
    }

    fn task(&mut self, name: Key<'a>, body: NodeId, kind: TaskKind) -> Task {
        let body_range = self.range(body);
        let mut t = Task {
            kind,
            range: name.range.cover(body_range),
            name: owned(name),
            body: self.tree.resolve(body),
            image: None,
            command: None,
            script: None,
            command_key: None,
            script_key: None,
            read_whole: false,
            args: Vec::new(),
            env: Arc::default(),
            cwd: None,
            mounts: Vec::new(),
            files: Vec::new(),
            resource: None,
            multinode: None,
            task_array: None,
            policy: None,
            depends_on: Vec::new(),
            requires: Vec::new(),
            depends_on_key: None,
            requires_key: None,
            network: None,
            persist: None,
            readiness_probe: None,
        };
        let place = if kind == TaskKind::Job {
            Place::Job
        } else {
            Place::Service
        };
        if !matches!(self.tree.node(t.body).kind, NodeKind::Mapping { .. }) {
            self.invalid(
                body,
                format_args!(
                    "a mapping with the {} definition (`image`, `command` or `script`, `resource`)",
                    kind.as_str()
                ),
            );
            return t;
        }
        for (k, v) in self.object(body, place) {
            match k.value {
                "image" => t.image = self.image(v),
                "command" => {
                    t.command_key = Some(k.range);
                    t.command = self.argv(v, "`command`");
                }
                "script" => {
                    t.script_key = Some(k.range);
                    t.script = self.script(v);
                }
                "args" => t.args = self.argv(v, "`args`").map(|a| a.value).unwrap_or_default(),
                "env" => t.env = self.env(v, false).into(),
                "cwd" => {
                    if let Some(s) = self.string(v, "`cwd`") {
                        if self.abs_path(&s, "`cwd`") {
                            t.cwd = Some(Box::new(s));
                        }
                    }
                }
                "mounts" => t.mounts = self.mounts(v),
                "files" => t.files = self.task_files(v),
                "resource" => t.resource = Some(self.resource(v)),
                "multinode" => t.multinode = self.multinode(v).map(Box::new),
                "task-array" => t.task_array = self.task_array(v).map(Box::new),
                "policy" => t.policy = Some(self.policy(v)),
                "depends-on" => {
                    t.depends_on_key = Some(k.range);
                    t.depends_on = self.depends_on(v);
                }
                "requires" => {
                    t.requires_key = Some(k.range);
                    for item in self.seq(v, "a list of job or service names") {
                        if let Some(s) = self.string(item, "a `requires` entry") {
                            t.requires.push(s);
                        }
                    }
                }
                "network" => t.network = Some(Box::new(self.network(v, kind))),
                "persist" => t.persist = self.boolean(v, "`persist`").map(Box::new),
                "readiness-probe" => t.readiness_probe = Some(Box::new(self.probe(v))),
                "name" => {
                    if let Some(s) = self.string_opt_null(v, "`name`") {
                        if s.value != t.name.value {
                            self.emit(
                                Diagnostic::new(
                                    Rule::InvalidValue,
                                    s.range,
                                    format!(
                                        "`name: {}` is ignored: this {} is named `{}` by its key",
                                        s.value,
                                        kind.as_str(),
                                        t.name.value
                                    ),
                                )
                                .with_severity(Severity::Warning)
                                .with_help("remove `name`, or rename the key"),
                            );
                        }
                    }
                }
                _ => {}
            }
        }
        // `command-and-script` and `no-command` are rules of `fuzzfile_check` reading
        // `command_key`, `script_key` and `read_whole`.
        t.read_whole = !self.exhausted;
        if t.image.is_none() && !self.exhausted && self.tree.get_merged(t.body, "image").is_none() {
            self.emit(
                Diagnostic::new(
                    Rule::MissingField,
                    t.name.range,
                    format!("{} `{}` has no `image`", kind.as_str(), t.name.value),
                )
                .with_help("add `image: {uri: docker://<image>:<tag>}`"),
            );
        }
        t
    }

    fn image(&mut self, id: NodeId) -> Option<Image> {
        let rid = self.tree.resolve(id);
        let range = self.range(id);
        if let Some(s) = self.tree.scalar(rid) {
            if !self.tree.is_null(rid) {
                let v = s.value;
                self.emit(
                    Diagnostic::new(
                        Rule::InvalidValue,
                        range,
                        "`image` is a mapping with a `uri`, not a string",
                    )
                    .with_help(format!(
                        "write `image: {{uri: {}}}`",
                        if v.contains("://") {
                            v.to_owned()
                        } else {
                            format!("docker://{v}")
                        }
                    ))
                    .with_fix(Fix::replace(
                        "Wrap in `{uri: ...}`",
                        range,
                        // A bare image name is a Docker reference, as the help says.
                        if v.contains("://") || s.style != ScalarStyle::Plain {
                            format!("{{uri: {}}}", range.slice(self.text))
                        } else {
                            format!("{{uri: docker://{}}}", range.slice(self.text))
                        },
                    )),
                );
                return None;
            }
        }
        let mut img = Image {
            range,
            uri: None,
            secret: None,
            decryption_secret: None,
        };
        let mut has_uri = false;
        for (k, v) in self.object(id, Place::Image) {
            match k.value {
                "uri" => {
                    has_uri = true;
                    if let Some(s) = self.string(v, "`image.uri`") {
                        match values::parse_image_uri(&s.value) {
                            Ok(u) => img.uri = Some(Spanned::new(u, s.range, s.node)),
                            Err(m) => {
                                let mut d = Diagnostic::new(Rule::InvalidValue, s.range, m);
                                if !s.value.contains("://")
                                    && !s.value.contains(char::is_whitespace)
                                {
                                    let start = s.range.start
                                        + u32::from(
                                            self.tree
                                                .scalar(s.node)
                                                .is_some_and(|x| x.style.is_quoted()),
                                        );
                                    d = d.with_fix(Fix::replace(
                                        "Add `docker://`",
                                        TextRange::empty(start),
                                        "docker://",
                                    ));
                                }
                                self.emit(d);
                            }
                        }
                    }
                }
                "secret" => img.secret = self.secret(v, "`image.secret`").map(Box::new),
                "decryption-secret" => {
                    img.decryption_secret =
                        self.secret(v, "`image.decryption-secret`").map(Box::new)
                }
                _ => {}
            }
        }
        if !has_uri && !self.tree.is_null(rid) {
            self.emit(
                Diagnostic::new(Rule::MissingField, range, "`image` has no `uri`")
                    .with_help("add `uri: docker://<image>:<tag>`"),
            );
        }
        Some(img)
    }

    /// A list of arguments: strings, or numbers and booleans that Fuzzball turns into strings.
    fn argv(&mut self, id: NodeId, what: &str) -> Option<Spanned<Vec<Spanned<String>>>> {
        let rid = self.tree.resolve(id);
        let range = self.range(id);
        if let Some(s) = self.tree.scalar(rid) {
            if self.tree.is_null(rid) {
                self.emit(
                    Diagnostic::new(Rule::InvalidValue, range, format!("{what} is empty"))
                        .with_help(format!("give {what} a list of arguments, or remove it")),
                );
                return None;
            }
            let v = s.value;
            let src = range.slice(self.text);
            let mut d = Diagnostic::new(Rule::InvalidValue, range, format!("{what} is a list of arguments, not a string"))
                .with_help(format!("write `[/bin/sh, -c, {src}]` to run it in a shell, or split it into `[program, arg, ...]`"));
            if !v.contains('\n')
                && s.style != ScalarStyle::Literal
                && s.style != ScalarStyle::Folded
            {
                // A shell now reads the string: what runs changes.
                d = d.with_fix(
                    Fix::replace(
                        "Run the string with `/bin/sh -c`",
                        range,
                        format!("[/bin/sh, -c, {}]", quote_flow(src, v)),
                    )
                    .with_applicability(Applicability::Unsafe),
                );
            }
            self.emit(d);
            return None;
        }
        let mut out = Vec::new();
        for item in self.seq(id, format_args!("{what} as a list of arguments")) {
            let irid = self.tree.resolve(item);
            match self.tree.scalar(irid) {
                Some(s) if !self.tree.is_null(irid) => {
                    self.no_nul(irid, format_args!("an argument in {what}"));
                    out.push(Spanned::new(
                        s.value.to_owned(),
                        self.tree.node(irid).range,
                        irid,
                    ));
                }
                Some(_) => {
                    let r = self.range(item);
                    self.emit(
                        Diagnostic::new(
                            Rule::InvalidValue,
                            r,
                            format!("an empty argument in {what}"),
                        )
                        .with_help("write `\"\"` for an empty string argument, or remove the item"),
                    );
                }
                None => self.invalid(item, format_args!("a string argument in {what}")),
            }
        }
        Some(Spanned::new(out, range, rid))
    }

    fn script(&mut self, id: NodeId) -> Option<Spanned<String>> {
        let s = self.string(id, "`script`")?;
        let body = s.value.trim_start_matches([' ', '\t', '\n', '\r']);
        if !body.starts_with("#!") {
            let mut d = Diagnostic::new(
                Rule::InvalidValue,
                s.range,
                "`script` must start with a `#!` line naming its interpreter",
            )
            .with_help("start the script with `#!/bin/sh` (or `#!/bin/bash`)");
            if let Some(sc) = self.tree.scalar(s.node) {
                if sc.style == ScalarStyle::Literal && sc.map.is_exact() && !s.value.is_empty() {
                    let at = sc.map.to_source(0);
                    let indent = line_indent(self.text, at);
                    // It chooses the interpreter.
                    d = d.with_fix(
                        Fix::new(
                            "Add `#!/bin/sh`",
                            vec![fuzzfile_diagnostics::Edit {
                                range: TextRange::empty(at),
                                replacement: format!("#!/bin/sh\n{indent}"),
                            }],
                        )
                        .with_applicability(Applicability::Unsafe),
                    );
                }
            }
            self.emit(d);
        }
        Some(s)
    }

    fn env(&mut self, id: NodeId, from_defaults: bool) -> Vec<EnvVar> {
        let mut out = Vec::new();
        if self.tree.entries(id).is_some() {
            let r = self.range(id);
            self.emit(
                Diagnostic::new(
                    Rule::InvalidValue,
                    r,
                    "`env` is a list of `NAME=VALUE` strings, not a mapping",
                )
                .with_help("write `env: [NAME=value, OTHER=value]` or one `- NAME=value` per line"),
            );
            return out;
        }
        let items = self.seq(id, "`env` as a list of `NAME=VALUE` strings");
        out.reserve_exact(items.len());
        for item in items {
            let Some(s) = self.string(item, "an `env` entry") else {
                continue;
            };
            let sc = self.tree.scalar(s.node);
            let map_range =
                |a: usize, b: usize| sc.map_or(s.range, |sc| sc.map.range_to_source(a..b));
            match s.value.split_once('=') {
                Some((name, value)) => {
                    let name_range = map_range(0, name.len());
                    let value_range = map_range(name.len() + 1, s.value.len());
                    if !values::is_env_name(name) {
                        self.emit(
                            Diagnostic::new(
                                Rule::InvalidValue,
                                name_range,
                                format!("`{name}` is not a valid environment variable name"),
                            )
                            .with_help(
                                "names are letters, digits and `_`, and do not start with a digit",
                            ),
                        );
                    }
                    self.no_nul(s.node, format_args!("the value of `{name}`"));
                    let secret = if value.starts_with("secret://") {
                        match values::parse_secret_ref(value) {
                            Ok(r) => {
                                self.secret_scope(&r, value_range);
                                Some(r)
                            }
                            Err(m) => {
                                self.emit(Diagnostic::new(Rule::InvalidValue, value_range, m));
                                None
                            }
                        }
                    } else {
                        None
                    };
                    out.push(EnvVar {
                        name: name.into(),
                        value: value.into(),
                        name_range,
                        value_range,
                        secret: secret.map(Box::new),
                        entry_range: s.range,
                        entry_node: s.node,
                        value_offset: u32::try_from(name.len() + 1).ok(),
                        from_defaults,
                    });
                }
                None => {
                    self.emit(
                        Diagnostic::new(
                            Rule::InvalidValue,
                            s.range,
                            format!("env entry `{}` has no `=`", s.value),
                        )
                        .with_help(format!("write `{}=<value>`", s.value.trim())),
                    );
                }
            }
        }
        out
    }

    fn mounts(&mut self, id: NodeId) -> Vec<Mount> {
        let mut out = Vec::new();
        for (key, v) in self.map_entries(id, "in `mounts`") {
            let range = key.range.cover(self.range(v));
            let path_keyed = key.value.starts_with('/');
            if path_keyed {
                // v4: /path: volume  or  /path: {volume: key}
                if self.version == Some(Version::V1) {
                    self.emit(
                        Diagnostic::new(
                            Rule::InvalidValue,
                            key.range,
                            format!(
                                "mounts in a v1 Fuzzfile are keyed by volume, but `{}` is a path",
                                key.value
                            ),
                        )
                        .with_help(format!(
                            "write `<volume>: {{location: {}}}`, or move the file to `version: v4`",
                            key.value
                        )),
                    );
                    continue;
                }
                let rid = self.tree.resolve(v);
                if self.tree.entries(rid).is_some() {
                    let mut volume = None;
                    for (k2, v2) in self.object(v, Place::MountV4) {
                        if k2.value == "volume" {
                            volume = self.string(v2, "`volume`");
                        }
                    }
                    match volume {
                        Some(vol) => out.push(Mount {
                            form: MountForm::V4Long,
                            path: owned(key),
                            volume: vol,
                            range,
                        }),
                        None => {
                            if self.tree.get_merged(rid, "volume").is_none() {
                                self.emit(
                                    Diagnostic::new(
                                        Rule::MissingField,
                                        key.range,
                                        format!("mount `{}` names no `volume`", key.value),
                                    )
                                    .with_help("add `volume: <volume key>`"),
                                );
                            }
                        }
                    }
                } else if let Some(vol) =
                    self.string(v, format_args!("the volume of mount `{}`", key.value))
                {
                    out.push(Mount {
                        form: MountForm::V4Short,
                        path: owned(key),
                        volume: vol,
                        range,
                    });
                }
            } else {
                // v1: volume: {location: /path}
                let rid = self.tree.resolve(v);
                if self.version == Some(Version::V4) {
                    let loc = self
                        .tree
                        .get_merged(rid, "location")
                        .and_then(|e| self.tree.text(e.value))
                        .unwrap_or("/path");
                    self.emit(
                        Diagnostic::new(Rule::InvalidValue, key.range, format!("mounts in a v4 Fuzzfile are keyed by container path, but `{}` is not a path", key.value))
                            .with_help(format!("write `{loc}: {{volume: {}}}` (the v1 form is `volume: {{location: /path}}`)", key.value)),
                    );
                    continue;
                }
                let mut location = None;
                for (k2, v2) in self.object(v, Place::MountV1) {
                    if k2.value == "location" {
                        if let Some(s) = self.string(v2, "`location`") {
                            if self.abs_path(&s, "a mount location") {
                                location = Some(s);
                            }
                        }
                    }
                }
                match location {
                    Some(path) => out.push(Mount {
                        form: MountForm::V1,
                        path,
                        volume: owned(key),
                        range,
                    }),
                    None => {
                        if self.tree.get_merged(rid, "location").is_none() {
                            self.emit(
                                Diagnostic::new(
                                    Rule::MissingField,
                                    key.range,
                                    format!("mount of volume `{}` has no `location`", key.value),
                                )
                                .with_help("add `location: /<path in the container>`"),
                            );
                        }
                    }
                }
            }
        }
        // v4 mount paths are keys (v1 locations went through `abs_path`).
        let bad: Vec<(TextRange, String)> = out
            .iter()
            .filter(|m| m.form != MountForm::V1 && m.path.value.starts_with('/'))
            .filter_map(|m| {
                values::check_contained_path(&m.path.value).err().map(|e| {
                    (
                        m.path.range,
                        format!("a mount location `{}` {e}", m.path.value.escape_debug()),
                    )
                })
            })
            .collect();
        for (r, m) in bad {
            self.emit(Diagnostic::new(Rule::InvalidValue, r, m));
        }
        out
    }

    fn task_files(&mut self, id: NodeId) -> Vec<TaskFile> {
        let mut out = Vec::new();
        for (path, v) in self.map_entries(id, "in `files`") {
            if !self.abs_path(&path, "a file path in the container") {
                continue;
            }
            let Some(s) = self.string(v, format_args!("the content of `{}`", path.value)) else {
                continue;
            };
            let source = match values::file_ref(&s.value) {
                Some(name) => {
                    let sc = self.tree.scalar(s.node);
                    let r = sc.map_or(s.range, |sc| sc.map.range_to_source(7..s.value.len()));
                    FileSource::Ref(Spanned::new(name.to_owned(), r, s.node))
                }
                None => FileSource::Inline(s),
            };
            out.push(TaskFile {
                path: owned(path),
                source,
            });
        }
        out
    }

    fn resource(&mut self, id: NodeId) -> Resource {
        let mut r = Resource {
            range: self.range(id),
            ..Resource::default()
        };
        for (k, v) in self.object(id, Place::Resource) {
            match k.value {
                "cpu" => {
                    for (k2, v2) in self.object(v, Place::Cpu) {
                        match k2.value {
                            "cores" => r.cores = self.uint(v2, "`cpu.cores`", 1),
                            "affinity" => {
                                if let Some((s, o)) =
                                    self.enumeration(v2, "CPU affinity", schema::AFFINITIES)
                                {
                                    let a = match o {
                                        "SOCKET" => Affinity::Socket,
                                        "NUMA" => Affinity::Numa,
                                        _ => Affinity::Core,
                                    };
                                    r.affinity = Some(Spanned::new(a, s.range, s.node));
                                }
                            }
                            "threads" => r.threads = self.boolean(v2, "`cpu.threads`"),
                            "sockets" => r.sockets = self.uint(v2, "`cpu.sockets`", 1),
                            _ => {}
                        }
                    }
                }
                "memory" => {
                    for (k2, v2) in self.object(v, Place::Memory) {
                        match k2.value {
                            "size" => r.memory = self.size(v2, "`memory.size`"),
                            "by-core" => r.memory_by_core = self.boolean(v2, "`memory.by-core`"),
                            _ => {}
                        }
                    }
                }
                "devices" => {
                    r.devices_key = Some(k.range);
                    for (dk, dv) in self.map_entries(v, "in `devices`") {
                        if let Some(n) =
                            self.uint(dv, format_args!("the count of `{}`", dk.value), 0)
                        {
                            r.devices.push((owned(dk), n));
                        }
                    }
                }
                "exclusive" => r.exclusive = self.boolean(v, "`exclusive`"),
                "annotations" => r.annotations = self.string_map(v, "in `resource.annotations`"),
                _ => {}
            }
        }
        r
    }

    fn size(&mut self, id: NodeId, what: &str) -> Option<Spanned<values::ByteSize>> {
        let rid = self.tree.resolve(id);
        let range = self.range(id);
        let text = match self.tree.core_value(rid) {
            Some(CoreValue::Int(i)) => i.to_string(),
            Some(CoreValue::Float(_)) | Some(CoreValue::Str(_)) => {
                self.tree.text(rid).unwrap_or("").to_owned()
            }
            _ => {
                self.invalid(id, format_args!("{what} such as `4GiB`"));
                return None;
            }
        };
        match values::parse_size(&text) {
            Ok(b) => Some(Spanned::new(b, range, rid)),
            Err(m) => {
                self.emit(Diagnostic::new(Rule::InvalidValue, range, m));
                None
            }
        }
    }

    fn multinode(&mut self, id: NodeId) -> Option<Multinode> {
        let range = self.range(id);
        if self.tree.is_null(id) {
            return None;
        }
        let mut m = Multinode {
            range,
            nodes: None,
            implementation: None,
            procs_per_node: None,
        };
        let mut seen_nodes = false;
        let mut seen_impl = false;
        for (k, v) in self.object(id, Place::Multinode) {
            match k.value {
                "nodes" => {
                    seen_nodes = true;
                    m.nodes = self.uint(v, "`multinode.nodes`", 1);
                }
                "implementation" => {
                    seen_impl = true;
                    if let Some((s, o)) =
                        self.enumeration(v, "multinode implementation", schema::IMPLEMENTATIONS)
                    {
                        let i = match o {
                            "openmpi" => Implementation::OpenMpi { alias: false },
                            "ompi" => Implementation::OpenMpi { alias: true },
                            "mpich" => Implementation::Mpich,
                            "gasnet" => Implementation::Gasnet,
                            _ => Implementation::Generic,
                        };
                        m.implementation = Some(Spanned::new(i, s.range, s.node));
                    }
                }
                "procs-per-node" => m.procs_per_node = self.uint(v, "`procs-per-node`", 1),
                _ => {}
            }
        }
        if !seen_nodes {
            self.emit(
                Diagnostic::new(Rule::MissingField, range, "`multinode` has no `nodes`")
                    .with_help("add `nodes: <number of nodes>`"),
            );
        }
        if !seen_impl {
            self.emit(
                Diagnostic::new(Rule::MissingField, range, "`multinode` has no `implementation`")
                    .with_help("add `implementation: generic` (torchrun, NCCL and your own launchers) or `openmpi` / `mpich` / `gasnet`"),
            );
        }
        Some(m)
    }

    fn task_array(&mut self, id: NodeId) -> Option<TaskArray> {
        let range = self.range(id);
        let mut t = TaskArray {
            range,
            start: None,
            end: None,
            concurrency: None,
        };
        let (mut seen_start, mut seen_end) = (false, false);
        for (k, v) in self.object(id, Place::TaskArray) {
            match k.value {
                "start" => {
                    seen_start = true;
                    t.start = self.int(v, "`task-array.start`");
                }
                "end" => {
                    seen_end = true;
                    t.end = self.int(v, "`task-array.end`");
                }
                "concurrency" => {
                    t.concurrency = self.uint(v, "`task-array.concurrency`", 1);
                    if let Some(c) = &t.concurrency {
                        if c.value > 200 {
                            let r = c.range;
                            self.emit(Diagnostic::new(Rule::InvalidValue, r, format!("`concurrency` is {}; Fuzzball runs at most 200 tasks of an array at once", c.value)).with_fix(Fix::replace("Set to 200", r, "200").with_applicability(Applicability::Unsafe)));
                        }
                    }
                }
                _ => {}
            }
        }
        for (seen, key) in [(seen_start, "start"), (seen_end, "end")] {
            if !seen {
                self.emit(
                    Diagnostic::new(
                        Rule::MissingField,
                        range,
                        format!("`task-array` has no `{key}`"),
                    )
                    .with_help("add `start` and `end` (both inclusive)"),
                );
            }
        }
        if let (Some(s), Some(e)) = (&t.start, &t.end) {
            if e.value < s.value {
                let r = e.range;
                self.emit(
                    Diagnostic::new(
                        Rule::InvalidValue,
                        r,
                        format!(
                            "`end` ({}) is before `start` ({}): the array would have no tasks",
                            e.value, s.value
                        ),
                    )
                    .with_label(s.range, "`start` is here"),
                );
            }
        }
        Some(t)
    }

    fn policy(&mut self, id: NodeId) -> Policy {
        let mut p = Policy {
            range: self.range(id),
            ..Policy::default()
        };
        for (k, v) in self.object(id, Place::Policy) {
            match k.value {
                "timeout" => {
                    for (k2, v2) in self.object(v, Place::Timeout) {
                        if k2.value == "execute" {
                            p.timeout = self.duration(v2, "`timeout.execute`");
                        }
                    }
                }
                "retry" => {
                    // validate its shape, then remember it for policy-retry-ignored
                    let _ = self.object(v, Place::Retry);
                    p.retry = Some(k.range.cover(self.range(v)));
                }
                _ => {}
            }
        }
        p
    }

    fn duration(&mut self, id: NodeId, what: &str) -> Option<Spanned<values::Duration>> {
        let s = self.string(id, what)?;
        match values::parse_duration(&s.value) {
            Ok(d) => Some(Spanned::new(d, s.range, s.node)),
            Err(DurationError::Invalid(m)) => {
                self.emit(Diagnostic::new(Rule::InvalidValue, s.range, m));
                None
            }
            Err(DurationError::DayUnit { suggestion }) => {
                self.emit(
                    Diagnostic::new(
                        Rule::InvalidValue,
                        s.range,
                        format!("`{}` uses days, which Go durations do not have", s.value),
                    )
                    .with_severity(Severity::Warning)
                    .with_help(format!("write `{suggestion}`"))
                    .with_fix(Fix::replace(
                        format!("Write `{suggestion}`"),
                        s.range,
                        suggestion,
                    )),
                );
                None
            }
        }
    }

    fn depends_on(&mut self, id: NodeId) -> Vec<Dependency> {
        let mut out = Vec::new();
        for item in self.seq(id, "`depends-on` as a list of `{name, status}` items") {
            let range = self.range(item);
            if let Some(s) = self.tree.scalar(self.tree.resolve(item)) {
                let name = s.value;
                self.emit(
                    Diagnostic::new(
                        Rule::InvalidValue,
                        range,
                        format!("a `depends-on` item is a mapping, not the string `{name}`"),
                    )
                    .with_help(format!("write `- {{name: {name}, status: FINISHED}}`"))
                    // It chooses the status (`FINISHED`).
                    .with_fix(
                        Fix::replace(
                            "Write as `{name, status}`",
                            range,
                            format!("{{name: {name}, status: FINISHED}}"),
                        )
                        .with_applicability(Applicability::Unsafe),
                    ),
                );
                continue;
            }
            let mut d = Dependency {
                range,
                name: None,
                status: None,
            };
            for (k, v) in self.object(item, Place::Dependency) {
                match k.value {
                    "name" => d.name = self.string(v, "the `depends-on` name"),
                    "status" => {
                        let Some(s) = self.string(v, "`status`") else {
                            continue;
                        };
                        let st = match s.value.to_ascii_uppercase().as_str() {
                            "FINISHED" => Some(DependencyStatus::Finished),
                            "RUNNING" => Some(DependencyStatus::Running),
                            _ => None,
                        };
                        match st {
                            Some(st) => d.status = Some(Spanned::new(st, s.range, s.node)),
                            None => {
                                let mut diag = Diagnostic::new(Rule::InvalidValue, s.range, format!("`{}` is not a dependency status; expected `FINISHED` or `RUNNING`", s.value));
                                if let Some(m) = did_you_mean(
                                    &s.value.to_ascii_uppercase(),
                                    schema::DEPENDENCY_STATUSES.iter().copied(),
                                ) {
                                    diag = diag.with_fix(
                                        Fix::replace(format!("Write `{m}`"), s.range, m)
                                            .with_applicability(Applicability::Unsafe),
                                    );
                                }
                                self.emit(diag);
                            }
                        }
                    }
                    "description" => {
                        let _ = self.string_opt_null(v, "`description`");
                    }
                    _ => {}
                }
            }
            if d.name.is_none()
                && self
                    .tree
                    .get_merged(self.tree.resolve(item), "name")
                    .is_none()
            {
                self.emit(
                    Diagnostic::new(
                        Rule::MissingField,
                        range,
                        "a `depends-on` item has no `name`",
                    )
                    .with_help("add `name: <job or service>`"),
                );
            }
            out.push(d);
        }
        out
    }

    fn network(&mut self, id: NodeId, kind: TaskKind) -> Network {
        let mut n = Network {
            range: self.range(id),
            ..Network::default()
        };
        let place = if kind == TaskKind::Job {
            Place::JobNetwork
        } else {
            Place::ServiceNetwork
        };
        for (k, v) in self.object(id, place) {
            match k.value {
                "isolated" => n.isolated = self.boolean(v, "`network.isolated`"),
                "host" => n.host = self.boolean(v, "`network.host`"),
                "expose-tcp" | "expose-udp" => {
                    let mut ports = Vec::new();
                    for item in self.seq(v, "a list of port numbers") {
                        if let Some(p) = self.port_number(item) {
                            ports.push(p);
                        }
                    }
                    if k.value == "expose-tcp" {
                        n.expose_tcp = ports;
                    } else {
                        n.expose_udp = ports;
                    }
                }
                "ports" => {
                    for item in self.seq(v, "a list of ports") {
                        let mut p = Port {
                            range: self.range(item),
                            name: None,
                            port: None,
                            protocol: None,
                        };
                        for (k2, v2) in self.object(item, Place::Port) {
                            match k2.value {
                                "name" => p.name = self.string(v2, "the port name"),
                                "port" => p.port = self.port_number(v2),
                                "protocol" => {
                                    p.protocol = self
                                        .enumeration(v2, "port protocol", schema::PORT_PROTOCOLS)
                                        .map(|x| x.0)
                                }
                                _ => {}
                            }
                        }
                        for (field, present) in
                            [("name", p.name.is_some()), ("port", p.port.is_some())]
                        {
                            if !present
                                && self
                                    .tree
                                    .get_merged(self.tree.resolve(item), field)
                                    .is_none()
                            {
                                self.emit(Diagnostic::new(
                                    Rule::MissingField,
                                    p.range,
                                    format!("a port has no `{field}`"),
                                ));
                            }
                        }
                        n.ports.push(p);
                    }
                }
                "endpoints" => {
                    for item in self.seq(v, "a list of endpoints") {
                        let mut e = Endpoint {
                            range: self.range(item),
                            name: None,
                            port_name: None,
                            protocol: None,
                            kind: None,
                            scope: None,
                        };
                        for (k2, v2) in self.object(item, Place::Endpoint) {
                            match k2.value {
                                "name" => e.name = self.string(v2, "the endpoint name"),
                                "port-name" => e.port_name = self.string(v2, "`port-name`"),
                                "protocol" => {
                                    e.protocol = self
                                        .enumeration(
                                            v2,
                                            "endpoint protocol",
                                            schema::ENDPOINT_PROTOCOLS,
                                        )
                                        .map(|x| x.0)
                                }
                                "type" => {
                                    e.kind = self
                                        .enumeration(v2, "endpoint type", schema::ENDPOINT_TYPES)
                                        .map(|x| x.0)
                                }
                                "scope" => {
                                    e.scope = self
                                        .enumeration(v2, "endpoint scope", schema::ENDPOINT_SCOPES)
                                        .map(|x| x.0)
                                }
                                _ => {}
                            }
                        }
                        for (field, present) in [
                            ("name", e.name.is_some()),
                            ("port-name", e.port_name.is_some()),
                        ] {
                            if !present
                                && self
                                    .tree
                                    .get_merged(self.tree.resolve(item), field)
                                    .is_none()
                            {
                                self.emit(Diagnostic::new(
                                    Rule::MissingField,
                                    e.range,
                                    format!("an endpoint has no `{field}`"),
                                ));
                            }
                        }
                        n.endpoints.push(e);
                    }
                }
                _ => {}
            }
        }
        n
    }

    fn port_number(&mut self, id: NodeId) -> Option<Spanned<u64>> {
        let p = self.uint(id, "a port", 1)?;
        if p.value > 65535 {
            self.emit(Diagnostic::new(
                Rule::InvalidValue,
                p.range,
                format!("port {} is out of range (1 to 65535)", p.value),
            ));
            return None;
        }
        Some(p)
    }

    fn probe(&mut self, id: NodeId) -> Probe {
        let range = self.range(id);
        let mut p = Probe {
            range,
            action: None,
            initial_delay_seconds: None,
            period_seconds: None,
            timeout_seconds: None,
            success_threshold: None,
            failure_threshold: None,
        };
        let mut actions: Vec<TextRange> = Vec::new();
        for (k, v) in self.object(id, Place::Probe) {
            match k.value {
                "exec" => {
                    actions.push(k.range);
                    let mut command = Vec::new();
                    for (k2, v2) in self.object(v, Place::ProbeExec) {
                        if k2.value == "command" {
                            command = self
                                .argv(v2, "the probe `command`")
                                .map(|a| a.value)
                                .unwrap_or_default();
                        }
                    }
                    p.action.get_or_insert(ProbeAction::Exec { command });
                }
                "http-get" => {
                    actions.push(k.range);
                    let (mut path, mut port, mut scheme) = (None, None, None);
                    let mut headers = Vec::new();
                    for (k2, v2) in self.object(v, Place::ProbeHttpGet) {
                        match k2.value {
                            "path" => path = self.string(v2, "the probe path"),
                            "port" => port = self.port_number(v2),
                            "scheme" => {
                                // `http` is seen as often as `HTTP`: accept any case.
                                if let Some(s) = self.string(v2, "the probe scheme") {
                                    if !matches!(
                                        s.value.to_ascii_uppercase().as_str(),
                                        "HTTP" | "HTTPS"
                                    ) {
                                        self.emit(Diagnostic::new(Rule::InvalidValue, s.range, format!("`{}` is not a probe scheme; expected `HTTP` or `HTTPS`", s.value)));
                                    }
                                    scheme = Some(s);
                                }
                            }
                            "http-headers" => {
                                for h in self.seq(v2, "a list of `{name, value}` headers") {
                                    let (mut name, mut value) = (None, None);
                                    for (k3, v3) in self.object(h, Place::HttpHeader) {
                                        let s = self.string(v3, "a header field");
                                        match k3.value {
                                            "name" => name = s,
                                            "value" => value = s,
                                            _ => {}
                                        }
                                    }
                                    if let (Some(n), Some(v)) = (name, value) {
                                        headers.push((n, v));
                                    }
                                }
                            }
                            _ => {}
                        }
                    }
                    p.action.get_or_insert(ProbeAction::HttpGet {
                        path,
                        port,
                        scheme,
                        headers,
                    });
                }
                "tcp-socket" => {
                    actions.push(k.range);
                    let mut port = None;
                    for (k2, v2) in self.object(v, Place::ProbeTcpSocket) {
                        if k2.value == "port" {
                            port = self.port_number(v2);
                        }
                    }
                    p.action.get_or_insert(ProbeAction::TcpSocket { port });
                }
                "grpc" => {
                    actions.push(k.range);
                    let (mut port, mut service) = (None, None);
                    for (k2, v2) in self.object(v, Place::ProbeGrpc) {
                        match k2.value {
                            "port" => port = self.port_number(v2),
                            "service" => service = self.string(v2, "the gRPC service"),
                            _ => {}
                        }
                    }
                    p.action.get_or_insert(ProbeAction::Grpc { port, service });
                }
                "initial-delay-seconds"
                | "period-seconds"
                | "timeout-seconds"
                | "success-threshold"
                | "failure-threshold" => {
                    let min = u64::from(k.value.ends_with("threshold"));
                    let what = format!("`{}`", k.value);
                    let n = self.uint(v, &what, min);
                    match k.value {
                        "initial-delay-seconds" => p.initial_delay_seconds = n,
                        "period-seconds" => p.period_seconds = n,
                        "timeout-seconds" => p.timeout_seconds = n,
                        "success-threshold" => p.success_threshold = n,
                        _ => p.failure_threshold = n,
                    }
                }
                _ => {}
            }
        }
        if actions.is_empty() {
            self.emit(
                Diagnostic::new(Rule::MissingField, range, "`readiness-probe` has no action")
                    .with_help("add one of `exec`, `http-get`, `tcp-socket` or `grpc`"),
            );
        } else if actions.len() > 1 {
            let mut d = Diagnostic::new(
                Rule::InvalidValue,
                actions[1],
                "a readiness probe has exactly one action, but this is the second",
            );
            d = d.with_label(actions[0], "the first action");
            self.emit(d);
        }
        p
    }

    fn volumes(&mut self, id: NodeId) -> Vec<Volume> {
        let mut out = Vec::new();
        for (key, v) in self.map_entries(id, "in `volumes`") {
            if let Err(m) = values::check_path_name(key.value) {
                self.emit(Diagnostic::new(
                    Rule::InvalidValue,
                    key.range,
                    format!("invalid volume key `{}`: {m}", key.value.escape_debug()),
                ));
            }
            let range = key.range.cover(self.range(v));
            let mut vol = Volume {
                key: owned(key),
                range,
                reference: None,
                use_: None,
                name: None,
                size: None,
                annotations: Vec::new(),
                ingress: Vec::new(),
                egress: Vec::new(),
            };
            for (k, v2) in self.object(v, Place::Volume) {
                match k.value {
                    "reference" => {
                        if let Some(s) = self.string(v2, "`reference`") {
                            match values::parse_volume_ref(&s.value) {
                                Ok(r) => vol.reference = Some(Spanned::new(r, s.range, s.node)),
                                Err(m) => {
                                    self.emit(Diagnostic::new(Rule::InvalidValue, s.range, m))
                                }
                            }
                        }
                    }
                    "use" => vol.use_ = self.string(v2, "`use`"),
                    "name" => vol.name = self.string_opt_null(v2, "`name`"),
                    "size" => vol.size = self.size(v2, "the volume `size`"),
                    "annotations" => {
                        vol.annotations = self.string_map(v2, "in volume `annotations`")
                    }
                    "ingress" => vol.ingress = self.transfers(v2),
                    "egress" => vol.egress = self.transfers(v2),
                    "type" => {
                        let _ = self.enumeration(v2, "volume type", &["EPHEMERAL", "HOST"]);
                    }
                    "path" => {
                        if let Some(s) = self.string(v2, "`path`") {
                            self.abs_path(&s, "a host volume path");
                        }
                    }
                    _ => {}
                }
            }
            out.push(vol);
        }
        out
    }

    fn transfers(&mut self, id: NodeId) -> Vec<Transfer> {
        let mut out = Vec::new();
        for item in self.seq(id, "a list of transfers (`source`, `destination`)") {
            let range = self.range(item);
            let mut t = Transfer {
                range,
                source: None,
                destination: None,
                policy: None,
            };
            for (k, v) in self.object(item, Place::Transfer) {
                match k.value {
                    "source" => t.source = Some(self.transfer_uri(v, "source")),
                    "destination" => t.destination = Some(self.transfer_uri(v, "destination")),
                    "policy" => t.policy = Some(self.policy(v)),
                    _ => {}
                }
            }
            for (present, what) in [
                (t.source.is_some(), "source"),
                (t.destination.is_some(), "destination"),
            ] {
                if !present {
                    self.emit(
                        Diagnostic::new(
                            Rule::MissingField,
                            range,
                            format!("a transfer has no `{what}`"),
                        )
                        .with_help(format!("add `{what}: {{uri: ...}}`")),
                    );
                }
            }
            out.push(t);
        }
        out
    }

    fn transfer_uri(&mut self, id: NodeId, what: &str) -> TransferUri {
        let range = self.range(id);
        let mut u = TransferUri {
            range,
            uri: None,
            secret: None,
        };
        let mut seen_uri = false;
        for (k, v) in self.object(id, Place::TransferUri) {
            match k.value {
                "uri" => {
                    seen_uri = true;
                    if let Some(s) = self.string(v, format_args!("the {what} `uri`")) {
                        if !s.value.contains("://") {
                            self.emit(
                                Diagnostic::new(Rule::InvalidValue, s.range, format!("`{}` is not a URI; a transfer {what} is `https://…`, `s3://…` or `file://…`", s.value)),
                            );
                        } else if let Some(path) = values::file_ref(&s.value) {
                            // A path in the volume (or an inline file's name): it must stay
                            // inside the volume.
                            if let Err(m) = values::check_contained_path(path) {
                                self.emit(Diagnostic::new(
                                    Rule::InvalidValue,
                                    s.range,
                                    format!("the transfer {what} `{}` {m}", s.value.escape_debug()),
                                ));
                            }
                        }
                        u.uri = Some(s);
                    }
                }
                "secret" => u.secret = self.secret(v, "the transfer `secret`"),
                _ => {}
            }
        }
        if !seen_uri && !self.tree.is_null(id) {
            self.emit(Diagnostic::new(
                Rule::MissingField,
                range,
                format!("the transfer {what} has no `uri`"),
            ));
        }
        if self.tree.is_null(id) {
            self.emit(
                Diagnostic::new(
                    Rule::MissingField,
                    range,
                    format!("the transfer {what} is empty"),
                )
                .with_help("add `uri: ...`"),
            );
        }
        u
    }

    // ---- whole-tree checks -------------------------------------------------------------

    /// Explicit YAML tags, as Fuzzball's YAML decoder (Go `yaml.v3`) honours them: a core tag
    /// whose node does not match it is an error at the tag (`!!int hi`), a core tag that
    /// matches decides the type (see `Tree::core_value`: `!!str 42` is a string), and any
    /// other tag is a warning, since Fuzzball gives it no meaning.
    fn tags(&mut self) {
        let tree = self.tree;
        for (id, tag) in tree.tagged_nodes() {
            let node = tree.node(id);
            let r = self.tag_range(node.range.start, tag);
            if fuzzfile_syntax::core_tag(tag).is_some() {
                if let Some(m) = tree.tag_mismatch(id) {
                    self.emit(
                        Diagnostic::new(Rule::InvalidValue, r, format!("`{tag}`: {m}")).with_help(
                            format!("remove the tag `{tag}`, or write a value of its type"),
                        ),
                    );
                }
            } else {
                self.emit(
                    Diagnostic::new(
                        Rule::InvalidValue,
                        r,
                        format!("the tag `{tag}` has no meaning in a Fuzzfile; Fuzzball reads the value as if it were not there, and refuses it where it expects a number or a boolean"),
                    )
                    .with_severity(Severity::Warning)
                    .with_help("remove the tag"),
                );
            }
        }
    }

    /// The range of the tag `tag` written before the node that starts at `node_start` (the
    /// nearest occurrence in the 4 KiB before it, so many tags cost linear time); the node's
    /// start when it cannot be found.
    fn tag_range(&self, node_start: u32, tag: &str) -> TextRange {
        let start = (node_start as usize).min(self.text.len());
        let mut from = start.saturating_sub(4096);
        while !self.text.is_char_boundary(from) {
            from += 1;
        }
        match self.text.get(from..start).and_then(|t| t.rfind(tag)) {
            Some(i) => TextRange::from_usize(from + i, from + i + tag.len()),
            None => TextRange::empty(node_start),
        }
    }

    /// `duplicate-key`: every mapping of the tree, flow or block, at any depth.
    fn duplicate_keys(&mut self) {
        let tree = self.tree;
        for (_, node) in tree.nodes() {
            let NodeKind::Mapping { entries, .. } = &node.kind else {
                continue;
            };
            if entries.len() < 2 {
                continue;
            }
            let keys = entries.iter().filter_map(|e| {
                tree.scalar(e.key)
                    .map(|s| (s.value, tree.node(e.key).range))
            });
            // Small mappings (almost all of them): a linear scan beats hashing. Large ones (the
            // jobs of a generated file): a map sized to the mapping.
            let dups: Vec<(&str, TextRange, TextRange)> = if entries.len() <= 16 {
                let keys: Vec<(&str, TextRange)> = keys.collect();
                keys.iter()
                    .enumerate()
                    .filter_map(|(i, (k, r))| {
                        keys[..i]
                            .iter()
                            .find(|(k2, _)| k2 == k)
                            .map(|(_, first)| (*k, *r, *first))
                    })
                    .collect()
            } else {
                let mut seen: HashMap<&str, TextRange> = HashMap::with_capacity(entries.len());
                let mut d = Vec::new();
                for (k, r) in keys {
                    match seen.get(k) {
                        Some(first) => d.push((k, r, *first)),
                        None => {
                            seen.insert(k, r);
                        }
                    }
                }
                d
            };
            for (key, r, first) in dups {
                {
                    self.diags.push(
                        Diagnostic::new(Rule::DuplicateKey, r, format!("duplicate key `{key}`"))
                            .with_label(first, "first defined here")
                            .with_help("YAML keys must be unique in a mapping; remove or rename one of them (Fuzzball would see only one)"),
                    );
                }
            }
        }
    }
}

/// An owned copy of a borrowed key, for the model.
fn owned(k: Key<'_>) -> Spanned<String> {
    Spanned::new(k.value.to_owned(), k.range, k.node)
}

/// A value kind for messages ("a list").
fn kind_text(kind: schema::ValueKind) -> &'static str {
    match kind {
        schema::ValueKind::String => "a string",
        schema::ValueKind::Int => "a whole number",
        schema::ValueKind::Bool => "`true` or `false`",
        schema::ValueKind::List => "a list",
        schema::ValueKind::Map => "a mapping",
        schema::ValueKind::Any => "any value",
    }
}

fn list(items: &[&str]) -> String {
    let shown: Vec<String> = items.iter().map(|s| format!("`{s}`")).collect();
    shown.join(", ")
}

/// The indentation (spaces) of the line containing `offset`.
fn line_indent(text: &str, offset: u32) -> String {
    let off = (offset as usize).min(text.len());
    let start = fuzzfile_diagnostics::line_start_at(text, off);
    text[start..].chars().take_while(|c| *c == ' ').collect()
}

/// A flow-context rendering of a scalar: the source as written when it is quoted, else quoted.
fn quote_flow(src: &str, value: &str) -> String {
    if src.starts_with('"') || src.starts_with('\'') {
        src.to_owned()
    } else {
        format!("\"{}\"", value.replace('\\', "\\\\").replace('"', "\\\""))
    }
}
