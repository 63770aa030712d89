//! Which keys are valid where, in which version, and what each one means. The model builder
//! checks every mapping against this table; the language server uses it for completion and
//! hover.

use crate::Version;

/// The versions a key is valid in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Versions {
    Both,
    V1Only,
    V4Only,
}

impl Versions {
    pub fn allows(self, v: Option<Version>) -> bool {
        match (self, v) {
            (Versions::Both, _) | (_, None) => true,
            (Versions::V1Only, Some(v)) => v == Version::V1,
            (Versions::V4Only, Some(v)) => v == Version::V4,
        }
    }
}

/// What the server does with a key that is still accepted.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Status {
    Current,
    /// Accepted, but replaced by something else: the text says by what.
    Deprecated(&'static str),
    /// No longer accepted: the text says what replaced it.
    Removed(&'static str),
}

#[derive(Clone, Copy, Debug)]
pub struct KeySpec {
    pub name: &'static str,
    pub versions: Versions,
    pub status: Status,
    pub doc: &'static str,
}

const fn k(name: &'static str, doc: &'static str) -> KeySpec {
    KeySpec {
        name,
        versions: Versions::Both,
        status: Status::Current,
        doc,
    }
}
const fn v4(name: &'static str, doc: &'static str) -> KeySpec {
    KeySpec {
        name,
        versions: Versions::V4Only,
        status: Status::Current,
        doc,
    }
}
const fn dep(name: &'static str, doc: &'static str, why: &'static str) -> KeySpec {
    KeySpec {
        name,
        versions: Versions::Both,
        status: Status::Deprecated(why),
        doc,
    }
}
const fn removed(name: &'static str, doc: &'static str, why: &'static str) -> KeySpec {
    KeySpec {
        name,
        versions: Versions::Both,
        status: Status::Removed(why),
        doc,
    }
}

/// A place in a Fuzzfile whose keys are fixed.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Place {
    Root,
    Defaults,
    DefaultsJob,
    Job,
    Service,
    Image,
    Resource,
    Cpu,
    Memory,
    Multinode,
    TaskArray,
    Policy,
    Timeout,
    Retry,
    Dependency,
    JobNetwork,
    ServiceNetwork,
    Port,
    Endpoint,
    Probe,
    ProbeExec,
    ProbeHttpGet,
    ProbeTcpSocket,
    ProbeGrpc,
    HttpHeader,
    Volume,
    Transfer,
    TransferUri,
    MountV1,
    MountV4,
}

