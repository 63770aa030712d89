//! Lowering: a checked Fuzzfile to a [`Plan`], whole ([`lower`]) or one task at a time as it is
//! written ([`streamed`], what `fuzz plan` writes).
//!
//! Both go through the same functions: [`plannable_version`] and [`Lowering::plannable`] are
//! the only places a plan is refused, [`Lowering::task`] the only place a task is lowered, and
//! the parts around the tasks (workflow, volumes, files, graph) have one function each.

use crate::runtime::runtimes;
use crate::types::*;
use crate::{PlanOptions, Refusal, MAX_INSTANCES};
use fuzzfile_check::semantics::{self, Count, CountFrom};
use fuzzfile_check::{Analysis, Severity, TextRange};
use fuzzfile_model as m;
use serde::ser::{Error as _, SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) fn lower(a: &Analysis, options: &PlanOptions) -> Result<Plan, Refusal> {
    // The streamed plan's checks and order, then every task lowered at once.
    let checked = streamed(a, options)?;
    let lowered = |tasks: &[&m::Task]| -> Result<Vec<Task>, Refusal> {
        tasks
            .iter()
            .map(|&task| Lowering { a, options, task }.task())
            .collect()
    };
    let model = &a.model;
    Ok(Plan {
        plan_version: PLAN_VERSION,
        workflow: workflow(a, options, checked.version),
        cluster: cluster(options),
        placeholders: placeholders(),
        volumes: volumes(a, options),
        files: top_files(model),
        graph: graph(model),
        jobs: lowered(&checked.jobs)?,
        services: lowered(&checked.services)?,
    })
}

/// A plan checked for every refusal of [`lower`], written one job (or service) at a time:
/// what it holds is the tasks' order, not their plans.
///
/// Every refusal is decided in [`streamed`], before a byte is written: `fuzz plan` refuses
/// with nothing on its standard output and no `-o` file, as when it lowered the whole plan
/// first. The checks are the ones [`Lowering::task`] starts with ([`Lowering::plannable`]),
/// a pass over the model that builds no instance, environment or command line; so no
/// temporary file is needed (standard output, often a pipe, could not be taken back
/// anyway), and the check and the lowering cannot disagree.
pub struct StreamedPlan<'a> {
    a: &'a Analysis,
    options: &'a PlanOptions,
    version: m::Version,
    /// Sorted by name, as [`Plan::jobs`] (the same stable sort of the same order).
    jobs: Vec<&'a m::Task>,
    /// Sorted by name, as [`Plan::services`].
    services: Vec<&'a m::Task>,
}

/// [`lower`]'s checks, in its order (the same refusal for the same analysis), without
/// lowering a task.
pub(crate) fn streamed<'a>(
    a: &'a Analysis,
    options: &'a PlanOptions,
) -> Result<StreamedPlan<'a>, Refusal> {
    let version = plannable_version(a)?;
    let mut jobs = Vec::new();
    let mut services = Vec::new();
    for t in a.model.tasks() {
        Lowering {
            a,
            options,
            task: t,
        }
        .plannable()?;
        match t.kind {
            m::TaskKind::Job => jobs.push(t),
            m::TaskKind::Service => services.push(t),
        }
    }
    jobs.sort_by(|x, y| x.name.value.cmp(&y.name.value));
    services.sort_by(|x, y| x.name.value.cmp(&y.name.value));
    Ok(StreamedPlan {
        a,
        options,
        version,
        jobs,
        services,
    })
}

impl StreamedPlan<'_> {
    /// How many jobs and services the plan lists.
    pub fn task_count(&self) -> usize {
        self.jobs.len() + self.services.len()
    }
}

/// The fields of [`Plan`] in its order (serde's derive writes them in declaration order), each
/// part built when it is written and dropped after: the graph and the volumes are gone before
/// the first job is lowered, and each job's plan before the next. A field added to [`Plan`]
/// fails the pattern in `tests::the_streamed_fields_are_the_plan_s`.
impl Serialize for StreamedPlan<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (a, options) = (self.a, self.options);
        let mut plan = serializer.serialize_struct("Plan", 9)?;
        plan.serialize_field("plan_version", &PLAN_VERSION)?;
        plan.serialize_field("workflow", &workflow(a, options, self.version))?;
        plan.serialize_field("cluster", &cluster(options))?;
        plan.serialize_field("placeholders", &placeholders())?;
        plan.serialize_field("volumes", &volumes(a, options))?;
        plan.serialize_field("files", &top_files(&a.model))?;
        plan.serialize_field("graph", &graph(&a.model))?;
        plan.serialize_field(
            "jobs",
            &TasksLoweredOneAtATime {
                a,
                options,
                tasks: &self.jobs,
            },
        )?;
        plan.serialize_field(
            "services",
            &TasksLoweredOneAtATime {
                a,
                options,
                tasks: &self.services,
            },
        )?;
        plan.end()
    }
}

/// A list of tasks serialised as `Vec<Task>` is, each lowered just before it is written.
struct TasksLoweredOneAtATime<'a, 'b> {
    a: &'a Analysis,
    options: &'a PlanOptions,
    tasks: &'b [&'a m::Task],
}

impl Serialize for TasksLoweredOneAtATime<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut list = serializer.serialize_seq(Some(self.tasks.len()))?;
        for &task in self.tasks {
            // [`streamed`] ran the same checks on the same task: a refusal here cannot
            // happen, and would be a write error, never a panic.
            let lowered = Lowering {
                a: self.a,
                options: self.options,
                task,
            }
            .task()
            .map_err(S::Error::custom)?;
            list.serialize_element(&lowered)?;
        }
        list.end()
    }
}

/// The refusals of the analysis as a whole, the first check of [`lower`] and [`streamed`]: an
/// error, or no `version`.
fn plannable_version(a: &Analysis) -> Result<m::Version, Refusal> {
    let errors: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .cloned()
        .collect();
    if !errors.is_empty() {
        return Err(Refusal::Errors(errors));
    }
    // A plan names the Fuzzfile version it came from; a text without one (an empty file, or
    // one whose `missing-field` finding was turned off) is not a Fuzzfile to plan.
    a.model.version().ok_or_else(|| {
        Refusal::Errors(vec![fuzzfile_check::Diagnostic::new(
            fuzzfile_check::Rule::MissingField,
            TextRange::empty(0),
            "the Fuzzfile has no `version`: not a Fuzzfile to plan",
        )
        .with_severity(Severity::Error)
        .with_help("start the file with `version: v4`")])
    })
}

fn workflow(a: &Analysis, options: &PlanOptions, version: m::Version) -> Workflow {
    Workflow {
        source: options.source.clone(),
        version: version.as_str().to_owned(),
        annotations: key_values(&a.model.annotations),
    }
}

