//! Reference text for hover and completion: the environment variables that matter to
//! distributed GPU jobs (NCCL, PyTorch's NCCL layer, torchrun's `PET_*`, Fuzzball's
//! `MULTINODE_*` and `FB_*`) and torchrun's flags. Facts and sources are those of the rules
//! (`fuzzfile_check::rules::nccl_*`, `torchrun_*`) and the research notes they cite; values
//! that the rules check are described the way the rules check them.

/// One documented name: what it does and what values it takes.
pub struct Entry {
    pub name: &'static str,
    pub doc: &'static str,
}

const fn e(name: &'static str, doc: &'static str) -> Entry {
    Entry { name, doc }
}

/// Fuzzball's `exec_all` helper (`generic` multinode jobs). The seed of the research notes
/// says it "runs torchrun on every node" with `RANK` set to each node's rank; how it runs the
/// command there (through the SSH wrapper, with a shell) is what the runner implements and
/// the shell evaluator models (words are expanded again on each node).
pub const EXEC_ALL: &str = "Fuzzball's helper of `implementation: generic`: runs the rest of the command line on every node of the job, head node first, with `RANK` set to the node's rank (0 on the head), and waits for all of them. The command is expanded again on each node, so write `'$RANK'` in single quotes to get each node's own rank; an unquoted `$RANK` is the head's.";

/// The name that replaces a deprecated variable (`NCCL_ASYNC_ERROR_HANDLING` →
/// `TORCH_NCCL_ASYNC_ERROR_HANDLING`), from the table `nccl-invalid-value` reports them by.
pub fn replacement(name: &str) -> Option<&'static str> {
    fuzzfile_check::rules::nccl_invalid_value::RENAMED
        .iter()
        .find(|(old, _)| *old == name)
        .map(|(_, new)| *new)
}

