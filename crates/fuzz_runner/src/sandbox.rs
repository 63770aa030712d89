//! The job's filesystem on the host runtime: each host instance runs in a private mount
//! namespace where its `files:` and volume mounts appear at their paths over the node's own
//! filesystem, and it starts in its `cwd`; the node's programs, devices (GPUs) and network
//! stay the host's.
//!
//! The namespace is made by bubblewrap (`bwrap`). `bwrap --bind / /` would create a missing
//! mount point (`/tmp/allreduce.py`, `/data`) on the node's real filesystem, since its new
//! root is then the node's root: so where a destination does not exist, the runner builds the
//! view from bubblewrap's own root (a tmpfs private to the namespace) instead. Every directory
//! on the way to a missing destination is *shadowed*: a directory in that tmpfs, with the same
//! mode, into which each of its entries on the node is bound back (`--dev-bind`, symbolic
//! links recreated), so the mount point is created in the tmpfs and nothing is written on the
//! node. Below a shadowed directory everything is the node's; a new entry created directly in
//! a shadowed directory (a new file in `/tmp` itself) is private to the instance and gone
//! when it ends, as in a container. The entries are listed when the instance starts.
//!
//! Without bubblewrap, `unshare --mount` binds over destinations that exist on the node (the
//! fallback; root only); a destination that does not exist is then refused before anything
//! starts, naming the package to install.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

/// One bind of the view: `src` on the node appears at `dst` in the namespace.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Bind {
    pub src: PathBuf,
    /// Absolute, normal components only (checked by the plan's validation).
    pub dst: String,
    /// A directory (a volume), else a file.
    pub dir: bool,
    pub read_only: bool,
}

/// What an instance sees besides the node's filesystem.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct View {
    pub binds: Vec<Bind>,
    /// The working directory in the namespace (created there when missing).
    pub cwd: Option<String>,
}

/// How the namespace is made on this node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tool {
    Bwrap(PathBuf),
    /// `unshare --mount`: existing destinations only.
    Unshare(PathBuf),
}

/// What to install when no tool fits.
pub const INSTALL: &str = "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; \
     RHEL/Fedora: `dnf install bubblewrap`)";

/// The tool of this node: bubblewrap when it runs here (it may be installed without user
/// namespaces or the setuid bit it needs), else `unshare` for root. Checked once per process.
pub fn tool() -> Option<Tool> {
    static TOOL: OnceLock<Option<Tool>> = OnceLock::new();
    TOOL.get_or_init(|| {
        if std::env::var_os("FUZZ_SANDBOX").is_some_and(|v| v == "unshare") {
            return unshare_tool();
        }
        if let Some(b) = crate::which("bwrap") {
            if root_may_make_mount_namespaces() {
                return Some(Tool::Bwrap(b));
            }
            let works = std::process::Command::new(&b)
                .args(["--dev-bind", "/", "/", "--", "/bin/true"])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if works {
                return Some(Tool::Bwrap(b));
            }
        }
        unshare_tool()
    })
    .clone()
}

/// Whether this process runs as root and may make a private mount namespace and mount in it
/// (what bubblewrap does as root: no user namespace, no setuid bit): tried on a thread of its
/// own, whose namespace ends with it. Some 20 µs instead of the 2.5 ms of running bubblewrap
/// once (measured on a GPU node); where it says no (not root, or a seccomp or AppArmor profile
/// that forbids `unshare` or `mount`), bubblewrap itself is run to find out.
fn root_may_make_mount_namespaces() -> bool {
    if !nix::unistd::geteuid().is_root() {
        return false;
    }
    std::thread::spawn(|| {
        use nix::mount::{mount, MsFlags};
        nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS).is_ok()
            // Private first, so that nothing done in it could reach the node's namespace; this
            // is also the mount call a profile forbidding mounts refuses.
            && mount(
                None::<&str>,
                "/",
                None::<&str>,
                MsFlags::MS_REC | MsFlags::MS_PRIVATE,
                None::<&str>,
            )
            .is_ok()
    })
    .join()
    .unwrap_or(false)
}

