//! Abstract interpretation of shell text: what each simple command's arguments are when the
//! script runs, as far as that can be known without running anything.
//!
//! The evaluator walks the tree-sitter-bash tree of a script in execution order, keeping the
//! shell's variables (scalars, arrays, positional parameters, exported or not) and expanding
//! every word as bash does: parameter expansion, arithmetic, word splitting of unquoted
//! expansions, quote removal. Each expanded word is a [`Field`]; a value the evaluator cannot
//! know is [`Piece::Unknown`], a word count it cannot know is [`Arg::Unknown`], and a value
//! known only at run time (`$RANK`, `$MULTINODE_NODE_IP`) is [`Piece::Runtime`] with the
//! [`Site`] that expands it. Nothing is ever guessed: `$(...)` and backticks are unknown.
//!
//! Code that runs elsewhere is followed: `bash -c 'text' arg0 args...`, `eval` of a known
//! string, heredoc bodies fed to a shell, `source`/`.` of a known file, and shipped files run by
//! the script (`bash /opt/x.sh`, `./x.sh` relative to the working directory), each evaluated
//! with its own positional parameters and, for a new shell, only the exported variables. Under a
//! remote runner (`exec_all`, `$MULTINODE_SSH_WRAPPER host`) a nested shell runs on each node:
//! its words are expanded at [`Site::EachNode`].
//!
//! Bounded: loops are unrolled only over short known lists, recursion, `eval`, `source` and
//! nested shells have a depth limit, and the total work has a budget; past a bound, values
//! become unknown and [`Evaluation::truncated`] is set. Never panics, never executes, no I/O.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

mod arith;
mod brace;
mod run;
#[cfg(test)]
mod tests;
mod word;

/// One text the evaluator reads: the script, a shipped file, an `env` value. The caller numbers
/// them; [`Sources`] holds them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct SourceId(pub u32);

/// A byte range in one source text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    pub source: SourceId,
    pub range: Range<usize>,
}

/// The texts an evaluation may read, by [`SourceId`] (the index in `texts`), and the files the
/// job ships, by the absolute path at which the job sees them.
#[derive(Clone, Debug, Default)]
pub struct Sources<'t> {
    pub texts: Vec<&'t str>,
    /// Absolute path → source of the file's content (`files:` of a Fuzzfile).
    pub files: HashMap<String, SourceId>,
}

/// Which shell expands a word.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Site {
    /// The shell of the job's command, on the head node (the only node of a single-node job).
    Head,
    /// A shell started on each node by a remote runner (`exec_all`, the SSH wrapper).
    EachNode,
}

/// A piece of an expanded word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Known text. `origin` is where exactly these bytes stand in a source, when they do (not
    /// for text made by escapes, arithmetic or joining).
    Text { text: String, origin: Option<Span> },
    /// The value of a variable known only at run time, from the starting environment
    /// ([`Initial::Runtime`]), expanded by the shell at `site`.
    Runtime {
        name: String,
        site: Site,
        /// The expansion in the source (`$RANK`, `${MULTINODE_NODE_IP}`).
        origin: Span,
    },
    /// Not known: a command substitution, a variable nothing sets, an operation the evaluator
    /// does not model.
    Unknown { origin: Span },
}

/// The most values one word may take ([`Field::choices`]); past it, the value is unknown.
pub const MAX_CHOICES: usize = 8;

/// One argument after expansion, word splitting and quote removal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The values the field takes: one, or a few when it depends on an `if`/`case` branch
    /// taken at run time. Never empty; at most [`MAX_CHOICES`].
    pub choices: Vec<Vec<Piece>>,
    /// The source word this field was expanded from (for a field split out of `$ARGS`, the
    /// word `$ARGS`; its text's own origin is in the pieces).
    pub word: Span,
}

impl Field {
    /// The value when it is known and unique.
    pub fn known(&self) -> Option<String> {
        match self.choices.as_slice() {
            [one] => known_text(one),
            _ => None,
        }
    }
    /// Every value it may take, when each is known.
    pub fn known_choices(&self) -> Option<Vec<String>> {
        self.choices.iter().map(|c| known_text(c)).collect()
    }
}

fn known_text(pieces: &[Piece]) -> Option<String> {
    let mut s = String::new();
    for p in pieces {
        match p {
            Piece::Text { text, .. } => s.push_str(text),
            _ => return None,
        }
    }
    Some(s)
}

/// An argument of a command: a field, or an expansion that gives an unknown number of fields
/// (an unquoted unknown `$ARGS`, `"$@"` of unknown parameters, `"${A[@]}"` of an unknown
/// array).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arg {
    Field(Field),
    Unknown(Span),
}

/// A shell variable's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Scalar(Field),
    Array(Vec<Field>),
    /// Set, but to something not known (or an array of unknown length).
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Variable {
    pub value: Value,
    pub exported: bool,
    /// The assignment (or `env` entry) that gave the value.
    pub origin: Option<Span>,
}

