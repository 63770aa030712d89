//! Go's `fmt` printing of values, as templates reach it: `{{ .X }}` prints with `fmt.Fprint`
//! (text/template/exec.go `printValue`), `print`/`println`/`printf` are `fmt.Sprint`,
//! `fmt.Sprintln` and `fmt.Sprintf` (text/template/funcs.go `builtins`).
//!
//! After Go's fmt/print.go (`doPrint`, `doPrintln`, `doPrintf`, `printArg`, `printValue`,
//! `badVerb`) and fmt/format.go (`fmtInteger`, `fmtFloat`, `pad`, `truncateString`), and
//! strconv/ftoa.go (`%e`, `%f`, `%g`; shortest digits for `%v`) and strconv/quote.go
//! (`Quote`).

use super::gotime::{civil_from_days, MONTHS};
use super::gv::V;

thread_local! {
    /// (bytes a formatted value may reach, nesting depth now, tripped): printing stops when a
    /// value is larger than the output bound or nested deeper than [`MAX_PRINT_DEPTH`] (a map
    /// that `set` put into itself), and the executor reports it.
    static GUARD: std::cell::Cell<(usize, usize, bool)> = const { std::cell::Cell::new((usize::MAX, 0, false)) };
}

/// How deep lists and maps may nest for printing and JSON.
pub const MAX_PRINT_DEPTH: usize = 100;

/// Starts a render's guard: formatted values may reach `budget` bytes.
pub(crate) fn guard_reset(budget: usize) {
    GUARD.with(|g| g.set((budget, 0, false)));
}

/// Whether a value was too large or too deep to format since the last check (and clears it).
pub(crate) fn guard_take_tripped() -> bool {
    GUARD.with(|g| {
        let (b, d, t) = g.get();
        g.set((b, d, false));
        t
    })
}

/// Enters one level of a list or map being formatted into `out`; false (and the guard
/// tripped) when it is too deep or `out` too large.
pub(crate) fn guard_enter(out_len: usize) -> bool {
    GUARD.with(|g| {
        let (b, d, t) = g.get();
        if t || d >= MAX_PRINT_DEPTH || out_len > b {
            g.set((b, d, true));
            return false;
        }
        g.set((b, d + 1, t));
        true
    })
}

pub(crate) fn guard_leave() {
    GUARD.with(|g| {
        let (b, d, t) = g.get();
        g.set((b, d.saturating_sub(1), t));
    })
}

/// One verb's flags, width and precision (fmt/format.go `fmtFlags`, `wid`, `prec`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Flags {
    pub sharp: bool,
    pub zero: bool,
    pub plus: bool,
    pub minus: bool,
    pub space: bool,
    pub sharp_v: bool,
    pub wid: Option<usize>,
    pub prec: Option<usize>,
}

/// `fmt.Sprint`: operands printed with `%v`, a space between two operands when neither is a
/// string (print.go `doPrint`).
pub fn sprint(args: &[V]) -> String {
    let mut out = String::new();
    let mut prev_string = false;
    for (i, a) in args.iter().enumerate() {
        let is_string = matches!(a, V::Str(_));
        if i > 0 && !is_string && !prev_string {
            out.push(' ');
        }
        print_arg(&mut out, a, 'v', &Flags::default());
        prev_string = is_string;
    }
    out
}

/// `fmt.Sprintln`: operands with `%v`, always a space between them, and a newline.
pub fn sprintln(args: &[V]) -> String {
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        print_arg(&mut out, a, 'v', &Flags::default());
    }
    out.push('\n');
    out
}

/// `%v` of one value with no flags: what `{{ .X }}` prints for a valid value.
pub fn format_v(v: &V) -> String {
    format_verb(v, 'v')
}

/// One value under one verb with no flags (`%s` in Go's own error messages).
pub fn format_verb(v: &V, verb: char) -> String {
    let mut out = String::new();
    print_arg(&mut out, v, verb, &Flags::default());
    out
}

