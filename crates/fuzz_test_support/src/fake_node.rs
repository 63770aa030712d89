//! Stand-in programs of a node (`nvidia-smi`, container clients, wrappers) for tests that
//! must not depend on the machine's own.

use std::path::{Path, PathBuf};

/// Writes `content` to `path` with mode 0755 (an executable stand-in or wrapper); fails the
/// test if it cannot.
pub fn write_executable(path: &Path, content: &str) {
    write_with_mode(path, content, FileMode::Executable);
}

/// Who may read or run a file [`write_with_mode`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileMode {
    /// 0755: anyone reads and runs it.
    Executable,
    /// 0600: its owner only reads and writes it (a secrets file).
    OwnerOnly,
}

impl FileMode {
    fn bits(self) -> u32 {
        match self {
            FileMode::Executable => 0o755,
            FileMode::OwnerOnly => 0o600,
        }
    }
}

/// Writes `content` to `path` and gives it `mode`; fails the test if it cannot.
pub fn write_with_mode(path: &Path, content: &str, mode: FileMode) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, content).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode.bits()))
        .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
}

/// Writes the stand-in program `name` into `bin_dir` (created if missing) with `script` as
/// its text and mode 0755; returns its path.
pub fn install_stand_in(bin_dir: &Path, name: &str, script: &str) -> PathBuf {
    std::fs::create_dir_all(bin_dir)
        .unwrap_or_else(|e| panic!("create {}: {e}", bin_dir.display()));
    let path = bin_dir.join(name);
    write_executable(&path, script);
    path
}

/// A `PATH` value with `bin_dir` first and this process's `PATH` after it, so the stand-ins
/// there are found before the node's own programs.
pub fn path_with_first(bin_dir: &Path) -> String {
    format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}
