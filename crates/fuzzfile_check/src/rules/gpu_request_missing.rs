//! ## What it does
//! Reports GPU work in a job or service that requests no GPU (`resource.devices` has no
//! `nvidia.com/gpu`, in the job or in `defaults.job`): a torchrun, `torch.distributed`,
//! `accelerate launch`, `fabric run` / `lightning run model` or `deepspeed` launch (unless it
//! runs on CPUs: torchrun `--nproc-per-node cpu`, accelerate `--cpu` or a config file with
//! `use_cpu: true`, Lightning `--accelerator cpu`; or its command line says the run is on CPUs:
//! an argument naming `cpu` or `gloo`, since the script then decides), an nccl-tests program
//! (`all_reduce_perf`, ..., bare or under mpirun), an `srun` asking GPUs for its tasks
//! (`--gpus-per-task`, `--gpus-per-node`, `--gpus`, `--gres=gpu:N`), or `NCCL_*` / `NVIDIA_IMEX_CHANNELS`
//! settings in its environment. Launches are found wherever the job runs them (see
//! `launcher-nproc-mismatch`).
//!
//! ## Launchers
//! Each launcher by its own flag, as its argument parser reads it (messages and fixes use the
//! launcher's own spelling):
//! - torchrun, `python -m torch.distributed.run` and `tune run`: `get_args_parser` in
//!   torch/distributed/run.py
//!   (<https://github.com/pytorch/pytorch/blob/010929fd3f401c3868310396e6a91ed95aa0305b/torch/distributed/run.py>):
//!   always GPU work unless `--nproc-per-node cpu`/`xpu`.
//! - `accelerate launch` (and `python -m accelerate.commands.launch`): `launch_command_parser` in
//!   src/accelerate/commands/launch.py and `prepare_multi_gpu_env` in
//!   src/accelerate/utils/launch.py
//!   (<https://github.com/huggingface/accelerate/blob/v1.14.0/src/accelerate/commands/launch.py>):
//!   GPU work unless `--cpu`, or a config file with `use_cpu: true` or `distributed_type:
//!   MULTI_CPU`.
//! - `fabric run` and `lightning run model`: the click command `_run` in
//!   src/lightning/fabric/cli.py
//!   (<https://github.com/Lightning-AI/pytorch-lightning/blob/2.6.5/src/lightning/fabric/cli.py>):
//!   GPU work unless `--accelerator cpu`.
//! - `deepspeed`: `parse_args` and `main` in deepspeed/launcher/runner.py
//!   (<https://github.com/microsoft/DeepSpeed/blob/v0.16.4/deepspeed/launcher/runner.py>): always
//!   GPU work (it stops when the node shows no GPU).
//!
//! Fix safety: unsafe: it adds a resource request (GPUs).
//!
//! ## Why is this bad?
//! Without a device request the scheduler gives the container no GPU: CUDA finds no device,
//! NCCL cannot initialise, and torchrun's `--nproc-per-node gpu` fails with
//! `Cuda is not available`.
//!
//! ## Example
//! ```yaml
//! jobs:
//!   train:
//!     command: [torchrun, --standalone, --nproc-per-node=4, train.py]
//!     resource:
//!       cpu: {cores: 16}
//!       memory: {size: 64GiB}
//! ```
//!
//! ## Use instead
//! ```yaml
//! jobs:
//!   train:
//!     command: [torchrun, --standalone, --nproc-per-node=4, train.py]
//!     resource:
//!       cpu: {cores: 16}
//!       memory: {size: 64GiB}
//!       devices: {nvidia.com/gpu: 4}
//! ```

use super::launcher_common::launcher_name;
use super::{Check, Context, TaskContext};
use crate::edits::add_mapping_entry;
use crate::gpu::is_nccl_test;
use crate::launch::Launcher;
use crate::semantics::{PerNode, Resolved};
use fuzzfile_diagnostics::{Diagnostic, Fix, Rule, TextRange};

