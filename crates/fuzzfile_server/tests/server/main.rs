//! End-to-end tests of the language server, in process: a client speaks JSON-RPC to the
//! server running on `lsp_server::Connection::memory()`, as an editor does over stdio.
#![allow(clippy::unwrap_used)]

mod common;

mod actions;
mod features;
mod launches;
mod navigation;
mod robustness;
mod sync;

/// A Fuzzfile with non-ASCII text before the findings, so a position encoding mistake
/// moves every range; a torchrun with 8 processes on 4 GPUs (an error with a fix), an
/// unknown key (a fix), and a deprecated `requires`.
pub const TRAIN: &str = "# Entraînement réparti 🚀 sur deux nœuds\nversion: v4\njobs:\n  prep:\n    image: {uri: docker://alpine:3.20}\n    command: [echo, \"préparé ✓\"]\n  train:\n    image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}\n    requires: [prep]\n    env:\n      - NCCL_DEBUG=WARN\n      - NP=8\n    command: [torchrun, --standalone, --nproc-per-node=8, /opt/train.py]\n    resource:\n      devices: {nvidia.com/gpu: 4}\n    polcy:\n      timeout: {execute: 1h}\n";
