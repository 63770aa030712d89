//! The functions a template calls: Go's builtins (`text/template/funcs.go`) and slim-sprig's
//! (`github.com/go-task/slim-sprig`, `functions.go` `genericMap`), with Go's argument
//! checking done by the executor from each function's [`Sig`] (exec.go `evalCall`).
//!
//! As in Go, slim-sprig's functions are added with `Funcs` and so take precedence over a
//! builtin of the same name: `slice` is sprig's (list.go `slice`), not Go's.
//!
//! Only names in slim-sprig's `genericMap` are here: it has no `uuidv4` or `randAlphaNum`
//! (Masterminds sprig has them), and Fuzzball renders with slim-sprig, so a template that
//! calls them fails to parse there as it does here. The regular-expression functions use the
//! `regex` crate with Go's ASCII classes and Go's empty-match rules (funcs/goregex.rs).

pub(crate) mod gofmt;
mod goregex;
pub(crate) mod gotime;
mod gourl;
pub(crate) mod gv;
mod sprig;
pub(crate) mod unicode_tables;

/// SHA-256 (FIPS 180-4) of bytes, as lower-case hex: sprig's `sha256sum`, also the stable
/// fingerprint of `fuzzlint --output-format gitlab`.
pub use sprig::sha256_hex;

use gv::V;

/// The deterministic random source of `randInt`: splitmix64 (Steele, Lea, Flood 2014) from
/// [`crate::RenderOptions::seed`].
///
/// Each call of `next_u64` adds 0x9E3779B97F4A7C15 to the state (wrapping), then mixes:
/// `z = state; z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9; z = (z ^ (z >> 27)) *
/// 0x94D049BB133111EB; return z ^ (z >> 31)` (wrapping multiplications). The first value
/// drawn from seed 0 is 0xE220A8397B1DCDAF.
///
/// `randInt MIN MAX` (sprig: `rand.Intn(max-min) + min`) is here, with n = MAX - MIN
/// (wrapping int64): an error `invalid argument to Intn` when n <= 0 (as Go's `Intn` panics),
/// else `MIN + (next_u64() % n)` (wrapping). One draw per call, in template order.
#[derive(Clone, Debug)]
pub struct Random {
    state: u64,
}

impl Random {
    pub fn new(seed: u64) -> Self {
        Random { state: seed }
    }

