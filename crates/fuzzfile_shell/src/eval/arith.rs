//! Shell arithmetic (`$((...))`, `((...))`, `let`, array indices) over 64-bit integers, as bash
//! evaluates it after the parameter expansions in the text were done. A name is a variable
//! whose value is itself evaluated as an expression; an unknown value makes the result unknown.

/// Where arithmetic reads and writes variables.
pub(super) trait Env {
    /// `None`: unknown. `Some(None)`: unset (0). `Some(Some(text))`: the text, evaluated.
    fn get(&mut self, name: &str) -> Option<Option<String>>;
    /// `None`: the variable becomes unknown.
    fn set(&mut self, name: &str, value: Option<i64>);
    /// An array element (`A[1]`), as [`Env::get`].
    fn get_index(&mut self, _name: &str, _index: i64) -> Option<Option<String>> {
        None
    }
}

/// The most nested levels (parentheses, operators, variables holding expressions).
const MAX_DEPTH: usize = 64;

/// Evaluates `expr`; `None` when a value is unknown or the expression is not valid.
pub(super) fn eval(expr: &str, env: &mut dyn Env) -> Option<i64> {
    eval_depth(expr, env, 0)
}

fn eval_depth(expr: &str, env: &mut dyn Env, depth: usize) -> Option<i64> {
    if depth > 8 {
        return None;
    }
    let mut p = P {
        s: expr.as_bytes(),
        i: 0,
        env,
        depth: 0,
        vdepth: depth,
        bad: false,
    };
    p.ws();
    if p.i >= p.s.len() {
        return Some(0);
    }
    let v = p.comma();
    p.ws();
    if p.bad || p.i < p.s.len() {
        return None;
    }
    v
}

type V = Option<i64>;

struct P<'a, 'e> {
    s: &'a [u8],
    i: usize,
    env: &'e mut dyn Env,
    depth: usize,
    vdepth: usize,
    bad: bool,
}