/// Environment variables, by exact name.
pub const VARIABLES: &[Entry] = &[
    // Fuzzball.
    e("MULTINODE_HOSTLIST", "Set by Fuzzball in `generic` multinode jobs: the nodes as a comma-separated `host:slots` list (`host1:2,host2:2`), the format of `mpirun -H`."),
    e("MULTINODE_HOSTLIST_NOSLOTS", "Set by Fuzzball in `generic` multinode jobs: the nodes as a comma-separated list without slots (`host1,host2`), head node first."),
    e("MULTINODE_TOTAL_SLOTS", "Set by Fuzzball in `generic` multinode jobs: the slots of all nodes together (`multinode.nodes` × `procs-per-node`, which defaults to the CPU cores, not the GPUs)."),
    e("MULTINODE_NODE_IP", "Set by Fuzzball in `generic` multinode jobs: the IP address of the node the command runs on. The command runs on the head node, so there it is the head's address, the usual `--master-addr`."),
    e("MULTINODE_SSH_WRAPPER", "Set by Fuzzball in `generic` multinode jobs: a program that runs a command on another node (`$MULTINODE_SSH_WRAPPER host cmd args…`); Open MPI's `--mca plm_rsh_agent`."),
    e("MULTINODE_RSH_WRAPPER", "Same as `MULTINODE_SSH_WRAPPER`."),
    e("MULTINODE_WRAPPER_FORWARD_STREAMS", "Set by you: `1` forwards the stdout and stderr of the other nodes into the workflow log (by default only the head node's output is kept)."),
    e("RANK", "Set by `exec_all` on each node of a `generic` multinode job: the node's rank (0 on the head). Pass it as `--node-rank '$RANK'` (single quotes: expanded on each node, not on the head)."),
    e("FB_TASK_ID", "Set by Fuzzball in each task of a task array: the task's id, from `task-array.start` to `task-array.end`."),
    e("FB_WORKFLOW_ID", "Set by Fuzzball: the id of the running workflow."),
    e("FB_JOB_NAME", "Set by Fuzzball: the name of the job."),
    e("FB_ACCOUNT_ID", "Set by Fuzzball: the account the workflow runs under."),
    e("NVIDIA_IMEX_CHANNELS", "With a value (`0`), Fuzzball adds the IMEX channel device to the container, which Multi-Node NVLink needs; pin the GPU product too so the job lands on IMEX nodes."),
    // NCCL.
    e("NCCL_DEBUG", "NCCL log level: `VERSION`, `WARN`, `INFO`, `ABORT` or `TRACE`. `INFO` and `TRACE` are for debugging (noisy, slower)."),
    e("NCCL_DEBUG_SUBSYS", "Which NCCL subsystems log: a comma list of `INIT`, `COLL`, `P2P`, `SHM`, `NET`, `GRAPH`, `TUNING`, `ENV`, `ALLOC`, `CALL`, `PROXY`, `NVLS`, `BOOTSTRAP`, `REG`, `PROFILE`, `RAS`, `ALL`; `^` in front excludes. Default `INIT,BOOTSTRAP,ENV`."),
    e("NCCL_IB_HCA", "InfiniBand/RoCE devices NCCL may use: a comma list of `dev[:port]`, prefix match by default; `^` in front excludes, `=` in front matches exactly, and `^` comes before `=` (`^=mlx5_0`)."),
    e("NCCL_SOCKET_IFNAME", "Network interfaces for NCCL's bootstrap and socket transport, same `^`/`=` grammar as `NCCL_IB_HCA`. Without it NCCL tries `ib*`, then anything but `docker`, `lo`, `virbr`. Never select `lo` in a multinode job."),
    e("NCCL_IB_DISABLE", "`1` turns the InfiniBand/RoCE transport off, so NCCL falls back to TCP sockets (slow on an IB cluster). Default 0."),
    e("NCCL_NET", "Forces a network transport by name: `IB`, `Socket` or a plugin's name. A name that is not available is fatal at init (`Failed to initialize any NET plugin`)."),
    e("NCCL_NET_PLUGIN", "Network plugin library to load; `none` disables external plugins."),
    e("NCCL_MNNVL_ENABLE", "Multi-Node NVLink: `0` off, `1` force, `2` auto (default). From NCCL 2.27.3, auto on an MNNVL system without an IMEX channel fails at init."),
    e("NCCL_NVLS_ENABLE", "NVLink SHARP: `0` off, `1` on, `2` auto (default)."),
    e("NCCL_CUMEM_ENABLE", "cuMem allocations: `0` or `1`. `0` silently disables Multi-Node NVLink."),
    e("NCCL_P2P_DISABLE", "`1` disables peer-to-peer (NVLink/PCIe) transfers between GPUs; also turns the MNNVL check off."),
    e("NCCL_P2P_LEVEL", "Farthest GPU topology distance for P2P: `LOC`, `NVL`, `NVB`, `C2C`, `PIX`, `PXB`, `P2C`, `PXN`, `PHB`, `SYS`. An unknown name is silently ignored."),
    e("NCCL_NET_GDR_LEVEL", "Farthest distance for GPUDirect RDMA, same level names as `NCCL_P2P_LEVEL`."),
    e("NCCL_SHM_DISABLE", "`1` disables shared-memory transfers within a node (a debugging switch)."),
    e("NCCL_IB_GID_INDEX", "RoCE GID index; default -1 (auto-detect). A wrong fixed index breaks connection setup."),
    e("NCCL_IB_TIMEOUT", "InfiniBand transport timeout exponent (default 20). Not a collective timeout."),
    e("NCCL_IB_RETRY_CNT", "InfiniBand retry count (default 7)."),
    e("NCCL_CROSS_NIC", "Whether rings/trees may use different NICs on different nodes: 0, 1 or 2 (default)."),
    e("NCCL_ALGO", "Collective algorithms to allow: a comma list of `Tree`, `Ring`, `CollNetDirect`, `CollNetChain`, `NVLS`, `NVLSTree`, `PAT`; `^` excludes. For debugging; unknown names fail at init."),
    e("NCCL_PROTO", "Protocols to allow: `LL`, `LL128`, `Simple`; `^` excludes. For debugging; unknown names fail at init."),
    e("NCCL_IGNORE_CPU_AFFINITY", "`1` ignores the process's CPU affinity when picking NICs and GPUs."),
    e("NCCL_TIMEOUT", "Not an NCCL variable: it does nothing. Set the collective timeout in the program (`init_process_group(timeout=...)`)."),
    e("NCCL_ASYNC_ERROR_HANDLING", "Deprecated PyTorch name; use `TORCH_NCCL_ASYNC_ERROR_HANDLING`."),
    e("NCCL_BLOCKING_WAIT", "Deprecated PyTorch name; use `TORCH_NCCL_BLOCKING_WAIT`."),
    e("NCCL_DESYNC_DEBUG", "Deprecated PyTorch name; use `TORCH_NCCL_DESYNC_DEBUG`."),
    // PyTorch.
    e("TORCH_NCCL_ASYNC_ERROR_HANDLING", "PyTorch: what to do when a collective fails or times out (0–3); torchrun sets 1 when unset."),
    e("TORCH_NCCL_BLOCKING_WAIT", "PyTorch: make collectives block and raise on timeout."),
    e("TORCH_NCCL_DESYNC_DEBUG", "PyTorch: report which rank fell out of step after a timeout."),
    e("TORCH_NCCL_DUMP_ON_TIMEOUT", "PyTorch: dump the flight recorder on timeout; needs `TORCH_NCCL_TRACE_BUFFER_SIZE` > 0."),
    e("TORCH_NCCL_TRACE_BUFFER_SIZE", "PyTorch: entries kept by the NCCL flight recorder (0: off)."),
    e("TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "PyTorch: seconds before the watchdog declares a hang."),
    e("TORCH_NCCL_ENABLE_MONITORING", "PyTorch: run the heartbeat monitor thread."),
    e("OMP_NUM_THREADS", "OpenMP threads per process; torchrun sets it to 1 (with a warning) when it starts more than one process and it is unset."),
    e("MASTER_ADDR", "Address of rank 0 for `init_process_group` with the `env://` method; torchrun sets it for its workers."),
    e("MASTER_PORT", "Port of rank 0 for the `env://` method; torchrun sets it for its workers."),
    e("WORLD_SIZE", "Total processes; torchrun sets it for its workers (nnodes × nproc-per-node)."),
    e("LOCAL_RANK", "Rank of a process on its node; torchrun sets it for its workers (use it for `torch.cuda.set_device`)."),
    e("CUDA_VISIBLE_DEVICES", "GPUs a process may see, by index or UUID."),
];

/// torchrun flags (names normalised: no dashes in front, `-` between words), with defaults
/// from `torch/distributed/run.py`. Each also reads `PET_<NAME>` when the flag is absent.
pub const TORCHRUN_FLAGS: &[Entry] = &[
    e("nnodes", "Number of nodes, `N` or `MIN:MAX` (elastic). Default 1. Must admit `multinode.nodes`."),
    e("nproc-per-node", "Processes per node: an integer, or `gpu`, `cpu`, `auto` (`auto`: the GPUs if there are any, else the CPUs). Default 1. Should equal the GPUs per node (`resource.devices`)."),
    e("node-rank", "This node's rank, 0 to nnodes-1 (static rendezvous only). In a `generic` job: `'$RANK'`, single-quoted so each node expands its own."),
    e("master-addr", "Address of the rank-0 node (static rendezvous). Default `127.0.0.1`, which only works on one node; in a `generic` job use `$MULTINODE_NODE_IP`."),
    e("master-port", "Port on the rank-0 node (static rendezvous). Default 29500."),
    e("standalone", "Single-node shortcut: a local c10d rendezvous on a free port with a random id; explicit rendezvous flags are ignored. Each node forms its own world, so not for multinode jobs."),
    e("rdzv-backend", "Rendezvous backend: `static` (default; uses --master-addr/--node-rank), `c10d` (recommended for elastic jobs), `etcd`, `etcd-v2`."),
    e("rdzv-endpoint", "Rendezvous `host[:port]` (c10d default port 29400). Needed with a non-static backend on several nodes."),
    e("rdzv-id", "Rendezvous id, the same on every node and unique per job. Default `none`."),
    e("rdzv-conf", "Extra rendezvous settings, `k=v,k=v` (`join_timeout`, `last_call_timeout`, `close_timeout`, `timeout`)."),
    e("max-restarts", "Restarts of the whole worker group before failing. Default 0."),
    e("monitor-interval", "Seconds between worker health checks. Default 0.1."),
    e("start-method", "How workers start: `spawn` (default), `fork` or `forkserver`."),
    e("module", "Run the script as a Python module (`python -m`)."),
    e("no-python", "Run the script directly, not through Python."),
    e("run-path", "Run the script with `runpy.run_path` (absolute path)."),
    e("log-dir", "Directory for worker logs (a subdirectory per rendezvous id)."),
    e("redirects", "Redirect worker output to files in --log-dir: 0 none, 1 stdout, 2 stderr, 3 both, or per rank `0:1,1:2`."),
    e("tee", "Like --redirects, but also print to the console."),
    e("local-ranks-filter", "Only show the console output of these local ranks (comma list)."),
    e("local-addr", "Address of this node for the rendezvous."),
    e("role", "User-defined role of the workers. Default `default`."),
];

pub fn variable(name: &str) -> Option<&'static Entry> {
    VARIABLES.iter().find(|e| e.name == name)
}

