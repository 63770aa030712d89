//! `fuzz_runner`: execute a launch plan on one node.
//!
//! [`prepare`] checks a [`Plan`] against what this runner can do and resolves it against a run
//! directory (nothing is created or started; a refusal is [`RunError::Plan`]). [`execute`]
//! runs it: jobs start when every dependency FINISHED, independent jobs run concurrently, a
//! failed dependency skips its dependents, task arrays run at most `concurrency` tasks at once.
//!
//! Invariant: the runner owns every child process it starts and leaves none behind. Each
//! instance runs as the leader of its own process group; when it exits, times out or the run
//! is stopped, the whole group is signalled (SIGTERM, then SIGKILL after the grace period;
//! after a normal exit, whatever is left in the group gets SIGKILL).

pub mod bridge;
mod exec;
mod expand;
mod guard;
pub mod limits;
pub mod multinode;
pub mod node;
pub mod placement;
mod preflight;
mod prepare;
mod probe;
mod reaper;
pub mod report;
pub mod sandbox;
mod status;

pub use exec::{execute, Outcome, Status};
pub use prepare::{prepare, Instance, Job, Prepared, ServiceSpec};

use fuzzfile_plan::Plan;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The container runtime instances run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeKind {
    /// Apptainer (or Singularity), then podman, then docker, else host: see [`detect_runtime`].
    Auto,
    Host,
    Apptainer,
    Podman,
    Docker,
}

impl RuntimeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeKind::Auto => "auto",
            RuntimeKind::Host => "host",
            RuntimeKind::Apptainer => "apptainer",
            RuntimeKind::Podman => "podman",
            RuntimeKind::Docker => "docker",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    pub runtime: RuntimeKind,
    /// Between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// Keep the ephemeral volume directories after the run.
    pub keep: bool,
    /// Write JSON-lines events here.
    pub events: Option<PathBuf>,
    /// Host directories of volumes (`--volume NAME=PATH`): required for persistent volumes.
    pub volumes: BTreeMap<String, PathBuf>,
    /// Secret values by `scope/name` (`--secrets FILE`).
    pub secrets: BTreeMap<String, String>,
    /// A service whose readiness probe has not passed after this long fails.
    pub ready_timeout: Duration,
    /// Show the live status line (on a terminal).
    pub status_line: bool,
    /// Extra CA certificates (PEM) for `https://` ingress.
    pub ca_file: Option<PathBuf>,
    /// How multinode jobs reach their nodes.
    pub multinode: MultinodeOptions,
    /// The node's cores, memory and GPUs ([`node::detect`]): instances are placed within them
    /// ([`placement`]) and one that can never fit is refused. `None`: no placement, every
    /// instance starts when its dependencies allow.
    pub node: Option<node::NodeResources>,
}

/// How multinode jobs run (see [`multinode`]).
#[derive(Clone, Debug)]
pub struct MultinodeOptions {
    pub launcher: multinode::Launcher,
    /// `ssh -F FILE` for the `ssh` launcher.
    pub ssh_config: Option<PathBuf>,
    /// `local` launcher: each host is a network namespace of that name.
    pub local_netns: bool,
    /// Forward every node's output, whatever `MULTINODE_WRAPPER_FORWARD_STREAMS` says.
    pub forward_always: bool,
    /// `exec_all` fails when a node has not started within this.
    pub startup_timeout: Duration,
    /// The executable the helpers (`exec_all`, the SSH wrapper) call back: `fuzz`.
    pub helper_exe: Option<PathBuf>,
}

impl Default for MultinodeOptions {
    fn default() -> Self {
        MultinodeOptions {
            launcher: multinode::Launcher::Local,
            ssh_config: None,
            local_netns: false,
            forward_always: false,
            startup_timeout: Duration::from_secs(120),
            helper_exe: None,
        }
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            runtime: RuntimeKind::Host,
            grace: Duration::from_secs(5),
            keep: false,
            events: None,
            volumes: BTreeMap::new(),
            secrets: BTreeMap::new(),
            ready_timeout: Duration::from_secs(300),
            status_line: false,
            ca_file: None,
            multinode: MultinodeOptions::default(),
            node: None,
        }
    }
}

