//! Writing below a directory without ever following a symbolic link there.
//!
//! Jobs write into volumes, a kept `--workdir` holds what earlier runs left, and a `--volume
//! NAME=DIR` directory holds whatever its owner put in it: any of them may hold a symbolic
//! link where the runner is about to write (`files:`, a transfer's destination, a log). Every
//! file the runner writes below the run directory or a volume goes through a [`Dir`]: a
//! directory opened once (its own path is trusted: the runner made it or the user named it),
//! below which every path is resolved by the kernel with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)`, or, where the kernel has no `openat2`
//! (before Linux 5.6, or a seccomp filter that answers `ENOSYS`), one component at a time
//! with `openat(O_NOFOLLOW | O_DIRECTORY)`. So:
//!
//! * a symbolic link on the way to a file (a directory component) is an error
//!   ([`ErrorKind::Symlink`]), never followed; `..` and absolute paths are refused;
//! * directories created on the way are created with `mkdirat` in the directory just opened;
//! * [`Dir::write_file`] writes a temporary file (`O_CREAT | O_EXCL | O_NOFOLLOW`, created with
//!   its final mode, so a file holding secrets is never readable by others) and renames it over
//!   the name: a symbolic link at the name itself is replaced, never written through;
//! * [`Dir::create_file`] (logs) opens with `O_NOFOLLOW`: a symbolic link at the name is an
//!   error.

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::fmt;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a write below a [`Dir`] did not happen.
#[derive(Debug)]
pub struct Error {
    /// The path as the user would write it (the root joined with the relative path).
    pub path: PathBuf,
    pub kind: ErrorKind,
}