    /// splitmix64 (Steele, Lea, Flood 2014).
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Every function name a template may call. Go's parser rejects any other name at parse time
/// (`function "x" not defined`), so the parser asks [`is_defined`].
pub const NAMES: &[&str] = &[
    // Go builtins (text/template/funcs.go builtins()).
    "and",
    "call",
    "html",
    "index",
    "slice",
    "js",
    "len",
    "not",
    "or",
    "print",
    "printf",
    "println",
    "urlquery",
    "eq",
    "ge",
    "gt",
    "le",
    "lt",
    "ne",
    // slim-sprig, those the catalog uses (research notes, part 5.2).
    "trim",
    "fail",
    "hasPrefix",
    "randInt",
    "substr",
    "splitList",
    "base",
    "list",
    "trimPrefix",
    "trimSuffix",
    "default",
    "join",
    "toString",
    "add",
    "max",
    "trimAll",
    "b64enc",
    "int",
    "now",
    "unixEpoch",
    "lower",
    "toJson",
    "empty",
    "mul",
    "sub",
    "append",
    "dict",
    "replace",
    // slim-sprig, other common ones (functions.go genericMap).
    "upper",
    "title",
    "quote",
    "squote",
    "contains",
    "hasSuffix",
    "split",
    "repeat",
    "indent",
    "nindent",
    "toStrings",
    "first",
    "last",
    "rest",
    "initial",
    "has",
    "keys",
    "hasKey",
    "get",
    "set",
    "unset",
    "min",
    "div",
    "mod",
    "add1",
    "int64",
    "float64",
    "atoi",
    "ternary",
    "coalesce",
    "toPrettyJson",
    "b64dec",
    "sha256sum",
    "trunc",
    "cat",
    "trimall",
    "push",
    "prepend",
    "reverse",
    "uniq",
    "compact",
    "without",
    "concat",
    "tuple",
    "dir",
    "ext",
    "clean",
    "isAbs",
    "until",
    "seq",
    "all",
    "any",
    "plural",
    "splitn",
    "sortAlpha",
    "biggest",
    // slim-sprig, the rest of genericMap: environment (empty here), math, lists, dicts,
    // reflection, encodings, must* forms.
    "env",
    "expandenv",
    "hello",
    "ceil",
    "floor",
    "round",
    "maxf",
    "minf",
    "untilStep",
    "toDecimal",
    "adler32sum",
    "b32enc",
    "osBase",
    "osClean",
    "osDir",
    "osExt",
    "osIsAbs",
    "pick",
    "omit",
    "pluck",
    "values",
    "dig",
    "chunk",
    "typeOf",
    "typeIs",
    "typeIsLike",
    "kindOf",
    "kindIs",
    "deepEqual",
    "toRawJson",
    "mustToJson",
    "mustToPrettyJson",
    "mustToRawJson",
    "mustAppend",
    "mustPush",
    "mustPrepend",
    "mustFirst",
    "mustLast",
    "mustRest",
    "mustInitial",
    "mustReverse",
    "mustUniq",
    "mustWithout",
    "mustHas",
    "mustCompact",
    "mustSlice",
    "mustChunk",
    // slim-sprig names that parse but are not built here (NOT_BUILT).
    "date",
    "date_in_zone",
    "dateInZone",
    "date_modify",
    "dateModify",
    "must_date_modify",
    "mustDateModify",
    "htmlDate",
    "htmlDateInZone",
    "ago",
    "duration",
    "durationRound",
    "toDate",
    "mustToDate",
    "fromJson",
    "mustFromJson",
    "regexMatch",
    "mustRegexMatch",
    "regexFindAll",
    "mustRegexFindAll",
    "regexFind",
    "mustRegexFind",
    "regexReplaceAll",
    "mustRegexReplaceAll",
    "regexReplaceAllLiteral",
    "mustRegexReplaceAllLiteral",
    "regexSplit",
    "mustRegexSplit",
    "regexQuoteMeta",
    "sha1sum",
    "b32dec",
    "getHostByName",
    "urlParse",
    "urlJoin",
];
/// The names of [`NAMES`] that parse (slim-sprig has them) but whose call is an
/// [`crate::ExecErrorKind::WrongArgument`] error here: dates and durations, regular
/// JSON decoding, sha1, base32 decoding, DNS.
pub const NOT_BUILT: &[&str] = &["ago", "toDate", "mustToDate", "getHostByName"];

pub fn is_defined(name: &str) -> bool {
    NAMES.contains(&name)
}

/// A parameter's Go type, for the executor's argument checks (exec.go `evalArg`,
/// `validateType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ty {
    Str,
    Int,
    Bool,
    Float,
    /// `interface {}`.
    Any,
    /// `reflect.Value` (the builtins `and`, `eq`, `index`, ...): a missing value stays
    /// invalid.
    RValue,
    /// `map[string]interface {}`.
    Map,
    /// `time.Time`.
    Time,
}

impl Ty {
    pub(crate) fn go_name(self) -> &'static str {
        match self {
            Ty::Str => "string",
            Ty::Int => "int",
            Ty::Bool => "bool",
            Ty::Float => "float64",
            Ty::Any => "interface {}",
            Ty::RValue => "reflect.Value",
            Ty::Map => "map[string]interface {}",
            Ty::Time => "time.Time",
        }
    }
}

/// A function's parameters: fixed ones, then a variadic one (`...T`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sig {
    pub params: &'static [Ty],
    pub variadic: Option<Ty>,
}

const fn fixed(params: &'static [Ty]) -> Sig {
    Sig {
        params,
        variadic: None,
    }
}

const fn var(params: &'static [Ty], v: Ty) -> Sig {
    Sig {
        params,
        variadic: Some(v),
    }
}

