//! The template language's grammar, after Go's `text/template/parse` (Go 1.23:
//! `parse.go` — `Tree.parse`, `parseDefinition`, `itemList`, `textOrAction`, `action`,
//! `breakControl`, `continueControl`, `pipeline`, `checkPipeline`, `parseControl`,
//! `ifControl`, `rangeControl`, `withControl`, `endControl`, `elseControl`, `blockControl`,
//! `templateControl`, `command`, `operand`, `term`, `useVar`, `add`, `IsEmptyTree` — and
//! `node.go`'s `newNumber`), parsed with chumsky over the tokens of [`lex`] (a port of
//! `lex.go`).
//!
//! Errors are Go's: the first one met in reading order, with Go's message (`unexpected
//! {{end}}`, `unexpected EOF`, `missing value for command`, `function "x" not defined`,
//! `undefined variable "$x"`, ...), a span (the token or action concerned; for an action,
//! parenthesis or control left open, where it opens, though Go reports it where the text
//! ends: `unexpected EOF` for an `{{if}}` without `{{end}}` at the `if`, which is what to
//! fix, not at the last line; `unclosed action` at the line where the action starts, which
//! Go's message names while its position is the line after), and where there is something to say, what to do. Every detected error is
//! recorded in the parser's state the moment it is found (the grammar only records one once
//! it is committed to a construct, never in a lookahead), so the first recorded is the one
//! Go reports.
//!
//! Differences from Go, all on input Go accepts but the catalog has no use for: complex
//! constants (`1i`, `1+2i`) are an error (the syntax tree has real numbers only); a `\x`
//! or octal escape that makes a string invalid UTF-8 is replaced by U+FFFD; and nesting
//! (parentheses plus `if`/`with`/`range`/`define`/`block`, `else if` counting one more) is
//! bounded by [`MAX_NESTING`] so that no input can exhaust the stack. Letters, digits and
//! printable characters are Go's (`unicode.IsLetter`, `IsDigit`, `strconv.IsPrint`: by
//! general category, from the `unicode-general-category` tables). Against Go 1.19 (Debian's, which the differential tests run):
//! `{{else with}}` parses (Go 1.23); `tests/parse_go.rs` lists this. An unmatched `)` is
//! Go 1.19's `unexpected ")" in CONTEXT`: the lexer emits the `)` before its own error, so
//! the parser meets it first (Go 1.20's lexer reports `unexpected right paren` itself).

mod lex;
mod literal;

use std::collections::BTreeMap;

use chumsky::error::Cheap;
use chumsky::extra;
use chumsky::input::MapExtra;
use chumsky::inspector::SimpleState;
use chumsky::prelude::*;

use crate::ast::{Arg, Branch, Command, Define, Node, Pipeline, Variable};
use crate::{funcs, ParseError, Span, Template};

pub use lex::{lex, Tok, TokKind};

/// The deepest nesting of parentheses and `if`/`with`/`range`/`define`/`block` (an `else
/// if` counts as one more level, as Go nests it) that parses. Go allows 10000 parentheses
/// and any depth of actions; this bound keeps the recursive parser within a thread's stack.
pub const MAX_NESTING: usize = 100;

type In<'a> = &'a [Tok<'a>];
type Err = Cheap;
type Ex<'a> = extra::Full<Err, SimpleState<St>, ()>;
type Boxed<'a, O> = chumsky::Boxed<'a, 'a, In<'a>, O, Ex<'a>>;

/// The parser's state: what Go's `Tree` keeps while parsing.
#[derive(Default)]
struct St {
    /// Variables defined at the moment (`Tree.vars`).
    vars: Vec<String>,
    /// `Tree.rangeDepth`.
    range_depth: usize,
    /// The first error found.
    fatal: Option<ParseError>,
    /// `define` and `block` bodies in the order they end, as `Tree.add` sees them.
    defines: BTreeMap<String, Define>,
    /// The template's name, for messages.
    name: String,
    /// `Tree.actionLine`: the line of the `{{` of the action being read, 0 when none (Go
    /// clears it when an action ends, nested ones included).
    action_line: usize,
    /// The `{{` of the last action begun.
    last_ld: Span,
    /// The controls, definitions and blocks begun and not ended: where their action's `{{`
    /// is and what they are, for `unexpected EOF`.
    open: Vec<(Span, &'static str)>,
}

fn err_at(span: Span, message: impl Into<String>, help: Option<&str>) -> ParseError {
    ParseError {
        span,
        message: message.into(),
        help: help.map(str::to_string),
    }
}

fn state<'a, 'b, 'c>(e: &'c mut MapExtra<'a, 'b, In<'a>, Ex<'a>>) -> &'c mut St {
    &mut e.state().0
}

/// Records `err` as the parse's error (unless one was found before) and fails.
fn fatal<'a, 'b>(e: &mut MapExtra<'a, 'b, In<'a>, Ex<'a>>, err: ParseError) -> Err {
    let st = state(e);
    if st.fatal.is_none() {
        st.fatal = Some(err);
    }
    Cheap::new(e.span())
}

/// `item.String()` in lex.go: how Go names a token in a message.
fn describe(t: &Tok) -> String {
    if t.kind == TokKind::Eof {
        return "EOF".into();
    }
    if let TokKind::Error(msg) = &t.kind {
        return msg.clone();
    }
    if t.kind.is_keyword() {
        return format!("<{}>", t.val);
    }
    if t.val.len() > 10 {
        let head: String = t.val.chars().take(10).collect();
        return format!("{}...", lex::go_quote(&head));
    }
    lex::go_quote(t.val)
}

