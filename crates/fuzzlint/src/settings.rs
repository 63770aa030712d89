//! Per-file settings as `--show-settings` prints them. Finding and reading config files and
//! profiles is `fuzzfile_check::settings`, shared with the language server.

use fuzzfile_check::profile::ClusterProfile;
pub use fuzzfile_check::settings::{ClusterOrigin, FileSettings, Overrides, Resolver};
use fuzzfile_check::Rule;
use std::io::{self, Write};

fn profile_summary(p: &ClusterProfile) -> String {
    let mut parts = Vec::new();
    if let Some(n) = &p.name {
        parts.push(format!("name = {n:?}"));
    }
    if let Some(n) = p.gpus_per_node {
        parts.push(format!("gpus-per-node = {n}"));
    }
    if let Some(g) = &p.gpu_product {
        parts.push(format!("gpu-product = {g:?}"));
    }
    if !p.gpu_products.is_empty() {
        parts.push(format!("gpu-products = {:?}", p.gpu_products));
    }
    if let Some(f) = p.fabric {
        parts.push(format!("fabric = {:?}", f.as_str()));
    }
    if !p.ib_hcas.is_empty() {
        parts.push(format!("ib-hcas = {:?}", p.ib_hcas));
    }
    parts.push(format!("mnnvl = {}", p.mnnvl));
    parts.push(format!("imex = {}", p.imex));
    if !p.nccl_defaults.is_empty() {
        let keys: Vec<&str> = p.nccl_defaults.keys().map(String::as_str).collect();
        parts.push(format!("nccl-defaults = {}", keys.join(", ")));
    }
    parts.join(", ")
}

/// `--show-settings` for one file.
pub fn show(out: &mut dyn Write, file: &str, s: &FileSettings) -> io::Result<()> {
    writeln!(out, "{file}")?;
    writeln!(out, "  config: {}", s.config.as_deref().unwrap_or("none"))?;
    for note in &s.notes {
        writeln!(out, "    {note}")?;
    }
    match &s.cluster {
        ClusterOrigin::None => writeln!(out, "  cluster: none")?,
        ClusterOrigin::File { path, from } => writeln!(out, "  cluster: {path} (from {from})")?,
        ClusterOrigin::Inline { config } => {
            writeln!(out, "  cluster: inline [cluster] table of {config}")?
        }
    }
    if let Some(p) = &s.options.profile {
        writeln!(out, "    {}", profile_summary(p))?;
    }
    writeln!(out, "  fail-on: {}", s.fail_on.as_str())?;
    let rules = &s.options.rules;
    let enabled = Rule::ALL.iter().filter(|r| rules.is_enabled(**r)).count();
    writeln!(out, "  rules: {enabled} of {} enabled", Rule::ALL.len())?;
    for r in Rule::ALL {
        let sev = rules.severity_of(*r);
        let level = if rules.is_enabled(*r) {
            sev.as_str()
        } else {
            "off"
        };
        let note = if rules.is_enabled(*r) && sev != r.default_severity() {
            format!("  (default: {})", r.default_severity())
        } else {
            String::new()
        };
        writeln!(out, "    {} {:<36} {level}{note}", r.code(), r.name())?;
    }
    Ok(())
}