fn cluster(options: &PlanOptions) -> Option<Cluster> {
    options.profile.as_ref().map(|p| Cluster {
        name: p.name.clone(),
        gpus_per_node: p.gpus_per_node,
        gpu_products: p.products().into_iter().map(str::to_owned).collect(),
        fabric: p.fabric.map(|f| f.as_str().to_owned()),
        mnnvl: p.mnnvl,
        imex: p.imex,
    })
}

fn placeholders() -> Vec<Placeholder> {
    vec![
        Placeholder {
            token: WORKDIR.into(),
            meaning: "the runner's work directory on the node (an absolute path); host paths of volumes, of files to write and of the runner's helpers are under it. It appears only in paths the plan made up, never in anything taken from the Fuzzfile".into(),
        },
        Placeholder {
            token: RUN_ID.into(),
            meaning: "the run's id (FB_WORKFLOW_ID), chosen when the run starts; it appears in container names, so that each run's containers can be found and stopped".into(),
        },
        Placeholder {
            token: GRACE.into(),
            meaning: "the seconds between the request to stop and the kill (`fuzz run --grace`), in the commands that stop containers".into(),
        },
    ]
}

/// The top-level `files` entries, sorted by name.
fn top_files(model: &m::Fuzzfile) -> Vec<TopFile> {
    let mut files: Vec<TopFile> = model
        .files
        .iter()
        .map(|f| TopFile {
            name: f.name.value.clone(),
            content: f.content.value.clone(),
            bytes: f.content.value.len() as u64,
        })
        .collect();
    files.sort_by(|x, y| x.name.cmp(&y.name));
    files
}

/// The volumes, sorted by key, with the tasks that mount each.
fn volumes(a: &Analysis, options: &PlanOptions) -> Vec<Volume> {
    // The tasks that mount each volume, gathered in one pass over every task's mounts (not one
    // pass per volume: a Fuzzfile of many volumes and jobs would cost volumes × jobs). The
    // mounts are the ones the task's plan lists ([`Lowering::mounts`]).
    let mut mounted_by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for task in a.model.tasks() {
        let lowering = Lowering { a, options, task };
        for mt in lowering.mounts() {
            mounted_by
                .entry(mt.volume)
                .or_default()
                .push(task.name.value.clone());
        }
    }
    let mut volumes: Vec<Volume> = a
        .model
        .volumes
        .iter()
        .map(|v| {
            volume(
                a,
                v,
                mounted_by
                    .get(v.key.value.as_str())
                    .cloned()
                    .unwrap_or_default(),
            )
        })
        .collect();
    volumes.sort_by(|x, y| x.key.cmp(&y.key));
    volumes
}

fn key_values(kvs: &[m::KeyValue]) -> BTreeMap<String, String> {
    kvs.iter()
        .map(|kv| (kv.key.value.clone(), kv.value.value.clone()))
        .collect()
}

fn secret(s: &m::values::SecretRef) -> SecretRef {
    SecretRef {
        reference: format!("secret://{}/{}", s.scope, s.name),
        scope: s.scope.clone(),
        name: s.name.clone(),
    }
}

fn volume_host_path(key: &str) -> String {
    format!("{WORKDIR}/volumes/{key}")
}

/// `mounted_by`: the names of the tasks that mount it, in any order, repeated or not.
fn volume(a: &Analysis, v: &m::Volume, mut mounted_by: Vec<String>) -> Volume {
    let class = v
        .reference
        .as_ref()
        .map(|r| r.value.class.clone())
        .or_else(|| v.use_.as_ref().map(|u| u.value.clone()));
    let (kind, provisioner) = match class.as_deref() {
        Some(c) if c.eq_ignore_ascii_case("ephemeral") => (VolumeKind::Ephemeral, None),
        Some(c) if c.eq_ignore_ascii_case("persistent") => (VolumeKind::Persistent, None),
        other => (VolumeKind::Provisioned, other.map(str::to_owned)),
    };
    let transfer = |t: &m::Transfer| Transfer {
        source: transfer_end(&a.model, t.source.as_ref(), true),
        destination: transfer_end(&a.model, t.destination.as_ref(), false),
        timeout: t
            .policy
            .as_ref()
            .and_then(|p| p.timeout.as_ref())
            .map(|d| timeout(a, d, "the transfer's policy.timeout.execute")),
    };
    mounted_by.sort();
    mounted_by.dedup();
    Volume {
        key: v.key.value.clone(),
        kind,
        reference: v.reference.as_ref().map(|r| {
            let mut s = format!("volume://{}/{}", r.value.scope, r.value.class);
            if let Some(n) = &r.value.name {
                s.push('/');
                s.push_str(n);
            }
            s
        }),
        use_: v.use_.as_ref().map(|u| u.value.clone()),
        provisioner,
        name: v.name.as_ref().map(|n| n.value.clone()),
        size_bytes: v.size.as_ref().map(|s| s.value.bytes),
        host_path: volume_host_path(&v.key.value),
        ingress: v.ingress.iter().map(transfer).collect(),
        egress: v.egress.iter().map(transfer).collect(),
        mounted_by,
    }
}

/// A transfer end. `file://` means a path in the volume, except an ingress source that names
/// a top-level `files` entry.
fn transfer_end(model: &m::Fuzzfile, end: Option<&m::TransferUri>, source: bool) -> TransferEnd {
    let uri = end.and_then(|e| e.uri.as_ref()).map(|u| u.value.clone());
    let mut out = TransferEnd {
        uri: uri.clone(),
        volume_path: None,
        file: None,
        secret: end
            .and_then(|e| e.secret.as_ref())
            .map(|s| secret(&s.value)),
    };
    if let Some(rest) = uri.as_deref().and_then(|u| u.strip_prefix("file://")) {
        if source && model.file(rest).is_some() {
            out.file = Some(rest.to_owned());
        } else {
            out.volume_path = Some(rest.trim_start_matches('/').to_owned());
        }
    }
    out
}

fn timeout(a: &Analysis, d: &m::Spanned<m::values::Duration>, source: &str) -> Timeout {
    let nanos = d.value.nanos;
    let lc = a.line_col(d.range.start);
    Timeout {
        seconds: u64::try_from(nanos.div_ceil(1_000_000_000)).unwrap_or(u64::MAX),
        as_written: d.range.slice(&a.text).trim_matches(['"', '\'']).to_owned(),
        source: source.to_owned(),
        at: Some(Position {
            line: lc.line,
            column: lc.column,
        }),
    }
}

