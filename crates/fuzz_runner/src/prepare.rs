//! From a launch plan to what starts on this node: every check that can refuse a plan runs
//! here, before anything is created or started.

use crate::{Options, RunError, RuntimeKind};
use fuzzfile_plan::{
    DependencyStatus, EnvPassing, EnvValue, FileContent, Plan, Readiness, RuntimeLine, Task,
    TaskKind, VolumeKind, GRACE, PLAN_VERSION, RUN_ID, SCRIPT_PATH, WORKDIR,
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
    /// The runtime instances run in (after `auto` was resolved).
    pub runtime: RuntimeKind,
    /// Secret values: redacted from every log line, event and message.
    pub secret_values: Vec<String>,
    /// A service not RUNNING after this long fails.
    pub ready_timeout: Duration,
    pub status_line: bool,
    /// Jobs in the plan's topological order.
    pub jobs: Vec<Job>,
    /// Things the user should know before the run starts (the image is not used, …).
    pub notes: Vec<String>,
    pub grace: Duration,
    pub keep: bool,
    pub events: Option<PathBuf>,
    /// Volume transfers: `(volume key, its directory on this node, transfer)`, in the plan's
    /// order. Ingress runs before any job starts, egress after every job ended.
    pub ingress: Vec<(String, PathBuf, fuzzfile_plan::Transfer)>,
    pub egress: Vec<(String, PathBuf, fuzzfile_plan::Transfer)>,
    /// The top-level `files` (sources of `file://<name>` ingress).
    pub files: Vec<fuzzfile_plan::TopFile>,
    /// Extra CA certificates for `https://` ingress.
    pub ca_file: Option<PathBuf>,
    /// The node's resources: instances are placed within them (`None`: not placed).
    pub node: Option<crate::node::NodeResources>,
}

#[derive(Clone, Debug)]
pub struct Job {
    /// A multinode job's gang file: which node failed first (written by `exec_all`).
    pub gang_file: Option<PathBuf>,
    /// An `openmpi`/`mpich` job: its hosts, slots per node, and the head's log files, where
    /// the MPI launcher reports the first process that failed.
    pub mpi_report: Option<(Vec<String>, u64, Vec<PathBuf>)>,
    pub name: String,
    pub kind: TaskKind,
    /// What must reach which status first (FINISHED, or RUNNING for services).
    pub depends_on: Vec<(String, DependencyStatus)>,
    /// Services: whether it outlives its dependents, and its readiness probe.
    pub service: Option<ServiceSpec>,
    pub timeout: Option<Duration>,
    /// At most this many instances at once.
    pub concurrency: usize,
    pub task_array: bool,
    /// Files to write before the job starts.
    pub files: Vec<JobFile>,
    pub instances: Vec<Instance>,
}

/// A file written before a job starts, below a directory it cannot leave: the run directory,
/// or the directory of a volume given with `--volume` (see [`crate::safe_fs`]).
#[derive(Clone, Debug)]
pub struct JobFile {
    pub root: PathBuf,
    /// Below `root`: normal components only.
    pub rel: PathBuf,
    pub content: String,
    pub mode: u32,
}

impl JobFile {
    /// Where it is on the node.
    pub fn path(&self) -> PathBuf {
        self.root.join(&self.rel)
    }

    /// Writes it (parents created, no symbolic link followed below `root`).
    pub fn write(&self) -> Result<(), crate::safe_fs::Error> {
        crate::safe_fs::write_below(&self.root, &self.rel, self.content.as_bytes(), self.mode)
    }
}

