//! Every process an instance starts ends with the instance, including those that left its
//! process group (`setsid sleep 300 &`, a daemon that double-forks, a multinode node's
//! command in a session of its own).
//!
//! Two ways, picked once per run ([`Tracker::start`]):
//!
//! * **cgroup** (where the node offers a writable cgroup v2 hierarchy): the run gets
//!   `fuzz-<run-id>` under the runner's own cgroup, each instance a child `<n>` of it. The
//!   instance starts through a tiny `/bin/sh` wrapper that waits for a line on its standard
//!   input before it `exec`s the command (its standard input then `/dev/null`); the runner
//!   writes the wrapper's pid to the child's `cgroup.procs` ([`Tracker::enter`]) and only then
//!   sends the line, so the command and everything it ever starts are in that cgroup from their
//!   first instruction. (Starting the process in its cgroup, `clone3` with
//!   `CLONE_INTO_CGROUP`, would need `unsafe`, which the workspace forbids; a move made by the
//!   runner costs the shell no second start and runs while the shell loads.) Whether a process
//!   can be moved is learnt from the first instance: where it cannot, that instance and the
//!   rest of the run fall back to the subreaper (below), unless `FUZZ_PROCESS_TRACKING=cgroup`
//!   asks for cgroups, which then checks the move with a probe process before any job. At the
//!   end the members get SIGTERM, the grace period, then `cgroup.kill`.
//! * **subreaper** (otherwise): the runner is the child subreaper of everything it starts
//!   (`PR_SET_CHILD_SUBREAPER`), so an orphan is re-parented to the runner instead of `init`,
//!   and every instance gets `FUZZ_INSTANCE_ID=<run-id>:<n>` in its environment. At the end
//!   every process holding that value (found in `/proc/*/environ`) gets SIGTERM, the grace
//!   period, then SIGKILL, and those re-parented to the runner are reaped. A process that
//!   clears its environment is still ended with the run: when the run ends, every process
//!   whose parent became the runner is ended too.
//!
//! `FUZZ_PROCESS_TRACKING=subreaper` forces the second way (`cgroup` requires the first: the
//! run then refuses to go on without it). The runner is a subreaper in both ways, so the final
//! sweep also catches what escaped the runner's own helpers (readiness probes).
//!
//! When the runner itself is killed (SIGKILL), the guard ([`crate::guard`]) writes to the
//! run's `cgroup.kill` and ends every process holding the run's `FUZZ_INSTANCE_ID` prefix.
//!
//! Not tracked: a container that its runtime stops by name (podman, docker: the plan gives a
//! `stop` line). Its processes live in the container, which `podman stop` and `--rm` end, and
//! podman's monitor (`conmon`, a descendant of the client) must outlive the client to remove
//! it. Apptainer's processes are the runner's own descendants and are tracked.

use nix::sys::signal::{kill, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The environment variable that marks an instance's processes.
pub const INSTANCE_VAR: &str = "FUZZ_INSTANCE_ID";
/// `cgroup`, `subreaper` or `auto` (the default): how instances' processes are tracked.
pub const TRACKING_VAR: &str = "FUZZ_PROCESS_TRACKING";

/// The wrapper an instance starts through on the cgroup way: it waits until the runner has
/// moved it into the instance's cgroup and says so with a line on its standard input (a pipe);
/// the command then gets `/dev/null` as its standard input. Should the runner be gone before
/// it says so (end of file), the command does not start.
const CGROUP_WRAPPER: &str = r#"IFS= read -r go || exit 125
exec "$@" </dev/null"#;

/// Trackers alive in this process, and how many were ever started (a library user may run
/// several plans at once, even with the same run id).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static STARTED: AtomicU64 = AtomicU64::new(0);

/// How one run tracks the processes of its instances.
pub(crate) struct Tracker {
    /// The run id, made unique in this process: the tag prefix and the cgroup's name.
    key: String,
    /// `fuzz-<run-id>` in the cgroup v2 hierarchy, when the cgroup way is used.
    cgroup: Option<PathBuf>,
    next: AtomicU64,
    /// What the run does, in words.
    how: String,
    /// `FUZZ_PROCESS_TRACKING=cgroup`: an instance that cannot be moved into its cgroup fails.
    cgroup_required: bool,
    /// Whether the runner is the subreaper of its descendants (the fallback needs it).
    subreaper: bool,
    /// Set once a process could not be moved into its instance's cgroup: the instances after it
    /// are tracked by their tag alone.
    cgroup_unusable: AtomicBool,
}

/// How [`run_cgroup`] learns that a process can be moved into the run's cgroups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MoveCheck {
    /// A probe process is moved before any job (`FUZZ_PROCESS_TRACKING=cgroup`: the run
    /// refuses to start without cgroups).
    ProbeNow,
    /// The first instance's move says it ([`Tracker::enter`] falls back to the subreaper).
    AtFirstInstance,
}