fn unshare_tool() -> Option<Tool> {
    if !nix::unistd::geteuid().is_root() {
        return None;
    }
    crate::which("unshare").map(Tool::Unshare)
}

/// Where `dst` is on the node: its longest existing prefix with symbolic links resolved,
/// and the components that do not exist (empty when `dst` exists).
fn resolve(dst: &str) -> Result<(PathBuf, PathBuf), String> {
    let path = Path::new(dst);
    let mut existing = PathBuf::from("/");
    let mut missing = PathBuf::new();
    for c in path.components() {
        match c {
            Component::RootDir => {}
            Component::Normal(n) if missing.as_os_str().is_empty() => {
                let next = existing.join(n);
                if std::fs::symlink_metadata(&next).is_ok() {
                    existing = next;
                } else {
                    missing.push(n);
                }
            }
            Component::Normal(n) => missing.push(n),
            _ => return Err(format!("{dst} is not a normal absolute path")),
        }
    }
    let existing = std::fs::canonicalize(&existing)
        .map_err(|e| format!("cannot resolve {}: {e}", existing.display()))?;
    if !missing.as_os_str().is_empty() && !existing.is_dir() {
        return Err(format!(
            "{} is not a directory on this node, so nothing can be placed at {dst}",
            existing.display()
        ));
    }
    Ok((existing, missing))
}

/// Checks before anything starts that `view` can be made on this node with `tool`; a
/// refusal says why and what to do.
pub fn check(view: &View, tool: Option<&Tool>) -> Result<(), String> {
    let Some(tool) = tool else {
        return Err(format!(
            "the host runtime needs a private mount namespace to place {}, and neither \
             bubblewrap (`bwrap`) runs here nor is `unshare` usable (it needs root): {INSTALL}, \
             or use a container runtime",
            what(view)
        ));
    };
    for b in &view.binds {
        let (existing, missing) = resolve(&b.dst)?;
        if missing.as_os_str().is_empty() && existing.is_dir() != b.dir {
            return Err(format!(
                "{} is {} on this node, and the job places a {} there",
                b.dst,
                if existing.is_dir() {
                    "a directory"
                } else {
                    "a file"
                },
                if b.dir { "volume" } else { "file" }
            ));
        }
        if matches!(tool, Tool::Unshare(_)) && !missing.as_os_str().is_empty() {
            return Err(format!(
                "{} does not exist on this node, and without bubblewrap the host runtime binds \
                 over existing paths only: {INSTALL}",
                b.dst
            ));
        }
    }
    if let (Some(c), Tool::Unshare(_)) = (&view.cwd, tool) {
        let inside = view
            .binds
            .iter()
            .any(|b| b.dir && under(c, &b.dst).is_some());
        if !inside && !Path::new(c).is_dir() {
            return Err(format!(
                "the working directory {c} does not exist on this node, and without bubblewrap \
                 the host runtime cannot create it privately: {INSTALL}"
            ));
        }
    }
    Ok(())
}

fn what(view: &View) -> String {
    let mut v: Vec<&str> = view.binds.iter().map(|b| b.dst.as_str()).collect();
    if v.is_empty() {
        if let Some(c) = &view.cwd {
            v.push(c);
        }
    }
    v.join(", ")
}

/// What follows `dir` in `path` (`""` for `dir` itself), when `path` is `dir` or below it.
fn under<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    let dir = dir.trim_end_matches('/');
    if path == dir {
        Some("")
    } else {
        path.strip_prefix(dir)?.strip_prefix('/')
    }
}

/// The destinations of `view`, for people.
pub fn describe(view: &View) -> String {
    what(view)
}

