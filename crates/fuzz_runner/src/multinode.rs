//! Multinode jobs: reaching the other nodes, `exec_all`, and the SSH wrapper.
//!
//! A multinode job runs its command on the head node (rank 0, the first host). The runner
//! gives it two helpers, as Fuzzball does: `MULTINODE_SSH_WRAPPER` (also
//! `MULTINODE_RSH_WRAPPER`), an executable used like `ssh` (`WRAPPER [ssh options] HOST
//! COMMAND...`, so Open MPI can take it as `plm_rsh_agent` and MPICH as its launcher), and
//! `exec_all COMMAND...`, which runs the command on every node at once. Both are small scripts
//! in `{workdir}/helpers/` that call this binary back (`fuzz __multinode-ssh`, `fuzz
//! __exec-all`) with the job's [`NodeConfig`], written beside them.
//!
//! # Reaching a node
//!
//! The command given to the wrapper is a shell command line (the words are joined with spaces,
//! as `ssh` does), run on the node by `sh` in [`NODE_SCRIPT`], under the job's environment for
//! that node and in the job's `cwd`. The launcher decides how the node is reached:
//!
//! * `local`: this machine (development, or a single node); with `--local-netns`, each host is
//!   a network namespace of that name (`ip netns exec HOST`), so each node has its own address.
//! * `ssh`: OpenSSH in batch mode (`-o BatchMode=yes`: no prompt ever waits for a person),
//!   with `--ssh-config FILE` as `ssh -F FILE`.
//! * `slurm`: `srun --overlap --nodes=1 --ntasks=1 -w HOST` inside the job's allocation.
//!
//! The head node's own commands always run locally.
//!
//! # Nothing is left behind
//!
//! [`NODE_SCRIPT`] starts the command in a session of its own (`setsid`) and watches its own
//! standard input, which is a pipe held by the process that reached the node (the wrapper or
//! `exec_all`) through ssh or srun. When that process ends, however it ends, the pipe closes;
//! the script then sends SIGTERM to the command's whole process group, and SIGKILL after the
//! grace period. So a stopped job, a timed-out job or a killed runner stops what it started on
//! every node. What left that group (`setsid daemon &`) is found by `FUZZ_NODE_ID`, which
//! only the command's processes carry, and ended with it. After the command exits by itself
//! nothing is swept on a remote node: Open MPI's `orted` daemonizes and must live on (it ends
//! with `mpirun`); on this node the runner ends what is left when the instance ends.
//!
//! With the `local` launcher the script runs in a process group of its own: a signal to the
//! job's group (a stop, a timeout, the guard after the runner was killed) ends `exec_all`,
//! which closes the pipe, but not the watcher, which then stops the node's command. The
//! runner also ends every local node's processes with the instance ([`crate::reaper`]).
//!
//! # Gang semantics (`exec_all`)
//!
//! The first node whose command fails (a non-zero exit, or a signal) stops the others; the
//! exit code of `exec_all` is that node's, and `exec_all` writes which node, rank and code
//! failed first to the gang file, which the runner's summary reads. A node that has not
//! reported its start within the start-up timeout fails the whole command with a message
//! naming every node that never reported.

use crate::redact::{LogWriter, Redactor};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The line [`NODE_SCRIPT`] prints first when `exec_all` asks for it: the node has started.
pub const STARTED_MARKER: &str = "\u{1e}fuzz-node-started";

/// How `exec_all` tells the runner, on its standard error, that a node's log (or its events)
/// could not be written in full: this prefix, then the message. The runner counts it as a
/// log failure of the run (`fuzz run` exits 3) instead of printing it.
pub const LOG_FAILED_MARKER: &str = "\u{1e}fuzz-log-failed ";

