//! The template's syntax tree, after Go's `text/template/parse` node types. Every node has a
//! [`Span`]: byte offsets into the template text.

use std::collections::BTreeMap;

/// Byte offsets into the template text, `start..end`.
pub type Span = std::ops::Range<usize>;

/// A parsed template: its main list and the templates it defines (`define`, `block`).
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pub name: String,
    pub root: Vec<Node>,
    /// `{{define "name"}}` and `{{block "name" ...}}`, by name. As in Go, a later definition
    /// of a name replaces an earlier one, and a `block`'s body is its definition.
    pub defines: BTreeMap<String, Define>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Define {
    pub name: String,
    /// The whole `{{define ...}} ... {{end}}` (or `block`).
    pub span: Span,
    pub body: Vec<Node>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// Text copied to the output. `span` is the part of the template that is output, after
    /// the trim markers (`{{-`, `-}}`) removed whitespace: `text == template[span]`.
    Text {
        span: Span,
        text: String,
    },
    /// `{{ pipeline }}`: prints the pipeline's value unless it declares or assigns variables.
    Action {
        span: Span,
        pipe: Pipeline,
    },
    /// `{{/* ... */}}`.
    Comment {
        span: Span,
    },
    If(Branch),
    With(Branch),
    Range(Branch),
    /// `{{template "name" pipeline}}` (and the call half of a `block`).
    Template {
        span: Span,
        name: String,
        name_span: Span,
        pipe: Option<Pipeline>,
    },
    Break {
        span: Span,
    },
    Continue {
        span: Span,
    },
}

impl Node {
    pub fn span(&self) -> Span {
        match self {
            Node::Text { span, .. }
            | Node::Action { span, .. }
            | Node::Comment { span }
            | Node::Template { span, .. }
            | Node::Break { span }
            | Node::Continue { span } => span.clone(),
            Node::If(b) | Node::With(b) | Node::Range(b) => b.span.clone(),
        }
    }
}

/// `if`, `with` and `range`: `{{if pipe}} list {{else}} else_list {{end}}`. `{{else if p}}`
/// (and `{{else with p}}`) is an `else_list` holding one `If` (`With`) node, as in Go.
#[derive(Clone, Debug, PartialEq)]
pub struct Branch {
    /// From `{{` of the opening action to `}}` of its `{{end}}`.
    pub span: Span,
    pub pipe: Pipeline,
    pub list: Vec<Node>,
    pub else_list: Option<Vec<Node>>,
}

/// `$x := cmd | cmd | ...`, `$i, $v := ...` (range), `$x = ...`, or plain commands.
#[derive(Clone, Debug, PartialEq)]
pub struct Pipeline {
    pub span: Span,
    /// Declared or assigned variables (`$x`), in order.
    pub decl: Vec<Variable>,
    /// `=` rather than `:=`.
    pub is_assign: bool,
    pub cmds: Vec<Command>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub span: Span,
    /// With its `$`: `$x`, or `$` itself.
    pub name: String,
}

/// One command of a pipeline: a function and its arguments, or a single operand.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    pub span: Span,
    pub args: Vec<Arg>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// `.`
    Dot {
        span: Span,
    },
    /// `.A.B`: fields (map keys) of dot.
    Field {
        span: Span,
        names: Vec<String>,
    },
    /// `$x.A.B` (`fields` empty for `$x`).
    Variable {
        span: Span,
        name: String,
        fields: Vec<String>,
    },
    /// `(pipeline).A.B`.
    Chain {
        span: Span,
        node: Box<Arg>,
        fields: Vec<String>,
    },
    /// A function name.
    Identifier {
        span: Span,
        name: String,
    },
    Nil {
        span: Span,
    },
    Bool {
        span: Span,
        value: bool,
    },
    /// A number as Go's parser reads it (`text` as written: `0x1F`, `1e3`, `'a'`).
    Number {
        span: Span,
        text: String,
        value: Number,
    },
    /// An interpreted ("...") or raw (`...`) string, its value unquoted.
    String {
        span: Span,
        value: String,
        /// As written, quotes included (parse/node.go `StringNode.Quoted`): how Go's
        /// `String()` prints the node in messages.
        quoted: String,
    },
    /// `( pipeline )`.
    Pipe {
        span: Span,
        pipe: Pipeline,
    },
}

impl Arg {
    pub fn span(&self) -> Span {
        match self {
            Arg::Dot { span }
            | Arg::Field { span, .. }
            | Arg::Variable { span, .. }
            | Arg::Chain { span, .. }
            | Arg::Identifier { span, .. }
            | Arg::Nil { span }
            | Arg::Bool { span, .. }
            | Arg::Number { span, .. }
            | Arg::String { span, .. }
            | Arg::Pipe { span, .. } => span.clone(),
        }
    }
}

/// A numeric constant: Go keeps an untyped constant that becomes an int when it is one, else
/// a float (a character constant is an int).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    /// Too large for int64 but fits uint64.
    Uint(u64),
    Float(f64),
}
