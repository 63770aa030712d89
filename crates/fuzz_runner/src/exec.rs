//! Running a prepared plan: the job graph, processes, timeouts, signals, logs and events.

use crate::prepare::{Instance, Job, Prepared};
use crate::RunError;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{mpsc, watch, Semaphore};

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
}

#[derive(Clone, Debug)]
pub struct Outcome {
    /// In the plan's order.
    pub jobs: Vec<JobReport>,
    /// The signal that stopped the run (2 for SIGINT, 15 for SIGTERM).
    pub interrupted: Option<i32>,
    pub run_dir: PathBuf,
}

impl Outcome {
    /// 0 when every job finished, 1 otherwise, 128 + the signal when the run was stopped.
    pub fn exit_code(&self) -> u8 {
        match self.interrupted {
            Some(s) => 128u8.saturating_add(s as u8),
            None if self.jobs.iter().all(|j| j.status == Status::Finished) => 0,
            None => 1,
        }
    }

    /// One line per job that did not finish, then a count.
    pub fn summary(&self) -> String {
        let mut s = String::new();
        for j in self.jobs.iter().filter(|j| j.status != Status::Finished) {
            s.push_str(&format!(
                "  {} {}: {}\n",
                j.name,
                j.status.as_str().replace('_', " "),
                j.detail
            ));
        }
        let finished = self
            .jobs
            .iter()
            .filter(|j| j.status == Status::Finished)
            .count();
        s.push_str(&format!(
            "{finished} of {} jobs finished; logs in {}\n",
            self.jobs.len(),
            self.run_dir.join("logs").display()
        ));
        s
    }
}

struct Events(Option<Mutex<std::fs::File>>);

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis()
}

impl Events {
    fn emit(&self, event: &str, mut fields: Value) {
        let Some(f) = &self.0 else { return };
        if let Value::Object(m) = &mut fields {
            m.insert("event".into(), event.into());
            m.insert("time_ms".into(), json!(now_ms() as u64));
        }
        if let Ok(mut f) = f.lock() {
            let _ = writeln!(f, "{fields}");
        }
    }
}

struct Ctx {
    logs: PathBuf,
    events: Events,
    grace: Duration,
}

