//! How many processes a launch starts, by each launcher's own rules.

use super::{Resolved, Setting};
use fuzzfile_diagnostics::TextRange;

/// Where a process count comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CountFrom {
    /// The launcher's flag (`--nnodes`, `--nproc-per-node`, `-np`).
    Flag,
    /// The `PET_*` variable torchrun reads when the flag is absent.
    Env,
    /// torchrun's default (1).
    Default,
    /// `--standalone`: one node.
    Standalone,
    /// `--nproc-per-node gpu|auto` (the GPUs per node) or `cpu` (the cores).
    Keyword(String),
    /// `-np $MULTINODE_TOTAL_SLOTS`, or no `-np` in a generic job (one process per slot of the
    /// host list): nodes × slots.
    TotalSlots { explicit: bool },
    /// No `-np` and no host list known here: mpirun starts one process per slot it finds.
    SlotsFound,
    /// A value that is not a number.
    NotANumber(String),
    /// Known only at run time (a Fuzzball variable, an unknown shell value).
    RunTime(Option<String>),
}

/// A process count of a launch and where it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Count {
    pub value: Option<u64>,
    pub from: CountFrom,
    /// Where it is written, when it is.
    pub at: Option<TextRange>,
}

impl Count {
    /// The launcher's own default, where no flag or variable gives the count.
    pub(super) fn by_default(value: Option<u64>) -> Count {
        Count {
            value,
            from: CountFrom::Default,
            at: None,
        }
    }
}

/// How many processes a launch starts: torchrun nodes × processes per node, or mpirun `-np`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    pub nnodes: Option<Count>,
    pub nproc_per_node: Option<Count>,
    pub np: Option<Count>,
    pub world_size: Option<u64>,
    /// Processes on each node, where the launcher places them by its own rules (mpirun's
    /// per-node count or the host list's slots, horovodrun's slots, srun's tasks per node, one
    /// for an nccl-tests program started alone); `None` when not known.
    pub ranks_per_node: Option<Quantity>,
    /// GPUs each process drives, when the program or the launcher says (nccl-tests: `-t` ×
    /// `-g`; srun: `--gpus-per-task`; horovodrun: one).
    pub gpus_per_process: Option<Quantity>,
}

impl Shape {
    /// `nnodes` nodes of `nproc_per_node` processes each (torchrun and the launchers that start
    /// it): the world size is their product, when both are known.
    pub(super) fn nodes_by_processes(
        nnodes: Option<Count>,
        nproc_per_node: Option<Count>,
    ) -> Shape {
        let world_size = match (&nnodes, &nproc_per_node) {
            (Some(Count { value: Some(a), .. }), Some(Count { value: Some(b), .. })) => {
                a.checked_mul(*b)
            }
            _ => None,
        };
        Shape {
            nnodes,
            nproc_per_node,
            world_size,
            ..Shape::default()
        }
    }
}

/// A number a launch's arguments give, and what gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Quantity {
    pub value: u64,
    /// How it reads in a message (`-N 4`, `the 16 slots of each node in $MULTINODE_HOSTLIST`,
    /// `-t 1 × -g 2`).
    pub how: String,
    /// Where it is written, when it is.
    pub at: Option<TextRange>,
}

/// A count whose value is known only at run time (a Fuzzball variable's, or not known at all).
pub(super) fn count_at_run_time(value: &Resolved, at: Option<TextRange>) -> Count {
    Count {
        value: None,
        from: CountFrom::RunTime(match value {
            Resolved::Runtime { name, .. } => Some(name.clone()),
            _ => None,
        }),
        at,
    }
}
/// The process count `-np` (mpirun's, horovodrun's) gives, written at `at`: the number,
/// `$MULTINODE_TOTAL_SLOTS` of a generic job (nodes × slots), not a number, or known only at
/// run time.
pub(super) fn np_count(value: &Resolved, at: TextRange, r: Resources) -> Count {
    let at = Some(at);
    match value {
        Resolved::Literal(t) => match t.trim().parse() {
            Ok(n) => Count {
                value: Some(n),
                from: CountFrom::Flag,
                at,
            },
            Err(_) => Count {
                value: None,
                from: CountFrom::NotANumber(t.clone()),
                at,
            },
        },
        Resolved::Runtime { name, .. }
            if name == "MULTINODE_TOTAL_SLOTS" && r.generic_slots.is_some() =>
        {
            Count {
                value: r.generic_slots,
                from: CountFrom::TotalSlots { explicit: true },
                at,
            }
        }
        other => count_at_run_time(other, at),
    }
}

/// Reads a count from a value: the number, and the keyword it came from (`gpu`, `cpu`).
pub(super) type CountParser<'a> = dyn Fn(&str) -> Option<(u64, Option<String>)> + 'a;

/// What a launch's process counts depend on besides its own arguments.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Resources {
    /// GPUs requested per node.
    pub gpus: Option<u64>,
    /// CPU cores requested per node.
    pub cores: Option<u64>,
    /// `multinode.nodes`.
    pub nodes: Option<u64>,
    /// `MULTINODE_TOTAL_SLOTS` of a generic multinode job.
    pub generic_slots: Option<u64>,
    /// The slots of each node in `MULTINODE_HOSTLIST` of a generic multinode job:
    /// `procs-per-node`, else the CPU cores, else 1.
    pub slots_per_node: Option<u64>,
}

/// A count read from a setting with `parse`: the number, a keyword's value, not a number, or
/// known only at run time.
pub(super) fn count(setting: Option<&Setting>, parse: &CountParser<'_>) -> Option<Count> {
    let setting = setting?;
    let from = if setting.from_env {
        CountFrom::Env
    } else {
        CountFrom::Flag
    };
    let at = Some(setting.range);
    Some(match &setting.value {
        Resolved::Literal(v) => match parse(v.trim()) {
            Some((n, Some(k))) => Count {
                value: Some(n),
                from: CountFrom::Keyword(k),
                at,
            },
            Some((n, None)) => Count {
                value: Some(n),
                from,
                at,
            },
            None => Count {
                value: None,
                from: CountFrom::NotANumber(v.clone()),
                at,
            },
        },
        other => count_at_run_time(other, at),
    })
}
