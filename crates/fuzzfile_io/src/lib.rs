//! The one bounded reader of the Fuzzfile tools. Every file `fuzzlint`, `fuzz` and the language
//! server read (Fuzzfiles, plans, cluster profiles, `fuzzlint.toml`, hostfiles, secrets files)
//! is read here, with a size limit that holds *while* reading: at most `limit + 1` bytes are
//! ever taken, so `/dev/zero`, a FIFO that never ends, a 10 GB sparse file or a pipe cost the
//! limit and no more. A directory is refused by name instead of failing with `EISDIR`.
//!
//! The analysis crates do no I/O; this crate is the edge that the front ends share.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// Fuzzfiles: the same bound as the YAML parser's input limit.
pub const FUZZFILE_LIMIT: u64 = 64 * 1024 * 1024;
/// Launch plans (`fuzz run PLAN.json`).
pub const PLAN_LIMIT: u64 = 512 * 1024 * 1024;
/// Small configuration files: `fuzzlint.toml`, cluster profiles, hostfiles, secrets files,
/// language-server settings.
pub const CONFIG_LIMIT: u64 = 1024 * 1024;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file (or stream) holds more than `limit` bytes.
    #[error("{path} is larger than {}: it cannot be a {what}", Size(*limit))]
    TooLarge {
        path: String,
        limit: u64,
        what: &'static str,
    },
    /// A directory was named where a file is expected.
    #[error("{path} is a directory, not a file")]
    IsDirectory { path: String },
    /// The bytes are not UTF-8 (only for readers that need text).
    #[error(
        "{path}: invalid UTF-8 at line {line}, column {column} (byte {offset}): save it as UTF-8"
    )]
    NotUtf8 {
        path: String,
        offset: usize,
        line: usize,
        column: usize,
    },
    /// Any other error of the operating system.
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

impl ReadError {
    /// The path (as shown) of the file the error is about.
    pub fn path(&self) -> &str {
        match self {
            ReadError::TooLarge { path, .. }
            | ReadError::IsDirectory { path }
            | ReadError::NotUtf8 { path, .. }
            | ReadError::Io { path, .. } => path,
        }
    }
}

impl ReadError {
    /// What is wrong, without the path, for messages that name the file their own way
    /// (`--cluster c.toml: no such file or directory`).
    pub fn reason(&self) -> String {
        match self {
            ReadError::TooLarge { limit, what, .. } => {
                format!("larger than {}: it cannot be a {what}", Size(*limit))
            }
            ReadError::IsDirectory { .. } => "a directory, not a file".to_owned(),
            ReadError::NotUtf8 { line, column, .. } => {
                format!("invalid UTF-8 at line {line}, column {column}: save it as UTF-8")
            }
            ReadError::Io { source, .. } => match source.kind() {
                io::ErrorKind::NotFound => "no such file or directory".to_owned(),
                io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
                _ => source.to_string(),
            },
        }
    }
}

/// A byte count for people: `64 MiB`, `1 MiB`, `100 bytes`.
struct Size(u64);

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MIB: u64 = 1024 * 1024;
        const KIB: u64 = 1024;
        match self.0 {
            n if n >= MIB && n % MIB == 0 => write!(f, "{} MiB", n / MIB),
            n if n >= KIB && n % KIB == 0 => write!(f, "{} KiB", n / KIB),
            n => write!(f, "{n} bytes"),
        }
    }
}

/// What a file is for, in the `TooLarge` message ("it cannot be a Fuzzfile").
#[derive(Clone, Copy, Debug)]
pub struct Kind {
    pub what: &'static str,
    pub limit: u64,
}

impl Kind {
    pub const FUZZFILE: Kind = Kind {
        what: "Fuzzfile",
        limit: FUZZFILE_LIMIT,
    };
    /// A plan spells out every instance's argv, environment and runtime command lines: a
    /// Fuzzfile's plan is often 10 to 50 times its size.
    pub const PLAN: Kind = Kind {
        what: "launch plan",
        limit: PLAN_LIMIT,
    };
    pub const FUZZFILE_OR_PLAN: Kind = Kind {
        what: "Fuzzfile or launch plan",
        limit: FUZZFILE_LIMIT,
    };
    pub const CONFIG: Kind = Kind {
        what: "fuzzlint config file",
        limit: CONFIG_LIMIT,
    };
    pub const PROFILE: Kind = Kind {
        what: "cluster profile",
        limit: CONFIG_LIMIT,
    };
    pub const HOSTFILE: Kind = Kind {
        what: "hostfile",
        limit: CONFIG_LIMIT,
    };
    pub const SECRETS: Kind = Kind {
        what: "secrets file",
        limit: CONFIG_LIMIT,
    };
    pub const CERTIFICATES: Kind = Kind {
        what: "PEM certificate file",
        limit: 16 * 1024 * 1024,
    };
    pub const NODE_CONFIG: Kind = Kind {
        what: "multinode node configuration",
        limit: FUZZFILE_LIMIT,
    };
    pub const SETTINGS: Kind = Kind {
        what: "settings file",
        limit: CONFIG_LIMIT,
    };
}

