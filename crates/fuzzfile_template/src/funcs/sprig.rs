//! slim-sprig's functions (github.com/go-task/slim-sprig: functions.go `genericMap`,
//! strings.go, numeric.go, defaults.go, list.go, dict.go, crypto.go, date.go), with the
//! runtime panics Go's `safeCall` turns into errors worded as Go words them.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::gofmt;
use super::gv::V;
use super::{CallError, Ctx};

fn a(args: &[V], i: usize) -> &V {
    args.get(i).unwrap_or(&V::Invalid)
}

fn s(args: &[V], i: usize) -> &str {
    match a(args, i) {
        V::Str(s) => s,
        _ => "",
    }
}

fn int(args: &[V], i: usize) -> i64 {
    match a(args, i) {
        V::Int(i) | V::Int64(i) => *i,
        _ => 0,
    }
}

fn op(msg: impl Into<String>) -> CallError {
    CallError::Operand(msg.into())
}

pub(super) fn call(name: &str, args: Vec<V>, ctx: &mut Ctx) -> Result<V, CallError> {
    let st = |x: String| Ok(V::Str(x));
    match name {
        // functions.go: strings
        "trim" => st(s(&args, 0).trim().to_string()),
        "upper" => st(map_chars(s(&args, 0), true)),
        "lower" => st(map_chars(s(&args, 0), false)),
        "title" => st(title(s(&args, 0))),
        "substr" => substring(int(&args, 0), int(&args, 1), s(&args, 2)).map(V::Str),
        "trunc" => st(trunc(int(&args, 0), s(&args, 1))),
        "repeat" => repeat(s(&args, 1), int(&args, 0), ctx).map(V::Str),
        "trimAll" | "trimall" => {
            let cut = s(&args, 0);
            st(s(&args, 1).trim_matches(|c| cut.contains(c)).to_string())
        }
        "trimSuffix" => {
            let x = s(&args, 1);
            st(x.strip_suffix(s(&args, 0)).unwrap_or(x).to_string())
        }
        "trimPrefix" => {
            let x = s(&args, 1);
            st(x.strip_prefix(s(&args, 0)).unwrap_or(x).to_string())
        }
        "contains" => Ok(V::Bool(s(&args, 1).contains(s(&args, 0)))),
        "hasPrefix" => Ok(V::Bool(s(&args, 1).starts_with(s(&args, 0)))),
        "hasSuffix" => Ok(V::Bool(s(&args, 1).ends_with(s(&args, 0)))),
        "quote" => st(args
            .iter()
            .filter(|v| !v.is_nilish())
            .map(|v| gofmt::quote_with(&strval(v), '"', false))
            .collect::<Vec<_>>()
            .join(" ")),
        "squote" => st(args
            .iter()
            .filter(|v| !v.is_nilish())
            .map(|v| format!("'{}'", gofmt::format_v(v)))
            .collect::<Vec<_>>()
            .join(" ")),
        "cat" => {
            let v: Vec<V> = args.into_iter().filter(|v| !v.is_nilish()).collect();
            let f = vec!["%v"; v.len()].join(" ");
            st(gofmt::sprintf(&f, &v))
        }
        "indent" => indent(int(&args, 0), s(&args, 1), ctx).map(V::Str),
        "nindent" => indent(int(&args, 0), s(&args, 1), ctx).map(|x| V::Str(format!("\n{x}"))),
        "replace" => st(s(&args, 2).replace(s(&args, 0), s(&args, 1))),
        "plural" => st(if int(&args, 2) == 1 {
            s(&args, 0)
        } else {
            s(&args, 1)
        }
        .to_string()),
        "sha256sum" => st(sha256_hex(s(&args, 0).as_bytes())),
        "toString" => st(strval(a(&args, 0))),
        "atoi" => Ok(V::Int(atoi(s(&args, 0)))),
        "int64" => Ok(V::Int64(to_int64(a(&args, 0)))),
        "int" => Ok(V::Int(to_int64(a(&args, 0)))),
        "float64" => Ok(V::Float(to_float64(a(&args, 0)))),
        "split" => {
            let m = go_split(s(&args, 1), s(&args, 0))
                .into_iter()
                .enumerate()
                .map(|(i, p)| (format!("_{i}"), p))
                .collect();
            Ok(V::StrMap(Rc::new(m)))
        }
        "splitn" => {
            let m = go_splitn(s(&args, 2), s(&args, 0), int(&args, 1))
                .into_iter()
                .enumerate()
                .map(|(i, p)| (format!("_{i}"), p))
                .collect();
            Ok(V::StrMap(Rc::new(m)))
        }
        "splitList" => Ok(V::Strs(Rc::new(go_split(s(&args, 1), s(&args, 0))))),
        "toStrings" => Ok(V::Strs(Rc::new(strslice(a(&args, 0))))),
        "join" => st(strslice(a(&args, 1)).join(s(&args, 0))),
        "sortAlpha" => {
            let v = a(&args, 0);
            let mut l = if v.list_items().is_some() {
                strslice(v)
            } else {
                vec![strval(v)]
            };
            l.sort();
            Ok(V::Strs(Rc::new(l)))
        }
        "until" => Ok(V::Ints(Rc::new(until_step(
            0,
            int(&args, 0),
            if int(&args, 0) < 0 { -1 } else { 1 },
        )?))),
        "seq" => seq(&args
            .iter()
            .map(|v| int(std::slice::from_ref(v), 0))
            .collect::<Vec<_>>())
        .map(V::Str),
        // Arithmetic (functions.go): int64, wrapping as Go's integers do.
        "add1" => Ok(V::Int64(to_int64(a(&args, 0)).wrapping_add(1))),
        "add" => Ok(V::Int64(
            args.iter()
                .fold(0i64, |acc, v| acc.wrapping_add(to_int64(v))),
        )),
        "sub" => Ok(V::Int64(
            to_int64(a(&args, 0)).wrapping_sub(to_int64(a(&args, 1))),
        )),
        "mul" => Ok(V::Int64(
            args.iter().skip(1).fold(to_int64(a(&args, 0)), |acc, v| {
                acc.wrapping_mul(to_int64(v))
            }),
        )),
        "div" | "mod" => {
            let (x, y) = (to_int64(a(&args, 0)), to_int64(a(&args, 1)));
            if y == 0 {
                return Err(op("runtime error: integer divide by zero"));
            }
            Ok(V::Int64(if name == "div" {
                x.wrapping_div(y)
            } else {
                x.wrapping_rem(y)
            }))
        }
        "randInt" => {
            let (min, max) = (int(&args, 0), int(&args, 1));
            let n = max.wrapping_sub(min);
            if n <= 0 {
                return Err(op("invalid argument to Intn"));
            }
            let r = (ctx.rng.next_u64() % n as u64) as i64;
            Ok(V::Int(min.wrapping_add(r)))
        }
        "max" | "biggest" | "min" => {
            let mut acc = to_int64(a(&args, 0));
            for v in args.iter().skip(1) {
                let b = to_int64(v);
                if (name == "min" && b < acc) || (name != "min" && b > acc) {
                    acc = b;
                }
            }
            Ok(V::Int64(acc))
        }
        // defaults.go
        "default" => {
            let given = args.get(1);
            match given {
                Some(g) if !empty(g) => Ok(g.clone()),
                _ => Ok(a(&args, 0).clone()),
            }
        }
        "empty" => Ok(V::Bool(empty(a(&args, 0)))),
        "coalesce" => Ok(args.iter().find(|v| !empty(v)).cloned().unwrap_or(V::Nil)),
        "all" => Ok(V::Bool(args.iter().all(|v| !empty(v)))),
        "any" => Ok(V::Bool(args.iter().any(|v| !empty(v)))),
        "toJson" => st(to_json(a(&args, 0), None).unwrap_or_default()),
        "toPrettyJson" => st(to_json(a(&args, 0), Some(0)).unwrap_or_default()),
        "ternary" => Ok(if matches!(a(&args, 2), V::Bool(true)) {
            a(&args, 0).clone()
        } else {
            a(&args, 1).clone()
        }),
        // Paths (path package).
        "base" => st(path_base(s(&args, 0))),
        "dir" => st(path_dir(s(&args, 0))),
        "clean" => st(path_clean(s(&args, 0))),
        "ext" => {
            let p = s(&args, 0);
            let ext = p
                .rfind(['.', '/'])
                .filter(|&i| p.as_bytes()[i] == b'.')
                .map_or("", |i| &p[i..]);
            st(ext.to_string())
        }
        "isAbs" => Ok(V::Bool(s(&args, 0).starts_with('/'))),
        // Encoding.
        "b64enc" => st(b64_encode(s(&args, 0).as_bytes())),
        "b64dec" => st(match b64_decode(s(&args, 0)) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => e,
        }),
        // Data structures: list.go, dict.go.
        "list" | "tuple" => Ok(V::list(args)),
        "dict" => {
            let mut m = BTreeMap::new();
            let mut i = 0;
            while i < args.len() {
                let key = strval(&args[i]);
                m.insert(
                    key,
                    args.get(i + 1).cloned().unwrap_or(V::Str(String::new())),
                );
                i += 2;
            }
            Ok(V::map(m))
        }
        "get" => Ok(match a(&args, 0) {
            V::Map(m) => m
                .borrow()
                .get(s(&args, 1))
                .cloned()
                .unwrap_or(V::Str(String::new())),
            _ => V::Str(String::new()),
        }),
        "set" => match a(&args, 0) {
            V::Map(m) => {
                m.borrow_mut()
                    .insert(s(&args, 1).to_string(), a(&args, 2).clone());
                Ok(V::Map(m.clone()))
            }
            // A nil map (a missing value): Go panics.
            _ => Err(op("assignment to entry in nil map")),
        },
        "unset" => match a(&args, 0) {
            V::Map(m) => {
                m.borrow_mut().remove(s(&args, 1));
                Ok(V::Map(m.clone()))
            }
            _ => Ok(V::map(BTreeMap::new())),
        },
        "hasKey" => Ok(V::Bool(match a(&args, 0) {
            V::Map(m) => m.borrow().contains_key(s(&args, 1)),
            _ => false,
        })),
        "keys" => {
            // Go's map order is random; sorted here (sort with sortAlpha to match Go).
            let mut k = Vec::new();
            for m in &args {
                if let V::Map(m) = m {
                    k.extend(m.borrow().keys().cloned());
                }
            }
            k.sort();
            Ok(V::Strs(Rc::new(k)))
        }
        "append" | "push" => {
            let mut l = list_of(a(&args, 0), "Cannot push on type")?;
            l.push(a(&args, 1).clone());
            Ok(V::list(l))
        }
        "prepend" => {
            let mut l = list_of(a(&args, 0), "Cannot prepend on type")?;
            l.insert(0, a(&args, 1).clone());
            Ok(V::list(l))
        }
        "first" => Ok(list_of(a(&args, 0), "Cannot find first on type")?
            .first()
            .cloned()
            .unwrap_or(V::Nil)),
        "last" => Ok(list_of(a(&args, 0), "Cannot find last on type")?
            .last()
            .cloned()
            .unwrap_or(V::Nil)),
        "rest" => {
            // An empty list's rest is a nil []interface{}: printed `[]`.
            let l = list_of(a(&args, 0), "Cannot find rest on type")?;
            Ok(V::list(l.get(1..).unwrap_or(&[]).to_vec()))
        }
        "initial" => {
            let l = list_of(a(&args, 0), "Cannot find initial on type")?;
            Ok(V::list(l[..l.len().saturating_sub(1)].to_vec()))
        }
        "reverse" => {
            let mut l = list_of(a(&args, 0), "Cannot find reverse on type")?;
            l.reverse();
            Ok(V::list(l))
        }
        "uniq" => {
            let l = list_of(a(&args, 0), "Cannot find uniq on type")?;
            let mut d: Vec<V> = Vec::new();
            for x in l {
                if !d.iter().any(|y| deep_equal(y, &x)) {
                    d.push(x);
                }
            }
            Ok(V::list(d))
        }
        "compact" => {
            let l = list_of(a(&args, 0), "Cannot compact on type")?;
            Ok(V::list(l.into_iter().filter(|x| !empty(x)).collect()))
        }
        "without" => {
            let l = list_of(a(&args, 0), "Cannot find without on type")?;
            let omit = &args[1..];
            Ok(V::list(
                l.into_iter()
                    .filter(|x| !omit.iter().any(|o| deep_equal(o, x)))
                    .collect(),
            ))
        }
        "has" => match a(&args, 1) {
            V::Invalid | V::Nil => Ok(V::Bool(false)),
            h => {
                let l = list_of(h, "Cannot find has on type")?;
                Ok(V::Bool(l.iter().any(|x| deep_equal(a(&args, 0), x))))
            }
        },
        "concat" => {
            let mut r = Vec::new();
            for l in &args {
                r.extend(match l.list_items() {
                    Some(items) => items,
                    None if l.is_nilish() => return Err(op(NIL_DEREF)),
                    None => {
                        return Err(op(format!(
                            "Cannot concat type {} as list",
                            reflect_kind_name(l)
                        )))
                    }
                });
            }
            Ok(V::list(r))
        }
        "slice" => sprig_slice(&args),
        // Flow control, dates.
        "fail" => Err(CallError::Fail(s(&args, 0).to_string())),
        "now" => Ok(V::Time {
            unix_seconds: ctx.now_unix_seconds,
            nanos: 0,
        }),
        "unixEpoch" => st(match a(&args, 0) {
            V::Time { unix_seconds, .. } => unix_seconds.to_string(),
            _ => String::new(),
        }),
        // regex.go: a bad pattern is an error of the `must` forms and a panic of the others
        // (`MustCompile`), except `regexMatch`, which is false.
        "regexMatch" | "mustRegexMatch" => match super::goregex::compile(s(&args, 0)) {
            Ok(re) => Ok(V::Bool(re.is_match(s(&args, 1)))),
            Err(_) if name == "regexMatch" => Ok(V::Bool(false)),
            Err(e) => Err(op(e)),
        },
        "regexFind"
        | "mustRegexFind"
        | "regexFindAll"
        | "mustRegexFindAll"
        | "regexSplit"
        | "mustRegexSplit"
        | "regexReplaceAll"
        | "mustRegexReplaceAll"
        | "regexReplaceAllLiteral"
        | "mustRegexReplaceAllLiteral" => {
            let pattern = s(&args, 0);
            let re = super::goregex::compile(pattern).map_err(|e| {
                if name.starts_with("must") {
                    op(e)
                } else {
                    // regexp.go `quote`.
                    let quoted = if gofmt::can_backquote(pattern) {
                        format!("`{pattern}`")
                    } else {
                        gofmt::quote_with(pattern, '"', false)
                    };
                    op(format!("regexp: Compile({quoted}): {e}"))
                }
            })?;
            let text = s(&args, 1);
            match name {
                "regexFind" | "mustRegexFind" => st(super::goregex::find_all(&re, text, 1)
                    .first()
                    .map_or(String::new(), |(a, b)| text[*a..*b].to_string())),
                "regexFindAll" | "mustRegexFindAll" => Ok(V::Strs(Rc::new(
                    super::goregex::find_all(&re, text, int(&args, 2))
                        .into_iter()
                        .map(|(a, b)| text[a..b].to_string())
                        .collect(),
                ))),
                "regexSplit" | "mustRegexSplit" => Ok(V::Strs(Rc::new(super::goregex::split(
                    &re,
                    pattern,
                    text,
                    int(&args, 2),
                )))),
                _ => st(super::goregex::replace_all(
                    &re,
                    text,
                    s(&args, 2),
                    name.ends_with("Literal"),
                )),
            }
        }
        // date.go `date` and `dateInZone`: a time, or Unix seconds, formatted in the zone.
        // Only UTC is built: `date` uses the machine's zone (UTC where the catalog renders
        // and in CI); any other zone is an error here (Go loads it from tzdata, or falls
        // back to UTC for a name it cannot load). Anything else than a time or an int is Go's `time.Now()`:
        // the fixed clock here.
        "date" | "dateInZone" | "date_in_zone" => {
            let zone = if name == "date" { "UTC" } else { s(&args, 2) };
            if !matches!(zone, "" | "UTC" | "Local" | "Etc/UTC") {
                return Err(CallError::Argument(format!(
                    "the time zone {zone:?} is not built here (only UTC)"
                )));
            }
            let (secs, nanos) = match a(&args, 1) {
                V::Time {
                    unix_seconds,
                    nanos,
                } => (*unix_seconds, *nanos),
                V::Int(i) | V::Int64(i) => (*i, 0),
                _ => (ctx.now_unix_seconds, 0),
            };
            st(super::gotime::format(secs, nanos, s(&args, 0)))
        }
        // date.go `dateModify`: a bad duration leaves the time as it is (`mustDateModify`:
        // Go's error).
        "dateModify" | "date_modify" | "mustDateModify" | "must_date_modify" => {
            let (secs, nanos) = match a(&args, 1) {
                V::Time {
                    unix_seconds,
                    nanos,
                } => (*unix_seconds, *nanos),
                _ => (0, 0),
            };
            let (secs, nanos) = match super::gotime::parse_duration(s(&args, 0)) {
                Ok(d) => super::gotime::add(secs, nanos, d),
                Err(e) if name.starts_with("must") => return Err(op(e)),
                Err(_) => (secs, nanos),
            };
            Ok(V::Time {
                unix_seconds: secs,
                nanos,
            })
        }
        // date.go `duration`: seconds given as a string or an int64 (any other type, Go's
        // `int` included, is 0), printed as time.Duration.
        "duration" => {
            let n = match a(&args, 0) {
                V::Str(t) => parse_int10(t),
                V::Int64(n) => *n,
                _ => 0,
            };
            st(super::gotime::duration_string(
                n.wrapping_mul(1_000_000_000),
            ))
        }
        "durationRound" => st(duration_round(a(&args, 0))),
        // date.go `htmlDate` and `htmlDateInZone`: `dateInZone "2006-01-02"` (in the
        // machine's zone for htmlDate: UTC, as above).
        "htmlDate" | "htmlDateInZone" => {
            let zone = if name == "htmlDate" {
                V::Str("Local".into())
            } else {
                a(&args, 1).clone()
            };
            let date = a(&args, 0).clone();
            call(
                "dateInZone",
                vec![V::Str("2006-01-02".into()), date, zone],
                ctx,
            )
        }
        "regexQuoteMeta" => st(super::goregex::quote_meta(s(&args, 0))),
        // The rest of genericMap.
        "hello" => st("Hello!".into()),
        // The environment is empty here (a render reads nothing of the machine).
        "env" => st(String::new()),
        "expandenv" => st(expand_empty_env(s(&args, 0))),
        "ceil" => Ok(V::Float(to_float64(a(&args, 0)).ceil())),
        "floor" => Ok(V::Float(to_float64(a(&args, 0)).floor())),
        "round" => Ok(V::Float(round(
            a(&args, 0),
            int(&args, 1),
            match args.get(2) {
                Some(V::Float(f)) => *f,
                _ => 0.5,
            },
        ))),
        "maxf" | "minf" => {
            let mut acc = to_float64(a(&args, 0));
            for v in args.iter().skip(1) {
                acc = go_max_min(acc, to_float64(v), name == "maxf");
            }
            Ok(V::Float(acc))
        }
        "untilStep" => Ok(V::Ints(Rc::new(until_step(
            int(&args, 0),
            int(&args, 1),
            int(&args, 2),
        )?))),
        "toDecimal" => Ok(V::Int64(
            i64::from_str_radix(&gofmt::format_v(a(&args, 0)), 8).unwrap_or(0),
        )),
        "adler32sum" => {
            let (mut x, mut y) = (1u32, 0u32);
            for b in s(&args, 0).bytes() {
                x = (x + u32::from(b)) % 65521;
                y = (y + x) % 65521;
            }
            st(((y << 16) | x).to_string())
        }
        "b32enc" => st(b32_encode(s(&args, 0).as_bytes())),
        "osBase" => st(path_base(s(&args, 0))),
        "osClean" => st(path_clean(s(&args, 0))),
        "osDir" => st(path_dir(s(&args, 0))),
        "osExt" => call("ext", args, ctx),
        "osIsAbs" => call("isAbs", args, ctx),
        "pick" | "omit" => {
            let keys: Vec<String> = args.iter().skip(1).map(strval).collect();
            let m = a(&args, 0)
                .map_entries()
                .unwrap_or_default()
                .into_iter()
                .filter(|(k, _)| keys.contains(k) == (name == "pick"))
                .collect();
            Ok(V::map(m))
        }
        "pluck" => Ok(V::list(
            args.iter()
                .skip(1)
                .filter_map(|m| match m {
                    V::Map(m) => m.borrow().get(s(&args, 0)).cloned(),
                    _ => None,
                })
                .collect(),
        )),
        // Go's map order is random; sorted by key here.
        "values" => Ok(V::list(
            a(&args, 0)
                .map_entries()
                .unwrap_or_default()
                .into_iter()
                .map(|(_, v)| v)
                .collect(),
        )),
        "dig" => dig(&args),
        "chunk" | "mustChunk" => {
            let size = int(&args, 0);
            let l = list_of(a(&args, 1), "Cannot chunk type")?;
            if size <= 0 {
                return Err(op("runtime error: makeslice: len out of range"));
            }
            Ok(V::list(
                l.chunks(size as usize)
                    .map(|c| V::list(c.to_vec()))
                    .collect(),
            ))
        }
        "typeOf" => st(type_of(a(&args, 0)).into()),
        "kindOf" => st(reflect_kind_name(a(&args, 0)).into()),
        "typeIs" => Ok(V::Bool(s(&args, 0) == type_of(a(&args, 1)))),
        "typeIsLike" => {
            let t = type_of(a(&args, 1));
            let target = s(&args, 0);
            Ok(V::Bool(target == t || format!("*{target}") == t))
        }
        "kindIs" => Ok(V::Bool(s(&args, 0) == reflect_kind_name(a(&args, 1)))),
        "deepEqual" => Ok(V::Bool(deep_equal(a(&args, 0), a(&args, 1)))),
        "toRawJson" | "mustToRawJson" => json_encode(a(&args, 0), None, false)
            .map(V::Str)
            .map_err(op),
        "mustToJson" => json_encode(a(&args, 0), None, true).map(V::Str).map_err(op),
        "mustToPrettyJson" => json_encode(a(&args, 0), Some(0), true)
            .map(V::Str)
            .map_err(op),
        "mustAppend" | "mustPush" => call("append", args, ctx),
        "mustPrepend" => call("prepend", args, ctx),
        "mustFirst" => call("first", args, ctx),
        "mustLast" => call("last", args, ctx),
        "mustRest" => call("rest", args, ctx),
        "mustInitial" => call("initial", args, ctx),
        "mustReverse" => call("reverse", args, ctx),
        "mustUniq" => call("uniq", args, ctx),
        "mustWithout" => call("without", args, ctx),
        "mustHas" => call("has", args, ctx),
        "mustCompact" => call("compact", args, ctx),
        "mustSlice" => call("slice", args, ctx),
        "sha1sum" => st(sha1_hex(s(&args, 0).as_bytes())),
        "b32dec" => st(match b32_decode(s(&args, 0)) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => e,
        }),
        "fromJson" => Ok(from_json(s(&args, 0)).unwrap_or(V::Nil)),
        "mustFromJson" => from_json(s(&args, 0)).map_err(op),
        "urlParse" => url_parse(s(&args, 0)),
        "urlJoin" => url_join(a(&args, 0)),
        n if super::NOT_BUILT.contains(&n) => Err(CallError::Argument(format!(
            "{n} is not available in this template engine (slim-sprig has it; Fuzzball renders it)"
        ))),
        _ => Err(CallError::Argument(format!(
            "function {name:?} not defined"
        ))),
    }
}

