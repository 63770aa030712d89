//! Hugging Face Accelerate's `accelerate launch`.
//!
//! Its parser is `launch_command_parser` in `src/accelerate/commands/launch.py`
//! (<https://github.com/huggingface/accelerate/blob/v1.14.0/src/accelerate/commands/launch.py>,
//! tag v1.14.0, commit beb0672aa8444ea7647aee056f624effe5996346): argparse with
//! `allow_abbrev=False` (no prefixes), every `--a_b` option also spelled `--a-b`
//! (`_StoreAction` in `src/accelerate/commands/utils.py`), and the first positional word the
//! training script (`-m`/`--module` is a switch that makes it a module).
//!
//! What it starts (`_validate_launch_command`, `launch_command`, and `prepare_multi_gpu_env` in
//! `src/accelerate/utils/launch.py`): torchrun with `--nproc_per_node = num_processes //
//! num_machines` (`--num_processes` counts the processes of all machines together),
//! `--nnodes = num_machines`, `--node_rank = machine_rank`, and `main_process_ip:port` as the
//! rendezvous endpoint (the master address with `--same_network`). Values not given on the
//! command line come from the config file (`--config_file`, else the default
//! `$HF_HOME/accelerate/default_config.yaml`, `~/.cache/huggingface/accelerate/...`) when there
//! is one; without one, `--num_processes` is the number of GPUs the node shows and
//! `--num_machines` is 1. Without `--multi_gpu` (or FSDP, DeepSpeed, Megatron-LM, from flags
//! or the config's `distributed_type`) one process runs the script, unless no config is used
//! and `--num_processes` is above 1 on a node with several GPUs (then multi-GPU is switched on).

use super::args::*;
use super::launchers::PerNode;
use super::shape::{count, Count, Resources, Shape};
use super::{Launch, Resolved, Setting};
use fuzzfile_diagnostics::TextRange;
use fuzzfile_syntax::{NodeId, Tree};

