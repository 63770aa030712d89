//! ## What it does
//! With a cluster profile that names its GPU products (`gpu-product`, `gpu-products`), reports
//! a GPU product annotation (`nvidia.com/gpu.product`, or the `nvidia.com/gpu.model` the
//! catalog uses) in a job's, a service's or `defaults.job`'s `resource.annotations` that
//! matches none of them, with the closest product as "did you mean". The fix writes that
//! product when the annotation is a near miss of it.
//!
//! An annotation matches a product when the product's name contains it, ignoring case (how
//! Fuzzball selects nodes: `H100` matches `NVIDIA-H100-80GB-HBM3`), or when it contains the
//! product's name and both stand for the same GPU (the profile may write `GB200` for nodes
//! that report `NVIDIA-GB200`; `GB200` does not stand for `B200`). Values with `$` or `{{`
//! are not judged.
//!
//! Fix safety: unsafe: the closest product is a guess, and it decides where the job is
//! scheduled.
//!
//! ## Why is this bad?
//! Fuzzball places a job only on nodes whose GPU product contains the annotation. When no
//! product of the cluster does, no node qualifies: the job waits for a node that does not
//! exist, and nothing says why.
//!
//! ## Example
//! On `examples/clusters/gb200-nvl72.toml` (`gpu-product = "GB200"`):
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/gb200-nvl72.toml
//! jobs:
//!   train:
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB300}
//! ```
//!
//! ## Use instead
//! ```yaml
//! # fuzzlint check --cluster examples/clusters/gb200-nvl72.toml
//! jobs:
//!   train:
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB200}
//! ```
//!
//! ## Options
//! Reads `gpu-product`, `gpu-products` and `name` from the cluster profile; silent without a
//! profile or when it names no product. A cluster with several products lists them all in
//! `gpu-products`.

use super::{Check, Context, TaskContext};
use crate::edits::yaml_scalar;
use crate::gpu::{default_annotations, KNOWN_PRODUCTS, PRODUCT_KEYS};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule};
use fuzzfile_model::KeyValue;

declare_rule! {
    pub struct GpuProductNotInCluster {
        code: "FZ313",
        name: "gpu-product-not-in-cluster",
        severity: Error,
        category: Gpu,
        summary: "A GPU product annotation that matches none of the cluster's GPU products, so the job is never scheduled",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

/// The built-in product a name stands for: the longest built-in name it contains
/// (`NVIDIA-GB200` → `GB200`, `NVIDIA L40S` → `L40S`).
fn canonical(upper: &str) -> Option<&'static str> {
    KNOWN_PRODUCTS
        .iter()
        .copied()
        .filter(|k| upper.contains(&k.to_ascii_uppercase()))
        .max_by_key(|k| k.len())
}

/// Whether annotation `value` selects nodes of `product`.
pub(crate) fn selects(value: &str, product: &str) -> bool {
    let v = value.to_ascii_uppercase();
    let p = product.to_ascii_uppercase();
    if p.contains(&v) {
        return true;
    }
    v.contains(&p) && canonical(&v) == canonical(&p)
}

/// The product closest to `value`: by edit distance to its name, or to the GPU its name
/// stands for (`GB200` is one edit from `NVIDIA-B200`'s `B200`); ties go to the first listed.
fn closest<'p>(value: &str, products: &[&'p str]) -> Option<&'p str> {
    let v = value.to_ascii_uppercase();
    products
        .iter()
        .map(|p| {
            let up = p.to_ascii_uppercase();
            let whole = fuzzfile_model::schema::edit_distance(&v, &up);
            let gpu = canonical(&up).map_or(usize::MAX, |k| {
                fuzzfile_model::schema::edit_distance(&v, &k.to_ascii_uppercase())
            });
            (whole.min(gpu), *p)
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, p)| p)
}

fn check(ctx: &Context<'_>, annotations: &[KeyValue], whose: &str, out: &mut Vec<Diagnostic>) {
    let Some(profile) = ctx.profile else { return };
    let products = profile.products();
    if products.is_empty() {
        return;
    }
    for kv in annotations
        .iter()
        .filter(|kv| PRODUCT_KEYS.contains(&kv.key.value.as_str()))
    {
        let value = kv.value.value.trim();
        if value.is_empty() || value.contains('$') || value.contains("{{") {
            continue;
        }
        if products.iter().any(|p| selects(value, p)) {
            continue;
        }
        let listed: Vec<String> = products.iter().map(|p| format!("`{p}`")).collect();
        let cluster = profile.described();
        // A typo of a product's name: the fix writes it.
        let near = fuzzfile_model::schema::did_you_mean(value, products.iter().copied());
        let suggestion = near
            .or_else(|| closest(value, &products))
            .map(|p| format!("did you mean `{p}`? "))
            .unwrap_or_default();
        let mut d = Diagnostic::new(
            Rule::GpuProductNotInCluster,
            kv.value.range,
            format!(
                "`{value}` matches none of the GPU products of {cluster} ({}): {whose} can never be scheduled",
                listed.join(", ")
            ),
        )
        .with_help(format!(
            "{suggestion}Fuzzball places a job only on nodes whose GPU product contains the value of `{}`; if the cluster has other products, list them in `gpu-products` of its profile",
            kv.key.value
        ));
        if let Some(p) = near {
            d = d.with_fix(Fix::replace(
                format!("Pin to `{p}`"),
                kv.value.range,
                yaml_scalar(p, true),
            ));
        }
        out.push(d);
    }
}

impl Check for GpuProductNotInCluster {
    fn file(&self, ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
        if let Some(defaults) = default_annotations(ctx) {
            check(
                ctx,
                defaults,
                "a job that takes `defaults.job`'s annotations",
                out,
            );
        }
    }

    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        if let Some(r) = &task.resource {
            let whose = match task.kind {
                fuzzfile_model::TaskKind::Job => format!("job `{}`", task.name.value),
                fuzzfile_model::TaskKind::Service => format!("service `{}`", task.name.value),
            };
            check(ctx, &r.annotations, &whose, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::selects;

    #[test]
    fn annotations_select_products_as_fuzzball_matches_them() {
        assert!(selects("H100", "NVIDIA-H100-80GB-HBM3"));
        assert!(selects("h100", "NVIDIA-H100-80GB-HBM3"));
        assert!(selects("NVIDIA-GB200", "GB200"));
        assert!(selects("NVIDIA L4", "NVIDIA L40S"));
        assert!(selects("H200", "GH200"));
        assert!(!selects("GB200", "B200"));
        assert!(!selects("A100", "H100"));
        assert!(!selects("GB300", "GB200"));
        assert!(!selects("NVIDIA-H100-SXM", "NVIDIA-H100-80GB-HBM3"));
    }

    #[test]
    fn the_closest_product_is_by_name_or_by_the_gpu_it_stands_for() {
        let products = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-B200"];
        assert_eq!(super::closest("GB200", &products), Some("NVIDIA-B200"));
        assert_eq!(
            super::closest("A100", &products),
            Some("NVIDIA-H100-80GB-HBM3")
        );
        assert_eq!(
            super::closest("NVIDIA-H100-80GB-HBM2", &products),
            Some("NVIDIA-H100-80GB-HBM3")
        );
        assert_eq!(super::closest("x", &[]), None);
    }
}