/// Run on every node: `sh -c NODE_SCRIPT fuzz-node GRACE COMMAND [marker]`, the grace period
/// in tenths of a second (the watcher stops waiting as soon as the command's group is gone).
/// (A background list's standard input is /dev/null unless redirected, hence fd 3; the
/// watcher holds none of the output pipes, so ssh or srun end when the command does.)
///
/// The command's processes carry `FUZZ_NODE_ID` in their environment (the script's own
/// helpers do not): what left the command's process group (`setsid daemon &`) is found by it
/// in `/proc` and ended too when the pipe closes. The watcher ignores SIGINT, SIGTERM and
/// SIGHUP: `slurmstepd` signals every process of a step when `srun` is stopped, and the watcher
/// must live on to end what left the command's group once the pipe closes. The script itself
/// ends what left the group when it gets SIGTERM or SIGHUP (`slurmstepd` again: the step, and
/// so the pipe, does not end while an escaped process holds the step's output). Not after the command exits by itself: a
/// launcher's daemon (Open MPI's `orted` daemonizes) must outlive the command that started it.
pub const NODE_SCRIPT: &str = r#"exec 3<&0
[ "$3" = marker ] && printf '\036fuzz-node-started\n'
id="$$.$(date +%s%N 2>/dev/null)"
sweep() {
  for e in $(grep -l -s -z -x -F "FUZZ_NODE_ID=$id" /proc/[0-9]*/environ); do
    q="${e%/environ}"; kill "-$1" "${q#/proc/}" 2>/dev/null
  done
}
FUZZ_NODE_ID="$id" setsid sh -c "$2" </dev/null 3<&- &
p=$!
trap 'kill -TERM -$p 2>/dev/null; sweep TERM; exit 143' TERM HUP
( trap '' INT TERM HUP; cat <&3; kill -TERM -$p; sweep TERM
  t=0; while [ "$t" -lt "$1" ] && kill -0 -$p; do sleep 0.1; t=$((t+1)); done
  kill -KILL -$p; sweep KILL ) >/dev/null 2>&1 &
exec 3<&-
w=$!
wait $p; rc=$?
kill -KILL $w 2>/dev/null
exit $rc
"#;

/// The end of a node's command line in its container (see [`NodeConfig::node_command`]):
/// runs the node script, then waits while a process of the command (which carries
/// `FUZZ_NODE_ID`, see [`NODE_SCRIPT`]) is still there.
const CONTAINER_NODE: &str = r#""$@"; rc=$?
while grep -q -s -z '^FUZZ_NODE_ID=' /proc/[0-9]*/environ; do sleep 0.2; done
exit $rc"#;

/// How other nodes are reached (`fuzz run --launcher`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Launcher {
    Local,
    Ssh,
    Slurm,
}

impl Launcher {
    pub fn as_str(self) -> &'static str {
        match self {
            Launcher::Local => "local",
            Launcher::Ssh => "ssh",
            Launcher::Slurm => "slurm",
        }
    }
}

/// What the helpers of one multinode job need: written by the runner as JSON beside them.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct NodeConfig {
    pub job: String,
    /// The words in front of a node's command on another machine (ssh, srun) that run it in
    /// the job's filesystem view there (`fuzz __sandbox VIEW.json --`, see
    /// [`crate::sandbox`]); empty without one. Nodes on this machine inherit the head's, and
    /// `cwd` is then the job's own (a path in the view).
    #[serde(default)]
    pub sandbox: Vec<String>,
    pub launcher: Launcher,
    pub ssh_config: Option<PathBuf>,
    pub local_netns: bool,
    /// Rank order; the first is the head.
    pub hosts: Vec<String>,
    /// Per rank: the job's environment on that node.
    pub env: Vec<Vec<(String, String)>>,
    /// Per rank: a file of `export NAME='value'` lines the node sources (the run directory is
    /// shared by the nodes); without one, the values are exported inline.
    #[serde(default)]
    pub env_files: Vec<PathBuf>,
    /// Per rank: the log file stem (`<job>-<rank>`).
    pub log_names: Vec<String>,
    pub cwd: Option<String>,
    pub grace_ms: u64,
    pub startup_timeout_ms: u64,
    /// Forward every node's output to `exec_all`'s own, whatever
    /// `MULTINODE_WRAPPER_FORWARD_STREAMS` says.
    pub forward_always: bool,
    pub logs: PathBuf,
    /// Where `exec_all` writes the first failure (JSON).
    pub gang_file: PathBuf,
    /// The run's events file (`fuzz run --events`): `exec_all` appends `node_started`,
    /// `node_finished` and `gang_stopped` lines.
    #[serde(default)]
    pub events: Option<PathBuf>,
    /// The run's secret values: `exec_all` redacts them from every node's log, from what it
    /// forwards and from its events, as the runner does. (This file is the run's own, mode
    /// 0600, as the nodes' environment files are: no value is on a command line.)
    #[serde(default)]
    pub secrets: Vec<String>,
    /// A job on a container runtime: every node's commands run in a container of the job's
    /// image on that node (see [`crate::bridge`]).
    #[serde(default)]
    pub container: Option<crate::bridge::ContainerNodes>,
}