impl Place {
    /// Where this place is, for messages ("in a job").
    pub fn describe(self) -> &'static str {
        match self {
            Place::Root => "at the top level",
            Place::Defaults => "in `defaults`",
            Place::DefaultsJob => "in `defaults.job`",
            Place::Job => "in a job",
            Place::Service => "in a service",
            Place::Image => "in `image`",
            Place::Resource => "in `resource`",
            Place::Cpu => "in `resource.cpu`",
            Place::Memory => "in `resource.memory`",
            Place::Multinode => "in `multinode`",
            Place::TaskArray => "in `task-array`",
            Place::Policy => "in `policy`",
            Place::Timeout => "in `policy.timeout`",
            Place::Retry => "in `policy.retry`",
            Place::Dependency => "in a `depends-on` item",
            Place::JobNetwork => "in a job's `network`",
            Place::ServiceNetwork => "in a service's `network`",
            Place::Port => "in a `network.ports` item",
            Place::Endpoint => "in a `network.endpoints` item",
            Place::Probe => "in `readiness-probe`",
            Place::ProbeExec => "in `readiness-probe.exec`",
            Place::ProbeHttpGet => "in `readiness-probe.http-get`",
            Place::ProbeTcpSocket => "in `readiness-probe.tcp-socket`",
            Place::ProbeGrpc => "in `readiness-probe.grpc`",
            Place::HttpHeader => "in an `http-headers` item",
            Place::Volume => "in a volume",
            Place::Transfer => "in an ingress or egress transfer",
            Place::TransferUri => "in a transfer's `source` or `destination`",
            Place::MountV1 => "in a v1 mount",
            Place::MountV4 => "in a v4 mount",
        }
    }

    pub fn keys(self) -> &'static [KeySpec] {
        match self {
            Place::Root => ROOT,
            Place::Defaults => DEFAULTS,
            Place::DefaultsJob => DEFAULTS_JOB,
            Place::Job => JOB,
            Place::Service => SERVICE,
            Place::Image => IMAGE,
            Place::Resource => RESOURCE,
            Place::Cpu => CPU,
            Place::Memory => MEMORY,
            Place::Multinode => MULTINODE,
            Place::TaskArray => TASK_ARRAY,
            Place::Policy => POLICY,
            Place::Timeout => TIMEOUT,
            Place::Retry => RETRY,
            Place::Dependency => DEPENDENCY,
            Place::JobNetwork => JOB_NETWORK,
            Place::ServiceNetwork => SERVICE_NETWORK,
            Place::Port => PORT,
            Place::Endpoint => ENDPOINT,
            Place::Probe => PROBE,
            Place::ProbeExec => PROBE_EXEC,
            Place::ProbeHttpGet => PROBE_HTTP_GET,
            Place::ProbeTcpSocket => PROBE_TCP,
            Place::ProbeGrpc => PROBE_GRPC,
            Place::HttpHeader => HTTP_HEADER,
            Place::Volume => VOLUME,
            Place::Transfer => TRANSFER,
            Place::TransferUri => TRANSFER_URI,
            Place::MountV1 => MOUNT_V1,
            Place::MountV4 => MOUNT_V4,
        }
    }

    pub fn key(self, name: &str) -> Option<&'static KeySpec> {
        self.keys().iter().find(|k| k.name == name)
    }
}

const ROOT: &[KeySpec] = &[
    k("version", "Fuzzfile syntax version: `v4` (current) or `v1` (legacy)."),
    k("jobs", "Jobs of the workflow, by name. Each runs a command in a container, once or as a task array or multinode job."),
    k("services", "Long-running services of the workflow, by name, reachable from other members as `<name>.svc`."),
    k("volumes", "Storage volumes, by key; jobs and services mount them through `mounts`."),
    k("files", "Inline file contents, by name, referenced elsewhere as `file://<name>`."),
    k("defaults", "Defaults for every job (`defaults.job`)."),
    k("annotations", "Workflow annotations: scheduler placement hints and `fuzzball.io/connect/<service>` client commands."),
    removed("completed", "Internal stage of the Fuzzball API.", "`completed` is an internal stage of the Fuzzball API; remove it"),
];

const DEFAULTS: &[KeySpec] = &[k(
    "job",
    "Defaults applied to every job; a job's own values win.",
)];

const DEFAULTS_JOB: &[KeySpec] = &[
    k("env", "Environment entries (`NAME=VALUE`) for every job; a job's own entry for the same name wins."),
    k("mounts", "Mounts for every job."),
    k("policy", "Policy (timeout) for every job."),
    k("resource", "Resource requirements for every job."),
];

/// The keys jobs and services share, followed by the keys given.
macro_rules! task_keys {
    ($($extra:expr),* $(,)?) => {
        &[
            k("image", "The container image: `uri` (`docker://` or `oras://`) and optional `secret`."),
            k("command", "The command to run, as a list of arguments (no shell unless you call one)."),
            k("script", "A script to run, starting with a `#!` line."),
            k("args", "Arguments passed to `script` or `command`."),
            k("env", "Environment entries, `NAME=VALUE`; a value `secret://<scope>/<name>` is replaced by that secret."),
            k("cwd", "Working directory (absolute path); defaults to the image's working directory."),
            k("mounts", "Volumes to mount: v1 `<volume>: {location: /path}`, v4 `/path: <volume>` or `/path: {volume: <volume>}`."),
            k("files", "Files to place in the container: absolute path → inline content or `file://<name>`."),
            dep("requires", "Names of jobs or services that must finish first.", "`requires` is replaced by `depends-on` (with `status: FINISHED`) and ignored when `depends-on` is set"),
            k("depends-on", "Jobs or services this one waits for: `name`, `status` (`FINISHED` or `RUNNING`), `description`."),
            k("resource", "What the job needs: `cpu`, `memory`, `devices` (GPUs, per node), `exclusive`, `annotations`."),
            k("multinode", "Run across several nodes: `nodes`, `implementation`, `procs-per-node`."),
            k("policy", "Execution policy: `timeout.execute`."),
            k("name", "Ignored: the key under `jobs` or `services` is the name."),
            $($extra,)*
        ]
    };
}

