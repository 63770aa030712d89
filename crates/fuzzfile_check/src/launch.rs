//! Launcher analysis: every launcher invocation of a job, wherever it is written, with its
//! arguments parsed the way the launcher parses them and every word's range in the Fuzzfile.
//!
//! Sources: a YAML list `command:` (each item is a word), a shell string run by
//! `[/bin/sh, -c, "..."]` (any style of scalar: the offset map places words inside quoted,
//! folded and literal scalars), and `script:` bodies. Shell text is parsed by
//! `fuzzfile_shell`; rules never re-parse it.

use fuzzfile_diagnostics::TextRange;
use fuzzfile_model::{EnvVar, Fuzzfile, Implementation, Task};
use fuzzfile_syntax::{NodeId, Tree};

/// A word of a command line, placed in the Fuzzfile.
#[derive(Clone, Debug)]
pub struct FileWord {
    /// Value with quoting removed, expansions kept as written (`$RANK`).
    pub text: String,
    /// Range in the Fuzzfile.
    pub range: TextRange,
    /// Contains `$...` that a shell expands.
    pub dynamic: bool,
    pub single_quoted: bool,
    /// The source bytes at `range` are exactly `text` (so sub-ranges can be computed).
    pub exact: bool,
}

impl FileWord {
    /// The range of `text[start..]` in the file, when the word is exact; else the whole word.
    pub fn tail_range(&self, start: usize) -> TextRange {
        if self.exact && start <= self.text.len() {
            TextRange::new(self.range.start + start as u32, self.range.end)
        } else {
            self.range
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Launcher {
    /// `torchrun`, or `python -m torch.distributed.run`.
    Torchrun,
    /// `python -m torch.distributed.launch` (deprecated).
    DistributedLaunch,
    /// `mpirun`, `mpiexec`, `mpiexec.hydra`, `orterun`.
    Mpirun,
    /// Fuzzball's generic multinode helper: runs the rest once per node with `RANK` set.
    ExecAll,
    Srun,
    Deepspeed,
}

impl Launcher {
    pub fn name(self) -> &'static str {
        match self {
            Launcher::Torchrun => "torchrun",
            Launcher::DistributedLaunch => "torch.distributed.launch",
            Launcher::Mpirun => "mpirun",
            Launcher::ExecAll => "exec_all",
            Launcher::Srun => "srun",
            Launcher::Deepspeed => "deepspeed",
        }
    }
}

/// Where a command line was written.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Origin {
    /// The YAML list `command:`.
    Argv,
    /// A `sh -c` string inside `command:`.
    ShellString,
    Script,
    /// A file the job ships (`files:`) and runs or sources.
    File,
}

/// One launcher invocation.
#[derive(Clone, Debug)]
pub struct Invocation {
    pub launcher: Launcher,
    /// The launcher word (for `python -m torch.distributed.run`: `python`) and everything after.
    pub words: Vec<FileWord>,
    /// Index in `words` of the first argument (after `-m torch.distributed.run` for python).
    pub args_start: usize,
    /// The `exec_all` word this invocation runs under, if any.
    pub exec_all: Option<TextRange>,
    /// `NAME=value` written before the command (`NCCL_DEBUG=INFO torchrun ...`).
    pub inline_env: Vec<(String, String)>,
    pub origin: Origin,
    /// Shell variables assigned as statements before this command (`NPROC=4`).
    pub shell_vars: ShellVars,
}

/// The shell variables assigned as statements of a script, shared by its invocations: each
/// invocation sees those assigned before it. Built once per script and looked up by binary
/// search, so a script of many assignments and commands costs linear time (it cost one map of
/// every earlier assignment per command).
#[derive(Clone, Debug, Default)]
pub struct ShellVars {
    /// Each name's assignments: (byte offset in the shell text, value), in order.
    by_name: std::sync::Arc<std::collections::HashMap<String, Vec<(usize, String)>>>,
    /// This invocation's command starts here.
    before: usize,
}

impl ShellVars {
    /// The value last assigned to `name` before the command.
    pub fn get(&self, name: &str) -> Option<&str> {
        let assigned = self.by_name.get(name)?;
        let i = assigned.partition_point(|(at, _)| *at < self.before);
        i.checked_sub(1).map(|i| assigned[i].1.as_str())
    }
}

impl Invocation {
    pub fn range(&self) -> TextRange {
        self.words.first().map_or(TextRange::default(), |w| w.range)
    }
    pub fn args(&self) -> &[FileWord] {
        self.words.get(self.args_start..).unwrap_or(&[])
    }
}

/// A parsed `--flag` of a launcher.
#[derive(Clone, Debug)]
pub struct Flag {
    /// Normalised: no leading dashes, `_` as `-` (`nproc-per-node`).
    pub name: String,
    /// The flag word (for `--x=y`, the whole word).
    pub flag_range: TextRange,
    pub value: Option<FlagValue>,
}

#[derive(Clone, Debug)]
pub struct FlagValue {
    pub text: String,
    pub range: TextRange,
    pub dynamic: bool,
    pub single_quoted: bool,
}

impl FlagValue {
    /// The value of `--name=value` written in one word.
    fn inline(w: &FileWord, name_part: &str, value: &str) -> FlagValue {
        FlagValue {
            text: value.to_owned(),
            range: w.tail_range(name_part.len() + 1),
            dynamic: w.dynamic,
            single_quoted: w.single_quoted,
        }
    }
    /// A value written as a word of its own.
    fn word(w: &FileWord) -> FlagValue {
        FlagValue {
            text: w.text.clone(),
            range: w.range,
            dynamic: w.dynamic,
            single_quoted: w.single_quoted,
        }
    }
}

/// `--name=value` → (`--name`, `Some("value")`); anything else → (the word, `None`).
fn split_inline(w: &FileWord) -> (&str, Option<&str>) {
    match w.text.split_once('=') {
        Some((n, v)) if w.text.starts_with("--") => (n, Some(v)),
        _ => (w.text.as_str(), None),
    }
}

/// torchrun's command line: its own flags, then the script and the script's arguments.
#[derive(Clone, Debug, Default)]
pub struct TorchrunArgs {
    pub flags: Vec<Flag>,
    /// The training script or module (first positional).
    pub script: Option<FileWord>,
}

impl TorchrunArgs {
    pub fn get(&self, name: &str) -> Option<&Flag> {
        self.flags.iter().rev().find(|f| f.name == name)
    }
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
}

/// torchrun flags that take a value (run.py); every other flag is a switch.
const TORCHRUN_VALUE_FLAGS: &[&str] = &[
    "nnodes",
    "nproc-per-node",
    "rdzv-backend",
    "rdzv-endpoint",
    "rdzv-id",
    "rdzv-conf",
    "max-restarts",
    "monitor-interval",
    "start-method",
    "role",
    "event-log-handler",
    "logs-specs",
    "numa-binding",
    "signals-to-handle",
    "log-dir",
    "log-dir",
    "r",
    "redirects",
    "t",
    "tee",
    "local-ranks-filter",
    "node-rank",
    "master-addr",
    "master-port",
    "local-addr",
    "local-rank",
    "nproc_per_node",
];

fn normalise(flag: &str) -> String {
    flag.trim_start_matches('-').replace('_', "-")
}

/// Parse torchrun's (or torch.distributed.launch's) arguments.
pub fn torchrun_args(inv: &Invocation) -> TorchrunArgs {
    let mut out = TorchrunArgs::default();
    let args = inv.args();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if !w.text.starts_with('-') || w.text == "-" {
            out.script = Some(w.clone());
            break;
        }
        if w.text == "--" {
            out.script = args.get(i + 1).cloned();
            break;
        }
        let (name_part, inline) = split_inline(w);
        let name = normalise(name_part);
        if name == "m" || name == "module" {
            // `-m pkg.train`: the module is the program.
            out.flags.push(Flag {
                name: "module".into(),
                flag_range: w.range,
                value: None,
            });
            out.script = args.get(i + 1).cloned();
            break;
        }
        let takes_value = TORCHRUN_VALUE_FLAGS.contains(&name.as_str());
        let value = match inline {
            Some(v) => Some(FlagValue::inline(w, name_part, v)),
            None if takes_value => {
                i += 1;
                args.get(i).map(FlagValue::word)
            }
            None => None,
        };
        out.flags.push(Flag {
            name,
            flag_range: w.range,
            value,
        });
        i += 1;
    }
    out
}