impl NodeConfig {
    /// Appends one event line (a single write to a file opened for appending, so lines from
    /// the runner and from `exec_all` never interleave), redacted; a failure is reported to
    /// the runner ([`LOG_FAILED_MARKER`]).
    fn emit(&self, redactor: &Arc<Redactor>, event: &str, fields: serde_json::Value) {
        let Some(path) = &self.events else { return };
        let mut fields = fields;
        if let serde_json::Value::Object(m) = &mut fields {
            m.insert("event".into(), event.into());
            m.insert("job".into(), self.job.clone().into());
            let ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            m.insert("time_ms".into(), ms.into());
        }
        let mut w = LogWriter::append(path, redactor.clone());
        if let Some(m) = w.write(format!("{fields}\n").as_bytes()) {
            report_log_failure(&m);
        }
    }
}

/// The first node that failed, as `exec_all` reports it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct GangFailure {
    pub rank: usize,
    pub host: String,
    /// The exit code; `None` when it never started or was killed by a signal.
    pub exit_code: Option<i32>,
    pub detail: String,
}

/// `'word'` for `sh`, safe for any bytes.
pub fn sh_quote(w: &str) -> String {
    if !w.is_empty()
        && w.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,@%+".contains(&b))
    {
        return w.to_owned();
    }
    format!("'{}'", w.replace('\'', "'\\''"))
}

impl NodeConfig {
    fn grace(&self) -> Duration {
        Duration::from_millis(self.grace_ms)
    }