/// `fmt.Sprintf` (print.go `doPrintf`), explicit argument indexes (`%[2]s`, `%[1]*d`,
/// `%.[2]*[1]f`: `argNumber`, `parseArgNumber`) included.
pub fn sprintf(format: &str, args: &[V]) -> String {
    let mut out = String::new();
    let b = format.as_bytes();
    let end = b.len();
    let mut arg_num = 0usize;
    // An index like `[3]` was the last item read.
    let mut after_index;
    // An index was read anywhere: Go then skips the EXTRA check.
    let mut reordered = false;
    let mut i = 0usize;
    'format: while i < end {
        let mut good_arg_num = true;
        let last = i;
        while i < end && b[i] != b'%' {
            i += 1;
        }
        if i > last {
            out.push_str(&format[last..i]);
        }
        if i >= end {
            break;
        }
        i += 1;
        let mut f = Flags::default();
        // Flags.
        while i < end {
            match b[i] {
                b'#' => f.sharp = true,
                b'0' => f.zero = !f.minus,
                b'+' => f.plus = true,
                b'-' => {
                    f.minus = true;
                    f.zero = false;
                }
                b' ' => f.space = true,
                _ => break,
            }
            i += 1;
        }
        // An explicit argument index.
        let mut index = ArgIndex {
            arg_num,
            reordered: &mut reordered,
            good: &mut good_arg_num,
            num_args: args.len(),
        };
        (i, after_index) = index.read(b, i);
        arg_num = index.arg_num;
        // Width.
        if i < end && b[i] == b'*' {
            i += 1;
            match int_from_arg(args, &mut arg_num) {
                Some(w) => {
                    if w < 0 {
                        f.minus = true;
                        f.zero = false;
                    }
                    f.wid = Some(w.unsigned_abs() as usize);
                }
                None => out.push_str("%!(BADWIDTH)"),
            }
            after_index = false;
        } else {
            let (n, ni) = parse_num(b, i, end);
            f.wid = n;
            i = ni;
            // "%[3]2d"
            if after_index && n.is_some() {
                good_arg_num = false;
            }
        }
        // Precision.
        if i + 1 < end && b[i] == b'.' {
            i += 1;
            // "%[3].2d"
            if after_index {
                good_arg_num = false;
            }
            let mut index = ArgIndex {
                arg_num,
                reordered: &mut reordered,
                good: &mut good_arg_num,
                num_args: args.len(),
            };
            (i, after_index) = index.read(b, i);
            arg_num = index.arg_num;
            if i < end && b[i] == b'*' {
                i += 1;
                match int_from_arg(args, &mut arg_num) {
                    Some(p) if p >= 0 => f.prec = Some(p as usize),
                    _ => out.push_str("%!(BADPREC)"),
                }
                after_index = false;
            } else {
                let (n, ni) = parse_num(b, i, end);
                f.prec = Some(n.unwrap_or(0));
                i = ni;
            }
        }
        if !after_index {
            let mut index = ArgIndex {
                arg_num,
                reordered: &mut reordered,
                good: &mut good_arg_num,
                num_args: args.len(),
            };
            (i, _) = index.read(b, i);
            arg_num = index.arg_num;
        }
        if i >= end {
            out.push_str("%!(NOVERB)");
            break;
        }
        let verb = match format[i..].chars().next() {
            Some(c) => c,
            None => break 'format,
        };
        i += verb.len_utf8();
        if verb == '%' {
            out.push('%');
            continue;
        }
        if !good_arg_num {
            out.push_str("%!");
            out.push(verb);
            out.push_str("(BADINDEX)");
            continue;
        }
        let Some(arg) = args.get(arg_num) else {
            out.push_str("%!");
            out.push(verb);
            out.push_str("(MISSING)");
            continue;
        };
        if verb == 'v' {
            f.sharp_v = f.sharp;
            f.sharp = false;
            f.plus = false;
        }
        print_arg(&mut out, arg, verb, &f);
        arg_num += 1;
    }
    if !reordered && arg_num < args.len() {
        out.push_str("%!(EXTRA ");
        for (k, a) in args[arg_num..].iter().enumerate() {
            if k > 0 {
                out.push_str(", ");
            }
            if a.is_nilish() {
                out.push_str("<nil>");
            } else {
                out.push_str(a.type_name());
                out.push('=');
                print_arg(&mut out, a, 'v', &Flags::default());
            }
        }
        out.push(')');
    }
    out
}

/// The state print.go `argNumber` reads and sets.
struct ArgIndex<'a> {
    arg_num: usize,
    reordered: &'a mut bool,
    good: &'a mut bool,
    num_args: usize,
}

