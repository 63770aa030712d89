//! The executor's values: [`crate::Value`] with the Go type distinctions that change what a
//! template does (Go's `reflect.Value` as `text/template/exec.go` sees it): `int` and `int64`
//! (sprig's arithmetic returns `int64`, which an `int` parameter rejects), `[]string` and
//! `[]interface {}`, a nil `interface {}` held in a list or map, and the invalid value of a
//! missing map key (printed `<no value>`).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use crate::Value;

/// A map: Go maps are references (`set` on a `dict` changes it where it is held).
pub type MapRef = Rc<RefCell<BTreeMap<String, V>>>;

#[derive(Clone, Debug, PartialEq)]
pub enum V {
    /// Go's zero `reflect.Value` (exec.go `zero`): a missing map key, a pipeline's nil result.
    Invalid,
    /// A nil `interface {}` (an element of a `[]interface {}` or a map value).
    Nil,
    Bool(bool),
    /// Go's `int`.
    Int(i64),
    /// Go's `int64` (sprig's `add`, `sub`, `mul`, `max`, `int64`, ...).
    Int64(i64),
    /// Go's `uint64`.
    Uint(u64),
    /// Go's `uint8` (a byte: `index` of a string).
    Byte(u8),
    Float(f64),
    Str(String),
    /// `[]interface {}`.
    List(Rc<Vec<V>>),
    /// `[]string` (`splitList`, `toStrings`, `keys`).
    Strs(Rc<Vec<String>>),
    /// `[]int` (`until`).
    Ints(Rc<Vec<i64>>),
    /// `map[string]interface {}`.
    Map(MapRef),
    /// `map[string]string` (`split`, `splitn`).
    StrMap(Rc<BTreeMap<String, String>>),
    /// `time.Time` in UTC.
    Time {
        unix_seconds: i64,
        nanos: u32,
    },
    /// A time's `Month` or `Weekday`: a Go integer type (kind `int`) whose `String` method
    /// `fmt` and sprig's `toString` print (`November`, `Tuesday`).
    TimeUnit(TimeUnit, i64),
}

/// The integer types of Go's time package that a time's methods return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// `time.Month`, 1 (January) ..= 12.
    Month,
    /// `time.Weekday`, 0 (Sunday) ..= 6.
    Weekday,
}

impl TimeUnit {
    /// The type's name, as `%T` prints it.
    pub fn type_name(self) -> &'static str {
        match self {
            TimeUnit::Month => "time.Month",
            TimeUnit::Weekday => "time.Weekday",
        }
    }

    /// Go's `Month.String` and `Weekday.String`: the English name, or `%!Month(N)` /
    /// `%!Weekday(N)` out of range.
    pub fn string(self, number: i64) -> String {
        let (names, what): (&[&str], &str) = match self {
            TimeUnit::Month => (&super::gotime::MONTHS, "Month"),
            TimeUnit::Weekday => (&super::gotime::DAYS, "Weekday"),
        };
        let index = match self {
            TimeUnit::Month => number.checked_sub(1),
            TimeUnit::Weekday => Some(number),
        };
        match index
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| names.get(i))
        {
            Some(name) => (*name).to_string(),
            None => format!("%!{what}({number})"),
        }
    }
}

impl V {
    pub fn from_value(v: &Value) -> V {
        match v {
            Value::Nil => V::Nil,
            Value::Bool(b) => V::Bool(*b),
            Value::Int(i) => V::Int(*i),
            Value::Uint(u) => V::Uint(*u),
            Value::Float(f) => V::Float(*f),
            Value::String(s) => V::Str(s.clone()),
            Value::List(l) => V::List(Rc::new(l.iter().map(V::from_value).collect())),
            Value::Map(m) => V::map(
                m.iter()
                    .map(|(k, v)| (k.clone(), V::from_value(v)))
                    .collect(),
            ),
            Value::Time {
                unix_seconds,
                nanos,
            } => V::Time {
                unix_seconds: *unix_seconds,
                nanos: *nanos,
            },
        }
    }