/// Options of `accelerate launch` that take a value (normalised: no dashes, `_` as `-`).
const VALUE_FLAGS: &[&str] = &[
    "aws-access-key-id",
    "aws-secret-access-key",
    "config-file",
    "deepspeed-config-file",
    "deepspeed-exclusion-filter",
    "deepspeed-hostfile",
    "deepspeed-inclusion-filter",
    "deepspeed-moe-layer-cls-names",
    "deepspeed-multinode-launcher",
    "dynamo-backend",
    "dynamo-mode",
    "env",
    "fp8-amax-compute-algo",
    "fp8-amax-history-len",
    "fp8-backend",
    "fp8-enable-fsdp-float8-all-gather",
    "fp8-format",
    "fp8-interval",
    "fp8-margin",
    "fp8-opt-level",
    "fp8-override-linear-precision",
    "fp8-pad-inner-dim",
    "fsdp-activation-checkpointing",
    "fsdp-auto-wrap-policy",
    "fsdp-backward-prefetch",
    "fsdp-cpu-ram-efficient-loading",
    "fsdp-forward-prefetch",
    "fsdp-min-num-params",
    "fsdp-offload-params",
    "fsdp-reshard-after-forward",
    "fsdp-sharding-strategy",
    "fsdp-state-dict-type",
    "fsdp-sync-module-states",
    "fsdp-transformer-layer-cls-to-wrap",
    "fsdp-use-orig-params",
    "fsdp-version",
    "gpu-ids",
    "gradient-accumulation-steps",
    "gradient-clipping",
    "log-dir",
    "machine-rank",
    "main-process-ip",
    "main-process-port",
    "main-training-function",
    "max-restarts",
    "megatron-lm-attention-backend",
    "megatron-lm-attention-dropout",
    "megatron-lm-attention-softmax-in-fp32",
    "megatron-lm-calculate-per-token-loss",
    "megatron-lm-context-parallel-size",
    "megatron-lm-decoder-last-pipeline-num-layers",
    "megatron-lm-eod-mask-loss",
    "megatron-lm-expert-model-parallel-size",
    "megatron-lm-expert-tensor-parallel-size",
    "megatron-lm-gradient-clipping",
    "megatron-lm-hidden-dropout",
    "megatron-lm-no-load-optim",
    "megatron-lm-no-save-optim",
    "megatron-lm-num-micro-batches",
    "megatron-lm-optimizer-cpu-offload",
    "megatron-lm-overlap-cpu-optimizer-d2h-h2d",
    "megatron-lm-pp-degree",
    "megatron-lm-recompute-activations",
    "megatron-lm-recompute-granularity",
    "megatron-lm-recompute-method",
    "megatron-lm-recompute-num-layers",
    "megatron-lm-sequence-parallelism",
    "megatron-lm-tp-degree",
    "megatron-lm-use-custom-fsdp",
    "megatron-lm-use-distributed-optimizer",
    "megatron-lm-use-precision-aware-optimizer",
    "megatron-lm-use-rotary-position-embeddings",
    "mixed-precision",
    "monitor-interval",
    "mpirun-hostfile",
    "num-cpu-threads-per-process",
    "num-machines",
    "num-processes",
    "offload-optimizer-device",
    "offload-optimizer-nvme-path",
    "offload-param-device",
    "offload-param-nvme-path",
    "parallelism-config-cp-backend",
    "parallelism-config-cp-comm-strategy",
    "parallelism-config-cp-size",
    "parallelism-config-dp-replicate-size",
    "parallelism-config-dp-shard-size",
    "parallelism-config-sp-attn-implementation",
    "parallelism-config-sp-backend",
    "parallelism-config-sp-seq-length",
    "parallelism-config-sp-seq-length-is-variable",
    "parallelism-config-sp-size",
    "parallelism-config-tp-size",
    "rdzv-backend",
    "rdzv-conf",
    "role",
    "t",
    "tee",
    "vm",
    "zero-stage",
    "zero3-init-flag",
    "zero3-save-16bit-model",
];

/// Its switches.
const SWITCHES: &[&str] = &[
    "cpu",
    "debug",
    "downcast-bf16",
    "dynamo-use-dynamic",
    "dynamo-use-fullgraph",
    "dynamo-use-regional-compilation",
    "enable-cpu-affinity",
    "fp8-use-autocast-during-eval",
    "h",
    "help",
    "m",
    "module",
    "multi-gpu",
    "no-python",
    "no-tpu-cluster",
    "q",
    "quiet",
    "same-network",
    "tpu",
    "tpu-cluster",
    "tpu-use-sudo",
    "use-deepspeed",
    "use-fsdp",
    "use-megatron-lm",
    "use-parallelism-config",
];

const GRAMMAR: Grammar = Grammar {
    value_flags: VALUE_FLAGS,
    switches: SWITCHES,
    program_flags: &[],
    normalise,
    abbreviations: false,
};

/// The option and the config key for each launcher-independent setting.
const SETTINGS: &[(&str, &str, &str)] = &[
    ("nproc-per-node", "num-processes", "num_processes"),
    ("nnodes", "num-machines", "num_machines"),
    ("node-rank", "machine-rank", "machine_rank"),
    ("master-addr", "main-process-ip", "main_process_ip"),
    ("master-port", "main-process-port", "main_process_port"),
    ("gpu-ids", "gpu-ids", "gpu_ids"),
];

/// The flag a message or a fix names for a setting that is not given.
pub(super) fn flag_for(setting: &str) -> Option<&'static str> {
    Some(match setting {
        "nproc-per-node" => "--num_processes",
        "nnodes" => "--num_machines",
        "node-rank" => "--machine_rank",
        "master-addr" => "--main_process_ip",
        "master-port" => "--main_process_port",
        _ => return None,
    })
}