/// Read the file at `path` (`-` is standard input), at most `kind.limit` bytes.
pub fn read(path: &Path, kind: Kind) -> Result<Vec<u8>, ReadError> {
    let shown = path.display().to_string();
    if path.as_os_str() == "-" {
        return read_from(io::stdin().lock(), &shown, kind);
    }
    let io_err = |source: io::Error| ReadError::Io {
        path: shown.clone(),
        source,
    };
    let file = File::open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if meta.is_dir() {
        return Err(ReadError::IsDirectory { path: shown });
    }
    // A regular file's size is known: refuse it before reading anything. Other files (pipes,
    // devices, /proc) are read and cut at the limit.
    if meta.is_file() && meta.len() > kind.limit {
        return Err(ReadError::TooLarge {
            path: shown,
            limit: kind.limit,
            what: kind.what,
        });
    }
    if meta.is_file() {
        return read_sized(file, meta.len(), &shown, kind);
    }
    read_from(file, &shown, kind)
}

/// A regular file of `len` bytes, read into one buffer of its size (plus one byte, to see a
/// file that grew), without [`read_from`]'s zeroed 64 KiB chunk per file: checking 1,500
/// small files spent 11 % of its instructions zeroing those chunks. Still cut at the limit.
fn read_sized(file: File, len: u64, shown: &str, kind: Kind) -> Result<Vec<u8>, ReadError> {
    let cap = kind.limit.saturating_add(1);
    let mut buf: Vec<u8> =
        Vec::with_capacity(usize::try_from(len.saturating_add(1).min(cap)).unwrap_or(0));
    let mut limited = file.take(cap);
    loop {
        match limited.read_to_end(&mut buf) {
            Ok(_) => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(e, shown)),
        }
    }
    within_limit(buf, shown, kind)
}

/// `buf`, read with one byte over `kind.limit` allowed so that a file over it shows: that
/// byte is the `TooLarge` error.
fn within_limit(buf: Vec<u8>, shown: &str, kind: Kind) -> Result<Vec<u8>, ReadError> {
    if buf.len() as u64 > kind.limit {
        return Err(ReadError::TooLarge {
            path: shown.to_owned(),
            limit: kind.limit,
            what: kind.what,
        });
    }
    Ok(buf)
}

/// A failed read of `shown`: a directory read by a path that does not look like one
/// (`/dev/fd/N`) is said as such, anything else is the I/O error.
fn read_error(e: io::Error, shown: &str) -> ReadError {
    if e.kind() == io::ErrorKind::IsADirectory {
        ReadError::IsDirectory {
            path: shown.to_owned(),
        }
    } else {
        ReadError::Io {
            path: shown.to_owned(),
            source: e,
        }
    }
}

/// The last `max` bytes of the file at `path` (all of it when it is shorter), decoded lossily:
/// what a log's end says (an MPI launcher's report of the process that failed first), at a
/// cost that does not grow with the log. A regular file is read from `len - max` on; anything
/// else (a pipe, a device) is read through, keeping only the last `max` bytes, for at most
/// [`FUZZFILE_LIMIT`] bytes: `/dev/zero` ends too.
pub fn read_tail(path: &Path, max: u64) -> Result<String, ReadError> {
    use std::io::{Seek, SeekFrom};
    let shown = path.display().to_string();
    let io_err = |source: io::Error| ReadError::Io {
        path: shown.clone(),
        source,
    };
    let mut file = File::open(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if meta.is_dir() {
        return Err(ReadError::IsDirectory { path: shown });
    }
    let cap = usize::try_from(max).unwrap_or(usize::MAX);
    let mut tail: std::collections::VecDeque<u8> = std::collections::VecDeque::new();
    if meta.is_file() && meta.len() > max {
        file.seek(SeekFrom::Start(meta.len() - max))
            .map_err(io_err)?;
    }
    let mut chunk = vec![0u8; 64 * 1024];
    let mut budget = FUZZFILE_LIMIT.max(max);
    while budget > 0 {
        let n = match file.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => return Err(io_err(source)),
        };
        budget = budget.saturating_sub(n as u64);
        tail.extend(&chunk[..n]);
        if tail.len() > cap {
            let extra = tail.len() - cap;
            tail.drain(..extra);
        }
    }
    let bytes: Vec<u8> = tail.into();
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// Read the file at `path` as UTF-8 text, at most `kind.limit` bytes.
pub fn read_to_string(path: &Path, kind: Kind) -> Result<String, ReadError> {
    let bytes = read(path, kind)?;
    into_string(bytes, &path.display().to_string())
}

/// Read at most `kind.limit` bytes from `reader`; one byte more is a `TooLarge` error (the
/// rest is not read: at most `limit + 1` bytes are taken).
pub fn read_from(mut reader: impl Read, shown: &str, kind: Kind) -> Result<Vec<u8>, ReadError> {
    let cap = usize::try_from(kind.limit.saturating_add(1)).unwrap_or(usize::MAX);
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    while buf.len() < cap {
        let want = chunk.len().min(cap - buf.len());
        let n = match reader.read(&mut chunk[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_error(e, shown)),
        };
        if buf.capacity() - buf.len() < n {
            // Doubling, but never past the limit: an endless stream costs the limit, not
            // twice it.
            let grow = buf.len().max(n).min(cap - buf.len()).max(n);
            buf.reserve_exact(grow);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    within_limit(buf, shown, kind)
}

/// UTF-8 text from bytes, with the line and column of the first bad byte.
pub fn into_string(bytes: Vec<u8>, shown: &str) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        let before = &e.as_bytes()[..offset];
        let line = before.iter().filter(|b| **b == b'\n').count() + 1;
        let line_start = before
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count()
            + 1;
        ReadError::NotUtf8 {
            path: shown.to_owned(),
            offset,
            line,
            column,
        }
    })
}

