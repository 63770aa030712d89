//! Brace expansion (`{a,b}`, `{1..3}`, `{01..10..2}`, `{a..e}`) as bash does it, before any
//! other expansion, on the unquoted characters of a word; quoted text and expansions are
//! opaque atoms that braces never split.

/// One element of a word: an unquoted character (with its byte offset in the source when it
/// stands there verbatim) or anything else.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Atom<T> {
    Ch(char, Option<usize>),
    Other(T),
}

/// The words `atoms` expands to, in bash's order; `None` when there would be more than
/// `limit`.
pub(super) fn expand<T: Clone>(atoms: &[Atom<T>], limit: usize) -> Option<Vec<Vec<Atom<T>>>> {
    let mut out = Vec::new();
    if go(atoms, limit, &mut out, 0) {
        Some(out)
    } else {
        None
    }
}

fn go<T: Clone>(
    atoms: &[Atom<T>],
    limit: usize,
    out: &mut Vec<Vec<Atom<T>>>,
    depth: usize,
) -> bool {
    if depth > 64 {
        return false;
    }
    for i in 0..atoms.len() {
        if !matches!(atoms[i], Atom::Ch('{', _)) {
            continue;
        }
        // `${` is a parameter expansion, not a brace.
        if i > 0 && matches!(atoms[i - 1], Atom::Ch('$', _)) {
            continue;
        }
        let mut level = 0usize;
        let mut commas = Vec::new();
        let mut close = None;
        for (j, a) in atoms.iter().enumerate().skip(i + 1) {
            match a {
                Atom::Ch('{', _) => level += 1,
                Atom::Ch('}', _) if level == 0 => {
                    close = Some(j);
                    break;
                }
                Atom::Ch('}', _) => level -= 1,
                Atom::Ch(',', _) if level == 0 => commas.push(j),
                _ => {}
            }
        }
        let Some(j) = close else {
            continue;
        };
        let alts: Vec<Vec<Atom<T>>> = if !commas.is_empty() {
            let mut v = Vec::new();
            let mut s = i + 1;
            for &c in commas.iter().chain(std::iter::once(&j)) {
                v.push(atoms[s..c].to_vec());
                s = c + 1;
            }
            v
        } else {
            match sequence(&atoms[i + 1..j], limit) {
                Seq::Words(w) => w
                    .into_iter()
                    .map(|s| s.chars().map(|c| Atom::Ch(c, None)).collect())
                    .collect(),
                Seq::TooMany => return false,
                Seq::No => continue,
            }
        };
        let pre = &atoms[..i];
        let post = &atoms[j + 1..];
        for alt in alts {
            let mut rest = alt;
            rest.extend_from_slice(post);
            let mut sub = Vec::new();
            if !go(&rest, limit, &mut sub, depth + 1) {
                return false;
            }
            for s in sub {
                if out.len() >= limit {
                    return false;
                }
                let mut w = pre.to_vec();
                w.extend(s);
                out.push(w);
            }
        }
        return true;
    }
    if out.len() >= limit {
        return false;
    }
    out.push(atoms.to_vec());
    true
}

enum Seq {
    Words(Vec<String>),
    TooMany,
    No,
}

fn sequence<T>(inner: &[Atom<T>], limit: usize) -> Seq {
    let mut text = String::new();
    for a in inner {
        match a {
            Atom::Ch(c, _) => text.push(*c),
            Atom::Other(_) => return Seq::No,
        }
    }
    let parts: Vec<&str> = text.split("..").collect();
    if parts.len() != 2 && parts.len() != 3 {
        return Seq::No;
    }
    let step: i64 = match parts.get(2) {
        Some(s) => match s.parse::<i64>() {
            Ok(v) => v.checked_abs().unwrap_or(1).max(1),
            Err(_) => return Seq::No,
        },
        None => 1,
    };
    let (a, b) = (parts[0], parts[1]);
    if let (Ok(x), Ok(y)) = (a.parse::<i64>(), b.parse::<i64>()) {
        let count = (x.abs_diff(y) / step.unsigned_abs()).saturating_add(1);
        if count > limit as u64 {
            return Seq::TooMany;
        }
        let padded = |s: &str| {
            let d = s.strip_prefix('-').unwrap_or(s);
            d.len() > 1 && d.starts_with('0')
        };
        let width = if padded(a) || padded(b) {
            a.len().max(b.len())
        } else {
            0
        };
        let mut out = Vec::new();
        let mut v = x;
        for _ in 0..count {
            out.push(if width > 0 {
                if v < 0 {
                    format!("-{:0w$}", v.unsigned_abs(), w = width.saturating_sub(1))
                } else {
                    format!("{v:0width$}")
                }
            } else {
                v.to_string()
            });
            v = if x <= y {
                v.saturating_add(step)
            } else {
                v.saturating_sub(step)
            };
        }
        return Seq::Words(out);
    }
    let (mut ca, mut cb) = (a.chars(), b.chars());
    if let (Some(x), None, Some(y), None) = (ca.next(), ca.next(), cb.next(), cb.next()) {
        if x.is_ascii_alphabetic() && y.is_ascii_alphabetic() {
            let (x, y) = (x as i64, y as i64);
            let mut out = Vec::new();
            let mut v = x;
            loop {
                if let Some(c) = char::from_u32(v as u32) {
                    out.push(c.to_string());
                }
                if v == y {
                    break;
                }
                let next = if x <= y { v + step } else { v - step };
                if (x <= y && next > y) || (x > y && next < y) {
                    break;
                }
                v = next;
            }
            return Seq::Words(out);
        }
    }
    Seq::No
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Option<Vec<String>> {
        let atoms: Vec<Atom<()>> = s.chars().map(|c| Atom::Ch(c, None)).collect();
        expand(&atoms, 1000).map(|ws| {
            ws.into_iter()
                .map(|w| {
                    w.into_iter()
                        .map(|a| match a {
                            Atom::Ch(c, _) => c,
                            Atom::Other(()) => '#',
                        })
                        .collect()
                })
                .collect()
        })
    }

    #[test]
    fn expands_as_bash() {
        // Expected values: bash 5 `echo` of each word.
        let cases: [(&str, &str); 12] = [
            ("a{b,c}d", "abd acd"),
            ("{a,b}{1,2}", "a1 a2 b1 b2"),
            ("{1..3}", "1 2 3"),
            ("{3..1}", "3 2 1"),
            ("{01..3}", "01 02 03"),
            ("{1..10..4}", "1 5 9"),
            ("{a..c}", "a b c"),
            ("{a,{b,c}}", "a b c"),
            ("{}", "{}"),
            ("{a}", "{a}"),
            ("x{a,}", "xa x"),
            ("${a,b}", "${a,b}"),
        ];
        for (w, want) in cases {
            assert_eq!(words(w).unwrap().join(" "), want, "{w}");
        }
        assert!(words("{1..100000000}").is_none());
        assert!(words(&"{a,b}".repeat(20)).is_none());
    }
}
