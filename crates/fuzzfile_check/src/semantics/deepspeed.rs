//! DeepSpeed's `deepspeed` runner.
//!
//! Its parser is `parse_args` in `deepspeed/launcher/runner.py`
//! (<https://github.com/microsoft/DeepSpeed/blob/v0.16.4/deepspeed/launcher/runner.py>, tag
//! v0.16.4, commit e2dc3eeb1923073e32739596a4fd051417d4ff92): argparse with its default
//! `allow_abbrev` (a unique prefix of a long option is the option), options spelled with `_`
//! only (`--num_gpus`; `--num-gpus` is an error), `-H`/`-i`/`-e` for `--hostfile`,
//! `--include`, `--exclude`, `--num_accelerators` for `--num_gpus`, and the first positional
//! word the user script.
//!
//! What it runs (`main` there): the hostfile (`--hostfile`, default `/job/hostfile`) decides.
//! Without one, the run is on this node only, with every GPU it shows (or `--num_gpus`, or
//! the slots of `--include localhost:0,1`), the master address forced to `127.0.0.1`, and
//! `--num_nodes` above 1 an error. With one, the runner on the head node starts every host of
//! the file itself (pdsh, or the `--launcher` it names: openmpi, mpich, slurm, ...), unless
//! `--no_ssh`: then it is started on each node, and each needs `--node_rank` and
//! `--master_addr` (it would look the master up over ssh otherwise).

use super::args::*;
use super::launchers::PerNode;
use super::shape::{count, Count, Resources, Shape};
use super::{Launch, Resolved, Setting};

const VALUE_FLAGS: &[&str] = &[
    "hostfile",
    "include",
    "exclude",
    "num_nodes",
    "min_elastic_nodes",
    "max_elastic_nodes",
    "num_accelerators",
    "num_gpus",
    "master_port",
    "master_addr",
    "node_rank",
    "launcher",
    "launcher_args",
    "enable_each_rank_log",
    "autotuning",
    "bind_core_list",
    "ssh_port",
];

const SWITCHES: &[&str] = &[
    "help",
    "module",
    "no_python",
    "no_local_rank",
    "no_ssh",
    "no_ssh_check",
    "force_multi",
    "save_pid",
    "elastic_training",
    "bind_cores_to_rank",
];

/// deepspeed's option names: no leading dashes, `_` kept, the short options by their long name.
fn normalise(flag: &str) -> String {
    match flag {
        "-H" => "hostfile".into(),
        "-i" => "include".into(),
        "-e" => "exclude".into(),
        "-h" => "help".into(),
        _ => flag.trim_start_matches('-').to_owned(),
    }
}

const GRAMMAR: Grammar = Grammar {
    value_flags: VALUE_FLAGS,
    switches: SWITCHES,
    program_flags: &[],
    normalise,
    abbreviations: true,
};

/// The default hostfile (`DLTS_HOSTFILE`).
pub(super) const DEFAULT_HOSTFILE: &str = "/job/hostfile";

/// The option for each launcher-independent setting.
const SETTINGS: &[(&str, &str)] = &[
    ("nproc-per-node", "num_gpus"),
    ("nnodes", "num_nodes"),
    ("node-rank", "node_rank"),
    ("master-addr", "master_addr"),
    ("master-port", "master_port"),
];

/// The flag a message or a fix names for a setting that is not given.
pub(super) fn flag_for(setting: &str) -> Option<&'static str> {
    Some(match setting {
        "nproc-per-node" => "--num_gpus",
        "nnodes" => "--num_nodes",
        "node-rank" => "--node_rank",
        "master-addr" => "--master_addr",
        "master-port" => "--master_port",
        _ => return None,
    })
}

/// Parse deepspeed's arguments as its argparse parser does.
pub(super) fn deepspeed_args(l: &Launch) -> LauncherArgs {
    let mut out = GRAMMAR.parse(l.args());
    for f in &mut out.flags {
        if f.name == "num_accelerators" {
            f.name = "num_gpus".into();
        }
    }
    for &(setting, flag) in SETTINGS {
        if let Some(s) = out.get(flag).and_then(|f| Setting::from_flag(l, f)) {
            out.settings.push((setting, s));
        }
    }
    // `--include host:0,1`: the GPUs used on each host, when `--num_gpus` does not say.
    if !out.settings.iter().any(|(n, _)| *n == "nproc-per-node") {
        if let Some(s) = out.get("include").and_then(|f| Setting::from_flag(l, f)) {
            out.settings.push(("nproc-per-node", s));
        }
    }
    out
}