#[derive(Debug)]
pub enum ErrorKind {
    /// A symbolic link is where a directory or the file was expected.
    Symlink,
    /// The relative path is absolute, holds `..`, or is empty where a name is needed.
    BadPath(&'static str),
    /// A directory is where the file would go.
    IsDirectory,
    /// A file (not a directory) is where a directory would go.
    NotDirectory,
    Io(std::io::Error),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.path.display();
        match &self.kind {
            ErrorKind::Symlink => write!(
                f,
                "{p}: a symbolic link is on the way; the runner does not write through \
                 symbolic links (remove the link, or write to a path without one)"
            ),
            ErrorKind::BadPath(why) => write!(f, "{p}: {why}"),
            ErrorKind::IsDirectory => write!(f, "{p} is a directory"),
            ErrorKind::NotDirectory => {
                write!(f, "{p}: a file is where a directory is needed")
            }
            ErrorKind::Io(e) => write!(f, "{p}: {e}"),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// A directory opened once; everything below it is reached without following symbolic links.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    path: PathBuf,
}

/// What is at a name in a directory (not following a symbolic link there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    Other,
}

static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

const DIR_MODE: u32 = 0o755;

impl Dir {
    /// Opens the directory `path` (a symbolic link in `path` itself is followed: the root is
    /// the runner's or the user's choice).
    pub fn open(path: &Path) -> Result<Dir> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| err(path, e))?;
        Ok(Dir {
            fd,
            path: path.to_owned(),
        })
    }

    /// Creates `path` with its missing parents (an ordinary `mkdir -p`: the root is the
    /// runner's or the user's choice), then opens it.
    pub fn create_root(path: &Path) -> Result<Dir> {
        std::fs::create_dir_all(path).map_err(|e| Error {
            path: path.to_owned(),
            kind: ErrorKind::Io(e),
        })?;
        Dir::open(path)
    }

    /// The directory's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn shown(&self, rel: &Path) -> PathBuf {
        if rel.as_os_str().is_empty() {
            self.path.clone()
        } else {
            self.path.join(rel)
        }
    }

    /// Opens the existing directory `rel` below this one.
    pub fn open_dir(&self, rel: &Path) -> Result<Dir> {
        let rel = relative(&self.shown(rel), rel)?;
        let fd = self.open_beneath(&rel, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())?;
        Ok(Dir {
            fd,
            path: self.shown(&rel),
        })
    }

    /// Opens the directory `rel` below this one, creating what is missing (mode 0755).
    pub fn create_dirs(&self, rel: &Path) -> Result<Dir> {
        let rel = relative(&self.shown(rel), rel)?;
        if rel.as_os_str().is_empty() {
            return self.try_clone();
        }
        match self.open_beneath(&rel, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()) {
            Ok(fd) => {
                return Ok(Dir {
                    fd,
                    path: self.shown(&rel),
                })
            }
            Err(Error {
                kind: ErrorKind::Io(e),
                ..
            }) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let mut cur = self.try_clone()?;
        for c in rel.components() {
            let name = c.as_os_str();
            cur = cur.child_dir(name, true)?;
        }
        Ok(cur)
    }

    fn try_clone(&self) -> Result<Dir> {
        let fd = self
            .fd
            .try_clone()
            .map_err(|e| self.io_err(Path::new(""), e))?;
        Ok(Dir {
            fd,
            path: self.path.clone(),
        })
    }

    /// The directory `name` (one component) in this one, created when `create` and missing.
    fn child_dir(&self, name: &OsStr, create: bool) -> Result<Dir> {
        let path = self.path.join(name);
        if create {
            match rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(DIR_MODE)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(err(&path, e)),
            }
        }
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| self.classify(name, &path, e))?;
        Ok(Dir { fd, path })
    }

    /// `ELOOP` for a link, `ENOTDIR` for a file where a directory is needed.
    fn classify(&self, name: &OsStr, path: &Path, e: Errno) -> Error {
        if e == Errno::LOOP || e == Errno::NOTDIR {
            let kind = match self.kind(Path::new(name)) {
                Some(Kind::Symlink) => ErrorKind::Symlink,
                _ if e == Errno::LOOP => ErrorKind::Symlink,
                _ => ErrorKind::NotDirectory,
            };
            return Error {
                path: path.to_owned(),
                kind,
            };
        }
        err(path, e)
    }

    /// `openat2` beneath this directory, no symbolic link followed; the component walk where
    /// the kernel has no `openat2`.
    fn open_beneath(&self, rel: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd> {
        if rel.as_os_str().is_empty() {
            return self
                .fd
                .try_clone()
                .map_err(|e| self.io_err(Path::new(""), e));
        }
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let shown = self.shown(rel);
        match rustix::fs::openat2(
            &self.fd,
            rel,
            flags,
            mode,
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
        ) {
            Ok(fd) => return Ok(fd),
            // No openat2 here; or a link (`ELOOP`, or `EXDEV` for one that leads out), or a
            // file where a directory is needed, somewhere on the way (`O_DIRECTORY |
            // O_NOFOLLOW` on a link is `ENOTDIR`): the walk names which component.
            Err(Errno::NOSYS) | Err(Errno::NOTDIR) | Err(Errno::LOOP) | Err(Errno::XDEV) => {}
            Err(e) => return Err(err(&shown, e)),
        }
        self.open_by_components(rel, flags, mode)
    }

    /// The fallback of [`Dir::open_beneath`]: each directory with `O_NOFOLLOW | O_DIRECTORY`.
    fn open_by_components(&self, rel: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd> {
        let comps: Vec<&OsStr> = rel.components().map(|c| c.as_os_str()).collect();
        let Some((last, dirs)) = comps.split_last() else {
            return self
                .fd
                .try_clone()
                .map_err(|e| self.io_err(Path::new(""), e));
        };
        let mut cur = self.try_clone()?;
        for d in dirs {
            cur = cur.child_dir(d, false)?;
        }
        let path = cur.path.join(last);
        rustix::fs::openat(&cur.fd, *last, flags, mode).map_err(|e| cur.classify(last, &path, e))
    }

    /// What is at `rel` below this directory (not following a link at its last component);
    /// `None` when nothing is there (or it cannot be reached without following a link).
    pub fn kind(&self, rel: &Path) -> Option<Kind> {
        let (parent, name) = split(rel)?;
        let dir = if parent.as_os_str().is_empty() {
            None
        } else {
            Some(self.open_dir(parent).ok()?)
        };
        let fd = dir.as_ref().map_or(self.fd.as_fd(), |d| d.fd.as_fd());
        let st = rustix::fs::statat(fd, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
        Some(match FileType::from_raw_mode(st.st_mode) {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            _ => Kind::Other,
        })
    }

    /// Writes `content` to `rel` below this directory with `mode`: parents created, a temporary
    /// file renamed over the name (see the module documentation).
    pub fn write_file(&self, rel: &Path, content: &[u8], mode: u32) -> Result<()> {
        let shown = self.shown(rel);
        let rel = relative(&shown, rel)?;
        let (parent, name) = split(&rel).ok_or(Error {
            path: shown.clone(),
            kind: ErrorKind::BadPath("names no file"),
        })?;
        let dir = self.create_dirs(parent)?;
        dir.write_new(name, mode, |f| f.write_all(content))
    }

    /// Writes the file `name` in this directory through a temporary file that `fill` fills,
    /// renamed over `name` when complete (nothing is left on failure).
    pub fn write_new(
        &self,
        name: &OsStr,
        mode: u32,
        fill: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> Result<()> {
        let path = self.path.join(name);
        if self.kind(Path::new(name)) == Some(Kind::Dir) {
            return Err(Error {
                path,
                kind: ErrorKind::IsDirectory,
            });
        }
        let (mut f, tmp) = self.create_temp(name, mode)?;
        let written = fill(&mut f)
            .and_then(|()| f.flush())
            .and_then(|()| f.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(mode)));
        drop(f);
        let done = match written {
            Ok(()) => rustix::fs::renameat(&self.fd, &tmp, &self.fd, name).map_err(|e| {
                if e == Errno::ISDIR {
                    Error {
                        path: path.clone(),
                        kind: ErrorKind::IsDirectory,
                    }
                } else {
                    err(&path, e)
                }
            }),
            Err(e) => Err(Error {
                path: path.clone(),
                kind: ErrorKind::Io(e),
            }),
        };
        if done.is_err() {
            let _ = rustix::fs::unlinkat(&self.fd, &tmp, AtFlags::empty());
        }
        done
    }

    /// A new file beside `name` (`.NAME.partial-PID-N`), created with `mode` and never through
    /// a link; its name.
    pub fn create_temp(&self, name: &OsStr, mode: u32) -> Result<(File, PathBuf)> {
        let tmp = temp_name(name);
        let fd = rustix::fs::openat(
            &self.fd,
            &tmp,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode & 0o777),
        )
        .map_err(|e| err(&self.path.join(&tmp), e))?;
        Ok((File::from(fd), tmp))
    }

    /// Creates (or truncates) the file `rel` below this directory for writing, with `mode`
    /// when new; parents created. A symbolic link at the name is an error, not followed.
    pub fn create_file(&self, rel: &Path, mode: u32) -> Result<File> {
        let shown = self.shown(rel);
        let rel = relative(&shown, rel)?;
        let (parent, name) = split(&rel).ok_or(Error {
            path: shown.clone(),
            kind: ErrorKind::BadPath("names no file"),
        })?;
        let dir = self.create_dirs(parent)?;
        let fd = dir.open_beneath(
            Path::new(name),
            OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC,
            Mode::from_raw_mode(mode & 0o777),
        )?;
        Ok(File::from(fd))
    }

    /// Renames `from` to `to`, both names in this directory (a link at `to` is replaced).
    pub fn rename(&self, from: &Path, to: &OsStr) -> Result<()> {
        rustix::fs::renameat(&self.fd, from, &self.fd, to).map_err(|e| {
            let path = self.path.join(to);
            if e == Errno::ISDIR {
                Error {
                    path,
                    kind: ErrorKind::IsDirectory,
                }
            } else if e == Errno::NOTDIR {
                Error {
                    path,
                    kind: ErrorKind::NotDirectory,
                }
            } else {
                err(&path, e)
            }
        })
    }

    /// Creates the directory `name` in this one (mode 0755) and opens it.
    pub fn make_dir(&self, name: &OsStr) -> Result<Dir> {
        rustix::fs::mkdirat(&self.fd, name, Mode::from_raw_mode(DIR_MODE))
            .map_err(|e| err(&self.path.join(name), e))?;
        self.child_dir(name, false)
    }

    /// Creates the symbolic link `name` in this directory, pointing at `target`.
    pub fn symlink(&self, target: &Path, name: &Path) -> Result<()> {
        rustix::fs::symlinkat(target, &self.fd, name).map_err(|e| err(&self.path.join(name), e))
    }

    /// Sets the permission bits of this directory.
    pub fn set_mode(&self, mode: u32) -> Result<()> {
        rustix::fs::fchmod(&self.fd, Mode::from_raw_mode(mode & 0o7777))
            .map_err(|e| err(&self.path, e))
    }

    /// Removes `name` in this directory: a file or link, or a whole tree (entries removed
    /// through their directory's descriptor, links never followed).
    pub fn remove(&self, name: &OsStr) -> Result<()> {
        match self.kind(Path::new(name)) {
            None => Ok(()),
            Some(Kind::Dir) => {
                let d = self.child_dir(name, false)?;
                let names: Vec<std::ffi::OsString> = {
                    let dup = d.fd.try_clone().map_err(|e| d.io_err(Path::new(""), e))?;
                    let rd = rustix::fs::Dir::new(dup).map_err(|e| err(&d.path, e))?;
                    rd.filter_map(|e| e.ok())
                        .map(|e| OsStr::from_bytes(e.file_name().to_bytes()).to_owned())
                        .filter(|n| n != "." && n != "..")
                        .collect()
                };
                for n in names {
                    d.remove(&n)?;
                }
                rustix::fs::unlinkat(&self.fd, name, AtFlags::REMOVEDIR)
                    .map_err(|e| err(&self.path.join(name), e))
            }
            Some(_) => rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())
                .map_err(|e| err(&self.path.join(name), e)),
        }
    }

    fn io_err(&self, rel: &Path, e: std::io::Error) -> Error {
        Error {
            path: self.shown(rel),
            kind: ErrorKind::Io(e),
        }
    }
}

