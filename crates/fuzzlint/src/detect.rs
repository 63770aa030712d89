//! `fuzzlint profile detect`: the cluster profile of the node it runs on.
//!
//! What is read, and where from (all paths below `Probe::root`, `/` outside tests):
//!
//! | profile key | source |
//! |---|---|
//! | `gpus-per-node`, `gpu-product(s)` | `nvidia-smi --query-gpu=name,pci.bus_id --format=csv,noheader`, else `/proc/driver/nvidia/gpus/*/information` (`Model:`) |
//! | `fabric`, `ib-hcas` | `/sys/class/infiniband/*/ports/*/link_layer` (`InfiniBand`; `Ethernet` is RoCE) and `state`; no device: `ethernet` |
//! | `mnnvl` | the `Fabric` section of each GPU in `nvidia-smi -q` (`State`, `Status`, `ClusterUUID`, `CliqueId`) |
//! | `imex` | `/etc/nvidia-imex/` (`config.cfg`, its `IMEX_NODE_CONFIG_FILE`), `/dev/nvidia-caps-imex-channels/`, `/proc/devices`, an `nvidia-imex` process in `/proc/*/comm` |
//! | `[nccl-defaults]` | `/etc/nccl.conf`, read as NCCL reads it (`src/misc/param.cc`), and `NCCL_*` of the environment, which wins (NCCL's `setenv(name, value, 0)`) |
//!
//! Nothing here fails: a tool or file that is missing or unreadable leaves its keys out, and
//! the profile says in a comment what could not be seen and why. `nvlink-domain-nodes` is
//! never written: one node cannot see how many nodes share its NVLink domain.
//!
//! Every file is read through `fuzzfile_io` (bounded); `nvidia-smi` is found through `PATH`
//! and stopped after [`NVIDIA_SMI_TIMEOUT`].

