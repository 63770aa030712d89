//! Lowering a checked Fuzzfile to a launch plan.
//!
//! [`lower`] turns an [`Analysis`] without errors into a [`Plan`]: for every job, task and
//! node, the argv, the environment with the source of every value, mounts, files to write,
//! the image and each container runtime's command line, resources, the timeout, and the world
//! size of the launchers it recognised. [`to_json`] writes it as deterministic JSON (the same
//! input gives the same bytes), described by [`schema`] (committed as
//! `schemas/launch-plan.schema.json`). [`render::dot`] and [`render::mermaid`] draw the job
//! graph.
//!
//! Invariant: the plan is data. Everything a runner does to start the workflow is in it; a
//! runner adds nothing the plan does not show (its placeholders are listed in the plan).
//! Pure functions, no I/O.

mod lower;
pub mod render;
mod runtime;
pub mod types;

pub use types::*;

use fuzzfile_check::profile::ClusterProfile;
use fuzzfile_check::{Analysis, Diagnostic};
use std::fmt;

/// The most instances (tasks of a task array, nodes of a multinode job) one task may have.
pub const MAX_INSTANCES: u64 = 10_000;

/// What the lowering needs beyond the analysis.
#[derive(Clone, Debug, Default)]
pub struct PlanOptions {
    /// The Fuzzfile's name as it should appear in the plan (`pipeline.fz`).
    pub source: String,
    /// The hosts multinode jobs run on, rank order (`--hosts`); default `<job>-<rank>`.
    pub hosts: Option<Vec<String>>,
    /// The cluster profile the analysis used, recorded in the plan.
    pub profile: Option<ClusterProfile>,
}

/// Why a Fuzzfile has no plan.
#[derive(Clone, Debug)]
pub enum Refusal {
    /// The analysis found errors.
    Errors(Vec<Diagnostic>),
    /// A multinode job needs more hosts than `--hosts` gave.
    Hosts {
        task: String,
        nodes: u64,
        hosts: usize,
    },
    /// Something the lowering cannot express.
    Unsupported { task: String, message: String },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Errors(d) => write!(
                f,
                "{} error{}: not plannable",
                d.len(),
                if d.len() == 1 { "" } else { "s" }
            ),
            Refusal::Hosts { task, nodes, hosts } => write!(
                f,
                "`{task}` runs on {nodes} nodes but --hosts names {hosts}; name at least {nodes} hosts"
            ),
            Refusal::Unsupported { task, message } => {
                write!(f, "`{task}` cannot be planned: {message}")
            }
        }
    }
}

/// Lower an analysed Fuzzfile. Refused when the analysis has an error.
pub fn lower(analysis: &Analysis, options: &PlanOptions) -> Result<Plan, Refusal> {
    lower::lower(analysis, options)
}

/// The plan as pretty JSON with a final newline; byte-identical for the same plan.
pub fn to_json(plan: &Plan) -> String {
    let mut s = serde_json::to_string_pretty(plan).unwrap_or_default();
    s.push('\n');
    s
}

/// The plan as [`to_json`] gives it, written to `out` as it is serialised (no copy of the whole
/// text in memory: a plan of 10,000 jobs is about 50 MB of JSON). `out` should be buffered.
pub fn write_json(plan: &Plan, mut out: impl std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut out, plan)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// The JSON Schema of the plan, as committed in `schemas/launch-plan.schema.json`.
pub fn schema() -> String {
    let schema = schemars::schema_for!(Plan);
    let mut s = serde_json::to_string_pretty(&schema).unwrap_or_default();
    s.push('\n');
    s
}
