//! Where the report goes: standard output, or `--output-file PATH`. A report file is written
//! whole or not at all: into a temporary file beside it, renamed over PATH once complete, so a
//! reader (a CI upload step, an editor watching it) never sees half a report, and a failed run
//! leaves an earlier report as it was.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Why the report could not be written; for a file, the message names the path.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error("--output-file {}: {reason}", path.display())]
    File { path: PathBuf, reason: String },
    #[error("cannot write the report: {0}")]
    Stream(io::Error),
}

/// Where the report goes.
#[derive(Clone, Copy, Debug)]
pub enum Destination<'a> {
    Stdout,
    /// Standard error: `--fix` of standard input prints the fixed text on standard output.
    Stderr,
    /// `--output-file PATH`.
    File(&'a Path),
}

/// Writes the report with `write` to `to`. A reader of standard output or error that stopped
/// reading (`| head`) ends the output quietly.
pub fn deliver(
    to: Destination<'_>,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), SinkError> {
    let stream = |written: io::Result<()>| match written {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(SinkError::Stream(e)),
        _ => Ok(()),
    };
    let path = match to {
        Destination::Stdout => {
            let mut out = io::stdout().lock();
            return stream(write(&mut out).and_then(|()| out.flush()));
        }
        Destination::Stderr => {
            let mut out = io::stderr().lock();
            return stream(write(&mut out).and_then(|()| out.flush()));
        }
        Destination::File(path) => path,
    };
    let fail = |reason: String| SinkError::File {
        path: path.to_path_buf(),
        reason,
    };
    if path.is_dir() {
        return Err(fail("is a directory; name a file".into()));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".fuzzlint-report-")
        .tempfile_in(dir)
        .map_err(|e| fail(format!("cannot create a file in {}: {e}", dir.display())))?;
    {
        let mut w = io::BufWriter::new(tmp.as_file_mut());
        write(&mut w)
            .and_then(|()| w.flush())
            .map_err(|e| fail(format!("cannot write: {e}")))?;
    }
    // A report replacing one keeps its permissions; a new one gets what a new file would
    // (tempfile makes it 0600).
    set_permissions(tmp.as_file(), path)
        .map_err(|e| fail(format!("cannot set its permissions: {e}")))?;
    tmp.persist(path)
        .map_err(|e| fail(format!("cannot replace it: {}", e.error)))?;
    Ok(())
}

#[cfg(unix)]
fn set_permissions(file: &std::fs::File, target: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mode = match std::fs::metadata(target) {
        Ok(m) => m.permissions().mode() & 0o7777,
        Err(_) => 0o666 & !umask(),
    };
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}

/// The process's umask, from /proc/self/status (reading it with umask(2) would change it
/// for a moment under the other threads); 022 where it cannot be read.
#[cfg(unix)]
fn umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o022)
}

#[cfg(not(unix))]
fn set_permissions(_: &std::fs::File, _: &Path) -> io::Result<()> {
    Ok(())
}