#[derive(Clone, Debug)]
pub struct ServiceSpec {
    pub persist: bool,
    pub readiness: Option<Readiness>,
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
    /// The command that stops the instance's container when it is ended early (the plan's
    /// `stop` line, placeholders filled in); empty when signalling its process group is enough.
    pub stop: Vec<String>,
    /// The host runtime: the private view of the node's filesystem it runs in.
    pub sandbox: Option<crate::sandbox::View>,
    /// The host and apptainer runtimes (whose containers inherit the runner's limits): the
    /// words that raise its locked-memory limit (`prlimit …`).
    pub memlock: Vec<String>,
    /// What it asks of the node (the task's resources, per instance).
    pub demand: crate::placement::Demand,
    /// How its runtime takes the GPUs it gets.
    pub gpu_passing: crate::placement::GpuPassing,
    /// How many nodes of `demand` it runs on this node: a multinode head with the local
    /// launcher runs every node here; else 1.
    pub nodes_here: u64,
    /// A multinode head in a container: its nodes' containers, which the runner removes once
    /// the head has ended however it ended (the bridge removes them too, unless it was killed).
    pub node_containers: Option<crate::bridge::ContainerNodes>,
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
    // Every name and path of the plan, checked once: a plan edited to write elsewhere, to put
    // a shell command in an environment name or an option in a host name is refused before
    // anything is created.
    crate::validate::validate_plan(plan)?;
    let runtime = match options.runtime {
        RuntimeKind::Auto => {
            return refuse("resolve `--runtime auto` with `detect_runtime` first".into())
        }
        r => r,
    };
    // The runtime's program: apptainer may be installed under its old name.
    let program = match runtime {
        RuntimeKind::Host | RuntimeKind::Auto => None,
        r => {
            let names: &[&str] = match r {
                RuntimeKind::Apptainer => &["apptainer", "singularity"],
                RuntimeKind::Podman => &["podman"],
                _ => &["docker"],
            };
            match names.iter().find_map(|n| crate::which(n)) {
                Some(p) => Some(p.display().to_string()),
                None => {
                    return refuse(format!(
                        "--runtime {}: `{}` is not installed on this node (not on PATH); \
                         use --runtime auto to pick what is installed",
                        r.as_str(),
                        names.join("` or `")
                    ))
                }
            }
        }
    };
    let mut volumes = Vec::new();
    let mut host_dirs: BTreeMap<&str, PathBuf> = BTreeMap::new();
    for name in options.volumes.keys() {
        if !plan.volumes.iter().any(|v| &v.key == name) {
            return refuse(format!(
                "--volume {name}=…: the plan has no volume `{name}` (its volumes: {})",
                list(plan.volumes.iter().map(|v| v.key.as_str()))
            ));
        }
    }
    for v in &plan.volumes {
        if let Some(dir) = options.volumes.get(&v.key) {
            if !dir.is_dir() {
                return refuse(format!(
                    "--volume {}={}: not a directory on this node",
                    v.key,
                    dir.display()
                ));
            }
            if let Err(problems) = crate::transfer::check(v) {
                return refuse(problems);
            }
            host_dirs.insert(&v.key, dir.clone());
            continue;
        }
        if v.kind != VolumeKind::Ephemeral {
            let what = match v.kind {
                VolumeKind::Persistent => "persistent".to_owned(),
                _ => format!(
                    "provisioned by {}",
                    v.provisioner.as_deref().unwrap_or("another provisioner")
                ),
            };
            return refuse(format!(
                "volume `{}` is {what}: give the directory that holds it on this node with \
                 --volume {}=PATH",
                v.key, v.key
            ));
        }
        if let Err(problems) = crate::transfer::check(v) {
            return refuse(problems);
        }
        let dir = fill(&v.host_path, run_dir);
        host_dirs.insert(&v.key, dir.clone());
        volumes.push(dir);
    }
    let has_transfers = plan
        .volumes
        .iter()
        .any(|v| !v.ingress.is_empty() || !v.egress.is_empty());
    if has_transfers {
        if let Err(e) = crate::transfer::check_ca(options.ca_file.as_deref()) {
            return refuse(e);
        }
    }
    let mut ingress = Vec::new();
    let mut egress = Vec::new();
    for v in &plan.volumes {
        let Some(dir) = host_dirs.get(v.key.as_str()) else {
            continue;
        };
        for t in &v.ingress {
            ingress.push((v.key.clone(), dir.clone(), t.clone()));
        }
        for t in &v.egress {
            egress.push((v.key.clone(), dir.clone(), t.clone()));
        }
    }
    let env_ctx = EnvCtx {
        run_id,
        secrets: &options.secrets,
        grace: options.grace,
        multinode: &options.multinode,
        events: options.events.as_deref(),
    };
    let mut notes = Vec::new();
    let mut jobs_by_name: BTreeMap<&str, &Task> = BTreeMap::new();
    for j in plan.jobs.iter().chain(&plan.services) {
        jobs_by_name.insert(j.name.as_str(), j);
    }
    let mut jobs = Vec::new();
    for name in &plan.graph.order {
        let Some(t) = jobs_by_name.get(name.as_str()) else {
            return refuse(format!(
                "the graph names `{name}`, which is neither a job nor a service of the plan"
            ));
        };
        let mut j = job(plan, t, run_dir, runtime, &host_dirs, &env_ctx, &mut notes)?;
        if let Some(p) = &program {
            for i in &mut j.instances {
                // Under the bridge (a multinode head in a container), its command's first word.
                let k = crate::bridge::command_at(&i.argv);
                if let Some(w) = i.argv.get_mut(k) {
                    *w = p.clone();
                }
                if let Some(w) = i.stop.first_mut() {
                    *w = p.clone();
                }
            }
        }
        jobs.push(j);
    }
    if jobs.len() != plan.jobs.len() + plan.services.len() {
        return refuse("the graph's order does not list every job and service".into());
    }
    if let Some(node) = &options.node {
        crate::placement::check_fits(&jobs, node)?;
    }
    // Last, as it runs the runtime's client: the runtime can run containers.
    if let Some(p) = &program {
        if !jobs.is_empty() {
            crate::preflight::check(runtime, Path::new(p)).map_err(RunError::Plan)?;
        }
    }
    if runtime == RuntimeKind::Host && !plan.jobs.is_empty() {
        notes.push(format!(
            "the host runtime does not use the images ({}); the node's own programs run",
            list(
                plan.jobs
                    .iter()
                    .chain(&plan.services)
                    .map(|t| t.image.uri.as_str())
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
            )
        ));
    }
    let mut secret_values: Vec<String> = options.secrets.values().cloned().collect();
    secret_values.sort();
    secret_values.dedup();
    Ok(Prepared {
        run_dir: run_dir.to_owned(),
        run_id: run_id.to_owned(),
        volumes,
        runtime,
        secret_values,
        ready_timeout: options.ready_timeout,
        status_line: options.status_line,
        jobs,
        notes,
        grace: options.grace,
        keep: options.keep,
        events: options.events.clone(),
        ingress,
        egress,
        files: plan.files.clone(),
        ca_file: options.ca_file.clone(),
        node: options.node.clone(),
    })
}

