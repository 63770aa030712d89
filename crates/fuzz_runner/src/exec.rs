//! Running a prepared plan: the job graph, processes, timeouts, signals, logs and events.

use crate::explain::Explainer;
use crate::guard::Guard;
use crate::prepare::{Instance, Job, Prepared};
use crate::probe;
use crate::reaper::Tracker;
use crate::redact::{LogWriter, Redactor};
use crate::status::StatusLine;
use crate::RunError;
use fuzzfile_plan::{DependencyStatus, TaskKind};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{mpsc, oneshot, watch, Semaphore};

/// How much of the end of a log the runner reads to explain a failure.
const LOG_TAIL: u64 = 1024 * 1024;

/// How a job (or one instance of it) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    Finished,
    Failed,
    TimedOut,
    /// A dependency did not finish.
    Skipped,
    /// The run was stopped (SIGINT/SIGTERM) before or while it ran.
    Cancelled,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Finished => "finished",
            Status::Failed => "failed",
            Status::TimedOut => "timed_out",
            Status::Skipped => "skipped",
            Status::Cancelled => "cancelled",
        }
    }
}

#[derive(Clone, Debug)]
pub struct JobReport {
    pub name: String,
    pub status: Status,
    /// The exit code of the instance that decided the status (the first failing task).
    pub exit_code: Option<i32>,
    pub duration: Duration,
    /// In words: `exit 1`, `killed by signal 9`, `task 3: exit 2`, `dependency build failed`.
    pub detail: String,
    /// The log of the instance that decided a failure: `logs/<hostname>` without its `.out`
    /// or `.err` (the summary shows its last lines).
    pub log: Option<PathBuf>,
    /// Where each instance that started was placed (empty when the run does not place).
    pub placed: Vec<Placed>,
}

/// The GPUs an instance got and how long it waited for the node's resources.
#[derive(Clone, Debug)]
pub struct Placed {
    /// `job` or `job:task`.
    pub instance: String,
    pub gpus: Vec<u32>,
    pub waited: Duration,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    /// In the plan's order.
    pub jobs: Vec<JobReport>,
    /// The signal that stopped the run (2 for SIGINT, 15 for SIGTERM).
    pub interrupted: Option<i32>,
    pub run_dir: PathBuf,
    /// Volume ingress or egress that failed (the run then exits 1).
    pub transfer_failures: Vec<String>,
    /// Logs or events that could not be created or written in full (a full disk, a quota):
    /// one message per file. The run then exits [`LOGS_INCOMPLETE`] unless a job failed.
    pub log_failures: Vec<String>,
}

/// The exit code of a run whose jobs all finished but some of whose logs or events could not
/// be written in full.
pub const LOGS_INCOMPLETE: u8 = 3;

impl Outcome {
    /// 0 when every job finished, 1 otherwise, 128 + the signal when the run was stopped;
    /// [`LOGS_INCOMPLETE`] (3) instead of 0 when a log or the events file could not be written
    /// in full.
    pub fn exit_code(&self) -> u8 {
        match self.interrupted {
            Some(s) => 128u8.saturating_add(s as u8),
            None if !self.transfer_failures.is_empty()
                || self.jobs.iter().any(|j| j.status != Status::Finished) =>
            {
                1
            }
            None if !self.log_failures.is_empty() => LOGS_INCOMPLETE,
            None => 0,
        }
    }

    /// One line per job that did not finish, then a count.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for t in &self.transfer_failures {
            s.push_str(&format!("  {t}\n"));
        }
        for j in self.jobs.iter().filter(|j| j.status != Status::Finished) {
            s.push_str(&format!(
                "  {} {}: {}\n",
                j.name,
                j.status.as_str().replace('_', " "),
                j.detail
            ));
            if let Some(l) = &j.log {
                s.push_str(&crate::report::log_tail(l, 10));
            }
        }
        // Each instance that got GPUs or waited; a long task array's are cut short (the
        // `instance_placed` events have them all).
        const PLACED_SHOWN: usize = 20;
        let placed: Vec<&Placed> = self
            .jobs
            .iter()
            .flat_map(|j| &j.placed)
            .filter(|p| !p.gpus.is_empty() || p.waited >= Duration::from_millis(10))
            .collect();
        if placed.len() > PLACED_SHOWN {
            s.push_str(&format!(
                "  ({} instances got GPUs or waited; the first {PLACED_SHOWN}, the events have every one)\n",
                placed.len()
            ));
        }
        for p in placed.into_iter().take(PLACED_SHOWN) {
            let gpus = match p.gpus.as_slice() {
                [] => "no GPU".to_owned(),
                g => format!("GPU(s) {}", crate::placement::gpu_list(g)),
            };
            let waited = if p.waited < Duration::from_millis(10) {
                "started at once".to_owned()
            } else {
                format!(
                    "waited {:.1} s for the node's resources",
                    p.waited.as_secs_f64()
                )
            };
            s.push_str(&format!("  {}: {gpus}, {waited}\n", p.instance));
        }
        let finished = self
            .jobs
            .iter()
            .filter(|j| j.status == Status::Finished)
            .count();
        for l in &self.log_failures {
            s.push_str(&format!("  warning: {l}\n"));
        }
        s.push_str(&format!(
            "{finished} of {} jobs finished; logs in {}\n",
            self.jobs.len(),
            self.run_dir.join("logs").display()
        ));
        if !self.log_failures.is_empty() {
            s.push_str(&format!(
                "warning: the logs of this run are incomplete ({} file(s) could not be written in full)\n",
                self.log_failures.len()
            ));
        }
        s
    }
}

/// The run's events file (`--events`), written through the run's redaction; a write error is
/// kept in `failures` (it cannot be an event itself).
struct Events {
    file: Option<Mutex<LogWriter>>,
    failures: Arc<Mutex<Vec<String>>>,
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis()
}

