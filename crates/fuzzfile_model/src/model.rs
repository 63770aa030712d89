//! The typed Fuzzfile. Every field that came from the text carries its range and node, so a
//! rule can point at it and the language server can map a cursor to it.

use crate::values::{ByteSize, Duration, ImageUri, SecretRef, VolumeRef};
use fuzzfile_syntax::{NodeId, TextRange};
use std::collections::HashMap;
use std::sync::Arc;

/// A value with the range (and node) it was read from.
#[derive(Clone, Debug, PartialEq)]
pub struct Spanned<T> {
    pub value: T,
    pub range: TextRange,
    pub node: NodeId,
}

impl<T> Spanned<T> {
    pub fn new(value: T, range: TextRange, node: NodeId) -> Self {
        Spanned { value, range, node }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Version {
    V1,
    V4,
}

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V1 => "v1",
            Version::V4 => "v4",
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Fuzzfile {
    /// The version when it is `v1` or `v4`.
    pub version: Option<Spanned<Version>>,
    /// The value node of the top-level `version:` entry as written, whatever it holds (a
    /// number, `v2`, a mapping): what `unsupported-version` reads.
    pub version_node: Option<NodeId>,
    pub jobs: Vec<Task>,
    pub services: Vec<Task>,
    pub volumes: Vec<Volume>,
    pub files: Vec<InlineFile>,
    pub defaults: Option<DefaultsJob>,
    pub annotations: Vec<KeyValue>,
    /// Range of the `jobs:` key, for messages about the section.
    pub jobs_key: Option<TextRange>,
    pub services_key: Option<TextRange>,
    pub volumes_key: Option<TextRange>,
    pub files_key: Option<TextRange>,
    /// Every key written that the schema marks deprecated (still accepted at its place and
    /// version, but replaced), in the order read: what `deprecated-key` reports.
    pub deprecated_keys: Vec<KeyAt>,
    /// Where each name is in `jobs`/`services`, `volumes` and `files`, built on the first
    /// lookup by name ([`Fuzzfile::task`], [`Fuzzfile::volume`], [`Fuzzfile::file`]): a rule or
    /// the lowering looks a name up per reference, so a scan per lookup would make the whole
    /// analysis grow with references × entries.
    names: std::sync::OnceLock<NameIndex>,
}

/// The first position of each name (as a scan from the start finds it), and the lengths of the
/// lists it was built from.
#[derive(Clone, Debug, Default)]
struct NameIndex {
    /// Jobs then services: a position in [`Fuzzfile::tasks`].
    tasks: HashMap<Box<str>, usize>,
    volumes: HashMap<Box<str>, usize>,
    files: HashMap<Box<str>, usize>,
    lengths: [usize; 4],
}

fn first_positions<'a>(names: impl Iterator<Item = &'a str>) -> HashMap<Box<str>, usize> {
    let mut map = HashMap::new();
    for (i, n) in names.enumerate() {
        map.entry(n.into()).or_insert(i);
    }
    map
}

impl NameIndex {
    fn of(f: &Fuzzfile) -> NameIndex {
        NameIndex {
            tasks: first_positions(f.tasks().map(|t| t.name.value.as_str())),
            volumes: first_positions(f.volumes.iter().map(|v| v.key.value.as_str())),
            files: first_positions(f.files.iter().map(|x| x.name.value.as_str())),
            lengths: f.list_lengths(),
        }
    }
}

/// A key as written and the place it was read at (its meaning comes from
/// [`crate::schema::Place::key`]).
#[derive(Clone, Debug)]
pub struct KeyAt {
    pub key: Spanned<String>,
    pub place: crate::schema::Place,
}

impl Fuzzfile {
    pub fn version(&self) -> Option<Version> {
        self.version.as_ref().map(|v| v.value)
    }
    /// Jobs then services.
    pub fn tasks(&self) -> impl Iterator<Item = &Task> {
        self.jobs.iter().chain(self.services.iter())
    }
    /// The first job or service named `name`, by the name index (built on the first lookup).
    /// Should a list be added to or removed from after that, lookups scan instead.
    pub fn task(&self, name: &str) -> Option<&Task> {
        match self.indexed(|n| n.tasks.get(name)) {
            Some(Some(i)) => {
                let t = if i < self.jobs.len() {
                    self.jobs.get(i)
                } else {
                    self.services.get(i - self.jobs.len())
                };
                t.filter(|t| t.name.value == name)
                    .or_else(|| self.tasks().find(|t| t.name.value == name))
            }
            Some(None) => None,
            None => self.tasks().find(|t| t.name.value == name),
        }
    }
    /// The first volume whose key is `key` (as [`Fuzzfile::task`]).
    pub fn volume(&self, key: &str) -> Option<&Volume> {
        match self.indexed(|n| n.volumes.get(key)) {
            Some(Some(i)) => self
                .volumes
                .get(i)
                .filter(|v| v.key.value == key)
                .or_else(|| self.volumes.iter().find(|v| v.key.value == key)),
            Some(None) => None,
            None => self.volumes.iter().find(|v| v.key.value == key),
        }
    }
    /// The first top-level file named `name` (as [`Fuzzfile::task`]).
    pub fn file(&self, name: &str) -> Option<&InlineFile> {
        match self.indexed(|n| n.files.get(name)) {
            Some(Some(i)) => self
                .files
                .get(i)
                .filter(|f| f.name.value == name)
                .or_else(|| self.files.iter().find(|f| f.name.value == name)),
            Some(None) => None,
            None => self.files.iter().find(|f| f.name.value == name),
        }
    }
    /// The index's answer (a position or none), or `None` when the lists changed since it was
    /// built.
    fn indexed(&self, get: impl Fn(&NameIndex) -> Option<&usize>) -> Option<Option<usize>> {
        let index = self.names.get_or_init(|| NameIndex::of(self));
        (index.lengths == self.list_lengths()).then(|| get(index).copied())
    }
    fn list_lengths(&self) -> [usize; 4] {
        [
            self.jobs.len(),
            self.services.len(),
            self.volumes.len(),
            self.files.len(),
        ]
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TaskKind {
    Job,
    Service,
}

impl TaskKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Job => "job",
            TaskKind::Service => "service",
        }
    }
}

