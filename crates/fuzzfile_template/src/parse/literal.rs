//! Constants as Go's parser reads them: numbers (`newNumber` in
//! `text/template/parse/node.go`, which uses `strconv.ParseUint`, `ParseInt` and
//! `ParseFloat` with base 0), character constants (`strconv.UnquoteChar`) and strings
//! (`strconv.Unquote`). The error texts are Go's.

use crate::ast::Number;

use super::lex::go_quote;

/// Go's `strconv.ErrSyntax` text.
const INVALID_SYNTAX: &str = "invalid syntax";

fn lower(b: u8) -> u8 {
    b | 0x20
}

/// `underscoreOK` in Go's strconv/atoi.go: `_` only between digits (or after a base prefix).
fn underscore_ok(s: &str) -> bool {
    let b = s.as_bytes();
    let mut saw = b'^';
    let mut i = 0;
    let b = if !b.is_empty() && (b[0] == b'-' || b[0] == b'+') {
        &b[1..]
    } else {
        b
    };
    let mut hex = false;
    if b.len() >= 2 && b[0] == b'0' && matches!(lower(b[1]), b'b' | b'o' | b'x') {
        i = 2;
        saw = b'0';
        hex = lower(b[1]) == b'x';
    }
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_digit() || hex && (b'a'..=b'f').contains(&lower(c)) {
            saw = b'0';
        } else if c == b'_' {
            if saw != b'0' {
                return false;
            }
            saw = b'_';
        } else {
            if saw == b'_' {
                return false;
            }
            saw = b'!';
        }
        i += 1;
    }
    saw != b'_'
}

/// `strconv.ParseUint(s, 0, 64)`.
fn parse_uint(s: &str) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let b = s.as_bytes();
    let (base, digits) = if b[0] == b'0' {
        if b.len() >= 3 && lower(b[1]) == b'x' {
            (16, &s[2..])
        } else if b.len() >= 3 && lower(b[1]) == b'o' {
            (8, &s[2..])
        } else if b.len() >= 3 && lower(b[1]) == b'b' {
            (2, &s[2..])
        } else {
            (8, &s[1..])
        }
    } else {
        (10, s)
    };
    let mut underscores = false;
    let mut n: u64 = 0;
    for c in digits.bytes() {
        let d = match c {
            b'_' => {
                underscores = true;
                continue;
            }
            b'0'..=b'9' => c - b'0',
            b'a'..=b'z' | b'A'..=b'Z' => lower(c) - b'a' + 10,
            _ => return None,
        };
        if u32::from(d) >= base {
            return None;
        }
        n = n.checked_mul(u64::from(base))?.checked_add(u64::from(d))?;
    }
    if underscores && !underscore_ok(s) {
        return None;
    }
    Some(n)
}

/// `strconv.ParseInt(s, 0, 64)`.
fn parse_int(s: &str) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let u = parse_uint(rest)?;
    if neg {
        if u > 1u64 << 63 {
            None
        } else {
            Some((u as i64).wrapping_neg())
        }
    } else {
        i64::try_from(u).ok()
    }
}

