//! The semantics layer: what each job and service will run, derived once per analysis.
//!
//! For every task, [`Semantics::build`] computes the effective environment (with provenance),
//! the GPUs per node and the nodes, what wraps the command (Fuzzball's multinode
//! implementation, `exec_all`, the SSH wrapper), and every launcher invocation with its
//! arguments *evaluated*: shell text (`script:`, `sh -c` strings, shipped files the job runs) goes
//! through the abstract interpreter [`fuzzfile_shell::eval`], so `torchrun $DISTRIBUTED_ARGS`,
//! `"${ARGS[@]}"`, `${NGPU:-8}`, `eval "$CMD"` and `bash -c '...' arg0 args` give the arguments
//! torchrun really receives, each mapped back to the Fuzzfile bytes it came from.
//!
//! Rules, hover, inlay hints, the launch plan and the runner read these facts; nothing derives
//! them a second time (a test checks that no rule or front end calls the shell parser or the
//! evaluator itself).
//!
//! # Where each word is expanded
//!
//! This module is the one place that models it (docs/ARCHITECTURE.md has the table):
//! - A `script:` (and a shipped file it runs) is expanded by the job's shell on the head node
//!   ([`Site::Head`]); Fuzzball's variables there (`$RANK`, `$MULTINODE_NODE_IP`) have the
//!   head's values.
//! - `exec_all CMD...` receives the words the head's shell produced and runs them on every node
//!   with `RANK` set, replacing the text `$RANK` / `${RANK}` in its words by the node's rank. So
//!   `--node-rank '$RANK'` gives each node its own rank, while `"$RANK"` (expanded on the head)
//!   gives every node the head's. A shell started by `exec_all` (`exec_all bash -c '...'`) expands
//!   its words on each node ([`Site::EachNode`]).
//! - In a `command:` list there is no shell: Fuzzball itself expands the generic implementation's
//!   `$MULTINODE_*` variables in the words (on the head), and leaves `$RANK` for `exec_all`. The
//!   same holds for the string of `[sh, -c, "..."]`, which Fuzzball expands before the shell
//!   parses it.

use std::collections::HashMap;
use std::sync::Arc;

use fuzzfile_diagnostics::TextRange;
use fuzzfile_model::{EnvVar, FileSource, Fuzzfile, Implementation, Task, TaskKind};
use fuzzfile_shell::eval::{self, Arg, Field, Piece, SourceId, Span};
use fuzzfile_syntax::{NodeId, Tree};

mod accelerate;
mod args;
mod deepspeed;
mod horovod;
mod launchers;
mod lightning;
mod mpi;
mod nccl_tests;
mod shape;
mod srun;
mod torchrun;

pub use crate::launch::{Launcher, Origin};
pub use args::{Flag, FlagValue, LauncherArgs, Setting};
pub use fuzzfile_shell::eval::{Certainty, Entry, Site};
pub use launchers::{PerNode, Reach};
pub use shape::{Count, CountFrom, Quantity, Shape};
pub(crate) use srun::{gres_gpus as srun_gres_gpus, typed_count as srun_typed_count};

/// Variables Fuzzball sets in every container (`FB_*`, `HOSTNAME`) and, for `generic` multinode
/// jobs, the `MULTINODE_*` set; `RANK` is set by `exec_all` on each node.
pub const PROVIDED_VARIABLES: &[&str] = &[
    "FB_WORKFLOW_ID",
    "FB_JOB_NAME",
    "FB_ACCOUNT_ID",
    "FB_TASK_ID",
    "HOSTNAME",
    "MULTINODE_HOSTLIST",
    "MULTINODE_HOSTLIST_NOSLOTS",
    "MULTINODE_TOTAL_SLOTS",
    "MULTINODE_NODE_IP",
    "MULTINODE_SSH_WRAPPER",
    "MULTINODE_RSH_WRAPPER",
    "RANK",
];

/// The programs a remote runner or the SSH wrapper is named by.
const REMOTE_RUNNERS: &[&str] = &["exec_all"];
const REMOTE_WRAPPERS: &[&str] = &["MULTINODE_SSH_WRAPPER", "MULTINODE_RSH_WRAPPER"];

/// The facts of every task of one Fuzzfile, each derived on its first use: a task whose
/// findings an analysis reuses ([`crate::task_cache`]) has its facts derived only when a
/// request (hover, the launch plan) asks for them.
#[derive(Debug, Default)]
pub struct Semantics {
    by_body: HashMap<NodeId, usize>,
    tasks: Vec<std::sync::OnceLock<TaskFacts>>,
    /// The evaluations of shell texts the facts are derived with.
    cache: Option<EvaluationCache>,
    empty: TaskFacts,
}

impl Semantics {
    /// The facts of every job and service of `model`, to be derived on first use
    /// ([`Semantics::task_in`]).
    pub fn build(model: &Fuzzfile) -> Semantics {
        Semantics::build_with(model, None)
    }

    /// [`Semantics::build`], taking the evaluations of shell texts from `cache` when it holds
    /// them (what it holds is exactly what evaluating would give: see [`EvaluationCache`]).
    pub fn build_with(model: &Fuzzfile, cache: Option<&EvaluationCache>) -> Semantics {
        let count = model.tasks().count();
        let mut s = Semantics {
            cache: cache.cloned(),
            ..Semantics::default()
        };
        s.tasks.reserve_exact(count);
        s.by_body.reserve(count);
        for task in model.tasks() {
            s.by_body.insert(task.body, s.tasks.len());
            s.tasks.push(std::sync::OnceLock::new());
        }
        s
    }

    /// The facts of `task`, a task of `model` (the model this was built from, of `tree` and
    /// `text`), derived now if this is their first use. Front ends call
    /// [`crate::Analysis::facts`] and rules [`crate::rules::Context::facts`].
    pub fn task_in(&self, text: &str, tree: &Tree, model: &Fuzzfile, task: &Task) -> &TaskFacts {
        match self
            .by_body
            .get(&task.body)
            .and_then(|&i| self.tasks.get(i))
        {
            Some(cell) => {
                cell.get_or_init(|| task_facts(text, tree, model, task, self.cache.as_ref()))
            }
            None => &self.empty,
        }
    }

    /// How many tasks' facts have been derived so far.
    pub fn derived(&self) -> usize {
        self.tasks.iter().filter(|c| c.get().is_some()).count()
    }
}

/// Evaluations of shell texts kept between analyses, for a caller that analyses the same file
/// again and again (the language server, on every edit): an edit re-evaluates only the jobs
/// whose shell it touched. Owned and passed by the caller (`Options::evaluations`); nothing is
/// kept anywhere else. An entry is keyed by everything the evaluation reads (every text, the
/// shipped files' paths, the starting environment, the working directory and the other
/// options), so a hit is exactly what evaluating again would give; the evaluation holds no
/// position in the Fuzzfile, so a job that moved is a hit too. Bounded: past
/// [`EvaluationCache::MAX_BYTES`] of keys it starts over.
#[derive(Clone, Default)]
pub struct EvaluationCache {
    inner: std::sync::Arc<std::sync::Mutex<CacheInner>>,
}

#[derive(Default)]
struct CacheInner {
    entries: HashMap<String, std::sync::Arc<eval::Evaluation>>,
    bytes: usize,
    hits: u64,
}

impl std::fmt::Debug for EvaluationCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (n, hits) = self
            .inner
            .lock()
            .map(|c| (c.entries.len(), c.hits))
            .unwrap_or_default();
        write!(f, "EvaluationCache({n} entries, {hits} hits)")
    }
}

impl EvaluationCache {
    /// The most bytes of keys (about the shell text evaluated) kept before starting over.
    pub const MAX_BYTES: usize = 4 << 20;

    /// How many evaluations were answered from the cache.
    pub fn hits(&self) -> u64 {
        self.inner.lock().map(|c| c.hits).unwrap_or(0)
    }

    fn evaluate(
        &self,
        script: SourceId,
        sources: &eval::Sources<'_>,
        options: &eval::Options,
    ) -> std::sync::Arc<eval::Evaluation> {
        use std::fmt::Write;
        let mut key = format!("{}\u{0}{options:?}\u{0}", script.0);
        let mut files: Vec<(&String, &SourceId)> = sources.files.iter().collect();
        files.sort();
        let _ = write!(key, "{files:?}");
        for t in &sources.texts {
            key.push('\u{0}');
            key.push_str(&t.len().to_string());
            key.push(':');
            key.push_str(t);
        }
        if let Ok(mut c) = self.inner.lock() {
            if let Some(e) = c.entries.get(&key) {
                let e = std::sync::Arc::clone(e);
                c.hits += 1;
                return e;
            }
        }
        let e = std::sync::Arc::new(eval::evaluate(script, sources, options));
        if let Ok(mut c) = self.inner.lock() {
            if c.bytes + key.len() > Self::MAX_BYTES {
                c.entries.clear();
                c.bytes = 0;
            }
            c.bytes += key.len();
            c.entries.insert(key, std::sync::Arc::clone(&e));
        }
        e
    }
}

