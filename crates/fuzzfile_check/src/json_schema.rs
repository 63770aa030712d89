//! JSON Schemas (draft-07) of the checker's TOML files: the cluster profile
//! ([`crate::profile`]) and `fuzzlint.toml` ([`crate::config`]), for editors that validate TOML
//! with a JSON Schema (Even Better TOML / taplo, JetBrains). Like the Fuzzfile schemas of
//! `fuzzfile_model::json_schema`, they are committed in `schemas/` and a test fails when they
//! drift; a test also keeps them equal to what the parsers accept (every key, the enumerations,
//! unknown keys rejected: both parsers deny unknown fields).

use fuzzfile_diagnostics::Rule;
use fuzzfile_model::json_schema::{BASE_URL, DRAFT};
use serde_json::{json, Value};

/// The schemas of this module, by `fuzzlint schema` name, with their file names in `schemas/`.
pub const NAMES: &[(&str, &str)] = &[
    ("cluster-profile", "cluster-profile.schema.json"),
    ("fuzzlint-config", "fuzzlint-config.schema.json"),
];

/// The keys of a cluster profile and their schemas (`profile::ClusterProfile`).
fn profile_properties() -> Value {
    json!({
        "name": {"type": "string", "description": "The cluster's name, as findings name it (\"cluster `NAME`\")."},
        "gpus-per-node": {"type": "integer", "minimum": 1, "description": "GPUs on each node."},
        "gpu-product": {"type": "string", "description": "The GPU product of the nodes (`GB200`, `H100`), as the scheduler reports it."},
        "gpu-products": {"type": "array", "items": {"type": "string"}, "description": "Every GPU product on the cluster, when several (for ambiguous annotations)."},
        "fabric": {"enum": ["infiniband", "roce", "ethernet"], "description": "The network between nodes: `infiniband`, `roce` (both RDMA) or `ethernet`."},
        "ib-hcas": {"type": "array", "items": {"type": "string"}, "description": "The InfiniBand host channel adapters (`mlx5_0`)."},
        "mnnvl": {"type": "boolean", "description": "Nodes share a Multi-Node NVLink domain."},
        "nvlink-domain-nodes": {"type": "integer", "minimum": 1, "description": "Nodes in one NVLink domain (an NVL72 rack: 18 trays of 4 GPUs); a job of more nodes spans domains."},
        "imex": {"type": "boolean", "description": "IMEX runs on the nodes, so channels can be granted."},
        "nccl-defaults": {"type": "object", "additionalProperties": {"type": "string"}, "description": "NCCL settings the admin already made in `/etc/nccl.conf` (`NCCL_IB_HCA = \"mlx5\"`)."}
    })
}

/// The cluster profile schema.
pub fn cluster_profile_schema() -> Value {
    json!({
        "$schema": DRAFT,
        "$id": format!("{BASE_URL}cluster-profile.schema.json"),
        "title": "fuzzlint cluster profile",
        "description": "Facts about a cluster that a Fuzzfile does not contain (fabric, Multi-Node NVLink, IMEX, GPU products, NCCL defaults), read by `fuzzlint --cluster FILE` or `cluster = ...` in fuzzlint.toml.",
        "type": "object",
        "properties": profile_properties(),
        "additionalProperties": false
    })
}

/// A rule selector: a rule name, a former name, a code or a code prefix, any case for codes
/// (`config::Selector::parse`).
fn selector() -> Value {
    let names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
    let aliases: Vec<&str> = Rule::ALL
        .iter()
        .flat_map(|r| r.aliases().iter().copied())
        .collect();
    let mut any = vec![
        json!({"enum": names, "description": "A rule name."}),
        json!({"type": "string", "pattern": r"^\s*[Ff][Zz][0-9]{0,3}\s*$", "description": "A rule code (`FZ201`) or a code prefix (`FZ2`)."}),
    ];
    if !aliases.is_empty() {
        any.push(json!({"enum": aliases, "description": "A former name of a renamed rule."}));
    }
    json!({"anyOf": any})
}