fn graph(model: &m::Fuzzfile) -> Graph {
    let mut nodes: Vec<GraphNode> = model
        .tasks()
        .map(|t| GraphNode {
            name: t.name.value.clone(),
            kind: kind(t.kind),
        })
        .collect();
    nodes.sort_by(|x, y| x.name.cmp(&y.name));
    let mut edges = Vec::new();
    for t in model.tasks() {
        if !t.depends_on.is_empty() {
            for d in &t.depends_on {
                let Some(name) = &d.name else { continue };
                let status = match d.status.as_ref().map(|s| s.value) {
                    Some(m::DependencyStatus::Running) => DependencyStatus::Running,
                    _ => DependencyStatus::Finished,
                };
                edges.push(Edge {
                    from: name.value.clone(),
                    to: t.name.value.clone(),
                    status,
                    declared_by: DeclaredBy::DependsOn,
                });
            }
        } else {
            for r in &t.requires {
                edges.push(Edge {
                    from: r.value.clone(),
                    to: t.name.value.clone(),
                    status: DependencyStatus::Finished,
                    declared_by: DeclaredBy::Requires,
                });
            }
        }
    }
    edges.sort_by(|x, y| (&x.to, &x.from).cmp(&(&y.to, &y.from)));
    edges.dedup_by(|x, y| x.to == y.to && x.from == y.from);

    // Kahn's algorithm, ties by name. The analysis refused cycles already.
    // Each edge is visited twice in all (once here, once when its `from` is ordered): linear in
    // the edges, whatever the graph's shape.
    let names: BTreeSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    let mut indegree: BTreeMap<&str, usize> = names.iter().map(|n| (*n, 0)).collect();
    let mut successors: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in &edges {
        if names.contains(e.from.as_str()) {
            if let Some(d) = indegree.get_mut(e.to.as_str()) {
                *d += 1;
                successors
                    .entry(e.from.as_str())
                    .or_default()
                    .push(e.to.as_str());
            }
        }
    }
    let mut ready: BTreeSet<&str> = indegree
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(n, _)| *n)
        .collect();
    let mut order = Vec::new();
    while let Some(n) = ready.pop_first() {
        order.push(n.to_owned());
        for &to in successors.get(n).map(Vec::as_slice).unwrap_or_default() {
            if let Some(d) = indegree.get_mut(to) {
                *d -= 1;
                if *d == 0 {
                    ready.insert(to);
                }
            }
        }
    }
    Graph {
        nodes,
        edges,
        order,
    }
}

fn kind(k: m::TaskKind) -> TaskKind {
    match k {
        m::TaskKind::Job => TaskKind::Job,
        m::TaskKind::Service => TaskKind::Service,
    }
}

/// Set by Fuzzball to the workflow's id, known only when the workflow runs.
const FB_WORKFLOW_ID: &str = "FB_WORKFLOW_ID";

struct Lowering<'a> {
    a: &'a Analysis,
    options: &'a PlanOptions,
    task: &'a m::Task,
}

/// What decides whether a task can be planned, found without lowering it
/// ([`Lowering::plannable`]); [`Lowering::task`] lowers from it.
struct Plannable<'a> {
    image: Image,
    body: Body<'a>,
    task_array: Option<TaskArray>,
    /// `multinode`: how many nodes, on which hosts.
    nodes: Option<PlannedNodes<'a>>,
}

/// What the task runs: `command` (which wins when both are given) or `script`.
enum Body<'a> {
    Command(&'a m::Spanned<Vec<m::Spanned<String>>>),
    Script(&'a m::Spanned<String>),
}

/// Whether `multinode.nodes` was written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum NodesWritten {
    Given,
    /// Not written: planned as 1 node, and a note says so.
    Assumed,
}

struct PlannedNodes<'a> {
    multinode: &'a m::Multinode,
    count: u64,
    written: NodesWritten,
    /// `--hosts`, cut to `count` names; `None`: the job hostnames `<job>-<rank>`.
    hosts: Option<&'a [String]>,
}

/// What an instance adds to the task's common parts.
struct InstanceSpec {
    hostname: String,
    role: Role,
    task_id: Option<i64>,
    rank: Option<u64>,
    host: Option<String>,
    provided: Vec<(String, EnvValue)>,
    argv: Option<Vec<String>>,
    wrapper_words: u64,
    unexpanded: Vec<String>,
}

impl<'a> Lowering<'a> {
    fn pos(&self, r: TextRange) -> Option<Position> {
        let lc = self.a.line_col(r.start);
        Some(Position {
            line: lc.line,
            column: lc.column,
        })
    }

    fn name(&self) -> &str {
        &self.task.name.value
    }

    fn unsupported(&self, message: impl Into<String>) -> Refusal {
        Refusal::Unsupported {
            task: self.name().to_owned(),
            message: message.into(),
        }
    }

    fn is_job(&self) -> bool {
        self.task.kind == m::TaskKind::Job
    }

    fn defaults(&self) -> Option<&m::DefaultsJob> {
        if self.is_job() {
            self.a.model.defaults.as_ref()
        } else {
            None
        }
    }

    /// A resource field: the task's own, else `defaults.job`'s.
    fn resource<T: Clone>(
        &self,
        f: impl Fn(&m::Resource) -> Option<&m::Spanned<T>>,
    ) -> Option<(m::Spanned<T>, Source)> {
        if let Some(v) = self.task.resource.as_ref().and_then(&f) {
            return Some((v.clone(), Source::Job));
        }
        self.defaults()
            .and_then(|d| d.resource.as_ref())
            .and_then(&f)
            .map(|v| (v.clone(), Source::Defaults))
    }

    fn sourced(&self, v: u64, range: TextRange, source: Source, key: &str) -> Sourced {
        Sourced {
            value: Some(v),
            source: match source {
                Source::Defaults => format!("defaults.job.resource.{key}"),
                _ => format!("resource.{key}"),
            },
            at: self.pos(range),
        }
    }