/// `Tree.unexpected`: a lexer error is reported as itself, anything else as `unexpected X
/// in CONTEXT`.
fn unexpected_err(t: &Tok, context: &str, st: &St) -> ParseError {
    if let TokKind::Error(msg) = &t.kind {
        let msg = if st.action_line != 0 && st.action_line != t.line {
            if msg.ends_with(" action") {
                format!("{msg} started at {}:{}", st.name, st.action_line)
            } else {
                format!("{msg} in action started at {}:{}", st.name, st.action_line)
            }
        } else {
            msg.clone()
        };
        let help = if msg.starts_with("unclosed action") {
            Some("close the action with }} (an action ends on the line where it starts unless a string or parentheses span lines)")
        } else if msg.starts_with("bad character") {
            Some("put a space between arguments; a name is letters, digits and _")
        } else if msg.starts_with("unclosed comment") {
            Some("end the comment with */}}")
        } else if msg.starts_with("comment ends before closing delimiter") {
            Some("a comment must be the whole action: {{/* ... */}}")
        } else {
            None
        };
        return err_at(t.span.clone(), msg, help);
    }
    let help = match (&t.kind, context) {
        (TokKind::Char | TokKind::Assign, _) if t.val == "=" || t.val == "," => {
            Some("declare a variable with $name := value, assign with $name = value")
        }
        (TokKind::Define, _) => Some("{{define}} is allowed only at the top level of a template"),
        (_, "operand") => Some("separate arguments with spaces and commands with |"),
        _ => None,
    };
    err_at(
        t.span.clone(),
        format!("unexpected {} in {}", describe(t), context),
        help,
    )
}

fn tok<'a>(kind: TokKind) -> impl Parser<'a, In<'a>, Tok<'a>, Ex<'a>> + Clone {
    any().filter(move |t: &Tok<'a>| t.kind == kind)
}

/// A run of space tokens (none or more).
fn sp<'a>() -> impl Parser<'a, In<'a>, (), Ex<'a>> + Clone {
    tok(TokKind::Space).repeated()
}

/// Fails with `Tree.unexpected(token, context)` on whatever token comes.
fn unexpected<'a, O>(context: &'static str) -> impl Parser<'a, In<'a>, O, Ex<'a>> + Clone {
    any().try_map_with(move |t: Tok<'a>, e| {
        let err = unexpected_err(&t, context, state(e));
        Err(fatal(e, err))
    })
}

/// `{{` and any spaces; Go's `textOrAction` notes the action's line (`actionLine`).
fn ld_set<'a>() -> impl Parser<'a, In<'a>, Tok<'a>, Ex<'a>> + Clone {
    tok(TokKind::LeftDelim)
        .try_map_with(|l: Tok<'a>, e| {
            let st = state(e);
            st.action_line = l.line;
            st.last_ld = l.span.clone();
            Ok(l)
        })
        .then_ignore(sp())
}

/// The action is read: no action line (Go's `clearActionLine`).
fn clear<'a>() -> impl Parser<'a, In<'a>, (), Ex<'a>> + Clone {
    empty().try_map_with(|(), e| {
        state(e).action_line = 0;
        Ok(())
    })
}

/// Notes that the construct whose action began last (`if`, `range`, ...) is open.
fn open<'a>(what: &'static str) -> impl Parser<'a, In<'a>, (), Ex<'a>> + Clone {
    empty().try_map_with(move |(), e| {
        let st = state(e);
        let at = st.last_ld.clone();
        st.open.push((at, what));
        Ok(())
    })
}

/// Succeeds with the state's variable count (for `popVars`).
fn mark<'a>() -> impl Parser<'a, In<'a>, usize, Ex<'a>> + Clone {
    empty().try_map_with(|(), e| {
        let st = state(e);
        Ok(st.vars.len())
    })
}

/// The `{{ ... }}` items that end an item list: `{{end}}`, `{{else}}` (its span; the
/// `if`/`with` of an `{{else if}}`/`{{else with}}` is left unread).
#[derive(Clone, Debug)]
enum ElseKind {
    Plain,
    If,
    With,
}

/// The handle a recursive `if`/`with` body has on itself (for `{{else if}}`).
type BodyRec<'a> = Recursive<chumsky::recursive::Direct<'a, 'a, In<'a>, Body, Ex<'a>>>;

/// What `ifControl` and friends parse after their keyword.
#[derive(Clone, Debug)]
struct Body {
    pipe: Pipeline,
    list: Vec<Node>,
    else_list: Option<Vec<Node>>,
    /// The span of the `{{end}}` action.
    end: Span,
}

fn is_operand_start(k: &TokKind) -> bool {
    matches!(
        k,
        TokKind::Bool
            | TokKind::CharConstant
            | TokKind::Complex
            | TokKind::Dot
            | TokKind::Field
            | TokKind::Identifier
            | TokKind::Number
            | TokKind::Nil
            | TokKind::RawString
            | TokKind::String
            | TokKind::Variable
            | TokKind::LeftParen
    )
}