impl ArgIndex<'_> {
    /// print.go `argNumber`: an index `[n]` at `i` (1-based) sets the argument number when
    /// it names an argument, else marks the verb's index bad. Returns where the format goes
    /// on and whether an index was read.
    fn read(&mut self, b: &[u8], i: usize) -> (usize, bool) {
        if i >= b.len() || b[i] != b'[' {
            return (i, false);
        }
        *self.reordered = true;
        let (index, wid, ok) = parse_arg_number(&b[i..]);
        match index {
            Some(n) if ok && n >= 1 && n - 1 < self.num_args => {
                self.arg_num = n - 1;
                (i + wid, true)
            }
            _ => {
                *self.good = false;
                (i + wid, ok)
            }
        }
    }
}

/// print.go `parseArgNumber`: the number in `[n]` at the start of `b` (as written, 1-based),
/// the bytes it takes, and whether it is well formed.
fn parse_arg_number(b: &[u8]) -> (Option<usize>, usize, bool) {
    if b.len() < 3 {
        return (None, 1, false);
    }
    for i in 1..b.len() {
        if b[i] == b']' {
            let (n, ni) = parse_num(b, 1, i);
            if n.is_none() || ni != i {
                return (None, i + 1, false);
            }
            return (n, i + 1, true);
        }
    }
    (None, 1, false)
}

/// print.go `parsenum`: the decimal number in `b[i..end]`.
fn parse_num(b: &[u8], mut i: usize, end: usize) -> (Option<usize>, usize) {
    let start = i;
    let mut n: usize = 0;
    while i < end && b[i].is_ascii_digit() {
        // fmt's tooLarge: a width or precision over 1e6 is not a number.
        if n >= 1_000_000 {
            return (None, end);
        }
        n = n * 10 + (b[i] - b'0') as usize;
        i += 1;
    }
    if i == start {
        (None, i)
    } else {
        (Some(n), i)
    }
}

/// print.go `intFromArg`: `*` takes an int argument.
fn int_from_arg(args: &[V], arg_num: &mut usize) -> Option<i64> {
    let a = args.get(*arg_num)?;
    *arg_num += 1;
    match a {
        V::Int(i) | V::Int64(i) | V::TimeUnit(_, i) => {
            Some(*i).filter(|i| i.unsigned_abs() <= 1_000_000)
        }
        V::Uint(u) if *u <= 1_000_000 => Some(*u as i64),
        V::Byte(b) => Some(i64::from(*b)),
        _ => None,
    }
}

/// print.go `printArg` and `printValue`: one operand under one verb.
pub fn print_arg(out: &mut String, v: &V, verb: char, f: &Flags) {
    if verb == 'T' && !v.is_nilish() {
        // print.go printArg: fmtS of the type's name (precision cuts it).
        pad(out, truncate(v.type_name(), f.prec), f);
        return;
    }
    match v {
        V::Invalid | V::Nil => match verb {
            'T' | 'v' => pad(out, "<nil>", f),
            _ => bad_verb(out, v, verb, f),
        },
        V::Bool(b) => match verb {
            't' | 'v' => pad(out, if *b { "true" } else { "false" }, f),
            _ => bad_verb(out, v, verb, f),
        },
        V::Int(i) | V::Int64(i) => fmt_integer_verb(out, *i as u64, true, verb, f, v),
        // time.Month and time.Weekday are fmt.Stringers (print.go `handleMethods`): their
        // String() under the string verbs, an int under the others and `%#v`.
        V::TimeUnit(unit, n) => match verb {
            'v' if f.sharp_v => fmt_integer_verb(out, *n as u64, true, verb, f, v),
            'v' | 's' | 'x' | 'X' | 'q' => fmt_string(out, &unit.string(*n), verb, f, v),
            _ => fmt_integer_verb(out, *n as u64, true, verb, f, v),
        },
        V::Uint(u) => fmt_integer_verb(out, *u, false, verb, f, v),
        V::Byte(b) => fmt_integer_verb(out, u64::from(*b), false, verb, f, v),
        V::Float(x) => match verb {
            'v' => fmt_float(out, *x, 'g', None, f),
            'g' | 'G' | 'b' | 'x' | 'X' => fmt_float(out, *x, verb, None, f),
            'e' | 'E' | 'f' => fmt_float(out, *x, verb, Some(6), f),
            'F' => fmt_float(out, *x, 'f', Some(6), f),
            _ => bad_verb(out, v, verb, f),
        },
        V::Str(s) => fmt_string(out, s, verb, f, v),
        V::Time {
            unix_seconds,
            nanos,
        } => match verb {
            // time.Time is a fmt.GoStringer (`%#v`) and a fmt.Stringer: its String() for the
            // string verbs.
            'v' if f.sharp_v => pad(out, truncate(&time_go_string(v), f.prec), f),
            'v' | 's' | 'x' | 'X' | 'q' => {
                let s = time_string(v);
                fmt_string(out, &s, verb, f, v)
            }
            // Else the struct {wall ext loc} of a time.Unix(s, ns).UTC(): wall is the
            // nanoseconds, ext the seconds since year 1, loc a nil *time.Location.
            _ => {
                out.push('{');
                print_arg(out, &V::Uint(u64::from(*nanos)), verb, f);
                out.push(' ');
                let ext = unix_seconds.wrapping_add(62_135_596_800);
                print_arg(out, &V::Int64(ext), verb, f);
                out.push(' ');
                match verb {
                    'b' | 'o' | 'd' | 'x' | 'X' => {
                        fmt_integer_verb(out, 0, false, verb, f, &V::Uint(0))
                    }
                    _ => {
                        out.push_str("%!");
                        out.push(verb);
                        out.push_str("(*time.Location=");
                        pad(out, "<nil>", f);
                        out.push(')');
                    }
                }
                out.push('}');
            }
        },
        V::List(_) | V::Strs(_) | V::Ints(_) => {
            if !guard_enter(out.len()) {
                return;
            }
            print_list(out, v, verb, f);
            guard_leave();
        }
        V::Map(_) | V::StrMap(_) => {
            if !guard_enter(out.len()) {
                return;
            }
            print_map(out, v, verb, f);
            guard_leave();
        }
    }
}

