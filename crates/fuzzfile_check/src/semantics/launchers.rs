//! The launchers the semantics layer recognises: the words that start each, how its
//! arguments are parsed and how many processes it starts. Each launcher's grammar is in its own
//! file (`torchrun.rs`, `mpi.rs`, ...); this is the one table that dispatches to them.

use super::args::{self, LauncherArgs};
use super::shape::{Resources, Shape};
use super::{accelerate, deepspeed, lightning, Resolved};
use super::{basename, horovod, mpi, nccl_tests, srun, torchrun, Launch, LaunchWord, Launcher};

/// Words that start every launcher recognised here: a task whose shell texts, shipped files and
/// `env` values contain none of them has no invocation, and its shell is not evaluated.
pub(super) const LAUNCHER_WORDS: &[&str] = &[
    "torchrun",
    "torch.distributed",
    "mpirun",
    "mpiexec",
    "orterun",
    "srun",
    "horovodrun",
    "deepspeed",
    "accelerate",
    "lightning",
    "fabric",
    "exec_all",
    "_perf",
    "tune",
];

/// The launcher a command line (after its wrappers) starts, and the index of its first
/// argument; `None` for any other program.
pub(super) fn recognise(rest: &[LaunchWord]) -> Option<(Launcher, usize)> {
    let first = rest.first().map(|w| basename(&w.text)).unwrap_or("");
    Some(match first {
        "torchrun" => (Launcher::Torchrun, 1),
        // torchtune's `tune run [torchrun options] RECIPE ...` hands its options to
        // `torch.distributed.run` when it has any (else it runs the recipe in one process).
        "tune"
            if rest.get(1).is_some_and(|w| w.text == "run")
                && rest.get(2).is_some_and(|w| {
                    let n = args::normalise(args::split_inline(w).0);
                    n == "nproc-per-node" || n == "nnodes"
                }) =>
        {
            (Launcher::Torchrun, 2)
        }
        p if crate::gpu::is_nccl_test(p) => (Launcher::NcclTest, 1),
        "mpirun" | "mpiexec" | "mpiexec.hydra" | "orterun" => (Launcher::Mpirun, 1),
        "srun" => (Launcher::Srun, 1),
        "horovodrun" => (Launcher::Horovodrun, 1),
        "deepspeed" => (Launcher::Deepspeed, 1),
        "accelerate" if rest.get(1).is_some_and(|w| w.text == "launch") => {
            (Launcher::Accelerate, 2)
        }
        // accelerate's console script for `launch` alone (setup.py `accelerate-launch`).
        "accelerate-launch" => (Launcher::Accelerate, 1),
        "fabric" if rest.get(1).is_some_and(|w| w.text == "run") => (Launcher::Lightning, 2),
        "lightning"
            if rest.get(1).is_some_and(|w| w.text == "run")
                && rest.get(2).is_some_and(|w| w.text == "model") =>
        {
            (Launcher::Lightning, 3)
        }
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
                (Some("-m"), Some("accelerate.commands.launch")) => (Launcher::Accelerate, j + 2),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The launcher's arguments, as its own parser reads them.
pub(super) fn parse(l: &Launch) -> Option<LauncherArgs> {
    match l.launcher {
        Launcher::Torchrun | Launcher::DistributedLaunch => Some(torchrun::torchrun_args(l)),
        Launcher::Mpirun => Some(mpi::mpirun_args(l)),
        Launcher::Horovodrun => Some(horovod::horovodrun_args(l)),
        Launcher::Srun => Some(srun::srun_args(l)),
        Launcher::NcclTest => Some(nccl_tests::parse(l, l.args())),
        Launcher::Accelerate => Some(accelerate::accelerate_args(l)),
        Launcher::Lightning => Some(lightning::lightning_args(l)),
        Launcher::Deepspeed => Some(deepspeed::deepspeed_args(l)),
        _ => None,
    }
}

/// The processes a launch starts, by the launcher's own rules.
pub(super) fn shape(l: &Launch, r: Resources) -> Shape {
    if l.launcher == Launcher::ExecAll {
        // One process per node.
        return Shape {
            world_size: r.nodes,
            ..Shape::default()
        };
    }
    let Some(args) = &l.parsed else {
        return Shape::default();
    };
    match l.launcher {
        Launcher::Torchrun | Launcher::DistributedLaunch => torchrun::shape(l, args, r),
        Launcher::Mpirun => mpi::shape(l, args, r),
        Launcher::Horovodrun => horovod::shape(l, args, r),
        Launcher::Srun => srun::shape(l, args, r),
        Launcher::NcclTest => nccl_tests::shape(args),
        Launcher::Accelerate => accelerate::shape(l, args, r),
        Launcher::Lightning => lightning::shape(l, args, r),
        Launcher::Deepspeed => deepspeed::shape(l, args, r),
        _ => Shape::default(),
    }
}

// ---------------------------------------------------------------------------------------------
// The torchrun-like launchers (torchrun, accelerate launch, fabric run, deepspeed): what the
// rules that check them need to know of each one's own flags and counts.

/// The value of a launcher's flag that is not one of the launcher-independent settings
/// (`--strategy`), by normalised name.
pub(super) fn flag_value<'a>(l: &'a Launch, name: &str) -> Option<&'a Resolved> {
    Some(&l.parsed.as_ref()?.get(name)?.value.as_ref()?.value)
}

/// What one value of a launch's `nproc-per-node` setting starts on each node, by the
/// launcher's own rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PerNode {
    /// This many processes, one GPU each.
    Processes(u64),
    /// One process for each of these GPU indices (`--devices 0,1`, `--include host:0,1`).
    Devices(Vec<u64>),
    /// One per GPU the node shows (torchrun `gpu`/`auto`, Lightning `-1`, deepspeed's default):
    /// right for any GPU count.
    EachGpu,
    /// Processes on CPUs (or another device), not GPUs.
    NotGpus,
    /// Not a value the launcher accepts: what it accepts.
    Invalid(&'static str),
    /// Depends on something not known before the run.
    Unknown,
}

/// How a launch of a multinode job reaches the nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Started on every node, each meeting the others at a master address: it needs the node
    /// count, each node's rank and that address (torchrun and its front ends, `deepspeed
    /// --no_ssh`).
    EachNode,
    /// Started once, on the head node, it starts the other nodes itself (deepspeed with a
    /// hostfile, over pdsh or the launcher it names; accelerate's DeepSpeed on several
    /// machines); also a deepspeed whose hostfile an argument of unknown value may name.
    FromHead,
    /// Runs on its own node only, whatever the job's nodes (deepspeed without a hostfile).
    OneNode,
}

