//! ## What it does
//! Notes, once per workflow, at the first `NVIDIA_IMEX_CHANNELS` entry, that an IMEX channel is
//! shared: every job granted the same channel in one NVLink domain is in one trust domain.
//! Nothing needs fixing; acknowledge it with a suppression comment, or use the network only
//! (`NCCL_MNNVL_ENABLE=0`, no IMEX channel) for jobs whose memory must stay private.
//!
//! ## Why is this bad?
//! IMEX exports GPU memory between nodes of an NVLink domain, and access is granted per
//! channel: any job that holds channel 0 in that domain can import memory that another job
//! shares through IMEX. Fuzzball places a job inside one domain when it can, so other tenants'
//! jobs on the same rack hold the same channel.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     env:
//!       - NVIDIA_IMEX_CHANNELS=0
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     env:
//!       - NVIDIA_IMEX_CHANNELS=0   # fuzzlint: ignore[imex-shared-trust-domain] one team owns this domain
//! ```

use super::{Check, Context};
use crate::gpu::entry_range;
use fuzzfile_diagnostics::{Diagnostic, Rule};

declare_rule! {
    pub struct ImexSharedTrustDomain {
        code: "FZ304",
        name: "imex-shared-trust-domain",
        severity: Info,
        category: Gpu,
        summary: "Jobs sharing IMEX channel 0 in an NVLink domain share one trust domain",
        fix: None,
    }
}

impl Check for ImexSharedTrustDomain {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        let defaults = ctx.model.defaults.iter().flat_map(|d| d.env.iter());
        let first = defaults
            .chain(ctx.model.tasks().flat_map(|t| t.env.iter()))
            .filter(|e| e.name == "NVIDIA_IMEX_CHANNELS" && !e.value.trim().is_empty())
            .min_by_key(|e| e.name_range.start);
        let Some(e) = first else { return };
        out.push(
            Diagnostic::new(
                Rule::ImexSharedTrustDomain,
                entry_range(e),
                format!(
                    "IMEX channel `{}` is shared: jobs granted it in one NVLink domain can import the GPU memory each other shares through IMEX",
                    e.value.trim()
                ),
            )
            .with_help(
                "treat the NVLink domain as one trust domain; for data that must stay private, use the network only (`NCCL_MNNVL_ENABLE=0`, no IMEX channel)",
            ),
        );
    }
}