use Ty::*;

/// The Go signature of each function (funcs.go `builtins`; slim-sprig functions.go
/// `genericMap` and the functions it names).
pub(crate) fn signature(name: &str) -> Option<Sig> {
    Some(match name {
        "and" | "or" | "eq" | "index" | "call" => var(&[RValue], RValue),
        "not" | "len" => fixed(&[RValue]),
        "ne" | "lt" | "le" | "gt" | "ge" => fixed(&[RValue, RValue]),
        "html" | "js" | "urlquery" | "print" | "println" => var(&[], Any),
        "printf" => var(&[Str], Any),
        // strings.go and functions.go
        "trim" | "upper" | "lower" | "title" | "base" | "dir" | "ext" | "clean" | "isAbs"
        | "b64enc" | "b64dec" | "sha256sum" | "atoi" | "fail" => fixed(&[Str]),
        "substr" => fixed(&[Int, Int, Str]),
        "trunc" | "repeat" | "indent" | "nindent" => fixed(&[Int, Str]),
        "trimAll" | "trimall" | "trimSuffix" | "trimPrefix" | "contains" | "hasPrefix"
        | "hasSuffix" | "splitList" | "split" => fixed(&[Str, Str]),
        "splitn" => fixed(&[Str, Int, Str]),
        "replace" => fixed(&[Str, Str, Str]),
        "plural" => fixed(&[Str, Str, Int]),
        "join" => fixed(&[Str, Any]),
        "quote" | "squote" | "cat" | "list" | "tuple" | "dict" | "coalesce" | "all" | "any"
        | "add" | "concat" => var(&[], Any),
        "toString" | "int" | "int64" | "float64" | "toStrings" | "empty" | "toJson"
        | "toPrettyJson" | "first" | "last" | "rest" | "initial" | "reverse" | "uniq"
        | "compact" | "add1" | "sortAlpha" => fixed(&[Any]),
        "sub" | "div" | "mod" | "append" | "push" | "prepend" | "has" => fixed(&[Any, Any]),
        "mul" | "max" | "min" | "biggest" | "default" | "without" | "slice" => var(&[Any], Any),
        "ternary" => fixed(&[Any, Any, Bool]),
        "randInt" => fixed(&[Int, Int]),
        "until" => fixed(&[Int]),
        "seq" => var(&[], Int),
        "get" | "hasKey" | "unset" => fixed(&[Map, Str]),
        "set" => fixed(&[Map, Str, Any]),
        "keys" => var(&[], Map),
        "now" | "hello" => fixed(&[]),
        "sha1sum" | "b32dec" | "fromJson" | "mustFromJson" => fixed(&[Str]),
        "env" | "expandenv" | "adler32sum" | "b32enc" | "osBase" | "osClean" | "osDir"
        | "osExt" | "osIsAbs" => fixed(&[Str]),
        "ceil" | "floor" | "toDecimal" | "typeOf" | "kindOf" | "toRawJson" | "mustToJson"
        | "mustToPrettyJson" | "mustToRawJson" | "mustFirst" | "mustLast" | "mustRest"
        | "mustInitial" | "mustReverse" | "mustUniq" | "mustCompact" => fixed(&[Any]),
        "round" => var(&[Any, Int], Float),
        "maxf" | "minf" | "mustWithout" | "mustSlice" => var(&[Any], Any),
        "untilStep" => fixed(&[Int, Int, Int]),
        "pick" | "omit" => var(&[Map], Str),
        "pluck" => var(&[Str], Map),
        "values" => fixed(&[Map]),
        "dig" => var(&[], Any),
        "chunk" | "mustChunk" => fixed(&[Int, Any]),
        "typeIs" | "typeIsLike" | "kindIs" => fixed(&[Str, Any]),
        "deepEqual" | "mustAppend" | "mustPush" | "mustPrepend" | "mustHas" => fixed(&[Any, Any]),
        "regexMatch" | "mustRegexMatch" | "regexFind" | "mustRegexFind" => fixed(&[Str, Str]),
        "regexFindAll" | "mustRegexFindAll" | "regexSplit" | "mustRegexSplit" => {
            fixed(&[Str, Str, Int])
        }
        "regexReplaceAll"
        | "mustRegexReplaceAll"
        | "regexReplaceAllLiteral"
        | "mustRegexReplaceAllLiteral" => fixed(&[Str, Str, Str]),
        "regexQuoteMeta" => fixed(&[Str]),
        "date" => fixed(&[Str, Any]),
        "dateInZone" | "date_in_zone" => fixed(&[Str, Any, Str]),
        "dateModify" | "date_modify" | "mustDateModify" | "must_date_modify" => fixed(&[Str, Time]),
        "duration" | "durationRound" | "htmlDate" => fixed(&[Any]),
        "htmlDateInZone" => fixed(&[Any, Str]),
        "urlParse" => fixed(&[Str]),
        "urlJoin" => fixed(&[Map]),
        n if NOT_BUILT.contains(&n) => var(&[], Any),
        "unixEpoch" => fixed(&[Time]),
        _ => return None,
    })
}

