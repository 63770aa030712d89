//! The guard: a small process that outlives `fuzz run` when it is killed outright (SIGKILL,
//! an OOM kill, a crash) and then ends every process group the run had started.
//!
//! Process groups let the runner stop a job's whole tree, but only while the runner lives. A
//! parent-death signal (`PR_SET_PDEATHSIG`) would need code between `fork` and `exec`
//! (`pre_exec`, which is `unsafe`, forbidden in this workspace) and covers one process, not
//! its children. So the runner starts, before any job, a guard: `/bin/sh` running
//! [`GUARD_SCRIPT`] in a process group of its own, its standard input a pipe from the runner.
//! The runner writes `+PGID` when it starts a group and `-PGID` once the group is gone; at a
//! normal end it kills the guard (SIGKILL, its pipe still open: it never acts) without
//! waiting for it to read its backlog, and writes `done` after that (the guard's own way out). When the pipe
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

/// Where the guard is.
enum State {
    /// Being started on a thread of its own while the runner goes on preparing the run; the
    /// lines said meanwhile wait in `lines`.
    Starting {
        thread: std::thread::JoinHandle<Option<(Child, ChildStdin)>>,
        lines: String,
    },
    Running(Child, ChildStdin),
    /// Ended at the run's end ([`Guard::finish`]); waited for last ([`Guard::reap`]).
    Told(Child),
    /// Not started (no `/bin/sh`), or reaped.
    Gone,
}

pub(crate) struct Guard {
    state: Mutex<State>,
}

impl Guard {
    /// Starts the guard, on a thread: the runner goes on until its first process group
    /// ([`Guard::watch`] waits until the guard runs). Without `/bin/sh` there is none, and the
    /// run goes on without it.
    pub(crate) fn start(grace: Duration) -> Guard {
        let grace = format!("{:.3}", grace.as_secs_f64());
        let spawn = move || {
            let spawned = Command::new("/bin/sh")
                .arg("-c")
                .arg(GUARD_SCRIPT)
                .arg("fuzz-run-guard")
                .arg(grace)
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn();
            spawned
                .ok()
                .and_then(|mut c| c.stdin.take().map(|stdin| (c, stdin)))
        };
        let state = match std::thread::Builder::new()
            .name("fuzz-guard-start".into())
            .spawn(spawn.clone())
        {
            Ok(thread) => State::Starting {
                thread,
                lines: String::new(),
            },
            // No thread: started here.
            Err(_) => match spawn() {
                Some((child, stdin)) => State::Running(child, stdin),
                None => State::Gone,
            },
        };
        Guard {
            state: Mutex::new(state),
        }
    }

    /// Waits until the guard runs, and gives it the lines said meanwhile.
    fn running(state: &mut State) {
        if !matches!(state, State::Starting { .. }) {
            return;
        }
        if let State::Starting { thread, lines } = std::mem::replace(state, State::Gone) {
            if let Ok(Some((child, mut stdin))) = thread.join() {
                let _ = stdin.write_all(lines.as_bytes());
                *state = State::Running(child, stdin);
            }
        }
    }

    /// Says `line` to the guard; while it is being started, once it runs.
    fn send(&self, line: &str) {
        if let Ok(mut g) = self.state.lock() {
            match &mut *g {
                State::Starting { lines, .. } => {
                    lines.push_str(line);
                    lines.push('\n');
                }
                State::Running(_, stdin) => {
                    let _ = writeln!(stdin, "{line}");
                }
                State::Told(_) | State::Gone => {}
            }
        }
    }

    /// A process group the runner started (the guard runs from here on).
    pub(crate) fn watch(&self, pgid: i32) {
        if let Ok(mut g) = self.state.lock() {
            Self::running(&mut g);
        }
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

    /// The run ended normally: the guard is ended with SIGKILL while its pipe is still open (so
    /// it never sees the end of its input and touches nothing; `done` follows in case the
    /// signal could not be sent), without waiting for it to read what it was told; its process
    /// id, which the run's final sweep must spare (it is the runner's child until
    /// [`Guard::reap`]).
    pub(crate) fn finish(&self) -> Option<u32> {
        let Ok(mut g) = self.state.lock() else {
            return None;
        };
        Self::running(&mut g);
        match std::mem::replace(&mut *g, State::Gone) {
            State::Running(mut child, mut stdin) => {
                let _ = child.kill();
                let _ = writeln!(stdin, "done");
                drop(stdin);
                let pid = child.id();
                *g = State::Told(child);
                Some(pid)
            }
            State::Told(child) => {
                let pid = child.id();
                *g = State::Told(child);
                Some(pid)
            }
            State::Starting { .. } | State::Gone => None,
        }
    }

    /// Waits for the guard's exit once it was told the run ended (by then it has, as a rule).
    pub(crate) fn reap(&self) {
        self.finish();
        if let Ok(mut g) = self.state.lock() {
            if let State::Told(mut child) = std::mem::replace(&mut *g, State::Gone) {
                let _ = child.wait();
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.reap();
    }
}