impl Events {
    fn emit(&self, event: &str, mut fields: Value) {
        let Some(f) = &self.file else { return };
        if let Value::Object(m) = &mut fields {
            m.insert("event".into(), event.into());
            m.insert("time_ms".into(), json!(now_ms() as u64));
        }
        let mut line = fields.to_string().into_bytes();
        line.push(b'\n');
        let failed = f.lock().ok().and_then(|mut f| f.write(&line));
        if let Some(m) = failed {
            if let Ok(mut v) = self.failures.lock() {
                if !v.contains(&m) {
                    v.push(m);
                }
            }
        }
    }
}

/// Why a running job or service is being stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    No,
    /// The run was stopped (SIGINT/SIGTERM).
    Cancel,
    /// A service no job needs any more: it ends as FINISHED.
    Unneeded,
    /// A service whose readiness probe did not pass in time: it ends as FAILED.
    NotReady(String),
}

enum Msg {
    /// A service reached RUNNING.
    Ready(String),
    Done(JobReport),
}

pub(crate) struct Ctx {
    logs: PathBuf,
    /// Set by a second SIGINT/SIGTERM: groups being stopped get SIGKILL without waiting out
    /// the grace period.
    kill_now: std::sync::atomic::AtomicBool,
    guard: Guard,
    events: Events,
    grace: Duration,
    ready_timeout: Duration,
    redactor: Arc<Redactor>,
    status: StatusLine,
    /// Logs that could not be written in full (see [`Outcome::log_failures`]).
    log_failures: Arc<Mutex<Vec<String>>>,
    /// Every process an instance starts, and what they start, ends with the instance.
    tracker: Tracker,
    /// The node's free resources (`None`: instances are not placed).
    placer: Option<Arc<crate::placement::Placer>>,
    node_has_gpus: bool,
}

impl Ctx {
    /// Everything the runner prints about a job goes through here: secrets are redacted.
    fn say(&self, label: &str, text: &str) {
        let text = self.redactor.redact(text);
        self.status
            .print(format!("[{label}] {text}\n").as_bytes(), true);
    }

    /// A log (or `exec_all`'s node log) could not be written: a warning now, an event, and a
    /// line of the summary; the run exits [`LOGS_INCOMPLETE`].
    fn log_failed(&self, label: &str, message: &str) {
        let message = self.redactor.redact(message).into_owned();
        // Once per message (`exec_all` opens the events file for each event it appends).
        if self.log_failures.lock().is_ok_and(|v| v.contains(&message)) {
            return;
        }
        self.say(
            label,
            &format!("warning: {message}; the logs of this run are incomplete"),
        );
        self.events.emit(
            "log_write_failed",
            json!({"instance": label, "error": message}),
        );
        if let Ok(mut v) = self.log_failures.lock() {
            v.push(message);
        }
    }
}

fn io(what: &str, path: &Path, e: std::io::Error) -> RunError {
    RunError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// Run a prepared plan to the end (or until SIGINT/SIGTERM). Errors only when the run
/// directory or the events file cannot be created; job failures are in the [`Outcome`].
pub fn execute(p: &Prepared) -> Result<Outcome, RunError> {
    let started = Instant::now();
    // First: it starts on a thread of its own while the run is prepared below.
    let guard = Guard::start(p.grace);
    let logs = p.run_dir.join("logs");
    crate::redact::create_log_dir(&logs).map_err(|e| io("create", &logs, e))?;
    // Ephemeral volumes below the run directory, no symbolic link followed on the way.
    let run_dir = crate::safe_fs::Dir::open(&p.run_dir).map_err(|e| RunError::Io(e.to_string()))?;
    for v in &p.volumes {
        let rel = v.strip_prefix(&p.run_dir).unwrap_or(v);
        run_dir
            .create_dirs(rel)
            .map_err(|e| RunError::Io(format!("cannot create {e}")))?;
    }
    let redactor = Arc::new(Redactor::new(p.secret_values.iter().cloned()));
    let events = match &p.events {
        // Emptied, then appended to: `exec_all` adds the node events of multinode jobs to the
        // same file.
        Some(path) => {
            if let Some(e) = LogWriter::create(path, redactor.clone()).write(b"") {
                return Err(RunError::Io(e));
            }
            Some(Mutex::new(LogWriter::append(path, redactor.clone())))
        }
        None => None,
    };
    let log_failures = Arc::new(Mutex::new(Vec::new()));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RunError::Io(format!("cannot start the runtime: {e}")))?;
    let ctx = Arc::new(Ctx {
        logs,
        kill_now: std::sync::atomic::AtomicBool::new(false),
        guard,
        events: Events {
            file: events,
            failures: log_failures.clone(),
        },
        grace: p.grace,
        ready_timeout: p.ready_timeout,
        redactor,
        status: StatusLine::new(p.status_line, p.jobs.len()),
        log_failures: log_failures.clone(),
        tracker: Tracker::start(&p.run_id).map_err(RunError::Io)?,
        placer: p.node.as_ref().map(crate::placement::Placer::new),
        node_has_gpus: p.node.as_ref().is_some_and(|n| !n.gpus.is_empty()),
    });
    if let Some(c) = ctx.tracker.run_cgroup() {
        ctx.guard.cgroup(c);
    }
    ctx.guard.tags(&ctx.tracker.tag_prefix());
    // Ingress before any job starts: a failed one leaves every job unstarted.
    let mut transfer_failures = transfers(p, &ctx, "ingress", &p.ingress);
    let mut outcome = if transfer_failures.is_empty() {
        rt.block_on(run(p, ctx.clone()))?
    } else {
        Outcome {
            jobs: p
                .jobs
                .iter()
                .map(|j| {
                    let detail = "volume ingress failed".to_owned();
                    ctx.events
                        .emit("job_skipped", json!({"job": j.name, "reason": detail}));
                    skipped(&j.name, detail, Status::Skipped)
                })
                .collect(),
            interrupted: None,
            run_dir: p.run_dir.clone(),
            transfer_failures: Vec::new(),
            log_failures: Vec::new(),
        }
    };
    ctx.status.clear();
    // Told that the run ended, the guard exits by itself (waited for last).
    let guard_pid = ctx.guard.finish();
    // What the instances left (a process that escaped its instance's tracking: its
    // environment cleared, a child of the runner's own helpers) ends with the run.
    ctx.tracker.finish(p.grace, guard_pid);
    // Egress once every job ended, whatever their status (what they left is worth having),
    // but not after the run was stopped.
    if outcome.interrupted.is_none() && transfer_failures.is_empty() {
        transfer_failures = transfers(p, &ctx, "egress", &p.egress);
    }
    outcome.transfer_failures = transfer_failures
        .iter()
        .map(|t| ctx.redactor.redact(t).into_owned())
        .collect();
    outcome.log_failures = ctx
        .log_failures
        .lock()
        .map(|v| v.clone())
        .unwrap_or_default();
    if !p.keep {
        for v in &p.volumes {
            let _ = std::fs::remove_dir_all(v);
        }
        let _ = std::fs::remove_dir(p.run_dir.join("volumes"));
    }
    // The last event: a reader of the events file knows the run ended, and how.
    ctx.events.emit(
        "run_finished",
        crate::report::run_finished(&outcome, started.elapsed()),
    );
    if let Ok(v) = ctx.log_failures.lock() {
        outcome.log_failures.clone_from(&v);
    }
    ctx.guard.reap();
    Ok(outcome)
}