/// One instance's tracking.
#[derive(Clone, Debug)]
pub(crate) struct Track {
    /// `FUZZ_INSTANCE_ID`'s value.
    pub tag: String,
    /// The instance's own cgroup.
    pub cgroup: Option<PathBuf>,
}

impl Tracker {
    /// Picks the way for this run (see the module documentation); `Err` only when
    /// `FUZZ_PROCESS_TRACKING=cgroup` asks for cgroups that this node does not offer.
    pub(crate) fn start(run_id: &str) -> Result<Tracker, String> {
        let want = std::env::var(TRACKING_VAR).unwrap_or_default();
        let key = match STARTED.fetch_add(1, Ordering::Relaxed) {
            0 => run_id.to_owned(),
            n => format!("{run_id}-{n}"),
        };
        let subreaper = nix::sys::prctl::set_child_subreaper(true);
        let check = if want == "cgroup" {
            MoveCheck::ProbeNow
        } else {
            MoveCheck::AtFirstInstance
        };
        let (cgroup, how) = match want.as_str() {
            "subreaper" => (None, "subreaper (forced)".to_owned()),
            "" | "auto" | "cgroup" => match run_cgroup(&key, check) {
                Ok(dir) => {
                    let how = format!("cgroup {}", dir.display());
                    (Some(dir), how)
                }
                Err(e) if want == "cgroup" => return Err(format!("{TRACKING_VAR}=cgroup: {e}")),
                Err(e) => (None, format!("subreaper (no cgroup: {e})")),
            },
            other => {
                return Err(format!(
                    "{TRACKING_VAR}={other}: expected `cgroup`, `subreaper` or `auto`"
                ))
            }
        };
        if cgroup.is_none() {
            if let Err(e) = subreaper {
                return Err(format!(
                    "cannot track the processes of instances: no cgroup, and PR_SET_CHILD_SUBREAPER failed: {e}"
                ));
            }
        }
        ACTIVE.fetch_add(1, Ordering::SeqCst);
        Ok(Tracker {
            key,
            cgroup,
            next: AtomicU64::new(0),
            how,
            cgroup_required: check == MoveCheck::ProbeNow,
            subreaper: subreaper.is_ok(),
            cgroup_unusable: AtomicBool::new(false),
        })
    }

    /// How this run tracks processes, in words.
    pub(crate) fn how(&self) -> &str {
        &self.how
    }

    /// The run's cgroup directory (for the guard).
    pub(crate) fn run_cgroup(&self) -> Option<&Path> {
        self.cgroup.as_deref()
    }

    /// The prefix of every instance's tag (for the guard).
    pub(crate) fn tag_prefix(&self) -> String {
        format!("{}:", self.key)
    }

    /// No tracking: for a container that its runtime runs under a monitor of its own and
    /// that the runner stops by name (podman's `conmon` must finish removing it).
    pub(crate) fn untracked() -> Track {
        Track {
            tag: String::new(),
            cgroup: None,
        }
    }