    /// Every refusal of a task, in one place and in the order they are met: no image, no
    /// `command` or `script`, a task array it cannot list, `task-array` with `multinode`, a
    /// node count it cannot list, fewer `--hosts` than nodes. Builds no instance, environment
    /// or command line: [`streamed`] runs it over every task before writing a byte.
    fn plannable(&self) -> Result<Plannable<'a>, Refusal> {
        let t = self.task;
        let image = t
            .image
            .as_ref()
            .and_then(|i| i.uri.as_ref().map(|u| (i, u)))
            .map(|(i, u)| Image {
                uri: format!(
                    "{}://{}",
                    match u.value.scheme {
                        m::values::ImageScheme::Docker => "docker",
                        m::values::ImageScheme::Oras => "oras",
                    },
                    u.value.reference
                ),
                scheme: match u.value.scheme {
                    m::values::ImageScheme::Docker => ImageScheme::Docker,
                    m::values::ImageScheme::Oras => ImageScheme::Oras,
                },
                reference: u.value.reference.clone(),
                secret: i.secret.as_ref().map(|s| secret(&s.value)),
                decryption_secret: i.decryption_secret.as_ref().map(|s| secret(&s.value)),
            })
            .ok_or_else(|| self.unsupported("it has no image (`image.uri`) to run"))?;
        let body = match (&t.command, &t.script) {
            (Some(cmd), _) => Body::Command(cmd),
            (None, Some(script)) => Body::Script(script),
            (None, None) => {
                return Err(self.unsupported("it has neither `command` nor `script`"));
            }
        };
        let task_array = match &t.task_array {
            Some(ta) => {
                let (Some(start), Some(end)) = (&ta.start, &ta.end) else {
                    return Err(self.unsupported("its task array lacks `start` or `end`"));
                };
                if end.value < start.value {
                    return Err(self.unsupported(format!(
                        "its task array ends ({}) before it starts ({})",
                        end.value, start.value
                    )));
                }
                let count = end
                    .value
                    .checked_sub(start.value)
                    .and_then(|d| u64::try_from(d).ok())
                    .map_or(u64::MAX, |d| d.saturating_add(1));
                if count > MAX_INSTANCES {
                    return Err(self.unsupported(format!(
                        "its task array has {count} tasks; a plan lists at most {MAX_INSTANCES}"
                    )));
                }
                Some(TaskArray {
                    start: start.value,
                    end: end.value,
                    count,
                    concurrency: ta.concurrency.as_ref().map(|c| c.value),
                })
            }
            None => None,
        };
        if task_array.is_some() && t.multinode.is_some() {
            return Err(self.unsupported(
                "it combines `task-array` with `multinode`, which Fuzzball does not define",
            ));
        }
        let nodes = match &t.multinode {
            Some(mn) => Some(self.planned_nodes(mn)?),
            None => None,
        };
        Ok(Plannable {
            image,
            body,
            task_array,
            nodes,
        })
    }

    fn planned_nodes(&self, mn: &'a m::Multinode) -> Result<PlannedNodes<'a>, Refusal> {
        let (count, written) = match &mn.nodes {
            Some(n) if n.value >= 1 => (n.value, NodesWritten::Given),
            Some(_) => return Err(self.unsupported("`multinode.nodes` must be at least 1")),
            None => (1, NodesWritten::Assumed),
        };
        if count > MAX_INSTANCES {
            return Err(self.unsupported(format!(
                "it runs on {count} nodes; a plan lists at most {MAX_INSTANCES}"
            )));
        }
        let hosts = match &self.options.hosts {
            Some(h) => {
                let cut = usize::try_from(count).ok().and_then(|n| h.get(..n));
                let Some(cut) = cut else {
                    return Err(Refusal::Hosts {
                        task: self.name().to_owned(),
                        nodes: count,
                        hosts: h.len(),
                    });
                };
                Some(cut)
            }
            None => None,
        };
        Ok(PlannedNodes {
            multinode: mn,
            count,
            written,
            hosts,
        })
    }

    /// The task's plan; refused only by [`Lowering::plannable`].
    fn task(&self) -> Result<Task, Refusal> {
        let Plannable {
            image,
            body,
            task_array,
            nodes,
        } = self.plannable()?;
        let t = self.task;
        let mut notes = Vec::new();

        // The command line, and the files to write.
        let args: Vec<String> = t.args.iter().map(|a| a.value.clone()).collect();
        let mut files: Vec<WriteFile> = t
            .files
            .iter()
            .map(|f| WriteFile {
                path: f.path.value.clone(),
                host_path: self.file_host_path(&f.path.value),
                content: match &f.source {
                    m::FileSource::Ref(n) => FileContent::File(n.value.clone()),
                    m::FileSource::Inline(s) => FileContent::Inline(s.value.clone()),
                },
                mode: "0644".into(),
            })
            .collect();
        let command = match body {
            Body::Command(cmd) => {
                if t.script.is_some() {
                    notes.push("both `command` and `script` are given: the command runs, the script is not written".into());
                }
                Command {
                    form: CommandForm::Command,
                    argv: cmd
                        .value
                        .iter()
                        .map(|w| w.value.clone())
                        .chain(args.iter().cloned())
                        .collect(),
                    args: args.clone(),
                }
            }
            Body::Script(script) => {
                files.push(WriteFile {
                    path: SCRIPT_PATH.into(),
                    host_path: self.file_host_path(SCRIPT_PATH),
                    content: FileContent::Inline(script.value.clone()),
                    mode: "0755".into(),
                });
                Command {
                    form: CommandForm::Script,
                    argv: std::iter::once(SCRIPT_PATH.to_owned())
                        .chain(args.iter().cloned())
                        .collect(),
                    args: args.clone(),
                }
            }
        };
        files.sort_by(|x, y| x.path.cmp(&y.path));
        files.dedup_by(|x, y| x.path == y.path);

        let mounts = self.mounts();

        let resources = self.resources();
        let timeout = match t.policy.as_ref().and_then(|p| p.timeout.as_ref()) {
            Some(d) => Some(timeout(self.a, d, "policy.timeout.execute")),
            None => self
                .defaults()
                .and_then(|d| d.policy.as_ref())
                .and_then(|p| p.timeout.as_ref())
                .map(|d| timeout(self.a, d, "defaults.job.policy.timeout.execute")),
        };
        if timeout.is_none() && self.is_job() {
            notes.push("no `policy.timeout.execute`: Fuzzball applies its default timeout, whose value is not documented; the runner applies none".into());
        }
        if t.policy.as_ref().is_some_and(|p| p.retry.is_some()) {
            notes.push("`policy.retry` is ignored, as Fuzzball ignores it".into());
        }
        if !t.depends_on.is_empty() && !t.requires.is_empty() {
            notes.push("`requires` is ignored because `depends-on` is given".into());
        }

        let env = &self.a.facts(t).env;
        let user_env: Vec<EnvVar> = env
            .iter()
            .map(|e| EnvVar {
                name: e.name.to_string(),
                value: match &e.secret {
                    Some(s) => EnvValue::Secret(secret(s)),
                    None => EnvValue::Literal(e.value.to_string()),
                },
                source: if e.from_defaults {
                    Source::Defaults
                } else {
                    Source::Job
                },
            })
            .collect();

        // `/dev/infiniband` and the IMEX channels: decided once in `fuzzfile_check::devices`,
        // which the cluster rules read too.
        let planned = fuzzfile_check::devices::planned_devices(t, self.a.facts(t));
        notes.extend(planned.notes);
        let ethernet = self.options.profile.as_ref().and_then(|p| p.fabric)
            == Some(fuzzfile_check::profile::Fabric::Ethernet);
        if ethernet
            && planned
                .devices
                .iter()
                .any(|d| d.path == fuzzfile_check::devices::INFINIBAND_DIR)
        {
            notes.push(format!(
                "the cluster profile says Ethernet, so the nodes may have no {}: podman and docker refuse a --device the node lacks (infiniband-on-ethernet)",
                fuzzfile_check::devices::INFINIBAND_DIR
            ));
        }
        let devices: Vec<Device> = planned
            .devices
            .into_iter()
            .map(|d| Device {
                path: d.path,
                reason: d.reason,
            })
            .collect();

        let network = t.network.as_ref().map(|n| {
            let mut ports: Vec<Port> = n
                .ports
                .iter()
                .map(|p| Port {
                    name: p.name.as_ref().map(|s| s.value.clone()),
                    port: p.port.as_ref().map(|s| s.value),
                    protocol: p.protocol.as_ref().map(|s| s.value.clone()),
                })
                .collect();
            ports.sort_by(|x, y| (&x.name, x.port).cmp(&(&y.name, y.port)));
            Network {
                isolated: n.isolated.as_ref().map(|s| s.value),
                host: n.host.as_ref().map(|s| s.value),
                expose_tcp: n.expose_tcp.iter().map(|s| s.value).collect(),
                expose_udp: n.expose_udp.iter().map(|s| s.value).collect(),
                ports,
            }
        });

        let service = (t.kind == m::TaskKind::Service).then(|| {
            let mut endpoints: Vec<Endpoint> = t
                .network
                .iter()
                .flat_map(|n| n.endpoints.iter())
                .map(|e| Endpoint {
                    name: e.name.as_ref().map(|s| s.value.clone()),
                    port_name: e.port_name.as_ref().map(|s| s.value.clone()),
                    protocol: e.protocol.as_ref().map(|s| s.value.clone()),
                    kind: e.kind.as_ref().map(|s| s.value.clone()),
                    scope: e.scope.as_ref().map(|s| s.value.clone()),
                })
                .collect();
            endpoints.sort_by(|x, y| x.name.cmp(&y.name));
            Service {
                persist: t.persist.as_ref().is_some_and(|p| p.value),
                readiness_probe: t.readiness_probe.as_deref().and_then(readiness),
                endpoints,
            }
        });
        if service.as_ref().is_some_and(|s| !s.endpoints.is_empty()) {
            notes.push("Fuzzball's FB_ENDPOINT_PATH_*/FB_ENDPOINT_URL_* variables are not planned (their naming rule is not documented)".into());
        }

        let multinode = nodes.map(|nodes| self.multinode(&nodes, &resources, &command, &mut notes));
        let mut helpers = Vec::new();
        if let Some(mn) = &multinode {
            helpers.push(Helper {
                path: SSH_WRAPPER_PATH.into(),
                host_path: format!("{WORKDIR}/helpers/fuzz-multinode-ssh"),
                purpose: "MULTINODE_SSH_WRAPPER: `fuzz-multinode-ssh HOST COMMAND...` runs COMMAND in this job's container on HOST".into(),
            });
            if mn.implementation == "generic" {
                helpers.push(Helper {
                    path: EXEC_ALL_PATH.into(),
                    host_path: format!("{WORKDIR}/helpers/exec_all"),
                    purpose: "`exec_all COMMAND...` runs COMMAND on every node through the SSH wrapper, head first, with RANK set to the node's rank; waits for all and fails if any fails".into(),
                });
            }
            helpers.sort_by(|x, y| x.path.cmp(&y.path));
        }

        // The instances.
        let base_env = |hostname: &str| -> Vec<(String, EnvValue)> {
            vec![
                (
                    FB_WORKFLOW_ID.into(),
                    EnvValue::Runtime("workflow-id".into()),
                ),
                (
                    "FB_ACCOUNT_ID".into(),
                    EnvValue::Runtime("account-id".into()),
                ),
                ("FB_JOB_NAME".into(), EnvValue::Literal(self.name().into())),
                ("HOSTNAME".into(), EnvValue::Literal(hostname.into())),
            ]
        };
        let mut specs = Vec::new();
        if let Some(ta) = &task_array {
            for id in ta.start..=ta.end {
                let hostname = format!("{}-{id}", self.name());
                let mut provided = base_env(&hostname);
                provided.push(("FB_TASK_ID".into(), EnvValue::Literal(id.to_string())));
                specs.push(InstanceSpec {
                    hostname,
                    role: Role::Task,
                    task_id: Some(id),
                    rank: None,
                    host: None,
                    provided,
                    argv: Some(command.argv.clone()),
                    wrapper_words: 0,
                    unexpanded: Vec::new(),
                });
            }
        } else if let Some(mn) = &multinode {
            let slots = mn.slots.value.unwrap_or(1);
            let generic = mn.implementation == "generic";
            let hostlist: Vec<String> = mn.hosts.iter().map(|h| format!("{h}:{slots}")).collect();
            for rank in 0..mn.nodes {
                let hostname = format!("{}-{rank}", self.name());
                let host = mn.hosts[rank as usize].clone();
                let mut provided = base_env(&hostname);
                let mut mvars: Vec<(String, Option<String>, EnvValue)> = Vec::new();
                if generic {
                    let lit = |s: String| (Some(s.clone()), EnvValue::Literal(s));
                    for (name, (known, value)) in [
                        ("MULTINODE_HOSTLIST", lit(hostlist.join(","))),
                        ("MULTINODE_HOSTLIST_NOSLOTS", lit(mn.hosts.join(","))),
                        ("MULTINODE_TOTAL_SLOTS", lit(mn.total_slots.to_string())),
                        (
                            "MULTINODE_NODE_IP",
                            (None, EnvValue::Runtime(format!("address-of:{host}"))),
                        ),
                        ("MULTINODE_SSH_WRAPPER", lit(SSH_WRAPPER_PATH.into())),
                        ("MULTINODE_RSH_WRAPPER", lit(SSH_WRAPPER_PATH.into())),
                        ("RANK", lit(rank.to_string())),
                    ] {
                        mvars.push((name.to_owned(), known, value));
                    }
                }
                if mn.implementation == "gasnet" {
                    // GASNet's own ssh spawner, documented by GASNet (ssh-spawner/README):
                    // the hosts, and the SSH wrapper as the ssh command. `env` wins.
                    for (name, value) in [
                        ("GASNET_SPAWNFN", "S".to_owned()),
                        ("GASNET_IBV_SPAWNER", "ssh".to_owned()),
                        ("GASNET_SSH_SERVERS", mn.hosts.join(" ")),
                        ("GASNET_SSH_CMD", SSH_WRAPPER_PATH.to_owned()),
                    ] {
                        if !user_env.iter().any(|e| e.name == name) {
                            mvars.push((name.to_owned(), None, EnvValue::Literal(value)));
                        }
                    }
                }
                for (n, _, v) in &mvars {
                    provided.push((n.clone(), v.clone()));
                }
                let (argv, wrapper_words, unexpanded) = if rank == 0 {
                    let mut unexpanded = BTreeSet::new();
                    let mut argv: Vec<String> = if generic && command.form == CommandForm::Command {
                        command
                            .argv
                            .iter()
                            .map(|w| expand_multinode(w, &mvars, &mut unexpanded))
                            .collect()
                    } else {
                        command.argv.clone()
                    };
                    let words = match &mn.wrapper {
                        Some(w) => {
                            let mut full = w.argv.clone();
                            full.append(&mut argv);
                            argv = full;
                            w.argv.len() as u64
                        }
                        None => 0,
                    };
                    (Some(argv), words, unexpanded.into_iter().collect())
                } else {
                    (None, 0, Vec::new())
                };
                specs.push(InstanceSpec {
                    hostname,
                    role: if rank == 0 { Role::Head } else { Role::Member },
                    task_id: None,
                    rank: Some(rank),
                    host: Some(host),
                    provided,
                    argv,
                    wrapper_words,
                    unexpanded,
                });
            }
        } else {
            specs.push(InstanceSpec {
                hostname: self.name().to_owned(),
                role: Role::Single,
                task_id: None,
                rank: None,
                host: None,
                provided: base_env(self.name()),
                argv: Some(command.argv.clone()),
                wrapper_words: 0,
                unexpanded: Vec::new(),
            });
        }

        let provided_names: BTreeSet<String> = specs
            .iter()
            .flat_map(|s| s.provided.iter().map(|(n, _)| n.clone()))
            .collect();
        let shadowed: Vec<&str> = user_env
            .iter()
            .filter(|e| provided_names.contains(&e.name))
            .map(|e| e.name.as_str())
            .collect();
        if !shadowed.is_empty() {
            notes.push(format!(
                "Fuzzball sets {}, which replaces the value in `env`",
                shadowed.join(", ")
            ));
        }

        let gpus = resources
            .gpus_per_node
            .as_ref()
            .and_then(|g| g.value)
            .unwrap_or(0);
        let instances: Vec<Instance> = specs
            .into_iter()
            .map(|s| {
                let mut env: BTreeMap<String, EnvVar> = BTreeMap::new();
                for e in &user_env {
                    env.insert(e.name.clone(), e.clone());
                }
                for (n, v) in s.provided {
                    env.insert(
                        n.clone(),
                        EnvVar {
                            name: n,
                            value: v,
                            source: Source::Fuzzball,
                        },
                    );
                }
                let env: Vec<EnvVar> = env.into_values().collect();
                let rt = runtimes(&crate::runtime::Inputs {
                    hostname: &s.hostname,
                    image: &image,
                    cwd: t.cwd.as_ref().map(|c| c.value.as_str()),
                    mounts: &mounts,
                    files: &files,
                    helpers: &helpers,
                    devices: &devices,
                    gpus,
                    cores: resources.cores.as_ref().and_then(|c| c.value),
                    memory: resources.memory_bytes.as_ref().and_then(|c| c.value),
                    env: &env,
                    argv: s.argv.as_deref(),
                    multinode: multinode.is_some(),
                });
                Instance {
                    hostname: s.hostname,
                    role: s.role,
                    task_id: s.task_id,
                    rank: s.rank,
                    host: s.host,
                    argv: s.argv,
                    wrapper_words: s.wrapper_words,
                    unexpanded: s.unexpanded,
                    env,
                    runtimes: rt,
                }
            })
            .collect();

        let launchers = self.launchers(multinode.as_ref());

        Ok(Task {
            name: self.name().to_owned(),
            kind: kind(t.kind),
            image,
            command,
            cwd: t.cwd.as_ref().map(|c| c.value.clone()),
            mounts,
            files,
            resources,
            helpers,
            devices,
            timeout,
            network,
            task_array,
            multinode,
            service,
            launchers,
            instances,
            notes,
        })
    }

    /// `{workdir}/files/<task>/<container path>`.
    fn file_host_path(&self, path: &str) -> String {
        format!(
            "{WORKDIR}/files/{}/{}",
            self.name(),
            path.trim_start_matches('/')
        )
    }

    /// `defaults.job.mounts` merged by container path, the task's own winning; sorted by
    /// container path.
    fn mounts(&self) -> Vec<Mount> {
        let mut mounts: BTreeMap<String, Mount> = BTreeMap::new();
        let mut add_mounts = |ms: &[m::Mount], source: Source| {
            for mt in ms {
                mounts.insert(
                    mt.path.value.clone(),
                    Mount {
                        path: mt.path.value.clone(),
                        volume: mt.volume.value.clone(),
                        host_path: volume_host_path(&mt.volume.value),
                        source,
                    },
                );
            }
        };
        if let Some(d) = self.defaults() {
            add_mounts(&d.mounts, Source::Defaults);
        }
        add_mounts(&self.task.mounts, Source::Job);
        mounts.into_values().collect()
    }

    fn resources(&self) -> Resources {
        let cores = self
            .resource(|r| r.cores.as_ref())
            .map(|(v, s)| self.sourced(v.value, v.range, s, "cpu.cores"));
        let by_core = self
            .resource(|r| r.memory_by_core.as_ref())
            .is_some_and(|(v, _)| v.value);
        let memory_bytes = self.resource(|r| r.memory.as_ref()).map(|(v, s)| {
            let mut out = self.sourced(v.value.bytes, v.range, s, "memory.size");
            if by_core {
                out.value = cores
                    .as_ref()
                    .and_then(|c| c.value)
                    .and_then(|c| c.checked_mul(v.value.bytes));
                out.source.push_str(" × cpu.cores (memory.by-core)");
            }
            out
        });
        let mut devices = BTreeMap::new();
        if let Some(d) = self.defaults().and_then(|d| d.resource.as_ref()) {
            for (k, v) in &d.devices {
                devices.insert(k.value.clone(), v.value);
            }
        }
        if let Some(r) = &self.task.resource {
            for (k, v) in &r.devices {
                devices.insert(k.value.clone(), v.value);
            }
        }
        let gpus_per_node = self
            .resource(|r| r.device("nvidia.com/gpu"))
            .map(|(v, s)| self.sourced(v.value, v.range, s, "devices[nvidia.com/gpu]"));
        let mut annotations = BTreeMap::new();
        if let Some(d) = self.defaults().and_then(|d| d.resource.as_ref()) {
            annotations.extend(key_values(&d.annotations));
        }
        if let Some(r) = &self.task.resource {
            annotations.extend(key_values(&r.annotations));
        }
        Resources {
            cores,
            affinity: self.resource(|r| r.affinity.as_ref()).map(|(v, _)| {
                match v.value {
                    m::Affinity::Core => "CORE",
                    m::Affinity::Socket => "SOCKET",
                    m::Affinity::Numa => "NUMA",
                }
                .to_owned()
            }),
            threads: self.resource(|r| r.threads.as_ref()).map(|(v, _)| v.value),
            sockets: self.resource(|r| r.sockets.as_ref()).map(|(v, _)| v.value),
            memory_bytes,
            memory_by_core: by_core,
            gpus_per_node,
            devices,
            exclusive: self
                .resource(|r| r.exclusive.as_ref())
                .map(|(v, _)| v.value),
            annotations,
        }
    }

    /// `nodes`: from [`Lowering::plannable`], which refused what cannot be planned.
    fn multinode(
        &self,
        nodes: &PlannedNodes<'_>,
        resources: &Resources,
        command: &Command,
        notes: &mut Vec<String>,
    ) -> Multinode {
        let mn = nodes.multinode;
        if nodes.written == NodesWritten::Assumed {
            notes.push("`multinode.nodes` is not given; planned as 1 node".into());
        }
        let implementation = match mn.implementation.as_ref().map(|i| i.value) {
            Some(m::Implementation::OpenMpi { .. }) => "openmpi",
            Some(m::Implementation::Mpich) => "mpich",
            Some(m::Implementation::Gasnet) => "gasnet",
            Some(m::Implementation::Generic) => "generic",
            None => {
                notes.push("`multinode.implementation` is not given; planned as `generic`".into());
                "generic"
            }
        };
        let slots = match (&mn.procs_per_node, &resources.cores) {
            (Some(p), _) => Sourced {
                value: Some(p.value),
                source: "multinode.procs-per-node".into(),
                at: self.pos(p.range),
            },
            (None, Some(c)) => Sourced {
                value: c.value,
                source: format!("{} (the procs-per-node default)", c.source),
                at: c.at,
            },
            (None, None) => Sourced {
                value: Some(1),
                source: "assumed: neither multinode.procs-per-node nor cpu.cores is given".into(),
                at: None,
            },
        };
        let per = slots.value.unwrap_or(1);
        let (hosts, hosts_source) = match nodes.hosts {
            Some(h) => (h.to_vec(), "--hosts".to_owned()),
            None => (
                (0..nodes.count)
                    .map(|i| format!("{}-{i}", self.name()))
                    .collect(),
                "job hostnames <job>-<rank>".to_owned(),
            ),
        };
        let total_slots = nodes.count.saturating_mul(per);
        let hostlist = hosts
            .iter()
            .map(|h| format!("{h}:{per}"))
            .collect::<Vec<_>>()
            .join(",");
        let note = "Fuzzball's exact launcher line is not documented; this is the line the runner uses: every slot of every node, remote processes started through the SSH wrapper".to_owned();
        let wrapper = match implementation {
            "openmpi" => Some(Wrapper {
                added_by_fuzzball: true,
                argv: vec![
                    "mpirun".into(),
                    "--host".into(),
                    hostlist,
                    "-np".into(),
                    total_slots.to_string(),
                    "--mca".into(),
                    "plm_rsh_agent".into(),
                    SSH_WRAPPER_PATH.into(),
                ],
                note,
            }),
            "mpich" => Some(Wrapper {
                added_by_fuzzball: true,
                argv: vec![
                    "mpiexec".into(),
                    "-hosts".into(),
                    hostlist,
                    "-np".into(),
                    total_slots.to_string(),
                    "-launcher".into(),
                    "ssh".into(),
                    "-launcher-exec".into(),
                    SSH_WRAPPER_PATH.into(),
                ],
                note,
            }),
            "gasnet" => {
                notes.push("how Fuzzball wraps a `gasnet` command is not documented; the command runs on the head node as written, with GASNet's documented ssh-spawner settings (GASNET_SPAWNFN=S, GASNET_IBV_SPAWNER=ssh, GASNET_SSH_SERVERS, GASNET_SSH_CMD = the SSH wrapper) unless `env` sets them".into());
                None
            }
            _ => None,
        };
        if implementation == "generic" && command.form == CommandForm::Command {
            notes.push("Fuzzball expands `$MULTINODE_*` inside `command` words; the values known when planning are substituted in `argv`".into());
        }
        Multinode {
            nodes: nodes.count,
            implementation: implementation.into(),
            slots,
            total_slots,
            hosts,
            hosts_source,
            wrapper,
        }
    }

    fn launchers(&self, mn: Option<&Multinode>) -> Vec<LauncherUse> {
        let mut out = Vec::new();
        if let Some(w) = mn.and_then(|m| m.wrapper.as_ref().map(|w| (m, w))) {
            let (mn, w) = w;
            out.push(LauncherUse {
                launcher: format!("{} (added by Fuzzball)", w.argv[0]),
                at: None,
                on_every_node: false,
                nnodes: None,
                nproc_per_node: None,
                np: Some(Sourced {
                    value: Some(mn.total_slots),
                    source: "multinode.nodes × slots".into(),
                    at: None,
                }),
                world_size: Some(mn.total_slots),
            });
        }
        for l in &self.a.facts(self.task).launches {
            let shape = &l.shape;
            out.push(LauncherUse {
                launcher: l.launcher.name().to_owned(),
                at: self.pos(l.range()),
                on_every_node: l.exec_all.is_some(),
                nnodes: shape
                    .nnodes
                    .as_ref()
                    .map(|c| self.count(c, "--nnodes", "PET_NNODES")),
                nproc_per_node: shape
                    .nproc_per_node
                    .as_ref()
                    .map(|c| self.count(c, "--nproc-per-node", "PET_NPROC_PER_NODE")),
                np: shape.np.as_ref().map(|c| self.count(c, "-np", "")),
                world_size: shape.world_size,
            });
        }
        out
    }

    /// A process count with the words that say where it came from.
    fn count(&self, c: &Count, flag: &str, pet: &str) -> Sourced {
        let origin = match c.from {
            CountFrom::Env => format!("{pet} in env"),
            _ => format!("{flag} flag"),
        };
        let source = match &c.from {
            CountFrom::Flag | CountFrom::Env => origin,
            CountFrom::Default if flag == "-np" => "mpirun default".into(),
            CountFrom::Default => "torchrun default".into(),
            CountFrom::Standalone => "--standalone (one node)".into(),
            CountFrom::Keyword(k) if k == "cpu" => format!("{origin}, `cpu`: the CPU cores"),
            CountFrom::Keyword(k) => format!("{origin}, `{k}`: the GPUs per node"),
            CountFrom::TotalSlots { explicit: true } => {
                "-np $MULTINODE_TOTAL_SLOTS (nodes × slots)".into()
            }
            CountFrom::TotalSlots { explicit: false } => {
                "mpirun default: one process per slot of the host list".into()
            }
            CountFrom::SlotsFound => "no -np: one process per slot mpirun finds".into(),
            CountFrom::NotANumber(v) if flag == "-np" => {
                format!("-np flag: `{v}` is not a number")
            }
            CountFrom::NotANumber(v) => {
                format!("{origin}: `{v}` is not a number known before the run")
            }
            CountFrom::RunTime(Some(name)) if flag == "-np" => {
                format!("-np `${name}`: known only at run time")
            }
            CountFrom::RunTime(Some(name)) => format!("{origin}: ${name}, known only at run time"),
            CountFrom::RunTime(None) if flag == "-np" => "-np: known only at run time".into(),
            CountFrom::RunTime(None) => format!("{origin}: not known before the run"),
        };
        Sourced {
            value: c.value,
            source,
            at: c.at.and_then(|r| self.pos(r)),
        }
    }
}

