//! Words: lexing a word node into literal runs and expansions, brace expansion, parameter
//! expansion, word splitting with the default IFS, globbing decided by the filesystem
//! (unknown), quote removal.

use super::brace::{self, Atom};
use super::run::{
    is_name, unknown_field, Ctx, Ev, Params, State, Unit, HOLE, MAX_BRACE, MAX_BYTES, MAX_REC,
};
use super::*;
use std::rc::Rc;
use tree_sitter::Node;

/// A value written into a synthetic text as a placeholder word.
#[derive(Clone, Debug)]
pub(super) enum Hole {
    Piece(Piece),
    Choices(Vec<Vec<Piece>>),
}

/// Variables bash sets itself in every shell (their values are the machine's).
pub(super) const SHELL_SET: &[&str] = &[
    "PWD",
    "OLDPWD",
    "SHLVL",
    "HOSTNAME",
    "HOSTTYPE",
    "OSTYPE",
    "MACHTYPE",
    "BASH",
    "BASHPID",
    "BASH_VERSION",
    "BASH_VERSINFO",
    "BASH_SOURCE",
    "BASH_LINENO",
    "BASH_COMMAND",
    "BASH_SUBSHELL",
    "BASH_ARGC",
    "BASH_ARGV",
    "BASH_EXECUTION_STRING",
    "FUNCNAME",
    "RANDOM",
    "SRANDOM",
    "SECONDS",
    "LINENO",
    "UID",
    "EUID",
    "PPID",
    "GROUPS",
    "IFS",
    "PS4",
    "OPTIND",
    "OPTERR",
    "PIPESTATUS",
    "EPOCHSECONDS",
    "EPOCHREALTIME",
    "PATH",
    "_",
];

/// A lexed part of a word.
#[derive(Clone, Debug)]
pub(super) enum Tok<'n> {
    /// Literal text. `split`: literal text of a `${V:-a b}` word, split like an expansion.
    Lit {
        text: String,
        quoted: bool,
        split: bool,
        origin: Option<Span>,
    },
    Param {
        node: Node<'n>,
        quoted: bool,
    },
    Cmd {
        node: Node<'n>,
        quoted: bool,
    },
    Arith {
        node: Node<'n>,
        quoted: bool,
    },
    /// A value already expanded (a placeholder, a tilde).
    Val {
        choices: Vec<Vec<Piece>>,
        quoted: bool,
    },
}

#[derive(Clone, Debug)]
pub(super) enum SegKind {
    Pieces(Vec<Piece>),
    /// Separate elements (`"$@"`, `${A[@]}`).
    List(Vec<Vec<Piece>>),
    /// An unknown number of fields.
    UnknownList(Span),
}

#[derive(Clone, Debug)]
pub(super) struct Seg {
    pub(super) kind: SegKind,
    pub(super) quoted: bool,
    /// Subject to word splitting (an unquoted expansion).
    pub(super) split: bool,
}

/// What a parameter names.
enum RVal {
    Unset,
    Scalar(Vec<Vec<Piece>>),
    List { elems: Vec<Field>, star: bool },
    Unknown,
    UnknownList { star: bool },
}

/// Appends a piece, joining it to the last one when both are text that stands together.
pub(super) fn push_piece(cur: &mut Vec<Piece>, p: Piece) {
    if let Piece::Text { text, origin } = &p {
        if text.is_empty() {
            return;
        }
        if let Some(Piece::Text {
            text: t0,
            origin: o0,
        }) = cur.last_mut()
        {
            let join = match (o0.as_mut(), origin) {
                (None, None) => true,
                (Some(a), Some(b)) => a.source == b.source && a.range.end == b.range.start,
                _ => false,
            };
            if join {
                t0.push_str(text);
                if let (Some(a), Some(b)) = (o0.as_mut(), origin) {
                    a.range.end = b.range.end;
                }
                return;
            }
        }
    }
    cur.push(p);
}

fn text_piece(text: &str, origin: Option<Span>) -> Piece {
    Piece::Text {
        text: text.to_owned(),
        origin,
    }
}

fn sub_origin(origin: &Option<Span>, text_len: usize, r: std::ops::Range<usize>) -> Option<Span> {
    let o = origin.as_ref()?;
    if o.range.len() != text_len {
        return None;
    }
    Some(Span {
        source: o.source,
        range: o.range.start + r.start..o.range.start + r.end,
    })
}

/// `NAME=value` in a field: the name and the value's pieces.
pub(super) fn split_assignment(f: &Field) -> Option<(String, Field)> {
    let [one] = f.choices.as_slice() else {
        return None;
    };
    let Some(Piece::Text { text, origin }) = one.first() else {
        return None;
    };
    let eq = text.find('=')?;
    let name = &text[..eq];
    if !is_name(name) {
        return None;
    }
    let mut rest = Vec::new();
    let after = &text[eq + 1..];
    push_piece(
        &mut rest,
        text_piece(after, sub_origin(origin, text.len(), eq + 1..text.len())),
    );
    for p in &one[1..] {
        push_piece(&mut rest, p.clone());
    }
    Some((
        name.to_owned(),
        Field {
            choices: vec![rest],
            word: f.word.clone(),
        },
    ))
}

/// Shell pattern matching (`*`, `?`, `[...]`, backslash escapes).
pub(super) fn fnmatch(pat: &str, s: &str) -> bool {
    let p: Vec<char> = pat.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    let mut steps = 0usize;
    while ti < t.len() {
        steps += 1;
        if steps > 1_000_000 {
            return false;
        }
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ti));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ti += 1;
                    continue;
                }
                '[' => {
                    if let Some((ok, next)) = bracket(&p, pi, t[ti]) {
                        if ok {
                            pi = next;
                            ti += 1;
                            continue;
                        }
                    } else if t[ti] == '[' {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
                '\\' if pi + 1 < p.len() => {
                    if p[pi + 1] == t[ti] {
                        pi += 2;
                        ti += 1;
                        continue;
                    }
                }
                c => {
                    if c == t[ti] {
                        pi += 1;
                        ti += 1;
                        continue;
                    }
                }
            }
        }
        match star {
            Some((sp, st)) => {
                pi = sp + 1;
                ti = st + 1;
                star = Some((sp, st + 1));
            }
            None => return false,
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// A bracket expression at `p[i]`: whether `c` matches and where it ends; `None` when the
/// bracket is not closed (a literal `[`).
fn bracket(p: &[char], i: usize, c: char) -> Option<(bool, usize)> {
    let mut j = i + 1;
    let neg = matches!(p.get(j), Some('!' | '^'));
    if neg {
        j += 1;
    }
    let mut hit = false;
    let mut first = true;
    while j < p.len() {
        if p[j] == ']' && !first {
            return Some((hit != neg, j + 1));
        }
        first = false;
        let lo = p[j];
        if p.get(j + 1) == Some(&'-') && p.get(j + 2).is_some_and(|x| *x != ']') {
            let hi = p[j + 2];
            if lo <= c && c <= hi {
                hit = true;
            }
            j += 3;
        } else {
            if lo == c {
                hit = true;
            }
            j += 1;
        }
    }
    None
}

/// Builds fields out of segments: IFS splitting of unquoted expansions, glob detection.
struct Splitter<'s> {
    /// The source texts, to tell an arithmetic expansion by its origin.
    texts: &'s [&'s str],
    args: Vec<Arg>,
    cur: Vec<Piece>,
    exists: bool,
    glob: bool,
    bracket: bool,
    noglob: bool,
    word: Span,
    /// An unknown number of fields was produced; any text after it in the word makes the
    /// whole word unknown.
    after_unknown: bool,
    whole_unknown: bool,
    /// The characters unquoted expansions split at: the default IFS, or an IFS of white space
    /// only (`IFS=$'\n\t'`, bash's "strict mode"), where runs of them separate fields.
    ifs: String,
}

