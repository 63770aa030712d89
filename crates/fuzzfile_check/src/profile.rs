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
    #[serde(default)]
    pub imex: bool,
    /// NCCL settings the admin already made in `/etc/nccl.conf`.
    #[serde(default)]
    pub nccl_defaults: BTreeMap<String, String>,
}

impl ClusterProfile {
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
            if p.gpus_per_node == Some(0) {
                let (line, column) = position_of(text, "gpus-per-node");
                return Err(ProfileError {
                    message: "`gpus-per-node` must be at least 1".into(),
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
                "; valid keys: name, gpus-per-node, gpu-product, gpu-products, fabric, ib-hcas, mnnvl, imex, [nccl-defaults]"
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

fn position_of(text: &str, key: &str) -> (u32, u32) {
    text.find(key).map_or((1, 1), |o| line_col(text, o))
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
        assert!(parse_profile("[broken\n").is_err());
    }
}
