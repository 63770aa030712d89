//! The log scanner: recognises NCCL, CUDA and torchrun log lines whose meaning is not obvious
//! and says, in one line, what they mean and what to change.
//!
//! An [`Explainer`] follows one job's output stream, line by line ([`Explainer::line`]). Each
//! explanation is given at most once per explainer, so a message that every rank prints
//! (eight GPUs, eight copies) is explained once. One explanation needs two lines: NCCL prints
//! `NET/IB : No device found.` and, later, `NET/Socket : Using [0]eth0:…` and
//! `Using network Socket` when it falls back to TCP; the explainer keeps that state.
//!
//! Matching is plain substring search on the text NCCL, CUDA and PyTorch print, so the prefixes
//! in front of it (`host:pid:tid [rank] NCCL INFO`, `[rank0]:`, a timestamp) do not matter.
//! Case follows the emitters (NCCL writes `Cuda failure`, PyTorch `CUDA error`). ANSI colour
//! sequences are removed before matching. Only the first [`MAX_SCAN`] bytes of a line are
//! examined, so a very long line (a progress bar, a dumped tensor) costs a bounded amount of work;
//! a message that starts later than that is not recognised.
//!
//! Where a fuzzlint rule catches the cause before the job runs, [`Explanation::rule`] names it.

/// At most this many bytes at the start of a line are examined.
pub const MAX_SCAN: usize = 4096;

/// What a recognised log line means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    /// A stable kebab-case identifier, e.g. `nccl-sockets-fallback`.
    pub id: &'static str,
    /// One line: what the message means and what to change.
    pub text: String,
    /// The fuzzlint rule that detects the cause in a Fuzzfile, when there is one.
    pub rule: Option<&'static str>,
}

/// The explanations, in no particular order; the discriminant is the bit in `Explainer::fired`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Id {
    SocketsFallback,
    LibibverbsMissing,
    NetPluginNotFound,
    NoNetPlugin,
    NoSocketInterface,
    PeerClosed,
    ConnectFailed,
    MnnvlNoImexChannel,
    ImexDaemon,
    CudaNotPermitted,
    CudaInvalidArgument,
    NvlsInvalidArgument,
    NoKernelImage,
    ShmTooSmall,
    IbIncompatibleDevices,
    InvalidDeviceOrdinal,
    DuplicateGpu,
    PortInUse,
    RendezvousTimeout,
    RendezvousConnection,
    RendezvousClosed,
    NcclEnvDeprecated,
    TorchDistributedLaunchDeprecated,
}

const ALL: [Id; 23] = [
    Id::SocketsFallback,
    Id::LibibverbsMissing,
    Id::NetPluginNotFound,
    Id::NoNetPlugin,
    Id::NoSocketInterface,
    Id::PeerClosed,
    Id::ConnectFailed,
    Id::MnnvlNoImexChannel,
    Id::ImexDaemon,
    Id::CudaNotPermitted,
    Id::CudaInvalidArgument,
    Id::NvlsInvalidArgument,
    Id::NoKernelImage,
    Id::ShmTooSmall,
    Id::IbIncompatibleDevices,
    Id::InvalidDeviceOrdinal,
    Id::DuplicateGpu,
    Id::PortInUse,
    Id::RendezvousTimeout,
    Id::RendezvousConnection,
    Id::RendezvousClosed,
    Id::NcclEnvDeprecated,
    Id::TorchDistributedLaunchDeprecated,
];

impl Id {
    fn bit(self) -> u32 {
        1 << (self as u32)
    }

