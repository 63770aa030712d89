//! ## What it does
//! Reports a `nvidia.com/gpu.product` annotation (in a job's, a service's or `defaults.job`'s
//! `resource.annotations`) whose value is part of the names of several GPU products: `B200`
//! is also part of `GB200`, `H200` of `GH200`, `L4` of `L40S`, `A10` of `A100`. The products
//! compared are a built-in list (V100, T4, A10, A10G, A30, A40, A100, L4, L40, L40S, H100, H200,
//! GH200, B200, GB200, B300, GB300, RTX PRO 6000) and the cluster profile's `gpu-product` and
//! `gpu-products`. Other `nvidia.com/gpu.*` annotation keys than `gpu.product` and `gpu.model`
//! are reported as information: Fuzzball documents only these two.
//!
//! ## Why is this bad?
//! Fuzzball matches the product annotation as a substring of the node's product name, so
//! `B200` also selects GB200 nodes: the job may land on a different architecture (and CPU:
//! GB200 nodes are Arm) than the one it was built and tuned for.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     resource:
//!       devices: {nvidia.com/gpu: 8}
//!       annotations: {nvidia.com/gpu.product: B200}
//! ```
//!
//! ## Use instead
//! Write the product name as the cluster reports it, long enough to match one product:
//! ```yaml
//! jobs:
//!   train:
//!     resource:
//!       devices: {nvidia.com/gpu: 8}
//!       annotations: {nvidia.com/gpu.product: NVIDIA-B200}
//! ```
//!
//! ## Options
//! Reads `gpu-product` and `gpu-products` from the cluster profile, when there is one.

use super::{Check, Context, TaskContext};
use crate::gpu::{default_annotations, KNOWN_PRODUCTS, PRODUCT_KEYS};
use fuzzfile_diagnostics::{Diagnostic, Rule, Severity};
use fuzzfile_model::KeyValue;

declare_rule! {
    pub struct GpuProductAmbiguous {
        code: "FZ307",
        name: "gpu-product-ambiguous",
        severity: Warning,
        category: Gpu,
        summary: "A GPU product annotation that matches several products (`B200` also matches `GB200`)",
        fix: None,
    }
}

/// The built-in product a cluster's product string names: the longest built-in name it
/// contains (`NVIDIA-GB200` → `GB200`).
fn canonical(product: &str) -> Option<&'static str> {
    let up = product.to_ascii_uppercase();
    KNOWN_PRODUCTS
        .iter()
        .copied()
        .filter(|k| up.contains(&k.to_ascii_uppercase()))
        .max_by_key(|k| k.len())
}

/// The distinct products an annotation value matches as a substring: the cluster profile's
/// product names, and the built-in names they do not already stand for.
fn matches<'p>(value: &str, profile: &[&'p str]) -> Vec<&'p str>
where
    'static: 'p,
{
    let mut out: Vec<&'p str> = Vec::new();
    for p in profile.iter().copied().filter(|p| p.contains(value)) {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    let covered: Vec<&str> = out.iter().filter_map(|p| canonical(p)).collect();
    for k in KNOWN_PRODUCTS.iter().copied() {
        if k.contains(value)
            && !covered.contains(&k)
            && !out.iter().any(|p| p.eq_ignore_ascii_case(k))
        {
            out.push(k);
        }
    }
    out
}

fn check_annotations(ctx: &Context<'_>, annotations: &[KeyValue], out: &mut Vec<Diagnostic>) {
    let profile: Vec<&str> = ctx.profile.map(|p| p.products()).unwrap_or_default();
    for kv in annotations {
        let key = kv.key.value.as_str();
        if key == "nvidia.com/gpu.product" {
            let v = kv.value.value.trim();
            if v.is_empty() || v.contains('$') || v.contains("{{") {
                continue;
            }
            let matches = matches(v, &profile);
            if matches.len() > 1 {
                let shown: Vec<String> = matches.iter().map(|m| format!("`{m}`")).collect();
                out.push(
                    Diagnostic::new(
                        Rule::GpuProductAmbiguous,
                        kv.value.range,
                        format!(
                            "`{v}` is part of several GPU product names ({}): the job may land on any of them",
                            shown.join(", ")
                        ),
                    )
                    .with_help("Fuzzball matches the product annotation as a substring of the node's product name; write the full product name as the cluster reports it"),
                );
            }
        } else if key.starts_with("nvidia.com/gpu.") && !PRODUCT_KEYS.contains(&key) {
            out.push(
                Diagnostic::new(
                    Rule::GpuProductAmbiguous,
                    kv.key.range,
                    format!("`{key}` is not a GPU annotation Fuzzball documents"),
                )
                .with_severity(Severity::Info)
                .with_help("Fuzzball documents `nvidia.com/gpu.product` (and the catalog uses `nvidia.com/gpu.model`); other keys may not select nodes"),
            );
        }
    }
}

impl Check for GpuProductAmbiguous {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        if let Some(defaults) = default_annotations(ctx) {
            check_annotations(ctx, defaults, out);
        }
    }

    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        if let Some(r) = &facts.task.resource {
            check_annotations(ctx, &r.annotations, out);
        }
    }
}