/// The host runtime's filesystem for task `t`: where its process starts on the node (the
/// volume's directory when `cwd` is in a volume: also where the other nodes of a multinode job
/// start), and the private view it runs in, if it needs one (checked against this node's
/// tool). `file_binds`: the task's files (not its script) and where they are written on the
/// node; a file inside a mounted volume is written into the volume's directory instead
/// (added to `files`).
pub(crate) fn host_view(
    t: &fuzzfile_plan::Task,
    file_binds: &[(PathBuf, &str)],
    files: &mut Vec<(PathBuf, String, u32)>,
    volume_dir: &dyn Fn(&fuzzfile_plan::Mount) -> PathBuf,
) -> Result<(Option<PathBuf>, Option<View>), String> {
    // The mount a path is in (the deepest), and the rest of the path below it.
    fn deepest<'a, 'p>(
        mounts: &'a [fuzzfile_plan::Mount],
        path: &'p str,
    ) -> Option<(&'a fuzzfile_plan::Mount, &'p str)> {
        mounts
            .iter()
            .filter_map(|m| under(path, &m.path).map(|rest| (m, rest)))
            .max_by_key(|(m, _)| m.path.len())
    }
    let mount_of = |path| deepest(&t.mounts, path);
    let cwd_host = t.cwd.as_deref().map(|c| match mount_of(c) {
        Some((m, "")) => volume_dir(m),
        Some((m, rest)) => volume_dir(m).join(rest),
        None => PathBuf::from(c),
    });
    let mut binds: Vec<Bind> = t
        .mounts
        .iter()
        .map(|m| Bind {
            src: volume_dir(m),
            dst: m.path.clone(),
            dir: true,
            read_only: false,
        })
        .collect();
    for (host, path) in file_binds {
        match mount_of(path) {
            Some((m, rest)) if !rest.is_empty() => {
                let (content, mode) = files
                    .iter()
                    .find(|(h, _, _)| h == host)
                    .map(|(_, c, m)| (c.clone(), *m))
                    .unwrap_or_default();
                files.push((volume_dir(m).join(rest), content, mode));
            }
            _ => binds.push(Bind {
                src: host.clone(),
                dst: (*path).to_owned(),
                dir: false,
                read_only: true,
            }),
        }
    }
    let cwd_missing = t
        .cwd
        .as_deref()
        .is_some_and(|c| mount_of(c).is_none() && !Path::new(c).is_dir());
    if binds.is_empty() && !cwd_missing {
        return Ok((cwd_host, None));
    }
    let view = View {
        binds,
        cwd: t.cwd.clone(),
    };
    check(&view, tool().as_ref())?;
    Ok((cwd_host, Some(view)))
}

/// The command line that runs `argv` in the view (listing the node's shadowed directories
/// now). `Err` when the node changed since [`check`] (a destination became a file).
pub fn wrap(view: &View, tool: &Tool, argv: &[String]) -> Result<Vec<String>, String> {
    match tool {
        Tool::Bwrap(b) => {
            let mut v = vec![b.display().to_string()];
            v.extend(bwrap_args(view)?);
            v.push("--".into());
            v.extend(argv.iter().cloned());
            Ok(v)
        }
        Tool::Unshare(u) => {
            let mut v: Vec<String> = [
                &u.display().to_string(),
                "--mount",
                "--propagation",
                "private",
                "--",
                "/bin/sh",
                "-c",
                BIND_SCRIPT,
                "fuzz-bind",
            ]
            .map(|s| s.to_string())
            .to_vec();
            for b in &view.binds {
                v.push(b.src.display().to_string());
                v.push(b.dst.clone());
            }
            v.push("--".into());
            v.push(view.cwd.clone().unwrap_or_else(|| ".".into()));
            v.extend(argv.iter().cloned());
            Ok(v)
        }
    }
}

/// Binds each `HOST PATH` pair given before `--` over `PATH`, changes to the directory after
/// `--`, then executes the rest; the first process of a private mount namespace
/// (`unshare --mount --propagation private`), so the binds are seen by the job only.
const BIND_SCRIPT: &str = "while [ \"$1\" != -- ]; do mount --bind \"$1\" \"$2\" || exit 126; shift 2; done; shift; cd \"$1\" || exit 126; shift; exec \"$@\"";

