//! The rules. Each file is one rule: its `//!` comment is the rule's documentation (What it
//! does · Why is this bad? · Example · Use instead), printed by `fuzzlint rule NAME` and
//! generated into docs/rules/. Rules found while building the model (`unknown-key`,
//! `invalid-value`, ...) have their documentation here too, and their detection in
//! `fuzzfile_model`.

use fuzzfile_diagnostics::{Diagnostic, Rule};
use fuzzfile_model::Fuzzfile;
use fuzzfile_syntax::Tree;

pub mod cluster_profile_missing;
pub mod command_and_script;
pub mod dependency_cycle;
pub mod deprecated_key;
pub mod duplicate_key;
pub mod duplicate_name;
pub mod gpu_product_ambiguous;
pub mod gpu_request_exceeds_node;
pub mod gpu_request_missing;
pub mod image_too_old_for_gpu;
pub mod imex_no_product_pin;
pub mod imex_shared_trust_domain;
pub mod invalid_value;
pub mod launcher_double_wrap;
pub mod legacy_version;
pub mod missing_field;
pub mod mpi_slots_not_gpus;
pub mod nccl_ib_hca_missing;
pub mod nccl_ib_hca_unknown;
pub mod nccl_invalid_value;
pub mod nccl_mnnvl_no_imex;
pub mod nccl_net_unavailable;
pub mod no_command;
pub mod policy_retry_ignored;
pub mod torch_distributed_launch_deprecated;
pub mod torchrun_missing_master_addr;
pub mod torchrun_missing_node_rank;
pub mod torchrun_nnodes_mismatch;
pub mod torchrun_nproc_mismatch;
pub mod torchrun_rdzv_incomplete;
pub mod torchrun_standalone_multinode;
pub mod unknown_key;
pub mod unknown_reference;
pub mod unsupported_version;
pub mod unused_suppression;
pub mod yaml_syntax;

/// What a rule sees.
pub struct Context<'a> {
    pub text: &'a str,
    pub tree: &'a Tree,
    pub model: &'a Fuzzfile,
    /// The cluster profile, when one is configured; rules that need cluster facts are silent
    /// without it.
    pub profile: Option<&'a crate::profile::ClusterProfile>,
    /// Launcher invocations of every job and service, by the task's body node: shell text is
    /// parsed once per analysis, not once per rule.
    pub launches:
        std::collections::HashMap<fuzzfile_syntax::NodeId, Vec<crate::launch::Invocation>>,
}

impl<'a> Context<'a> {
    pub fn new(
        text: &'a str,
        tree: &'a Tree,
        model: &'a Fuzzfile,
        profile: Option<&'a crate::profile::ClusterProfile>,
    ) -> Self {
        let launches = model
            .tasks()
            .map(|t| (t.body, crate::launch::invocations(text, tree, t)))
            .collect();
        Context {
            text,
            tree,
            model,
            profile,
            launches,
        }
    }

    /// The launcher invocations of `task`.
    pub fn invocations(&self, task: &fuzzfile_model::Task) -> &[crate::launch::Invocation] {
        self.launches.get(&task.body).map_or(&[], Vec::as_slice)
    }

    /// The torchrun (and `torch.distributed.run` / `.launch`) invocations of `task`, with their
    /// arguments parsed.
    pub fn torchruns(
        &self,
        task: &fuzzfile_model::Task,
    ) -> Vec<(&crate::launch::Invocation, crate::launch::TorchrunArgs)> {
        self.invocations(task)
            .iter()
            .filter(|i| {
                matches!(
                    i.launcher,
                    crate::launch::Launcher::Torchrun | crate::launch::Launcher::DistributedLaunch
                )
            })
            .map(|i| (i, crate::launch::torchrun_args(i)))
            .collect()
    }
}

/// Run every semantic rule over the model.
pub fn run_all(ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    unknown_reference::check(ctx, out);
    dependency_cycle::check(ctx, out);
    duplicate_name::check(ctx, out);
    invalid_value::check(ctx, out);
    policy_retry_ignored::check(ctx, out);
    // GPU, launcher and NCCL rules.
    torchrun_nproc_mismatch::check(ctx, out);
    torchrun_nnodes_mismatch::check(ctx, out);
    torchrun_standalone_multinode::check(ctx, out);
    torchrun_missing_node_rank::check(ctx, out);
    torchrun_missing_master_addr::check(ctx, out);
    torchrun_rdzv_incomplete::check(ctx, out);
    torch_distributed_launch_deprecated::check(ctx, out);
    launcher_double_wrap::check(ctx, out);
    mpi_slots_not_gpus::check(ctx, out);
    gpu_request_missing::check(ctx, out);
    nccl_ib_hca_missing::check(ctx, out);
    nccl_ib_hca_unknown::check(ctx, out);
    nccl_mnnvl_no_imex::check(ctx, out);
    imex_no_product_pin::check(ctx, out);
    imex_shared_trust_domain::check(ctx, out);
    nccl_invalid_value::check(ctx, out);
    nccl_net_unavailable::check(ctx, out);
    gpu_product_ambiguous::check(ctx, out);
    gpu_request_exceeds_node::check(ctx, out);
    image_too_old_for_gpu::check(ctx, out);
    cluster_profile_missing::check(ctx, out);
}