fn readiness(p: &m::Probe) -> Option<Readiness> {
    let n = |v: &Option<m::Spanned<u64>>, default: u64| v.as_ref().map_or(default, |s| s.value);
    Some(Readiness {
        action: probe(p.action.as_ref()?),
        initial_delay_seconds: n(&p.initial_delay_seconds, 0),
        period_seconds: n(&p.period_seconds, 10).max(1),
        timeout_seconds: n(&p.timeout_seconds, 1).max(1),
        success_threshold: n(&p.success_threshold, 1).max(1),
        failure_threshold: n(&p.failure_threshold, 3).max(1),
    })
}

fn probe(p: &m::ProbeAction) -> Probe {
    match p {
        m::ProbeAction::Exec { command } => Probe::Exec {
            command: command.iter().map(|c| c.value.clone()).collect(),
        },
        m::ProbeAction::HttpGet {
            path,
            port,
            scheme,
            headers,
        } => Probe::HttpGet {
            path: path.as_ref().map(|s| s.value.clone()),
            port: port.as_ref().map(|s| s.value),
            scheme: scheme.as_ref().map(|s| s.value.to_ascii_uppercase()),
            headers: headers
                .iter()
                .map(|(n, v)| Header {
                    name: n.value.clone(),
                    value: v.value.clone(),
                })
                .collect(),
        },
        m::ProbeAction::TcpSocket { port } => Probe::TcpSocket {
            port: port.as_ref().map(|s| s.value),
        },
        m::ProbeAction::Grpc { port, service } => Probe::Grpc {
            port: port.as_ref().map(|s| s.value),
            service: service.as_ref().map(|s| s.value.clone()),
        },
    }
}

