//! `fuzzlint check -`: a Fuzzfile read from standard input, as editors and pipes give it.
//!
//! `--stdin-filename PATH` names it: the fuzzlint.toml that applies is the one found from
//! PATH's directory, PATH's name says whether it is an application template (`template.yaml`,
//! `*.template.yaml`, its values file looked for beside PATH) or a values file, and messages
//! show PATH. Without it, the name is `-` and the config is found from the working directory.
//! Nothing is ever written to PATH: `--fix` prints the fixed text on standard output (the
//! report then goes to standard error, or to `--output-file`), as ruff does.

use crate::Checked;
use std::path::Path;

/// How standard input is written on the command line.
pub const STDIN: &str = "-";

/// Whether `path` stands for standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN
}

/// The name `path` is known by: `--stdin-filename` for `-`, else the path itself.
pub fn name_of<'a>(path: &'a Path, stdin_filename: Option<&'a Path>) -> &'a Path {
    match stdin_filename {
        Some(name) if is_stdin(path) => name,
        _ => path,
    }
}

/// What `--fix` prints for standard input: its text after `fix_apply::apply` (which analyses
/// the fixed text again), the text as read when no fix applied; `None` when standard input
/// was not checked.
pub fn fixed_output(checked: &[Checked]) -> Option<&str> {
    checked
        .iter()
        .find(|c| is_stdin(&c.path) && !c.companion)
        .map(Checked::text)
}