const JOB: &[KeySpec] = task_keys![
    k("task-array", "Run the job as an array of tasks: `start`, `end` (inclusive), `concurrency`; each task sees `FB_TASK_ID`."),
    k("network", "The job's network namespace: `isolated`, `expose-tcp`, `expose-udp`."),
];

const SERVICE: &[KeySpec] = task_keys![
    k("persist", "Keep running until the workflow is cancelled (`true`), or stop when the members that depend on it stop (`false`)."),
    k("readiness-probe", "How Fuzzball decides the service is ready (RUNNING): one of `exec`, `http-get`, `tcp-socket`, `grpc`."),
    k("network", "Ports and endpoints of the service, and `host` networking."),
    removed("ports", "Removed service ports.", "service `ports` were replaced by `network.ports` and `network.endpoints`"),
    removed("proxy", "Removed service proxy.", "service `proxy` was replaced by `network.endpoints`"),
    removed("export", "Removed service export.", "service `export` was removed; use `network.endpoints` with a `scope`"),
    removed("task-array", "Task arrays on services.", "services cannot be task arrays (removed in Fuzzball 3.0); use a job"),
];

const IMAGE: &[KeySpec] = &[
    k(
        "uri",
        "Image URI: `docker://<registry>/<repository>:<tag>` or `oras://…` for a SIF image.",
    ),
    k("secret", "Registry credentials: `secret://<scope>/<name>`."),
    k(
        "decryption-secret",
        "Secret that decrypts an encrypted SIF image: `secret://<scope>/<name>`.",
    ),
    dep(
        "secrets",
        "Legacy credential map.",
        "`image.secrets` is a legacy form; use `image.secret`",
    ),
];

const RESOURCE: &[KeySpec] = &[
    k(
        "cpu",
        "CPU requirements: `cores`, `affinity`, `threads`, `sockets`.",
    ),
    k("memory", "Memory requirements: `size`, `by-core`."),
    k(
        "devices",
        "Devices by resource name, per node: `nvidia.com/gpu: 4`.",
    ),
    k("exclusive", "The job must be the only one on its node."),
    k(
        "annotations",
        "Node selection, such as `nvidia.com/gpu.product: H100` (substring match).",
    ),
];

const CPU: &[KeySpec] = &[
    k(
        "cores",
        "CPU cores per container (per node for multinode jobs).",
    ),
    k(
        "affinity",
        "Core placement: `CORE` (default), `SOCKET` or `NUMA`.",
    ),
    k(
        "threads",
        "Expose the hardware threads (SMT) of the allocated cores.",
    ),
    k("sockets", "Number of CPU sockets required."),
];

const MEMORY: &[KeySpec] = &[
    k(
        "size",
        "Memory size with a unit: `4GiB`, `512MB`, `0.5GiB` (no unit means bytes).",
    ),
    k("by-core", "`size` is per core rather than per container."),
];

const MULTINODE: &[KeySpec] = &[
    k("nodes", "Number of nodes to run on."),
    k("implementation", "`generic` (you launch remote processes, e.g. torchrun with `exec_all`), `openmpi`/`ompi`, `mpich` (Fuzzball wraps the command in mpirun) or `gasnet`."),
    k("procs-per-node", "Processes (MPI slots) per node; defaults to the CPU cores of the container, not the GPU count."),
];

const TASK_ARRAY: &[KeySpec] = &[
    k("start", "First task id (inclusive)."),
    k("end", "Last task id (inclusive)."),
    k("concurrency", "How many tasks run at once (at most 200)."),
];