fn print_list(out: &mut String, v: &V, verb: char, f: &Flags) {
    {
        {
            let items = v.list_items().unwrap_or_default();
            if f.sharp_v {
                out.push_str(v.type_name());
                out.push('{');
                for (k, it) in items.iter().enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    print_elem(out, it, verb, f);
                }
                out.push('}');
                return;
            }
            out.push('[');
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                print_elem(out, it, verb, f);
            }
            out.push(']');
        }
    }
}

fn print_map(out: &mut String, v: &V, verb: char, f: &Flags) {
    {
        {
            if f.sharp_v {
                out.push_str(v.type_name());
                out.push('{');
            } else {
                out.push_str("map[");
            }
            for (k, (key, val)) in v.map_entries().unwrap_or_default().iter().enumerate() {
                if k > 0 {
                    out.push_str(if f.sharp_v { ", " } else { " " });
                }
                fmt_string(out, key, verb, f, &V::Str(key.clone()));
                out.push(':');
                print_elem(out, val, verb, f);
            }
            out.push(if f.sharp_v { '}' } else { ']' });
        }
    }
}

/// print.go `badVerb`: `%!d(string=abc)`; the value is printed with `%v` under the verb's
/// flags and width (Go keeps them).
fn bad_verb(out: &mut String, v: &V, verb: char, f: &Flags) {
    out.push_str("%!");
    out.push(verb);
    out.push('(');
    if v.is_nilish() {
        out.push_str("<nil>");
    } else {
        out.push_str(v.type_name());
        out.push('=');
        match v {
            // print.go `badVerb` sets `erroring`, which turns `handleMethods` off: a
            // Stringer's number, not its String().
            V::TimeUnit(_, n) => fmt_integer_verb(out, *n as u64, true, 'v', f, v),
            _ => print_arg(out, v, 'v', f),
        }
    }
    out.push(')');
}

/// print.go `printValue` for an element of a list or a map value: a nil `interface {}` is
/// `<nil>` under any verb, unpadded (`interface {}(nil)` under `%#v`).
fn print_elem(out: &mut String, v: &V, verb: char, f: &Flags) {
    if v.is_nilish() {
        out.push_str(if f.sharp_v {
            "interface {}(nil)"
        } else {
            "<nil>"
        });
    } else {
        print_arg(out, v, verb, f);
    }
}

/// format.go `pad`: width in runes, spaces (or zeros with the `0` flag) left, or right with
/// `-`.
fn pad(out: &mut String, s: &str, f: &Flags) {
    let Some(w) = f.wid else {
        out.push_str(s);
        return;
    };
    let n = s.chars().count();
    let fill = w.saturating_sub(n);
    let c = if f.zero { '0' } else { ' ' };
    if f.minus {
        out.push_str(s);
        out.extend(std::iter::repeat_n(' ', fill));
    } else {
        out.extend(std::iter::repeat_n(c, fill));
        out.push_str(s);
    }
}