use fuzzfile_check::profile::Fabric;
use fuzzfile_io::Kind;
use std::ffi::{OsStr, OsString};
use std::fmt::Write as _;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long `nvidia-smi` may take by default (a node whose driver hangs must not hang the
/// command).
pub const NVIDIA_SMI_TIMEOUT: Duration = Duration::from_secs(30);

/// Files of the node: sysfs and procfs files, configuration files.
const NODE_FILE: Kind = Kind {
    what: "node file",
    limit: fuzzfile_io::CONFIG_LIMIT,
};
/// What `nvidia-smi -q` prints for a node of 8 GPUs is about 60 KiB.
const TOOL_OUTPUT: Kind = Kind {
    what: "nvidia-smi output",
    limit: 16 * 1024 * 1024,
};
/// `/proc` holds one directory per process; looking for `nvidia-imex` stops after this many.
const MAX_PROCESSES: usize = 100_000;

/// Why something could not be seen.
#[derive(Debug, thiserror::Error)]
pub enum SeeError {
    #[error("`{program}` is not on PATH")]
    NotOnPath { program: String },
    #[error("`{program}` could not be started: {}", io_reason(source))]
    Spawn {
        program: String,
        #[source]
        source: io::Error,
    },
    #[error("`{program}` did not finish within {} s and was stopped", timeout.as_secs())]
    TimedOut { program: String, timeout: Duration },
    #[error("`{program}` failed ({status}): {message}")]
    Failed {
        program: String,
        status: String,
        message: String,
    },
    #[error(transparent)]
    Read(#[from] fuzzfile_io::ReadError),
    #[error("cannot list {path}: {}", io_reason(source))]
    List {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("{what}")]
    Format { what: String },
}

/// Why the command cannot run at all (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("--root {path}: not a directory")]
    RootNotADirectory { path: String },
}

/// Where to look.
pub struct Probe {
    /// `/`, or a fake tree holding `sys/`, `proc/`, `etc/` and `dev/`.
    pub root: PathBuf,
    /// The program run as nvidia-smi (looked up in `PATH`).
    pub nvidia_smi: OsString,
    /// The environment's variables (name, value); `NCCL_*` become NCCL defaults.
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
}

impl Probe {
    /// The probe of this node: `/`, `nvidia-smi` from `PATH`, this process's environment.
    pub fn new(root: Option<PathBuf>) -> Result<Probe, DetectError> {
        let root = root.unwrap_or_else(|| PathBuf::from("/"));
        if !root.is_dir() {
            return Err(DetectError::RootNotADirectory {
                path: root.display().to_string(),
            });
        }
        let env = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        Ok(Probe {
            root,
            nvidia_smi: OsString::from("nvidia-smi"),
            env,
            timeout: NVIDIA_SMI_TIMEOUT,
        })
    }

    /// `path` (absolute on the node) below the root.
    fn path(&self, path: &str) -> PathBuf {
        self.root.join(path.trim_start_matches('/'))
    }
}

/// The GPUs of the node and where they were seen.
#[derive(Debug)]
pub struct Gpus {
    /// One product name per GPU, in the order of the source.
    pub names: Vec<String>,
    pub source: &'static str,
}

/// One RDMA device of `/sys/class/infiniband`.
#[derive(Debug)]
pub struct Hca {
    pub name: String,
    /// (port, link layer, state) of each port; `None` where the file could not be read.
    pub ports: Vec<(String, Option<String>, Option<String>)>,
}

impl Hca {
    fn layers(&self) -> impl Iterator<Item = &str> {
        self.ports.iter().filter_map(|(_, l, _)| l.as_deref())
    }
    fn is_infiniband(&self) -> bool {
        self.layers().any(|l| l.eq_ignore_ascii_case("InfiniBand"))
    }
    fn is_ethernet(&self) -> bool {
        !self.is_infiniband() && self.layers().any(|l| l.eq_ignore_ascii_case("Ethernet"))
    }
    /// Ports whose state was read and is not ACTIVE, as `port 1 (1: DOWN)`.
    fn inactive_ports(&self) -> Vec<String> {
        self.ports
            .iter()
            .filter_map(|(p, _, s)| {
                let s = s.as_deref()?;
                (!s.ends_with("ACTIVE")).then(|| format!("port {p} ({s})"))
            })
            .collect()
    }
}

/// The fabric key and what it was decided from.
#[derive(Debug)]
pub struct FabricFacts {
    pub fabric: Fabric,
    pub hcas: Vec<String>,
    pub comments: Vec<String>,
}

/// A boolean key with the reasons for it.
#[derive(Debug)]
pub struct Decided {
    pub value: bool,
    pub comments: Vec<String>,
}

/// One `NAME=value` of NCCL's settings and where it came from.
#[derive(Debug)]
pub struct Setting {
    pub name: String,
    pub value: String,
    pub source: String,
}

/// Everything seen on the node.
#[derive(Debug, Default)]
pub struct Detected {
    pub hostname: Option<String>,
    pub gpus: Option<Gpus>,
    pub gpu_comments: Vec<String>,
    pub fabric: Option<FabricFacts>,
    pub mnnvl: Option<Decided>,
    pub imex: Option<Decided>,
    /// Nodes named by the IMEX node configuration, when there is one.
    pub imex_domain_nodes: Option<usize>,
    pub nccl: Vec<Setting>,
    pub nccl_comments: Vec<String>,
    /// What could not be seen, and why.
    pub unseen: Vec<String>,
}

/// Look at the node.
pub fn detect(probe: &Probe) -> Detected {
    let mut d = Detected {
        hostname: hostname(probe),
        ..Detected::default()
    };
    detect_gpus(probe, &mut d);
    match rdma_devices(probe) {
        Ok(hcas) => d.fabric = Some(decide_fabric(&hcas)),
        Err(e) => d.unseen.push(format!("fabric, ib-hcas: {e}")),
    }
    detect_imex(probe, &mut d);
    detect_nccl(probe, &mut d);
    d
}

// ---------------------------------------------------------------------------------------
// GPUs and MNNVL

fn detect_gpus(probe: &Probe, d: &mut Detected) {
    let smi = probe.nvidia_smi.to_string_lossy().into_owned();
    match run(
        &probe.nvidia_smi,
        &["--query-gpu=name,pci.bus_id", "--format=csv,noheader"],
        probe.timeout,
    ) {
        Ok(out) => {
            let names = parse_query_gpu(&out);
            d.gpus = Some(Gpus {
                names,
                source: "nvidia-smi --query-gpu",
            });
            detect_mnnvl(probe, d);
        }
        Err(SeeError::Failed { message, .. }) if message.contains("No devices were found") => {
            d.gpus = Some(Gpus {
                names: Vec::new(),
                source: "nvidia-smi: No devices were found",
            });
            d.mnnvl = Some(Decided {
                value: false,
                comments: vec!["no GPU on this node".into()],
            });
        }
        Err(e) => {
            let proc_dir = probe.path("/proc/driver/nvidia");
            match proc_gpus(probe) {
                Ok(names) => {
                    d.gpu_comments
                        .push(format!("{e}; the GPUs were read from /proc/driver/nvidia"));
                    d.gpus = Some(Gpus {
                        names,
                        source: "/proc/driver/nvidia/gpus",
                    });
                }
                // No nvidia-smi and no driver: no GPU can be used here.
                Err(_) if !proc_dir.exists() => {
                    d.gpu_comments.push(format!(
                        "{e}, and there is no /proc/driver/nvidia: the NVIDIA driver is not loaded"
                    ));
                    d.gpus = Some(Gpus {
                        names: Vec::new(),
                        source: "no NVIDIA driver",
                    });
                }
                Err(e2) => d
                    .unseen
                    .push(format!("gpus-per-node, gpu-product: {e}, and {e2}")),
            }
            if d.gpus.as_ref().is_some_and(|g| g.names.is_empty()) {
                d.mnnvl = Some(Decided {
                    value: false,
                    comments: vec!["no GPU on this node".into()],
                });
            } else {
                d.unseen.push(format!(
                    "mnnvl: known from the Fabric section of `{smi} -q`, and {e}"
                ));
            }
        }
    }
}

/// `NVIDIA H100 80GB HBM3, 00000000:18:00.0` per line (`--format=csv,noheader`); a line
/// without a bus id after its last comma (`No devices were found`) is no GPU.
fn parse_query_gpu(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let (name, bus) = l.trim().rsplit_once(',')?;
            let bus = bus.trim();
            (bus.contains(':')
                && bus
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.'))
            .then(|| name.trim().to_owned())
        })
        .collect()
}