fn list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<String> = names.map(|n| format!("`{n}`")).collect();
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

struct EnvCtx<'a> {
    run_id: &'a str,
    secrets: &'a BTreeMap<String, String>,
    /// `--grace`, for the `{grace}` placeholder.
    grace: Duration,
    multinode: &'a crate::MultinodeOptions,
    /// `--events`: `exec_all` appends the node events of multinode jobs.
    events: Option<&'a Path>,
}

/// The instance's environment with every value known: literals, secrets from `--secrets`,
/// and the run-time values this runner supplies.
fn env_values(
    t: &Task,
    i: &fuzzfile_plan::Instance,
    ctx: &EnvCtx,
) -> Result<Vec<(String, String)>, String> {
    let mut env = Vec::new();
    for e in &i.env {
        let value = match &e.value {
            EnvValue::Literal(v) => v.clone(),
            EnvValue::Secret(s) => {
                let key = format!("{}/{}", s.scope, s.name);
                match ctx.secrets.get(&key) {
                    Some(v) => v.clone(),
                    None if ctx.secrets.is_empty() => {
                        return Err(format!(
                            "{} comes from the secret {}: give its value in a secrets file \
                             (--secrets FILE, with `[{}]` and `{} = \"…\"`)",
                            e.name, s.reference, s.scope, s.name
                        ))
                    }
                    None => {
                        return Err(format!(
                            "{} comes from the secret {}, which the secrets file does not hold \
                             (add `{} = \"…\"` under `[{}]`)",
                            e.name, s.reference, s.name, s.scope
                        ))
                    }
                }
            }
            EnvValue::Runtime(r) => match r.as_str() {
                "workflow-id" => ctx.run_id.to_owned(),
                "account-id" => "local".to_owned(),
                r if r.starts_with("address-of:") => {
                    address_of(&r["address-of:".len()..], ctx.multinode)?
                }
                other => {
                    return Err(format!(
                        "{} needs the run-time value `{other}`, which `fuzz run` does not know",
                        e.name
                    ))
                }
            },
        };
        env.push((e.name.clone(), value));
    }
    let _ = t;
    Ok(env)
}

