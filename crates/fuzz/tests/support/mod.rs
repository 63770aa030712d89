//! Helpers shared by the integration tests of `fuzz`: include with `mod support;`.
//!
//! - [`netns`]: several hosts on one machine (network namespaces on a bridge, each with its
//!   own address and host name), an `sshd` on each of them, and the skip-or-fail rule for
//!   tests that need root.

#![allow(dead_code)]

pub mod netns;

pub use netns::{output_within, require, Hosts, Sshd};