/// A `command:` word as Fuzzball expands it ([`semantics::expand_command_word`]): the values
/// known when planning are substituted; names whose values are not known
/// (`MULTINODE_NODE_IP`) stay and are recorded.
fn expand_multinode(
    word: &str,
    vars: &[(String, Option<String>, EnvValue)],
    unexpanded: &mut BTreeSet<String>,
) -> String {
    semantics::expand_command_word(
        word,
        &|name| {
            vars.iter()
                .find(|(n, _, _)| n == name)
                .map(|(_, v, _)| v.clone())
        },
        unexpanded,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`StreamedPlan`]'s `Serialize` writes [`Plan`]'s fields by name: a field added to
    /// [`Plan`] breaks this pattern (no `..`), and so asks for its line there too.
    #[test]
    fn the_streamed_fields_are_the_plan_s() {
        let a = fuzzfile_check::analyze(
            "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [x]\n",
        );
        let options = PlanOptions::default();
        let Ok(plan) = crate::lower(&a, &options) else {
            panic!("not planned");
        };
        let Plan {
            plan_version: _,
            workflow: _,
            cluster: _,
            placeholders: _,
            volumes: _,
            files: _,
            graph: _,
            jobs: _,
            services: _,
        } = &plan;
        let Ok(s) = crate::streamed(&a, &options) else {
            panic!("not planned");
        };
        let keys = |v: serde_json::Value| -> Vec<String> {
            v.as_object()
                .map(|o| o.keys().cloned().collect())
                .unwrap_or_default()
        };
        let (Ok(whole), Ok(streamed)) = (serde_json::to_value(&plan), serde_json::to_value(&s))
        else {
            panic!("not serialised");
        };
        assert_eq!(keys(whole), keys(streamed));
    }

    /// Regression: a volume key `../x` and a NUL in an environment value were planned and only
    /// refused (or failed) when the plan ran.
    #[test]
    fn path_names_and_nul_values_are_refused() {
        let base = "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [x]\n";
        for text in [
            format!("{base}    mounts: {{/data: ../x}}\nvolumes:\n  ../x: {{reference: volume://user/ephemeral}}\n"),
            format!("{base}    env: [\"G=\\0\"]\n"),
        ] {
            let a = fuzzfile_check::analyze(&text);
            let Err(Refusal::Errors(d)) = crate::lower(&a, &PlanOptions::default()) else {
                panic!("planned:\n{text}");
            };
            assert!(
                d.iter().any(|d| d.rule == fuzzfile_check::Rule::InvalidValue),
                "{d:?}"
            );
        }
    }

    /// Regression: an empty file (or one of comments only) planned to `version: "unknown"`.
    /// It is refused, also when the rule that reports it is turned off.
    #[test]
    fn a_text_without_a_version_is_refused() {
        for text in ["", "# only a comment\n", "---\n"] {
            let a = fuzzfile_check::analyze(text);
            let Err(Refusal::Errors(d)) = crate::lower(&a, &PlanOptions::default()) else {
                panic!("{text:?} was planned");
            };
            assert!(d
                .iter()
                .any(|d| d.rule == fuzzfile_check::Rule::MissingField));
            let mut options = fuzzfile_check::Options::default();
            options
                .rules
                .disabled
                .insert(fuzzfile_check::Rule::MissingField);
            let a = fuzzfile_check::analyze_with(text, &options);
            assert!(
                crate::lower(&a, &PlanOptions::default()).is_err(),
                "{text:?}"
            );
        }
    }

    #[test]
    fn expansion() {
        let vars = vec![
            (
                "MULTINODE_HOSTLIST".to_owned(),
                Some("a:2,b:2".to_owned()),
                EnvValue::Literal("a:2,b:2".into()),
            ),
            (
                "MULTINODE_NODE_IP".to_owned(),
                None,
                EnvValue::Runtime("address-of:a".into()),
            ),
        ];
        let mut un = BTreeSet::new();
        assert_eq!(
            expand_multinode("-H=$MULTINODE_HOSTLIST", &vars, &mut un),
            "-H=a:2,b:2"
        );
        assert_eq!(
            expand_multinode("${MULTINODE_HOSTLIST}x", &vars, &mut un),
            "a:2,b:2x"
        );
        assert_eq!(expand_multinode("$HOME/$X", &vars, &mut un), "$HOME/$X");
        assert!(un.is_empty());
        assert_eq!(
            expand_multinode("$MULTINODE_NODE_IP:29500", &vars, &mut un),
            "$MULTINODE_NODE_IP:29500"
        );
        assert_eq!(un.into_iter().collect::<Vec<_>>(), ["MULTINODE_NODE_IP"]);
    }
}