/// Runs `list` (ingress or egress) in order, stopping at the first failure; the failures.
fn transfers(
    p: &Prepared,
    ctx: &Ctx,
    direction: &str,
    list: &[(String, PathBuf, fuzzfile_plan::Transfer)],
) -> Vec<String> {
    use crate::transfer::{egress, ingress, TransferOptions};
    for (volume, dir, t) in list {
        let opts = TransferOptions::for_transfer(t, p.ca_file.as_deref());
        let label = format!("{direction} {volume}");
        let done = if direction == "ingress" {
            ingress(dir, t, &p.files, &opts)
        } else {
            egress(dir, t, &opts)
        };
        match done {
            Ok(r) => {
                ctx.say(
                    &label,
                    &format!(
                        "{} → {} ({} bytes, {:.1} s)",
                        r.source,
                        r.destination.display(),
                        r.bytes,
                        r.duration.as_secs_f64()
                    ),
                );
                ctx.events.emit(
                    "transfer_done",
                    json!({
                        "direction": direction,
                        "volume": volume,
                        "source": r.source,
                        "destination": r.destination.display().to_string(),
                        "bytes": r.bytes,
                        "duration_ms": r.duration.as_millis() as u64,
                    }),
                );
            }
            Err(e) => {
                ctx.say(&label, &format!("failed: {e}"));
                ctx.events.emit(
                    "transfer_failed",
                    json!({"direction": direction, "volume": volume, "error": e}),
                );
                return vec![format!("volume `{volume}`: {e}")];
            }
        }
    }
    Vec::new()
}

fn skipped(name: &str, detail: String, status: Status) -> JobReport {
    JobReport {
        name: name.to_owned(),
        status,
        exit_code: None,
        duration: Duration::ZERO,
        detail,
        log: None,
        placed: Vec::new(),
    }
}