impl Launch {
    /// The flag of this launcher that gives a launcher-independent setting (`nproc-per-node`,
    /// `nnodes`, `node-rank`, `master-addr`, `master-port`): as written when it is given, else
    /// as the launcher's documentation spells it (for messages and for fixes that add it).
    pub fn flag_name(&self, setting: &str) -> String {
        if let Some(s) = self.setting(setting) {
            return s.given_as.clone();
        }
        let canonical = match self.launcher {
            Launcher::Accelerate => accelerate::flag_for(setting),
            Launcher::Lightning => lightning::flag_for(setting),
            Launcher::Deepspeed => deepspeed::flag_for(setting),
            _ => None,
        };
        canonical.map_or_else(|| format!("--{setting}"), str::to_owned)
    }

    /// What one value of the `nproc-per-node` setting starts on each node with `gpus` GPUs.
    pub fn per_node(&self, value: &str, gpus: Option<u64>) -> PerNode {
        match self.launcher {
            Launcher::Accelerate => accelerate::per_node(self, value, gpus),
            Launcher::Lightning => lightning::per_node(self, value),
            Launcher::Deepspeed => deepspeed::per_node(self, value),
            _ => match value.trim() {
                "gpu" | "auto" => PerNode::EachGpu,
                "cpu" | "xpu" => PerNode::NotGpus,
                v => v.parse().map_or(
                    PerNode::Invalid("torchrun accepts a number, `gpu`, `cpu`, `xpu` or `auto`"),
                    PerNode::Processes,
                ),
            },
        }
    }

    /// The value of the `nproc-per-node` setting that starts `n` processes on each node (what
    /// a fix writes); `None` when no single value does.
    pub fn nproc_value(&self, n: u64) -> Option<String> {
        match self.launcher {
            Launcher::Accelerate => accelerate::nproc_value(self, n),
            Launcher::Deepspeed => deepspeed::nproc_value(self, n),
            _ => Some(n.to_string()),
        }
    }

