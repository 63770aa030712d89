//! The evaluator: statements in execution order over the tree-sitter-bash tree, with the
//! shell's state, merging the states of branches not known to be taken.

use super::word::Hole;
use super::*;
use std::borrow::Cow;
use std::collections::HashSet;
use std::rc::Rc;
use tree_sitter::{Node, Parser, Tree};

/// Nested texts (`eval`, `source`, `bash -c`, files, heredocs) and function calls.
pub(super) const MAX_DEPTH: usize = 16;
/// Calls of one function inside itself.
const MAX_RECURSION: usize = 4;
/// Iterations of a `for` loop over a known list.
pub(super) const MAX_UNROLL: usize = 8;
/// Loop iterations unrolled inside other unrolled loops, in all (nested loops multiply).
const MAX_TOTAL_UNROLL: usize = 20_000;
/// Simple commands evaluated in all.
pub(super) const MAX_COMMANDS: usize = 100_000;
/// Bytes of values produced by expansions and assignments.
pub(super) const MAX_BYTES: usize = 8 << 20;
/// Steps of work (nodes, copied variables) in all.
pub(super) const MAX_WORK: u64 = 8_000_000;
/// Work of copying one variable (a command's snapshot is shared; changing the variables
/// after it copies them).
const CLONE_COST: u64 = 8;
/// Stack the evaluator's recursion may use (callers run it on threads of 2 MiB).
const STACK_LIMIT: usize = 512 << 10;
/// Syntax nesting followed (statements in statements, words in words).
pub(super) const MAX_REC: usize = 100;
/// Words one brace expansion may give.
pub(super) const MAX_BRACE: usize = 4096;

/// A text being evaluated, with its tree and how its bytes map to sources.
pub(super) struct Unit<'t> {
    pub(super) text: Cow<'t, str>,
    pub(super) tree: Option<Tree>,
    pub(super) map: Mapping,
    /// Values written into a synthetic text as placeholder words.
    pub(super) holes: Vec<Hole>,
}

pub(super) enum Mapping {
    Source { source: SourceId, offset: usize },
    Synthetic { segs: Vec<MapSeg>, fallback: Span },
}

pub(super) struct MapSeg {
    start: usize,
    end: usize,
    origin: Option<Span>,
}

/// The prefix of a placeholder word in a synthetic text (`_FZH3_`).
pub(super) const HOLE: &str = "_FZH";

impl Unit<'_> {
    pub(super) fn src(&self, r: Range<usize>) -> &str {
        self.text.get(r).unwrap_or("")
    }
    pub(super) fn node_text(&self, n: Node<'_>) -> &str {
        self.src(n.byte_range())
    }
    /// The source span of a range of this text (for a synthetic text, the exact bytes when
    /// they stand verbatim in a source, else the command that made the text).
    pub(super) fn span(&self, r: Range<usize>) -> Span {
        match &self.map {
            Mapping::Source { .. } => self.exact(r).unwrap_or(Span {
                source: SourceId(0),
                range: 0..0,
            }),
            Mapping::Synthetic { segs, fallback } => {
                if let Some(s) = self.exact(r.clone()) {
                    return s;
                }
                // Bytes from several pieces (`\$RANK` gave `$` and `RANK`): from where the
                // first stands to where the last ends, when both are in one source.
                let first = segs.partition_point(|s| s.end <= r.start);
                let last = segs.partition_point(|s| s.end < r.end);
                let (Some(a), Some(b)) = (segs.get(first), segs.get(last)) else {
                    return fallback.clone();
                };
                match (&a.origin, &b.origin) {
                    (Some(oa), Some(ob))
                        if oa.source == ob.source && r.start >= a.start && r.end <= b.end =>
                    {
                        let start = oa.range.start + (r.start - a.start);
                        let end = ob.range.start + (r.end - b.start);
                        if start <= end {
                            Span {
                                source: oa.source,
                                range: start..end,
                            }
                        } else {
                            fallback.clone()
                        }
                    }
                    _ => fallback.clone(),
                }
            }
        }
    }
    /// Where these bytes stand verbatim in a source.
    pub(super) fn exact(&self, r: Range<usize>) -> Option<Span> {
        match &self.map {
            Mapping::Source { source, offset } => Some(Span {
                source: *source,
                range: r.start + offset..r.end + offset,
            }),
            Mapping::Synthetic { segs, .. } => {
                let i = segs.partition_point(|s| s.end <= r.start);
                let s = segs.get(i)?;
                if s.start <= r.start && r.end <= s.end {
                    let o = s.origin.as_ref()?;
                    Some(Span {
                        source: o.source,
                        range: o.range.start + (r.start - s.start)
                            ..o.range.start + (r.end - s.start),
                    })
                } else {
                    None
                }
            }
        }
    }
}

/// A text under construction (`eval` words joined, a `bash -c` string, a heredoc body).
#[derive(Default, Clone)]
pub(super) struct TextBuild {
    pub(super) text: String,
    segs: Vec<MapSeg>,
    holes: Vec<Hole>,
}

impl Clone for MapSeg {
    fn clone(&self) -> Self {
        MapSeg {
            start: self.start,
            end: self.end,
            origin: self.origin.clone(),
        }
    }
}

impl TextBuild {
    pub(super) fn push(&mut self, s: &str, origin: Option<Span>) {
        if s.is_empty() {
            return;
        }
        let start = self.text.len();
        self.text.push_str(s);
        // Keep the origin only when it covers exactly these bytes.
        let origin = origin.filter(|o| o.range.len() == s.len());
        if let (Some(last), Some(o)) = (self.segs.last_mut(), origin.as_ref()) {
            if let Some(lo) = &last.origin {
                if lo.source == o.source && lo.range.end == o.range.start && last.end == start {
                    last.end = self.text.len();
                    if let Some(lo) = last.origin.as_mut() {
                        lo.range.end = o.range.end;
                    }
                    return;
                }
            }
        }
        self.segs.push(MapSeg {
            start,
            end: self.text.len(),
            origin,
        });
    }
    pub(super) fn hole(&mut self, h: Hole) {
        let n = self.holes.len();
        self.holes.push(h);
        let w = format!("{HOLE}{n}_");
        self.push(&w, None);
    }
    pub(super) fn pieces(&mut self, ps: &[Piece]) {
        for p in ps {
            match p {
                Piece::Text { text, origin } => self.push(text, origin.clone()),
                other => self.hole(Hole::Piece(other.clone())),
            }
        }
    }
    /// The source and offset when the whole text is one verbatim source range.
    fn contiguous(&self) -> Option<(SourceId, usize)> {
        if !self.holes.is_empty() || self.segs.len() != 1 {
            return None;
        }
        let s = &self.segs[0];
        let o = s.origin.as_ref()?;
        (s.start == 0 && s.end == self.text.len()).then_some((o.source, o.range.start))
    }
}

/// A shell function: where its definition stands.
#[derive(Clone)]
pub(super) struct Func<'t> {
    unit: Rc<Unit<'t>>,
    range: Range<usize>,
}

#[derive(Clone, PartialEq, Debug)]
pub(super) enum Params {
    Known(Vec<Field>),
    Unknown,
}

/// The state of one shell.
#[derive(Clone)]
pub(super) struct State<'t> {
    pub(super) vars: Variables,
    pub(super) params: Params,
    /// `$0`; `None` when unknown.
    pub(super) arg0: Option<Field>,
    funcs: Rc<HashMap<String, Func<'t>>>,
    /// Files written by the script (`cat > PATH <<EOF`), parsed.
    files: Rc<HashMap<String, Rc<Unit<'t>>>>,
    /// Names known to be unset (`unset X`, `local X`).
    pub(super) gone: Rc<HashSet<String>>,
    /// Names marked for export before they were set (`export X` then `X=1`).
    pub(super) to_export: Rc<HashSet<String>>,
    /// Arrays with an element unset in the middle: their indices are not known.
    pub(super) sparse: Rc<HashSet<String>>,
    pub(super) cwd: Option<String>,
    pub(super) allexport: bool,
    pub(super) noglob: bool,
    /// Code not known ran in this shell (`source` of a file not shipped, `eval` of text not
    /// known): a name nothing set here may have been set by it.
    pub(super) opaque: bool,
    /// IFS was assigned: unquoted expansions split in ways not modelled.
    pub(super) ifs: bool,
    /// Function scopes: the values `local` hid, restored on return.
    locals: Vec<HashMap<String, Option<Variable>>>,
    /// Per function scope, the names assigned in front of the call (`Y=1 f`): `export Y`
    /// in the function keeps Y after it.
    temps: Vec<HashSet<String>>,
}

/// Where a statement runs.
#[derive(Clone)]
pub(super) struct Ctx {
    pub(super) site: Site,
    pub(super) certainty: Certainty,
    nesting: Rc<Vec<Nesting>>,
    depth: usize,
}

impl Ctx {
    fn maybe(&self) -> Ctx {
        Ctx {
            certainty: Certainty::Maybe,
            ..self.clone()
        }
    }
}

/// A loop body: its unit, first statement, statement count and the functions defined.
type ScanKey = (usize, usize, usize, usize);

/// A `case` item: its patterns (`None` where not known) and its statements.
type CaseItem<'u> = (Vec<Option<String>>, Vec<(Node<'u>, bool)>);

/// The conditions and the body of an `if` or `elif`.
type Clause<'u> = (Vec<(Node<'u>, bool)>, Vec<(Node<'u>, bool)>);

/// How a statement ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Flow {
    Next,
    Exit,
    Return,
    Break,
    Continue,
    /// `break N`, `continue N` (N ≥ 2): the loops left before the one that breaks or
    /// continues.
    BreakN(u32),
    ContinueN(u32),
    /// Every path through it ended (exits, returns) and none goes on.
    Dead,
}

pub(super) struct Ev<'a, 't> {
    pub(super) sources: &'a Sources<'t>,
    pub(super) opts: &'a Options,
    parser: Option<Parser>,
    pub(super) out: Evaluation,
    /// States of paths that left a branch by `return`, `break` or `continue`.
    pending: Vec<(Flow, State<'t>)>,
    pub(super) work: u64,
    pub(super) bytes: usize,
    pub(super) rec: usize,
    pub(super) abort: bool,
    parsed: HashMap<SourceId, Rc<Unit<'t>>>,
    pub(super) script: SourceId,
    /// The variables of the last command recorded, shared with the next one when equal.
    last_vars: Option<Variables>,
    /// The address of the stack when evaluation began (see [`Ev::deep`]).
    stack_base: usize,
    pub(super) stack_max: usize,
    /// Inside the word of a `${NAME:-word}`-style expansion (where `\}` is an escape in double
    /// quotes too).
    pub(super) in_parameter_word: usize,
    /// Loop iterations unrolled so far.
    unrolled: usize,
    /// Unrolled loops around the statement being evaluated.
    loop_depth: usize,
    /// Paths that ended by `exit` in branches not known to be taken (in this shell).
    exits: u64,
    /// What loop bodies assign, by unit, first statement, statement count and functions.
    scan_memo: HashMap<ScanKey, (Vec<String>, bool)>,
    scan_units: Vec<Rc<Unit<'t>>>,
    scan_funcs: Vec<Rc<HashMap<String, Func<'t>>>>,
}

const SHELLS: [&str; 5] = ["bash", "sh", "dash", "zsh", "ksh"];

thread_local! {
    /// One parser per thread, reused by every evaluation (a parser, not results: creating one
    /// and loading the grammar costs as much as parsing a typical launch script).
    static PARSER: std::cell::RefCell<Option<Parser>> = const { std::cell::RefCell::new(None) };
}

pub(super) fn evaluate(script: SourceId, sources: &Sources<'_>, options: &Options) -> Evaluation {
    let parser = PARSER.with(|p| p.borrow_mut().take()).or_else(|| {
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .is_ok()
            .then_some(parser)
    });
    let mut ev = Ev {
        sources,
        opts: options,
        parser,
        out: Evaluation::default(),
        pending: Vec::new(),
        work: 0,
        bytes: 0,
        rec: 0,
        abort: false,
        parsed: HashMap::new(),
        script,
        last_vars: None,
        stack_base: 0,
        stack_max: 0,
        in_parameter_word: 0,
        unrolled: 0,
        loop_depth: 0,
        exits: 0,
        scan_memo: HashMap::new(),
        scan_units: Vec::new(),
        scan_funcs: Vec::new(),
    };
    let marker = 0u8;
    ev.stack_base = std::ptr::addr_of!(marker) as usize;
    if let Some(unit) = ev.source_unit(script) {
        let mut st = ev.fresh_state(options.cwd.clone());
        st.arg0 = None;
        let cx = Ctx {
            site: Site::Head,
            certainty: Certainty::Always,
            nesting: Rc::new(Vec::new()),
            depth: 0,
        };
        ev.run_unit(&unit, &mut st, &cx);
    }
    if let Some(mut parser) = ev.parser.take() {
        parser.reset();
        PARSER.with(|p| *p.borrow_mut() = Some(parser));
    }
    ev.out
}

pub(super) fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch == '_' || ch.is_ascii_alphabetic())
        && c.all(|ch| ch == '_' || ch.is_ascii_alphanumeric())
}

pub(super) fn text_field(text: &str, origin: Option<Span>, word: Span) -> Field {
    let choice = if text.is_empty() {
        Vec::new()
    } else {
        vec![Piece::Text {
            text: text.to_owned(),
            origin,
        }]
    };
    Field {
        choices: vec![choice],
        word,
    }
}

pub(super) fn unknown_field(span: Span) -> Field {
    Field {
        choices: vec![vec![Piece::Unknown {
            origin: span.clone(),
        }]],
        word: span,
    }
}