async fn run(p: &Prepared, ctx: Arc<Ctx>) -> Result<Outcome, RunError> {
    let sig = |k| signal(k).map_err(|e| RunError::Io(format!("cannot handle signals: {e}")));
    let mut sigint = sig(SignalKind::interrupt())?;
    let mut sigterm = sig(SignalKind::terminate())?;
    ctx.events.emit(
        "plan_ready",
        json!({
            "run_dir": p.run_dir.display().to_string(),
            "run_id": p.run_id,
            "runtime": p.runtime.as_str(),
            "process_tracking": ctx.tracker.how(),
            "node": p.node.as_ref().map(|n| json!({
                "cores": n.cores,
                "memory_bytes": n.memory_bytes,
                "gpus": n.gpus.iter().map(|g| json!({"index": g.index, "name": g.name, "memory_bytes": g.memory_bytes})).collect::<Vec<_>>(),
                "cores_source": n.cores_source,
                "memory_source": n.memory_source,
                "gpus_source": n.gpus_source,
            })),
            "jobs": p.jobs.iter().filter(|j| j.kind == TaskKind::Job).map(|j| j.name.clone()).collect::<Vec<_>>(),
            "services": p.jobs.iter().filter(|j| j.kind == TaskKind::Service).map(|j| j.name.clone()).collect::<Vec<_>>(),
        }),
    );
    let (msg_tx, mut msg_rx) = mpsc::unbounded_channel::<Msg>();
    let mut reports: BTreeMap<String, JobReport> = BTreeMap::new();
    let mut started: BTreeSet<&str> = BTreeSet::new();
    let mut ready: BTreeSet<String> = BTreeSet::new();
    let mut stops: BTreeMap<&str, Arc<watch::Sender<Stop>>> = BTreeMap::new();
    let mut running = 0usize;
    let mut interrupted = None;
    let ticker = ctx.status.enabled().then(|| {
        let ctx = ctx.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                ctx.status.tick();
            }
        })
    });
    let dependents = |name: &str| -> Vec<&str> {
        p.jobs
            .iter()
            .filter(|j| j.depends_on.iter().any(|(d, _)| d == name))
            .map(|j| j.name.as_str())
            .collect()
    };
    loop {
        if interrupted.is_none() {
            // The tasks are in topological order, so one pass sees every cascade.
            for j in &p.jobs {
                if started.contains(j.name.as_str()) {
                    continue;
                }
                let mut wait = false;
                let mut blocked = None;
                for (d, want) in &j.depends_on {
                    match want {
                        DependencyStatus::Finished => match reports.get(d) {
                            Some(r) if r.status != Status::Finished => {
                                blocked = Some(format!(
                                    "dependency {d} {}",
                                    r.status.as_str().replace('_', " ")
                                ));
                            }
                            Some(_) => {}
                            None => wait = true,
                        },
                        DependencyStatus::Running => {
                            if ready.contains(d) {
                            } else if let Some(r) = reports.get(d) {
                                blocked = Some(format!(
                                    "service {d} {} before it was RUNNING",
                                    r.status.as_str().replace('_', " ")
                                ));
                            } else {
                                wait = true;
                            }
                        }
                    }
                    if blocked.is_some() {
                        break;
                    }
                }
                if let Some(detail) = blocked {
                    started.insert(&j.name);
                    ctx.events
                        .emit("job_skipped", json!({"job": j.name, "reason": detail}));
                    ctx.say(&j.name, &format!("skipped: {detail}"));
                    ctx.status.update(|s| {
                        s.done += 1;
                        s.failed += 1;
                    });
                    reports.insert(j.name.clone(), skipped(&j.name, detail, Status::Skipped));
                    continue;
                }
                if wait {
                    continue;
                }
                started.insert(&j.name);
                running += 1;
                let (stop_tx, stop_rx) = watch::channel(Stop::No);
                let stop_tx = Arc::new(stop_tx);
                stops.insert(&j.name, stop_tx.clone());
                let (job, ctx, msg) = (j.clone(), ctx.clone(), msg_tx.clone());
                tokio::spawn(async move {
                    let gang_file = job.gang_file.clone();
                    let node_logs = gang_file
                        .as_ref()
                        .and_then(|f| f.parent().map(Path::to_path_buf));
                    let mpi_report = job.mpi_report.clone();
                    let redactor = ctx.redactor.clone();
                    let mut r = run_job(job, ctx, stop_rx, stop_tx, msg.clone()).await;
                    // A multinode job: name the node that failed first.
                    if r.status != Status::Finished {
                        if let Some(g) = gang_file
                            .and_then(|f| {
                                fuzzfile_io::read_to_string(&f, fuzzfile_io::Kind::NODE_CONFIG).ok()
                            })
                            .and_then(|t| {
                                serde_json::from_str::<crate::multinode::GangFailure>(&t).ok()
                            })
                        {
                            r.detail = format!("{}; {}", redactor.redact(&g.detail), r.detail);
                            // The summary shows the log of that node (`<job>-<rank>`, its
                            // host name in the plan), written by `exec_all`.
                            if let Some(d) = &node_logs {
                                r.log = Some(d.join(format!("{}-{}", r.name, g.rank)));
                            }
                        } else if let Some((hosts, slots, logs)) = mpi_report {
                            let text: String = logs
                                .iter()
                                // Only each log's end: the launcher reports there, and a
                                // job's output may be any size.
                                .filter_map(|l| fuzzfile_io::read_tail(l, LOG_TAIL).ok())
                                .collect::<Vec<_>>()
                                .join("\n");
                            if let Some(g) =
                                crate::multinode::mpi_first_failure(&text, &hosts, slots)
                            {
                                r.detail = format!("{}; {}", g.detail, r.detail);
                            }
                        }
                    }
                    let _ = msg.send(Msg::Done(r));
                });
            }
            // Services no job needs any more are stopped (persistent ones when every job ended).
            let jobs_left = p
                .jobs
                .iter()
                .any(|j| j.kind == TaskKind::Job && !reports.contains_key(&j.name));
            for j in &p.jobs {
                let Some(svc) = &j.service else { continue };
                let Some(stop) = stops.get(j.name.as_str()) else {
                    continue;
                };
                if reports.contains_key(&j.name) || *stop.borrow() != Stop::No {
                    continue;
                }
                let deps = dependents(&j.name);
                let needed = if svc.persist || deps.is_empty() {
                    jobs_left
                } else {
                    deps.iter().any(|d| !reports.contains_key(*d))
                };
                if !needed {
                    ctx.say(&j.name, "stopping: no job needs the service any more");
                    let _ = stop.send(Stop::Unneeded);
                }
            }
        }
        if running == 0 {
            break;
        }
        tokio::select! {
            Some(m) = msg_rx.recv() => match m {
                Msg::Ready(name) => {
                    ready.insert(name);
                }
                Msg::Done(r) => {
                    running -= 1;
                    reports.insert(r.name.clone(), r);
                }
            },
            _ = sigint.recv() => {
                if interrupted.is_some() {
                    // A second Ctrl-C: no more grace.
                    ctx.kill_now.store(true, std::sync::atomic::Ordering::SeqCst);
                    ctx.say("runner", "stopping now: SIGKILL to every job");
                } else {
                    interrupted = Some(2);
                    if !stops.is_empty() {
                        ctx.say(
                            "runner",
                            &format!(
                                "stopping every job (SIGTERM, SIGKILL after {:.1} s); press Ctrl-C again to kill them now",
                                ctx.grace.as_secs_f64()
                            ),
                        );
                    }
                    for s in stops.values() {
                        let _ = s.send(Stop::Cancel);
                    }
                }
            }
            _ = sigterm.recv() => {
                if interrupted.is_some() {
                    ctx.kill_now.store(true, std::sync::atomic::Ordering::SeqCst);
                } else {
                    interrupted = Some(15);
                    for s in stops.values() {
                        let _ = s.send(Stop::Cancel);
                    }
                }
            }
        }
    }
    if let Some(t) = ticker {
        t.abort();
    }
    let jobs = p
        .jobs
        .iter()
        .map(|j| {
            reports.remove(&j.name).unwrap_or_else(|| {
                let detail = "the run was stopped before it started".to_owned();
                ctx.events
                    .emit("job_skipped", json!({"job": j.name, "reason": detail}));
                skipped(&j.name, detail, Status::Cancelled)
            })
        })
        .collect();
    Ok(Outcome {
        jobs,
        interrupted,
        run_dir: p.run_dir.clone(),
        transfer_failures: Vec::new(),
        log_failures: Vec::new(),
    })
}