#[cfg(test)]
mod tail_tests {
    #[test]
    fn the_tail_of_a_large_or_endless_file_costs_the_tail() {
        let dir = std::env::temp_dir().join(format!("fuzzfile-io-tail-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let log = dir.join("rank0.err");
        let mut text = "x".repeat(3 * 1024 * 1024);
        text.push_str("\nprimary job terminated normally, but 1 process returned\n");
        std::fs::write(&log, &text).expect("write");
        let tail = super::read_tail(&log, 4096).expect("tail");
        assert_eq!(tail.len(), 4096);
        assert!(tail.ends_with("1 process returned\n"), "{tail}");
        let short = dir.join("short");
        std::fs::write(&short, "a\nb\n").expect("write");
        assert_eq!(super::read_tail(&short, 4096).expect("tail"), "a\nb\n");
        // A directory is refused; a device that never ends is read up to a bound.
        assert!(super::read_tail(&dir, 10).is_err());
        let zero = super::read_tail(std::path::Path::new("/dev/zero"), 10).expect("tail");
        assert_eq!(zero, "\0".repeat(10));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn small(limit: u64) -> Kind {
        Kind {
            what: "test file",
            limit,
        }
    }

    #[test]
    fn reads_up_to_the_limit_and_refuses_one_byte_more() {
        let dir = std::env::temp_dir().join(format!("fuzzfile_io_{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let p = dir.join("f");
        std::fs::write(&p, b"0123456789").expect("write");
        assert_eq!(read(&p, small(10)).expect("fits").len(), 10);
        let e = read(&p, small(9)).expect_err("too large");
        assert!(matches!(e, ReadError::TooLarge { limit: 9, .. }), "{e}");
        assert_eq!(
            e.to_string(),
            format!(
                "{} is larger than 9 bytes: it cannot be a test file",
                p.display()
            )
        );
        let e = read(&dir, small(9)).expect_err("a directory");
        assert!(matches!(e, ReadError::IsDirectory { .. }), "{e}");
        std::fs::remove_dir_all(&dir).expect("clean");
    }

    #[test]
    fn an_endless_stream_costs_the_limit() {
        // io::repeat never ends; `take(limit + 1)` stops it.
        let e = read_from(io::repeat(0), "endless", small(1 << 20)).expect_err("endless");
        assert_eq!(
            e.to_string(),
            "endless is larger than 1 MiB: it cannot be a test file"
        );
    }

    #[test]
    fn dev_zero_is_refused_at_the_limit() {
        let e = read(Path::new("/dev/zero"), Kind::CONFIG).expect_err("endless");
        assert!(
            matches!(
                e,
                ReadError::TooLarge {
                    limit: CONFIG_LIMIT,
                    ..
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn sparse_file_is_refused_before_reading() {
        let dir = std::env::temp_dir().join(format!("fuzzfile_io_sparse_{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let p = dir.join("sparse");
        let f = File::create(&p).expect("create");
        f.set_len(10 * 1024 * 1024 * 1024).expect("sparse 10 GB");
        let e = read(&p, Kind::FUZZFILE).expect_err("too large");
        assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
        std::fs::remove_dir_all(&dir).expect("clean");
    }

    #[test]
    fn invalid_utf8_has_a_position() {
        let mut bytes = Vec::new();
        bytes.write_all(b"a: 1\nbb: \xff\n").expect("vec");
        let e = into_string(bytes, "x.toml").expect_err("bad");
        assert_eq!(
            e.to_string(),
            "x.toml: invalid UTF-8 at line 2, column 5 (byte 9): save it as UTF-8"
        );
    }
}
