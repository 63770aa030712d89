//! The rule registry: every diagnostic the toolchain emits belongs to exactly one rule with a
//! stable kebab-case name, a stable code and a default severity. Documentation for each rule
//! lives next to its implementation in `fuzzfile_check::rules` and is generated into docs/rules/.

use crate::Severity;
use serde::{Serialize, Serializer};

/// Which layer finds a rule's diagnostics.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleCategory {
    /// The YAML text itself.
    Syntax,
    /// The shape of the Fuzzfile: keys, types, value grammars.
    Schema,
    /// Relations between parts of the file: references, the job graph.
    Semantic,
    /// GPU launches, NCCL settings and cluster facts.
    Gpu,
    /// The checker's own settings (suppressions).
    Meta,
}

macro_rules! rules {
    ($( $variant:ident => ($code:literal, $name:literal, $sev:ident, $cat:ident, $summary:literal), )*) => {
        /// Every rule, in code order.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
        pub enum Rule { $( $variant, )* }

        impl Rule {
            pub const ALL: &'static [Rule] = &[ $( Rule::$variant, )* ];

            /// The stable kebab-case name (`unknown-key`).
            pub const fn name(self) -> &'static str {
                match self { $( Rule::$variant => $name, )* }
            }
            /// The stable code (`FZ010`).
            pub const fn code(self) -> &'static str {
                match self { $( Rule::$variant => $code, )* }
            }
            pub const fn default_severity(self) -> Severity {
                match self { $( Rule::$variant => Severity::$sev, )* }
            }
            pub const fn category(self) -> RuleCategory {
                match self { $( Rule::$variant => RuleCategory::$cat, )* }
            }
            /// One line saying what the rule detects.
            pub const fn summary(self) -> &'static str {
                match self { $( Rule::$variant => $summary, )* }
            }
        }
    };
}

