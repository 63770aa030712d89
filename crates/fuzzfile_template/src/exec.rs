//! Executing a template: Go's `text/template/exec.go` (`state.walk`, `walkIfOrWith`,
//! `walkRange`, `walkTemplate`, `evalPipeline`, `evalCommand`, `evalField`, `evalCall`,
//! `evalArg`, `validateType`, `printValue`), with the functions of [`crate::funcs`].
//!
//! - Printing is `fmt.Fprint` of the pipeline's value ([`crate::funcs`]' `gofmt`); an
//!   invalid value (a missing map key, a nil result) prints `<no value>`.
//! - A missing map key is Go's invalid value (`missingkey=default`): `<no value>` when
//!   printed, nil for an `interface {}` argument, an error (`invalid value; expected
//!   string`) for a typed one. Each lookup that misses is a [`NoteKind::MissingKey`].
//! - Variables: a stack of (name, value), `$` the data root; a block (`if`, `with`, each
//!   `range` iteration) pops what it pushed when it ends; `$x = v` sets the nearest `$x`.
//!   A `template` call starts with `$` = its dot alone.
//! - `and`/`or` evaluate their arguments lazily and return the deciding one (Go ≥ 1.18).
//! - `range` over lists and maps (keys sorted, as Go's fmtsort); over an int it is an error,
//!   as in Go 1.19 (`range can't iterate over 3`); `break`/`continue`.
//! - Errors carry the span of the node Go reports them at (exec.go `state.at`) and Go's
//!   message after its `template: NAME:LINE:COL: executing ... at <...>: ` prefix; `fail`'s
//!   error is [`ExecErrorKind::Fail`] with the template's own message. An undefined
//!   `{{template "x"}}` is at the name, as in Go. Where Go's position is a parser artifact
//!   the span is the node concerned instead (the differential test prints these): a field
//!   chain `.S.Field` or `.A.B.C` spans the whole chain (Go positions a chain's node where
//!   its second field starts, `.B` for an error about `C`); `$x = 1` with `$x` undeclared
//!   is at `$x` (Go: at the command `1`).
//! - The source map: every output byte is in one [`Segment`]: copied text maps exactly
//!   ([`Origin::Text`]), printed text to its action with the root keys the printed value
//!   derives from ([`Origin::Action`]): read as `.Name` on the root or `$.Name`, or carried by
//!   a variable or dot that holds such a value.

use std::collections::BTreeSet;

use crate::ast::{Arg, Branch, Command, Node, Number, Pipeline};
use crate::funcs::gv::{TimeUnit, V};
use crate::funcs::{self, gofmt, CallError, Ctx, Random, Ty};
use crate::{
    ExecError, ExecErrorKind, Note, NoteKind, Origin, RenderOptions, Rendered, Segment, Span,
    Template, Value,
};

/// How deep blocks (`if`, `with`, `range`, a `template` call's body) and parenthesized
/// pipelines may nest at run time, all counted together: deeper is an
/// [`ExecErrorKind::Limit`] error (Go has no such bound; its goroutine stacks grow).
pub const NEST_LIMIT: usize = 20_000;

/// The executor's thread stack: enough for [`NEST_LIMIT`] levels in a debug build (measured:
/// 20,000 levels overflow 48 MiB and fit in 96 MiB; only the pages used are touched).
const STACK_BYTES: usize = 256 << 20;

/// Where no thread can be started: a nesting bound that the caller's stack holds.
const NEST_LIMIT_INLINE: usize = 200;

/// A template whose nesting (counted as [`NEST_LIMIT`] counts it, through the templates it
/// calls) is at most this, and that calls no template recursively, runs on the caller's
/// stack (a thread costs more than most renders: 15 µs against 150 µs and up).
const INLINE_DEPTH: usize = 100;

pub fn render(
    template: &Template,
    data: &Value,
    options: &RenderOptions,
) -> Result<Rendered, ExecError> {
    if static_depth(template).is_some_and(|d| d <= INLINE_DEPTH) {
        return execute(template, data, options, NEST_LIMIT_INLINE);
    }
    let spawned = std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name("template-exec".into())
            .stack_size(STACK_BYTES)
            .spawn_scoped(scope, || execute(template, data, options, NEST_LIMIT));
        match worker {
            Ok(handle) => Some(handle.join().unwrap_or_else(|_| {
                Err(err(
                    &(0..0),
                    ExecErrorKind::Limit,
                    "the template executor stopped unexpectedly",
                ))
            })),
            Err(_) => None,
        }
    });
    match spawned {
        Some(result) => result,
        None => execute(template, data, options, NEST_LIMIT_INLINE),
    }
}