/// os.ExpandEnv with an empty environment: `$NAME` and `${NAME}` become nothing (os/env.go
/// `Expand`, `getShellName`).
fn expand_empty_env(s: &str) -> String {
    let b = s.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'$' && i + 1 < b.len() {
            let rest = &b[i + 1..];
            let w = if rest[0] == b'{' {
                if rest.len() > 2 && rest[1] == b'}' {
                    2
                } else {
                    match rest.iter().position(|c| *c == b'}') {
                        Some(0) | None => 1,
                        Some(k) => k + 1,
                    }
                }
            } else if is_shell_special(rest[0]) {
                1
            } else {
                let n = rest
                    .iter()
                    .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                    .count();
                if n == 0 {
                    out.push(b'$');
                    i += 1;
                    continue;
                }
                n
            };
            i += 1 + w;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn is_shell_special(c: u8) -> bool {
    matches!(c, b'*' | b'#' | b'$' | b'@' | b'!' | b'?' | b'-') || c.is_ascii_digit()
}

/// numeric.go `round`.
fn round(a: &V, p: i64, round_on: f64) -> f64 {
    let val = to_float64(a);
    let pow = 10f64.powf(p as f64);
    let digit = pow * val;
    let div = digit.fract();
    let r = if div >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    r / pow
}

/// math.Max / math.Min: NaN wins, and +0 over -0 (-0 for Min).
fn go_max_min(x: f64, y: f64, max: bool) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if x == 0.0 && y == 0.0 {
        let neg = if max {
            x.is_sign_negative() && y.is_sign_negative()
        } else {
            x.is_sign_negative() || y.is_sign_negative()
        };
        return if neg { -0.0 } else { 0.0 };
    }
    if max {
        x.max(y)
    } else {
        x.min(y)
    }
}

/// dict.go `dig`: keys..., a default, a dict; a key or dict of another type panics as Go's
/// type assertion does.
fn dig(ps: &[V]) -> Result<V, CallError> {
    if ps.len() < 3 {
        return Err(op("dig needs at least three arguments"));
    }
    let assert_map = |v: &V| -> Result<V, CallError> {
        match v {
            V::Map(_) => Ok(v.clone()),
            v => Err(op(format!(
                "interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                if v.is_nilish() { "nil" } else { v.type_name() }
            ))),
        }
    };
    let mut dict = assert_map(&ps[ps.len() - 1])?;
    let def = ps[ps.len() - 2].clone();
    let mut keys = Vec::new();
    for k in &ps[..ps.len() - 2] {
        match k {
            V::Str(s) => keys.push(s.clone()),
            v => {
                return Err(op(format!(
                    "interface conversion: interface {{}} is {}, not string",
                    if v.is_nilish() { "nil" } else { v.type_name() }
                )))
            }
        }
    }
    for (i, k) in keys.iter().enumerate() {
        let step = match &dict {
            V::Map(m) => m.borrow().get(k).cloned(),
            _ => None,
        };
        let Some(step) = step else {
            return Ok(def);
        };
        if i + 1 == keys.len() {
            return Ok(step);
        }
        dict = assert_map(&step)?;
    }
    Ok(def)
}

/// `fmt.Sprintf("%T")` (reflect.go `typeOf`).
fn type_of(v: &V) -> &'static str {
    if v.is_nilish() {
        "<nil>"
    } else {
        v.type_name()
    }
}