/// `Node.String()` of a literal term, for `unexpected . after term %q`.
fn term_text(a: &Arg, text_of: &str) -> Option<String> {
    match a {
        Arg::Bool { value, .. } => Some(value.to_string()),
        Arg::String { .. } | Arg::Number { .. } => Some(text_of.to_string()),
        Arg::Nil { .. } => Some("nil".into()),
        Arg::Dot { .. } => Some(".".into()),
        _ => None,
    }
}

/// `term` and `operand`: a literal, function name, `.`, `.Field`, `$var`, or
/// `( pipeline )`, followed by any `.Field`s.
fn operand_parser<'a>(pipeline_in_parens: Boxed<'a, (Pipeline, Span)>) -> Boxed<'a, Arg> {
    use TokKind as K;
    let term = any()
        .filter(|t: &Tok<'a>| is_operand_start(&t.kind) && t.kind != K::LeftParen)
        .try_map_with(|t: Tok<'a>, e| {
            let span = t.span.clone();
            Ok(match t.kind {
                K::Identifier => {
                    if !funcs::is_defined(t.val) {
                        let help = match crate::values_file::suggest(t.val, funcs::NAMES) {
                            Some(f) => format!("did you mean `{f}`?"),
                            None => "use a function Go's text/template or slim-sprig defines"
                                .to_string(),
                        };
                        let mut err = err_at(
                            span,
                            format!("function {} not defined", lex::go_quote(t.val)),
                            None,
                        );
                        err.help = Some(help);
                        return Err(fatal(e, err));
                    }
                    Arg::Identifier {
                        span,
                        name: t.val.to_string(),
                    }
                }
                K::Dot => Arg::Dot { span },
                K::Nil => Arg::Nil { span },
                K::Variable => {
                    let st = state(e);
                    if !st.vars.iter().any(|v| v == t.val) {
                        return Err(fatal(
                            e,
                            err_at(
                                span,
                                format!("undefined variable {}", lex::go_quote(t.val)),
                                Some("declare it first with {{ $name := value }}; a variable declared inside if, with or range ends at its {{end}}"),
                            ),
                        ));
                    }
                    Arg::Variable {
                        span,
                        name: t.val.to_string(),
                        fields: Vec::new(),
                    }
                }
                K::Field => Arg::Field {
                    span,
                    names: vec![t.val.get(1..).unwrap_or("").to_string()],
                },
                K::Bool => Arg::Bool {
                    span,
                    value: t.val == "true",
                },
                K::CharConstant | K::Complex | K::Number => {
                    let value = match t.kind {
                        K::CharConstant => literal::char_constant(t.val),
                        K::Complex => literal::complex(t.val),
                        _ => literal::number(t.val),
                    };
                    match value {
                        Ok(value) => Arg::Number {
                            span,
                            text: t.val.to_string(),
                            value,
                        },
                        Err(msg) => return Err(fatal(e, err_at(span, msg, None))),
                    }
                }
                _ => match literal::unquote(t.val) {
                    Ok(value) => Arg::String {
                        span,
                        value,
                        quoted: t.val.to_string(),
                    },
                    Err(msg) => {
                        return Err(fatal(
                            e,
                            err_at(
                                span,
                                msg,
                                Some("check the escapes: Go strings know \\n \\t \\\\ \\\" \\xNN \\uNNNN"),
                            ),
                        ))
                    }
                },
            })
        });
    let paren = tok(K::LeftParen)
        .then(pipeline_in_parens)
        .map(|(lp, (pipe, rp))| Arg::Pipe {
            span: lp.span.start..rp.end,
            pipe,
        });
    let term = choice((paren, term));
    term.then(tok(K::Field).repeated().collect::<Vec<Tok<'a>>>())
        .try_map_with(|(node, fields), e| {
            if fields.is_empty() {
                return Ok(node);
            }
            let names: Vec<String> = fields
                .iter()
                .map(|f| f.val.get(1..).unwrap_or("").to_string())
                .collect();
            let end = fields.last().map_or(0, |f| f.span.end);
            let start = node.span().start;
            Ok(match node {
                Arg::Field {
                    names: mut first, ..
                } => {
                    first.extend(names);
                    Arg::Field {
                        span: start..end,
                        names: first,
                    }
                }
                Arg::Variable {
                    name, mut fields, ..
                } => {
                    fields.extend(names);
                    Arg::Variable {
                        span: start..end,
                        name,
                        fields,
                    }
                }
                Arg::Identifier { .. } | Arg::Pipe { .. } | Arg::Chain { .. } => Arg::Chain {
                    span: start..end,
                    node: Box::new(node),
                    fields: names,
                },
                other => {
                    let text = e
                        .slice()
                        .first()
                        .map(|t: &Tok<'a>| t.val)
                        .unwrap_or_default();
                    let shown = term_text(&other, text).unwrap_or_default();
                    return Err(fatal(
                        e,
                        err_at(
                            other.span(),
                            format!("unexpected . after term {}", lex::go_quote(&shown)),
                            Some("only a field, a variable, a function call or a (pipeline) has fields"),
                        ),
                    ));
                }
            })
        })
        .boxed()
}

/// `command`: operands separated by spaces, up to `|` (read) or the end of the pipeline
/// (left unread).
fn command_parser<'a>(operand: Boxed<'a, Arg>) -> Boxed<'a, Command> {
    use TokKind as K;
    sp().ignore_then(operand.clone())
        .then(
            tok(K::Space)
                .repeated()
                .at_least(1)
                .ignore_then(operand)
                .repeated()
                .collect::<Vec<Arg>>(),
        )
        .then_ignore(sp())
        .then_ignore(choice((
            tok(K::Pipe).ignored(),
            any()
                .filter(|t: &Tok<'a>| matches!(t.kind, K::RightDelim | K::RightParen))
                .rewind()
                .ignored(),
            unexpected("operand"),
        )))
        .map(|(first, rest)| {
            let mut args = Vec::with_capacity(rest.len() + 1);
            args.push(first);
            args.extend(rest);
            let start = args.first().map_or(0, |a| a.span().start);
            let end = args.last().map_or(0, |a| a.span().end);
            Command {
                span: start..end,
                args,
            }
        })
        .boxed()
}

