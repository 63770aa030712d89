//! Cluster profiles: the facts about a cluster that a Fuzzfile does not contain (fabric,
//! Multi-Node NVLink, IMEX, GPU products, what the admin's `/etc/nccl.conf` sets). Rules that
//! need them stay silent without a profile.
//!
//! ```toml
//! name = "gb200-nvl72"
//! gpus-per-node = 4
//! gpu-product = "GB200"
//! fabric = "infiniband"          # infiniband | roce | ethernet
//! ib-hcas = ["mlx5_0", "mlx5_1"] # optional
//! mnnvl = true                   # nodes share a Multi-Node NVLink domain
//! nvlink-domain-nodes = 18       # nodes in one NVLink domain (an NVL72 rack: 18 trays of 4 GPUs)
//! imex = true                    # IMEX runs on the nodes, so channels can be granted
//! [nccl-defaults]                # what the admin's /etc/nccl.conf already sets
//! NCCL_IB_HCA = "mlx5"
//! ```
//!
//! Parsing is pure: the caller reads the file and passes its text.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Clone, Copy, PartialEq, Eq, Debug, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fabric {
    Infiniband,
    Roce,
    Ethernet,
}

impl Fabric {
    /// RDMA fabrics, where NCCL should use its IB transport.
    pub fn is_rdma(self) -> bool {
        matches!(self, Fabric::Infiniband | Fabric::Roce)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Fabric::Infiniband => "infiniband",
            Fabric::Roce => "roce",
            Fabric::Ethernet => "ethernet",
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClusterProfile {
    pub name: Option<String>,
    pub gpus_per_node: Option<u64>,
    /// The GPU product of the nodes (`GB200`, `H100`), as the scheduler reports it.
    pub gpu_product: Option<String>,
    /// Every GPU product on the cluster, when several (for ambiguous annotations).
    #[serde(default)]
    pub gpu_products: Vec<String>,
    pub fabric: Option<Fabric>,
    #[serde(default)]
    pub ib_hcas: Vec<String>,
    #[serde(default)]
    pub mnnvl: bool,
    /// How many nodes one Multi-Node NVLink domain holds (with `mnnvl`). A job of more nodes
    /// spans domains, and NCCL uses the network between them.
    pub nvlink_domain_nodes: Option<u64>,
    #[serde(default)]
    pub imex: bool,
    /// NCCL settings the admin already made in `/etc/nccl.conf`.
    #[serde(default)]
    pub nccl_defaults: BTreeMap<String, String>,
}

impl ClusterProfile {
    /// The cluster as a finding names it: "cluster `NAME`", or "the cluster" when the profile
    /// has no name.
    pub fn described(&self) -> String {
        self.name
            .as_deref()
            .map_or_else(|| "the cluster".to_owned(), |n| format!("cluster `{n}`"))
    }

    /// The first value that TOML accepts but a profile does not (a count of 0): its key and
    /// what is wrong. A profile file and an inline `[cluster]` table of fuzzlint.toml are both
    /// checked with it.
    pub fn invalid_value(&self) -> Option<(&'static str, String)> {
        [
            ("gpus-per-node", self.gpus_per_node),
            ("nvlink-domain-nodes", self.nvlink_domain_nodes),
        ]
        .into_iter()
        .find(|(_, v)| *v == Some(0))
        .map(|(key, _)| (key, format!("`{key}` must be at least 1")))
    }

    /// All products known on the cluster.
    pub fn products(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.gpu_products.iter().map(String::as_str).collect();
        if let Some(p) = &self.gpu_product {
            if !v.contains(&p.as_str()) {
                v.push(p);
            }
        }
        v
    }
}

/// A profile that could not be read: what is wrong and where (1-based line and column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProfileError {
    pub message: String,
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.message)
    }
}

