//! The data a template is rendered with, read by `fuzzfile_template::values_file`: the
//! declarations of its values file (names, kinds, defaults, with their places), overridden by
//! `--values` files and then `--set NAME=VALUE`. Each problem becomes a `values-file-error`
//! finding in the file it is in; a problem of a `--set` is in no file and is returned as a
//! message.
//!
//! A template without a values file beside it takes the first `--values` file as its values
//! file (its declarations and defaults) when that one is shaped like a values file (a
//! top-level `values:`). Without any declarations, the overrides are taken as they are
//! written (`--set` as text, a plain file's scalars by their YAML type): nothing declares
//! their types.

use super::Source;
use fuzzfile_diagnostics::{Diagnostic, Rule, TextRange};
use fuzzfile_template::values_file::{
    self, At, Override, RawValue, ValuesError, ValuesFile, YamlType,
};
use fuzzfile_template::{Span, Value};
use std::collections::BTreeMap;

/// Everything read from the values sources.
#[derive(Clone, Debug, Default)]
pub struct Values {
    /// The data root: each value by name.
    pub data: BTreeMap<String, Value>,
    /// Where each value is declared: its `name` in the declaring source (index 0 of
    /// [`Values::findings`]).
    pub declared: BTreeMap<String, Span>,
    /// Findings per source: the declaring one first (when there is one), then the override
    /// files.
    pub findings: Vec<Vec<Diagnostic>>,
    /// Problems of `--set` arguments, each a whole message.
    pub set_problems: Vec<String>,
}

fn finding(e: &ValuesError) -> Diagnostic {
    let span = e.span();
    Diagnostic::new(
        Rule::ValuesFileError,
        TextRange::from_usize(span.start, span.end),
        e.to_string(),
    )
    .with_help(e.help())
}

/// Read the sources: `declaring` (the values file), then `overrides` (`--values` files, each
/// shown by its `display`), then `set`.
pub fn load(declaring: Option<&Source>, overrides: &[Source], set: &[String]) -> Values {
    let mut v = Values::default();
    let (declaring, overrides) = match (declaring, overrides) {
        (Some(d), o) => (Some(d), o),
        (None, [first, rest @ ..]) if is_values_shaped(&first.text) => (Some(first), rest),
        (None, o) => (None, o),
    };
    let file = match declaring {
        Some(src) => {
            let (file, errors) = values_file::parse(&src.text);
            v.findings.push(errors.iter().map(finding).collect());
            file
        }
        None => ValuesFile::default(),
    };
    let first_override = v.findings.len();
    let mut parsed: Vec<Override> = Vec::new();
    for src in overrides {
        match Override::parse_file(&src.display, &src.text) {
            Ok(o) => {
                parsed.push(o);
                v.findings.push(Vec::new());
            }
            Err(errors) => v.findings.push(errors.iter().map(finding).collect()),
        }
    }
    for arg in set {
        match Override::parse_set(arg) {
            Ok(o) => parsed.push(o),
            Err(e) => v.set_problems.push(set_message(&e)),
        }
    }
    for d in &file.decls {
        v.declared.insert(d.name.value.clone(), d.name.span.clone());
    }
    let Value::Map(root) = file.defaults().root else {
        return v;
    };
    v.data = root;
    if declaring.is_none() {
        for o in parsed {
            for entry in o.entries {
                if let Some(x) = undeclared(&entry.value) {
                    v.data.insert(entry.name, x);
                }
            }
        }
        return v;
    }
    // Each override entry on its own, so that one bad entry leaves the others applied.
    for o in parsed {
        for entry in o.entries {
            let name = entry.name.clone();
            let single = Override {
                entries: vec![entry],
            };
            match file.data(std::slice::from_ref(&single)) {
                Ok(d) => {
                    if let Value::Map(mut m) = d.root {
                        if let Some(x) = m.remove(&name) {
                            v.data.insert(name, x);
                        }
                    }
                }
                Err(errors) => {
                    for e in errors {
                        match e.at() {
                            At::Decls(_) => {
                                if let Some(f) = v.findings.first_mut() {
                                    f.push(finding(&e));
                                }
                            }
                            At::File { path, .. } => {
                                let i = overrides.iter().position(|s| *s.display == **path);
                                if let Some(f) =
                                    i.and_then(|i| v.findings.get_mut(first_override + i))
                                {
                                    f.push(finding(&e));
                                }
                            }
                            At::Set { .. } => v.set_problems.push(set_message(&e)),
                        }
                    }
                }
            }
        }
    }
    v
}

/// Whether a `--values` file declares values (`values:` at the top level) rather than being
/// a plain mapping of names to values.
fn is_values_shaped(text: &str) -> bool {
    fuzzfile_diagnostics::lines(text)
        .any(|l| l.trim_start_matches('\u{feff}').starts_with("values:"))
}

/// An override's value where nothing declares its type: as written.
fn undeclared(raw: &RawValue) -> Option<Value> {
    Some(match raw {
        RawValue::Text(t) => Value::String(t.clone()),
        RawValue::Scalar { text, core } => match core {
            YamlType::Bool(b) => Value::Bool(*b),
            YamlType::Int(i) => Value::Int(*i),
            YamlType::Null => Value::Nil,
            YamlType::Float | YamlType::Str => Value::String(text.clone()),
        },
        RawValue::Reference(r) => Value::String(r.clone()),
        RawValue::Kind(k) => k.to_value(),
        RawValue::Other(_) => return None,
    })
}

fn set_message(e: &ValuesError) -> String {
    match e.at() {
        At::Set { arg, .. } if !e.to_string().contains(&**arg) => {
            format!("--set {arg}: {e}; {}", e.help())
        }
        _ => format!("{e}; {}", e.help()),
    }
}