/// `strconv.ParseFloat(s, 64)` for the forms the lexer lets through: decimal (with `_`
/// between digits), and hexadecimal with a `p` exponent. `None` where Go fails, overflow
/// included.
fn parse_float(s: &str) -> Option<f64> {
    if s.contains('_') && !underscore_ok(s) {
        return None;
    }
    let clean: String = s.chars().filter(|c| *c != '_').collect();
    let (neg, body) = match clean.as_bytes().first() {
        Some(b'+') => (false, &clean[1..]),
        Some(b'-') => (true, &clean[1..]),
        _ => (false, &clean[..]),
    };
    let v = if body.len() > 2 && body.as_bytes()[0] == b'0' && lower(body.as_bytes()[1]) == b'x' {
        parse_hex_float(&body[2..])?
    } else {
        // Rust accepts "inf", "nan" and forms Go rejects: only digits, '.', 'e', sign.
        let bytes = body.as_bytes();
        if bytes.is_empty()
            || !bytes
                .iter()
                .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
            || !bytes.iter().any(u8::is_ascii_digit)
        {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    if v.is_infinite() {
        return None; // Go: "value out of range"
    }
    Some(if neg { -v } else { v })
}

/// The mantissa and `p` exponent of a hexadecimal float, after `0x`.
fn parse_hex_float(s: &str) -> Option<f64> {
    let p = s.find(['p', 'P'])?;
    let (mant, exp) = (&s[..p], &s[p + 1..]);
    let exp: i32 = {
        let (neg, digits) = match exp.as_bytes().first() {
            Some(b'+') => (false, &exp[1..]),
            Some(b'-') => (true, &exp[1..]),
            _ => (false, exp),
        };
        if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let v: i32 = digits.parse().unwrap_or(i32::MAX / 2).min(100_000);
        if neg {
            -v
        } else {
            v
        }
    };
    let (int_part, frac_part) = match mant.find('.') {
        Some(i) => (&mant[..i], &mant[i + 1..]),
        None => (mant, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in int_part.chars() {
        v = v * 16.0 + f64::from(c.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for c in frac_part.chars() {
        v += f64::from(c.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp))
}

/// `newNumber` for `itemNumber`: the constant as the executor sees it (Go's
/// `idealConstant` in exec.go: a float where the text has `.`, `e` or `p` and is no hex
/// integer, else an int, else a uint).
pub fn number(text: &str) -> Result<Number, String> {
    if let Some(body) = text.strip_suffix('i') {
        // An imaginary constant: Go makes it a complex128 (even 0i prints as (0+0i)).
        if parse_float(body).is_some() {
            return Err(unsupported_complex(text));
        }
    }
    let u = parse_uint(text);
    let i = parse_int(text);
    let is_hex_int = text.len() > 2
        && text.as_bytes()[0] == b'0'
        && lower(text.as_bytes()[1]) == b'x'
        && !text.contains(['p', 'P']);
    let floaty = !is_hex_int && text.contains(['.', 'e', 'E', 'p', 'P']);
    if !floaty {
        if let Some(i) = i {
            return Ok(Number::Int(i));
        }
        if let Some(u) = u {
            return Ok(Number::Uint(u));
        }
    }
    match parse_float(text) {
        Some(f) => {
            if !text.contains(['.', 'e', 'E', 'p', 'P']) {
                return Err(format!("integer overflow: {}", go_quote(text)));
            }
            Ok(Number::Float(f))
        }
        None => Err(format!("illegal number syntax: {}", go_quote(text))),
    }
}

/// `newNumber` for `itemComplex` (`1+2i`): refused, as every complex constant is.
pub fn complex(text: &str) -> Result<Number, String> {
    Err(unsupported_complex(text))
}

fn unsupported_complex(text: &str) -> String {
    format!("complex constant {text} is not supported (the template engine has real numbers only)")
}

fn unhex(b: u8) -> Option<u32> {
    (b as char).to_digit(16)
}

/// `strconv.UnquoteChar(s, quote)`: the first character of `s` (an escape sequence
/// decoded), whether it must be written as UTF-8 (`false` for `\x` and octal bytes), and
/// the rest.
fn unquote_char(s: &str, quote: u8) -> Result<(u32, bool, &str), ()> {
    let b = s.as_bytes();
    let c = *b.first().ok_or(())?;
    if c == quote && (quote == b'\'' || quote == b'"') {
        return Err(());
    }
    if c >= 0x80 {
        let ch = s.chars().next().ok_or(())?;
        return Ok((ch as u32, true, &s[ch.len_utf8()..]));
    }
    if c != b'\\' {
        return Ok((u32::from(c), false, &s[1..]));
    }
    let esc = *b.get(1).ok_or(())?;
    if !esc.is_ascii() {
        return Err(());
    }
    let rest = s.get(2..).ok_or(())?;
    let simple = |v: u8| Ok((u32::from(v), false, rest));
    match esc {
        b'a' => simple(7),
        b'b' => simple(8),
        b'f' => simple(12),
        b'n' => simple(b'\n'),
        b'r' => simple(b'\r'),
        b't' => simple(b'\t'),
        b'v' => simple(11),
        b'x' | b'u' | b'U' => {
            let n = match esc {
                b'x' => 2,
                b'u' => 4,
                _ => 8,
            };
            let digits = rest.as_bytes().get(..n).ok_or(())?;
            let mut v: u32 = 0;
            for d in digits {
                v = (v << 4) | unhex(*d).ok_or(())?;
            }
            let rest = &rest[n..];
            if esc == b'x' {
                return Ok((v, false, rest));
            }
            if char::from_u32(v).is_none() {
                return Err(());
            }
            Ok((v, true, rest))
        }
        b'0'..=b'7' => {
            let digits = s.as_bytes().get(1..4).ok_or(())?;
            let mut v: u32 = 0;
            for d in digits {
                if !(b'0'..=b'7').contains(d) {
                    return Err(());
                }
                v = (v << 3) | u32::from(d - b'0');
            }
            if v > 255 {
                return Err(());
            }
            Ok((v, false, &s[4..]))
        }
        b'\\' => simple(b'\\'),
        b'\'' | b'"' => {
            if esc != quote {
                return Err(());
            }
            simple(esc)
        }
        _ => Err(()),
    }
}

/// `newNumber` for `itemCharConstant` (`'a'`, `'\n'`, `'\u00e9'`): the rune as an int.
pub fn char_constant(text: &str) -> Result<Number, String> {
    let inner = text.get(1..).ok_or_else(|| INVALID_SYNTAX.to_string())?;
    let (r, _, tail) = unquote_char(inner, b'\'').map_err(|()| INVALID_SYNTAX.to_string())?;
    if tail != "'" {
        return Err(format!("malformed character constant: {text}"));
    }
    Ok(Number::Int(i64::from(r)))
}

/// `strconv.Unquote` of a `"..."` or `` `...` `` token. A `\x` or octal escape that makes
/// the bytes invalid UTF-8 is replaced by U+FFFD (the value is a Rust `String`).
pub fn unquote(text: &str) -> Result<String, String> {
    let err = || INVALID_SYNTAX.to_string();
    let b = text.as_bytes();
    if b.len() < 2 || b[0] != b[b.len() - 1] {
        return Err(err());
    }
    let quote = b[0];
    let inner = &text[1..text.len() - 1];
    match quote {
        b'`' => {
            if inner.contains('`') {
                return Err(err());
            }
            // Carriage returns inside raw strings are discarded.
            Ok(inner.replace('\r', ""))
        }
        b'"' => {
            if inner.contains('\n') {
                return Err(err());
            }
            if !inner.contains('\\') && !inner.contains('"') {
                return Ok(inner.to_string());
            }
            let mut out: Vec<u8> = Vec::with_capacity(inner.len());
            let mut rest = inner;
            while !rest.is_empty() {
                let (r, multibyte, tail) = unquote_char(rest, b'"').map_err(|()| err())?;
                rest = tail;
                if r < 0x80 || !multibyte {
                    out.push(r as u8);
                } else if let Some(c) = char::from_u32(r) {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
            Ok(String::from_utf8_lossy(&out).into_owned())
        }
        _ => Err(err()),
    }
}