/// What a call needs besides its arguments.
pub(crate) struct Ctx<'a> {
    pub rng: &'a mut Random,
    pub now_unix_seconds: i64,
    pub max_output_bytes: usize,
}

/// A function's error: Go's `error calling NAME: ...` (the executor adds the prefix).
#[derive(Debug, PartialEq)]
pub(crate) enum CallError {
    /// `fail`'s message.
    Fail(String),
    /// A bad operand (index out of range, len of an int, ...).
    Operand(String),
    /// An argument of a type the function cannot take.
    Argument(String),
    /// Output bigger than the bound.
    Limit(String),
}

/// Calls `name` with arguments already checked against its [`signature`]. `and` and `or`
/// are the executor's (they evaluate lazily).
pub(crate) fn call(name: &str, args: Vec<V>, ctx: &mut Ctx) -> Result<V, CallError> {
    match name {
        "not" => Ok(V::Bool(!arg(&args, 0).truth())),
        "len" => builtin_len(arg(&args, 0)).map(V::Int),
        "index" => builtin_index(&args),
        "eq" => eq(arg(&args, 0), &args[1.min(args.len())..]).map(V::Bool),
        "ne" => eq(arg(&args, 0), &args[1.min(args.len())..]).map(|b| V::Bool(!b)),
        "lt" => lt(arg(&args, 0), arg(&args, 1)).map(V::Bool),
        "le" => le(arg(&args, 0), arg(&args, 1)).map(V::Bool),
        "gt" => le(arg(&args, 0), arg(&args, 1)).map(|b| V::Bool(!b)),
        "ge" => lt(arg(&args, 0), arg(&args, 1)).map(|b| V::Bool(!b)),
        "print" => Ok(V::Str(gofmt::sprint(&args))),
        "println" => Ok(V::Str(gofmt::sprintln(&args))),
        "printf" => {
            let f = match arg(&args, 0) {
                V::Str(s) => s.clone(),
                _ => String::new(),
            };
            Ok(V::Str(gofmt::sprintf(&f, &args[1.min(args.len())..])))
        }
        "html" => Ok(V::Str(html_escape(&eval_args(&args)))),
        "js" => Ok(V::Str(js_escape(&eval_args(&args)))),
        "urlquery" => Ok(V::Str(query_escape(&eval_args(&args)))),
        "call" => Err(CallError::Argument(match arg(&args, 0) {
            V::Invalid | V::Nil => "call of nil".to_string(),
            v => format!("non-function of type {}", v.type_name()),
        })),
        _ => sprig::call(name, args, ctx),
    }
}

fn arg(args: &[V], i: usize) -> &V {
    args.get(i).unwrap_or(&V::Invalid)
}

/// exec.go `indirectInterface`: a nil interface is the invalid value.
fn indirect_interface(v: &V) -> &V {
    match v {
        V::Nil => &V::Invalid,
        v => v,
    }
}

