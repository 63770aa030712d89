//! Nothing of a run outlives it: `fuzz run` stopped by SIGINT, SIGTERM, SIGKILL or a job's
//! `timeout.execute`, on every multinode launcher (`local`, `ssh` over loopback, `slurm` on the
//! local cluster of scripts/slurm-local.sh), and what a job started with `setsid` (out of its
//! process group), with either way of tracking processes (a cgroup per instance, or the
//! subreaper forced by `FUZZ_PROCESS_TRACKING=subreaper`).
//!
//! Every process of a case runs `sleep N` with an `N` no other test uses; after the stop, no
//! live process with that command line may remain (waited for a bounded time: the runner's
//! grace period, then SIGKILL, is 1 s here).
//!
//! The ssh and slurm cases need root, OpenSSH and Slurm; without them they print why and pass,
//! unless `FUZZ_REQUIRE_SYSTEM_TESTS` is set.

use fuzz_test_support::{require, LocalSlurm, ScratchDirectory, Sshd};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

static SEQ: AtomicU32 = AtomicU32::new(0);

/// How long the processes of a stopped run may take to go (grace 1 s, then SIGKILL).
const GONE_WITHIN: Duration = Duration::from_secs(20);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Int,
    Term,
    Kill,
    /// The job's `timeout.execute` (2 s).
    Timeout,
}

struct Case {
    dir: ScratchDirectory,
    /// `sleep MARKER` is in the command line of every long-lived process of the case.
    marker: String,
}

impl Case {
    fn new(name: &str) -> Case {
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let dir = ScratchDirectory::create("fuzz-stops", name);
        Case {
            dir,
            // A duration no other process on the machine sleeps for.
            marker: format!("7{:07}{seq:03}", pid % 10_000_000),
        }
    }

    /// A two-node generic job: the head leaves `setsid sleep` behind, then every node starts
    /// `setsid sleep` in the background, says so, and sleeps in the foreground.
    fn multinode(&self, stop: Stop) -> PathBuf {
        self.multinode_with(stop, "setsid sleep {m} & ")
    }

    /// The same, `node_escape` (with `{m}` for the marker) run first on every node.
    fn multinode_with(&self, stop: Stop, node_escape: &str) -> PathBuf {
        let m = &self.marker;
        let d = self.dir.display();
        let timeout = if stop == Stop::Timeout {
            "    policy:\n      timeout:\n        execute: 3s\n"
        } else {
            ""
        };
        let node_escape = node_escape.replace("{m}", m);
        let text = format!(
            "version: v4\njobs:\n  train:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n      setsid sleep {m} &\n      exec_all sh -c '{node_escape}touch {d}/started.$RANK; exec sleep {m}'\n    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 1GiB\n{timeout}    multinode:\n      nodes: 2\n      implementation: generic\n      procs-per-node: 1\n"
        );
        let f = self.dir.join("train.fz");
        std::fs::write(&f, text).expect("write Fuzzfile");
        f
    }

    /// `fuzz run FILE` with the flags every case uses (a grace period of 1 s).
    fn fuzz_run(&self, file: &Path) -> Command {
        self.fuzz_run_with_grace(file, "1")
    }