/// What one job or service runs, and with what.
#[derive(Clone, Debug, Default)]
pub struct TaskFacts {
    /// `defaults.job.env` overridden by name by the task's own `env` (services do not inherit
    /// defaults); each name once, at the place of its last entry. `from_defaults` says where
    /// each came from. The model's entries, shared, not copied.
    pub env: TaskEnv,
    /// GPUs requested per node (`resource.devices["nvidia.com/gpu"]`, the task's, else
    /// `defaults.job`'s).
    pub gpus_per_node: Option<(u64, TextRange)>,
    /// CPU cores requested per node (the task's, else `defaults.job`'s).
    pub cores: Option<u64>,
    /// `multinode.nodes`.
    pub nodes: Option<(u64, TextRange)>,
    /// `multinode.implementation`.
    pub implementation: Option<Implementation>,
    /// Every launcher invocation, in the order the job's shell meets it.
    pub launches: Vec<Launch>,
    /// Variables the job's shell (or a file it runs) exports with a known value before a
    /// launch, as `env` entries placed at their assignment: launched programs read them as
    /// they read `env`.
    pub exports: Vec<EnvVar>,
    /// The evaluation of the task's shell stopped at a bound: launches may be missing.
    pub truncated: bool,
}

impl TaskFacts {
    /// Fuzzball's MPI or GASNet launcher wraps the command (`openmpi`, `ompi`, `mpich`,
    /// `gasnet`).
    pub fn wrapped_by_fuzzball(&self) -> Option<Implementation> {
        self.implementation.filter(|i| i.wraps_command())
    }
    /// `multinode.nodes` when the job runs on several nodes and launches its own processes
    /// (`implementation: generic`, or none given).
    pub fn generic_multinode(&self) -> Option<(u64, TextRange)> {
        if self.wrapped_by_fuzzball().is_some() {
            return None;
        }
        self.nodes.filter(|(n, _)| *n > 1)
    }
    /// The value of `name` in the effective environment.
    pub fn env_var(&self, name: &str) -> Option<&EnvVar> {
        self.env.iter().rev().find(|e| e.name == name)
    }
    /// The launches that start one group of processes per node meeting at a master address
    /// (torchrun and its front ends), with their arguments.
    pub fn distributed(&self) -> impl Iterator<Item = (&Launch, &LauncherArgs)> {
        self.launches
            .iter()
            .filter(|l| l.launcher.rendezvous())
            .filter_map(|l| l.parsed.as_ref().map(|a| (l, a)))
    }
}

/// The environment a task's processes start with: the model's entries of `defaults.job.env`
/// and of the task's own `env`, shared with the model (no entry is copied per task), and which
/// of them are kept, in order.
#[derive(Clone, Debug, Default)]
pub struct TaskEnv {
    /// `defaults.job.env` of a job; empty for a service.
    defaults: Arc<[EnvVar]>,
    /// The task's own `env`.
    own: Arc<[EnvVar]>,
    /// The positions kept (those of `defaults`, then those of `own` after them), in order;
    /// `None` when every entry is kept (no name repeats, the usual case).
    kept: Option<Box<[u32]>>,
}

impl TaskEnv {
    /// The entries, each name once, at the place of its last entry.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &EnvVar> + Clone + '_ {
        (0..self.len()).filter_map(|i| self.entry(i))
    }
    /// How many entries.
    pub fn len(&self) -> usize {
        match &self.kept {
            Some(kept) => kept.len(),
            None => self.defaults.len() + self.own.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn entry(&self, i: usize) -> Option<&EnvVar> {
        self.entry_in(&self.defaults, &self.own, i)
    }
    /// The `i`th entry, read in `defaults` and `own`: the model's slices this shares.
    fn entry_in<'m>(
        &self,
        defaults: &'m [EnvVar],
        own: &'m [EnvVar],
        i: usize,
    ) -> Option<&'m EnvVar> {
        let at = match &self.kept {
            Some(kept) => *kept.get(i)? as usize,
            None => i,
        };
        match at.checked_sub(defaults.len()) {
            Some(at_own) => own.get(at_own),
            None => defaults.get(at),
        }
    }
}

/// The value a launched program receives for one word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// Known before the run.
    Literal(String),
    /// One of a few known values, depending on a branch taken at run time.
    OneOf(Vec<String>),
    /// A variable Fuzzball sets at run time, expanded at `site`: on the head (the head's value,
    /// the same on every node) or on each node (each node's own).
    Runtime { name: String, site: Site },
    /// Text around run-time variables (`$MULTINODE_NODE_IP:29500`): `text` has `$NAME` where
    /// each variable's value goes; `site` is where they are expanded.
    Template { text: String, site: Site },
    /// Not known before the run.
    Unknown,
}

impl Resolved {
    /// The value when it is known and unique.
    pub fn literal(&self) -> Option<&str> {
        match self {
            Resolved::Literal(s) => Some(s),
            _ => None,
        }
    }
    /// Every value it may take, when each is known.
    pub fn choices(&self) -> Option<Vec<&str>> {
        match self {
            Resolved::Literal(s) => Some(vec![s.as_str()]),
            Resolved::OneOf(v) => Some(v.iter().map(String::as_str).collect()),
            _ => None,
        }
    }
    /// How the value reads in a message.
    pub fn display(&self) -> String {
        match self {
            Resolved::Literal(s) => s.clone(),
            Resolved::OneOf(v) => v.join(" or "),
            Resolved::Runtime { name, .. } => format!("${name}"),
            Resolved::Template { text, .. } => text.clone(),
            Resolved::Unknown => "(not known before the run)".into(),
        }
    }
}

/// One argument of a launcher, as the launcher receives it, placed in the Fuzzfile.
#[derive(Clone, Debug)]
pub struct LaunchWord {
    /// The value when known (the first choice of several); else the word as written.
    pub text: String,
    pub value: Resolved,
    /// Where to point at it in the Fuzzfile: the bytes the value came from when they are
    /// written out (inside `DISTRIBUTED_ARGS="--nproc_per_node 8"` for a split `$DISTRIBUTED_ARGS`),
    /// else the word that was expanded.
    pub range: TextRange,
    /// The word as written where the command is (`$DISTRIBUTED_ARGS`, `"${ARGS[@]}"`).
    pub written: TextRange,
    /// The bytes at `range` are exactly `text`, so a fix may replace them or a part of them.
    pub exact: bool,
    /// The word was produced by an expansion (`$X`, `"${A[@]}"`, `$1`), not written in place.
    pub expanded: bool,
    /// Stands for an unknown number of arguments (an unquoted `$ARGS` of unknown value).
    pub splat: bool,
    /// Where the parts of `text` that are written out somewhere come from: `(bytes of text,
    /// range in the file)`, in order (`--nproc_per_node=${NGPU}` with `NGPU=8` in `env`: the
    /// `8` is in the `env` entry).
    pub parts: Vec<(std::ops::Range<usize>, TextRange)>,
}

impl LaunchWord {
    /// The range of `text[start..]` in the file: exact when the word is, or when that tail is
    /// one written part; else the whole word.
    pub fn tail_range(&self, start: usize) -> TextRange {
        if self.exact && start <= self.text.len() {
            return TextRange::new(self.range.start + start as u32, self.range.end);
        }
        match self.parts.iter().find(|(r, _)| r.start == start) {
            Some((r, file)) if r.end == self.text.len() => *file,
            _ => self.range,
        }
    }
}

/// One launcher invocation.
#[derive(Clone, Debug)]
pub struct Launch {
    pub launcher: Launcher,
    /// The launcher word (for `python -m torch.distributed.run`: `python`) and everything after.
    pub words: Vec<LaunchWord>,
    /// Index in `words` of the first argument.
    pub args_start: usize,
    /// The remote runner that starts this on every node (`exec_all`, or the SSH wrapper).
    pub exec_all: Option<TextRange>,
    pub origin: Origin,
    /// Whether the command runs whenever the job runs, or only in some branch.
    pub certainty: Certainty,
    /// The shell that expanded the words.
    pub site: Site,
    /// How the job's shell reached the launch line (`bash -c`, `eval`, a shipped file), outermost
    /// first.
    pub via: Vec<Entry>,
    /// The launched program's environment, as far as it matters to launchers: the job's `env`,
    /// variables the script exports, assignments before the command and `env NAME=value`.
    pub environment: Vec<(String, LaunchWord)>,
    /// The launcher's arguments as its own parser reads them.
    pub parsed: Option<LauncherArgs>,
    /// The processes it starts.
    pub shape: Shape,
    /// How many GPUs `CUDA_VISIBLE_DEVICES` in the launched program's environment leaves
    /// visible (its comma-separated list; empty: none), and where it is set; `None` when it is
    /// not set or not known before the run.
    pub visible_gpus: Option<(u64, TextRange)>,
}

