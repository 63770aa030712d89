//! The launch plan: plain data, serialised as JSON with a committed JSON Schema
//! (`schemas/launch-plan.schema.json`).
//!
//! Determinism: every collection is a `Vec` in a documented sorted order or a `BTreeMap`;
//! nothing depends on the machine, the clock or hash order. Host paths are written under the
//! `{workdir}` placeholder, never as absolute paths of the machine that lowered the plan.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of this format. A change that a consumer could misread bumps it.
pub const PLAN_VERSION: u32 = 1;

/// The token that stands for the runner's work directory (an absolute path chosen by the
/// runner) in host paths. It appears only in host paths the plan itself made up (volume
/// directories, files to write), never in anything taken from the Fuzzfile.
pub const WORKDIR: &str = "{workdir}";

/// The token that stands for the run's id (chosen by the runner when the run starts; it is
/// `FB_WORKFLOW_ID`). It names containers, so that each run's containers can be found and
/// stopped.
pub const RUN_ID: &str = "{run-id}";

/// The token that stands for the grace period, in whole seconds, between the request to stop
/// and the kill (`fuzz run --grace`).
pub const GRACE: &str = "{grace}";

/// Where a task's `script` is written inside the container; the command runs this file.
pub const SCRIPT_PATH: &str = "/.fuzz/script";

/// The helper programs the runner provides in multinode containers.
pub const EXEC_ALL_PATH: &str = "/usr/local/bin/exec_all";
pub const SSH_WRAPPER_PATH: &str = "/usr/local/bin/fuzz-multinode-ssh";