    fn name(self) -> &'static str {
        match self {
            Id::SocketsFallback => "nccl-sockets-fallback",
            Id::LibibverbsMissing => "nccl-libibverbs-missing",
            Id::NetPluginNotFound => "nccl-net-plugin-not-found",
            Id::NoNetPlugin => "nccl-no-net-plugin",
            Id::NoSocketInterface => "nccl-no-socket-interface",
            Id::PeerClosed => "nccl-peer-closed",
            Id::ConnectFailed => "nccl-connect-failed",
            Id::MnnvlNoImexChannel => "nccl-mnnvl-no-imex-channel",
            Id::ImexDaemon => "nccl-imex-daemon",
            Id::CudaNotPermitted => "cuda-operation-not-permitted",
            Id::CudaInvalidArgument => "cuda-invalid-argument",
            Id::NvlsInvalidArgument => "nccl-nvls-invalid-argument",
            Id::NoKernelImage => "cuda-no-kernel-image",
            Id::ShmTooSmall => "nccl-shm-too-small",
            Id::IbIncompatibleDevices => "nccl-ib-incompatible-devices",
            Id::InvalidDeviceOrdinal => "cuda-invalid-device-ordinal",
            Id::DuplicateGpu => "nccl-duplicate-gpu",
            Id::PortInUse => "torch-port-in-use",
            Id::RendezvousTimeout => "torch-rendezvous-timeout",
            Id::RendezvousConnection => "torch-rendezvous-connection",
            Id::RendezvousClosed => "torch-rendezvous-closed",
            Id::NcclEnvDeprecated => "torch-nccl-env-deprecated",
            Id::TorchDistributedLaunchDeprecated => "torch-distributed-launch-deprecated",
        }
    }

    /// The fuzzlint rule (crates/fuzzfile_diagnostics rules.rs) that catches the cause.
    fn rule(self) -> Option<&'static str> {
        match self {
            Id::SocketsFallback | Id::IbIncompatibleDevices => Some("nccl-ib-hca-missing"),
            Id::NoNetPlugin => Some("nccl-net-unavailable"),
            Id::MnnvlNoImexChannel | Id::CudaNotPermitted => Some("nccl-mnnvl-no-imex"),
            Id::CudaInvalidArgument | Id::NoKernelImage => Some("image-too-old-for-gpu"),
            Id::InvalidDeviceOrdinal | Id::DuplicateGpu => Some("launcher-nproc-mismatch"),
            Id::RendezvousTimeout => Some("launcher-nnodes-mismatch"),
            Id::RendezvousConnection => Some("launcher-missing-master-addr"),
            Id::RendezvousClosed => Some("torchrun-rdzv-incomplete"),
            Id::NcclEnvDeprecated => Some("nccl-invalid-value"),
            Id::TorchDistributedLaunchDeprecated => Some("torch-distributed-launch-deprecated"),
            Id::LibibverbsMissing
            | Id::NetPluginNotFound
            | Id::NoSocketInterface
            | Id::PeerClosed
            | Id::ConnectFailed
            | Id::ImexDaemon
            | Id::NvlsInvalidArgument
            | Id::ShmTooSmall
            | Id::PortInUse => None,
        }
    }

    /// The fixed text; [`Id::NcclEnvDeprecated`] is written from the line instead.
    fn text(self) -> &'static str {
        match self {
            Id::SocketsFallback => {
                "NCCL found no usable InfiniBand/RoCE device and fell back to TCP sockets, so \
                 traffic between nodes is much slower (a single-node job is not affected: its GPUs \
                 talk over NVLink, PCIe or shared memory); on an RDMA cluster check that \
                 NCCL_IB_HCA names this node's adapters, that /dev/infiniband is in the container \
                 and that the image ships libibverbs"
            }
            Id::LibibverbsMissing => {
                "NCCL could not load libibverbs, so it cannot use InfiniBand/RoCE and uses TCP \
                 sockets instead; for multinode jobs on an RDMA cluster use an image that includes \
                 rdma-core (libibverbs), as the NGC images do"
            }
            Id::NetPluginNotFound => {
                "No external NCCL network plugin (libnccl-net.so) was found, so NCCL uses its \
                 built-in InfiniBand and socket transports; this is fine unless the cluster needs \
                 a plugin (such as aws-ofi-nccl for EFA), which the image or LD_LIBRARY_PATH must \
                 then provide"
            }
            Id::NoNetPlugin => {
                "NCCL could not start the network transport it was told to use (NCCL_NET, or a \
                 plugin from NCCL_NET_PLUGIN) and does not fall back: unset NCCL_NET or name a \
                 transport this node has (IB needs RDMA devices in the container; Socket always \
                 works)"
            }
            Id::NoSocketInterface => {
                "NCCL_SOCKET_IFNAME matches no network interface on this node (or, unset, NCCL \
                 found no usable one): list the interfaces (ip -br addr) and set \
                 NCCL_SOCKET_IFNAME to a prefix that exists on every node, such as eth or ib, or \
                 an exclusion such as ^lo,docker"
            }
            Id::PeerClosed => {
                "A peer closed its NCCL connection: usually another rank crashed or was killed \
                 first and this is a consequence; look for the first rank that failed (its own \
                 error comes earlier in the logs)"
            }
            Id::ConnectFailed => {
                "A connection between ranks was refused or timed out: the peer is not listening \
                 (it exited, or has not started yet) or the address is on an interface the other \
                 nodes cannot reach; check that NCCL_SOCKET_IFNAME and the master address select a \
                 routable interface, and look for the first rank that failed"
            }
            Id::MnnvlNoImexChannel => {
                "NCCL found Multi-Node NVLink but cannot use it because the container has no IMEX \
                 channel: set NVIDIA_IMEX_CHANNELS=0 and keep the job on IMEX nodes with a \
                 nvidia.com/gpu.product annotation, or set NCCL_MNNVL_ENABLE=0 to use the network \
                 instead"
            }
            Id::ImexDaemon => {
                "NCCL found Multi-Node NVLink but the IMEX service is not working on these nodes \
                 (nvidia-imex not running, or not connected to its peers): this is for the \
                 cluster administrator (nvidia-imex-ctl -N shows the state); meanwhile \
                 NCCL_MNNVL_ENABLE=0 runs the job over the network"
            }
            Id::CudaNotPermitted => {
                "CUDA refused the operation (error 800, operation not permitted): next to an MNNVL \
                 warning this means the job cannot use the IMEX channel \
                 (/dev/nvidia-caps-imex-channels/channel0 missing, or not accessible to this \
                 unprivileged user); set NVIDIA_IMEX_CHANNELS=0 so the channel is added, or \
                 NCCL_MNNVL_ENABLE=0"
            }
            Id::CudaInvalidArgument => {
                "A CUDA call failed with 'invalid argument': a common cause is an image whose CUDA \
                 is older than the GPU (for example an NGC image before 25.01 on Blackwell); use an \
                 image built for this GPU"
            }
            Id::NvlsInvalidArgument => {
                "NVLink SHARP (NVLS) setup failed with 'invalid argument': this points at the \
                 NVSwitch/fabric-manager state of the node (often after a fabric-manager restart) \
                 and is for the administrator; NCCL_NVLS_ENABLE=0 works around it at some cost in \
                 speed"
            }
            Id::NoKernelImage => {
                "The program has no GPU code for this GPU's architecture ('no kernel image' or \
                 'named symbol not found'): the image or framework build predates the GPU (sm_100 \
                 needs CUDA 12.8 or later); use an image built for it"
            }
            Id::ShmTooSmall => {
                "NCCL could not create its shared-memory segment in /dev/shm: the container's \
                 /dev/shm is too small (container engines default to 64 MB); give the container a \
                 larger /dev/shm, or set NCCL_SHM_DISABLE=1 at some cost in speed"
            }
            Id::IbIncompatibleDevices => {
                "NCCL selected network adapters of different link types (InfiniBand and \
                 RoCE/Ethernet) and cannot connect them: set NCCL_IB_HCA to adapters of one link \
                 type only, for example =mlx5_0,=mlx5_1"
            }
            Id::InvalidDeviceOrdinal => {
                "A process asked for a GPU index that does not exist: torchrun --nproc-per-node \
                 (or the ranks per node) is larger than the GPUs visible to the job; make it equal \
                 the GPUs requested in resource.devices"
            }
            Id::DuplicateGpu => {
                "Two ranks of one NCCL communicator use the same GPU: each process must select \
                 its own (torch.cuda.set_device(LOCAL_RANK)); when several nodes of a job share \
                 a machine, give each node its own GPUs (CUDA_VISIBLE_DEVICES); and run no more \
                 ranks per node than GPUs requested in resource.devices"
            }
            Id::PortInUse => {
                "A port the job listens on is already in use on this node (EADDRINUSE), often the \
                 torchrun master port (29500) taken by another job or a previous run still \
                 exiting: choose another --master-port, or in a single-node job use \
                 --rdzv-backend=c10d --rdzv-endpoint=localhost:0 to get a free port"
            }
            Id::RendezvousTimeout => {
                "torchrun stopped waiting for the nodes to join the rendezvous: --nnodes does not \
                 match the nodes that started, or some nodes cannot reach the endpoint; make \
                 --nnodes equal multinode.nodes and check --rdzv-endpoint"
            }
            Id::RendezvousConnection => {
                "torchrun could not connect to the rendezvous store: the --rdzv-endpoint or \
                 --master-addr host is wrong, does not resolve, or is not listening yet; point it \
                 at the head node's address, reachable from every node"
            }
            Id::RendezvousClosed => {
                "The rendezvous was already closed when this node tried to join: the nodes started \
                 too far apart (last_call_timeout defaults to 30 s) or a finished run used the same \
                 --rdzv-id; give each run a unique --rdzv-id and, for staggered starts, raise the \
                 timeouts with --rdzv-conf"
            }
            Id::NcclEnvDeprecated => {
                "PyTorch renamed its NCCL_* settings to TORCH_NCCL_*: use the new names (the old \
                 ones still work for now)"
            }
            Id::TorchDistributedLaunchDeprecated => {
                "python -m torch.distributed.launch is deprecated: use torchrun, which takes the \
                 same flags; the script then reads LOCAL_RANK from the environment instead of a \
                 --local-rank argument"
            }
        }
    }
}