impl Launch {
    pub fn range(&self) -> TextRange {
        self.words.first().map_or(TextRange::default(), |w| w.range)
    }
    pub fn args(&self) -> &[LaunchWord] {
        self.words.get(self.args_start..).unwrap_or(&[])
    }
    /// A setting of the launch, by a launcher-independent name (`nnodes`, `nproc-per-node`,
    /// `node-rank`, `master-addr`, `master-port`; torchrun's `rdzv-backend`, `rdzv-endpoint`,
    /// `rdzv-id`): from the launcher's flag, else from the variable it reads when the flag is
    /// absent (torchrun's `PET_<NAME>`).
    pub fn setting(&self, name: &str) -> Option<&Setting> {
        self.parsed
            .as_ref()?
            .settings
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s)
    }
    /// The variable `name` in the launched program's environment.
    pub fn env(&self, name: &str) -> Option<&LaunchWord> {
        self.environment
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, w)| w)
    }
}

// ---------------------------------------------------------------------------------------------
// Building the facts of one task.

fn task_facts(
    text: &str,
    tree: &Tree,
    model: &Fuzzfile,
    task: &Task,
    cache: Option<&EvaluationCache>,
) -> TaskFacts {
    let (defaults, env) = effective_env(model, task);
    // The same entries, borrowed from the model for the builder (`facts` is borrowed mutably
    // while it runs).
    let env_entries: Vec<&EnvVar> = (0..env.len())
        .filter_map(|i| env.entry_in(defaults, &task.env, i))
        .collect();
    let is_job = task.kind == TaskKind::Job;
    let defaults_resource = || {
        is_job
            .then(|| model.defaults.as_ref()?.resource.as_ref())
            .flatten()
    };
    let gpus_per_node = task
        .resource
        .as_ref()
        .and_then(|r| r.device("nvidia.com/gpu"))
        .or_else(|| defaults_resource().and_then(|r| r.device("nvidia.com/gpu")))
        .map(|s| (s.value, s.range));
    let cores = task
        .resource
        .as_ref()
        .and_then(|r| r.cores.as_ref())
        .or_else(|| defaults_resource().and_then(|r| r.cores.as_ref()))
        .map(|c| c.value);
    let multinode = task.multinode.as_ref();
    let nodes = multinode
        .and_then(|m| m.nodes.as_ref())
        .map(|n| (n.value, n.range));
    let implementation = multinode
        .and_then(|m| m.implementation.as_ref())
        .map(|i| i.value);
    let mut facts = TaskFacts {
        env,
        gpus_per_node,
        cores,
        nodes,
        implementation,
        launches: Vec::new(),
        exports: Vec::new(),
        truncated: false,
    };
    let generic = nodes.is_some_and(|(n, _)| n > 1)
        && implementation.is_none_or(|i| i == Implementation::Generic);
    let mut b = Builder {
        text,
        tree,
        model,
        task,
        facts: &mut facts,
        generic,
        cache,
        env: env_entries,
    };
    b.launches();
    // `MULTINODE_TOTAL_SLOTS` of a generic job: nodes × slots, a slot count that is
    // `procs-per-node`, else the CPU cores, else 1.
    let generic_slots = multinode.and_then(|m| {
        let generic = m
            .implementation
            .as_ref()
            .is_none_or(|i| i.value == Implementation::Generic);
        let nodes = m.nodes.as_ref().map(|n| n.value).filter(|n| *n >= 1)?;
        let per = m
            .procs_per_node
            .as_ref()
            .map(|p| p.value)
            .or(cores)
            .unwrap_or(1);
        generic.then(|| nodes.saturating_mul(per))
    });
    let slots_per_node = multinode.and_then(|m| {
        let generic = m
            .implementation
            .as_ref()
            .is_none_or(|i| i.value == Implementation::Generic);
        generic.then(|| {
            m.procs_per_node
                .as_ref()
                .map(|p| p.value)
                .or(cores)
                .unwrap_or(1)
        })
    });
    let (gpus, nodes) = (facts.gpus_per_node.map(|g| g.0), facts.nodes.map(|n| n.0));
    let resources = shape::Resources {
        gpus,
        cores,
        nodes,
        generic_slots,
        slots_per_node,
    };
    // What launches read in the files the job ships (accelerate's config, deepspeed's
    // hostfile), and whether a text of the job names a path (a script that writes the file).
    let shipped = shipped_files(model, task);
    let mentioned = |path: &str| {
        task.script.as_ref().is_some_and(|s| s.value.contains(path))
            || task
                .command
                .as_ref()
                .is_some_and(|c| c.value.iter().any(|w| w.value.contains(path)))
            || shipped.iter().any(|f| f.content.contains(path))
    };
    for l in &mut facts.launches {
        let cwd = task.cwd.as_ref().map(|c| c.value.as_str());
        launchers::read_shipped(l, &shipped, cwd, text, tree, &mentioned);
        l.shape = launchers::shape(l, resources);
        l.visible_gpus = launchers::visible_gpus(l, &facts.env);
    }
    facts
}

/// How a source of the evaluation maps back to the Fuzzfile.
struct SourceInfo {
    /// The scalar holding it, and where its text starts in the scalar's decoded value.
    node: NodeId,
    offset: usize,
    /// Where to point when the bytes cannot be placed exactly.
    fallback: TextRange,
    /// A shipped file's path (for `via`).
    origin: Origin,
    /// The text is an `env:` value (not shell text).
    env_value: bool,
}

struct Builder<'a> {
    text: &'a str,
    tree: &'a Tree,
    model: &'a Fuzzfile,
    task: &'a Task,
    facts: &'a mut TaskFacts,
    /// A `generic` multinode job on more than one node: `MULTINODE_*` are set, `exec_all` is there.
    generic: bool,
    cache: Option<&'a EvaluationCache>,
    /// The model's entries of the effective environment (those `facts.env` shares).
    env: Vec<&'a EnvVar>,
}

impl<'a> Builder<'a> {
    fn launches(&mut self) {
        if !self.mentions_a_launcher() {
            return;
        }
        let task = self.task;
        if let Some(cmd) = &task.command {
            let prog = cmd.value.first().map(|w| basename(&w.value)).unwrap_or("");
            let shell = is_shell(prog);
            let c_index = cmd.value.iter().position(|w| {
                w.value.starts_with('-') && !w.value.starts_with("--") && w.value.contains('c')
            });
            match (shell, c_index) {
                (true, Some(ci)) if ci + 1 < cmd.value.len() => {
                    let item = &cmd.value[ci + 1];
                    self.evaluate(&item.value, item.node, item.range, Origin::ShellString);
                }
                _ => {
                    let words: Vec<LaunchWord> = cmd
                        .value
                        .iter()
                        .map(|w| self.argv_word(&w.value, w.node, w.range))
                        .collect();
                    let environment = self
                        .facts
                        .env
                        .iter()
                        .map(|e| (e.name.to_string(), env_word(e)))
                        .collect();
                    if let Some(l) = self.launch(
                        words,
                        environment,
                        Origin::Argv,
                        Certainty::Always,
                        Site::Head,
                        Vec::new(),
                        None,
                    ) {
                        self.facts.launches.push(l);
                    }
                    // A command that runs a shipped file or a shell (`[bash, /opt/x.sh, a]`,
                    // `[exec_all, bash, -c, ...]`, `[/opt/run.sh]`): what that runs is
                    // evaluated as the same words given to a shell.
                    let files = self.shipped_files();
                    let wrapper_first = cmd
                        .value
                        .first()
                        .is_some_and(|w| REMOTE_WRAPPERS.iter().any(|r| w.value.contains(r)));
                    let runs_more = wrapper_first
                        || cmd.value.iter().any(|w| {
                            let b = basename(&w.value);
                            is_shell(b)
                                || REMOTE_RUNNERS.contains(&b)
                                || files.iter().any(|f| {
                                    f.path == w.value || f.path.ends_with(&format!("/{b}"))
                                })
                        });
                    if runs_more {
                        let line: Vec<String> =
                            cmd.value.iter().map(|w| shell_word(&w.value)).collect();
                        self.evaluate_nested_only(&line.join(" "), cmd.node, cmd.range);
                    }
                }
            }
        }
        if let Some(script) = &task.script {
            let first = script.value.trim_start().lines().next().unwrap_or("");
            let shell_script = !first.starts_with("#!")
                || ["sh", "bash", "dash", "zsh", "ksh"].iter().any(|s| {
                    first.ends_with(s)
                        || first.contains(&format!("/{s} "))
                        || first.contains(&format!(" {s}"))
                });
            if shell_script {
                self.evaluate(&script.value, script.node, script.range, Origin::Script);
            }
        }
    }

    /// Whether any text the task may run names a launcher (a cheap test before evaluating).
    fn mentions_a_launcher(&self) -> bool {
        let has = |s: &str| launchers::LAUNCHER_WORDS.iter().any(|w| s.contains(w));
        let t = self.task;
        t.command
            .as_ref()
            .is_some_and(|c| c.value.iter().any(|w| has(&w.value)))
            || t.script.as_ref().is_some_and(|s| has(&s.value))
            || self.facts.env.iter().any(|e| has(&e.value))
            || self.shipped_files().iter().any(|f| has(f.content))
    }