/// A rule named in `[severity]`: a name, a former name or a code (`Rule::lookup`).
fn rule_name() -> Value {
    let mut names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
    names.extend(Rule::ALL.iter().flat_map(|r| r.aliases().iter().copied()));
    json!({
        "anyOf": [
            {"enum": names},
            {"type": "string", "pattern": r"^[Ff][Zz][0-9]{3}$"}
        ]
    })
}

/// The `fuzzlint.toml` schema.
pub fn fuzzlint_config_schema() -> Value {
    json!({
        "$schema": DRAFT,
        "$id": format!("{BASE_URL}fuzzlint-config.schema.json"),
        "title": "fuzzlint.toml",
        "description": "Which fuzzlint rules run, at which severity, when a run fails, and the cluster the workflows run on.",
        "type": "object",
        "properties": {
            "select": {"type": "array", "items": selector(), "description": "The rules to run: names, codes (`FZ201`) or code prefixes (`FZ2`); starts over with exactly these."},
            "ignore": {"type": "array", "items": selector(), "description": "Rules removed from the selection."},
            "extend-select": {"type": "array", "items": selector(), "description": "Rules added to the selection (the inherited one, with `extend`)."},
            "extend": {"type": "string", "description": "A config this one inherits from, relative to this file (`../fuzzlint.toml`): its settings apply unless this file sets them; rule selections layer (parent first), `[severity]` and `per-file-ignores` merge, `extend-exclude` lists append. A cycle is an error."},
            "exclude": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Gitignore-style globs, relative to this file's directory, that directory walks skip; replaces the default excludes (.git, .hg, .svn, .venv, venv, node_modules, __pycache__). A file named on the command line is still checked unless `--force-exclude`."},
            "extend-exclude": {"type": "array", "items": {"type": "string", "minLength": 1}, "description": "Globs added to the excludes (the defaults, or `exclude`), relative to this file's directory."},
            "per-file-ignores": {
                "type": "object",
                "additionalProperties": {"type": "array", "items": selector()},
                "description": "Gitignore-style glob (relative to this file's directory) → rules (names, codes, code prefixes) turned off for the files it matches."
            },
            "fail-on": {"enum": ["error", "warning", "info", "never"], "description": "A run fails (exit status 1) on a finding at or above this severity, or never."},
            "severity": {
                "type": "object",
                "propertyNames": rule_name(),
                "additionalProperties": {"enum": ["error", "warning", "info", "off"]},
                "description": "Rule name or code → `error`, `warning`, `info` or `off`."
            },
            "skip-non-fuzzfiles": {"type": "boolean", "description": "Skip a YAML file named on the command line (as pre-commit names every YAML file) that does not look like a Fuzzfile: a top-level `version:` written as a Fuzzfile's (`v1`, `v4`) and `jobs:` or `services:`. Default true; `false` checks it as a Fuzzfile (as `fuzzlint check --no-skip`). `*.fz` files are always checked."},
            "cluster": {
                "description": "The cluster profile: a path relative to this file, or an inline table.",
                "anyOf": [
                    {"type": "string"},
                    {"type": "object", "properties": profile_properties(), "additionalProperties": false}
                ]
            }
        },
        "additionalProperties": false
    })
}

/// A schema by its `fuzzlint schema` name: these two and the Fuzzfile ones.
pub fn by_name(name: &str) -> Option<Value> {
    match name {
        "cluster-profile" => Some(cluster_profile_schema()),
        "fuzzlint-config" => Some(fuzzlint_config_schema()),
        _ => fuzzfile_model::json_schema::by_name(name),
    }
}

/// Every schema name `fuzzlint schema` knows, with its file name in `schemas/`.
pub fn all_names() -> Vec<(&'static str, &'static str)> {
    let mut v = fuzzfile_model::json_schema::NAMES.to_vec();
    v.extend_from_slice(NAMES);
    v
}
