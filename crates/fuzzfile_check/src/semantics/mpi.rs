//! mpirun's command line: Open MPI's (`mpirun`, `mpiexec`, `orterun`) and MPICH Hydra's
//! (`mpiexec.hydra`).

use super::args::*;
use super::shape::{count_at_run_time, Count, CountFrom, Resources, Shape};
use super::{Launch, Resolved};

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

/// Parse mpirun's (Open MPI's or Hydra's) arguments.
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
    out
}

/// mpirun's processes: `-np` (`-n`, `-c`), `$MULTINODE_TOTAL_SLOTS` of a generic job, else one
/// per slot of the host list.
pub(super) fn shape(args: &LauncherArgs, r: Resources) -> Shape {
    let mut s = Shape::default();
    let np = match args
        .get_any(&["np", "n", "c"])
        .and_then(|f| f.value.as_ref())
    {
        Some(v) => {
            let at = Some(v.range);
            match &v.value {
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
    s.np = Some(np);
    s
}
