//! ## What it does
//! Reports a GPU job whose image is built on a CUDA older than its GPU needs, or on a CUDA that
//! no longer supports it, and a multinode job on a Multi-Node NVLink cluster whose image's NCCL
//! predates Multi-Node NVLink:
//! - NGC PyTorch images (`nvcr.io/nvidia/pytorch:YY.MM-…`): the CUDA and NCCL of the tag, from
//!   a table of NVIDIA's release notes (`crates/fuzzfile_check/data/ngc-pytorch-cuda.tsv`, each
//!   row with its page). NGC tags are dated and a later tag never moves to an older CUDA or
//!   NCCL, so a tag between two confirmed tags has its versions bounded by theirs: at least
//!   those of the confirmed tag before it, at most those of the confirmed tag after it. The rule
//!   reports "too old" only when even that upper bound is too old, and "no longer supported"
//!   only when even the lower bound is, and its message names the tags of the bound. A tag
//!   after the last confirmed one has no upper bound: it is never too old (it can still be too
//!   new). Rows read on another container of the same month (MXNet, Triton…) are not confirmed
//!   for PyTorch: what rests only on them is an `info` finding;
//! - CUDA images (`nvidia/cuda:X.Y…`, also on `nvcr.io`): the CUDA of the tag.
//!
//! The GPU comes from the job's `nvidia.com/gpu.product` (or `gpu.model`) annotation, else
//! from the cluster profile's `gpu-product`. When the annotation can stand for several
//! products (`B200` also matches `GB200`), the least demanding one is assumed. The lowest
//! CUDA per product is in `crates/fuzzfile_check/data/gpu-products.tsv`: Ampere (A100, A10,
//! L4, L40S…) 11.0, Hopper (H100, H200, GH200) 11.8, Blackwell (B200, GB200, B300, GB300,
//! RTX PRO 6000) 12.8. CUDA 13 and later no longer support Volta (V100).
//!
//! NCCL supports Multi-Node NVLink from 2.20.3 (`ncclTopoCheckMNNVL` first appears in
//! NVIDIA/nccl tag `v2.20.3-1`, whose notes say "Add support for inter-node NVLink
//! communication"; `v2.19.4-1` has no MNNVL code). On a cluster profile with `mnnvl = true`, a
//! multinode GPU job whose image has an older NCCL is reported as a `warning`: it runs, but its
//! nodes talk over the network, and an IMEX channel changes nothing. A job that sets
//! `NCCL_MNNVL_ENABLE=0` (or whose profile's `[nccl-defaults]` does) chose the network and is not
//! reported. (`nccl-mnnvl-no-imex` is
//! silent for such an image.) This is a finding of this rule, not a rule of its own, because
//! the cause and the fix are the same: an image too old for the hardware it runs on.
//!
//! ## Why is this bad?
//! A CUDA toolkit older than the GPU has no native code for it: kernels fail with
//! `no kernel image is available for execution on the device` or NCCL with
//! `Cuda failure 'invalid argument'`, or run slowly after a JIT compilation when the image
//! carries PTX. A CUDA 13 image does not run on a V100 at all. An NCCL without Multi-Node
//! NVLink support leaves the NVLink between the nodes of an NVL72 rack unused.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     image: {uri: docker://nvcr.io/nvidia/pytorch:21.03-py3}
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: H100}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     image: {uri: docker://nvcr.io/nvidia/pytorch:25.12-py3}
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: H100}
//! ```
//!
//! ## Options
//! Reads `gpu-product` from the cluster profile when the job has no product annotation, and
//! `mnnvl` for the NCCL finding.

use super::{Check, Context, TaskContext};
use crate::gpu::ngc::{self, cuda_str, nccl_str, Bound, Cuda, Evidence, TagDate, NCCL_FIRST_MNNVL};
use crate::gpu::{
    candidates, env_get, gpu_products, multinode_gpu_job, parse_cuda, product_pin, GpuProduct,
};
use fuzzfile_diagnostics::{Diagnostic, Rule, Severity, TextRange};
use fuzzfile_model::values::ImageScheme;

