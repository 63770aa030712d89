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

mod exec;
mod prepare;

pub use exec::{execute, Outcome, Status};
pub use prepare::{prepare, Instance, Job, Prepared};

use fuzzfile_plan::Plan;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// The container runtime instances run in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeKind {
    Host,
    Apptainer,
    Podman,
    Docker,
}

impl RuntimeKind {
    pub fn as_str(self) -> &'static str {
        match self {
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
}

impl Default for Options {
    fn default() -> Self {
        Options {
            runtime: RuntimeKind::Host,
            grace: Duration::from_secs(5),
            keep: false,
            events: None,
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
