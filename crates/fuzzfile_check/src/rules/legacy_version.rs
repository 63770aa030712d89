//! ## What it does
//! Notes, as information, that a file uses `version: v1`, the legacy syntax.
//!
//! ## Why is this bad?
//! Fuzzball 4 still runs v1 workflows, upgrading them on a best-effort basis, but new workflows
//! should use `v4`. The upgrade changes meaning in places: v4 mounts are keyed by container
//! path, and a v4 volume `name` selects an existing persistent volume.
//!
//! ## Example
//! ```yaml
//! version: v1
//! volumes:
//!   data:
//!     reference: volume://user/ephemeral
//! jobs:
//!   hello:
//!     image: {uri: docker://alpine:3.20}
//!     command: [ls, /data]
//!     mounts:
//!       data: {location: /data}
//! ```
//!
//! ## Use instead
//! ```yaml
//! version: v4
//! volumes:
//!   data:
//!     reference: volume://user/ephemeral
//! jobs:
//!   hello:
//!     image: {uri: docker://alpine:3.20}
//!     command: [ls, /data]
//!     mounts:
//!       /data: {volume: data}
//! ```

use super::{Check, Context};
use fuzzfile_diagnostics::{Diagnostic, Rule};
use fuzzfile_model::Version;

declare_rule! {
    pub struct LegacyVersion {
        code: "FZ003",
        name: "legacy-version",
        severity: Info,
        category: Schema,
        summary: "The file uses the legacy `v1` syntax; new workflows should use `v4`",
        fix: None,
    }
}

impl Check for LegacyVersion {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        let Some(v) = ctx
            .model
            .version
            .as_ref()
            .filter(|v| v.value == Version::V1)
        else {
            return;
        };
        out.push(
            Diagnostic::new(Rule::LegacyVersion, v.range, "`v1` is the legacy Fuzzfile syntax")
                .with_help("new workflows should use `version: v4` (Fuzzball upgrades v1 files on a best-effort basis); in v4, mounts are keyed by container path"),
        );
    }
}