/// `/proc/driver/nvidia/gpus/<bus id>/information`, line `Model: \t\t NVIDIA H100 ...`.
fn proc_gpus(probe: &Probe) -> Result<Vec<String>, SeeError> {
    let dir = probe.path("/proc/driver/nvidia/gpus");
    let mut names = Vec::new();
    for entry in list(&dir)? {
        let text = read_text(&dir.join(&entry).join("information"))?;
        let model = text.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "Model").then(|| v.trim().to_owned())
        });
        match model {
            Some(m) if !m.is_empty() => names.push(m),
            _ => {
                return Err(SeeError::Format {
                    what: format!("{}/{entry}/information has no `Model:` line", dir.display()),
                })
            }
        }
    }
    Ok(names)
}

/// One GPU's `Fabric` section of `nvidia-smi -q`.
#[derive(Debug, Default, Clone)]
struct FabricInfo {
    gpu: String,
    state: Option<String>,
    status: Option<String>,
    clique: Option<String>,
    cluster: Option<String>,
}

/// The `Fabric` sections of `nvidia-smi -q`: a line `GPU 00000000:18:00.0` opens a GPU, an
/// indented `Fabric` line its section, whose `Key : value` lines are indented deeper.
fn parse_fabric_sections(q: &str) -> Vec<FabricInfo> {
    let mut out: Vec<FabricInfo> = Vec::new();
    let mut gpu = String::new();
    let mut in_fabric: Option<usize> = None;
    for line in q.lines() {
        let indent = line.len() - line.trim_start().len();
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        if indent == 0 && text.starts_with("GPU ") {
            gpu = text["GPU ".len()..].trim().to_owned();
            in_fabric = None;
            continue;
        }
        if let Some(level) = in_fabric {
            if indent <= level {
                in_fabric = None;
            } else if let Some(info) = out.last_mut() {
                if let Some((k, v)) = text.split_once(':') {
                    let v = Some(v.trim().to_owned());
                    match k.trim() {
                        "State" => info.state = v,
                        "Status" => info.status = v,
                        "CliqueId" => info.clique = v,
                        "ClusterUUID" => info.cluster = v,
                        _ => {}
                    }
                }
                continue;
            }
        }
        if text == "Fabric" && indent > 0 {
            in_fabric = Some(indent);
            out.push(FabricInfo {
                gpu: gpu.clone(),
                ..FabricInfo::default()
            });
        }
    }
    out
}

/// How one GPU's fabric registration reads.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum FabricClass {
    /// Registered in an NVLink fabric with a cluster UUID: Multi-Node NVLink.
    Mnnvl,
    /// No fabric (`N/A`, `Not Supported`), or a registration without a cluster (all-zero UUID).
    None,
    /// Registration finished with an error (`Insufficient Resources`).
    Failed,
    /// Registration not finished (`Not Started`, `In Progress`).
    Pending,
}

fn classify(f: &FabricInfo) -> FabricClass {
    let state = f.state.as_deref().unwrap_or("N/A");
    let zero = |u: &str| u.chars().all(|c| c == '0' || c == '-');
    match state {
        "Completed" => {
            if f.status.as_deref() != Some("Success") {
                FabricClass::Failed
            } else if f
                .cluster
                .as_deref()
                .is_none_or(|u| u == "N/A" || u.is_empty() || zero(u))
            {
                FabricClass::None
            } else {
                FabricClass::Mnnvl
            }
        }
        "Not Started" | "In Progress" => FabricClass::Pending,
        _ => FabricClass::None,
    }
}

