//! Secret redaction: every occurrence of a secret value in a log line, an event or a message is
//! replaced by `***` before it is printed or written.
//!
//! Rules:
//! - Empty values are ignored.
//! - Values shorter than [`MIN_LINE_PART`] bytes are still redacted in full. The trade-off: a
//!   one- to three-byte secret (`abc`, `42`) also matches ordinary text, so output around it is
//!   mangled (every `42` becomes `***`). That is preferred to printing a secret; use longer
//!   secrets.
//! - A value that spans several lines is redacted as a whole, and each of its lines that is at
//!   least [`MIN_LINE_PART`] bytes long (without the line break and a trailing `\r`) also counts
//!   as a secret, because logs are read and redacted one line at a time: a PEM key printed by a
//!   job reaches the redactor as separate lines. Shorter lines of such a value are not redacted
//!   on their own (they are too likely to be ordinary text, such as `}` in a JSON document).
//!   Lines common to many documents (`-----BEGIN PRIVATE KEY-----`) are then redacted wherever
//!   they appear.
//! - Where occurrences overlap, the union of the bytes they cover is replaced by one `***`, so
//!   no byte of any secret is left over (of secrets `abcd` and `abcdef`, the longer wins; of
//!   `xabc` and `abcdef` in `xabcdef`, all of it goes). Occurrences that only touch are replaced
//!   one by one: `tok1tok1` becomes `******`.
//!
//! Cost: one pass over the text with a table of the secrets' first bytes; at each position whose
//! byte starts some secret, those secrets are compared (longest first). That is linear in the text
//! for the tens of secrets a run has.

use std::borrow::Cow;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Lines of a multi-line secret shorter than this are not redacted on their own.
pub const MIN_LINE_PART: usize = 4;

/// What a secret is replaced with.
pub const MASK: &str = "***";

/// Replaces secret values by [`MASK`]; see the module documentation.
#[derive(Clone, Debug)]
pub struct Redactor {
    /// Distinct secrets, longest first.
    secrets: Vec<Vec<u8>>,
    /// For each byte value, the indices into `secrets` of those that start with it (longest
    /// first).
    by_first: Vec<Vec<u32>>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new(std::iter::empty())
    }
}

impl Redactor {
    /// A redactor for these secret values (duplicates and empty values are dropped).
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut secrets: Vec<Vec<u8>> = Vec::new();
        for v in values {
            if v.is_empty() {
                continue;
            }
            if v.contains('\n') {
                for part in v.split('\n') {
                    let part = part.strip_suffix('\r').unwrap_or(part);
                    if part.len() >= MIN_LINE_PART {
                        secrets.push(part.as_bytes().to_vec());
                    }
                }
            }
            secrets.push(v.into_bytes());
        }
        // Longest first, then bytewise, so the order (and so the result) does not depend on the
        // order the values came in.
        secrets.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        secrets.dedup();
        let mut by_first = vec![Vec::new(); 256];
        for (i, s) in secrets.iter().enumerate() {
            by_first[usize::from(s[0])].push(u32::try_from(i).unwrap_or(u32::MAX));
        }
        Redactor { secrets, by_first }
    }

    /// No secret to redact: [`Redactor::redact`] returns its input unchanged.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every secret replaced by `***`; borrowed when there was nothing to replace.
    pub fn redact<'a>(&self, text: &'a str) -> Cow<'a, str> {
        match self.replace(text.as_bytes()) {
            None => Cow::Borrowed(text),
            // Secrets are whole UTF-8 strings (or whole lines of one), and a complete UTF-8
            // sequence found in UTF-8 text starts and ends on character boundaries, so the
            // result is UTF-8; the lossy conversion is never taken.
            Some(bytes) => Cow::Owned(match String::from_utf8(bytes) {
                Ok(s) => s,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            }),
        }
    }

    /// The same for a raw line (not necessarily UTF-8), as read from a process's output.
    pub fn redact_bytes<'a>(&self, line: &'a [u8]) -> Cow<'a, [u8]> {
        match self.replace(line) {
            None => Cow::Borrowed(line),
            Some(bytes) => Cow::Owned(bytes),
        }
    }

    /// The longest secret that occurs at `at`, as its length.
    fn longest_at(&self, hay: &[u8], at: usize) -> Option<usize> {
        let rest = &hay[at..];
        self.by_first[usize::from(rest[0])]
            .iter()
            .map(|&i| self.secrets[i as usize].as_slice())
            .find(|s| rest.starts_with(s))
            .map(<[u8]>::len)
    }

    /// `hay` with the covered ranges masked, or `None` when no secret occurs in it.
    fn replace(&self, hay: &[u8]) -> Option<Vec<u8>> {
        if self.secrets.is_empty() {
            return None;
        }
        let mut out: Option<Vec<u8>> = None;
        // Bytes before `copied` are in `out` already (or masked).
        let mut copied = 0;
        // The range being masked: [start, end).
        let mut open: Option<(usize, usize)> = None;
        for at in 0..hay.len() {
            if self.by_first[usize::from(hay[at])].is_empty() {
                continue;
            }
            let Some(len) = self.longest_at(hay, at) else {
                continue;
            };
            let end = at + len;
            match &mut open {
                // Overlapping: one mask covers both.
                Some((_, e)) if at < *e => *e = (*e).max(end),
                _ => {
                    if let Some((s, e)) = open.take() {
                        let o = out.get_or_insert_with(|| Vec::with_capacity(hay.len()));
                        o.extend_from_slice(&hay[copied..s]);
                        o.extend_from_slice(MASK.as_bytes());
                        copied = e;
                    }
                    open = Some((at, end));
                }
            }
        }
        let (s, e) = open?;
        let mut o = out.unwrap_or_else(|| Vec::with_capacity(hay.len()));
        o.extend_from_slice(&hay[copied..s]);
        o.extend_from_slice(MASK.as_bytes());
        o.extend_from_slice(&hay[e..]);
        Some(o)
    }
}