fn write_files(job: &Job) -> Result<(), String> {
    // Below the run directory (or a `--volume` directory), never through a symbolic link.
    for f in &job.files {
        f.write().map_err(|e| format!("cannot write {e}"))?;
    }
    Ok(())
}

struct InstanceEnd {
    status: Status,
    exit_code: Option<i32>,
    detail: String,
    placed: Option<Placed>,
}

/// Waits for the instance's share of the node ([`crate::placement`]) and gives it its GPUs;
/// says and emits that it waits (`instance_waiting`) and where it was placed
/// (`instance_placed`). Without placement the instance is returned as it is.
async fn place(
    mut inst: Instance,
    job: &str,
    ctx: &Arc<Ctx>,
    stop: &watch::Receiver<Stop>,
) -> Result<(Instance, Option<crate::placement::Grant>, Option<Placed>), InstanceEnd> {
    let Some(placer) = &ctx.placer else {
        return Ok((inst, None, None));
    };
    // A multinode job's nodes that all run here: GPUs of their own each.
    let demand = inst.demand.for_local_nodes(inst.nodes_here);
    let (label, task_id) = (inst.label.clone(), inst.task_id);
    let asks =
        json!({"cores": demand.cores, "memory_bytes": demand.memory_bytes, "gpus": demand.gpus});
    let acquire = placer.acquire(demand, |why| {
        ctx.say(
            &label,
            &format!("waiting for {} ({why})", demand.describe()),
        );
        ctx.events.emit(
            "instance_waiting",
            json!({"job": job, "instance": label, "task_id": task_id, "asks": asks, "reason": why}),
        );
    });
    let grant = tokio::select! {
        g = acquire => g,
        s = stopped(stop.clone()) => {
            let (status, detail) = match s {
                Stop::Unneeded => (Status::Finished, "no job needed it before it started"),
                _ => (Status::Cancelled, "the run was stopped before the node had room for it"),
            };
            return Err(ended(status, None, detail.into()));
        }
    };
    ctx.events.emit(
        "instance_placed",
        json!({
            "job": job,
            "instance": label,
            "task_id": task_id,
            "asks": asks,
            "gpus": grant.gpus,
            "waited_s": grant.waited.as_secs_f64(),
        }),
    );
    crate::placement::assign(
        &mut inst.argv,
        &mut inst.env,
        inst.gpu_passing,
        &grant.gpus,
        ctx.node_has_gpus,
        (inst.nodes_here > 1).then_some(inst.demand.gpus),
    );
    let placed = Placed {
        instance: label,
        gpus: grant.gpus.clone(),
        waited: grant.waited,
    };
    Ok((inst, Some(grant), Some(placed)))
}

