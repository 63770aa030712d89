//! The data a template is rendered with: the declarations of its values file (each value's
//! name, kind and default, and where it is declared, for messages), overridden by `--values`
//! files and `--set NAME=VALUE`.
//!
//! The values file (`values:` list of entries with `name` and one of `string_value`,
//! `uint_value`, `bool_value`, `secret_value`, `volume_value`; `options_input` lists the
//! allowed strings) is read with the YAML span tree, so every problem has its place.

use super::Source;
use crate::rules::values_file_error::ValuesFileError;
use fuzzfile_diagnostics::{Diagnostic, Rule, TextRange};
use fuzzfile_syntax::{CoreValue, NodeId, Tree};
use fuzzfile_template::Value;
use std::collections::BTreeMap;

/// The kind of a declared value (its `*_value` key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    String,
    Uint,
    Bool,
    Secret,
    Volume,
}

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::String => "string_value",
            Kind::Uint => "uint_value",
            Kind::Bool => "bool_value",
            Kind::Secret => "secret_value",
            Kind::Volume => "volume_value",
        }
    }
}

/// One declared value.
#[derive(Clone, Debug)]
pub struct Declared {
    pub kind: Kind,
    /// Which source declares it (index into [`Values::sources`]).
    pub source: usize,
    /// The `name` scalar of its entry.
    pub range: TextRange,
    pub options: Vec<String>,
}

/// Everything read from the values sources.
#[derive(Clone, Debug, Default)]
pub struct Values {
    /// The data root: each value by name.
    pub data: BTreeMap<String, Value>,
    pub declared: BTreeMap<String, Declared>,
    /// Findings per source, in the order of the sources given.
    pub findings: Vec<Vec<Diagnostic>>,
}

fn error(range: TextRange, message: impl Into<String>) -> Diagnostic {
    let _ = ValuesFileError::META;
    Diagnostic::new(Rule::ValuesFileError, range, message)
}

/// Read the values file (`declaring`, index 0 of the findings when given) and the override
/// files after it.
pub fn load(declaring: Option<&Source>, overrides: &[Source]) -> Values {
    let mut v = Values::default();
    if let Some(src) = declaring {
        let mut out = Vec::new();
        read_declarations(src, v.findings.len(), &mut v, &mut out);
        v.findings.push(out);
    }
    for src in overrides {
        let mut out = Vec::new();
        read_overrides(src, &mut v, &mut out);
        v.findings.push(out);
    }
    v
}

/// Apply `--set NAME=VALUE` words; the problems are returned as messages (they are in no file).
pub fn apply_set(v: &mut Values, set: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for word in set {
        let Some((name, value)) = word.split_once('=') else {
            problems.push(format!(
                "--set {word}: expected NAME=VALUE (a value's name, `=`, its value)"
            ));
            continue;
        };
        let name = name.trim();
        match convert_text(v, name, value) {
            Ok(x) => {
                v.data.insert(name.to_owned(), x);
            }
            Err(m) => problems.push(format!("--set {word}: {m}")),
        }
    }
    problems
}

/// A value given as text (`--set`) for the declared `name`.
fn convert_text(v: &Values, name: &str, value: &str) -> Result<Value, String> {
    let kind = match v.declared.get(name) {
        Some(d) => d.kind,
        None if v.declared.is_empty() => Kind::String,
        None => return Err(format!("no value is named `{name}`{}", hint(v, name))),
    };
    match kind {
        Kind::Uint => value.trim().parse::<u64>().map(Value::Uint).map_err(|_| {
            format!("`{name}` is a uint_value: expected a whole number 0 or more, not `{value}`")
        }),
        Kind::Bool => match value.trim() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(format!(
                "`{name}` is a bool_value: expected true or false, not `{value}`"
            )),
        },
        _ => {
            check_option(v, name, value)?;
            Ok(Value::String(value.to_owned()))
        }
    }
}

fn check_option(v: &Values, name: &str, value: &str) -> Result<(), String> {
    match v.declared.get(name) {
        Some(d) if !d.options.is_empty() && !d.options.iter().any(|o| o == value) => Err(format!(
            "`{value}` is not one of the options of `{name}` ({})",
            d.options.join(", ")
        )),
        _ => Ok(()),
    }
}