/// A job or a service: they share most of their keys.
#[derive(Clone, Debug)]
pub struct Task {
    pub kind: TaskKind,
    pub name: Spanned<String>,
    /// The whole `name: {...}` entry.
    pub range: TextRange,
    /// The mapping node of the task's body.
    pub body: NodeId,
    pub image: Option<Image>,
    pub command: Option<Spanned<Vec<Spanned<String>>>>,
    pub script: Option<Spanned<String>>,
    /// Range of the `command` and `script` keys when present, also when their value is not
    /// valid (then `command` / `script` is `None`).
    pub command_key: Option<TextRange>,
    pub script_key: Option<TextRange>,
    /// The body is a mapping and the walk read it to its end. False when the body is not a
    /// mapping, or when the walk's budget ran out (aliases) before the task was read whole:
    /// a key the task seems to lack may then be unread, so nothing is reported missing.
    pub read_whole: bool,
    pub args: Vec<Spanned<String>>,
    /// Shared, not copied, by the semantics layer's effective environment of the task
    /// (`TaskFacts::env`).
    pub env: Arc<[EnvVar]>,
    /// Boxed, as few tasks have one: 8 bytes in every task, not 40.
    pub cwd: Option<Box<Spanned<String>>>,
    pub mounts: Vec<Mount>,
    pub files: Vec<TaskFile>,
    pub resource: Option<Resource>,
    pub multinode: Option<Box<Multinode>>,
    pub task_array: Option<Box<TaskArray>>,
    pub policy: Option<Policy>,
    pub depends_on: Vec<Dependency>,
    pub requires: Vec<Spanned<String>>,
    /// Range of the `depends-on` / `requires` keys when present.
    pub depends_on_key: Option<TextRange>,
    pub requires_key: Option<TextRange>,
    pub network: Option<Box<Network>>,
    /// Boxed, as few tasks have one (services only).
    pub persist: Option<Box<Spanned<bool>>>,
    pub readiness_probe: Option<Box<Probe>>,
}

#[derive(Clone, Debug)]
pub struct Image {
    pub range: TextRange,
    pub uri: Option<Spanned<ImageUri>>,
    /// Boxed, as few images have one: 8 bytes in every task, not 64.
    pub secret: Option<Box<Spanned<SecretRef>>>,
    pub decryption_secret: Option<Box<Spanned<SecretRef>>>,
}

/// The name or the value of an `env` entry: a boxed `str`, exactly as long as the text (16
/// bytes, not a `String`'s 24), read as a `str` and compared with one.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EnvText(Box<str>);

