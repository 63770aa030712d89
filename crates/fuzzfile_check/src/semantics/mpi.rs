//! mpirun's command line: Open MPI's (`mpirun`, `mpiexec`, `orterun`) and MPICH Hydra's
//! (`mpiexec.hydra`).

use super::args::*;
use super::nccl_tests;
use super::shape::{np_count, Count, CountFrom, Quantity, Resources, Shape};
use super::{basename, Launch, Resolved};

/// Open MPI and MPICH (Hydra) flags that take one value; `--mca`, `-genv`, `-env` take two.
const MPI_VALUE_FLAGS: &[&str] = &[
    "np",
    "n",
    "c",
    "H",
    "host",
    "hosts",
    "hostfile",
    "default-hostfile",
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

/// Parse mpirun's (Open MPI's or Hydra's) arguments, and the settings of the program it
/// starts that say how many GPUs each rank drives.
pub(super) fn mpirun_args(l: &Launch) -> LauncherArgs {
    let mut out = LauncherArgs::default();
    let args = l.args();
    let mut i = 0;
    while i < args.len() {
        let w = &args[i];
        if opaque(w) {
            out.incomplete = true;
            i += 1;
            continue;
        }
        if !w.text.starts_with('-') {
            out.program = args[i..].to_vec();
            break;
        }
        let (name_part, inline) = split_inline(w);
        let name = name_part.trim_start_matches('-').to_owned();
        let value = if let Some(v) = inline {
            Some(inline_value(w, name_part, v))
        } else if MPI_TWO_VALUE_FLAGS.contains(&name.as_str()) {
            let k = args.get(i + 1);
            let v = args.get(i + 2);
            i += 2;
            match (k, v) {
                (Some(k), Some(v)) => Some(FlagValue {
                    text: format!("{} {}", k.text, v.text),
                    value: match (&k.value, &v.value) {
                        (Resolved::Literal(a), Resolved::Literal(b)) => {
                            Resolved::Literal(format!("{a} {b}"))
                        }
                        _ => Resolved::Unknown,
                    },
                    range: k.range.cover(v.range),
                    written: k.written.cover(v.written),
                    literal_in_place: false,
                }),
                (Some(k), None) => Some(word_value(k)),
                _ => None,
            }
        } else if MPI_VALUE_FLAGS.contains(&name.as_str()) {
            i += 1;
            args.get(i).map(word_value)
        } else {
            None
        };
        out.flags.push(Flag {
            name,
            spelling: name_part.to_owned(),
            flag_range: w.range,
            value,
        });
        i += 1;
    }
    // The program's own settings that say how many GPUs each rank drives (nccl-tests `-t`,
    // `-g`).
    if let Some((first, rest)) = out.program.split_first() {
        if crate::gpu::is_nccl_test(basename(&first.text)) {
            out.settings.extend(nccl_tests::parse(l, rest).settings);
        }
    }
    out
}

/// The ranks on the first of `hosts` hosts of `slots` slots each, for `np` ranks (all the
/// slots when not given): the hosts are filled in turn, `slots` at a time, and past the last
/// host MPICH's Hydra starts again at the first (Open MPI refuses more ranks than slots unless
/// told to oversubscribe).
fn on_first_host(np: Option<u64>, slots: u64, hosts: u64) -> u64 {
    let Some(np) = np else { return slots };
    let cycle = slots.saturating_mul(hosts.max(1));
    if cycle == 0 {
        return np;
    }
    slots.saturating_mul(np / cycle) + slots.min(np % cycle)
}

/// How many ranks mpirun places on each node: a per-node count (`-N`, `-npernode`, `-ppn`,
/// `--map-by ppr:N:node`, `-pernode`), else the slots of each host in its host list (Open MPI
/// fills a host's slots before the next host: the head node gets `min(-np, slots)`), else, with
/// no host list, every rank on the node mpirun runs on.
fn ranks_per_node(args: &LauncherArgs, np: &Count, r: Resources) -> Option<Quantity> {
    let flag_number = |names: &[&str]| {
        let f = args.get_any(names)?;
        let v = f.value.as_ref()?;
        let n: u64 = v.value.literal()?.trim().parse().ok()?;
        Some(Quantity {
            value: n,
            how: format!("{} {n}", f.spelling),
            at: Some(use_site(v)),
        })
    };
    if let Some(q) = flag_number(&["N", "npernode", "ppn"]) {
        return Some(q);
    }
    if let Some(f) = args.get("pernode") {
        return Some(Quantity {
            value: 1,
            how: f.spelling.clone(),
            at: Some(f.flag_range),
        });
    }
    if let Some(f) = args.get("map-by") {
        let v = f.value.as_ref()?;
        let text = v.value.literal()?.to_ascii_lowercase();
        // `ppr:N:node[:...]`: N on each node; `node`: round robin over the nodes; `slot`,
        // `core`, `socket`, ... fill each host's slots in turn, as without the option.
        let mut parts = text.split(':');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("ppr"), Some(n), Some(unit)) if unit.starts_with("node") => {
                let n: u64 = n.parse().ok()?;
                return Some(Quantity {
                    value: n,
                    how: format!("{} {text}", f.spelling),
                    at: Some(use_site(v)),
                });
            }
            (Some("ppr"), _, _) => return None,
            (Some(unit), _, _) if unit.starts_with("node") => {
                let (n, nodes) = (np.value?, r.nodes.filter(|n| *n > 0)?);
                return Some(Quantity {
                    value: n.div_ceil(nodes),
                    how: format!(
                        "-np {n} round robin over {nodes} nodes ({} {text})",
                        f.spelling
                    ),
                    at: Some(use_site(v)),
                });
            }
            _ => {}
        }
    }
    if args.incomplete {
        return None;
    }
    match args.get_any(&["H", "host", "hosts"]) {
        Some(f) => {
            let v = f.value.as_ref()?;
            match &v.value {
                Resolved::Runtime { name, .. } if name == "MULTINODE_HOSTLIST" => {
                    let slots = r.slots_per_node?;
                    if np.value.is_none() && !matches!(np.from, CountFrom::TotalSlots { .. }) {
                        return None;
                    }
                    Some(Quantity {
                        value: on_first_host(np.value, slots, r.nodes.unwrap_or(1)),
                        how: format!(
                            "the {slots} slots of each node in {} $MULTINODE_HOSTLIST",
                            f.spelling
                        ),
                        at: Some(use_site(v)),
                    })
                }
                Resolved::Literal(list) => {
                    // `h1:4,h2:4`: the same slot count on every host.
                    let mut slots = list.split(',').map(|h| {
                        h.rsplit_once(':')
                            .and_then(|(_, n)| n.trim().parse::<u64>().ok())
                    });
                    let first = slots.next()??;
                    let mut hosts = 1;
                    for s in slots {
                        if s != Some(first) {
                            return None;
                        }
                        hosts += 1;
                    }
                    np.value?;
                    Some(Quantity {
                        value: on_first_host(np.value, first, hosts),
                        how: format!("{} {list}", f.spelling),
                        at: Some(use_site(v)),
                    })
                }
                _ => None,
            }
        }
        None if args
            .get_any(&["hostfile", "machinefile", "f", "rankfile"])
            .is_some() =>
        {
            None
        }
        // No host list: every rank on the node mpirun runs on.
        None => np.value.map(|n| Quantity {
            value: n,
            how: format!("-np {n}, no host list: all on one node"),
            at: np.at,
        }),
    }
}