/// `pipeline(context, end)`: declarations, commands, and the end token (read); yields the
/// pipeline and the end token's span.
fn pipeline_parser<'a>(
    context: &'static str,
    end: TokKind,
    operand: Boxed<'a, Arg>,
) -> Boxed<'a, (Pipeline, Span)> {
    use TokKind as K;
    let var = tok(K::Variable);
    let op = choice((tok(K::Declare).to(false), tok(K::Assign).to(true)));
    let comma = any().filter(|t: &Tok<'a>| t.kind == K::Char && t.val == ",");
    let decl_start = var
        .clone()
        .then_ignore(sp())
        .then(choice((op.clone().ignored(), comma.ignored())));
    // After `$i,` in a range: a second variable, or `$i` alone.
    let second = choice((
        var.clone()
            .then_ignore(sp())
            .then(op.clone())
            .map(|(v, a)| (Some(v), a)),
        var.clone()
            .then_ignore(sp())
            .ignore_then(comma)
            .try_map_with(move |c: Tok<'a>, e| {
                Err(fatal(
                    e,
                    err_at(
                        c.span,
                        "too many declarations in range",
                        Some("range declares at most two variables: {{range $i, $v := ...}}"),
                    ),
                ))
            }),
        any()
            .filter(|t: &Tok<'a>| matches!(t.kind, K::Variable | K::RightDelim | K::RightParen))
            .rewind()
            .to((None, false)),
        any().try_map_with(|t: Tok<'a>, e| {
            Err(fatal(
                e,
                err_at(
                    t.span,
                    "range can only initialize variables",
                    Some("write {{range $i, $v := pipeline}}"),
                ),
            ))
        }),
    ));
    let body = var
        .clone()
        .then_ignore(sp())
        .then(choice((
            op.map(|a| (None, a)),
            comma
                .try_map_with(move |c: Tok<'a>, e| {
                    if context == "range" {
                        Ok(())
                    } else {
                        Err(fatal(
                            e,
                            err_at(
                                c.span,
                                format!("too many declarations in {context}"),
                                Some("only range declares two variables"),
                            ),
                        ))
                    }
                })
                .ignore_then(sp())
                .ignore_then(second),
        )))
        .try_map_with(|(first, (second, is_assign)), e| {
            let mut decl = vec![Variable {
                span: first.span.clone(),
                name: first.val.to_string(),
            }];
            if let Some(v) = second {
                decl.push(Variable {
                    span: v.span.clone(),
                    name: v.val.to_string(),
                });
            }
            let st = state(e);
            for v in &decl {
                st.vars.push(v.name.clone());
            }
            Ok((decl, is_assign))
        });
    let decls = choice((
        decl_start.clone().rewind().ignore_then(body).map(Some),
        decl_start.not().to(None),
    ));
    let command = command_parser(operand);
    sp().ignore_then(decls)
        .then(command.repeated().collect::<Vec<Command>>())
        .then_ignore(sp())
        .then(choice((tok(end.clone()), unexpected(context))))
        .try_map_with(move |((decls, cmds), end_tok), e| {
            if cmds.is_empty() {
                return Err(fatal(
                    e,
                    err_at(
                        end_tok.span.clone(),
                        format!("missing value for {context}"),
                        Some("give the action a value: a field, a variable, a constant or a function call"),
                    ),
                ));
            }
            for (i, c) in cmds.iter().enumerate().skip(1) {
                if matches!(
                    c.args.first(),
                    Some(
                        Arg::Bool { .. }
                            | Arg::Dot { .. }
                            | Arg::Nil { .. }
                            | Arg::Number { .. }
                            | Arg::String { .. }
                    )
                ) {
                    return Err(fatal(
                        e,
                        err_at(
                            c.span.clone(),
                            format!("non executable command in pipeline stage {}", i + 1),
                            Some("after | comes a function (the value before | is its last argument)"),
                        ),
                    ));
                }
            }
            let (decl, is_assign) = decls.unwrap_or_default();
            let start = decl
                .first()
                .map(|v| v.span.start)
                .or_else(|| cmds.first().map(|c| c.span.start))
                .unwrap_or(end_tok.span.start);
            let stop = cmds.last().map_or(start, |c| c.span.end);
            Ok((
                Pipeline {
                    span: start..stop,
                    decl,
                    is_assign,
                    cmds,
                },
                end_tok.span,
            ))
        })
        .boxed()
}

/// Go's `IsEmptyTree` for a list: only space text and comments.
fn is_empty_tree(list: &[Node]) -> bool {
    list.iter().all(|n| match n {
        Node::Text { text, .. } => text.trim().is_empty(),
        Node::Comment { .. } => true,
        _ => false,
    })
}