fn hint(v: &Values, name: &str) -> String {
    v.declared
        .keys()
        .find(|k| k.eq_ignore_ascii_case(name))
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

fn syntax(tree: &Tree, out: &mut Vec<Diagnostic>) -> bool {
    for e in &tree.errors {
        out.push(error(
            e.range,
            format!("the values file is not valid YAML: {}", e.message),
        ));
    }
    !tree.errors.is_empty()
}

fn read_declarations(src: &Source, index: usize, v: &mut Values, out: &mut Vec<Diagnostic>) {
    let tree = fuzzfile_syntax::parse(&src.text);
    if syntax(&tree, out) {
        return;
    }
    let Some(root) = tree.root() else {
        out.push(error(
            TextRange::empty(0),
            "the values file is empty: expected a top-level `values:` list",
        ));
        return;
    };
    let Some(list) = tree.get(root, "values") else {
        out.push(error(
            tree.node(root).range,
            "expected a top-level `values:` list of value declarations",
        ));
        return;
    };
    let Some(items) = tree.items(list.value) else {
        if !tree.is_null(list.value) {
            out.push(error(
                tree.node(list.value).range,
                "`values` must be a list of declarations (`- name: ...`)",
            ));
        }
        return;
    };
    for &item in items {
        declaration(&tree, item, index, v, out);
    }
}

fn declaration(tree: &Tree, item: NodeId, index: usize, v: &mut Values, out: &mut Vec<Diagnostic>) {
    let range = tree.node(item).range;
    if tree.entries(item).is_none() {
        out.push(error(
            range,
            "a value declaration must be a mapping with `name` and a `*_value`",
        ));
        return;
    }
    let Some(name_entry) = tree.get(item, "name") else {
        out.push(error(range, "this value declaration has no `name`"));
        return;
    };
    let name_range = tree.node(name_entry.value).range;
    let Some(name) = tree.text(name_entry.value).map(str::to_owned) else {
        out.push(error(name_range, "`name` must be a string"));
        return;
    };
    if v.declared.contains_key(&name) {
        out.push(error(
            name_range,
            format!("the value `{name}` is declared twice"),
        ));
        return;
    }
    let kinds: Vec<(Kind, NodeId)> = [
        Kind::String,
        Kind::Uint,
        Kind::Bool,
        Kind::Secret,
        Kind::Volume,
    ]
    .into_iter()
    .filter_map(|k| tree.get(item, k.key()).map(|e| (k, e.value)))
    .collect();
    let options: Vec<String> = tree
        .get(item, "options_input")
        .and_then(|e| tree.get(e.value, "options"))
        .and_then(|e| tree.items(e.value))
        .map(|items| {
            items
                .iter()
                .filter_map(|&i| tree.text(i).map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let (kind, node) = match kinds.as_slice() {
        [] => {
            out.push(error(
                name_range,
                format!("`{name}` has no value: add one of string_value, uint_value, bool_value, secret_value, volume_value"),
            ));
            (Kind::String, None)
        }
        [one] => (one.0, Some(one.1)),
        [first, second, ..] => {
            out.push(error(
                tree.node(second.1).range,
                format!(
                    "`{name}` has both `{}` and `{}`: a value has one kind",
                    first.0.key(),
                    second.0.key()
                ),
            ));
            (first.0, Some(first.1))
        }
    };
    let value = match node {
        Some(n) => match convert_node(tree, kind, n) {
            Ok(x) => x,
            Err(m) => {
                out.push(error(tree.node(n).range, format!("`{name}`: {m}")));
                zero(kind)
            }
        },
        None => zero(kind),
    };
    if let (Value::String(s), Some(n)) = (&value, node) {
        if !options.is_empty() && !options.iter().any(|o| o == s) {
            out.push(error(
                tree.node(n).range,
                format!(
                    "the default `{s}` of `{name}` is not one of its options ({})",
                    options.join(", ")
                ),
            ));
        }
    }
    v.declared.insert(
        name.clone(),
        Declared {
            kind,
            source: index,
            range: name_range,
            options,
        },
    );
    v.data.insert(name, value);
}

fn zero(kind: Kind) -> Value {
    match kind {
        Kind::Uint => Value::Uint(0),
        Kind::Bool => Value::Bool(false),
        _ => Value::String(String::new()),
    }
}

/// The value of a `*_value` node of `kind`.
fn convert_node(tree: &Tree, kind: Kind, n: NodeId) -> Result<Value, String> {
    match kind {
        Kind::String => match tree.text(n) {
            Some(s) if tree.scalar(n).is_some() => Ok(Value::String(s.to_owned())),
            _ => Err("string_value must be a string".into()),
        },
        Kind::Uint => match tree.core_value(n) {
            Some(CoreValue::Int(i)) if i >= 0 => Ok(Value::Uint(i as u64)),
            Some(CoreValue::Str(s))
                if s.trim().parse::<u64>().is_ok()
                    && tree.scalar(n).is_some_and(|x| x.style.is_quoted()) =>
            {
                Err(format!(
                    "uint_value must be a number, not the string \"{s}\" (remove the quotes)"
                ))
            }
            _ => Err(format!(
                "uint_value must be a whole number 0 or more, not `{}`",
                tree.text(n).unwrap_or("a collection")
            )),
        },
        Kind::Bool => match tree.core_value(n) {
            Some(CoreValue::Bool(b)) => Ok(Value::Bool(b)),
            _ => Err(format!(
                "bool_value must be true or false, not `{}`",
                tree.text(n).unwrap_or("a collection")
            )),
        },
        Kind::Secret | Kind::Volume => {
            if tree.is_null(n) {
                return Ok(Value::String(String::new()));
            }
            match tree.get(n, "reference") {
                Some(e) => match tree.text(e.value) {
                    Some(s) => Ok(Value::String(s.to_owned())),
                    None => Err("`reference` must be a string".into()),
                },
                None => Err(format!("{} must be a mapping with `reference`", kind.key())),
            }
        }
    }
}

/// A `--values` file: the catalog's format (a `values:` list; each entry's `*_value` sets
/// the value) or a plain mapping `Name: value`.
fn read_overrides(src: &Source, v: &mut Values, out: &mut Vec<Diagnostic>) {
    let tree = fuzzfile_syntax::parse(&src.text);
    if syntax(&tree, out) {
        return;
    }
    let Some(root) = tree.root() else { return };
    if let Some(list) = tree.get(root, "values") {
        let Some(items) = tree.items(list.value) else {
            out.push(error(
                tree.node(list.value).range,
                "`values` must be a list",
            ));
            return;
        };
        for &item in items {
            let Some(name_entry) = tree.get(item, "name") else {
                out.push(error(tree.node(item).range, "this entry has no `name`"));
                continue;
            };
            let Some(name) = tree.text(name_entry.value).map(str::to_owned) else {
                continue;
            };
            let Some(d) = v.declared.get(&name).cloned() else {
                out.push(error(
                    tree.node(name_entry.value).range,
                    format!(
                        "the template's values file declares no value `{name}`{}",
                        hint(v, &name)
                    ),
                ));
                continue;
            };
            let Some(e) = tree.get(item, d.kind.key()) else {
                out.push(error(
                    tree.node(item).range,
                    format!(
                        "`{name}` is a {}: give it as `{}`",
                        d.kind.key(),
                        d.kind.key()
                    ),
                ));
                continue;
            };
            match convert_node(&tree, d.kind, e.value) {
                Ok(x) => {
                    v.data.insert(name, x);
                }
                Err(m) => out.push(error(tree.node(e.value).range, format!("`{name}`: {m}"))),
            }
        }
        return;
    }
    let Some(entries) = tree.entries(root) else {
        out.push(error(
            tree.node(root).range,
            "expected a `values:` list or a mapping of value names to values",
        ));
        return;
    };
    for e in entries {
        let Some(name) = tree.text(e.key).map(str::to_owned) else {
            continue;
        };
        let range = tree.node(e.value).range;
        let result = match v.declared.get(&name) {
            Some(d) => {
                let kind = d.kind;
                match kind {
                    Kind::Secret | Kind::Volume => match tree.text(e.value) {
                        Some(s) => Ok(Value::String(s.to_owned())),
                        None => convert_node(&tree, kind, e.value),
                    },
                    _ => convert_node(&tree, kind, e.value),
                }
            }
            None if v.declared.is_empty() => match tree.text(e.value) {
                Some(s) => Ok(Value::String(s.to_owned())),
                None => Err("expected a string".into()),
            },
            None => {
                out.push(error(
                    tree.node(e.key).range,
                    format!(
                        "the template's values file declares no value `{name}`{}",
                        hint(v, &name)
                    ),
                ));
                continue;
            }
        };
        match result {
            Ok(x) => {
                if let Value::String(s) = &x {
                    if let Err(m) = check_option(v, &name, s) {
                        out.push(error(range, m));
                        continue;
                    }
                }
                v.data.insert(name, x);
            }
            Err(m) => out.push(error(range, format!("`{name}`: {m}"))),
        }
    }
}