fn runtime_line(i: &fuzzfile_plan::Instance, runtime: RuntimeKind) -> &RuntimeLine {
    match runtime {
        RuntimeKind::Apptainer => &i.runtimes.apptainer,
        RuntimeKind::Podman => &i.runtimes.podman,
        RuntimeKind::Docker => &i.runtimes.docker,
        RuntimeKind::Host | RuntimeKind::Auto => &i.runtimes.host,
    }
}

fn job(
    plan: &Plan,
    t: &Task,
    run_dir: &Path,
    runtime: RuntimeKind,
    host_dirs: &BTreeMap<&str, PathBuf>,
    env_ctx: &EnvCtx,
    notes: &mut Vec<String>,
) -> Result<Job, RunError> {
    let what = match t.kind {
        TaskKind::Job => "job",
        TaskKind::Service => "service",
    };
    let refuse = |m: String| Err(RunError::Plan(format!("{what} `{}`: {m}", t.name)));
    if t.multinode.is_some() && !matches!(runtime, RuntimeKind::Host | RuntimeKind::Podman) {
        return refuse(format!(
            "multinode jobs run with `--runtime host` or `--runtime podman` only for now, not {}",
            runtime.as_str()
        ));
    }
    if let Some(mn) = &t.multinode {
        if mn.hosts.len() as u64 != mn.nodes {
            return refuse(format!(
                "it needs {} nodes and the plan names {} hosts; give them with --hosts, \
                 --hostfile or a Slurm allocation",
                mn.nodes,
                mn.hosts.len()
            ));
        }
    }
    let volume_dir = |m: &fuzzfile_plan::Mount| {
        host_dirs
            .get(m.volume.as_str())
            .cloned()
            .unwrap_or_else(|| fill(&m.host_path, run_dir))
    };
    // Files first: their content and where they are written on the node.
    let mut files = Vec::new();
    let mut script_host = None;
    let mut file_binds: Vec<(PathBuf, &str)> = Vec::new();
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
            file_binds.push((host.clone(), f.path.as_str()));
        }
        files.push((host, content, mode));
    }
    let mut cwd: Option<PathBuf> = None;
    let mut view: Option<crate::sandbox::View> = None;
    if runtime == RuntimeKind::Host {
        let (c, v) = crate::sandbox::host_view(t, &file_binds, &mut files, &volume_dir)
            .map_err(|m| RunError::Plan(format!("{what} `{}`: {m}", t.name)))?;
        cwd = c;
        if let Some(v) = &v {
            notes.push(format!(
                "{what} `{}`: the host runtime places {} in a private mount namespace",
                t.name,
                crate::sandbox::describe(v)
            ));
        }
        view = v;
    }
    let memlock = match (
        runtime,
        t.resources.memory_bytes.as_ref().and_then(|m| m.value),
    ) {
        (RuntimeKind::Host | RuntimeKind::Apptainer, Some(bytes)) => {
            let (m, note) = crate::limits::raised(
                bytes,
                crate::limits::current(),
                crate::limits::can_raise_hard(),
            );
            if let Some(n) = note {
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
            m.map(crate::limits::prlimit_words).unwrap_or_default()
        }
        _ => Vec::new(),
    };
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
    // Per instance (per node of a multinode job), as Fuzzball reserves it.
    let demand = crate::placement::Demand {
        cores: t
            .resources
            .cores
            .as_ref()
            .and_then(|c| c.value)
            .unwrap_or(0),
        memory_bytes: t
            .resources
            .memory_bytes
            .as_ref()
            .and_then(|m| m.value)
            .unwrap_or(0),
        gpus: t
            .resources
            .gpus_per_node
            .as_ref()
            .and_then(|g| g.value)
            .unwrap_or(0),
    };
    let mut node = match &t.multinode {
        Some(mn) => Some(
            node_setup(
                t,
                mn,
                run_dir,
                cwd.as_deref(),
                view.as_ref(),
                env_ctx,
                runtime,
            )
            .map_err(|m| RunError::Plan(format!("{what} `{}`: {m}", t.name)))?,
        ),
        None => None,
    };
    if let Some(n) = &node {
        files.extend(n.files.iter().cloned());
    }
    // The node configuration is written once the head's line is known (a container job's
    // nodes take their options from it).
    let node_config = |n: &NodeSetup| -> Result<(PathBuf, String, u32), RunError> {
        let json = serde_json::to_string_pretty(&n.config)
            .map_err(|e| RunError::Plan(format!("{what} `{}`: {e}", t.name)))?;
        Ok((n.config_path.clone(), json, 0o600))
    };
    for i in &t.instances {
        if node.is_some() && i.argv.is_none() {
            // A member node: it runs what the head starts there through the helpers.
            continue;
        }
        let Some(plan_argv) = &i.argv else {
            return refuse("an instance has no command".into());
        };
        let plan_argv: Vec<String> = match &node {
            Some(n) => plan_argv
                .iter()
                .map(|w| {
                    n.host_paths
                        .get(w.as_str())
                        .cloned()
                        .unwrap_or_else(|| w.clone())
                })
                .collect(),
            None => plan_argv.clone(),
        };
        // `$MULTINODE_*` words the plan left to fill at run time (`MULTINODE_NODE_IP`).
        let plan_argv = match &node {
            Some(n) => crate::expand::command_words(plan_argv, i, &n.head_env),
            None => plan_argv,
        };
        let plan_argv = &plan_argv;
        if plan_argv.is_empty() {
            return refuse("the command is empty".into());
        }
        // A multinode head's environment was resolved with its nodes'.
        let env = match &node {
            Some(n) => n.head_env.clone(),
            None => match env_values(t, i, env_ctx) {
                Ok(e) => e,
                Err(m) => return refuse(m),
            },
        };
        let mut stop = Vec::new();
        let (argv, env) = if runtime == RuntimeKind::Host {
            let argv: Vec<String> = plan_argv
                .iter()
                .enumerate()
                .map(|(k, w)| match &script_host {
                    // The script is the command, or what a launcher line in front of it runs.
                    Some(h) if (k == 0 || k as u64 == i.wrapper_words) && w == SCRIPT_PATH => {
                        h.display().to_string()
                    }
                    _ => w.clone(),
                })
                .collect();
            (argv, env)
        } else {
            let line = runtime_line(i, runtime);
            if !line.supported {
                return refuse(format!(
                    "{} cannot run it: {}",
                    runtime.as_str(),
                    line.notes.join("; ")
                ));
            }
            let node_memlock = crate::limits::current();
            let raise_hard = crate::limits::can_raise_hard();
            let argv: Vec<String> = line
                .argv
                .iter()
                .enumerate()
                .map(|(k, w)| {
                    // `--ulimit memlock=…`: raised to the node's limit where that is higher.
                    if (k as u64) < line.prefix_words && k > 0 && line.argv[k - 1] == "--ulimit" {
                        return crate::limits::oci_word(w, node_memlock, raise_hard);
                    }
                    // Host paths of volumes given with --volume replace the plan's directory.
                    let mut w = w.clone();
                    for m in &t.mounts {
                        if let Some(dir) = host_dirs.get(m.volume.as_str()) {
                            let planned = format!("{}:{}", m.host_path, m.path);
                            if w == planned {
                                w = format!("{}:{}", dir.display(), m.path);
                            }
                        }
                    }
                    w.replace(WORKDIR, &run_dir.display().to_string())
                        .replace(RUN_ID, env_ctx.run_id)
                })
                .collect();
            // `podman stop --time` takes whole seconds; a fraction of one rounds up.
            let grace = env_ctx.grace.as_secs() + u64::from(env_ctx.grace.subsec_nanos() > 0);
            stop = line
                .stop
                .iter()
                .map(|w| {
                    w.replace(RUN_ID, env_ctx.run_id)
                        .replace(GRACE, &grace.to_string())
                })
                .collect();
            // A multinode head in a container: its nodes' containers share its options, and
            // the bridge outside it serves its helpers.
            // Devices are passed where the node has them.
            let (argv, prefix, absent) =
                crate::bridge::present_devices(argv, line.prefix_words as usize);
            if !absent.is_empty() {
                let n = format!(
                    "{what} `{}`: this node has no {}: not passed to its container",
                    t.name,
                    absent.join(", ")
                );
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
            let argv = match node.as_mut() {
                Some(n) => bridge_setup(n, &argv, prefix, t, env_ctx.multinode)?,
                None => argv,
            };
            let env = match line.env_passing {
                EnvPassing::ApptainerPrefix => env
                    .into_iter()
                    .map(|(k, v)| (format!("APPTAINERENV_{k}"), v))
                    .collect(),
                EnvPassing::Names | EnvPassing::Inherit => env,
            };
            (argv, env)
        };
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
            sandbox: view.clone(),
            memlock: memlock.clone(),
            stop,
            demand,
            node_containers: node.as_ref().and_then(|n| n.config.container.clone()),
            nodes_here: match &t.multinode {
                Some(mn) if env_ctx.multinode.launcher == crate::multinode::Launcher::Local => {
                    mn.nodes.max(1)
                }
                _ => 1,
            },
            gpu_passing: match runtime {
                RuntimeKind::Apptainer => crate::placement::GpuPassing::Apptainer,
                RuntimeKind::Podman => crate::placement::GpuPassing::Podman,
                RuntimeKind::Docker => crate::placement::GpuPassing::Docker,
                RuntimeKind::Host | RuntimeKind::Auto => crate::placement::GpuPassing::Host,
            },
        });
    }
    if instances.is_empty() {
        return refuse("it has no instances".into());
    }
    if let Some(n) = &node {
        files.push(node_config(n)?);
    }
    let depends_on = plan
        .graph
        .edges
        .iter()
        .filter(|e| e.to == t.name)
        .map(|e| (e.from.clone(), e.status))
        .collect();
    let service = t.service.as_ref().map(|s| ServiceSpec {
        persist: s.persist,
        readiness: s.readiness_probe.clone(),
    });
    let mpi_report = match (&t.multinode, &node) {
        (Some(mn), Some(_)) if mn.wrapper.is_some() => {
            let head = t.instances.iter().find(|i| i.argv.is_some());
            head.map(|h| {
                let logs = run_dir.join("logs");
                (
                    mn.hosts.clone(),
                    mn.slots.value.unwrap_or(1),
                    vec![
                        logs.join(format!("{}.out", h.hostname)),
                        logs.join(format!("{}.err", h.hostname)),
                    ],
                )
            })
        }
        _ => None,
    };
    // Each file below the directory it must not leave: a `--volume` directory for a file in
    // that volume, else the run directory.
    let mut job_files = Vec::new();
    for (path, content, mode) in files {
        let (root, rel) = match path.strip_prefix(run_dir) {
            Ok(rel) => (run_dir.to_path_buf(), rel.to_path_buf()),
            Err(_) => match host_dirs
                .values()
                .filter_map(|d| path.strip_prefix(d).ok().map(|r| (d, r)))
                .next()
            {
                Some((d, rel)) => (d.clone(), rel.to_path_buf()),
                None => {
                    return refuse(format!(
                        "the file {} is neither in the run directory nor in a volume",
                        path.display()
                    ))
                }
            },
        };
        job_files.push(JobFile {
            root,
            rel,
            content,
            mode,
        });
    }
    let files = job_files;
    Ok(Job {
        mpi_report,
        gang_file: node.map(|n| n.gang_file),
        name: t.name.clone(),
        kind: t.kind,
        depends_on,
        service,
        timeout,
        concurrency,
        task_array,
        files,
        instances,
    })
}