    /// The command that runs the shell command line `cmdline` on node `rank`, its standard
    /// input a pipe (see the module documentation), its output piped or inherited.
    fn node_command(&self, rank: usize, cmdline: &str, marker: bool) -> Command {
        let mut setup = String::new();
        let local = rank == 0 || self.launcher == Launcher::Local;
        // A node on another machine with a view gets its cwd from the view (`--chdir`): the
        // path may exist only there.
        if let Some(cwd) = self
            .cwd
            .as_ref()
            .filter(|_| local || self.sandbox.is_empty())
        {
            setup.push_str(&format!("cd {} || exit 126; ", sh_quote(cwd)));
        }
        let env = self.env.get(rank).map(Vec::as_slice).unwrap_or_default();
        // Every node on this machine (the local launcher): node `rank`'s own GPUs, before its
        // environment (a job's own CUDA_VISIBLE_DEVICES wins).
        if self.launcher == Launcher::Local && rank > 0 {
            if let Some(g) = std::env::var(crate::placement::NODE_GPUS_VAR)
                .ok()
                .as_deref()
                .and_then(|v| crate::placement::node_gpus(v, rank))
            {
                setup.push_str(&format!(
                    "export CUDA_VISIBLE_DEVICES={g} CUDA_DEVICE_ORDER=PCI_BUS_ID; "
                ));
            }
        }
        if let Some(file) = self.env_files.get(rank) {
            // Values stay out of every command line (`ps` on either side would show them).
            setup.push_str(&format!(
                ". {} || exit 126; ",
                sh_quote(&file.display().to_string())
            ));
        } else if !env.is_empty() {
            setup.push_str("export");
            // Only POSIX names reach the shell (the plan's were checked when it was read).
            for (k, v) in env.iter().filter(|(k, _)| crate::validate::is_env_name(k)) {
                setup.push_str(&format!(" {}={}", k, sh_quote(v)));
            }
            setup.push_str("; ");
        }
        let grace = self.grace_ms.div_ceil(100).to_string();
        let mut words = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            NODE_SCRIPT.to_owned(),
            "fuzz-node".to_owned(),
            grace,
            cmdline.to_owned(),
        ];
        if marker {
            words.push("marker".into());
        }
        if !local {
            words.splice(0..0, self.sandbox.iter().cloned());
        }
        let host = self.hosts.get(rank).cloned().unwrap_or_default();
        if let Some(c) = &self.container {
            // In a container of the job's image on the node: the setup runs in it (the
            // environment file is bind-mounted at its path), and its network is the node's.
            // The container lives while a daemon the command left runs (Open MPI's `orted
            // --daemonize`), found by `FUZZ_NODE_ID` as the node script finds it.
            let mut inner = vec![
                "sh".to_owned(),
                "-c".to_owned(),
                format!("{setup}{CONTAINER_NODE}"),
                "sh".to_owned(),
            ];
            inner.extend(
                words
                    .iter()
                    .skip(self.sandbox.len() * usize::from(!local))
                    .cloned(),
            );
            let all = c.wrap(&host, rank, inner);
            let mut cmd = if local {
                let mut x = Command::new(&all[0]);
                x.args(&all[1..]);
                x
            } else if self.launcher == Launcher::Ssh {
                let mut x = Command::new("ssh");
                if let Some(f) = &self.ssh_config {
                    x.arg("-F").arg(f);
                }
                let remote = all
                    .iter()
                    .map(|w| sh_quote(w))
                    .collect::<Vec<_>>()
                    .join(" ");
                x.args(["-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-T", &host])
                    .arg(remote);
                x
            } else {
                let mut x = Command::new("srun");
                x.args(["--overlap", "--nodes=1", "--ntasks=1", "-w", &host])
                    .args(&all);
                x
            };
            if local {
                std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
            }
            cmd.stdin(Stdio::piped());
            return cmd;
        }
        let mut cmd = if local && !(self.local_netns && rank > 0) {
            let mut c = Command::new("sh");
            c.arg("-c").arg(format!("{setup}exec \"$@\"")).arg("sh");
            c.args(&words);
            c
        } else if local {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", &host, "sh", "-c"])
                .arg(format!("{setup}exec \"$@\""))
                .arg("sh")
                .args(&words);
            c
        } else if self.launcher == Launcher::Ssh {
            let mut c = Command::new("ssh");
            if let Some(f) = &self.ssh_config {
                c.arg("-F").arg(f);
            }
            // One string: ssh hands it to the remote user's shell.
            let remote = format!(
                "{setup}exec {}",
                words
                    .iter()
                    .map(|w| sh_quote(w))
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            c.args(["-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-T", &host])
                .arg(remote);
            c
        } else {
            let mut c = Command::new("srun");
            c.args([
                "--overlap",
                "--nodes=1",
                "--ntasks=1",
                "-w",
                &host,
                "sh",
                "-c",
            ])
            .arg(format!("{setup}exec \"$@\""))
            .arg("sh")
            .args(&words);
            c
        };
        if local {
            // The node's script (and its watcher) must outlive a signal to the job's process
            // group: it is what stops the node's command, which runs in a session of its own,
            // once the pipe from `exec_all` or the wrapper closes. (Over ssh or srun the
            // script runs under the remote daemon, and the client is in the job's group.)
            std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        }
        cmd.stdin(Stdio::piped());
        cmd
    }

    fn rank_of(&self, host: &str) -> Option<usize> {
        self.hosts.iter().position(|h| h == host).or_else(|| {
            // `host:slots`, or a name that resolves the same (short name of an FQDN).
            let short = host.split('.').next().unwrap_or(host);
            self.hosts
                .iter()
                .position(|h| h.split('.').next() == Some(short))
        })
    }
}