fn detect_mnnvl(probe: &Probe, d: &mut Detected) {
    let smi = probe.nvidia_smi.to_string_lossy().into_owned();
    let gpus = d.gpus.as_ref().map_or(0, |g| g.names.len());
    if gpus == 0 {
        d.mnnvl = Some(Decided {
            value: false,
            comments: vec!["no GPU on this node".into()],
        });
        return;
    }
    let q = match run(&probe.nvidia_smi, &["-q"], probe.timeout) {
        Ok(q) => q,
        Err(e) => {
            d.unseen.push(format!("mnnvl: {e}"));
            return;
        }
    };
    let header = |key: &str| {
        q.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (!l.starts_with(' ') && k.trim() == key).then(|| v.trim().to_owned())
        })
    };
    if let (Some(driver), Some(cuda)) = (header("Driver Version"), header("CUDA Version")) {
        d.gpu_comments.push(format!(
            "driver {driver}, CUDA {cuda}: the newest CUDA a container runs on it without NVIDIA's forward-compatibility package"
        ));
    }
    let sections = parse_fabric_sections(&q);
    if sections.is_empty() {
        d.unseen.push(format!(
            "mnnvl: `{smi} -q` has no Fabric section (drivers before the R550 series print none)"
        ));
        return;
    }
    let classes: Vec<FabricClass> = sections.iter().map(classify).collect();
    let describe = |f: &FabricInfo| {
        format!(
            "GPU {}: State {}, Status {}",
            f.gpu,
            f.state.as_deref().unwrap_or("-"),
            f.status.as_deref().unwrap_or("-")
        )
    };
    let mut comments = Vec::new();
    let value = if let Some(i) = classes.iter().position(|c| *c == FabricClass::Mnnvl) {
        let f = &sections[i];
        let n = classes.iter().filter(|c| **c == FabricClass::Mnnvl).count();
        comments.push(format!(
            "`{smi} -q`: {n} of {} GPUs registered in an NVLink fabric (State Completed, Status Success)",
            sections.len()
        ));
        comments.push(format!(
            "ClusterUUID {}, CliqueId {}: nodes showing the same pair share this NVLink domain",
            f.cluster.as_deref().unwrap_or("-"),
            f.clique.as_deref().unwrap_or("-")
        ));
        for (f, c) in sections.iter().zip(&classes) {
            if *c != FabricClass::Mnnvl {
                comments.push(format!("not registered: {}", describe(f)));
            }
        }
        true
    } else if classes.iter().all(|c| *c == FabricClass::None) {
        let states: Vec<&str> = sections
            .iter()
            .map(|f| f.state.as_deref().unwrap_or("N/A"))
            .collect();
        let mut uniq = states.clone();
        uniq.sort_unstable();
        uniq.dedup();
        let zero_uuid = sections
            .iter()
            .any(|f| f.state.as_deref() == Some("Completed"));
        comments.push(format!(
            "`{smi} -q`: Fabric State {} on every GPU{}: no Multi-Node NVLink",
            uniq.join(" / "),
            if zero_uuid {
                " with an all-zero ClusterUUID (no NVLink cluster beyond the node)"
            } else {
                ""
            }
        ));
        false
    } else if let Some(i) = classes.iter().position(|c| *c == FabricClass::Failed) {
        comments.push(format!(
            "`{smi} -q`: the NVLink fabric registration failed ({}): NCCL will not use Multi-Node NVLink on this node; ask the admin (nvidia-fabricmanager, nvidia-smi -q)",
            describe(&sections[i])
        ));
        false
    } else {
        let i = classes
            .iter()
            .position(|c| *c == FabricClass::Pending)
            .unwrap_or(0);
        d.unseen.push(format!(
            "mnnvl: the NVLink fabric registration has not finished ({}): run again later",
            describe(&sections[i])
        ));
        return;
    };
    d.mnnvl = Some(Decided { value, comments });
}

// ---------------------------------------------------------------------------------------
// Fabric

