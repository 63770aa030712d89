//! Helpers shared by the integration tests of `fuzz`: include with `mod support;`.
//!
//! - [`netns`]: several hosts on one machine (network namespaces on a bridge, each with its
//!   own address and host name), an `sshd` on each of them, and the skip-or-fail rule for
//!   tests that need root.
//! - [`slurm`]: a Slurm cluster on this machine (scripts/slurm-local.sh).

#![allow(dead_code, unused_imports)]

pub mod netns;
pub mod slurm;

pub use netns::{output_within, require, Hosts, Sshd};
pub use slurm::LocalSlurm;