/// The IPv4 address of `host` as this node resolves it. With the `local` launcher (and no
/// network namespaces) every node is this machine, so a name that does not resolve is
/// 127.0.0.1; elsewhere it is an error.
fn address_of(host: &str, mn: &crate::MultinodeOptions) -> Result<String, String> {
    use std::net::ToSocketAddrs;
    if mn.local_netns {
        // The host is a network namespace: its first global IPv4 address.
        let out = std::process::Command::new("ip")
            .args(["-n", host, "-4", "-o", "addr", "show", "scope", "global"])
            .output()
            .map_err(|e| {
                format!("cannot run `ip` to find the address of namespace `{host}`: {e}")
            })?;
        let text = String::from_utf8_lossy(&out.stdout);
        return text
            .split_whitespace()
            .skip_while(|w| *w != "inet")
            .nth(1)
            .and_then(|a| a.split('/').next())
            .map(str::to_owned)
            .ok_or_else(|| {
                format!(
                    "network namespace `{host}` has no IPv4 address ({})",
                    String::from_utf8_lossy(&out.stderr).trim()
                )
            });
    }
    let found = (host, 0u16).to_socket_addrs().ok().and_then(|mut a| {
        let all: Vec<_> = a.by_ref().collect();
        all.iter()
            .find(|x| x.is_ipv4())
            .or(all.first())
            .map(|x| x.ip().to_string())
    });
    // A Slurm node name need not be a DNS name: Slurm knows its address.
    let found = found.or_else(|| {
        if mn.launcher != crate::multinode::Launcher::Slurm {
            return None;
        }
        let out = std::process::Command::new("scontrol")
            .args(["show", "node", "-o", host])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let addr = text
            .split_whitespace()
            .find_map(|w| w.strip_prefix("NodeAddr="))?;
        (addr, 0u16)
            .to_socket_addrs()
            .ok()?
            .map(|a| a.ip().to_string())
            .next()
    });
    match found {
        Some(ip) => Ok(ip),
        None if mn.launcher == crate::multinode::Launcher::Local && !mn.local_netns => {
            Ok("127.0.0.1".into())
        }
        None => Err(format!(
            "cannot resolve the address of host `{host}` on this node (MULTINODE_NODE_IP needs it)"
        )),
    }
}