fn rdma_devices(probe: &Probe) -> Result<Vec<Hca>, SeeError> {
    let dir = probe.path("/sys/class/infiniband");
    let names = match list(&dir) {
        Ok(n) => n,
        Err(SeeError::List { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            return Ok(Vec::new())
        }
        Err(e) => return Err(e),
    };
    let mut hcas = Vec::new();
    for name in names {
        let ports_dir = dir.join(&name).join("ports");
        let mut ports = Vec::new();
        // A device without a readable `ports` directory is listed without ports.
        for port in list(&ports_dir).unwrap_or_default() {
            let p = ports_dir.join(&port);
            let layer = read_text(&p.join("link_layer"))
                .ok()
                .map(|s| s.trim().to_owned());
            let state = read_text(&p.join("state"))
                .ok()
                .map(|s| s.trim().to_owned());
            ports.push((port, layer, state));
        }
        hcas.push(Hca { name, ports });
    }
    Ok(hcas)
}

fn decide_fabric(hcas: &[Hca]) -> FabricFacts {
    let ib: Vec<&Hca> = hcas.iter().filter(|h| h.is_infiniband()).collect();
    let eth: Vec<&Hca> = hcas.iter().filter(|h| h.is_ethernet()).collect();
    let other: Vec<&Hca> = hcas
        .iter()
        .filter(|h| !h.is_infiniband() && !h.is_ethernet())
        .collect();
    let names = |v: &[&Hca]| v.iter().map(|h| h.name.clone()).collect::<Vec<_>>();
    let mut comments = Vec::new();
    let (fabric, chosen) = if !ib.is_empty() {
        comments.push(format!(
            "/sys/class/infiniband: {} with link layer InfiniBand",
            names(&ib).join(", ")
        ));
        if !eth.is_empty() {
            comments.push(format!(
                "not listed: {} (link layer Ethernet: RoCE, often storage or management)",
                names(&eth).join(", ")
            ));
        }
        (Fabric::Infiniband, ib)
    } else if !eth.is_empty() {
        comments.push(format!(
            "/sys/class/infiniband: {} with link layer Ethernet: RoCE",
            names(&eth).join(", ")
        ));
        (Fabric::Roce, eth)
    } else {
        comments.push(if hcas.is_empty() {
            "no RDMA device in /sys/class/infiniband: NCCL uses TCP sockets between nodes".into()
        } else {
            "no RDMA device with a readable link layer in /sys/class/infiniband".into()
        });
        (Fabric::Ethernet, Vec::new())
    };
    if !other.is_empty() {
        comments.push(format!(
            "link layer not readable: {}",
            names(&other).join(", ")
        ));
    }
    for h in &chosen {
        let down = h.inactive_ports();
        if !down.is_empty() {
            comments.push(format!("{} not ACTIVE: {}", h.name, down.join(", ")));
        }
    }
    FabricFacts {
        fabric,
        hcas: names(&chosen),
        comments,
    }
}

// ---------------------------------------------------------------------------------------
// IMEX

fn detect_imex(probe: &Probe, d: &mut Detected) {
    let mut comments = Vec::new();
    let mut unseen = Vec::new();

    // The configuration: config.cfg names the node list (IMEX guide, "IMEX Service Config
    // Options": IMEX_NODE_CONFIG_FILE, default /etc/nvidia-imex/nodes_config.cfg).
    let config_path = probe.path("/etc/nvidia-imex/config.cfg");
    let mut nodes_file = "/etc/nvidia-imex/nodes_config.cfg".to_owned();
    let config = match read_text(&config_path) {
        Ok(text) => {
            if let Some(v) = text.lines().find_map(|l| {
                let l = l.trim();
                let (k, v) = l.split_once('=')?;
                (!l.starts_with('#') && k.trim() == "IMEX_NODE_CONFIG_FILE")
                    .then(|| v.trim().to_owned())
            }) {
                if !v.is_empty() {
                    nodes_file = v;
                }
            }
            true
        }
        Err(e) if not_found(&e) => false,
        Err(e) => {
            unseen.push(format!("imex: {e}"));
            false
        }
    };
    let nodes = match read_text(&probe.path(&nodes_file)) {
        Ok(text) => Some(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .count(),
        ),
        Err(e) if not_found(&e) => None,
        Err(e) => {
            unseen.push(format!("imex: {e}"));
            None
        }
    };
    match (config, nodes) {
        (_, Some(n)) => comments.push(format!(
            "IMEX node list {nodes_file}: {n} node{}",
            if n == 1 { "" } else { "s" }
        )),
        (true, None) => comments.push(format!(
            "/etc/nvidia-imex/config.cfg, but no node list {nodes_file}"
        )),
        (false, None) => comments.push("no IMEX configuration in /etc/nvidia-imex".into()),
    }
    d.imex_domain_nodes = nodes.filter(|n| *n > 0);

    // Channel devices (created by the admin, or by the driver with NVreg_CreateImexChannel0).
    let channels_dir = probe.path("/dev/nvidia-caps-imex-channels");
    let channels = match list(&channels_dir) {
        Ok(c) => c.into_iter().filter(|c| c.starts_with("channel")).collect(),
        Err(SeeError::List { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
            Vec::new()
        }
        Err(e) => {
            unseen.push(format!("imex: {e}"));
            Vec::new()
        }
    };
    if channels.is_empty() {
        comments.push("no IMEX channel in /dev/nvidia-caps-imex-channels".into());
    } else {
        comments.push(format!(
            "IMEX channels in /dev/nvidia-caps-imex-channels: {}",
            channels.join(", ")
        ));
    }
    let driver = read_text(&probe.path("/proc/devices"))
        .map(|t| {
            t.lines()
                .any(|l| l.trim().ends_with(" nvidia-caps-imex-channels"))
        })
        .ok();
    if driver == Some(false) && !channels.is_empty() {
        comments.push("the driver lists no nvidia-caps-imex-channels in /proc/devices".into());
    }

    // The daemon.
    let daemon = match imex_process(probe) {
        Ok(Some(pid)) => {
            comments.push(format!("nvidia-imex is running (pid {pid})"));
            true
        }
        Ok(None) => {
            comments.push("no nvidia-imex process in /proc".into());
            false
        }
        Err(e) => {
            unseen.push(format!("imex daemon: {e}"));
            false
        }
    };
    let value = daemon || (nodes.is_some_and(|n| n > 0) && !channels.is_empty());
    if !daemon && value {
        comments.push(
            "taken as running: configured, with channels (its process may be outside this PID namespace)"
                .into(),
        );
    }
    d.unseen.extend(unseen);
    d.imex = Some(Decided { value, comments });
}

/// The pid of a process whose `comm` is `nvidia-imex`.
fn imex_process(probe: &Probe) -> Result<Option<String>, SeeError> {
    let proc_dir = probe.path("/proc");
    let entries = std::fs::read_dir(&proc_dir).map_err(|source| SeeError::List {
        path: proc_dir.display().to_string(),
        source,
    })?;
    for entry in entries.take(MAX_PROCESSES).flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str() else { continue };
        if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(comm) = read_text(&entry.path().join("comm")) {
            if comm.trim() == "nvidia-imex" {
                return Ok(Some(pid.to_owned()));
            }
        }
    }
    Ok(None)
}

// ---------------------------------------------------------------------------------------
// NCCL

/// `NCCL_*` variables of an environment that NCCL does not read: (name, what it is).
const NOT_NCCL_SETTINGS: &[(&str, &str)] = &[
    // `ENV NCCL_VERSION` in the Dockerfiles of NVIDIA's CUDA images (gitlab.com/nvidia/
    // container-images/cuda); seen on this project's GPU machine (docs/cluster-profiles.md).
    (
        "NCCL_VERSION",
        "the version label NVIDIA's CUDA images set: the NCCL of this environment",
    ),
    // nccl-tests' Makefile (`make NCCL_HOME=...`).
    ("NCCL_HOME", "a build path (nccl-tests' Makefile)"),
];

fn detect_nccl(probe: &Probe, d: &mut Detected) {
    let mut settings: Vec<Setting> = Vec::new();
    for (name, value) in &probe.env {
        if let Some((_, what)) = NOT_NCCL_SETTINGS.iter().find(|(n, _)| n == name) {
            d.nccl_comments.push(format!(
                "{name}={value} in the environment is {what}, not a setting NCCL reads"
            ));
            continue;
        }
        if name.starts_with("NCCL_") {
            settings.push(Setting {
                name: name.clone(),
                value: value.clone(),
                source: "environment".into(),
            });
        }
    }
    match read_text(&probe.path("/etc/nccl.conf")) {
        Ok(text) => {
            let (file, comments) = parse_nccl_conf(&text);
            d.nccl_comments.extend(comments);
            for (line, name, value) in file {
                if let Some(env) = settings.iter().find(|s| s.name == name) {
                    d.nccl_comments.push(format!(
                        "/etc/nccl.conf line {line} sets {name}={value}; the environment's {}={} wins",
                        env.name, env.value
                    ));
                } else if !settings.iter().any(|s| s.name == name) {
                    settings.push(Setting {
                        name,
                        value,
                        source: format!("/etc/nccl.conf line {line}"),
                    });
                }
            }
        }
        Err(e) if not_found(&e) => d.nccl_comments.push("no /etc/nccl.conf".into()),
        Err(e) => d.unseen.push(format!("nccl-defaults: {e}")),
    }
    settings.sort_by(|a, b| a.name.cmp(&b.name));
    d.nccl = settings;
}

/// `/etc/nccl.conf` as NCCL's `setEnvFile` reads it: a line starting with `#` is skipped; the
/// name is everything before the first `=` (spaces included), the value everything after it
/// (only the final newline removed); a line without `=` is skipped; a name set twice keeps
/// its first value (`setenv(name, value, 0)`). Returns (line, name, value) and comments on
/// lines NCCL reads differently from how they look.
fn parse_nccl_conf(text: &str) -> (Vec<(usize, String, String)>, Vec<String>) {
    let mut out: Vec<(usize, String, String)> = Vec::new();
    let mut comments = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let n = i + 1;
        if line.starts_with('#') {
            continue;
        }
        let Some((name, value)) = line.split_once('=') else {
            continue;
        };
        if !is_env_name(name) {
            comments.push(format!(
                "/etc/nccl.conf line {n}: `{name}` is not a variable name NCCL reads (nothing is trimmed around `=`)"
            ));
            continue;
        }
        if value.ends_with('\r') {
            comments.push(format!(
                "/etc/nccl.conf line {n}: the value of {name} ends in a carriage return, which NCCL keeps"
            ));
        }
        if out.iter().any(|(_, k, _)| k == name) {
            comments.push(format!(
                "/etc/nccl.conf line {n}: {name} is set again; NCCL keeps the first value"
            ));
            continue;
        }
        out.push((n, name.to_owned(), value.to_owned()));
    }
    (out, comments)
}