    /// The files the task sees at a path.
    fn shipped_files(&self) -> Vec<accelerate::ShippedFile<'a>> {
        shipped_files(self.model, self.task)
    }

    /// A word of a `command:` list: Fuzzball expands `$MULTINODE_*` in it (generic jobs).
    fn argv_word(&self, value: &str, node: NodeId, range: TextRange) -> LaunchWord {
        let (range, exact) = match self.tree.scalar(node) {
            Some(s) if s.map.is_exact() => {
                let r = s.map.range_to_source(0..value.len());
                (r, r.slice(self.text) == value)
            }
            _ => (range, false),
        };
        LaunchWord {
            text: value.to_owned(),
            value: Resolved::Literal(value.to_owned()),
            range,
            written: range,
            exact,
            expanded: false,
            splat: false,
            parts: Vec::new(),
        }
    }

    /// Evaluate a `command:` list given as shell text, and record only the launches of what it
    /// runs (shipped files, nested shells): the list's own words are read as written.
    fn evaluate_nested_only(&mut self, line: &str, node: NodeId, fallback: TextRange) {
        let before = self.facts.launches.len();
        // No offset into the list's node: every range of `line` maps to the whole list.
        self.evaluate_with(line, node, fallback, Origin::Argv, usize::MAX);
        let mut i = before;
        while i < self.facts.launches.len() {
            if self.facts.launches[i].via.is_empty() {
                self.facts.launches.remove(i);
            } else {
                i += 1;
            }
        }
    }

    /// Evaluate shell text held by scalar `node` and record the launches it makes.
    fn evaluate(&mut self, shell: &str, node: NodeId, fallback: TextRange, origin: Origin) {
        self.evaluate_with(shell, node, fallback, origin, 0);
    }

    fn evaluate_with(
        &mut self,
        shell: &str,
        node: NodeId,
        fallback: TextRange,
        origin: Origin,
        offset: usize,
    ) {
        let mut infos: Vec<SourceInfo> = Vec::new();
        let mut texts: Vec<&str> = Vec::new();
        let mut files: HashMap<String, SourceId> = HashMap::new();
        let script_id = add(
            &mut infos,
            &mut texts,
            shell,
            SourceInfo {
                node,
                offset,
                fallback,
                origin,
                env_value: false,
            },
        );
        // Owned copies outlive the borrow of `self` below.
        let shipped = self.shipped_files();
        let env: Vec<&'a EnvVar> = self.env.clone();
        for f in &shipped {
            let id = add(
                &mut infos,
                &mut texts,
                f.content,
                SourceInfo {
                    node: f.node,
                    offset: 0,
                    fallback: f.range,
                    origin: Origin::File,
                    env_value: false,
                },
            );
            files.insert(f.path.to_owned(), id);
        }
        let mut initial: Vec<(String, eval::Initial)> = Vec::new();
        for e in &env {
            let id = add(
                &mut infos,
                &mut texts,
                &e.value,
                SourceInfo {
                    node: e.entry_node,
                    offset: e.value_offset.map_or(usize::MAX, |o| o as usize),
                    fallback: e.value_range,
                    origin,
                    env_value: true,
                },
            );
            // Whether Fuzzball expands `$NAME` inside `env:` values is not documented: such a
            // value is not known before the run.
            let initial_value = if e.value.contains('$') || e.secret.is_some() {
                eval::Initial::Unknown
            } else {
                eval::Initial::Known {
                    text: e.value.to_string(),
                    origin: Some(Span {
                        source: id,
                        range: 0..e.value.len(),
                    }),
                }
            };
            initial.push((e.name.to_string(), initial_value));
        }
        for name in PROVIDED_VARIABLES {
            let multinode_only = name.starts_with("MULTINODE_") || *name == "RANK";
            if multinode_only && !self.generic {
                continue;
            }
            if env.iter().any(|e| e.name == *name) {
                continue;
            }
            // A variable no text of the job names cannot be read by it (an indirect
            // `${!v}` needs the name written somewhere too): not set up for nothing.
            if !texts.iter().any(|t| t.contains(name)) {
                continue;
            }
            initial.push(((*name).to_owned(), eval::Initial::Runtime));
        }
        let sources = eval::Sources { texts, files };
        let options = eval::Options {
            env: initial,
            unset_names: eval::UnsetNames::DefaultsApply,
            cwd: self.task.cwd.as_ref().map(|c| c.value.clone()),
            remote_runners: REMOTE_RUNNERS.iter().map(|s| (*s).to_owned()).collect(),
            remote_wrappers: REMOTE_WRAPPERS.iter().map(|s| (*s).to_owned()).collect(),
        };
        let evaluation = match self.cache {
            Some(cache) => cache.evaluate(script_id, &sources, &options),
            None => std::sync::Arc::new(eval::evaluate(script_id, &sources, &options)),
        };
        self.facts.truncated |= evaluation.truncated;
        let mapper = Mapper {
            text: self.text,
            tree: self.tree,
            infos: &infos,
            sources: &sources,
        };
        // The command that started each nested text, to find the `exec_all` in front of it.
        // (The first command with a span: a nested text made of a command's words maps to that
        // command's span too.)
        let mut by_span: HashMap<&Span, usize> = HashMap::new();
        for (i, e) in evaluation.execs.iter().enumerate() {
            by_span.entry(&e.span).or_insert(i);
        }
        // The commands that are launches themselves: the SSH wrapper gives its words to a shell
        // on the other node, which the evaluator follows; that same launch is not recorded
        // twice.
        let mut launched: std::collections::HashSet<usize> = std::collections::HashSet::new();
        for (index, exec) in evaluation.execs.iter().enumerate() {
            if let Some(parent) = exec.nesting.last().and_then(|n| by_span.get(&n.command)) {
                if launched.contains(parent)
                    && exec
                        .nesting
                        .last()
                        .is_some_and(|n| n.entry == Entry::ShellString)
                {
                    continue;
                }
            }
            if !could_launch(&exec.argv) {
                continue;
            }
            let words: Vec<LaunchWord> = exec.argv.iter().flat_map(|a| mapper.words(a)).collect();
            let mut environment: Vec<(String, LaunchWord)> = exec
                .variables
                .iter()
                .filter(|(n, v)| v.exported && matters_to_launchers(n))
                .map(|(n, v)| match &v.value {
                    eval::Value::Scalar(f) => (n.clone(), mapper.field(f)),
                    _ => (
                        n.clone(),
                        LaunchWord {
                            text: format!("${n}"),
                            value: Resolved::Unknown,
                            range: v
                                .origin
                                .as_ref()
                                .map_or(TextRange::default(), |o| mapper.span(o)),
                            written: v
                                .origin
                                .as_ref()
                                .map_or(TextRange::default(), |o| mapper.span(o)),
                            exact: false,
                            expanded: true,
                            splat: false,
                            parts: Vec::new(),
                        },
                    ),
                })
                .collect();
            environment.sort_by(|a, b| a.0.cmp(&b.0));
            environment.extend(
                exec.prefix
                    .iter()
                    .filter(|(n, _)| matters_to_launchers(n))
                    .map(|(n, f)| (n.clone(), mapper.field(f))),
            );
            // Started on each node by a remote runner in front of the nested shell.
            let remote = (exec.site == Site::EachNode)
                .then(|| {
                    exec.nesting.iter().rev().find_map(|n| {
                        let parent = &evaluation.execs[*by_span.get(&n.command)?];
                        parent.argv.iter().find_map(|a| match a {
                            Arg::Field(f) if is_remote_word(f) => Some(mapper.span(&f.word)),
                            _ => None,
                        })
                    })
                })
                .flatten();
            let origin = exec
                .nesting
                .iter()
                .find_map(|n| match n.entry {
                    Entry::File { .. } | Entry::Source { .. } => Some(Origin::File),
                    _ => None,
                })
                .or_else(|| infos.get(exec.span.source.0 as usize).map(|i| i.origin))
                .unwrap_or(origin);
            let via = exec.nesting.iter().map(|n| n.entry.clone()).collect();
            if let Some(l) = self.launch(
                words,
                environment,
                origin,
                exec.certainty,
                exec.site,
                via,
                remote,
            ) {
                if l.launcher != Launcher::ExecAll {
                    launched.insert(index);
                    // In name order: the shell's variables are a hash map, and the facts must
                    // not change from one analysis of the same text to the next.
                    let mut variables: Vec<_> = exec.variables.iter().collect();
                    variables.sort_by(|a, b| a.0.cmp(b.0));
                    for (name, v) in variables {
                        if !matters_to_launchers(name) {
                            continue;
                        }
                        if let Some(e) = self.export_entry(&mapper, name, v) {
                            if !self
                                .facts
                                .exports
                                .iter()
                                .any(|x| x.name == e.name && x.name_range == e.name_range)
                            {
                                self.facts.exports.push(e);
                            }
                        }
                    }
                }
                self.facts.launches.push(l);
            }
        }
    }

    /// An exported variable of the job's shell with a known value assigned in shell text, as
    /// an `env` entry at its assignment (`NAME=value`).
    fn export_entry(&self, mapper: &Mapper<'_>, name: &str, v: &eval::Variable) -> Option<EnvVar> {
        if !v.exported {
            return None;
        }
        let eval::Value::Scalar(f) = &v.value else {
            return None;
        };
        let value = f.known()?;
        let origin = v.origin.as_ref()?;
        let info = mapper.infos.get(origin.source.0 as usize)?;
        if info.env_value {
            return None;
        }
        let range = mapper.span(origin);
        let written = range.slice(self.text);
        let after = written.strip_prefix(name)?.strip_prefix('=')?;
        let name_range = TextRange::new(range.start, range.start + name.len() as u32);
        let value_range = TextRange::new(name_range.end + 1, range.end);
        let literal = after == value;
        Some(EnvVar {
            name: name.into(),
            value: value.as_str().into(),
            entry_range: range,
            entry_node: info.node,
            value_offset: written
                .ends_with(value.as_str())
                .then(|| u32::try_from(written.len() - value.len()).ok())
                .flatten(),
            name_range,
            value_range: if literal { value_range } else { range },
            secret: None,
            from_defaults: false,
        })
    }

    /// Recognise a launcher in a command line, after wrappers such as `exec`, `env`, `nohup`,
    /// `time`, `exec_all` and the SSH wrapper, and parse its arguments.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        words: Vec<LaunchWord>,
        mut environment: Vec<(String, LaunchWord)>,
        origin: Origin,
        certainty: Certainty,
        site: Site,
        via: Vec<Entry>,
        mut exec_all: Option<TextRange>,
    ) -> Option<Launch> {
        let mut i = 0;
        while i < words.len() {
            let w = &words[i];
            if let Resolved::Runtime { name, .. } = &w.value {
                if REMOTE_WRAPPERS.contains(&name.as_str()) {
                    // `$MULTINODE_SSH_WRAPPER HOST CMD...`
                    exec_all.get_or_insert(w.range);
                    i += 2;
                    continue;
                }
            }
            match basename(&w.text) {
                "exec" | "nohup" | "time" | "command" | "setsid" => i += 1,
                "env" => {
                    i += 1;
                    while i < words.len()
                        && (words[i].text.starts_with('-') || words[i].text.contains('='))
                    {
                        if let Some((n, v)) = words[i].text.split_once('=') {
                            if !words[i].text.starts_with('-') {
                                let mut value = words[i].clone();
                                value.range = value.tail_range(n.len() + 1);
                                value.text = v.to_owned();
                                value.value = strip_prefix(&value.value, n.len() + 1);
                                environment.push((n.to_owned(), value));
                            }
                        }
                        i += 1;
                    }
                }
                "stdbuf" | "nice" => {
                    i += 1;
                    while i < words.len() && words[i].text.starts_with('-') {
                        i += 1;
                    }
                }
                n if REMOTE_RUNNERS.contains(&n) => {
                    exec_all.get_or_insert(w.range);
                    i += 1;
                }
                _ => break,
            }
        }
        let rest: Vec<LaunchWord> = words.get(i..).unwrap_or(&[]).to_vec();
        let (launcher, args_start) = launchers::recognise(&rest).unwrap_or((Launcher::ExecAll, 0));
        if launcher == Launcher::ExecAll && exec_all.is_none() {
            return None;
        }
        // A command behind exec_all that starts no recognised launcher (`exec_all hostname`)
        // is recorded as exec_all's; a nested shell's own launches are recorded on their own.
        if launcher == Launcher::ExecAll && site == Site::EachNode {
            return None;
        }
        // `exec_all` replaces `$RANK` in its words, and those words carry everything a shell it
        // starts receives (`exec_all bash x.sh '$RANK'` gives the script each node's rank as
        // `$1`): a `$RANK` text that reaches a launch under it is each node's rank.
        let deferred = exec_all.is_some();
        let pre_expanded = self.generic && matches!(origin, Origin::Argv | Origin::ShellString);
        let rest: Vec<LaunchWord> = rest
            .into_iter()
            .map(|mut w| {
                w.value = as_received(w.value, deferred, pre_expanded, origin);
                w
            })
            .collect();
        let mut l = Launch {
            launcher,
            words: rest,
            args_start,
            exec_all,
            origin,
            certainty,
            site,
            via,
            environment,
            parsed: None,
            shape: Shape::default(),
            visible_gpus: None,
        };
        l.parsed = launchers::parse(&l);
        Some(l)
    }
}