fn fmt_integer_verb(out: &mut String, u: u64, signed: bool, verb: char, f: &Flags, v: &V) {
    match verb {
        'v' if f.sharp_v && !signed => {
            let g = Flags { sharp: true, ..*f };
            fmt_integer(out, u, 16, false, verb, &g, false)
        }
        'v' | 'd' => fmt_integer(out, u, 10, signed, verb, f, false),
        'b' => fmt_integer(out, u, 2, signed, verb, f, false),
        'o' | 'O' => fmt_integer(out, u, 8, signed, verb, f, false),
        'x' => fmt_integer(out, u, 16, signed, verb, f, false),
        'X' => fmt_integer(out, u, 16, signed, verb, f, true),
        'c' => {
            let c = char::from_u32(u as u32)
                .filter(|_| u <= 0x10FFFF)
                .unwrap_or('\u{FFFD}');
            let mut tmp = [0u8; 4];
            pad(out, c.encode_utf8(&mut tmp), f);
        }
        'q' => {
            let c = char::from_u32(u as u32)
                .filter(|_| u <= 0x10FFFF)
                .unwrap_or('\u{FFFD}');
            let q = quote_with(&c.to_string(), '\'', f.plus);
            pad(out, &q, f);
        }
        'U' => {
            // format.go fmtUnicode: at least 4 digits, or the precision.
            let digits = f.prec.filter(|p| *p > 4).unwrap_or(4);
            let mut s = format!("U+{:0digits$X}", u);
            if f.sharp && u <= 0x10FFFF {
                if let Some(c) = char::from_u32(u as u32).filter(|c| is_print(*c)) {
                    s.push_str(&format!(" '{c}'"));
                }
            }
            let g = Flags { zero: false, ..*f };
            pad(out, &s, &g);
        }
        _ => bad_verb(out, v, verb, f),
    }
}

/// format.go `fmtInteger`.
fn fmt_integer(
    out: &mut String,
    u: u64,
    base: u64,
    signed: bool,
    verb: char,
    f: &Flags,
    upper: bool,
) {
    let negative = signed && (u as i64) < 0;
    let mut u = if negative {
        (u as i64).unsigned_abs()
    } else {
        u
    };
    let mut prec = 0usize;
    if let Some(p) = f.prec {
        prec = p;
        if p == 0 && u == 0 {
            let g = Flags { zero: false, ..*f };
            pad(out, "", &g);
            return;
        }
    } else if f.zero && f.wid.is_some() && !f.minus {
        prec = f.wid.unwrap_or(0);
        if negative || f.plus || f.space {
            prec = prec.saturating_sub(1);
        }
    }
    let digits: &[u8] = if upper {
        b"0123456789ABCDEFX"
    } else {
        b"0123456789abcdefx"
    };
    let mut buf: Vec<u8> = Vec::new();
    loop {
        buf.push(digits[(u % base) as usize]);
        u /= base;
        if u == 0 {
            break;
        }
    }
    while buf.len() < prec {
        buf.push(b'0');
    }
    if f.sharp {
        match base {
            2 => buf.extend_from_slice(b"b0"),
            8 if buf.last() != Some(&b'0') => buf.push(b'0'),
            16 => {
                buf.push(digits[16]);
                buf.push(b'0');
            }
            _ => {}
        }
    }
    if verb == 'O' {
        buf.extend_from_slice(b"o0");
    }
    if negative {
        buf.push(b'-');
    } else if f.plus {
        buf.push(b'+');
    } else if f.space {
        buf.push(b' ');
    }
    buf.reverse();
    let s = String::from_utf8_lossy(&buf);
    let g = Flags { zero: false, ..*f };
    pad(out, &s, &g);
}

