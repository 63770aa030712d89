//! The rules. Each file is one rule and the only place that says anything about it (but
//! `launcher_common.rs`, no rule: what the launcher rules share):
//!
//! - its `//!` comment is the rule's documentation (What it does · Why is this bad? · Example ·
//!   Use instead), printed by `fuzzlint rule NAME` and generated into docs/rules/;
//! - its `declare_rule!` block is the rule's metadata: the `Rule` variant, code, name,
//!   default severity, category, one-line summary and whether findings carry a fix;
//! - its [`Check`] implementation is the check: a per-file hook, a per-task hook, or both.
//!   Rules found by another layer (the YAML parser: `yaml-syntax`; the model walk, where only
//!   it knows: `unknown-key`, `invalid-value`, `missing-field`, `duplicate-key`; the
//!   suppressions: `unused-suppression`) implement no hook and say where they are found.
//!
//! The registry at the end of this file lists every rule module once. It generates the
//! dispatch ([`run_all`]: every file hook, then for each job and service the task facts once
//! and every task hook), the metadata table ([`REGISTRY`], [`meta`]) and the documentation
//! lookup ([`documentation`], [`markdown_page`], [`markdown_index`]). The `Rule` enum of
//! `fuzzfile_diagnostics` (which the model builder below this crate emits too) is generated
//! from the same metadata into `crates/fuzzfile_diagnostics/src/rules_generated.rs`:
//! `tests/docs.rs` fails when that file or docs/rules/ drift and rewrites them with
//! `UPDATE_DOCS=1 cargo test -p fuzzfile_check --test docs`. [`meta`] matches on `Rule`
//! exhaustively, so a variant without a registered rule does not compile, and a registered
//! rule cannot be left out of the dispatch.
//!
//! Adding a rule: write `rules/<name>.rs` (documentation, `declare_rule!`, `impl Check`), list
//! it in `registry!`, add its row to `rules_generated.rs` in the same form as the others (the
//! crate must compile before the test can regenerate the file), then run the command above.
//!
//! Renaming a rule (`torchrun-nproc-mismatch` became `launcher-nproc-mismatch` when it covered
//! more launchers): change `name:`, keep the code, and list the former name in
//! `aliases: ["torchrun-nproc-mismatch"]` of its `declare_rule!`; regenerate as above (the
//! row of `rules_generated.rs` carries the aliases). `Rule::lookup` and `Rule::from_name`
//! then take the former name wherever a rule name is accepted (`fuzzlint.toml` selections
//! and `[severity]`, where a former name is accepted with a note naming the current one;
//! `# fuzzlint: ignore[...]` suppressions and `unused-suppression`; `fuzzlint rule`; the
//! language server's settings), and the rule's page says the former name. Move the rule's
//! `tests/specs/` directory to the new name too. A former name is never reused as another
//! rule's name (`fuzzfile_diagnostics` tests that).
//!
//! ## Documentation examples are tests
//! `tests/doc_examples.rs` runs the first fenced block of `## Example` and of `## Use instead`
//! of every rule: the first must report the rule, the second must not (only that rule's
//! findings are looked at). A block is a fragment: when it has no `version:` line,
//! `version: v4` is put in front of it; nothing else is added, so a finding of another rule
//! (a job without `image:`) does not matter. A rule that needs cluster facts gets a profile
//! in one of two ways, both visible in the rendered documentation:
//! - the block's first line is `# fuzzlint check --cluster examples/clusters/NAME.toml`: the
//!   block is checked with that shipped profile (the path is relative to the repository);
//! - a ```` ```toml profile ```` block right before the `yaml` block is the profile (a cluster
//!   fact the shipped profiles do not have).
//!
//! Other blocks (```` ```text ````, ```` ```sh ````: a command line, an output) are shown,
//! not run; the test takes the first `yaml` block of the section.

use fuzzfile_diagnostics::{Applicability, Diagnostic, Rule, RuleCategory, Severity, TextRange};
use fuzzfile_model::Fuzzfile;
use fuzzfile_syntax::Tree;

