//! ## What it does
//! Reports keys that Fuzzball still accepts but has replaced: `requires` (by `depends-on`),
//! volume `type` and `path` (by `reference`), and the legacy `secrets` maps.
//!
//! ## Why is this bad?
//! `requires` is ignored as soon as a job also has `depends-on`, which makes mixed files
//! misleading; the other keys are kept only for old workflows and may stop working.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   analyse:
//!     requires: [download]
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   analyse:
//!     depends-on:
//!       - name: download
//!         status: FINISHED
//! ```

use super::{Check, Context};
use fuzzfile_diagnostics::{Diagnostic, Rule};
use fuzzfile_model::schema::Status;

declare_rule! {
    pub struct DeprecatedKey {
        code: "FZ014",
        name: "deprecated-key",
        severity: Warning,
        category: Schema,
        summary: "A key that Fuzzball still accepts but has replaced or stopped honouring",
        fix: None,
    }
}

impl Check for DeprecatedKey {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        // The walk records each key the schema marks deprecated at the place it was read;
        // the schema says what replaced it.
        for k in &ctx.model.deprecated_keys {
            if let Some(Status::Deprecated(why)) = k.place.key(&k.key.value).map(|s| s.status) {
                out.push(Diagnostic::new(
                    Rule::DeprecatedKey,
                    k.key.range,
                    why.to_string(),
                ));
            }
        }
    }
}