/// The deepest nesting a render of `template` can reach (blocks and pipelines, through
/// `template` calls), or `None` where a call may recur or the nesting passes
/// [`INLINE_DEPTH`] (the count stops there, so this recursion is shallow).
fn static_depth(template: &Template) -> Option<usize> {
    struct Walk<'a> {
        template: &'a Template,
        /// Per define: `None` while being measured (a call to it then is recursion).
        memo: std::collections::BTreeMap<&'a str, Option<usize>>,
    }
    impl<'a> Walk<'a> {
        fn list(&mut self, list: &'a [Node], at: usize) -> Option<usize> {
            let at = at + 1;
            if at > INLINE_DEPTH {
                return None;
            }
            let mut deepest = at;
            for node in list {
                deepest = deepest.max(self.node(node, at)?);
            }
            Some(deepest)
        }
        fn node(&mut self, node: &'a Node, at: usize) -> Option<usize> {
            match node {
                Node::Action { pipe, .. } => self.pipe(pipe, at),
                Node::If(b) | Node::With(b) | Node::Range(b) => {
                    let mut d = self.pipe(&b.pipe, at)?.max(self.list(&b.list, at)?);
                    if let Some(e) = &b.else_list {
                        d = d.max(self.list(e, at)?);
                    }
                    Some(d)
                }
                Node::Template { name, pipe, .. } => {
                    let p = match pipe {
                        Some(p) => self.pipe(p, at)?,
                        None => at,
                    };
                    let body = match self.memo.get(name.as_str()) {
                        Some(Some(d)) => *d,
                        Some(None) => return None,
                        None => match self.template.defines.get(name) {
                            Some(def) => {
                                self.memo.insert(name, None);
                                let d = self.list(&def.body, 0)?;
                                self.memo.insert(name, Some(d));
                                d
                            }
                            None => 0,
                        },
                    };
                    let d = p.max(at + body);
                    (d <= INLINE_DEPTH).then_some(d)
                }
                Node::Text { .. }
                | Node::Comment { .. }
                | Node::Break { .. }
                | Node::Continue { .. } => Some(at),
            }
        }
        fn pipe(&mut self, pipe: &'a Pipeline, at: usize) -> Option<usize> {
            let at = at + 1;
            if at > INLINE_DEPTH {
                return None;
            }
            let mut deepest = at;
            for cmd in &pipe.cmds {
                for arg in &cmd.args {
                    deepest = deepest.max(self.arg(arg, at)?);
                }
            }
            Some(deepest)
        }
        fn arg(&mut self, arg: &'a Arg, at: usize) -> Option<usize> {
            match arg {
                Arg::Pipe { pipe, .. } => self.pipe(pipe, at),
                Arg::Chain { node, .. } => self.arg(node, at),
                _ => Some(at),
            }
        }
    }
    let mut walk = Walk {
        template,
        memo: Default::default(),
    };
    walk.list(&template.root, 0)
}

fn execute(
    template: &Template,
    data: &Value,
    options: &RenderOptions,
    nest_limit: usize,
) -> Result<Rendered, ExecError> {
    let root = Ev {
        v: V::from_value(data),
        prov: BTreeSet::new(),
        root: true,
        boxed: false,
    };
    gofmt::guard_reset(options.max_output_bytes);
    let mut st = State {
        tmpl: template,
        opts: options,
        out: String::new(),
        segs: Vec::new(),
        notes: Vec::new(),
        vars: vec![Var {
            name: "$".into(),
            ev: root.clone(),
        }],
        depth: 0,
        nest: 0,
        nest_limit,
        steps: 0,
        rng: Random::new(options.seed),
    };
    st.walk_list(&root, &template.root)?;
    Ok(Rendered {
        text: st.out,
        map: crate::SourceMap { segments: st.segs },
        notes: st.notes,
    })
}

/// A value with what the executor knows of it.
#[derive(Clone, Debug)]
struct Ev {
    v: V,
    /// Root keys the value derives from.
    prov: BTreeSet<String>,
    /// The data root itself (`$` at the top, dot before any `with`/`range`).
    root: bool,
    /// Held in an `interface {}` (a map value, an element of a `[]interface {}`) and not yet
    /// unwrapped by a pipeline: Go names its type `interface {}` in messages.
    boxed: bool,
}

impl Ev {
    fn plain(v: V) -> Ev {
        Ev {
            v,
            prov: BTreeSet::new(),
            root: false,
            boxed: false,
        }
    }

    fn with_prov(v: V, prov: BTreeSet<String>) -> Ev {
        Ev {
            v,
            prov,
            root: false,
            boxed: false,
        }
    }

    /// Go's `value.Type()` as messages print it.
    fn go_type(&self) -> &'static str {
        if self.boxed {
            "interface {}"
        } else {
            self.v.type_name()
        }
    }
}

struct Var {
    name: String,
    ev: Ev,
}

/// What a walk tells the enclosing `range`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Flow {
    Normal,
    Break,
    Continue,
}

struct State<'a> {
    tmpl: &'a Template,
    opts: &'a RenderOptions,
    out: String,
    segs: Vec<Segment>,
    notes: Vec<Note>,
    vars: Vec<Var>,
    depth: usize,
    /// Blocks and parenthesized pipelines being evaluated, nested.
    nest: usize,
    nest_limit: usize,
    /// Nodes walked and commands evaluated so far.
    steps: u64,
    rng: Random,
}

type R<T> = Result<T, ExecError>;

fn err(span: &Span, kind: ExecErrorKind, message: impl Into<String>) -> ExecError {
    ExecError {
        span: span.clone(),
        kind,
        message: message.into(),
    }
}

fn bad(span: &Span, message: impl Into<String>) -> ExecError {
    err(span, ExecErrorKind::BadOperand, message)
}

fn wrong(span: &Span, message: impl Into<String>) -> ExecError {
    err(span, ExecErrorKind::WrongArgument, message)
}