    pub fn map(m: BTreeMap<String, V>) -> V {
        V::Map(Rc::new(RefCell::new(m)))
    }

    pub fn list(l: Vec<V>) -> V {
        V::List(Rc::new(l))
    }

    /// Go's type name, as `fmt`'s `%T` and the executor's messages print it.
    pub fn type_name(&self) -> &'static str {
        match self {
            V::Invalid => "<nil>",
            V::Nil => "interface {}",
            V::Bool(_) => "bool",
            V::Int(_) => "int",
            V::Int64(_) => "int64",
            V::Uint(_) => "uint64",
            V::Byte(_) => "uint8",
            V::Float(_) => "float64",
            V::Str(_) => "string",
            V::List(_) => "[]interface {}",
            V::Strs(_) => "[]string",
            V::Ints(_) => "[]int",
            V::Map(_) => "map[string]interface {}",
            V::StrMap(_) => "map[string]string",
            V::Time { .. } => "time.Time",
            V::TimeUnit(unit, _) => unit.type_name(),
        }
    }

    /// exec.go `isTrue` (after `indirectInterface`): false, 0, nil, invalid, and empty
    /// strings, lists and maps are false. A `time.Time` (a struct) is true.
    pub fn truth(&self) -> bool {
        match self {
            V::Invalid | V::Nil => false,
            V::Bool(b) => *b,
            V::Int(i) | V::Int64(i) | V::TimeUnit(_, i) => *i != 0,
            V::Uint(u) => *u != 0,
            V::Byte(b) => *b != 0,
            V::Float(f) => *f != 0.0,
            V::Str(s) => !s.is_empty(),
            V::List(l) => !l.is_empty(),
            V::Strs(l) => !l.is_empty(),
            V::Ints(l) => !l.is_empty(),
            V::Map(m) => !m.borrow().is_empty(),
            V::StrMap(m) => !m.is_empty(),
            V::Time { .. } => true,
        }
    }

    /// The elements of a list of either kind, as `interface {}` values.
    pub fn list_items(&self) -> Option<Vec<V>> {
        match self {
            V::List(l) => Some(l.as_ref().clone()),
            V::Strs(l) => Some(l.iter().map(|s| V::Str(s.clone())).collect()),
            V::Ints(l) => Some(l.iter().map(|i| V::Int(*i)).collect()),
            _ => None,
        }
    }

    /// The entries of a map of either kind, keys sorted.
    pub fn map_entries(&self) -> Option<Vec<(String, V)>> {
        match self {
            V::Map(m) => Some(
                m.borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            V::StrMap(m) => Some(
                m.iter()
                    .map(|(k, v)| (k.clone(), V::Str(v.clone())))
                    .collect(),
            ),
            _ => None,
        }
    }

    /// Whether lists and maps nest deeper than `limit` in this value (each shared allocation
    /// looked at once, so a list doubled into itself costs no more than its depth; a map
    /// `set` into itself is infinitely deep).
    pub fn nests_deeper_than(&self, limit: usize) -> bool {
        fn depth(v: &V, limit: usize, memo: &mut std::collections::HashMap<usize, usize>) -> usize {
            let (key, children): (usize, Vec<V>) = match v {
                V::List(l) => (Rc::as_ptr(l) as *const u8 as usize, l.as_ref().clone()),
                V::Map(m) => (
                    Rc::as_ptr(m) as *const u8 as usize,
                    m.borrow().values().cloned().collect(),
                ),
                _ => return 0,
            };
            if let Some(d) = memo.get(&key) {
                return *d;
            }
            // While this allocation is being measured, meeting it again is a cycle.
            memo.insert(key, limit + 1);
            let mut deepest = 0;
            if limit > 0 {
                for c in &children {
                    deepest = deepest.max(depth(c, limit - 1, memo));
                    if deepest >= limit {
                        break;
                    }
                }
            }
            let d = (1 + deepest).min(limit + 1);
            memo.insert(key, d);
            d
        }
        depth(self, limit, &mut Default::default()) > limit
    }

    pub fn is_nilish(&self) -> bool {
        matches!(self, V::Invalid | V::Nil)
    }
}