/// mpirun's command line.
#[derive(Clone, Debug, Default)]
pub struct MpirunArgs {
    pub flags: Vec<Flag>,
    /// The program and its arguments.
    pub program: Vec<FileWord>,
}

impl MpirunArgs {
    pub fn get(&self, names: &[&str]) -> Option<&Flag> {
        self.flags.iter().find(|f| names.contains(&f.name.as_str()))
    }
}

/// Open MPI and MPICH (Hydra) flags that take one value; `--mca`, `-genv`, `-env` take two.
const MPI_VALUE_FLAGS: &[&str] = &[
    "np",
    "n",
    "c",
    "H",
    "host",
    "hosts",
    "hostfile",
    "machinefile",
    "f",
    "map-by",
    "bind-to",
    "rank-by",
    "x",
    "prefix",
    "wdir",
    "npernode",
    "N",
    "ppn",
    "launcher",
    "launcher-exec",
    "bootstrap",
    "bootstrap-exec",
    "iface",
    "genvlist",
    "envlist",
    "rankfile",
    "report-bindings-file",
    "output-filename",
    "timeout",
    "mca-param-file",
    "tune",
    "pernode-np",
];
const MPI_TWO_VALUE_FLAGS: &[&str] = &["mca", "gmca", "genv", "env", "prtemca"];