const POLICY: &[KeySpec] = &[
    k("timeout", "Timeouts: `execute`."),
    k(
        "retry",
        "Accepted by Fuzzball and ignored: it has no effect.",
    ),
];

const TIMEOUT: &[KeySpec] = &[k(
    "execute",
    "Longest run time, as a Go duration: `30m`, `2h`, `8h0m0s`.",
)];

const RETRY: &[KeySpec] = &[k("attempts", "Ignored by Fuzzball.")];

const DEPENDENCY: &[KeySpec] = &[
    k("name", "The job or service to wait for."),
    k(
        "status",
        "`FINISHED` (wait until it ends successfully) or `RUNNING` (a service is ready).",
    ),
    k("description", "Free text."),
];

const JOB_NETWORK: &[KeySpec] = &[
    k("isolated", "Give the job its own network namespace."),
    k("expose-tcp", "TCP ports to expose."),
    k("expose-udp", "UDP ports to expose."),
];

const SERVICE_NETWORK: &[KeySpec] = &[
    k(
        "ports",
        "Ports the service listens on: `name`, `port`, `protocol` (`tcp`/`udp`).",
    ),
    k(
        "endpoints",
        "Endpoints exposed to users: `name`, `port-name`, `protocol`, `type`, `scope`.",
    ),
    k(
        "host",
        "Use host networking, so other members reach the service as `<name>.svc`.",
    ),
];

const PORT: &[KeySpec] = &[
    k("name", "Port name, referenced by `endpoints[].port-name`."),
    k("port", "Container port number."),
    k("protocol", "`tcp` or `udp`."),
];

const ENDPOINT: &[KeySpec] = &[
    k(
        "name",
        "Endpoint name; the service sees `FB_ENDPOINT_URL_<NAME>` and `FB_ENDPOINT_PATH_<NAME>`.",
    ),
    k(
        "port-name",
        "The `network.ports[].name` this endpoint exposes.",
    ),
    k(
        "protocol",
        "`http`, `https`, `grpc`, `grpcs`, `tcp` or `tls`.",
    ),
    k("type", "`subdomain` or `path`."),
    k(
        "scope",
        "Who may reach it: `user`, `group` (default), `organization` or `public`.",
    ),
];

const PROBE: &[KeySpec] = &[
    k("exec", "Run a command in the container: `command: [...]`."),
    k(
        "http-get",
        "HTTP GET: `path`, `port`, `scheme`, `http-headers`.",
    ),
    k("tcp-socket", "Open a TCP connection: `port`."),
    k("grpc", "gRPC health check: `port`, `service`."),
    k("initial-delay-seconds", "Seconds before the first probe."),
    k("period-seconds", "Seconds between probes."),
    k("timeout-seconds", "Seconds before a probe times out."),
    k("success-threshold", "Consecutive successes needed."),
    k("failure-threshold", "Consecutive failures tolerated."),
];

const PROBE_EXEC: &[KeySpec] = &[k("command", "The command to run, as a list of arguments.")];
const PROBE_HTTP_GET: &[KeySpec] = &[
    k("path", "URL path to request."),
    k("port", "Port to connect to."),
    k("scheme", "`HTTP` or `HTTPS`."),
    k("http-headers", "Extra headers: `name`, `value`."),
];
const PROBE_TCP: &[KeySpec] = &[k("port", "Port to connect to.")];
const PROBE_GRPC: &[KeySpec] = &[
    k("port", "Port to connect to."),
    k("service", "gRPC service name."),
];
const HTTP_HEADER: &[KeySpec] = &[k("name", "Header name."), k("value", "Header value.")];

