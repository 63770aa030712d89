//! torchrun's command line (torch/distributed/run.py `get_args_parser`), shared by
//! `python -m torch.distributed.run|launch` and `tune run`.

use super::args::*;
use super::shape::{count, Count, CountFrom, Resources, Shape};
use super::{Launch, Setting};

/// The torchrun settings precomputed for every invocation.
const TORCHRUN_SETTINGS: &[&str] = &[
    "nnodes",
    "nproc-per-node",
    "node-rank",
    "master-addr",
    "master-port",
    "rdzv-backend",
    "rdzv-endpoint",
    "rdzv-id",
];

/// torchrun flags that take a value (torch/distributed/run.py); every other flag is a switch.
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
];

/// torchrun's switches (flags without a value), for prefix matching.
const TORCHRUN_SWITCHES: &[&str] = &[
    "standalone",
    "no-python",
    "run-path",
    "module",
    "use-env",
    "help",
];

/// torchrun's grammar: argparse with `allow_abbrev` (its default, so `--nnode` is `--nnodes`),
/// `_` and `-` alike in option names, and `-m`/`--module` making the next word the program.
const GRAMMAR: Grammar = Grammar {
    value_flags: TORCHRUN_VALUE_FLAGS,
    switches: TORCHRUN_SWITCHES,
    program_flags: &["module", "m"],
    normalise,
    abbreviations: true,
};

/// Parse torchrun's (or torch.distributed.launch's) arguments, as its argparse parser does.
pub(super) fn torchrun_args(l: &Launch) -> LauncherArgs {
    let mut out = GRAMMAR.parse(l.args());
    for &name in TORCHRUN_SETTINGS {
        let setting = match out.get(name) {
            Some(f) => Setting::from_flag(l, f),
            // torchrun reads `PET_<NAME>` for an absent flag; an unknown argument may hold
            // the flag.
            None if !out.incomplete => Setting::from_env(
                l,
                &format!("PET_{}", name.to_ascii_uppercase().replace('-', "_")),
            ),
            None => None,
        };
        if let Some(s) = setting {
            out.settings.push((name, s));
        }
    }
    out
}

/// torchrun's processes: `nnodes × nproc-per-node`; a `MIN:MAX` range counts its maximum,
/// `--standalone` is one node, `gpu`/`auto` the GPUs per node, `cpu` the cores, an absent flag
/// torchrun's default of 1 (unless an unknown argument may hold it).
pub(super) fn shape(l: &Launch, args: &LauncherArgs, r: Resources) -> Shape {
    let nnodes = count(l.setting("nnodes"), &|v| {
        // `min:max` (elastic): the most nodes.
        let v = v.rsplit(':').next().unwrap_or(v);
        v.trim().parse().ok().map(|n| (n, None))
    })
    .or_else(|| {
        if let Some(f) = args.get("standalone") {
            Some(Count {
                value: Some(1),
                from: CountFrom::Standalone,
                at: Some(f.flag_range),
            })
        } else {
            (!args.incomplete).then_some(Count::by_default(Some(1)))
        }
    });
    let nproc = count(l.setting("nproc-per-node"), &|v| match v {
        "gpu" | "auto" => r.gpus.map(|g| (g, Some(v.to_owned()))),
        "cpu" => r.cores.map(|c| (c, Some(v.to_owned()))),
        _ => v.parse().ok().map(|n| (n, None)),
    })
    .or_else(|| (!args.incomplete).then_some(Count::by_default(Some(1))));
    Shape::nodes_by_processes(nnodes, nproc)
}