pub fn mpirun_args(inv: &Invocation) -> MpirunArgs {
    let mut out = MpirunArgs::default();
    let args = inv.args();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if !w.text.starts_with('-') {
            out.program = args[i..].to_vec();
            break;
        }
        let (name_part, inline) = split_inline(w);
        let name = name_part.trim_start_matches('-').to_owned();
        let value = if let Some(v) = inline {
            Some(FlagValue::inline(w, name_part, v))
        } else if MPI_TWO_VALUE_FLAGS.contains(&name.as_str()) {
            let k = args.get(i + 1);
            let v = args.get(i + 2);
            i += 2;
            match (k, v) {
                (Some(k), Some(v)) => Some(FlagValue {
                    text: format!("{} {}", k.text, v.text),
                    range: k.range.cover(v.range),
                    dynamic: k.dynamic || v.dynamic,
                    single_quoted: false,
                }),
                (Some(k), None) => Some(FlagValue {
                    text: k.text.clone(),
                    range: k.range,
                    dynamic: k.dynamic,
                    single_quoted: false,
                }),
                _ => None,
            }
        } else if MPI_VALUE_FLAGS.contains(&name.as_str()) {
            i += 1;
            args.get(i).map(FlagValue::word)
        } else {
            None
        };
        out.flags.push(Flag {
            name,
            flag_range: w.range,
            value,
        });
        i += 1;
    }
    out
}

/// Variables Fuzzball sets in every container (`FB_*`) and, for `generic` multinode jobs, the
/// `MULTINODE_*` set; `RANK` is set by `exec_all` on each node.
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

/// The environment a task's processes start with: `defaults.job.env`, overridden by name by
/// the task's own `env` (services do not inherit defaults).
///
/// Each name appears once, at the place of its last entry (what removing the earlier entry and
/// appending the later one would give); linear in the number of entries.
pub fn effective_env<'m>(model: &'m Fuzzfile, task: &'m Task) -> Vec<&'m EnvVar> {
    let defaults: &[EnvVar] = match &model.defaults {
        Some(d) if task.kind == fuzzfile_model::TaskKind::Job => &d.env,
        _ => &[],
    };
    let all = || defaults.iter().chain(&task.env);
    let mut last: std::collections::HashMap<&str, usize> =
        std::collections::HashMap::with_capacity(defaults.len() + task.env.len());
    for (i, e) in all().enumerate() {
        last.insert(e.name.as_str(), i);
    }
    all()
        .enumerate()
        .filter(|(i, e)| last.get(e.name.as_str()) == Some(i))
        .map(|(_, e)| e)
        .collect()
}

/// The value of a word after variable resolution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved {
    /// Known statically.
    Literal(String),
    /// A variable Fuzzball sets at run time (`$RANK`, `$MULTINODE_NODE_IP`).
    Runtime(String),
    /// Depends on something unknown here (an unset variable, `$(...)`).
    Unknown,
}

