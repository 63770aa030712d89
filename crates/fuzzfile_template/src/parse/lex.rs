//! The template lexer: a port of Go's `text/template/parse/lex.go` (Go 1.23 and later: `lexText`,
//! `lexLeftDelim`, `lexComment`, `lexRightDelim`, `lexInsideAction`, `lexSpace`,
//! `lexIdentifier`, `lexFieldOrVariable`, `atTerminator`, `lexChar`, `lexNumber`/`scanNumber`,
//! `lexQuote`, `lexRawQuote`). Go's lexer runs lazily, driven by the parser, and stops at its
//! first error; this one scans the whole text up front and ends the token list with an
//! [`TokKind::Error`] (or [`TokKind::Eof`]) token, which the parser reports when it reaches it,
//! so the order of errors is Go's.
//!
//! Trim markers (`{{- ` and ` -}}`: the `-` with an ASCII space, tab, CR or LF on its inner
//! side) remove the ASCII whitespace (space, `\t`, `\r`, `\n`) next to the action from the
//! neighbouring text; a text token's span is what is left of it.

use crate::Span;

/// `spaceChars` in lex.go.
fn is_space_byte(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// `isSpace` in lex.go (since Go 1.16 newlines are spaces inside actions).
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// `isAlphaNumeric` in lex.go: `_`, a Unicode letter (`unicode.IsLetter`) or digit
/// (`unicode.IsDigit`).
pub(crate) fn is_alphanumeric(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    if c.is_ascii() {
        return c == '_' || c.is_ascii_alphanumeric();
    }
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
            | G::DecimalNumber
    )
}

fn has_left_trim_marker(s: &[u8]) -> bool {
    s.len() >= 2 && s[0] == b'-' && is_space_byte(s[1])
}

fn has_right_trim_marker(s: &[u8]) -> bool {
    s.len() >= 2 && is_space_byte(s[0]) && s[1] == b'-'
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokKind {
    /// The lexer's error; the message is Go's (`unclosed action`, `bad character U+002B '+'`).
    Error(String),
    Bool,
    /// A printable ASCII character with no other meaning (`,` and the like).
    Char,
    CharConstant,
    Complex,
    /// `=`
    Assign,
    /// `:=`
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    /// `{{/* ... */}}`, trim markers included: the whole action.
    Comment,
    // Keywords.
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

impl TokKind {
    pub fn is_keyword(&self) -> bool {
        matches!(
            self,
            TokKind::Block
                | TokKind::Break
                | TokKind::Continue
                | TokKind::Dot
                | TokKind::Define
                | TokKind::Else
                | TokKind::End
                | TokKind::If
                | TokKind::Nil
                | TokKind::Range
                | TokKind::Template
                | TokKind::With
        )
    }
}

/// One token: its kind, its bytes in the template (`val`, Go's `item.val`) and where.
#[derive(Clone, Debug, PartialEq)]
pub struct Tok<'a> {
    pub kind: TokKind,
    pub val: &'a str,
    pub span: Span,
    /// 1-based line of the token's start.
    pub line: usize,
}

fn keyword(word: &str) -> Option<TokKind> {
    Some(match word {
        "block" => TokKind::Block,
        "break" => TokKind::Break,
        "continue" => TokKind::Continue,
        "define" => TokKind::Define,
        "else" => TokKind::Else,
        "end" => TokKind::End,
        "if" => TokKind::If,
        "range" => TokKind::Range,
        "nil" => TokKind::Nil,
        "template" => TokKind::Template,
        "with" => TokKind::With,
        _ => return None,
    })
}

/// Go's `%#U` of a rune: `U+002B '+'` (the quoted form only for a printable rune).
pub(crate) fn format_rune_u(c: Option<char>) -> String {
    match c {
        None => "U+FFFFFFFFFFFFFFFF".to_string(), // Go's eof rune is -1
        Some(c) if is_go_print(c) => {
            format!("U+{:04X} '{}'", c as u32, c)
        }
        Some(c) => format!("U+{:04X}", c as u32),
    }
}

struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    /// Where the open `(`s of the action are (Go keeps only their number, `parenDepth`).
    open_parens: Vec<usize>,
    /// Where the action's `{{` is.
    action_start: usize,
    toks: Vec<Tok<'a>>,
    /// Line of `start`, kept up to date incrementally.
    line_starts: Vec<usize>,
}