/// Parse `accelerate launch`'s arguments as its argparse parser does. A `--config_file` makes
/// the parse incomplete until the file is read ([`read_config`]).
pub(super) fn accelerate_args(l: &Launch) -> LauncherArgs {
    let mut out = GRAMMAR.parse(l.args());
    for &(setting, flag, _) in SETTINGS {
        if let Some(s) = out.get(flag).and_then(|f| Setting::from_flag(l, f)) {
            out.settings.push((setting, s));
        }
    }
    if out.has("config-file") {
        out.incomplete = true;
    }
    out
}

/// A file the job ships, as the semantics layer sees it.
pub(super) struct ShippedFile<'a> {
    pub path: &'a str,
    pub content: &'a str,
    /// The scalar holding the content, and its range (where to point when the bytes of a value
    /// cannot be placed exactly).
    pub node: NodeId,
    pub range: TextRange,
}

/// The config file `accelerate launch` reads: `--config_file`, else the default path when the
/// job ships a file there (`$HF_HOME/accelerate/default_config.yaml`,
/// `$XDG_CACHE_HOME/huggingface/accelerate/default_config.yaml`, or
/// `~/.cache/huggingface/accelerate/default_config.yaml` in any home).
fn config_path(l: &Launch) -> Option<ConfigPath> {
    if let Some(f) = l.parsed.as_ref().and_then(|a| a.get("config-file")) {
        return Some(match f.value.as_ref().map(|v| &v.value) {
            Some(Resolved::Literal(p)) => ConfigPath::Exactly(p.clone()),
            _ => ConfigPath::NotKnown,
        });
    }
    // `--cpu` skips the default file (not a given one).
    if l.parsed.as_ref().is_some_and(|a| a.has("cpu")) {
        return None;
    }
    let var = |n: &str| l.env(n).and_then(|w| w.value.literal().map(str::to_owned));
    Some(match (var("HF_HOME"), var("XDG_CACHE_HOME")) {
        (Some(h), _) => ConfigPath::Default(format!(
            "{}/accelerate/default_config.yaml",
            h.trim_end_matches('/')
        )),
        (None, Some(x)) => ConfigPath::Default(format!(
            "{}/huggingface/accelerate/default_config.yaml",
            x.trim_end_matches('/')
        )),
        (None, None) => ConfigPath::Home,
    })
}

enum ConfigPath {
    Exactly(String),
    Default(String),
    /// `~/.cache/huggingface/accelerate/default_config.yaml`, for a home not known here.
    Home,
    NotKnown,
}

