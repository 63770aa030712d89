//! horovodrun's command line (horovod/runner/launch.py `parse_args`, argparse, Apache-2.0;
//! https://github.com/horovod/horovod/blob/059f6905ddf67960d711cc9d03c77cf27014a3ae/horovod/runner/launch.py),
//! and the processes it starts: `-np`/`--num-proc` in all, placed on the hosts of
//! `-H`/`--hosts` (`host:slots,...`) or `-hostfile`/`--hostfile` filling each host's slots
//! in order (horovod/runner/common/util/hosts.py `get_host_assignments`), on
//! `localhost:<np>` when neither is given (launch.py `_run`). Each process drives one GPU:
//! Horovod's documented pattern pins `hvd.local_rank()` to a GPU.

use super::args::*;
use super::shape::{np_count, Count, CountFrom, Quantity, Resources, Shape};
use super::{Launch, Resolved, Setting};

/// Options of `parse_args` that take one value, as written (argparse matches an abbreviation
/// against the option strings with their dashes: `-n` is `-np`, `--num` is ambiguous).
/// (`--blacklist-cooldown-range` takes two; its second value would read as the command.)
const VALUE_FLAGS: &[&str] = &[
    "-np",
    "--num-proc",
    "--start-timeout",
    "--network-interfaces",
    "--network-interface",
    "--output-filename",
    "--config-file",
    "-p",
    "--ssh-port",
    "-i",
    "--ssh-identity-file",
    "--fusion-threshold-mb",
    "--cycle-time-ms",
    "--cache-capacity",
    "--autotune-log-file",
    "--autotune-warmup-samples",
    "--autotune-steps-per-sample",
    "--autotune-bayes-opt-max-samples",
    "--autotune-gaussian-process-noise",
    "--min-np",
    "--min-num-proc",
    "--max-np",
    "--max-num-proc",
    "--slots-per-host",
    "--elastic-timeout",
    "--reset-limit",
    "--blacklist-cooldown-range",
    "--timeline-filename",
    "--stall-check-warning-time-seconds",
    "--stall-check-shutdown-time-seconds",
    "--mpi-args",
    "--binding-args",
    "--num-nccl-streams",
    "--thread-affinity",
    "--gloo-timeout-seconds",
    "--log-level",
    "-H",
    "--hosts",
    "-hostfile",
    "--hostfile",
    "--host-discovery-script",
];

/// Options of `parse_args` that take no value.
const SWITCHES: &[&str] = &[
    "-h",
    "--help",
    "-v",
    "--version",
    "-cb",
    "--check-build",
    "--disable-cache",
    "--verbose",
    "--hierarchical-allreduce",
    "--no-hierarchical-allreduce",
    "--hierarchical-allgather",
    "--no-hierarchical-allgather",
    "--autotune",
    "--no-autotune",
    "--timeline-mark-cycles",
    "--no-timeline-mark-cycles",
    "--no-stall-check",
    "--stall-check",
    "--mpi-threads-disable",
    "--no-mpi-threads-disable",
    "--tcp",
    "--log-with-timestamp",
    "--log-without-timestamp",
    "-prefix-timestamp",
    "--prefix-output-with-timestamp",
    "--log-hide-timestamp",
    "--no-log-hide-timestamp",
    "--gloo",
    "--mpi",
    "--jsrun",
];

/// argparse keeps an option string as written: dashes and all, `_` not `-`.
fn normalise(flag: &str) -> String {
    flag.to_owned()
}

/// The option that takes two values.
const COOLDOWN: &str = "--blacklist-cooldown-range";

/// Whether an option word (as written, or a unique prefix of one) takes a value.
fn takes_value(word: &str) -> bool {
    if VALUE_FLAGS.contains(&word) {
        return true;
    }
    if SWITCHES.contains(&word) {
        return false;
    }
    let mut m = VALUE_FLAGS
        .iter()
        .map(|f| (f, true))
        .chain(SWITCHES.iter().map(|f| (f, false)))
        .filter(|(f, _)| f.starts_with(word));
    match (m.next(), m.next()) {
        (Some((_, v)), None) => v,
        _ => false,
    }
}

