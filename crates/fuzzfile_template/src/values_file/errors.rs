//! What can be wrong in a values file or an override: each error has where ([`At`]), a message
//! (its `Display`) and what to do ([`ValuesError::help`]).

use crate::Span;

/// Where an error is: which text, and the byte span in it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum At {
    /// The `values.yaml` of the declarations.
    Decls(Span),
    /// A `--values FILE` (the path as given).
    File { path: Box<str>, span: Span },
    /// A `--set NAME=VALUE` argument (`arg` is the whole argument; `span` is in it).
    Set { arg: Box<str>, span: Span },
}

impl At {
    /// The byte span in the text the error is about.
    pub fn span(&self) -> Span {
        match self {
            At::Decls(s) | At::File { span: s, .. } | At::Set { span: s, .. } => s.clone(),
        }
    }

    /// The same text, another span.
    pub fn with_span(&self, span: Span) -> At {
        match self {
            At::Decls(_) => At::Decls(span),
            At::File { path, .. } => At::File {
                path: path.clone(),
                span,
            },
            At::Set { arg, .. } => At::Set {
                arg: arg.clone(),
                span,
            },
        }
    }
}

fn or_list<S: AsRef<str>>(items: &[S]) -> String {
    items
        .iter()
        .map(|s| format!("`{}`", s.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

fn did_you_mean(s: &Option<String>) -> String {
    match s {
        Some(s) => format!(" (did you mean `{s}`?)"),
        None => String::new(),
    }
}

/// A problem in a values file or an override.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ValuesError {
    /// The YAML does not parse.
    #[error("{message}")]
    Syntax {
        at: At,
        message: String,
        help: Option<String>,
    },
    /// The file, `values`, or an entry has the wrong shape (a list where a mapping belongs).
    #[error("{what} is not {expected}")]
    Shape {
        at: At,
        what: String,
        expected: String,
    },
    /// A field no declaration has (`uint_values`, `displayName`).
    #[error("unknown field `{field}` in {place}{}", did_you_mean(.suggestion))]
    UnknownField {
        at: At,
        field: String,
        place: &'static str,
        suggestion: Option<String>,
        allowed: &'static [&'static str],
    },
    /// A declaration without `name` (or with an empty one).
    #[error("a value declaration without a name")]
    MissingName { at: At },
    /// Two declarations of one name; `at` is the second, `first` the first one's name.
    #[error("value `{name}` is declared twice")]
    DuplicateName { at: At, name: String, first: Span },
    /// No `*_value` field: the declaration has no type.
    #[error("value `{name}` has no type and default (no `string_value`, `uint_value`, `bool_value`, `secret_value` or `volume_value`)")]
    NoValue { at: At, name: String },
    /// Two `*_value` fields; `at` is the second.
    #[error("value `{name}` has both `{first}` and `{second}`")]
    TwoValues {
        at: At,
        name: String,
        first: &'static str,
        second: &'static str,
        first_span: Span,
    },
    /// A field's value of the wrong type: `uint_value: -1`, `uint_value: "8"`,
    /// `bool_value: yes`, `--set Cores=four`.
    #[error("`{field}` of value `{name}` must be {expected}, not {found}")]
    WrongType {
        at: At,
        name: String,
        field: &'static str,
        expected: &'static str,
        found: String,
    },
    /// An `options_input` value set (by default or override) to something not among its
    /// options.
    #[error("`{value}` is not an option of value `{name}` (options: {})", or_list(.options))]
    NotAnOption {
        at: At,
        name: String,
        value: String,
        options: Vec<String>,
    },
    /// `options_input` on a value that is not a `string_value`.
    #[error("value `{name}` has `options_input`, but it is a `{field}`; options are for a `string_value`")]
    OptionsNotString { at: At, name: String, field: String },
    /// `secret_value` or `volume_value` without `reference`.
    #[error("`{field}` of value `{name}` has no `reference`")]
    MissingReference { at: At, name: String, field: String },
    /// An override of a name no declaration has.
    #[error("no value is named `{name}`{}", did_you_mean(.suggestion))]
    UnknownValue {
        at: At,
        name: String,
        suggestion: Option<String>,
        declared: Vec<String>,
    },
    /// A `--set` argument that is not `NAME=VALUE`.
    #[error("`--set {arg}` is not NAME=VALUE")]
    BadSet { at: At, arg: String },
}

impl ValuesError {
    /// Where the error is.
    pub fn at(&self) -> &At {
        match self {
            ValuesError::Syntax { at, .. }
            | ValuesError::Shape { at, .. }
            | ValuesError::UnknownField { at, .. }
            | ValuesError::MissingName { at }
            | ValuesError::DuplicateName { at, .. }
            | ValuesError::NoValue { at, .. }
            | ValuesError::TwoValues { at, .. }
            | ValuesError::WrongType { at, .. }
            | ValuesError::NotAnOption { at, .. }
            | ValuesError::OptionsNotString { at, .. }
            | ValuesError::MissingReference { at, .. }
            | ValuesError::UnknownValue { at, .. }
            | ValuesError::BadSet { at, .. } => at,
        }
    }

    /// The byte span in the text of [`ValuesError::at`].
    pub fn span(&self) -> Span {
        self.at().span()
    }

    /// What to do about it.
    pub fn help(&self) -> String {
        match self {
            ValuesError::Syntax { help, .. } => help
                .clone()
                .unwrap_or_else(|| "fix the YAML syntax at this place".into()),
            ValuesError::Shape { .. } => "a values file is `values:` followed by a list of declarations, each `- name: Name` with `display_name` and one of `string_value`, `uint_value`, `bool_value`, `secret_value`, `volume_value`".into(),
            ValuesError::UnknownField { suggestion: Some(s), .. } => format!("write `{s}`"),
            ValuesError::UnknownField { allowed, .. } => {
                format!("remove it; the fields here are {}", or_list(allowed))
            }
            ValuesError::MissingName { .. } => {
                "add `name: SomeName`; the template reads the value as `{{ .SomeName }}`".into()
            }
            ValuesError::DuplicateName { name, .. } => format!(
                "rename or remove one of the two declarations of `{name}`; the template sees only one value `.{name}`"
            ),
            ValuesError::NoValue { .. } => "add one of `string_value`, `uint_value`, `bool_value`, `secret_value: {reference: ...}`, `volume_value: {reference: ...}` with the default".into(),
            ValuesError::TwoValues { first, .. } => {
                format!("keep one of them: a value has one type (the first is `{first}`)")
            }
            ValuesError::WrongType { field, .. } => match *field {
                "uint_value" => "write a whole number of 0 or more without quotes, e.g. `8`".into(),
                "bool_value" => "write `true` or `false` without quotes".into(),
                "secret_value" => "write `secret_value: {reference: \"secret://user/NAME\"}`".into(),
                "volume_value" => "write `volume_value: {reference: \"volume://user/persistent/NAME\"}`".into(),
                "options_input" | "options_input.options" => {
                    "write `options_input: {options: [first, second]}`".into()
                }
                _ => "write a string (quote it if it looks like a number or a boolean)".into(),
            },
            ValuesError::NotAnOption { options, .. } => {
                format!("use one of {}, or add it to `options_input.options`", or_list(options))
            }
            ValuesError::OptionsNotString { .. } => {
                "remove `options_input`, or make the value a `string_value`".into()
            }
            ValuesError::MissingReference { field, .. } => {
                format!("add `reference:` under `{field}` (it may be \"\")")
            }
            ValuesError::UnknownValue { suggestion: Some(s), .. } => format!("write `{s}`"),
            ValuesError::UnknownValue { declared, .. } if declared.is_empty() => {
                "the template declares no values".into()
            }
            ValuesError::UnknownValue { declared, .. } => {
                format!("the template's values are {}", or_list(declared))
            }
            ValuesError::BadSet { .. } => {
                "write `--set NAME=VALUE`, NAME as declared in values.yaml".into()
            }
        }
    }
}
