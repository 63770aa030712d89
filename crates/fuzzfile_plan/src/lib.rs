//! Lowering a checked Fuzzfile to a launch plan.
//!
//! [`lower`] turns an [`Analysis`] without errors into a [`Plan`]: for every job, task and
//! node, the argv, the environment with the source of every value, mounts, files to write,
//! the image and each container runtime's command line, resources, the timeout, and the world
//! size of the launchers it recognised. [`to_json`] writes it as deterministic JSON (the same
//! input gives the same bytes), described by [`schema`] (committed as
//! `schemas/launch-plan.schema.json`). [`streamed`] and [`write_json_streamed`] write the same
//! bytes without holding the plan: one job's plan at a time (what `fuzz plan` does). [`render::dot`] and [`render::mermaid`] draw the job
//! graph.
//!
//! Invariant: the plan is data. Everything a runner does to start the workflow is in it; a
//! runner adds nothing the plan does not show (its placeholders are listed in the plan).
//! Pure functions, no I/O.

mod lower;
pub mod render;
mod runtime;
pub mod types;

pub use lower::StreamedPlan;
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

/// The plan of `analysis`, checked for every refusal of [`lower`] (the same refusal for the same
/// analysis) but not lowered: [`StreamedPlan::write_json`] then lowers and writes one job (or
/// service) at a time, so that memory holds the analysis and one task's plan, not the whole
/// [`Plan`] (about 10 KB a job). A refusal is known before the output is opened.
pub fn streamed<'a>(
    analysis: &'a Analysis,
    options: &'a PlanOptions,
) -> Result<StreamedPlan<'a>, Refusal> {
    lower::streamed(analysis, options)
}

impl StreamedPlan<'_> {
    /// The bytes of `to_json(&lower(..)?)`, written to `out` as each part is lowered. `out`
    /// should be buffered.
    pub fn write_json(&self, out: impl std::io::Write) -> std::io::Result<()> {
        write_pretty_json(self, out)
    }
}

/// Why [`write_json_streamed`] wrote no plan, or not all of it.
#[derive(Debug)]
pub enum StreamedPlanError {
    /// Refused before anything was written.
    Refused(Refusal),
    /// The writer failed (part of the plan may have been written).
    Write(std::io::Error),
}

impl fmt::Display for StreamedPlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StreamedPlanError::Refused(r) => r.fmt(f),
            StreamedPlanError::Write(e) => write!(f, "cannot write the plan: {e}"),
        }
    }
}

impl std::error::Error for StreamedPlanError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StreamedPlanError::Refused(_) => None,
            StreamedPlanError::Write(e) => Some(e),
        }
    }
}

/// [`streamed`] then [`StreamedPlan::write_json`]: the bytes of `to_json(&lower(..)?)`, or the
/// refusal of [`lower`] with nothing written to `out`.
pub fn write_json_streamed(
    analysis: &Analysis,
    options: &PlanOptions,
    out: impl std::io::Write,
) -> Result<(), StreamedPlanError> {
    streamed(analysis, options)
        .map_err(StreamedPlanError::Refused)?
        .write_json(out)
        .map_err(StreamedPlanError::Write)
}

/// The plan as pretty JSON with a final newline; byte-identical for the same plan.
pub fn to_json(plan: &Plan) -> String {
    let mut s = serde_json::to_string_pretty(plan).unwrap_or_default();
    s.push('\n');
    s
}

/// The plan as [`to_json`] gives it, written to `out` as it is serialised (no copy of the whole
/// text in memory: a plan of 10,000 jobs is about 50 MB of JSON). `out` should be buffered.
pub fn write_json(plan: &Plan, out: impl std::io::Write) -> std::io::Result<()> {
    write_pretty_json(plan, out)
}

/// `value` as pretty JSON with a final newline, as [`to_json`] writes a plan, into `out`.
fn write_pretty_json(
    value: &impl serde::Serialize,
    mut out: impl std::io::Write,
) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut out, value)?;
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
