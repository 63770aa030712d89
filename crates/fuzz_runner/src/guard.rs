//! The guard: a small process that outlives `fuzz run` when it is killed outright (SIGKILL,
//! an OOM kill, a crash) and then ends every process group the run had started.
//!
//! Process groups let the runner stop a job's whole tree, but only while the runner lives. A
//! parent-death signal (`PR_SET_PDEATHSIG`) would need code between `fork` and `exec`
//! (`pre_exec`, which is `unsafe`, forbidden in this workspace) and covers one process, not
//! its children. So the runner starts, before any job, a guard: `/bin/sh` running
//! [`GUARD_SCRIPT`] in a process group of its own, its standard input a pipe from the runner.
//! The runner writes `+PGID` when it starts a group and `-PGID` once the group is gone; at a
//! normal end it writes `done` and the guard exits without touching anything. When the pipe
//! closes without `done` (the runner died), the guard sends SIGTERM to every group still
//! listed, waits the grace period, and sends SIGKILL.
//!
//! The guard ignores SIGINT, SIGTERM and SIGHUP: a Ctrl-C on the terminal reaches the runner,
//! which stops the jobs itself; the guard must stay until the runner is gone.

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

/// `$1` is the grace period in seconds (a decimal number). Lines: `+PGID`, `-PGID`, `cDIR`
/// (the run's cgroup), `tPREFIX` (the `FUZZ_INSTANCE_ID` prefix of the run's processes),
/// `done`.
const GUARD_SCRIPT: &str = r#"trap '' INT TERM HUP
live=""; cg=""; tag=""
while IFS= read -r l; do
  case "$l" in
    done) exit 0 ;;
    +*) live="$live ${l#+}" ;;
    -*) n=""; for g in $live; do [ "$g" = "${l#-}" ] || n="$n $g"; done; live="$n" ;;
    c*) cg="${l#c}" ;;
    t*) tag="${l#t}" ;;
  esac
done
tagged() {
  [ -n "$tag" ] || return 0
  for e in $(grep -l -s -z -F "FUZZ_INSTANCE_ID=$tag" /proc/[0-9]*/environ); do
    p="${e%/environ}"; echo "${p#/proc/}"
  done
}
for g in $live; do kill -TERM "-$g" 2>/dev/null; done
for p in $(tagged); do kill -TERM "$p" 2>/dev/null; done
[ -n "$cg" ] && for f in "$cg"/cgroup.procs "$cg"/*/cgroup.procs; do
  [ -f "$f" ] && for p in $(cat "$f" 2>/dev/null); do kill -TERM "$p" 2>/dev/null; done
done
sleep "$1"
for g in $live; do kill -KILL "-$g" 2>/dev/null; done
[ -n "$cg" ] && echo 1 > "$cg/cgroup.kill" 2>/dev/null
for p in $(tagged); do kill -KILL "$p" 2>/dev/null; done
if [ -n "$cg" ]; then
  sleep 0.2
  for d in "$cg"/*/; do rmdir "$d" 2>/dev/null; done
  rmdir "$cg" 2>/dev/null
fi
exit 0
"#;

pub(crate) struct Guard {
    child: Mutex<Option<(Child, ChildStdin)>>,
}

impl Guard {
    /// Starts the guard; without `/bin/sh` there is none, and the run goes on without it.
    pub(crate) fn start(grace: Duration) -> Guard {
        let spawned = Command::new("/bin/sh")
            .arg("-c")
            .arg(GUARD_SCRIPT)
            .arg("fuzz-run-guard")
            .arg(format!("{:.3}", grace.as_secs_f64()))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        let child = spawned
            .ok()
            .and_then(|mut c| c.stdin.take().map(|stdin| (c, stdin)));
        Guard {
            child: Mutex::new(child),
        }
    }

    fn send(&self, line: &str) {
        if let Ok(mut g) = self.child.lock() {
            if let Some((_, stdin)) = g.as_mut() {
                let _ = writeln!(stdin, "{line}");
            }
        }
    }

    /// A process group the runner started.
    pub(crate) fn watch(&self, pgid: i32) {
        self.send(&format!("+{pgid}"));
    }

    /// The run's cgroup ([`crate::reaper`]): killed as a whole when the runner dies.
    pub(crate) fn cgroup(&self, dir: &std::path::Path) {
        self.send(&format!("c{}", dir.display()));
    }

    /// The `FUZZ_INSTANCE_ID` prefix of the run's processes: they are ended when the runner
    /// dies, wherever they went (another session, another process group).
    pub(crate) fn tags(&self, prefix: &str) {
        self.send(&format!("t{prefix}"));
    }

    /// A group that is gone: its id may be reused.
    pub(crate) fn release(&self, pgid: i32) {
        self.send(&format!("-{pgid}"));
    }

    /// The run ended normally: the guard exits and touches nothing.
    pub(crate) fn finish(&self) {
        if let Ok(mut g) = self.child.lock() {
            if let Some((mut child, mut stdin)) = g.take() {
                let _ = writeln!(stdin, "done");
                drop(stdin);
                let _ = child.wait();
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.finish();
    }
}