/// Read the config file the launch uses when the job ships it: its values stand in for the
/// options not given on the command line, each pointing at its bytes in the Fuzzfile.
pub(super) fn read_config(
    l: &mut Launch,
    files: &[ShippedFile<'_>],
    cwd: Option<&str>,
    text: &str,
    tree: &Tree,
) {
    let Some(path) = config_path(l) else {
        return;
    };
    // A relative path names a file in the job's working directory (`cwd:`).
    let in_cwd = |p: &str| match cwd {
        Some(dir) if !p.starts_with('/') => {
            format!(
                "{}/{}",
                dir.trim_end_matches('/'),
                p.trim_start_matches("./")
            )
        }
        _ => p.to_owned(),
    };
    let file = match &path {
        ConfigPath::Exactly(p) | ConfigPath::Default(p) => {
            let p = in_cwd(p);
            files.iter().find(|f| f.path == p)
        }
        ConfigPath::Home => files.iter().find(|f| {
            f.path
                .ends_with("/.cache/huggingface/accelerate/default_config.yaml")
        }),
        ConfigPath::NotKnown => None,
    };
    let Some(file) = file else {
        // A config file given but not shipped: its values are not known (the parse stays
        // incomplete); no default file: the launch runs without one.
        return;
    };
    let ct = fuzzfile_syntax::parse(file.content);
    let Some(root) = ct.root() else {
        return;
    };
    let outer = tree.scalar(file.node).filter(|s| s.map.is_exact());
    let place = |r: TextRange| -> (TextRange, bool) {
        match outer {
            Some(s) => {
                let at = s.map.range_to_source(r.start as usize..r.end as usize);
                let exact = at.slice(text) == r.slice(file.content);
                (at, exact)
            }
            None => (file.range, false),
        }
    };
    let value_of = |map: NodeId, key: &str| -> Option<(String, TextRange, bool)> {
        let e = ct.get(map, key)?;
        let s = ct.scalar(e.value)?;
        let r = ct.node(e.value).range;
        let (at, exact) = place(r);
        Some((
            s.value.to_owned(),
            at,
            exact && r.slice(file.content) == s.value,
        ))
    };
    if value_of(root, "compute_environment").is_some_and(|(v, _, _)| v != "LOCAL_MACHINE") {
        return; // SageMaker: not a launch on this node
    }
    // Read: the config no longer hides anything but what the command line hides.
    let incomplete = GRAMMAR.parse(l.args()).incomplete;
    let Some(args) = l.parsed.as_mut() else {
        return;
    };
    let from_config = |(v, at, exact): (String, TextRange, bool), key: &str| Setting {
        value: Resolved::Literal(v),
        given_as: key.to_owned(),
        range: at,
        written: at,
        in_place: false,
        literal_in_place: exact,
        from_env: false,
    };
    for &(setting, _, key) in SETTINGS {
        if args.settings.iter().any(|(n, _)| *n == setting) {
            continue; // the command line wins
        }
        if let Some(v) = value_of(root, key) {
            args.settings.push((setting, from_config(v, key)));
        }
    }
    for key in ["distributed_type", "use_cpu"] {
        if let Some(v) = value_of(root, key) {
            let name = if key == "use_cpu" {
                "use-cpu"
            } else {
                "distributed-type"
            };
            args.settings.push((name, from_config(v, key)));
        }
    }
    if let Some(ds) = ct.get(root, "deepspeed_config") {
        if let Some(v) = value_of(ds.value, "deepspeed_multinode_launcher") {
            args.settings.push((
                "deepspeed-multinode-launcher",
                from_config(v, "deepspeed_multinode_launcher"),
            ));
        }
    }
    args.incomplete = incomplete;
}

fn literal<'a>(l: &'a Launch, setting: &str) -> Option<&'a str> {
    l.setting(setting).and_then(|s| s.value.literal())
}

fn switch(l: &Launch, name: &str) -> bool {
    l.parsed.as_ref().is_some_and(|a| a.has(name))
}

/// Whether a config file was read (its `distributed_type` is a setting).
fn with_config(l: &Launch) -> bool {
    l.setting("distributed-type").is_some()
}

/// `--num_machines`, or its default of 1 when nothing may give it.
fn machines(l: &Launch) -> Option<u64> {
    match l.setting("nnodes") {
        Some(s) => s.value.literal()?.trim().parse().ok(),
        None if l.parsed.as_ref().is_some_and(|a| a.incomplete) => None,
        None => Some(1),
    }
}

/// The run is on CPUs (`--cpu`, or `use_cpu: true` / `distributed_type: MULTI_CPU` in the
/// config).
fn on_cpu(l: &Launch) -> bool {
    switch(l, "cpu")
        || literal(l, "use-cpu").is_some_and(|v| v.eq_ignore_ascii_case("true"))
        || literal(l, "distributed-type").is_some_and(|v| v == "MULTI_CPU" || v == "XLA")
}