/// Scans `input` to tokens, ending with `Eof` or an `Error` token.
pub fn lex(input: &str) -> Vec<Tok<'_>> {
    let mut line_starts = vec![0];
    for (i, b) in input.bytes().enumerate() {
        if b == b'\n' {
            line_starts.push(i + 1);
        }
    }
    let mut l = Lexer {
        input,
        pos: 0,
        start: 0,
        open_parens: Vec::new(),
        action_start: 0,
        toks: Vec::new(),
        line_starts,
    };
    l.run();
    l.toks
}

enum Next {
    Continue,
    Stop,
}

impl<'a> Lexer<'a> {
    fn line_of(&self, pos: usize) -> usize {
        match self.line_starts.binary_search(&pos) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }

    fn rest(&self) -> &'a [u8] {
        self.input.as_bytes().get(self.pos..).unwrap_or(&[])
    }

    fn peek(&self) -> Option<char> {
        self.input.get(self.pos..).and_then(|s| s.chars().next())
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn push(&mut self, kind: TokKind, span: Span) {
        let line = self.line_of(span.start);
        let val = self.input.get(span.clone()).unwrap_or("");
        self.toks.push(Tok {
            kind,
            val,
            span,
            line,
        });
    }

    /// `emit`: the token `start..pos`.
    fn emit(&mut self, kind: TokKind) {
        self.push(kind, self.start..self.pos);
        self.start = self.pos;
    }

    /// `errorf`: an error token at `start` (covering at least one character), then stop.
    fn error(&mut self, msg: String) -> Next {
        let end = if self.pos > self.start {
            self.pos
        } else {
            let c = self.input.get(self.start..).and_then(|s| s.chars().next());
            self.start + c.map_or(0, char::len_utf8)
        };
        self.push(TokKind::Error(msg), self.start..end);
        Next::Stop
    }

    /// An error token over `span` (where the cause is rather than where Go notices it).
    fn error_spanning(&mut self, msg: String, span: Span) -> Next {
        let end = span.end.min(self.input.len());
        let start = span.start.min(end);
        let line = self.line_of(self.start);
        self.toks.push(Tok {
            kind: TokKind::Error(msg),
            val: "",
            span: start..end,
            line,
        });
        Next::Stop
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.peek() {
            Some(c) if valid.contains(c) => {
                self.pos += c.len_utf8();
                true
            }
            _ => false,
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn run(&mut self) {
        loop {
            if let Next::Stop = self.lex_text() {
                return;
            }
            loop {
                match self.lex_inside_action() {
                    Ok(true) => continue,
                    Ok(false) => break,
                    Err(()) => return,
                }
            }
        }
    }

    /// `lexText` and `lexLeftDelim` (and `lexComment`): text up to the next `{{`, the `{{`.
    fn lex_text(&mut self) -> Next {
        loop {
            let Some(x) = self.input.get(self.pos..).and_then(|s| s.find("{{")) else {
                self.pos = self.input.len();
                if self.pos > self.start {
                    self.emit(TokKind::Text);
                }
                self.emit(TokKind::Eof);
                return Next::Stop;
            };
            let delim = self.pos + x;
            let after_delim = self.input.as_bytes().get(delim + 2..).unwrap_or(&[]);
            let trim_space = has_left_trim_marker(after_delim);
            let mut text_end = delim;
            if trim_space {
                let text = &self.input.as_bytes()[self.start..delim];
                let kept =
                    text.len() - text.iter().rev().take_while(|b| is_space_byte(**b)).count();
                text_end = self.start + kept;
            }
            if text_end > self.start {
                self.push(TokKind::Text, self.start..text_end);
            }
            // lexLeftDelim
            let after_marker = if trim_space { 2 } else { 0 };
            self.pos = delim + 2 + after_marker;
            self.start = self.pos;
            if self.rest().starts_with(b"/*") {
                // lexComment
                self.pos += 2;
                let Some(i) = self.input.get(self.pos..).and_then(|s| s.find("*/")) else {
                    return self.error("unclosed comment".into());
                };
                self.pos += i + 2;
                let (is_delim, trim) = self.at_right_delim();
                if !is_delim {
                    return self.error("comment ends before closing delimiter".into());
                }
                if trim {
                    self.pos += 2;
                }
                self.pos += 2;
                self.push(TokKind::Comment, delim..self.pos);
                if trim {
                    self.skip_left_space();
                }
                self.start = self.pos;
                continue;
            }
            self.push(TokKind::LeftDelim, delim..delim + 2);
            self.open_parens.clear();
            self.action_start = delim;
            return Next::Continue;
        }
    }

    fn skip_left_space(&mut self) {
        let n = self
            .rest()
            .iter()
            .take_while(|b| is_space_byte(**b))
            .count();
        self.pos += n;
    }

    /// `atRightDelim`: at `}}` or ` -}}`; the second value says the latter.
    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim_marker(rest) && rest.get(2..).is_some_and(|r| r.starts_with(b"}}")) {
            return (true, true);
        }
        if rest.starts_with(b"}}") {
            return (true, false);
        }
        (false, false)
    }

    /// `lexRightDelim`.
    fn lex_right_delim(&mut self) {
        let trim = has_right_trim_marker(self.rest());
        if trim {
            self.pos += 2;
            self.start = self.pos;
        }
        self.pos += 2;
        self.emit(TokKind::RightDelim);
        if trim {
            self.skip_left_space();
            self.start = self.pos;
        }
    }

    /// `atTerminator`.
    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) => {
                is_space(c)
                    || matches!(c, '.' | ',' | '|' | ':' | ')' | '(')
                    || self.rest().starts_with(b"}}")
            }
        }
    }

    /// `lexInsideAction`, one step. Ok(true): stay inside the action; Ok(false): the action
    /// ended; Err: an error token was pushed.
    fn lex_inside_action(&mut self) -> Result<bool, ()> {
        let (is_delim, _) = self.at_right_delim();
        if is_delim {
            let Some(&open) = self.open_parens.last() else {
                self.lex_right_delim();
                return Ok(false);
            };
            // Go reports it at the `}}`; the span is the `(` left open.
            self.error_spanning("unclosed left paren".into(), open..open + 1);
            return Err(());
        }
        let Some(r) = self.next() else {
            // Go reports it at the end; the span is the action's `{{`.
            let start = self.action_start;
            self.error_spanning("unclosed action".into(), start..start + 2);
            return Err(());
        };
        let stop = match r {
            c if is_space(c) => {
                self.pos -= c.len_utf8();
                self.lex_space()
            }
            '=' => {
                self.emit(TokKind::Assign);
                Next::Continue
            }
            ':' => {
                if self.next() != Some('=') {
                    self.error("expected :=".into())
                } else {
                    self.emit(TokKind::Declare);
                    Next::Continue
                }
            }
            '|' => {
                self.emit(TokKind::Pipe);
                Next::Continue
            }
            '"' => self.lex_quote(),
            '`' => self.lex_raw_quote(),
            '$' => self.lex_variable(),
            '\'' => self.lex_char(),
            // Go's look-ahead: `.` starts a field unless a digit or the end follows.
            '.' if self.rest().first().is_some_and(|b| !b.is_ascii_digit()) => {
                self.lex_field_or_variable(TokKind::Field)
            }
            '.' | '+' | '-' | '0'..='9' => {
                self.pos -= 1;
                self.lex_number()
            }
            c if is_alphanumeric(c) => {
                self.pos -= c.len_utf8();
                self.lex_identifier()
            }
            '(' => {
                self.open_parens.push(self.start);
                self.emit(TokKind::LeftParen);
                Next::Continue
            }
            // Go 1.19 emits the `)` before its error, so the parser meets an unmatched one
            // first and reports it as `unexpected ")" in CONTEXT`.
            ')' => {
                self.emit(TokKind::RightParen);
                if self.open_parens.pop().is_none() {
                    let paren = self.pos - 1..self.pos;
                    self.error_spanning("unexpected right paren U+0029 ')'".into(), paren)
                } else {
                    Next::Continue
                }
            }
            c if c.is_ascii() && !c.is_ascii_control() => {
                self.emit(TokKind::Char);
                Next::Continue
            }
            c => self.error(format!(
                "unrecognized character in action: {}",
                format_rune_u(Some(c))
            )),
        };
        match stop {
            Next::Continue => Ok(true),
            Next::Stop => Err(()),
        }
    }

    /// `lexSpace`: a run of spaces, leaving the space of a ` -}}`.
    fn lex_space(&mut self) -> Next {
        let mut n = 0;
        while let Some(c) = self.peek() {
            if !is_space(c) {
                break;
            }
            self.pos += 1;
            n += 1;
        }
        let last = self.input.as_bytes().get(self.pos - 1..).unwrap_or(&[]);
        if has_right_trim_marker(last) && last.get(2..).is_some_and(|r| r.starts_with(b"}}")) {
            self.pos -= 1;
            if n == 1 {
                // On the delimiter: lexInsideAction goes right to lexRightDelim.
                return Next::Continue;
            }
        }
        self.emit(TokKind::Space);
        Next::Continue
    }

    /// `lexIdentifier`.
    fn lex_identifier(&mut self) -> Next {
        while let Some(c) = self.peek() {
            if !is_alphanumeric(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
        if !self.at_terminator() {
            let c = self.peek();
            return self.bad_character(c);
        }
        let word = &self.input[self.start..self.pos];
        if let Some(k) = keyword(word) {
            self.emit(k);
        } else if word == "true" || word == "false" {
            self.emit(TokKind::Bool);
        } else {
            self.emit(TokKind::Identifier);
        }
        Next::Continue
    }

    fn bad_character(&mut self, c: Option<char>) -> Next {
        self.error(format!("bad character {}", format_rune_u(c)))
    }

    /// `lexVariable` / `lexField` / `lexFieldOrVariable`: the `$` or `.` is read.
    fn lex_variable(&mut self) -> Next {
        if self.at_terminator() {
            self.emit(TokKind::Variable);
            return Next::Continue;
        }
        self.lex_field_or_variable(TokKind::Variable)
    }

    fn lex_field_or_variable(&mut self, kind: TokKind) -> Next {
        if self.at_terminator() {
            if kind == TokKind::Variable {
                self.emit(TokKind::Variable);
            } else {
                self.emit(TokKind::Dot);
            }
            return Next::Continue;
        }
        while let Some(c) = self.peek() {
            if !is_alphanumeric(c) {
                break;
            }
            self.pos += c.len_utf8();
        }
        if !self.at_terminator() {
            let c = self.peek();
            return self.bad_character(c);
        }
        self.emit(kind);
        Next::Continue
    }

    /// `lexChar`: a character constant; the parser checks its syntax.
    fn lex_char(&mut self) -> Next {
        loop {
            match self.next() {
                Some('\\') => match self.next() {
                    None | Some('\n') => {
                        return self.error("unterminated character constant".into())
                    }
                    Some(_) => {}
                },
                None | Some('\n') => return self.error("unterminated character constant".into()),
                Some('\'') => break,
                Some(_) => {}
            }
        }
        self.emit(TokKind::CharConstant);
        Next::Continue
    }

    /// `lexNumber`: a number's characters; the parser checks its syntax.
    fn lex_number(&mut self) -> Next {
        if !self.scan_number() {
            let text = self.input.get(self.start..self.pos).unwrap_or("");
            return self.error(format!("bad number syntax: {}", go_quote(text)));
        }
        if matches!(self.peek(), Some('+' | '-')) {
            // Complex: 1+2i.
            if !self.scan_number() || self.input.as_bytes().get(self.pos - 1) != Some(&b'i') {
                let text = self.input.get(self.start..self.pos).unwrap_or("");
                return self.error(format!("bad number syntax: {}", go_quote(text)));
            }
            self.emit(TokKind::Complex);
        } else {
            self.emit(TokKind::Number);
        }
        Next::Continue
    }

    /// `scanNumber`.
    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alphanumeric) {
            self.next();
            return false;
        }
        true
    }

    /// `lexQuote`.
    fn lex_quote(&mut self) -> Next {
        loop {
            match self.next() {
                Some('\\') => match self.next() {
                    None | Some('\n') => return self.error("unterminated quoted string".into()),
                    Some(_) => {}
                },
                None | Some('\n') => return self.error("unterminated quoted string".into()),
                Some('"') => break,
                Some(_) => {}
            }
        }
        self.emit(TokKind::String);
        Next::Continue
    }

    /// `lexRawQuote`.
    fn lex_raw_quote(&mut self) -> Next {
        loop {
            match self.next() {
                None => return self.error("unterminated raw quoted string".into()),
                Some('`') => break,
                Some(_) => {}
            }
        }
        self.emit(TokKind::RawString);
        Next::Continue
    }
}

/// Go's `strconv.IsPrint`: a letter, mark, number, punctuation or symbol, or U+0020.
fn is_go_print(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    if c == ' ' {
        return true;
    }
    !matches!(
        get_general_category(c),
        G::Control
            | G::Format
            | G::Surrogate
            | G::PrivateUse
            | G::Unassigned
            | G::SpaceSeparator
            | G::LineSeparator
            | G::ParagraphSeparator
    )
}

/// Go's `strconv.Quote` (what `%q` prints): `"`-quoted, `\a\b\f\n\r\t\v`, `\\`, `\"`
/// escaped, other non-printable characters as `\x`, `\u` or `\U`.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if !is_go_print(c) => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32))
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32))
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}