impl State<'_> {
    // ---- output -------------------------------------------------------------------------

    fn write(&mut self, text: &str, origin: Origin, span: &Span) -> R<()> {
        if text.is_empty() {
            return Ok(());
        }
        if self.out.len() + text.len() > self.opts.max_output_bytes {
            return Err(err(
                span,
                ExecErrorKind::Limit,
                format!("output larger than {} bytes", self.opts.max_output_bytes),
            ));
        }
        let start = self.out.len();
        self.out.push_str(text);
        let end = self.out.len();
        if let (Origin::Text { template }, Some(last)) = (&origin, self.segs.last_mut()) {
            if let Origin::Text { template: prev } = &mut last.origin {
                if last.output.end == start && prev.end == template.start {
                    prev.end = template.end;
                    last.output.end = end;
                    return Ok(());
                }
            }
        }
        self.segs.push(Segment {
            output: start..end,
            origin,
        });
        Ok(())
    }

    // ---- walking ------------------------------------------------------------------------

    fn enter(&mut self, span: &Span) -> R<()> {
        self.nest += 1;
        if self.nest > self.nest_limit {
            return Err(err(
                span,
                ExecErrorKind::Limit,
                format!(
                    "blocks and parenthesized pipelines nested deeper than {} levels",
                    self.nest_limit
                ),
            ));
        }
        Ok(())
    }

    fn walk_list(&mut self, dot: &Ev, list: &[Node]) -> R<Flow> {
        let span = list.first().map(Node::span).unwrap_or(0..0);
        self.enter(&span)?;
        let result = self.walk_nodes(dot, list);
        self.nest -= 1;
        result
    }

    /// A value that was too large or too deeply nested to format (a map `set` into itself).
    fn check_format_guard(&self, span: &Span) -> R<()> {
        if gofmt::guard_take_tripped() {
            return Err(err(
                span,
                ExecErrorKind::Limit,
                format!(
                    "a value larger than the output bound ({} bytes) or nested deeper than {} to print",
                    self.opts.max_output_bytes,
                    gofmt::MAX_PRINT_DEPTH
                ),
            ));
        }
        Ok(())
    }

    fn step(&mut self, span: &Span) -> R<()> {
        self.steps += 1;
        if self.steps > self.opts.max_steps {
            return Err(err(
                span,
                ExecErrorKind::Limit,
                format!("the template ran more than {} steps", self.opts.max_steps),
            ));
        }
        Ok(())
    }

    fn walk_nodes(&mut self, dot: &Ev, list: &[Node]) -> R<Flow> {
        for node in list {
            self.step(&node.span())?;
            let flow = self.walk(dot, node)?;
            if flow != Flow::Normal {
                return Ok(flow);
            }
        }
        Ok(Flow::Normal)
    }

    /// exec.go `walk`.
    fn walk(&mut self, dot: &Ev, node: &Node) -> R<Flow> {
        match node {
            Node::Text { span, text } => {
                self.write(
                    text,
                    Origin::Text {
                        template: span.clone(),
                    },
                    span,
                )?;
            }
            Node::Action { span, pipe } => {
                let val = self.eval_pipeline(dot, pipe)?;
                if pipe.decl.is_empty() {
                    // exec.go printValue / printableValue.
                    let text = match &val.v {
                        V::Invalid => "<no value>".to_string(),
                        v => gofmt::format_v(v),
                    };
                    self.check_format_guard(span)?;
                    self.write(
                        &text,
                        Origin::Action {
                            action: span.clone(),
                            values: val.prov.into_iter().collect(),
                        },
                        span,
                    )?;
                }
            }
            Node::Comment { .. } => {}
            Node::If(b) => return self.walk_if_or_with(false, dot, b),
            Node::With(b) => return self.walk_if_or_with(true, dot, b),
            Node::Range(b) => return self.walk_range(dot, b),
            // An undefined template is reported at its name, as Go does (parse.go
            // `templateControl`: the node's position is the name's).
            Node::Template {
                name,
                name_span,
                pipe,
                ..
            } => self.walk_template(dot, name_span, name, pipe.as_ref())?,
            Node::Break { .. } => return Ok(Flow::Break),
            Node::Continue { .. } => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    /// exec.go `walkIfOrWith`.
    fn walk_if_or_with(&mut self, is_with: bool, dot: &Ev, b: &Branch) -> R<Flow> {
        let mark = self.vars.len();
        let result = (|| {
            let val = self.eval_pipeline(dot, &b.pipe)?;
            if val.v.truth() {
                if is_with {
                    self.walk_list(&val, &b.list)
                } else {
                    self.walk_list(dot, &b.list)
                }
            } else if let Some(else_list) = &b.else_list {
                self.walk_list(dot, else_list)
            } else {
                Ok(Flow::Normal)
            }
        })();
        self.vars.truncate(mark);
        result
    }

    /// exec.go `walkRange`.
    fn walk_range(&mut self, dot: &Ev, b: &Branch) -> R<Flow> {
        let mark0 = self.vars.len();
        let result = self.walk_range_inner(dot, b);
        self.vars.truncate(mark0);
        result.map(|_| Flow::Normal)
    }

    fn walk_range_inner(&mut self, dot: &Ev, b: &Branch) -> R<()> {
        let val = self.eval_pipeline(dot, &b.pipe)?;
        let mark = self.vars.len();
        let ndecl = b.pipe.decl.len();
        // (index, element) pairs; elements of a []interface{} or map stay boxed.
        let items: Vec<(V, V, bool)> = match &val.v {
            V::List(l) => l
                .iter()
                .enumerate()
                .map(|(i, e)| (V::Int(i as i64), e.clone(), true))
                .collect(),
            V::Strs(l) => l
                .iter()
                .enumerate()
                .map(|(i, e)| (V::Int(i as i64), V::Str(e.clone()), false))
                .collect(),
            V::Ints(l) => l
                .iter()
                .enumerate()
                .map(|(i, e)| (V::Int(i as i64), V::Int(*e), false))
                .collect(),
            V::Map(m) => m
                .borrow()
                .iter()
                .map(|(k, e)| (V::Str(k.clone()), e.clone(), true))
                .collect(),
            V::StrMap(m) => m
                .iter()
                .map(|(k, e)| (V::Str(k.clone()), V::Str(e.clone()), false))
                .collect(),
            V::Invalid => Vec::new(),
            v => {
                return Err(bad(
                    &b.pipe.span,
                    format!("range can't iterate over {}", gofmt::format_v(v)),
                ))
            }
        };
        if items.is_empty() {
            if let Some(else_list) = &b.else_list {
                self.walk_list(dot, else_list)?;
            }
            return Ok(());
        }
        for (index, elem, boxed) in items {
            let elem = Ev {
                v: elem,
                prov: val.prov.clone(),
                root: false,
                boxed,
            };
            let n = self.vars.len();
            if ndecl > 0 && n > 0 {
                self.vars[n - 1].ev = elem.clone();
            }
            if ndecl > 1 && n > 1 {
                self.vars[n - 2].ev = Ev::with_prov(index, val.prov.clone());
            }
            let flow = self.walk_list(&elem, &b.list);
            self.vars.truncate(mark);
            match flow? {
                Flow::Break => break,
                Flow::Normal | Flow::Continue => {}
            }
        }
        Ok(())
    }

    /// exec.go `walkTemplate`.
    fn walk_template(
        &mut self,
        dot: &Ev,
        span: &Span,
        name: &str,
        pipe: Option<&Pipeline>,
    ) -> R<()> {
        let tmpl = self.tmpl;
        let Some(def) = tmpl.defines.get(name) else {
            return Err(err(
                span,
                ExecErrorKind::UndefinedTemplate,
                format!("template {name:?} not defined"),
            ));
        };
        if self.depth >= self.opts.max_depth {
            return Err(err(
                span,
                ExecErrorKind::Limit,
                format!("exceeded maximum template depth ({})", self.opts.max_depth),
            ));
        }
        let new_dot = match pipe {
            Some(p) => self.eval_pipeline(dot, p)?,
            None => Ev::plain(V::Invalid),
        };
        let saved = std::mem::replace(
            &mut self.vars,
            vec![Var {
                name: "$".into(),
                ev: new_dot.clone(),
            }],
        );
        self.depth += 1;
        let result = self.walk_list(&new_dot, &def.body);
        self.depth -= 1;
        self.vars = saved;
        result.map(|_| ())
    }

    // ---- variables ----------------------------------------------------------------------

    fn var_value(&self, span: &Span, name: &str) -> R<Ev> {
        match self.vars.iter().rev().find(|v| v.name == name) {
            Some(v) => Ok(v.ev.clone()),
            None => Err(bad(span, format!("undefined variable: {name}"))),
        }
    }

    fn set_var(&mut self, span: &Span, name: &str, ev: Ev) -> R<()> {
        match self.vars.iter_mut().rev().find(|v| v.name == name) {
            Some(v) => {
                v.ev = ev;
                Ok(())
            }
            None => Err(bad(span, format!("undefined variable: {name}"))),
        }
    }

    // ---- evaluation ---------------------------------------------------------------------

    /// exec.go `evalPipeline`.
    fn eval_pipeline(&mut self, dot: &Ev, pipe: &Pipeline) -> R<Ev> {
        self.enter(&pipe.span)?;
        let result = self.eval_pipeline_inner(dot, pipe);
        self.nest -= 1;
        result
    }

    fn eval_pipeline_inner(&mut self, dot: &Ev, pipe: &Pipeline) -> R<Ev> {
        let mut value: Option<Ev> = None;
        for cmd in &pipe.cmds {
            self.step(&cmd.span)?;
            let mut v = self.eval_command(dot, cmd, value.take())?;
            // A value in an `interface {}` is unwrapped; a nil one becomes invalid.
            if matches!(v.v, V::Nil) {
                v.v = V::Invalid;
            }
            v.boxed = false;
            value = Some(v);
        }
        let value = value.unwrap_or_else(|| Ev::plain(V::Invalid));
        for var in &pipe.decl {
            if pipe.is_assign {
                self.set_var(&var.span, &var.name, value.clone())?;
            } else {
                self.vars.push(Var {
                    name: var.name.clone(),
                    ev: value.clone(),
                });
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, cmd: &Command, final_: &Option<Ev>) -> R<()> {
        if cmd.args.len() > 1 || final_.is_some() {
            let first = cmd.args.first();
            return Err(wrong(
                &cmd.span,
                format!(
                    "can't give argument to non-function {}",
                    first.map(arg_string).unwrap_or_default()
                ),
            ));
        }
        Ok(())
    }

    /// exec.go `evalCommand`.
    fn eval_command(&mut self, dot: &Ev, cmd: &Command, final_: Option<Ev>) -> R<Ev> {
        let Some(first) = cmd.args.first() else {
            return Err(bad(&cmd.span, "empty command"));
        };
        match first {
            Arg::Field { span, names } => {
                self.eval_field_chain(dot, dot.clone(), span, names, cmd, final_)
            }
            Arg::Chain { span, node, fields } => {
                let recv = self.eval_chain_receiver(dot, span, node)?;
                self.eval_field_chain(dot, recv, span, fields, cmd, final_)
            }
            Arg::Identifier { span, name } => self.eval_function(dot, span, name, cmd, final_),
            Arg::Pipe { pipe, .. } => {
                self.not_a_function(cmd, &final_)?;
                self.eval_pipeline(dot, pipe)
            }
            Arg::Variable {
                span, name, fields, ..
            } => {
                let value = self.var_value(span, name)?;
                if fields.is_empty() {
                    self.not_a_function(cmd, &final_)?;
                    return Ok(value);
                }
                self.eval_field_chain(dot, value, span, fields, cmd, final_)
            }
            Arg::Bool { value, .. } => {
                self.not_a_function(cmd, &final_)?;
                Ok(Ev::plain(V::Bool(*value)))
            }
            Arg::Dot { .. } => {
                self.not_a_function(cmd, &final_)?;
                Ok(dot.clone())
            }
            Arg::Nil { span } => {
                self.not_a_function(cmd, &final_)?;
                Err(wrong(span, "nil is not a command"))
            }
            Arg::Number { span, text, value } => {
                self.not_a_function(cmd, &final_)?;
                Ok(Ev::plain(ideal_constant(span, text, value)?))
            }
            Arg::String { value, .. } => {
                self.not_a_function(cmd, &final_)?;
                Ok(Ev::plain(V::Str(value.clone())))
            }
        }
    }

    fn eval_chain_receiver(&mut self, dot: &Ev, span: &Span, node: &Arg) -> R<Ev> {
        if matches!(node, Arg::Nil { .. }) {
            return Err(bad(
                span,
                format!("indirection through explicit nil in {}", arg_string(node)),
            ));
        }
        self.eval_arg(dot, None, node)
    }

    /// exec.go `evalFieldChain`: `recv.A.B.C`; the last field gets the command's arguments.
    fn eval_field_chain(
        &mut self,
        dot: &Ev,
        recv: Ev,
        span: &Span,
        names: &[String],
        cmd: &Command,
        final_: Option<Ev>,
    ) -> R<Ev> {
        let has_args = cmd.args.len() > 1 || final_.is_some();
        if has_args && names.last().is_some_and(|n| n == "String") {
            // time.Month's and time.Weekday's `String()` takes no argument.
            let recv = self.field_chain(recv, span, &names[..names.len() - 1], false)?;
            if let V::TimeUnit(..) = recv.v {
                let got = cmd.args.len().saturating_sub(1) + usize::from(final_.is_some());
                return Err(wrong(
                    &cmd.span,
                    format!("wrong number of args for String: want 0 got {got}"),
                ));
            }
            return self.field_chain(recv, span, &names[names.len() - 1..], true);
        }
        if has_args && names.last().is_some_and(|n| n == "Format") {
            // exec.go `evalField` calling a method with arguments: time.Time's
            // `Format(layout string) string`.
            let recv = self.field_chain(recv, span, &names[..names.len() - 1], false)?;
            if let V::Time {
                unix_seconds,
                nanos,
            } = recv.v
            {
                let args = cmd.args.get(1..).unwrap_or(&[]);
                let got = args.len() + usize::from(final_.is_some());
                if got != 1 {
                    return Err(wrong(
                        &cmd.span,
                        format!("wrong number of args for Format: want 1 got {got}"),
                    ));
                }
                let layout = match (args.first(), final_) {
                    (Some(a), _) => self.eval_arg(dot, Some(Ty::Str), a)?,
                    (None, Some(f)) => self.validate_type(&cmd.span, f, Some(Ty::Str))?,
                    (None, None) => Ev::plain(V::Invalid),
                };
                let layout = match &layout.v {
                    V::Str(s) => s.clone(),
                    _ => String::new(),
                };
                return Ok(Ev::with_prov(
                    V::Str(funcs::gotime::format(unix_seconds, nanos, &layout)),
                    recv.prov,
                ));
            }
            return self.field_chain(recv, span, &names[names.len() - 1..], true);
        }
        self.field_chain(recv, span, names, has_args)
    }

    fn field_chain(&mut self, recv: Ev, span: &Span, names: &[String], has_args: bool) -> R<Ev> {
        let mut recv = recv;
        if recv.root {
            if let Some(first) = names.first() {
                recv.prov.insert(first.clone());
            }
        }
        for (i, name) in names.iter().enumerate() {
            let last = i + 1 == names.len();
            recv = self.eval_field(span, &names[..=i], name, has_args && last, recv)?;
        }
        Ok(recv)
    }

    /// exec.go `evalField` for the values a template meets (maps; `time.Time`'s methods).
    fn eval_field(
        &mut self,
        span: &Span,
        path: &[String],
        name: &str,
        has_args: bool,
        recv: Ev,
    ) -> R<Ev> {
        let prov = recv.prov.clone();
        match &recv.v {
            V::Invalid => Ok(Ev::with_prov(V::Invalid, prov)),
            V::Nil => Err(bad(
                span,
                format!("nil pointer evaluating {}.{name}", recv.go_type()),
            )),
            V::Map(_) | V::StrMap(_) => {
                if has_args {
                    return Err(wrong(
                        span,
                        format!("{name} is not a method but has arguments"),
                    ));
                }
                let (found, boxed) = match &recv.v {
                    V::Map(m) => (m.borrow().get(name).cloned(), true),
                    V::StrMap(m) => (m.get(name).map(|s| V::Str(s.clone())), false),
                    _ => (None, false),
                };
                match found {
                    Some(v) => Ok(Ev {
                        v,
                        prov,
                        root: false,
                        boxed,
                    }),
                    None => {
                        self.notes.push(Note {
                            span: span.clone(),
                            kind: NoteKind::MissingKey {
                                name: path.join("."),
                            },
                        });
                        Ok(Ev::with_prov(V::Invalid, prov))
                    }
                }
            }
            V::Time {
                unix_seconds,
                nanos,
            } if !has_args => match time_method(*unix_seconds, *nanos, name) {
                Some(v) => Ok(Ev::with_prov(v, prov)),
                None if name == "Format" => Err(wrong(
                    span,
                    "wrong number of args for Format: want 1 got 0".to_string(),
                )),
                None => Err(bad(
                    span,
                    format!("can't evaluate field {name} in type {}", recv.go_type()),
                )),
            },
            // time.Month's and time.Weekday's one method.
            V::TimeUnit(unit, n) if name == "String" => {
                // With arguments, eval_field_chain has reported them.
                Ok(Ev::with_prov(V::Str(unit.string(*n)), prov))
            }
            _ => Err(bad(
                span,
                format!("can't evaluate field {name} in type {}", recv.go_type()),
            )),
        }
    }

    /// exec.go `evalFunction` and `evalCall`.
    fn eval_function(
        &mut self,
        dot: &Ev,
        span: &Span,
        name: &str,
        cmd: &Command,
        final_: Option<Ev>,
    ) -> R<Ev> {
        let Some(sig) = funcs::signature(name).filter(|_| funcs::is_defined(name)) else {
            return Err(wrong(span, format!("{name:?} is not a defined function")));
        };
        let args = cmd.args.get(1..).unwrap_or(&[]);
        let num_in = args.len() + usize::from(final_.is_some());
        let num_fixed = if sig.variadic.is_some() {
            let fixed = sig.params.len();
            if num_in < fixed {
                return Err(wrong(
                    &cmd.span,
                    format!(
                        "wrong number of args for {name}: want at least {fixed} got {}",
                        args.len()
                    ),
                ));
            }
            fixed
        } else {
            if num_in != sig.params.len() {
                return Err(wrong(
                    &cmd.span,
                    format!(
                        "wrong number of args for {name}: want {} got {num_in}",
                        sig.params.len()
                    ),
                ));
            }
            args.len()
        };

        let mut prov: BTreeSet<String> = BTreeSet::new();
        if name == "and" || name == "or" {
            let mut v = Ev::plain(V::Invalid);
            for a in args {
                v = self.eval_arg(dot, Some(Ty::RValue), a)?;
                prov.extend(v.prov.iter().cloned());
                if v.v.truth() == (name == "or") {
                    v.prov = prov;
                    return Ok(v);
                }
            }
            if let Some(f) = final_ {
                v = self.validate_type(&cmd.span, f, Some(Ty::RValue))?;
                prov.extend(v.prov.iter().cloned());
            }
            v.prov = prov;
            return Ok(v);
        }

        let mut argv: Vec<V> = Vec::with_capacity(num_in);
        let mut i = 0;
        while i < num_fixed && i < args.len() {
            let ev = self.eval_arg(dot, Some(sig.params[i]), &args[i])?;
            prov.extend(ev.prov);
            argv.push(ev.v);
            i += 1;
        }
        if let Some(vt) = sig.variadic {
            while i < args.len() {
                let ev = self.eval_arg(dot, Some(vt), &args[i])?;
                prov.extend(ev.prov);
                argv.push(ev.v);
                i += 1;
            }
        }
        if let Some(f) = final_ {
            let t = match sig.variadic {
                Some(vt) => {
                    if num_in - 1 < num_fixed {
                        sig.params[num_in - 1]
                    } else {
                        vt
                    }
                }
                None => sig.params[sig.params.len() - 1],
            };
            let ev = self.validate_type(&cmd.span, f, Some(t))?;
            prov.extend(ev.prov);
            argv.push(ev.v);
        }
        let mut ctx = Ctx {
            rng: &mut self.rng,
            now_unix_seconds: self.opts.now_unix_seconds,
            max_output_bytes: self.opts.max_output_bytes,
        };
        let result = funcs::call(name, argv, &mut ctx);
        self.check_format_guard(&cmd.span)?;
        match result {
            Ok(V::Str(s)) if s.len() > self.opts.max_output_bytes => Err(err(
                &cmd.span,
                ExecErrorKind::Limit,
                format!(
                    "{name} made a string of {} bytes, more than the output bound ({} bytes)",
                    s.len(),
                    self.opts.max_output_bytes
                ),
            )),
            Ok(v @ (V::List(_) | V::Map(_))) if v.nests_deeper_than(gofmt::MAX_PRINT_DEPTH) => {
                Err(err(
                    &cmd.span,
                    ExecErrorKind::Limit,
                    format!(
                        "{name} made lists or maps nested deeper than {}",
                        gofmt::MAX_PRINT_DEPTH
                    ),
                ))
            }
            Ok(v) => Ok(Ev::with_prov(v, prov)),
            Err(CallError::Fail(msg)) => Err(err(&cmd.span, ExecErrorKind::Fail, msg)),
            Err(CallError::Operand(msg)) => {
                Err(bad(&cmd.span, format!("error calling {name}: {msg}")))
            }
            Err(CallError::Argument(msg)) => {
                Err(wrong(&cmd.span, format!("error calling {name}: {msg}")))
            }
            Err(CallError::Limit(msg)) => Err(err(
                &cmd.span,
                ExecErrorKind::Limit,
                format!("error calling {name}: {msg}"),
            )),
        }
    }

    /// exec.go `evalArg`: an argument for a parameter of type `typ` (`None`: a chain's
    /// receiver, Go's nil type).
    fn eval_arg(&mut self, dot: &Ev, typ: Option<Ty>, arg: &Arg) -> R<Ev> {
        let span = arg.span();
        match arg {
            Arg::Dot { .. } => return self.validate_type(&span, dot.clone(), typ),
            Arg::Nil { .. } => {
                return match typ {
                    Some(Ty::Any) => Ok(Ev::plain(V::Nil)),
                    Some(Ty::RValue) | None => Ok(Ev::plain(V::Invalid)),
                    Some(Ty::Map) => Ok(Ev::plain(V::Nil)),
                    Some(t) => Err(wrong(
                        &span,
                        format!("cannot assign nil to {}", t.go_name()),
                    )),
                }
            }
            Arg::Field { names, .. } => {
                let v = self.field_chain(dot.clone(), &span, names, false)?;
                return self.validate_type(&span, v, typ);
            }
            Arg::Variable { name, fields, .. } => {
                let value = self.var_value(&span, name)?;
                let v = if fields.is_empty() {
                    value
                } else {
                    self.field_chain(value, &span, fields, false)?
                };
                return self.validate_type(&span, v, typ);
            }
            Arg::Pipe { pipe, .. } => {
                let v = self.eval_pipeline(dot, pipe)?;
                return self.validate_type(&span, v, typ);
            }
            Arg::Identifier { name, .. } => {
                let cmd = Command {
                    span: span.clone(),
                    args: vec![arg.clone()],
                };
                let v = self.eval_function(dot, &span, name, &cmd, None)?;
                return self.validate_type(&span, v, typ);
            }
            Arg::Chain { node, fields, .. } => {
                let recv = self.eval_chain_receiver(dot, &span, node)?;
                let v = self.field_chain(recv, &span, fields, false)?;
                return self.validate_type(&span, v, typ);
            }
            Arg::Bool { .. } | Arg::Number { .. } | Arg::String { .. } => {}
        }
        // A constant: converted to the parameter's type as Go's evalBool, evalString,
        // evalInteger, evalFloat, evalEmptyInterface do.
        let found = || arg_string(arg);
        let v = match (typ, arg) {
            (Some(Ty::Bool), Arg::Bool { value, .. }) => V::Bool(*value),
            (Some(Ty::Bool), _) => {
                return Err(wrong(&span, format!("expected bool; found {}", found())))
            }
            (Some(Ty::Str), Arg::String { value, .. }) => V::Str(value.clone()),
            (Some(Ty::Str), _) => {
                return Err(wrong(&span, format!("expected string; found {}", found())))
            }
            (Some(Ty::Int), Arg::Number { value, .. }) => match number_as_int(value) {
                Some(i) => V::Int(i),
                None => return Err(wrong(&span, format!("expected integer; found {}", found()))),
            },
            (Some(Ty::Int), _) => {
                return Err(wrong(&span, format!("expected integer; found {}", found())))
            }
            (Some(Ty::Float), Arg::Number { value, .. }) => V::Float(match value {
                Number::Int(i) => *i as f64,
                Number::Uint(u) => *u as f64,
                Number::Float(f) => *f,
            }),
            (Some(Ty::Float), _) => {
                return Err(wrong(&span, format!("expected float; found {}", found())))
            }
            (Some(Ty::Any) | Some(Ty::RValue) | None, Arg::Bool { value, .. }) => V::Bool(*value),
            (Some(Ty::Any) | Some(Ty::RValue) | None, Arg::String { value, .. }) => {
                V::Str(value.clone())
            }
            (Some(Ty::Any) | Some(Ty::RValue) | None, Arg::Number { text, value, .. }) => {
                ideal_constant(&span, text, value)?
            }
            (Some(t), _) => {
                return Err(wrong(
                    &span,
                    format!("can't handle {} for arg of type {}", found(), t.go_name()),
                ))
            }
            (None, _) => V::Invalid,
        };
        Ok(Ev::plain(v))
    }

    /// exec.go `validateType`.
    fn validate_type(&mut self, span: &Span, ev: Ev, typ: Option<Ty>) -> R<Ev> {
        let Some(t) = typ else {
            return Ok(ev);
        };
        if matches!(ev.v, V::Invalid) {
            return match t {
                Ty::Any => Ok(Ev { v: V::Nil, ..ev }),
                Ty::RValue => Ok(ev),
                // A nil map: readable, but `set` fails as Go's assignment panics.
                Ty::Map => Ok(Ev { v: V::Nil, ..ev }),
                t => Err(wrong(
                    span,
                    format!("invalid value; expected {}", t.go_name()),
                )),
            };
        }
        let ok = matches!(
            (t, &ev.v),
            (Ty::Any | Ty::RValue, _)
                | (Ty::Str, V::Str(_))
                | (Ty::Int, V::Int(_))
                | (Ty::Float, V::Float(_))
                | (Ty::Bool, V::Bool(_))
                | (Ty::Map, V::Map(_))
                | (Ty::Time, V::Time { .. })
        );
        if ok {
            return Ok(ev);
        }
        Err(wrong(
            span,
            format!(
                "wrong type for value; expected {}; got {}",
                t.go_name(),
                ev.v.type_name()
            ),
        ))
    }
}

/// parse/node.go's `NumberNode.IsInt`: an integer, or a float with an integral value.
fn number_as_int(n: &Number) -> Option<i64> {
    match n {
        Number::Int(i) => Some(*i),
        Number::Uint(_) => None,
        Number::Float(f) => {
            let i = *f as i64;
            (i as f64 == *f && f.is_finite()).then_some(i)
        }
    }
}

/// exec.go `idealConstant`: an untyped number becomes an `int`, or a `float64` when it is
/// written as one (`.`, `e`, `p` outside a hex integer or a character constant).
fn ideal_constant(span: &Span, text: &str, n: &Number) -> R<V> {
    let is_hex_int = text.len() > 2
        && (text.starts_with("0x") || text.starts_with("0X"))
        && !text.contains(['p', 'P']);
    let is_rune = text.starts_with('\'');
    match n {
        Number::Float(f) if !is_hex_int && !is_rune && text.contains(['.', 'e', 'E', 'p', 'P']) => {
            Ok(V::Float(*f))
        }
        Number::Int(i) => Ok(V::Int(*i)),
        Number::Float(f) => match number_as_int(n) {
            Some(i) => Ok(V::Int(i)),
            None => Ok(V::Float(*f)),
        },
        Number::Uint(_) => Err(wrong(span, format!("{text} overflows int"))),
    }
}

/// An argument as Go's parse nodes print it (`String()`), for messages.
fn arg_string(arg: &Arg) -> String {
    match arg {
        Arg::Dot { .. } => ".".into(),
        Arg::Field { names, .. } => names.iter().map(|n| format!(".{n}")).collect(),
        Arg::Variable { name, fields, .. } => {
            let mut s = name.clone();
            for f in fields {
                s.push('.');
                s.push_str(f);
            }
            s
        }
        Arg::Chain { node, fields, .. } => {
            let mut s = match node.as_ref() {
                Arg::Pipe { .. } => arg_string(node),
                n => arg_string(n),
            };
            for f in fields {
                s.push('.');
                s.push_str(f);
            }
            s
        }
        Arg::Identifier { name, .. } => name.clone(),
        Arg::Nil { .. } => "nil".into(),
        Arg::Bool { value, .. } => value.to_string(),
        Arg::Number { text, .. } => text.clone(),
        // parse/node.go `StringNode.String`: the constant as written.
        Arg::String { quoted, .. } => quoted.clone(),
        Arg::Pipe { pipe, .. } => format!("({})", pipe_string(pipe)),
    }
}

fn pipe_string(p: &Pipeline) -> String {
    let mut s = String::new();
    if !p.decl.is_empty() {
        s.push_str(
            &p.decl
                .iter()
                .map(|v| v.name.clone())
                .collect::<Vec<_>>()
                .join(", "),
        );
        s.push_str(if p.is_assign { " = " } else { " := " });
    }
    s.push_str(
        &p.cmds
            .iter()
            .map(|c| c.args.iter().map(arg_string).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join(" | "),
    );
    s
}

/// time.Time's methods without arguments that return a number, a bool, a time or a
/// `time.Month`/`time.Weekday` (Go's time.go), of a time in UTC.
fn time_method(unix_seconds: i64, nanos: u32, name: &str) -> Option<V> {
    let c = || funcs::gotime::civil(unix_seconds, nanos);
    let nanos_i = i64::from(nanos);
    Some(match name {
        "Unix" => V::Int64(unix_seconds),
        "UnixMilli" => V::Int64(unix_seconds.saturating_mul(1000) + nanos_i / 1_000_000),
        "UnixMicro" => V::Int64(unix_seconds.saturating_mul(1_000_000) + nanos_i / 1000),
        "UnixNano" => V::Int64(unix_seconds.saturating_mul(1_000_000_000) + nanos_i),
        "Year" => V::Int(c().year),
        "Month" => V::TimeUnit(TimeUnit::Month, c().month.into()),
        "Weekday" => V::TimeUnit(TimeUnit::Weekday, c().weekday.into()),
        "Day" => V::Int(c().day.into()),
        "Hour" => V::Int(c().hour.into()),
        "Minute" => V::Int(c().minute.into()),
        "Second" => V::Int(c().second.into()),
        "Nanosecond" => V::Int(nanos_i),
        "YearDay" => V::Int(c().yday.into()),
        "IsZero" => V::Bool(unix_seconds == -62_135_596_800 && nanos == 0),
        "UTC" => V::Time {
            unix_seconds,
            nanos,
        },
        _ => return None,
    })
}