/// Why a run could not start.
#[derive(Debug)]
pub enum RunError {
    /// The plan asks for something this runner cannot do.
    Plan(String),
    /// The run directory, a file or the events file could not be created.
    Io(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Plan(m) => write!(f, "the plan cannot run: {m}"),
            RunError::Io(m) => write!(f, "{m}"),
        }
    }
}

/// The first executable called `name` on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// What `--runtime auto` picks on this node, and why (one line for people).
///
/// Apptainer (or Singularity under its old name), then podman, then docker; docker counts
/// only when its engine is reachable (a socket at `/var/run/docker.sock` or `DOCKER_HOST`),
/// since its client alone cannot run anything. Else the host runtime.
pub fn detect_runtime() -> (RuntimeKind, String) {
    detect_runtime_with(
        &which,
        Path::new("/var/run/docker.sock").exists() || std::env::var_os("DOCKER_HOST").is_some(),
    )
}

fn detect_runtime_with(
    which: &dyn Fn(&str) -> Option<PathBuf>,
    docker_engine: bool,
) -> (RuntimeKind, String) {
    for (name, kind) in [
        ("apptainer", RuntimeKind::Apptainer),
        ("singularity", RuntimeKind::Apptainer),
        ("podman", RuntimeKind::Podman),
    ] {
        if let Some(p) = which(name) {
            return (kind, format!("{} ({})", kind.as_str(), p.display()));
        }
    }
    match which("docker") {
        Some(p) if docker_engine => (RuntimeKind::Docker, format!("docker ({})", p.display())),
        Some(p) => (
            RuntimeKind::Host,
            format!(
                "host: {} is installed but no docker engine is reachable, and neither apptainer nor podman is installed",
                p.display()
            ),
        ),
        None => (
            RuntimeKind::Host,
            "host: none of apptainer, singularity, podman or docker is installed".into(),
        ),
    }
}

/// A run id: unique enough on one node (time and process id), used as `FB_WORKFLOW_ID`.
pub fn run_id() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    format!("local-{}-{}", now.as_millis(), std::process::id())
}

/// Read a plan from JSON.
pub fn read_plan(text: &str) -> Result<Plan, RunError> {
    serde_json::from_str(text).map_err(|e| RunError::Plan(format!("not a launch plan: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(present: &'static [&'static str]) -> impl Fn(&str) -> Option<PathBuf> {
        move |n| {
            present
                .contains(&n)
                .then(|| PathBuf::from(format!("/usr/bin/{n}")))
        }
    }

    #[test]
    fn auto_prefers_apptainer_then_podman_then_a_reachable_docker() {
        let pick = |p, engine| detect_runtime_with(&fake(p), engine).0;
        assert_eq!(
            pick(&["docker", "podman", "apptainer"], true),
            RuntimeKind::Apptainer
        );
        assert_eq!(
            pick(&["singularity", "podman"], true),
            RuntimeKind::Apptainer
        );
        assert_eq!(pick(&["docker", "podman"], true), RuntimeKind::Podman);
        assert_eq!(pick(&["docker"], true), RuntimeKind::Docker);
        assert_eq!(pick(&[], true), RuntimeKind::Host);
    }

    #[test]
    fn a_docker_client_without_an_engine_is_not_a_runtime() {
        let (kind, why) = detect_runtime_with(&fake(&["docker"]), false);
        assert_eq!(kind, RuntimeKind::Host);
        assert!(why.contains("no docker engine is reachable"), "{why}");
    }
}
pub mod transfer;

mod explain;
pub mod hosts;
mod redact;
pub mod safe_fs;
pub mod secrets;
pub mod validate;