/// Whether a rule's findings carry a fix (`fuzzlint check --fix`, the editor's quick fixes).
/// Every fix is verified before it is applied or offered (`crate::fixes`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum FixAvailability {
    /// No finding carries a fix.
    None,
    /// Some findings carry a fix (when the value to write is known and the words are exact).
    Sometimes,
    /// Every finding carries a fix.
    Always,
}

impl FixAvailability {
    pub const fn as_str(self) -> &'static str {
        match self {
            FixAvailability::None => "none",
            FixAvailability::Sometimes => "sometimes",
            FixAvailability::Always => "always",
        }
    }
}

/// What a rule declares about itself, beside its documentation and its check.
#[derive(Clone, Copy, Debug)]
pub struct RuleMeta {
    /// The name of the `Rule` variant (`UnknownKey`).
    pub variant: &'static str,
    /// The stable code (`FZ010`).
    pub code: &'static str,
    /// The stable kebab-case name (`unknown-key`).
    pub name: &'static str,
    pub severity: Severity,
    pub category: RuleCategory,
    /// One line saying what the rule detects.
    pub summary: &'static str,
    pub fix: FixAvailability,
    /// Whether its fixes are safe (`fuzzlint check --fix`) or unsafe (only with
    /// `--unsafe-fixes`): `fix_safety` of `declare_rule!`, required of a rule with fixes and
    /// absent otherwise. A fix of the other kind says so itself
    /// ([`fuzzfile_diagnostics::Fix::with_applicability`]); the rule's documentation says why
    /// in its "Fix safety" paragraph.
    pub fix_safety: Option<Applicability>,
    /// The rule's former names, oldest first (`aliases: ["torchrun-nproc-mismatch"]` in
    /// `declare_rule!`, after a rename). Each stays valid wherever a rule name is accepted
    /// (`fuzzlint.toml`, suppressions, `fuzzlint rule`, editor settings) and designates this
    /// rule; the documentation names them.
    pub aliases: &'static [&'static str],
}