fn normalize(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            _ => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

impl<'a, 't> Ev<'a, 't> {
    pub(super) fn trunc(&mut self) {
        self.out.truncated = true;
    }

    /// Whether the evaluation's own recursion has used more than [`STACK_LIMIT`] of the
    /// stack (nesting that would overflow a small thread stack ends there, as unknown).
    #[inline(never)]
    pub(super) fn deep(&mut self) -> bool {
        let marker = 0u8;
        let here = std::ptr::addr_of!(marker) as usize;
        let used = self.stack_base.saturating_sub(here);
        self.stack_max = self.stack_max.max(used);
        if used > STACK_LIMIT {
            self.trunc();
            return true;
        }
        false
    }

    /// Takes `n` iterations from the budget of unrolled iterations; past it, loops run once
    /// as any iteration.
    fn unroll(&mut self, n: usize) -> bool {
        if self.loop_depth == 0 {
            // A loop not inside an unrolled one: at most 8 iterations per loop written.
            return true;
        }
        self.unrolled += n;
        if self.unrolled > MAX_TOTAL_UNROLL {
            self.trunc();
            return false;
        }
        true
    }

    pub(super) fn tick(&mut self, n: u64) -> bool {
        self.work = self.work.saturating_add(n);
        if self.work > MAX_WORK && !self.abort {
            self.abort = true;
            self.trunc();
        }
        !self.abort
    }

    fn parse(&mut self, text: &str) -> Option<Tree> {
        self.tick(text.len() as u64 / 16);
        if text.contains('\r') {
            // bash reads a carriage return as a character of the word (a script with CRLF
            // line ends passes `2\r`); the grammar takes it as a blank. The tree of the text
            // with another one-byte word character in its place has the same ranges.
            let t = text.replace('\r', "\u{1}");
            return self.parser.as_mut().and_then(|p| p.parse(&t, None));
        }
        self.parser.as_mut().and_then(|p| p.parse(text, None))
    }

    fn source_unit(&mut self, id: SourceId) -> Option<Rc<Unit<'t>>> {
        if let Some(u) = self.parsed.get(&id) {
            return Some(u.clone());
        }
        let text: &'t str = self.sources.texts.get(id.0 as usize)?;
        let tree = self.parse(text);
        let u = Rc::new(Unit {
            text: Cow::Borrowed(text),
            tree,
            map: Mapping::Source {
                source: id,
                offset: 0,
            },
            holes: Vec::new(),
        });
        self.parsed.insert(id, u.clone());
        Some(u)
    }

    pub(super) fn build_unit(&mut self, b: TextBuild, fallback: Span) -> Option<Rc<Unit<'t>>> {
        if let Some((source, offset)) = b.contiguous() {
            // The whole text is verbatim source: parse it as such.
            let tree = self.parse(&b.text);
            return Some(Rc::new(Unit {
                text: Cow::Owned(b.text),
                tree,
                map: Mapping::Source { source, offset },
                holes: Vec::new(),
            }));
        }
        self.bytes = self.bytes.saturating_add(b.text.len());
        if self.bytes > MAX_BYTES {
            self.trunc();
            return None;
        }
        let tree = self.parse(&b.text);
        Some(Rc::new(Unit {
            text: Cow::Owned(b.text),
            tree,
            map: Mapping::Synthetic {
                segs: b.segs,
                fallback,
            },
            holes: b.holes,
        }))
    }

    /// The state a shell starts in: the starting environment, all exported.
    fn fresh_state(&mut self, cwd: Option<String>) -> State<'t> {
        let mut vars = HashMap::new();
        let dummy = Span {
            source: self.script,
            range: 0..0,
        };
        for (name, init) in &self.opts.env {
            let (value, origin) = match init {
                Initial::Known { text, origin } => (
                    Value::Scalar(text_field(
                        text,
                        origin.clone(),
                        origin.clone().unwrap_or_else(|| dummy.clone()),
                    )),
                    origin.clone(),
                ),
                Initial::Runtime => (
                    Value::Scalar(Field {
                        choices: vec![vec![Piece::Runtime {
                            name: name.clone(),
                            site: Site::Head,
                            origin: dummy.clone(),
                        }]],
                        word: dummy.clone(),
                    }),
                    None,
                ),
                Initial::Unknown => (Value::Unknown, None),
            };
            vars.insert(
                name.clone(),
                Variable {
                    value,
                    exported: true,
                    origin,
                },
            );
        }
        State {
            vars: Arc::new(vars),
            params: Params::Known(Vec::new()),
            arg0: None,
            funcs: Rc::new(HashMap::new()),
            files: Rc::new(HashMap::new()),
            gone: Rc::new(HashSet::new()),
            to_export: Rc::new(HashSet::new()),
            sparse: Rc::new(HashSet::new()),
            cwd,
            allexport: false,
            noglob: false,
            opaque: false,
            ifs: false,
            locals: Vec::new(),
            temps: Vec::new(),
        }
    }

    // ---- variables ----------------------------------------------------------------------

    pub(super) fn set_var(
        &mut self,
        st: &mut State<'t>,
        name: &str,
        value: Value,
        origin: Option<Span>,
        export: Option<bool>,
    ) {
        let size = value_bytes(&value);
        self.bytes = self.bytes.saturating_add(size);
        let value = if self.bytes > MAX_BYTES {
            self.trunc();
            Value::Unknown
        } else {
            value
        };
        if name == "IFS" {
            // Splitting is modelled for the default IFS only.
            st.ifs = !matches!(&value, Value::Scalar(f) if f.known().as_deref() == Some(" \t\n"));
        }
        let allexport = st.allexport || st.to_export.contains(name);
        if st.sparse.contains(name) {
            Rc::make_mut(&mut st.sparse).remove(name);
        }
        let vars = self.vars_mut(&mut st.vars);
        let exported =
            export.unwrap_or_else(|| allexport || vars.get(name).is_some_and(|v| v.exported));
        vars.insert(
            name.to_owned(),
            Variable {
                value,
                exported,
                origin,
            },
        );
        if st.gone.contains(name) {
            Rc::make_mut(&mut st.gone).remove(name);
        }
    }

    /// The variables to change, copied first when a command's snapshot shares them.
    fn vars_mut<'s>(&mut self, vars: &'s mut Variables) -> &'s mut HashMap<String, Variable> {
        if Arc::strong_count(vars) > 1 {
            self.tick(CLONE_COST * vars.len() as u64);
            // The copy holds every value again: it counts against the bytes produced.
            let copied: usize = vars.values().map(|v| value_bytes(&v.value)).sum();
            self.bytes = self.bytes.saturating_add(copied);
            if self.bytes > MAX_BYTES {
                self.trunc();
            }
        }
        Arc::make_mut(vars)
    }

    pub(super) fn unset_var(&mut self, st: &mut State<'t>, name: &str) {
        if st.vars.contains_key(name) {
            self.vars_mut(&mut st.vars).remove(name);
        }
        if !st.gone.contains(name) {
            Rc::make_mut(&mut st.gone).insert(name.to_owned());
        }
        if name == "IFS" {
            st.ifs = false;
        }
    }

    /// `export NAME` in a function called as `NAME=v f`: the name outlives the call.
    fn promote_temp(&mut self, st: &mut State<'t>, name: &str) {
        if st.temps.last().is_some_and(|t| t.contains(name)) {
            if let Some(t) = st.temps.last_mut() {
                t.remove(name);
            }
            if let Some(scope) = st.locals.last_mut() {
                scope.remove(name);
            }
        }
    }

    fn save_local(&mut self, st: &mut State<'t>, name: &str) {
        let old = st.vars.get(name).cloned();
        if let Some(scope) = st.locals.last_mut() {
            scope.entry(name.to_owned()).or_insert(old);
        }
    }

    // ---- merging ------------------------------------------------------------------------

    fn merge_field(&mut self, a: &Field, b: &Field) -> Field {
        let mut choices = a.choices.clone();
        for c in &b.choices {
            if !choices.contains(c) {
                choices.push(c.clone());
            }
        }
        if choices.len() > MAX_CHOICES {
            self.trunc();
            return unknown_field(a.word.clone());
        }
        Field {
            choices,
            word: a.word.clone(),
        }
    }

    fn merge_value(
        &mut self,
        a: Option<&Variable>,
        b: Option<&Variable>,
        opaque: bool,
    ) -> Option<Variable> {
        let empty_unset = self.opts.unset_names == UnsetNames::Empty && !opaque;
        let (va, vb) = match (a, b) {
            (Some(a), Some(b)) => (a, b),
            (Some(v), None) | (None, Some(v)) => {
                let value = match &v.value {
                    Value::Scalar(f) if empty_unset => {
                        let e = text_field("", None, f.word.clone());
                        Value::Scalar(self.merge_field(f, &e))
                    }
                    _ => Value::Unknown,
                };
                return Some(Variable {
                    value,
                    exported: v.exported,
                    origin: v.origin.clone(),
                });
            }
            (None, None) => return None,
        };
        if va == vb {
            return Some(va.clone());
        }
        let value = match (&va.value, &vb.value) {
            (Value::Scalar(x), Value::Scalar(y)) => Value::Scalar(self.merge_field(x, y)),
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => Value::Array(
                x.iter()
                    .zip(y)
                    .map(|(p, q)| self.merge_field(p, q))
                    .collect(),
            ),
            _ => Value::Unknown,
        };
        Some(Variable {
            value,
            exported: va.exported || vb.exported,
            origin: if va.origin == vb.origin {
                va.origin.clone()
            } else {
                None
            },
        })
    }

    fn merge2(&mut self, a: State<'t>, b: State<'t>) -> State<'t> {
        let mut out = a;
        if !Arc::ptr_eq(&out.vars, &b.vars) {
            self.tick((out.vars.len() + b.vars.len()) as u64);
            let opaque = out.opaque || b.opaque;
            let mut names: Vec<&String> = out.vars.keys().collect();
            names.extend(b.vars.keys().filter(|k| !out.vars.contains_key(*k)));
            let mut changes = Vec::new();
            for name in names {
                let (x, y) = (out.vars.get(name), b.vars.get(name));
                if x == y {
                    continue;
                }
                changes.push((name.clone(), self.merge_value(x, y, opaque)));
            }
            if !changes.is_empty() {
                let vars = self.vars_mut(&mut out.vars);
                for (name, v) in changes {
                    match v {
                        Some(v) => {
                            vars.insert(name, v);
                        }
                        None => {
                            vars.remove(&name);
                        }
                    }
                }
            }
        }
        if out.params != b.params {
            out.params = match (&out.params, &b.params) {
                (Params::Known(x), Params::Known(y)) if x.len() == y.len() => Params::Known(
                    x.iter()
                        .zip(y)
                        .map(|(p, q)| self.merge_field(p, q))
                        .collect(),
                ),
                _ => Params::Unknown,
            };
        }
        if out.arg0 != b.arg0 {
            out.arg0 = None;
        }
        if !Rc::ptr_eq(&out.funcs, &b.funcs) {
            let add: Vec<(String, Func<'t>)> = b
                .funcs
                .iter()
                .filter(|(k, _)| !out.funcs.contains_key(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !add.is_empty() {
                Rc::make_mut(&mut out.funcs).extend(add);
            }
        }
        if !Rc::ptr_eq(&out.files, &b.files) {
            let add: Vec<(String, Rc<Unit<'t>>)> = b
                .files
                .iter()
                .filter(|(k, _)| !out.files.contains_key(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !add.is_empty() {
                Rc::make_mut(&mut out.files).extend(add);
            }
        }
        if !Rc::ptr_eq(&out.gone, &b.gone) {
            let keep: HashSet<String> = out.gone.intersection(&b.gone).cloned().collect();
            out.gone = Rc::new(keep);
        }
        if out.cwd != b.cwd {
            out.cwd = None;
        }
        out.allexport |= b.allexport;
        out.noglob &= b.noglob;
        out.opaque |= b.opaque;
        out.ifs |= b.ifs;
        out
    }

    fn merge_all(&mut self, states: Vec<State<'t>>) -> Option<State<'t>> {
        let mut it = states.into_iter();
        let mut acc = it.next()?;
        for s in it {
            acc = self.merge2(acc, s);
        }
        Some(acc)
    }

    /// The end states of alternatives run from `st` (branches not known to be taken):
    /// those that go on are merged into `st`; those that left by `return`/`break`/
    /// `continue` wait for their boundary; those that exited are dropped.
    fn settle(&mut self, st: &mut State<'t>, outcomes: Vec<(State<'t>, Flow)>) -> Flow {
        let mut live = Vec::new();
        for (s, f) in outcomes {
            match f {
                Flow::Next => live.push(s),
                Flow::Return | Flow::Break | Flow::Continue => self.pending.push((f, s)),
                Flow::BreakN(_) => self.pending.push((Flow::Break, s)),
                Flow::ContinueN(_) => self.pending.push((Flow::Continue, s)),
                Flow::Exit | Flow::Dead => self.exits += 1,
            }
        }
        match self.merge_all(live) {
            Some(s) => {
                *st = s;
                Flow::Next
            }
            None => Flow::Dead,
        }
    }

    /// Before a subshell or a new shell: what leaving it restores.
    fn enter_shell(&self) -> (usize, u64) {
        (self.pending.len(), self.exits)
    }

    /// After a subshell or a new shell: its `return`s and `exit`s end there.
    fn leave_shell(&mut self, mark: (usize, u64)) {
        self.pending.truncate(mark.0);
        self.exits = mark.1;
    }

    /// Takes the pending states of the given kinds above `mark`.
    fn take_pending(&mut self, mark: usize, kinds: &[Flow]) -> Vec<State<'t>> {
        let mut taken = Vec::new();
        let mut keep = Vec::new();
        for (f, s) in self.pending.drain(mark.min(self.pending.len())..) {
            if kinds.contains(&f) {
                taken.push(s);
            } else {
                keep.push((f, s));
            }
        }
        self.pending.extend(keep);
        taken
    }

    // ---- statements ---------------------------------------------------------------------

    pub(super) fn run_unit(&mut self, unit: &Rc<Unit<'t>>, st: &mut State<'t>, cx: &Ctx) -> Flow {
        let Some(tree) = unit.tree.as_ref() else {
            self.out.has_errors = true;
            return Flow::Next;
        };
        let root = tree.root_node();
        if root.has_error() {
            self.out.has_errors = true;
        }
        self.block(unit, root, st, cx)
    }

    fn is_stmt(kind: &str) -> bool {
        matches!(
            kind,
            "command"
                | "redirected_statement"
                | "variable_assignment"
                | "variable_assignments"
                | "declaration_command"
                | "unset_command"
                | "pipeline"
                | "list"
                | "subshell"
                | "compound_statement"
                | "if_statement"
                | "case_statement"
                | "for_statement"
                | "c_style_for_statement"
                | "while_statement"
                | "function_definition"
                | "negated_command"
                | "test_command"
                | "ERROR"
        )
    }

    /// The statements among `nodes`, each with whether `&` follows it.
    fn stmts<'u>(nodes: &[Node<'u>]) -> Vec<(Node<'u>, bool)> {
        let mut out = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            if n.is_named() && Self::is_stmt(n.kind()) {
                let bg = nodes.get(i + 1).is_some_and(|s| s.kind() == "&");
                out.push((*n, bg));
            }
        }
        out
    }

    pub(super) fn subshell_of(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) {
        let mark = self.enter_shell();
        self.block(u, n, st, cx);
        self.leave_shell(mark);
    }

    fn block(&mut self, u: &Rc<Unit<'t>>, parent: Node<'_>, st: &mut State<'t>, cx: &Ctx) -> Flow {
        let mut c = parent.walk();
        let kids: Vec<Node> = parent.children(&mut c).collect();
        let list = Self::stmts(&kids);
        self.seq(u, &list, st, cx)
    }

    fn seq(
        &mut self,
        u: &Rc<Unit<'t>>,
        list: &[(Node<'_>, bool)],
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Flow {
        // After a statement some of whose paths left (an `exit` in a branch not known to be
        // taken, a `return`, a `break`), what follows may not run.
        let mut maybe: Option<Ctx> = None;
        for (n, bg) in list {
            if self.abort {
                return Flow::Dead;
            }
            let cx = maybe.as_ref().unwrap_or(cx);
            let before = (self.exits, self.pending.len());
            let f = if *bg {
                let mut sub = st.clone();
                let mark = self.enter_shell();
                self.stmt(u, *n, &mut sub, cx);
                self.leave_shell(mark);
                Flow::Next
            } else {
                self.stmt(u, *n, st, cx)
            };
            if f != Flow::Next {
                return f;
            }
            if maybe.is_none()
                && cx.certainty == Certainty::Always
                && (self.exits > before.0 || self.pending.len() > before.1)
            {
                maybe = Some(cx.maybe());
            }
        }
        Flow::Next
    }

    fn stmt(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) -> Flow {
        if !self.tick(4) {
            return Flow::Dead;
        }
        if self.rec >= MAX_REC || self.deep() {
            self.trunc();
            return Flow::Next;
        }
        self.rec += 1;
        let f = self.stmt_inner(u, n, st, cx);
        self.rec -= 1;
        f
    }

    fn stmt_inner(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) -> Flow {
        match n.kind() {
            "command" => self.command(u, n, &[], st, cx),
            "redirected_statement" => {
                let mut c = n.walk();
                let redirs: Vec<Node> = n
                    .children(&mut c)
                    .filter(|k| k.kind().ends_with("_redirect"))
                    .collect();
                match n.child_by_field_name("body") {
                    Some(b) if b.kind() == "command" => self.command(u, b, &redirs, st, cx),
                    Some(b) => self.stmt(u, b, st, cx),
                    None => Flow::Next,
                }
            }
            "variable_assignment" => {
                self.assign(u, n, st, cx, None, false);
                Flow::Next
            }
            "variable_assignments" => {
                let mut c = n.walk();
                let kids: Vec<Node> = n.named_children(&mut c).collect();
                for k in kids {
                    if k.kind() == "variable_assignment" {
                        self.assign(u, k, st, cx, None, false);
                    }
                }
                Flow::Next
            }
            "declaration_command" => {
                self.declare(u, n, st, cx);
                Flow::Next
            }
            "unset_command" => {
                self.unset_cmd(u, n, st, cx);
                Flow::Next
            }
            "pipeline" => {
                let mut c = n.walk();
                let kids: Vec<Node> = n.children(&mut c).collect();
                for (k, _) in Self::stmts(&kids) {
                    let mut sub = st.clone();
                    let mark = self.enter_shell();
                    self.stmt(u, k, &mut sub, cx);
                    self.leave_shell(mark);
                }
                Flow::Next
            }
            "list" => self.and_or(u, n, st, cx),
            "subshell" => {
                let mut sub = st.clone();
                let mark = self.enter_shell();
                self.block(u, n, &mut sub, cx);
                self.leave_shell(mark);
                Flow::Next
            }
            "compound_statement" => {
                if n.child(0).is_some_and(|c| c.kind() == "((") {
                    let r = n.byte_range();
                    let inner = r.start + 2..r.end.saturating_sub(2).max(r.start + 2);
                    self.arith_range(u, n, inner, st, cx);
                    Flow::Next
                } else {
                    self.block(u, n, st, cx)
                }
            }
            "if_statement" => self.if_stmt(u, n, st, cx),
            "case_statement" => self.case_stmt(u, n, st, cx),
            "for_statement" => self.for_stmt(u, n, st, cx),
            "c_style_for_statement" => self.c_for(u, n, st, cx),
            "while_statement" => self.while_stmt(u, n, st, cx),
            "function_definition" => {
                if let Some(name) = n.child_by_field_name("name") {
                    let name = u.node_text(name).to_owned();
                    Rc::make_mut(&mut st.funcs).insert(
                        name,
                        Func {
                            unit: u.clone(),
                            range: n.byte_range(),
                        },
                    );
                }
                Flow::Next
            }
            "negated_command" => match n.named_child(0) {
                Some(c) => self.stmt(u, c, st, cx),
                None => Flow::Next,
            },
            "test_command" => {
                self.test_side_effects(u, n, st, cx);
                Flow::Next
            }
            "ERROR" => {
                self.out.has_errors = true;
                self.block(u, n, st, cx)
            }
            _ => Flow::Next,
        }
    }

    /// Expansions inside `[ ]`/`[[ ]]` run for their effects (`${X:=v}`, `$(cmd)`).
    fn test_side_effects(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) {
        let mut stack = vec![n];
        let mut seen = 0;
        while let Some(x) = stack.pop() {
            seen += 1;
            if seen > 10_000 {
                break;
            }
            match x.kind() {
                "command_substitution" | "process_substitution" => {
                    let mut sub = st.clone();
                    let mark = self.enter_shell();
                    self.block(u, x, &mut sub, cx);
                    self.leave_shell(mark);
                }
                "expansion" if u.node_text(x).contains('=') => {
                    let _ = self.scalar_word(u, x, st, cx);
                }
                _ => {
                    let mut c = x.walk();
                    let kids: Vec<Node> = x.named_children(&mut c).collect();
                    stack.extend(kids.into_iter().rev());
                }
            }
        }
    }

    fn and_or(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) -> Flow {
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        let op = kids
            .iter()
            .find(|k| matches!(k.kind(), "&&" | "||"))
            .map(|k| k.kind())
            .unwrap_or("&&");
        let named: Vec<Node> = kids
            .iter()
            .filter(|k| k.is_named() && k.kind() != "comment")
            .copied()
            .collect();
        let (Some(left), Some(right)) = (named.first(), named.last()) else {
            return Flow::Next;
        };
        if left.id() == right.id() {
            return self.stmt(u, *left, st, cx);
        }
        // `a && X=1 || X=2`: the assignment succeeds, so this is `if a; then X=1; else X=2; fi`.
        if op == "||" && left.kind() == "list" {
            let mut c2 = left.walk();
            let lk: Vec<Node> = left.children(&mut c2).collect();
            let inner_and = lk.iter().any(|k| k.kind() == "&&");
            let ln: Vec<Node> = lk
                .iter()
                .filter(|k| k.is_named() && k.kind() != "comment")
                .copied()
                .collect();
            if let (true, [a, b]) = (inner_and, ln.as_slice()) {
                let always = matches!(
                    b.kind(),
                    "variable_assignment" | "variable_assignments" | "declaration_command"
                ) && !u.node_text(*b).contains("$(")
                    && !u.node_text(*b).contains('`');
                if always {
                    let f = self.stmt(u, *a, st, cx);
                    if f != Flow::Next {
                        return f;
                    }
                    return match self.cond(u, *a, st, cx) {
                        Some(true) => self.stmt(u, *b, st, cx),
                        Some(false) => self.stmt(u, *right, st, cx),
                        None => {
                            let mut x = st.clone();
                            let fx = self.stmt(u, *b, &mut x, &cx.maybe());
                            let mut y = st.clone();
                            let fy = self.stmt(u, *right, &mut y, &cx.maybe());
                            self.settle(st, vec![(x, fx), (y, fy)])
                        }
                    };
                }
            }
        }
        let f = self.stmt(u, *left, st, cx);
        if f != Flow::Next {
            return f;
        }
        let truth = self.cond(u, *left, st, cx);
        match (op, truth) {
            ("&&", Some(false)) | ("||", Some(true)) => Flow::Next,
            (_, Some(_)) => self.stmt(u, *right, st, cx),
            _ => {
                let mut b = st.clone();
                let f = self.stmt(u, *right, &mut b, &cx.maybe());
                let rest = st.clone();
                self.settle(st, vec![(rest, Flow::Next), (b, f)])
            }
        }
    }

    fn if_stmt(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) -> Flow {
        // (conditions, body) of `if` and each `elif`, then the `else` body.
        let mut clauses: Vec<Clause> = Vec::new();
        let mut else_body: Option<Vec<(Node, bool)>> = None;
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        fn split<'u>(kids: &[Node<'u>]) -> Clause<'u> {
            let then = kids
                .iter()
                .position(|k| k.kind() == "then")
                .unwrap_or(kids.len());
            let cond = Ev::stmts(&kids[..then]);
            let body = Ev::stmts(kids.get(then + 1..).unwrap_or(&[]));
            (cond, body)
        }
        let mut main_end = kids.len();
        for (i, k) in kids.iter().enumerate() {
            if matches!(k.kind(), "elif_clause" | "else_clause") {
                main_end = main_end.min(i);
            }
        }
        let (cond, body) = split(&kids[..main_end]);
        clauses.push((cond, body));
        for k in &kids[main_end..] {
            let mut c2 = k.walk();
            let sub: Vec<Node> = k.children(&mut c2).collect();
            match k.kind() {
                "elif_clause" => clauses.push(split(&sub)),
                "else_clause" => else_body = Some(Self::stmts(&sub)),
                _ => {}
            }
        }
        let mut outcomes = Vec::new();
        let mut cur_cx = cx.clone();
        for (cond, body) in &clauses {
            let f = self.seq(u, cond, st, &cur_cx);
            if f != Flow::Next {
                if cur_cx.certainty == cx.certainty && outcomes.is_empty() {
                    return f;
                }
                outcomes.push((st.clone(), f));
                return self.settle(st, outcomes);
            }
            let truth = match cond.last() {
                Some((last, false)) => self.cond(u, *last, st, &cur_cx),
                _ => None,
            };
            match truth {
                Some(true) => {
                    if outcomes.is_empty() {
                        return self.seq(u, body, st, &cur_cx);
                    }
                    let mut b = st.clone();
                    let f = self.seq(u, body, &mut b, &cur_cx);
                    outcomes.push((b, f));
                    return self.settle(st, outcomes);
                }
                Some(false) => continue,
                None => {
                    let mut b = st.clone();
                    let f = self.seq(u, body, &mut b, &cx.maybe());
                    outcomes.push((b, f));
                    cur_cx = cx.maybe();
                }
            }
        }
        let mut rest = st.clone();
        let f = match &else_body {
            Some(body) => self.seq(u, body, &mut rest, &cur_cx),
            None => Flow::Next,
        };
        if outcomes.is_empty() {
            *st = rest;
            return f;
        }
        outcomes.push((rest, f));
        self.settle(st, outcomes)
    }

    fn case_stmt(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) -> Flow {
        let subject = n
            .child_by_field_name("value")
            .map(|v| self.scalar_word(u, v, st, cx));
        let mut c = n.walk();
        let items: Vec<Node> = n
            .named_children(&mut c)
            .filter(|k| k.kind() == "case_item")
            .collect();
        // Each item: its patterns (None when not known) and its statements.
        let mut parsed = Vec::new();
        for item in &items {
            let mut c2 = item.walk();
            let kids: Vec<Node> = item.children(&mut c2).collect();
            let mut pats = Vec::new();
            let mut body_nodes = Vec::new();
            for (i, k) in kids.iter().enumerate() {
                if item.field_name_for_child(i as u32) == Some("value") {
                    pats.push(self.pattern(u, *k, st, cx));
                } else {
                    body_nodes.push(*k);
                }
            }
            let fall = kids.iter().any(|k| k.kind() == ";&");
            parsed.push((pats, Self::stmts(&body_nodes), fall));
        }
        // `;&` runs the next item's statements too.
        for i in (0..parsed.len().saturating_sub(1)).rev() {
            if parsed[i].2 {
                let next = parsed[i + 1].1.clone();
                parsed[i].1.extend(next);
            }
        }
        let parsed: Vec<CaseItem> = parsed.into_iter().map(|(p, b, _)| (p, b)).collect();
        let catch_all = |pats: &Vec<Option<String>>| pats.iter().any(|p| p.as_deref() == Some("*"));
        // Which items the subject may take.
        let mut taken: Vec<usize> = Vec::new();
        let mut no_match = false;
        let known = subject.as_ref().and_then(|s| s.known_choices());
        let mut decided = false;
        if let Some(values) = known {
            decided = true;
            'values: for v in values {
                for (i, (pats, _)) in parsed.iter().enumerate() {
                    let mut unknown = false;
                    let mut hit = false;
                    for p in pats {
                        match p {
                            Some(p) if super::word::fnmatch(p, &v) => hit = true,
                            Some(_) => {}
                            None => unknown = true,
                        }
                    }
                    if hit {
                        if !taken.contains(&i) {
                            taken.push(i);
                        }
                        continue 'values;
                    }
                    if unknown {
                        decided = false;
                        break 'values;
                    }
                }
                no_match = true;
            }
        }
        if !decided {
            taken = (0..parsed.len()).collect();
            no_match = !parsed.iter().any(|(p, _)| catch_all(p));
        }
        if taken.len() == 1 && !no_match {
            return self.seq(u, &parsed[taken[0]].1, st, cx);
        }
        let mut outcomes = Vec::new();
        for i in taken {
            let mut b = st.clone();
            let f = self.seq(u, &parsed[i].1, &mut b, &cx.maybe());
            outcomes.push((b, f));
        }
        if no_match {
            outcomes.push((st.clone(), Flow::Next));
        }
        self.settle(st, outcomes)
    }

    /// A loop body run once for any number of iterations: the state after is the state
    /// before or after the body, with whatever the body changed unknown.
    fn loop_once(
        &mut self,
        u: &Rc<Unit<'t>>,
        body: &[(Node<'_>, bool)],
        st: &mut State<'t>,
        cx: &Ctx,
        extra: &dyn Fn(&mut Self, &mut State<'t>),
        scan: &[Node<'_>],
    ) -> Flow {
        // Any iteration may have run before this one: what the loop assigns is unknown.
        let mut roots: Vec<Node> = body.iter().map(|(n, _)| *n).collect();
        roots.extend_from_slice(scan);
        let key = (
            Rc::as_ptr(u) as usize,
            roots.first().map(|n| n.id()).unwrap_or(0),
            roots.len(),
            Rc::as_ptr(&st.funcs) as usize,
        );
        let (names, params) = match self.scan_memo.get(&key) {
            Some(m) => m.clone(),
            None => {
                let mut names = HashSet::new();
                let mut params = false;
                self.assigned_in(u, &roots, st, &mut names, &mut params, 0);
                let mut names: Vec<String> = names.into_iter().collect();
                names.sort();
                // The unit stays alive, so no later one takes its address in the key.
                self.scan_units.push(u.clone());
                self.scan_funcs.push(st.funcs.clone());
                self.scan_memo.insert(key, (names.clone(), params));
                (names, params)
            }
        };
        for name in names {
            let old = st.vars.get(&name);
            if old.is_some_and(|v| v.value == Value::Unknown) {
                continue;
            }
            let exported = old.is_some_and(|v| v.exported);
            let origin = old.and_then(|v| v.origin.clone());
            self.set_var(st, &name, Value::Unknown, origin, Some(exported));
        }
        if params {
            st.params = Params::Unknown;
        }
        let pre = st.clone();
        let mut b = st.clone();
        let mark = self.pending.len();
        let f = self.seq(u, body, &mut b, &cx.maybe());
        extra(self, &mut b);
        let mut live = vec![pre.clone()];
        if matches!(
            f,
            Flow::Next | Flow::Break | Flow::Continue | Flow::BreakN(_) | Flow::ContinueN(_)
        ) {
            live.push(b);
        }
        live.extend(self.take_pending(mark, &[Flow::Break, Flow::Continue]));
        let Some(mut post) = self.merge_all(live) else {
            return Flow::Dead;
        };
        // Whatever differs from before took a value of some iteration: unknown.
        let changed: Vec<String> = post
            .vars
            .iter()
            .filter(|(k, v)| pre.vars.get(*k) != Some(*v))
            .map(|(k, _)| k.clone())
            .collect();
        for name in changed {
            let exported = post.vars.get(&name).is_some_and(|v| v.exported);
            let origin = post.vars.get(&name).and_then(|v| v.origin.clone());
            self.set_var(&mut post, &name, Value::Unknown, origin, Some(exported));
        }
        if post.params != pre.params {
            post.params = Params::Unknown;
        }
        *st = post;
        Flow::Next
    }

    /// The names a loop body may assign (and whether it may change the positional
    /// parameters), read from its text: assignments, declarations, `for` variables,
    /// arithmetic, `read`-like commands, and the functions it calls.
    fn assigned_in(
        &mut self,
        u: &Rc<Unit<'t>>,
        roots: &[Node<'_>],
        st: &State<'t>,
        names: &mut HashSet<String>,
        params: &mut bool,
        depth: usize,
    ) {
        let mut stack: Vec<Node> = roots.to_vec();
        let mut seen = 0usize;
        let mut calls: Vec<Func<'t>> = Vec::new();
        let idents = |t: &str, names: &mut HashSet<String>| {
            let mut cur = String::new();
            for c in t.chars().chain(std::iter::once(' ')) {
                if c == '_' || c.is_ascii_alphanumeric() {
                    cur.push(c);
                } else {
                    if is_name(&cur) {
                        names.insert(std::mem::take(&mut cur));
                    }
                    cur.clear();
                }
            }
        };
        while let Some(n) = stack.pop() {
            seen += 1;
            if seen > 100_000 || !self.tick(1) {
                break;
            }
            match n.kind() {
                "variable_assignment" => {
                    if let Some(nm) = n.child_by_field_name("name") {
                        let nm = match nm.child_by_field_name("name") {
                            Some(inner) => inner,
                            None => nm,
                        };
                        names.insert(u.node_text(nm).to_owned());
                    }
                }
                "declaration_command" | "unset_command" => {
                    let mut c = n.walk();
                    for k in n.named_children(&mut c) {
                        if k.kind() == "variable_name" {
                            names.insert(u.node_text(k).to_owned());
                        }
                    }
                }
                "for_statement" => {
                    if let Some(v) = n.child_by_field_name("variable") {
                        names.insert(u.node_text(v).to_owned());
                    }
                }
                "c_style_for_statement" | "arithmetic_expansion" => idents(u.node_text(n), names),
                "compound_statement" if n.child(0).is_some_and(|c| c.kind() == "((") => {
                    idents(u.node_text(n), names)
                }
                "expansion" if u.node_text(n).contains('=') => idents(u.node_text(n), names),
                "command" => {
                    let name = n
                        .child_by_field_name("name")
                        .map(|x| u.node_text(x).to_owned())
                        .unwrap_or_default();
                    match name.as_str() {
                        "shift" | "set" => *params = true,
                        "read" | "mapfile" | "readarray" | "getopts" | "printf" | "let"
                        | "eval" | "source" | "." => {
                            let mut c = n.walk();
                            for k in n.named_children(&mut c) {
                                idents(u.node_text(k), names);
                            }
                        }
                        _ => {
                            if let Some(f) = st.funcs.get(&name) {
                                calls.push(f.clone());
                            }
                        }
                    }
                }
                _ => {}
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
        if depth < 2 {
            for f in calls {
                if let Some(root) = f.unit.tree.as_ref().map(|t| t.root_node()) {
                    let def = root.descendant_for_byte_range(f.range.start, f.range.end);
                    if let Some(def) = def {
                        let unit = f.unit.clone();
                        self.assigned_in(&unit, &[def], st, names, params, depth + 1);
                    }
                }
            }
        }
    }

    fn body_of<'u>(n: Node<'u>) -> Vec<(Node<'u>, bool)> {
        match n.child_by_field_name("body") {
            Some(b) => {
                let mut c = b.walk();
                let kids: Vec<Node> = b.children(&mut c).collect();
                if b.kind() == "do_group" {
                    Self::stmts(&kids)
                } else {
                    vec![(b, false)]
                }
            }
            None => Vec::new(),
        }
    }

    fn for_stmt(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) -> Flow {
        let Some(var) = n.child_by_field_name("variable") else {
            return Flow::Next;
        };
        let name = u.node_text(var).to_owned();
        let var_span = u.span(var.byte_range());
        let body = Self::body_of(n);
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        let mut values = Vec::new();
        let mut has_in = false;
        for (i, k) in kids.iter().enumerate() {
            if k.kind() == "in" {
                has_in = true;
            }
            if n.field_name_for_child(i as u32) == Some("value") {
                values.push(*k);
            }
        }
        let mut items: Option<Vec<Field>> = Some(Vec::new());
        if has_in || !values.is_empty() {
            for v in values {
                for a in self.expand_word(u, v, st, cx, true) {
                    match (a, items.as_mut()) {
                        (Arg::Field(f), Some(list)) => list.push(f),
                        _ => items = None,
                    }
                }
            }
        } else {
            items = match &st.params {
                Params::Known(p) => Some(p.clone()),
                Params::Unknown => None,
            };
        }
        match items {
            Some(list) if list.len() <= MAX_UNROLL && self.unroll(list.len()) => {
                for f in list {
                    self.set_var(st, &name, Value::Scalar(f), Some(var_span.clone()), None);
                    let mark = self.pending.len();
                    self.loop_depth += 1;
                    let flow = self.seq(u, &body, st, cx);
                    self.loop_depth -= 1;
                    let conts = self.take_pending(mark, &[Flow::Break, Flow::Continue]);
                    if !conts.is_empty() {
                        let mut all = conts;
                        if matches!(flow, Flow::Next | Flow::Continue | Flow::Break) {
                            all.push(st.clone());
                        }
                        if let Some(m) = self.merge_all(all) {
                            *st = m;
                        }
                    }
                    match flow {
                        Flow::Next | Flow::Continue => {}
                        Flow::Break => break,
                        other => return outer(other),
                    }
                }
                Flow::Next
            }
            other => {
                if other.is_some() {
                    self.trunc();
                }
                let span = var_span.clone();
                self.set_var(st, &name, Value::Unknown, Some(span), None);
                self.loop_once(u, &body, st, cx, &|_, _| {}, &[])
            }
        }
    }

    fn while_stmt(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) -> Flow {
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        let until = kids.first().is_some_and(|k| k.kind() == "until");
        let mut conds = Vec::new();
        for (i, k) in kids.iter().enumerate() {
            if n.field_name_for_child(i as u32) == Some("condition") {
                conds.push(*k);
            }
        }
        let cond_nodes: Vec<Node> = conds.clone();
        let conds = Self::stmts(&conds);
        let body = Self::body_of(n);
        // Unrolled while the condition is known (an argument loop over known parameters);
        // `while true` runs until a `break` or `exit`: once, as any iteration.
        let forever = match conds.as_slice() {
            [(c, false)] if c.kind() == "command" && c.named_child_count() == 1 => {
                matches!(u.node_text(*c).trim(), "true" | ":") != until
            }
            _ => false,
        };
        let mut iters = if forever { MAX_UNROLL + 1 } else { 0 };
        if forever {
            let f = self.seq(u, &conds, st, cx);
            if f != Flow::Next {
                return f;
            }
            // Unrolled while each iteration is known to go on or to break (a counter and
            // `[ $n -ge 3 ] && break`).
            for _ in 0..MAX_UNROLL {
                if !self.unroll(1) {
                    break;
                }
                let saved = st.clone();
                let mark = self.pending.len();
                let (execs, exits) = (self.out.execs.len(), self.exits);
                self.loop_depth += 1;
                let flow = self.seq(u, &body, st, cx);
                self.loop_depth -= 1;
                if self.pending.len() > mark || self.exits > exits {
                    // A break in a branch not known: this iteration, again, as any.
                    self.pending.truncate(mark);
                    self.out.execs.truncate(execs);
                    self.exits = exits;
                    *st = saved;
                    break;
                }
                match flow {
                    Flow::Next | Flow::Continue => {}
                    Flow::Break => return Flow::Next,
                    other => return outer(other),
                }
            }
            return self.loop_once(u, &body, st, cx, &|_, _| {}, &cond_nodes);
        }
        loop {
            let f = self.seq(u, &conds, st, cx);
            if f != Flow::Next {
                return f;
            }
            let truth = match conds.last() {
                Some((last, false)) => self.cond(u, *last, st, cx).map(|t| t != until),
                _ => None,
            };
            match truth {
                Some(false) => return Flow::Next,
                Some(true) if iters < MAX_UNROLL && self.unroll(1) => {
                    iters += 1;
                    match self.loop_iteration(u, &body, st, cx) {
                        Flow::Next => continue,
                        Flow::Break => return Flow::Next,
                        other => return outer(other),
                    }
                }
                Some(true) => {
                    self.trunc();
                    break;
                }
                None => break,
            }
        }
        self.loop_once(u, &body, st, cx, &|_, _| {}, &cond_nodes)
    }

    /// One iteration known to run: `continue` and `break` in branches end it.
    fn loop_iteration(
        &mut self,
        u: &Rc<Unit<'t>>,
        body: &[(Node<'_>, bool)],
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Flow {
        let mark = self.pending.len();
        self.loop_depth += 1;
        let flow = self.seq(u, body, st, cx);
        self.loop_depth -= 1;
        let left = self.take_pending(mark, &[Flow::Break, Flow::Continue]);
        let flow = match flow {
            Flow::Continue => Flow::Next,
            Flow::Dead if !left.is_empty() => {
                if let Some(m) = self.merge_all(left) {
                    *st = m;
                }
                return Flow::Next;
            }
            f => f,
        };
        if !left.is_empty() && matches!(flow, Flow::Next | Flow::Break) {
            let mut all = left;
            all.push(st.clone());
            if let Some(m) = self.merge_all(all) {
                *st = m;
            }
        }
        flow
    }

    fn c_for(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) -> Flow {
        if let Some(init) = n.child_by_field_name("initializer") {
            self.arith_range(u, init, init.byte_range(), st, cx);
        }
        let body = Self::body_of(n);
        let update = n.child_by_field_name("update");
        let condition = n.child_by_field_name("condition");
        let mut iters = 0;
        loop {
            let truth = match condition {
                Some(c) => self
                    .arith_range(u, c, c.byte_range(), st, cx)
                    .map(|v| v != 0),
                None => None,
            };
            match truth {
                Some(false) => return Flow::Next,
                Some(true) if iters < MAX_UNROLL && self.unroll(1) => {
                    iters += 1;
                    match self.loop_iteration(u, &body, st, cx) {
                        Flow::Next => {}
                        Flow::Break => return Flow::Next,
                        other => return outer(other),
                    }
                    if let Some(up) = update {
                        self.arith_range(u, up, up.byte_range(), st, cx);
                    }
                }
                Some(true) => {
                    self.trunc();
                    break;
                }
                None => break,
            }
        }
        let uu = u.clone();
        let cx2 = cx.clone();
        let scan: Vec<Node> = Vec::new();
        if let Some(up) = update {
            // `i++`: what the update assigns is unknown after any number of iterations.
            let text = u.node_text(up).to_owned();
            let mut cur = String::new();
            for c in text.chars().chain(std::iter::once(' ')) {
                if c == '_' || c.is_ascii_alphanumeric() {
                    cur.push(c);
                } else {
                    if is_name(&cur) {
                        let exported = st.vars.get(&cur).is_some_and(|v| v.exported);
                        self.set_var(st, &cur, Value::Unknown, None, Some(exported));
                    }
                    cur.clear();
                }
            }
        }
        self.loop_once(
            u,
            &body,
            st,
            cx,
            &move |ev, b| {
                if let Some(up) = update {
                    ev.arith_range(&uu, up, up.byte_range(), b, &cx2);
                }
            },
            &scan,
        )
    }

    /// Whether a condition statement is known to succeed.
    fn cond(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<bool> {
        match n.kind() {
            "command" => {
                let name = n.child_by_field_name("name")?;
                if n.child_by_field_name("argument").is_some() {
                    return None;
                }
                match u.node_text(name) {
                    "true" | ":" => Some(true),
                    "false" => Some(false),
                    _ => None,
                }
            }
            "negated_command" => n
                .named_child(0)
                .and_then(|c| self.cond(u, c, st, cx))
                .map(|b| !b),
            "list" => {
                let mut c = n.walk();
                let kids: Vec<Node> = n.children(&mut c).collect();
                let op = kids
                    .iter()
                    .find(|k| matches!(k.kind(), "&&" | "||"))?
                    .kind();
                let named: Vec<Node> = kids
                    .iter()
                    .filter(|k| k.is_named() && k.kind() != "comment")
                    .copied()
                    .collect();
                let (l, r) = (*named.first()?, *named.last()?);
                let a = self.cond(u, l, st, cx);
                let b = self.cond(u, r, st, cx);
                match (op, a, b) {
                    ("&&", Some(false), _) => Some(false),
                    ("&&", Some(true), b) => b,
                    ("||", Some(true), _) => Some(true),
                    ("||", Some(false), b) => b,
                    _ => None,
                }
            }
            "test_command" => self.test_cond(u, n, st, cx),
            // `(( N > 1 ))`: evaluated again only when it assigns nothing.
            "compound_statement" if n.child(0).is_some_and(|c| c.kind() == "((") => {
                let r = n.byte_range();
                let inner = r.start + 2..r.end.saturating_sub(2).max(r.start + 2);
                let text = u.src(inner.clone());
                let stripped = text
                    .replace("==", "")
                    .replace("!=", "")
                    .replace("<=", "")
                    .replace(">=", "");
                if stripped.contains('=') || text.contains("++") || text.contains("--") {
                    return None;
                }
                self.arith_range(u, n, inner, st, cx).map(|v| v != 0)
            }
            _ => None,
        }
    }

    /// `[ A = B ]`, `[[ A == B ]]`, `[ -z A ]`, `[ -n A ]` with known operands.
    fn test_cond(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<bool> {
        let double = n.child(0).is_some_and(|c| c.kind() == "[[");
        let e = n.named_child(0)?;
        if n.named_child_count() != 1 {
            return None;
        }
        self.test_expr(u, e, double, st, cx)
    }

    fn test_expr(
        &mut self,
        u: &Rc<Unit<'t>>,
        e: Node<'_>,
        double: bool,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<bool> {
        let known = |ev: &mut Self, st: &mut State<'t>, w: Node<'_>| -> Option<String> {
            // `[ $X = a ]` splits `$X`: an unquoted expansion is read only when it is one
            // plain word.
            let v = ev.scalar_word(u, w, st, cx).known()?;
            if !double
                && Self::has_unquoted_expansion(w)
                && (v.is_empty() || v.contains([' ', '\t', '\n', '*', '?', '[']))
            {
                return None;
            }
            Some(v)
        };
        match e.kind() {
            "binary_expression" => {
                let op = e.child_by_field_name("operator")?;
                let op = u.node_text(op).to_owned();
                let l = e.child_by_field_name("left")?;
                let r = e.child_by_field_name("right")?;
                match op.as_str() {
                    "&&" | "-a" => {
                        let a = self.test_expr(u, l, double, st, cx);
                        let b = self.test_expr(u, r, double, st, cx);
                        match (a, b) {
                            (Some(false), _) | (_, Some(false)) => Some(false),
                            (Some(true), Some(true)) => Some(true),
                            _ => None,
                        }
                    }
                    "||" | "-o" => {
                        let a = self.test_expr(u, l, double, st, cx);
                        let b = self.test_expr(u, r, double, st, cx);
                        match (a, b) {
                            (Some(true), _) | (_, Some(true)) => Some(true),
                            (Some(false), Some(false)) => Some(false),
                            _ => None,
                        }
                    }
                    "=" | "==" | "!=" => {
                        let a = known(self, st, l)?;
                        let b = if double && r.kind() != "string" && r.kind() != "raw_string" {
                            let p = self.pattern(u, r, st, cx)?;
                            return Some(super::word::fnmatch(&p, &a) == (op != "!="));
                        } else {
                            known(self, st, r)?
                        };
                        Some((a == b) == (op != "!="))
                    }
                    "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge" => {
                        let a: i64 = known(self, st, l)?.trim().parse().ok()?;
                        let b: i64 = known(self, st, r)?.trim().parse().ok()?;
                        Some(match op.as_str() {
                            "-eq" => a == b,
                            "-ne" => a != b,
                            "-lt" => a < b,
                            "-le" => a <= b,
                            "-gt" => a > b,
                            _ => a >= b,
                        })
                    }
                    _ => None,
                }
            }
            "unary_expression" => {
                let op = e.child_by_field_name("operator").or_else(|| e.child(0))?;
                let op = u.node_text(op).to_owned();
                let arg = e.named_children(&mut e.walk()).last()?;
                match op.as_str() {
                    "-z" => Some(known(self, st, arg)?.is_empty()),
                    "-n" => Some(!known(self, st, arg)?.is_empty()),
                    "!" => self.test_expr(u, arg, double, st, cx).map(|b| !b),
                    _ => None,
                }
            }
            "parenthesized_expression" => {
                let inner = e.named_child(0)?;
                self.test_expr(u, inner, double, st, cx)
            }
            _ => None,
        }
    }

    fn has_unquoted_expansion(w: Node<'_>) -> bool {
        match w.kind() {
            "simple_expansion" | "expansion" | "command_substitution" | "arithmetic_expansion" => {
                true
            }
            "concatenation" => {
                let mut c = w.walk();
                let kids: Vec<Node> = w.named_children(&mut c).collect();
                kids.into_iter().any(Self::has_unquoted_expansion)
            }
            _ => false,
        }
    }

    // ---- assignments and declarations ---------------------------------------------------

    /// `NAME=value`, `NAME+=value`, `A=(...)`, `A[i]=v` as a statement or in `export`/
    /// `declare`/`local`.
    pub(super) fn assign(
        &mut self,
        u: &Rc<Unit<'t>>,
        a: Node<'_>,
        st: &mut State<'t>,
        cx: &Ctx,
        export: Option<bool>,
        local: bool,
    ) {
        let Some(name_node) = a.child_by_field_name("name") else {
            return;
        };
        let append = {
            let mut c = a.walk();
            let found = a.children(&mut c).any(|k| k.kind() == "+=");
            found
        };
        let origin = Some(u.span(a.byte_range()));
        let value_node = a.child_by_field_name("value");
        let (name, index) = if name_node.kind() == "subscript" {
            let Some(n) = name_node.child_by_field_name("name") else {
                return;
            };
            (
                u.node_text(n).to_owned(),
                name_node.child_by_field_name("index"),
            )
        } else {
            (u.node_text(name_node).to_owned(), None)
        };
        if local {
            self.save_local(st, &name);
        }
        let value = match value_node {
            Some(v) if v.kind() == "array" => {
                let mut c = v.walk();
                let kids: Vec<Node> = v.named_children(&mut c).collect();
                let mut elems = Some(Vec::new());
                for k in kids {
                    if k.kind() == "comment" {
                        continue;
                    }
                    if u.node_text(k).starts_with('[') {
                        elems = None;
                        continue;
                    }
                    for arg in self.expand_word(u, k, st, cx, true) {
                        match (arg, elems.as_mut()) {
                            (Arg::Field(f), Some(list)) => list.push(f),
                            _ => elems = None,
                        }
                    }
                }
                match elems {
                    Some(e) => Value::Array(e),
                    None => Value::Unknown,
                }
            }
            Some(v) => Value::Scalar(self.assign_value(u, v, st, cx)),
            None => Value::Scalar(text_field("", None, u.span(a.byte_range()))),
        };
        let old = st.vars.get(&name).map(|v| v.value.clone());
        let old_missing = old.is_none() && !self.name_is_set_unknown(st, &name);
        let value = if let Some(idx) = index {
            let i = self
                .index_value(u, idx, st, cx)
                .filter(|_| !st.sparse.contains(&name));
            let mut arr = match old {
                Some(Value::Array(a)) => Some(a),
                Some(Value::Scalar(f)) => Some(vec![f]),
                None if old_missing => Some(Vec::new()),
                _ => None,
            };
            match (arr.as_mut(), i, value) {
                (Some(list), Some(i), Value::Scalar(f)) if i >= 0 => {
                    let i = i as usize;
                    let f = if append {
                        match list.get(i) {
                            Some(o) => self.concat_fields(o, &f),
                            None => f,
                        }
                    } else {
                        f
                    };
                    if i < list.len() {
                        list[i] = f;
                        Value::Array(arr.unwrap_or_default())
                    } else if i == list.len() {
                        list.push(f);
                        Value::Array(arr.unwrap_or_default())
                    } else {
                        Value::Unknown
                    }
                }
                _ => Value::Unknown,
            }
        } else if append {
            match (old, value) {
                (Some(Value::Array(mut a)), Value::Array(b)) => {
                    a.extend(b);
                    Value::Array(a)
                }
                (Some(Value::Scalar(f)), Value::Array(b)) => {
                    let mut a = vec![f];
                    a.extend(b);
                    Value::Array(a)
                }
                (None, v) if old_missing => v,
                (Some(Value::Scalar(a)), Value::Scalar(b)) => {
                    Value::Scalar(self.concat_fields(&a, &b))
                }
                (Some(Value::Array(mut a)), Value::Scalar(b)) if !a.is_empty() => {
                    let first = self.concat_fields(&a[0], &b);
                    a[0] = first;
                    Value::Array(a)
                }
                _ => Value::Unknown,
            }
        } else {
            value
        };
        self.set_var(
            st,
            &name,
            value,
            origin,
            export.filter(|e| *e).or(None).or(export),
        );
    }

    /// Whether `name` is absent but may be set (an unknown starting environment).
    fn name_is_set_unknown(&self, st: &State<'t>, name: &str) -> bool {
        !st.gone.contains(name) && self.opts.unset_names != UnsetNames::Empty
    }

    pub(super) fn concat_fields(&mut self, a: &Field, b: &Field) -> Field {
        let mut choices = Vec::new();
        if a.choices.len() * b.choices.len() > MAX_CHOICES {
            self.trunc();
            return unknown_field(a.word.clone());
        }
        for x in &a.choices {
            for y in &b.choices {
                let mut c = x.clone();
                for p in y {
                    super::word::push_piece(&mut c, p.clone());
                }
                if !choices.contains(&c) {
                    choices.push(c);
                }
            }
        }
        Field {
            choices,
            word: a.word.clone(),
        }
    }

    fn declare(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) {
        let kw = n.child(0).map(|k| k.kind()).unwrap_or("");
        let mut export = kw == "export";
        let mut unexport = false;
        let mut array = false;
        let mut unknown = false;
        let in_function = !st.locals.is_empty();
        let mut local = kw == "local" || (matches!(kw, "declare" | "typeset") && in_function);
        let mut c = n.walk();
        let kids: Vec<Node> = n.named_children(&mut c).collect();
        // With several assignments, every argument is expanded before any is assigned
        // (`local a=1 b=$a` gives b the a from before).
        let several = kids
            .iter()
            .filter(|k| k.kind() == "variable_assignment")
            .count()
            > 1;
        let frozen = several.then(|| st.clone());
        for k in kids {
            if kw == "export" && !st.temps.is_empty() {
                let nm = match k.kind() {
                    "variable_assignment" => k
                        .child_by_field_name("name")
                        .map(|x| u.node_text(x).to_owned()),
                    "variable_name" => Some(u.node_text(k).to_owned()),
                    _ => None,
                };
                if let Some(nm) = nm {
                    self.promote_temp(st, &nm);
                }
            }
            match k.kind() {
                "variable_assignment" => {
                    if unknown {
                        if let Some(nm) = k.child_by_field_name("name") {
                            let nm = u.node_text(nm).to_owned();
                            if local {
                                self.save_local(st, &nm);
                            }
                            self.set_var(
                                st,
                                &nm,
                                Value::Unknown,
                                Some(u.span(k.byte_range())),
                                None,
                            );
                        }
                        continue;
                    }
                    let ex = if export {
                        Some(true)
                    } else if unexport {
                        Some(false)
                    } else {
                        None
                    };
                    let Some(frozen) = frozen.as_ref() else {
                        self.assign(u, k, st, cx, ex, local);
                        continue;
                    };
                    let mut tmp = frozen.clone();
                    self.assign(u, k, &mut tmp, cx, ex, false);
                    let nm = k
                        .child_by_field_name("name")
                        .map(|x| x.child_by_field_name("name").unwrap_or(x))
                        .map(|x| u.node_text(x).to_owned());
                    if let Some(nm) = nm {
                        if local {
                            self.save_local(st, &nm);
                        }
                        match tmp.vars.get(&nm).cloned() {
                            Some(v) => self.set_var(st, &nm, v.value, v.origin, Some(v.exported)),
                            None => self.unset_var(st, &nm),
                        }
                    }
                }
                "variable_name" => {
                    let nm = u.node_text(k).to_owned();
                    if local {
                        self.save_local(st, &nm);
                        if kw == "local" || array {
                            let v = if array {
                                Value::Array(Vec::new())
                            } else {
                                Value::Unknown
                            };
                            if array {
                                self.set_var(st, &nm, v, Some(u.span(k.byte_range())), None);
                            } else {
                                self.unset_var(st, &nm);
                            }
                        }
                        continue;
                    }
                    if export || unexport {
                        if let Some(v) = st.vars.get(&nm) {
                            if v.exported != export {
                                let mut v = v.clone();
                                v.exported = export;
                                self.vars_mut(&mut st.vars).insert(nm, v);
                            }
                        } else if export {
                            Rc::make_mut(&mut st.to_export).insert(nm);
                        } else if st.to_export.contains(&nm) {
                            Rc::make_mut(&mut st.to_export).remove(&nm);
                        }
                    } else if array && !st.vars.contains_key(&nm) {
                        self.set_var(
                            st,
                            &nm,
                            Value::Array(Vec::new()),
                            Some(u.span(k.byte_range())),
                            None,
                        );
                    }
                }
                _ => {
                    let text = u.node_text(k);
                    if let Some(flags) = text.strip_prefix('-') {
                        for ch in flags.chars() {
                            match ch {
                                'x' => export = true,
                                'a' => array = true,
                                'g' => local = false,
                                'n' if kw == "export" => {
                                    unexport = true;
                                    export = false;
                                }
                                'A' | 'n' | 'i' | 'l' | 'u' => unknown = true,
                                'f' | 'F' | 'p' => return,
                                _ => {}
                            }
                        }
                    } else if let Some(flags) = text.strip_prefix('+') {
                        if flags.contains('x') {
                            unexport = true;
                            export = false;
                        }
                    } else {
                        // A word made at run time: `export "$NAME=value"`.
                        let args = self.expand_word(u, k, st, cx, false);
                        for a in args {
                            let Arg::Field(f) = a else { continue };
                            if let Some((nm, val)) = super::word::split_assignment(&f) {
                                if local {
                                    self.save_local(st, &nm);
                                }
                                self.set_var(
                                    st,
                                    &nm,
                                    Value::Scalar(val),
                                    Some(f.word.clone()),
                                    export.then_some(true),
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    fn unset_cmd(&mut self, u: &Rc<Unit<'t>>, n: Node<'_>, st: &mut State<'t>, cx: &Ctx) {
        let mut funcs = false;
        let mut c = n.walk();
        let kids: Vec<Node> = n.named_children(&mut c).collect();
        for k in kids {
            let args = self.expand_word(u, k, st, cx, false);
            for a in args {
                let Arg::Field(f) = a else { continue };
                let Some(t) = f.known() else { continue };
                match t.as_str() {
                    "-f" => funcs = true,
                    "-v" | "-n" => funcs = false,
                    name if funcs && st.funcs.contains_key(name) => {
                        Rc::make_mut(&mut st.funcs).remove(name);
                    }
                    _ if funcs => {}
                    name if is_name(name) => self.unset_var(st, name),
                    elem if elem.ends_with(']') && elem.contains('[') => {
                        // `unset 'A[1]'`: the element goes, the others keep their indices.
                        let (nm, idx) = elem.split_once('[').unwrap_or(("", ""));
                        let idx = idx.trim_end_matches(']').to_owned();
                        let nm = nm.to_owned();
                        if !is_name(&nm) {
                            continue;
                        }
                        let i = self.arith_text(&idx, st);
                        let arr = match st.vars.get(&nm).map(|v| &v.value) {
                            Some(Value::Array(a)) => Some(a.clone()),
                            _ => None,
                        };
                        let sparse = st.sparse.contains(&nm);
                        let value = match (arr, i) {
                            (Some(mut a), Some(i))
                                if !sparse && i >= 0 && (i as usize) < a.len() =>
                            {
                                let last = i as usize + 1 == a.len();
                                a.remove(i as usize);
                                if !last {
                                    Some((Value::Array(a), true))
                                } else {
                                    Some((Value::Array(a), false))
                                }
                            }
                            (Some(a), Some(i)) if !sparse && i >= 0 => {
                                Some((Value::Array(a), false))
                            }
                            _ => None,
                        };
                        let origin = st.vars.get(&nm).and_then(|v| v.origin.clone());
                        match value {
                            Some((v, make_sparse)) => {
                                self.set_var(st, &nm, v, origin, None);
                                if make_sparse {
                                    Rc::make_mut(&mut st.sparse).insert(nm);
                                }
                            }
                            None => self.set_var(st, &nm, Value::Unknown, origin, None),
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    // ---- simple commands ----------------------------------------------------------------

    fn command(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        outer_redirs: &[Node<'_>],
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Flow {
        let mut assigns = Vec::new();
        let mut words = Vec::new();
        let mut redirs: Vec<Node> = outer_redirs.to_vec();
        let mut c = n.walk();
        let kids: Vec<Node> = n.named_children(&mut c).collect();
        for k in kids {
            match k.kind() {
                "variable_assignment" if words.is_empty() => assigns.push(k),
                "command_name" => words.push(k.named_child(0).unwrap_or(k)),
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => redirs.push(k),
                "comment" | "subshell" => {}
                _ => words.push(k),
            }
        }
        // The grammar puts the words after a redirection (`cmd > log --a 1`) into it as
        // more destinations: they are arguments.
        for r in &redirs {
            if r.kind() != "file_redirect" || words.is_empty() {
                continue;
            }
            let mut c2 = r.walk();
            let kids: Vec<Node> = r.children(&mut c2).collect();
            let dests: Vec<Node> = kids
                .iter()
                .enumerate()
                .filter(|(i, _)| r.field_name_for_child(*i as u32) == Some("destination"))
                .map(|(_, k)| *k)
                .collect();
            words.extend(dests.into_iter().skip(1));
        }
        words.sort_by_key(|w| w.start_byte());
        if words.is_empty() {
            for a in assigns {
                self.assign(u, a, st, cx, None, false);
            }
            return Flow::Next;
        }
        // The arguments in each alternative (one, unless a word's choices give different
        // numbers of arguments).
        let mut argvs: Vec<Vec<Arg>> = vec![Vec::new()];
        let groups = word_groups(u, &words);
        for group in &groups {
            let alts = self.expand_alternatives(u, group, st, cx, true);
            let alts = if argvs.len() * alts.len() > MAX_CHOICES {
                self.trunc();
                let word = u.span(
                    group.first().map(|g| g.start_byte()).unwrap_or(0)
                        ..group.last().map(|g| g.end_byte()).unwrap_or(0),
                );
                vec![vec![Arg::Unknown(word)]]
            } else {
                alts
            };
            let mut alts = alts;
            if alts.len() == 1 {
                let one = alts.pop().unwrap_or_default();
                if let [a] = argvs.as_mut_slice() {
                    a.extend(one);
                } else {
                    for a in argvs.iter_mut() {
                        a.extend(one.iter().cloned());
                    }
                }
                continue;
            }
            let mut next = Vec::new();
            for a in &argvs {
                for alt in &alts {
                    let mut x = a.clone();
                    x.extend(alt.iter().cloned());
                    next.push(x);
                }
            }
            argvs = next;
        }
        // `A=1 B=$A cmd`: each assignment sees the ones before it.
        let mut prefix = Vec::new();
        let mut scratch: Option<State<'t>> = None;
        for a in &assigns {
            let Some(nm) = a.child_by_field_name("name") else {
                continue;
            };
            let nm = u.node_text(nm).to_owned();
            let s = scratch.get_or_insert_with(|| st.clone());
            let f = match a.child_by_field_name("value") {
                Some(v) if v.kind() != "array" => self.assign_value(u, v, s, cx),
                Some(v) => unknown_field(u.span(v.byte_range())),
                None => text_field("", None, u.span(a.byte_range())),
            };
            if assigns.len() > 1 && is_name(&nm) {
                self.set_var(s, &nm, Value::Scalar(f.clone()), None, Some(true));
            }
            prefix.push((nm, f));
        }
        if argvs.len() > 1 {
            // One command of several forms: each may be the one that runs.
            let mut outcomes = Vec::new();
            for argv in argvs {
                let mut b = st.clone();
                let f = self.run_command(u, n, argv, prefix.clone(), &redirs, &mut b, &cx.maybe());
                outcomes.push((b, f));
            }
            return self.settle(st, outcomes);
        }
        let argv = argvs.pop().unwrap_or_default();
        self.run_command(u, n, argv, prefix, &redirs, st, cx)
    }

    /// Records a simple command and does what it does.
    #[allow(clippy::too_many_arguments)]
    fn run_command(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        argv: Vec<Arg>,
        prefix: Vec<(String, Field)>,
        redirs: &[Node<'_>],
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Flow {
        let span = u.span(n.byte_range());
        // A function call is not a command that runs (the commands in the function are).
        let function = matches!(argv.first(), Some(Arg::Field(f))
            if f.known().is_some_and(|name| st.funcs.contains_key(&name)));
        if function {
            if !self.tick(16) {
                return Flow::Dead;
            }
            return self.dispatch(u, &argv, prefix, redirs, span, st, cx);
        }
        if let Some(last) = self.last_vars.clone() {
            if !Arc::ptr_eq(&last, &st.vars) && last.len() == st.vars.len() {
                self.tick(st.vars.len() as u64);
                if *last == *st.vars {
                    st.vars = last;
                }
            }
        }
        self.last_vars = Some(st.vars.clone());
        let slot = self.out.execs.len();
        self.out.execs.push(Exec {
            argv: Vec::new(),
            prefix: prefix.clone(),
            variables: st.vars.clone(),
            site: cx.site,
            certainty: cx.certainty,
            span: span.clone(),
            nesting: (*cx.nesting).clone(),
        });
        if self.out.execs.len() >= MAX_COMMANDS {
            if let Some(e) = self.out.execs.get_mut(slot) {
                e.argv = argv;
            }
            self.abort = true;
            self.trunc();
            return Flow::Dead;
        }
        let flow = self.dispatch(u, &argv, prefix, redirs, span, st, cx);
        if let Some(e) = self.out.execs.get_mut(slot) {
            e.argv = argv;
        }
        flow
    }

    #[allow(clippy::too_many_arguments)]
    fn dispatch(
        &mut self,
        u: &Rc<Unit<'t>>,
        argv: &[Arg],
        prefix: Vec<(String, Field)>,
        redirs: &[Node<'_>],
        span: Span,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Flow {
        let known = |i: usize| match argv.get(i) {
            Some(Arg::Field(f)) => f.known(),
            _ => None,
        };
        let Some(name) = known(0) else {
            // `$MULTINODE_SSH_WRAPPER host command...`
            return self.nested(u, argv, prefix, redirs, span, st, cx);
        };
        if let Some(f) = st.funcs.get(&name).cloned() {
            return self.call(&name, f, &argv[1..], prefix, span, st, cx);
        }
        match name.as_str() {
            "set" => {
                self.builtin_set(argv, st);
                Flow::Next
            }
            "shift" => {
                let n = match argv.get(1) {
                    None => Some(1usize),
                    Some(_) => known(1).and_then(|t| t.parse().ok()),
                };
                st.params = match (&st.params, n) {
                    (Params::Known(p), Some(n)) if n <= p.len() => Params::Known(p[n..].to_vec()),
                    (Params::Known(p), Some(_)) => Params::Known(p.clone()),
                    _ => Params::Unknown,
                };
                Flow::Next
            }
            "cd" | "pushd" => {
                let target = match argv.get(1) {
                    None => self.home(st),
                    Some(_) => known(1),
                };
                st.cwd = match (target, &st.cwd) {
                    (Some(t), _) if t.starts_with('/') => Some(normalize(&t)),
                    (Some(t), Some(c)) if t != "-" => Some(normalize(&format!("{c}/{t}"))),
                    _ => None,
                };
                if st.vars.contains_key("PWD") {
                    let v = match &st.cwd {
                        Some(c) => Value::Scalar(text_field(c, None, span.clone())),
                        None => Value::Unknown,
                    };
                    self.set_var(st, "PWD", v, Some(span.clone()), None);
                }
                Flow::Next
            }
            "popd" => {
                st.cwd = None;
                Flow::Next
            }
            "exit" => Flow::Exit,
            "return" => Flow::Return,
            "break" | "continue" => {
                let n: u32 = known(1).and_then(|t| t.parse().ok()).unwrap_or(1).max(1);
                match (name.as_str(), n) {
                    ("break", 1) => Flow::Break,
                    ("break", n) => Flow::BreakN(n),
                    (_, 1) => Flow::Continue,
                    (_, n) => Flow::ContinueN(n),
                }
            }
            "eval" => {
                self.eval_builtin(&argv[1..], prefix, span, st, cx);
                Flow::Next
            }
            "source" | "." => {
                self.source_builtin(argv, prefix, span, st, cx);
                Flow::Next
            }
            "read" => {
                if !self.builtin_read(u, argv, &prefix, redirs, st, cx) {
                    self.unknown_targets(&name, argv, st);
                }
                Flow::Next
            }
            "mapfile" | "readarray" | "getopts" | "printf" => {
                self.unknown_targets(&name, argv, st);
                Flow::Next
            }
            "let" => {
                for a in &argv[1..] {
                    let (known, word) = match a {
                        Arg::Field(f) => (f.known(), &f.word),
                        Arg::Unknown(s) => (None, s),
                    };
                    match known {
                        Some(t) => {
                            self.arith_text(&t, st);
                        }
                        None => {
                            // An expression not known (`x=3*4` is a glob first) may assign
                            // any name written in it.
                            let text = self
                                .sources
                                .texts
                                .get(word.source.0 as usize)
                                .and_then(|t| t.get(word.range.clone()))
                                .unwrap_or("")
                                .to_owned();
                            let mut cur = String::new();
                            for c in text.chars().chain(std::iter::once(' ')) {
                                if c == '_' || c.is_ascii_alphanumeric() {
                                    cur.push(c);
                                    continue;
                                }
                                if is_name(&cur) {
                                    self.set_var(
                                        st,
                                        &cur,
                                        Value::Unknown,
                                        Some(word.clone()),
                                        None,
                                    );
                                }
                                cur.clear();
                            }
                        }
                    }
                }
                Flow::Next
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                // Only reached when written as a plain command (`builtin export ...`).
                for a in &argv[1..] {
                    if let Arg::Field(f) = a {
                        if let Some((nm, val)) = super::word::split_assignment(f) {
                            self.set_var(
                                st,
                                &nm,
                                Value::Scalar(val),
                                Some(f.word.clone()),
                                (name == "export").then_some(true),
                            );
                        }
                    }
                }
                Flow::Next
            }
            _ => {
                let f = self.nested(u, argv, prefix, redirs, span, st, cx);
                if name == "exec" && argv.len() > 1 {
                    return Flow::Exit;
                }
                f
            }
        }
    }

    fn home(&self, st: &State<'t>) -> Option<String> {
        match st.vars.get("HOME").map(|v| &v.value) {
            Some(Value::Scalar(f)) => f.known(),
            _ => None,
        }
    }

    fn builtin_set(&mut self, argv: &[Arg], st: &mut State<'t>) {
        let mut i = 1;
        while i < argv.len() {
            let t = match &argv[i] {
                Arg::Field(f) => f.known(),
                Arg::Unknown(_) => None,
            };
            let Some(t) = t else {
                // An unknown word: options or parameters, not known which.
                st.params = Params::Unknown;
                return;
            };
            if t == "--" || t == "-" {
                i += 1;
                break;
            }
            let on = t.starts_with('-');
            if !(on || t.starts_with('+')) || t.len() < 2 {
                break;
            }
            let flags = &t[1..];
            for ch in flags.chars() {
                match ch {
                    'a' => st.allexport = on,
                    'f' => st.noglob = on,
                    'o' => {
                        i += 1;
                        let o = match argv.get(i) {
                            Some(Arg::Field(f)) => f.known(),
                            _ => None,
                        };
                        match o.as_deref() {
                            Some("allexport") => st.allexport = on,
                            Some("noglob") => st.noglob = on,
                            _ => {}
                        }
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        if i < argv.len()
            || argv
                .get(i.wrapping_sub(1))
                .is_some_and(|a| matches!(a, Arg::Field(f) if f.known().as_deref() == Some("--")))
        {
            let rest = &argv[i.min(argv.len())..];
            let mut list = Vec::new();
            for a in rest {
                match a {
                    Arg::Field(f) => list.push(f.clone()),
                    Arg::Unknown(_) => {
                        st.params = Params::Unknown;
                        return;
                    }
                }
            }
            st.params = Params::Known(list);
        }
    }

    /// `read [-r] [-a A] NAMES <<< WORD` (or a heredoc) of a known first line, with the
    /// default IFS or one non-blank IFS character in front of it: assigns what bash assigns.
    /// `false` when it cannot tell.
    #[allow(clippy::too_many_arguments)]
    fn builtin_read(
        &mut self,
        u: &Rc<Unit<'t>>,
        argv: &[Arg],
        prefix: &[(String, Field)],
        redirs: &[Node<'_>],
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> bool {
        let mut raw = false;
        let mut array: Option<String> = None;
        let mut names = Vec::new();
        let mut i = 1;
        while i < argv.len() {
            let Arg::Field(f) = &argv[i] else {
                return false;
            };
            let Some(w) = f.known() else {
                return false;
            };
            i += 1;
            if names.is_empty() && w.starts_with('-') && w.len() > 1 {
                let flags: Vec<char> = w[1..].chars().collect();
                for (k, ch) in flags.iter().enumerate() {
                    match ch {
                        'r' => raw = true,
                        's' | 'e' => {}
                        'a' | 'p' | 't' => {
                            // The value is the rest of this word or the next one.
                            let rest: String = flags[k + 1..].iter().collect();
                            let v = if rest.is_empty() {
                                let v = match argv.get(i) {
                                    Some(Arg::Field(f)) => f.known(),
                                    _ => None,
                                };
                                i += 1;
                                v
                            } else {
                                Some(rest)
                            };
                            if *ch == 'a' {
                                array = v;
                                if array.is_none() {
                                    return false;
                                }
                            }
                            break;
                        }
                        _ => return false,
                    }
                }
                continue;
            }
            names.push(w);
        }
        if names.iter().chain(array.iter()).any(|n| !is_name(n)) {
            return false;
        }
        let ifs: String = match prefix.iter().rev().find(|(n, _)| n == "IFS") {
            Some((_, f)) => match f.known() {
                Some(v) => v,
                None => return false,
            },
            None if st.ifs => return false,
            None => " \t\n".to_owned(),
        };
        let Some(input) = self.stdin_text(u, redirs, st, cx) else {
            return false;
        };
        if !input.holes.is_empty() {
            return false;
        }
        let line = input.text.split('\n').next().unwrap_or("").to_owned();
        if !ifs.is_empty() && !ifs.contains(' ') && line.ends_with(ifs.as_str()) {
            // What a trailing delimiter leaves to the last name: not modelled.
            return false;
        }
        if !raw && line.contains('\\') {
            return false;
        }
        let white = ifs == " \t\n" || ifs == " " || ifs.is_empty();
        let fields: Vec<String> = if ifs.is_empty() {
            vec![line.clone()]
        } else if white {
            line.split([' ', '\t'])
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        } else if ifs.chars().count() == 1 && !ifs.contains([' ', '\t', '\n']) {
            let mut v: Vec<String> = line.split(ifs.as_str()).map(str::to_owned).collect();
            if v.last().is_some_and(|l| l.is_empty()) {
                v.pop();
            }
            v
        } else {
            return false;
        };
        let span = u.span(0..0);
        if let Some(a) = array {
            let elems = fields
                .iter()
                .map(|t| text_field(t, None, span.clone()))
                .collect();
            self.set_var(st, &a, Value::Array(elems), None, None);
            return true;
        }
        if names.is_empty() {
            names.push("REPLY".into());
        }
        // Each name takes a field; the last takes the rest of the line.
        let n = names.len();
        for (k, name) in names.iter().enumerate() {
            let value = if k + 1 < n || fields.len() <= n {
                fields.get(k).cloned().unwrap_or_default()
            } else if white {
                // The rest of the line from the k-th field on, trailing blanks dropped.
                let mut rest = line.trim_start_matches([' ', '\t']);
                for _ in 0..k {
                    rest = rest.trim_start_matches(|c| c != ' ' && c != '\t');
                    rest = rest.trim_start_matches([' ', '\t']);
                }
                rest.trim_end_matches([' ', '\t']).to_owned()
            } else {
                fields[k..].join(ifs.as_str())
            };
            self.set_var(
                st,
                name,
                Value::Scalar(text_field(&value, None, span.clone())),
                None,
                None,
            );
        }
        true
    }

    /// `read A B`, `mapfile A`, `getopts s V`, `printf -v V`: what they set is not known.
    fn unknown_targets(&mut self, name: &str, argv: &[Arg], st: &mut State<'t>) {
        let words: Vec<Option<String>> = argv[1..]
            .iter()
            .map(|a| match a {
                Arg::Field(f) => f.known(),
                Arg::Unknown(_) => None,
            })
            .collect();
        let mut targets = Vec::new();
        match name {
            "printf" => {
                if words.first().and_then(|w| w.as_deref()) == Some("-v") {
                    if let Some(Some(v)) = words.get(1) {
                        targets.push(v.clone());
                    }
                }
            }
            "getopts" => {
                if let Some(Some(v)) = words.get(1) {
                    targets.push(v.clone());
                }
                targets.push("OPTARG".into());
                targets.push("OPTIND".into());
            }
            _ => {
                let mut skip = false;
                for w in words.iter() {
                    let Some(w) = w else { continue };
                    if skip {
                        skip = false;
                        continue;
                    }
                    if w.starts_with('-') {
                        if matches!(
                            w.as_str(),
                            "-a" | "-p"
                                | "-d"
                                | "-t"
                                | "-n"
                                | "-N"
                                | "-u"
                                | "-i"
                                | "-C"
                                | "-c"
                                | "-O"
                                | "-s"
                        ) {
                            if w == "-a" {
                                continue;
                            }
                            skip = true;
                        }
                        continue;
                    }
                    targets.push(w.clone());
                }
                if targets.is_empty() && name == "read" {
                    targets.push("REPLY".into());
                }
                if targets.is_empty() && name != "read" {
                    targets.push("MAPFILE".into());
                }
            }
        }
        for t in targets {
            let t = t.split('[').next().unwrap_or("").to_owned();
            if is_name(&t) {
                self.set_var(st, &t, Value::Unknown, None, None);
            }
        }
    }

    // ---- nested code --------------------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        name: &str,
        f: Func<'t>,
        args: &[Arg],
        prefix: Vec<(String, Field)>,
        span: Span,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Flow {
        let recursive = cx
            .nesting
            .iter()
            .filter(|n| matches!(&n.entry, Entry::Function { name: f } if f == name))
            .count()
            >= MAX_RECURSION;
        if cx.depth >= MAX_DEPTH || recursive {
            // A recursive call: what it does depends on a condition not modelled.
            self.trunc();
            return Flow::Next;
        }
        let Some(tree) = f.unit.tree.as_ref() else {
            return Flow::Next;
        };
        let root = tree.root_node();
        let mut node = root.descendant_for_byte_range(f.range.start, f.range.end);
        while let Some(n) = node {
            if n.kind() == "function_definition" && n.byte_range() == f.range {
                break;
            }
            node = n.parent();
        }
        let Some(def) = node else {
            return Flow::Next;
        };
        let Some(body) = def.child_by_field_name("body") else {
            return Flow::Next;
        };
        let saved = std::mem::replace(&mut st.params, params_of(args));
        st.locals.push(HashMap::new());
        st.temps
            .push(prefix.iter().map(|(n, _)| n.clone()).collect());
        for (nm, v) in prefix {
            self.save_local(st, &nm);
            self.set_var(st, &nm, Value::Scalar(v), None, Some(true));
        }
        let mut nesting = (*cx.nesting).clone();
        nesting.push(Nesting {
            entry: Entry::Function {
                name: name.to_owned(),
            },
            command: span,
        });
        let cx2 = Ctx {
            nesting: Rc::new(nesting),
            depth: cx.depth + 1,
            ..cx.clone()
        };
        let mark = self.pending.len();
        let unit = f.unit.clone();
        let flow = self.stmt(&unit, body, st, &cx2);
        let mut returned = self.take_pending(mark, &[Flow::Return, Flow::Break, Flow::Continue]);
        let flow = match flow {
            Flow::Exit => Flow::Exit,
            Flow::Dead if returned.is_empty() => Flow::Dead,
            Flow::Dead => {
                if let Some(m) = self.merge_all(std::mem::take(&mut returned)) {
                    *st = m;
                }
                Flow::Next
            }
            _ => Flow::Next,
        };
        if !returned.is_empty() {
            returned.push(st.clone());
            if let Some(m) = self.merge_all(returned) {
                *st = m;
            }
        }
        st.temps.pop();
        if let Some(scope) = st.locals.pop() {
            for (nm, old) in scope {
                match old {
                    Some(v) => {
                        self.vars_mut(&mut st.vars).insert(nm, v);
                    }
                    None => self.unset_var(st, &nm),
                }
            }
            // `local IFS=...` ends with the function.
            st.ifs = match st.vars.get("IFS").map(|v| &v.value) {
                None => false,
                Some(Value::Scalar(f)) => f.known().as_deref() != Some(" \t\n"),
                Some(_) => true,
            };
        }
        st.params = saved;
        flow
    }

    fn eval_builtin(
        &mut self,
        args: &[Arg],
        prefix: Vec<(String, Field)>,
        span: Span,
        st: &mut State<'t>,
        cx: &Ctx,
    ) {
        if args.is_empty() {
            return;
        }
        let mut fields = Vec::new();
        for a in args {
            match a {
                Arg::Field(f) => {
                    if f.choices
                        .iter()
                        .flatten()
                        .any(|p| matches!(p, Piece::Unknown { .. }))
                    {
                        st.opaque = true;
                    }
                    fields.push(f.clone())
                }
                Arg::Unknown(_) => {
                    st.opaque = true;
                    return;
                }
            }
        }
        let texts = self.build_texts(&fields, " ");
        self.run_texts(texts, Entry::Eval, span, prefix, None, st, cx);
    }

    /// Evaluates texts (one per combination of choices) in the current shell.
    #[allow(clippy::too_many_arguments)]
    fn run_texts(
        &mut self,
        texts: Vec<TextBuild>,
        entry: Entry,
        span: Span,
        prefix: Vec<(String, Field)>,
        params: Option<Params>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) {
        if cx.depth >= MAX_DEPTH {
            self.trunc();
            return;
        }
        let mut units = Vec::new();
        for t in texts {
            if let Some(unit) = self.build_unit(t, span.clone()) {
                units.push(unit);
            }
        }
        self.run_units(units, entry, span, prefix, params, st, cx);
    }

    #[allow(clippy::too_many_arguments)]
    fn run_units(
        &mut self,
        units: Vec<Rc<Unit<'t>>>,
        entry: Entry,
        span: Span,
        prefix: Vec<(String, Field)>,
        params: Option<Params>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) {
        if units.is_empty() {
            return;
        }
        if cx.depth >= MAX_DEPTH {
            self.trunc();
            return;
        }
        let mut nesting = (*cx.nesting).clone();
        nesting.push(Nesting {
            entry,
            command: span,
        });
        let many = units.len() > 1;
        let cx2 = Ctx {
            nesting: Rc::new(nesting),
            depth: cx.depth + 1,
            certainty: if many { Certainty::Maybe } else { cx.certainty },
            ..cx.clone()
        };
        let saved_params = params.map(|p| std::mem::replace(&mut st.params, p));
        let names: Vec<String> = prefix.iter().map(|(n, _)| n.clone()).collect();
        let saved_vars: Vec<Option<Variable>> =
            names.iter().map(|n| st.vars.get(n).cloned()).collect();
        for (nm, v) in prefix {
            self.set_var(st, &nm, Value::Scalar(v), None, Some(true));
        }
        let mut outcomes = Vec::new();
        for unit in units {
            let mut b = st.clone();
            let mark = self.pending.len();
            let f = self.run_unit(&unit, &mut b, &cx2);
            let rets = self.take_pending(mark, &[Flow::Return]);
            let f = if f == Flow::Return || (f == Flow::Dead && !rets.is_empty()) {
                Flow::Next
            } else {
                f
            };
            for r in rets {
                outcomes.push((r, Flow::Next));
            }
            outcomes.push((b, f));
        }
        self.settle(st, outcomes);
        for (nm, old) in names.into_iter().zip(saved_vars) {
            match old {
                Some(v) => {
                    self.vars_mut(&mut st.vars).insert(nm, v);
                }
                None => self.unset_var(st, &nm),
            }
        }
        if let Some(p) = saved_params {
            st.params = p;
        }
    }

    fn source_builtin(
        &mut self,
        argv: &[Arg],
        prefix: Vec<(String, Field)>,
        span: Span,
        st: &mut State<'t>,
        cx: &Ctx,
    ) {
        let path = match argv.get(1) {
            Some(Arg::Field(f)) => f.known(),
            _ => None,
        };
        let Some((abs, unit)) = path.and_then(|p| self.resolve(&p, st)) else {
            st.opaque = true;
            return;
        };
        let params = (argv.len() > 2).then(|| params_of(&argv[2..]));
        self.run_units(
            vec![unit],
            Entry::Source { path: abs },
            span,
            prefix,
            params,
            st,
            cx,
        );
    }

    /// A path the job can run or source: a file the script wrote, or a shipped one.
    fn resolve(&mut self, path: &str, st: &State<'t>) -> Option<(String, Rc<Unit<'t>>)> {
        let abs = if path.starts_with('/') {
            normalize(path)
        } else {
            normalize(&format!("{}/{path}", st.cwd.as_deref()?))
        };
        if let Some(u) = st.files.get(&abs) {
            return Some((abs, u.clone()));
        }
        let id = self
            .sources
            .files
            .get(&abs)
            .or_else(|| self.sources.files.get(path))
            .copied()?;
        let unit = self.source_unit(id)?;
        Some((abs, unit))
    }

    /// Joins fields into shell texts: one text per combination of the choices of fields
    /// whose choices are not plain words (at most [`MAX_CHOICES`]); plain-word choices and
    /// values known only at run time become placeholder words.
    pub(super) fn build_texts(&mut self, fields: &[Field], sep: &str) -> Vec<TextBuild> {
        let mut alts = vec![TextBuild::default()];
        for (i, f) in fields.iter().enumerate() {
            let sep_now = i > 0;
            if f.choices.len() == 1 {
                for a in alts.iter_mut() {
                    if sep_now {
                        a.push(sep, None);
                    }
                    a.pieces(&f.choices[0]);
                }
                continue;
            }
            let plain = f.choices.iter().all(|c| {
                c.iter().all(|p| match p {
                    Piece::Text { text, .. } => !text
                        .chars()
                        .any(|ch| "'\"\\`$;&|<>(){}#\n*?[]~".contains(ch)),
                    _ => false,
                })
            });
            if plain || alts.len() * f.choices.len() > MAX_CHOICES {
                if !plain {
                    self.trunc();
                }
                for a in alts.iter_mut() {
                    if sep_now {
                        a.push(sep, None);
                    }
                    if plain {
                        a.hole(Hole::Choices(f.choices.clone()));
                    } else {
                        a.hole(Hole::Piece(Piece::Unknown {
                            origin: f.word.clone(),
                        }));
                    }
                }
                continue;
            }
            let mut next = Vec::new();
            for a in &alts {
                for c in &f.choices {
                    let mut b = a.clone();
                    if sep_now {
                        b.push(sep, None);
                    }
                    b.pieces(c);
                    next.push(b);
                }
            }
            alts = next;
        }
        alts
    }

    /// Looks through transparent prefixes (`exec`, `env`, `nohup`, `timeout`, ...) and
    /// remote runners for a nested shell or a script file.
    #[allow(clippy::too_many_arguments)]
    fn nested(
        &mut self,
        u: &Rc<Unit<'t>>,
        argv: &[Arg],
        prefix: Vec<(String, Field)>,
        redirs: &[Node<'_>],
        span: Span,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Flow {
        let mut env_extra = prefix;
        let mut clear = false;
        let mut remote = false;
        let mut i = 0usize;
        let known = |i: usize| match argv.get(i) {
            Some(Arg::Field(f)) => f.known(),
            _ => None,
        };
        // `cat > PATH <<EOF`: a file the script writes.
        if known(0).as_deref() == Some("cat") && argv.len() <= 2 {
            self.write_file(u, argv, redirs, st, cx);
            return Flow::Next;
        }
        loop {
            let Some(Arg::Field(f)) = argv.get(i) else {
                return Flow::Next;
            };
            if let [one] = f.choices.as_slice() {
                if let [Piece::Runtime { name, .. }] = one.as_slice() {
                    if self.opts.remote_wrappers.iter().any(|w| w == name) {
                        // `$MULTINODE_SSH_WRAPPER host command...`: the words, joined with
                        // spaces, are a command line for a shell on that node.
                        let mut j = i + 1;
                        while known(j).is_some_and(|w| w.starts_with('-')) {
                            j += 1;
                        }
                        let rest = argv.get(j + 1..).unwrap_or(&[]);
                        if rest.is_empty() {
                            return Flow::Next;
                        }
                        let mut fields = Vec::new();
                        for a in rest {
                            match a {
                                Arg::Field(f) => fields.push(f.clone()),
                                Arg::Unknown(s) => fields.push(unknown_field(s.clone())),
                            }
                        }
                        let texts = self.build_texts(&fields, " ");
                        let mut units = Vec::new();
                        for t in texts {
                            if let Some(unit) = self.build_unit(t, span.clone()) {
                                units.push(unit);
                            }
                        }
                        self.new_shell(
                            units,
                            Entry::ShellString,
                            span,
                            &env_extra,
                            clear,
                            true,
                            None,
                            Params::Known(Vec::new()),
                            st,
                            cx,
                        );
                        return Flow::Next;
                    }
                }
            }
            let Some(w) = f.known() else {
                return Flow::Next;
            };
            let base = w.rsplit('/').next().unwrap_or("").to_owned();
            match base.as_str() {
                "exec" | "command" | "builtin" | "nohup" | "setsid" | "time" | "nice"
                | "stdbuf" | "timeout" | "env" => {
                    i += 1;
                    loop {
                        // `env NAME="$RANK" ...`: an assignment whose value is not known text.
                        if base == "env" {
                            if let Some(Arg::Field(f)) = argv.get(i) {
                                if f.known().is_none() {
                                    if let Some((nm, v)) = super::word::split_assignment(f) {
                                        env_extra.push((nm, v));
                                        i += 1;
                                        continue;
                                    }
                                }
                            }
                        }
                        let Some(t) = known(i) else { break };
                        match base.as_str() {
                            "env" => {
                                if t == "-i" || t == "-" || t == "--ignore-environment" {
                                    clear = true;
                                    i += 1;
                                } else if t == "-u" {
                                    if let Some(n) = known(i + 1) {
                                        env_extra.retain(|(k, _)| *k != n);
                                    }
                                    i += 2;
                                } else if t == "--" {
                                    i += 1;
                                    break;
                                } else if t.starts_with('-') {
                                    i += 1;
                                } else if let Some(Arg::Field(f)) = argv.get(i) {
                                    match super::word::split_assignment(f) {
                                        Some((nm, v)) => {
                                            env_extra.push((nm, v));
                                            i += 1;
                                        }
                                        None => break,
                                    }
                                } else {
                                    break;
                                }
                            }
                            "nice" if t == "-n" => i += 2,
                            "timeout" if t == "-s" || t == "-k" => i += 2,
                            "command" | "exec" if t == "-a" => i += 2,
                            _ if t == "--" => {
                                i += 1;
                                break;
                            }
                            _ if t.starts_with('-') && t.len() > 1 => i += 1,
                            _ => break,
                        }
                    }
                    if base == "timeout" {
                        i += 1; // the duration
                    }
                }
                _ if self
                    .opts
                    .remote_runners
                    .iter()
                    .any(|r| *r == w || *r == base) =>
                {
                    remote = true;
                    i += 1;
                }
                b if SHELLS.contains(&b) => {
                    return self.shell(u, argv, i, env_extra, clear, remote, redirs, span, st, cx);
                }
                _ => {
                    if w.contains('/') {
                        if let Some((abs, unit)) = self.resolve(&w, st) {
                            let params = params_of(argv.get(i + 1..).unwrap_or(&[]));
                            let arg0 = Some(f.clone());
                            self.new_shell(
                                vec![unit],
                                Entry::File { path: abs },
                                span,
                                &env_extra,
                                clear,
                                remote,
                                arg0,
                                params,
                                st,
                                cx,
                            );
                        }
                    }
                    return Flow::Next;
                }
            }
        }
    }

    /// `bash [options] -c STRING [arg0 [args...]]`, `bash FILE args...`, `bash <<EOF`.
    #[allow(clippy::too_many_arguments)]
    fn shell(
        &mut self,
        u: &Rc<Unit<'t>>,
        argv: &[Arg],
        at: usize,
        env: Vec<(String, Field)>,
        clear: bool,
        remote: bool,
        redirs: &[Node<'_>],
        span: Span,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Flow {
        let known = |i: usize| match argv.get(i) {
            Some(Arg::Field(f)) => f.known(),
            _ => None,
        };
        let shell_word = match argv.get(at) {
            Some(Arg::Field(f)) => Some(f.clone()),
            _ => None,
        };
        let mut j = at + 1;
        let mut c_flag = false;
        let mut stdin = false;
        while j < argv.len() {
            let Some(t) = known(j) else {
                if c_flag {
                    break;
                }
                return Flow::Next;
            };
            if t == "--" || t == "-" {
                j += 1;
                break;
            }
            if t.starts_with("--") {
                j += if matches!(t.as_str(), "--rcfile" | "--init-file") {
                    2
                } else {
                    1
                };
                continue;
            }
            if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
                let mut extra = 0;
                for ch in t[1..].chars() {
                    match ch {
                        'c' => c_flag = true,
                        's' => stdin = true,
                        'o' | 'O' => extra += 1,
                        _ => {}
                    }
                }
                j += 1 + extra;
                continue;
            }
            break;
        }
        if c_flag {
            let Some(Arg::Field(text)) = argv.get(j) else {
                return Flow::Next;
            };
            let arg0 = match argv.get(j + 1) {
                Some(Arg::Field(f)) => Some(f.clone()),
                Some(Arg::Unknown(_)) => None,
                None => shell_word,
            };
            let params = if argv.get(j + 1).is_some() {
                params_of(argv.get(j + 2..).unwrap_or(&[]))
            } else {
                Params::Known(Vec::new())
            };
            let texts = self.build_texts(std::slice::from_ref(text), "");
            let mut units = Vec::new();
            for t in texts {
                if let Some(unit) = self.build_unit(t, span.clone()) {
                    units.push(unit);
                }
            }
            self.new_shell(
                units,
                Entry::ShellString,
                span,
                &env,
                clear,
                remote,
                arg0,
                params,
                st,
                cx,
            );
            return Flow::Next;
        }
        if stdin || j >= argv.len() {
            // The script comes on standard input: a heredoc or a here-string.
            let params = params_of(argv.get(j..).unwrap_or(&[]));
            if let Some(b) = self.stdin_text(u, redirs, st, cx) {
                if let Some(unit) = self.build_unit(b, span.clone()) {
                    self.new_shell(
                        vec![unit],
                        Entry::Heredoc,
                        span,
                        &env,
                        clear,
                        remote,
                        shell_word,
                        params,
                        st,
                        cx,
                    );
                }
            }
            return Flow::Next;
        }
        let Some(path) = known(j) else {
            return Flow::Next;
        };
        if let Some((abs, unit)) = self.resolve(&path, st) {
            let arg0 = match argv.get(j) {
                Some(Arg::Field(f)) => Some(f.clone()),
                _ => None,
            };
            let params = params_of(argv.get(j + 1..).unwrap_or(&[]));
            self.new_shell(
                vec![unit],
                Entry::File { path: abs },
                span,
                &env,
                clear,
                remote,
                arg0,
                params,
                st,
                cx,
            );
        }
        Flow::Next
    }

    /// A new shell: only exported variables (on another node: the job's environment there)
    /// and the command's own assignments; its state is discarded.
    #[allow(clippy::too_many_arguments)]
    fn new_shell(
        &mut self,
        units: Vec<Rc<Unit<'t>>>,
        entry: Entry,
        span: Span,
        env: &[(String, Field)],
        clear: bool,
        remote: bool,
        arg0: Option<Field>,
        params: Params,
        st: &State<'t>,
        cx: &Ctx,
    ) {
        if units.is_empty() {
            return;
        }
        if cx.depth >= MAX_DEPTH {
            self.trunc();
            return;
        }
        let mut ns = if remote {
            self.fresh_state(self.opts.cwd.clone())
        } else {
            let mut s = self.fresh_state(st.cwd.clone());
            let vars: HashMap<String, Variable> = if clear {
                HashMap::new()
            } else {
                self.tick(st.vars.len() as u64);
                st.vars
                    .iter()
                    .filter(|(_, v)| v.exported && !matches!(v.value, Value::Array(_)))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            };
            s.vars = Arc::new(vars);
            s.gone = st.gone.clone();
            s
        };
        if clear {
            ns.vars = Arc::new(HashMap::new());
        }
        ns.files = st.files.clone();
        for (nm, v) in env {
            self.set_var(
                &mut ns,
                nm,
                Value::Scalar(v.clone()),
                Some(v.word.clone()),
                Some(true),
            );
        }
        ns.params = params;
        ns.arg0 = arg0;
        let mut nesting = (*cx.nesting).clone();
        nesting.push(Nesting {
            entry,
            command: span,
        });
        let many = units.len() > 1;
        let cx2 = Ctx {
            site: if remote { Site::EachNode } else { cx.site },
            certainty: if many { Certainty::Maybe } else { cx.certainty },
            nesting: Rc::new(nesting),
            depth: cx.depth + 1,
        };
        for unit in units {
            let mut s = ns.clone();
            let mark = self.enter_shell();
            self.run_unit(&unit, &mut s, &cx2);
            self.leave_shell(mark);
        }
    }

    /// The text a heredoc or here-string gives a command's standard input.
    fn stdin_text(
        &mut self,
        u: &Rc<Unit<'t>>,
        redirs: &[Node<'_>],
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<TextBuild> {
        for r in redirs {
            match r.kind() {
                "heredoc_redirect" => return self.heredoc_text(u, *r, st, cx),
                "herestring_redirect" => {
                    let w = r.named_children(&mut r.walk()).last()?;
                    let f = self.scalar_word(u, w, st, cx);
                    let mut texts = self.build_texts(&[f], "");
                    if texts.len() != 1 {
                        return None;
                    }
                    let mut t = texts.pop()?;
                    t.push("\n", None);
                    return Some(t);
                }
                _ => {}
            }
        }
        None
    }

    fn heredoc_text(
        &mut self,
        u: &Rc<Unit<'t>>,
        r: Node<'_>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<TextBuild> {
        let mut c = r.walk();
        let kids: Vec<Node> = r.children(&mut c).collect();
        let dash = kids.iter().any(|k| k.kind() == "<<-");
        let start = kids.iter().find(|k| k.kind() == "heredoc_start")?;
        let quoted = u.node_text(*start).contains(['\'', '"', '\\']);
        let body = kids.iter().find(|k| k.kind() == "heredoc_body")?;
        let mut b = TextBuild::default();
        let range = body.byte_range();
        if quoted {
            self.literal_lines(u, range, dash, false, &mut b);
            return Some(b);
        }
        // The body expands as a double-quoted string does, except that `"` is literal: it
        // is read as one, with its quotes escaped (the grammar does not always find the
        // expansions of a heredoc body).
        if let Some(t) = self.heredoc_as_string(u, range.clone(), dash, st, cx) {
            return Some(t);
        }
        let mut pos = range.start;
        let mut c2 = body.walk();
        let parts: Vec<Node> = body.named_children(&mut c2).collect();
        for p in parts {
            if p.kind() == "heredoc_content" {
                continue;
            }
            if p.start_byte() > pos {
                self.literal_lines(u, pos..p.start_byte(), dash, true, &mut b);
            }
            let f = self.scalar_word(u, p, st, cx);
            match f.choices.as_slice() {
                [one] => b.pieces(one),
                _ => b.hole(Hole::Choices(f.choices.clone())),
            }
            pos = p.end_byte();
        }
        if range.end > pos {
            self.literal_lines(u, pos..range.end, dash, true, &mut b);
        }
        Some(b)
    }

    fn heredoc_as_string(
        &mut self,
        u: &Rc<Unit<'t>>,
        range: Range<usize>,
        dash: bool,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<TextBuild> {
        let text = u.src(range.clone());
        let bytes = text.as_bytes();
        let base = range.start;
        let mut b = TextBuild::default();
        b.push("\"", None);
        let mut run = 0;
        let mut i = 0;
        let mut closers: Vec<u8> = Vec::new();
        while i < bytes.len() {
            let line_start = if i == 0 {
                base == 0 || u.text.as_bytes().get(base - 1) == Some(&b'\n')
            } else {
                bytes[i - 1] == b'\n'
            };
            if dash && line_start && bytes[i] == b'\t' {
                b.push(&text[run..i], u.exact(base + run..base + i));
                while i < bytes.len() && bytes[i] == b'\t' {
                    i += 1;
                }
                run = i;
                continue;
            }
            match bytes[i] {
                // Inside `${...}` and `$(...)` quotes keep their meaning.
                b'$' if matches!(bytes.get(i + 1), Some(b'{' | b'(')) => {
                    closers.push(if bytes[i + 1] == b'{' { b'}' } else { b')' });
                    i += 2;
                }
                b'(' if closers.last() == Some(&b')') => {
                    closers.push(b')');
                    i += 1;
                }
                c if closers.last() == Some(&c) => {
                    closers.pop();
                    i += 1;
                }
                b'"' if !closers.is_empty() => i += 1,
                b'"' => {
                    b.push(&text[run..i], u.exact(base + run..base + i));
                    b.push("\\", None);
                    b.push("\"", u.exact(base + i..base + i + 1));
                    i += 1;
                    run = i;
                }
                b'\\' if bytes.get(i + 1) == Some(&b'"') && closers.is_empty() => {
                    // `\"` stays as written.
                    b.push(&text[run..i], u.exact(base + run..base + i));
                    b.push("\\", None);
                    b.push("\\", u.exact(base + i..base + i + 1));
                    b.push("\\", None);
                    b.push("\"", u.exact(base + i + 1..base + i + 2));
                    i += 2;
                    run = i;
                }
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
        let end = bytes.len().min(i);
        b.push(
            &text[run.min(end)..end],
            u.exact(base + run.min(end)..base + end),
        );
        b.push("\"", None);
        let fallback = u.span(range);
        let unit = self.build_unit(b, fallback)?;
        let tree = unit.tree.as_ref()?;
        let root = tree.root_node();
        if root.has_error() {
            return None;
        }
        let mut node = root;
        while node.kind() != "string" {
            node = node.named_child(0)?;
        }
        if node.byte_range() != (0..unit.text.len()) {
            return None;
        }
        let f = self.scalar_word(&unit, node, st, cx);
        let mut out = TextBuild::default();
        match f.choices.as_slice() {
            [one] => out.pieces(one),
            _ => out.hole(Hole::Choices(f.choices.clone())),
        }
        Some(out)
    }

    /// Literal heredoc text: leading tabs dropped for `<<-`; `\$`, `` \` ``, `\\` and
    /// backslash-newline unescaped when the delimiter was not quoted.
    fn literal_lines(
        &mut self,
        u: &Rc<Unit<'t>>,
        range: Range<usize>,
        dash: bool,
        unescape: bool,
        b: &mut TextBuild,
    ) {
        let text = u.src(range.clone()).to_owned();
        let base = range.start;
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut run = 0;
        let line_start = |i: usize| -> bool {
            if i == 0 {
                base == 0 || u.text.as_bytes().get(base - 1) == Some(&b'\n')
            } else {
                bytes[i - 1] == b'\n'
            }
        };
        while i < bytes.len() {
            if dash && bytes[i] == b'\t' && line_start(i) {
                b.push(&text[run..i], u.exact(base + run..base + i));
                while i < bytes.len() && bytes[i] == b'\t' {
                    i += 1;
                }
                run = i;
                continue;
            }
            if unescape
                && bytes[i] == b'\\'
                && i + 1 < bytes.len()
                && matches!(bytes[i + 1], b'$' | b'`' | b'\\' | b'\n')
            {
                b.push(&text[run..i], u.exact(base + run..base + i));
                if bytes[i + 1] != b'\n' {
                    b.push(&text[i + 1..i + 2], u.exact(base + i + 1..base + i + 2));
                }
                i += 2;
                run = i;
                continue;
            }
            i += 1;
        }
        b.push(&text[run..], u.exact(base + run..base + text.len()));
    }

    fn write_file(
        &mut self,
        u: &Rc<Unit<'t>>,
        argv: &[Arg],
        redirs: &[Node<'_>],
        st: &mut State<'t>,
        cx: &Ctx,
    ) {
        if argv.len() == 2
            && !matches!(&argv[1], Arg::Field(f) if f.known().as_deref() == Some("-"))
        {
            return;
        }
        let mut target = None;
        let mut all = Vec::new();
        for r in redirs {
            all.push(*r);
            let mut c = r.walk();
            all.extend(
                r.named_children(&mut c)
                    .filter(|k| k.kind() == "file_redirect"),
            );
        }
        for r in &all {
            if r.kind() != "file_redirect" {
                continue;
            }
            let op = r.child(0).map(|c| c.kind()).unwrap_or("");
            let op = if r.child(0).is_some_and(|c| c.kind() == "file_descriptor") {
                r.child(1).map(|c| c.kind()).unwrap_or("")
            } else {
                op
            };
            if op != ">" && op != ">|" {
                continue;
            }
            if let Some(d) = r.child_by_field_name("destination") {
                target = self.scalar_word(u, d, st, cx).known();
            }
        }
        let Some(path) = target else { return };
        let Some(text) = self.stdin_text(u, redirs, st, cx) else {
            return;
        };
        let abs = if path.starts_with('/') {
            normalize(&path)
        } else {
            match &st.cwd {
                Some(c) => normalize(&format!("{c}/{path}")),
                None => return,
            }
        };
        let fallback = u.span(0..0);
        if let Some(unit) = self.build_unit(text, fallback) {
            Rc::make_mut(&mut st.files).insert(abs, unit);
        }
    }

    // ---- arithmetic ---------------------------------------------------------------------

    /// Arithmetic over a range of the text (`((...))`, a C-style `for` part).
    pub(super) fn arith_range(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        range: Range<usize>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<i64> {
        let text = self.arith_source(u, n, range, st, cx)?;
        self.arith_text(&text, st)
    }

    pub(super) fn arith_text(&mut self, text: &str, st: &mut State<'t>) -> Option<i64> {
        let mut env = ArithEnv { ev: self, st };
        super::arith::eval(text, &mut env)
    }

    /// The text of an arithmetic expression with its expansions done (bash expands
    /// parameters in it first); `None` when one is not known.
    pub(super) fn arith_source(
        &mut self,
        u: &Rc<Unit<'t>>,
        n: Node<'_>,
        range: Range<usize>,
        st: &mut State<'t>,
        cx: &Ctx,
    ) -> Option<String> {
        let mut out = String::new();
        let mut pos = range.start;
        let mut stack: Vec<Node> = Vec::new();
        let mut c = n.walk();
        let kids: Vec<Node> = n.named_children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
        let mut known = true;
        let mut steps = 0;
        while let Some(k) = stack.pop() {
            steps += 1;
            if steps > 10_000 {
                return None;
            }
            if k.end_byte() <= pos || k.start_byte() >= range.end {
                continue;
            }
            match k.kind() {
                "simple_expansion"
                | "expansion"
                | "command_substitution"
                | "arithmetic_expansion"
                | "string"
                | "raw_string" => {
                    out.push_str(u.src(pos..k.start_byte()));
                    let f = self.scalar_word(u, k, st, cx);
                    match f.known() {
                        Some(t) => out.push_str(&t),
                        None => known = false,
                    }
                    pos = k.end_byte();
                }
                _ => {
                    let mut c2 = k.walk();
                    let sub: Vec<Node> = k.named_children(&mut c2).collect();
                    stack.extend(sub.into_iter().rev());
                }
            }
        }
        if range.end > pos {
            out.push_str(u.src(pos..range.end));
        }
        known.then_some(out)
    }

    pub(super) fn lookup_text(&self, st: &State<'t>, name: &str) -> Option<Option<String>> {
        match st.vars.get(name) {
            Some(v) => match &v.value {
                Value::Scalar(f) => f.known().map(Some),
                Value::Array(a) => match a.first() {
                    Some(f) => f.known().map(Some),
                    None => Some(None),
                },
                Value::Unknown => None,
            },
            // `RANDOM`, `SECONDS`, `LINENO`, ...: bash sets them; their values are not known.
            None if !st.gone.contains(name) && super::word::SHELL_SET.contains(&name) => None,
            None if st.gone.contains(name)
                || (self.opts.unset_names == UnsetNames::Empty && !st.opaque) =>
            {
                Some(None)
            }
            None => None,
        }
    }
}

struct ArithEnv<'x, 'a, 't> {
    ev: &'x mut Ev<'a, 't>,
    st: &'x mut State<'t>,
}

impl super::arith::Env for ArithEnv<'_, '_, '_> {
    fn get(&mut self, name: &str) -> Option<Option<String>> {
        self.ev.lookup_text(self.st, name)
    }
    fn get_index(&mut self, name: &str, index: i64) -> Option<Option<String>> {
        if self.st.sparse.contains(name) {
            return None;
        }
        match self.st.vars.get(name).map(|v| &v.value) {
            Some(Value::Array(a)) => {
                let k = if index < 0 {
                    a.len() as i64 + index
                } else {
                    index
                };
                match usize::try_from(k).ok().and_then(|k| a.get(k)) {
                    Some(f) => f.known().map(Some),
                    None => Some(None),
                }
            }
            Some(Value::Scalar(f)) if index == 0 => f.known().map(Some),
            Some(Value::Scalar(_)) => Some(None),
            Some(Value::Unknown) => None,
            None => self.ev.lookup_text(self.st, name),
        }
    }
    fn set(&mut self, name: &str, value: Option<i64>) {
        let dummy = Span {
            source: self.ev.script,
            range: 0..0,
        };
        let v = match value {
            Some(n) => Value::Scalar(text_field(&n.to_string(), None, dummy)),
            None => Value::Unknown,
        };
        self.ev.set_var(self.st, name, v, None, None);
    }
}

/// The memory a field takes: its text and the structures around it (an array of a million
/// one-letter elements is tens of megabytes, not one).
fn field_bytes(f: &Field) -> usize {
    std::mem::size_of::<Field>()
        + f.choices.len() * std::mem::size_of::<Vec<Piece>>()
        + f.choices
            .iter()
            .flatten()
            .map(|p| {
                std::mem::size_of::<Piece>()
                    + match p {
                        Piece::Text { text, .. } => text.len(),
                        Piece::Runtime { name, .. } => name.len(),
                        Piece::Unknown { .. } => 0,
                    }
            })
            .sum::<usize>()
}

fn value_bytes(v: &Value) -> usize {
    match v {
        Value::Scalar(f) => field_bytes(f),
        Value::Array(a) => a.iter().map(field_bytes).sum(),
        Value::Unknown => 0,
    }
}

/// Argument nodes grouped into shell words: nodes with nothing between them but escaped
/// blanks (which the grammar drops: `"a"\ "b"`) or line continuations are one word.
fn word_groups<'u>(u: &Unit<'_>, words: &[Node<'u>]) -> Vec<Vec<Node<'u>>> {
    let mut out: Vec<Vec<Node<'u>>> = Vec::new();
    let mut prev_end: Option<usize> = None;
    for w in words {
        let joined = prev_end.is_some_and(|e| {
            if e > w.start_byte() {
                return false;
            }
            let gap = u.src(e..w.start_byte()).replace("\\\n", "");
            let b = gap.as_bytes();
            // Nothing between them, or only escaped blanks (`"a"\ "b"`).
            b.is_empty()
                || (b.len().is_multiple_of(2)
                    && b.chunks(2)
                        .all(|p| p[0] == b'\\' && matches!(p[1], b' ' | b'\t')))
        });
        match out.last_mut() {
            Some(g) if joined => g.push(*w),
            _ => out.push(vec![*w]),
        }
        prev_end = Some(w.end_byte());
    }
    out
}

/// What a loop that `break N`/`continue N` left hands to the loop around it.
fn outer(f: Flow) -> Flow {
    match f {
        Flow::BreakN(2) => Flow::Break,
        Flow::BreakN(n) => Flow::BreakN(n - 1),
        Flow::ContinueN(2) => Flow::Continue,
        Flow::ContinueN(n) => Flow::ContinueN(n - 1),
        other => other,
    }
}

pub(super) fn params_of(args: &[Arg]) -> Params {
    let mut list = Vec::new();
    for a in args {
        match a {
            Arg::Field(f) => list.push(f.clone()),
            Arg::Unknown(_) => return Params::Unknown,
        }
    }
    Params::Known(list)
}