/// `Tree.add`: a definition replaces an empty one; two non-empty ones are an error.
fn add_define(st: &mut St, d: Define) -> Result<(), ParseError> {
    match st.defines.get(&d.name) {
        Some(old) if old.span == d.span => Ok(()),
        Some(old) if !is_empty_tree(&old.body) => {
            if is_empty_tree(&d.body) {
                Ok(())
            } else {
                Err(err_at(
                    d.span.clone(),
                    format!(
                        "template: multiple definition of template {}",
                        lex::go_quote(&d.name)
                    ),
                    Some("give each {{define}} and {{block}} its own name"),
                ))
            }
        }
        _ => {
            st.defines.insert(d.name.clone(), d);
            Ok(())
        }
    }
}

/// The whole grammar: the top-level list of a template (its definitions go to the state).
fn template_parser<'a>() -> Boxed<'a, Vec<Node>> {
    use TokKind as K;

    let operand = recursive(|operand| {
        let paren_pipe = pipeline_parser("parenthesized pipeline", K::RightParen, operand.boxed());
        operand_parser(paren_pipe)
    })
    .boxed();
    let pipeline = |context: &'static str| pipeline_parser(context, K::RightDelim, operand.clone());

    let ld = || tok(K::LeftDelim).then_ignore(sp());
    let rd = || tok(K::RightDelim);

    // `{{end}}`: its span.
    let end_act = ld_set()
        .then_ignore(tok(K::End))
        .then_ignore(sp())
        .then(choice((rd(), unexpected("end"))))
        .then_ignore(clear())
        .map(|(l, r)| l.span.start..r.span.end)
        .boxed();
    // `{{else}}`, or `{{else` before `if`/`with` (left unread).
    let else_any = ld_set()
        .then_ignore(tok(K::Else))
        .then_ignore(sp())
        .then(choice((
            rd().map(|r| (r.span.end, ElseKind::Plain)),
            tok(K::If).rewind().map(|t| (t.span.start, ElseKind::If)),
            tok(K::With)
                .rewind()
                .map(|t| (t.span.start, ElseKind::With)),
            unexpected("else"),
        )))
        .then_ignore(clear())
        .map(|(l, (end, kind))| (l.span.start..end, kind))
        .boxed();
    // After an `{{else}}`: the `{{end}}`.
    let end_after_else = choice((
        end_act.clone(),
        else_any.clone().try_map_with(|(span, _), e| {
            Err(fatal(
                e,
                err_at(span, "expected end; found {{else}}", Some("an if, with or range has one {{else}}; use {{else if ...}} for more branches")),
            ))
        }),
        list_fallback::<_>(),
    ))
    .boxed();

    // A template name: `"name"` or `` `name` `` (`parseTemplateName`).
    let template_name = |context: &'static str| {
        sp().ignore_then(choice((
            any()
                .filter(|t: &Tok<'a>| matches!(t.kind, K::String | K::RawString))
                .try_map_with(|t: Tok<'a>, e| match literal::unquote(t.val) {
                    Ok(name) => Ok((name, t.span)),
                    Err(msg) => Err(fatal(e, err_at(t.span, msg, None))),
                }),
            unexpected(context),
        )))
    };

    // A body with a fresh scope (`define`, `block`): Go parses it as a new tree.
    let enter = || {
        empty().try_map_with(|(), e| {
            let st = state(e);
            let vars = std::mem::replace(&mut st.vars, vec!["$".to_string()]);
            let depth = std::mem::replace(&mut st.range_depth, 0);
            // A new tree: no action line of its own yet.
            st.action_line = 0;
            Ok((vars, depth))
        })
    };
    let body_end = |context: &'static str| {
        choice((
            end_act.clone(),
            else_any.clone().try_map_with(move |(span, _), e| {
                Err(fatal(
                    e,
                    err_at(span, format!("unexpected {{{{else}}}} in {context}"), None),
                ))
            }),
            list_fallback::<_>(),
        ))
    };

    let simple_end = |context: &'static str| sp().ignore_then(choice((rd(), unexpected(context))));

    let item = recursive(|item| {
        let list = item.clone().repeated().collect::<Vec<Node>>().boxed();
        // `{{else}} list {{end}}`.
        let else_plain = ld_set()
            .then_ignore(tok(K::Else))
            .then_ignore(sp())
            .then_ignore(choice((rd(), unexpected("else"))))
            .then_ignore(clear())
            .ignore_then(list.clone())
            .then(end_after_else.clone())
            .map(|(l, end)| (Some(l), end))
            .boxed();

        // `parseControl`: pipeline, list, and the else part; the variables the control
        // declares end with it.
        let control = |context: &'static str,
                       tail: Boxed<'a, (Option<Vec<Node>>, Span)>|
         -> Boxed<'a, Body> {
            let is_range = context == "range";
            open(context)
                .ignore_then(mark())
                .then(pipeline(context))
                .then_ignore(empty().try_map_with(move |(), e| {
                    if is_range {
                        let st = state(e);
                        st.range_depth += 1;
                    }
                    Ok(())
                }))
                .then(list.clone())
                .then_ignore(empty().try_map_with(move |(), e| {
                    if is_range {
                        let st = state(e);
                        st.range_depth = st.range_depth.saturating_sub(1);
                    }
                    Ok(())
                }))
                .then(tail)
                .try_map_with(|(((mark, (pipe, _)), list), (else_list, end)), e| {
                    let st = state(e);
                    st.vars.truncate(mark);
                    st.open.pop();
                    Ok(Body {
                        pipe,
                        list,
                        else_list,
                        end,
                    })
                })
                .boxed()
        };

        const IF_WITH: &[TokKind] = &[TokKind::If, TokKind::With];
        const IF_ONLY: &[TokKind] = &[TokKind::If];
        const WITH_ONLY: &[TokKind] = &[TokKind::With];
        let if_body = recursive(|if_body: BodyRec<'a>| {
            let else_if = ld_set()
                .then_ignore(tok(K::Else))
                .then_ignore(clear())
                .then_ignore(sp())
                .then_ignore(tok(K::If))
                .then(if_body.clone())
                .map(|(l, b)| {
                    let end = b.end.clone();
                    let branch = Branch {
                        span: l.span.start..end.end,
                        pipe: b.pipe,
                        list: b.list,
                        else_list: b.else_list,
                    };
                    (Some(vec![Node::If(branch)]), end)
                });
            let tail_if = choice((
                end_act.clone().map(|end| (None, end)),
                else_if.boxed(),
                else_wrong::<_>(WITH_ONLY).boxed(),
                else_plain.clone(),
                list_fallback::<_>().boxed(),
            ))
            .boxed();
            control("if", tail_if)
        });
        let with_body = recursive(|with_body: BodyRec<'a>| {
            let else_with = ld_set()
                .then_ignore(tok(K::Else))
                .then_ignore(clear())
                .then_ignore(sp())
                .then_ignore(tok(K::With))
                .then(with_body.clone())
                .map(|(l, b)| {
                    let end = b.end.clone();
                    let branch = Branch {
                        span: l.span.start..end.end,
                        pipe: b.pipe,
                        list: b.list,
                        else_list: b.else_list,
                    };
                    (Some(vec![Node::With(branch)]), end)
                });
            let tail_with = choice((
                end_act.clone().map(|end| (None, end)),
                else_with.boxed(),
                else_wrong::<_>(IF_ONLY).boxed(),
                else_plain.clone(),
                list_fallback::<_>().boxed(),
            ))
            .boxed();
            control("with", tail_with)
        });
        let tail_range = choice((
            end_act.clone().map(|end| (None, end)),
            else_wrong::<_>(IF_WITH).boxed(),
            else_plain.clone(),
            list_fallback::<_>().boxed(),
        ))
        .boxed();
        let range_body = control("range", tail_range);
        let branch = |l: Tok<'a>, b: Body| Branch {
            span: l.span.start..b.end.end,
            pipe: b.pipe,
            list: b.list,
            else_list: b.else_list,
        };

        let block = template_name("block clause")
            .then(pipeline("block clause"))
            .then(enter())
            .then(list.clone())
            .then(body_end("block clause"))
            .try_map_with(|((((name, (pipe, _)), saved), body), end), e| {
                let st = state(e);
                st.open.pop();
                st.vars = saved.0;
                st.range_depth = saved.1;
                Ok((name, pipe, body, end))
            });

        let template = template_name("template clause").then(choice((
            sp().ignore_then(rd()).map(|r| (None, r.span)),
            pipeline("template clause").map(|(p, end)| (Some(p), end)),
        )));

        // `action`: a control or a pipeline; `{{end}}` and `{{else}}` are not items.
        let action = ld_set()
            .then(choice((
                tok(K::If)
                    .ignore_then(if_body.clone())
                    .map(|b| (None, Some(("if", b)))),
                tok(K::Range)
                    .ignore_then(range_body)
                    .map(|b| (None, Some(("range", b)))),
                tok(K::With)
                    .ignore_then(with_body.clone())
                    .map(|b| (None, Some(("with", b)))),
                tok(K::Block)
                    .ignore_then(open("block"))
                    .ignore_then(block)
                    .map(|((name, name_span), pipe, body, end)| {
                        (Some(Item::Block(name, name_span, pipe, body, end)), None)
                    }),
                tok(K::Template)
                    .ignore_then(template)
                    .map(|((name, name_span), (pipe, end))| {
                        (Some(Item::Template(name, name_span, pipe, end)), None)
                    }),
                tok(K::Break)
                    .then(simple_end("{{break}}"))
                    .try_map_with(|(b, r), e| {
                        let st = state(e);
                        if st.range_depth == 0 {
                            return Err(fatal(
                                e,
                                err_at(
                                    b.span,
                                    "{{break}} outside {{range}}",
                                    Some("use {{break}} only inside a {{range}}"),
                                ),
                            ));
                        }
                        Ok((Some(Item::Break(r.span)), None))
                    }),
                tok(K::Continue)
                    .then(simple_end("{{continue}}"))
                    .try_map_with(|(b, r), e| {
                        let st = state(e);
                        if st.range_depth == 0 {
                            return Err(fatal(
                                e,
                                err_at(
                                    b.span,
                                    "{{continue}} outside {{range}}",
                                    Some("use {{continue}} only inside a {{range}}"),
                                ),
                            ));
                        }
                        Ok((Some(Item::Continue(r.span)), None))
                    }),
                any()
                    .filter(|t: &Tok<'a>| !matches!(t.kind, K::End | K::Else))
                    .rewind()
                    .ignore_then(pipeline("command"))
                    .map(|(pipe, end)| (Some(Item::Action(pipe, end)), None)),
            )))
            .try_map_with(move |(l, (item, control)), e| {
                state(e).action_line = 0;
                let start = l.span.start;
                if let Some((kind, b)) = control {
                    let br = branch(l, b);
                    return Ok(match kind {
                        "if" => Node::If(br),
                        "range" => Node::Range(br),
                        _ => Node::With(br),
                    });
                }
                Ok(match item {
                    Some(Item::Action(pipe, end)) => Node::Action {
                        span: start..end.end,
                        pipe,
                    },
                    Some(Item::Template(name, name_span, pipe, end)) => Node::Template {
                        span: start..end.end,
                        name,
                        name_span,
                        pipe,
                    },
                    Some(Item::Block(name, name_span, pipe, body, end)) => {
                        let span = start..end.end;
                        let st = state(e);
                        if let Err(err) = add_define(
                            st,
                            Define {
                                name: name.clone(),
                                span: span.clone(),
                                body,
                            },
                        ) {
                            return Err(fatal(e, err));
                        }
                        Node::Template {
                            span,
                            name,
                            name_span,
                            pipe: Some(pipe),
                        }
                    }
                    Some(Item::Break(end)) => Node::Break {
                        span: start..end.end,
                    },
                    Some(Item::Continue(end)) => Node::Continue {
                        span: start..end.end,
                    },
                    // Every alternative above yields an item or a control.
                    None => return Err(Cheap::new(e.span())),
                })
            });

        choice((
            tok(K::Text).map(|t: Tok<'a>| Node::Text {
                span: t.span.clone(),
                text: t.val.to_string(),
            }),
            tok(K::Comment).map(|t: Tok<'a>| Node::Comment { span: t.span }),
            action,
        ))
        .boxed()
    })
    .boxed();
    let list = item.clone().repeated().collect::<Vec<Node>>().boxed();

    // `parseDefinition`.
    let define = ld()
        .then_ignore(tok(K::Define))
        .try_map_with(|l: Tok<'a>, e| {
            state(e).open.push((l.span.clone(), "define"));
            Ok(l)
        })
        .then(template_name("define clause"))
        .then_ignore(simple_end("define clause"))
        .then(enter())
        .then(list.clone())
        .then(body_end("define clause"))
        .try_map_with(|((((l, (name, _)), saved), body), end), e| {
            let st = state(e);
            st.open.pop();
            st.vars = saved.0;
            st.range_depth = saved.1;
            let d = Define {
                name,
                span: l.span.start..end.end,
                body,
            };
            if let Err(err) = add_define(st, d) {
                return Err(fatal(e, err));
            }
            Ok(None)
        });

    // `Tree.parse`: the top-level list, where `{{end}}` and `{{else}}` are errors.
    let top = choice((
        define.boxed(),
        item.map(Some).boxed(),
        end_act
            .clone()
            .try_map_with(|span, e| {
                Err(fatal(
                    e,
                    err_at(span, "unexpected {{end}}", Some("this {{end}} closes nothing: remove it, or add the {{if}}, {{with}}, {{range}}, {{define}} or {{block}} it should close")),
                ))
            })
            .boxed(),
        else_any
            .clone()
            .try_map_with(|(span, _), e| {
                Err(fatal(
                    e,
                    err_at(span, "unexpected {{else}}", Some("{{else}} belongs inside {{if}}, {{with}} or {{range}}")),
                ))
            })
            .boxed(),
    ));
    top.repeated()
        .collect::<Vec<Option<Node>>>()
        .then_ignore(choice((tok(K::Eof).ignored(), unexpected("input"))))
        .map(|items| items.into_iter().flatten().collect())
        .boxed()
}

