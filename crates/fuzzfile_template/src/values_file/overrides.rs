//! Overrides of the declared defaults: `--set NAME=VALUE` and `--values FILE`.

use super::{
    is_scalar, kind_from_node, suggest, At, ValueKind, ValuesError, ValuesFile, UINT_MAX,
    VALUE_FIELDS,
};
use crate::Value;
use fuzzfile_syntax::{CoreValue, NodeId, Tree};

/// One `--set` argument or one `--values FILE`: the values it sets, in order.
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    pub entries: Vec<OverrideEntry>,
}

/// One value an override sets.
#[derive(Clone, Debug, PartialEq)]
pub struct OverrideEntry {
    pub name: String,
    /// The name in the argument or the file.
    pub name_at: At,
    pub value: RawValue,
    /// The value in the argument or the file.
    pub value_at: At,
}

/// An override's value before it is typed by its declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum RawValue {
    /// `--set NAME=TEXT`: the text, read as the declared type (`8` for a `uint_value`).
    Text(String),
    /// A scalar of a plain `NAME: value` file, with its YAML type.
    Scalar { text: String, core: YamlType },
    /// `NAME: {reference: ...}` in a plain file (a secret or a volume).
    Reference(String),
    /// `- name: NAME` with its `*_value` in a values-shaped file.
    Kind(ValueKind),
    /// Something that is no value (a list): its description.
    Other(String),
}

/// What a YAML scalar resolves to (YAML 1.2 core schema).
#[derive(Clone, Debug, PartialEq)]
pub enum YamlType {
    Null,
    Bool(bool),
    Int(i64),
    Float,
    Str,
}

impl Override {
    /// Reads `NAME=VALUE` (the first `=` splits; the value may contain more).
    pub fn parse_set(arg: &str) -> Result<Override, ValuesError> {
        let at = |span| At::Set {
            arg: arg.into(),
            span,
        };
        let Some(eq) = arg.find('=') else {
            return Err(ValuesError::BadSet {
                at: at(0..arg.len()),
                arg: arg.to_string(),
            });
        };
        let name = &arg[..eq];
        if name.trim().is_empty() {
            return Err(ValuesError::BadSet {
                at: at(0..eq + 1),
                arg: arg.to_string(),
            });
        }
        Ok(Override {
            entries: vec![OverrideEntry {
                name: name.to_string(),
                name_at: at(0..eq),
                value: RawValue::Text(arg[eq + 1..].to_string()),
                value_at: at(eq + 1..arg.len()),
            }],
        })
    }

    /// Reads a `--values FILE`: either shaped like a `values.yaml` (`values:` with
    /// `- name: NAME` and a `*_value` each; display fields and `options_input` are ignored) or
    /// a plain mapping `NAME: value`. `path` is for messages.
    pub fn parse_file(path: &str, text: &str) -> Result<Override, Vec<ValuesError>> {
        let tree = fuzzfile_syntax::parse(text);
        let at = |span| At::File {
            path: path.into(),
            span,
        };
        let mut errors: Vec<ValuesError> = tree
            .errors
            .iter()
            .map(|e| ValuesError::Syntax {
                at: at(e.range.as_usize()),
                message: e.message.clone(),
                help: e.help.clone(),
            })
            .collect();
        let mut entries = Vec::new();
        let span = |id: NodeId| tree.node(id).range.as_usize();
        if let Some(root) = tree.root().filter(|r| !tree.is_null(*r)) {
            match tree.merged_entries(root) {
                None => errors.push(ValuesError::Shape {
                    at: at(span(root)),
                    what: format!("the values file ({})", tree.describe(root)),
                    expected: "a mapping `NAME: value` or a `values:` list".into(),
                }),
                Some(map) => {
                    let list = map
                        .iter()
                        .find(|e| tree.text(e.key) == Some("values"))
                        .and_then(|e| tree.items(e.value));
                    match list {
                        Some(items) if map.len() == 1 => {
                            for &item in items {
                                values_shaped_entry(&tree, item, &at, &mut entries, &mut errors);
                            }
                        }
                        _ => {
                            for e in map.iter() {
                                let name = tree.text(e.key).unwrap_or("").to_string();
                                entries.push(OverrideEntry {
                                    name,
                                    name_at: at(span(e.key)),
                                    value: raw_value(&tree, e.value),
                                    value_at: at(span(e.value)),
                                });
                            }
                        }
                    }
                }
            }
        }
        if errors.is_empty() {
            Ok(Override { entries })
        } else {
            Err(errors)
        }
    }