/// A name beside `name` for what is being written: `.NAME.partial-PID-N`.
pub fn temp_name(name: &OsStr) -> PathBuf {
    let seq = TEMP_SEQ.fetch_add(1, Ordering::Relaxed);
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".partial-{}-{seq}", std::process::id()));
    PathBuf::from(tmp)
}

/// Writes `content` to `rel` below `root` (see [`Dir::write_file`]).
pub fn write_below(root: &Path, rel: &Path, content: &[u8], mode: u32) -> Result<()> {
    Dir::open(root)?.write_file(rel, content, mode)
}

/// `rel` as normal components only: `.` dropped, `..` and absolute paths refused.
fn relative(shown: &Path, rel: &Path) -> Result<PathBuf> {
    let mut out = PathBuf::new();
    for c in rel.components() {
        match c {
            Component::Normal(n) => out.push(n),
            Component::CurDir => {}
            Component::ParentDir => {
                return Err(Error {
                    path: shown.to_owned(),
                    kind: ErrorKind::BadPath("contains `..`"),
                })
            }
            Component::RootDir | Component::Prefix(_) => {
                return Err(Error {
                    path: shown.to_owned(),
                    kind: ErrorKind::BadPath("is absolute where a relative path is needed"),
                })
            }
        }
    }
    Ok(out)
}