/// What a multinode job needs besides its head's command: the helper scripts and the node
/// configuration (files to write), the host paths of the helpers, the head's extra
/// environment, and the gang file.
struct NodeSetup {
    files: Vec<(PathBuf, String, u32)>,
    /// Container path of a helper → its host path.
    host_paths: BTreeMap<String, String>,
    /// The head's whole environment (rank 0's, helper paths mapped, and `PATH` and the node
    /// configuration for the helpers).
    head_env: Vec<(String, String)>,
    gang_file: PathBuf,
    /// Written beside the helpers once the head's line is known.
    config: crate::multinode::NodeConfig,
    config_path: PathBuf,
    /// The executable the helpers call back.
    exe: PathBuf,
}

/// A multinode head on a container runtime: its nodes' containers take the head's options,
/// and its line runs under the bridge ([`crate::bridge`]).
fn bridge_setup(
    n: &mut NodeSetup,
    argv: &[String],
    prefix: usize,
    t: &Task,
    opts: &crate::MultinodeOptions,
) -> Result<Vec<String>, RunError> {
    let (options, image) = crate::bridge::node_options(argv, prefix).ok_or_else(|| {
        RunError::Plan(format!(
            "job `{}`: its container line has no image to run its nodes in",
            t.name
        ))
    })?;
    let helpers = n
        .config_path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut options = options;
    // Every node's name resolves in every container (an MPI launcher looks its hosts up; a
    // node's own resolver may not know them).
    let mut add_hosts = Vec::new();
    for h in &n.config.hosts {
        let ip =
            address_of(h, opts).map_err(|m| RunError::Plan(format!("job `{}`: {m}", t.name)))?;
        add_hosts.extend(["--add-host".to_owned(), format!("{h}:{ip}")]);
    }
    options.extend(add_hosts.iter().cloned());
    // The nodes' environment files, at their paths.
    options.extend([
        "--volume".to_owned(),
        format!("{0}:{0}:ro", helpers.display()),
    ]);
    let label = argv
        .iter()
        .position(|w| w == "--name")
        .and_then(|k| argv.get(k + 1))
        .cloned()
        .unwrap_or_else(|| format!("fuzz-{}", t.name));
    let nodes = crate::bridge::ContainerNodes {
        runtime: argv.first().cloned().unwrap_or_else(|| "podman".into()),
        image,
        options,
        label: format!("{label}-nodes"),
        netns: n.config.local_netns,
    };
    let dir = helpers.join(format!("{}.bridge", t.name));
    let head = n.config.hosts.first().cloned().unwrap_or_default();
    let mut line = argv.to_vec();
    line.splice(2.min(line.len())..2.min(line.len()), add_hosts);
    let out = crate::bridge::head_argv(&n.exe, &dir, &n.config_path, &nodes, &head, line);
    n.config.container = Some(nodes);
    Ok(out)
}