declare_rule! {
    pub struct ImageTooOldForGpu {
        code: "FZ308",
        name: "image-too-old-for-gpu",
        severity: Error,
        category: Gpu,
        summary: "An image whose CUDA does not fit the GPU, or whose NCCL predates the cluster's Multi-Node NVLink",
        fix: None,
    }
}

/// The image of a task, as far as this rule reads it.
struct Image {
    /// `NGC PyTorch 24.03`, `` `nvidia/cuda:11.7.1` ``.
    what: String,
    /// The version inside the URI.
    range: TextRange,
    kind: ImageKind,
}

enum ImageKind {
    /// An NGC PyTorch release.
    Ngc(TagDate),
    /// A CUDA image: its CUDA is the tag's.
    Cuda(Cuda),
}

fn image(ctx: &Context<'_>, task: &fuzzfile_model::Task) -> Option<Image> {
    let uri = task.image.as_ref()?.uri.as_ref()?;
    if uri.value.scheme != ImageScheme::Docker {
        return None;
    }
    let tag = uri.value.tag()?;
    let (version, kind, what) = if let Some((date, text)) = ngc::pytorch_tag(&uri.value) {
        (text, ImageKind::Ngc(date), format!("NGC PyTorch {text}"))
    } else if uri.value.repository() == "nvidia/cuda" {
        let end = tag.find('-').unwrap_or(tag.len());
        let v = &tag[..end];
        if !v
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            return None;
        }
        (
            v,
            ImageKind::Cuda(parse_cuda(v)?),
            format!("`nvidia/cuda:{v}`"),
        )
    } else {
        return None;
    };
    // Point at the version inside the URI.
    let text = ctx.tree.text(uri.node)?;
    let at = text.rfind(&format!(":{tag}"))? + 1;
    let range = ctx
        .tree
        .scalar_subrange(uri.node, at..at + version.len())
        .filter(|r| r.slice(ctx.text) == version)
        .unwrap_or(uri.range);
    Some(Image { what, range, kind })
}

/// Where a bound of an NGC tag comes from, for a message: `its CUDA lies between that of 24.05
/// (12.4) and that of 24.12 (12.6), confirmed tags`.
fn bound_phrase<V: Copy>(
    b: &Bound<V>,
    kind: &str,
    show: fn(V) -> String,
    admit: Evidence,
) -> String {
    let rows = match admit {
        Evidence::Confirmed => "confirmed tags",
        Evidence::Sibling => {
            "tags read on NVIDIA's release notes of other containers of the same month, not confirmed for PyTorch"
        }
    };
    let base = match (b.lower, b.upper) {
        (Some(l), Some(u)) => format!(
            "its {kind} lies between that of {} ({}) and that of {} ({}), {rows}",
            l.tag,
            show(l.value),
            u.tag,
            show(u.value)
        ),
        (None, Some(u)) => format!(
            "{}, the first of the {rows} after it, has {kind} {}",
            u.tag,
            show(u.value)
        ),
        (Some(l), None) => format!(
            "{}, the last of the {rows} before it, has {kind} {}",
            l.tag,
            show(l.value)
        ),
        (None, None) => String::new(),
    };
    format!("{base}; NGC tags never move to an older {kind}")
}

/// What a message says the image has (`built on CUDA 12.4`, `ships NCCL 2.18.3 at most (…)`):
/// `value` as read on the tag's own row when `beyond` is `None`, else `value` as a bound of the
/// tag (`beyond`: `at most`, `or later`) and the rows it comes from.
fn has_phrase<V: Copy>(
    has: &str,
    (kind, show): (&str, fn(V) -> String),
    b: &Bound<V>,
    value: V,
    beyond: Option<&str>,
    admit: Evidence,
) -> String {
    match beyond {
        None => format!(
            "{}{has} {kind} {}{}",
            probably(admit),
            show(value),
            sibling_note(admit)
        ),
        Some(beyond) => format!(
            "{}{has} {kind} {} {beyond} ({})",
            probably(admit),
            show(value),
            bound_phrase(b, kind, show, admit)
        ),
    }
}

/// `probably ` for what rests on sibling rows.
fn probably(admit: Evidence) -> &'static str {
    match admit {
        Evidence::Confirmed => "",
        Evidence::Sibling => "probably ",
    }
}