/// Mode of every log file the runner and its helpers write (owner only: logs hold what jobs
/// print, which may be sensitive even after redaction).
pub const LOG_FILE_MODE: u32 = 0o600;
/// Mode of the run's `logs` directory.
pub const LOG_DIR_MODE: u32 = 0o700;

/// Creates (or empties) the directory `dir` for logs, with [`LOG_DIR_MODE`] also when it
/// existed already.
pub fn create_log_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::DirBuilder::new().mode(LOG_DIR_MODE).create(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(LOG_DIR_MODE))
        }
        Err(e) => Err(e),
    }
}

/// A log the runner (or `exec_all`) writes: every byte passes through the run's [`Redactor`],
/// the file is created with [`LOG_FILE_MODE`] (an existing file is truncated and gets that mode
/// too), and the first error (creating or writing: a full disk, a quota) is kept and returned
/// once, so the caller can say that the run's logs are incomplete. After an error nothing more
/// is written to that file: a log with a hole in the middle would look complete.
pub struct LogWriter {
    file: Option<std::fs::File>,
    path: PathBuf,
    redactor: Arc<Redactor>,
    pending: Option<String>,
}

impl LogWriter {
    /// Creates (truncating) `path`.
    pub fn create(path: &Path, redactor: Arc<Redactor>) -> LogWriter {
        LogWriter::open(path, redactor, false)
    }

    /// Opens `path` for appending, creating it when missing (the events file, which the
    /// runner and `exec_all` share: each line is one `write`).
    pub fn append(path: &Path, redactor: Arc<Redactor>) -> LogWriter {
        LogWriter::open(path, redactor, true)
    }

    fn open(path: &Path, redactor: Arc<Redactor>, append: bool) -> LogWriter {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let mut o = std::fs::OpenOptions::new();
        // Never through a symbolic link left at the name (a kept `--workdir`).
        o.create(true)
            .mode(LOG_FILE_MODE)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
        if append {
            o.append(true);
        } else {
            o.write(true).truncate(true);
        }
        let opened = o.open(path).and_then(|f| {
            // An existing file keeps its mode on open: narrow it.
            if !append {
                f.set_permissions(std::fs::Permissions::from_mode(LOG_FILE_MODE))?;
            }
            Ok(f)
        });
        let (file, pending) = match opened {
            Ok(f) => (Some(f), None),
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => (
                None,
                Some(format!(
                    "cannot create {}: it is a symbolic link, which the runner does not write \
                     through",
                    path.display()
                )),
            ),
            Err(e) => (None, Some(format!("cannot create {}: {e}", path.display()))),
        };
        LogWriter {
            file,
            path: path.to_path_buf(),
            redactor,
            pending,
        }
    }