/// Resolve `$VAR` / `${VAR}` in `text` from the invocation's inline env, the shell variables
/// assigned before it and the task's env. A whole-word Fuzzball variable is `Runtime`.
pub fn resolve(text: &str, inv: &Invocation, env: &[&EnvVar]) -> Resolved {
    if !text.contains('$') {
        return Resolved::Literal(text.to_owned());
    }
    let mut out = String::new();
    let mut rest = text;
    let mut runtime: Option<String> = None;
    let mut parts = 0;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        if !rest[..i].is_empty() {
            parts += 1;
        }
        let after = &rest[i + 1..];
        let (name, consumed) = if let Some(inner) = after.strip_prefix('{') {
            match inner.find('}') {
                Some(end)
                    if inner[..end]
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    (&inner[..end], end + 2)
                }
                _ => return Resolved::Unknown,
            }
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            (&after[..end], end)
        };
        if name.is_empty() {
            return Resolved::Unknown;
        }
        parts += 1;
        let value = inv
            .inline_env
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .or_else(|| inv.shell_vars.get(name).map(str::to_owned))
            .or_else(|| {
                env.iter()
                    .rev()
                    .find(|e| e.name == name)
                    .map(|e| e.value.clone())
            });
        match value {
            Some(v) if !v.contains('$') => out.push_str(&v),
            Some(_) => return Resolved::Unknown,
            None if PROVIDED_VARIABLES.contains(&name) => {
                runtime = Some(name.to_owned());
                out.push_str(&format!("${name}"));
            }
            None => return Resolved::Unknown,
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    if !rest.is_empty() {
        parts += 1;
    }
    match runtime {
        Some(name) if parts == 1 => Resolved::Runtime(name),
        Some(_) => Resolved::Unknown,
        None => Resolved::Literal(out),
    }
}