macro_rules! docs {
    ($($rule:ident => $file:literal,)*) => {
        fn source(rule: Rule) -> &'static str {
            match rule { $( Rule::$rule => include_str!($file), )* }
        }
    };
}

docs! {
    YamlSyntax => "yaml_syntax.rs",
    UnsupportedVersion => "unsupported_version.rs",
    LegacyVersion => "legacy_version.rs",
    UnknownKey => "unknown_key.rs",
    InvalidValue => "invalid_value.rs",
    MissingField => "missing_field.rs",
    DuplicateKey => "duplicate_key.rs",
    DeprecatedKey => "deprecated_key.rs",
    UnknownReference => "unknown_reference.rs",
    DependencyCycle => "dependency_cycle.rs",
    DuplicateName => "duplicate_name.rs",
    CommandAndScript => "command_and_script.rs",
    NoCommand => "no_command.rs",
    PolicyRetryIgnored => "policy_retry_ignored.rs",
    UnusedSuppression => "unused_suppression.rs",
    TorchrunNprocMismatch => "torchrun_nproc_mismatch.rs",
    TorchrunNnodesMismatch => "torchrun_nnodes_mismatch.rs",
    TorchrunStandaloneMultinode => "torchrun_standalone_multinode.rs",
    TorchrunMissingNodeRank => "torchrun_missing_node_rank.rs",
    TorchrunMissingMasterAddr => "torchrun_missing_master_addr.rs",
    TorchrunRdzvIncomplete => "torchrun_rdzv_incomplete.rs",
    TorchDistributedLaunchDeprecated => "torch_distributed_launch_deprecated.rs",
    LauncherDoubleWrap => "launcher_double_wrap.rs",
    MpiSlotsNotGpus => "mpi_slots_not_gpus.rs",
    GpuRequestMissing => "gpu_request_missing.rs",
    NcclIbHcaMissing => "nccl_ib_hca_missing.rs",
    NcclMnnvlNoImex => "nccl_mnnvl_no_imex.rs",
    ImexNoProductPin => "imex_no_product_pin.rs",
    ImexSharedTrustDomain => "imex_shared_trust_domain.rs",
    NcclInvalidValue => "nccl_invalid_value.rs",
    NcclNetUnavailable => "nccl_net_unavailable.rs",
    GpuProductAmbiguous => "gpu_product_ambiguous.rs",
    ImageTooOldForGpu => "image_too_old_for_gpu.rs",
    ClusterProfileMissing => "cluster_profile_missing.rs",
    GpuRequestExceedsNode => "gpu_request_exceeds_node.rs",
    NcclIbHcaUnknown => "nccl_ib_hca_unknown.rs",
}

/// The Markdown documentation of `rule`, taken from the `//!` comment of its file.
pub fn documentation(rule: Rule) -> String {
    let mut out = String::new();
    for line in source(rule).lines() {
        let Some(rest) = line.strip_prefix("//!") else {
            if line.trim().is_empty() && out.is_empty() {
                continue;
            }
            break;
        };
        out.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        out.push('\n');
    }
    out
}

/// The generated page `docs/rules/<name>.md` of `rule`.
pub fn markdown_page(rule: Rule) -> String {
    format!(
        "<!-- Generated from crates/fuzzfile_check/src/rules/; do not edit. Regenerate: UPDATE_DOCS=1 cargo test -p fuzzfile_check --test docs -->\n# {} ({})\n\nDefault severity: **{}**. {}\n\n{}",
        rule.name(),
        rule.code(),
        rule.default_severity(),
        rule.summary(),
        documentation(rule)
    )
}

/// The generated index `docs/rules/README.md`.
pub fn markdown_index() -> String {
    let mut s = String::from(
        "<!-- Generated from crates/fuzzfile_check/src/rules/; do not edit. Regenerate: UPDATE_DOCS=1 cargo test -p fuzzfile_check --test docs -->\n# Rules\n\n| code | name | default | what it detects |\n|---|---|---|---|\n",
    );
    for r in Rule::ALL {
        s.push_str(&format!(
            "| {} | [`{}`]({}.md) | {} | {} |\n",
            r.code(),
            r.name(),
            r.name(),
            r.default_severity(),
            r.summary()
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_documents_the_fixed_headings() {
        for &rule in Rule::ALL {
            let doc = documentation(rule);
            for heading in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "## Use instead",
            ] {
                assert!(
                    doc.contains(heading),
                    "{} lacks `{heading}`:\n{doc}",
                    rule.name()
                );
            }
        }
    }
}
