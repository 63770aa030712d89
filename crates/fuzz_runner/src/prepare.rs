//! From a launch plan to what starts on this node: every check that can refuse a plan runs
//! here, before anything is created or started.

use crate::{Options, RunError, RuntimeKind};
use fuzzfile_plan::{
    DependencyStatus, EnvValue, FileContent, Plan, Task, VolumeKind, PLAN_VERSION, SCRIPT_PATH,
    WORKDIR,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A plan checked and resolved for one run directory: nothing has been created yet.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The run directory (`{workdir}`).
    pub run_dir: PathBuf,
    /// The run's id: `FB_WORKFLOW_ID` of every instance.
    pub run_id: String,
    /// Ephemeral volume directories to create (and to remove after the run unless `--keep`).
    pub volumes: Vec<PathBuf>,
    /// Jobs in the plan's topological order.
    pub jobs: Vec<Job>,
    /// Things the user should know before the run starts (the image is not used, …).
    pub notes: Vec<String>,
    pub grace: Duration,
    pub keep: bool,
    pub events: Option<PathBuf>,
}

#[derive(Clone, Debug)]
pub struct Job {
    pub name: String,
    /// Jobs that must reach FINISHED first.
    pub depends_on: Vec<String>,
    pub timeout: Option<Duration>,
    /// At most this many instances at once.
    pub concurrency: usize,
    pub task_array: bool,
    /// Files to write before the job starts: host path, content, mode.
    pub files: Vec<(PathBuf, String, u32)>,
    pub instances: Vec<Instance>,
}

#[derive(Clone, Debug)]
pub struct Instance {
    /// `job` or `job:task` (the output prefix).
    pub label: String,
    /// The log file stem: `<hostname>`.
    pub log_name: String,
    pub task_id: Option<i64>,
    pub argv: Vec<String>,
    /// Set on top of the runner's environment.
    pub env: Vec<(String, String)>,
    /// `None`: the runner's own working directory.
    pub cwd: Option<PathBuf>,
}

fn fill(path: &str, run_dir: &Path) -> PathBuf {
    PathBuf::from(path.replace(WORKDIR, &run_dir.display().to_string()))
}

/// Check that `plan` can run here with `options` and resolve it against `run_dir`.
pub fn prepare(
    plan: &Plan,
    options: &Options,
    run_dir: &Path,
    run_id: &str,
) -> Result<Prepared, RunError> {
    let refuse = |m: String| Err(RunError::Plan(m));
    if plan.plan_version != PLAN_VERSION {
        return refuse(format!(
            "plan_version {} is not supported (this runner reads version {PLAN_VERSION})",
            plan.plan_version
        ));
    }
    if options.runtime != RuntimeKind::Host {
        return refuse(format!(
            "runtime `{}` is not supported by `fuzz run` yet; use --runtime host",
            options.runtime.as_str()
        ));
    }
    if let Some(s) = plan.services.first() {
        return refuse(format!(
            "service `{}`: services are not supported by `fuzz run` yet",
            s.name
        ));
    }
    if let Some(e) = plan
        .graph
        .edges
        .iter()
        .find(|e| e.status == DependencyStatus::Running)
    {
        return refuse(format!(
            "job `{}` waits for `{}` to be RUNNING: services are not supported by `fuzz run` yet",
            e.to, e.from
        ));
    }
    let mut volumes = Vec::new();
    for v in &plan.volumes {
        if v.kind != VolumeKind::Ephemeral {
            return refuse(format!(
                "volume `{}` is not ephemeral: only ephemeral volumes are supported by `fuzz run` yet",
                v.key
            ));
        }
        if !v.ingress.is_empty() || !v.egress.is_empty() {
            return refuse(format!(
                "volume `{}` has ingress or egress transfers, which `fuzz run` does not support yet",
                v.key
            ));
        }
        volumes.push(fill(&v.host_path, run_dir));
    }
    let mut notes = Vec::new();
    let mut jobs_by_name: BTreeMap<&str, &Task> = BTreeMap::new();
    for j in &plan.jobs {
        jobs_by_name.insert(j.name.as_str(), j);
    }
    let mut jobs = Vec::new();
    for name in &plan.graph.order {
        let Some(t) = jobs_by_name.get(name.as_str()) else {
            return refuse(format!(
                "the graph names `{name}`, which is not a job of the plan"
            ));
        };
        jobs.push(job(plan, t, run_dir, run_id, &mut notes)?);
    }
    if jobs.len() != plan.jobs.len() {
        return refuse("the graph's order does not list every job".into());
    }
    Ok(Prepared {
        run_dir: run_dir.to_owned(),
        run_id: run_id.to_owned(),
        volumes,
        jobs,
        notes,
        grace: options.grace,
        keep: options.keep,
        events: options.events.clone(),
    })
}

fn under<'a>(path: &'a str, dir: &str) -> Option<&'a str> {
    let dir = dir.trim_end_matches('/');
    if path == dir {
        Some("")
    } else {
        path.strip_prefix(dir)?.strip_prefix('/')
    }
}