/// What ends a list that ends neither in `{{end}}` nor `{{else}}`: `unexpected EOF`, or the
/// lexer's error.
fn list_fallback<'a, O>() -> impl Parser<'a, In<'a>, O, Ex<'a>> + Clone {
    any().try_map_with(|t: Tok<'a>, e| {
        let err = if t.kind == TokKind::Eof {
            // Go reports it at the end; the span is the action left without its {{end}}.
            match state(e).open.last() {
                Some((at, what)) => ParseError {
                    span: at.clone(),
                    message: "unexpected EOF".into(),
                    help: Some(format!(
                        "this {{{{{what}}}}} has no {{{{end}}}}: add one where its body ends"
                    )),
                },
                None => err_at(t.span.clone(), "unexpected EOF", None),
            }
        } else {
            unexpected_err(&t, "input", state(e))
        };
        Err(fatal(e, err))
    })
}

/// `{{else if}}`/`{{else with}}` where it is not allowed: Go reads the keyword as the start
/// of the else list's first item (`unexpected <if> in input`).
fn else_wrong<'a, O>(kinds: &'static [TokKind]) -> impl Parser<'a, In<'a>, O, Ex<'a>> + Clone {
    ld_set()
        .then_ignore(clear())
        .then_ignore(tok(TokKind::Else))
        .then_ignore(sp())
        .ignore_then(
            any()
                .filter(move |t: &Tok<'a>| kinds.contains(&t.kind))
                .try_map_with(|t: Tok<'a>, e| {
                    let err = unexpected_err(&t, "input", state(e));
                    Err(fatal(e, err))
                }),
        )
}