declare_rule! {
    pub struct GpuRequestMissing {
        code: "FZ212",
        name: "gpu-request-missing",
        severity: Error,
        category: Gpu,
        summary: "A GPU launcher or NCCL settings in a job that requests no GPU",
        fix: Sometimes,
        fix_safety: Unsafe,
    }
}

impl Check for GpuRequestMissing {
    fn task(&self, ctx: &Context<'_>, t: &TaskContext<'_>, out: &mut Vec<Diagnostic>) {
        let task = t.task;
        if t.gpus.is_some_and(|g| g.0 > 0) {
            return;
        }
        let env = &t.env;
        let mut evidence: Option<(TextRange, String, Option<u64>)> = None;
        for inv in t.launches() {
            match inv.launcher {
                Launcher::Torchrun
                | Launcher::DistributedLaunch
                | Launcher::Accelerate
                | Launcher::Lightning
                | Launcher::Deepspeed => {
                    let nproc = inv.setting("nproc-per-node").map(|s| &s.value);
                    if inv.on_cpus() {
                        continue;
                    }
                    // A run the command line itself says is on CPUs (`--device cpu`, a
                    // `*-cpu` config, the gloo backend): the script decides, not the launcher.
                    if inv.args().iter().any(|w| {
                        let t = w.text.to_ascii_lowercase();
                        t.contains("cpu") || t.contains("gloo")
                    }) {
                        continue;
                    }
                    let n = match &nproc {
                        Some(Resolved::Literal(v)) => match inv.per_node(v, None) {
                            PerNode::Processes(n) => Some(n),
                            PerNode::Devices(ids) => Some(ids.len() as u64),
                            _ => None,
                        },
                        _ => None,
                    };
                    evidence = Some((
                        inv.range(),
                        format!("`{}` launches GPU workers", launcher_name(inv)),
                        n,
                    ));
                    break;
                }
                Launcher::NcclTest => {
                    let p = &inv.words[0];
                    evidence = Some((p.range, format!("`{}` is an NCCL test", p.text), None));
                    break;
                }
                Launcher::Srun if inv.srun_requests_gpus() => {
                    evidence = Some((inv.range(), "`srun` asks GPUs for its tasks".into(), None));
                    break;
                }
                Launcher::Mpirun => {
                    let program = inv.parsed.as_ref().and_then(|m| m.script());
                    if let Some(p) = program.filter(|p| is_nccl_test(&p.text)) {
                        evidence = Some((p.range, format!("`{}` is an NCCL test", p.text), None));
                        break;
                    }
                }
                _ => {}
            }
        }
        if evidence.is_none() {
            if let Some(e) = env.iter().find(|e| {
                (e.name.starts_with("NCCL_") || e.name == "NVIDIA_IMEX_CHANNELS")
                    && !e.from_defaults
            }) {
                evidence = Some((
                    e.name_range,
                    format!("`{}` configures GPU communication", e.name),
                    None,
                ));
            }
        }
        let Some((range, why, n)) = evidence else {
            return;
        };
        let mut d = Diagnostic::new(
            Rule::GpuRequestMissing,
            range,
            format!(
                "{why}, but {} `{}` requests no GPU",
                task.kind.as_str(),
                task.name.value
            ),
        )
        .with_label(
            task.name.range,
            "no `nvidia.com/gpu` in its `resource.devices`",
        )
        .with_help("add `devices: {nvidia.com/gpu: <GPUs per node>}` under `resource`");
        if let (Some(n), Some(res)) = (n, ctx.tree.get(task.body, "resource")) {
            if task
                .resource
                .as_ref()
                .is_some_and(|r| r.devices_key.is_none())
            {
                if let Some(e) = add_mapping_entry(
                    ctx.text,
                    ctx.tree,
                    res.value,
                    "devices",
                    &format!("{{nvidia.com/gpu: {n}}}"),
                ) {
                    d = d.with_fix(Fix {
                        message: format!("Request {n} GPUs per node"),
                        edits: vec![e],
                        applicability: None,
                    });
                }
            }
        }
        out.push(d);
    }
}
