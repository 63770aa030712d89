//! GPU and NCCL facts about jobs that several rules share: whether a job is a multinode GPU
//! job, where an environment variable is set, which GPU product a job is pinned to, and the
//! CUDA data tables (`data/*.tsv`) the image rule reads; [`ngc`]: the CUDA and NCCL of NGC
//! PyTorch tags, bounded between the confirmed tags around them.

pub mod ngc;

use crate::launch::Launcher;
use crate::rules::Context;
use fuzzfile_diagnostics::TextRange;
use fuzzfile_model::{EnvVar, KeyValue, Task, TaskKind};

/// `multinode.nodes` when it is more than one node.
pub fn multinode(ctx: &Context<'_>, task: &Task) -> Option<(u64, TextRange)> {
    ctx.facts(task).nodes.filter(|n| n.0 > 1)
}

/// An nccl-tests program (`all_reduce_perf`, `sendrecv_perf`, ...).
pub fn is_nccl_test(program: &str) -> bool {
    let p = program.rsplit('/').next().unwrap_or(program);
    p.ends_with("_perf")
        && [
            "all_reduce",
            "all_gather",
            "alltoall",
            "broadcast",
            "reduce_scatter",
            "reduce",
            "scatter",
            "gather",
            "sendrecv",
            "hypercube",
        ]
        .iter()
        .any(|k| p.starts_with(k))
}

/// Whether `task` does GPU work: it requests GPUs, or (unless it explicitly requests 0) it
/// starts a GPU launcher (torchrun, `torch.distributed.*`, `accelerate launch` or `fabric run`
/// not told to run on CPUs, deepspeed, an nccl-tests program
/// alone or under mpirun, srun asking GPUs with `--gpus-per-task`, `--gpus-per-node`,
/// `--gpus` or `--gres=gpu:N`) or sets `NCCL_*` variables.
pub fn uses_gpus(ctx: &Context<'_>, task: &Task, env: &[&EnvVar]) -> bool {
    let facts = ctx.facts(task);
    match facts.gpus_per_node {
        Some((0, _)) => return false,
        Some(_) => return true,
        None => {}
    }
    let launcher = facts.launches.iter().any(|l| match l.launcher {
        Launcher::Torchrun
        | Launcher::DistributedLaunch
        | Launcher::Deepspeed
        | Launcher::NcclTest => true,
        // torchrun's front ends, unless told to run on CPUs.
        Launcher::Accelerate | Launcher::Lightning => !l.on_cpus(),
        Launcher::Mpirun => l
            .parsed
            .as_ref()
            .and_then(|m| m.script())
            .is_some_and(|p| is_nccl_test(&p.text)),
        // srun asking GPUs for its tasks or nodes.
        Launcher::Srun => l.srun_requests_gpus(),
        _ => false,
    });
    launcher || env.iter().any(|e| e.name.starts_with("NCCL_"))
}

/// A job that runs on more than one node and does GPU work: `(nodes, range of the value)`.
pub fn multinode_gpu_job(ctx: &Context<'_>, task: &Task) -> Option<(u64, TextRange)> {
    if task.kind != TaskKind::Job {
        return None;
    }
    let n = multinode(ctx, task)?;
    let env: Vec<&EnvVar> = ctx.facts(task).env.iter().collect();
    uses_gpus(ctx, task, &env).then_some(n)
}

/// The last entry named `name` in an effective environment.
pub fn env_get<'a>(env: &[&'a EnvVar], name: &str) -> Option<&'a EnvVar> {
    env.iter().rev().find(|e| e.name == name).copied()
}

/// Whether a value is written literally (no `$` expansion, no `secret://` reference), so a rule
/// can judge it.
pub fn is_literal(e: &EnvVar) -> bool {
    e.secret.is_none() && !e.value.contains('$') && !e.value.starts_with("secret://")
}

/// Whether the task's command or script mentions `name` at all (an `export NAME=...` in a
/// script, `-x NAME=...` for mpirun, `NAME=... torchrun`): rules that report a *missing*
/// variable stay silent then.
pub fn mentions(task: &Task, name: &str) -> bool {
    task.script.as_ref().is_some_and(|s| s.value.contains(name))
        || task
            .command
            .as_ref()
            .is_some_and(|c| c.value.iter().any(|w| w.value.contains(name)))
        || task.args.iter().any(|a| a.value.contains(name))
}

/// The source range of bytes `start..end` of the env value `e`, when the value is written
/// exactly as it reads (no escapes or folding); else the whole value.
pub fn value_sub_range(text: &str, e: &EnvVar, start: usize, end: usize) -> TextRange {
    if e.value_range.slice(text) == e.value && start <= end && end <= e.value.len() {
        TextRange::new(
            e.value_range.start + start as u32,
            e.value_range.start + end as u32,
        )
    } else {
        e.value_range
    }
}

/// The name and the value of an env entry, as one range.
pub fn entry_range(e: &EnvVar) -> TextRange {
    e.name_range.cover(e.value_range)
}

/// Annotation keys that pin a job to a GPU product: the documented `nvidia.com/gpu.product`
/// and the `nvidia.com/gpu.model` the catalog templates use.
pub const PRODUCT_KEYS: &[&str] = &["nvidia.com/gpu.product", "nvidia.com/gpu.model"];