async fn run_job(
    job: Job,
    ctx: Arc<Ctx>,
    stop: watch::Receiver<Stop>,
    stop_tx: Arc<watch::Sender<Stop>>,
    msg: mpsc::UnboundedSender<Msg>,
) -> JobReport {
    let start = Instant::now();
    let kind = match job.kind {
        TaskKind::Job => "job",
        TaskKind::Service => "service",
    };
    ctx.events.emit(
        "job_started",
        json!({"job": job.name, "kind": kind, "instances": job.instances.len()}),
    );
    // Running while one of its instances has its place on the node (before, it waits for
    // cores, memory or GPUs, and the status line counts it as waiting). Counted while the
    // place is held, so a job that takes the place of another is never counted with it.
    let instances_placed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let report = |status, exit_code, detail: String| {
        let duration = start.elapsed();
        let detail = ctx.redactor.redact(&detail).into_owned();
        ctx.events.emit(
            "job_finished",
            json!({
                "job": job.name,
                "kind": kind,
                "status": status_str(status),
                "exit_code": exit_code,
                "duration_s": duration.as_secs_f64(),
                "detail": detail,
            }),
        );
        ctx.status.update(|s| {
            s.done += 1;
            if status != Status::Finished {
                s.failed += 1;
            }
        });
        JobReport {
            name: job.name.clone(),
            status,
            exit_code,
            duration,
            detail,
            log: None,
            placed: Vec::new(),
        }
    };
    if let Err(e) = write_files(&job) {
        ctx.say(&job.name, &e);
        return report(Status::Failed, None, e);
    }
    let sem = Arc::new(Semaphore::new(job.concurrency));
    let mut set = tokio::task::JoinSet::new();
    let mut probe = None;
    for (k, inst) in job.instances.iter().cloned().enumerate() {
        let started = if k == 0 && job.service.is_some() {
            let (tx, rx) = oneshot::channel();
            let svc = job.service.clone();
            let (ctx, name, msg, stop_tx, inst) = (
                ctx.clone(),
                job.name.clone(),
                msg.clone(),
                stop_tx.clone(),
                inst.clone(),
            );
            probe = Some(tokio::spawn(async move {
                if rx.await.is_err() {
                    return;
                }
                let t0 = Instant::now();
                let readiness = svc.and_then(|s| s.readiness);
                let result = match &readiness {
                    Some(r) => {
                        probe::wait_ready(r, &inst, ctx.ready_timeout, &|m| ctx.say(&name, m))
                            .await
                            .map(|n| format!("readiness probe passed after {n} attempt(s)"))
                    }
                    None => Ok("RUNNING (no readiness probe)".to_owned()),
                };
                match result {
                    Ok(how) => {
                        ctx.events.emit(
                            "service_ready",
                            json!({"job": name, "after_s": t0.elapsed().as_secs_f64()}),
                        );
                        ctx.say(&name, &how);
                        let _ = msg.send(Msg::Ready(name));
                    }
                    Err(why) => {
                        ctx.events
                            .emit("service_not_ready", json!({"job": name, "reason": why}));
                        let _ = stop_tx.send(Stop::NotReady(why));
                    }
                }
            }));
            Some(tx)
        } else {
            None
        };
        let (sem, ctx, stop, timeout, name, array, instances_placed) = (
            sem.clone(),
            ctx.clone(),
            stop.clone(),
            job.timeout,
            job.name.clone(),
            job.task_array,
            instances_placed.clone(),
        );
        set.spawn(async move {
            let Ok(_permit) = sem.acquire_owned().await else {
                return (k, ended(Status::Cancelled, None, "not started".into()));
            };
            // Held until the instance ends: its cores, memory and GPUs.
            let (inst, _grant, placed) = match place(inst, &name, &ctx, &stop).await {
                Ok(p) => p,
                Err(end) => return (k, end),
            };
            if instances_placed.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
                ctx.status.update(|s| s.running += 1);
            }
            if array {
                ctx.events.emit(
                    "task_started",
                    json!({"job": name, "task_id": inst.task_id}),
                );
            }
            let t0 = Instant::now();
            let mut end = run_instance(&inst, timeout, &ctx, stop, started).await;
            if instances_placed.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) == 1 {
                ctx.status.update(|s| s.running -= 1);
            }
            end.placed = placed;
            if array {
                ctx.events.emit(
                    "task_finished",
                    json!({
                        "job": name,
                        "task_id": inst.task_id,
                        "status": status_str(end.status),
                        "exit_code": end.exit_code,
                        "duration_s": t0.elapsed().as_secs_f64(),
                    }),
                );
            }
            (k, end)
        });
    }
    let mut ends: Vec<Option<InstanceEnd>> = (0..job.instances.len()).map(|_| None).collect();
    while let Some(r) = set.join_next().await {
        if let Ok((k, e)) = r {
            ends[k] = Some(e);
        }
    }
    if let Some(p) = probe {
        p.abort();
    }
    let ends: Vec<(usize, InstanceEnd)> = ends
        .into_iter()
        .enumerate()
        .map(|(k, e)| {
            (
                k,
                e.unwrap_or_else(|| ended(Status::Failed, None, "the task panicked".into())),
            )
        })
        .collect();
    let placed: Vec<Placed> = ends.iter().filter_map(|(_, e)| e.placed.clone()).collect();
    let with_placed = |mut r: JobReport| {
        r.placed = placed.clone();
        r
    };
    for want in [Status::TimedOut, Status::Failed, Status::Cancelled] {
        if let Some((k, e)) = ends.iter().find(|(_, e)| e.status == want) {
            let detail = match job.instances[*k].task_id {
                Some(id) if job.task_array => format!("task {id}: {}", e.detail),
                _ => e.detail.clone(),
            };
            let mut r = with_placed(report(want, e.exit_code, detail));
            if want != Status::Cancelled {
                r.log = Some(ctx.logs.join(&job.instances[*k].log_name));
            }
            return r;
        }
    }
    let (code, detail) = ends
        .first()
        .map(|(_, e)| (e.exit_code, e.detail.clone()))
        .unwrap_or((None, "exit 0".into()));
    with_placed(report(Status::Finished, code, detail))
}

fn status_str(s: Status) -> &'static str {
    s.as_str()
}

fn ended(status: Status, exit_code: Option<i32>, detail: String) -> InstanceEnd {
    InstanceEnd {
        status,
        exit_code,
        detail,
        placed: None,
    }
}