/// The parameter a `$` introduces, in `after` (the text after the `$`): its name and how many
/// bytes of `after` the reference takes (`NAME`, or `{NAME}` with what the braces hold); an
/// empty name when there is none.
pub(crate) fn parameter_reference(after: &str) -> (&str, usize) {
    match after.strip_prefix('{') {
        Some(inner) => match inner.find('}') {
            Some(end) => (&inner[..end], end + 2),
            None => ("", 0),
        },
        None => {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        }
    }
}

/// The name, when `text` is exactly one `$NAME` or `${NAME}`.
fn whole_reference(text: &str) -> Option<&str> {
    let after = text.strip_prefix('$')?;
    let (name, len) = parameter_reference(after);
    let identifier =
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (identifier && len == after.len()).then_some(name)
}

/// Whether Fuzzball itself expands `$NAME` in the words of a `command:` list (and in the
/// string of `[sh, -c, "..."]` before the shell parses it): the generic implementation's
/// `MULTINODE_*` variables. `$RANK` is left for `exec_all`.
pub fn expanded_in_command_words(name: &str) -> bool {
    name.starts_with("MULTINODE_")
}

/// A `command:` word as Fuzzball expands it: each `$NAME` / `${NAME}` that
/// [`expanded_in_command_words`] and that `value_of` knows is replaced by its value
/// (`Some(Some(v))`); a name that `value_of` provides without a value known yet (`Some(None)`)
/// stays as written and is added to `unexpanded`; everything else stays as written.
pub fn expand_command_word(
    word: &str,
    value_of: &dyn Fn(&str) -> Option<Option<String>>,
    unexpanded: &mut std::collections::BTreeSet<String>,
) -> String {
    let mut out = String::new();
    let mut rest = word;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, consumed) = parameter_reference(after);
        let known = if expanded_in_command_words(name) {
            value_of(name)
        } else {
            None
        };
        match known {
            Some(Some(v)) => {
                out.push_str(&v);
                rest = &after[consumed..];
            }
            Some(None) => {
                unexpanded.insert(name.to_owned());
                out.push_str(&rest[i..i + 1 + consumed]);
                rest = &after[consumed..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// What the launched program receives for a value the job's shell produced: `exec_all`
/// replaces `$RANK` in its words by each node's rank (`deferred`), and in `command:` words
/// Fuzzball expands `$MULTINODE_*` on the head (`pre_expanded`).
fn as_received(value: Resolved, deferred: bool, pre_expanded: bool, origin: Origin) -> Resolved {
    let Resolved::Literal(s) = &value else {
        return value;
    };
    if !s.contains('$') {
        return value;
    }
    let mut site = None;
    if deferred && (s.contains("$RANK") || s.contains("${RANK}")) {
        site = Some(Site::EachNode);
    }
    if pre_expanded {
        let mut names = std::collections::BTreeSet::new();
        expand_command_word(s, &|_| Some(None), &mut names);
        if !names.is_empty() {
            site = Some(site.unwrap_or(Site::Head));
        }
    }
    let Some(site) = site else {
        // Whether Fuzzball expands other `$NAME`s in `command:` words is not documented.
        if origin == Origin::Argv {
            return Resolved::Unknown;
        }
        return value;
    };
    match whole_reference(s) {
        Some(n) => Resolved::Runtime {
            name: n.to_owned(),
            site,
        },
        None => Resolved::Template {
            text: s.clone(),
            site,
        },
    }
}

/// The value after the first `n` bytes (for `--flag=value` and `NAME=value` in one word).
pub(crate) fn strip_prefix(value: &Resolved, n: usize) -> Resolved {
    let cut = |s: &str| s.get(n..).map(str::to_owned);
    match value {
        Resolved::Literal(s) => cut(s).map_or(Resolved::Unknown, Resolved::Literal),
        Resolved::OneOf(v) => {
            let cut: Option<Vec<String>> = v.iter().map(|s| cut(s)).collect();
            match cut {
                Some(mut c) => {
                    c.dedup();
                    if c.len() == 1 {
                        Resolved::Literal(c.remove(0))
                    } else {
                        Resolved::OneOf(c)
                    }
                }
                None => Resolved::Unknown,
            }
        }
        Resolved::Template { text, site } => match cut(text) {
            Some(t) => match whole_reference(&t) {
                Some(name) => Resolved::Runtime {
                    name: name.to_owned(),
                    site: *site,
                },
                None if t.contains('$') => Resolved::Template {
                    text: t,
                    site: *site,
                },
                None => Resolved::Literal(t),
            },
            None => Resolved::Unknown,
        },
        Resolved::Runtime { .. } | Resolved::Unknown => Resolved::Unknown,
    }
}

/// Whether a variable of a launched program's environment is one the launchers, NCCL, CUDA or
/// PyTorch read (the part of the environment the semantics layer keeps).
fn matters_to_launchers(name: &str) -> bool {
    [
        "PET_", "NCCL_", "TORCH_", "CUDA_", "NVIDIA_", "MASTER_", "OMPI_", "PRTE_", "HYDRA_",
        "UCX_",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        || matches!(
            name,
            "WORLD_SIZE" | "LOCAL_WORLD_SIZE" | "LOCAL_RANK" | "OMP_NUM_THREADS"
        )
}

/// Whether a command may start a launcher: after the wrappers `launch` looks through, its
/// program is one `launch` recognises (a cheap test on the known words, before mapping them).
fn could_launch(argv: &[Arg]) -> bool {
    // A command behind `exec_all` or the SSH wrapper is recorded whatever it is.
    let mut remote = false;
    let mut skip_next = false;
    for a in argv {
        if skip_next {
            skip_next = false;
            continue;
        }
        let Arg::Field(f) = a else {
            return remote;
        };
        if is_remote_word(f) {
            remote = true;
            skip_next = f.known().is_none(); // `$MULTINODE_SSH_WRAPPER HOST`
            continue;
        }
        let Some(text) = f.choices.first().and_then(|c| match c.as_slice() {
            [Piece::Text { text, .. }] => Some(text.as_str()),
            _ => None,
        }) else {
            return remote;
        };
        let name = basename(text);
        if matches!(
            name,
            "exec" | "nohup" | "time" | "command" | "setsid" | "env" | "stdbuf" | "nice"
        ) || text.starts_with('-')
            || (text.contains('=') && !text.starts_with('='))
        {
            continue;
        }
        return remote
            || launchers::LAUNCHER_WORDS.iter().any(|w| name.contains(w))
            || name.starts_with("python");
    }
    remote
}

/// A word that starts a command on other nodes: `exec_all`, or the SSH wrapper's path.
fn is_remote_word(f: &Field) -> bool {
    if f.known()
        .is_some_and(|k| REMOTE_RUNNERS.contains(&basename(&k)))
    {
        return true;
    }
    matches!(
        f.choices.as_slice(),
        [pieces] if matches!(pieces.as_slice(), [Piece::Runtime { name, .. }] if REMOTE_WRAPPERS.contains(&name.as_str()))
    )
}

/// A `command:` word as shell text that gives the same word, with the `$MULTINODE_*`
/// variables Fuzzball expands in command words left for the shell to expand (in double
/// quotes) and everything else single-quoted.
fn shell_word(word: &str) -> String {
    let mut out = String::new();
    let mut rest = word;
    let quote = |s: &str, out: &mut String| {
        if !s.is_empty() {
            out.push('\'');
            out.push_str(&s.replace('\'', "'\\''"));
            out.push('\'');
        }
    };
    while let Some(i) = rest.find('$') {
        let after = &rest[i + 1..];
        let (name, len) = parameter_reference(after);
        if name.is_empty() || !expanded_in_command_words(name) {
            quote(&rest[..i + 1], &mut out);
            rest = after;
            continue;
        }
        quote(&rest[..i], &mut out);
        out.push_str(&format!("\"${{{name}}}\""));
        rest = &after[len..];
    }
    quote(rest, &mut out);
    if out.is_empty() {
        out.push_str("''");
    }
    out
}

/// Register one more source text of an evaluation.
fn add<'t>(
    infos: &mut Vec<SourceInfo>,
    texts: &mut Vec<&'t str>,
    text: &'t str,
    info: SourceInfo,
) -> SourceId {
    let id = SourceId(u32::try_from(texts.len()).unwrap_or(u32::MAX));
    texts.push(text);
    infos.push(info);
    id
}

/// Maps evaluator fields and spans back to the Fuzzfile.
struct Mapper<'a> {
    text: &'a str,
    tree: &'a Tree,
    infos: &'a [SourceInfo],
    sources: &'a eval::Sources<'a>,
}

impl Mapper<'_> {
    fn span(&self, span: &Span) -> TextRange {
        let Some(info) = self.infos.get(span.source.0 as usize) else {
            return TextRange::default();
        };
        if info.offset == usize::MAX {
            return info.fallback;
        }
        match self.tree.scalar(info.node) {
            Some(s) if s.map.is_exact() => s
                .map
                .range_to_source(info.offset + span.range.start..info.offset + span.range.end),
            _ => info.fallback,
        }
    }

    fn source_text(&self, span: &Span) -> &str {
        self.sources
            .texts
            .get(span.source.0 as usize)
            .and_then(|t| t.get(span.range.clone()))
            .unwrap_or("")
    }

    fn words(&self, arg: &Arg) -> Vec<LaunchWord> {
        match arg {
            Arg::Field(f) => vec![self.field(f)],
            Arg::Unknown(span) => vec![LaunchWord {
                text: self.source_text(span).to_owned(),
                value: Resolved::Unknown,
                range: self.span(span),
                written: self.span(span),
                exact: false,
                expanded: true,
                splat: true,
                parts: Vec::new(),
            }],
        }
    }

    fn field(&self, f: &Field) -> LaunchWord {
        let written = self.source_text(&f.word);
        let expanded = written.contains('$') || written.contains('`');
        let value = resolved(f);
        let text = match &value {
            Resolved::Literal(s) => s.clone(),
            Resolved::OneOf(v) => v.first().cloned().unwrap_or_default(),
            Resolved::Runtime { name, .. } => format!("${name}"),
            Resolved::Template { text, .. } => text.clone(),
            Resolved::Unknown => written.to_owned(),
        };
        // Point at the bytes the value came from when they are one run of one source.
        let origin = match f.choices.as_slice() {
            [pieces] => contiguous_origin(pieces),
            _ => None,
        };
        let written = self.span(&f.word);
        let range = origin.as_ref().map_or(written, |s| self.span(s));
        let exact = matches!(value, Resolved::Literal(_)) && range.slice(self.text) == text;
        let mut parts = Vec::new();
        if let [pieces] = f.choices.as_slice() {
            let mut at = 0;
            for p in pieces {
                if let Piece::Text { text: t, origin } = p {
                    if let Some(o) = origin {
                        let r = self.span(o);
                        if r.slice(self.text) == t.as_str() {
                            parts.push((at..at + t.len(), r));
                        }
                    }
                    at += t.len();
                } else {
                    break;
                }
            }
        }
        LaunchWord {
            text,
            value,
            range,
            written,
            exact,
            expanded,
            splat: false,
            parts,
        }
    }
}

/// The source range that all of `pieces` were taken from, when they are one contiguous run of
/// source bytes.
fn contiguous_origin(pieces: &[Piece]) -> Option<Span> {
    if let [Piece::Runtime { origin, .. }] = pieces {
        return Some(origin.clone());
    }
    let mut out: Option<Span> = None;
    for p in pieces {
        let Piece::Text {
            origin: Some(o), ..
        } = p
        else {
            return None;
        };
        out = match out {
            None => Some(o.clone()),
            Some(s) if s.source == o.source && s.range.end == o.range.start => Some(Span {
                source: s.source,
                range: s.range.start..o.range.end,
            }),
            Some(_) => return None,
        };
    }
    out
}

/// The value of a field.
fn resolved(f: &Field) -> Resolved {
    let one = |pieces: &[Piece]| -> Resolved {
        let mut text = String::new();
        let mut site: Option<Site> = None;
        let mut runtime_names = 0;
        let mut literal_len = 0;
        for p in pieces {
            match p {
                Piece::Text { text: t, .. } => {
                    text.push_str(t);
                    literal_len += t.len();
                }
                Piece::Runtime { name, site: s, .. } => {
                    text.push('$');
                    text.push_str(name);
                    runtime_names += 1;
                    site = Some(match site {
                        Some(Site::EachNode) => Site::EachNode,
                        _ => *s,
                    });
                }
                Piece::Unknown { .. } => return Resolved::Unknown,
            }
        }
        match site {
            None => Resolved::Literal(text),
            Some(site) if runtime_names == 1 && literal_len == 0 => Resolved::Runtime {
                name: text.trim_start_matches('$').to_owned(),
                site,
            },
            Some(site) => Resolved::Template { text, site },
        }
    };
    match f.choices.as_slice() {
        [pieces] => one(pieces),
        many => {
            let mut out: Vec<String> = Vec::new();
            for pieces in many {
                match one(pieces) {
                    Resolved::Literal(s) => {
                        if !out.contains(&s) {
                            out.push(s);
                        }
                    }
                    _ => return Resolved::Unknown,
                }
            }
            match out.len() {
                0 => Resolved::Unknown,
                1 => Resolved::Literal(out.remove(0)),
                _ => Resolved::OneOf(out),
            }
        }
    }
}

/// An `env:` entry as a word of the launched program's environment.
fn env_word(e: &EnvVar) -> LaunchWord {
    LaunchWord {
        text: e.value.to_string(),
        // Whether Fuzzball expands `$NAME` in `env:` values is not documented.
        value: if e.value.contains('$') || e.secret.is_some() {
            Resolved::Unknown
        } else {
            Resolved::Literal(e.value.to_string())
        },
        range: e.value_range,
        written: e.value_range,
        exact: true,
        expanded: false,
        splat: false,
        parts: Vec::new(),
    }
}

/// The files `task` ships, for the launches that read them.
fn shipped_files<'m>(model: &'m Fuzzfile, task: &'m Task) -> Vec<accelerate::ShippedFile<'m>> {
    task.files
        .iter()
        .filter_map(|f| {
            let content = match &f.source {
                FileSource::Inline(c) => c,
                FileSource::Ref(name) => &model.file(&name.value)?.content,
            };
            Some(accelerate::ShippedFile {
                path: f.path.value.as_str(),
                content: content.value.as_str(),
                node: content.node,
                range: content.range,
            })
        })
        .collect()
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

fn is_shell(prog: &str) -> bool {
    matches!(prog, "sh" | "bash" | "dash" | "zsh" | "ksh")
}

/// The environment a task's processes start with: `defaults.job.env`, overridden by name by
/// the task's own `env` (services do not inherit defaults).
///
/// Each name appears once, at the place of its last entry (what removing the earlier entry and
/// appending the later one would give); linear in the number of entries.
///
/// Also returns the model's `defaults.job.env` entries it reads (none for a service).
fn effective_env<'m>(model: &'m Fuzzfile, task: &Task) -> (&'m [EnvVar], TaskEnv) {
    let (defaults_of_model, defaults): (&[EnvVar], Arc<[EnvVar]>) = match &model.defaults {
        Some(d) if task.kind == TaskKind::Job => (&d.env, Arc::clone(&d.env)),
        _ => (&[], Arc::default()),
    };
    let own = Arc::clone(&task.env);
    let all = || defaults.iter().chain(own.iter());
    let mut last: HashMap<&str, usize> = HashMap::with_capacity(defaults.len() + own.len());
    for (i, e) in all().enumerate() {
        last.insert(e.name.as_str(), i);
    }
    let kept = (last.len() < defaults.len() + own.len()).then(|| {
        all()
            .enumerate()
            .filter(|(i, e)| last.get(e.name.as_str()) == Some(i))
            .filter_map(|(i, _)| u32::try_from(i).ok())
            .collect()
    });
    let env = TaskEnv {
        defaults,
        own,
        kept,
    };
    (defaults_of_model, env)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(src: &str) -> (crate::Analysis, usize) {
        let a = crate::analyze(src);
        let n = a.facts(&a.model.jobs[0]).launches.len();
        (a, n)
    }

    fn first(a: &crate::Analysis) -> &Launch {
        &a.facts(&a.model.jobs[0]).launches[0]
    }

    fn value<'a>(l: &'a Launch, name: &str) -> &'a Resolved {
        &l.setting(name).unwrap_or_else(|| panic!("no {name}")).value
    }

    fn lit(s: &str) -> Resolved {
        Resolved::Literal(s.into())
    }

    const HEAD: &str = "version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n";

    #[test]
    fn argv_torchrun_flags_and_world_size() {
        let (a, n) = facts(&format!("{HEAD}    command: [torchrun, --standalone, \"--nproc-per-node=8\", train.py, --lr, '1']\n"));
        assert_eq!(n, 1);
        let l = first(&a);
        let args = l.parsed.as_ref().unwrap();
        assert!(
            args.has("standalone") && !args.has("lr"),
            "script arguments are not torchrun's"
        );
        assert_eq!(args.script().unwrap().text, "train.py");
        let np = l.setting("nproc-per-node").unwrap();
        assert_eq!(np.value, lit("8"));
        assert_eq!(np.range.slice(&a.text), "8");
        assert_eq!(l.shape.world_size, Some(8));
        assert_eq!(l.shape.nnodes.as_ref().unwrap().from, CountFrom::Standalone);

        // PET_* stands in for an absent flag; `MIN:MAX` counts its maximum.
        let (a, _) = facts(&format!("{HEAD}    env: [NP=4, PET_NNODES=1:2]\n    command: [torchrun, --nproc-per-node, $NP, x.py]\n    resource: {{devices: {{nvidia.com/gpu: 4}}}}\n    multinode: {{nodes: 2, implementation: generic}}\n"));
        let l = first(&a);
        assert_eq!(value(l, "nnodes"), &lit("1:2"));
        assert!(l.setting("nnodes").unwrap().from_env);
        // No shell in a command list, and whether Fuzzball expands `$NP` there is not
        // documented: not known before the run.
        assert_eq!(value(l, "nproc-per-node"), &Resolved::Unknown);
        let (a, _) = facts(&format!("{HEAD}    command: [torchrun, --standalone, --nproc-per-node=gpu, x.py]\n    resource: {{devices: {{nvidia.com/gpu: 4}}}}\n"));
        assert_eq!(
            first(&a).shape.world_size,
            Some(4),
            "`gpu` is the GPUs per node"
        );
    }

    #[test]
    fn a_command_list_gets_multinode_variables_from_fuzzball_and_rank_from_exec_all() {
        let (a, _) = facts(&format!("{HEAD}    command: [exec_all, torchrun, --nnodes=2, --node-rank=$RANK, --master-addr=$MULTINODE_NODE_IP, x.py]\n    multinode: {{nodes: 2, implementation: generic}}\n"));
        let l = first(&a);
        assert!(l.exec_all.is_some());
        assert_eq!(
            value(l, "node-rank"),
            &Resolved::Runtime {
                name: "RANK".into(),
                site: Site::EachNode
            }
        );
        assert_eq!(
            value(l, "master-addr"),
            &Resolved::Runtime {
                name: "MULTINODE_NODE_IP".into(),
                site: Site::Head
            }
        );
    }

    #[test]
    fn script_words_are_expanded_where_the_shell_runs() {
        let src = format!("{HEAD}    script: |\n      #!/bin/bash\n      exec_all torchrun --nnodes 2 --node-rank '$RANK' --master-addr \"$MULTINODE_NODE_IP\" a.py\n      exec_all torchrun --nnodes 2 --node-rank \"$RANK\" --master-addr '$MULTINODE_NODE_IP' b.py\n      exec_all bash -c 'torchrun --nnodes 2 --node-rank $RANK --master-addr $MULTINODE_NODE_IP c.py'\n    multinode: {{nodes: 2, implementation: generic}}\n");
        let (a, n) = facts(&src);
        // The three torchruns, and the `exec_all bash -c` that starts the third.
        assert_eq!(n, 4, "{:?}", a.facts(&a.model.jobs[0]).launches);
        let ls: Vec<&Launch> = a
            .facts(&a.model.jobs[0])
            .distributed()
            .map(|(l, _)| l)
            .collect();
        let rt = |name: &str, site| Resolved::Runtime {
            name: name.into(),
            site,
        };
        assert_eq!(value(ls[0], "node-rank"), &rt("RANK", Site::EachNode));
        assert_eq!(
            value(ls[0], "master-addr"),
            &rt("MULTINODE_NODE_IP", Site::Head)
        );
        assert_eq!(value(ls[1], "node-rank"), &rt("RANK", Site::Head));
        assert_eq!(value(ls[1], "master-addr"), &lit("$MULTINODE_NODE_IP"));
        assert_eq!(value(ls[2], "node-rank"), &rt("RANK", Site::EachNode));
        assert_eq!(
            value(ls[2], "master-addr"),
            &rt("MULTINODE_NODE_IP", Site::EachNode)
        );
        assert!(
            ls[2].exec_all.is_some(),
            "the shell exec_all starts runs on each node"
        );
        assert_eq!(
            ls[1].setting("node-rank").unwrap().written.slice(&a.text),
            "\"$RANK\""
        );
    }

    #[test]
    fn flags_through_strings_arrays_defaults_and_eval() {
        // Megatron-LM's shape: flags in a string, split by the shell.
        let (a, _) = facts(&format!("{HEAD}    env: [GPUS=4]\n    script: |\n      DISTRIBUTED_ARGS=\"--nproc_per_node $GPUS --nnodes 1\"\n      torchrun $DISTRIBUTED_ARGS pretrain_gpt.py --tp 2\n"));
        let l = first(&a);
        assert_eq!(value(l, "nproc-per-node"), &lit("4"));
        assert_eq!(value(l, "nnodes"), &lit("1"));
        assert_eq!(
            l.setting("nnodes").unwrap().range.slice(&a.text),
            "1",
            "points into the string"
        );
        assert_eq!(
            l.parsed.as_ref().unwrap().script().unwrap().text,
            "pretrain_gpt.py"
        );
        // An array.
        let (a, _) = facts(&format!("{HEAD}    script: |\n      ARGS=(--nproc-per-node 8)\n      ARGS+=(--nnodes 1)\n      torchrun \"${{ARGS[@]}}\" x.py\n"));
        assert_eq!(value(first(&a), "nproc-per-node"), &lit("8"));
        assert_eq!(value(first(&a), "nnodes"), &lit("1"));
        // A default, overridden by `env`.
        let (a, _) = facts(&format!("{HEAD}    env: [NGPU=2]\n    script: |\n      NGPU=${{NGPU:-8}}\n      torchrun --nproc_per_node=${{NGPU}} x.py\n"));
        assert_eq!(value(first(&a), "nproc-per-node"), &lit("2"));
        // eval of a known string; bash -c with positional parameters.
        let (a, _) = facts(&format!("{HEAD}    script: |\n      CMD=\"torchrun --nproc-per-node 4 x.py\"\n      eval \"$CMD\"\n      bash -c 'torchrun --nproc-per-node \"$1\" y.py' arg0 2\n"));
        let ls = &a.facts(&a.model.jobs[0]).launches;
        assert_eq!(ls.len(), 2, "{ls:?}");
        assert_eq!(value(&ls[0], "nproc-per-node"), &lit("4"));
        assert_eq!(value(&ls[1], "nproc-per-node"), &lit("2"));
    }

    #[test]
    fn unknown_words_make_the_parse_incomplete() {
        let (a, _) = facts(&format!(
            "{HEAD}    script: |\n      torchrun $EXTRA --nnodes 1 x.py\n"
        ));
        let l = first(&a);
        let args = l.parsed.as_ref().unwrap();
        assert!(args.incomplete);
        assert!(l.setting("nproc-per-node").is_none());
        assert_eq!(
            l.shape.nproc_per_node, None,
            "no default when a word may give the flag"
        );
        assert_eq!(value(l, "nnodes"), &lit("1"));
    }

    #[test]
    fn branches_give_one_of_several_values() {
        let (a, _) = facts(&format!("{HEAD}    script: |\n      if [ -n \"$BIG\" ]; then NP=8; else NP=4; fi\n      torchrun --nproc-per-node $NP x.py\n"));
        match value(first(&a), "nproc-per-node") {
            Resolved::OneOf(v) => {
                let mut v = v.clone();
                v.sort();
                assert_eq!(v, ["4", "8"]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn shipped_files_the_script_runs() {
        let (a, n) = facts(&format!("{HEAD}    script: |\n      bash /opt/launch.sh 4\n    files:\n      /opt/launch.sh: |\n        torchrun --nproc-per-node \"$1\" train.py\n"));
        assert_eq!(n, 1);
        let l = first(&a);
        assert_eq!(l.origin, Origin::File);
        assert_eq!(value(l, "nproc-per-node"), &lit("4"));
    }

    #[test]
    fn each_invocation_sees_the_assignments_before_it() {
        let (a, _) = facts(&format!("{HEAD}    env: [NP=1]\n    script: |\n      torchrun --nproc-per-node $NP a.py\n      NP=2\n      NP=4\n      torchrun --nproc-per-node $NP b.py\n      NP=8\n      OTHER=1\n      torchrun --nproc-per-node $NP c.py\n"));
        let nps: Vec<Resolved> = a
            .facts(&a.model.jobs[0])
            .launches
            .iter()
            .map(|l| value(l, "nproc-per-node").clone())
            .collect();
        assert_eq!(nps, [lit("1"), lit("4"), lit("8")]);
    }

    #[test]
    fn effective_env_keeps_each_name_at_its_last_entry() {
        let a = crate::analyze("version: v4\ndefaults:\n  job:\n    env: [A=d, B=d, C=d]\njobs:\n  t:\n    image: {uri: docker://x:1}\n    command: [x]\n    env: [B=1, D=1, A=2, B=3]\n");
        let env: Vec<(&str, &str)> = a
            .facts(&a.model.jobs[0])
            .env
            .iter()
            .map(|e| (e.name.as_str(), e.value.as_str()))
            .collect();
        // What removing the earlier entry and appending the later one gives.
        assert_eq!(env, [("C", "d"), ("D", "1"), ("A", "2"), ("B", "3")]);
    }

    #[test]
    fn effective_env_shares_the_models_entries() {
        let a = crate::analyze("version: v4\ndefaults:\n  job:\n    env: [A=d, B=d]\njobs:\n  t:\n    image: {uri: docker://x:1}\n    command: [x]\n    env: [C=1]\nservices:\n  s:\n    image: {uri: docker://x:1}\n    command: [x]\n    env: [A=s]\n");
        let job = &a.model.jobs[0];
        let defaults = &a.model.defaults.as_ref().expect("defaults").env;
        let env: Vec<&EnvVar> = a.facts(job).env.iter().collect();
        assert_eq!(env.len(), 3);
        assert!(std::ptr::eq(env[0], &defaults[0]));
        assert!(std::ptr::eq(env[1], &defaults[1]));
        assert!(std::ptr::eq(env[2], &job.env[0]));
        // A service does not inherit `defaults.job.env`.
        let service = &a.model.services[0];
        let env: Vec<&EnvVar> = a.facts(service).env.iter().collect();
        assert_eq!(env.len(), 1);
        assert!(std::ptr::eq(env[0], &service.env[0]));
        assert_eq!(a.facts(service).env.len(), 1);
    }

    #[test]
    fn mpirun_flags_and_slots() {
        let (a, _) = facts(&format!("{HEAD}    command: [mpirun, -H, $MULTINODE_HOSTLIST, --mca, plm_rsh_agent, $MULTINODE_SSH_WRAPPER, -np, $MULTINODE_TOTAL_SLOTS, all_reduce_perf, -g, '1']\n    resource: {{cpu: {{cores: 4}}}}\n    multinode: {{nodes: 2, implementation: generic}}\n"));
        let l = first(&a);
        let m = l.parsed.as_ref().unwrap();
        assert_eq!(m.program[0].text, "all_reduce_perf");
        let np = l.shape.np.as_ref().unwrap();
        assert_eq!(np.value, Some(8), "nodes × cores");
        assert_eq!(np.from, CountFrom::TotalSlots { explicit: true });
    }

    #[test]
    fn command_words_expand_only_fuzzballs_variables() {
        let mut un = std::collections::BTreeSet::new();
        let known = |n: &str| match n {
            "MULTINODE_HOSTLIST" => Some(Some("a:4,b:4".to_owned())),
            "MULTINODE_NODE_IP" => Some(None),
            _ => None,
        };
        for (word, expanded) in [
            ("-H=$MULTINODE_HOSTLIST", "-H=a:4,b:4"),
            ("${MULTINODE_HOSTLIST}x", "a:4,b:4x"),
            ("$HOME/$RANK", "$HOME/$RANK"),
            ("$MULTINODE_NODE_IP:1", "$MULTINODE_NODE_IP:1"),
        ] {
            assert_eq!(
                expand_command_word(word, &known, &mut un),
                expanded,
                "{word}"
            );
        }
        assert_eq!(un.into_iter().collect::<Vec<_>>(), ["MULTINODE_NODE_IP"]);
    }

    #[test]
    fn evaluations_are_reused_only_for_the_same_inputs() {
        let cache = EvaluationCache::default();
        let options = crate::Options {
            evaluations: Some(cache.clone()),
            ..Default::default()
        };
        let job = |env: &str, prefix: &str| {
            format!("{prefix}version: v4\njobs:\n  t:\n    image: {{uri: docker://x:1}}\n    env: [NP={env}]\n    script: |\n      torchrun --standalone --nproc-per-node $NP x.py\n")
        };
        let fresh = crate::analyze(&job("4", ""));
        let first = crate::analyze_with(&job("4", ""), &options);
        assert_eq!(cache.hits(), 0);
        // The same job moved down by a comment: the evaluation is reused, the ranges are the
        // new ones.
        let moved = crate::analyze_with(&job("4", "# a comment\n"), &options);
        assert_eq!(cache.hits(), 1);
        let np = |a: &crate::Analysis| {
            let l = &a.facts(&a.model.jobs[0]).launches[0];
            let s = l.setting("nproc-per-node").expect("nproc");
            (
                s.value.clone(),
                s.written.slice(&a.text).to_owned(),
                s.written.start,
            )
        };
        assert_eq!(np(&first), np(&fresh));
        assert_eq!(np(&moved).0, np(&first).0);
        assert_eq!(np(&moved).1, "$NP");
        assert_eq!(np(&moved).2, np(&first).2 + "# a comment\n".len() as u32);
        // Another value of the job's env is another evaluation.
        let other = crate::analyze_with(&job("8", ""), &options);
        assert_eq!(cache.hits(), 1);
        assert_eq!(np(&other).0, Resolved::Literal("8".into()));
    }
}