    pub fn entries(&self) -> &[OverrideEntry] {
        &self.entries
    }
}

fn raw_value(tree: &Tree, node: NodeId) -> RawValue {
    if is_scalar(tree, node) {
        let text = tree.text(node).unwrap_or("").to_string();
        let core = match tree.core_value(node) {
            Some(CoreValue::Null) | None => YamlType::Null,
            Some(CoreValue::Bool(b)) => YamlType::Bool(b),
            Some(CoreValue::Int(i)) => YamlType::Int(i),
            Some(CoreValue::Float(_)) => YamlType::Float,
            Some(CoreValue::Str(_)) => YamlType::Str,
        };
        let text = if core == YamlType::Null {
            String::new()
        } else {
            text
        };
        return RawValue::Scalar { text, core };
    }
    if let Some(map) = tree.merged_entries(node) {
        if map.len() == 1 {
            if let Some(r) = map
                .iter()
                .find(|e| tree.text(e.key) == Some("reference"))
                .and_then(|e| tree.text(e.value))
            {
                return RawValue::Reference(r.to_string());
            }
        }
    }
    RawValue::Other(tree.describe(node))
}

fn values_shaped_entry(
    tree: &Tree,
    item: NodeId,
    at: &dyn Fn(crate::Span) -> At,
    entries: &mut Vec<OverrideEntry>,
    errors: &mut Vec<ValuesError>,
) {
    let span = |id: NodeId| tree.node(id).range.as_usize();
    let Some(map) = tree.merged_entries(item) else {
        errors.push(ValuesError::Shape {
            at: at(span(item)),
            what: format!("a value ({})", tree.describe(item)),
            expected: "a mapping (`- name: Name` with its `*_value`)".into(),
        });
        return;
    };
    let mut name = None;
    let mut kinds = Vec::new();
    for e in map.iter() {
        let key = tree.text(e.key).unwrap_or("");
        match key {
            "name" => name = tree.text(e.value).map(|n| (n.to_string(), span(e.value))),
            "display_name" | "display_category" | "options_input" => {}
            _ => match VALUE_FIELDS.iter().find(|f| **f == key) {
                Some(f) => kinds.push((*f, e.key, e.value)),
                None => errors.push(ValuesError::UnknownField {
                    at: at(span(e.key)),
                    field: key.to_string(),
                    place: "a value",
                    suggestion: suggest(key, super::DECL_FIELDS),
                    allowed: super::DECL_FIELDS,
                }),
            },
        }
    }
    let Some((name, name_span)) = name.filter(|(n, _)| !n.is_empty()) else {
        errors.push(ValuesError::MissingName { at: at(span(item)) });
        return;
    };
    match kinds.as_slice() {
        [] => errors.push(ValuesError::NoValue {
            at: at(name_span),
            name,
        }),
        [(field, _, value)] => {
            if let Some((kind, vspan)) =
                kind_from_node(tree, &name, field, *value, at(span(*value)), errors)
            {
                entries.push(OverrideEntry {
                    name,
                    name_at: at(name_span),
                    value: RawValue::Kind(kind),
                    value_at: at(vspan),
                });
            }
        }
        [first, second, ..] => errors.push(ValuesError::TwoValues {
            at: at(span(second.1)),
            name,
            first: first.0,
            second: second.0,
            first_span: span(first.1),
        }),
    }
}