fn is_env_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

// ---------------------------------------------------------------------------------------
// Helpers

fn hostname(probe: &Probe) -> Option<String> {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| {
            let t = read_text(&probe.path(p)).ok()?;
            let t = t.trim();
            (!t.is_empty()).then(|| t.to_owned())
        })
}

fn not_found(e: &SeeError) -> bool {
    matches!(e, SeeError::Read(fuzzfile_io::ReadError::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound)
}

fn read_text(path: &Path) -> Result<String, SeeError> {
    let bytes = fuzzfile_io::read(path, NODE_FILE)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// The names in a directory, sorted.
fn list(dir: &Path) -> Result<Vec<String>, SeeError> {
    let err = |source| SeeError::List {
        path: dir.display().to_string(),
        source,
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(err)?
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

/// Run `program args`, found through `PATH`, with no input; its standard output when it
/// exits 0 within `timeout`.
fn run(program: &OsStr, args: &[&str], timeout: Duration) -> Result<String, SeeError> {
    let shown = program.to_string_lossy().into_owned();
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| {
            if source.kind() == io::ErrorKind::NotFound {
                SeeError::NotOnPath {
                    program: shown.clone(),
                }
            } else {
                SeeError::Spawn {
                    program: shown.clone(),
                    source,
                }
            }
        })?;
    let reader = |pipe: Option<Box<dyn Read + Send>>, shown: String| {
        std::thread::spawn(move || match pipe {
            Some(p) => fuzzfile_io::read_from(p, &shown, TOOL_OUTPUT),
            None => Ok(Vec::new()),
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        shown.clone(),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        shown.clone(),
    );
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(SeeError::TimedOut {
                    program: shown,
                    timeout,
                });
            }
            Err(source) => {
                let _ = child.kill();
                return Err(SeeError::Spawn {
                    program: shown,
                    source,
                });
            }
        }
    };
    let joined = |h: std::thread::JoinHandle<Result<Vec<u8>, fuzzfile_io::ReadError>>| {
        h.join().unwrap_or_else(|_| Ok(Vec::new()))
    };
    let stdout = String::from_utf8_lossy(&joined(out)?).into_owned();
    let stderr = String::from_utf8_lossy(&joined(err).unwrap_or_default()).into_owned();
    if status.success() {
        return Ok(stdout);
    }
    let message = first_line(&stderr)
        .or_else(|| first_line(&stdout))
        .unwrap_or("no message")
        .to_owned();
    let status = match status.code() {
        Some(c) => format!("exit {c}"),
        None => status.to_string(),
    };
    Err(SeeError::Failed {
        program: shown,
        status,
        message,
    })
}

/// What an I/O error means, in words (`no such file or directory`).
fn io_reason(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".to_owned(),
        io::ErrorKind::PermissionDenied => "permission denied".to_owned(),
        _ => e.to_string(),
    }
}

fn first_line(s: &str) -> Option<&str> {
    s.lines().map(str::trim).find(|l| !l.is_empty())
}

// ---------------------------------------------------------------------------------------
// Writing the profile

/// The profile as TOML, with comments saying where each value came from and what could not
/// be seen. It parses with `fuzzfile_check::profile::parse_profile`.
pub fn render(d: &Detected) -> String {
    let mut s = String::new();
    let host = d.hostname.as_deref().unwrap_or("this node");
    comment(
        &mut s,
        &format!("Cluster profile detected by `fuzzlint profile detect` on {host}."),
    );
    comment(
        &mut s,
        "One node's view: check that the cluster's other nodes are alike, then name the cluster.",
    );
    if let Some(h) = &d.hostname {
        let _ = writeln!(s, "name = {}", toml_string(h));
    }

    s.push('\n');
    for c in &d.gpu_comments {
        comment(&mut s, c);
    }
    match &d.gpus {
        Some(g) if g.names.is_empty() => {
            comment(&mut s, &format!("no GPU on this node ({})", g.source));
        }
        Some(g) => {
            let mut products: Vec<&str> = g.names.iter().map(String::as_str).collect();
            products.sort_unstable();
            products.dedup();
            comment(
                &mut s,
                &format!(
                    "{} GPU{} ({})",
                    g.names.len(),
                    if g.names.len() == 1 { "" } else { "s" },
                    g.source
                ),
            );
            let _ = writeln!(s, "gpus-per-node = {}", g.names.len());
            comment(
                &mut s,
                "the product as the driver names it; Fuzzball matches `nvidia.com/gpu.product` as a substring of the node's product",
            );
            if let [one] = products.as_slice() {
                let _ = writeln!(s, "gpu-product = {}", toml_string(one));
            } else {
                let list: Vec<String> = products.iter().map(|p| toml_string(p)).collect();
                let _ = writeln!(s, "gpu-products = [{}]", list.join(", "));
            }
        }
        None => {}
    }

    s.push('\n');
    if let Some(f) = &d.fabric {
        for c in &f.comments {
            comment(&mut s, c);
        }
        let _ = writeln!(s, "fabric = {}", toml_string(f.fabric.as_str()));
        if !f.hcas.is_empty() {
            let list: Vec<String> = f.hcas.iter().map(|h| toml_string(h)).collect();
            let _ = writeln!(s, "ib-hcas = [{}]", list.join(", "));
        }
    }
    if let Some(m) = &d.mnnvl {
        for c in &m.comments {
            comment(&mut s, c);
        }
        let _ = writeln!(s, "mnnvl = {}", m.value);
    }
    if let Some(i) = &d.imex {
        for c in &i.comments {
            comment(&mut s, c);
        }
        let _ = writeln!(s, "imex = {}", i.value);
    }
    match d.imex_domain_nodes {
        Some(n) => comment(
            &mut s,
            &format!("nvlink-domain-nodes: not detected from one node (the IMEX node list names {n}; an NVLink domain holds at least the IMEX domain)"),
        ),
        None => comment(
            &mut s,
            "nvlink-domain-nodes: not detected from one node (how many nodes share an NVLink domain)",
        ),
    }

    if !d.unseen.is_empty() {
        s.push('\n');
        comment(&mut s, "Not seen (these keys are left out):");
        for u in &d.unseen {
            comment(&mut s, &format!("- {u}"));
        }
    }

    s.push('\n');
    for c in &d.nccl_comments {
        comment(&mut s, c);
    }
    comment(
        &mut s,
        "NCCL settings made on this node: /etc/nccl.conf, and NCCL_* of the environment this ran in (a job's container may bring its own /etc/nccl.conf)",
    );
    s.push_str("[nccl-defaults]\n");
    for set in &d.nccl {
        let _ = writeln!(
            s,
            "{} = {}  # {}",
            toml_key(&set.name),
            toml_string(&set.value),
            printable(&set.source)
        );
    }
    s
}

fn printable(text: &str) -> String {
    fuzzfile_check::render::printable(text)
        .replace('\t', " ")
        .replace('\u{7f}', "\\u{7f}")
}

/// One `# ` line (control characters written as escapes, so the comment stays one line).
fn comment(s: &mut String, text: &str) {
    let _ = writeln!(s, "# {}", printable(text));
}

/// A TOML basic string.
fn toml_string(v: &str) -> String {
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A bare key when it can be one, else a quoted key.
fn toml_key(k: &str) -> String {
    if !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        k.to_owned()
    } else {
        toml_string(k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nccl_conf_is_read_as_nccl_reads_it() {
        let (set, comments) = parse_nccl_conf(
            "# NCCL_DEBUG=INFO\nNCCL_IB_HCA=mlx5\nNCCL_SOCKET_IFNAME==ens1f0\nNCCL_X = 1\nno equals\nNCCL_IB_HCA=other\nNCCL_CR=1\r\n",
        );
        let got: Vec<(&str, &str)> = set
            .iter()
            .map(|(_, k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("NCCL_IB_HCA", "mlx5"),
                ("NCCL_SOCKET_IFNAME", "=ens1f0"),
                ("NCCL_CR", "1\r")
            ]
        );
        assert_eq!(comments.len(), 3, "{comments:?}");
    }

    #[test]
    fn query_gpu_lines_without_a_bus_id_are_no_gpus() {
        assert_eq!(
            parse_query_gpu("NVIDIA H200, 00000000:01:00.0\nNo devices were found\n\n"),
            vec!["NVIDIA H200"]
        );
        assert_eq!(
            parse_query_gpu("NVIDIA A100-SXM4-80GB, 00000000:07:00.0\n"),
            vec!["NVIDIA A100-SXM4-80GB"]
        );
    }

    #[test]
    fn fabric_sections_are_read_per_gpu() {
        let q = "Attached GPUs : 2\nGPU 00000000:01:00.0\n    Product Name : X\n    Fabric\n        State : Completed\n        Status : Success\n        CliqueId : 7\n        ClusterUUID : 1234-5678\n        Health\n            Bandwidth : Full\n    Processes : None\nGPU 00000000:02:00.0\n    Fabric\n        State : N/A\n        Status : N/A\n";
        let f = parse_fabric_sections(q);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].gpu, "00000000:01:00.0");
        assert_eq!(f[0].cluster.as_deref(), Some("1234-5678"));
        assert_eq!(f[0].clique.as_deref(), Some("7"));
        assert_eq!(classify(&f[0]), FabricClass::Mnnvl);
        assert_eq!(classify(&f[1]), FabricClass::None);
    }

    #[test]
    fn toml_strings_escape_what_toml_forbids() {
        assert_eq!(toml_string("a\"b\\c\u{1}"), "\"a\\\"b\\\\c\\u0001\"");
        assert_eq!(toml_key("NCCL_X"), "NCCL_X");
        assert_eq!(toml_key("a b"), "\"a b\"");
    }
}