/// mpirun's processes: `-np` (`-n`, `-c`), `$MULTINODE_TOTAL_SLOTS` of a generic job, else one
/// per slot of the host list.
pub(super) fn shape(l: &Launch, args: &LauncherArgs, r: Resources) -> Shape {
    let mut s = Shape::default();
    let np = match args
        .get_any(&["np", "n", "c"])
        .and_then(|f| f.value.as_ref())
    {
        Some(v) => np_count(&v.value, v.range, r),
        None if args.incomplete => Count {
            value: None,
            from: CountFrom::RunTime(None),
            at: None,
        },
        None => match r.generic_slots {
            Some(n) => Count {
                value: Some(n),
                from: CountFrom::TotalSlots { explicit: false },
                at: None,
            },
            None => Count {
                value: None,
                from: CountFrom::SlotsFound,
                at: None,
            },
        },
    };
    s.world_size = np.value;
    s.ranks_per_node = ranks_per_node(args, &np, r);
    if let Some((first, rest)) = args.program.split_first() {
        if crate::gpu::is_nccl_test(basename(&first.text)) {
            s.gpus_per_process = nccl_tests::gpus_per_process(&nccl_tests::parse(l, rest));
        }
    }
    s.np = Some(np);
    s
}

/// Where a finding about a flag's value points: the word that gives it to mpirun (the value
/// itself when it is written there), as [`Setting::at`](super::Setting::at) does.
fn use_site(v: &FlagValue) -> fuzzfile_diagnostics::TextRange {
    let inside = v.written.start <= v.range.start && v.range.end <= v.written.end;
    if inside || v.written.is_empty() {
        v.range
    } else {
        v.written
    }
}