rules! {
    YamlSyntax => ("FZ001", "yaml-syntax", Error, Syntax, "The text is not valid YAML, or exceeds the size and nesting limits"),
    UnsupportedVersion => ("FZ002", "unsupported-version", Error, Schema, "`version` is missing or is not one of the Fuzzfile versions `v1` and `v4`"),
    LegacyVersion => ("FZ003", "legacy-version", Info, Schema, "The file uses the legacy `v1` syntax; new workflows should use `v4`"),
    UnknownKey => ("FZ010", "unknown-key", Error, Schema, "A key that Fuzzball does not accept at this place and version"),
    InvalidValue => ("FZ011", "invalid-value", Error, Schema, "A value of the wrong type, or one that breaks its grammar (size, duration, URI, name, enum)"),
    MissingField => ("FZ012", "missing-field", Error, Schema, "A required key is absent"),
    DuplicateKey => ("FZ013", "duplicate-key", Error, Schema, "The same key appears twice in one mapping"),
    DeprecatedKey => ("FZ014", "deprecated-key", Warning, Schema, "A key that Fuzzball still accepts but has replaced or stopped honouring"),
    UnknownReference => ("FZ020", "unknown-reference", Error, Semantic, "A reference to a job, service, volume or file that the Fuzzfile does not define"),
    DependencyCycle => ("FZ021", "dependency-cycle", Error, Semantic, "Jobs and services that depend on each other in a cycle, so the workflow cannot start"),
    DuplicateName => ("FZ022", "duplicate-name", Error, Semantic, "A job and a service with the same name"),
    CommandAndScript => ("FZ030", "command-and-script", Warning, Schema, "A job or service sets both `command` and `script`"),
    NoCommand => ("FZ031", "no-command", Error, Schema, "A job or service sets neither `command` nor `script`"),
    PolicyRetryIgnored => ("FZ032", "policy-retry-ignored", Warning, Schema, "`policy.retry` is accepted by Fuzzball and ignored"),
    UnusedSuppression => ("FZ040", "unused-suppression", Warning, Meta, "A `# fuzzlint: ignore[...]` comment that suppresses nothing"),
    TorchrunNprocMismatch => ("FZ201", "torchrun-nproc-mismatch", Error, Gpu, "torchrun `--nproc-per-node` differs from the GPUs requested per node"),
    TorchrunNnodesMismatch => ("FZ202", "torchrun-nnodes-mismatch", Error, Gpu, "torchrun `--nnodes` does not admit `multinode.nodes`"),
    TorchrunStandaloneMultinode => ("FZ203", "torchrun-standalone-multinode", Error, Gpu, "torchrun `--standalone` in a multinode job"),
    TorchrunMissingNodeRank => ("FZ204", "torchrun-missing-node-rank", Error, Gpu, "Multinode torchrun without `--node-rank` or a rendezvous that assigns ranks"),
    TorchrunMissingMasterAddr => ("FZ205", "torchrun-missing-master-addr", Error, Gpu, "Multinode torchrun without a reachable master or rendezvous address"),
    TorchrunRdzvIncomplete => ("FZ206", "torchrun-rdzv-incomplete", Warning, Gpu, "torchrun rendezvous settings that are incomplete or ignored"),
    TorchDistributedLaunchDeprecated => ("FZ207", "torch-distributed-launch-deprecated", Warning, Gpu, "`python -m torch.distributed.launch` is deprecated in favour of torchrun"),
    LauncherDoubleWrap => ("FZ210", "launcher-double-wrap", Error, Gpu, "A launcher inside a multinode implementation that already wraps the command"),
    MpiSlotsNotGpus => ("FZ211", "mpi-slots-not-gpus", Error, Gpu, "MPI ranks follow the slot count (CPU cores by default), not the GPU count"),
    GpuRequestMissing => ("FZ212", "gpu-request-missing", Error, Gpu, "A GPU launcher or NCCL settings in a job that requests no GPU"),
    NcclIbHcaMissing => ("FZ301", "nccl-ib-hca-missing", Warning, Gpu, "Multinode NCCL job on an InfiniBand/RoCE cluster without `NCCL_IB_HCA`"),
    NcclMnnvlNoImex => ("FZ302", "nccl-mnnvl-no-imex", Error, Gpu, "Multinode GPU job on a Multi-Node NVLink cluster with no IMEX channel and MNNVL not disabled"),
    ImexNoProductPin => ("FZ303", "imex-no-product-pin", Error, Gpu, "`NVIDIA_IMEX_CHANNELS` without a GPU product annotation keeping the job on IMEX nodes"),
    ImexSharedTrustDomain => ("FZ304", "imex-shared-trust-domain", Info, Gpu, "Jobs sharing IMEX channel 0 in an NVLink domain share one trust domain"),
    NcclInvalidValue => ("FZ305", "nccl-invalid-value", Error, Gpu, "An NCCL or PyTorch NCCL environment variable with an invalid or deprecated value or name"),
    NcclNetUnavailable => ("FZ306", "nccl-net-unavailable", Error, Gpu, "`NCCL_NET` or `NCCL_IB_DISABLE` forcing a transport the cluster lacks or slows"),
    GpuProductAmbiguous => ("FZ307", "gpu-product-ambiguous", Warning, Gpu, "A GPU product annotation that matches several products (`B200` also matches `GB200`)"),
    ImageTooOldForGpu => ("FZ308", "image-too-old-for-gpu", Error, Gpu, "An image whose CUDA is older than the GPU needs"),
    ClusterProfileMissing => ("FZ309", "cluster-profile-missing", Info, Gpu, "GPU jobs checked without a cluster profile: rules that need cluster facts are off"),
    GpuRequestExceedsNode => ("FZ310", "gpu-request-exceeds-node", Error, Gpu, "A job that requests more GPUs per node than the cluster's nodes have"),
    NcclIbHcaUnknown => ("FZ311", "nccl-ib-hca-unknown", Warning, Gpu, "`NCCL_IB_HCA` naming adapters the cluster's nodes do not have"),
}

impl Rule {
    pub fn from_name(name: &str) -> Option<Rule> {
        Rule::ALL
            .iter()
            .copied()
            .find(|r| r.name() == name || r.code().eq_ignore_ascii_case(name))
    }
}

impl Serialize for Rule {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_and_codes_are_unique_and_well_formed() {
        let mut names = HashSet::new();
        let mut codes = HashSet::new();
        for r in Rule::ALL {
            assert!(names.insert(r.name()), "duplicate name {}", r.name());
            assert!(codes.insert(r.code()), "duplicate code {}", r.code());
            assert!(
                r.name()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{} not kebab-case",
                r.name()
            );
            assert!(
                r.code().starts_with("FZ") && r.code().len() == 5,
                "{}",
                r.code()
            );
            assert_eq!(Rule::from_name(r.name()), Some(*r));
            assert_eq!(Rule::from_name(r.code()), Some(*r));
        }
    }
}