    /// A new instance's tracking: its tag, and its cgroup when the run has one (should its
    /// creation fail, the instance is tracked by its tag alone).
    pub(crate) fn instance(&self) -> Track {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let usable = !self.cgroup_unusable.load(Ordering::SeqCst);
        let cgroup = self.cgroup.as_ref().filter(|_| usable).and_then(|d| {
            let c = d.join(n.to_string());
            std::fs::create_dir(&c).ok().map(|()| c)
        });
        Track {
            tag: format!("{}:{n}", self.key),
            cgroup,
        }
    }

    /// The command line that starts `argv` tracked by `t`: `argv` itself, or the cgroup
    /// wrapper around it, whose standard input must be a pipe from the runner (see
    /// [`Tracker::enter`]). `program` is `argv[0]` resolved on `PATH` (the wrapper's `exec`
    /// would otherwise turn a missing program into exit 127 instead of an error to report).
    pub(crate) fn argv(t: &Track, program: &Path, argv: &[String]) -> Vec<String> {
        match &t.cgroup {
            None => argv.to_vec(),
            Some(_) => {
                let mut v = vec![
                    "/bin/sh".to_owned(),
                    "-c".to_owned(),
                    CGROUP_WRAPPER.to_owned(),
                    "fuzz-cgroup".to_owned(),
                    program.display().to_string(),
                ];
                v.extend(argv.iter().skip(1).cloned());
                v
            }
        }
    }

    /// Moves `pid`, the wrapper of [`Tracker::argv`] waiting for its line, into the instance's
    /// cgroup; the caller then sends the line. Where the move fails, the instance is tracked
    /// by its tag and so is the rest of the run: `Ok(Some(why))` the first time, to be said
    /// once. `Err` where the instance must not start (cgroups required, or no subreaper to
    /// fall back to); the caller then closes the pipe and the command never starts.
    ///
    /// The write blocks the runner's thread while the kernel waits for readers of its
    /// fork-and-exit lock to leave their fast path (an RCU grace period, about 1 to 20 ms
    /// after an idle moment, microseconds when moves follow each other), unless the node's
    /// cgroup2 is mounted with `favordynmods`.
    pub(crate) fn enter(&self, t: &mut Track, pid: u32) -> Result<Option<String>, String> {
        let Some(c) = &t.cgroup else {
            return Ok(None);
        };
        let procs = c.join("cgroup.procs");
        let moved = std::fs::OpenOptions::new()
            .write(true)
            .open(&procs)
            .and_then(|mut f| std::io::Write::write_all(&mut f, pid.to_string().as_bytes()));
        let Err(e) = moved else {
            return Ok(None);
        };
        let why = format!("cannot move a process into {}: {e}", c.display());
        remove_cgroup(c);
        t.cgroup = None;
        if self.cgroup_required {
            return Err(format!("{TRACKING_VAR}=cgroup: {why}"));
        }
        if !self.subreaper {
            return Err(format!(
                "cannot track the processes of instances: {why}, and PR_SET_CHILD_SUBREAPER failed"
            ));
        }
        let first = !self.cgroup_unusable.swap(true, Ordering::SeqCst);
        Ok(first.then_some(why))
    }

    /// Whether a process of instance `t` is still there (then [`Tracker::end`] may wait).
    pub(crate) fn has_members(&self, t: &Track) -> bool {
        match &t.cgroup {
            Some(c) => !cgroup_procs(c).is_empty(),
            None if t.tag.is_empty() => false,
            None => !tagged(&format!("{INSTANCE_VAR}={}", t.tag), true).is_empty(),
        }
    }

    /// Removes instance `t`'s cgroup at once where nothing of it is left (the usual end of an
    /// instance: no thread to start, nothing to wait for); `false` where something may be (a
    /// member, a zombie not yet reaped, a cgroup the kernel still holds): then [`Tracker::end`].
    pub(crate) fn end_if_empty(&self, t: &Track) -> bool {
        let Some(c) = &t.cgroup else {
            return false;
        };
        cgroup_procs(c).is_empty() && !has_unwaited_children() && std::fs::remove_dir(c).is_ok()
    }

