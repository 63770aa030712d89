//! ## What it does
//! Reports a GPU job whose image is built on a CUDA older than its GPU needs, or on a CUDA that
//! no longer supports it:
//! - NGC PyTorch images (`nvcr.io/nvidia/pytorch:YY.MM-…`): the CUDA of the tag, from a table
//!   of release notes (`crates/fuzzfile_check/data/ngc-pytorch-cuda.tsv`); tags whose CUDA
//!   is not confirmed there are not checked;
//! - CUDA images (`nvidia/cuda:X.Y…`, also on `nvcr.io`): the CUDA of the tag.
//!
//! The GPU comes from the job's `nvidia.com/gpu.product` (or `gpu.model`) annotation, else
//! from the cluster profile's `gpu-product`. When the annotation can stand for several
//! products (`B200` also matches `GB200`), the least demanding one is assumed. The lowest
//! CUDA per product is in `crates/fuzzfile_check/data/gpu-products.tsv`: Ampere (A100, A10,
//! L4, L40S…) 11.0, Hopper (H100, H200, GH200) 11.8, Blackwell (B200, GB200, B300, GB300,
//! RTX PRO 6000) 12.8. CUDA 13 and later no longer support Volta (V100).
//!
//! ## Why is this bad?
//! A CUDA toolkit older than the GPU has no native code for it: kernels fail with
//! `no kernel image is available for execution on the device` or NCCL with
//! `Cuda failure 'invalid argument'`, or run slowly after a JIT compilation when the image
//! carries PTX. A CUDA 13 image does not run on a V100 at all.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     image: {uri: docker://nvcr.io/nvidia/pytorch:24.03-py3}
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB200}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}
//!     resource:
//!       devices: {nvidia.com/gpu: 4}
//!       annotations: {nvidia.com/gpu.product: GB200}
//! ```
//!
//! ## Options
//! Reads `gpu-product` from the cluster profile when the job has no product annotation.

use super::{Check, Context, TaskContext};
use crate::gpu::{
    candidates, gpu_products, ngc_pytorch_tags, parse_cuda, product_pin, GpuProduct,
};
use fuzzfile_diagnostics::{Diagnostic, Rule, TextRange};
use fuzzfile_model::values::ImageScheme;

declare_rule! {
    pub struct ImageTooOldForGpu {
        code: "FZ308",
        name: "image-too-old-for-gpu",
        severity: Error,
        category: Gpu,
        summary: "An image whose CUDA is older than the GPU needs",
        fix: None,
    }
}

/// What the image is: its CUDA (major, minor), how to name it, and where its version is.
struct ImageCuda {
    cuda: (u32, u32),
    what: String,
    range: TextRange,
    pytorch: bool,
}

fn image_cuda(ctx: &Context<'_>, task: &fuzzfile_model::Task) -> Option<ImageCuda> {
    let uri = task.image.as_ref()?.uri.as_ref()?;
    if uri.value.scheme != ImageScheme::Docker {
        return None;
    }
    let reference = uri.value.reference.as_str();
    let tag = uri.value.tag()?;
    let repo = uri.value.repository();
    let (version, cuda, pytorch) = if repo == "nvidia/pytorch" && reference.starts_with("nvcr.io/")
    {
        let v = tag.get(..5).filter(|v| {
            v.as_bytes()[2] == b'.'
                && v[..2].bytes().all(|b| b.is_ascii_digit())
                && v[3..].bytes().all(|b| b.is_ascii_digit())
                && (tag.len() == 5 || tag[5..].starts_with('-'))
        })?;
        let t = ngc_pytorch_tags().into_iter().find(|t| t.tag == v)?;
        (v, t.cuda, true)
    } else if repo == "nvidia/cuda" {
        let end = tag.find('-').unwrap_or(tag.len());
        let v = &tag[..end];
        if !v
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        {
            return None;
        }
        (v, parse_cuda(v)?, false)
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
    let what = if pytorch {
        format!("NGC PyTorch {version}")
    } else {
        format!("`nvidia/cuda:{version}`")
    };
    Some(ImageCuda {
        cuda,
        what,
        range,
        pytorch,
    })
}

fn earliest_tag_with(cuda: (u32, u32)) -> Option<(&'static str, (u32, u32))> {
    ngc_pytorch_tags()
        .into_iter()
        .filter(|t| t.cuda >= cuda)
        .min_by_key(|t| t.tag)
        .map(|t| (t.tag, t.cuda))
}

/// The GPU product table, read once per process (every task of every analysis reads it).
fn products() -> &'static [GpuProduct] {
    static TABLE: std::sync::OnceLock<Vec<GpuProduct>> = std::sync::OnceLock::new();
    TABLE.get_or_init(gpu_products)
}

impl Check for ImageTooOldForGpu {
    fn task(&self, ctx: &Context<'_>, facts: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = facts.task;
        let table = products();
        if facts.gpus.is_none_or(|g| g.0 == 0) {
            return;
        }
        let pin = product_pin(ctx, task);
        let (product, product_range) =
            match (pin, ctx.profile.and_then(|p| p.gpu_product.as_deref())) {
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
        if cands.is_empty() {
            return;
        }
        let Some(img) = image_cuda(ctx, task) else {
            return;
        };
        let (cmaj, cmin) = img.cuda;
        let where_from = match product_range {
            Some(_) => "the job's GPU annotation",
            None => "the cluster profile",
        };
        // Too old: older than what every product it may land on needs.
        let Some(need) = cands.iter().map(|p| p.min_cuda).min() else {
            return;
        };
        let names: Vec<&str> = cands.iter().map(|p| p.name).collect();
        let gpu = names.join("/");
        if img.cuda < need {
            let mut d = Diagnostic::new(
                Rule::ImageTooOldForGpu,
                img.range,
                format!(
                    "{} is built on CUDA {cmaj}.{cmin}, older than the CUDA {}.{} that {gpu} needs",
                    img.what, need.0, need.1
                ),
            );
            if let Some(r) = product_range {
                d = d.with_label(r, format!("{gpu} from {where_from}"));
            }
            let help = if img.pytorch {
                match earliest_tag_with(need) {
                    Some((t, c)) => format!(
                        "use a tag built on CUDA {}.{} or later, such as `{t}-py3` (CUDA {}.{})",
                        need.0, need.1, c.0, c.1
                    ),
                    None => format!("use a tag built on CUDA {}.{} or later", need.0, need.1),
                }
            } else {
                format!("use a `nvidia/cuda` tag of {}.{} or later", need.0, need.1)
            };
            let help = match product_range {
                Some(_) => help,
                None => format!("{help}; the GPU comes from {where_from}"),
            };
            out.push(d.with_help(help));
            return;
        }
        // Too new: a CUDA major that dropped every product it may land on.
        if let Some(dropped) = cands
            .iter()
            .map(|p| p.dropped_in)
            .collect::<Option<Vec<u32>>>()
            .and_then(|v| v.into_iter().min())
        {
            if cmaj >= dropped {
                let mut d = Diagnostic::new(
                    Rule::ImageTooOldForGpu,
                    img.range,
                    format!(
                        "{} is built on CUDA {cmaj}.{cmin}, and CUDA {dropped} no longer supports {gpu}",
                        img.what
                    ),
                )
                .with_help(match product_range {
                    Some(_) => format!("use an image built on CUDA {}.x", dropped - 1),
                    None => format!(
                        "use an image built on CUDA {}.x; the GPU comes from {where_from}",
                        dropped - 1
                    ),
                });
                if let Some(r) = product_range {
                    d = d.with_label(r, format!("{gpu} from {where_from}"));
                }
                out.push(d);
            }
        }
    }
}
