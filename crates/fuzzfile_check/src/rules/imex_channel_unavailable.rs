//! ## What it does
//! With a cluster profile, reports a GPU job whose environment (its own `env` or
//! `defaults.job.env`) asks for an IMEX channel (`NVIDIA_IMEX_CHANNELS=0`, a list of channel
//! numbers, or `all`) on a cluster that cannot give it one or cannot use it:
//! - `imex = false`: IMEX does not run on the cluster's nodes (error);
//! - `imex = true` but `mnnvl = false`: the nodes share no Multi-Node NVLink domain, so a
//!   channel gains nothing (warning).
//!
//! The channels asked for are read as the NVIDIA Container Toolkit reads the variable
//! (`void`, `none` and an empty value ask for none; a value with `$` is not judged), the same
//! reading the launch plan uses for the channel devices it adds.
//!
//! ## Why is this bad?
//! Fuzzball adds the IMEX channel device (`/dev/nvidia-caps-imex-channels/channel0`) to the
//! containers of a job that sets `NVIDIA_IMEX_CHANNELS`, and a job that lands on nodes without
//! IMEX fails when its containers are created (Fuzzball's distributed training page). On a
//! cluster without IMEX every node is such a node: the job never starts. Where IMEX runs but
//! the nodes share no NVLink domain, NCCL uses the network between nodes whatever the channel:
//! the job only joins the channel's trust domain (see `imex-shared-trust-domain`).
//!
//! ## Example
//! On `examples/clusters/h100-ib.toml` (`imex = false`, `mnnvl = false`):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h100-ib.toml
//! jobs:
//!   train:
//!     env:
//!       - NVIDIA_IMEX_CHANNELS=0
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: H100}
//! ```
//!
//! ## Use instead
//! Leave the variable out where there is no IMEX; NCCL uses the network between nodes (on a
//! Multi-Node NVLink cluster without IMEX, say so with `NCCL_MNNVL_ENABLE=0`):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/h100-ib.toml
//! jobs:
//!   train:
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: H100}
//! ```
//!
//! ## Options
//! Reads `imex` and `mnnvl` from the cluster profile; silent without one.

use super::{Check, Context, TaskContext};
use crate::devices::{imex_channels, imex_entry, ImexChannels};
use crate::gpu::{entry_range, uses_gpus};
use fuzzfile_diagnostics::{Diagnostic, Rule, Severity};

declare_rule! {
    pub struct ImexChannelUnavailable {
        code: "FZ312",
        name: "imex-channel-unavailable",
        severity: Error,
        category: Gpu,
        summary: "An IMEX channel requested on a cluster whose profile has no IMEX, or no Multi-Node NVLink to use it",
        fix: None,
    }
}

/// `channel 0`, `channels 0 and 1`, `every channel`.
fn channels_phrase(c: &ImexChannels) -> String {
    match c {
        ImexChannels::Numbered(v) if v.len() == 1 => format!("IMEX channel {}", v[0]),
        ImexChannels::Numbered(v) => {
            let names: Vec<String> = v.iter().map(u32::to_string).collect();
            format!("IMEX channels {}", names.join(", "))
        }
        _ => "every IMEX channel of its nodes".into(),
    }
}

impl Check for ImexChannelUnavailable {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        if task.kind != fuzzfile_model::TaskKind::Job {
            return;
        }
        let Some(profile) = ctx.profile else { return };
        if profile.imex && profile.mnnvl {
            return;
        }
        let Some(e) = imex_entry(facts.facts) else {
            return;
        };
        let channels = imex_channels(&e.value);
        if !channels.requests_a_channel() || !uses_gpus(ctx, task, &facts.env) {
            return;
        }
        let cluster = profile.described();
        let asked = channels_phrase(&channels);
        let d = if !profile.imex {
            Diagnostic::new(
                Rule::ImexChannelUnavailable,
                entry_range(e),
                format!(
                    "job `{}` asks for {asked}, but IMEX does not run on {cluster} (`imex = false` in its profile): its containers cannot be created, and it never starts",
                    task.name.value
                ),
            )
            .with_help(if profile.mnnvl {
                "remove `NVIDIA_IMEX_CHANNELS` and set `NCCL_MNNVL_ENABLE=0`, so NCCL uses the network between nodes; or run the job on a cluster where IMEX runs"
            } else {
                "remove `NVIDIA_IMEX_CHANNELS`: without Multi-Node NVLink, NCCL uses the network between nodes and needs no IMEX channel"
            })
        } else {
            Diagnostic::new(
                Rule::ImexChannelUnavailable,
                entry_range(e),
                format!(
                    "job `{}` asks for {asked}, but the nodes of {cluster} share no Multi-Node NVLink domain (`mnnvl = false` in its profile): the channel gains nothing, NCCL uses the network between nodes",
                    task.name.value
                ),
            )
            .with_severity(Severity::Warning)
            .with_help(
                "remove `NVIDIA_IMEX_CHANNELS`; a channel only puts the job in one trust domain with the other jobs that hold it",
            )
        };
        out.push(d);
    }
}
