//! ## What it does
//! Reports `NVIDIA_IMEX_CHANNELS=all` (or a list in which `all` decides, such as `0,all`) in
//! the environment of a job (its own `env` or `defaults.job.env`). The fix writes `0`, the
//! channel Fuzzball grants.
//!
//! Fix safety: unsafe: it changes the IMEX channels the job gets.
//!
//! ## Why is this bad?
//! `all` does not mean the same thing on every node, and neither meaning is what a job wants:
//! - The NVIDIA Container Toolkit, which reads the variable when the container is created,
//!   grants no channel for `all` since release 1.17.3 (`imexChannelsFromEnvVar` in
//!   `internal/config/image/cuda_image.go` returns none; commit e188090a). The container then
//!   has no IMEX channel, and NCCL 2.27.3 and later stop at start-up on Multi-Node NVLink
//!   nodes (`MNNVL ... is available but not working on this system`).
//! - Where `all` is honoured (the toolkit's CDI mode makes the channel id `all` into every
//!   `/dev/nvidia-caps-imex-channels/channel*` of the host, `pkg/nvcdi/lib-imex.go`; the launch
//!   plan gives the container that whole directory), the job holds every channel of its NVLink
//!   domain. Channels are the unit of isolation of IMEX: every job that holds a channel can
//!   import the GPU memory exported on it, so the job shares a trust domain with every other
//!   job of the domain, whichever channel they were given.
//!
//! How Fuzzball itself reads `all` is not documented; it documents `NVIDIA_IMEX_CHANNELS=0`.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     env:
//!       - NVIDIA_IMEX_CHANNELS=all
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB200}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     env:
//!       - NVIDIA_IMEX_CHANNELS=0
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB200}
//! ```

use super::{Check, Context, TaskContext};
use crate::devices::{imex_channels, imex_entry, ImexChannels};
use crate::gpu::entry_range;
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};

declare_rule! {
    pub struct ImexChannelsAll {
        code: "FZ314",
        name: "imex-channels-all",
        severity: Warning,
        category: Gpu,
        summary: "`NVIDIA_IMEX_CHANNELS=all`: no channel under the NVIDIA Container Toolkit, or every channel of the NVLink domain where honoured",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

impl Check for ImexChannelsAll {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        if task.kind != fuzzfile_model::TaskKind::Job {
            return;
        }
        let Some(e) = imex_entry(facts.facts) else {
            return;
        };
        if imex_channels(&e.value) != ImexChannels::All {
            return;
        }
        let whose = if e.from_defaults {
            format!(
                "`NVIDIA_IMEX_CHANNELS={}` from `defaults.job.env` applies to job `{}`",
                e.value, task.name.value
            )
        } else {
            format!(
                "`NVIDIA_IMEX_CHANNELS={}` in job `{}`",
                e.value, task.name.value
            )
        };
        let mut d = Diagnostic::new(
            Rule::ImexChannelsAll,
            entry_range(e),
            format!(
                "{whose}: the NVIDIA Container Toolkit (1.17.3 and later) grants no IMEX channel for `all`, and where `all` is honoured the job holds every channel of its NVLink domain"
            ),
        )
        .with_help(
            "request one channel by number (`NVIDIA_IMEX_CHANNELS=0`, the channel Fuzzball grants): without a channel NCCL 2.27.3 and later stop on Multi-Node NVLink nodes, and with every channel the job can import the GPU memory any job of the domain shares",
        );
        if e.value_range.slice(ctx.text) == e.value {
            d = d.with_fix(Fix::replace("Request channel 0", e.value_range, "0"));
        }
        out.push(d);
    }
}
