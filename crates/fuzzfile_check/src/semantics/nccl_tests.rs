//! The command line of an nccl-tests program (`all_reduce_perf`, `all_gather_perf`, ...), as
//! its `getopt_long` reads it (NVIDIA/nccl-tests src/common.cu, `main`: short options
//! `"t:g:b:e:i:f:n:m:w:p:c:o:d:r:z:hG:a:"` and the long options `--nthreads` (`-t`), `--ngpus`
//! (`-g`), `--minbytes`, ...): every option takes a value except `-h`/`--help`; a value is the
//! rest of the word (`-g1`) or the next word (`-g 1`, `--ngpus 1`, `--ngpus=1`); a long option
//! may be shortened to a unique prefix; GNU getopt skips other words and reads on; `--` ends
//! the options.
//!
//! Each process starts `-t` threads (default 1) and each thread drives `-g` GPUs (default 1):
//! one process uses `t × g` GPUs of its node (common.cu: `nThreads`, `nGpus`; the process of
//! local rank `r` takes the devices from `r × t × g` on).

use super::args::{opaque, word_value, Flag, FlagValue, LauncherArgs};
use super::shape::{Quantity, Shape};
use super::{strip_prefix, Launch, LaunchWord, Resolved, Setting};

/// Long options of nccl-tests' `main` (all take a value except `help`) and their short letter.
const LONG: &[(&str, char)] = &[
    ("nthreads", 't'),
    ("ngpus", 'g'),
    ("minbytes", 'b'),
    ("maxbytes", 'e'),
    ("stepbytes", 'i'),
    ("stepfactor", 'f'),
    ("iters", 'n'),
    ("agg_iters", 'm'),
    ("warmup_iters", 'w'),
    ("parallel_init", 'p'),
    ("check", 'c'),
    ("op", 'o'),
    ("datatype", 'd'),
    ("root", 'r'),
    ("blocking", 'z'),
    ("cudagraph", 'G'),
    ("average", 'a'),
    ("help", 'h'),
];

/// The settings read from the program's arguments.
const SETTINGS: &[(&str, char)] = &[("nthreads", 't'), ("ngpus", 'g')];

/// The name a flag is recorded under: the long name of its letter (`-g` → `ngpus`).
fn long_name(letter: char) -> Option<&'static str> {
    LONG.iter().find(|(_, c)| *c == letter).map(|(n, _)| *n)
}

/// The long option a `--name` stands for: itself or the one it is a unique prefix of.
fn resolve_long(name: &str) -> Option<&'static str> {
    if let Some((n, _)) = LONG.iter().find(|(n, _)| *n == name) {
        return Some(n);
    }
    let mut m = LONG.iter().filter(|(n, _)| n.starts_with(name));
    match (m.next(), m.next()) {
        (Some((n, _)), None) if !name.is_empty() => Some(n),
        _ => None,
    }
}

/// The value of the option word `w`: the rest of the word after `cut` bytes when given (`-g1`,
/// `--ngpus=1`), else the next word, `words[*i]`, which `*i` then steps over.
fn option_value(
    w: &LaunchWord,
    cut: Option<usize>,
    words: &[LaunchWord],
    i: &mut usize,
) -> Option<FlagValue> {
    match cut {
        Some(cut) => Some(FlagValue {
            text: w.text.get(cut..).unwrap_or_default().to_owned(),
            value: strip_prefix(&w.value, cut),
            range: w.tail_range(cut),
            written: w.written,
            literal_in_place: w.exact && !w.expanded,
        }),
        None => {
            let v = words.get(*i).map(word_value);
            *i += 1;
            v
        }
    }
}

/// Read an nccl-tests program's arguments (`words` after the program word).
pub(super) fn parse(l: &Launch, words: &[LaunchWord]) -> LauncherArgs {
    let mut out = LauncherArgs::default();
    let mut i = 0;
    while i < words.len() {
        let w = &words[i];
        i += 1;
        if opaque(w) {
            // `$NCCL_TEST_ARGS`: any option may be in it.
            out.incomplete = true;
            continue;
        }
        let t = w.text.as_str();
        if t == "--" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name_part, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (long, None),
            };
            let Some(name) = resolve_long(name_part) else {
                continue;
            };
            let value = if name == "help" {
                None
            } else {
                let cut = inline.map(|_| 2 + name_part.len() + 1);
                option_value(w, cut, words, &mut i)
            };
            out.flags.push(Flag {
                name: name.to_owned(),
                spelling: format!("--{name_part}"),
                flag_range: w.range,
                value,
            });
            continue;
        }
        let Some(rest) = t.strip_prefix('-') else {
            continue; // GNU getopt permutes: a word that is no option is skipped.
        };
        let Some(letter) = rest.chars().next() else {
            continue;
        };
        let Some(name) = long_name(letter) else {
            continue;
        };
        let value = if letter == 'h' {
            None
        } else {
            let cut = (rest.len() > letter.len_utf8()).then_some(1 + letter.len_utf8());
            option_value(w, cut, words, &mut i)
        };
        out.flags.push(Flag {
            name: name.to_owned(),
            spelling: format!("-{letter}"),
            flag_range: w.range,
            value,
        });
    }
    for (name, _) in SETTINGS {
        if let Some(s) = out.get(name).and_then(|f| Setting::from_flag(l, f)) {
            out.settings.push((name, s));
        }
    }
    out
}

/// `strtol(value, NULL, 0)` for the values that matter: a decimal number.
fn number(v: &Resolved) -> Option<u64> {
    v.literal()?.trim().parse().ok()
}

/// The GPUs one process of the program drives: `-t × -g` (each 1 when absent), when both are
/// known; `args` is the program's [`parse`].
pub(super) fn gpus_per_process(args: &LauncherArgs) -> Option<Quantity> {
    let mut value = 1u64;
    let mut how = Vec::new();
    let mut at = None;
    for (name, letter) in SETTINGS {
        match args
            .settings
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
        {
            Some(s) => {
                let n = number(&s.value)?;
                value = value.checked_mul(n)?;
                how.push(format!("{} {n}", s.given_as));
                // Where `-g` is, else `-t`.
                at = Some(s.at());
            }
            None if args.incomplete => return None,
            None => how.push(format!("default -{letter} 1")),
        }
    }
    Some(Quantity {
        value,
        how: how.join(" × "),
        at,
    })
}

/// An nccl-tests program started alone: one process on the node it runs on.
pub(super) fn shape(args: &LauncherArgs) -> Shape {
    Shape {
        world_size: Some(1),
        ranks_per_node: Some(Quantity {
            value: 1,
            how: "one process, started without mpirun".into(),
            at: None,
        }),
        gpus_per_process: gpus_per_process(args),
        ..Shape::default()
    }
}
