//! ## What it does
//! Reports a key that appears twice in one mapping, at any depth, and points at the first.
//!
//! ## Why is this bad?
//! YAML requires unique keys. Parsers that accept duplicates keep only one of the values, so
//! half of what was written is silently lost: often a second `env:` or `resource:` block added
//! further down a long job.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     env: [NCCL_DEBUG=INFO]
//!     command: [torchrun, train.py]
//!     env: [OMP_NUM_THREADS=8]
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     env: [NCCL_DEBUG=INFO, OMP_NUM_THREADS=8]
//!     command: [torchrun, train.py]
//! ```
//!
//! Detected while building the model (`fuzzfile_model`).

declare_rule! {
    pub struct DuplicateKey {
        code: "FZ013",
        name: "duplicate-key",
        severity: Error,
        category: Schema,
        summary: "The same key appears twice in one mapping",
        fix: None,
    }
}

/// Found by the model walk (`fuzzfile_model::build`), which sees every key of every
/// mapping: it has no hook of its own.
impl super::Check for DuplicateKey {}