fn job(
    plan: &Plan,
    t: &Task,
    run_dir: &Path,
    run_id: &str,
    notes: &mut Vec<String>,
) -> Result<Job, RunError> {
    let refuse = |m: String| Err(RunError::Plan(format!("job `{}`: {m}", t.name)));
    if t.multinode.is_some() {
        return refuse("multinode jobs are not supported by `fuzz run` yet".into());
    }
    notes.push(format!(
        "job `{}`: the host runtime does not use the image {}; the node's own programs run",
        t.name, t.image.uri
    ));
    // Mounts: without a container, a volume is reachable only as the job's working directory
    // (or a directory above it): the process starts in the volume's directory.
    let mut cwd: Option<PathBuf> = t.cwd.as_ref().map(PathBuf::from);
    let mut cwd_mount: Option<(&str, PathBuf)> = None;
    for m in &t.mounts {
        let rest = t.cwd.as_deref().and_then(|c| under(c, &m.path));
        match rest {
            Some(rest)
                if cwd_mount
                    .as_ref()
                    .is_none_or(|(p, _)| p.len() < m.path.len()) =>
            {
                let host = fill(&m.host_path, run_dir);
                cwd = Some(if rest.is_empty() {
                    host.clone()
                } else {
                    host.join(rest)
                });
                cwd_mount = Some((m.path.as_str(), host));
            }
            Some(_) => {}
            None => {
                return refuse(format!(
                    "the host runtime cannot place volume `{}` at {} (there is no container); \
                     set `cwd: {}` (or a directory under it) so the job reaches the volume \
                     through relative paths, or use a container runtime",
                    m.volume, m.path, m.path
                ));
            }
        }
    }
    let mut files = Vec::new();
    let mut script_host = None;
    for f in &t.files {
        let content = match &f.content {
            FileContent::Inline(s) => s.clone(),
            FileContent::File(n) => match plan.files.iter().find(|x| &x.name == n) {
                Some(x) => x.content.clone(),
                None => {
                    return refuse(format!(
                        "file {} names the unknown top-level file `{n}`",
                        f.path
                    ))
                }
            },
        };
        let mode = u32::from_str_radix(&f.mode, 8).unwrap_or(0o644);
        let host = fill(&f.host_path, run_dir);
        if f.path == SCRIPT_PATH {
            script_host = Some(host.clone());
        } else {
            // Reachable only inside the volume that is the working directory.
            let inside = cwd_mount
                .as_ref()
                .and_then(|(p, h)| under(&f.path, p).map(|rest| h.join(rest)));
            match inside {
                Some(p) if !p.as_os_str().is_empty() => files.push((p, content.clone(), mode)),
                _ => {
                    return refuse(format!(
                        "the host runtime cannot place file {} (there is no container); \
                         put it under the volume mounted at the job's cwd, or use a container runtime",
                        f.path
                    ))
                }
            }
        }
        files.push((host, content, mode));
    }
    let timeout = t.timeout.as_ref().map(|x| Duration::from_secs(x.seconds));
    let (concurrency, task_array) = match &t.task_array {
        Some(ta) => (
            ta.concurrency
                .map_or(t.instances.len(), |c| c as usize)
                .max(1),
            true,
        ),
        None => (1, false),
    };
    let mut instances = Vec::new();
    for i in &t.instances {
        let Some(argv) = &i.argv else {
            return refuse("an instance has no command".into());
        };
        let argv: Vec<String> = argv
            .iter()
            .enumerate()
            .map(|(k, w)| match &script_host {
                Some(h) if k == 0 && w == SCRIPT_PATH => h.display().to_string(),
                _ => w.clone(),
            })
            .collect();
        if argv.is_empty() {
            return refuse("the command is empty".into());
        }
        let mut env = Vec::new();
        for e in &i.env {
            let value = match &e.value {
                EnvValue::Literal(v) => v.clone(),
                EnvValue::Secret(s) => {
                    return refuse(format!(
                        "{} comes from the secret {}: secrets are not supported by `fuzz run` yet",
                        e.name, s.reference
                    ))
                }
                EnvValue::Runtime(r) => match r.as_str() {
                    "workflow-id" => run_id.to_owned(),
                    "account-id" => "local".to_owned(),
                    r if r.starts_with("address-of:") => "127.0.0.1".to_owned(),
                    other => {
                        return refuse(format!(
                            "{} needs the run-time value `{other}`, which `fuzz run` does not know",
                            e.name
                        ))
                    }
                },
            };
            env.push((e.name.clone(), value));
        }
        instances.push(Instance {
            label: match i.task_id {
                Some(id) => format!("{}:{id}", t.name),
                None => t.name.clone(),
            },
            log_name: i.hostname.clone(),
            task_id: i.task_id,
            argv,
            env,
            cwd: cwd.clone(),
        });
    }
    if instances.is_empty() {
        return refuse("it has no instances".into());
    }
    let depends_on = plan
        .graph
        .edges
        .iter()
        .filter(|e| e.to == t.name)
        .map(|e| e.from.clone())
        .collect();
    Ok(Job {
        name: t.name.clone(),
        depends_on,
        timeout,
        concurrency,
        task_array,
        files,
        instances,
    })
}
