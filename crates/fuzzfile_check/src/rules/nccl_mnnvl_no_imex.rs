//! ## What it does
//! Reports a multinode GPU job on a cluster whose nodes share a Multi-Node NVLink domain
//! (`mnnvl = true` in the cluster profile) when its environment has neither an IMEX channel
//! (`NVIDIA_IMEX_CHANNELS`) nor `NCCL_MNNVL_ENABLE=0`, and the profile's `[nccl-defaults]` set
//! neither. Settings that already keep NCCL from trying MNNVL (`NCCL_CUMEM_ENABLE=0`,
//! `NCCL_P2P_DISABLE=1`) and commands or scripts that set the variables themselves are not
//! reported.
//!
//! The fix depends on the cluster: where IMEX runs (`imex = true`) it adds
//! `NVIDIA_IMEX_CHANNELS=0`, so NCCL uses NVLink across nodes, and, when nothing pins the job's
//! GPU product yet, the profile's `gpu-product` as a `nvidia.com/gpu.product` annotation in
//! the same fix (a channel without a pin is `imex-no-product-pin`; without `gpu-product` in
//! the profile there is no fix); where IMEX does not run, it adds `NCCL_MNNVL_ENABLE=0`, so
//! NCCL uses the network.
//!
//! The NCCL of the image decides what happens, when the table of NGC PyTorch tags
//! (`crates/fuzzfile_check/data/ngc-pytorch-cuda.tsv`, confirmed rows only) bounds it:
//! - at most an NCCL older than 2.20.3 (no Multi-Node NVLink support at all): not reported
//!   here; `image-too-old-for-gpu` says that the job cannot use MNNVL;
//! - at most an NCCL older than 2.27.3: a `warning`, since the job runs but NCCL falls back to
//!   the network without a word;
//! - at least 2.27.3: the error names the image's NCCL;
//! - otherwise (another image, or a tag whose NCCL no confirmed row bounds): the error says
//!   that NCCL 2.27.3 and later stop. When rows of other containers of the same month (not
//!   confirmed for PyTorch) put the tag's NCCL below 2.27.3, the help says that the job
//!   probably falls back instead; the finding stays an error, since that is not confirmed.
//!
//! Fix safety: unsafe: it changes the job's environment (an IMEX channel and product pin, or
//! Multi-Node NVLink turned off), so NCCL runs differently.
//!
//! ## Why is this bad?
//! NCCL detects MNNVL when more than one node takes part (`NCCL_MNNVL_ENABLE` defaults to 2,
//! auto). Since NCCL 2.27.3 it stops with `MNNVL (cliqueSize N) is available but not working
//! on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels)` when
//! the container has no IMEX channel (NVIDIA/nccl `src/mnnvl.cc` at tag `v2.27.3-1` returns
//! `ncclSystemError` there); older releases (`v2.26.6-1`) fell back to the network silently.
//!
//! ## Example
//! On `examples/clusters/gb200-nvl72.toml` (`mnnvl = true`, `imex = true`):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/gb200-nvl72.toml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_IB_HCA=mlx5
//!     multinode: {nodes: 2, implementation: generic}
//!     resource: {devices: {nvidia.com/gpu: 4}}
//! ```
//!
//! ## Use instead
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/gb200-nvl72.toml
//! jobs:
//!   train:
//!     env:
//!       - NCCL_IB_HCA=mlx5
//!       - NVIDIA_IMEX_CHANNELS=0   # or NCCL_MNNVL_ENABLE=0 to use the network only
//!     multinode: {nodes: 2, implementation: generic}
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB200}
//! ```
//!
//! ## Options
//! Needs a cluster profile with `mnnvl = true`; `imex` chooses the fix; `[nccl-defaults]`
//! entries count as set.

use super::{Check, Context, TaskContext};
use crate::edits::add_env_entry;
use crate::gpu::ngc::{
    self, nccl_str, Bound, Evidence, Nccl, TagDate, NCCL_FIRST_MNNVL, NCCL_MNNVL_NEEDS_IMEX,
};
use crate::gpu::{env_get, mentions, multinode_gpu_job, product_pin};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule, Severity};

