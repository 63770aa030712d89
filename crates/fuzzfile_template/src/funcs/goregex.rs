//! slim-sprig's regular-expression functions (regex.go: `regexMatch`, `regexFindAll`,
//! `regexFind`, `regexReplaceAll`, `regexReplaceAllLiteral`, `regexSplit`,
//! `regexQuoteMeta` and their `must` forms) over Go's `regexp` package, with the `regex`
//! crate as the matcher.
//!
//! Both are RE2-style engines with leftmost-first matching and the same syntax for what a
//! template writes. What differs, and is made Go's here:
//! - Go's `\d`, `\w`, `\s`, `\b` (and their negations) are ASCII (`\s` is `[\t\n\f\r ]`);
//!   the crate's are Unicode: [`translate`] rewrites them into ASCII classes.
//! - Go's `FindAll`, `ReplaceAll` and `Split` skip an empty match right after a match
//!   (regexp.go `allMatches`, `replaceAll`): the loops here are Go's, over `find_at`.
//!
//! What is not Go's: a search without a match (and `regexSplit` with `n` 0) gives Go a nil
//! `[]string`, which `toJson` prints `null`; here it is an empty list (`[]`, as Go prints
//! both with `print`); the wording of a bad pattern's error (Go: `error parsing regexp: ...`
//! with RE2's message; here the crate's), and syntax only one side has (Go's `\Q...\E`; the
//! crate's class set operations `[a&&b]`, `[a--b]`, which Go reads as literal characters).

use regex::Regex;

/// The pattern, with Go's ASCII Perl classes and word boundaries written out.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str("[0-9]"),
            Some('D') => out.push_str("[^0-9]"),
            Some('w') => out.push_str("[0-9A-Za-z_]"),
            Some('W') => out.push_str("[^0-9A-Za-z_]"),
            Some('s') => out.push_str("[\\t\\n\\f\\r ]"),
            Some('S') => out.push_str("[^\\t\\n\\f\\r ]"),
            Some('b') => out.push_str("(?-u:\\b)"),
            Some('B') => out.push_str("(?-u:\\B)"),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// regexp.go `Compile`: the pattern, or the message of its error.
pub(super) fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(&translate(pattern)).map_err(|e| {
        let detail = match &e {
            regex::Error::Syntax(s) => s.lines().last().unwrap_or("").trim().to_string(),
            other => other.to_string(),
        };
        format!("error parsing regexp: {detail}: `{pattern}`")
    })
}

/// The width of the character at `pos` (1 at the end, as Go's loops step past it).
fn width_at(s: &str, pos: usize) -> usize {
    s.get(pos..)
        .and_then(|t| t.chars().next())
        .map_or(1, char::len_utf8)
}

/// regexp.go `allMatches`: the spans of the first `n` matches (every one when `n < 0`),
/// an empty match right after a match left out.
pub(super) fn find_all(re: &Regex, s: &str, n: i64) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let limit = if n < 0 { usize::MAX } else { n as usize };
    let mut pos = 0usize;
    let mut prev_end: Option<usize> = None;
    while out.len() < limit && pos <= s.len() {
        let Some(m) = re.find_at(s, pos) else {
            break;
        };
        let mut accept = true;
        if m.end() == pos {
            if Some(m.start()) == prev_end {
                accept = false;
            }
            pos += width_at(s, pos);
        } else {
            pos = m.end();
        }
        prev_end = Some(m.end());
        if accept {
            out.push((m.start(), m.end()));
        }
    }
    out
}

/// regexp.go `replaceAll` with `ReplaceAllString`'s `$1`/`${name}` expansion (the crate's
/// `Captures::expand` reads the same template syntax) or, `literal`, the text as it is.
pub(super) fn replace_all(re: &Regex, s: &str, repl: &str, literal: bool) -> String {
    let mut out = String::new();
    let mut last_end = 0usize;
    let mut search = 0usize;
    while search <= s.len() {
        let Some(caps) = re.captures_at(s, search) else {
            break;
        };
        let Some(m) = caps.get(0) else {
            break;
        };
        out.push_str(&s[last_end..m.start()]);
        if m.end() > last_end || m.start() == 0 {
            if literal {
                out.push_str(repl);
            } else {
                caps.expand(repl, &mut out);
            }
        }
        last_end = m.end();
        let width = width_at(s, search);
        if search + width > m.end() {
            search += width;
        } else if search + 1 > m.end() {
            search += 1;
        } else {
            search = m.end();
        }
    }
    out.push_str(&s[last_end.min(s.len())..]);
    out
}

/// regexp.go `Split`.
pub(super) fn split(re: &Regex, pattern: &str, s: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if !pattern.is_empty() && s.is_empty() {
        return vec![String::new()];
    }
    let matches = find_all(re, s, n);
    let mut out = Vec::new();
    let (mut beg, mut end) = (0usize, 0usize);
    for (start, stop) in matches {
        if n > 0 && out.len() as i64 == n - 1 {
            break;
        }
        end = start;
        if stop != 0 {
            out.push(s[beg..end].to_string());
        }
        beg = stop;
    }
    if end != s.len() {
        out.push(s[beg..].to_string());
    }
    out
}

/// regexp.go `QuoteMeta`.
pub(super) fn quote_meta(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
