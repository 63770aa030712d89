//! A fresh directory per test.

use std::ffi::OsStr;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

static SEQUENCE: AtomicU32 = AtomicU32::new(0);

/// An empty directory of one test under the system's temporary directory, named
/// `<area>-<process id>-<name>-<n>`: unique to the test process (the process id) and to the
/// call (`n` counts the directories this process made), so tests running at the same time,
/// in one process or in several, never share one. Whatever stood at that path is removed
/// first. Dropping it removes the directory and everything below it, also when the test
/// fails (a panic unwinds through the drop).
///
/// It dereferences to its [`Path`], so `dir.join(..)`, `&dir` as a `&Path` and
/// `Command::arg(&dir)` work as on a `PathBuf`.
#[derive(Debug)]
pub struct ScratchDirectory {
    path: PathBuf,
}

impl ScratchDirectory {
    /// Creates the directory (see the type's documentation for its name); `area` names the
    /// test file (`fuzz-run-test`), `name` the test.
    pub fn create(area: &str, name: &str) -> ScratchDirectory {
        let n = SEQUENCE.fetch_add(1, Ordering::SeqCst);
        let path = std::env::temp_dir().join(format!("{area}-{}-{name}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap_or_else(|e| {
            panic!(
                "cannot create the scratch directory {}: {e}",
                path.display()
            )
        });
        ScratchDirectory { path }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `contents` to `relative` below the directory (its parent directories created)
    /// and returns the file's path; fails the test if it cannot.
    pub fn write_file(&self, relative: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let file = self.path.join(relative);
        if let Some(parent) = file.parent() {
            std::fs::create_dir_all(parent)
                .unwrap_or_else(|e| panic!("cannot create {}: {e}", parent.display()));
        }
        std::fs::write(&file, contents)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
        file
    }

    /// The text of `relative` below the directory; fails the test if it cannot be read.
    pub fn read_file(&self, relative: &str) -> String {
        let file = self.path.join(relative);
        std::fs::read_to_string(&file)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()))
    }
}

impl Deref for ScratchDirectory {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for ScratchDirectory {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<OsStr> for ScratchDirectory {
    fn as_ref(&self) -> &OsStr {
        self.path.as_os_str()
    }
}

impl Drop for ScratchDirectory {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}