impl EnvText {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for EnvText {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for EnvText {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for EnvText {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for EnvText {
    fn from(s: &str) -> Self {
        EnvText(s.into())
    }
}

impl From<String> for EnvText {
    fn from(s: String) -> Self {
        EnvText(s.into_boxed_str())
    }
}

impl From<EnvText> for String {
    fn from(s: EnvText) -> Self {
        s.0.into_string()
    }
}

impl std::fmt::Debug for EnvText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for EnvText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

impl PartialEq<str> for EnvText {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for EnvText {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<String> for EnvText {
    fn eq(&self, other: &String) -> bool {
        *self.0 == **other
    }
}

impl PartialEq<EnvText> for str {
    fn eq(&self, other: &EnvText) -> bool {
        *self == *other.0
    }
}

impl PartialEq<EnvText> for &str {
    fn eq(&self, other: &EnvText) -> bool {
        **self == *other.0
    }
}

impl PartialEq<EnvText> for String {
    fn eq(&self, other: &EnvText) -> bool {
        **self == *other.0
    }
}

/// One `NAME=VALUE` entry of `env`.
#[derive(Clone, Debug)]
pub struct EnvVar {
    pub name: EnvText,
    pub value: EnvText,
    /// The whole entry scalar's range and node (its text is the tree's: `NAME=VALUE`, not
    /// copied here).
    pub entry_range: TextRange,
    pub entry_node: NodeId,
    /// Where `value` starts in the entry's text, `None` when the entry does not end with it
    /// (an `export` of a script whose value is computed).
    pub value_offset: Option<u32>,
    /// Source range of `NAME` and of `VALUE`.
    pub name_range: TextRange,
    pub value_range: TextRange,
    /// Boxed, as few entries have one: 8 bytes in every entry, not 48.
    pub secret: Option<Box<SecretRef>>,
    /// Came from `defaults.job.env`.
    pub from_defaults: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MountForm {
    /// `volume: {location: /path}` (v1).
    V1,
    /// `/path: volume` (v4 short).
    V4Short,
    /// `/path: {volume: volume}` (v4 long).
    V4Long,
}

#[derive(Clone, Debug)]
pub struct Mount {
    pub form: MountForm,
    /// Container path.
    pub path: Spanned<String>,
    /// Volume key.
    pub volume: Spanned<String>,
    pub range: TextRange,
}

#[derive(Clone, Debug)]
pub enum FileSource {
    /// `file://<name>` of a top-level `files` entry.
    Ref(Spanned<String>),
    Inline(Spanned<String>),
}

#[derive(Clone, Debug)]
pub struct TaskFile {
    pub path: Spanned<String>,
    pub source: FileSource,
}

#[derive(Clone, Debug)]
pub struct InlineFile {
    pub name: Spanned<String>,
    pub content: Spanned<String>,
}

#[derive(Clone, Debug)]
pub struct KeyValue {
    pub key: Spanned<String>,
    pub value: Spanned<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Affinity {
    Core,
    Socket,
    Numa,
}

#[derive(Clone, Debug, Default)]
pub struct Resource {
    pub range: TextRange,
    pub cores: Option<Spanned<u64>>,
    pub affinity: Option<Spanned<Affinity>>,
    pub threads: Option<Spanned<bool>>,
    pub sockets: Option<Spanned<u64>>,
    pub memory: Option<Spanned<ByteSize>>,
    pub memory_by_core: Option<Spanned<bool>>,
    /// `resource.devices`: name → count per node.
    pub devices: Vec<(Spanned<String>, Spanned<u64>)>,
    pub exclusive: Option<Spanned<bool>>,
    pub annotations: Vec<KeyValue>,
    /// Range of the `devices:` key.
    pub devices_key: Option<TextRange>,
}

impl Resource {
    /// The count of device `name` (`nvidia.com/gpu`) requested per node.
    pub fn device(&self, name: &str) -> Option<&Spanned<u64>> {
        self.devices
            .iter()
            .find(|(k, _)| k.value == name)
            .map(|(_, v)| v)
    }
    pub fn annotation(&self, name: &str) -> Option<&KeyValue> {
        self.annotations.iter().find(|kv| kv.key.value == name)
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Implementation {
    /// `openmpi`, or its alias `ompi` (`alias` is true).
    OpenMpi {
        alias: bool,
    },
    Mpich,
    Gasnet,
    Generic,
}

impl Implementation {
    /// Fuzzball wraps the command in its own launcher (mpirun, GASNet).
    pub fn wraps_command(self) -> bool {
        !matches!(self, Implementation::Generic)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Implementation::OpenMpi { alias: false } => "openmpi",
            Implementation::OpenMpi { alias: true } => "ompi",
            Implementation::Mpich => "mpich",
            Implementation::Gasnet => "gasnet",
            Implementation::Generic => "generic",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Multinode {
    pub range: TextRange,
    pub nodes: Option<Spanned<u64>>,
    pub implementation: Option<Spanned<Implementation>>,
    pub procs_per_node: Option<Spanned<u64>>,
}

#[derive(Clone, Debug)]
pub struct TaskArray {
    pub range: TextRange,
    pub start: Option<Spanned<i64>>,
    pub end: Option<Spanned<i64>>,
    pub concurrency: Option<Spanned<u64>>,
}

#[derive(Clone, Debug, Default)]
pub struct Policy {
    pub range: TextRange,
    pub timeout: Option<Spanned<Duration>>,
    /// The `retry:` entry, which Fuzzball ignores.
    pub retry: Option<TextRange>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DependencyStatus {
    Finished,
    Running,
}

#[derive(Clone, Debug)]
pub struct Dependency {
    pub range: TextRange,
    pub name: Option<Spanned<String>>,
    pub status: Option<Spanned<DependencyStatus>>,
}

#[derive(Clone, Debug, Default)]
pub struct Network {
    pub range: TextRange,
    pub isolated: Option<Spanned<bool>>,
    pub host: Option<Spanned<bool>>,
    pub expose_tcp: Vec<Spanned<u64>>,
    pub expose_udp: Vec<Spanned<u64>>,
    pub ports: Vec<Port>,
    pub endpoints: Vec<Endpoint>,
}

#[derive(Clone, Debug)]
pub struct Port {
    pub range: TextRange,
    pub name: Option<Spanned<String>>,
    pub port: Option<Spanned<u64>>,
    pub protocol: Option<Spanned<String>>,
}

#[derive(Clone, Debug)]
pub struct Endpoint {
    pub range: TextRange,
    pub name: Option<Spanned<String>>,
    pub port_name: Option<Spanned<String>>,
    pub protocol: Option<Spanned<String>>,
    pub kind: Option<Spanned<String>>,
    pub scope: Option<Spanned<String>>,
}

#[derive(Clone, Debug)]
pub enum ProbeAction {
    Exec {
        command: Vec<Spanned<String>>,
    },
    HttpGet {
        path: Option<Spanned<String>>,
        port: Option<Spanned<u64>>,
        scheme: Option<Spanned<String>>,
        /// `http-headers`: name and value.
        headers: Vec<(Spanned<String>, Spanned<String>)>,
    },
    TcpSocket {
        port: Option<Spanned<u64>>,
    },
    Grpc {
        port: Option<Spanned<u64>>,
        service: Option<Spanned<String>>,
    },
}

#[derive(Clone, Debug)]
pub struct Probe {
    pub range: TextRange,
    pub action: Option<ProbeAction>,
    /// The Kubernetes-style timing keys as written (`None`: not given).
    pub initial_delay_seconds: Option<Spanned<u64>>,
    pub period_seconds: Option<Spanned<u64>>,
    pub timeout_seconds: Option<Spanned<u64>>,
    pub success_threshold: Option<Spanned<u64>>,
    pub failure_threshold: Option<Spanned<u64>>,
}

#[derive(Clone, Debug)]
pub struct Volume {
    pub key: Spanned<String>,
    pub range: TextRange,
    pub reference: Option<Spanned<VolumeRef>>,
    pub use_: Option<Spanned<String>>,
    pub name: Option<Spanned<String>>,
    pub size: Option<Spanned<ByteSize>>,
    pub annotations: Vec<KeyValue>,
    pub ingress: Vec<Transfer>,
    pub egress: Vec<Transfer>,
}

#[derive(Clone, Debug)]
pub struct TransferUri {
    pub range: TextRange,
    pub uri: Option<Spanned<String>>,
    pub secret: Option<Spanned<SecretRef>>,
}

#[derive(Clone, Debug)]
pub struct Transfer {
    pub range: TextRange,
    pub source: Option<TransferUri>,
    pub destination: Option<TransferUri>,
    pub policy: Option<Policy>,
}

/// `defaults.job`.
#[derive(Clone, Debug, Default)]
pub struct DefaultsJob {
    pub range: TextRange,
    /// Shared, not copied, by the effective environment of every job (`TaskFacts::env`).
    pub env: Arc<[EnvVar]>,
    pub mounts: Vec<Mount>,
    pub policy: Option<Policy>,
    pub resource: Option<Resource>,
}

// A 50 MB Fuzzfile has about 100,000 tasks, all held until the analysis ends: a field that makes
// a task grow fails the build here instead of showing only as a bigger run. The rare parts
// (multinode, task-array, network, readiness-probe, the image's secrets, cwd, persist) are
// boxed; 1,520 bytes a task before, 912 with the image's secrets inline, 800 with `cwd` and
// `persist` inline.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Task>() <= 752);
// Every `env` entry of every task pays for it, once: the semantics layer's effective
// environment of a task shares the model's entries (`Arc`), it copied them before. 160 bytes
// with a copy of the whole entry's text, 136 with a `String` for name and value each and the
// secret inline.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<EnvVar>() <= ENV_VAR_SIZE);
#[cfg(target_pointer_width = "64")]
const ENV_VAR_SIZE: usize = 80;