/// What starts host instance `inst` (or any instance: only the host runtime's have limits
/// words or a view): the program for the process tracker and the whole command line, its
/// first word that program. `Err`: why it cannot start, in words.
pub(crate) fn command(inst: &crate::Instance) -> Result<(PathBuf, Vec<String>), String> {
    let cannot = |e: String| format!("cannot start {}: {e}", inst.argv[0]);
    let mut words = inst.memlock.clone();
    match &inst.sandbox {
        // The program is found in the view, by bubblewrap.
        Some(v) => {
            let t =
                tool().ok_or_else(|| cannot(format!("no private mount namespace: {INSTALL}")))?;
            words = wrap(v, &t, &[words, inst.argv.clone()].concat()).map_err(cannot)?;
        }
        None => {
            let p = crate::reaper::resolve_program(&inst.argv[0], &inst.env, inst.cwd.as_deref())
                .map_err(cannot)?;
            words.push(p.display().to_string());
            words.extend(inst.argv[1..].iter().cloned());
        }
    }
    let program = PathBuf::from(&words[0]);
    let program = if program.is_absolute() {
        program
    } else {
        crate::which(&words[0]).unwrap_or(program)
    };
    Ok((program, words))
}

/// The hidden subcommand of `fuzz` that runs a command in a view on the node where it runs:
/// `fuzz __sandbox VIEW.json -- COMMAND…`. The nodes of a multinode job on other machines
/// (reached over ssh or srun) start their commands through it, so the view is built from that
/// node's own filesystem (the run directory is shared, as for the node configuration).
pub const EXEC_ARG: &str = "__sandbox";

/// `fuzz __sandbox VIEW.json -- COMMAND…`: executes bubblewrap (or `unshare`) with the view;
/// the exit status when it cannot (126, the shell's "cannot execute").
pub fn exec_main(args: &[String]) -> i32 {
    use std::os::unix::process::CommandExt;
    let (Some(file), Some("--")) = (args.first(), args.get(1).map(String::as_str)) else {
        eprintln!("fuzz {EXEC_ARG}: usage: fuzz {EXEC_ARG} VIEW.json -- COMMAND...");
        return 2;
    };
    if args.len() < 3 {
        eprintln!("fuzz {EXEC_ARG}: no command after --");
        return 2;
    }
    let fail = |m: String| {
        eprintln!("fuzz {EXEC_ARG}: {m}");
        126
    };
    let text = match fuzzfile_io::read_to_string(Path::new(file), fuzzfile_io::Kind::NODE_CONFIG) {
        Ok(t) => t,
        Err(e) => return fail(e.to_string()),
    };
    let view: View = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(e) => return fail(format!("{file}: not a view: {e}")),
    };
    let Some(t) = tool() else {
        return fail(format!(
            "no private mount namespace on this node for {}: {INSTALL}",
            what(&view)
        ));
    };
    if let Err(e) = check(&view, Some(&t)) {
        return fail(e);
    }
    let argv = match wrap(&view, &t, &args[2..]) {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    let err = std::process::Command::new(&argv[0]).args(&argv[1..]).exec();
    fail(format!("cannot run {}: {err}", argv[0]))
}

