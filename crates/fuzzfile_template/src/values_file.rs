//! The catalog's `values.yaml`: typed value declarations with their defaults, and the
//! overrides of a render (`--values FILE`, `--set NAME=VALUE`).
//!
//! A values file is a mapping with one key, `values:`, a list of declarations:
//!
//! ```yaml
//! values:
//!   - name: Cores                 # read in the template as {{ .Cores }}
//!     display_name: CPU cores     # the label of the input in the web UI
//!     display_category: Resources # optional UI group
//!     uint_value: 4               # exactly one of string_value, uint_value, bool_value,
//!                                 # secret_value {reference, type?}, volume_value {reference}
//!   - name: Scope
//!     display_name: Who can reach the service
//!     string_value: group
//!     options_input:              # an enum: the string value is one of these
//!       options: [user, group, organization]
//! ```
//!
//! (Research notes, part 5.3; the Fuzzball API's `TemplateValues`.) [`parse`] reads one with
//! the workspace's YAML span tree, so every declaration and field keeps its byte span, and
//! reports every problem it finds ([`ValuesError`]: span, message, what to do) instead of
//! stopping at the first. [`ValuesFile::data`] applies the overrides ([`Override`]) and builds
//! the data root a template executes with: a [`Value::Map`] from each name to its value
//! (`string_value` → [`Value::String`], `uint_value` → [`Value::Uint`] (Go's `uint64`),
//! `bool_value` → [`Value::Bool`], `secret_value`/`volume_value` → their reference as a
//! [`Value::String`]), with where each value came from ([`ValueSource`]).

mod errors;
mod overrides;

pub use errors::{At, ValuesError};
pub use overrides::{Override, OverrideEntry, RawValue, YamlType};

use crate::{Span, Value};
use fuzzfile_syntax::{CoreValue, NodeId, NodeKind, Tree};
use std::collections::BTreeMap;

/// The fields of a value declaration, in the order the catalog writes them.
pub const DECL_FIELDS: &[&str] = &[
    "name",
    "display_name",
    "display_category",
    "string_value",
    "uint_value",
    "bool_value",
    "secret_value",
    "volume_value",
    "options_input",
];

/// The fields that give a declaration its type and default; a declaration has exactly one.
pub const VALUE_FIELDS: &[&str] = &[
    "string_value",
    "uint_value",
    "bool_value",
    "secret_value",
    "volume_value",
];

const SECRET_FIELDS: &[&str] = &["reference", "type"];
const VOLUME_FIELDS: &[&str] = &["reference"];
const OPTIONS_FIELDS: &[&str] = &["options"];

/// The largest `uint_value`: the Fuzzball API stores it as an `int64`.
pub const UINT_MAX: u64 = i64::MAX as u64;

/// A value with the byte span it was read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spanned<T> {
    pub value: T,
    pub span: Span,
}

/// A parsed `values.yaml`: the declarations that parsed, in file order (those with an error
/// that leaves no name or no type are left out; the error says why).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValuesFile {
    pub decls: Vec<ValueDecl>,
}

/// One entry of `values:`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueDecl {
    /// `name`: what the template reads as `{{ .Name }}`; the span is the name's scalar.
    pub name: Spanned<String>,
    /// The whole entry (the mapping after `- `).
    pub span: Span,
    pub display_name: Option<Spanned<String>>,
    pub display_category: Option<Spanned<String>>,
    /// The type and the default.
    pub kind: ValueKind,
    /// The `*_value` key (`uint_value`).
    pub field_span: Span,
    /// The default as written: the scalar after the `*_value` key, for `secret_value` and
    /// `volume_value` their `reference` scalar.
    pub default_span: Span,
    /// `options_input`: the choices of an enum string value.
    pub options: Option<Options>,
}

/// `options_input: {options: [...]}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The `options_input` value (the mapping).
    pub span: Span,
    pub choices: Vec<Spanned<String>>,
}