/// `cwd` is where the head's process starts on this node (on the host runtime a volume's
/// directory when the job's `cwd` is in a volume): every node starts there too.
fn node_setup(
    t: &Task,
    mn: &fuzzfile_plan::Multinode,
    run_dir: &Path,
    cwd: Option<&Path>,
    view: Option<&crate::sandbox::View>,
    ctx: &EnvCtx,
    runtime: RuntimeKind,
) -> Result<NodeSetup, String> {
    use crate::multinode::{helper_scripts, NodeConfig};
    let opts = ctx.multinode;
    let exe = opts.helper_exe.as_ref().ok_or(
        "the runner was not told which executable its multinode helpers call (helper_exe)",
    )?;
    let helpers = run_dir.join("helpers");
    // In a container, the helpers are clients of the bridge, at their container paths.
    let container = runtime != RuntimeKind::Host;
    let scripts = if container {
        crate::bridge::client_scripts(&helpers)
    } else {
        helper_scripts(exe, &helpers)
    };
    let mut files: Vec<(PathBuf, String, u32)> =
        scripts.into_iter().map(|(p, c)| (p, c, 0o755)).collect();
    let mut host_paths = BTreeMap::new();
    for h in t.helpers.iter().filter(|_| !container) {
        host_paths.insert(
            h.path.clone(),
            fill(&h.host_path, run_dir).display().to_string(),
        );
    }
    let mut instances: Vec<&fuzzfile_plan::Instance> = t.instances.iter().collect();
    instances.sort_by_key(|i| i.rank.unwrap_or(0));
    let mut env = Vec::new();
    let mut env_files = Vec::new();
    let mut log_names = Vec::new();
    for (rank, i) in instances.iter().enumerate() {
        let mut values = env_values(t, i, ctx)?;
        for (_, v) in &mut values {
            if let Some(h) = host_paths.get(v.as_str()) {
                *v = h.clone();
            }
        }
        let file = helpers.join(format!("{}.env.{rank}", t.name));
        files.push((file.clone(), crate::multinode::env_file(&values)?, 0o600));
        env_files.push(file);
        env.push(values);
        log_names.push(i.hostname.clone());
    }
    // The head is rank 0: its environment, and what its helpers need on top.
    let mut head_env = env.first().cloned().unwrap_or_default();
    let logs = run_dir.join("logs");
    let gang_file = logs.join(format!("{}.gang.json", t.name));
    // The job's filesystem view, for the nodes on other machines (built there).
    let mut sandbox = Vec::new();
    if let Some(v) = view {
        let file = helpers.join(format!("{}.view.json", t.name));
        let json = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
        files.push((file.clone(), json, 0o644));
        sandbox = vec![
            exe.display().to_string(),
            crate::sandbox::EXEC_ARG.to_owned(),
            file.display().to_string(),
            "--".to_owned(),
        ];
    }
    let config = NodeConfig {
        job: t.name.clone(),
        sandbox,
        launcher: opts.launcher,
        ssh_config: opts.ssh_config.clone(),
        local_netns: opts.local_netns,
        hosts: mn.hosts.clone(),
        env,
        env_files,
        log_names,
        // In the view, every node starts in the job's own cwd; without one, in the directory
        // the head starts in.
        cwd: match view {
            Some(v) => v.cwd.clone(),
            None => cwd.map(|c| c.display().to_string()),
        },
        grace_ms: ctx.grace.as_millis() as u64,
        startup_timeout_ms: opts.startup_timeout.as_millis() as u64,
        forward_always: opts.forward_always,
        logs,
        gang_file: gang_file.clone(),
        events: ctx.events.map(Path::to_path_buf),
        secrets: ctx.secrets.values().cloned().collect(),
        container: None,
    };
    let config_path = helpers.join(format!("{}.multinode.json", t.name));
    let path = std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into());
    head_env.push(("PATH".to_owned(), format!("{}:{path}", helpers.display())));
    head_env.push((
        "FUZZ_MULTINODE_CONFIG".to_owned(),
        config_path.display().to_string(),
    ));
    Ok(NodeSetup {
        files,
        host_paths,
        head_env,
        gang_file,
        config,
        config_path,
        exe: exe.clone(),
    })
}
