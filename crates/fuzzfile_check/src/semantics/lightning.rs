//! Lightning's launcher: `fabric run SCRIPT [OPTIONS] [SCRIPT_ARGS]`, and its older name
//! `lightning run model` (Lightning 2.0 to 2.5).
//!
//! Its parser is a click command, `_run` in `src/lightning/fabric/cli.py`
//! (<https://github.com/Lightning-AI/pytorch-lightning/blob/2.6.5/src/lightning/fabric/cli.py>,
//! tag 2.6.5, commit be98784a1a03581b7051a355ae1084fd352d7cea; `lightning run model` is the same
//! command at tag 2.1.0). It starts torchrun in its own process with
//! `--nproc_per_node=<processes for --devices> --nnodes=<--num-nodes>
//! --node_rank=<--node-rank> --master_addr=<--main-address> --master_port=<--main-port>`
//! (`_torchrun_launch`), so the torchrun rules apply with Lightning's flag names.
//!
//! click is not argparse: an option may stand anywhere (after the script too), a long option is
//! never abbreviated, an option it does not know goes to the script's arguments
//! (`ignore_unknown_options`), and `--` ends the options.

use super::args::*;
use super::shape::{count, Count, Resources, Shape};
use super::{Launch, Resolved};

/// The options of `fabric run` that take a value: every spelling, and the setting it gives.
const VALUE_OPTIONS: &[(&str, &str)] = &[
    ("--accelerator", "accelerator"),
    ("--strategy", "strategy"),
    ("--devices", "devices"),
    ("--num-nodes", "num-nodes"),
    ("--num_nodes", "num-nodes"),
    ("--node-rank", "node-rank"),
    ("--node_rank", "node-rank"),
    ("--main-address", "main-address"),
    ("--main_address", "main-address"),
    ("--main-port", "main-port"),
    ("--main_port", "main-port"),
    ("--precision", "precision"),
];

/// Lightning's option for each launcher-independent setting.
const SETTINGS: &[(&str, &str)] = &[
    ("nproc-per-node", "devices"),
    ("nnodes", "num-nodes"),
    ("node-rank", "node-rank"),
    ("master-addr", "main-address"),
    ("master-port", "main-port"),
];

/// The flag a message or a fix names for a setting that is not given.
pub(super) fn flag_for(setting: &str) -> Option<&'static str> {
    Some(match setting {
        "nproc-per-node" => "--devices",
        "nnodes" => "--num-nodes",
        "node-rank" => "--node-rank",
        "master-addr" => "--main-address",
        "master-port" => "--main-port",
        _ => return None,
    })
}

/// Parse `fabric run`'s arguments as click does.
pub(super) fn lightning_args(l: &Launch) -> LauncherArgs {
    let mut out = LauncherArgs::default();
    let args = l.args();
    let mut script: Option<usize> = None;
    let mut script_args: Vec<usize> = Vec::new();
    let mut options_end = false;
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let positional = |i: usize, script: &mut Option<usize>, rest: &mut Vec<usize>| {
            if script.is_none() {
                *script = Some(i);
            } else {
                rest.push(i);
            }
        };
        if options_end {
            positional(i, &mut script, &mut script_args);
            i += 1;
            continue;
        }
        if opaque(w) {
            if script.is_none() && written_as_a_path(&w.text) {
                script = Some(i);
            } else {
                // It may be an option of Lightning's, the script or an argument of it.
                out.incomplete = true;
                if script.is_some() {
                    script_args.push(i);
                }
            }
            i += 1;
            continue;
        }
        if w.text == "--" {
            options_end = true;
            i += 1;
            continue;
        }
        if !w.text.starts_with('-') || w.text == "-" {
            positional(i, &mut script, &mut script_args);
            i += 1;
            continue;
        }
        let (name_part, inline) = split_inline(w);
        let Some(&(_, name)) = VALUE_OPTIONS.iter().find(|(s, _)| *s == name_part) else {
            if w.text == "--help" {
                out.flags.push(Flag {
                    name: "help".into(),
                    spelling: w.text.clone(),
                    flag_range: w.range,
                    value: None,
                });
            } else {
                // click's `ignore_unknown_options`: the word stays among the positional ones
                // (the first of which is the script, even when it is such a word).
                positional(i, &mut script, &mut script_args);
            }
            i += 1;
            continue;
        };
        let value = match inline {
            Some(v) => Some(inline_value(w, name_part, v)),
            None => {
                i += 1;
                args.get(i).map(|v| {
                    if v.splat {
                        out.incomplete = true;
                        FlagValue {
                            text: v.text.clone(),
                            value: Resolved::Unknown,
                            range: v.range,
                            written: v.written,
                            literal_in_place: false,
                        }
                    } else {
                        word_value(v)
                    }
                })
            }
        };
        out.flags.push(Flag {
            name: name.to_owned(),
            spelling: name_part.to_owned(),
            flag_range: w.range,
            value,
        });
        i += 1;
    }
    if let Some(s) = script {
        out.program.push(args[s].clone());
        out.program
            .extend(script_args.iter().map(|&j| args[j].clone()));
    }
    for &(setting, option) in SETTINGS {
        if let Some(s) = out.get(option).and_then(|f| Setting::from_flag(l, f)) {
            out.settings.push((setting, s));
        }
    }
    out
}

/// The processes one value of `--devices` starts on each node (`_get_num_processes`): a number
/// N is N, a comma-separated list its length, `-1` every GPU, `auto` one on CUDA; with
/// `--strategy dp` one process drives them all; `--accelerator cpu` counts CPU processes.
pub(super) fn per_node(l: &Launch, devices: &str) -> super::launchers::PerNode {
    use super::launchers::PerNode;
    let literal = |name: &str| {
        super::launchers::flag_value(l, name).and_then(|v| v.literal().map(str::to_owned))
    };
    if literal("strategy").as_deref() == Some("dp") {
        return PerNode::Processes(1);
    }
    if literal("accelerator").as_deref() == Some("cpu") {
        return PerNode::NotGpus;
    }
    let v = devices.trim();
    match v {
        "-1" => PerNode::EachGpu,
        "auto" => PerNode::Processes(1),
        _ if v.contains(',') => {
            let ids: Option<Vec<u64>> = v
                .split(',')
                .filter(|x| !x.is_empty())
                .map(|x| x.trim().parse().ok())
                .collect();
            match ids {
                Some(ids) => PerNode::Devices(ids),
                None => PerNode::Invalid(INVALID),
            }
        }
        _ => match v.parse() {
            Ok(n) => PerNode::Processes(n),
            Err(_) => PerNode::Invalid(INVALID),
        },
    }
}

const INVALID: &str =
    "Lightning accepts a number, a comma-separated list of GPU indices, `-1` or `auto`";

/// Lightning's processes: `--num-nodes` (default 1) × the processes for `--devices` (default 1).
pub(super) fn shape(l: &Launch, args: &LauncherArgs, r: Resources) -> Shape {
    use super::launchers::PerNode;
    let default = |n| (!args.incomplete).then_some(Count::by_default(Some(n)));
    let nnodes =
        count(l.setting("nnodes"), &|v| v.parse().ok().map(|n| (n, None))).or_else(|| default(1));
    let nproc = count(l.setting("nproc-per-node"), &|v| match per_node(l, v) {
        PerNode::Processes(n) => Some((n, None)),
        PerNode::Devices(ids) => Some((ids.len() as u64, None)),
        PerNode::EachGpu => r.gpus.map(|g| (g, Some(v.to_owned()))),
        _ => None,
    })
    .or_else(|| default(1));
    Shape::nodes_by_processes(nnodes, nproc)
}