/// funcs.go `length`.
fn builtin_len(v: &V) -> Result<i64, CallError> {
    match v {
        // reflect.Value.Type on the zero Value panics; safeCall reports the panic.
        V::Invalid => Err(CallError::Operand(
            "reflect: call of reflect.Value.Type on zero Value".into(),
        )),
        V::Nil => Err(CallError::Operand("len of nil pointer".into())),
        V::Str(s) => Ok(s.len() as i64),
        V::List(l) => Ok(l.len() as i64),
        V::Strs(l) => Ok(l.len() as i64),
        V::Ints(l) => Ok(l.len() as i64),
        V::Map(m) => Ok(m.borrow().len() as i64),
        V::StrMap(m) => Ok(m.len() as i64),
        v => Err(CallError::Operand(format!("len of type {}", v.type_name()))),
    }
}

/// funcs.go `indexArg`.
fn index_arg(index: &V, cap: usize) -> Result<usize, CallError> {
    let x: i64 = match index {
        V::Int(i) | V::Int64(i) | V::TimeUnit(_, i) => *i,
        V::Uint(u) => *u as i64,
        V::Byte(b) => i64::from(*b),
        V::Invalid | V::Nil => {
            return Err(CallError::Operand(
                "cannot index slice/array with nil".into(),
            ))
        }
        v => {
            return Err(CallError::Operand(format!(
                "cannot index slice/array with type {}",
                v.type_name()
            )))
        }
    };
    if x < 0 || x as u64 > cap as u64 {
        return Err(CallError::Operand(format!("index out of range: {x}")));
    }
    Ok(x as usize)
}

/// funcs.go `index`.
fn builtin_index(args: &[V]) -> Result<V, CallError> {
    let mut item = indirect_interface(arg(args, 0)).clone();
    if matches!(item, V::Invalid) {
        return Err(CallError::Operand("index of untyped nil".into()));
    }
    for index in args.iter().skip(1) {
        let index = indirect_interface(index);
        item = match &item {
            V::Nil => return Err(CallError::Operand("index of nil pointer".into())),
            V::List(l) => {
                let x = index_arg(index, l.len())?;
                l.get(x)
                    .cloned()
                    .ok_or_else(|| CallError::Operand("reflect: slice index out of range".into()))?
            }
            V::Ints(l) => {
                let x = index_arg(index, l.len())?;
                V::Int(*l.get(x).ok_or_else(|| {
                    CallError::Operand("reflect: slice index out of range".into())
                })?)
            }
            V::Strs(l) => {
                let x = index_arg(index, l.len())?;
                V::Str(l.get(x).cloned().ok_or_else(|| {
                    CallError::Operand("reflect: slice index out of range".into())
                })?)
            }
            V::Str(s) => {
                let x = index_arg(index, s.len())?;
                V::Byte(*s.as_bytes().get(x).ok_or_else(|| {
                    CallError::Operand("reflect: string index out of range".into())
                })?)
            }
            V::Map(_) | V::StrMap(_) => {
                let key = match index {
                    V::Str(k) => k,
                    V::Invalid | V::Nil => {
                        return Err(CallError::Operand(
                            "value is nil; should be of type string".into(),
                        ))
                    }
                    v => {
                        return Err(CallError::Operand(format!(
                            "value has type {}; should be string",
                            v.type_name()
                        )))
                    }
                };
                match &item {
                    V::Map(m) => m.borrow().get(key).cloned().unwrap_or(V::Nil),
                    V::StrMap(m) => V::Str(m.get(key).cloned().unwrap_or_default()),
                    _ => V::Nil,
                }
            }
            v => {
                return Err(CallError::Operand(format!(
                    "can't index item of type {}",
                    v.type_name()
                )))
            }
        };
    }
    Ok(item)
}

/// funcs.go `basicKind`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Invalid,
    Bool,
    Int,
    Float,
    String,
    Uint,
}