fn found(raw: &RawValue) -> String {
    match raw {
        RawValue::Text(t) => format!("`{t}`"),
        RawValue::Scalar { text, core } => match core {
            YamlType::Null => "nothing (null)".into(),
            YamlType::Bool(b) => format!("the boolean `{b}`"),
            YamlType::Int(i) => format!("the integer `{i}`"),
            YamlType::Float => format!("the number `{text}`"),
            YamlType::Str => format!("the string `{text}`"),
        },
        RawValue::Reference(r) => format!("the reference `{r}`"),
        RawValue::Kind(k) => format!("a `{}`", k.field()),
        RawValue::Other(d) => d.clone(),
    }
}

/// The value `entry` sets, typed by its declaration in `file`.
pub(super) fn check(file: &ValuesFile, entry: &OverrideEntry) -> Result<Value, ValuesError> {
    let Some(decl) = file.decl(&entry.name) else {
        let names: Vec<&str> = file.names().collect();
        let suggestion = names
            .iter()
            .find(|n| n.eq_ignore_ascii_case(&entry.name))
            .map(|n| n.to_string())
            .or_else(|| suggest(&entry.name, &names));
        return Err(ValuesError::UnknownValue {
            at: entry.name_at.clone(),
            name: entry.name.clone(),
            suggestion,
            declared: names.iter().map(|n| n.to_string()).collect(),
        });
    };
    let field = decl.kind.field();
    let wrong = |expected: &'static str| ValuesError::WrongType {
        at: entry.value_at.clone(),
        name: entry.name.clone(),
        field,
        expected,
        found: found(&entry.value),
    };
    let raw = &entry.value;
    let value = match &decl.kind {
        ValueKind::String(_) => match raw {
            RawValue::Text(t) | RawValue::Scalar { text: t, .. } => t.clone(),
            RawValue::Kind(ValueKind::String(s)) => s.clone(),
            _ => return Err(wrong("a string")),
        },
        ValueKind::Uint(_) => {
            let n = match raw {
                RawValue::Text(t) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
                    t.parse::<u64>().ok().filter(|n| *n <= UINT_MAX)
                }
                RawValue::Scalar {
                    core: YamlType::Int(i),
                    ..
                } if *i >= 0 => Some(*i as u64),
                RawValue::Kind(ValueKind::Uint(u)) => Some(*u),
                _ => None,
            };
            match n {
                Some(n) => return Ok(Value::Uint(n)),
                None => return Err(wrong("an unsigned integer (0 to 9223372036854775807)")),
            }
        }
        ValueKind::Bool(_) => {
            let b = match raw {
                RawValue::Text(t) if t == "true" => Some(true),
                RawValue::Text(t) if t == "false" => Some(false),
                RawValue::Scalar {
                    core: YamlType::Bool(b),
                    ..
                } => Some(*b),
                RawValue::Kind(ValueKind::Bool(b)) => Some(*b),
                _ => None,
            };
            match b {
                Some(b) => return Ok(Value::Bool(b)),
                None => return Err(wrong("a boolean (true or false)")),
            }
        }
        ValueKind::Secret { .. } | ValueKind::Volume { .. } => match raw {
            RawValue::Text(t) => t.clone(),
            RawValue::Scalar {
                text,
                core: YamlType::Str | YamlType::Null,
            } => text.clone(),
            RawValue::Reference(r) => r.clone(),
            RawValue::Kind(ValueKind::Secret { reference, .. })
                if matches!(decl.kind, ValueKind::Secret { .. }) =>
            {
                reference.clone()
            }
            RawValue::Kind(ValueKind::Volume { reference })
                if matches!(decl.kind, ValueKind::Volume { .. }) =>
            {
                reference.clone()
            }
            _ => {
                return Err(wrong(if field == "secret_value" {
                    "a secret reference (secret://...)"
                } else {
                    "a volume reference (volume://...)"
                }))
            }
        },
    };
    if let Some(o) = &decl.options {
        if !o.choices.iter().any(|c| c.value == value) {
            return Err(ValuesError::NotAnOption {
                at: entry.value_at.clone(),
                name: entry.name.clone(),
                value,
                options: o.choices.iter().map(|c| c.value.clone()).collect(),
            });
        }
    }
    Ok(Value::String(value))
}