/// A Fuzzfile lowered to what runs where.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// The version of this format: 1.
    pub plan_version: u32,
    pub workflow: Workflow,
    /// The cluster profile the Fuzzfile was checked and lowered with.
    pub cluster: Option<Cluster>,
    /// The placeholders that may appear in the plan and what the runner puts in their place.
    pub placeholders: Vec<Placeholder>,
    /// Sorted by key.
    pub volumes: Vec<Volume>,
    /// The top-level `files` entries, sorted by name.
    pub files: Vec<TopFile>,
    pub graph: Graph,
    /// Sorted by name.
    pub jobs: Vec<Task>,
    /// Sorted by name.
    pub services: Vec<Task>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workflow {
    /// The source file name as the caller gave it (no directory of the machine is added).
    pub source: String,
    /// `v1` or `v4`.
    pub version: String,
    pub annotations: BTreeMap<String, String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Cluster {
    pub name: Option<String>,
    pub gpus_per_node: Option<u64>,
    pub gpu_products: Vec<String>,
    /// `infiniband`, `roce` or `ethernet`.
    pub fabric: Option<String>,
    pub mnnvl: bool,
    pub imex: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Placeholder {
    pub token: String,
    pub meaning: String,
}

/// A 1-based line and column (in characters) in the Fuzzfile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

/// A reference to a secret; the plan never holds a secret's value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SecretRef {
    /// `secret://<scope>/<name>`.
    pub reference: String,
    pub scope: String,
    pub name: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VolumeKind {
    /// Created for the workflow and deleted after it.
    Ephemeral,
    /// Outlives the workflow.
    Persistent,
    /// Another storage class or provisioner (named in `provisioner`).
    Provisioned,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Volume {
    pub key: String,
    pub kind: VolumeKind,
    /// `reference:` as written (v1), e.g. `volume://user/ephemeral`.
    pub reference: Option<String>,
    /// `use:` as written (v4).
    #[serde(rename = "use")]
    pub use_: Option<String>,
    /// The storage class or provisioner when it is neither `ephemeral` nor `persistent`.
    pub provisioner: Option<String>,
    /// The existing volume's name (persistent volumes).
    pub name: Option<String>,
    pub size_bytes: Option<u64>,
    /// The directory the runner backs this volume with.
    pub host_path: String,
    /// Fetched into the volume before any job that mounts it starts, in this order.
    pub ingress: Vec<Transfer>,
    /// Exported after the workflow's jobs finish, in this order.
    pub egress: Vec<Transfer>,
    /// Jobs and services that mount the volume, sorted.
    pub mounted_by: Vec<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Transfer {
    pub source: TransferEnd,
    pub destination: TransferEnd,
    pub timeout: Option<Timeout>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TransferEnd {
    pub uri: Option<String>,
    /// For a `file://` end inside the volume: the path relative to the volume's root.
    pub volume_path: Option<String>,
    /// For a `file://<name>` ingress source: the top-level `files` entry it names.
    pub file: Option<String>,
    pub secret: Option<SecretRef>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TopFile {
    pub name: String,
    /// The content, verbatim (Fuzzball does not decode it).
    pub content: String,
    pub bytes: u64,
}

/// Jobs and services, and what each waits for.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Graph {
    /// Sorted by name.
    pub nodes: Vec<GraphNode>,
    /// Sorted by `to`, then `from`.
    pub edges: Vec<Edge>,
    /// A topological order: every task after what it depends on; ties broken by name.
    pub order: Vec<String>,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    Job,
    Service,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphNode {
    pub name: String,
    pub kind: TaskKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DependencyStatus {
    /// `to` starts after `from` finished successfully.
    Finished,
    /// `to` starts once the service `from` is running (its readiness probe passed).
    Running,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DeclaredBy {
    DependsOn,
    /// The deprecated `requires:` list, which means `FINISHED`.
    Requires,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Edge {
    /// The dependency.
    pub from: String,
    /// The dependent task.
    pub to: String,
    /// The status `from` must reach before `to` starts.
    pub status: DependencyStatus,
    pub declared_by: DeclaredBy,
}

/// A job or a service.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Task {
    pub name: String,
    pub kind: TaskKind,
    pub image: Image,
    pub command: Command,
    /// The working directory in the container; `null`: the image's, else `/`.
    pub cwd: Option<String>,
    /// Sorted by container path.
    pub mounts: Vec<Mount>,
    /// Files written before the task starts, sorted by container path.
    pub files: Vec<WriteFile>,
    pub resources: Resources,
    /// Programs of the runner placed in the container (multinode jobs), sorted by path.
    pub helpers: Vec<Helper>,
    /// Devices added to the container, sorted by path.
    pub devices: Vec<Device>,
    pub timeout: Option<Timeout>,
    pub network: Option<Network>,
    pub task_array: Option<TaskArray>,
    pub multinode: Option<Multinode>,
    pub service: Option<Service>,
    /// The launchers recognised in the command, in the order they appear.
    pub launchers: Vec<LauncherUse>,
    /// What actually starts: one entry per task of a task array, per node of a multinode job,
    /// else one. Each is complete: argv, environment and the runtime command lines.
    pub instances: Vec<Instance>,
    /// Facts about the lowering a reader should know (assumptions, ignored keys).
    pub notes: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ImageScheme {
    /// `docker://`: an OCI image.
    Docker,
    /// `oras://`: a SIF image in an OCI registry.
    Oras,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Image {
    pub uri: String,
    pub scheme: ImageScheme,
    /// Everything after `scheme://`.
    pub reference: String,
    /// Registry credentials.
    pub secret: Option<SecretRef>,
    pub decryption_secret: Option<SecretRef>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CommandForm {
    /// The `command:` list, executed without a shell.
    Command,
    /// The `script:` body, written to `/.fuzz/script` (mode 0755) and executed.
    Script,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Command {
    pub form: CommandForm,
    /// As written: the `command` list, or `[/.fuzz/script]`; then `args`. Each instance's
    /// `argv` is this after the expansions Fuzzball does.
    pub argv: Vec<String>,
    /// The `args:` list, already appended to `argv`.
    pub args: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// `defaults.job`.
    Defaults,
    /// The job's or service's own keys.
    Job,
    /// Set by Fuzzball (and so by the runner).
    Fuzzball,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Mount {
    /// The path in the container.
    pub path: String,
    pub volume: String,
    /// The volume's directory on the node (`volumes[].host_path`).
    pub host_path: String,
    pub source: Source,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFile {
    /// The path in the container.
    pub path: String,
    /// Where the runner writes the content on the node; bind-mounted read-only at `path`.
    pub host_path: String,
    pub content: FileContent,
    /// `0644`, or `0755` for the script.
    pub mode: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileContent {
    /// The content written in the task (`files: {/path: "..."}` or `script:`).
    Inline(String),
    /// The top-level `files` entry of that name (`file://<name>`).
    File(String),
}

/// A number and where it came from.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sourced {
    /// `null` when it cannot be known before the job runs.
    pub value: Option<u64>,
    /// In words: `resource.cpu.cores`, `defaults.job.resource.cpu.cores`, `--nnodes flag`,
    /// `torchrun default`, …
    pub source: String,
    pub at: Option<Position>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Resources {
    /// CPU cores per container (per node).
    pub cores: Option<Sourced>,
    /// `CORE`, `SOCKET` or `NUMA`.
    pub affinity: Option<String>,
    pub threads: Option<bool>,
    pub sockets: Option<u64>,
    /// Memory per container, in bytes (for `by-core`, the size times the cores).
    pub memory_bytes: Option<Sourced>,
    pub memory_by_core: bool,
    /// `nvidia.com/gpu` per node.
    pub gpus_per_node: Option<Sourced>,
    /// Every device request, name → count per node.
    pub devices: BTreeMap<String, u64>,
    pub exclusive: Option<bool>,
    /// Node-selection annotations.
    pub annotations: BTreeMap<String, String>,
}

/// A program the runner provides, bind-mounted read-only into the container.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Helper {
    /// The path in the container.
    pub path: String,
    /// Where the runner keeps it on the node.
    pub host_path: String,
    /// What it does.
    pub purpose: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Device {
    /// The device path on the node, exposed at the same path in the container.
    pub path: String,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Timeout {
    /// Whole seconds, rounded up.
    pub seconds: u64,
    /// As written (`30m`).
    pub as_written: String,
    /// `policy.timeout.execute`, `defaults.job.policy.timeout.execute`, or the transfer's
    /// `policy.timeout.execute`.
    pub source: String,
    pub at: Option<Position>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Network {
    pub isolated: Option<bool>,
    pub host: Option<bool>,
    pub expose_tcp: Vec<u64>,
    pub expose_udp: Vec<u64>,
    /// Sorted by name, then port.
    pub ports: Vec<Port>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Port {
    pub name: Option<String>,
    pub port: Option<u64>,
    pub protocol: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskArray {
    pub start: i64,
    pub end: i64,
    /// `end - start + 1`.
    pub count: u64,
    /// At most this many tasks run at once; `null`: no limit given.
    pub concurrency: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Multinode {
    pub nodes: u64,
    /// `openmpi`, `mpich`, `gasnet` or `generic` (`ompi` is written as `openmpi`).
    pub implementation: String,
    /// Processes (slots) per node.
    pub slots: Sourced,
    /// `nodes × slots`.
    pub total_slots: u64,
    /// The hosts the nodes run on, rank order.
    pub hosts: Vec<String>,
    /// Where the host names came from: `--hosts`, or the job-hostnames convention.
    pub hosts_source: String,
    /// For `openmpi`/`mpich`: the launcher line Fuzzball puts in front of the command.
    pub wrapper: Option<Wrapper>,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Wrapper {
    /// Always true: these words are not in the Fuzzfile; Fuzzball adds them.
    pub added_by_fuzzball: bool,
    pub argv: Vec<String>,
    pub note: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Service {
    /// Keeps running until the workflow ends (else stops when its dependents have stopped).
    pub persist: bool,
    /// `null`: the service is RUNNING as soon as its process started.
    pub readiness_probe: Option<Readiness>,
    /// Sorted by name.
    pub endpoints: Vec<Endpoint>,
}

/// The readiness probe: what is checked, and when. Timing not written in the Fuzzfile takes
/// the Kubernetes defaults (0 s delay, every 10 s, 1 s timeout, 1 success, 3 failures).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Readiness {
    pub action: Probe,
    pub initial_delay_seconds: u64,
    pub period_seconds: u64,
    pub timeout_seconds: u64,
    /// Consecutive successes that make the service RUNNING.
    pub success_threshold: u64,
    /// Consecutive failures after which the service is reported as not ready (it keeps
    /// running and being probed, as Kubernetes readiness does).
    pub failure_threshold: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub name: String,
    pub value: String,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Probe {
    Exec {
        command: Vec<String>,
    },
    HttpGet {
        path: Option<String>,
        port: Option<u64>,
        scheme: Option<String>,
        headers: Vec<Header>,
    },
    TcpSocket {
        port: Option<u64>,
    },
    Grpc {
        port: Option<u64>,
        service: Option<String>,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    pub name: Option<String>,
    pub port_name: Option<String>,
    pub protocol: Option<String>,
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub scope: Option<String>,
}

/// A launcher recognised in the command (torchrun, mpirun, …) and the processes it starts.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LauncherUse {
    /// `torchrun`, `torch.distributed.launch`, `mpirun`, `srun`, `deepspeed`, `exec_all`,
    /// or `mpirun (added by Fuzzball)`.
    pub launcher: String,
    pub at: Option<Position>,
    /// Started by `exec_all` on every node.
    pub on_every_node: bool,
    /// torchrun: `--nnodes`.
    pub nnodes: Option<Sourced>,
    /// torchrun: `--nproc-per-node`.
    pub nproc_per_node: Option<Sourced>,
    /// mpirun: `-np`.
    pub np: Option<Sourced>,
    /// The processes in the distributed job: torchrun `nnodes × nproc-per-node`, mpirun `-np`.
    pub world_size: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The only container of a job or service.
    Single,
    /// One task of a task array.
    Task,
    /// Node 0 of a multinode job: runs the command.
    Head,
    /// Another node of a multinode job: runs what the head starts on it through
    /// `MULTINODE_SSH_WRAPPER` (`exec_all`, mpirun), and nothing of its own.
    Member,
}

/// One container: where it runs, what it runs, with which environment.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Instance {
    /// `<name>`, `<name>-<task id>` or `<name>-<rank>`: the container's hostname.
    pub hostname: String,
    pub role: Role,
    pub task_id: Option<i64>,
    pub rank: Option<u64>,
    /// The node it runs on (multinode jobs).
    pub host: Option<String>,
    /// The command line in the container; `null` for a member node.
    pub argv: Option<Vec<String>>,
    /// How many leading words of `argv` Fuzzball adds (the mpirun wrapper); 0 otherwise.
    pub wrapper_words: u64,
    /// `$NAME` left in `argv` for the container runtime's environment to supply, sorted.
    pub unexpanded: Vec<String>,
    /// The complete environment, sorted by name.
    pub env: Vec<EnvVar>,
    pub runtimes: Runtimes,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvVar {
    pub name: String,
    pub value: EnvValue,
    pub source: Source,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EnvValue {
    Literal(String),
    /// The secret's value, fetched by the runner when the container starts.
    Secret(SecretRef),
    /// Known only when the workflow runs: `workflow-id`, `account-id`, or
    /// `address-of:<host>` (the IP address of that host).
    Runtime(String),
}

/// The command line of every container runtime for one instance.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Runtimes {
    pub apptainer: RuntimeLine,
    pub podman: RuntimeLine,
    pub docker: RuntimeLine,
    /// No container: the command runs on the node itself.
    pub host: RuntimeLine,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum EnvPassing {
    /// `--env NAME` for each variable: the runtime reads the value from its own environment,
    /// which the runner sets to the instance's `env` (values never appear in argv).
    Names,
    /// `--cleanenv`: each variable is passed as `APPTAINERENV_<NAME>` in apptainer's
    /// environment.
    ApptainerPrefix,
    /// The process inherits the runner's environment with the instance's `env` on top.
    Inherit,
}

#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RuntimeLine {
    /// Whether this runtime can run the instance as planned.
    pub supported: bool,
    /// The whole command line: the runtime's own words, the image, then the instance's
    /// `argv` (for a member node: nothing after the image). Empty when not supported.
    pub argv: Vec<String>,
    /// How many leading words of `argv` are the runtime's (through the image).
    pub prefix_words: u64,
    pub env_passing: EnvPassing,
    /// The working directory of the process the runner starts (`host` only; the container
    /// runtimes get it as a flag).
    pub cwd: Option<String>,
    /// The command that stops this instance's container when the runner ends it early (a
    /// timeout, a stopped run, a failed node of a gang): signalling the runtime's client is not
    /// enough when a daemon or monitor owns the container. It asks the container to stop, and
    /// kills it after the grace period. Empty when signalling the process group is enough.
    #[serde(default)]
    pub stop: Vec<String>,
    pub notes: Vec<String>,
}