/// An action's parts before they become a node.
#[derive(Clone, Debug)]
enum Item {
    Action(Pipeline, Span),
    Template(String, Span, Option<Pipeline>, Span),
    Block(String, Span, Pipeline, Vec<Node>, Span),
    Break(Span),
    Continue(Span),
}

/// Checks nesting before parsing: parentheses plus controls deeper than [`MAX_NESTING`]
/// are an error at the token that goes too deep.
fn check_nesting(toks: &[Tok]) -> Result<usize, ParseError> {
    let mut max = 0;
    let mut frames: Vec<usize> = Vec::new();
    let mut controls = 0usize;
    let mut parens = 0usize;
    let mut after_ld = false;
    let mut after_else = false;
    for t in toks {
        let mut deeper = false;
        match t.kind {
            TokKind::Space => continue,
            TokKind::LeftParen => {
                parens += 1;
                deeper = true;
            }
            TokKind::RightParen => parens = parens.saturating_sub(1),
            TokKind::RightDelim => parens = 0,
            TokKind::If | TokKind::With if after_else => {
                if let Some(top) = frames.last_mut() {
                    *top += 1;
                    controls += 1;
                    deeper = true;
                }
            }
            TokKind::If | TokKind::With | TokKind::Range | TokKind::Define | TokKind::Block
                if after_ld =>
            {
                frames.push(1);
                controls += 1;
                deeper = true;
            }
            TokKind::End if after_ld => {
                controls -= frames.pop().unwrap_or(0).min(controls);
            }
            _ => {}
        }
        if deeper && controls + parens > MAX_NESTING {
            return Err(err_at(
                t.span.clone(),
                format!("nesting deeper than {MAX_NESTING} levels (parentheses, if, with, range, define and block)"),
                Some("split the template into {{define}}d parts"),
            ));
        }
        max = max.max(controls + parens);
        after_else = t.kind == TokKind::Else;
        after_ld = t.kind == TokKind::LeftDelim;
    }
    Ok(max)
}

