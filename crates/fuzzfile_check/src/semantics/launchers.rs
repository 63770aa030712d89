//! The launchers the semantics layer recognises: the words that start each, how its
//! arguments are parsed and how many processes it starts. Each launcher's grammar is in its own
//! file (`torchrun.rs`, `mpi.rs`, ...); this is the one table that dispatches to them.

use super::args::{self, LauncherArgs};
use super::shape::{Resources, Shape};
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
        _ => Shape::default(),
    }
}