const VOLUME: &[KeySpec] = &[
    k(
        "reference",
        "`volume://<scope>/<storage class>[/<name>]`, as in `volume://user/ephemeral`.",
    ),
    v4(
        "use",
        "Provisioner name, or `ephemeral` / `persistent` to let Fuzzball choose.",
    ),
    k(
        "name",
        "v1: informational; v4: the existing persistent volume to use.",
    ),
    v4("size", "Requested capacity: `10GB`, `1TiB`."),
    v4("annotations", "Annotations that select a provisioner."),
    k(
        "ingress",
        "Files to download into the volume before the jobs run.",
    ),
    k(
        "egress",
        "Files to upload from the volume after the jobs finish.",
    ),
    KeySpec {
        name: "type",
        versions: Versions::V1Only,
        status: Status::Deprecated("volume `type` is replaced by `reference`"),
        doc: "Legacy volume type (`EPHEMERAL` or `HOST`).",
    },
    KeySpec {
        name: "path",
        versions: Versions::V1Only,
        status: Status::Deprecated("volume `path` (host volumes) is replaced by `reference`"),
        doc: "Legacy host path.",
    },
];

const TRANSFER: &[KeySpec] = &[
    k("source", "Where the file comes from: `uri` (and `secret`)."),
    k("destination", "Where the file goes: `uri` (and `secret`)."),
    k("policy", "Policy of this transfer: `timeout.execute`."),
];

const TRANSFER_URI: &[KeySpec] = &[
    k("uri", "`https://`, `http://`, `s3://` or `file://` URI."),
    k("secret", "Credentials: `secret://<scope>/<name>`."),
    dep(
        "secrets",
        "Legacy credential map.",
        "`secrets` is a legacy form; use `secret`",
    ),
];

const MOUNT_V1: &[KeySpec] = &[k(
    "location",
    "Absolute path in the container where the volume appears.",
)];
const MOUNT_V4: &[KeySpec] = &[k(
    "volume",
    "The key of the volume (under `volumes`) to mount here.",
)];

/// The values of the enumerated keys, shared by the model builder (which checks them) and
/// the language server (which completes them).
pub const AFFINITIES: &[&str] = &["CORE", "SOCKET", "NUMA"];
pub const IMPLEMENTATIONS: &[&str] = &["generic", "openmpi", "ompi", "mpich", "gasnet"];
pub const DEPENDENCY_STATUSES: &[&str] = &["FINISHED", "RUNNING"];
pub const PORT_PROTOCOLS: &[&str] = &["tcp", "udp"];
pub const ENDPOINT_PROTOCOLS: &[&str] = &["http", "https", "grpc", "grpcs", "tcp", "tls"];
pub const ENDPOINT_TYPES: &[&str] = &["subdomain", "path"];
pub const ENDPOINT_SCOPES: &[&str] = &["user", "group", "organization", "public"];
/// Probe schemes; the builder accepts any case.
pub const PROBE_SCHEMES: &[&str] = &["HTTP", "HTTPS"];
pub const VERSIONS: &[&str] = &["v4", "v1"];
const BOOLEANS: &[&str] = &["true", "false"];

/// The values a key takes when they are a fixed set (enumerations and booleans).
pub fn allowed_values(place: Place, key: &str) -> Option<&'static [&'static str]> {
    Some(match (place, key) {
        (Place::Root, "version") => VERSIONS,
        (Place::Cpu, "affinity") => AFFINITIES,
        (Place::Cpu, "threads")
        | (Place::Memory, "by-core")
        | (Place::Resource, "exclusive")
        | (Place::JobNetwork, "isolated")
        | (Place::ServiceNetwork, "host")
        | (Place::Service, "persist") => BOOLEANS,
        (Place::Multinode, "implementation") => IMPLEMENTATIONS,
        (Place::Dependency, "status") => DEPENDENCY_STATUSES,
        (Place::Port, "protocol") => PORT_PROTOCOLS,
        (Place::Endpoint, "protocol") => ENDPOINT_PROTOCOLS,
        (Place::Endpoint, "type") => ENDPOINT_TYPES,
        (Place::Endpoint, "scope") => ENDPOINT_SCOPES,
        (Place::ProbeHttpGet, "scheme") => PROBE_SCHEMES,
        _ => return None,
    })
}

