//! What the launchers' argument parsers produce: flags, the program they start, and the
//! settings the rules read, with the grammar helpers every parser shares.

use super::{parameter_reference, strip_prefix, Launch, LaunchWord, Resolved};
use fuzzfile_diagnostics::TextRange;

/// A parsed `--flag` of a launcher.
#[derive(Clone, Debug)]
pub struct Flag {
    /// Normalised: no leading dashes, `_` as `-` for torchrun (`nproc-per-node`).
    pub name: String,
    /// The flag as written, without an inline value (`--nproc_per_node`).
    pub spelling: String,
    /// The flag word (for `--x=y`, the whole word).
    pub flag_range: TextRange,
    pub value: Option<FlagValue>,
}

#[derive(Clone, Debug)]
pub struct FlagValue {
    pub text: String,
    pub value: Resolved,
    pub range: TextRange,
    /// The word as written where the command is.
    pub written: TextRange,
    /// The value is written literally at `range` (so a fix may replace it).
    pub literal_in_place: bool,
}

/// A launcher's command line, as its own parser reads it: its flags, then the program it starts
/// and that program's arguments.
#[derive(Clone, Debug, Default)]
pub struct LauncherArgs {
    pub flags: Vec<Flag>,
    /// The program the launcher starts and its arguments: torchrun's training script or module,
    /// mpirun's program (empty when none is known).
    pub program: Vec<LaunchWord>,
    /// An argument of unknown value or count stands among the launcher's own: any flag may be
    /// in it, so an absent flag is not known to be absent.
    pub incomplete: bool,
    /// The settings the rules and the plan read, by the launcher-independent names of
    /// [`Launch::setting`](super::Launch::setting) (`nnodes`, `nproc-per-node`, `node-rank`, `master-addr`, ...).
    pub settings: Vec<(&'static str, Setting)>,
}

impl LauncherArgs {
    /// The last occurrence of a flag (argparse keeps the last), by normalised name.
    pub fn get(&self, name: &str) -> Option<&Flag> {
        self.flags.iter().rev().find(|f| f.name == name)
    }
    /// The first of several spellings of one flag (`-np`, `-n`, `-c`) that is given.
    pub fn get_any(&self, names: &[&str]) -> Option<&Flag> {
        self.flags.iter().find(|f| names.contains(&f.name.as_str()))
    }
    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    /// The training script or module torchrun starts, the program mpirun starts.
    pub fn script(&self) -> Option<&LaunchWord> {
        self.program.first()
    }
}

/// A launcher setting and where it is written.
#[derive(Clone, Debug)]
pub struct Setting {
    pub value: Resolved,
    /// How the launcher is given it, for messages: the flag as written (`--nproc_per_node`,
    /// `--num_gpus`), or the variable (`PET_NPROC_PER_NODE`).
    pub given_as: String,
    /// The bytes of the value (flag value, or the variable's value).
    pub range: TextRange,
    /// The word as written in the launch line (`"$RANK"`), or the variable's value.
    pub written: TextRange,
    /// The launch line is written out in place (not inside a nested shell string, an `eval`'d
    /// value or a shipped file's expansion), so a fix may change the quoting of `written`.
    pub in_place: bool,
    /// The value is written literally right there (so a fix may replace it).
    pub literal_in_place: bool,
    /// From `PET_<NAME>` in the environment, not a flag.
    pub from_env: bool,
}

impl Setting {
    /// The setting a launcher's flag gives.
    pub(super) fn from_flag(l: &Launch, f: &Flag) -> Option<Setting> {
        let v = f.value.as_ref()?;
        Some(Setting {
            value: v.value.clone(),
            given_as: f.spelling.clone(),
            range: v.range,
            written: v.written,
            in_place: l.via.is_empty() && !l.words.first().is_some_and(|w| w.expanded),
            literal_in_place: v.literal_in_place,
            from_env: false,
        })
    }
    /// The setting a variable of the launched program's environment gives (`PET_NNODES`).
    pub(super) fn from_env(l: &Launch, name: &str) -> Option<Setting> {
        let w = l.env(name)?;
        Some(Setting {
            value: w.value.clone(),
            given_as: name.to_owned(),
            range: w.range,
            written: w.written,
            in_place: false,
            literal_in_place: w.exact && !w.expanded,
            from_env: true,
        })
    }
    /// Where the value is passed to the launcher, when that is not where the value is written
    /// (`torchrun $DISTRIBUTED_ARGS` for a value inside `DISTRIBUTED_ARGS="..."`, `$NP` for
    /// `NP=2` in `env`): a label for a finding that points at the value.
    pub fn use_site(&self) -> Option<TextRange> {
        let inside = self.written.start <= self.range.start && self.range.end <= self.written.end;
        (!self.from_env && !inside && !self.written.is_empty()).then_some(self.written)
    }
    /// Where a finding about the value points: the word that gives it to the launcher (the
    /// value itself when it is written there, or comes from a `PET_*` variable).
    pub fn at(&self) -> TextRange {
        self.use_site().unwrap_or(self.range)
    }
    /// Where the value is written, when that is not [`Setting::at`] (a label).
    pub fn defined_at(&self) -> Option<TextRange> {
        self.use_site().map(|_| self.range)
    }
}

/// `--name=value` → (`--name`, `Some(value)`); anything else → (the word, `None`).
pub(super) fn split_inline(w: &LaunchWord) -> (&str, Option<&str>) {
    match w.text.split_once('=') {
        Some((n, v)) if w.text.starts_with("--") => (n, Some(v)),
        _ => (w.text.as_str(), None),
    }
}

pub(super) fn inline_value(w: &LaunchWord, name_part: &str, v: &str) -> FlagValue {
    let range = w.tail_range(name_part.len() + 1);
    FlagValue {
        text: v.to_owned(),
        value: strip_prefix(&w.value, name_part.len() + 1),
        range,
        written: if w.exact { range } else { w.written },
        literal_in_place: w.exact && !w.expanded,
    }
}

pub(super) fn word_value(w: &LaunchWord) -> FlagValue {
    FlagValue {
        text: w.text.clone(),
        value: w.value.clone(),
        range: w.range,
        written: w.written,
        literal_in_place: w.exact && !w.expanded,
    }
}

/// A word of unknown value written as a path to a program (`$REPO_PATH/run_train.py`,
/// `"${DIR}/train.py"`): a literal `/…` or `.py` part after the expansion, so the word is a
/// positional argument (a launcher's script), not a flag.
pub(super) fn written_as_a_path(written: &str) -> bool {
    let w = written.trim_matches(|c| c == '"' || c == '\'');
    if w.starts_with('-') || w.contains(char::is_whitespace) {
        return false;
    }
    let Some(rest) = w.strip_prefix('$') else {
        return false;
    };
    let (name, len) = parameter_reference(rest);
    if name.is_empty() {
        return false;
    }
    let rest = &rest[len..];
    !rest.contains('$') && (rest.starts_with('/') || rest.ends_with(".py") || rest.ends_with(".sh"))
}

/// A word whose role (flag or not) is not known: a splat, or a value not known.
pub(super) fn opaque(w: &LaunchWord) -> bool {
    w.splat || matches!(w.value, Resolved::Unknown)
}

pub(super) fn normalise(flag: &str) -> String {
    flag.trim_start_matches('-').replace('_', "-")
}

/// The command-line grammar of a launcher written with Python's argparse (torchrun, accelerate,
/// deepspeed, horovodrun) or a similar parser: options before the program, each a switch or an
/// option taking one value (`--name value` or `--name=value`); the first positional word (or
/// the word after `--`, or after a program flag such as torchrun's `-m`) starts the program.
pub(super) struct Grammar {
    /// Normalised names of the options that take a value.
    pub value_flags: &'static [&'static str],
    /// Normalised names of the options that take none.
    pub switches: &'static [&'static str],
    /// Options whose next word is the program (`-m`/`--module`: the module), recorded as the
    /// flag named by the first entry.
    pub program_flags: &'static [&'static str],
    /// How a flag word is normalised (`--nproc_per_node` → `nproc-per-node`).
    pub normalise: fn(&str) -> String,
    /// argparse's `allow_abbrev` (its default): a unique prefix of a long option is the option.
    pub abbreviations: bool,
}