/// Whether it starts one process per GPU through torchrun (the multi-GPU, FSDP, DeepSpeed and
/// Megatron-LM launchers), or runs the script in one process (`simple_launcher`). `None`: not
/// known here.
fn distributed(l: &Launch, num_processes: u64, gpus: Option<u64>) -> Option<bool> {
    if ["multi-gpu", "use-fsdp", "use-deepspeed", "use-megatron-lm"]
        .iter()
        .any(|f| switch(l, f))
    {
        return Some(true);
    }
    if with_config(l) {
        return literal(l, "distributed-type")
            .map(|t| matches!(t, "MULTI_GPU" | "FSDP" | "DEEPSPEED" | "MEGATRON_LM"));
    }
    // No config: multi-GPU is switched on for more than one process on a node with more than
    // one GPU.
    match gpus {
        Some(g) => Some(num_processes > 1 && g > 1),
        None => Some(num_processes > 1),
    }
}

/// The processes one value of `--num_processes` (all machines together) starts on each node.
pub(super) fn per_node(l: &Launch, value: &str, gpus: Option<u64>) -> PerNode {
    if on_cpu(l) {
        return PerNode::NotGpus;
    }
    let Ok(n) = value.trim().parse::<u64>() else {
        return PerNode::Invalid("`--num_processes` takes a whole number");
    };
    match distributed(l, n, gpus) {
        Some(true) => {}
        Some(false) => return PerNode::Processes(1),
        None => return PerNode::Unknown,
    }
    match machines(l) {
        Some(m) if m > 0 => PerNode::Processes(n / m),
        _ => PerNode::Unknown,
    }
}

/// The `--num_processes` that starts `per_node` processes on each node.
pub(super) fn nproc_value(l: &Launch, per_node: u64) -> Option<String> {
    let m = machines(l)?;
    Some(per_node.checked_mul(m.max(1))?.to_string())
}

/// Without `--num_processes` (and no config giving it), accelerate takes the GPUs the node
/// shows as the processes of all machines: `gpus / num_machines` per node.
pub(super) fn default_per_node(l: &Launch, gpus: u64) -> Option<(u64, String)> {
    if on_cpu(l) || with_config(l) || l.parsed.as_ref().is_some_and(|a| a.incomplete) {
        return None;
    }
    let m = machines(l)?;
    if m <= 1 {
        return None;
    }
    Some((
        gpus / m,
        format!("without `--num_processes`, accelerate launch takes the {gpus} GPUs of the node as the processes of all {m} machines: {} per node", gpus / m),
    ))
}

/// With DeepSpeed on several machines and a multinode launcher other than `standard`,
/// accelerate starts `deepspeed --hostfile ...`, which starts the other nodes itself.
pub(super) fn starts_other_nodes(l: &Launch) -> bool {
    let deepspeed =
        switch(l, "use-deepspeed") || literal(l, "distributed-type") == Some("DEEPSPEED");
    if !deepspeed || machines(l).is_none_or(|m| m <= 1) {
        return false;
    }
    let launcher = l
        .parsed
        .as_ref()
        .and_then(|a| a.get("deepspeed-multinode-launcher"))
        .and_then(|f| f.value.as_ref())
        .map(|v| v.value.clone())
        .or_else(|| {
            l.setting("deepspeed-multinode-launcher")
                .map(|s| s.value.clone())
        });
    !matches!(launcher, Some(Resolved::Literal(v)) if v == "standard")
}

/// accelerate's processes: `num_processes` in all, `num_machines` nodes.
pub(super) fn shape(l: &Launch, args: &LauncherArgs, r: Resources) -> Shape {
    let nnodes = count(l.setting("nnodes"), &|v| v.parse().ok().map(|n| (n, None)))
        .or_else(|| (!args.incomplete && !with_config(l)).then_some(Count::by_default(Some(1))));
    let nproc = count(
        l.setting("nproc-per-node"),
        &|v| match per_node(l, v, r.gpus) {
            PerNode::Processes(n) => Some((n, None)),
            _ => None,
        },
    )
    .or_else(|| {
        let g = r.gpus?;
        if args.incomplete || with_config(l) || on_cpu(l) {
            return None;
        }
        let m = machines(l)?.max(1);
        Some(Count::by_default(Some(g / m)))
    });
    Shape::nodes_by_processes(nnodes, nproc)
}