/// For a version read on a row of the tag itself: where a sibling row comes from.
fn sibling_note(admit: Evidence) -> &'static str {
    match admit {
        Evidence::Confirmed => "",
        Evidence::Sibling => {
            " (read on NVIDIA's release notes of another container of the same month, not confirmed for PyTorch)"
        }
    }
}

/// The earliest confirmed NGC PyTorch tag whose CUDA is at least `need` and below `dropped`.
fn earliest_tag_with(need: Cuda, dropped: Option<u32>) -> Option<(TagDate, Cuda)> {
    ngc::rows()
        .iter()
        .filter(|r| r.evidence == Evidence::Confirmed)
        .filter_map(|r| Some((r.tag, r.cuda?)))
        .find(|(_, c)| *c >= need && dropped.is_none_or(|d| c.0 < d))
}

/// The GPU product table, read once per process (every task of every analysis reads it).
fn products() -> &'static [GpuProduct] {
    static TABLE: std::sync::OnceLock<Vec<GpuProduct>> = std::sync::OnceLock::new();
    TABLE.get_or_init(gpu_products)
}

/// What one evidence level says of the image's CUDA: the bound, and whether it is exact.
fn cuda_known(img: &Image, admit: Evidence) -> Option<(Bound<Cuda>, bool)> {
    match img.kind {
        ImageKind::Cuda(c) => {
            // A CUDA image is its own row: exact, whatever the evidence asked.
            let a = ngc::Anchor {
                value: c,
                tag: TagDate { year: 0, month: 1 },
            };
            Some((
                Bound {
                    lower: Some(a),
                    upper: Some(a),
                },
                true,
            ))
        }
        ImageKind::Ngc(tag) => {
            let b = ngc::cuda_bound(tag, admit);
            let exact = b.exact(tag).is_some();
            Some((b, exact))
        }
    }
}

impl Check for ImageTooOldForGpu {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let Some(img) = image(ctx, facts.task) else {
            return;
        };
        mnnvl_support(ctx, facts, &img, out);
        cuda_fit(ctx, facts, &img, out);
    }
}

/// The image's CUDA against the GPU the job lands on.
fn cuda_fit(ctx: &Context<'_>, facts: &TaskContext<'_>, img: &Image, out: &mut Vec<Diagnostic>) {
    let task = facts.task;
    let table = products();
    if facts.gpus.is_none_or(|g| g.0 == 0) {
        return;
    }
    let pin = product_pin(ctx, task);
    let (product, product_range) = match (pin, ctx.profile.and_then(|p| p.gpu_product.as_deref())) {
        (Some(kv), _) => (kv.value.value.as_str(), Some(kv.value.range)),
        (None, Some(p)) => (p, None),
        (None, None) => return,
    };
    let mut cands = candidates(product, table);
    if product_range.is_none() {
        // The profile names the nodes' product itself, not a pattern.
        if let Some(exact) = cands.iter().find(|p| p.name.eq_ignore_ascii_case(product)) {
            cands = vec![*exact];
        }
    }
    // Too old: older than what every product it may land on needs.
    let Some(need) = cands.iter().map(|p| p.min_cuda).min() else {
        return;
    };
    let dropped = cands
        .iter()
        .map(|p| p.dropped_in)
        .collect::<Option<Vec<u32>>>()
        .and_then(|v| v.into_iter().min());
    let where_from = match product_range {
        Some(_) => "the job's GPU annotation",
        None => "the cluster profile",
    };
    let names: Vec<&str> = cands.iter().map(|p| p.name).collect();
    let gpu = names.join("/");
    let finish = |d: Diagnostic, help: String| {
        let d = match product_range {
            Some(r) => d.with_label(r, format!("{gpu} from {where_from}")),
            None => d,
        };
        match product_range {
            Some(_) => d.with_help(help),
            None => d.with_help(format!("{help}; the GPU comes from {where_from}")),
        }
    };
    for admit in [Evidence::Confirmed, Evidence::Sibling] {
        let Some((b, exact)) = cuda_known(img, admit) else {
            return;
        };
        let severity = match admit {
            Evidence::Confirmed => Severity::Error,
            Evidence::Sibling => Severity::Info,
        };
        if let Some(upper) = b.upper.filter(|u| u.value < need) {
            let built = has_phrase(
                "built on",
                ("CUDA", cuda_str),
                &b,
                upper.value,
                (!exact).then_some("at most"),
                admit,
            );
            let d = Diagnostic::new(
                Rule::ImageTooOldForGpu,
                img.range,
                format!(
                    "{} is {built}, older than the CUDA {} that {gpu} needs",
                    img.what,
                    cuda_str(need)
                ),
            )
            .with_severity(severity);
            let help = match img.kind {
                ImageKind::Ngc(_) => match earliest_tag_with(need, dropped) {
                    Some((t, c)) => format!(
                        "use a tag built on CUDA {} or later, such as `{t}-py3` (CUDA {})",
                        cuda_str(need),
                        cuda_str(c)
                    ),
                    None => format!("use a tag built on CUDA {} or later", cuda_str(need)),
                },
                ImageKind::Cuda(_) => {
                    format!("use a `nvidia/cuda` tag of {} or later", cuda_str(need))
                }
            };
            out.push(finish(d, help));
            return;
        }
        // Too new: a CUDA major that dropped every product it may land on.
        if let (Some(dropped), Some(lower)) = (dropped, b.lower) {
            if lower.value.0 >= dropped {
                let built = has_phrase(
                    "built on",
                    ("CUDA", cuda_str),
                    &b,
                    lower.value,
                    (!exact).then_some("or later"),
                    admit,
                );
                let d = Diagnostic::new(
                    Rule::ImageTooOldForGpu,
                    img.range,
                    format!(
                        "{} is {built}, and CUDA {dropped} no longer supports {gpu}",
                        img.what
                    ),
                )
                .with_severity(severity);
                out.push(finish(
                    d,
                    format!("use an image built on CUDA {}.x", dropped - 1),
                ));
                return;
            }
        }
    }
}