/// Parse a profile from TOML text.
pub fn parse_profile(text: &str) -> Result<ClusterProfile, ProfileError> {
    match toml::from_str::<ClusterProfile>(text) {
        Ok(p) => {
            if let Some((key, message)) = p.invalid_value() {
                let (line, column) = position_of(text, key);
                return Err(ProfileError {
                    message,
                    line,
                    column,
                });
            }
            Ok(p)
        }
        Err(e) => {
            let (line, column) = match e.span() {
                Some(span) => line_col(text, span.start),
                None => (1, 1),
            };
            let msg = e.message().trim().to_owned();
            let hint = if msg.contains("unknown field") {
                "; valid keys: name, gpus-per-node, gpu-product, gpu-products, fabric, ib-hcas, mnnvl, nvlink-domain-nodes, imex, [nccl-defaults]"
            } else if msg.contains("unknown variant") {
                "; `fabric` is one of infiniband, roce, ethernet"
            } else {
                ""
            };
            Err(ProfileError {
                message: format!("{msg}{hint}"),
                line,
                column,
            })
        }
    }
}

fn line_col(text: &str, offset: usize) -> (u32, u32) {
    let offset = u32::try_from(offset.min(text.len())).unwrap_or(u32::MAX);
    let lc = fuzzfile_diagnostics::LineIndex::new(text).line_col(text, offset);
    (lc.line, lc.column)
}

/// Where `key` is written as a key (at the start of a line, after blanks), not in a comment.
fn position_of(text: &str, key: &str) -> (u32, u32) {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        if line[indent..].starts_with(key) {
            return line_col(text, offset + indent);
        }
        offset += line.len();
    }
    (1, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GB200: &str = "name = \"gb200-nvl72\"\ngpus-per-node = 4\ngpu-product = \"GB200\"\nfabric = \"infiniband\"\nib-hcas = [\"mlx5_0\", \"mlx5_1\"]\nmnnvl = true\nimex = true\n[nccl-defaults]\nNCCL_IB_HCA = \"mlx5\"\n";

    #[test]
    fn the_documented_shape_parses() {
        let p = parse_profile(GB200).unwrap();
        assert_eq!(p.gpus_per_node, Some(4));
        assert_eq!(p.fabric, Some(Fabric::Infiniband));
        assert!(p.mnnvl && p.imex);
        assert_eq!(
            p.nccl_defaults.get("NCCL_IB_HCA").map(String::as_str),
            Some("mlx5")
        );
        assert_eq!(p.ib_hcas, vec!["mlx5_0", "mlx5_1"]);
        assert_eq!(p.nvlink_domain_nodes, None);
        let p = parse_profile(
            &GB200.replace("mnnvl = true\n", "mnnvl = true\nnvlink-domain-nodes = 18\n"),
        )
        .unwrap();
        assert_eq!(p.nvlink_domain_nodes, Some(18));
    }

    #[test]
    fn errors_have_positions() {
        let e = parse_profile("name = \"x\"\nfabric = \"omnipath\"\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(
            e.message.contains("infiniband, roce, ethernet"),
            "{}",
            e.message
        );
        let e = parse_profile("gpus_per_node = 4\n").unwrap_err();
        assert_eq!((e.line, e.column), (1, 1));
        assert!(e.message.contains("unknown field"), "{}", e.message);
        let e = parse_profile("mnnvl = \"yes\"\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(parse_profile("gpus-per-node = 0\n").is_err());
        let e = parse_profile(
            "# nvlink-domain-nodes: one rack\nmnnvl = true\n  nvlink-domain-nodes = 0\n",
        )
        .unwrap_err();
        assert_eq!((e.line, e.column), (3, 3));
        assert!(
            e.message
                .contains("`nvlink-domain-nodes` must be at least 1"),
            "{e}"
        );
        let e = parse_profile("nvlink-domain-nodes = -3\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse_profile("nvlink-domain-node = 18\n").unwrap_err();
        assert!(e.message.contains("nvlink-domain-nodes"), "{}", e.message);
        assert!(parse_profile("[broken\n").is_err());
    }
}