/// Reads the job's [`NodeConfig`] (`FUZZ_MULTINODE_CONFIG`).
pub fn load_config() -> Result<NodeConfig, String> {
    let path = std::env::var_os("FUZZ_MULTINODE_CONFIG").ok_or(
        "FUZZ_MULTINODE_CONFIG is not set: this helper runs inside a multinode job of `fuzz run`",
    )?;
    let path = PathBuf::from(path);
    let text = fuzzfile_io::read_to_string(&path, fuzzfile_io::Kind::NODE_CONFIG)
        .map_err(|e| format!("cannot read {}: {}", path.display(), e.reason()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `fuzz-multinode-ssh [ssh options] HOST COMMAND...`: runs COMMAND (a shell command line, its
/// words joined with spaces as ssh does) on HOST. Returns the exit code.
pub fn wrapper_main(args: &[String]) -> i32 {
    let cfg = match load_config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fuzz-multinode-ssh: {e}");
            return 255;
        }
    };
    // ssh's own options come first: those that take a value skip it.
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') && args[i] != "--" {
        let flag = &args[i];
        let takes_value = flag.len() == 2 && "bcDEeFIiJLlmOopQRSWw".contains(&flag[1..]);
        i += if takes_value { 2 } else { 1 };
    }
    if args.get(i).map(String::as_str) == Some("--") {
        i += 1;
    }
    let Some(host) = args.get(i) else {
        eprintln!("fuzz-multinode-ssh: usage: fuzz-multinode-ssh [ssh options] HOST COMMAND...");
        return 255;
    };
    let Some(rank) = cfg.rank_of(host) else {
        eprintln!(
            "fuzz-multinode-ssh: {host} is not a node of job `{}` (its nodes: {})",
            cfg.job,
            cfg.hosts.join(", ")
        );
        return 255;
    };
    let cmdline = args[i + 1..].join(" ");
    if cmdline.trim().is_empty() {
        eprintln!(
            "fuzz-multinode-ssh: no command for {host} (an interactive login is not supported)"
        );
        return 255;
    }
    let mut cmd = cfg.node_command(rank, &cmdline, false);
    cmd.stdout(Stdio::inherit()).stderr(Stdio::inherit());
    match cmd.spawn() {
        Ok(mut child) => {
            // The pipe to the node stays open while this process lives.
            let _stdin = child.stdin.take();
            match child.wait() {
                Ok(s) => exit_code(s),
                Err(e) => {
                    eprintln!("fuzz-multinode-ssh: {e}");
                    255
                }
            }
        }
        Err(e) => {
            eprintln!(
                "fuzz-multinode-ssh: cannot reach {host} ({} launcher): {e}",
                cfg.launcher.as_str()
            );
            255
        }
    }
}

fn exit_code(s: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

enum Event {
    Started(usize),
    Line(usize, bool, String),
}

struct Node {
    child: Child,
    stdin: Option<ChildStdin>,
    started: bool,
    exit: Option<i32>,
}

/// `exec_all COMMAND...`: COMMAND on every node at once, `$RANK` in its words replaced by the
/// node's rank and `RANK` set; the first failure stops the others. Returns the exit code.
pub fn exec_all_main(args: &[String]) -> i32 {
    let cfg = match load_config() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("exec_all: {e}");
            return 255;
        }
    };
    if args.is_empty() {
        eprintln!("exec_all: usage: exec_all COMMAND [ARGS...]");
        return 2;
    }
    let forward = cfg.forward_always
        || std::env::var("MULTINODE_WRAPPER_FORWARD_STREAMS").is_ok_and(|v| v == "1");
    let redactor = Arc::new(Redactor::new(cfg.secrets.iter().cloned()));
    let (tx, rx) = mpsc::channel::<Event>();
    let mut nodes: Vec<Node> = Vec::new();
    for rank in 0..cfg.hosts.len() {
        let words: Vec<String> = args
            .iter()
            .map(|w| {
                sh_quote(
                    &w.replace("${RANK}", &rank.to_string())
                        .replace("$RANK", &rank.to_string()),
                )
            })
            .collect();
        let cmdline = format!("RANK={rank}; export RANK; exec {}", words.join(" "));
        let mut cmd = cfg.node_command(rank, &cmdline, true);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                eprintln!(
                    "exec_all: cannot reach {} ({} launcher): {e}",
                    cfg.hosts[rank],
                    cfg.launcher.as_str()
                );
                stop_all(&mut nodes, cfg.grace());
                return 255;
            }
        };
        let stdin = child.stdin.take();
        for (stream, is_err) in [
            (
                child
                    .stdout
                    .take()
                    .map(|s| Box::new(s) as Box<dyn Read + Send>),
                false,
            ),
            (
                child
                    .stderr
                    .take()
                    .map(|s| Box::new(s) as Box<dyn Read + Send>),
                true,
            ),
        ] {
            let Some(stream) = stream else { continue };
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(stream).split(b'\n').map_while(Result::ok) {
                    let line = String::from_utf8_lossy(&line).into_owned();
                    let ev = if !is_err && line == STARTED_MARKER {
                        Event::Started(rank)
                    } else {
                        Event::Line(rank, is_err, line)
                    };
                    if tx.send(ev).is_err() {
                        break;
                    }
                }
            });
        }
        nodes.push(Node {
            child,
            stdin,
            started: false,
            exit: None,
        });
    }
    drop(tx);
    let open = |ext: &str, rank: usize| {
        cfg.log_names.get(rank).map(|n| {
            let mut w = LogWriter::create(&cfg.logs.join(format!("{n}.{ext}")), redactor.clone());
            if let Some(m) = w.write(b"") {
                report_log_failure(&m);
            }
            w
        })
    };
    // Rank 0's output is the job's own: the runner logs it already.
    let mut logs: Logs = (0..nodes.len())
        .map(|r| NodeLog {
            out: (r > 0).then(|| open("out", r)).flatten(),
            err: (r > 0).then(|| open("err", r)).flatten(),
            tail: VecDeque::new(),
        })
        .collect();
    let start = Instant::now();
    let startup = Duration::from_millis(cfg.startup_timeout_ms);
    let mut failure: Option<GangFailure> = None;
    loop {
        while let Ok(ev) = rx.try_recv() {
            match ev {
                Event::Started(r) => {
                    nodes[r].started = true;
                    cfg.emit(
                        &redactor,
                        "node_started",
                        serde_json::json!({"rank": r, "host": cfg.hosts[r]}),
                    );
                }
                Event::Line(r, is_err, line) => {
                    emit(&cfg, &redactor, &mut logs, forward, r, is_err, &line);
                }
            }
        }
        for (rank, n) in nodes.iter_mut().enumerate() {
            if n.exit.is_some() {
                continue;
            }
            if let Ok(Some(s)) = n.child.try_wait() {
                let code = exit_code(s);
                n.exit = Some(code);
                cfg.emit(
                    &redactor,
                    "node_finished",
                    serde_json::json!({"rank": rank, "host": cfg.hosts[rank], "exit_code": code}),
                );
                if code != 0 && failure.is_none() {
                    failure = Some(GangFailure {
                        rank,
                        host: cfg.hosts[rank].clone(),
                        exit_code: Some(code),
                        detail: format!(
                            "node {} (rank {rank}) exited with code {code} first",
                            cfg.hosts[rank]
                        ),
                    });
                }
            }
        }
        if failure.is_none() && start.elapsed() > startup {
            let never: Vec<String> = nodes
                .iter()
                .enumerate()
                .filter(|(_, n)| !n.started && n.exit.is_none())
                .map(|(r, _)| format!("{} (rank {r})", cfg.hosts[r]))
                .collect();
            if !never.is_empty() {
                failure = Some(GangFailure {
                    rank: 0,
                    host: String::new(),
                    exit_code: None,
                    detail: format!(
                        "start-up timed out after {} s: never reported: {}",
                        startup.as_secs(),
                        never.join(", ")
                    ),
                });
            }
        }
        if let Some(f) = &failure {
            eprintln!(
                "exec_all: {}; stopping every other node",
                redactor.redact(&f.detail)
            );
            cfg.emit(
                &redactor,
                "gang_stopped",
                serde_json::json!({"rank": f.rank, "host": f.host, "exit_code": f.exit_code, "detail": f.detail}),
            );
            if f.rank > 0 && !forward {
                for l in &logs[f.rank].tail {
                    eprintln!("exec_all: [{}] {}", f.host, redactor.redact(l));
                }
            }
            if let Ok(json) = serde_json::to_string(f) {
                let mut w = LogWriter::create(&cfg.gang_file, redactor.clone());
                if let Some(m) = w.write(json.as_bytes()) {
                    report_log_failure(&m);
                }
            }
            stop_all(&mut nodes, cfg.grace());
            for (rank, n) in nodes.iter_mut().enumerate() {
                if n.exit.is_none() {
                    let code = n.child.try_wait().ok().flatten().map(exit_code);
                    cfg.emit(
                        &redactor,
                        "node_finished",
                        serde_json::json!({"rank": rank, "host": cfg.hosts[rank], "exit_code": code, "stopped": true}),
                    );
                }
            }
            // Drain what is left of the output.
            while let Ok(ev) = rx.recv_timeout(Duration::from_millis(200)) {
                if let Event::Line(r, is_err, line) = ev {
                    emit(&cfg, &redactor, &mut logs, forward, r, is_err, &line);
                }
            }
            return f.exit_code.unwrap_or(124);
        }
        if nodes.iter().all(|n| n.exit.is_some()) {
            // Output threads end with their pipes.
            while let Ok(ev) = rx.recv_timeout(Duration::from_millis(500)) {
                if let Event::Line(r, is_err, line) = ev {
                    emit(&cfg, &redactor, &mut logs, forward, r, is_err, &line);
                }
            }
            return 0;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A node's log files (none for the head, whose output the runner logs), and the last lines of
/// its standard error, shown when it fails first (ssh's "Could not resolve hostname", a
/// missing program) even when its output is not forwarded.
struct NodeLog {
    out: Option<LogWriter>,
    err: Option<LogWriter>,
    tail: VecDeque<String>,
}

type Logs = Vec<NodeLog>;

const TAIL_LINES: usize = 5;

/// Tells the runner that a log could not be written in full ([`LOG_FAILED_MARKER`]).
fn report_log_failure(message: &str) {
    let _ = std::io::stderr().write_all(format!("{LOG_FAILED_MARKER}{message}\n").as_bytes());
}

/// One line of node `r`, redacted: into its log file, and forwarded (the head's always, as the
/// job's own output; the others' prefixed with their host when forwarding is on).
fn emit(
    cfg: &NodeConfig,
    redactor: &Redactor,
    logs: &mut Logs,
    forward: bool,
    r: usize,
    is_err: bool,
    line: &str,
) {
    let line = redactor.redact(line);
    let line = line.as_ref();
    let log = &mut logs[r];
    if is_err {
        if log.tail.len() == TAIL_LINES {
            log.tail.pop_front();
        }
        log.tail.push_back(line.to_owned());
    }
    if let Some(f) = if is_err { &mut log.err } else { &mut log.out } {
        if let Some(m) = f.write(format!("{line}\n").as_bytes()) {
            report_log_failure(&m);
        }
    }
    if r == 0 || forward {
        let text = if r == 0 {
            format!("{line}\n")
        } else {
            format!("[{}] {line}\n", cfg.hosts[r])
        };
        if is_err {
            let _ = std::io::stderr().write_all(text.as_bytes());
        } else {
            let _ = std::io::stdout().write_all(text.as_bytes());
        }
    }
}

/// Closes every node's pipe (its script stops the command: SIGTERM, grace, SIGKILL), then
/// waits for them, killing what is still there after the grace period and a margin.
fn stop_all(nodes: &mut [Node], grace: Duration) {
    for n in nodes.iter_mut() {
        n.stdin.take();
    }
    let deadline = Instant::now() + grace + Duration::from_secs(5);
    for n in nodes.iter_mut() {
        if n.exit.is_some() {
            continue;
        }
        loop {
            match n.child.try_wait() {
                Ok(Some(_)) | Err(_) => break,
                Ok(None) if Instant::now() >= deadline => {
                    let _ = n.child.kill();
                    let _ = n.child.wait();
                    break;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    }
}

/// The first failed process as the MPI launcher reports it, in the head's output: Open MPI's
/// "The first process to do so was: Process name: [[J,S],RANK] Exit code: C" (the rank's node
/// follows from the by-slot mapping of `--host h:slots`), or Hydra's "BAD TERMINATION ...
/// RUNNING AT HOST ... EXIT CODE: C".
pub fn mpi_first_failure(text: &str, hosts: &[String], slots: u64) -> Option<GangFailure> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    if let Some(k) = lines
        .iter()
        .position(|l| l.contains("The first process to do so was"))
    {
        let rest = &lines[k..lines.len().min(k + 8)];
        let rank: usize = rest.iter().find_map(|l| {
            let name = l.strip_prefix("Process name:")?.trim();
            let inner = name.trim_start_matches('[').trim_end_matches(']');
            inner.rsplit(',').next()?.trim().parse().ok()
        })?;
        let code: i32 = rest
            .iter()
            .find_map(|l| l.strip_prefix("Exit code:")?.trim().parse().ok())?;
        let host = hosts
            .get(rank / slots.max(1) as usize)
            .cloned()
            .unwrap_or_default();
        return Some(GangFailure {
            rank,
            host: host.clone(),
            exit_code: Some(code),
            detail: format!("MPI rank {rank} on node {host} exited with code {code} first"),
        });
    }
    if let Some(k) = lines.iter().position(|l| l.contains("BAD TERMINATION")) {
        let rest = &lines[k..lines.len().min(k + 6)];
        let host = rest.iter().find_map(|l| {
            let at = l.find("RUNNING AT ")?;
            Some(l[at + "RUNNING AT ".len()..].trim().to_owned())
        })?;
        let code: i32 = rest.iter().find_map(|l| {
            let at = l.find("EXIT CODE:")?;
            l[at + "EXIT CODE:".len()..].trim().parse().ok()
        })?;
        let rank = hosts.iter().position(|h| *h == host).unwrap_or(0);
        return Some(GangFailure {
            rank,
            host: host.clone(),
            exit_code: Some(code),
            detail: format!("an MPI process on node {host} ended with code {code} first"),
        });
    }
    None
}

/// The content of a node's environment file: one `export NAME='value'` line per variable.
/// A name that is not a POSIX name (which a shell would read as a command) or a value holding
/// NUL is refused, whatever checked them before.
pub fn env_file(env: &[(String, String)]) -> Result<String, String> {
    let mut out = String::new();
    for (k, v) in env {
        crate::validate::check_env_name(k)
            .map_err(|why| format!("the environment variable name {k:?} {why}"))?;
        if v.contains('\0') {
            return Err(format!("the value of {k} contains a NUL character"));
        }
        out.push_str(&format!("export {k}={}\n", sh_quote(v)));
    }
    Ok(out)
}

/// The helper scripts of a job: `(path, content)`, executables that call `exe` back.
pub fn helper_scripts(exe: &Path, dir: &Path) -> Vec<(PathBuf, String)> {
    let exe = sh_quote(&exe.display().to_string());
    vec![
        (
            dir.join("exec_all"),
            format!("#!/bin/sh\nexec {exe} __exec-all \"$@\"\n"),
        ),
        (
            dir.join("fuzz-multinode-ssh"),
            format!("#!/bin/sh\nexec {exe} __multinode-ssh \"$@\"\n"),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips_through_sh() {
        for w in [
            "plain",
            "with space",
            "it's",
            "$RANK",
            "a\"b",
            "",
            "--x=1,2",
        ] {
            let out = Command::new("sh")
                .arg("-c")
                .arg(format!("printf '%s' {}", sh_quote(w)))
                .output()
                .expect("sh");
            assert_eq!(String::from_utf8_lossy(&out.stdout), w);
        }
    }

    /// What Open MPI 4.1 (Debian openmpi-bin) printed when rank 2 of `-np 3` exited with 3,
    /// and what MPICH 4.0 Hydra printed when a process was killed.
    #[test]
    fn the_mpi_launchers_first_failure_is_found() {
        let hosts = ["n1".to_owned(), "n2".into()];
        let ompi = "--------------------------------------------------------------------------\n\
            mpirun.openmpi detected that one or more processes exited with non-zero status, thus causing\n\
            the job to be terminated. The first process to do so was:\n\n  Process name: [[9788,1],2]\n  Exit code:    3\n\
            --------------------------------------------------------------------------\n";
        let f = mpi_first_failure(ompi, &hosts, 2).expect("found");
        assert_eq!((f.rank, f.host.as_str(), f.exit_code), (2, "n2", Some(3)));
        let hydra = "\n===================================================================================\n\
            =   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n=   PID 19164 RUNNING AT n2\n\
            =   EXIT CODE: 9\n=   CLEANING UP REMAINING PROCESSES\n";
        let f = mpi_first_failure(hydra, &hosts, 1).expect("found");
        assert_eq!((f.rank, f.host.as_str(), f.exit_code), (1, "n2", Some(9)));
        assert!(mpi_first_failure("all good\n", &hosts, 1).is_none());
    }

    #[test]
    fn hosts_are_found_by_name_or_short_name() {
        let cfg = NodeConfig {
            job: "j".into(),
            sandbox: Vec::new(),
            launcher: Launcher::Ssh,
            ssh_config: None,
            local_netns: false,
            hosts: vec!["gpu-a.cluster".into(), "gpu-b".into()],
            env: vec![],
            env_files: vec![],
            log_names: vec![],
            cwd: None,
            grace_ms: 0,
            startup_timeout_ms: 0,
            forward_always: false,
            logs: PathBuf::new(),
            gang_file: PathBuf::new(),
            events: None,
            secrets: vec![],
            container: None,
        };
        assert_eq!(cfg.rank_of("gpu-b"), Some(1));
        assert_eq!(cfg.rank_of("gpu-a"), Some(0));
        assert_eq!(cfg.rank_of("gpu-c"), None);
    }
}