/// bubblewrap's arguments for `view` (without the command).
pub fn bwrap_args(view: &View) -> Result<Vec<String>, String> {
    let mut args: Vec<String> = vec!["--die-with-parent".into()];
    // Destinations on the node's paths; the directories to shadow.
    let mut shadow: BTreeSet<PathBuf> = BTreeSet::new();
    let mut binds: Vec<(&Bind, PathBuf)> = Vec::new();
    for b in &view.binds {
        let (existing, missing) = resolve(&b.dst)?;
        if missing.as_os_str().is_empty() {
            if existing.is_dir() != b.dir {
                return Err(format!(
                    "{} changed on this node since the run started",
                    b.dst
                ));
            }
        } else if !inside_bind(&existing, &binds) {
            shadow.insert(existing.clone());
        }
        binds.push((b, joined(existing, &missing)));
    }
    // A missing working directory is created: in the volume it is in (as a container
    // runtime creates its working directory), else in the namespace's tmpfs.
    let mut cwd = None;
    if let Some(c) = &view.cwd {
        let (existing, missing) = resolve(c)?;
        let full = joined(existing.clone(), &missing);
        let create = !missing.as_os_str().is_empty();
        if create && !inside_bind(&full, &binds) && !inside_bind(&existing, &binds) {
            shadow.insert(existing);
        }
        cwd = Some((full, create));
    }
    if shadow.is_empty() {
        args.extend(["--dev-bind", "/", "/"].map(String::from));
    } else {
        // Every ancestor of a shadowed directory is shadowed too: the chain from the root.
        let mut all = BTreeSet::new();
        for s in &shadow {
            for a in s.ancestors() {
                all.insert(a.to_path_buf());
            }
        }
        shadowed(Path::new("/"), &all, &mut args)?;
    }
    // Parents before what is placed in them.
    binds.sort_by_key(|(_, d)| d.components().count());
    for (b, dst) in &binds {
        let flag = match (b.dir, b.read_only) {
            (_, true) => "--ro-bind",
            (_, false) => "--bind",
        };
        args.push(flag.into());
        args.push(b.src.display().to_string());
        args.push(dst.display().to_string());
    }
    if let Some((c, create)) = cwd {
        if create {
            args.push("--dir".into());
            args.push(c.display().to_string());
        }
        args.push("--chdir".into());
        args.push(c.display().to_string());
    }
    Ok(args)
}

fn joined(existing: PathBuf, missing: &Path) -> PathBuf {
    if missing.as_os_str().is_empty() {
        existing
    } else {
        existing.join(missing)
    }
}

fn inside_bind(path: &Path, binds: &[(&Bind, PathBuf)]) -> bool {
    binds.iter().any(|(b, d)| b.dir && path.starts_with(d))
}

/// The entries of shadowed directory `dir` (already a directory of the namespace's tmpfs).
/// Where a shadowed directory with many entries is bound whole in the namespace (its entries
/// are then symbolic links into it).
pub const NODE_DIRS: &str = "/.fuzz-node";

/// Above this many entries a shadowed directory's entries are symbolic links into the whole
/// directory bound at [`NODE_DIRS`]: bubblewrap reads the mount table again for every bind,
/// so binding each of a busy `/tmp`'s thousand entries took seconds.
pub const MAX_BINDS: usize = 64;