/// Record the hostfile the launch reads, when the job has one: shipped at its path, given with
/// `--hostfile`, or its path written in one of the job's texts (a script that writes it). No
/// `hostfile` setting: there is none, and the run is on one node.
pub(super) fn read_hostfile(
    l: &mut Launch,
    shipped: &dyn Fn(&str) -> bool,
    mentioned: &dyn Fn(&str) -> bool,
) {
    let range = l.range();
    let Some(args) = l.parsed.as_ref() else {
        return;
    };
    let given = args.get("hostfile").cloned();
    let setting = match given {
        Some(f) => {
            let Some(v) = f.value.as_ref() else {
                return;
            };
            Setting {
                value: v.value.clone(),
                given_as: f.spelling.clone(),
                range: v.range,
                written: v.written,
                in_place: false,
                literal_in_place: v.literal_in_place,
                from_env: false,
            }
        }
        None if shipped(DEFAULT_HOSTFILE) || mentioned(DEFAULT_HOSTFILE) => Setting {
            value: Resolved::Literal(DEFAULT_HOSTFILE.into()),
            given_as: DEFAULT_HOSTFILE.into(),
            range,
            written: range,
            in_place: false,
            literal_in_place: false,
            from_env: false,
        },
        None => return,
    };
    if let Some(args) = l.parsed.as_mut() {
        args.settings.push(("hostfile", setting));
    }
}

/// Whether the launch has a hostfile (see [`read_hostfile`]).
pub(super) fn has_hostfile(l: &Launch) -> bool {
    l.setting("hostfile").is_some()
}

/// `--no_ssh`: started on each node, which runs its own part.
pub(super) fn no_ssh(l: &Launch) -> bool {
    l.parsed.as_ref().is_some_and(|a| a.has("no_ssh"))
}

/// The GPUs one value of `--num_gpus` (or `--include`) uses on each node.
pub(super) fn per_node(l: &Launch, value: &str) -> PerNode {
    let from_include = l
        .setting("nproc-per-node")
        .is_some_and(|s| s.given_as.trim_start_matches('-').starts_with('i'));
    let v = value.trim();
    if !from_include {
        return match v.parse::<i64>() {
            Ok(n) if n > 0 => PerNode::Processes(n as u64),
            // `-1` (the default): every GPU.
            Ok(_) => PerNode::EachGpu,
            Err(_) => PerNode::Invalid("`--num_gpus` takes a whole number"),
        };
    }
    // NODE_SPEC[@NODE_SPEC ...], NODE_SPEC = NAME[:SLOT[,SLOT ...]]
    let mut most: Option<Vec<u64>> = None;
    for spec in v.split('@') {
        let Some((_, slots)) = spec.split_once(':') else {
            return PerNode::EachGpu; // every slot of that host
        };
        let ids: Option<Vec<u64>> = slots.split(',').map(|s| s.trim().parse().ok()).collect();
        let Some(ids) = ids else {
            return PerNode::Invalid("`--include` takes NAME[:SLOT[,SLOT ...]][@...]");
        };
        if most.as_ref().is_none_or(|m| ids.len() > m.len()) {
            most = Some(ids);
        }
    }
    match most {
        Some(ids) => PerNode::Devices(ids),
        None => PerNode::Unknown,
    }
}

/// The `--num_gpus` that uses `n` GPUs per node; `None` when the count is `--include`'s.
pub(super) fn nproc_value(l: &Launch, n: u64) -> Option<String> {
    let from_include = l
        .setting("nproc-per-node")
        .is_some_and(|s| s.given_as.trim_start_matches('-').starts_with('i'));
    (!from_include).then(|| n.to_string())
}

/// deepspeed's processes: the GPUs of each node used, on `--num_nodes` hosts (or one without a
/// hostfile).
pub(super) fn shape(l: &Launch, args: &LauncherArgs, r: Resources) -> Shape {
    let nnodes = if has_hostfile(l) {
        count(l.setting("nnodes"), &|v| {
            v.parse::<i64>()
                .ok()
                .filter(|n| *n > 0)
                .map(|n| (n as u64, None))
        })
    } else if args.incomplete {
        None
    } else {
        Some(Count::by_default(Some(1)))
    };
    let nproc = count(l.setting("nproc-per-node"), &|v| match per_node(l, v) {
        PerNode::Processes(n) => Some((n, None)),
        PerNode::Devices(ids) => Some((ids.len() as u64, None)),
        PerNode::EachGpu => r.gpus.map(|g| (g, None)),
        _ => None,
    })
    .or_else(|| (!args.incomplete && !args.has("exclude")).then_some(Count::by_default(r.gpus)));
    Shape::nodes_by_processes(nnodes, nproc)
}