fn basic_kind(v: &V) -> Kind {
    match v {
        V::Bool(_) => Kind::Bool,
        V::Int(_) | V::Int64(_) | V::TimeUnit(..) => Kind::Int,
        V::Uint(_) | V::Byte(_) => Kind::Uint,
        V::Float(_) => Kind::Float,
        V::Str(_) => Kind::String,
        _ => Kind::Invalid,
    }
}

fn int_of(v: &V) -> i64 {
    match v {
        V::Int(i) | V::Int64(i) | V::TimeUnit(_, i) => *i,
        _ => 0,
    }
}

fn uint_of(v: &V) -> u64 {
    match v {
        V::Uint(u) => *u,
        V::Byte(b) => u64::from(*b),
        _ => 0,
    }
}

fn float_of(v: &V) -> f64 {
    match v {
        V::Float(f) => *f,
        _ => 0.0,
    }
}

fn str_of(v: &V) -> &str {
    match v {
        V::Str(s) => s,
        _ => "",
    }
}

/// Go's reflect kind of a value, for funcs.go `canCompare`.
fn reflect_kind(v: &V) -> u8 {
    match v {
        V::Invalid | V::Nil => 0,
        V::Bool(_) => 1,
        V::Int(_) => 2,
        V::Int64(_) => 6,
        V::Uint(_) => 11,
        V::Byte(_) => 8,
        V::Float(_) => 14,
        V::Str(_) => 24,
        V::List(_) | V::Strs(_) | V::Ints(_) => 23,
        V::Map(_) | V::StrMap(_) => 21,
        V::Time { .. } => 25,
        V::TimeUnit(..) => 2,
    }
}

const ERR_BAD_COMPARISON_TYPE: &str = "invalid type for comparison";
const ERR_BAD_COMPARISON: &str = "incompatible types for comparison";

/// funcs.go `eq`: arg1 == arg2 || arg1 == arg3 ...
fn eq(arg1: &V, rest: &[V]) -> Result<bool, CallError> {
    let arg1 = indirect_interface(arg1);
    if rest.is_empty() {
        return Err(CallError::Argument(
            "missing argument for comparison".into(),
        ));
    }
    let k1 = basic_kind(arg1);
    for a in rest {
        let a = indirect_interface(a);
        let k2 = basic_kind(a);
        let truth = if k1 != k2 {
            match (k1, k2) {
                (Kind::Int, Kind::Uint) => int_of(arg1) >= 0 && int_of(arg1) as u64 == uint_of(a),
                (Kind::Uint, Kind::Int) => int_of(a) >= 0 && uint_of(arg1) == int_of(a) as u64,
                _ => {
                    if !matches!(arg1, V::Invalid) && !matches!(a, V::Invalid) {
                        return Err(CallError::Argument(ERR_BAD_COMPARISON.into()));
                    }
                    false
                }
            }
        } else {
            match k1 {
                Kind::Bool => arg1 == a,
                Kind::Float => float_of(arg1) == float_of(a),
                Kind::Int => int_of(arg1) == int_of(a),
                Kind::String => str_of(arg1) == str_of(a),
                Kind::Uint => uint_of(arg1) == uint_of(a),
                Kind::Invalid => {
                    let (r1, r2) = (reflect_kind(arg1), reflect_kind(a));
                    if r1 != r2 && r1 != 0 && r2 != 0 {
                        return Err(CallError::Argument(format!(
                            "non-comparable types {}: {}, {}: {}",
                            gofmt::format_verb(arg1, 's'),
                            arg1.type_name(),
                            a.type_name(),
                            gofmt::format_v(a)
                        )));
                    }
                    let (n1, n2) = (matches!(arg1, V::Invalid), matches!(a, V::Invalid));
                    if n1 || n2 {
                        n1 == n2
                    } else {
                        match a {
                            V::Time { .. } => arg1 == a,
                            _ => {
                                return Err(CallError::Argument(format!(
                                    "non-comparable type {}: {}",
                                    gofmt::format_verb(a, 's'),
                                    a.type_name()
                                )))
                            }
                        }
                    }
                }
            }
        };
        if truth {
            return Ok(true);
        }
    }
    Ok(false)
}