impl Splitter<'_> {
    fn content(&mut self) {
        if self.after_unknown {
            self.whole_unknown = true;
        }
    }
    fn glob_scan(&mut self, s: &str) {
        if self.noglob {
            return;
        }
        for c in s.chars() {
            match c {
                '*' | '?' => self.glob = true,
                '[' => self.bracket = true,
                ']' if self.bracket => self.glob = true,
                _ => {}
            }
        }
    }
    fn push(&mut self, p: Piece, quoted: bool) {
        if let Piece::Text { text, .. } = &p {
            if !quoted {
                let t = text.clone();
                self.glob_scan(&t);
            }
            if text.is_empty() {
                if quoted {
                    self.exists = true;
                }
                return;
            }
        }
        self.content();
        self.exists = true;
        push_piece(&mut self.cur, p);
    }
    fn finish(&mut self) {
        if self.exists {
            let cur = std::mem::take(&mut self.cur);
            if self.glob {
                self.args.push(Arg::Unknown(self.word.clone()));
            } else {
                self.args.push(Arg::Field(Field {
                    choices: vec![cur],
                    word: self.word.clone(),
                }));
            }
        }
        self.cur.clear();
        self.exists = false;
        self.glob = false;
        self.bracket = false;
    }
    fn unknown_count(&mut self, origin: &Span) {
        if self.after_unknown {
            self.whole_unknown = true;
            return;
        }
        if self.exists && !self.cur.is_empty() {
            self.cur.push(Piece::Unknown {
                origin: origin.clone(),
            });
            self.finish();
        } else {
            self.cur.clear();
            self.exists = false;
        }
        self.args.push(Arg::Unknown(self.word.clone()));
        self.after_unknown = true;
    }
    /// Whether an unknown piece is the value of an arithmetic expansion (its origin is one).
    fn is_arithmetic(&self, origin: &Span) -> bool {
        self.texts
            .get(origin.source.0 as usize)
            .and_then(|t| t.get(origin.range.clone()))
            .is_some_and(|t| {
                (t.starts_with("$((") && t.ends_with("))"))
                    || (t.starts_with("$[") && t.ends_with(']'))
            })
    }
    /// Unquoted expansion text: split at spaces, tabs and newlines.
    fn split_pieces(&mut self, ps: &[Piece]) {
        for p in ps {
            match p {
                Piece::Text { text, origin } => {
                    let mut start = None;
                    for (i, c) in text.char_indices() {
                        if self.ifs.contains(c) {
                            if let Some(s) = start.take() {
                                self.push(
                                    text_piece(&text[s..i], sub_origin(origin, text.len(), s..i)),
                                    false,
                                );
                            }
                            self.finish();
                        } else if start.is_none() {
                            start = Some(i);
                        }
                    }
                    if let Some(s) = start {
                        self.push(
                            text_piece(&text[s..], sub_origin(origin, text.len(), s..text.len())),
                            false,
                        );
                    }
                }
                Piece::Runtime { .. } => self.push(p.clone(), false),
                // A number not known (`$((1024 + RANDOM % 64511))`, kept in a variable): one
                // word whatever its value, since digits and `-` are not white space.
                Piece::Unknown { origin } if self.is_arithmetic(origin) => {
                    self.push(p.clone(), false)
                }
                Piece::Unknown { origin } => {
                    let o = origin.clone();
                    self.unknown_count(&o);
                }
            }
        }
    }
    fn seg(&mut self, s: &Seg) {
        match &s.kind {
            SegKind::Pieces(ps) => {
                if s.quoted {
                    self.exists = true;
                    if !ps.is_empty() {
                        self.content();
                    }
                    for p in ps {
                        self.push(p.clone(), true);
                    }
                } else if s.split {
                    self.split_pieces(ps);
                } else {
                    for p in ps {
                        match p {
                            Piece::Unknown { origin } => {
                                let o = origin.clone();
                                self.unknown_count(&o);
                            }
                            _ => self.push(p.clone(), false),
                        }
                    }
                }
            }
            SegKind::List(elems) => {
                for (i, e) in elems.iter().enumerate() {
                    if s.quoted {
                        if i > 0 {
                            self.exists = true;
                            self.finish();
                        }
                        self.exists = true;
                        self.content();
                        for p in e {
                            self.push(p.clone(), true);
                        }
                    } else {
                        if i > 0 {
                            self.finish();
                        }
                        self.split_pieces(e);
                    }
                }
            }
            SegKind::UnknownList(span) => {
                let sp = span.clone();
                self.unknown_count(&sp);
            }
        }
    }
}

impl<'a, 't> Ev<'a, 't> {
    // ---- lexing -------------------------------------------------------------------------