/// Declares a rule: a unit struct named after its `Rule` variant, with its metadata as
/// `META`. Used once at the top of each rule file, after its documentation.
macro_rules! declare_rule {
    (
        $(#[$attr:meta])*
        pub struct $variant:ident {
            code: $code:literal,
            name: $name:literal,
            severity: $sev:ident,
            category: $cat:ident,
            summary: $summary:literal,
            fix: $fix:ident
            $(, fix_safety: $safety:ident)?
            $(, aliases: [$($alias:literal),* $(,)?])? $(,)?
        }
    ) => {
        $(#[$attr])*
        pub struct $variant;

        impl $variant {
            pub const META: $crate::rules::RuleMeta = $crate::rules::RuleMeta {
                variant: stringify!($variant),
                code: $code,
                name: $name,
                severity: fuzzfile_diagnostics::Severity::$sev,
                category: fuzzfile_diagnostics::RuleCategory::$cat,
                summary: $summary,
                fix: $crate::rules::FixAvailability::$fix,
                fix_safety: {
                    #[allow(unused_variables)]
                    let safety: Option<fuzzfile_diagnostics::Applicability> = None;
                    $( let safety = Some(fuzzfile_diagnostics::Applicability::$safety); )?
                    safety
                },
                aliases: &[ $($($alias,)*)? ],
            };
        }
    };
}

/// The hooks of a rule. The dispatcher ([`run_all`]) calls `file` once per analysis, and
/// `task` once per job and service with that task's facts, computed once for all rules.
/// A rule implements the hooks it needs; the others report nothing.
pub trait Check {
    /// Findings about the file as a whole (the job graph, top-level sections, the first of
    /// several jobs).
    fn file(&self, _ctx: &Context<'_>, _out: &mut Vec<Diagnostic>) {}
    /// Findings about one job or service.
    fn task(&self, _ctx: &Context<'_>, _task: &TaskContext<'_>, _out: &mut Vec<Diagnostic>) {}
}

/// One job or service and the facts the rules read about it: those of the semantics layer
/// ([`crate::semantics`]), built once per analysis, not once per rule.
pub struct TaskContext<'c> {
    pub task: &'c fuzzfile_model::Task,
    /// Everything derived about the task: environment, GPUs, nodes, launches with their
    /// evaluated arguments.
    pub facts: &'c crate::semantics::TaskFacts,
    /// The environment its processes start with (`facts.env`).
    pub env: Vec<&'c fuzzfile_model::EnvVar>,
    /// GPUs requested per node and where (`facts.gpus_per_node`).
    pub gpus: Option<(u64, TextRange)>,
    /// `multinode.nodes` and where (`facts.nodes`).
    pub nodes: Option<(u64, TextRange)>,
}

impl<'c> TaskContext<'c> {
    pub fn new(ctx: &'c Context<'_>, task: &'c fuzzfile_model::Task) -> Self {
        let facts = ctx.facts(task);
        TaskContext {
            task,
            facts,
            env: facts.env.iter().collect(),
            gpus: facts.gpus_per_node,
            nodes: facts.nodes,
        }
    }
    /// The launcher invocations of the task.
    pub fn launches(&self) -> &'c [crate::semantics::Launch] {
        &self.facts.launches
    }
    /// Its torchrun-like launches (see [`crate::semantics::TaskFacts::distributed`]) with their
    /// arguments.
    pub fn distributed(
        &self,
    ) -> impl Iterator<
        Item = (
            &'c crate::semantics::Launch,
            &'c crate::semantics::LauncherArgs,
        ),
    > {
        self.facts.distributed()
    }
}

/// What a rule sees.
pub struct Context<'a> {
    pub text: &'a str,
    pub tree: &'a Tree,
    pub model: &'a Fuzzfile,
    /// The cluster profile, when one is configured; rules that need cluster facts are silent
    /// without it.
    pub profile: Option<&'a crate::profile::ClusterProfile>,
    /// The facts of every job and service, derived once per analysis.
    pub semantics: &'a crate::semantics::Semantics,
}

impl<'a> Context<'a> {
    /// The facts of `task`, a task of this context's model (derived on first use).
    pub fn facts(&self, task: &fuzzfile_model::Task) -> &'a crate::semantics::TaskFacts {
        self.semantics
            .task_in(self.text, self.tree, self.model, task)
    }

    pub fn new(
        text: &'a str,
        tree: &'a Tree,
        model: &'a Fuzzfile,
        profile: Option<&'a crate::profile::ClusterProfile>,
        semantics: &'a crate::semantics::Semantics,
    ) -> Self {
        Context {
            text,
            tree,
            model,
            profile,
            semantics,
        }
    }
}

/// The registry: each rule module once, with the struct its `declare_rule!` names (the `Rule`
/// variant). Generates the modules, the metadata table, the dispatch and the documentation
/// lookup, so none of them can miss a rule.
macro_rules! registry {
    ($($module:ident :: $variant:ident,)*) => {
        $( pub mod $module; )*

        /// The metadata of every rule, in registry order.
        pub const REGISTRY: &[RuleMeta] = &[ $( $module::$variant::META, )* ];

        /// The metadata of `rule`. Exhaustive over `Rule`: a variant without a registered
        /// rule does not compile.
        pub const fn meta(rule: Rule) -> &'static RuleMeta {
            match rule { $( Rule::$variant => &$module::$variant::META, )* }
        }

        /// The source of `rule`'s file (its documentation is its `//!` comment).
        fn source(rule: Rule) -> &'static str {
            match rule { $( Rule::$variant => include_str!(concat!(stringify!($module), ".rs")), )* }
        }

        /// Run every rule: each file hook, then for each job and service its facts once and
        /// each task hook.
        pub fn run_all(ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
            run_file_hooks(ctx, out);
            for task in ctx.model.tasks() {
                run_task_hooks(ctx, task, out);
            }
        }

        /// Every rule's file hook.
        fn run_file_hooks(ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
            $( Check::file(&$module::$variant, ctx, out); )*
        }

        /// The facts of `task` once, then every rule's task hook.
        fn run_task_hooks(
            ctx: &Context<'_>,
            task: &fuzzfile_model::Task,
            out: &mut Vec<Diagnostic>,
        ) {
            let facts = TaskContext::new(ctx, task);
            $( Check::task(&$module::$variant, ctx, &facts, out); )*
        }
    };
}