/// print.go `fmtString` and format.go `fmtS`, `fmtQ`, `fmtSx`.
fn fmt_string(out: &mut String, s: &str, verb: char, f: &Flags, v: &V) {
    match verb {
        'v' if f.sharp_v => pad(out, &quote_with(truncate(s, f.prec), '"', f.plus), f),
        'v' | 's' => {
            let t = truncate(s, f.prec);
            pad(out, t, f)
        }
        'q' => {
            let t = truncate(s, f.prec);
            if f.sharp && can_backquote(t) {
                pad(out, &format!("`{t}`"), f)
            } else {
                pad(out, &quote_with(t, '"', f.plus), f)
            }
        }
        'x' | 'X' => {
            let bytes = s.as_bytes();
            let n = f.prec.map_or(bytes.len(), |p| p.min(bytes.len()));
            let mut r = String::new();
            for (k, byte) in bytes[..n].iter().enumerate() {
                if f.space && k > 0 {
                    r.push(' ');
                }
                if f.sharp && (f.space || k == 0) {
                    r.push_str(if verb == 'x' { "0x" } else { "0X" });
                }
                if verb == 'x' {
                    r.push_str(&format!("{byte:02x}"));
                } else {
                    r.push_str(&format!("{byte:02X}"));
                }
            }
            pad(out, &r, f)
        }
        _ => bad_verb(out, v, verb, f),
    }
}

fn truncate(s: &str, prec: Option<usize>) -> &str {
    match prec {
        Some(p) => match s.char_indices().nth(p) {
            Some((i, _)) => &s[..i],
            None => s,
        },
        None => s,
    }
}

pub(crate) fn can_backquote(s: &str) -> bool {
    s.chars()
        .all(|c| c != '`' && c != '\u{FEFF}' && (c == '\t' || !(c < ' ' || c == '\u{7F}')))
}

/// strconv.Quote (`'"'`) and QuoteRune (`'\''`); `ascii_only` is QuoteToASCII (`%+q`).
pub fn quote_with(s: &str, q: char, ascii_only: bool) -> String {
    let mut r = String::with_capacity(s.len() + 2);
    r.push(q);
    for c in s.chars() {
        if c == q || c == '\\' {
            r.push('\\');
            r.push(c);
            continue;
        }
        if ascii_only {
            if c.is_ascii() && is_print(c) {
                r.push(c);
                continue;
            }
        } else if is_print(c) {
            r.push(c);
            continue;
        }
        match c {
            '\u{7}' => r.push_str("\\a"),
            '\u{8}' => r.push_str("\\b"),
            '\u{c}' => r.push_str("\\f"),
            '\n' => r.push_str("\\n"),
            '\r' => r.push_str("\\r"),
            '\t' => r.push_str("\\t"),
            '\u{b}' => r.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                r.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if (c as u32) < 0x10000 => r.push_str(&format!("\\u{:04x}", c as u32)),
            c => r.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    r.push(q);
    r
}

/// unicode.IsPrint (Go's tables).
fn is_print(c: char) -> bool {
    super::unicode_tables::is_print(c)
}

/// time.Time's String() in UTC: `2006-01-02 15:04:05.999999999 +0000 UTC`.
pub fn time_string(v: &V) -> String {
    let V::Time {
        unix_seconds,
        nanos,
    } = v
    else {
        return String::new();
    };
    // Go's Time.String is Format with this layout.
    super::gotime::format(
        *unix_seconds,
        *nanos,
        "2006-01-02 15:04:05.999999999 -0700 MST",
    )
}

/// time.Time's GoString() in UTC: `time.Date(2023, time.November, 14, 22, 13, 20, 0,
/// time.UTC)`.
fn time_go_string(v: &V) -> String {
    let V::Time {
        unix_seconds,
        nanos,
    } = v
    else {
        return String::new();
    };
    let secs = unix_seconds.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(unix_seconds.div_euclid(86_400));
    format!(
        "time.Date({y}, time.{}, {d}, {}, {}, {}, {nanos}, time.UTC)",
        MONTHS[(m as usize).saturating_sub(1) % 12],
        secs / 3600,
        (secs / 60) % 60,
        secs % 60
    )
}

/// Decimal digits of |x| (no leading zeros; empty for zero) and the decimal point's place:
/// x = 0.d1d2d3... × 10^dp (strconv's `decimalSlice`). `digits: None` is the shortest
/// representation that reads back as x; `Some(n)` rounds to n significant digits.
fn decimal(x: f64, digits: Option<usize>) -> (Vec<u8>, i32) {
    let x = x.abs();
    if x == 0.0 {
        return (Vec::new(), 0);
    }
    let s = match digits {
        None => format!("{x:e}"),
        Some(n) => format!("{:.*e}", n.saturating_sub(1), x),
    };
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut d: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).collect();
    let mut dp = exp + 1;
    // Rounding can carry into a new digit ("9.99" to 2 digits is "1.0e1" in Rust already).
    while d.first() == Some(&b'0') && d.len() > 1 {
        d.remove(0);
        dp -= 1;
    }
    (d, dp)
}

/// strconv.FormatFloat(x, verb, prec, 64) for 'e', 'E', 'f', 'g', 'G'; `prec: None` is -1
/// (shortest).
pub fn format_float(x: f64, verb: char, prec: Option<usize>) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if verb == 'b' || verb == 'x' || verb == 'X' {
        return format_float_binary(x, verb, prec);
    }
    let neg = x.is_sign_negative();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    let lower = verb.to_ascii_lowercase();
    let e_char = if verb.is_ascii_uppercase() { 'E' } else { 'e' };
    match lower {
        'f' => {
            let body = match prec {
                Some(p) => format!("{:.*}", p, x.abs()),
                None => {
                    let (d, dp) = decimal(x, None);
                    let p = (d.len() as i32 - dp).max(0) as usize;
                    fmt_f(&d, dp, p)
                }
            };
            out.push_str(&body);
        }
        'e' => {
            let (d, dp) = match prec {
                Some(p) => decimal(x, Some(p + 1)),
                None => decimal(x, None),
            };
            let p = prec.unwrap_or(d.len().saturating_sub(1));
            out.push_str(&fmt_e(&d, dp, p, e_char));
        }
        _ => {
            // 'g'
            let shortest = prec.is_none();
            let (mut d, dp) = match prec {
                Some(p) => decimal(x, Some(p.max(1))),
                None => decimal(x, None),
            };
            if !shortest {
                while d.len() > 1 && d.last() == Some(&b'0') {
                    d.pop();
                }
                if d == b"0" {
                    d.clear();
                }
            }
            let nd = d.len() as i32;
            let mut p = match prec {
                Some(p) => p.max(1) as i32,
                None => nd,
            };
            let mut eprec = p;
            if eprec > nd && nd >= dp {
                eprec = nd;
            }
            if shortest {
                eprec = 6;
            }
            let exp = dp - 1;
            if exp < -4 || exp >= eprec {
                if p > nd {
                    p = nd;
                }
                out.push_str(&fmt_e(&d, dp, (p - 1).max(0) as usize, e_char));
            } else {
                if p > dp {
                    p = nd;
                }
                out.push_str(&fmt_f(&d, dp, (p - dp).max(0) as usize));
            }
        }
    }
    out
}