/// The entries of shadowed directory `dir` (already a directory of the namespace's tmpfs).
fn shadowed(dir: &Path, all: &BTreeSet<PathBuf>, args: &mut Vec<String>) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    // The root's entries are always bound (a few dozen; `/usr` as a link would show in paths).
    let whole = (names.len() > MAX_BINDS && dir != Path::new("/"))
        .then(|| format!("{NODE_DIRS}{}", dir.display()));
    if let Some(w) = &whole {
        args.extend(["--dev-bind".into(), dir.display().to_string(), w.clone()]);
    }
    for p in names {
        // The command line is text: an entry whose name is not UTF-8 is not shown.
        let Some(s) = p.to_str().map(str::to_owned) else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue; // gone since it was listed
        };
        if meta.file_type().is_symlink() {
            let Ok(target) = std::fs::read_link(&p) else {
                continue;
            };
            args.extend(["--symlink".into(), target.display().to_string(), s]);
        } else if meta.is_dir() && all.contains(&p) {
            args.extend([
                "--perms".into(),
                format!("{:o}", meta.permissions().mode() & 0o7777),
                "--dir".into(),
                s,
            ]);
            shadowed(&p, all, args)?;
        } else if let (Some(w), Some(name)) = (&whole, p.file_name()) {
            let target = format!("{w}/{}", name.to_string_lossy());
            args.extend(["--symlink".into(), target, s]);
        } else {
            // `-try`: an entry removed since it was listed is skipped (a busy `/tmp`).
            args.extend(["--dev-bind-try".into(), s.clone(), s]);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_probe_says_yes_as_root_and_leaves_the_process_namespace_as_it_was() {
        let before = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
        let yes = root_may_make_mount_namespaces();
        if nix::unistd::geteuid().is_root() {
            // Where root may not (a container without CAP_SYS_ADMIN), bubblewrap decides.
            let can = std::process::Command::new("unshare")
                .args(["--mount", "true"])
                .status()
                .is_ok_and(|s| s.success());
            assert_eq!(yes, can);
        } else {
            assert!(!yes);
        }
        let after = std::fs::read_to_string("/proc/self/mountinfo").expect("mountinfo");
        assert_eq!(before, after, "the probe changed this process's mounts");
    }

    fn bind(src: &str, dst: &str, dir: bool) -> Bind {
        Bind {
            src: src.into(),
            dst: dst.into(),
            dir,
            read_only: !dir,
        }
    }

    #[test]
    fn existing_destinations_keep_the_whole_node_bound() {
        let v = View {
            binds: vec![bind("/srv/x", "/tmp", true)],
            cwd: Some("/tmp".into()),
        };
        let a = bwrap_args(&v).expect("args");
        assert_eq!(
            a,
            [
                "--die-with-parent",
                "--dev-bind",
                "/",
                "/",
                "--bind",
                "/srv/x",
                "/tmp",
                "--chdir",
                "/tmp"
            ]
        );
    }

    #[test]
    fn a_missing_destination_shadows_its_parent_and_the_root() {
        let v = View {
            binds: vec![
                bind("/r/f", "/tmp/fuzz-missing-dir/a.py", false),
                bind("/r/vol", "/fuzz-missing-data", true),
            ],
            cwd: Some("/fuzz-missing-data/sub".into()),
        };
        let a = bwrap_args(&v).expect("args");
        let text = a.join(" ");
        assert!(!text.contains("--dev-bind / /"), "{text}");
        // The root's entries are bound back, /tmp is a directory of the tmpfs with /tmp's mode.
        assert!(text.contains("--dev-bind-try /usr /usr"), "{text}");
        assert!(text.contains("--perms 1777 --dir /tmp"), "{text}");
        assert!(
            text.contains("--ro-bind /r/f /tmp/fuzz-missing-dir/a.py"),
            "{text}"
        );
        assert!(text.contains("--bind /r/vol /fuzz-missing-data"), "{text}");
        // The cwd is inside the volume: created there, after the volume is bound.
        assert!(
            text.ends_with("--dir /fuzz-missing-data/sub --chdir /fuzz-missing-data/sub"),
            "{text}"
        );
    }

    #[test]
    fn a_directory_with_many_entries_is_bound_whole_and_linked_into() {
        let d = std::env::temp_dir().join(format!("fuzz-sandbox-many-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        for k in 0..=MAX_BINDS {
            std::fs::create_dir_all(d.join(format!("e{k:03}"))).expect("entry");
        }
        let dst = format!("{}/e000/missing/f.py", d.display());
        let v = View {
            binds: vec![bind("/r/f", &dst, false)],
            cwd: None,
        };
        let text = bwrap_args(&v).expect("args").join(" ");
        let shown = d.display().to_string();
        // The directory on the way is shadowed with its entries, the others linked.
        assert!(
            text.contains(&format!("--dev-bind {shown} {NODE_DIRS}{shown}")),
            "{text}"
        );
        assert!(
            text.contains(&format!("--symlink {NODE_DIRS}{shown}/e001 {shown}/e001")),
            "{text}"
        );
        assert!(text.contains(&format!("--dir {shown}/e000")), "{text}");
        assert!(
            !text.contains(&format!("--dev-bind-try {shown}/e001")),
            "{text}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn unshare_refuses_missing_destinations_and_names_bubblewrap() {
        let v = View {
            binds: vec![bind("/r/vol", "/fuzz-missing-data", true)],
            cwd: None,
        };
        let e = check(&v, Some(&Tool::Unshare("/usr/bin/unshare".into()))).unwrap_err();
        assert!(e.contains("apt-get install bubblewrap"), "{e}");
        let e = check(&v, None).unwrap_err();
        assert!(e.contains("/fuzz-missing-data"), "{e}");
        assert!(check(&v, Some(&Tool::Bwrap("/usr/bin/bwrap".into()))).is_ok());
    }
}