    /// `fuzz run` of `text` (written to `file_name` in the case's directory) with
    /// `FUZZ_PROCESS_TRACKING=tracking` and an event log: its output, and the tracking the
    /// run reported in its first event (`plan_ready`'s `process_tracking`).
    fn run_tracked(&self, file_name: &str, text: &str, tracking: &str) -> (Output, String) {
        let f = self.dir.join(file_name);
        std::fs::write(&f, text).expect("write Fuzzfile");
        let events = self.dir.join("events.jsonl");
        let out = self
            .fuzz_run(&f)
            .env("FUZZ_PROCESS_TRACKING", tracking)
            .arg("--events")
            .arg(&events)
            .output()
            .expect("fuzz run");
        let ev = std::fs::read_to_string(&events).expect("events");
        let ready: serde_json::Value =
            serde_json::from_str(ev.lines().next().expect("plan_ready")).expect("json");
        let how = ready["process_tracking"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        (out, how)
    }

    fn fuzz_run_with_grace(&self, file: &Path, grace: &str) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fuzz"));
        cmd.arg("run")
            .arg(file)
            .args(["--status", "never", "--runtime", "host", "--grace", grace])
            .arg("--workdir")
            .arg(self.dir.join("run"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        cmd
    }

    /// Waits until `started.0` .. `started.{n-1}` exist.
    fn wait_started(&self, n: usize, child: &mut Child) {
        let start = Instant::now();
        while !(0..n).all(|r| self.dir.join(format!("started.{r}")).exists()) {
            if let Ok(Some(s)) = child.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = child.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut e, &mut err);
                }
                panic!("fuzz run ended ({s}) before every node started:\n{err}");
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the nodes never started"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // Give the background `setsid sleep` a moment to exist.
        std::thread::sleep(Duration::from_millis(200));
    }

    /// Stops the run as `stop` says and returns its exit code (`None` after SIGKILL).
    fn stop(&self, mut child: Child, stop: Stop) -> Option<i32> {
        let pid = Pid::from_raw(child.id() as i32);
        match stop {
            Stop::Int => kill(pid, Signal::SIGINT).expect("SIGINT"),
            Stop::Term => kill(pid, Signal::SIGTERM).expect("SIGTERM"),
            Stop::Kill => kill(pid, Signal::SIGKILL).expect("SIGKILL"),
            Stop::Timeout => {}
        }
        let start = Instant::now();
        loop {
            if let Ok(Some(s)) = child.try_wait() {
                return s.code();
            }
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("fuzz run did not end after {stop:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Every live process of the case (`sleep MARKER` in its command line).
    fn alive(&self) -> Vec<String> {
        alive_with(&format!("sleep {}", self.marker))
    }

    /// Asserts that no process of the case remains within [`GONE_WITHIN`].
    fn assert_gone(&self, what: &str) {
        let start = Instant::now();
        loop {
            let alive = self.alive();
            if alive.is_empty() {
                return;
            }
            if start.elapsed() > GONE_WITHIN {
                // Leave nothing behind for the next test, then fail.
                for p in &alive {
                    if let Some(pid) = p.split(' ').next().and_then(|p| p.parse().ok()) {
                        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                    }
                }
                panic!("{what}: still running {GONE_WITHIN:?} after the stop: {alive:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `PID cmdline` of every live (not zombie) process whose command line contains `needle`.
fn alive_with(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    let me = std::process::id().to_string();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.parse::<u32>().is_err() || name == me {
            continue;
        }
        let Ok(cmd) = std::fs::read(e.path().join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if !cmd.contains(needle) {
            continue;
        }
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rfind(')')
            .and_then(|k| stat[k + 1..].split_whitespace().next())
            == Some("Z");
        if !zombie {
            found.push(format!("{name} {cmd}"));
        }
    }
    found
}

fn expected_code(stop: Stop) -> Option<i32> {
    match stop {
        Stop::Int => Some(130),
        Stop::Term => Some(143),
        Stop::Kill => None,
        Stop::Timeout => Some(1),
    }
}

/// One stop of a two-node job on the `local` launcher, with the process tracking `tracking`
/// (`None`: the runner's choice).
fn local_case(stop: Stop, tracking: Option<&str>) {
    let case = Case::new(&format!("local-{stop:?}-{}", tracking.unwrap_or("auto")));
    let f = case.multinode(stop);
    let mut cmd = case.fuzz_run(&f);
    cmd.args(["--launcher", "local"]);
    match tracking {
        Some(t) => cmd.env("FUZZ_PROCESS_TRACKING", t),
        None => cmd.env_remove("FUZZ_PROCESS_TRACKING"),
    };
    let mut child = cmd.spawn().expect("spawn fuzz run");
    case.wait_started(2, &mut child);
    // Both nodes' foreground and background sleeps, and the head's: five processes.
    assert!(case.alive().len() >= 5, "{:?}", case.alive());
    let code = case.stop(child, stop);
    assert_eq!(code, expected_code(stop), "{stop:?}");
    case.assert_gone(&format!("local launcher, {stop:?}, tracking {tracking:?}"));
}

#[test]
fn sigint_ends_every_local_node() {
    local_case(Stop::Int, None);
    local_case(Stop::Int, Some("subreaper"));
}

#[test]
fn sigterm_ends_every_local_node() {
    local_case(Stop::Term, None);
    local_case(Stop::Term, Some("subreaper"));
}

#[test]
fn sigkill_of_the_runner_ends_every_local_node() {
    local_case(Stop::Kill, None);
    local_case(Stop::Kill, Some("subreaper"));
}

#[test]
fn a_timeout_ends_every_local_node() {
    local_case(Stop::Timeout, None);
    local_case(Stop::Timeout, Some("subreaper"));
}

/// The same over ssh to this machine (`localhost,127.0.0.1`): rank 1 runs under sshd, out of
/// the runner's reach but for its node script.
fn ssh_case(sshd: &Sshd, stop: Stop) {
    let case = Case::new(&format!("ssh-{stop:?}"));
    let f = case.multinode(stop);
    let mut cmd = case.fuzz_run(&f);
    cmd.args(["--launcher", "ssh", "--hosts", "localhost,127.0.0.1"])
        .arg("--ssh-config")
        .arg(sshd.client_config());
    let mut child = cmd.spawn().expect("spawn fuzz run");
    case.wait_started(2, &mut child);
    assert!(case.alive().len() >= 5, "{:?}", case.alive());
    let code = case.stop(child, stop);
    assert_eq!(code, expected_code(stop), "{stop:?}");
    case.assert_gone(&format!("ssh launcher, {stop:?}"));
}

#[test]
fn every_stop_ends_every_node_over_ssh() {
    if !require(Sshd::available()) {
        return;
    }
    let sshd = Sshd::start_loopback(0).expect("sshd on loopback");
    for stop in [Stop::Int, Stop::Term, Stop::Kill, Stop::Timeout] {
        ssh_case(&sshd, stop);
    }
}

#[test]
fn every_stop_ends_every_node_under_slurm() {
    if !require(LocalSlurm::available()) {
        return;
    }
    let slurm = LocalSlurm::start(2).expect("start a local Slurm cluster");
    for stop in [Stop::Int, Stop::Term, Stop::Kill, Stop::Timeout] {
        let case = Case::new(&format!("slurm-{stop:?}"));
        // Under srun a member node's own `setsid` escapee is Slurm's to end (its process
        // tracking: proctrack/cgroup ends it, the test cluster's proctrack/linuxproc loses
        // it once orphaned); the head's escapee and every node's command are the runner's.
        let f = case.multinode_with(stop, "");
        let pid_file = case.dir.join("fuzz.pid");
        // `fuzz run` inside an allocation of both nodes (its pid written first, to be
        // signalled); the launcher is `slurm`, the hosts the allocation's.
        let fuzz_cmd = case.fuzz_run(&f);
        let argv: Vec<String> = std::iter::once(fuzz_cmd.get_program())
            .chain(fuzz_cmd.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let mut script = format!("echo $$ > {}; exec", pid_file.display());
        for a in argv
            .iter()
            .chain(["--launcher".to_owned(), "slurm".to_owned()].iter())
        {
            script.push(' ');
            script.push_str(&format!("'{}'", a.replace('\'', "'\\''")));
        }
        let mut salloc = slurm
            .command("salloc")
            .args(["-N2", "--time=2", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn salloc");
        case.wait_started(2, &mut salloc);
        assert!(case.alive().len() >= 3, "{:?}", case.alive());
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .expect("the pid of fuzz run")
            .trim()
            .parse()
            .expect("a pid");
        match stop {
            Stop::Int => kill(Pid::from_raw(pid), Signal::SIGINT).expect("SIGINT"),
            Stop::Term => kill(Pid::from_raw(pid), Signal::SIGTERM).expect("SIGTERM"),
            Stop::Kill => kill(Pid::from_raw(pid), Signal::SIGKILL).expect("SIGKILL"),
            Stop::Timeout => {}
        }
        let start = Instant::now();
        while salloc.try_wait().ok().flatten().is_none() {
            if start.elapsed() > Duration::from_secs(60) {
                let _ = salloc.kill();
                panic!("salloc did not end after {stop:?}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        case.assert_gone(&format!("slurm launcher, {stop:?}"));
    }
}

/// A single-node job that leaves `setsid sleep` behind and exits: with the runner's tracking
/// (a cgroup where the node offers one) and with the subreaper forced, nothing remains, the
/// run succeeds, and its cgroup is removed. A process that also clears its environment (out of
/// reach of the subreaper's tag) is ended with the run.
#[test]
fn setsid_escapes_end_with_their_instance() {
    for tracking in ["auto", "subreaper"] {
        let case = Case::new(&format!("setsid-{tracking}"));
        let m = &case.marker;
        let d = case.dir.display();
        // The second job starts after the first ended: by then the first one's escapee is gone.
        let text = format!(
            "version: v4\njobs:\n  first:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n      setsid sleep {m} &\n      env -i /bin/sh -c 'setsid sleep {m} &'\n  second:\n    image:\n      uri: docker://alpine:3.20\n    depends-on:\n      - name: first\n        status: FINISHED\n    script: |\n      #!/bin/sh\n      pgrep -f 'sleep {m}' > {d}/seen || true\n      echo $FUZZ_INSTANCE_ID > {d}/second.tag\n"
        );
        let (out, how) = case.run_tracked("esc.fz", &text, tracking);
        let how = how.as_str();
        let se = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{tracking}: {se}");
        case.assert_gone(&format!("setsid escape, tracking {tracking}"));
        if tracking == "subreaper" {
            assert_eq!(how, "subreaper (forced)");
            // The tagged escapee was ended when `first` ended, before `second` started; the
            // one that cleared its environment is ended with the run (above).
            let seen = std::fs::read_to_string(case.dir.join("seen")).unwrap_or_default();
            assert!(seen.lines().count() <= 1, "{seen}");
        } else if let Some(dir) = how.strip_prefix("cgroup ") {
            // In its cgroup, even the process without its environment was ended with `first`.
            let seen = std::fs::read_to_string(case.dir.join("seen")).unwrap_or_default();
            assert_eq!(seen.trim(), "", "still running when `second` started");
            assert!(
                !Path::new(dir).exists(),
                "the run's cgroup {dir} was not removed"
            );
        } else {
            eprintln!("no cgroup v2 on this node ({how}): the cgroup way is not tested here");
        }
        let tag = std::fs::read_to_string(case.dir.join("second.tag")).unwrap_or_default();
        assert!(tag.trim().starts_with("local-"), "FUZZ_INSTANCE_ID={tag}");
    }
}

/// An instance's command reads `/dev/null` on its standard input and, on the cgroup way, runs
/// in its instance's cgroup (`<run's cgroup>/0` for the first instance) from its start: the
/// runner moves the waiting wrapper and only then lets it `exec` the command.
#[test]
fn the_command_starts_in_its_cgroup_with_dev_null_as_standard_input() {
    for tracking in ["auto", "subreaper"] {
        let case = Case::new(&format!("stdin-{tracking}"));
        let d = case.dir.display();
        let text = format!(
            "version: v4\njobs:\n  one:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/sh, -c, 'readlink /proc/self/fd/0 > {d}/stdin; cat /proc/self/cgroup > {d}/cgroup; read -r line && echo \"$line\" > {d}/read']\n"
        );
        let (out, how) = case.run_tracked("one.fz", &text, tracking);
        let how = how.as_str();
        let se = String::from_utf8_lossy(&out.stderr);
        // `read` finds the end of `/dev/null` at once: the shell exits 1, the job fails.
        assert_eq!(out.status.code(), Some(1), "{tracking}: {se}");
        let stdin = std::fs::read_to_string(case.dir.join("stdin")).expect("stdin written");
        assert_eq!(stdin.trim(), "/dev/null", "{tracking}");
        assert!(!case.dir.join("read").exists(), "{tracking}: read a line");
        let cgroup = std::fs::read_to_string(case.dir.join("cgroup")).expect("cgroup written");
        let own = cgroup
            .lines()
            .find_map(|l| l.strip_prefix("0::"))
            .unwrap_or_default();
        match how.strip_prefix("cgroup ") {
            Some(dir) => {
                let run = Path::new(dir).file_name().expect("run cgroup name");
                let want = format!("/{}/0", run.to_string_lossy());
                assert!(own.ends_with(&want), "in {own}, not in …{want}");
            }
            None => {
                assert!(!own.contains("/fuzz-"), "{tracking}: in {own}");
                eprintln!("no cgroup v2 here ({how}): the cgroup way is not tested");
            }
        }
    }
}

/// `FUZZ_PROCESS_TRACKING` takes `cgroup`, `subreaper` or `auto`; anything else is refused
/// before a job starts.
#[test]
fn an_unknown_tracking_is_refused() {
    let case = Case::new("tracking-refused");
    let f = case.dir.join("one.fz");
    std::fs::write(
        &f,
        format!(
            "version: v4\njobs:\n  one:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n      touch {}/ran\n",
            case.dir.display()
        ),
    )
    .expect("write");
    let out = case
        .fuzz_run(&f)
        .env("FUZZ_PROCESS_TRACKING", "pids")
        .output()
        .expect("fuzz run");
    let se = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(se.contains("FUZZ_PROCESS_TRACKING=pids"), "{se}");
    assert!(!case.dir.join("ran").exists());
}

/// A stop does not wait out the grace period when everything ends at SIGTERM: the orphans of
/// the job's group die as the runner's children (it is their subreaper) and are reaped at
/// once, so the group is seen gone (with a cgroup; a node's watcher waits on its group too).
#[test]
fn a_stop_ends_as_soon_as_every_process_is_gone() {
    let case = Case::new("quick-stop");
    let f = case.multinode(Stop::Int);
    let events = case.dir.join("events.jsonl");
    let mut cmd = case.fuzz_run_with_grace(&f, "30");
    cmd.args(["--launcher", "local", "--events"])
        .arg(&events)
        .env_remove("FUZZ_PROCESS_TRACKING");
    let mut child = cmd.spawn().expect("spawn fuzz run");
    case.wait_started(2, &mut child);
    let ready = std::fs::read_to_string(&events).unwrap_or_default();
    let start = Instant::now();
    let code = case.stop(child, Stop::Int);
    let took = start.elapsed();
    assert_eq!(code, Some(130));
    case.assert_gone("quick stop");
    if ready.contains("\"process_tracking\":\"cgroup ") {
        assert!(
            took < Duration::from_secs(15),
            "the stop took {took:?} with a grace period of 30 s"
        );
    } else {
        eprintln!("no cgroup v2 here: the stop may wait out the grace period");
    }
}