/// `(parent, last component)` of a relative path; `None` when it has no component.
fn split(rel: &Path) -> Option<(&Path, &OsStr)> {
    let name = rel.file_name()?;
    Some((rel.parent().unwrap_or(Path::new("")), name))
}

fn err(path: &Path, e: Errno) -> Error {
    Error {
        path: path.to_owned(),
        kind: if e == Errno::LOOP {
            ErrorKind::Symlink
        } else {
            ErrorKind::Io(std::io::Error::from(e))
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    fn tmp(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "fuzz-safe-fs-{tag}-{}-{}",
            std::process::id(),
            TEMP_SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    #[test]
    fn writes_below_and_creates_parents_with_the_mode() {
        let root = tmp("write");
        let dir = Dir::open(&root).expect("open");
        dir.write_file(Path::new("a/b/c.txt"), b"hello", 0o600)
            .expect("write");
        let p = root.join("a/b/c.txt");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "hello");
        let mode = std::fs::metadata(&p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Replaced, not appended.
        dir.write_file(Path::new("a/b/c.txt"), b"x", 0o644)
            .expect("rewrite");
        assert_eq!(std::fs::read_to_string(&p).expect("read"), "x");
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn a_link_on_the_way_is_refused_and_a_link_at_the_name_replaced() {
        let root = tmp("links");
        let outside = tmp("outside");
        std::fs::write(outside.join("file"), "keep").expect("write");
        symlink(&outside, root.join("dir")).expect("symlink");
        symlink(outside.join("file"), root.join("name")).expect("symlink");
        let dir = Dir::open(&root).expect("open");
        let e = dir
            .write_file(Path::new("dir/file"), b"evil", 0o644)
            .expect_err("through a directory link");
        assert!(matches!(e.kind, ErrorKind::Symlink), "{e}");
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = dir
            .create_dirs(Path::new("dir/sub"))
            .expect_err("mkdir through a link");
        assert!(matches!(e.kind, ErrorKind::Symlink), "{e}");
        dir.write_file(Path::new("name"), b"new", 0o644)
            .expect("a link at the name is replaced");
        assert_eq!(
            std::fs::read_to_string(outside.join("file")).expect("read"),
            "keep"
        );
        assert!(!std::fs::symlink_metadata(root.join("name"))
            .expect("meta")
            .file_type()
            .is_symlink());
        let e = dir
            .create_file(Path::new("dir/log"), 0o600)
            .expect_err("log through a link");
        assert!(matches!(e.kind, ErrorKind::Symlink), "{e}");
        symlink(outside.join("file"), root.join("log")).expect("symlink");
        let e = dir
            .create_file(Path::new("log"), 0o600)
            .expect_err("log at a link");
        assert!(matches!(e.kind, ErrorKind::Symlink), "{e}");
        for bad in ["../x", "/etc/x", ""] {
            assert!(
                dir.write_file(Path::new(bad), b"x", 0o644).is_err(),
                "{bad}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(outside.join("file")).expect("read"),
            "keep"
        );
        assert_eq!(std::fs::read_dir(&outside).expect("ls").count(), 1);
        let _ = std::fs::remove_dir_all(root);
        let _ = std::fs::remove_dir_all(outside);
    }

    #[test]
    fn the_component_walk_refuses_links_too() {
        let root = tmp("walk");
        let outside = tmp("walk-outside");
        std::fs::create_dir(root.join("real")).expect("mkdir");
        symlink(&outside, root.join("real/link")).expect("symlink");
        let dir = Dir::open(&root).expect("open");
        let e = dir
            .open_by_components(
                Path::new("real/link/x"),
                OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW,
                Mode::from_raw_mode(0o644),
            )
            .expect_err("walk through a link");
        assert!(matches!(e.kind, ErrorKind::Symlink), "{e}");
        let f = dir.open_by_components(
            Path::new("real/y"),
            OFlags::WRONLY | OFlags::CREATE | OFlags::NOFOLLOW,
            Mode::from_raw_mode(0o644),
        );
        assert!(f.is_ok());
        assert!(root.join("real/y").exists());
        assert_eq!(std::fs::read_dir(&outside).expect("ls").count(), 0);
        let _ = std::fs::remove_dir_all(root);
        let _ = std::fs::remove_dir_all(outside);
    }

    #[test]
    fn a_tree_is_removed_without_following_its_links() {
        let root = tmp("remove");
        let outside = tmp("remove-outside");
        std::fs::write(outside.join("keep"), "k").expect("write");
        std::fs::create_dir_all(root.join("t/sub")).expect("mkdir");
        std::fs::write(root.join("t/sub/f"), "f").expect("write");
        symlink(&outside, root.join("t/link")).expect("symlink");
        let dir = Dir::open(&root).expect("open");
        dir.remove(OsStr::new("t")).expect("remove");
        assert!(!root.join("t").exists());
        assert!(outside.join("keep").exists());
        let _ = std::fs::remove_dir_all(root);
        let _ = std::fs::remove_dir_all(outside);
    }
}