/// funcs.go `lt`.
fn lt(arg1: &V, arg2: &V) -> Result<bool, CallError> {
    let arg1 = indirect_interface(arg1);
    let k1 = basic_kind(arg1);
    if k1 == Kind::Invalid {
        return Err(CallError::Argument(ERR_BAD_COMPARISON_TYPE.into()));
    }
    let arg2 = indirect_interface(arg2);
    let k2 = basic_kind(arg2);
    if k2 == Kind::Invalid {
        return Err(CallError::Argument(ERR_BAD_COMPARISON_TYPE.into()));
    }
    if k1 != k2 {
        return match (k1, k2) {
            (Kind::Int, Kind::Uint) => {
                Ok(int_of(arg1) < 0 || (int_of(arg1) as u64) < uint_of(arg2))
            }
            (Kind::Uint, Kind::Int) => Ok(int_of(arg2) >= 0 && uint_of(arg1) < int_of(arg2) as u64),
            _ => Err(CallError::Argument(ERR_BAD_COMPARISON.into())),
        };
    }
    match k1 {
        Kind::Bool | Kind::Invalid => Err(CallError::Argument(ERR_BAD_COMPARISON_TYPE.into())),
        Kind::Float => Ok(float_of(arg1) < float_of(arg2)),
        Kind::Int => Ok(int_of(arg1) < int_of(arg2)),
        Kind::String => Ok(str_of(arg1) < str_of(arg2)),
        Kind::Uint => Ok(uint_of(arg1) < uint_of(arg2)),
    }
}

/// funcs.go `le`.
fn le(arg1: &V, arg2: &V) -> Result<bool, CallError> {
    if lt(arg1, arg2)? {
        return Ok(true);
    }
    eq(arg1, std::slice::from_ref(arg2))
}

/// funcs.go `evalArgs`: one string argument as is, else `fmt.Sprint` of the arguments (a nil
/// one printed `<no value>`).
fn eval_args(args: &[V]) -> String {
    if let [V::Str(s)] = args {
        return s.clone();
    }
    let mut out = String::new();
    let mut prev_string = false;
    for (i, a) in args.iter().enumerate() {
        let (text, is_string) = match a {
            V::Invalid | V::Nil => ("<no value>".to_string(), true),
            V::Str(s) => (s.clone(), true),
            v => (gofmt::format_v(v), false),
        };
        if i > 0 && !is_string && !prev_string {
            out.push(' ');
        }
        out.push_str(&text);
        prev_string = is_string;
    }
    out
}

/// funcs.go `HTMLEscapeString`.
pub(crate) fn html_escape(s: &str) -> String {
    let mut r = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\0' => r.push('\u{FFFD}'),
            '"' => r.push_str("&#34;"),
            '\'' => r.push_str("&#39;"),
            '&' => r.push_str("&amp;"),
            '<' => r.push_str("&lt;"),
            '>' => r.push_str("&gt;"),
            c => r.push(c),
        }
    }
    r
}

/// funcs.go `JSEscapeString`.
pub(crate) fn js_escape(s: &str) -> String {
    let mut r = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => r.push_str("\\\\"),
            '\'' => r.push_str("\\'"),
            '"' => r.push_str("\\\""),
            '<' => r.push_str("\\u003C"),
            '>' => r.push_str("\\u003E"),
            '&' => r.push_str("\\u0026"),
            '=' => r.push_str("\\u003D"),
            c if (c as u32) < 0x20 => r.push_str(&format!("\\u00{:02X}", c as u32)),
            c if c.is_ascii() => r.push(c),
            c if unicode_tables::is_print(c) => r.push(c),
            c => r.push_str(&format!("\\u{:04X}", c as u32)),
        }
    }
    r
}

/// net/url `QueryEscape`.
pub(crate) fn query_escape(s: &str) -> String {
    let mut r = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                r.push(b as char)
            }
            b' ' => r.push('+'),
            b => r.push_str(&format!("%{b:02X}")),
        }
    }
    r
}
