//! ## What it does
//! Reports a job or service with neither `command` nor `script`.
//!
//! ## Why is this bad?
//! The container has nothing to run.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   hello:
//!     image: {uri: docker://alpine:3.20}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   hello:
//!     image: {uri: docker://alpine:3.20}
//!     script: |
//!       #!/bin/sh
//!       echo hello
//! ```
//!
//! Detected while building the model (`fuzzfile_model`).