/// Every launcher invocation of `task`.
pub fn invocations(text: &str, tree: &Tree, task: &Task) -> Vec<Invocation> {
    let mut out = Vec::new();
    if let Some(cmd) = &task.command {
        let argv: Vec<FileWord> = cmd
            .value
            .iter()
            .map(|w| scalar_word(text, tree, &w.value, w.node, w.range))
            .collect();
        // [/bin/sh, -c, "..."]: the string is shell text.
        let prog = argv.first().map(|w| basename(&w.text)).unwrap_or("");
        let shell = matches!(prog, "sh" | "bash" | "dash" | "zsh" | "ksh");
        let c_index = argv.iter().position(|w| {
            w.text.starts_with('-') && !w.text.starts_with("--") && w.text.contains('c')
        });
        match (shell, c_index) {
            (true, Some(ci)) if ci + 1 < cmd.value.len() => {
                let item = &cmd.value[ci + 1];
                shell_invocations(
                    text,
                    tree,
                    &item.value,
                    item.node,
                    Origin::ShellString,
                    &mut out,
                );
            }
            _ => {
                if let Some(inv) = from_words(argv, Vec::new(), Origin::Argv, ShellVars::default())
                {
                    out.push(inv);
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
            shell_invocations(
                text,
                tree,
                &script.value,
                script.node,
                Origin::Script,
                &mut out,
            );
        }
    }
    out
}

fn basename(s: &str) -> &str {
    s.rsplit('/').next().unwrap_or(s)
}

/// A YAML scalar as a word.
fn scalar_word(text: &str, tree: &Tree, value: &str, node: NodeId, range: TextRange) -> FileWord {
    let (range, exact) = match tree.scalar(node) {
        Some(s) if s.map.is_exact() => {
            let r = s.map.range_to_source(0..value.len());
            (r, r.slice(text) == value)
        }
        _ => (range, false),
    };
    FileWord {
        text: value.to_owned(),
        range,
        dynamic: value.contains('$'),
        single_quoted: false,
        exact,
    }
}

/// Words that start every launcher this module recognises: shell text without any of them has
/// no invocation, and is not parsed.
const LAUNCHER_WORDS: &[&str] = &[
    "torchrun",
    "torch.distributed",
    "mpirun",
    "mpiexec",
    "orterun",
    "srun",
    "deepspeed",
    "exec_all",
];

fn shell_invocations(
    text: &str,
    tree: &Tree,
    shell: &str,
    node: NodeId,
    origin: Origin,
    out: &mut Vec<Invocation>,
) {
    if !LAUNCHER_WORDS.iter().any(|w| shell.contains(w)) {
        return;
    }
    let parsed = fuzzfile_shell::parse(shell);
    let map = tree.scalar(node).map(|s| &s.map);
    let to_file = |r: std::ops::Range<usize>| -> TextRange {
        match map {
            Some(m) if m.is_exact() => m.range_to_source(r),
            _ => tree.node(node).range,
        }
    };
    let mut by_name: std::collections::HashMap<String, Vec<(usize, String)>> =
        std::collections::HashMap::new();
    for a in &parsed.assignments {
        by_name
            .entry(a.name.clone())
            .or_default()
            .push((a.range.start, a.value.clone()));
    }
    for v in by_name.values_mut() {
        v.sort_by_key(|(at, _)| *at);
    }
    let assigned = std::sync::Arc::new(by_name);
    for c in &parsed.commands {
        let words: Vec<FileWord> = c
            .words
            .iter()
            .map(|w| {
                let range = to_file(w.range.clone());
                let exact = range.slice(text) == w.text;
                FileWord {
                    text: w.text.clone(),
                    range,
                    dynamic: w.dynamic,
                    single_quoted: w.single_quoted,
                    exact,
                }
            })
            .collect();
        let inline: Vec<(String, String)> = c
            .assignments
            .iter()
            .map(|a| (a.name.clone(), a.value.clone()))
            .collect();
        let vars = ShellVars {
            by_name: std::sync::Arc::clone(&assigned),
            before: c.range.start,
        };
        if let Some(inv) = from_words(words, inline, origin, vars) {
            out.push(inv);
        }
    }
}

/// Recognise a launcher in a command line, after wrappers such as `exec`, `env`, `nohup`,
/// `time` and `exec_all`.
fn from_words(
    words: Vec<FileWord>,
    mut inline_env: Vec<(String, String)>,
    origin: Origin,
    shell_vars: ShellVars,
) -> Option<Invocation> {
    let mut i = 0;
    let mut exec_all = None;
    while i < words.len() {
        let w = basename(&words[i].text);
        match w {
            "exec" | "nohup" | "time" | "command" => i += 1,
            "env" => {
                i += 1;
                while i < words.len()
                    && (words[i].text.starts_with('-') || words[i].text.contains('='))
                {
                    if let Some((n, v)) = words[i].text.split_once('=') {
                        if !words[i].text.starts_with('-') {
                            inline_env.push((n.to_owned(), v.to_owned()));
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
            "exec_all" => {
                if exec_all.is_none() {
                    exec_all = Some(words[i].range);
                }
                i += 1;
            }
            _ => break,
        }
    }
    let rest = &words[i.min(words.len())..];
    let first = rest.first().map(|w| basename(&w.text)).unwrap_or("");
    let (launcher, args_start) = match first {
        "torchrun" => (Launcher::Torchrun, 1),
        "mpirun" | "mpiexec" | "mpiexec.hydra" | "orterun" => (Launcher::Mpirun, 1),
        "srun" => (Launcher::Srun, 1),
        "deepspeed" => (Launcher::Deepspeed, 1),
        p if p.starts_with("python") => {
            // python [-u ...] -m torch.distributed.run|launch
            let mut j = 1;
            while j < rest.len() && rest[j].text.starts_with('-') && rest[j].text != "-m" {
                j += 1;
            }
            match (
                rest.get(j).map(|w| w.text.as_str()),
                rest.get(j + 1).map(|w| w.text.as_str()),
            ) {
                (Some("-m"), Some("torch.distributed.run")) => (Launcher::Torchrun, j + 2),
                (Some("-m"), Some("torch.distributed.launch")) => {
                    (Launcher::DistributedLaunch, j + 2)
                }
                _ => {
                    return exec_all_only(exec_all, &words[i..], inline_env, origin, shell_vars);
                }
            }
        }
        _ => {
            return exec_all_only(exec_all, &words[i..], inline_env, origin, shell_vars);
        }
    };
    Some(Invocation {
        launcher,
        words: rest.to_vec(),
        args_start,
        exec_all,
        inline_env,
        origin,
        shell_vars,
    })
}

/// A command line behind `exec_all` that starts no recognised launcher (`exec_all hostname`).
fn exec_all_only(
    exec_all: Option<TextRange>,
    words: &[FileWord],
    inline_env: Vec<(String, String)>,
    origin: Origin,
    shell_vars: ShellVars,
) -> Option<Invocation> {
    exec_all.map(|r| Invocation {
        launcher: Launcher::ExecAll,
        words: words.to_vec(),
        args_start: 0,
        exec_all: Some(r),
        inline_env,
        origin,
        shell_vars,
    })
}

/// Whether the task runs with Fuzzball's own MPI/GASNet wrapper around its command.
pub fn wrapped_by_fuzzball(task: &Task) -> Option<Implementation> {
    task.multinode
        .as_ref()
        .and_then(|m| m.implementation.as_ref())
        .map(|i| i.value)
        .filter(|i| i.wraps_command())
}

/// GPUs requested per node (`resource.devices["nvidia.com/gpu"]`, job first, then defaults).
pub fn gpus_per_node(model: &Fuzzfile, task: &Task) -> Option<(u64, TextRange)> {
    let own = task
        .resource
        .as_ref()
        .and_then(|r| r.device("nvidia.com/gpu"));
    let def = || {
        if task.kind == fuzzfile_model::TaskKind::Job {
            model
                .defaults
                .as_ref()
                .and_then(|d| d.resource.as_ref())
                .and_then(|r| r.device("nvidia.com/gpu"))
        } else {
            None
        }
    };
    own.or_else(def).map(|s| (s.value, s.range))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyse(src: &str) -> (String, Vec<Invocation>, crate::Analysis) {
        let a = crate::analyze(src);
        let task = a.model.jobs.first().expect("a job").clone();
        let inv = invocations(&a.text, &a.tree, &task);
        (a.text.clone(), inv, a)
    }

    #[test]
    fn argv_torchrun() {
        let (text, inv, _) = analyse("version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    command: [torchrun, --standalone, \"--nproc-per-node=8\", train.py, --lr, '1']\n");
        assert_eq!(inv.len(), 1);
        let args = torchrun_args(&inv[0]);
        let np = args.get("nproc-per-node").unwrap().value.as_ref().unwrap();
        assert_eq!(np.text, "8");
        assert_eq!(np.range.slice(&text), "8");
        assert!(args.has("standalone"));
        assert_eq!(args.script.as_ref().unwrap().text, "train.py");
        assert!(!args.has("lr"), "script arguments are not torchrun's");
    }

    #[test]
    fn folded_shell_string_and_exec_all_script() {
        let src = "version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    env: [NP=4]\n    command:\n      - /bin/sh\n      - -c\n      - >-\n        cd /w &&\n        python3 -m torch.distributed.run\n        --nproc_per_node $NP x.py\n";
        let (text, inv, a) = analyse(src);
        assert_eq!(inv.len(), 1, "{inv:?}");
        assert_eq!(inv[0].launcher, Launcher::Torchrun);
        let args = torchrun_args(&inv[0]);
        let np = args.get("nproc-per-node").unwrap().value.clone().unwrap();
        assert_eq!(np.range.slice(&text), "$NP");
        let env = effective_env(&a.model, &a.model.jobs[0]);
        assert_eq!(
            resolve(&np.text, &inv[0], &env),
            Resolved::Literal("4".into())
        );

        let src = "version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    script: |\n      #!/bin/bash\n      N=2\n      exec_all torchrun \\\n        --nnodes $N --node-rank '$RANK' \\\n        --master-addr \"$MULTINODE_NODE_IP\" x.py\n";
        let (text, inv, a) = analyse(src);
        assert_eq!(inv.len(), 1);
        assert!(inv[0].exec_all.is_some());
        let args = torchrun_args(&inv[0]);
        let env = effective_env(&a.model, &a.model.jobs[0]);
        let nn = args.get("nnodes").unwrap().value.clone().unwrap();
        assert_eq!(
            resolve(&nn.text, &inv[0], &env),
            Resolved::Literal("2".into())
        );
        let rank = args.get("node-rank").unwrap().value.clone().unwrap();
        assert_eq!(rank.range.slice(&text), "'$RANK'");
        assert_eq!(
            resolve(&rank.text, &inv[0], &env),
            Resolved::Runtime("RANK".into())
        );
    }

    #[test]
    fn each_invocation_sees_the_assignments_before_it() {
        let src = "version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    env: [NP=1]\n    script: |\n      torchrun --nproc-per-node $NP a.py\n      NP=2\n      NP=4\n      torchrun --nproc-per-node $NP b.py\n      NP=8\n      OTHER=1\n      torchrun --nproc-per-node $NP c.py\n";
        let (_, inv, a) = analyse(src);
        let env = effective_env(&a.model, &a.model.jobs[0]);
        let nps: Vec<Resolved> = inv
            .iter()
            .map(|i| {
                let args = torchrun_args(i);
                let np = args.get("nproc-per-node").unwrap().value.clone().unwrap();
                resolve(&np.text, i, &env)
            })
            .collect();
        assert_eq!(
            nps,
            ["1", "4", "8"]
                .map(|v| Resolved::Literal(v.into()))
                .to_vec()
        );
    }

    /// The cost bound of the variable lookup: one index per script, shared by all its
    /// invocations (a copy per command was quadratic in the script's length).
    #[test]
    fn invocations_of_one_script_share_one_variable_index() {
        let mut script = String::new();
        for i in 0..50 {
            script.push_str(&format!(
                "      NP={i}\n      torchrun --nproc-per-node $NP x.py\n"
            ));
        }
        let src = format!(
            "version: v4\njobs:\n  t:\n    image: {{uri: docker://x:1}}\n    script: |\n{script}"
        );
        let (_, inv, a) = analyse(&src);
        assert_eq!(inv.len(), 50);
        assert!(inv
            .windows(2)
            .all(|w| std::sync::Arc::ptr_eq(&w[0].shell_vars.by_name, &w[1].shell_vars.by_name)));
        assert_eq!(inv[0].shell_vars.by_name.get("NP").map(Vec::len), Some(50));
        let env = effective_env(&a.model, &a.model.jobs[0]);
        let last = torchrun_args(&inv[49]);
        let np = last.get("nproc-per-node").unwrap().value.clone().unwrap();
        assert_eq!(
            resolve(&np.text, &inv[49], &env),
            Resolved::Literal("49".into())
        );
    }

    #[test]
    fn effective_env_keeps_each_name_at_its_last_entry() {
        let src = "version: v4\ndefaults:\n  job:\n    env: [A=d, B=d, C=d]\njobs:\n  t:\n    image: {uri: docker://x:1}\n    command: [x]\n    env: [B=1, D=1, A=2, B=3]\n";
        let (_, _, a) = analyse(src);
        let env: Vec<(&str, &str)> = effective_env(&a.model, &a.model.jobs[0])
            .iter()
            .map(|e| (e.name.as_str(), e.value.as_str()))
            .collect();
        // What removing the earlier entry and appending the later one gives.
        assert_eq!(env, [("C", "d"), ("D", "1"), ("A", "2"), ("B", "3")]);
    }

    #[test]
    fn mpirun_flags() {
        let src = "version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    command: [mpirun, -H, $MULTINODE_HOSTLIST, --mca, plm_rsh_agent, $MULTINODE_SSH_WRAPPER, -np, $MULTINODE_TOTAL_SLOTS, all_reduce_perf, -g, '1']\n";
        let (_, inv, _) = analyse(src);
        let m = mpirun_args(&inv[0]);
        assert_eq!(
            m.get(&["np", "n"]).unwrap().value.as_ref().unwrap().text,
            "$MULTINODE_TOTAL_SLOTS"
        );
        assert_eq!(
            m.get(&["mca"]).unwrap().value.as_ref().unwrap().text,
            "plm_rsh_agent $MULTINODE_SSH_WRAPPER"
        );
        assert_eq!(m.program[0].text, "all_reduce_perf");
    }
}

/// The torchrun invocations of a task, with their parsed arguments.
pub fn torchruns(text: &str, tree: &Tree, task: &Task) -> Vec<(Invocation, TorchrunArgs)> {
    invocations(text, tree, task)
        .into_iter()
        .filter(|i| matches!(i.launcher, Launcher::Torchrun | Launcher::DistributedLaunch))
        .map(|i| {
            let a = torchrun_args(&i);
            (i, a)
        })
        .collect()
}

/// A torchrun setting: from its flag, or else from the `PET_<NAME>` variable torchrun reads
/// when the flag is absent.
#[derive(Clone, Debug)]
pub struct Setting {
    pub value: Resolved,
    /// The bytes of the value as written (flag value or env value).
    pub range: TextRange,
    /// The value is written literally right there (so a fix may replace it).
    pub literal_in_place: bool,
    pub from_env: bool,
}

pub fn torchrun_setting(
    inv: &Invocation,
    args: &TorchrunArgs,
    env: &[&EnvVar],
    name: &str,
) -> Option<Setting> {
    if let Some(f) = args.get(name) {
        let v = f.value.as_ref()?;
        let value = resolve(&v.text, inv, env);
        return Some(Setting {
            literal_in_place: !v.text.contains('$'),
            value,
            range: v.range,
            from_env: false,
        });
    }
    let pet = format!("PET_{}", name.to_ascii_uppercase().replace('-', "_"));
    let e = env.iter().rev().find(|e| e.name == pet)?;
    Some(Setting {
        value: resolve(&e.value, inv, env),
        range: e.value_range,
        literal_in_place: !e.value.contains('$'),
        from_env: true,
    })
}

/// `multinode.nodes`, when the task is multinode.
pub fn nodes(task: &Task) -> Option<(u64, TextRange)> {
    task.multinode
        .as_ref()
        .and_then(|m| m.nodes.as_ref())
        .map(|n| (n.value, n.range))
}

/// An edit that adds `flag` (`--nnodes=2`) to the launcher's own arguments, right after the
/// launcher word, keeping everything else byte for byte. `None` when the words are not exact
/// in the file (an escaped or folded spelling a fix could break).
pub fn insert_flag(
    text: &str,
    tree: &Tree,
    task: &Task,
    inv: &Invocation,
    flag: &str,
) -> Option<fuzzfile_diagnostics::Edit> {
    let last = inv.words.get(inv.args_start.checked_sub(1)?)?;
    if !last.exact {
        return None;
    }
    match inv.origin {
        Origin::Script | Origin::ShellString | Origin::File => Some(fuzzfile_diagnostics::Edit {
            range: TextRange::empty(last.range.end),
            replacement: format!(" {flag}"),
        }),
        Origin::Argv => {
            let seq = task.command.as_ref()?.node;
            let style = match &tree.node(seq).kind {
                fuzzfile_syntax::NodeKind::Sequence { style, .. } => *style,
                _ => return None,
            };
            // The item's node range includes quotes; insert after it.
            let item = tree
                .items(seq)?
                .iter()
                .map(|&i| tree.node(i).range)
                .find(|r| r.start <= last.range.start && last.range.end <= r.end)?;
            match style {
                fuzzfile_syntax::CollectionStyle::Flow => Some(fuzzfile_diagnostics::Edit {
                    range: TextRange::empty(item.end),
                    replacement: format!(", {}", yaml_item(flag)),
                }),
                fuzzfile_syntax::CollectionStyle::Block => {
                    let line_start = fuzzfile_diagnostics::line_start_at(text, item.start as usize);
                    let prefix = &text[line_start..item.start as usize];
                    if !prefix.trim_end().ends_with('-') || !prefix.trim_start().starts_with('-') {
                        return None;
                    }
                    let line_end = fuzzfile_diagnostics::line_end_at(text, item.end as usize);
                    Some(fuzzfile_diagnostics::Edit {
                        range: TextRange::from_usize(line_end, line_end),
                        replacement: format!(
                            "{}{prefix}{}",
                            fuzzfile_diagnostics::newline_of(text),
                            yaml_item(flag)
                        ),
                    })
                }
            }
        }
    }
}

/// `s` as a YAML flow or block sequence item (quoted when plain would change its meaning).
fn yaml_item(s: &str) -> String {
    let plain_ok = !s.is_empty()
        && !s.starts_with([
            '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%',
            '@', '`',
        ])
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.contains([',', '[', ']', '{', '}']);
    if plain_ok || (s.starts_with("--") && !s.contains([',', '[', ']', '{', '}', '#', ' '])) {
        s.to_owned()
    } else {
        format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// `multinode.nodes` when the job runs on several nodes and launches its own processes
/// (`implementation: generic`, or none given). Under `openmpi`/`mpich`/`gasnet` Fuzzball
/// launches the command itself, and only `launcher-double-wrap` has something to say.
pub fn generic_multinode(task: &Task) -> Option<(u64, TextRange)> {
    if wrapped_by_fuzzball(task).is_some() {
        return None;
    }
    nodes(task).filter(|(n, _)| *n > 1)
}