/// A multinode GPU job on a Multi-Node NVLink cluster whose image's NCCL predates MNNVL.
fn mnnvl_support(
    ctx: &Context<'_>,
    facts: &TaskContext<'_>,
    img: &Image,
    out: &mut Vec<Diagnostic>,
) {
    let ImageKind::Ngc(tag) = img.kind else {
        return;
    };
    let Some(profile) = ctx.profile.filter(|p| p.mnnvl) else {
        return;
    };
    // A job that turns MNNVL off asked for the network: nothing to say.
    if env_get(&facts.env, "NCCL_MNNVL_ENABLE").is_some_and(|e| e.value.trim() == "0")
        || profile
            .nccl_defaults
            .get("NCCL_MNNVL_ENABLE")
            .is_some_and(|v| v.trim() == "0")
    {
        return;
    }
    let Some((n, nodes_range)) = multinode_gpu_job(ctx, facts.task) else {
        return;
    };
    for (admit, severity) in [
        (Evidence::Confirmed, Severity::Warning),
        (Evidence::Sibling, Severity::Info),
    ] {
        let b = ngc::nccl_bound(tag, admit);
        let Some(upper) = b.upper.filter(|u| u.value < NCCL_FIRST_MNNVL) else {
            continue;
        };
        let exact = b.exact(tag).is_some();
        let ships = has_phrase(
            "ships",
            ("NCCL", nccl_str),
            &b,
            upper.value,
            (!exact).then_some("at most"),
            admit,
        );
        out.push(
            Diagnostic::new(
                Rule::ImageTooOldForGpu,
                img.range,
                format!(
                    "{} {ships}, older than NCCL {}, the first with Multi-Node NVLink support: on this Multi-Node NVLink cluster its {n} nodes talk over the network, not NVLink",
                    img.what,
                    nccl_str(NCCL_FIRST_MNNVL)
                ),
            )
            .with_severity(severity)
            .with_label(nodes_range, format!("runs on {n} nodes"))
            .with_help(format!(
                "use an image with NCCL {} or later (NVIDIA's DGX GB200 NVL72 release notes name NCCL 2.27.5 for GB200); an IMEX channel does not help this NCCL",
                nccl_str(NCCL_FIRST_MNNVL)
            )),
        );
        return;
    }
}