/// A declaration's type with its default.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueKind {
    String(String),
    Uint(u64),
    Bool(bool),
    /// `secret_value: {reference: "secret://user/NAME", type: VALUE}`.
    Secret {
        reference: String,
        secret_type: Option<String>,
    },
    /// `volume_value: {reference: "volume://user/persistent/NAME"}`.
    Volume {
        reference: String,
    },
}

impl ValueKind {
    /// The field that declares this kind (`uint_value`).
    pub fn field(&self) -> &'static str {
        match self {
            ValueKind::String(_) => "string_value",
            ValueKind::Uint(_) => "uint_value",
            ValueKind::Bool(_) => "bool_value",
            ValueKind::Secret { .. } => "secret_value",
            ValueKind::Volume { .. } => "volume_value",
        }
    }

    /// The type in words, for messages.
    pub fn type_word(&self) -> &'static str {
        type_word(self.field())
    }

    /// The value a template sees.
    pub fn to_value(&self) -> Value {
        match self {
            ValueKind::String(s) => Value::String(s.clone()),
            ValueKind::Uint(u) => Value::Uint(*u),
            ValueKind::Bool(b) => Value::Bool(*b),
            ValueKind::Secret { reference, .. } | ValueKind::Volume { reference } => {
                Value::String(reference.clone())
            }
        }
    }
}

fn type_word(field: &str) -> &'static str {
    match field {
        "string_value" => "string",
        "uint_value" => "unsigned integer",
        "bool_value" => "boolean",
        "secret_value" => "secret reference",
        "volume_value" => "volume reference",
        _ => "value",
    }
}

impl ValueDecl {
    /// The declared default as the template sees it.
    pub fn default_value(&self) -> Value {
        self.kind.to_value()
    }

    /// Every value the input can take, where that is a short list: the options of an
    /// `options_input`, `false` and `true` for a bool. `None` for a free string or number.
    pub fn choices(&self) -> Option<Vec<Value>> {
        if let Some(o) = &self.options {
            return Some(
                o.choices
                    .iter()
                    .map(|c| Value::String(c.value.clone()))
                    .collect(),
            );
        }
        match self.kind {
            ValueKind::Bool(_) => Some(vec![Value::Bool(false), Value::Bool(true)]),
            _ => None,
        }
    }
}

/// Where a value of the data root came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ValueSource {
    /// The declaration's default: `span` is the default in `values.yaml`
    /// ([`ValueDecl::default_span`]).
    Default { span: Span },
    /// An override: `--set NAME=VALUE` or an entry of a `--values FILE`; `at.span()` is the
    /// value in the argument or the file.
    Override { at: At },
}

/// The data root of a render, with the source of each of its values.
#[derive(Clone, Debug, PartialEq)]
pub struct Data {
    /// A [`Value::Map`] from each declared name to its value.
    pub root: Value,
    /// Where each name's value came from.
    pub sources: BTreeMap<String, ValueSource>,
}

impl ValuesFile {
    /// The declaration named `name`.
    pub fn decl(&self, name: &str) -> Option<&ValueDecl> {
        self.decls.iter().find(|d| d.name.value == name)
    }

