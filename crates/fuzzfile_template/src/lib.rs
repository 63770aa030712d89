//! Go's `text/template` with the slim-sprig functions, as Fuzzball's application catalog uses
//! it (`applications/<app>/template.yaml` with its `values.yaml`).
//!
//! - [`parse`]: template text → [`ast::Template`], a span (byte offsets into the template) on
//!   every node; parse errors with spans. Go's grammar: `text/template/parse` (lex.go, parse.go).
//! - [`render`]: [`ast::Template`] + data ([`value::Value`]) → [`Rendered`]: the output text, a
//!   [`source_map::SourceMap`] from output bytes back to template bytes (and to the values the
//!   printed text came from), and the non-fatal [`Note`]s met on the way (a missing key
//!   printed as `<no value>`). Go's semantics: `text/template/exec.go`, `funcs.go`; the sprig
//!   functions: `github.com/go-task/slim-sprig`.
//! - [`values_file`]: the catalog's `values.yaml` (typed value declarations with defaults) and
//!   the overrides (`--values FILE`, `--set NAME=VALUE`) → the data root.
//!
//! Rendering is deterministic: the functions that read a clock or a random source
//! (`randInt`, `now`, `uuidv4`, ...) take them from [`RenderOptions`].
//!
//! Never panics on any input; recursion (nested templates, `template` calls) is bounded.

pub mod ast;
pub mod error;
pub mod exec;
pub mod funcs;
pub mod parse;
pub mod source_map;
pub mod value;
pub mod values_file;

pub use ast::{Span, Template};
pub use error::{ExecError, ExecErrorKind, ParseError};
pub use source_map::{Origin, Segment, SourceMap};
pub use value::Value;

/// What a render reads that is not in the template or its data: the random source and the
/// clock. The defaults are fixed, so a render is the same on every run and every machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenderOptions {
    /// Seed of the random source ([`funcs::Random`]: splitmix64, the same algorithm in the
    /// differential test's Go program).
    pub seed: u64,
    /// What `now` returns: seconds since the Unix epoch, UTC.
    pub now_unix_seconds: i64,
    /// Nested `template` calls deeper than this are an error (Go: `maxExecDepth`, 100000;
    /// lower here to bound memory).
    pub max_depth: usize,
    /// Output larger than this many bytes is an error (a `range` over a huge list).
    pub max_output_bytes: usize,
    /// Evaluating more than this many nodes and commands is an error (nested loops that print
    /// nothing would otherwise run for hours).
    pub max_steps: u64,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            seed: 0,
            // 2000-01-01T00:00:00Z
            now_unix_seconds: 946_684_800,
            max_depth: 1000,
            max_output_bytes: 64 << 20,
            max_steps: 50_000_000,
        }
    }
}

/// The result of a render that did not fail.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rendered {
    pub text: String,
    pub map: SourceMap,
    pub notes: Vec<Note>,
}

/// Something a render met that Go prints through without failing, but a reader should hear of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Note {
    /// Where in the template.
    pub span: Span,
    pub kind: NoteKind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoteKind {
    /// `.Name` where the data has no key `Name`: Go prints `<no value>` (or the zero value in
    /// an argument).
    MissingKey { name: String },
}

/// Parses `text` (the template named `name`, for messages).
pub fn parse(name: &str, text: &str) -> Result<Template, Vec<ParseError>> {
    parse::parse(name, text)
}

/// Executes `template` with `data` as dot.
pub fn render(
    template: &Template,
    data: &Value,
    options: &RenderOptions,
) -> Result<Rendered, ExecError> {
    exec::render(template, data, options)
}
