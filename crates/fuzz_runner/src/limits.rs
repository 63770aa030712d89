//! Resource limits of an instance: `RLIMIT_MEMLOCK` raised to the job's memory allocation, as
//! Fuzzball does for NCCL's pinned buffers and RDMA registrations (the runner anchors'
//! "Fuzzball runtime behaviour": it raises RLIMIT_MEMLOCK to the memory allocation), and
//! never lowered: a node whose limit is already higher, or unlimited, keeps it.
//!
//! On the host runtime, and for apptainer (whose containers inherit its limits), the instance
//! starts through util-linux's `prlimit --memlock=SOFT:HARD`,
//! which sets the limit on itself and executes the command (the workspace has no `unsafe`, so
//! no `pre_exec`); podman and docker get `--ulimit memlock=SOFT:HARD` in their lines (the plan
//! writes the allocation there; [`oci_word`] raises it to the node's limit where that is
//! higher). Raising the hard limit needs `CAP_SYS_RESOURCE`: without it the soft limit is
//! raised as far as the hard limit allows, and the run says so once.

use nix::sys::resource::{getrlimit, Resource, RLIM_INFINITY};

/// A `RLIMIT_MEMLOCK` pair; `None` is unlimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memlock {
    pub soft: Option<u64>,
    pub hard: Option<u64>,
}

fn lim(v: u64) -> Option<u64> {
    (v != RLIM_INFINITY).then_some(v)
}

/// This process's limit (what an instance inherits).
pub fn current() -> Memlock {
    match getrlimit(Resource::RLIMIT_MEMLOCK) {
        Ok((s, h)) => Memlock {
            soft: lim(s),
            hard: lim(h),
        },
        Err(_) => Memlock {
            soft: None,
            hard: None,
        },
    }
}

/// Whether this process may raise a hard limit (`CAP_SYS_RESOURCE` in its effective set).
pub fn can_raise_hard() -> bool {
    const CAP_SYS_RESOURCE: u32 = 24;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << CAP_SYS_RESOURCE) != 0)
}

fn max(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => None,
    }
}

/// The limit an instance with `memory` bytes gets on a node whose limit is `now`, and a note
/// when the hard limit keeps it below the allocation. `None`: nothing to change.
pub fn raised(memory: u64, now: Memlock, raise_hard: bool) -> (Option<Memlock>, Option<String>) {
    let want = max(now.soft, Some(memory));
    if want == now.soft {
        return (None, None);
    }
    let hard = max(now.hard, want);
    if hard == now.hard || raise_hard {
        return (Some(Memlock { soft: want, hard }), None);
    }
    // The hard limit cannot be raised: as far as it goes.
    let note = format!(
        "the locked-memory limit (RLIMIT_MEMLOCK) stays at {} KiB, below the job's memory \
         allocation ({} KiB): raising its hard limit needs CAP_SYS_RESOURCE (run as root, or \
         raise `memlock` in /etc/security/limits.conf)",
        now.hard.unwrap_or(0) / 1024,
        memory / 1024
    );
    let soft = now.hard;
    if soft == now.soft {
        return (None, Some(note));
    }
    (
        Some(Memlock {
            soft,
            hard: now.hard,
        }),
        Some(note),
    )
}

fn word(v: Option<u64>, unlimited: &str) -> String {
    v.map_or(unlimited.to_owned(), |v| v.to_string())
}

/// The words that start a host instance with `m`: `prlimit --memlock=SOFT:HARD --`.
pub fn prlimit_words(m: Memlock) -> Vec<String> {
    vec![
        "prlimit".into(),
        format!(
            "--memlock={}:{}",
            word(m.soft, "unlimited"),
            word(m.hard, "unlimited")
        ),
        "--".into(),
    ]
}

/// A podman/docker `--ulimit` value `memlock=SOFT:HARD` of the plan, raised to this node's
/// limit where that is higher (`-1` is unlimited); other words unchanged.
pub fn oci_word(w: &str, now: Memlock, raise_hard: bool) -> String {
    let Some((s, _)) = w.strip_prefix("memlock=").and_then(|v| v.split_once(':')) else {
        return w.to_owned();
    };
    let Ok(memory) = s.parse::<u64>() else {
        return w.to_owned();
    };
    let m = match raised(memory, now, raise_hard).0 {
        Some(m) => m,
        // Nothing to raise: the node's own limit.
        None => now,
    };
    format!("memlock={}:{}", word(m.soft, "-1"), word(m.hard, "-1"))
}