/// Documentation of a torchrun flag as written (`--nproc_per_node`, `--nproc-per-node=4`).
pub fn torchrun_flag(word: &str) -> Option<&'static Entry> {
    let name = word.split('=').next().unwrap_or(word);
    if !name.starts_with("--") && name != "-m" {
        return None;
    }
    let norm = name.trim_start_matches('-').replace('_', "-");
    let norm = if norm == "m" {
        "module".to_owned()
    } else {
        norm
    };
    TORCHRUN_FLAGS.iter().find(|e| e.name == norm)
}

/// Documentation of `PET_<FLAG>`, torchrun's environment form of a flag.
pub fn pet_variable(name: &str) -> Option<(String, &'static Entry)> {
    let flag = name
        .strip_prefix("PET_")?
        .to_ascii_lowercase()
        .replace('_', "-");
    TORCHRUN_FLAGS
        .iter()
        .find(|e| e.name == flag)
        .map(|e| (format!("--{}", e.name), e))
}

/// Markdown for an environment variable, if it is one we know.
pub fn variable_markdown(name: &str) -> Option<String> {
    if let Some(e) = variable(name) {
        return Some(format!("**`{}`**\n\n{}", e.name, e.doc));
    }
    if let Some((flag, e)) = pet_variable(name) {
        return Some(format!(
            "**`{name}`**\n\ntorchrun reads it when `{flag}` is not given.\n\n{}",
            e.doc
        ));
    }
    if let Some(endpoint) = name.strip_prefix("FB_ENDPOINT_URL_") {
        return Some(format!(
            "**`{name}`**\n\nSet by Fuzzball in a service: the full URL of its endpoint `{}`.",
            endpoint.to_ascii_lowercase()
        ));
    }
    if let Some(endpoint) = name.strip_prefix("FB_ENDPOINT_PATH_") {
        return Some(format!(
            "**`{name}`**\n\nSet by Fuzzball in a service: the URL path of its endpoint `{}`.",
            endpoint.to_ascii_lowercase()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_normalise_spellings() {
        assert_eq!(
            torchrun_flag("--nproc_per_node=4").map(|e| e.name),
            Some("nproc-per-node")
        );
        assert_eq!(torchrun_flag("-m").map(|e| e.name), Some("module"));
        assert!(torchrun_flag("train.py").is_none());
        assert_eq!(
            pet_variable("PET_NNODES").map(|(f, _)| f),
            Some("--nnodes".to_owned())
        );
        assert!(variable_markdown("NCCL_IB_HCA").is_some_and(|m| m.contains("`^=mlx5_0`")));
        assert!(variable_markdown("FB_ENDPOINT_URL_WEB").is_some());
        assert!(variable_markdown("HOME").is_none());
    }

    #[test]
    fn every_variable_fuzzball_provides_is_documented() {
        for v in fuzzfile_check::semantics::PROVIDED_VARIABLES {
            if *v == "HOSTNAME" {
                continue;
            }
            assert!(variable(v).is_some(), "{v} has no documentation");
        }
    }
}