    /// Writes `bytes` redacted, in one `write_all`. `Some(message)` the first time this log
    /// could not be created or written.
    pub fn write(&mut self, bytes: &[u8]) -> Option<String> {
        if let Some(m) = self.pending.take() {
            return Some(m);
        }
        let f = self.file.as_mut()?;
        let clean = self.redactor.redact_bytes(bytes);
        match f.write_all(&clean) {
            Ok(()) => None,
            Err(e) => {
                self.file = None;
                Some(format!("cannot write {}: {e}", self.path.display()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(values: &[&str]) -> Redactor {
        Redactor::new(values.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn every_occurrence_is_masked() {
        let red = r(&["hf_abcdef123"]);
        assert_eq!(
            red.redact("token=hf_abcdef123 again hf_abcdef123\n"),
            "token=*** again ***\n"
        );
        assert_eq!(red.redact("hf_abcdef123"), "***");
    }

    #[test]
    fn nothing_to_redact_borrows() {
        let red = r(&["s3cr3t-value"]);
        assert!(matches!(red.redact("a plain line"), Cow::Borrowed(_)));
        assert!(matches!(
            red.redact_bytes(b"a plain line\n"),
            Cow::Borrowed(_)
        ));
        assert!(matches!(red.redact("s3cr3t-valu"), Cow::Borrowed(_)));
        assert!(matches!(red.redact(""), Cow::Borrowed(_)));
        let none = Redactor::new(Vec::new());
        assert!(none.is_empty());
        assert!(matches!(none.redact("s3cr3t-value"), Cow::Borrowed(_)));
        assert!(Redactor::default().is_empty());
    }

    #[test]
    fn empty_values_are_ignored_and_short_ones_still_redacted() {
        let red = r(&["", ""]);
        assert!(red.is_empty());
        assert_eq!(red.redact("anything"), "anything");
        // The documented trade-off: a short secret masks ordinary text too.
        let red = r(&["42"]);
        assert!(!red.is_empty());
        assert_eq!(red.redact("pin 42, port 4242"), "pin ***, port ******");
    }

    #[test]
    fn overlapping_secrets_leave_nothing_of_either() {
        // Nested: the longer wins, in whichever order they were given.
        for values in [["abcd", "abcdef"], ["abcdef", "abcd"]] {
            let red = r(&values);
            assert_eq!(red.redact("x abcdef y abcd z"), "x *** y *** z");
        }
        // Overlapping with a different start: the union is masked, no tail leaks.
        let red = r(&["xabc", "abcdef"]);
        assert_eq!(red.redact("1 xabcdef 2"), "1 *** 2");
        assert_eq!(red.redact("1 xabc 2 abcdef 3"), "1 *** 2 *** 3");
        // A secret overlapping itself.
        let red = r(&["abab"]);
        assert_eq!(red.redact("-ababab-"), "-***-");
    }

    #[test]
    fn adjacent_and_repeated_occurrences_are_masked_one_by_one() {
        let red = r(&["tok1"]);
        assert_eq!(red.redact("tok1tok1"), "******");
        assert_eq!(red.redact("tok1 tok1 tok1"), "*** *** ***");
        let red = r(&["aaaa", "bbbb"]);
        assert_eq!(red.redact("aaaabbbb"), "******");
        // Duplicate values are one secret.
        let red = r(&["same", "same"]);
        assert_eq!(red.secrets.len(), 1);
        assert_eq!(red.redact("same"), "***");
    }

    #[test]
    fn unicode_secrets_and_text() {
        let red = r(&["пароль-δ", "🔑key"]);
        assert_eq!(red.redact("ключ: пароль-δ, ok"), "ключ: ***, ok");
        assert_eq!(red.redact("🔑🔑key🔑"), "🔑***🔑");
        // A secret that is a prefix of a character never matches inside it.
        let red = r(&["é"]);
        assert_eq!(red.redact("café"), "caf***");
    }

    #[test]
    fn raw_bytes_that_are_not_utf8() {
        let red = r(&["secret-1"]);
        let line = b"\xff\xfe secret-1 \x80\n";
        assert_eq!(&*red.redact_bytes(line), b"\xff\xfe *** \x80\n");
        assert_eq!(&*red.redact_bytes(b"secret-1"), b"***");
        assert_eq!(&*red.redact_bytes(b""), b"");
    }

    #[test]
    fn a_multi_line_secret_is_redacted_line_by_line() {
        let pem = "-----BEGIN KEY-----\r\nMIIEvQIBADANBgkq\nhkiG9w0\nAB\n-----END KEY-----";
        let red = Redactor::new([pem.to_owned()]);
        // Whole, when it is printed in one piece (an event, a message).
        assert_eq!(red.redact(&format!("key: {pem} end")), "key: *** end");
        // Line by line, as the log reader sees it.
        assert_eq!(red.redact("MIIEvQIBADANBgkq\n"), "***\n");
        assert_eq!(red.redact("-----BEGIN KEY-----\r\n"), "***\r\n");
        assert_eq!(red.redact("  hkiG9w0"), "  ***");
        // Lines shorter than 4 bytes are not secrets on their own.
        assert_eq!(red.redact("AB"), "AB");
        // A two-line value whose lines are both long enough.
        let red = r(&["first-half\nsecond-half"]);
        assert_eq!(red.redact("first-half"), "***");
        assert_eq!(red.redact("x second-half y"), "x *** y");
    }

    #[test]
    fn the_log_writer_redacts_and_creates_owner_only_files() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("fuzz-logwriter-{}", std::process::id()));
        create_log_dir(&dir).expect("log dir");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&dir), LOG_DIR_MODE);
        // An existing directory and file with wider modes are narrowed.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        create_log_dir(&dir).expect("log dir again");
        assert_eq!(mode(&dir), LOG_DIR_MODE);
        let path = dir.join("job.out");
        std::fs::write(&path, "old content\n").expect("old");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        let red = Arc::new(r(&["tok-secret-1"]));
        let mut w = LogWriter::create(&path, red.clone());
        assert_eq!(w.write(b"a tok-secret-1 b\n"), None);
        assert_eq!(w.write(b""), None);
        drop(w);
        assert_eq!(mode(&path), LOG_FILE_MODE);
        assert_eq!(std::fs::read_to_string(&path).expect("log"), "a *** b\n");
        let mut a = LogWriter::append(&path, red);
        assert_eq!(a.write(b"tok-secret-1\n"), None);
        drop(a);
        assert_eq!(
            std::fs::read_to_string(&path).expect("log"),
            "a *** b\n***\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_log_write_error_is_reported_once() {
        // /dev/full fails every write with ENOSPC, like a full disk.
        let mut w = LogWriter::append(Path::new("/dev/full"), Arc::new(Redactor::default()));
        let first = w.write(b"line\n").expect("an error");
        assert!(
            first.contains("/dev/full") && first.contains("No space left"),
            "{first}"
        );
        assert_eq!(w.write(b"more\n"), None);
        // A log that cannot be created says so at its first write.
        let mut w = LogWriter::create(
            Path::new("/nonexistent-dir-for-logs/x.out"),
            Arc::new(Redactor::default()),
        );
        let first = w.write(b"").expect("an error");
        assert!(
            first.starts_with("cannot create /nonexistent-dir-for-logs/x.out"),
            "{first}"
        );
        assert_eq!(w.write(b"x"), None);
    }

    #[test]
    fn many_secrets_and_a_long_line() {
        let values: Vec<String> = (0..50).map(|i| format!("secret-value-{i:02}")).collect();
        let red = Redactor::new(values.clone());
        let mut line = "x".repeat(1 << 20);
        line.push_str(&values[37]);
        line.push_str("tail");
        let out = red.redact(&line);
        assert!(out.ends_with("x***tail"));
        assert_eq!(out.len(), (1 << 20) + 3 + 4);
        // A line full of near misses (first bytes that start secrets).
        let near = "secret-value-9".repeat(10_000);
        assert!(matches!(red.redact(&near), Cow::Borrowed(_)));
    }
}