/// Every `resource.annotations` entry that applies to the task: its own, then those of
/// `defaults.job` (for jobs) that it does not override.
pub fn annotations<'m>(ctx: &Context<'m>, task: &'m Task) -> Vec<&'m KeyValue> {
    let mut out: Vec<&KeyValue> = task
        .resource
        .as_ref()
        .map(|r| r.annotations.iter().collect())
        .unwrap_or_default();
    if task.kind == TaskKind::Job {
        if let Some(defaults) = default_annotations(ctx) {
            for kv in defaults {
                if !out.iter().any(|o| o.key.value == kv.key.value) {
                    out.push(kv);
                }
            }
        }
    }
    out
}

/// The `resource.annotations` of `defaults.job`, which every job takes, when it has a
/// `resource`.
pub fn default_annotations<'m>(ctx: &Context<'m>) -> Option<&'m [KeyValue]> {
    let r = ctx.model.defaults.as_ref()?.resource.as_ref()?;
    Some(&r.annotations)
}

/// The annotation that pins the task to a GPU product, if any.
pub fn product_pin<'m>(ctx: &Context<'m>, task: &'m Task) -> Option<&'m KeyValue> {
    annotations(ctx, task)
        .into_iter()
        .find(|kv| PRODUCT_KEYS.contains(&kv.key.value.as_str()))
}

/// GPU product names the ambiguity rule knows, besides the cluster profile's.
pub const KNOWN_PRODUCTS: &[&str] = &[
    "V100",
    "T4",
    "A10",
    "A10G",
    "A30",
    "A40",
    "A100",
    "L4",
    "L40",
    "L40S",
    "H100",
    "H200",
    "GH200",
    "B200",
    "GB200",
    "B300",
    "GB300",
    "RTX PRO 6000",
];

/// One row of `data/gpu-products.tsv`.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuProduct {
    pub name: &'static str,
    /// Compute capability (`9.0`).
    pub cc: &'static str,
    /// Lowest CUDA (major, minor) whose code runs natively on the product.
    pub min_cuda: (u32, u32),
    /// First CUDA major that no longer supports the product, if any.
    pub dropped_in: Option<u32>,
}

const GPU_PRODUCTS_TSV: &str = include_str!("../data/gpu-products.tsv");

/// `12.8` → `(12, 8)`; also reads the start of `12.8.0.038` or `12.4.1-devel`.
pub fn parse_cuda(s: &str) -> Option<(u32, u32)> {
    let mut parts = s.split(['.', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Rows of a data table whose `status` column is `confirmed`; comments and the header skipped.
fn confirmed_rows(tsv: &'static str, status_col: usize) -> impl Iterator<Item = Vec<&'static str>> {
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .skip(1)
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .filter(move |c| c.get(status_col).is_some_and(|s| s.trim() == "confirmed"))
}

/// The confirmed products (columns: product, cc, min_cuda, dropped_in, status, source).
pub fn gpu_products() -> Vec<GpuProduct> {
    confirmed_rows(GPU_PRODUCTS_TSV, 4)
        .filter_map(|c| {
            Some(GpuProduct {
                name: c.first()?.trim(),
                cc: c.get(1)?.trim(),
                min_cuda: parse_cuda(c.get(2)?.trim())?,
                dropped_in: c.get(3).and_then(|d| d.trim().parse().ok()),
            })
        })
        .collect()
}

/// The products of `table` that a product string (an annotation value matched as a substring
/// of the node's product, or a profile's product name) can stand for: those whose name
/// contains it (`B200` → B200 and GB200), and the most specific names it contains
/// (`NVIDIA-H100-80GB` → H100, `NVIDIA L40S` → L40S, not L4).
pub fn candidates<'t>(value: &str, table: &'t [GpuProduct]) -> Vec<&'t GpuProduct> {
    let v = value.to_ascii_uppercase();
    if v.trim().is_empty() {
        return Vec::new();
    }
    let up = |p: &GpuProduct| p.name.to_ascii_uppercase();
    let contained: Vec<&GpuProduct> = table.iter().filter(|p| v.contains(&up(p))).collect();
    table
        .iter()
        .filter(|p| {
            let n = up(p);
            n.contains(&v)
                || (v.contains(&n)
                    && !contained
                        .iter()
                        .any(|m| m.name != p.name && up(m).contains(&n)))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_tables_load() {
        let products = gpu_products();
        let h100 = products.iter().find(|p| p.name == "H100").unwrap();
        assert_eq!(h100.min_cuda, (11, 8));
        let v100 = products.iter().find(|p| p.name == "V100").unwrap();
        assert_eq!(v100.dropped_in, Some(13));
        // Unverified rows are in the file but not loaded.
        assert!(GPU_PRODUCTS_TSV.contains("\tunverified\t"));
        assert!(!products.iter().any(|p| p.name == "T4"));
    }

    #[test]
    fn product_strings_map_to_products() {
        let products = gpu_products();
        let names =
            |v: &str| -> Vec<&str> { candidates(v, &products).iter().map(|p| p.name).collect() };
        assert_eq!(names("NVIDIA-H100-80GB-HBM3"), vec!["H100"]);
        assert_eq!(names("B200"), vec!["B200", "GB200"]);
        assert_eq!(names("NVIDIA L40S"), vec!["L40S"]);
        assert_eq!(names("A100"), vec!["A100"]);
        assert_eq!(names("NVIDIA-GB200"), vec!["GB200"]);
        assert!(names("MI300X").is_empty());
    }
}