/// Resolves when the job is asked to stop, with the reason.
async fn stopped(mut stop: watch::Receiver<Stop>) -> Stop {
    loop {
        let s = stop.borrow_and_update().clone();
        if s != Stop::No {
            return s;
        }
        if stop.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

async fn run_instance(
    inst: &Instance,
    timeout: Option<Duration>,
    ctx: &Arc<Ctx>,
    stop: watch::Receiver<Stop>,
    started: Option<oneshot::Sender<()>>,
) -> InstanceEnd {
    if *stop.borrow() != Stop::No {
        return ended(Status::Cancelled, None, "the run was stopped".into());
    }
    // The command line with the host runtime's limits and private filesystem view.
    let (program, words) = match crate::sandbox::command(inst) {
        Ok(c) => c,
        Err(detail) => {
            ctx.say(&inst.label, &detail);
            return ended(Status::Failed, None, detail);
        }
    };
    // A container that its runtime stops by name (podman, docker) is its runtime's to end:
    // its processes are in the container, and podman's monitor must finish removing it.
    let mut track = if inst.stop.is_empty() {
        ctx.tracker.instance()
    } else {
        Tracker::untracked()
    };
    // Memory and CPU limits in the instance's cgroup, where the node lets the runner set them;
    // not for a multinode head, whose cgroup also holds the nodes the local launcher starts.
    let multinode = inst.env.iter().any(|(k, _)| k == "FUZZ_MULTINODE_CONFIG");
    let limited = if multinode {
        Ok(())
    } else {
        crate::limits::cgroup_limits(
            ctx.tracker.run_cgroup(),
            track.cgroup.as_deref(),
            inst.demand.cores,
            inst.demand.memory_bytes,
        )
    };
    if let Err(why) = limited {
        if crate::limits::first_cgroup_note() {
            ctx.say(
                "runner",
                &format!("memory and CPU limits are not set: {why}"),
            );
        }
    }
    let argv = Tracker::argv(&track, &program, &words);
    let mut cmd = tokio::process::Command::new(&argv[0]);
    // The cgroup wrapper waits for a line on its standard input (see `Tracker::enter`).
    let stdin = match track.cgroup {
        Some(_) => Stdio::piped(),
        None => Stdio::null(),
    };
    cmd.args(&argv[1..])
        .envs(inst.env.iter().map(|(k, v)| (k, v)))
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if !track.tag.is_empty() {
        cmd.env(crate::reaper::INSTANCE_VAR, &track.tag);
    }
    if let (Some(c), None) = (&inst.cwd, &inst.sandbox) {
        cmd.current_dir(c);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let detail = format!("cannot start {}: {e}", inst.argv[0]);
            ctx.say(&inst.label, &detail);
            end_tracked(ctx, track).await;
            return ended(Status::Failed, None, detail);
        }
    };
    let Some(pid) = child.id() else {
        end_tracked(ctx, track).await;
        return ended(Status::Failed, None, "the process vanished".into());
    };
    // The wrapper, moved into the instance's cgroup, may start the command.
    if let Some(mut go) = child.stdin.take() {
        match ctx.tracker.enter(&mut track, pid) {
            Ok(fallback) => {
                if let Some(why) = fallback {
                    ctx.say(
                        "runner",
                        &format!("{why}; processes are tracked by the subreaper instead"),
                    );
                }
                use tokio::io::AsyncWriteExt;
                let _ = go.write_all(b"go\n").await;
            }
            Err(detail) => {
                // The pipe closes: the wrapper exits without starting the command.
                drop(go);
                let _ = child.wait().await;
                ctx.say(&inst.label, &detail);
                end_tracked(ctx, track).await;
                return ended(Status::Failed, None, detail);
            }
        }
    }
    if let Some(s) = started {
        let _ = s.send(());
    }
    let group = Pid::from_raw(pid as i32);
    ctx.guard.watch(pid as i32);
    let log = |ext: &str| {
        LogWriter::create(
            &ctx.logs.join(format!("{}.{ext}", inst.log_name)),
            ctx.redactor.clone(),
        )
    };
    let explainer = Arc::new(Mutex::new(Explainer::new()));
    let mut pumps = Vec::new();
    if let Some(o) = child.stdout.take() {
        pumps.push(tokio::spawn(pump(
            o,
            inst.label.clone(),
            log("out"),
            false,
            ctx.clone(),
            explainer.clone(),
        )));
    }
    if let Some(e) = child.stderr.take() {
        pumps.push(tokio::spawn(pump(
            e,
            inst.label.clone(),
            log("err"),
            true,
            ctx.clone(),
            explainer.clone(),
        )));
    }
    let deadline = async {
        match timeout {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    let mut why = None;
    let exited = tokio::select! {
        s = child.wait() => s.ok(),
        () = deadline => { why = Some(Stop::No); None }
        s = stopped(stop) => { why = Some(s); None }
    };
    let exited = match exited {
        Some(s) => Some(s),
        None => {
            if !inst.stop.is_empty() {
                stop_container(&inst.stop, ctx).await;
            }
            stop_group(&mut child, group, ctx.grace, &ctx.kill_now).await
        }
    };
    // Whatever is left in the group (background children of a command that exited).
    let _ = killpg(group, Signal::SIGKILL);
    ctx.guard.release(pid as i32);
    // And what left the group (another session, a daemon): by cgroup or by tag.
    end_tracked(ctx, track).await;
    // A multinode head's node containers: its bridge, killed with the group, may not have
    // removed them.
    if let Some(nodes) = inst.node_containers.clone() {
        let _ = tokio::task::spawn_blocking(move || {
            crate::bridge::remove_containers(&nodes.runtime, &nodes.label)
        })
        .await;
    }
    for p in pumps {
        let abort = p.abort_handle();
        if tokio::time::timeout(Duration::from_secs(2), p)
            .await
            .is_err()
        {
            abort.abort();
        }
    }
    let (code, signal) = match &exited {
        Some(s) => {
            use std::os::unix::process::ExitStatusExt;
            (s.code(), s.signal())
        }
        None => (None, None),
    };
    // bubblewrap exits 128 + N when the job it ran was killed by signal N.
    let (code, signal) = match (code, &inst.sandbox) {
        (Some(c @ 129..=192), Some(_)) => (None, Some(c - 128)),
        _ => (code, signal),
    };
    let how = match (code, signal) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => "ended".into(),
    };
    match why {
        Some(Stop::No) => {
            let secs = timeout.map_or(0, |d| d.as_secs());
            ctx.say(&inst.label, &format!("timed out after {secs} s"));
            ended(
                Status::TimedOut,
                code,
                format!("timed out after {secs} s ({how})"),
            )
        }
        Some(Stop::Cancel) => ended(Status::Cancelled, code, format!("stopped ({how})")),
        Some(Stop::Unneeded) => ended(
            Status::Finished,
            code,
            format!("stopped once no job needed it ({how})"),
        ),
        Some(Stop::NotReady(m)) => {
            ctx.say(&inst.label, &m);
            ended(Status::Failed, code, m)
        }
        None if code == Some(0) => ended(Status::Finished, code, how),
        None => ended(Status::Failed, code, how),
    }
}

/// Ends what is left of an instance's processes (see [`crate::reaper`]), off the runtime's
/// thread: it waits up to the grace period.
async fn end_tracked(ctx: &Arc<Ctx>, track: crate::reaper::Track) {
    // Tracked by tag and nothing left (the usual end): no thread to start.
    if track.cgroup.is_none() && !ctx.tracker.has_members(&track) {
        return;
    }
    // In a cgroup that its processes left and that the kernel lets go of at once (the usual
    // end): removed here, no thread either. (Else on the thread: the removal may have to wait.)
    if ctx.tracker.end_if_empty(&track) {
        return;
    }
    let c = ctx.clone();
    let _ = tokio::task::spawn_blocking(move || c.tracker.end(&track, c.grace, &c.kill_now)).await;
}

/// Runs the plan's stop command of a container (`podman stop --time GRACE NAME`): the
/// runtime's client is not the container, and signalling it would leave the container running
/// under its monitor. The command gets the grace period and a margin; what it prints is
/// dropped unless it fails.
async fn stop_container(stop: &[String], ctx: &Ctx) {
    let mut cmd = tokio::process::Command::new(&stop[0]);
    cmd.args(&stop[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let limit = ctx.grace + Duration::from_secs(30);
    match tokio::time::timeout(limit, async { cmd.output().await }).await {
        Ok(Ok(out)) if out.status.success() => {}
        Ok(Ok(out)) => ctx.say(
            "runner",
            &format!(
                "`{}` failed ({}): {}",
                stop.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ),
        ),
        Ok(Err(e)) => ctx.say("runner", &format!("cannot run `{}`: {e}", stop.join(" "))),
        Err(_) => ctx.say(
            "runner",
            &format!(
                "`{}` did not end within {} s",
                stop.join(" "),
                limit.as_secs()
            ),
        ),
    }
}

/// SIGTERM to the whole group; SIGKILL to it after `grace` unless every process has ended.
async fn stop_group(
    child: &mut tokio::process::Child,
    group: Pid,
    grace: Duration,
    kill_now: &std::sync::atomic::AtomicBool,
) -> Option<std::process::ExitStatus> {
    let _ = killpg(group, Signal::SIGTERM);
    let end = Instant::now() + grace;
    let mut exit = None;
    loop {
        if exit.is_none() {
            if let Ok(Some(s)) = child.try_wait() {
                exit = Some(s);
            }
        }
        // Orphans of the group die as the runner's children (its subreaper): reaped here,
        // or the group would never look empty.
        crate::reaper::reap_group_orphans(&[group.as_raw()].into(), group.as_raw());
        if exit.is_some() && killpg(group, None).is_err() {
            break;
        }
        if Instant::now() >= end || kill_now.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = killpg(group, Signal::SIGKILL);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    match exit {
        Some(s) => Some(s),
        None => child.wait().await.ok(),
    }
}

async fn pump<R: AsyncRead + Unpin>(
    r: R,
    label: String,
    mut log: LogWriter,
    stderr: bool,
    ctx: Arc<Ctx>,
    explainer: Arc<Mutex<Explainer>>,
) {
    // A log that could not even be created.
    if let Some(m) = log.write(b"") {
        ctx.log_failed(&label, &m);
    }
    let mut r = BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        // Bounded: a line longer than 1 MiB is passed on in pieces.
        match (&mut r).take(1 << 20).read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        // `exec_all` reports a node log it could not write on its standard error (or
        // wherever the job sent that).
        if let Some(m) = buf.strip_prefix(crate::multinode::LOG_FAILED_MARKER.as_bytes()) {
            let m = String::from_utf8_lossy(m);
            ctx.log_failed(&label, m.trim());
            continue;
        }
        if let Some(m) = log.write(&buf) {
            ctx.log_failed(&label, &m);
        }
        let clean = ctx.redactor.redact_bytes(&buf);
        let mut line = format!("[{label}] ").into_bytes();
        line.extend_from_slice(&clean);
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        ctx.status.print(&line, stderr);
        let text = String::from_utf8_lossy(&clean);
        let found = explainer.lock().ok().and_then(|mut e| e.line(&text));
        if let Some(x) = found {
            let rule = x
                .rule
                .map(|r| format!(" (fuzzlint rule {r})"))
                .unwrap_or_default();
            ctx.status.print(
                format!("[{label}] fuzz: {}{rule}\n", x.text).as_bytes(),
                true,
            );
            ctx.events.emit(
                "log_explained",
                json!({"instance": label, "id": x.id, "explanation": x.text, "rule": x.rule}),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(status: Status, interrupted: Option<i32>, log_failures: &[&str]) -> Outcome {
        Outcome {
            jobs: vec![JobReport {
                name: "j".into(),
                status,
                exit_code: Some(0),
                duration: Duration::ZERO,
                detail: String::new(),
                log: None,
                placed: Vec::new(),
            }],
            interrupted,
            run_dir: PathBuf::from("/run"),
            transfer_failures: Vec::new(),
            log_failures: log_failures.iter().map(|s| (*s).to_owned()).collect(),
        }
    }

    #[test]
    fn the_summary_names_the_gpus_and_waits_and_cuts_a_long_list_short() {
        let mut o = outcome(Status::Finished, None, &[]);
        o.jobs[0].placed = (0..25)
            .map(|k| Placed {
                instance: format!("j:{k}"),
                gpus: vec![k % 2],
                waited: Duration::from_millis(if k == 0 { 0 } else { 1500 }),
            })
            .collect();
        let s = o.summary();
        assert!(s.contains("  j:0: GPU(s) 0, started at once\n"), "{s}");
        assert!(
            s.contains("  j:1: GPU(s) 1, waited 1.5 s for the node's resources\n"),
            "{s}"
        );
        assert!(
            s.contains("(25 instances got GPUs or waited; the first 20"),
            "{s}"
        );
        assert!(s.contains("  j:19: ") && !s.contains("  j:20: "), "{s}");
    }

    #[test]
    fn incomplete_logs_exit_3_unless_a_job_failed_or_the_run_was_stopped() {
        assert_eq!(outcome(Status::Finished, None, &[]).exit_code(), 0);
        let cut = ["cannot write /run/logs/j.out: No space left on device"];
        let o = outcome(Status::Finished, None, &cut);
        assert_eq!(o.exit_code(), LOGS_INCOMPLETE);
        let summary = o.summary();
        assert!(
            summary.contains("  warning: cannot write /run/logs/j.out"),
            "{summary}"
        );
        assert!(
            summary.contains("the logs of this run are incomplete"),
            "{summary}"
        );
        assert_eq!(outcome(Status::Failed, None, &cut).exit_code(), 1);
        assert_eq!(outcome(Status::Cancelled, Some(2), &cut).exit_code(), 130);
    }
}
