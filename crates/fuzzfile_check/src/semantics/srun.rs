//! srun's command line (Slurm: srun(1), https://slurm.schedmd.com/srun.html; the option table
//! its `getopt_long` reads is SchedMD/slurm src/common/slurm_opt.c (`gpus-per-task`,
//! `ntasks-per-node`, `gres`: `required_argument`), earlier src/srun/libsrun/opt.c
//! `long_options`; srun stops at the first word that is not an option, which is the
//! program). A long option takes its value after `=` or as the next word; one with an optional
//! value (`--exclusive`, `--kill-on-bad-exit`, `--immediate`) takes it only after `=`.
//!
//! The counts read here: `-n`/`--ntasks`, `-N`/`--nodes` (`min[-max]`: the most),
//! `--ntasks-per-node`, `--gpus-per-task` (`[type:]N`), `--gpus-per-node` (`[type:]N`),
//! `--gres=gpu[:type]:N` (GPUs per node), `-G`/`--gpus` (`[type:]N`, in all).

use super::args::*;
use super::shape::{Quantity, Resources, Shape};
use super::{Launch, Setting};

/// Short options that take a value (`K` and `I` take one only when attached; `-E`,
/// `--preserve-env`, takes none).
const SHORT_VALUE: &str = "AbBcCdDegGiJLmMnNopqrStTwWx";

/// Long options that take no value, or one only after `=`.
const LONG_SWITCHES: &[&str] = &[
    "exact",
    "exclusive",
    "overcommit",
    "oversubscribe",
    "quiet",
    "verbose",
    "label",
    "unbuffered",
    "no-kill",
    "pty",
    "multi-prog",
    "disable-status",
    "help",
    "usage",
    "test-only",
    "hold",
    "immediate",
    "kill-on-bad-exit",
    "contiguous",
    "no-allocate",
    "preserve-env",
    "overlap",
    "whole",
    "spread-job",
    "use-min-nodes",
    "version",
    "x11",
    "get-user-env",
    "send-libs",
    "reboot",
    "requeue",
    "no-requeue",
    "jobid-env",
];

/// The short letter of the long options read here.
const SHORT_NAMES: &[(char, &str)] = &[('n', "ntasks"), ('N', "nodes"), ('G', "gpus")];

/// The settings read here.
const SETTINGS: &[&str] = &[
    "ntasks",
    "nodes",
    "ntasks-per-node",
    "gpus-per-task",
    "gpus-per-node",
    "gres",
    "gpus",
];

/// Parse srun's arguments: its options, then the program.
impl Launch {
    /// An `srun` that asks GPUs for its tasks or nodes (`--gpus-per-task`, `--gpus-per-node`,
    /// `--gpus`/`-G`, `--gres=gpu:N`); false for any other launch.
    pub fn srun_requests_gpus(&self) -> bool {
        self.launcher == super::Launcher::Srun
            && (["gpus-per-task", "gpus-per-node", "gpus"]
                .iter()
                .any(|n| self.setting(n).is_some())
                || self
                    .setting("gres")
                    .and_then(|s| s.value.literal())
                    .is_some_and(|v| gres_gpus(v).is_some()))
    }
}

pub(super) fn srun_args(l: &Launch) -> LauncherArgs {
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
        let t = w.text.as_str();
        if t == "--" {
            out.program = args.get(i + 1..).unwrap_or(&[]).to_vec();
            break;
        }
        if !t.starts_with('-') || t == "-" {
            out.program = args[i..].to_vec();
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let value = match inline {
                Some(v) => Some(inline_value(w, &t[..2 + name.len()], v)),
                None if LONG_SWITCHES.contains(&name) => None,
                None => {
                    i += 1;
                    args.get(i).map(word_value)
                }
            };
            // `--tasks-per-node` is another name of `--ntasks-per-node`.
            let canonical = if name == "tasks-per-node" {
                "ntasks-per-node"
            } else {
                name
            };
            out.flags.push(Flag {
                name: canonical.to_owned(),
                spelling: format!("--{name}"),
                flag_range: w.range,
                value,
            });
            i += 1;
            continue;
        }
        // A cluster of short options (`-lN2`): switches, then one that takes the rest of the
        // word or the next word.
        let rest = &t[1..];
        for (k, c) in rest.char_indices() {
            let name = SHORT_NAMES
                .iter()
                .find(|(s, _)| *s == c)
                .map_or_else(|| c.to_string(), |(_, n)| (*n).to_owned());
            if SHORT_VALUE.contains(c) {
                let after = k + c.len_utf8();
                let value = if after < rest.len() {
                    let cut = 1 + after;
                    Some(FlagValue {
                        text: t[cut..].to_owned(),
                        value: super::strip_prefix(&w.value, cut),
                        range: w.tail_range(cut),
                        written: w.written,
                        literal_in_place: w.exact && !w.expanded,
                    })
                } else {
                    i += 1;
                    args.get(i).map(word_value)
                };
                out.flags.push(Flag {
                    name,
                    spelling: format!("-{c}"),
                    flag_range: w.range,
                    value,
                });
                break;
            }
            out.flags.push(Flag {
                name,
                spelling: format!("-{c}"),
                flag_range: w.range,
                value: None,
            });
        }
        i += 1;
    }
    for name in SETTINGS {
        if let Some(s) = out.get(name).and_then(|f| Setting::from_flag(l, f)) {
            out.settings.push((name, s));
        }
    }
    out
}