    /// Ends every process of instance `t` that is still there: SIGTERM, then SIGKILL after
    /// `grace` (at once when `kill_now` is set); reaps those re-parented to the runner, and
    /// removes the instance's cgroup. Blocks for at most `grace` and a few seconds.
    pub(crate) fn end(&self, t: &Track, grace: Duration, kill_now: &AtomicBool) {
        if t.tag.is_empty() && t.cgroup.is_none() {
            return;
        }
        // In its cgroup, every descendant is found without reading every process's
        // environment (a `/proc` walk costs milliseconds on a busy node).
        let members = || match &t.cgroup {
            Some(c) => cgroup_procs(c).into_iter().collect(),
            None => tagged(&format!("{INSTANCE_VAR}={}", t.tag), true)
                .into_iter()
                .collect::<BTreeSet<i32>>(),
        };
        sweep(members, t.cgroup.as_deref(), grace, kill_now);
        if let Some(c) = &t.cgroup {
            reap_zombies_of(c);
            remove_cgroup(c);
        }
    }

    /// The run's end: whatever is left of any instance (by tag or in the run's cgroup), and
    /// every process re-parented to the runner, is ended and reaped; the run's cgroup removed.
    /// (Re-parented processes only when this is the process's one run: a library user's other
    /// children are not the run's. Never podman's `conmon`, which removes a stopped container,
    /// nor `spare`: the run's guard, told that the run ended, exits by itself and is waited for
    /// by its owner.)
    pub(crate) fn finish(&self, grace: Duration, spare: Option<u32>) {
        let spare = spare.and_then(|p| i32::try_from(p).ok());
        let prefix = format!("{INSTANCE_VAR}={}", self.tag_prefix());
        let me = std::process::id() as i32;
        let alone = ACTIVE.load(Ordering::SeqCst) == 1;
        let members = || {
            let mut m = BTreeSet::new();
            match &self.cgroup {
                Some(c) => {
                    for d in cgroup_tree(c) {
                        m.extend(cgroup_procs(&d));
                    }
                }
                None => m.extend(tagged(&prefix, false)),
            }
            if alone {
                m.extend(own_children().into_iter().filter(|&p| {
                    Some(p) != spare
                        && stat(p).is_some_and(|(state, ppid)| ppid == me && state != 'Z')
                        && std::fs::read_to_string(format!("/proc/{p}/comm"))
                            .is_ok_and(|c| c.trim() != "conmon")
                }));
            }
            m
        };
        let never = AtomicBool::new(false);
        sweep(members, None, grace, &never);
        // Zombies re-parented to the runner that nobody else waits for.
        if alone && has_unwaited_children() {
            for p in own_children() {
                if Some(p) != spare
                    && stat(p).is_some_and(|(state, ppid)| ppid == me && state == 'Z')
                {
                    let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
                }
            }
        }
        if let Some(c) = &self.cgroup {
            let mut dirs = cgroup_tree(c);
            dirs.reverse();
            for d in dirs {
                remove_cgroup(&d);
            }
        }
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        ACTIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

/// SIGTERM to every member, SIGKILL (and `cgroup.kill`) after `grace`, until none is left
/// (bounded: a few seconds after SIGKILL); reaps members re-parented to the runner.
fn sweep(
    members: impl Fn() -> BTreeSet<i32>,
    cgroup: Option<&Path>,
    grace: Duration,
    kill_now: &AtomicBool,
) {
    let me = std::process::id() as i32;
    let mut seen: BTreeSet<i32> = BTreeSet::new();
    let mut groups: BTreeSet<i32> = BTreeSet::new();
    let start = Instant::now();
    let mut killed_at: Option<Instant> = None;
    loop {
        let now: BTreeSet<i32> = members().into_iter().filter(|&p| p != me).collect();
        groups.extend(now.iter().filter_map(|&p| stat3(p).map(|(_, _, g)| g)));
        reap(&seen, me);
        reap_group_orphans(&groups, 0);
        if let Some(c) = cgroup {
            reap_zombies_of(c);
        }
        if now.is_empty() {
            break;
        }
        let kill_time = start.elapsed() >= grace || kill_now.load(Ordering::SeqCst);
        match killed_at {
            Some(at) if at.elapsed() > Duration::from_secs(5) => break,
            Some(_) => {}
            None if kill_time => killed_at = Some(Instant::now()),
            None => {}
        }
        let sig = if killed_at.is_some() {
            if let Some(c) = cgroup {
                let _ = std::fs::write(c.join("cgroup.kill"), "1");
            }
            Signal::SIGKILL
        } else {
            Signal::SIGTERM
        };
        for &p in &now {
            // Each process once with SIGTERM; SIGKILL again while it lingers.
            if sig == Signal::SIGKILL || seen.insert(p) {
                let _ = kill(Pid::from_raw(p), sig);
            }
        }
        seen.extend(now.iter().copied());
        std::thread::sleep(Duration::from_millis(20));
    }
    reap(&seen, me);
}

/// Waits for those of `pids` that became the runner's children (re-parented orphans), so no
/// zombie stays; the runner's own children are waited for where they were started.
fn reap(pids: &BTreeSet<i32>, me: i32) {
    for &p in pids {
        if stat(p).is_some_and(|(_, ppid)| ppid == me) {
            let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// Reaps the zombies re-parented to the runner that died in cgroup `dir` (a zombie is not in
/// `cgroup.procs` but its `/proc/PID/cgroup` still names the cgroup). Only orphans of the
/// instance are there: its leader, the runner's own child, was waited for already. A zombie
/// left unreaped keeps its process group alive for `kill -0`, which a node's watcher waits on.
fn reap_zombies_of(dir: &Path) {
    let me = std::process::id() as i32;
    let Some(name) = dir.file_name().and_then(|n| n.to_str()) else {
        return;
    };
    let Some(run) = dir
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
    else {
        return;
    };
    let suffix = format!("/{run}/{name}");
    if !has_unwaited_children() {
        return;
    }
    for p in own_children() {
        if !stat(p).is_some_and(|(state, ppid)| state == 'Z' && ppid == me) {
            continue;
        }
        let in_cgroup = std::fs::read_to_string(format!("/proc/{p}/cgroup")).is_ok_and(|t| {
            t.lines()
                .any(|l| l.strip_prefix("0::").is_some_and(|c| c.ends_with(&suffix)))
        });
        if in_cgroup {
            let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// Whether the runner has a child that exited and was not waited for, found without waiting
/// for it (`waitid(P_ALL, WEXITED | WNOHANG | WNOWAIT)`). The zombie reapers below list the
/// runner's children only when this says there is something to reap; after a normal end there
/// is not.
fn has_unwaited_children() -> bool {
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    !matches!(waitid(Id::All, flags), Ok(WaitStatus::StillAlive) | Err(_))
}

/// The process ids in `/proc`.
fn procs() -> Vec<i32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .collect()
}

/// The runner's children (its threads' `/proc/self/task/TID/children`), without reading every
/// process of the node; every process of `/proc` where the kernel does not list children.
fn own_children() -> Vec<i32> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return procs();
    };
    let mut out = Vec::new();
    for t in tasks.flatten() {
        match std::fs::read_to_string(t.path().join("children")) {
            Ok(text) => out.extend(
                text.split_whitespace()
                    .filter_map(|n| n.parse::<i32>().ok()),
            ),
            Err(_) => return procs(),
        }
    }
    out
}

/// Every descendant of the runner, by the kernel's lists of children (`/proc/PID/task/TID/
/// children`), without reading every process of the node; every process of `/proc` where the
/// kernel does not list children. A tagged process is always a descendant: the tag is inherited
/// through the environment, and an orphan is re-parented to the runner (its subreaper), not to
/// `init`.
fn descendants() -> Vec<i32> {
    let mut out = Vec::new();
    let mut next = own_children();
    let mut seen = BTreeSet::new();
    while let Some(p) = next.pop() {
        if !seen.insert(p) {
            continue;
        }
        out.push(p);
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{p}/task")) else {
            continue; // ended since it was listed
        };
        for t in tasks.flatten() {
            match std::fs::read_to_string(t.path().join("children")) {
                Ok(text) => next.extend(
                    text.split_whitespace()
                        .filter_map(|n| n.parse::<i32>().ok()),
                ),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    // The task ended, or the kernel lists no children at all.
                    if !t.path().exists() {
                        continue;
                    }
                    return procs();
                }
                Err(_) => {}
            }
        }
    }
    out
}

/// A process's state letter and parent, from `/proc/PID/stat`.
fn stat(pid: i32) -> Option<(char, i32)> {
    stat3(pid).map(|(s, p, _)| (s, p))
}

/// A process's state letter, parent and process group, from `/proc/PID/stat`.
fn stat3(pid: i32) -> Option<(char, i32, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold anything: fields follow the last `)`.
    let rest = &text[text.rfind(')')? + 1..];
    let mut f = rest.split_whitespace();
    let state = f.next()?.chars().next()?;
    let ppid = f.next()?.parse().ok()?;
    let pgid = f.next()?.parse().ok()?;
    Some((state, ppid, pgid))
}

/// Reaps the zombies re-parented to the runner whose process group is one of `groups`, except
/// `keep` (the runner's own child, which its owner waits for). Orphans of an instance die as
/// the runner's children (it is their subreaper); unreaped, they would keep their group
/// alive for `kill -0` and `killpg(group, 0)`, by which the runner and a node's watcher tell
/// that a group has ended. A group's zombies are the instance's: another instance's leader is
/// the leader of a group of its own.
pub(crate) fn reap_group_orphans(groups: &BTreeSet<i32>, keep: i32) {
    if groups.is_empty() || !has_unwaited_children() {
        return;
    }
    let me = std::process::id() as i32;
    for p in own_children() {
        if p == keep {
            continue;
        }
        if stat3(p)
            .is_some_and(|(state, ppid, pgid)| state == 'Z' && ppid == me && groups.contains(&pgid))
        {
            let _ = waitpid(Pid::from_raw(p), Some(WaitPidFlag::WNOHANG));
        }
    }
}

/// Live processes whose environment holds `entry` (exactly, or as a prefix when `exact` is
/// false).
fn tagged(entry: &str, exact: bool) -> Vec<i32> {
    descendants()
        .into_iter()
        .filter(|&p| {
            std::fs::read(format!("/proc/{p}/environ")).is_ok_and(|env| {
                env.split(|&b| b == 0).any(|kv| {
                    if exact {
                        kv == entry.as_bytes()
                    } else {
                        kv.starts_with(entry.as_bytes())
                    }
                })
            })
        })
        .collect()
}

/// The pids in a cgroup's `cgroup.procs` (not its children's).
fn cgroup_procs(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .map(|t| t.lines().filter_map(|l| l.trim().parse().ok()).collect())
        .unwrap_or_default()
}

/// `dir` and every cgroup below it, parents first.
fn cgroup_tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    let mut k = 0;
    while k < out.len() {
        if let Ok(rd) = std::fs::read_dir(&out[k]) {
            let mut subs: Vec<PathBuf> = rd
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path())
                .collect();
            subs.sort();
            out.extend(subs);
        }
        k += 1;
    }
    out
}

/// Removes an empty cgroup (its last processes may take a moment to leave it).
fn remove_cgroup(dir: &Path) {
    for _ in 0..50 {
        match std::fs::remove_dir(dir) {
            Ok(()) => return,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// The cgroup v2 directory the runner is in, from `/proc/self/cgroup` (`0::/path`) and the
/// `cgroup2` mount in `/proc/self/mountinfo` (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified`
/// on a hybrid hierarchy).
fn own_cgroup() -> Result<PathBuf, String> {
    let cg = std::fs::read_to_string("/proc/self/cgroup")
        .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
    let path = cg
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .ok_or("no cgroup v2 hierarchy (/proc/self/cgroup has no `0::` line)")?;
    let info = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| format!("cannot read /proc/self/mountinfo: {e}"))?;
    // `ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER`
    let mount = info
        .lines()
        .find_map(|l| {
            let (left, right) = l.split_once(" - ")?;
            if right.split_whitespace().next() != Some("cgroup2") {
                return None;
            }
            let mut f = left.split_whitespace();
            let root = f.nth(3)?;
            let point = f.next()?;
            Some((root.to_owned(), point.replace("\\040", " ")))
        })
        .ok_or("no cgroup2 file system is mounted")?;
    let (root, point) = mount;
    // Inside a cgroup namespace the path is relative to the mount's root already.
    let rel = path
        .strip_prefix(root.trim_end_matches('/'))
        .unwrap_or(path)
        .trim_start_matches('/');
    Ok(Path::new(&point).join(rel))
}

/// Creates `fuzz-<run-id>` under the runner's cgroup and checks it can be used: it offers
/// `cgroup.kill` (Linux 5.14) and, with [`MoveCheck::ProbeNow`], a process can be moved into it
/// (else the first instance's move tells, [`Tracker::enter`]).
fn run_cgroup(run_id: &str, check: MoveCheck) -> Result<PathBuf, String> {
    let base = own_cgroup()?;
    let dir = base.join(format!("fuzz-{run_id}"));
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let fail = |m: String| {
        let _ = std::fs::remove_dir(&dir);
        Err(m)
    };
    if !dir.join("cgroup.kill").exists() {
        return fail(format!(
            "{} has no cgroup.kill (Linux before 5.14)",
            dir.display()
        ));
    }
    if check == MoveCheck::AtFirstInstance {
        return Ok(dir);
    }
    // A process moved in and out: the delegation covers both cgroups.
    let probe = dir.join("probe");
    if let Err(e) = std::fs::create_dir(&probe) {
        return fail(format!("cannot create {}: {e}", probe.display()));
    }
    let ok = std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(r#"echo $$ > "$1" 2>/dev/null"#)
        .arg("fuzz-cgroup-probe")
        .arg(probe.join("cgroup.procs"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    remove_cgroup(&probe);
    if !ok {
        return fail(format!("cannot move a process into {}", probe.display()));
    }
    Ok(dir)
}

/// `program` as the instance's `exec` would find it: a path with a `/` as it is (relative to
/// `cwd`), a name on `PATH` (the instance's own, else the runner's).
pub(crate) fn resolve_program(
    program: &str,
    env: &[(String, String)],
    cwd: Option<&Path>,
) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = Path::new(program);
        let full = match cwd {
            Some(c) if p.is_relative() => c.join(p),
            _ => p.to_path_buf(),
        };
        return if runnable(&full) {
            Ok(p.to_path_buf())
        } else if full.exists() {
            Err("Permission denied (not an executable file)".into())
        } else {
            Err("No such file or directory".into())
        };
    }
    let path = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PATH")
        .map(|(_, v)| std::ffi::OsString::from(v))
        .or_else(|| std::env::var_os("PATH"))
        .unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|d| match cwd {
            Some(c) if d.is_relative() => c.join(d).join(program),
            _ => d.join(program),
        })
        .find(|p| runnable(p))
        .ok_or_else(|| "not found on PATH".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_reads_state_and_parent_past_a_name_with_parentheses() {
        let me = std::process::id() as i32;
        let (state, ppid) = stat(me).expect("own stat");
        assert!("RS".contains(state), "{state}");
        assert_eq!(ppid, nix::unistd::getppid().as_raw());
        assert!(stat(-1).is_none());
    }

    #[test]
    fn programs_resolve_as_exec_would() {
        let env = vec![("PATH".to_owned(), "/nonexistent:/bin:/usr/bin".to_owned())];
        let sh = resolve_program("sh", &env, None).expect("sh");
        assert!(sh.ends_with("sh") && sh.is_absolute(), "{}", sh.display());
        assert_eq!(
            resolve_program("no-such-program-xyz", &env, None),
            Err("not found on PATH".to_owned())
        );
        assert_eq!(
            resolve_program("/bin/sh", &[], None),
            Ok(PathBuf::from("/bin/sh"))
        );
        assert!(resolve_program("./missing", &[], Some(Path::new("/"))).is_err());
    }
}