    /// Literal text of a word: verbatim runs keep their origin; an escaped character is a
    /// quoted one-character literal.
    #[allow(clippy::too_many_arguments)]
    fn lit(
        &mut self,
        u: &Unit<'t>,
        range: std::ops::Range<usize>,
        quoted: bool,
        double: bool,
        raw: bool,
        split: bool,
        toks: &mut Vec<Tok<'_>>,
    ) {
        let text = u.src(range.clone());
        let base = range.start;
        let push = |ev: &mut Self, s: &str, at: usize, q: bool, toks: &mut Vec<Tok<'_>>| {
            if s.is_empty() {
                return;
            }
            let origin = u.exact(base + at..base + at + s.len());
            ev.lit_holes(u, s, origin, q, split && !q, toks);
        };
        if raw || !text.contains('\\') {
            push(self, text, 0, quoted, toks);
            return;
        }
        let bytes = text.as_bytes();
        let mut run = 0;
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b'\\' && i + 1 < bytes.len() {
                let next_len = text[i + 1..]
                    .chars()
                    .next()
                    .map(char::len_utf8)
                    .unwrap_or(1);
                let next = &text[i + 1..i + 1 + next_len];
                let escape = if double {
                    matches!(next, "$" | "`" | "\"" | "\\" | "\n")
                        || (next == "}" && self.in_parameter_word > 0)
                } else {
                    true
                };
                if escape {
                    push(self, &text[run..i], run, quoted, toks);
                    if next != "\n" {
                        push(self, next, i + 1, true, toks);
                    }
                    i += 1 + next_len;
                    run = i;
                    continue;
                }
            }
            i += 1;
        }
        push(self, &text[run..], run, quoted, toks);
    }

    /// Literal text that may hold placeholder words of a synthetic text.
    fn lit_holes(
        &mut self,
        u: &Unit<'t>,
        s: &str,
        origin: Option<Span>,
        quoted: bool,
        split: bool,
        toks: &mut Vec<Tok<'_>>,
    ) {
        if u.holes.is_empty() || !s.contains(HOLE) {
            toks.push(Tok::Lit {
                text: s.to_owned(),
                quoted,
                split,
                origin,
            });
            return;
        }
        let mut rest = s;
        while let Some(p) = rest.find(HOLE) {
            let after = &rest[p + HOLE.len()..];
            let digits: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
            let hole = digits
                .parse::<usize>()
                .ok()
                .filter(|_| after[digits.len()..].starts_with('_'))
                .and_then(|n| u.holes.get(n).cloned());
            let Some(hole) = hole else {
                toks.push(Tok::Lit {
                    text: rest[..p + HOLE.len()].to_owned(),
                    quoted,
                    split,
                    origin: None,
                });
                rest = after;
                continue;
            };
            if p > 0 {
                toks.push(Tok::Lit {
                    text: rest[..p].to_owned(),
                    quoted,
                    split,
                    origin: None,
                });
            }
            let choices = match hole {
                Hole::Piece(p) => vec![vec![p]],
                Hole::Choices(c) => c,
            };
            toks.push(Tok::Val { choices, quoted });
            rest = &after[digits.len() + 1..];
        }
        if !rest.is_empty() {
            toks.push(Tok::Lit {
                text: rest.to_owned(),
                quoted,
                split,
                origin: None,
            });
        }
        let _ = origin;
    }

    /// The parts of a word node. `quoted`: inside double quotes. `split`: literal text is
    /// split (the word of an unquoted `${V:-a b}`).
    pub(super) fn lex<'u>(
        &mut self,
        u: &Unit<'t>,
        n: Node<'u>,
        quoted: bool,
        split: bool,
        toks: &mut Vec<Tok<'u>>,
    ) {
        if self.rec >= MAX_REC || self.deep() {
            self.trunc();
            toks.push(Tok::Val {
                choices: vec![vec![Piece::Unknown {
                    origin: u.span(n.byte_range()),
                }]],
                quoted,
            });
            return;
        }
        self.rec += 1;
        self.lex_inner(u, n, quoted, split, toks);
        self.rec -= 1;
    }

    fn lex_inner<'u>(
        &mut self,
        u: &Unit<'t>,
        n: Node<'u>,
        quoted: bool,
        split: bool,
        toks: &mut Vec<Tok<'u>>,
    ) {
        match n.kind() {
            // Inside double quotes (`"${V:-'a b'}"`) single quotes are literal.
            "raw_string" if quoted => self.lit(u, n.byte_range(), true, true, false, false, toks),
            "raw_string" => {
                let r = n.byte_range();
                let inner =
                    (r.start + 1).min(r.end)..r.end.saturating_sub(1).max(r.start + 1).min(r.end);
                toks.push(Tok::Lit {
                    text: String::new(),
                    quoted: true,
                    split: false,
                    origin: None,
                });
                self.lit(u, inner, true, false, true, false, toks);
            }
            "string" => {
                // `""` is a word; `"$@"` of no parameters is none.
                if !has_at_expansion(u, n) {
                    toks.push(Tok::Lit {
                        text: String::new(),
                        quoted: true,
                        split: false,
                        origin: None,
                    });
                }
                let r = n.byte_range();
                let end = r.end.saturating_sub(1).max(r.start + 1).min(r.end);
                let mut pos = (r.start + 1).min(end);
                let mut c = n.walk();
                let kids: Vec<Node> = n.named_children(&mut c).collect();
                for k in kids {
                    if k.kind() == "string_content" {
                        continue;
                    }
                    if k.start_byte() > pos {
                        self.lit(u, pos..k.start_byte(), true, true, false, false, toks);
                    }
                    self.lex(u, k, true, false, toks);
                    pos = k.end_byte().max(pos);
                }
                if end > pos {
                    self.lit(u, pos..end, true, true, false, false, toks);
                }
            }
            "translated_string" => match n.named_child(0) {
                Some(s) => self.lex(u, s, quoted, split, toks),
                None => self.lit(u, n.byte_range(), quoted, quoted, false, split, toks),
            },
            "ansi_c_string" => {
                let src = u.node_text(n);
                let inner = src
                    .strip_prefix("$'")
                    .and_then(|s| s.strip_suffix('\''))
                    .unwrap_or("");
                let decoded = ansi_c(inner);
                let origin = if decoded == inner {
                    u.exact(n.start_byte() + 2..n.end_byte().saturating_sub(1))
                } else {
                    None
                };
                toks.push(Tok::Lit {
                    text: decoded,
                    quoted: true,
                    split: false,
                    origin,
                });
            }
            "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion" => {
                // The grammar may put the whitespace before `$` into the node (`" $B"`).
                let r = n.byte_range();
                let lead = expansion_start(u, n);
                if lead > r.start {
                    self.lit(u, r.start..lead, quoted, quoted, false, split, toks);
                }
                toks.push(match n.kind() {
                    "simple_expansion" | "expansion" => Tok::Param { node: n, quoted },
                    "arithmetic_expansion" => Tok::Arith { node: n, quoted },
                    _ => Tok::Cmd { node: n, quoted },
                });
            }
            "concatenation" | "number" if n.named_child_count() > 0 => {
                let mut pos = n.start_byte();
                let mut c = n.walk();
                let kids: Vec<Node> = n.children(&mut c).collect();
                for k in kids {
                    if k.start_byte() > pos {
                        self.lit(u, pos..k.start_byte(), quoted, quoted, false, split, toks);
                    }
                    self.lex(u, k, quoted, split, toks);
                    pos = k.end_byte().max(pos);
                }
                if n.end_byte() > pos {
                    self.lit(u, pos..n.end_byte(), quoted, quoted, false, split, toks);
                }
            }
            _ => self.lit(u, n.byte_range(), quoted, quoted, false, split, toks),
        }
    }

    // ---- expansion ----------------------------------------------------------------------

    /// The arguments a word gives: brace expansion (when `brace`), expansions, splitting,
    /// globbing, quote removal.
    pub(super) fn expand_word(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        st: &mut State<'t>,
        cx: &Ctx,
        brace: bool,
    ) -> Vec<Arg> {
        self.expand_group(u, &[n], st, cx, brace)
    }

    /// Word nodes that are one shell word (the grammar splits `"a"\ "b"` in two nodes): the
    /// text between them is literal. Choices that give different numbers of arguments make
    /// the count unknown.
    pub(super) fn expand_group(
        &mut self,
        u: &Rc<Unit<'t>>,
        nodes: &[Node<'_>],
        st: &mut State<'t>,
        cx: &Ctx,
        brace: bool,
    ) -> Vec<Arg> {
        let word = match (nodes.first(), nodes.last()) {
            (Some(f), Some(l)) => u.span(f.start_byte()..l.end_byte()),
            _ => return Vec::new(),
        };
        let alts = self.expand_alternatives(u, nodes, st, cx, brace);
        merge_alts(alts, &word)
    }

    /// The arguments of a word in each of its alternatives (one unless choices give
    /// different numbers of arguments: `$LAUNCHER` set to `torchrun` or to
    /// `python -m torch.distributed.run`).
    pub(super) fn expand_alternatives(
        &mut self,
        u: &Rc<Unit<'t>>,
        nodes: &[Node<'_>],
        st: &mut State<'t>,
        cx: &Ctx,
        brace: bool,
    ) -> Vec<Vec<Arg>> {
        let (Some(first), Some(last)) = (nodes.first(), nodes.last()) else {
            return vec![Vec::new()];
        };
        let word = u.span(first.start_byte()..last.end_byte());
        // Most words are plain text (`--num-layers`, `96`): one field, as written.
        if let [n] = nodes {
            if matches!(n.kind(), "word" | "number") && n.named_child_count() == 0 {
                let text = u.node_text(*n);
                let plain = !text.is_empty()
                    && !text.contains(['\\', '{', '~', '*', '?', '[', '$', '`', '\'', '"'])
                    && (u.holes.is_empty() || !text.contains(HOLE));
                if plain {
                    let piece = text_piece(text, u.exact(n.byte_range()));
                    return vec![vec![Arg::Field(Field {
                        choices: vec![vec![piece]],
                        word,
                    })]];
                }
            }
        }
        let mut toks = Vec::new();
        let mut pos = first.start_byte();
        for n in nodes {
            if n.start_byte() > pos {
                self.lit(
                    u,
                    pos..n.start_byte(),
                    false,
                    false,
                    false,
                    false,
                    &mut toks,
                );
            }
            self.lex(u, *n, false, false, &mut toks);
            pos = n.end_byte().max(pos);
        }
        self.tilde(&mut toks, st, false);
        let seqs = if brace
            && toks
                .iter()
                .any(|t| matches!(t, Tok::Lit { quoted: false, text, .. } if text.contains('{')))
        {
            match self.braces(&toks) {
                Some(s) => s,
                None => {
                    self.trunc();
                    return vec![vec![Arg::Unknown(word)]];
                }
            }
        } else {
            vec![toks]
        };
        // The word's arguments in each combination of choices, merged where the
        // combinations give the same number of arguments.
        let mut combos: Vec<Vec<Arg>> = vec![Vec::new()];
        for toks in seqs {
            let alts = self.segs(u, &toks, st, cx);
            let mut results: Vec<Vec<Arg>> = Vec::new();
            for alt in &alts {
                let r = self.split(alt, &word, st);
                if !results.contains(&r) {
                    results.push(r);
                }
            }
            let mut options = if results.len() == 1 {
                results
            } else {
                match try_merge_alts(&results, &word) {
                    Some(merged) => vec![merged],
                    None => results,
                }
            };
            if options.len() == 1 {
                let o = options.pop().unwrap_or_default();
                if let [c] = combos.as_mut_slice() {
                    c.extend(o);
                } else {
                    for c in combos.iter_mut() {
                        c.extend(o.iter().cloned());
                    }
                }
                continue;
            }
            if combos.len() * options.len() > MAX_CHOICES {
                return vec![vec![Arg::Unknown(word)]];
            }
            let mut next = Vec::new();
            for c in &combos {
                for o in &options {
                    let mut x = c.clone();
                    x.extend(o.iter().cloned());
                    next.push(x);
                }
            }
            combos = next;
        }
        combos
    }

    /// A word expanded without splitting or globbing (an assignment's value, a `case`
    /// subject): one field.
    pub(super) fn scalar_word(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Field {
        let mut toks = Vec::new();
        self.lex(u, n, false, false, &mut toks);
        self.join_toks(u, &toks, u.span(n.byte_range()), st, cx)
    }

    /// An assignment's value: tilde expansion, then as [`Self::scalar_word`].
    pub(super) fn assign_value(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Field {
        let mut toks = Vec::new();
        self.lex(u, n, false, false, &mut toks);
        self.tilde(&mut toks, st, true);
        self.join_toks(u, &toks, u.span(n.byte_range()), st, cx)
    }

    fn join_toks(
        &mut self,
        u: &Rc<Unit<'t>>,
        toks: &[Tok<'_>],
        word: Span,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Field {
        let alts = self.segs(u, toks, st, cx);
        let mut choices: Vec<Vec<Piece>> = Vec::new();
        for alt in alts {
            let mut c = Vec::new();
            for s in alt {
                match s.kind {
                    SegKind::Pieces(ps) => {
                        for p in ps {
                            push_piece(&mut c, p);
                        }
                    }
                    SegKind::List(elems) => {
                        for (i, e) in elems.into_iter().enumerate() {
                            if i > 0 {
                                push_piece(&mut c, text_piece(" ", None));
                            }
                            for p in e {
                                push_piece(&mut c, p);
                            }
                        }
                    }
                    SegKind::UnknownList(origin) => c.push(Piece::Unknown { origin }),
                }
            }
            if !choices.contains(&c) {
                choices.push(c);
            }
        }
        if choices.is_empty() {
            choices.push(Vec::new());
        }
        if choices.len() > MAX_CHOICES {
            self.trunc();
            return unknown_field(word);
        }
        Field { choices, word }
    }

    /// `~` and `~/...` at the start of a word: `$HOME` when known, else unknown.
    /// Tilde prefixes: `~` and `~/...` at the start of a word, and after an unquoted `:` in
    /// an assignment (`PATH=$PATH:~/bin`): `$HOME` when known, else unknown (`~user` too).
    fn tilde(&mut self, toks: &mut Vec<Tok<'_>>, st: &State<'t>, assignment: bool) {
        let starts = |i: usize, t: &Tok<'_>| match t {
            Tok::Lit {
                text,
                quoted: false,
                ..
            } => (i == 0 && text.starts_with('~')) || (assignment && text.contains(":~")),
            _ => false,
        };
        if !toks.iter().enumerate().any(|(i, t)| starts(i, t)) {
            return;
        }
        let home = match st.vars.get("HOME").map(|v| &v.value) {
            Some(Value::Scalar(f)) => f.known(),
            _ => None,
        };
        let n = toks.len();
        let old = std::mem::take(toks);
        for (i, t) in old.into_iter().enumerate() {
            let Tok::Lit {
                text,
                quoted: false,
                split,
                origin,
            } = t
            else {
                toks.push(t);
                continue;
            };
            let mut last = 0;
            let mut k = 0;
            while k < text.len() {
                let at_start =
                    (k == 0 && i == 0) || (assignment && k > 0 && text[..k].ends_with(':'));
                if !(at_start && text[k..].starts_with('~')) {
                    k += text[k..].chars().next().map(char::len_utf8).unwrap_or(1);
                    continue;
                }
                let stop = text[k + 1..]
                    .find(|c| c == '/' || (assignment && c == ':'))
                    .map(|p| k + 1 + p)
                    .unwrap_or(text.len());
                if stop == text.len() && i + 1 < n {
                    // `~$X`: a quoted or expanded character in the prefix; not expanded.
                    k += 1;
                    continue;
                }
                if k > last {
                    toks.push(Tok::Lit {
                        text: text[last..k].to_owned(),
                        quoted: false,
                        split,
                        origin: sub_origin(&origin, text.len(), last..k),
                    });
                }
                let user = &text[k + 1..stop];
                let val = match (&home, user.is_empty()) {
                    (Some(h), true) => vec![vec![text_piece(h, None)]],
                    _ => vec![vec![Piece::Unknown {
                        origin: sub_origin(&origin, text.len(), k..stop).unwrap_or(Span {
                            source: self.script,
                            range: 0..0,
                        }),
                    }]],
                };
                toks.push(Tok::Val {
                    choices: val,
                    quoted: true,
                });
                last = stop;
                k = stop;
            }
            if text.len() > last || last == 0 {
                toks.push(Tok::Lit {
                    text: text[last..].to_owned(),
                    quoted: false,
                    split,
                    origin: sub_origin(&origin, text.len(), last..text.len()),
                });
            }
        }
    }

    fn braces<'u>(&mut self, toks: &[Tok<'u>]) -> Option<Vec<Vec<Tok<'u>>>> {
        let mut atoms: Vec<Atom<Tok<'u>>> = Vec::new();
        for t in toks {
            match t {
                Tok::Lit {
                    text,
                    quoted: false,
                    split: false,
                    origin,
                } => {
                    for (i, c) in text.char_indices() {
                        let o = sub_origin(origin, text.len(), i..i + c.len_utf8())
                            .map(|s| s.range.start);
                        atoms.push(Atom::Ch(c, o));
                    }
                }
                other => atoms.push(Atom::Other(other.clone())),
            }
        }
        let source = toks.iter().find_map(|t| match t {
            Tok::Lit {
                origin: Some(o), ..
            } => Some(o.source),
            _ => None,
        });
        let words = brace::expand(&atoms, MAX_BRACE)?;
        let mut out = Vec::new();
        for w in words {
            let mut seq: Vec<Tok<'u>> = Vec::new();
            for a in w {
                match a {
                    Atom::Ch(c, o) => {
                        let mut buf = [0u8; 4];
                        let s = c.encode_utf8(&mut buf);
                        let origin = match (o, source) {
                            (Some(at), Some(src)) => Some(Span {
                                source: src,
                                range: at..at + s.len(),
                            }),
                            _ => None,
                        };
                        if let Some(Tok::Lit {
                            text,
                            quoted: false,
                            split: false,
                            origin: lo,
                        }) = seq.last_mut()
                        {
                            let join = match (lo.as_ref(), origin.as_ref()) {
                                (None, None) => true,
                                (Some(a), Some(b)) => a.range.end == b.range.start,
                                _ => false,
                            };
                            if join {
                                text.push_str(s);
                                if let (Some(a), Some(b)) = (lo.as_mut(), origin) {
                                    a.range.end = b.range.end;
                                }
                                continue;
                            }
                        }
                        seq.push(Tok::Lit {
                            text: s.to_owned(),
                            quoted: false,
                            split: false,
                            origin,
                        });
                    }
                    Atom::Other(t) => seq.push(t),
                }
            }
            out.push(seq);
        }
        Some(out)
    }

    /// The segments of a token sequence, one list per combination of choices.
    pub(super) fn segs(
        &mut self,
        u: &Rc<Unit<'t>>,
        toks: &[Tok<'_>],
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Vec<Vec<Seg>> {
        if self.deep() {
            return vec![vec![Seg {
                kind: SegKind::UnknownList(u.span(0..0)),
                quoted: false,
                split: true,
            }]];
        }
        let mut alts: Vec<Vec<Seg>> = vec![Vec::with_capacity(toks.len())];
        for t in toks {
            // Literal text: the same segment in every combination.
            if let Tok::Lit {
                text,
                quoted,
                split,
                origin,
            } = t
            {
                let seg = Seg {
                    kind: SegKind::Pieces(vec![text_piece(text, origin.clone())]),
                    quoted: *quoted,
                    split: *split,
                };
                if let [one] = alts.as_mut_slice() {
                    one.push(seg);
                } else {
                    for a in alts.iter_mut() {
                        a.push(seg.clone());
                    }
                }
                continue;
            }
            let (next, quoted, span) = match t {
                Tok::Lit {
                    text,
                    quoted,
                    split,
                    origin,
                } => (
                    vec![vec![Seg {
                        kind: SegKind::Pieces(vec![text_piece(text, origin.clone())]),
                        quoted: *quoted,
                        split: *split,
                    }]],
                    *quoted,
                    None,
                ),
                Tok::Val { choices, quoted } => (
                    choices
                        .iter()
                        .map(|c| {
                            vec![Seg {
                                kind: SegKind::Pieces(c.clone()),
                                quoted: *quoted,
                                split: !*quoted,
                            }]
                        })
                        .collect(),
                    *quoted,
                    None,
                ),
                Tok::Param { node, quoted } => (
                    self.param(u, *node, *quoted, st, cx),
                    *quoted,
                    Some(expansion_span(u, *node)),
                ),
                Tok::Cmd { node, quoted } => {
                    let mut sub = st.clone();
                    if node.kind() == "command_substitution"
                        || node.kind() == "process_substitution"
                    {
                        self.subshell_block(u, *node, &mut sub, cx);
                    }
                    let span = expansion_span(u, *node);
                    (
                        vec![vec![Seg {
                            kind: SegKind::Pieces(vec![Piece::Unknown {
                                origin: span.clone(),
                            }]),
                            quoted: *quoted,
                            split: !*quoted,
                        }]],
                        *quoted,
                        Some(span),
                    )
                }
                Tok::Arith { node, quoted } => {
                    let r = expansion_start(u, *node)..node.end_byte();
                    let text = u.src(r.clone());
                    let (a, b) = if text.starts_with("$((") {
                        (3, 2)
                    } else if text.starts_with("$[") {
                        (2, 1)
                    } else {
                        (0, 0)
                    };
                    let inner = (r.start + a).min(r.end)
                        ..r.end.saturating_sub(b).max(r.start + a).min(r.end);
                    let v = self.arith_range(u, *node, inner, st, cx);
                    let span = u.span(r);
                    let p = match v {
                        Some(v) => text_piece(&v.to_string(), None),
                        None => Piece::Unknown {
                            origin: span.clone(),
                        },
                    };
                    (
                        vec![vec![Seg {
                            kind: SegKind::Pieces(vec![p]),
                            quoted: *quoted,
                            split: !*quoted,
                        }]],
                        *quoted,
                        Some(span),
                    )
                }
            };
            let next = if alts.len() * next.len() > MAX_CHOICES {
                self.trunc();
                let sp = span.unwrap_or_else(|| u.span(0..0));
                vec![vec![if quoted {
                    Seg {
                        kind: SegKind::Pieces(vec![Piece::Unknown { origin: sp }]),
                        quoted: true,
                        split: false,
                    }
                } else {
                    Seg {
                        kind: SegKind::UnknownList(sp),
                        quoted: false,
                        split: true,
                    }
                }]]
            } else {
                next
            };
            if next.len() == 1 {
                let n = next.into_iter().next().unwrap_or_default();
                for a in alts.iter_mut() {
                    a.extend(n.iter().cloned());
                }
            } else {
                let mut out = Vec::new();
                for a in &alts {
                    for n in &next {
                        let mut x = a.clone();
                        x.extend(n.iter().cloned());
                        out.push(x);
                    }
                }
                alts = out;
            }
        }
        alts
    }

    fn subshell_block(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) {
        self.run_sub(u, n, st, cx);
    }

    fn split(&mut self, alt: &[Seg], word: &Span, st: &State<'t>) -> Vec<Arg> {
        // An assigned IFS of white space only splits as the default does, at its characters.
        let white_ifs = if st.ifs {
            match st.vars.get("IFS").map(|v| &v.value) {
                Some(Value::Scalar(f)) => f
                    .known()
                    .filter(|v| !v.is_empty() && v.chars().all(|c| matches!(c, ' ' | '\t' | '\n'))),
                _ => None,
            }
        } else {
            None
        };
        let modelled = !st.ifs || white_ifs.is_some();
        let mut sp = Splitter {
            texts: &self.sources.texts,
            args: Vec::new(),
            cur: Vec::new(),
            exists: false,
            glob: false,
            bracket: false,
            noglob: st.noglob,
            word: word.clone(),
            after_unknown: false,
            whole_unknown: false,
            ifs: white_ifs.unwrap_or_else(|| " \t\n".to_owned()),
        };
        for s in alt {
            if !modelled && s.split && !s.quoted {
                if let SegKind::Pieces(ps) = &s.kind {
                    if ps
                        .iter()
                        .all(|p| matches!(p, Piece::Text { text, .. } if text.is_empty()))
                    {
                        continue;
                    }
                }
                sp.unknown_count(word);
                continue;
            }
            sp.seg(s);
        }
        if sp.whole_unknown {
            return vec![Arg::Unknown(word.clone())];
        }
        sp.finish();
        sp.args
    }

    // ---- parameters ---------------------------------------------------------------------

    fn lookup(
        &mut self,
        name: &str,
        index: Option<Node<'_>>,
        u: &Rc<Unit<'t>>,
        span: &Span,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> RVal {
        match name {
            "@" | "*" => {
                return match &st.params {
                    Params::Known(p) => RVal::List {
                        elems: p.clone(),
                        star: name == "*",
                    },
                    Params::Unknown => RVal::UnknownList { star: name == "*" },
                }
            }
            "#" => {
                return match &st.params {
                    Params::Known(p) => {
                        RVal::Scalar(vec![vec![text_piece(&p.len().to_string(), None)]])
                    }
                    Params::Unknown => RVal::Unknown,
                }
            }
            "0" => {
                return match &st.arg0 {
                    Some(f) => RVal::Scalar(f.choices.clone()),
                    None => RVal::Unknown,
                }
            }
            "?" | "$" | "!" | "-" | "_" => return RVal::Unknown,
            _ => {}
        }
        if let Ok(n) = name.parse::<usize>() {
            return match &st.params {
                Params::Known(p) => match p.get(n.wrapping_sub(1)) {
                    Some(f) => RVal::Scalar(f.choices.clone()),
                    None => RVal::Unset,
                },
                Params::Unknown => RVal::Unknown,
            };
        }
        // The map is shared, not copied: only what the expansion yields is cloned.
        let vars = st.vars.clone();
        let var = vars.get(name);
        if var.is_none() && !st.gone.contains(name) {
            if name == "PWD" {
                if let Some(c) = &st.cwd {
                    return RVal::Scalar(vec![vec![text_piece(c, None)]]);
                }
            }
            if SHELL_SET.contains(&name) {
                return RVal::Unknown;
            }
        }
        let Some(var) = var else {
            if st.gone.contains(name) || (self.opts.unset_names == UnsetNames::Empty && !st.opaque)
            {
                return RVal::Unset;
            }
            return match index {
                Some(i) if matches!(u.node_text(i), "@" | "*") => RVal::UnknownList {
                    star: u.node_text(i) == "*",
                },
                _ => RVal::Unknown,
            };
        };
        let one = |k: usize| -> Option<Field> {
            match &var.value {
                Value::Scalar(f) if k == 0 => Some(Self::fresh(name, var, f, span, cx)),
                Value::Scalar(_) => None,
                Value::Array(a) => a.get(k).cloned(),
                Value::Unknown => None,
            }
        };
        let len = match &var.value {
            Value::Scalar(_) => Some(1),
            Value::Array(a) => Some(a.len()),
            Value::Unknown => None,
        };
        match index {
            Some(i) if matches!(u.node_text(i), "@" | "*") => {
                let star = u.node_text(i) == "*";
                match &var.value {
                    Value::Scalar(f) => RVal::List {
                        elems: vec![Self::fresh(name, var, f, span, cx)],
                        star,
                    },
                    Value::Array(a) => RVal::List {
                        elems: a.clone(),
                        star,
                    },
                    Value::Unknown => RVal::UnknownList { star },
                }
            }
            Some(i) => {
                let Some(len) = len else {
                    return RVal::Unknown;
                };
                if st.sparse.contains(name) {
                    return RVal::Unknown;
                }
                let Some(k) = self.index_value(u, i, st, cx) else {
                    return RVal::Unknown;
                };
                let k = if k < 0 { len as i64 + k } else { k };
                match usize::try_from(k).ok().and_then(one) {
                    Some(f) => RVal::Scalar(f.choices),
                    None => RVal::Unset,
                }
            }
            None => match len {
                Some(_) => match one(0) {
                    Some(f) => RVal::Scalar(f.choices),
                    None => RVal::Unset,
                },
                None => RVal::Unknown,
            },
        }
    }

    /// A variable of the starting environment known only at run time, expanded here.
    fn fresh(name: &str, var: &Variable, f: &Field, span: &Span, cx: &Ctx) -> Field {
        if var.origin.is_none() {
            if let [one] = f.choices.as_slice() {
                if let [Piece::Runtime { name: rn, .. }] = one.as_slice() {
                    if rn == name {
                        return Field {
                            choices: vec![vec![Piece::Runtime {
                                name: name.to_owned(),
                                site: cx.site,
                                origin: span.clone(),
                            }]],
                            word: span.clone(),
                        };
                    }
                }
            }
        }
        f.clone()
    }

    pub(super) fn index_value(
        &mut self,
        u: &Rc<Unit<'t>>,
        i: Node<'_>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<i64> {
        // The index is a word expanded, then evaluated as arithmetic (`$i`, `i+1`, `-1`).
        let text = match i.kind() {
            "simple_expansion"
            | "expansion"
            | "arithmetic_expansion"
            | "command_substitution"
            | "string"
            | "raw_string"
            | "concatenation" => self.scalar_word(u, i, st, cx).known()?,
            _ => self.arith_source(u, i, i.byte_range(), st, cx)?,
        };
        self.arith_text(&text, st)
    }

    fn rval_segs(&mut self, v: RVal, quoted: bool, span: &Span, st: &State<'t>) -> Vec<Vec<Seg>> {
        let seg = |kind: SegKind| Seg {
            kind,
            quoted,
            split: !quoted,
        };
        match v {
            RVal::Unset => vec![vec![seg(SegKind::Pieces(Vec::new()))]],
            RVal::Scalar(choices) => {
                let bytes: usize = choices.iter().flatten().map(piece_len).sum();
                self.bytes = self.bytes.saturating_add(bytes);
                if self.bytes > MAX_BYTES {
                    self.trunc();
                    return vec![vec![seg(SegKind::Pieces(vec![Piece::Unknown {
                        origin: span.clone(),
                    }]))]];
                }
                choices
                    .into_iter()
                    .map(|c| vec![seg(SegKind::Pieces(c))])
                    .collect()
            }
            RVal::Unknown => vec![vec![seg(SegKind::Pieces(vec![Piece::Unknown {
                origin: span.clone(),
            }]))]],
            RVal::UnknownList { star } => {
                if quoted && star {
                    vec![vec![seg(SegKind::Pieces(vec![Piece::Unknown {
                        origin: span.clone(),
                    }]))]]
                } else {
                    vec![vec![Seg {
                        kind: SegKind::UnknownList(span.clone()),
                        quoted,
                        split: !quoted,
                    }]]
                }
            }
            RVal::List { elems, star } => {
                let bytes: usize = elems
                    .iter()
                    .flat_map(|f| f.choices.iter().flatten())
                    .map(piece_len)
                    .sum();
                self.bytes = self.bytes.saturating_add(bytes);
                if self.bytes > MAX_BYTES {
                    self.trunc();
                    return vec![vec![Seg {
                        kind: SegKind::UnknownList(span.clone()),
                        quoted,
                        split: !quoted,
                    }]];
                }
                // Combinations of the elements' choices.
                let mut lists: Vec<Vec<Vec<Piece>>> = vec![Vec::new()];
                let elems_multi = if elems.iter().all(|f| f.choices.len() == 1) {
                    lists = vec![elems
                        .into_iter()
                        .map(|f| f.choices.into_iter().next().unwrap_or_default())
                        .collect()];
                    Vec::new()
                } else {
                    elems
                };
                for f in &elems_multi {
                    if lists.len() * f.choices.len() > MAX_CHOICES {
                        self.trunc();
                        for l in lists.iter_mut() {
                            l.push(vec![Piece::Unknown {
                                origin: f.word.clone(),
                            }]);
                        }
                        continue;
                    }
                    let mut next = Vec::new();
                    for l in &lists {
                        for c in &f.choices {
                            let mut x = l.clone();
                            x.push(c.clone());
                            next.push(x);
                        }
                    }
                    lists = next;
                }
                if quoted && star && st.ifs && lists.iter().any(|l| l.len() > 1) {
                    // `"$*"` joins with the first character of IFS, which was assigned.
                    return vec![vec![seg(SegKind::Pieces(vec![Piece::Unknown {
                        origin: span.clone(),
                    }]))]];
                }
                lists
                    .into_iter()
                    .map(|l| {
                        if quoted && star {
                            let mut joined = Vec::new();
                            for (i, e) in l.into_iter().enumerate() {
                                if i > 0 {
                                    push_piece(&mut joined, text_piece(" ", None));
                                }
                                for p in e {
                                    push_piece(&mut joined, p);
                                }
                            }
                            vec![seg(SegKind::Pieces(joined))]
                        } else {
                            vec![seg(SegKind::List(l))]
                        }
                    })
                    .collect()
            }
        }
    }

    /// `$X`, `${X}`, `${X:-w}`, `${#X}`, `${A[@]}`, `${X#p}`, ...
    fn param(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        quoted: bool,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Vec<Vec<Seg>> {
        let span = expansion_span(u, n);
        let unknown = |quoted: bool, span: &Span| {
            vec![vec![Seg {
                kind: SegKind::Pieces(vec![Piece::Unknown {
                    origin: span.clone(),
                }]),
                quoted,
                split: !quoted,
            }]]
        };
        if n.kind() == "simple_expansion" {
            let Some(v) = n.named_child(0) else {
                return unknown(quoted, &span);
            };
            let name = u.node_text(v).to_owned();
            // `$10` is `${1}0`.
            if name.len() > 1 && name.chars().all(|c| c.is_ascii_digit()) {
                let first = &name[..1];
                let r = self.lookup(first, None, u, &span, st, cx);
                let mut alts = self.rval_segs(r, quoted, &span, st);
                let rest_start = v.start_byte() + 1;
                let rest = text_piece(&name[1..], u.exact(rest_start..v.end_byte()));
                for a in alts.iter_mut() {
                    a.push(Seg {
                        kind: SegKind::Pieces(vec![rest.clone()]),
                        quoted,
                        split: false,
                    });
                }
                return alts;
            }
            let r = self.lookup(&name, None, u, &span, st, cx);
            return self.rval_segs(r, quoted, &span, st);
        }
        // `${...}`
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        let mut prefix: Option<String> = None;
        let mut name: Option<(String, Option<Node>)> = None;
        let mut ops: Vec<(String, usize)> = Vec::new(); // operator and its index in kids
        for (i, k) in kids.iter().enumerate() {
            let kind = k.kind();
            if kind == "${" || kind == "}" {
                continue;
            }
            if name.is_none() && ops.is_empty() {
                match kind {
                    "variable_name" | "special_variable_name" => {
                        name = Some((u.node_text(*k).to_owned(), None));
                        continue;
                    }
                    "subscript" => {
                        let nm = k
                            .child_by_field_name("name")
                            .map(|x| u.node_text(x).to_owned())
                            .unwrap_or_default();
                        name = Some((nm, k.child_by_field_name("index")));
                        continue;
                    }
                    "#" | "!" if prefix.is_none() => {
                        prefix = Some(kind.to_owned());
                        continue;
                    }
                    _ => {}
                }
            }
            if !k.is_named() && name.is_some() {
                ops.push((kind.to_owned(), i));
            }
        }
        let (name, index) = match (name, prefix.as_deref()) {
            (Some(n), _) => n,
            (None, Some("#")) => {
                prefix = None;
                ("#".to_owned(), None)
            }
            _ => return unknown(quoted, &span),
        };
        if prefix.as_deref() == Some("!") {
            let list = |star: bool| {
                vec![vec![Seg {
                    kind: SegKind::UnknownList(span.clone()),
                    quoted: quoted && !star,
                    split: !quoted,
                }]]
            };
            // `${!A[@]}`: the indices of an array.
            if let Some(i) = index {
                let t = u.node_text(i);
                if t == "@" || t == "*" {
                    let star = t == "*";
                    let n = match st.vars.get(&name).map(|v| &v.value) {
                        Some(Value::Array(a)) if !st.sparse.contains(&name) => Some(a.len()),
                        Some(Value::Scalar(_)) => Some(1),
                        None if st.gone.contains(&name)
                            || (self.opts.unset_names == UnsetNames::Empty && !st.opaque) =>
                        {
                            Some(0)
                        }
                        _ => None,
                    };
                    return match n {
                        Some(n) => {
                            let elems = (0..n)
                                .map(|k| super::run::text_field(&k.to_string(), None, span.clone()))
                                .collect();
                            self.rval_segs(RVal::List { elems, star }, quoted, &span, st)
                        }
                        None => list(star),
                    };
                }
                return unknown(quoted, &span);
            }
            // `${!PREFIX@}`: the names that start with it.
            if let Some((op, _)) = ops.first() {
                if op == "@" || op == "*" {
                    return list(op == "*");
                }
                return unknown(quoted, &span);
            }
            // `${!V}`: the variable V names.
            let target = match self.lookup(&name, None, u, &span, st, cx) {
                RVal::Scalar(c) => match c.as_slice() {
                    [one] => known_of(one).filter(|t| is_name(t) || t.parse::<usize>().is_ok()),
                    _ => None,
                },
                _ => None,
            };
            return match target {
                Some(t) if self.rec < MAX_REC => {
                    let v = self.lookup(&t, None, u, &span, st, cx);
                    self.rval_segs(v, quoted, &span, st)
                }
                _ => unknown(quoted, &span),
            };
        }
        let val = self.lookup(&name, index, u, &span, st, cx);
        if prefix.as_deref() == Some("#") {
            if !ops.is_empty() {
                return unknown(quoted, &span);
            }
            let v = match val {
                RVal::Unset => RVal::Scalar(vec![vec![text_piece("0", None)]]),
                RVal::List { elems, .. } => {
                    RVal::Scalar(vec![vec![text_piece(&elems.len().to_string(), None)]])
                }
                RVal::Scalar(choices) => {
                    let mut out = Vec::new();
                    for c in choices {
                        match known_of(&c) {
                            Some(t) => {
                                out.push(vec![text_piece(&t.chars().count().to_string(), None)])
                            }
                            None => return unknown(quoted, &span),
                        }
                    }
                    out.dedup();
                    RVal::Scalar(out)
                }
                _ => RVal::Unknown,
            };
            return self.rval_segs(v, quoted, &span, st);
        }
        let Some((op, op_at)) = ops.first().cloned() else {
            return self.rval_segs(val, quoted, &span, st);
        };
        let close = kids.len().saturating_sub(1);
        let end_of_args = kids
            .get(close)
            .map(|k| k.start_byte())
            .unwrap_or(n.end_byte());
        let args_start = kids.get(op_at).map(|k| k.end_byte()).unwrap_or(end_of_args);
        match op.as_str() {
            ":-" | "-" | ":=" | "=" | ":+" | "+" | ":?" | "?" => {
                let colon = op.starts_with(':');
                let kind = op.trim_start_matches(':');
                // A name nothing set, whose default the script gives (`UnsetNames::DefaultsApply`).
                let defaults_apply = self.opts.unset_names == UnsetNames::DefaultsApply
                    && index.is_none()
                    && matches!(val, RVal::Unknown)
                    && !st.vars.contains_key(name.as_str())
                    && !st.opaque
                    && !SHELL_SET.contains(&name.as_str());
                // Per choice: whether the value counts as set.
                let states: Vec<Option<bool>> = match &val {
                    RVal::Unset => vec![Some(false)],
                    RVal::Unknown if defaults_apply => vec![Some(false)],
                    RVal::Unknown | RVal::UnknownList { .. } => vec![None],
                    RVal::List { elems, .. } => vec![Some(!elems.is_empty())],
                    RVal::Scalar(choices) => choices
                        .iter()
                        .map(|c| {
                            if !colon {
                                return Some(true);
                            }
                            if c.iter().any(|p| matches!(p, Piece::Unknown { .. })) {
                                if c.iter().any(|p| {
                                    matches!(p, Piece::Text { text, .. } if !text.is_empty())
                                        || matches!(p, Piece::Runtime { .. })
                                }) {
                                    Some(true)
                                } else {
                                    None
                                }
                            } else {
                                Some(!c.is_empty())
                            }
                        })
                        .collect(),
                };
                if states.iter().any(|s| s.is_none()) {
                    return unknown(quoted, &span);
                }
                let set_all = states.iter().all(|s| *s == Some(true));
                let unset_all = states.iter().all(|s| *s == Some(false));
                let word = |ev: &mut Self, st: &mut State<'t>| -> Vec<Vec<Seg>> {
                    ev.in_parameter_word += 1;
                    let mut toks = Vec::new();
                    let mut pos = args_start;
                    for k in kids
                        .iter()
                        .skip(op_at + 1)
                        .take(close.saturating_sub(op_at + 1))
                    {
                        if k.start_byte() > pos {
                            ev.lit(
                                u,
                                pos..k.start_byte(),
                                quoted,
                                quoted,
                                false,
                                !quoted,
                                &mut toks,
                            );
                        }
                        ev.lex(u, *k, quoted, !quoted, &mut toks);
                        pos = k.end_byte().max(pos);
                    }
                    if end_of_args > pos {
                        ev.lit(
                            u,
                            pos..end_of_args,
                            quoted,
                            quoted,
                            false,
                            !quoted,
                            &mut toks,
                        );
                    }
                    ev.in_parameter_word = ev.in_parameter_word.saturating_sub(1);
                    if toks.is_empty() {
                        toks.push(Tok::Lit {
                            text: String::new(),
                            quoted,
                            split: false,
                            origin: None,
                        });
                    }
                    ev.segs(u, &toks, st, cx)
                };
                let use_word = match kind {
                    "+" => set_all,
                    _ => unset_all,
                };
                let use_value = match kind {
                    "+" => unset_all,
                    _ => set_all,
                };
                if kind == "+" && use_value {
                    return vec![vec![Seg {
                        kind: SegKind::Pieces(Vec::new()),
                        quoted,
                        split: !quoted,
                    }]];
                }
                if use_value {
                    return self.rval_segs(val, quoted, &span, st);
                }
                if use_word {
                    let w = word(self, st);
                    if kind == "=" && is_name(&name) && index.is_none() {
                        // `${V:=w}` assigns `w` to V.
                        let f = self.join_segs(&w, span.clone());
                        self.set_var(st, &name, Value::Scalar(f), Some(span.clone()), None);
                    }
                    if kind == "?" {
                        return unknown(quoted, &span);
                    }
                    return w;
                }
                // Some choices set, some not: a value of several choices.
                let RVal::Scalar(choices) = val else {
                    return unknown(quoted, &span);
                };
                let w = word(self, st);
                let mut out = Vec::new();
                for (c, s) in choices.into_iter().zip(states) {
                    let take_word = match kind {
                        "+" => s == Some(true),
                        _ => s == Some(false),
                    };
                    if take_word {
                        out.extend(w.iter().cloned());
                    } else if kind == "+" {
                        out.push(vec![Seg {
                            kind: SegKind::Pieces(Vec::new()),
                            quoted,
                            split: !quoted,
                        }]);
                    } else {
                        out.push(vec![Seg {
                            kind: SegKind::Pieces(c),
                            quoted,
                            split: !quoted,
                        }]);
                    }
                }
                if out.len() > MAX_CHOICES {
                    self.trunc();
                    return unknown(quoted, &span);
                }
                if kind == "=" && is_name(&name) && index.is_none() {
                    let f = self.join_segs(&out, span.clone());
                    self.set_var(st, &name, Value::Scalar(f), Some(span.clone()), None);
                }
                out
            }
            "#" | "##" | "%" | "%%" | "/" | "//" | "/#" | "/%" | "^^" | "^" | ",," | "," => {
                let second = ops.get(1).map(|(_, i)| *i);
                let pat_end = second
                    .and_then(|i| kids.get(i))
                    .map(|k| k.start_byte())
                    .unwrap_or(end_of_args);
                let pat = self.pattern_range(u, n, args_start..pat_end, st, cx);
                let repl = match second {
                    Some(i) => {
                        let start = kids.get(i).map(|k| k.end_byte()).unwrap_or(end_of_args);
                        self.text_range(u, n, start..end_of_args, st, cx)
                    }
                    None => Some(String::new()),
                };
                let (Some(pat), Some(repl)) = (pat, repl) else {
                    return unknown(quoted, &span);
                };
                let apply = |c: &[Piece]| -> Option<Vec<Piece>> { apply_op(&op, c, &pat, &repl) };
                let v = match val {
                    RVal::Unset => RVal::Unset,
                    RVal::Scalar(choices) => {
                        let mut out = Vec::new();
                        for c in &choices {
                            match apply(c) {
                                Some(x) => {
                                    if !out.contains(&x) {
                                        out.push(x)
                                    }
                                }
                                None => return unknown(quoted, &span),
                            }
                        }
                        RVal::Scalar(out)
                    }
                    RVal::List { elems, star } => {
                        let mut out = Vec::new();
                        for f in elems {
                            let mut choices = Vec::new();
                            for c in &f.choices {
                                match apply(c) {
                                    Some(x) => choices.push(x),
                                    None => return unknown(quoted, &span),
                                }
                            }
                            out.push(Field {
                                choices,
                                word: f.word,
                            });
                        }
                        RVal::List { elems: out, star }
                    }
                    other => other,
                };
                self.rval_segs(v, quoted, &span, st)
            }
            ":" => {
                let second = ops.get(1).map(|(_, i)| *i);
                let off_end = second
                    .and_then(|i| kids.get(i))
                    .map(|k| k.start_byte())
                    .unwrap_or(end_of_args);
                let off = self
                    .arith_source(u, n, args_start..off_end, st, cx)
                    .and_then(|t| self.arith_text(&t, st));
                let len = match second {
                    Some(i) => {
                        let start = kids.get(i).map(|k| k.end_byte()).unwrap_or(end_of_args);
                        self.arith_source(u, n, start..end_of_args, st, cx)
                            .and_then(|t| self.arith_text(&t, st))
                            .map(Some)
                    }
                    None => Some(None),
                };
                let (Some(off), Some(len)) = (off, len) else {
                    return unknown(quoted, &span);
                };
                match val {
                    RVal::Scalar(choices) => {
                        let mut out = Vec::new();
                        for c in &choices {
                            let Some(t) = known_of(c) else {
                                return unknown(quoted, &span);
                            };
                            let chars: Vec<char> = t.chars().collect();
                            let Some(r) = slice_range(chars.len(), off, len) else {
                                return unknown(quoted, &span);
                            };
                            let s: String = chars[r].iter().collect();
                            out.push(if s.is_empty() {
                                Vec::new()
                            } else {
                                vec![text_piece(&s, None)]
                            });
                        }
                        self.rval_segs(RVal::Scalar(out), quoted, &span, st)
                    }
                    RVal::List { elems, star } => {
                        // `${@:1}` counts from `$0`.
                        let (elems, off) = if name == "@" || name == "*" {
                            let mut all = vec![st
                                .arg0
                                .clone()
                                .unwrap_or_else(|| unknown_field(span.clone()))];
                            all.extend(elems);
                            (all, off)
                        } else {
                            (elems, off)
                        };
                        let Some(r) = slice_range(elems.len(), off, len) else {
                            return unknown(quoted, &span);
                        };
                        self.rval_segs(
                            RVal::List {
                                elems: elems[r].to_vec(),
                                star,
                            },
                            quoted,
                            &span,
                            st,
                        )
                    }
                    RVal::Unset => self.rval_segs(RVal::Unset, quoted, &span, st),
                    other => self.rval_segs(other, quoted, &span, st),
                }
            }
            _ => unknown(quoted, &span),
        }
    }

    fn join_segs(&mut self, alts: &[Vec<Seg>], word: Span) -> Field {
        let mut choices = Vec::new();
        for alt in alts {
            let mut c = Vec::new();
            for s in alt {
                match &s.kind {
                    SegKind::Pieces(ps) => {
                        for p in ps {
                            push_piece(&mut c, p.clone());
                        }
                    }
                    SegKind::List(elems) => {
                        for (i, e) in elems.iter().enumerate() {
                            if i > 0 {
                                push_piece(&mut c, text_piece(" ", None));
                            }
                            for p in e {
                                push_piece(&mut c, p.clone());
                            }
                        }
                    }
                    SegKind::UnknownList(o) => c.push(Piece::Unknown { origin: o.clone() }),
                }
            }
            if !choices.contains(&c) {
                choices.push(c);
            }
        }
        if choices.is_empty() {
            choices.push(Vec::new());
        }
        if choices.len() > MAX_CHOICES {
            self.trunc();
            return unknown_field(word);
        }
        Field { choices, word }
    }

    /// Tokens of the nodes of `parent` within `range` (gaps as literal text).
    fn toks_in<'u>(
        &mut self,
        u: &Rc<Unit<'t>>,
        parent: Node<'u>,
        range: std::ops::Range<usize>,
        quoted: bool,
        toks: &mut Vec<Tok<'u>>,
    ) {
        let mut pos = range.start;
        let mut c = parent.walk();
        let kids: Vec<Node> = parent.children(&mut c).collect();
        for k in kids {
            if k.start_byte() < range.start || k.end_byte() > range.end {
                continue;
            }
            if k.start_byte() > pos {
                self.lit(u, pos..k.start_byte(), quoted, quoted, false, false, toks);
            }
            self.lex(u, k, quoted, false, toks);
            pos = k.end_byte().max(pos);
        }
        if range.end > pos {
            self.lit(u, pos..range.end, quoted, quoted, false, false, toks);
        }
    }

    /// A pattern (`case` item, `${V#p}`): quoted characters escaped, unquoted ones as glob.
    pub(super) fn pattern(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<String> {
        let mut toks = Vec::new();
        self.lex(u, n, false, false, &mut toks);
        self.pattern_of(u, &toks, st, cx)
    }

    fn pattern_range(
        &mut self,
        u: &Rc<Unit<'t>>,
        parent: Node<'_>,
        range: std::ops::Range<usize>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<String> {
        let mut toks = Vec::new();
        self.toks_in(u, parent, range, false, &mut toks);
        self.pattern_of(u, &toks, st, cx)
    }

    fn text_range(
        &mut self,
        u: &Rc<Unit<'t>>,
        parent: Node<'_>,
        range: std::ops::Range<usize>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<String> {
        let mut toks = Vec::new();
        self.toks_in(u, parent, range.clone(), false, &mut toks);
        let f = self.join_toks(u, &toks, u.span(range), st, cx);
        f.known()
    }

    fn pattern_of(
        &mut self,
        u: &Rc<Unit<'t>>,
        toks: &[Tok<'_>],
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<String> {
        let alts = self.segs(u, toks, st, cx);
        let [alt] = alts.as_slice() else {
            return None;
        };
        let mut out = String::new();
        for s in alt {
            let SegKind::Pieces(ps) = &s.kind else {
                return None;
            };
            for p in ps {
                let Piece::Text { text, .. } = p else {
                    return None;
                };
                if s.quoted {
                    for c in text.chars() {
                        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                } else {
                    out.push_str(text);
                }
            }
        }
        Some(out)
    }

    pub(super) fn run_sub(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) {
        self.subshell_of(u, n, st, cx);
    }
}

/// A string holding `$@`, `${@...}` or `${A[@]...}`.
fn has_at_expansion(u: &Unit<'_>, n: Node<'_>) -> bool {
    let mut c = n.walk();
    let kids: Vec<Node> = n.named_children(&mut c).collect();
    kids.into_iter().any(|k| {
        let t = u.node_text(k).trim_start();
        matches!(k.kind(), "simple_expansion" | "expansion")
            && (t == "$@" || t.starts_with("${@") || (t.starts_with("${") && t.contains("[@]")))
    })
}

/// Where an expansion node really starts (its `$`, `` ` ``, `<(` or `>(`).
pub(super) fn expansion_start(u: &Unit<'_>, n: Node<'_>) -> usize {
    let r = n.byte_range();
    let t = u.src(r.clone());
    let lead = t.len() - t.trim_start().len();
    r.start + lead
}

/// The span of an expansion node without leading whitespace.
pub(super) fn expansion_span(u: &Unit<'_>, n: Node<'_>) -> Span {
    u.span(expansion_start(u, n)..n.end_byte())
}

fn piece_len(p: &Piece) -> usize {
    match p {
        Piece::Text { text, .. } => text.len(),
        _ => 8,
    }
}

fn known_of(c: &[Piece]) -> Option<String> {
    let mut s = String::new();
    for p in c {
        match p {
            Piece::Text { text, .. } => s.push_str(text),
            _ => return None,
        }
    }
    Some(s)
}

/// bash's `${V:off:len}` range over `n` items.
fn slice_range(n: usize, off: i64, len: Option<i64>) -> Option<std::ops::Range<usize>> {
    let n = n as i64;
    let start = if off < 0 { n.saturating_add(off) } else { off };
    if start < 0 || start > n {
        return Some(0..0);
    }
    let end = match len {
        None => n,
        Some(l) if l < 0 => n.saturating_add(l),
        Some(l) => start.saturating_add(l).min(n),
    };
    if end < start {
        return None;
    }
    Some(start as usize..end as usize)
}

/// `#`, `##`, `%`, `%%`, `/`, `//`, `/#`, `/%`, case conversion on a known value; the result
/// keeps the origin of what is left of the text when it is one piece.
fn apply_op(op: &str, c: &[Piece], pat: &str, repl: &str) -> Option<Vec<Piece>> {
    let t = known_of(c)?;
    let origin = match c {
        [Piece::Text { origin, .. }] => origin.clone(),
        _ => None,
    };
    let piece = |r: std::ops::Range<usize>| -> Vec<Piece> {
        if r.is_empty() {
            return Vec::new();
        }
        vec![text_piece(&t[r.clone()], sub_origin(&origin, t.len(), r))]
    };
    let bounds: Vec<usize> = t
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(t.len()))
        .collect();
    Some(match op {
        "#" => match bounds.iter().find(|&&i| fnmatch(pat, &t[..i])) {
            Some(&i) => piece(i..t.len()),
            None => piece(0..t.len()),
        },
        "##" => match bounds.iter().rev().find(|&&i| fnmatch(pat, &t[..i])) {
            Some(&i) => piece(i..t.len()),
            None => piece(0..t.len()),
        },
        "%" => match bounds.iter().rev().find(|&&i| fnmatch(pat, &t[i..])) {
            Some(&i) => piece(0..i),
            None => piece(0..t.len()),
        },
        "%%" => match bounds.iter().find(|&&i| fnmatch(pat, &t[i..])) {
            Some(&i) => piece(0..i),
            None => piece(0..t.len()),
        },
        "^^" | "^" | ",," | "," => {
            if !pat.is_empty() {
                return None;
            }
            let s: String = match op {
                "^^" => t.to_uppercase(),
                ",," => t.to_lowercase(),
                "^" => {
                    let mut ch = t.chars();
                    ch.next()
                        .map(|f| f.to_uppercase().chain(ch).collect())
                        .unwrap_or_default()
                }
                _ => {
                    let mut ch = t.chars();
                    ch.next()
                        .map(|f| f.to_lowercase().chain(ch).collect())
                        .unwrap_or_default()
                }
            };
            if s.is_empty() {
                Vec::new()
            } else {
                vec![text_piece(&s, None)]
            }
        }
        _ => {
            // Replacement: the longest match at the leftmost position.
            if pat.is_empty() {
                // `${v/#/x}` and `${v/%/x}` put x before or after; `${v//}` changes nothing.
                let s = match op {
                    "/#" => format!("{repl}{t}"),
                    "/%" => format!("{t}{repl}"),
                    _ => return Some(piece(0..t.len())),
                };
                return Some(if s.is_empty() {
                    Vec::new()
                } else {
                    vec![text_piece(&s, None)]
                });
            }
            let mut out = String::new();
            let mut i = 0;
            let mut replaced = false;
            let all = op == "//";
            while i <= t.len() {
                if op == "/%" {
                    let hit = bounds.iter().find(|&&s| s >= i && fnmatch(pat, &t[s..]));
                    match hit {
                        Some(&s) => {
                            out.push_str(&t[..s]);
                            out.push_str(repl);
                            replaced = true;
                        }
                        None => out.push_str(&t),
                    }
                    break;
                }
                let ends: Vec<usize> = bounds.iter().copied().filter(|&e| e >= i).collect();
                let m = if op == "/#" && i > 0 {
                    None
                } else {
                    ends.iter()
                        .rev()
                        .find(|&&e| e > i && fnmatch(pat, &t[i..e]))
                        .copied()
                };
                match m {
                    Some(e) if all || !replaced => {
                        out.push_str(repl);
                        replaced = true;
                        i = e;
                        if !all {
                            out.push_str(&t[i..]);
                            break;
                        }
                    }
                    _ => {
                        if op == "/#" || (replaced && !all) {
                            out.push_str(&t[i..]);
                            break;
                        }
                        match t[i..].chars().next() {
                            Some(ch) => {
                                out.push(ch);
                                i += ch.len_utf8();
                            }
                            None => break,
                        }
                    }
                }
            }
            if !replaced {
                return Some(piece(0..t.len()));
            }
            if out.is_empty() {
                Vec::new()
            } else {
                vec![text_piece(&out, None)]
            }
        }
    })
}

/// `$'...'` escapes.
fn ansi_c(s: &str) -> String {
    let mut out = String::new();
    let mut it = s.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match it.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('a') => out.push('\u{7}'),
            Some('b') => out.push('\u{8}'),
            Some('e') | Some('E') => out.push('\u{1b}'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some('x') => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 {
                    match it.peek().and_then(|c| c.to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            it.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            Some(d @ '0'..='7') => {
                let mut v = d.to_digit(8).unwrap_or(0);
                let mut n = 1;
                while n < 3 {
                    match it.peek().and_then(|c| c.to_digit(8)) {
                        Some(x) => {
                            v = v * 8 + x;
                            it.next();
                            n += 1;
                        }
                        None => break,
                    }
                }
                if let Some(ch) = char::from_u32(v) {
                    out.push(ch);
                }
            }
            Some(o) => out.push(o),
            None => out.push('\\'),
        }
    }
    out
}

/// Merges the arguments of each combination of choices: position by position when every
/// combination gives the same count, else the word's count is unknown.
fn merge_alts(mut alts: Vec<Vec<Arg>>, word: &Span) -> Vec<Arg> {
    if alts.len() <= 1 {
        return alts.pop().unwrap_or_default();
    }
    try_merge_alts(&alts, word).unwrap_or_else(|| vec![Arg::Unknown(word.clone())])
}

/// [`merge_alts`] when the combinations agree on the count (and on which are unknown).
fn try_merge_alts(alts: &[Vec<Arg>], word: &Span) -> Option<Vec<Arg>> {
    if alts.len() == 1 {
        return alts.first().cloned();
    }
    let n = alts.first()?.len();
    if alts.iter().any(|a| a.len() != n) {
        return None;
    }
    let mut out = Vec::new();
    for i in 0..n {
        let mut choices: Vec<Vec<Piece>> = Vec::new();
        let mut unknown = 0;
        for a in alts {
            match &a[i] {
                Arg::Field(f) => {
                    for c in &f.choices {
                        if !choices.contains(c) {
                            choices.push(c.clone());
                        }
                    }
                }
                Arg::Unknown(_) => unknown += 1,
            }
        }
        if unknown == alts.len() {
            out.push(Arg::Unknown(word.clone()));
        } else if unknown > 0 {
            return None;
        } else if choices.len() > MAX_CHOICES {
            out.push(Arg::Field(unknown_field(word.clone())));
        } else {
            out.push(Arg::Field(Field {
                choices,
                word: word.clone(),
            }));
        }
    }
    Some(out)
}