/// [`run_all`], taking each task's findings from `kept` when what its hooks read is unchanged
/// ([`crate::task_cache`]), and keeping the findings of the tasks checked.
pub(crate) fn run_all_reusing(
    ctx: &Context<'_>,
    kept: crate::task_cache::Session<'_>,
    out: &mut Vec<Diagnostic>,
) {
    run_file_hooks(ctx, out);
    let mut found = Vec::new();
    for task in ctx.model.tasks() {
        if kept.reuse(ctx.text, task, out) {
            continue;
        }
        run_task_hooks(ctx, task, &mut found);
        kept.store(ctx.text, task, &found);
        out.append(&mut found);
    }
    kept.finish();
}

/// What the launcher rules share (not a rule, so not in the registry).
pub mod launcher_common;

registry! {
    cluster_profile_missing::ClusterProfileMissing,
    command_and_script::CommandAndScript,
    dependency_cycle::DependencyCycle,
    deprecated_key::DeprecatedKey,
    duplicate_key::DuplicateKey,
    duplicate_name::DuplicateName,
    gpu_product_ambiguous::GpuProductAmbiguous,
    gpu_product_not_in_cluster::GpuProductNotInCluster,
    gpu_request_exceeds_node::GpuRequestExceedsNode,
    gpu_request_missing::GpuRequestMissing,
    image_too_old_for_gpu::ImageTooOldForGpu,
    imex_channel_unavailable::ImexChannelUnavailable,
    imex_channels_all::ImexChannelsAll,
    imex_no_product_pin::ImexNoProductPin,
    imex_shared_trust_domain::ImexSharedTrustDomain,
    infiniband_on_ethernet::InfinibandOnEthernet,
    invalid_value::InvalidValue,
    launcher_double_wrap::LauncherDoubleWrap,
    legacy_version::LegacyVersion,
    missing_field::MissingField,
    mpi_slots_not_gpus::MpiSlotsNotGpus,
    mpirun_missing_hosts::MpirunMissingHosts,
    nccl_ib_hca_missing::NcclIbHcaMissing,
    nccl_ib_hca_unknown::NcclIbHcaUnknown,
    nccl_invalid_value::NcclInvalidValue,
    nccl_mnnvl_no_imex::NcclMnnvlNoImex,
    nccl_net_unavailable::NcclNetUnavailable,
    no_command::NoCommand,
    nvlink_domain_spanned::NvlinkDomainSpanned,
    policy_retry_ignored::PolicyRetryIgnored,
    template_exec_error::TemplateExecError,
    template_fail::TemplateFail,
    template_missing_value::TemplateMissingValue,
    template_syntax_error::TemplateSyntaxError,
    torch_distributed_launch_deprecated::TorchDistributedLaunchDeprecated,
    launcher_missing_master_addr::LauncherMissingMasterAddr,
    launcher_missing_node_rank::LauncherMissingNodeRank,
    launcher_nnodes_mismatch::LauncherNnodesMismatch,
    launcher_nproc_mismatch::LauncherNprocMismatch,
    torchrun_rdzv_incomplete::TorchrunRdzvIncomplete,
    torchrun_standalone_multinode::TorchrunStandaloneMultinode,
    unknown_key::UnknownKey,
    unknown_reference::UnknownReference,
    unsupported_version::UnsupportedVersion,
    unused_suppression::UnusedSuppression,
    values_file_error::ValuesFileError,
    yaml_syntax::YamlSyntax,
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

const GENERATED: &str = "<!-- Generated from crates/fuzzfile_check/src/rules/; do not edit. Regenerate: UPDATE_DOCS=1 cargo test -p fuzzfile_check --test docs -->";

fn fix_sentence(m: &RuleMeta) -> String {
    let findings = match m.fix {
        FixAvailability::None => return "Fix: none.".to_owned(),
        FixAvailability::Sometimes => "some findings",
        FixAvailability::Always => "every finding",
    };
    match m.fix_safety {
        Some(Applicability::Safe) => {
            format!("Fix: safe, {findings} (`fuzzlint check --fix`).")
        }
        _ => format!("Fix: unsafe, {findings} (`fuzzlint check --fix --unsafe-fixes`)."),
    }
}

/// The index's fix column: `none`, or the availability and the rule's safety.
fn fix_column(m: &RuleMeta) -> String {
    match (m.fix, m.fix_safety) {
        (FixAvailability::None, _) | (_, None) => m.fix.as_str().to_owned(),
        (f, Some(s)) => format!("{} ({s})", f.as_str()),
    }
}

/// The sentence naming a rule's former names, or nothing for a rule never renamed.
pub fn former_names_sentence(m: &RuleMeta) -> Option<String> {
    let names: Vec<String> = m.aliases.iter().map(|a| format!("`{a}`")).collect();
    let list = match names.as_slice() {
        [] => return None,
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    Some(format!(
        "Formerly named {list}: the former name is still accepted in `fuzzlint.toml`, suppressions, editor settings and `fuzzlint rule`, and means `{}`.",
        m.name
    ))
}

/// The generated page `docs/rules/<name>.md` of `rule`.
pub fn markdown_page(rule: Rule) -> String {
    let m = meta(rule);
    let former = former_names_sentence(m)
        .map(|s| format!("{s}\n\n"))
        .unwrap_or_default();
    format!(
        "{GENERATED}\n# {} ({})\n\nDefault severity: **{}**. {}\n\n{}\n\n{former}{}",
        m.name,
        m.code,
        m.severity,
        m.summary,
        fix_sentence(m),
        documentation(rule)
    )
}

/// The generated index `docs/rules/README.md`.
pub fn markdown_index() -> String {
    let mut s = format!(
        "{GENERATED}\n# Rules\n\n| code | name | default | fix | what it detects |\n|---|---|---|---|---|\n",
    );
    for &r in Rule::ALL {
        let m = meta(r);
        let former: Vec<String> = m.aliases.iter().map(|a| format!("`{a}`")).collect();
        let former = if former.is_empty() {
            String::new()
        } else {
            format!(" (formerly {})", former.join(", "))
        };
        s.push_str(&format!(
            "| {} | [`{}`]({}.md){former} | {} | {} | {} |\n",
            m.code,
            m.name,
            m.name,
            m.severity,
            fix_column(m),
            m.summary
        ));
    }
    s
}

/// The text of `crates/fuzzfile_diagnostics/src/rules_generated.rs`: the `Rule` table, in code
/// order, from the rules' `declare_rule!` metadata.
pub fn generated_rule_table() -> String {
    let mut metas: Vec<&RuleMeta> = REGISTRY.iter().collect();
    metas.sort_by_key(|m| m.code);
    let mut s = String::from(
        "// @generated from the `declare_rule!` blocks of crates/fuzzfile_check/src/rules/; do not edit.\n\
         // Regenerate: UPDATE_DOCS=1 cargo test -p fuzzfile_check --test docs\n\
         // (A new rule: add its row here by hand so the workspace compiles, then regenerate.)\n\n\
         rules! {\n",
    );
    for m in metas {
        s.push_str(&generated_row(m));
    }
    s.push_str("}\n");
    s
}

/// One row of the generated `Rule` table; a renamed rule's row ends with its former names.
fn generated_row(m: &RuleMeta) -> String {
    let aliases = if m.aliases.is_empty() {
        String::new()
    } else {
        let list: Vec<String> = m.aliases.iter().map(|a| format!("{a:?}")).collect();
        format!(", aliases: [{}]", list.join(", "))
    };
    let fix = m
        .fix_safety
        .map(|s| match s {
            Applicability::Safe => ", fix: Safe",
            Applicability::Unsafe => ", fix: Unsafe",
        })
        .unwrap_or_default();
    format!(
        "    {} => ({:?}, {:?}, {:?}, {:?}, {:?}{fix}{aliases}),\n",
        m.variant, m.code, m.name, m.severity, m.category, m.summary
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    declare_rule! {
        /// A renamed rule, as a rule file declares it.
        pub struct FixtureRenamed {
            code: "FZ299",
            name: "launcher-fixture-mismatch",
            severity: Error,
            category: Gpu,
            summary: "A fixture",
            fix: Sometimes,
            fix_safety: Unsafe,
            aliases: ["torchrun-fixture-mismatch", "fixture-mismatch"],
        }
    }

    declare_rule! {
        /// A rule never renamed: `aliases` may be left out.
        pub struct FixturePlain {
            code: "FZ298",
            name: "fixture-plain",
            severity: Warning,
            category: Gpu,
            summary: "Another fixture",
            fix: Sometimes,
            fix_safety: Safe,
        }
    }

    #[test]
    fn declared_aliases_reach_the_metadata_the_generated_row_and_the_docs() {
        let m = FixtureRenamed::META;
        assert_eq!(
            m.aliases,
            &["torchrun-fixture-mismatch", "fixture-mismatch"]
        );
        assert!(FixturePlain::META.aliases.is_empty());
        // The row is in the form `fuzzfile_diagnostics`' `rules!` takes (its fixture table
        // holds a row of this form).
        assert_eq!(
            generated_row(&m),
            "    FixtureRenamed => (\"FZ299\", \"launcher-fixture-mismatch\", Error, Gpu, \"A fixture\", fix: Unsafe, aliases: [\"torchrun-fixture-mismatch\", \"fixture-mismatch\"]),\n"
        );
        assert_eq!(
            generated_row(&FixturePlain::META),
            "    FixturePlain => (\"FZ298\", \"fixture-plain\", Warning, Gpu, \"Another fixture\", fix: Safe),\n"
        );
        assert_eq!(
            fix_sentence(&FixturePlain::META),
            "Fix: safe, some findings (`fuzzlint check --fix`)."
        );
        assert_eq!(
            fix_sentence(&FixtureRenamed::META),
            "Fix: unsafe, some findings (`fuzzlint check --fix --unsafe-fixes`)."
        );
        let sentence = former_names_sentence(&m).unwrap_or_default();
        assert!(
            sentence
                .starts_with("Formerly named `torchrun-fixture-mismatch` and `fixture-mismatch`:"),
            "{sentence}"
        );
        assert!(
            sentence.ends_with("means `launcher-fixture-mismatch`."),
            "{sentence}"
        );
        assert_eq!(former_names_sentence(&FixturePlain::META), None);
    }

    /// A rule with fixes declares their safety and says why in its documentation; a rule
    /// without fixes declares none.
    #[test]
    fn every_rule_with_fixes_declares_and_explains_their_safety() {
        for m in REGISTRY {
            let doc = documentation(Rule::from_name(m.name).unwrap_or(Rule::YamlSyntax));
            if m.fix == FixAvailability::None {
                assert_eq!(m.fix_safety, None, "{} has no fix but a fix_safety", m.name);
                continue;
            }
            assert!(
                m.fix_safety.is_some(),
                "{} offers fixes but declares no fix_safety",
                m.name
            );
            assert!(
                doc.contains("Fix safety:"),
                "{} lacks its one-line `Fix safety:` reason",
                m.name
            );
        }
    }

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