/// strconv.FormatFloat's 'b' (`fmtB`: mantissa `p` exponent) and 'x'/'X' (`fmtX`: hex
/// mantissa and binary exponent) for finite values.
fn format_float_binary(x: f64, verb: char, prec: Option<usize>) -> String {
    let bits = x.to_bits();
    let neg = bits >> 63 != 0;
    let mut exp = ((bits >> 52) & 0x7FF) as i64;
    let mut mant = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        exp += 1;
    } else {
        mant |= 1u64 << 52;
    }
    exp -= 1023;
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if verb == 'b' {
        let e = exp - 52;
        out.push_str(&format!("{mant}p{}{e}", if e >= 0 { "+" } else { "" }));
        return out;
    }
    if mant == 0 {
        exp = 0;
    }
    mant <<= 60 - 52;
    while mant != 0 && mant & (1 << 60) == 0 {
        mant <<= 1;
        exp -= 1;
    }
    if let Some(p) = prec.filter(|p| *p < 15) {
        let shift = (p * 4) as u32;
        let extra = (mant << shift) & ((1u64 << 60) - 1);
        mant >>= 60 - shift;
        if extra | (mant & 1) > 1 << 59 {
            mant += 1;
        }
        mant <<= 60 - shift;
        if mant & (1 << 61) != 0 {
            mant >>= 1;
            exp += 1;
        }
    }
    let hex: &[u8] = if verb == 'X' {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    out.push('0');
    out.push(verb);
    out.push(if (mant >> 60) & 1 == 1 { '1' } else { '0' });
    mant <<= 4;
    match prec {
        None if mant != 0 => {
            out.push('.');
            while mant != 0 {
                out.push(hex[((mant >> 60) & 15) as usize] as char);
                mant <<= 4;
            }
        }
        Some(p) if p > 0 => {
            out.push('.');
            for _ in 0..p {
                out.push(hex[((mant >> 60) & 15) as usize] as char);
                mant <<= 4;
            }
        }
        _ => {}
    }
    out.push(if verb == 'X' { 'P' } else { 'p' });
    out.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        out.push('0');
    }
    out.push_str(&e.to_string());
    out
}