impl P<'_, '_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }
    fn peek(&mut self, tok: &str) -> bool {
        self.ws();
        self.s[self.i..].starts_with(tok.as_bytes())
    }
    fn eat(&mut self, tok: &str) -> bool {
        if self.peek(tok) {
            self.i += tok.len();
            true
        } else {
            false
        }
    }
    fn enter(&mut self) -> bool {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.bad = true;
        }
        !self.bad
    }
    fn ident(&mut self) -> Option<String> {
        self.ws();
        let start = self.i;
        let mut j = self.i;
        while j < self.s.len() && (self.s[j].is_ascii_alphanumeric() || self.s[j] == b'_') {
            if j == start && self.s[j].is_ascii_digit() {
                return None;
            }
            j += 1;
        }
        if j == start {
            return None;
        }
        self.i = j;
        Some(String::from_utf8_lossy(&self.s[start..j]).into_owned())
    }
    fn var(&mut self, name: &str) -> V {
        match self.env.get(name)? {
            None => Some(0),
            Some(text) if text.trim().is_empty() => Some(0),
            Some(text) => eval_depth(&text, self.env, self.vdepth + 1),
        }
    }

    fn comma(&mut self) -> V {
        let mut v = self.assign();
        while !self.bad && self.eat(",") {
            v = self.assign();
        }
        v
    }

    fn assign(&mut self) -> V {
        if !self.enter() {
            return None;
        }
        let save = self.i;
        if let Some(name) = self.ident() {
            self.ws();
            const OPS: [&str; 11] = [
                "<<=", ">>=", "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "=",
            ];
            for op in OPS {
                if self.s[self.i..].starts_with(op.as_bytes())
                    && !(op == "=" && self.s.get(self.i + 1) == Some(&b'='))
                {
                    self.i += op.len();
                    let rhs = self.assign();
                    let v = if op == "=" {
                        rhs
                    } else {
                        let cur = self.var(&name);
                        binop(&op[..op.len() - 1], cur, rhs)
                    };
                    self.env.set(&name, v);
                    self.depth -= 1;
                    return v;
                }
            }
        }
        self.i = save;
        let v = self.ternary();
        self.depth -= 1;
        v
    }

    fn ternary(&mut self) -> V {
        let c = self.binary(0);
        if self.eat("?") {
            let a = self.assign();
            if !self.eat(":") {
                self.bad = true;
                return None;
            }
            let b = self.assign();
            return match c? {
                0 => b,
                _ => a,
            };
        }
        c
    }

    fn binary(&mut self, level: usize) -> V {
        const LEVELS: [&[&str]; 10] = [
            &["||"],
            &["&&"],
            &["|"],
            &["^"],
            &["&"],
            &["==", "!="],
            &["<=", ">=", "<", ">"],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level >= LEVELS.len() {
            return self.power();
        }
        if !self.enter() {
            return None;
        }
        let mut v = self.binary(level + 1);
        'outer: while !self.bad {
            for op in LEVELS[level] {
                if self.peek(op) {
                    // `|` is not `||`, `&` is not `&&`, `<` is not `<<`, `*` is not `**`.
                    let rest = &self.s[self.i + op.len()..];
                    let longer = match *op {
                        "|" => rest.first() == Some(&b'|') || rest.first() == Some(&b'='),
                        "&" => rest.first() == Some(&b'&') || rest.first() == Some(&b'='),
                        "<" => rest.first() == Some(&b'<'),
                        ">" => rest.first() == Some(&b'>'),
                        "*" => rest.first() == Some(&b'*') || rest.first() == Some(&b'='),
                        "+" | "-" | "/" | "%" | "^" | "<<" | ">>" => rest.first() == Some(&b'='),
                        _ => false,
                    };
                    if longer {
                        continue;
                    }
                    self.i += op.len();
                    let r = self.binary(level + 1);
                    v = binop(op, v, r);
                    continue 'outer;
                }
            }
            break;
        }
        self.depth -= 1;
        v
    }

    fn power(&mut self) -> V {
        let b = self.unary();
        if self.eat("**") {
            if !self.enter() {
                return None;
            }
            let e = self.power();
            self.depth -= 1;
            return binop("**", b, e);
        }
        b
    }

    fn unary(&mut self) -> V {
        if !self.enter() {
            return None;
        }
        let v = if self.peek("++") || self.peek("--") {
            let inc = if self.eat("++") {
                1
            } else {
                self.eat("--");
                -1
            };
            let save = self.i;
            if let Some(name) = self.ident() {
                let v = self.var(&name).map(|x| x.wrapping_add(inc));
                self.env.set(&name, v);
                v
            } else {
                self.i = save;
                // `--5` is `-(-5)`, `++5` is `+(+5)`.
                self.unary()
            }
        } else if self.eat("-") {
            self.unary().map(|x| x.wrapping_neg())
        } else if self.eat("+") {
            self.unary()
        } else if self.eat("!") {
            self.unary().map(|x| i64::from(x == 0))
        } else if self.eat("~") {
            self.unary().map(|x| !x)
        } else {
            self.postfix()
        };
        self.depth -= 1;
        v
    }

    fn postfix(&mut self) -> V {
        self.ws();
        if self.eat("(") {
            let v = self.comma();
            if !self.eat(")") {
                self.bad = true;
            }
            return v;
        }
        if let Some(c) = self.s.get(self.i).copied() {
            if c.is_ascii_digit() {
                return self.number();
            }
        }
        let Some(name) = self.ident() else {
            self.bad = true;
            return None;
        };
        if self.peek("[") {
            // An array element: its index is an expression too.
            let start = self.i + 1;
            let mut depth = 0usize;
            let mut end = None;
            while self.i < self.s.len() {
                match self.s[self.i] {
                    b'[' => depth += 1,
                    b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = Some(self.i);
                            self.i += 1;
                            break;
                        }
                    }
                    _ => {}
                }
                self.i += 1;
            }
            let end = end?;
            if self.peek("=") && !self.peek("==") || self.peek("++") || self.peek("--") {
                // Assigning an element: not modelled.
                return None;
            }
            let inner = String::from_utf8_lossy(&self.s[start..end]).into_owned();
            let idx = eval_depth(&inner, self.env, self.vdepth + 1)?;
            return match self.env.get_index(&name, idx)? {
                None => Some(0),
                Some(text) if text.trim().is_empty() => Some(0),
                Some(text) => eval_depth(&text, self.env, self.vdepth + 1),
            };
        }
        if self.eat("++") {
            let v = self.var(&name);
            self.env.set(&name, v.map(|x| x.wrapping_add(1)));
            return v;
        }
        if self.peek("--") {
            self.i += 2;
            let v = self.var(&name);
            self.env.set(&name, v.map(|x| x.wrapping_sub(1)));
            return v;
        }
        self.var(&name)
    }

    fn number(&mut self) -> V {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric()
                || self.s[self.i] == b'#'
                || self.s[self.i] == b'_'
                || self.s[self.i] == b'@')
        {
            self.i += 1;
        }
        let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        let v = parse_number(&text);
        if v.is_none() {
            self.bad = true;
        }
        v
    }
}