declare_rule! {
    pub struct NcclMnnvlNoImex {
        code: "FZ302",
        name: "nccl-mnnvl-no-imex",
        severity: Error,
        category: Gpu,
        summary: "Multinode GPU job on a Multi-Node NVLink cluster with no IMEX channel and MNNVL not disabled",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

/// What the message says when the image's NCCL is not bounded.
const UNKNOWN: &str = "NCCL 2.27.3 and later stop at initialisation";

/// What an image whose NCCL is bounded by `b` does on MNNVL without an IMEX channel.
#[derive(Debug, PartialEq)]
enum Outcome {
    /// Its NCCL predates MNNVL: it never tries it (`image-too-old-for-gpu` says so).
    NoMnnvl,
    /// Its NCCL is older than 2.27.3: it goes on over the network.
    FallsBack(String),
    /// Its NCCL is 2.27.3 or later: it stops at initialisation.
    Stops(String),
    /// The bound does not decide.
    Unknown,
}

fn image_outcome(b: &Bound<Nccl>, tag: TagDate, text: &str) -> Outcome {
    let exact = b.exact(tag);
    if let Some(u) = b.upper.filter(|u| u.value < NCCL_MNNVL_NEEDS_IMEX) {
        if u.value < NCCL_FIRST_MNNVL {
            return Outcome::NoMnnvl;
        }
        let v = match exact {
            Some(v) => nccl_str(v),
            None => format!(
                "at most {}: NGC PyTorch {} has it, and NGC tags never move to an older NCCL",
                nccl_str(u.value),
                u.tag
            ),
        };
        return Outcome::FallsBack(format!(
            "the NCCL of NGC PyTorch {text} ({v}) does not stop, it uses the network without a word (NCCL stops at initialisation from {})",
            nccl_str(NCCL_MNNVL_NEEDS_IMEX)
        ));
    }
    if let Some(l) = b.lower.filter(|l| l.value >= NCCL_MNNVL_NEEDS_IMEX) {
        let v = match exact {
            Some(v) => nccl_str(v),
            None => format!(
                "at least {}: NGC PyTorch {} has it, and NGC tags never move to an older NCCL",
                nccl_str(l.value),
                l.tag
            ),
        };
        return Outcome::Stops(format!(
            "the NCCL of NGC PyTorch {text} ({v}) stops at initialisation"
        ));
    }
    Outcome::Unknown
}

/// What rows of other containers of the same months say, when no confirmed row decides: an
/// NCCL below 2.27.3 is likely, not confirmed, so it only goes into the help.
fn sibling_note(b: &Bound<Nccl>, text: &str) -> Option<String> {
    let u = b.upper.filter(|u| u.value < NCCL_MNNVL_NEEDS_IMEX)?;
    Some(format!(
        "NVIDIA's release notes of another container of {} list NCCL {} and NGC tags never move to an older NCCL, so NGC PyTorch {text} probably has an NCCL that does not stop but uses the network (not confirmed for PyTorch)",
        u.tag,
        nccl_str(u.value)
    ))
}

impl Check for NcclMnnvlNoImex {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        if task.kind != fuzzfile_model::TaskKind::Job {
            return;
        }
        let Some(profile) = ctx.profile.filter(|p| p.mnnvl) else {
            return;
        };
        let default_is = |name: &str, v: &str| {
            profile
                .nccl_defaults
                .get(name)
                .is_some_and(|x| x.trim() == v)
        };
        if profile.nccl_defaults.contains_key("NVIDIA_IMEX_CHANNELS")
            || default_is("NCCL_MNNVL_ENABLE", "0")
            || default_is("NCCL_CUMEM_ENABLE", "0")
            || default_is("NCCL_P2P_DISABLE", "1")
        {
            return;
        }
        let Some((n, nodes_range)) = multinode_gpu_job(ctx, task) else {
            return;
        };
        let env = &facts.env;
        let is = |name: &str, v: &str| env_get(env, name).is_some_and(|e| e.value.trim() == v);
        if env_get(env, "NVIDIA_IMEX_CHANNELS").is_some()
            || is("NCCL_MNNVL_ENABLE", "0")
            || is("NCCL_CUMEM_ENABLE", "0")
            || is("NCCL_P2P_DISABLE", "1")
            || mentions(task, "NVIDIA_IMEX_CHANNELS")
            || mentions(task, "NCCL_MNNVL_ENABLE")
        {
            return;
        }
        // What the image's NCCL does without a channel, when the confirmed rows bound it.
        let image_tag = task
            .image
            .as_ref()
            .and_then(|i| i.uri.as_ref())
            .and_then(|u| ngc::pytorch_tag(&u.value));
        let mut note = None;
        let (outcome, severity) = match image_tag {
            Some((tag, text)) => {
                match image_outcome(&ngc::nccl_bound(tag, Evidence::Confirmed), tag, text) {
                    Outcome::NoMnnvl => return,
                    Outcome::FallsBack(m) => (m, Some(Severity::Warning)),
                    Outcome::Stops(m) => (m, None),
                    Outcome::Unknown => {
                        note = sibling_note(&ngc::nccl_bound(tag, Evidence::Sibling), text);
                        (UNKNOWN.to_owned(), None)
                    }
                }
            }
            None => (UNKNOWN.to_owned(), None),
        };
        let (entry, help) = if profile.imex {
            (
                "NVIDIA_IMEX_CHANNELS=0",
                "IMEX runs on this cluster: add `NVIDIA_IMEX_CHANNELS=0` to `env` (Fuzzball then adds channel 0 to the container) and pin the GPU product with a `nvidia.com/gpu.product` annotation, so the job stays on IMEX nodes; or add `NCCL_MNNVL_ENABLE=0` to use the network only",
            )
        } else {
            (
                "NCCL_MNNVL_ENABLE=0",
                "the cluster profile says IMEX does not run here, so no channel can be granted: add `NCCL_MNNVL_ENABLE=0` to `env` to use the network",
            )
        };
        let mut d = Diagnostic::new(
            Rule::NcclMnnvlNoImex,
            task.name.range,
            format!(
                "multinode GPU job `{}` on a Multi-Node NVLink cluster has no IMEX channel and does not disable MNNVL: {outcome}",
                task.name.value
            ),
        )
        .with_label(nodes_range, format!("runs on {n} nodes"))
        .with_help(match note {
            Some(note) => format!("{help}; {note}"),
            None => help.to_owned(),
        });
        if let Some(s) = severity {
            d = d.with_severity(s);
        }
        // `NCCL_MNNVL_ENABLE=1` (or 2) in the job's own env: change its value rather than add
        // a second entry.
        let own = task
            .env
            .iter()
            .rev()
            .find(|e| e.name == "NCCL_MNNVL_ENABLE");
        let fix = match own {
            Some(e) if !profile.imex => (e.value_range.slice(ctx.text) == e.value)
                .then(|| Fix::replace("Set `NCCL_MNNVL_ENABLE=0`", e.value_range, "0")),
            _ => add_env_entry(ctx.text, ctx.tree, task.body, entry).and_then(|edit| {
                // A channel without a product pin is `imex-no-product-pin`: the fix pins the
                // product too (the profile's `gpu-product`), or is not offered.
                if !profile.imex || product_pin(ctx, task).is_some() {
                    return Some(Fix {
                        message: format!("Add `{entry}` to `env`"),
                        edits: vec![edit],
                        applicability: None,
                    });
                }
                let (product, pin) = super::imex_no_product_pin::pin_edit(ctx, task)?;
                // At one point (the end of the job), the annotation goes into `resource`
                // before the new `env:` follows the job's last key; the sort is stable.
                let mut edits = vec![pin, edit];
                edits.sort_by_key(|e| e.range.start);
                Some(Fix {
                    message: format!(
                        "Add `{entry}` to `env` and pin job `{}` to `{product}` nodes",
                        task.name.value
                    ),
                    edits,
                    applicability: None,
                })
            }),
        };
        if let Some(fix) = fix {
            d = d.with_fix(fix);
        }
        out.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::ngc::Anchor;

    fn at(tag: &str, value: Nccl) -> Option<Anchor<Nccl>> {
        Some(Anchor {
            value,
            tag: TagDate::parse(tag).unwrap(),
        })
    }

    fn outcome(lower: Option<Anchor<Nccl>>, upper: Option<Anchor<Nccl>>, tag: &str) -> Outcome {
        let b = Bound { lower, upper };
        image_outcome(&b, TagDate::parse(tag).unwrap(), tag)
    }

    #[test]
    fn the_image_nccl_decides_what_happens_without_a_channel() {
        // Before MNNVL support: never tries it.
        assert_eq!(
            outcome(at("19.10", (2, 4, 8)), at("19.10", (2, 4, 8)), "19.10"),
            Outcome::NoMnnvl
        );
        assert_eq!(
            outcome(None, at("19.03", (2, 4, 3)), "18.09"),
            Outcome::NoMnnvl
        );
        // Bounded below 2.27.3 (even if it may predate MNNVL): runs over the network.
        let Outcome::FallsBack(m) =
            outcome(at("23.07", (2, 18, 3)), at("24.05", (2, 21, 5)), "24.01")
        else {
            panic!("not a fallback");
        };
        assert!(
            m.contains("(at most 2.21.5: NGC PyTorch 24.05 has it"),
            "{m}"
        );
        assert!(matches!(
            outcome(at("24.05", (2, 26, 6)), at("24.05", (2, 26, 6)), "24.05"),
            Outcome::FallsBack(m) if m.contains("24.05 (2.26.6) does not stop")
        ));
        // 2.27.3 exactly, or a lower bound at or above it: stops.
        assert!(matches!(
            outcome(at("25.06", (2, 27, 3)), at("25.06", (2, 27, 3)), "25.06"),
            Outcome::Stops(m) if m.contains("(2.27.3) stops")
        ));
        assert!(matches!(
            outcome(at("26.03", (2, 29, 7)), None, "26.07"),
            Outcome::Stops(m) if m.contains("at least 2.29.7: NGC PyTorch 26.03 has it")
        ));
        // Between a lower bound below 2.27.3 and an upper bound at or above it: undecided.
        assert_eq!(
            outcome(at("24.05", (2, 21, 5)), at("26.03", (2, 29, 7)), "25.06"),
            Outcome::Unknown
        );
        assert_eq!(
            outcome(at("24.05", (2, 21, 5)), None, "25.06"),
            Outcome::Unknown
        );
        assert_eq!(outcome(None, None, "25.06"), Outcome::Unknown);
    }
}
