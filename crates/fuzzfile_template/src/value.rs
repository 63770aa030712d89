//! The values a template computes with: what Go's `reflect.Value`s are in the catalog's
//! templates (the data root is a `map[string]interface{}` of strings, numbers and bools).

use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// Go's untyped `nil` and a missing map key's `interface{}` zero value.
    Nil,
    Bool(bool),
    /// Go's `int`/`int64` (a template's integer constant is an `int`).
    Int(i64),
    /// Go's `uint64` (`uint_value` values).
    Uint(u64),
    Float(f64),
    String(String),
    /// `[]interface{}` / `[]string`: printed `[a b]`.
    List(Vec<Value>),
    /// `map[string]interface{}`: printed `map[k:v ...]`, keys sorted (Go's fmt sorts them).
    Map(BTreeMap<String, Value>),
    /// `time.Time` (what `now` returns): seconds and nanoseconds since the Unix epoch, UTC.
    Time {
        unix_seconds: i64,
        nanos: u32,
    },
}

impl Value {
    /// Go's `truth` (exec.go `isTrue`): false, 0, nil, and empty strings, lists and maps are
    /// false; everything else true.
    pub fn is_true(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Uint(u) => *u != 0,
            Value::Float(f) => *f != 0.0,
            Value::String(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.is_empty(),
            Value::Time { .. } => true,
        }
    }

    /// Go's kind name, for messages (`string`, `int`, `[]interface {}`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "nil",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Uint(_) => "uint64",
            Value::Float(_) => "float64",
            Value::String(_) => "string",
            Value::List(_) => "[]interface {}",
            Value::Map(_) => "map[string]interface {}",
            Value::Time { .. } => "time.Time",
        }
    }
}
