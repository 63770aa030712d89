//! The catalog's `values.yaml`: typed value declarations with their defaults, and the
//! overrides of a render (`--values FILE`, `--set NAME=VALUE`).