/// strconv `fmtE`: d.ddde±dd.
fn fmt_e(d: &[u8], dp: i32, prec: usize, e_char: char) -> String {
    let mut s = String::new();
    s.push(d.first().map_or('0', |c| *c as char));
    if prec > 0 {
        s.push('.');
        for k in 1..=prec {
            s.push(d.get(k).map_or('0', |c| *c as char));
        }
    }
    s.push(e_char);
    let exp = if d.is_empty() { 0 } else { dp - 1 };
    s.push(if exp < 0 { '-' } else { '+' });
    let e = exp.unsigned_abs();
    if e < 10 {
        s.push('0');
    }
    s.push_str(&e.to_string());
    s
}

/// strconv `fmtF`: ddd.ddd.
fn fmt_f(d: &[u8], dp: i32, prec: usize) -> String {
    let mut s = String::new();
    if dp > 0 {
        let m = (dp as usize).min(d.len());
        s.push_str(std::str::from_utf8(&d[..m]).unwrap_or(""));
        for _ in m..dp as usize {
            s.push('0');
        }
    } else {
        s.push('0');
    }
    if prec > 0 {
        s.push('.');
        for k in 1..=prec as i32 {
            let j = dp + k - 1;
            let c = if j < 0 {
                '0'
            } else {
                d.get(j as usize).map_or('0', |c| *c as char)
            };
            s.push(c);
        }
    }
    s
}

/// format.go `fmtFloat`'s `#` flag: keep a decimal point, and trailing zeros up to the
/// precision for %g and %x (6 where none is given). `num` starts with its sign.
fn sharp_float(num: String, verb: char, prec: Option<usize>) -> String {
    let mut digits: i64 = match verb {
        'v' | 'g' | 'G' | 'x' => prec.map_or(6, |p| p as i64),
        _ => 0,
    };
    let bytes = num.as_bytes();
    let mut body_end = bytes.len();
    let mut has_point = false;
    let mut saw_nonzero = false;
    let mut i = 1;
    while i < body_end {
        match bytes[i] {
            b'.' => has_point = true,
            b'p' | b'P' => body_end = i,
            b'e' | b'E' if verb != 'x' && verb != 'X' => body_end = i,
            c => {
                if c != b'0' {
                    saw_nonzero = true;
                }
                if saw_nonzero {
                    digits -= 1;
                }
            }
        }
        i += 1;
    }
    let (body, tail) = num.split_at(body_end);
    let mut r = body.to_string();
    if !has_point {
        if body.len() == 2 && body.as_bytes()[1] == b'0' {
            digits -= 1;
        }
        r.push('.');
    }
    while digits > 0 {
        r.push('0');
        digits -= 1;
    }
    r.push_str(tail);
    r
}

/// format.go `fmtFloat`: sign, padding and infinities around strconv's digits.
fn fmt_float(out: &mut String, x: f64, verb: char, default_prec: Option<usize>, f: &Flags) {
    let prec = if f.prec.is_some() {
        f.prec
    } else {
        default_prec
    };
    let mut num = format_float(x, verb, prec);
    if !num.starts_with('-') && !num.starts_with('+') {
        num.insert(0, '+');
    }
    if f.space && num.starts_with('+') && !f.plus {
        num.replace_range(0..1, " ");
    }
    if num[1..].starts_with('I') || num[1..].starts_with('N') {
        if num[1..].starts_with('N') && !f.space && !f.plus {
            num.remove(0);
        }
        let g = Flags { zero: false, ..*f };
        pad(out, &num, &g);
        return;
    }
    if f.sharp && verb != 'b' {
        num = sharp_float(num, verb, prec);
    }
    if f.plus || !num.starts_with('+') {
        if let Some(w) = f.wid {
            if f.zero && w > num.len() {
                out.push_str(&num[..1]);
                out.extend(std::iter::repeat_n('0', w - num.len()));
                out.push_str(&num[1..]);
                return;
            }
        }
        pad(out, &num, f);
        return;
    }
    pad(out, &num[1..], f);
}
