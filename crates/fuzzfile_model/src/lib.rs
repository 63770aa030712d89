//! The typed Fuzzfile model.
//!
//! [`build`] walks a [`fuzzfile_syntax::Tree`] and produces a [`Fuzzfile`] in which every
//! field carries its source range, together with the schema-level diagnostics found on the way
//! (unknown keys with "did you mean", wrong types, value grammars, missing fields, duplicate
//! keys). What is not inherent to the walk (the version's value, `command`/`script` presence,
//! deprecated keys) is recorded in the model for the rules of `fuzzfile_check` to judge.
//!
//! Invariants: this crate knows YAML only through `fuzzfile_syntax`; it never stops at a
//! problem (an unknown key is a diagnostic, and the walk goes on); aliases are followed by
//! reference under a visit budget proportional to the tree, so they cannot blow up; no I/O.

mod build;
pub mod json_schema;
mod model;
pub mod schema;
pub mod values;

pub use build::build;
pub use model::*;