fn parse_number(t: &str) -> Option<i64> {
    if let Some((base, digits)) = t.split_once('#') {
        let base: u32 = base.parse().ok()?;
        if !(2..=64).contains(&base) {
            return None;
        }
        let mut v: i64 = 0;
        for c in digits.chars() {
            let d = match c {
                '0'..='9' => c as u32 - '0' as u32,
                'a'..='z' => c as u32 - 'a' as u32 + 10,
                'A'..='Z' if base <= 36 => c as u32 - 'A' as u32 + 10,
                'A'..='Z' => c as u32 - 'A' as u32 + 36,
                '@' => 62,
                '_' => 63,
                _ => return None,
            };
            if d >= base {
                return None;
            }
            v = v.wrapping_mul(i64::from(base)).wrapping_add(i64::from(d));
        }
        return Some(v);
    }
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok().map(|v| v as i64);
    }
    if t.len() > 1 && t.starts_with('0') {
        return u64::from_str_radix(&t[1..], 8).ok().map(|v| v as i64);
    }
    t.parse::<u64>().ok().map(|v| v as i64)
}

fn binop(op: &str, a: V, b: V) -> V {
    let (a, b) = (a?, b?);
    Some(match op {
        "||" => i64::from(a != 0 || b != 0),
        "&&" => i64::from(a != 0 && b != 0),
        "|" => a | b,
        "^" => a ^ b,
        "&" => a & b,
        "==" => i64::from(a == b),
        "!=" => i64::from(a != b),
        "<=" => i64::from(a <= b),
        ">=" => i64::from(a >= b),
        "<" => i64::from(a < b),
        ">" => i64::from(a > b),
        "<<" => a.wrapping_shl((b & 63) as u32),
        ">>" => a.wrapping_shr((b & 63) as u32),
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" => {
            if b == 0 {
                return None;
            }
            a.wrapping_div(b)
        }
        "%" => {
            if b == 0 {
                return None;
            }
            a.wrapping_rem(b)
        }
        "**" => {
            if b < 0 {
                return None;
            }
            let mut r: i64 = 1;
            let mut base = a;
            let mut e = b;
            while e > 0 {
                if e & 1 == 1 {
                    r = r.wrapping_mul(base);
                }
                base = base.wrapping_mul(base);
                e >>= 1;
            }
            r
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct M(HashMap<String, Option<String>>);
    impl Env for M {
        fn get(&mut self, name: &str) -> Option<Option<String>> {
            match self.0.get(name) {
                Some(Some(v)) => Some(Some(v.clone())),
                Some(None) => None,
                None => Some(None),
            }
        }
        fn set(&mut self, name: &str, value: Option<i64>) {
            self.0.insert(name.into(), value.map(|v| v.to_string()));
        }
    }

    #[test]
    fn evaluates_like_bash() {
        let mut m = M(HashMap::new());
        m.0.insert("N".into(), Some("4".into()));
        m.0.insert("E".into(), Some("N*2".into()));
        m.0.insert("U".into(), None);
        let cases: [(&str, Option<i64>); 16] = [
            ("1+2*3", Some(7)),
            ("(1+2)*3", Some(9)),
            ("2**10", Some(1024)),
            ("-N + 1", Some(-3)),
            ("N / 3", Some(1)),
            ("N % 3", Some(1)),
            ("E + 1", Some(9)),
            ("N > 3 && N < 5", Some(1)),
            ("N == 4 ? 10 : 20", Some(10)),
            ("0x10 + 010 + 2#101", Some(29)),
            ("UNSET + 1", Some(1)),
            ("U + 1", None),
            ("1 / 0", None),
            ("1 +", None),
            ("", Some(0)),
            ("3 - -2", Some(5)),
        ];
        for (e, want) in cases {
            assert_eq!(eval(e, &mut m), want, "{e}");
        }
        assert_eq!(eval("X = N + 1, X * 2", &mut m), Some(10));
        assert_eq!(m.0.get("X"), Some(&Some("5".into())));
        assert_eq!(eval("X++", &mut m), Some(5));
        assert_eq!(eval("X", &mut m), Some(6));
        assert_eq!(eval("X += 4", &mut m), Some(10));
        assert_eq!(eval(&"(".repeat(10_000), &mut m), None);
    }
}