fn io(what: &str, path: &Path, e: std::io::Error) -> RunError {
    RunError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// Run a prepared plan to the end (or until SIGINT/SIGTERM). Errors only when the run
/// directory or the events file cannot be created; job failures are in the [`Outcome`].
pub fn execute(p: &Prepared) -> Result<Outcome, RunError> {
    let logs = p.run_dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| io("create", &logs, e))?;
    for v in &p.volumes {
        std::fs::create_dir_all(v).map_err(|e| io("create", v, e))?;
    }
    let events = match &p.events {
        Some(path) => Some(Mutex::new(
            std::fs::File::create(path).map_err(|e| io("create", path, e))?,
        )),
        None => None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RunError::Io(format!("cannot start the runtime: {e}")))?;
    let ctx = Arc::new(Ctx {
        logs,
        events: Events(events),
        grace: p.grace,
    });
    let outcome = rt.block_on(run(p, ctx))?;
    if !p.keep {
        for v in &p.volumes {
            let _ = std::fs::remove_dir_all(v);
        }
        let _ = std::fs::remove_dir(p.run_dir.join("volumes"));
    }
    Ok(outcome)
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
            "jobs": p.jobs.iter().map(|j| j.name.clone()).collect::<Vec<_>>(),
        }),
    );
    let (cancel_tx, cancel_rx) = watch::channel(false);
    let (done_tx, mut done_rx) = mpsc::unbounded_channel::<JobReport>();
    let mut reports: BTreeMap<String, JobReport> = BTreeMap::new();
    let mut started: BTreeMap<&str, ()> = BTreeMap::new();
    let mut running = 0usize;
    let mut interrupted = None;
    loop {
        if interrupted.is_none() {
            // The jobs are in topological order, so one pass sees every cascade.
            for j in &p.jobs {
                if started.contains_key(j.name.as_str()) {
                    continue;
                }
                let blocked = j.depends_on.iter().find_map(|d| {
                    reports
                        .get(d)
                        .filter(|r| r.status != Status::Finished)
                        .map(|r| (d, r.status))
                });
                if let Some((d, st)) = blocked {
                    started.insert(&j.name, ());
                    let detail = format!("dependency {d} {}", st.as_str().replace('_', " "));
                    ctx.events
                        .emit("job_skipped", json!({"job": j.name, "reason": detail}));
                    eprintln!("[{}] skipped: {detail}", j.name);
                    reports.insert(
                        j.name.clone(),
                        JobReport {
                            name: j.name.clone(),
                            status: Status::Skipped,
                            exit_code: None,
                            duration: Duration::ZERO,
                            detail,
                        },
                    );
                    continue;
                }
                if j.depends_on.iter().all(|d| reports.contains_key(d)) {
                    started.insert(&j.name, ());
                    running += 1;
                    let (job, ctx, cancel, done) =
                        (j.clone(), ctx.clone(), cancel_rx.clone(), done_tx.clone());
                    tokio::spawn(async move {
                        let r = run_job(job, ctx, cancel).await;
                        let _ = done.send(r);
                    });
                }
            }
        }
        if running == 0 {
            break;
        }
        tokio::select! {
            Some(r) = done_rx.recv() => {
                running -= 1;
                reports.insert(r.name.clone(), r);
            }
            _ = sigint.recv(), if interrupted.is_none() => {
                interrupted = Some(2);
                let _ = cancel_tx.send(true);
            }
            _ = sigterm.recv(), if interrupted.is_none() => {
                interrupted = Some(15);
                let _ = cancel_tx.send(true);
            }
        }
    }
    let jobs = p
        .jobs
        .iter()
        .map(|j| {
            reports.remove(&j.name).unwrap_or_else(|| {
                let detail = "the run was stopped before it started".to_owned();
                ctx.events
                    .emit("job_skipped", json!({"job": j.name, "reason": detail}));
                JobReport {
                    name: j.name.clone(),
                    status: Status::Cancelled,
                    exit_code: None,
                    duration: Duration::ZERO,
                    detail,
                }
            })
        })
        .collect();
    Ok(Outcome {
        jobs,
        interrupted,
        run_dir: p.run_dir.clone(),
    })
}

fn write_files(job: &Job) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    for (path, content, mode) in &job.files {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        std::fs::write(path, content)
            .and_then(|()| std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode)))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

struct InstanceEnd {
    status: Status,
    exit_code: Option<i32>,
    detail: String,
}