impl Grammar {
    /// The option `name` (normalised) stands for: itself, or the one option it is a unique
    /// prefix of.
    fn resolve(&self, name: &str) -> String {
        let known = |n: &str| self.value_flags.contains(&n) || self.switches.contains(&n);
        if !self.abbreviations || name.len() < 2 || known(name) {
            return name.to_owned();
        }
        let mut matches = self
            .value_flags
            .iter()
            .chain(self.switches)
            .filter(|f| f.len() > 1 && f.starts_with(name));
        match (matches.next(), matches.next()) {
            (Some(one), None) => (*one).to_owned(),
            _ => name.to_owned(),
        }
    }

    /// Read a launcher's arguments: its options, then the program and its arguments.
    pub(super) fn parse(&self, args: &[LaunchWord]) -> LauncherArgs {
        let mut out = LauncherArgs::default();
        let mut i = 0;
        while i < args.len() {
            let w = &args[i];
            if opaque(w) {
                if written_as_a_path(&w.text) {
                    // `$REPO_PATH/run_train.py`: the program, whatever the variable holds.
                    out.program = args[i..].to_vec();
                    break;
                }
                out.incomplete = true;
                i += 1;
                continue;
            }
            if !w.text.starts_with('-') || w.text == "-" {
                out.program = args[i..].to_vec();
                break;
            }
            if w.text == "--" {
                out.program = args.get(i + 1..).unwrap_or(&[]).to_vec();
                break;
            }
            let (name_part, inline) = split_inline(w);
            let name = self.resolve(&(self.normalise)(name_part));
            if self.program_flags.contains(&name.as_str()) {
                out.flags.push(Flag {
                    name: self.program_flags[0].to_owned(),
                    spelling: name_part.to_owned(),
                    flag_range: w.range,
                    value: None,
                });
                out.program = args.get(i + 1..).unwrap_or(&[]).to_vec();
                break;
            }
            let value = match inline {
                Some(v) => Some(inline_value(w, name_part, v)),
                None if self.value_flags.contains(&name.as_str()) => {
                    i += 1;
                    match args.get(i) {
                        Some(v) if v.splat => {
                            out.incomplete = true;
                            Some(FlagValue {
                                text: v.text.clone(),
                                value: Resolved::Unknown,
                                range: v.range,
                                written: v.written,
                                literal_in_place: false,
                            })
                        }
                        Some(v) => Some(word_value(v)),
                        None => None,
                    }
                }
                None => None,
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
}