/// cgroup v2 limits of an instance in its own cgroup `cg`, a child of the run's cgroup `run`
/// (see [`crate::reaper`]): `memory.max` the memory it asks (bytes), `cpu.max` its cores (a
/// quota of that many CPUs per period). Written before the instance's process joins `cg`.
/// `Err`: why the node does not let the runner set them (no cgroup of its own, the
/// controllers not delegated to it), for a note said once.
pub(crate) fn cgroup_limits(
    run: Option<&std::path::Path>,
    cg: Option<&std::path::Path>,
    cores: u64,
    memory: u64,
) -> Result<(), String> {
    if cores == 0 && memory == 0 {
        return Ok(());
    }
    let (Some(run), Some(cg)) = (run, cg) else {
        return Err(
            "the runner has no cgroup v2 of its own here (its processes are tracked by \
                    the subreaper)"
                .into(),
        );
    };
    let mut want = Vec::new();
    if memory > 0 {
        want.push("memory");
    }
    if cores > 0 {
        want.push("cpu");
    }
    let controllers = run.join("cgroup.controllers");
    let available = std::fs::read_to_string(&controllers)
        .map_err(|e| format!("cannot read {}: {e}", controllers.display()))?;
    let missing: Vec<&str> = want
        .iter()
        .copied()
        .filter(|w| !available.split_whitespace().any(|a| a == *w))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "the cgroup v2 controller(s) {} are not delegated to the runner's cgroup ({} lists \
             {})",
            missing.join(", "),
            controllers.display(),
            match available.trim() {
                "" => "none".to_owned(),
                a => format!("`{a}`"),
            }
        ));
    }
    let write = |path: std::path::PathBuf, value: String| {
        std::fs::write(&path, &value)
            .map_err(|e| format!("cannot write `{value}` to {}: {e}", path.display()))
    };
    let enable: Vec<String> = want.iter().map(|w| format!("+{w}")).collect();
    write(run.join("cgroup.subtree_control"), enable.join(" "))?;
    if memory > 0 {
        write(cg.join("memory.max"), memory.to_string())?;
    }
    if cores > 0 {
        const PERIOD: u64 = 100_000;
        write(
            cg.join("cpu.max"),
            format!("{} {PERIOD}", cores.saturating_mul(PERIOD)),
        )?;
    }
    Ok(())
}

/// True the first time only (in this process): a note said once per run.
pub(crate) fn first_cgroup_note() -> bool {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    !SAID.swap(true, std::sync::atomic::Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    fn m(soft: Option<u64>, hard: Option<u64>) -> Memlock {
        Memlock { soft, hard }
    }

    #[test]
    fn raised_to_the_allocation_never_lowered() {
        // 8 MiB (a Debian default) raised to a 64 MiB allocation.
        let (r, note) = raised(64 * MIB, m(Some(8 * MIB), Some(8 * MIB)), true);
        assert_eq!(r, Some(m(Some(64 * MIB), Some(64 * MIB))));
        assert!(note.is_none());
        // A higher or unlimited limit is kept.
        assert_eq!(
            raised(4 * MIB, m(Some(8 * MIB), Some(8 * MIB)), true).0,
            None
        );
        assert_eq!(raised(4 * MIB, m(None, None), true).0, None);
        // The soft limit alone when the hard one allows it; an unlimited hard limit stays.
        assert_eq!(
            raised(64 * MIB, m(Some(8 * MIB), None), false).0,
            Some(m(Some(64 * MIB), None))
        );
    }

    #[test]
    fn without_cap_sys_resource_up_to_the_hard_limit_with_a_note() {
        let (r, note) = raised(64 * MIB, m(Some(2 * MIB), Some(8 * MIB)), false);
        assert_eq!(r, Some(m(Some(8 * MIB), Some(8 * MIB))));
        let note = note.expect("a note");
        assert!(
            note.contains("8192 KiB") && note.contains("65536 KiB"),
            "{note}"
        );
    }

    #[test]
    fn cgroup_limits_are_written_where_the_controllers_are_delegated() {
        let d = std::env::temp_dir().join(format!("fuzz-cg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let cg = d.join("0");
        std::fs::create_dir_all(&cg).expect("tree");
        std::fs::write(d.join("cgroup.controllers"), "cpuset cpu io memory pids\n").expect("w");
        cgroup_limits(Some(&d), Some(&cg), 2, 64 * MIB).expect("set");
        let read = |p: &std::path::Path| std::fs::read_to_string(p).expect("read");
        assert_eq!(read(&d.join("cgroup.subtree_control")), "+memory +cpu");
        assert_eq!(read(&cg.join("memory.max")), "67108864");
        assert_eq!(read(&cg.join("cpu.max")), "200000 100000");
        // No memory controller delegated: said, nothing written.
        std::fs::write(d.join("cgroup.controllers"), "cpu pids\n").expect("w");
        let e = cgroup_limits(Some(&d), Some(&cg), 0, MIB).unwrap_err();
        assert!(e.contains("memory") && e.contains("cpu pids"), "{e}");
        assert!(cgroup_limits(None, None, 1, MIB).is_err());
        assert!(cgroup_limits(None, None, 0, 0).is_ok());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn oci_ulimit_is_raised_to_the_nodes_limit() {
        let now = m(Some(8 * MIB), Some(8 * MIB));
        assert_eq!(
            oci_word("memlock=67108864:67108864", now, true),
            "memlock=67108864:67108864"
        );
        assert_eq!(
            oci_word("memlock=1048576:1048576", now, true),
            "memlock=8388608:8388608"
        );
        assert_eq!(
            oci_word("memlock=1048576:1048576", m(None, None), true),
            "memlock=-1:-1"
        );
        assert_eq!(oci_word("nofile=1:2", now, true), "nofile=1:2");
    }
}
