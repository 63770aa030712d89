//! ## What it does
//! Reports a required key that is absent: `version` (an empty file, or one of comments only,
//! is not a Fuzzfile), at least one job or service, a job's
//! `image` and `image.uri`, `multinode.nodes` and `multinode.implementation`, `task-array`
//! `start` and `end`, a `depends-on` item's `name`, a mount's `location` (v1) or `volume` (v4),
//! a transfer's `source`/`destination` and their `uri`, a port's `name` and `port`, an
//! endpoint's `name` and `port-name`, and a readiness probe's action.
//!
//! Fix safety: unsafe: adding `version: v4` decides which Fuzzfile syntax the whole file is
//! read with.
//!
//! ## Why is this bad?
//! Fuzzball rejects the workflow, or (for an empty egress destination) fails when the jobs
//! are done and the results are to be saved.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}
//!     command: [torchrun, train.py]
//!     multinode:
//!       nodes: 2
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}
//!     command: [torchrun, train.py]
//!     multinode:
//!       nodes: 2
//!       implementation: generic
//! ```
//!
//! Detected while building the model (`fuzzfile_model`).

declare_rule! {
    pub struct MissingField {
        code: "FZ012",
        name: "missing-field",
        severity: Error,
        category: Schema,
        summary: "A required key is absent",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

/// Found by the model walk (`fuzzfile_model::build`), which knows which required keys a
/// mapping lacks as it reads it: it has no hook of its own.
impl super::Check for MissingField {}