/// Follows one job's log stream; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct Explainer {
    /// One bit per [`Id`] already given.
    fired: u32,
    /// `NET/IB : No device found` was seen and no transport has been chosen since.
    ib_missing: bool,
}

fn all_bits() -> u32 {
    ALL.iter().fold(0, |acc, id| acc | id.bit())
}

/// The longest prefix of `line` of at most `max` bytes that ends on a character boundary.
fn head(line: &str, max: usize) -> &str {
    if line.len() <= max {
        return line;
    }
    let mut end = max;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

/// `text` without ANSI escape sequences (CSI `ESC [ … final`, and two-byte `ESC x`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // Parameters and intermediates, then one final byte in 0x40..=0x7e.
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                // OSC: up to BEL or ESC \.
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' {
                        if chars.peek() == Some(&'\\') {
                            chars.next();
                        }
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The deprecated variable in PyTorch's `Environment variable NCCL_X is deprecated; use
/// TORCH_NCCL_X instead`, and its replacement.
fn deprecated_env(l: &str) -> Option<(String, String)> {
    let at = l.find("Environment variable NCCL_")?;
    let rest = &l[at + "Environment variable ".len()..];
    let name: String = rest
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let new = rest
        .find("use TORCH_")
        .map(|i| {
            rest[i + 4..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .unwrap_or_else(|| format!("TORCH_{name}"));
    Some((name, new))
}

impl Explainer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Look at one line of output (with or without its newline); the explanation for it, unless
    /// the line means nothing known or its explanation was already given by this explainer.
    pub fn line(&mut self, line: &str) -> Option<Explanation> {
        if self.fired == all_bits() {
            return None;
        }
        let window = head(line, MAX_SCAN);
        if window.contains('\x1b') {
            let clean = strip_ansi(window);
            self.scan(&clean)
        } else {
            self.scan(window)
        }
    }

    /// The explanation for `id`, unless it was given already.
    fn fire(&mut self, id: Id) -> Option<Explanation> {
        if self.fired & id.bit() != 0 {
            return None;
        }
        self.fired |= id.bit();
        Some(Explanation {
            id: id.name(),
            text: id.text().to_owned(),
            rule: id.rule(),
        })
    }

    fn scan(&mut self, l: &str) -> Option<Explanation> {
        // The two-line case: no RDMA device, then the socket transport is chosen.
        if l.contains("NET/IB : No device found") || l.contains("NET/IB: No device found") {
            self.ib_missing = true;
            return None;
        }
        let socket_chosen = l.contains("Using network Socket") || l.contains("NET/Socket : Using");
        if socket_chosen {
            if self.ib_missing {
                self.ib_missing = false;
                if let Some(x) = self.fire(Id::SocketsFallback) {
                    return Some(x);
                }
            }
            return None;
        }
        if l.contains("Using network ") {
            // Another transport (a plugin such as IBext or AWS Libfabric) was chosen after all.
            self.ib_missing = false;
            return None;
        }

        if l.contains("Failed to open libibverbs") {
            // The fallback that follows is explained by this already.
            self.fired |= Id::SocketsFallback.bit();
            return self.fire(Id::LibibverbsMissing);
        }
        if l.contains("MNNVL") && l.contains("not working") {
            let id = if l.contains("IMEX channel") {
                Id::MnnvlNoImexChannel
            } else if l.contains("IMEX configuration") || l.contains("nvidia-imex-ctl") {
                Id::ImexDaemon
            } else {
                Id::MnnvlNoImexChannel
            };
            return self.fire(id);
        }
        if l.contains("Cuda failure 800") || l.contains("Cuda failure 'operation not permitted'") {
            return self.fire(Id::CudaNotPermitted);
        }
        if l.contains("Cuda failure") && l.contains("invalid argument") {
            let id = if l.contains("nvls") || l.contains("NVLS") {
                Id::NvlsInvalidArgument
            } else {
                Id::CudaInvalidArgument
            };
            return self.fire(id);
        }
        if l.contains("named symbol not found") || l.contains("no kernel image is available") {
            return self.fire(Id::NoKernelImage);
        }
        if l.contains("invalid device ordinal") {
            return self.fire(Id::InvalidDeviceOrdinal);
        }
        if l.contains("Duplicate GPU detected") {
            return self.fire(Id::DuplicateGpu);
        }
        if l.contains("ccl-net")
            && (l.contains("Could not find")
                || l.contains("No plugin found")
                || l.contains("cannot open shared object file"))
        {
            return self.fire(Id::NetPluginNotFound);
        }
        if l.contains("Failed to initialize any NET plugin") {
            return self.fire(Id::NoNetPlugin);
        }
        if l.contains("no socket interface found")
            || l.contains("No usable listening interface found")
        {
            return self.fire(Id::NoSocketInterface);
        }
        if l.contains("Attempted to connect incompatible devices") {
            return self.fire(Id::IbIncompatibleDevices);
        }
        if l.contains("Error while creating shared memory segment")
            || (l.contains("/dev/shm/nccl-") && l.contains("failed to extend"))
        {
            return self.fire(Id::ShmTooSmall);
        }
        if l.contains("RendezvousTimeoutError") {
            return self.fire(Id::RendezvousTimeout);
        }
        if l.contains("RendezvousConnectionError") {
            return self.fire(Id::RendezvousConnection);
        }
        if l.contains("RendezvousClosedError") {
            return self.fire(Id::RendezvousClosed);
        }
        if l.contains("EADDRINUSE")
            || l.contains("failed to bind to")
            || (l.contains("Address already in use")
                && (l.contains("c10d") || l.contains("socket")))
        {
            return self.fire(Id::PortInUse);
        }
        if l.contains("NCCL") || l.contains("socket") || l.contains("c10d") {
            if l.contains("Connection closed by remote peer")
                || l.contains("remote process exited or there was a network error")
            {
                return self.fire(Id::PeerClosed);
            }
            if l.contains("Connection refused")
                || l.contains("Connection timed out")
                || l.contains("Call to connect")
                || l.contains("has timed out after")
            {
                return self.fire(Id::ConnectFailed);
            }
        }
        if l.contains("Environment variable NCCL_") && l.contains("is deprecated") {
            let id = Id::NcclEnvDeprecated;
            let mut x = self.fire(id)?;
            if let Some((old, new)) = deprecated_env(l) {
                x.text = format!(
                    "PyTorch renamed {old} to {new}: set {new} instead (the old name still works \
                     for now); other NCCL_* settings of PyTorch are renamed the same way"
                );
            }
            return Some(x);
        }
        if l.contains("torch.distributed.launch is deprecated") {
            return self.fire(Id::TorchDistributedLaunchDeprecated);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The explanation `id` for `line` in a fresh explainer.
    fn one(line: &str) -> Option<Explanation> {
        Explainer::new().line(line)
    }

    fn id_of(line: &str) -> Option<&'static str> {
        one(line).map(|x| x.id)
    }

    /// Real log lines (shapes from NCCL, CUDA and PyTorch output) and the explanation each gets.
    const CASES: &[(&str, &str)] = &[
        (
            "4e9a7654171e:8639:8639 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
            "nccl-libibverbs-missing",
        ),
        (
            "user:695833:695833 [2] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory",
            "nccl-net-plugin-not-found",
        ),
        (
            "gpu01:4242:4242 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin.",
            "nccl-net-plugin-not-found",
        ),
        (
            "ip-172-31-8-153:45343:45343 [0] NCCL INFO NET/Plugin : No plugin found (libnccl-net.so).",
            "nccl-net-plugin-not-found",
        ),
        (
            "node1:120:180 [0] plugin/net.cc:1031 NCCL WARN Failed to initialize any NET plugin",
            "nccl-no-net-plugin",
        ),
        (
            "rcvlab-A6000x4-0:223645:223645 [0] bootstrap.cc:45 NCCL WARN Bootstrap : no socket interface found",
            "nccl-no-socket-interface",
        ),
        (
            "node2:77:77 [1] bootstrap.cc:160 NCCL WARN NET/Socket : No usable listening interface found",
            "nccl-no-socket-interface",
        ),
        (
            "g1064:11146:11197 [3] misc/socket.cc:57 NCCL WARN socketProgress: Connection closed by remote peer g1064.example.org<57521>",
            "nccl-peer-closed",
        ),
        (
            "[1,0]<stdout>:[11910] NCCL WARN Call to connect returned Connection timed out",
            "nccl-connect-failed",
        ),
        (
            "node3:310:402 [2] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.7<39275> failed : Connection refused",
            "nccl-connect-failed",
        ),
        (
            "nccl-sleep-c7d759db6-cgz82:3769901:3769901 [1] mnnvl.cc:67 NCCL WARN MNNVL (cliqueSize 8) is available but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.",
            "nccl-mnnvl-no-imex-channel",
        ),
        (
            "gb200-n07:5512:5512 [0] mnnvl.cc:120 NCCL WARN MNNVL (cliqueSize 72) is available but not working on this system. Check the IMEX configuration (nvidia-imex-ctl -N). Set NCCL_MNNVL_ENABLE=0 to ignore this issue.",
            "nccl-imex-daemon",
        ),
        (
            "[2025-11-30 05:55:16] nccl-sleep-c7d759db6-cgz82:3769901:3769901 [1] include/alloc.h:228 NCCL WARN Cuda failure 800 'operation not permitted'",
            "cuda-operation-not-permitted",
        ),
        (
            "b200-01:901:901 [0] enqueue.cc:1556 NCCL WARN Cuda failure 1 'invalid argument'",
            "cuda-invalid-argument",
        ),
        (
            "h100-07:3301:3390 [4] transport/nvls.cc:176 NCCL WARN Cuda failure 'invalid argument'",
            "nccl-nvls-invalid-argument",
        ),
        (
            "c76d92cccb6e:72:456 [0] enqueue.cc:58 NCCL WARN Cuda failure 'named symbol not found'",
            "cuda-no-kernel-image",
        ),
        (
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            "cuda-no-kernel-image",
        ),
        (
            "ubuntu:9621:9688 [3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-KWfVyt (size 5967872)",
            "nccl-shm-too-small",
        ),
        (
            "ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to 5967876 bytes",
            "nccl-shm-too-small",
        ),
        (
            "node5:88:120 [0] transport/net_ib.cc:1032 NCCL WARN NET/IB : Attempted to connect incompatible devices: [1]mlx5_1:1/RoCE and [0]mlx5_0:1/IB. Try selecting NICs of only one link type using NCCL_IB_HCA",
            "nccl-ib-incompatible-devices",
        ),
        (
            "RuntimeError: CUDA error: invalid device ordinal",
            "cuda-invalid-device-ordinal",
        ),
        (
            "smc-gpu-03:29880:30398 [0] init.cc:497 NCCL WARN Duplicate GPU detected : rank 2 and rank 0 both on CUDA device 1000",
            "nccl-duplicate-gpu",
        ),
        (
            "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 10",
            "nccl-duplicate-gpu",
        ),
        (
            "[rank5]: torch.AcceleratorError: CUDA error: invalid device ordinal",
            "cuda-invalid-device-ordinal",
        ),
        (
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
            "torch-port-in-use",
        ),
        (
            "[W socket.cpp:426] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already in use).",
            "torch-port-in-use",
        ),
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError",
            "torch-rendezvous-timeout",
        ),
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",
            "torch-rendezvous-connection",
        ),
        (
            "torch.distributed.elastic.rendezvous.api.RendezvousClosedError",
            "torch-rendezvous-closed",
        ),
        (
            "[W Utils.hpp:133] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarInt)",
            "torch-nccl-env-deprecated",
        ),
        (
            "/usr/local/lib/python3.10/dist-packages/torch/distributed/launch.py:181: FutureWarning: The module torch.distributed.launch is deprecated",
            "torch-distributed-launch-deprecated",
        ),
    ];

    #[test]
    fn every_row_is_recognised_in_a_real_log_line() {
        for (line, id) in CASES {
            assert_eq!(id_of(line), Some(*id), "{line}");
        }
    }

    #[test]
    fn every_explanation_is_one_line_and_ids_are_distinct_kebab_case() {
        let mut seen = std::collections::BTreeSet::new();
        for id in ALL {
            let name = id.name();
            assert!(seen.insert(name), "duplicate id {name}");
            assert!(
                name.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{name}"
            );
            assert!(!id.text().contains('\n'), "{name}");
            assert!(!id.text().contains("  "), "{name}: {}", id.text());
        }
        // Every id is reachable from some case (or the two-line case below).
        for id in ALL {
            let covered = id == Id::SocketsFallback || CASES.iter().any(|(_, n)| *n == id.name());
            assert!(covered, "no test line for {}", id.name());
        }
    }

    #[test]
    fn cited_rules_exist_in_fuzzlint() {
        for id in ALL {
            if let Some(rule) = id.rule() {
                assert!(
                    fuzzfile_rule_names().contains(&rule),
                    "{} cites unknown rule {rule}",
                    id.name()
                );
            }
        }
    }

    /// The rule names of crates/fuzzfile_diagnostics/src/rules_generated.rs, read from the source so the
    /// test fails when a rule is renamed.
    fn fuzzfile_rule_names() -> Vec<&'static str> {
        const RULES: &str = include_str!("../../fuzzfile_diagnostics/src/rules_generated.rs");
        RULES
            .lines()
            .filter_map(|l| {
                let rest = l.split_once("=> (\"FZ")?.1;
                let name = rest.split('"').nth(2)?;
                Some(name)
            })
            .collect()
    }

    #[test]
    fn the_sockets_fallback_needs_both_lines() {
        // NCCL 2.28 on a GPU machine without RDMA.
        let log = [
            "gpu01:1234:1234 [0] NCCL INFO cudaDriverVersion 12080",
            "gpu01:1234:1290 [0] NCCL INFO NET/IB : No device found.",
            "gpu01:1234:1290 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.2.3<0>",
            "gpu01:1234:1290 [0] NCCL INFO Using network Socket",
        ];
        let mut e = Explainer::new();
        let got: Vec<_> = log.iter().filter_map(|l| e.line(l)).collect();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].id, "nccl-sockets-fallback");
        assert_eq!(got[0].rule, Some("nccl-ib-hca-missing"));
        assert!(got[0].text.contains("NCCL_IB_HCA"));

        // The shape printed without the NET/Socket line.
        let mut e = Explainer::new();
        assert_eq!(e.line("NCCL INFO NET/IB : No device found"), None);
        assert_eq!(
            e.line("NCCL INFO Using network Socket").map(|x| x.id),
            Some("nccl-sockets-fallback")
        );

        // Either line alone means nothing.
        assert_eq!(
            id_of("gpu01:1:1 [0] NCCL INFO NET/IB : No device found."),
            None
        );
        assert_eq!(id_of("gpu01:1:1 [0] NCCL INFO Using network Socket"), None);
        assert_eq!(
            id_of("gpu01:1:1 [0] NCCL INFO NET/Socket : Using [0]eth0:10.1.2.3<0>"),
            None
        );
    }

    #[test]
    fn a_plugin_transport_chosen_after_no_ib_device_is_no_fallback() {
        let mut e = Explainer::new();
        assert_eq!(e.line("NCCL INFO P2P plugin IBext"), None);
        assert_eq!(e.line("NCCL INFO NET/IB : No device found."), None);
        assert_eq!(e.line("NCCL INFO Using network AWS Libfabric"), None);
        assert_eq!(e.line("NCCL INFO Using network Socket"), None);
    }

    #[test]
    fn missing_libibverbs_explains_the_fallback_that_follows() {
        let mut e = Explainer::new();
        let x = e.line("NCCL INFO Failed to open libibverbs.so[.1]");
        assert_eq!(x.map(|x| x.id), Some("nccl-libibverbs-missing"));
        assert_eq!(e.line("NCCL INFO NET/IB : No device found."), None);
        assert_eq!(
            e.line("NCCL INFO NET/Socket : Using [0]eth0:172.17.0.2<0>"),
            None
        );
        assert_eq!(e.line("NCCL INFO Using network Socket"), None);
    }

    #[test]
    fn each_explanation_is_given_once_per_stream() {
        let line =
            "node:1:1 [0] include/alloc.h:228 NCCL WARN Cuda failure 800 'operation not permitted'";
        let mut e = Explainer::new();
        assert!(e.line(line).is_some());
        for rank in 1..8 {
            let l = line.replace("[0]", &format!("[{rank}]"));
            assert_eq!(e.line(&l), None);
        }
        // Another explanation still comes.
        let x = e.line("node:1:1 [0] mnnvl.cc:67 NCCL WARN MNNVL (cliqueSize 8) is available but not working on this system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels).");
        assert_eq!(x.map(|x| x.id), Some("nccl-mnnvl-no-imex-channel"));
        // The fallback too fires once, even when NCCL re-initialises.
        let mut e = Explainer::new();
        let mut n = 0;
        for _ in 0..3 {
            e.line("NCCL INFO NET/IB : No device found.");
            n += usize::from(e.line("NCCL INFO Using network Socket").is_some());
        }
        assert_eq!(n, 1);
        // A fresh explainer (another job) explains again.
        assert!(Explainer::new().line(line).is_some());
    }

    #[test]
    fn both_invalid_argument_cases_are_told_apart() {
        let mut e = Explainer::new();
        let a = e.line("n:1:1 [0] transport/nvls.cc:176 NCCL WARN Cuda failure 'invalid argument'");
        let b = e.line("n:1:1 [0] init.cc:410 NCCL WARN Cuda failure 1 'invalid argument'");
        assert_eq!(a.map(|x| x.id), Some("nccl-nvls-invalid-argument"));
        let b = b.expect("the plain invalid argument case");
        assert_eq!(b.id, "cuda-invalid-argument");
        assert_eq!(b.rule, Some("image-too-old-for-gpu"));
    }

    #[test]
    fn explanations_cite_the_related_rule() {
        let rule = |l| one(l).and_then(|x| x.rule);
        assert_eq!(
            rule("RuntimeError: CUDA error: invalid device ordinal"),
            Some("launcher-nproc-mismatch")
        );
        assert_eq!(
            rule("NCCL WARN Failed to initialize any NET plugin"),
            Some("nccl-net-unavailable")
        );
        assert_eq!(
            rule("FutureWarning: The module torch.distributed.launch is deprecated and will be removed in future. Use torchrun."),
            Some("torch-distributed-launch-deprecated")
        );
        assert_eq!(
            rule("NCCL INFO NET/Plugin: Could not find: libnccl-net.so."),
            None
        );
    }

    #[test]
    fn the_deprecated_variable_is_named() {
        let x = one("[W Utils.hpp:164] Warning: Environment variable NCCL_BLOCKING_WAIT is deprecated; use TORCH_NCCL_BLOCKING_WAIT instead (function operator())").expect("explained");
        assert!(
            x.text
                .contains("NCCL_BLOCKING_WAIT to TORCH_NCCL_BLOCKING_WAIT"),
            "{}",
            x.text
        );
        let x = one("Environment variable NCCL_DESYNC_DEBUG is deprecated").expect("explained");
        assert!(x.text.contains("to TORCH_NCCL_DESYNC_DEBUG"), "{}", x.text);
    }

    #[test]
    fn ordinary_lines_are_not_explained() {
        let mut e = Explainer::new();
        for l in [
            "",
            "\n",
            "epoch 3 step 120 loss 1.234",
            "gpu01:1234:1234 [0] NCCL INFO Bootstrap : Using eth0:10.1.2.3<0>",
            "NCCL version 2.28.3+cuda12.9",
            "gpu01:1234:1290 [0] NCCL INFO Channel 00/24 :    0   1",
            "gpu01:1234:1290 [0] NCCL INFO Using network IB",
            "Connection refused by the package mirror, retrying",
            "Error: listen on port 8080",
            "cuda failure 800 in my own log text, lower case",
            "Downloading https://example.org/model.bin: 100%|██████████| 1.2G/1.2G",
            "WARNING:torch.distributed.run: Setting OMP_NUM_THREADS environment variable for each process to be 1",
        ] {
            assert_eq!(e.line(l), None, "{l}");
        }
    }

    #[test]
    fn ansi_colour_and_prefixes_do_not_matter() {
        let l = "\x1b[31m[rank0]: RuntimeError: CUDA error: \x1b[1minvalid device ordinal\x1b[0m";
        assert_eq!(id_of(l), Some("cuda-invalid-device-ordinal"));
        let l = "\x1b]0;title\x07[2025-01-01T00:00:00Z] worker-3 | h:1:1 [7] NCCL WARN Bootstrap : no socket interface found";
        assert_eq!(id_of(l), Some("nccl-no-socket-interface"));
        assert_eq!(strip_ansi("a\x1b[0;32mb\x1b[0mc\x1b]8;;x\x1b\\d"), "abcd");
    }

    #[test]
    fn a_very_long_line_is_examined_only_at_its_start() {
        let message = "NCCL WARN Bootstrap : no socket interface found";
        // Found within the first 4 KiB, even on a 1 MiB line.
        let mut l = String::from(message);
        l.push_str(&"x".repeat(1 << 20));
        assert_eq!(id_of(&l), Some("nccl-no-socket-interface"));
        // Past the window: not examined.
        let mut l = "y".repeat(MAX_SCAN);
        l.push_str(message);
        assert_eq!(id_of(&l), None);
        // The window ends on a character boundary (a multi-byte character straddles it).
        let mut l = "a".repeat(MAX_SCAN - 1);
        l.push('é');
        l.push_str(message);
        assert_eq!(id_of(&l), None);
        assert_eq!(head(&l, MAX_SCAN).len(), MAX_SCAN - 1);
    }

    #[test]
    fn an_exhausted_explainer_returns_nothing_quickly() {
        let mut e = Explainer::new();
        e.fired = all_bits();
        assert_eq!(
            e.line("RuntimeError: CUDA error: invalid device ordinal"),
            None
        );
    }
}