/// The kind of value a key takes. Did-you-mean renames an unknown key only to a key that takes
/// the kind of value written under it: renaming must not turn a typo into a value of the wrong
/// type (`initial-delay-seconds: 15` is not a `readiness-probe`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ValueKind {
    /// Any scalar (Fuzzball reads numbers and booleans as written).
    String,
    /// A whole number.
    Int,
    /// `true` or `false`.
    Bool,
    /// A sequence.
    List,
    /// A mapping.
    Map,
    /// Anything (keys that are no longer accepted).
    Any,
}

impl ValueKind {
    /// Whether a value of this shape can be written under a key of this kind. A null value
    /// (`key:` with nothing after it) fits every kind.
    pub fn fits(self, tree: &fuzzfile_syntax::Tree, value: fuzzfile_syntax::NodeId) -> bool {
        use fuzzfile_syntax::{CoreValue, NodeKind};
        let id = tree.resolve(value);
        if tree.is_null(id) {
            return true;
        }
        match (self, &tree.node(id).kind) {
            (ValueKind::Any, _) => true,
            (ValueKind::List, NodeKind::Sequence { .. }) => true,
            (ValueKind::Map, NodeKind::Mapping { .. }) => true,
            (ValueKind::String, NodeKind::Scalar(_)) => true,
            (ValueKind::Int, NodeKind::Scalar(_)) => {
                matches!(tree.core_value(id), Some(CoreValue::Int(_)))
            }
            (ValueKind::Bool, NodeKind::Scalar(_)) => {
                matches!(tree.core_value(id), Some(CoreValue::Bool(_)))
            }
            _ => false,
        }
    }
}

/// The kind of value `key` takes at `place` (`Any` for a key the place does not have).
pub fn value_kind(place: Place, key: &str) -> ValueKind {
    use ValueKind::*;
    match (place, key) {
        (Place::Root, "version") => String,
        (Place::Root, "jobs" | "services" | "volumes" | "files" | "defaults" | "annotations") => {
            Map
        }
        (Place::Defaults, "job") => Map,
        (Place::DefaultsJob | Place::Job | Place::Service, "env") => List,
        (Place::DefaultsJob | Place::Job | Place::Service, "mounts" | "policy" | "resource") => Map,
        (Place::Job | Place::Service, "image" | "files" | "multinode" | "network") => Map,
        (Place::Job | Place::Service, "command" | "args" | "requires" | "depends-on") => List,
        (Place::Job | Place::Service, "script" | "cwd" | "name") => String,
        (Place::Job, "task-array") => Map,
        (Place::Service, "persist") => Bool,
        (Place::Service, "readiness-probe") => Map,
        (Place::Image, "uri" | "secret" | "decryption-secret") => String,
        (Place::Image, "secrets") => Map,
        (Place::Resource, "cpu" | "memory" | "devices" | "annotations") => Map,
        (Place::Resource, "exclusive") => Bool,
        (Place::Cpu, "cores" | "sockets") => Int,
        (Place::Cpu, "affinity") => String,
        (Place::Cpu, "threads") => Bool,
        (Place::Memory, "size") => String,
        (Place::Memory, "by-core") => Bool,
        (Place::Multinode, "nodes" | "procs-per-node") => Int,
        (Place::Multinode, "implementation") => String,
        (Place::TaskArray, "start" | "end" | "concurrency") => Int,
        (Place::Policy, "timeout" | "retry") => Map,
        (Place::Timeout, "execute") => String,
        (Place::Retry, "attempts") => Int,
        (Place::Dependency, "name" | "status" | "description") => String,
        (Place::JobNetwork, "isolated") => Bool,
        (Place::JobNetwork, "expose-tcp" | "expose-udp") => List,
        (Place::ServiceNetwork, "ports" | "endpoints") => List,
        (Place::ServiceNetwork, "host") => Bool,
        (Place::Port, "name" | "protocol") => String,
        (Place::Port, "port") => Int,
        (Place::Endpoint, "name" | "port-name" | "protocol" | "type" | "scope") => String,
        (Place::Probe, "exec" | "http-get" | "tcp-socket" | "grpc") => Map,
        (
            Place::Probe,
            "initial-delay-seconds"
            | "period-seconds"
            | "timeout-seconds"
            | "success-threshold"
            | "failure-threshold",
        ) => Int,
        (Place::ProbeExec, "command") => List,
        (Place::ProbeHttpGet, "http-headers") => List,
        // A probe port is a number or a port name.
        (Place::ProbeHttpGet | Place::ProbeTcpSocket | Place::ProbeGrpc, "port") => String,
        (Place::ProbeHttpGet, "path" | "scheme") | (Place::ProbeGrpc, "service") => String,
        (Place::HttpHeader, "name" | "value") => String,
        (Place::Volume, "reference" | "use" | "name" | "size" | "type" | "path") => String,
        (Place::Volume, "annotations") => Map,
        (Place::Volume, "ingress" | "egress") => List,
        (Place::Transfer, "source" | "destination" | "policy") => Map,
        (Place::TransferUri, "uri" | "secret") => String,
        (Place::TransferUri, "secrets") => Map,
        (Place::MountV1, "location") | (Place::MountV4, "volume") => String,
        _ => Any,
    }
}