/// A count of `[type:]N` (`--gpus-per-task=a100:2`): the number after the last `:`.
pub(crate) fn typed_count(v: &str) -> Option<u64> {
    v.rsplit(':').next()?.trim().parse().ok()
}

/// The GPUs per node of `--gres` (`gpu:4`, `gpu:a100:4`, `gpu:a100:4,shard:2`); `gpu` alone
/// is one.
pub(crate) fn gres_gpus(v: &str) -> Option<u64> {
    v.split(',').find_map(|g| {
        let g = g.trim();
        let rest = g.strip_prefix("gpu")?;
        if rest.is_empty() {
            return Some(1);
        }
        let rest = rest.strip_prefix(':')?;
        // `gpu:a100` (a type, no count) is one; a trailing `(S:0)` socket list is not read.
        let rest = rest.split('(').next().unwrap_or(rest);
        Some(rest.rsplit(':').next()?.trim().parse().unwrap_or(1))
    })
}

/// srun's tasks on each node: `--ntasks-per-node`, else `--ntasks` over `--nodes` (the first
/// nodes take the extra tasks), else `--ntasks` on a job of one node; and the GPUs of each task
/// (`--gpus-per-task`).
pub(super) fn shape(l: &Launch, args: &LauncherArgs, r: Resources) -> Shape {
    let number = |name: &str| -> Option<(u64, &Setting)> {
        let s = l.setting(name)?;
        Some((s.value.literal()?.trim().parse().ok()?, s))
    };
    let ntasks = number("ntasks");
    let nodes = l.setting("nodes").and_then(|s| {
        let v = s.value.literal()?;
        // `min-max`: the most.
        let n = v.rsplit('-').next()?.trim().parse::<u64>().ok()?;
        Some((n, s))
    });
    let ranks_per_node = if let Some((n, s)) = number("ntasks-per-node") {
        Some(Quantity {
            value: n,
            how: format!("{} {n}", s.given_as),
            at: Some(s.at()),
        })
    } else {
        match (ntasks, nodes) {
            (Some((n, s)), Some((m, ns))) if m > 0 => Some(Quantity {
                value: n.div_ceil(m),
                how: format!("{} {n} over {} {m}", s.given_as, ns.given_as),
                at: Some(s.at()),
            }),
            (Some((n, s)), None) if !args.incomplete && r.nodes.is_none_or(|m| m <= 1) => {
                Some(Quantity {
                    value: n,
                    how: format!("{} {n} on one node", s.given_as),
                    at: Some(s.at()),
                })
            }
            _ => None,
        }
    };
    let gpus_per_process = l.setting("gpus-per-task").and_then(|s| {
        let n = typed_count(s.value.literal()?)?;
        Some(Quantity {
            value: n,
            how: format!("{} {n}", s.given_as),
            at: Some(s.at()),
        })
    });
    Shape {
        world_size: ntasks.map(|(n, _)| n),
        ranks_per_node,
        gpus_per_process,
        ..Shape::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gres_gives_the_gpus_of_each_node() {
        for (v, want) in [
            ("gpu:4", Some(4)),
            ("gpu:a100:2", Some(2)),
            ("gpu", Some(1)),
            ("gpu:a100", Some(1)),
            ("shard:2,gpu:3", Some(3)),
            ("gpu:2(S:0)", Some(2)),
            ("mps:100", None),
        ] {
            assert_eq!(gres_gpus(v), want, "{v}");
        }
        assert_eq!(typed_count("a100:2"), Some(2));
        assert_eq!(typed_count("4"), Some(4));
        assert_eq!(typed_count("a100"), None);
    }
}