/// The stack of the thread that parses: the recursive grammar takes tens of kilobytes a
/// level in a debug build, so [`MAX_NESTING`] levels need more than a test thread's 2 MiB.
/// Only the pages used are ever touched.
const PARSE_STACK_BYTES: usize = 64 << 20;

/// Parses `text`, the template named `name`, on a thread of its own with a stack large
/// enough for [`MAX_NESTING`] levels.
pub fn parse(name: &str, text: &str) -> Result<Template, Vec<ParseError>> {
    let toks = lex::lex(text);
    let depth = match check_nesting(&toks) {
        Ok(depth) => depth,
        Err(e) => return Err(vec![e]),
    };
    if depth <= INLINE_NESTING {
        return parse_tokens(name, text, &toks);
    }
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("template-parse".into())
            .stack_size(PARSE_STACK_BYTES)
            .spawn_scoped(scope, || parse_tokens(name, text, &toks));
        match spawned {
            Ok(handle) => handle.join().unwrap_or_else(|_| {
                Err(vec![err_at(
                    0..0,
                    "internal error: the template parser stopped",
                    Some("please report this template"),
                )])
            }),
            Err(e) => Err(vec![err_at(
                0..0,
                format!("cannot start the template parser's thread: {e}"),
                None,
            )]),
        }
    })
}

/// Nesting up to this depth is parsed on the calling thread (a few hundred kilobytes of
/// stack in a debug build); deeper templates get a thread of their own.
const INLINE_NESTING: usize = 8;

/// [`parse`] of the tokens on the calling thread's stack.
fn parse_tokens(name: &str, text: &str, toks: &[Tok<'_>]) -> Result<Template, Vec<ParseError>> {
    let mut state = SimpleState(St {
        vars: vec!["$".to_string()],
        name: name.to_string(),
        ..St::default()
    });
    let parser = template_parser();
    let result = parser.parse_with_state(toks, &mut state);
    let (root, errors) = result.into_output_errors();
    let mut st = state.0;
    if let Some(err) = st.fatal.take() {
        return Err(vec![err]);
    }
    let Some(mut root) = root else {
        // Every failure records its error; this is a safety net.
        let at = errors
            .first()
            .map(|e| e.span().start)
            .and_then(|i| toks.get(i))
            .map_or(text.len()..text.len(), |t| t.span.clone());
        return Err(vec![err_at(at, "syntax error", None)]);
    };
    // `Tree.add` for the main template, added last: it replaces an empty definition of its
    // name; a non-empty definition stands in for an empty main template; both non-empty is
    // an error.
    if let Some(d) = st.defines.get(name) {
        if is_empty_tree(&d.body) {
            let main = Define {
                name: name.to_string(),
                span: 0..text.len(),
                body: root.clone(),
            };
            st.defines.insert(name.to_string(), main);
        } else if is_empty_tree(&root) {
            root = d.body.clone();
        } else {
            return Err(vec![err_at(
                d.span.clone(),
                format!(
                    "template: multiple definition of template {}",
                    lex::go_quote(name)
                ),
                Some("the template's own text and a {{define}} of its name are both non-empty"),
            )]);
        }
    }
    Ok(Template {
        name: name.to_string(),
        root,
        defines: st.defines,
    })
}