/// All places, for tooling (schema export, completion tests).
pub const ALL_PLACES: &[Place] = &[
    Place::Root,
    Place::Defaults,
    Place::DefaultsJob,
    Place::Job,
    Place::Service,
    Place::Image,
    Place::Resource,
    Place::Cpu,
    Place::Memory,
    Place::Multinode,
    Place::TaskArray,
    Place::Policy,
    Place::Timeout,
    Place::Retry,
    Place::Dependency,
    Place::JobNetwork,
    Place::ServiceNetwork,
    Place::Port,
    Place::Endpoint,
    Place::Probe,
    Place::ProbeExec,
    Place::ProbeHttpGet,
    Place::ProbeTcpSocket,
    Place::ProbeGrpc,
    Place::HttpHeader,
    Place::Volume,
    Place::Transfer,
    Place::TransferUri,
    Place::MountV1,
    Place::MountV4,
];

/// "Did you mean": shared with the other layers (values files, rule names).
pub use fuzzfile_diagnostics::suggest::{did_you_mean, edit_distance};

/// The kebab-case spelling of a camelCase or snake_case key (`taskArray` → `task-array`).
pub fn kebab_case(word: &str) -> String {
    fuzzfile_diagnostics::suggest::separated_case(word, '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        let keys = Place::Job.keys().iter().map(|k| k.name);
        assert_eq!(did_you_mean("comand", keys.clone()), Some("command"));
        assert_eq!(did_you_mean("depends_on", keys.clone()), Some("depends-on"));
        assert_eq!(did_you_mean("resources", keys.clone()), Some("resource"));
        assert_eq!(did_you_mean("zzzzzz", keys.clone()), None);
        // Regression: the length difference is a lower bound, not the distance.
        assert_eq!(did_you_mean("commtimeout:nd", keys), None);
        let probe_keys = Place::Service.keys().iter().map(|k| k.name);
        assert_eq!(did_you_mean("initial-delay-seconds", probe_keys), None);
        assert_eq!(kebab_case("taskArray"), "task-array");
        assert_eq!(kebab_case("procs_per_node"), "procs-per-node");
        assert_eq!(kebab_case("decryptionSecret"), "decryption-secret");
    }

    #[test]
    fn every_current_key_has_a_value_kind() {
        for p in ALL_PLACES {
            for k in p.keys() {
                if !matches!(k.status, Status::Removed(_)) {
                    assert_ne!(value_kind(*p, k.name), ValueKind::Any, "{p:?} {}", k.name);
                }
            }
        }
    }

    #[test]
    fn every_place_has_unique_keys() {
        for p in ALL_PLACES {
            let mut names: Vec<_> = p.keys().iter().map(|k| k.name).collect();
            names.sort_unstable();
            let len = names.len();
            names.dedup();
            assert_eq!(len, names.len(), "{p:?} has a duplicate key");
        }
    }
}