/// horovodrun's grammar: argparse with `allow_abbrev` (its default), the command an
/// `argparse.REMAINDER` positional: the first word that is not an option and everything after.
const GRAMMAR: Grammar = Grammar {
    value_flags: VALUE_FLAGS,
    switches: SWITCHES,
    program_flags: &[],
    normalise,
    abbreviations: true,
};

/// The settings: each is the value of the last of its spellings (argparse stores one `dest`).
const SETTINGS: &[(&str, &[&str])] = &[
    ("np", &["-np", "--num-proc"]),
    ("hosts", &["-H", "--hosts"]),
    ("hostfile", &["-hostfile", "--hostfile"]),
    ("ssh-port", &["-p", "--ssh-port"]),
    ("host-discovery-script", &["--host-discovery-script"]),
    ("mpi-args", &["--mpi-args"]),
];

/// Parse horovodrun's arguments, as its argparse parser does.
pub(super) fn horovodrun_args(l: &Launch) -> LauncherArgs {
    // `--blacklist-cooldown-range MIN MAX` (or a prefix of it) takes two values: the second is
    // set aside so the grammar, which reads one, does not take it for the command.
    let args = l.args();
    let mut words = Vec::with_capacity(args.len());
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        let t = w.text.as_str();
        if opaque(w) {
            words.push(w.clone());
            i += 1;
            continue;
        }
        if !t.starts_with('-') || t == "-" {
            // The command: the rest is its own.
            words.extend_from_slice(&args[i..]);
            break;
        }
        words.push(w.clone());
        if t.len() > 3 && COOLDOWN.starts_with(t) {
            words.extend(args.get(i + 1).cloned());
            i += 3;
        } else if !t.contains('=') && takes_value(t) {
            words.extend(args.get(i + 1).cloned());
            i += 2;
        } else {
            i += 1;
        }
    }
    let mut out = GRAMMAR.parse(&words);
    for (name, spellings) in SETTINGS {
        let last = out
            .flags
            .iter()
            .rev()
            .find(|f| spellings.contains(&f.name.as_str()));
        if let Some(s) = last.and_then(|f| Setting::from_flag(l, f)) {
            out.settings.push((name, s));
        }
    }
    out
}

/// horovodrun's processes: `-np` in all; on each node the slots its host list gives, up to
/// `-np` (the first host fills first); all of them on the one node without a host list.
pub(super) fn shape(l: &Launch, args: &LauncherArgs, r: Resources) -> Shape {
    let np = match l.setting("np") {
        Some(s) => np_count(&s.value, s.range, r),
        // `-np` is required (outside LSF).
        None => Count {
            value: None,
            from: CountFrom::RunTime(None),
            at: None,
        },
    };
    let cap = |slots: u64| np.value.map_or(slots, |n| slots.min(n));
    let ranks_per_node = match (l.setting("hosts"), l.setting("hostfile")) {
        (Some(h), _) => match &h.value {
            Resolved::Runtime { name, .. } if name == "MULTINODE_HOSTLIST" => {
                r.slots_per_node.map(|slots| Quantity {
                    value: cap(slots),
                    how: format!(
                        "the {slots} slots of each node in {} $MULTINODE_HOSTLIST",
                        h.given_as
                    ),
                    at: Some(h.at()),
                })
            }
            Resolved::Literal(list) if np.value.is_some() => {
                let mut slots = list.split(',').map(|h| {
                    h.rsplit_once(':')
                        .and_then(|(_, n)| n.trim().parse::<u64>().ok())
                });
                match slots.next().flatten() {
                    Some(first) if slots.all(|s| s == Some(first)) => Some(Quantity {
                        value: cap(first),
                        how: format!("{} {list}", h.given_as),
                        at: Some(h.at()),
                    }),
                    _ => None,
                }
            }
            _ => None,
        },
        (None, None) if !args.incomplete && l.setting("host-discovery-script").is_none() => {
            np.value.map(|n| Quantity {
                value: n,
                how: format!("-np {n}, no -H or --hostfile: all on localhost"),
                at: np.at,
            })
        }
        _ => None,
    };
    Shape {
        world_size: np.value,
        np: Some(np),
        ranks_per_node,
        gpus_per_process: Some(Quantity {
            value: 1,
            how: "Horovod pins one GPU to each process".into(),
            at: None,
        }),
        ..Shape::default()
    }
}