/// encoding/base32 StdEncoding.EncodeToString.
fn b32_encode(b: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut r = String::new();
    for chunk in b.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let v = buf.iter().fold(0u64, |acc, x| (acc << 8) | u64::from(*x));
        let symbols = (chunk.len() * 8).div_ceil(5);
        for k in 0..8 {
            if k < symbols {
                r.push(ALPHABET[((v >> (35 - 5 * k)) & 31) as usize] as char);
            } else {
                r.push('=');
            }
        }
    }
    r
}

/// The message of SHA-1 and SHA-256 (FIPS 180-4, 5.1.1): `data`, a 1 bit, zeros to 56 bytes
/// mod 64, and its length in bits (big-endian); whole 64-byte blocks.
fn padded_for_sha(data: &[u8]) -> Vec<u8> {
    let mut msg = data.to_vec();
    let bit_len = (data.len() as u64).wrapping_mul(8);
    msg.push(0x80);
    while msg.len() % 64 != 56 {
        msg.push(0);
    }
    msg.extend_from_slice(&bit_len.to_be_bytes());
    msg
}

/// SHA-1 (FIPS 180-4), hex: crypto.go `sha1sum`.
fn sha1_hex(data: &[u8]) -> String {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let msg = padded_for_sha(data);
    for block in msg.chunks(64) {
        let mut w = [0u32; 80];
        for (t, word) in block.chunks(4).enumerate().take(16) {
            w[t] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for t in 16..80 {
            w[t] = (w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (t, wt) in w.iter().enumerate() {
            let (f, k) = match t {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let temp = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*wt);
            e = d;
            d = c;
            c = b.rotate_left(30);
            b = a;
            a = temp;
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

/// encoding/base32 StdEncoding.DecodeString (base32.go `decode`, after `stripNewlines`); the
/// error as Go words it, at the offset Go reports.
fn b32_decode(s: &str) -> Result<Vec<u8>, String> {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let err = |i: usize| Err(format!("illegal base32 data at input byte {i}"));
    let src: Vec<u8> = s.bytes().filter(|b| *b != b'\n' && *b != b'\r').collect();
    let olen = src.len();
    let mut rest: &[u8] = &src;
    let mut out = Vec::new();
    let mut end = false;
    while !rest.is_empty() && !end {
        let mut dbuf = [0u8; 8];
        let mut dlen = 8;
        let mut j = 0;
        while j < 8 {
            let Some((&c, tail)) = rest.split_first() else {
                return err(olen - j);
            };
            rest = tail;
            if c == b'=' && j >= 2 && rest.len() < 8 {
                if rest.len() + j < 7 {
                    return err(olen);
                }
                for k in 0..7 - j {
                    if rest.len() > k && rest[k] != b'=' {
                        return err(olen - rest.len() + k - 1);
                    }
                }
                dlen = j;
                end = true;
                if matches!(dlen, 1 | 3 | 6) {
                    return err(olen - rest.len() - 1);
                }
                break;
            }
            match ALPHABET.iter().position(|a| *a == c) {
                Some(x) => dbuf[j] = x as u8,
                None => return err(olen - rest.len() - 1),
            }
            j += 1;
        }
        let v = dbuf.iter().fold(0u64, |acc, x| (acc << 5) | u64::from(*x));
        let bytes = match dlen {
            8 => 5,
            7 => 4,
            5 => 3,
            4 => 2,
            _ => 1,
        };
        for k in 0..bytes {
            out.push((v >> (32 - 8 * k)) as u8);
        }
    }
    Ok(out)
}

/// encoding/json `Unmarshal` into an `interface {}` (defaults.go `fromJson`): objects are
/// maps, arrays lists, numbers float64; the error as Go words the common cases.
fn from_json(text: &str) -> Result<V, String> {
    struct P<'a> {
        b: &'a [u8],
        i: usize,
        depth: usize,
    }
    impl P<'_> {
        fn ws(&mut self) {
            while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
            }
        }
        fn bad(&self) -> String {
            self.bad_in("looking for beginning of value")
        }
        /// encoding/json's syntax error: the character and what the scanner was doing.
        fn bad_in(&self, context: &str) -> String {
            match self.b.get(self.i) {
                None => "unexpected end of JSON input".into(),
                Some(c) => format!(
                    "invalid character {} {context}",
                    gofmt::quote_with(&(*c as char).to_string(), '\'', false)
                ),
            }
        }
        fn value(&mut self) -> Result<V, String> {
            self.depth += 1;
            if self.depth > 10_000 {
                return Err("exceeded max depth".into());
            }
            self.ws();
            let r = match self.b.get(self.i) {
                Some(b'{') => {
                    self.i += 1;
                    let mut m = BTreeMap::new();
                    self.ws();
                    if self.b.get(self.i) == Some(&b'}') {
                        self.i += 1;
                    } else {
                        loop {
                            self.ws();
                            if self.b.get(self.i) != Some(&b'"') {
                                return Err(
                                    self.bad_in("looking for beginning of object key string")
                                );
                            }
                            let V::Str(k) = self.string()? else {
                                return Err(self.bad());
                            };
                            self.ws();
                            if self.b.get(self.i) != Some(&b':') {
                                return Err(self.bad_in("after object key"));
                            }
                            self.i += 1;
                            let v = self.value()?;
                            m.insert(k, v);
                            self.ws();
                            match self.b.get(self.i) {
                                Some(b',') => self.i += 1,
                                Some(b'}') => {
                                    self.i += 1;
                                    break;
                                }
                                _ => return Err(self.bad_in("after object key:value pair")),
                            }
                        }
                    }
                    Ok(V::map(m))
                }
                Some(b'[') => {
                    self.i += 1;
                    let mut l = Vec::new();
                    self.ws();
                    if self.b.get(self.i) == Some(&b']') {
                        self.i += 1;
                    } else {
                        loop {
                            l.push(self.value()?);
                            self.ws();
                            match self.b.get(self.i) {
                                Some(b',') => self.i += 1,
                                Some(b']') => {
                                    self.i += 1;
                                    break;
                                }
                                _ => return Err(self.bad_in("after array element")),
                            }
                        }
                    }
                    Ok(V::list(l))
                }
                Some(b'"') => self.string(),
                Some(b't') if self.b[self.i..].starts_with(b"true") => {
                    self.i += 4;
                    Ok(V::Bool(true))
                }
                Some(b'f') if self.b[self.i..].starts_with(b"false") => {
                    self.i += 5;
                    Ok(V::Bool(false))
                }
                Some(b'n') if self.b[self.i..].starts_with(b"null") => {
                    self.i += 4;
                    Ok(V::Nil)
                }
                Some(c) if *c == b'-' || c.is_ascii_digit() => {
                    let start = self.i;
                    while self.i < self.b.len()
                        && matches!(
                            self.b[self.i],
                            b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'
                        )
                    {
                        self.i += 1;
                    }
                    let t = std::str::from_utf8(&self.b[start..self.i]).unwrap_or("");
                    t.parse::<f64>().map(V::Float).map_err(|_| self.bad())
                }
                _ => Err(self.bad()),
            };
            self.depth -= 1;
            r
        }
        fn string(&mut self) -> Result<V, String> {
            if self.b.get(self.i) != Some(&b'"') {
                return Err(self.bad());
            }
            self.i += 1;
            let mut out: Vec<u8> = Vec::new();
            loop {
                match self.b.get(self.i) {
                    None => return Err("unexpected end of JSON input".into()),
                    Some(b'"') => {
                        self.i += 1;
                        break;
                    }
                    Some(b'\\') => {
                        let e = self.b.get(self.i + 1).copied();
                        self.i += 2;
                        match e {
                            Some(b'"') => out.push(b'"'),
                            Some(b'\\') => out.push(b'\\'),
                            Some(b'/') => out.push(b'/'),
                            Some(b'b') => out.push(8),
                            Some(b'f') => out.push(12),
                            Some(b'n') => out.push(b'\n'),
                            Some(b'r') => out.push(b'\r'),
                            Some(b't') => out.push(b'\t'),
                            Some(b'u') => {
                                let hex = |p: &Self, at: usize| {
                                    p.b.get(at..at + 4)
                                        .and_then(|h| std::str::from_utf8(h).ok())
                                        .and_then(|h| u32::from_str_radix(h, 16).ok())
                                };
                                let Some(mut c) = hex(self, self.i) else {
                                    return Err("invalid escape in JSON string".into());
                                };
                                self.i += 4;
                                if (0xD800..0xDC00).contains(&c)
                                    && self.b.get(self.i..self.i + 2) == Some(b"\\u")
                                {
                                    if let Some(lo) = hex(self, self.i + 2) {
                                        if (0xDC00..0xE000).contains(&lo) {
                                            c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
                                            self.i += 6;
                                        }
                                    }
                                }
                                let ch = char::from_u32(c).unwrap_or('\u{FFFD}');
                                let mut buf = [0u8; 4];
                                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                            }
                            _ => return Err("invalid escape in JSON string".into()),
                        }
                    }
                    Some(c) => {
                        out.push(*c);
                        self.i += 1;
                    }
                }
            }
            Ok(V::Str(String::from_utf8_lossy(&out).into_owned()))
        }
    }
    let mut p = P {
        b: text.as_bytes(),
        i: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.ws();
    if p.i < p.b.len() {
        return Err(format!(
            "invalid character {} after top-level value",
            gofmt::quote_with(&(p.b[p.i] as char).to_string(), '\'', false)
        ));
    }
    Ok(v)
}

/// strings.go `strval`: a string as is, a Stringer's String(), else `%v`.
pub(crate) fn strval(v: &V) -> String {
    match v {
        V::Str(s) => s.clone(),
        V::Time { .. } => gofmt::time_string(v),
        V::TimeUnit(unit, n) => unit.string(*n),
        v => gofmt::format_v(v),
    }
}

/// strings.go `strslice`.
fn strslice(v: &V) -> Vec<String> {
    match v {
        V::Strs(l) => l.as_ref().clone(),
        V::Ints(l) => l.iter().map(|i| i.to_string()).collect(),
        V::List(l) => l.iter().filter(|x| !x.is_nilish()).map(strval).collect(),
        V::Invalid | V::Nil => Vec::new(),
        v => vec![strval(v)],
    }
}

/// strconv.Atoi with its error dropped (functions.go `atoi`): a syntax error is 0, an
/// out-of-range number the largest int of its sign (Atoi returns it with ErrRange).
fn atoi(s: &str) -> i64 {
    if let Ok(i) = s.parse::<i64>() {
        return i;
    }
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return if s.starts_with('-') {
            i64::MIN
        } else {
            i64::MAX
        };
    }
    0
}

/// numeric.go `toInt64`.
pub(crate) fn to_int64(v: &V) -> i64 {
    match v {
        V::Str(s) => s.parse::<i64>().unwrap_or(0),
        V::Int(i) | V::Int64(i) | V::TimeUnit(_, i) => *i,
        V::Uint(u) => i64::try_from(*u).unwrap_or(i64::MAX),
        V::Byte(b) => i64::from(*b),
        V::Float(f) => go_f64_to_i64(*f),
        V::Bool(b) => i64::from(*b),
        _ => 0,
    }
}

/// Go's `int64(f)` on amd64 (CVTTSD2SQ): truncation, and 0x8000000000000000 for NaN and
/// out-of-range values.
fn go_f64_to_i64(f: f64) -> i64 {
    if f.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// numeric.go `toFloat64`.
fn to_float64(v: &V) -> f64 {
    match v {
        V::Str(s) => s.parse::<f64>().unwrap_or(0.0),
        V::Int(i) | V::Int64(i) | V::TimeUnit(_, i) => *i as f64,
        V::Uint(u) => *u as f64,
        V::Byte(b) => f64::from(*b),
        V::Float(f) => *f,
        V::Bool(b) => f64::from(u8::from(*b)),
        _ => 0.0,
    }
}

/// defaults.go `empty`.
pub(crate) fn empty(v: &V) -> bool {
    match v {
        V::Time { .. } => false,
        v => !v.truth(),
    }
}

const NIL_DEREF: &str = "runtime error: invalid memory address or nil pointer dereference";

fn list_of(v: &V, what: &str) -> Result<Vec<V>, CallError> {
    match v.list_items() {
        Some(l) => Ok(l),
        // reflect.TypeOf(nil).Kind() dereferences a nil Type.
        None if v.is_nilish() => Err(op(
            "runtime error: invalid memory address or nil pointer dereference",
        )),
        None => Err(op(format!("{what} {}", reflect_kind_name(v)))),
    }
}

/// reflect.Kind's String().
fn reflect_kind_name(v: &V) -> &'static str {
    match v {
        V::Invalid | V::Nil => "invalid",
        V::Bool(_) => "bool",
        V::Int(_) => "int",
        V::Int64(_) => "int64",
        V::Uint(_) => "uint64",
        V::Byte(_) => "uint8",
        V::Float(_) => "float64",
        V::Str(_) => "string",
        V::List(_) | V::Strs(_) | V::Ints(_) => "slice",
        V::Map(_) | V::StrMap(_) => "map",
        V::Time { .. } => "struct",
        V::TimeUnit(..) => "int",
    }
}

/// reflect.DeepEqual on the executor's values (an `int` is not an `int64`).
fn deep_equal(x: &V, y: &V) -> bool {
    match (x, y) {
        (V::List(_) | V::Strs(_) | V::Ints(_), V::List(_) | V::Strs(_) | V::Ints(_)) => {
            x.type_name() == y.type_name() && x.list_items() == y.list_items()
        }
        _ => x == y,
    }
}

/// list.go `slice` (which replaces Go's builtin `slice` in a sprig function map).
fn sprig_slice(args: &[V]) -> Result<V, CallError> {
    let list = a(args, 0);
    let len = match list {
        V::List(l) => l.len(),
        V::Strs(l) => l.len(),
        V::Ints(l) => l.len(),
        V::Invalid | V::Nil => {
            return Err(op(
                "runtime error: invalid memory address or nil pointer dereference",
            ))
        }
        v => {
            return Err(op(format!(
                "list should be type of slice or array but {}",
                reflect_kind_name(v)
            )))
        }
    };
    if len == 0 {
        return Ok(V::Nil);
    }
    let start = args.get(1).map_or(0, to_int64);
    let end = args.get(2).map_or(len as i64, to_int64);
    if start < 0 || end < start || end > len as i64 {
        return Err(op("reflect.Value.Slice: slice index out of bounds"));
    }
    let (start, end) = (start as usize, end as usize);
    Ok(match list {
        V::Strs(l) => V::Strs(Rc::new(l[start..end].to_vec())),
        V::Ints(l) => V::Ints(Rc::new(l[start..end].to_vec())),
        V::List(l) => V::list(l[start..end].to_vec()),
        _ => V::Nil,
    })
}

/// strings.go `substring`, with Go's slice-bounds panics.
fn substring(start: i64, end: i64, s: &str) -> Result<String, CallError> {
    let len = s.len() as i64;
    let (lo, hi) = if start < 0 {
        if end < 0 {
            return Err(op(format!(
                "runtime error: slice bounds out of range [:{end}]"
            )));
        }
        if end > len {
            return Err(op(format!(
                "runtime error: slice bounds out of range [:{end}] with length {len}"
            )));
        }
        (0, end)
    } else if end < 0 || end > len {
        if start > len {
            return Err(op(format!(
                "runtime error: slice bounds out of range [{start}:{len}]"
            )));
        }
        (start, len)
    } else {
        if start > end {
            return Err(op(format!(
                "runtime error: slice bounds out of range [{start}:{end}]"
            )));
        }
        (start, end)
    };
    Ok(byte_slice(s, lo as usize, hi as usize))
}

/// `s[lo:hi]` on bytes; a cut inside a UTF-8 sequence becomes U+FFFD (Go keeps the bytes).
fn byte_slice(s: &str, lo: usize, hi: usize) -> String {
    match s.get(lo..hi) {
        Some(t) => t.to_string(),
        None => String::from_utf8_lossy(s.as_bytes().get(lo..hi).unwrap_or(&[])).into_owned(),
    }
}

/// strings.go `trunc`.
fn trunc(c: i64, s: &str) -> String {
    let len = s.len() as i64;
    if c < 0 && len + c > 0 {
        return byte_slice(s, (len + c) as usize, s.len());
    }
    if c >= 0 && len > c {
        return byte_slice(s, 0, c as usize);
    }
    s.to_string()
}

fn repeat(s: &str, count: i64, ctx: &Ctx) -> Result<String, CallError> {
    if count < 0 {
        return Err(op("strings: negative Repeat count"));
    }
    if (s.len() as u128) * (count as u128) > ctx.max_output_bytes as u128 {
        return Err(CallError::Limit(format!(
            "repeat of {} bytes {count} times is larger than the output bound ({} bytes)",
            s.len(),
            ctx.max_output_bytes
        )));
    }
    Ok(s.repeat(count as usize))
}

/// strings.go `indent`.
fn indent(spaces: i64, v: &str, ctx: &Ctx) -> Result<String, CallError> {
    let pad = repeat(" ", spaces, ctx)?;
    let body = v.replace('\n', &format!("\n{pad}"));
    if (body.len() as u128) > ctx.max_output_bytes as u128 {
        return Err(CallError::Limit(format!(
            "indent result is larger than the output bound ({} bytes)",
            ctx.max_output_bytes
        )));
    }
    Ok(pad + &body)
}

/// strings.ToUpper / ToLower: unicode.ToUpper / ToLower rune by rune (Go's simple case
/// mappings).
fn map_chars(s: &str, upper: bool) -> String {
    s.chars()
        .map(|c| {
            if upper {
                super::unicode_tables::to_upper(c)
            } else {
                super::unicode_tables::to_lower(c)
            }
        })
        .collect()
}

/// strings.Title: the first letter of each word upper-cased (strings.go `isSeparator`).
fn title(s: &str) -> String {
    fn is_separator(c: char) -> bool {
        if c.is_ascii() {
            return !(c.is_ascii_alphanumeric() || c == '_');
        }
        if c.is_alphanumeric() {
            return false;
        }
        c.is_whitespace()
    }
    let mut prev = ' ';
    s.chars()
        .map(|c| {
            let r = if is_separator(prev) {
                super::unicode_tables::to_title(c)
            } else {
                c
            };
            prev = c;
            r
        })
        .collect()
}

/// strings.Split: an empty separator splits after each UTF-8 sequence.
fn go_split(s: &str, sep: &str) -> Vec<String> {
    if sep.is_empty() {
        return s.chars().map(String::from).collect();
    }
    s.split(sep).map(str::to_string).collect()
}

/// strings.SplitN.
fn go_splitn(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if n < 0 {
        return go_split(s, sep);
    }
    if sep.is_empty() {
        let chars: Vec<char> = s.chars().collect();
        let n = (n as usize).min(chars.len());
        if n == 0 {
            return Vec::new();
        }
        let mut v: Vec<String> = chars[..n - 1].iter().map(|c| c.to_string()).collect();
        v.push(chars[n - 1..].iter().collect());
        return v;
    }
    s.splitn(n as usize, sep).map(str::to_string).collect()
}

/// The longest list `until`, `untilStep` and `seq` make here (Go makes any length).
const UNTIL_LIMIT: i128 = 1_000_000;

/// numeric.go `untilStep`; a list longer than [`UNTIL_LIMIT`] is a Limit error.
fn until_step(start: i64, stop: i64, step: i64) -> Result<Vec<i64>, CallError> {
    let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
    let count = if stop < start {
        if step >= 0 {
            0
        } else {
            (start - stop + (-step) - 1) / (-step)
        }
    } else if step <= 0 {
        0
    } else {
        (stop - start + step - 1) / step
    };
    if count > UNTIL_LIMIT {
        return Err(CallError::Limit(format!(
            "a list of {count} numbers is longer than {UNTIL_LIMIT}"
        )));
    }
    Ok((0..count).map(|k| (start + k * step) as i64).collect())
}

/// numeric.go `seq`.
fn seq(p: &[i64]) -> Result<String, CallError> {
    let join = |v: Vec<i64>| {
        v.iter()
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    Ok(match p {
        [end] => {
            let inc = if *end < 1 { -1 } else { 1 };
            join(until_step(1, end.wrapping_add(inc), inc)?)
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            join(until_step(*start, end.wrapping_add(step), step)?)
        }
        [start, step, end] => {
            let mut inc = 1;
            if end < start {
                inc = -1;
                if *step > 0 {
                    return Ok(String::new());
                }
            }
            join(until_step(*start, end.wrapping_add(inc), *step)?)
        }
        _ => String::new(),
    })
}

/// path.Clean.
fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

/// path.Base.
fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    match t.rfind('/') {
        Some(i) => t[i + 1..].to_string(),
        None => t.to_string(),
    }
}

/// path.Dir.
fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// encoding/base64 StdEncoding.EncodeToString.
fn b64_encode(b: &[u8]) -> String {
    let mut r = String::with_capacity(b.len().div_ceil(3) * 4);
    for chunk in b.chunks(3) {
        let n = chunk.len();
        let v = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for k in 0..4 {
            if k <= n {
                r.push(B64[((v >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                r.push('=');
            }
        }
    }
    r
}

/// encoding/base64 StdEncoding.DecodeString (base64.go `decodeQuantum`); the error as Go
/// words it (`illegal base64 data at input byte N`, N where Go reports it). Newlines are
/// skipped, as Go skips them.
fn b64_decode(s: &str) -> Result<Vec<u8>, String> {
    let err = |i: usize| format!("illegal base64 data at input byte {i}");
    let is_nl = |b: u8| b == b'\n' || b == b'\r';
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut quad: Vec<u32> = Vec::new();
    let mut si = 0;
    loop {
        if si == bytes.len() {
            // decodeQuantum: an incomplete quantum at the end is an error at its start.
            if quad.is_empty() {
                return Ok(out);
            }
            return Err(err(si - quad.len()));
        }
        let c = bytes[si];
        si += 1;
        if is_nl(c) {
            continue;
        }
        if c == b'=' {
            let j = quad.len();
            match j {
                0 | 1 => return Err(err(si - 1)),
                2 => {
                    while si < bytes.len() && is_nl(bytes[si]) {
                        si += 1;
                    }
                    if si == bytes.len() {
                        return Err(err(bytes.len()));
                    }
                    if bytes[si] != b'=' {
                        return Err(err(si - 1));
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < bytes.len() && is_nl(bytes[si]) {
                si += 1;
            }
            if si < bytes.len() {
                return Err(err(si));
            }
            let v = quad.iter().fold(0u32, |acc, x| (acc << 6) | x) << (6 * (4 - j));
            out.push((v >> 16) as u8);
            if j == 3 {
                out.push((v >> 8) as u8);
            }
            return Ok(out);
        }
        let Some(x) = B64.iter().position(|&b| b == c) else {
            return Err(err(si - 1));
        };
        quad.push(x as u32);
        if quad.len() == 4 {
            let v = quad.iter().fold(0u32, |acc, x| (acc << 6) | x);
            out.extend_from_slice(&[(v >> 16) as u8, (v >> 8) as u8, v as u8]);
            quad.clear();
        }
    }
}

/// SHA-256 (FIPS 180-4), hex: crypto.go `sha256sum`.
pub fn sha256_hex(data: &[u8]) -> String {
    const K: [u32; 64] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
        0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
        0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
        0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
        0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
        0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
        0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
        0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2,
    ];
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let msg = padded_for_sha(data);
    for block in msg.chunks(64) {
        let mut w = [0u32; 64];
        for (t, word) in block.chunks(4).enumerate().take(16) {
            w[t] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for t in 16..64 {
            let s0 = w[t - 15].rotate_right(7) ^ w[t - 15].rotate_right(18) ^ (w[t - 15] >> 3);
            let s1 = w[t - 2].rotate_right(17) ^ w[t - 2].rotate_right(19) ^ (w[t - 2] >> 10);
            w[t] = w[t - 16]
                .wrapping_add(s0)
                .wrapping_add(w[t - 7])
                .wrapping_add(s1);
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = h;
        for t in 0..64 {
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K[t])
                .wrapping_add(w[t]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            hh = g;
            g = f;
            f = e;
            e = d.wrapping_add(t1);
            d = c;
            c = b;
            b = a;
            a = t1.wrapping_add(t2);
        }
        for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

/// encoding/json `Marshal` (`indent: Some(0)`: `MarshalIndent(v, "", "  ")`). `None` where
/// Go's Marshal fails (NaN, infinities): sprig's `toJson` then prints nothing.
pub(crate) fn to_json(v: &V, indent: Option<usize>) -> Option<String> {
    json_encode(v, indent, true).ok()
}

/// encoding/json, with HTML escaping or not (`toRawJson`: an Encoder with
/// SetEscapeHTML(false)); the error as Go words it (`json: unsupported value: NaN`).
fn json_encode(v: &V, indent: Option<usize>, escape_html: bool) -> Result<String, String> {
    let mut out = String::new();
    json_value(&mut out, v, indent, escape_html)?;
    Ok(out)
}

fn json_newline(out: &mut String, level: Option<usize>) {
    if let Some(l) = level {
        out.push('\n');
        for _ in 0..l {
            out.push_str("  ");
        }
    }
}

fn json_value(out: &mut String, v: &V, level: Option<usize>, html: bool) -> Result<(), String> {
    match v {
        V::Invalid | V::Nil => out.push_str("null"),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Int(i) | V::Int64(i) | V::TimeUnit(_, i) => out.push_str(&i.to_string()),
        V::Uint(u) => out.push_str(&u.to_string()),
        V::Byte(b) => out.push_str(&b.to_string()),
        V::Float(f) => out.push_str(&json_float(*f).ok_or_else(|| {
            format!(
                "json: unsupported value: {}",
                gofmt::format_float(*f, 'g', None)
            )
        })?),
        V::Str(s) => json_string(out, s, html),
        V::Time { .. } => {
            json_string(out, &rfc3339(v), html);
        }
        V::List(_) | V::Strs(_) | V::Ints(_) | V::Map(_) | V::StrMap(_) => {
            if !gofmt::guard_enter(out.len()) {
                return Err("json: value nested too deep or too large".into());
            }
            let r = json_compound(out, v, level, html);
            gofmt::guard_leave();
            r?;
        }
    }
    Ok(())
}

/// The lists and maps of [`json_value`].
fn json_compound(out: &mut String, v: &V, level: Option<usize>, html: bool) -> Result<(), String> {
    match v {
        V::List(_) | V::Strs(_) | V::Ints(_) => {
            let items = v.list_items().unwrap_or_default();
            out.push('[');
            if items.is_empty() {
                out.push(']');
                return Ok(());
            }
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                json_newline(out, level.map(|l| l + 1));
                json_value(out, it, level.map(|l| l + 1), html)?;
            }
            json_newline(out, level);
            out.push(']');
        }
        V::Map(_) | V::StrMap(_) => {
            let m = v.map_entries().unwrap_or_default();
            out.push('{');
            if m.is_empty() {
                out.push('}');
                return Ok(());
            }
            for (k, (key, val)) in m.iter().enumerate() {
                if k > 0 {
                    out.push(',');
                }
                json_newline(out, level.map(|l| l + 1));
                json_string(out, key, html);
                out.push(':');
                if level.is_some() {
                    out.push(' ');
                }
                json_value(out, val, level.map(|l| l + 1), html)?;
            }
            json_newline(out, level);
            out.push('}');
        }
        _ => {}
    }
    Ok(())
}

/// encoding/json `floatEncoder`: 'f' format, or 'e' below 1e-6 and from 1e21, with a
/// two-digit negative exponent shortened (`1e-07` → `1e-7`).
fn json_float(f: f64) -> Option<String> {
    if f.is_nan() || f.is_infinite() {
        return None;
    }
    let abs = f.abs();
    let s = if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let mut s = gofmt::format_float(f, 'e', None);
        let n = s.len();
        if n >= 4
            && s.as_bytes()[n - 4] == b'e'
            && s.as_bytes()[n - 3] == b'-'
            && s.as_bytes()[n - 2] == b'0'
        {
            s.remove(n - 2);
        }
        s
    } else {
        gofmt::format_float(f, 'f', None)
    };
    Some(s)
}

/// encoding/json string encoding with HTML escaping (`<`, `>`, `&` as `\u003c` ...) and
/// U+2028, U+2029 escaped.
fn json_string(out: &mut String, s: &str, html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' if html => out.push_str(&format!("\\u{:04x}", c as u32)),
            '\u{2028}' | '\u{2029}' => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// time.Time's MarshalJSON in UTC (RFC 3339 with nanoseconds trimmed).
fn rfc3339(v: &V) -> String {
    let s = gofmt::time_string(v);
    // "2000-01-01 00:00:00[.frac] +0000 UTC" → "2000-01-01T00:00:00[.frac]Z"
    let main = s.trim_end_matches(" +0000 UTC");
    main.replacen(' ', "T", 1) + "Z"
}

/// strconv.ParseInt(s, 10, 64) with its error ignored: 0 for bad text, the nearest bound
/// when out of range.
fn parse_int10(t: &str) -> i64 {
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return 0;
    }
    let mut v: i128 = 0;
    for c in digits.bytes() {
        v = (v * 10 + i128::from(c - b'0')).min(i128::from(i64::MAX) + 1);
    }
    let v = if neg { -v } else { v };
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

/// url.go `urlParse`: the parts of a URL as a dict of strings; a URL that `url.Parse`
/// refuses panics.
fn url_parse(raw: &str) -> Result<V, CallError> {
    use super::gourl::text;
    let url =
        super::gourl::parse(raw.as_bytes()).map_err(|e| op(format!("unable to parse url: {e}")))?;
    let parts = [
        ("scheme", text(&url.scheme)),
        ("host", text(&url.host)),
        ("hostname", text(&url.hostname())),
        ("path", text(&url.path)),
        ("query", text(&url.raw_query)),
        ("opaque", text(&url.opaque)),
        ("fragment", text(&url.fragment)),
        (
            "userinfo",
            url.user
                .as_ref()
                .map(|u| text(&u.string()))
                .unwrap_or_default(),
        ),
    ];
    Ok(V::map(
        parts
            .into_iter()
            .map(|(k, v)| (k.to_string(), V::Str(v)))
            .collect(),
    ))
}

/// url.go `dictGetOrEmpty`: a missing key is empty; a value that is not a string panics.
fn dict_get_or_empty(dict: &V, key: &str) -> Result<Vec<u8>, CallError> {
    let value = match dict {
        V::Map(m) => m.borrow().get(key).cloned(),
        _ => None,
    };
    match value {
        None => Ok(Vec::new()),
        Some(V::Str(s)) => Ok(s.into_bytes()),
        // reflect.TypeOf(nil).Kind() dereferences a nil Type.
        Some(v) if v.is_nilish() => Err(op(NIL_DEREF)),
        Some(v) => Err(op(format!(
            "unable to parse {key} key, must be of type string, but {} found",
            reflect_kind_name(&v)
        ))),
    }
}

/// url.go `urlJoin`: the URL of a dict's parts (as `urlParse` gives them).
fn url_join(dict: &V) -> Result<V, CallError> {
    use super::gourl::{parse_userinfo, text, Url};
    let scheme = dict_get_or_empty(dict, "scheme")?;
    let host = dict_get_or_empty(dict, "host")?;
    let path = dict_get_or_empty(dict, "path")?;
    let query = dict_get_or_empty(dict, "query")?;
    let opaque = dict_get_or_empty(dict, "opaque")?;
    let fragment = dict_get_or_empty(dict, "fragment")?;
    let userinfo = dict_get_or_empty(dict, "userinfo")?;
    let user = if userinfo.is_empty() {
        None
    } else {
        parse_userinfo(&userinfo)
            .map_err(|e| op(format!("unable to parse userinfo in dict: {e}")))?
    };
    let url = Url::from_parts(scheme, host, path, query, opaque, fragment, user);
    Ok(V::Str(text(&url.string())))
}

/// date.go `durationRound`: a duration (a string Go's ParseDuration reads, nanoseconds as an
/// int64, or the time since a time.Time: since it on the system clock, as Go's `time.Since`)
/// in its largest whole unit above one: `2y`, `3mo` (30 days), `4d`, `5h`, `6m`, `7s`, else
/// `0s`. Any other type, Go's `int` included, is 0.
fn duration_round(duration: &V) -> String {
    let d: i64 = match duration {
        V::Str(t) => super::gotime::parse_duration(t).unwrap_or(0),
        V::Int64(n) => *n,
        V::Time {
            unix_seconds,
            nanos,
        } => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
                .unwrap_or(0);
            let then = i128::from(*unix_seconds) * 1_000_000_000 + i128::from(*nanos);
            // time.Since saturates at the bounds of a Duration.
            i64::try_from(now - then).unwrap_or(if now > then { i64::MAX } else { i64::MIN })
        }
        _ => 0,
    };
    let u = d.unsigned_abs();
    const SECOND: u64 = 1_000_000_000;
    const MINUTE: u64 = 60 * SECOND;
    const HOUR: u64 = 60 * MINUTE;
    const DAY: u64 = 24 * HOUR;
    const MONTH: u64 = 30 * DAY;
    const YEAR: u64 = 365 * DAY;
    for (unit, suffix) in [
        (YEAR, "y"),
        (MONTH, "mo"),
        (DAY, "d"),
        (HOUR, "h"),
        (MINUTE, "m"),
        (SECOND, "s"),
    ] {
        if u > unit {
            return format!("{}{suffix}", u / unit);
        }
    }
    "0s".to_string()
}