    /// Without its `nproc-per-node` setting: the processes per node the launcher starts when
    /// that is not one per GPU, and why (torchrun and Lightning: 1; accelerate on several
    /// machines: the node's GPUs divided by the machines). `None`: one per GPU, or not known.
    pub fn default_per_node(&self, gpus: u64) -> Option<(u64, String)> {
        match self.launcher {
            Launcher::Torchrun | Launcher::DistributedLaunch => Some((
                1,
                "torchrun starts 1 process per node by default".to_owned(),
            )),
            Launcher::Lightning => Some((
                1,
                format!(
                    "`{}` starts 1 process per node by default (`--devices 1`)",
                    self.words
                        .get(..self.args_start)
                        .unwrap_or_default()
                        .iter()
                        .map(|w| basename(&w.text))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
            )),
            Launcher::Accelerate => accelerate::default_per_node(self, gpus),
            _ => None,
        }
    }

    /// Without its `nnodes` setting: the node count the launcher assumes (1), when it assumes
    /// one (deepspeed takes its hostfile's hosts).
    pub fn default_nnodes(&self) -> Option<u64> {
        match self.launcher {
            Launcher::Deepspeed => None,
            Launcher::Accelerate if self.setting("distributed-type").is_some() => None,
            _ => Some(1),
        }
    }

    /// The launch runs its processes on CPUs (torchrun `--nproc-per-node cpu`, accelerate
    /// `--cpu`, Lightning `--accelerator cpu`).
    pub fn on_cpus(&self) -> bool {
        match self.setting("nproc-per-node") {
            Some(s) => s
                .value
                .choices()
                .is_some_and(|c| c.iter().any(|v| self.per_node(v, None) == PerNode::NotGpus)),
            None => match self.launcher {
                Launcher::Accelerate => accelerate::per_node(self, "1", None) == PerNode::NotGpus,
                Launcher::Lightning => lightning::per_node(self, "1") == PerNode::NotGpus,
                _ => false,
            },
        }
    }

    /// Whether the `nnodes` setting takes a `MIN:MAX` range (torchrun's elastic form).
    pub fn nnodes_range_allowed(&self) -> bool {
        matches!(
            self.launcher,
            Launcher::Torchrun | Launcher::DistributedLaunch
        )
    }

    /// How the launch reaches the nodes of a multinode job.
    pub fn reach(&self) -> Reach {
        match self.launcher {
            // Without a hostfile (and no argument of unknown value that may name one).
            Launcher::Deepspeed
                if !deepspeed::has_hostfile(self)
                    && !self.parsed.as_ref().is_some_and(|a| a.incomplete) =>
            {
                Reach::OneNode
            }
            Launcher::Deepspeed if deepspeed::no_ssh(self) => Reach::EachNode,
            Launcher::Deepspeed => Reach::FromHead,
            Launcher::Accelerate if accelerate::starts_other_nodes(self) => Reach::FromHead,
            _ => Reach::EachNode,
        }
    }

    /// What narrows the GPUs of [`Launch::visible_gpus`]: `CUDA_VISIBLE_DEVICES`,
    /// `NVIDIA_VISIBLE_DEVICES` or accelerate's `--gpu_ids`.
    pub fn visible_gpus_by(&self) -> Option<String> {
        let (_, r) = self.visible_gpus?;
        for name in ["CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"] {
            if self.env(name).is_some_and(|w| w.range == r) {
                return Some(name.to_owned());
            }
        }
        self.setting("gpu-ids").map(|s| s.given_as.clone())
    }
}

/// Read what a launch finds in the files the job ships: accelerate's config file,
/// deepspeed's hostfile. `cwd`: the job's working directory, for a relative path;
/// `mentioned`: whether a text of the job names a path (a script that writes the file).
pub(super) fn read_shipped(
    l: &mut Launch,
    files: &[accelerate::ShippedFile<'_>],
    cwd: Option<&str>,
    text: &str,
    tree: &fuzzfile_syntax::Tree,
    mentioned: &dyn Fn(&str) -> bool,
) {
    match l.launcher {
        Launcher::Accelerate => accelerate::read_config(l, files, cwd, text, tree),
        Launcher::Deepspeed => {
            deepspeed::read_hostfile(l, &|p| files.iter().any(|f| f.path == p), mentioned)
        }
        _ => {}
    }
}

/// How many GPUs the launch may use when something in its environment or its own flags
/// narrows them, and where: `CUDA_VISIBLE_DEVICES` in its environment (`env`, or exported by
/// the script), `NVIDIA_VISIBLE_DEVICES` in the job's `env` (the container runtime exposes
/// only those GPUs when it creates the container; exported later by the script it changes
/// nothing: CUDA reads only `CUDA_VISIBLE_DEVICES`), accelerate's `--gpu_ids`. deepspeed is
/// left out: it turns `CUDA_VISIBLE_DEVICES` into its own `--include` when no flag selects
/// GPUs, and ignores it otherwise (runner.py `main`).
pub(super) fn visible_gpus(
    l: &Launch,
    job_env: &super::TaskEnv,
) -> Option<(u64, fuzzfile_diagnostics::TextRange)> {
    if l.launcher == Launcher::Deepspeed {
        return None;
    }
    let count = |v: &str| -> Option<u64> {
        let v = v.trim();
        match v {
            "all" => None,
            "none" | "void" => Some(0),
            _ => Some(v.split(',').filter(|d| !d.trim().is_empty()).count() as u64),
        }
    };
    let mut out: Option<(u64, fuzzfile_diagnostics::TextRange)> = None;
    let mut narrow = |n: u64, r| {
        if out.is_none_or(|(m, _)| n < m) {
            out = Some((n, r));
        }
    };
    if let Some(w) = l.env("CUDA_VISIBLE_DEVICES") {
        if let Some(n) = w.value.literal().and_then(count) {
            narrow(n, w.range);
        }
    }
    if let Some(w) = l.env("NVIDIA_VISIBLE_DEVICES") {
        let in_job_env = job_env
            .iter()
            .any(|e| e.name == "NVIDIA_VISIBLE_DEVICES" && e.value_range == w.range);
        if in_job_env {
            if let Some(n) = w.value.literal().and_then(count) {
                narrow(n, w.range);
            }
        }
    }
    if l.launcher == Launcher::Accelerate {
        if let Some(s) = l.setting("gpu-ids") {
            if let Some(n) = s.value.literal().and_then(count) {
                narrow(n, s.range);
            }
        }
    }
    out
}