/// The variables of a shell at one point. Shared between the commands that see the same ones.
pub type Variables = Arc<HashMap<String, Variable>>;

/// A variable of the starting environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Initial {
    /// Known text (an `env:` entry), with where it is written.
    Known { text: String, origin: Option<Span> },
    /// Set at run time, by the platform (`RANK`, `MULTINODE_NODE_IP`, `FB_JOB_NAME`): one word.
    /// Assumed set and not empty (`${RANK:-0}` is the run-time value). In
    /// [`Exec::variables`] such a variable the script did not assign holds a
    /// [`Piece::Runtime`] whose `origin` is the empty range at the start of the script; each
    /// expansion of it gets the expansion's own span and site.
    Runtime,
    /// Set to something not known.
    Unknown,
}

/// What a name that nothing sets expands to.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum UnsetNames {
    /// Unknown: the image or the platform may set it (a Fuzzfile's job).
    #[default]
    Unknown,
    /// Unknown, except where the script says what the name's absence means: in
    /// `${NAME:-word}`, `${NAME-word}`, `${NAME:=word}`, `${NAME=word}` the script's own default
    /// applies (`NGPU=${NGPU:-8}` is 8), and `${NAME:+word}`, `${NAME+word}` are empty. A plain
    /// `$NAME` stays unknown. The job of a Fuzzfile: its environment is known but for what the
    /// image sets, and a script that gives a default expects the name to be absent.
    DefaultsApply,
    /// Empty, as bash expands an unset name when the whole environment is known.
    Empty,
}

/// How to evaluate.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The exported environment the script starts with.
    pub env: Vec<(String, Initial)>,
    pub unset_names: UnsetNames,
    /// The working directory the script starts in (for `./x.sh`), when known.
    pub cwd: Option<String>,
    /// Commands that run their arguments as a command on every node (`exec_all`).
    pub remote_runners: Vec<String>,
    /// Runtime variables whose value is a program that runs `HOST COMMAND...` on another node
    /// (`MULTINODE_SSH_WRAPPER`).
    pub remote_wrappers: Vec<String>,
}

/// Whether a command runs whenever the script runs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Certainty {
    Always,
    /// Inside a branch, a loop, after `&&`/`||`, or in a function called conditionally;
    /// after a statement some of whose paths `exit`; one of the forms of a command whose
    /// words take choices that give different argument counts.
    Maybe,
}

/// How evaluation reached the text a command stands in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// `bash -c 'text' arg0 args...` (also `sh`, `dash`, `zsh`, `ksh`); also the command
    /// line a remote wrapper runs on a node (`$MULTINODE_SSH_WRAPPER host cmd...`: the
    /// words after the host joined with spaces, as ssh does).
    ShellString,
    /// `eval WORDS...`.
    Eval,
    /// A heredoc body fed to a shell (`bash <<EOF`).
    Heredoc,
    /// `source FILE` or `. FILE`.
    Source { path: String },
    /// A file run by the script (`bash /opt/x.sh`, `./x.sh`).
    File { path: String },
    /// A shell function called with arguments.
    Function { name: String },
}

/// One step of [`Exec::nesting`]: the command that started the evaluation of a nested text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nesting {
    pub entry: Entry,
    /// The command that started it (`bash -c ...`, `eval "$CMD"`, `f a b`).
    pub command: Span,
}

/// A simple command as it runs. A call of a shell function is not one (the commands in the
/// function are, under [`Entry::Function`]); nor are `export`/`declare`/`local`/`readonly`/
/// `unset`, whose effect is in [`Exec::variables`]. A command whose words take choices that
/// give different numbers of arguments (`$LAUNCHER`, set to `torchrun` in one branch and
/// to `python -m torch.distributed.run` in the other) is one `Exec` per form, each
/// [`Certainty::Maybe`], with the same `span`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Exec {
    /// The program and its arguments, expanded.
    pub argv: Vec<Arg>,
    /// `NAME=value` written before the command, expanded (they are in its environment).
    pub prefix: Vec<(String, Field)>,
    /// The shell's variables when the command runs (exported ones are its environment).
    pub variables: Variables,
    /// The shell that expands this command's words.
    pub site: Site,
    pub certainty: Certainty,
    /// The simple command in its source.
    pub span: Span,
    /// How evaluation reached the text, outermost first (empty for the top-level script).
    pub nesting: Vec<Nesting>,
}

/// The result of evaluating a script.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evaluation {
    /// Every simple command, in the order the evaluator met it.
    pub execs: Vec<Exec>,
    /// A bound was reached (depth, loop unrolling, budget): some values are unknown because of
    /// it, and some commands may be missing.
    pub truncated: bool,
    /// A text had syntax errors (the rest was evaluated).
    pub has_errors: bool,
}

/// Evaluate the script `script` of `sources`.
pub fn evaluate(script: SourceId, sources: &Sources<'_>, options: &Options) -> Evaluation {
    run::evaluate(script, sources, options)
}