    /// The declared names, in file order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.decls.iter().map(|d| d.name.value.as_str())
    }

    /// The data root with every value at its declared default.
    pub fn defaults(&self) -> Data {
        let mut root = BTreeMap::new();
        let mut sources = BTreeMap::new();
        for d in &self.decls {
            root.insert(d.name.value.clone(), d.default_value());
            sources.insert(
                d.name.value.clone(),
                ValueSource::Default {
                    span: d.default_span.clone(),
                },
            );
        }
        Data {
            root: Value::Map(root),
            sources,
        }
    }

    /// The data root: each declaration's default, then the overrides in order (a later one
    /// wins). Every override is checked against its declaration (the name exists, the value
    /// has the declared type, an `options_input` value is one of its options); all problems
    /// are returned, not only the first.
    pub fn data(&self, overrides: &[Override]) -> Result<Data, Vec<ValuesError>> {
        let mut data = self.defaults();
        let mut errors = Vec::new();
        let Value::Map(root) = &mut data.root else {
            return Ok(data);
        };
        for o in overrides {
            for entry in o.entries() {
                match overrides::check(self, entry) {
                    Ok(v) => {
                        root.insert(entry.name.clone(), v);
                        data.sources.insert(
                            entry.name.clone(),
                            ValueSource::Override {
                                at: entry.value_at.clone(),
                            },
                        );
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
        if errors.is_empty() {
            Ok(data)
        } else {
            Err(errors)
        }
    }
}

/// Parses the text of a `values.yaml`. Returns the declarations that parsed and every problem
/// met (an empty list when the file is right).
pub fn parse(text: &str) -> (ValuesFile, Vec<ValuesError>) {
    let tree = fuzzfile_syntax::parse(text);
    let mut errors: Vec<ValuesError> = tree
        .errors
        .iter()
        .map(|e| ValuesError::Syntax {
            at: At::Decls(e.range.as_usize()),
            message: e.message.clone(),
            help: e.help.clone(),
        })
        .collect();
    let mut file = ValuesFile::default();
    let Some(root) = tree.root() else {
        if errors.is_empty() {
            errors.push(ValuesError::Shape {
                at: At::Decls(0..0),
                what: "the file".into(),
                expected: "a mapping with a `values:` list".into(),
            });
        }
        return (file, errors);
    };
    let Some(entries) = tree.merged_entries(root) else {
        errors.push(ValuesError::Shape {
            at: At::Decls(span(&tree, root)),
            what: format!("the file ({})", tree.describe(root)),
            expected: "a mapping with a `values:` list".into(),
        });
        return (file, errors);
    };
    let mut list = None;
    for e in entries.iter() {
        match tree.text(e.key) {
            Some("values") => list = Some(e.value),
            other => errors.push(ValuesError::UnknownField {
                at: At::Decls(span(&tree, e.key)),
                field: other.unwrap_or("").to_string(),
                place: "the top level of a values file",
                suggestion: suggest(other.unwrap_or(""), &["values"]),
                allowed: &["values"],
            }),
        }
    }
    let Some(list) = list else {
        errors.push(ValuesError::Shape {
            at: At::Decls(span(&tree, root)),
            what: "the file".into(),
            expected: "a mapping with a `values:` list".into(),
        });
        return (file, errors);
    };
    if tree.is_null(list) {
        return (file, errors);
    }
    let Some(items) = tree.items(list) else {
        errors.push(ValuesError::Shape {
            at: At::Decls(span(&tree, list)),
            what: format!("`values` ({})", tree.describe(list)),
            expected: "a list of value declarations (`- name: ...`)".into(),
        });
        return (file, errors);
    };
    let mut first_of: BTreeMap<String, Span> = BTreeMap::new();
    for &item in items {
        if let Some(decl) = parse_decl(&tree, item, &mut errors) {
            if let Some(first) = first_of.get(&decl.name.value) {
                errors.push(ValuesError::DuplicateName {
                    at: At::Decls(decl.name.span.clone()),
                    name: decl.name.value.clone(),
                    first: first.clone(),
                });
                continue;
            }
            first_of.insert(decl.name.value.clone(), decl.name.span.clone());
            file.decls.push(decl);
        }
    }
    (file, errors)
}

fn span(tree: &Tree, id: NodeId) -> Span {
    tree.node(id).range.as_usize()
}

/// A scalar's decoded text, whatever its YAML type (`8` is `"8"`), as Go's `yaml.v3` decodes
/// any scalar into a string field.
fn scalar_text(tree: &Tree, id: NodeId) -> Option<String> {
    if tree.is_null(id) {
        return Some(String::new());
    }
    tree.text(id).map(str::to_string)
}

fn parse_decl(tree: &Tree, item: NodeId, errors: &mut Vec<ValuesError>) -> Option<ValueDecl> {
    let item_span = span(tree, item);
    let Some(entries) = tree.merged_entries(item) else {
        errors.push(ValuesError::Shape {
            at: At::Decls(item_span),
            what: format!("a value declaration ({})", tree.describe(item)),
            expected: "a mapping (`- name: Name` with its fields)".into(),
        });
        return None;
    };
    let mut name: Option<Spanned<String>> = None;
    let mut display_name = None;
    let mut display_category = None;
    let mut options_node: Option<(NodeId, NodeId)> = None;
    // (field, key node, value node) of each `*_value` field.
    let mut kinds: Vec<(&'static str, NodeId, NodeId)> = Vec::new();
    let get_string = |field: &'static str, v: NodeId, errors: &mut Vec<ValuesError>, name: &str| {
        if tree.scalar(v).is_some() {
            scalar_text(tree, v).map(|s| Spanned {
                value: s,
                span: span(tree, v),
            })
        } else {
            if unresolved_alias(tree, v) {
                return None;
            }
            errors.push(ValuesError::WrongType {
                at: At::Decls(span(tree, v)),
                name: name.to_string(),
                field,
                expected: "a string",
                found: tree.describe(v),
            });
            None
        }
    };
    // The name first, so that later messages can say which value they are about.
    let decl_name = entries
        .iter()
        .find(|e| tree.text(e.key) == Some("name"))
        .and_then(|e| tree.text(e.value))
        .unwrap_or("")
        .to_string();
    for e in entries.iter() {
        let key = tree.text(e.key).unwrap_or("");
        match key {
            "name" => {
                if let Some(s) = get_string("name", e.value, errors, &decl_name) {
                    if s.value.is_empty() {
                        errors.push(ValuesError::MissingName {
                            at: At::Decls(s.span.clone()),
                        });
                    } else {
                        name = Some(s);
                    }
                }
            }
            "display_name" => {
                display_name = get_string("display_name", e.value, errors, &decl_name)
            }
            "display_category" => {
                display_category = get_string("display_category", e.value, errors, &decl_name)
            }
            "options_input" => options_node = Some((e.key, e.value)),
            _ => {
                if let Some(field) = VALUE_FIELDS.iter().find(|f| **f == key) {
                    kinds.push((field, e.key, e.value));
                } else {
                    errors.push(ValuesError::UnknownField {
                        at: At::Decls(span(tree, e.key)),
                        field: key.to_string(),
                        place: "a value declaration",
                        suggestion: suggest(key, DECL_FIELDS),
                        allowed: DECL_FIELDS,
                    });
                }
            }
        }
    }
    let Some(name) = name else {
        if !entries.iter().any(|e| tree.text(e.key) == Some("name")) {
            errors.push(ValuesError::MissingName {
                at: At::Decls(item_span),
            });
        }
        return None;
    };
    let (field, key, value) = match kinds.as_slice() {
        [] => {
            errors.push(ValuesError::NoValue {
                at: At::Decls(name.span.clone()),
                name: name.value.clone(),
            });
            return None;
        }
        [one] => *one,
        [first, second, ..] => {
            errors.push(ValuesError::TwoValues {
                at: At::Decls(span(tree, second.1)),
                name: name.value.clone(),
                first: first.0,
                second: second.0,
                first_span: span(tree, first.1),
            });
            return None;
        }
    };
    let (kind, default_span) = parse_kind(tree, &name.value, field, value, errors)?;
    let mut options = None;
    if let Some((okey, onode)) = options_node {
        options = parse_options(tree, &name.value, onode, errors);
        if let Some(o) = &options {
            match &kind {
                ValueKind::String(s) => {
                    if !o.choices.iter().any(|c| &c.value == s) {
                        errors.push(ValuesError::NotAnOption {
                            at: At::Decls(default_span.clone()),
                            name: name.value.clone(),
                            value: s.clone(),
                            options: o.choices.iter().map(|c| c.value.clone()).collect(),
                        });
                    }
                }
                other => errors.push(ValuesError::OptionsNotString {
                    at: At::Decls(span(tree, okey)),
                    name: name.value.clone(),
                    field: other.field().to_string(),
                }),
            }
        }
    }
    Some(ValueDecl {
        name,
        span: item_span,
        display_name,
        display_category,
        kind,
        field_span: span(tree, key),
        default_span,
        options,
    })
}

/// The typed default of `field: value` (a `*_value` field), or an error.
pub(crate) fn parse_kind(
    tree: &Tree,
    name: &str,
    field: &'static str,
    value: NodeId,
    errors: &mut Vec<ValuesError>,
) -> Option<(ValueKind, Span)> {
    let at = At::Decls(span(tree, value));
    kind_from_node(tree, name, field, value, at, errors)
}

/// Shared by `values.yaml` and a values-shaped `--values FILE`: `at` places errors (its span
/// is replaced by the offending node's).
pub(crate) fn kind_from_node(
    tree: &Tree,
    name: &str,
    field: &'static str,
    value: NodeId,
    at: At,
    errors: &mut Vec<ValuesError>,
) -> Option<(ValueKind, Span)> {
    let vspan = span(tree, value);
    let wrong = |expected: &'static str, errors: &mut Vec<ValuesError>| {
        if unresolved_alias(tree, value) {
            return;
        }
        errors.push(ValuesError::WrongType {
            at: at.with_span(vspan.clone()),
            name: name.to_string(),
            field,
            expected,
            found: tree.describe(value),
        });
    };
    match field {
        "string_value" => {
            if tree.scalar(value).is_none() {
                wrong("a string", errors);
                return None;
            }
            let s = scalar_text(tree, value).unwrap_or_default();
            Some((ValueKind::String(s), vspan))
        }
        "uint_value" => match tree.core_value(value) {
            Some(CoreValue::Int(i)) if i >= 0 => Some((ValueKind::Uint(i as u64), vspan)),
            _ => {
                wrong("an unsigned integer (0 to 9223372036854775807)", errors);
                None
            }
        },
        "bool_value" => match tree.core_value(value) {
            Some(CoreValue::Bool(b)) => Some((ValueKind::Bool(b), vspan)),
            _ => {
                wrong("a boolean (true or false)", errors);
                None
            }
        },
        "secret_value" | "volume_value" => {
            let allowed = if field == "secret_value" {
                SECRET_FIELDS
            } else {
                VOLUME_FIELDS
            };
            let Some(entries) = tree.merged_entries(value) else {
                wrong("a mapping with a `reference`", errors);
                return None;
            };
            let mut reference: Option<(String, Span)> = None;
            let mut secret_type = None;
            for e in entries.iter() {
                let key = tree.text(e.key).unwrap_or("");
                match key {
                    "reference" | "type" if allowed.contains(&key) => {
                        if tree.scalar(e.value).is_none() {
                            errors.push(ValuesError::WrongType {
                                at: at.with_span(span(tree, e.value)),
                                name: name.to_string(),
                                field: match (field, key) {
                                    ("secret_value", "type") => "secret_value.type",
                                    ("secret_value", _) => "secret_value.reference",
                                    _ => "volume_value.reference",
                                },
                                expected: "a string",
                                found: tree.describe(e.value),
                            });
                            continue;
                        }
                        let text = scalar_text(tree, e.value).unwrap_or_default();
                        if key == "reference" {
                            reference = Some((text, span(tree, e.value)));
                        } else {
                            secret_type = Some(text);
                        }
                    }
                    _ => errors.push(ValuesError::UnknownField {
                        at: at.with_span(span(tree, e.key)),
                        field: key.to_string(),
                        place: if field == "secret_value" {
                            "a secret_value"
                        } else {
                            "a volume_value"
                        },
                        suggestion: suggest(key, allowed),
                        allowed,
                    }),
                }
            }
            let Some((reference, rspan)) = reference else {
                errors.push(ValuesError::MissingReference {
                    at: at.with_span(vspan),
                    name: name.to_string(),
                    field: field.to_string(),
                });
                return None;
            };
            let kind = if field == "secret_value" {
                ValueKind::Secret {
                    reference,
                    secret_type,
                }
            } else {
                ValueKind::Volume { reference }
            };
            Some((kind, rspan))
        }
        _ => None,
    }
}

fn parse_options(
    tree: &Tree,
    name: &str,
    node: NodeId,
    errors: &mut Vec<ValuesError>,
) -> Option<Options> {
    let Some(entries) = tree.merged_entries(node) else {
        errors.push(ValuesError::WrongType {
            at: At::Decls(span(tree, node)),
            name: name.to_string(),
            field: "options_input",
            expected: "a mapping with an `options` list",
            found: tree.describe(node),
        });
        return None;
    };
    let mut list = None;
    for e in entries.iter() {
        let key = tree.text(e.key).unwrap_or("");
        if key == "options" {
            list = Some(e.value);
        } else {
            errors.push(ValuesError::UnknownField {
                at: At::Decls(span(tree, e.key)),
                field: key.to_string(),
                place: "an options_input",
                suggestion: suggest(key, OPTIONS_FIELDS),
                allowed: OPTIONS_FIELDS,
            });
        }
    }
    let wrong_list = |node: NodeId, errors: &mut Vec<ValuesError>| {
        errors.push(ValuesError::WrongType {
            at: At::Decls(span(tree, node)),
            name: name.to_string(),
            field: "options_input.options",
            expected: "a non-empty list of strings",
            found: tree.describe(node),
        })
    };
    let Some(list) = list else {
        wrong_list(node, errors);
        return None;
    };
    let Some(items) = tree.items(list) else {
        wrong_list(list, errors);
        return None;
    };
    if items.is_empty() {
        wrong_list(list, errors);
        return None;
    }
    let mut choices = Vec::new();
    for &i in items {
        if tree.scalar(i).is_none() {
            errors.push(ValuesError::WrongType {
                at: At::Decls(span(tree, i)),
                name: name.to_string(),
                field: "options_input.options",
                expected: "a string",
                found: tree.describe(i),
            });
            continue;
        }
        choices.push(Spanned {
            value: scalar_text(tree, i).unwrap_or_default(),
            span: span(tree, i),
        });
    }
    Some(Options {
        span: span(tree, node),
        choices,
    })
}

/// The candidate closest to `word` when it is close enough to be a typo of it; a camelCase
/// spelling of a snake_case field (`displayName`, the API's JSON name) finds the field too.
pub(crate) fn suggest(word: &str, candidates: &[&str]) -> Option<String> {
    let snake = fuzzfile_diagnostics::suggest::separated_case(word, '_');
    if let Some(c) = candidates.iter().find(|c| **c == snake) {
        return Some((*c).to_owned());
    }
    fuzzfile_diagnostics::suggest::did_you_mean(word, candidates.iter().copied()).map(str::to_owned)
}

/// Whether `node` is an alias whose anchor does not exist: the YAML tree reports it already.
fn unresolved_alias(tree: &Tree, node: NodeId) -> bool {
    matches!(
        tree.node(tree.resolve(node)).kind,
        NodeKind::Alias { target: None, .. }
    )
}

/// Whether `node` is a scalar (not a collection or an unresolved alias).
pub(crate) fn is_scalar(tree: &Tree, node: NodeId) -> bool {
    matches!(tree.node(tree.resolve(node)).kind, NodeKind::Scalar(_))
}