async fn run_job(job: Job, ctx: Arc<Ctx>, cancel: watch::Receiver<bool>) -> JobReport {
    let start = Instant::now();
    ctx.events.emit(
        "job_started",
        json!({"job": job.name, "instances": job.instances.len()}),
    );
    let report = |status, exit_code, detail: String| {
        let duration = start.elapsed();
        ctx.events.emit(
            "job_finished",
            json!({
                "job": job.name,
                "status": status_str(status),
                "exit_code": exit_code,
                "duration_s": duration.as_secs_f64(),
                "detail": detail,
            }),
        );
        JobReport {
            name: job.name.clone(),
            status,
            exit_code,
            duration,
            detail,
        }
    };
    if let Err(e) = write_files(&job) {
        eprintln!("[{}] {e}", job.name);
        return report(Status::Failed, None, e);
    }
    let sem = Arc::new(Semaphore::new(job.concurrency));
    let mut set = tokio::task::JoinSet::new();
    for (k, inst) in job.instances.iter().cloned().enumerate() {
        let (sem, ctx, cancel, timeout, name, array) = (
            sem.clone(),
            ctx.clone(),
            cancel.clone(),
            job.timeout,
            job.name.clone(),
            job.task_array,
        );
        set.spawn(async move {
            let Ok(_permit) = sem.acquire_owned().await else {
                return (k, ended(Status::Cancelled, None, "not started".into()));
            };
            if array {
                ctx.events.emit(
                    "task_started",
                    json!({"job": name, "task_id": inst.task_id}),
                );
            }
            let t0 = Instant::now();
            let end = run_instance(&inst, timeout, &ctx, cancel).await;
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
    for want in [Status::TimedOut, Status::Failed, Status::Cancelled] {
        if let Some((k, e)) = ends.iter().find(|(_, e)| e.status == want) {
            let detail = match job.instances[*k].task_id {
                Some(id) if job.task_array => format!("task {id}: {}", e.detail),
                _ => e.detail.clone(),
            };
            return report(want, e.exit_code, detail);
        }
    }
    let code = ends.first().and_then(|(_, e)| e.exit_code);
    report(Status::Finished, code, "exit 0".into())
}

fn status_str(s: Status) -> &'static str {
    s.as_str()
}

fn ended(status: Status, exit_code: Option<i32>, detail: String) -> InstanceEnd {
    InstanceEnd {
        status,
        exit_code,
        detail,
    }
}

async fn cancelled(mut cancel: watch::Receiver<bool>) {
    loop {
        if *cancel.borrow_and_update() {
            return;
        }
        if cancel.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

async fn run_instance(
    inst: &Instance,
    timeout: Option<Duration>,
    ctx: &Ctx,
    cancel: watch::Receiver<bool>,
) -> InstanceEnd {
    if *cancel.borrow() {
        return ended(Status::Cancelled, None, "the run was stopped".into());
    }
    let mut cmd = tokio::process::Command::new(&inst.argv[0]);
    cmd.args(&inst.argv[1..])
        .envs(inst.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(c) = &inst.cwd {
        cmd.current_dir(c);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            let detail = format!("cannot start {}: {e}", inst.argv[0]);
            eprintln!("[{}] {detail}", inst.label);
            return ended(Status::Failed, None, detail);
        }
    };
    let Some(pid) = child.id() else {
        return ended(Status::Failed, None, "the process vanished".into());
    };
    let group = Pid::from_raw(pid as i32);
    let log =
        |ext: &str| std::fs::File::create(ctx.logs.join(format!("{}.{ext}", inst.log_name))).ok();
    let mut pumps = Vec::new();
    if let Some(o) = child.stdout.take() {
        pumps.push(tokio::spawn(pump(o, inst.label.clone(), log("out"), false)));
    }
    if let Some(e) = child.stderr.take() {
        pumps.push(tokio::spawn(pump(e, inst.label.clone(), log("err"), true)));
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
        () = deadline => { why = Some(Status::TimedOut); None }
        () = cancelled(cancel) => { why = Some(Status::Cancelled); None }
    };
    let exited = match (exited, why) {
        (Some(s), _) => Some(s),
        (None, _) => stop_group(&mut child, group, ctx.grace).await,
    };
    // Whatever is left in the group (background children of a command that exited).
    let _ = killpg(group, Signal::SIGKILL);
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
    let how = match (code, signal) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => "ended".into(),
    };
    match why {
        Some(Status::TimedOut) => {
            let secs = timeout.map_or(0, |d| d.as_secs());
            eprintln!("[{}] timed out after {secs} s", inst.label);
            ended(
                Status::TimedOut,
                code,
                format!("timed out after {secs} s ({how})"),
            )
        }
        Some(st) => ended(st, code, format!("stopped ({how})")),
        None if code == Some(0) => ended(Status::Finished, code, how),
        None => ended(Status::Failed, code, how),
    }
}

/// SIGTERM to the whole group; SIGKILL to it after `grace` unless every process has ended.
async fn stop_group(
    child: &mut tokio::process::Child,
    group: Pid,
    grace: Duration,
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
        if exit.is_some() && killpg(group, None).is_err() {
            break;
        }
        if Instant::now() >= end {
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
    mut log: Option<std::fs::File>,
    stderr: bool,
) {
    let mut r = BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match r.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if let Some(f) = &mut log {
            let _ = f.write_all(&buf);
        }
        let mut line = format!("[{label}] ").into_bytes();
        line.extend_from_slice(&buf);
        if !line.ends_with(b"\n") {
            line.push(b'\n');
        }
        if stderr {
            let _ = std::io::stderr().lock().write_all(&line);
        } else {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&line);
            let _ = out.flush();
        }
    }
}
