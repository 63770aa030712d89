//! Shell completions (`clap_complete`) and man pages (`clap_mangen`), generated from a
//! binary's clap definition: `fuzzlint completions SHELL`, `fuzz completions SHELL`, and the
//! pages committed in docs/man/ (a drift test regenerates them from [`crate::command`] and
//! from `fuzz`'s own definition; `UPDATE_MAN=1` rewrites them).

use std::io::{self, Write};

pub use clap_complete::Shell;

/// The completion script of `cmd` for `shell`.
pub fn completions(cmd: clap::Command, shell: Shell) -> Vec<u8> {
    let mut cmd = cmd;
    let name = cmd.get_name().to_owned();
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, name, &mut buf);
    buf
}

/// Writes the completion script of `cmd` for `shell` to standard output: exit status 0, also
/// when the reader stopped reading; 2 when it cannot be written.
pub fn print_completions(cmd: clap::Command, shell: Shell) -> std::process::ExitCode {
    let script = completions(cmd, shell);
    let mut out = io::stdout().lock();
    match out.write_all(&script).and_then(|()| out.flush()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: cannot write the completions: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

/// The man pages of `cmd` and of each of its subcommands that is not hidden, recursively:
/// `(file name, roff text)`, as `fuzzlint.1`, `fuzzlint-check.1`, `fuzzlint-profile-detect.1`,
/// sorted by name.
pub fn man_pages(cmd: clap::Command) -> io::Result<Vec<(String, Vec<u8>)>> {
    fn walk(cmd: clap::Command, out: &mut Vec<(String, Vec<u8>)>) -> io::Result<()> {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()).cloned() {
            walk(sub, out)?;
        }
        let man = clap_mangen::Man::new(cmd);
        let mut text = Vec::new();
        man.render(&mut text)?;
        out.push((man.get_filename(), text));
        Ok(())
    }
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let mut out = Vec::new();
    walk(cmd, &mut out)?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Writes [`man_pages`] of `cmd` into `dir` (created if missing).
pub fn write_man_pages(cmd: clap::Command, dir: &std::path::Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in man_pages(cmd)? {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(())
}
