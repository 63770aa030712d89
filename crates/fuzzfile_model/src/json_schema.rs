//! JSON Schemas (draft-07) of Fuzzfile v1 and v4, generated from the key table in
//! [`crate::schema`] (the keys of each place, their versions, status and docs, their value
//! kinds and enumerations) and the value grammars in [`crate::values`]. The committed files in
//! `schemas/` are this module's output (`fuzzlint schema NAME` prints them); a test fails when
//! they drift.
//!
//! A schema is never stricter than the model builder: it rejects only what the builder reports
//! as an error (`unknown-key`, `invalid-value`, `missing-field` for the version). What the
//! builder reports as a warning (a case-only enum mismatch, a `d` duration unit) stays valid,
//! and grammars a regular expression cannot say faithfully are left to `fuzzlint`.
//!
//! [`yaml_to_json`] turns a parsed Fuzzfile into the JSON value a YAML-aware schema validator
//! sees (merge keys applied, as Fuzzball's decoder applies them), for the tests and tools that
//! validate with these schemas.

use crate::schema::{allowed_values, value_kind, Place, Status, ValueKind, Versions, ALL_PLACES};
use crate::Version;
use fuzzfile_syntax::{CoreValue, NodeId, NodeKind, Tree};
use serde_json::{json, Map, Value};

/// Draft-07, the draft every schema-aware YAML editor supports.
pub const DRAFT: &str = "http://json-schema.org/draft-07/schema#";

/// Where the committed schemas are published (their `$id`s): the repository's schemas/
/// (`fuzzfile_diagnostics::docs`, from Cargo.toml's `repository`).
pub const BASE_URL: &str = fuzzfile_diagnostics::docs::SCHEMA_BASE_URL;

/// A size: a decimal number, an optional single space and an optional unit, any case
/// (`values::parse_size`).
pub const SIZE_PATTERN: &str =
    r"^\s*(?:[0-9]+\.?[0-9]*|\.[0-9]+) ?(?:[bB]|[kKmMgGtTpP](?:[bB]|[iI][bB]?)?)?\s*$";

/// A Go duration (`values::parse_duration`); `d` and `w` are accepted here because the builder
/// only warns about them.
pub const DURATION_PATTERN: &str =
    r"^\+?(?:0|(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h|d|w))+)$";

/// An image URI (`values::parse_image_uri`).
pub const IMAGE_URI_PATTERN: &str = r"^(?:docker|oras)://\S+$";

/// A secret reference (`values::parse_secret_ref`): a scope, `/`, a name, no control characters.
pub const SECRET_PATTERN: &str = r"^secret://[^/\x00-\x1f\x7f-\x9f]+/[^\x00-\x1f\x7f-\x9f]+$";

/// A volume reference (`values::parse_volume_ref`).
pub const VOLUME_REF_PATTERN: &str = r"^volume://[^/]+/[^/]+(?:/[\s\S]+)?$";

/// A job or service name: a DNS label (`values::check_dns_label`), at most 63 characters.
pub const DNS_LABEL_PATTERN: &str = r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$";

/// A volume key (`values::check_path_name`), at most `values::MAX_PATH_NAME` bytes.
pub const PATH_NAME_PATTERN: &str = r"^[A-Za-z0-9][A-Za-z0-9._-]*$";

/// An `env` entry: a variable name, `=`, a value without NUL (`build.rs`'s `env`).
pub const ENV_PATTERN: &str = r"^[A-Za-z_][A-Za-z0-9_]*=[^\x00]*$";

/// One path component that is not `..`.
const COMPONENT: &str = r"(?:[^/\x00]{3,}|[^/\x00.][^/\x00]|\.[^/\x00.]|[^/\x00]?)";

/// An absolute path in the container without a `..` component or NUL
/// (`values::check_contained_path`).
pub fn abs_path_pattern() -> String {
    format!("^(?:/{COMPONENT})+$")
}

/// The schemas `fuzzlint schema NAME` prints, by name, with their file names in `schemas/`.
pub const NAMES: &[(&str, &str)] = &[
    ("fuzzfile", "fuzzfile.schema.json"),
    ("fuzzfile-v1", "fuzzfile-v1.schema.json"),
    ("fuzzfile-v4", "fuzzfile-v4.schema.json"),
];

/// The schema of one version, or (with `None`) the schema that dispatches on `version`.
pub fn fuzzfile_schema(version: Option<Version>) -> Value {
    let mut root = Map::new();
    root.insert("$schema".into(), json!(DRAFT));
    match version {
        Some(v) => {
            let name = format!("fuzzfile-{}", v.as_str());
            root.insert("$id".into(), json!(format!("{BASE_URL}{name}.schema.json")));
            root.insert("title".into(), json!(format!("Fuzzfile {}", v.as_str())));
            root.insert(
                "description".into(),
                json!(format!(
                    "A Fuzzball workflow file, version {}. Generated from fuzzfile_model's key table; `fuzzlint` checks more than this schema can say.",
                    v.as_str()
                )),
            );
            let defs = definitions(v, "");
            root.insert("$ref".into(), json!("#/definitions/root"));
            root.insert("definitions".into(), Value::Object(defs));
        }
        None => {
            root.insert(
                "$id".into(),
                json!(format!("{BASE_URL}fuzzfile.schema.json")),
            );
            root.insert("title".into(), json!("Fuzzfile"));
            root.insert(
                "description".into(),
                json!("A Fuzzball workflow file: `version: v4` (current) or `version: v1` (legacy), each checked against its version's keys. Generated from fuzzfile_model's key table; `fuzzlint` checks more than this schema can say."),
            );
            root.insert("type".into(), json!("object"));
            root.insert("required".into(), json!(["version"]));
            root.insert(
                "properties".into(),
                json!({"version": version_schema(None)}),
            );
            root.insert(
                "if".into(),
                json!({"properties": {"version": {"const": "v1"}}, "required": ["version"]}),
            );
            root.insert("then".into(), json!({"$ref": "#/definitions/v1.root"}));
            root.insert("else".into(), json!({"$ref": "#/definitions/v4.root"}));
            let mut defs = definitions(Version::V1, "v1.");
            defs.extend(definitions(Version::V4, "v4."));
            root.insert("definitions".into(), Value::Object(defs));
        }
    }
    Value::Object(root)
}

/// A schema by its `fuzzlint schema` name.
pub fn by_name(name: &str) -> Option<Value> {
    match name {
        "fuzzfile" => Some(fuzzfile_schema(None)),
        "fuzzfile-v1" => Some(fuzzfile_schema(Some(Version::V1))),
        "fuzzfile-v4" => Some(fuzzfile_schema(Some(Version::V4))),
        _ => None,
    }
}

/// A schema as committed: pretty JSON with a final newline.
pub fn to_text(schema: &Value) -> String {
    let mut s = serde_json::to_string_pretty(schema).unwrap_or_default();
    s.push('\n');
    s
}

fn version_schema(version: Option<Version>) -> Value {
    let doc = Place::Root.key("version").map_or("", |k| k.doc);
    match version {
        Some(v) => json!({"description": doc, "const": v.as_str()}),
        None => json!({"description": doc, "enum": crate::schema::VERSIONS}),
    }
}

fn place_name(place: Place) -> &'static str {
    match place {
        Place::Root => "root",
        Place::Defaults => "defaults",
        Place::DefaultsJob => "defaults-job",
        Place::Job => "job",
        Place::Service => "service",
        Place::Image => "image",
        Place::Resource => "resource",
        Place::Cpu => "cpu",
        Place::Memory => "memory",
        Place::Multinode => "multinode",
        Place::TaskArray => "task-array",
        Place::Policy => "policy",
        Place::Timeout => "timeout",
        Place::Retry => "retry",
        Place::Dependency => "dependency",
        Place::JobNetwork => "job-network",
        Place::ServiceNetwork => "service-network",
        Place::Port => "port",
        Place::Endpoint => "endpoint",
        Place::Probe => "readiness-probe",
        Place::ProbeExec => "probe-exec",
        Place::ProbeHttpGet => "probe-http-get",
        Place::ProbeTcpSocket => "probe-tcp-socket",
        Place::ProbeGrpc => "probe-grpc",
        Place::HttpHeader => "http-header",
        Place::Volume => "volume",
        Place::Transfer => "transfer",
        Place::TransferUri => "transfer-uri",
        Place::MountV1 => "mount-v1",
        Place::MountV4 => "mount-v4",
    }
}

/// The definitions of one version: one per place of the key table, plus the shared value
/// shapes.
fn definitions(version: Version, prefix: &str) -> Map<String, Value> {
    let r = |name: &str| json!({"$ref": format!("#/definitions/{prefix}{name}")});
    let mut defs = Map::new();
    for &place in ALL_PLACES {
        if (place == Place::MountV1 && version == Version::V4)
            || (place == Place::MountV4 && version == Version::V1)
        {
            continue;
        }
        defs.insert(
            format!("{prefix}{}", place_name(place)),
            place_schema(place, version, &r),
        );
    }
    defs
}

/// Any scalar but null: the builder reads numbers and booleans under a string key as written.
fn scalar() -> Value {
    json!({"type": ["string", "number", "boolean"]})
}

fn with_doc(mut v: Value, doc: &str) -> Value {
    if let Value::Object(m) = &mut v {
        m.insert("description".into(), json!(doc));
    }
    v
}

/// A mapping with free-form keys (null is an empty mapping).
fn map_of(values: Value) -> Value {
    json!({"type": ["object", "null"], "additionalProperties": values})
}

fn list_of(items: Value) -> Value {
    json!({"type": ["array", "null"], "items": items})
}

/// An enumerated value. Exact values are listed for completion; a case-only mismatch is
/// accepted where the builder only warns about it.
fn enumeration(values: &[&str], case_insensitive: bool) -> Value {
    if !case_insensitive {
        return json!({"enum": values});
    }
    let alternatives: Vec<String> = values
        .iter()
        .map(|v| {
            v.chars()
                .map(|c| {
                    if c.is_ascii_alphabetic() {
                        format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
                    } else {
                        regex_escape(c)
                    }
                })
                .collect()
        })
        .collect();
    json!({
        "anyOf": [
            {"enum": values},
            {"type": "string", "pattern": format!("^(?:{})$", alternatives.join("|"))}
        ]
    })
}

fn regex_escape(c: char) -> String {
    if "\\^$.|?*+()[]{}/-".contains(c) {
        format!("\\{c}")
    } else {
        c.to_string()
    }
}

fn uint(min: u64) -> Value {
    json!({"type": "integer", "minimum": min})
}

fn port() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": 65535})
}

fn string_pattern(pattern: &str) -> Value {
    json!({"type": "string", "pattern": pattern})
}

fn secret() -> Value {
    string_pattern(SECRET_PATTERN)
}

/// A command's arguments: a list of non-null scalars without NUL.
fn argv() -> Value {
    json!({
        "type": "array",
        "items": {
            "anyOf": [
                {"type": "string", "pattern": r"^[^\x00]*$"},
                {"type": ["number", "boolean"]}
            ]
        }
    })
}

/// The schema of the value of `key` at `place`.
fn key_schema(place: Place, key: &str, version: Version, r: &dyn Fn(&str) -> Value) -> Value {
    use Place as P;
    let abs = || string_pattern(&abs_path_pattern());
    match (place, key) {
        (P::Root, "version") => version_schema(Some(version)),
        (P::Root, "jobs") => json!({
            "type": ["object", "null"],
            "propertyNames": {"pattern": DNS_LABEL_PATTERN, "maxLength": 63},
            "additionalProperties": r("job"),
        }),
        (P::Root, "services") => json!({
            "type": ["object", "null"],
            "propertyNames": {"pattern": DNS_LABEL_PATTERN, "maxLength": 63},
            "additionalProperties": r("service"),
        }),
        (P::Root, "volumes") => json!({
            "type": ["object", "null"],
            "propertyNames": {"pattern": PATH_NAME_PATTERN, "maxLength": crate::values::MAX_PATH_NAME},
            "additionalProperties": r("volume"),
        }),
        (P::Root, "files") | (P::Root, "annotations") => map_of(scalar()),
        (P::Root, "defaults") => r("defaults"),
        (P::Defaults, "job") => r("defaults-job"),
        (P::DefaultsJob | P::Job | P::Service, "env") => list_of(string_pattern(ENV_PATTERN)),
        (P::DefaultsJob | P::Job | P::Service, "mounts") => match version {
            Version::V1 => json!({
                "type": ["object", "null"],
                "propertyNames": {"pattern": "^[^/]"},
                "additionalProperties": r("mount-v1"),
            }),
            Version::V4 => json!({
                "type": ["object", "null"],
                "propertyNames": {"pattern": abs_path_pattern()},
                "additionalProperties": {"anyOf": [scalar(), r("mount-v4")]},
            }),
        },
        (P::DefaultsJob | P::Job | P::Service, "policy") => r("policy"),
        (P::DefaultsJob | P::Job | P::Service, "resource") => r("resource"),
        (P::Job | P::Service, "image") => r("image"),
        (P::Job | P::Service, "command" | "args") => argv(),
        (P::Job | P::Service, "script") => scalar(),
        (P::Job | P::Service, "cwd") => abs(),
        (P::Job | P::Service, "files") => json!({
            "type": ["object", "null"],
            "propertyNames": {"pattern": abs_path_pattern()},
            "additionalProperties": scalar(),
        }),
        (P::Job | P::Service, "requires") => list_of(scalar()),
        (P::Job | P::Service, "depends-on") => list_of(r("dependency")),
        (P::Job | P::Service, "multinode") => r("multinode"),
        (P::Job | P::Service, "name") => json!({"type": ["string", "number", "boolean", "null"]}),
        (P::Job, "task-array") => r("task-array"),
        (P::Job, "network") => r("job-network"),
        (P::Service, "network") => r("service-network"),
        (P::Service, "readiness-probe") => r("readiness-probe"),
        (P::Image, "uri") => string_pattern(IMAGE_URI_PATTERN),
        (P::Image | P::TransferUri, "secret") | (P::Image, "decryption-secret") => secret(),
        (P::Resource, "cpu") => r("cpu"),
        (P::Resource, "memory") => r("memory"),
        (P::Resource, "devices") => map_of(uint(0)),
        (P::Resource | P::Volume, "annotations") => map_of(scalar()),
        (P::Cpu, "cores" | "sockets") => uint(1),
        (P::Memory, "size") | (P::Volume, "size") => json!({
            "anyOf": [
                {"type": "string", "pattern": SIZE_PATTERN},
                {"type": "number", "minimum": 0}
            ]
        }),
        (P::Multinode, "nodes" | "procs-per-node") => uint(1),
        (P::TaskArray, "start" | "end") => json!({"type": "integer"}),
        (P::TaskArray, "concurrency") => json!({"type": "integer", "minimum": 1, "maximum": 200}),
        (P::Policy, "timeout") => r("timeout"),
        (P::Policy, "retry") => r("retry"),
        (P::Timeout, "execute") => json!({
            "anyOf": [
                {"type": "string", "pattern": DURATION_PATTERN},
                {"const": 0}
            ]
        }),
        (P::JobNetwork, "expose-tcp" | "expose-udp") => list_of(port()),
        (P::ServiceNetwork, "ports") => list_of(r("port")),
        (P::ServiceNetwork, "endpoints") => list_of(r("endpoint")),
        (P::Port, "port") => port(),
        (P::Probe, "exec") => r("probe-exec"),
        (P::Probe, "http-get") => r("probe-http-get"),
        (P::Probe, "tcp-socket") => r("probe-tcp-socket"),
        (P::Probe, "grpc") => r("probe-grpc"),
        (P::Probe, "success-threshold" | "failure-threshold") => uint(1),
        (P::Probe, _) => uint(0),
        (P::ProbeExec, "command") => argv(),
        (P::ProbeHttpGet | P::ProbeTcpSocket | P::ProbeGrpc, "port") => port(),
        (P::ProbeHttpGet, "http-headers") => list_of(r("http-header")),
        (P::Volume, "reference") => string_pattern(VOLUME_REF_PATTERN),
        (P::Volume, "path") => abs(),
        (P::Volume, "ingress" | "egress") => list_of(r("transfer")),
        (P::Transfer, "source" | "destination") => r("transfer-uri"),
        (P::Transfer, "policy") => r("policy"),
        (P::MountV1, "location") => abs(),
        _ => match allowed_values(place, key) {
            Some(_) if value_kind(place, key) == ValueKind::Bool => json!({"type": "boolean"}),
            Some(values) => {
                // Case-only mismatches are warnings except for the version.
                let exact = matches!((place, key), (P::Root, "version"));
                enumeration(values, !exact)
            }
            None => match value_kind(place, key) {
                ValueKind::String => scalar(),
                ValueKind::Int => uint(0),
                ValueKind::Bool => json!({"type": "boolean"}),
                ValueKind::List => json!({"type": ["array", "null"]}),
                ValueKind::Map => json!({"type": ["object", "null"]}),
                ValueKind::Any => json!({}),
            },
        },
    }
}

/// The schema of a mapping whose keys are fixed: one property per key valid in `version`
/// (removed keys are left out, so they are rejected like unknown ones), nothing else.
fn place_schema(place: Place, version: Version, r: &dyn Fn(&str) -> Value) -> Value {
    let mut props = Map::new();
    for spec in place.keys() {
        let allowed = match spec.versions {
            Versions::Both => true,
            Versions::V1Only => version == Version::V1,
            Versions::V4Only => version == Version::V4,
        };
        if !allowed {
            continue;
        }
        let mut s = key_schema(place, spec.name, version, r);
        match spec.status {
            Status::Removed(_) => continue,
            Status::Deprecated(why) => {
                if let Value::Object(m) = &mut s {
                    m.insert("deprecationMessage".into(), json!(why));
                }
                s = with_doc(s, &format!("{} Deprecated: {why}.", spec.doc));
            }
            Status::Current => s = with_doc(s, spec.doc),
        }
        props.insert(spec.name.into(), s);
    }
    let mut m = Map::new();
    m.insert(
        "description".into(),
        json!(format!("Keys {}.", place.describe())),
    );
    // The top level and every task body must be mappings; elsewhere a null value (`key:` with
    // nothing after it) is an empty mapping.
    let kind = if matches!(place, Place::Root | Place::Job | Place::Service) {
        json!("object")
    } else {
        json!(["object", "null"])
    };
    m.insert("type".into(), kind);
    if place == Place::Root {
        m.insert("required".into(), json!(["version"]));
    }
    if place == Place::Probe {
        // A readiness probe has exactly one action; a second one is an error.
        let actions = ["exec", "http-get", "tcp-socket", "grpc"];
        let mut pairs = Vec::new();
        for (i, a) in actions.iter().enumerate() {
            for b in &actions[i + 1..] {
                pairs.push(json!({"required": [a, b]}));
            }
        }
        m.insert("not".into(), json!({"anyOf": pairs}));
    }
    m.insert("properties".into(), Value::Object(props));
    // The builder reports every key its table does not have at this place (`unknown-key`);
    // YAML merge keys are applied before, so `<<` never reaches a validator as a key.
    m.insert("additionalProperties".into(), json!(false));
    Value::Object(m)
}

/// Why a YAML document could not be turned into JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToJsonError {
    /// The document is empty.
    Empty,
    /// A mapping key is a list or a mapping.
    ComplexKey,
    /// Aliases nest deeper than the limit.
    TooDeep,
}

impl std::fmt::Display for ToJsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ToJsonError::Empty => "the document is empty",
            ToJsonError::ComplexKey => "a mapping key is a list or a mapping",
            ToJsonError::TooDeep => "the document nests deeper than 256 levels",
        })
    }
}

impl std::error::Error for ToJsonError {}

/// The JSON value of a parsed YAML document as a YAML-aware validator sees it: core-schema
/// scalars (`yaml.v3`'s reading, through `Tree::core_value`), aliases resolved, merge keys
/// applied (`Tree::merged_entries`).
pub fn yaml_to_json(tree: &Tree) -> Result<Value, ToJsonError> {
    let root = tree.root().ok_or(ToJsonError::Empty)?;
    node_to_json(tree, root, 0)
}

fn node_to_json(tree: &Tree, id: NodeId, depth: usize) -> Result<Value, ToJsonError> {
    if depth > 256 {
        return Err(ToJsonError::TooDeep);
    }
    let id = tree.resolve(id);
    Ok(match &tree.node(id).kind {
        NodeKind::Mapping { .. } => {
            let mut m = Map::new();
            for e in tree.merged_entries(id).unwrap_or_default().iter() {
                let k = tree.resolve(e.key);
                let key = match tree.scalar(k) {
                    Some(s) => s.value.to_owned(),
                    None => return Err(ToJsonError::ComplexKey),
                };
                m.insert(key, node_to_json(tree, e.value, depth + 1)?);
            }
            // A merge value the decoder refuses (an alias of a list, a scalar) makes the file
            // invalid: it stays as a `<<` key, which no place of the schema accepts.
            for e in tree.entries(id).unwrap_or_default() {
                if tree.is_merge_key(e.key) && tree.merge_problem(e.value).is_some() {
                    m.insert("<<".into(), node_to_json(tree, e.value, depth + 1)?);
                }
            }
            Value::Object(m)
        }
        NodeKind::Sequence { items, .. } => Value::Array(
            items
                .iter()
                .map(|i| node_to_json(tree, *i, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        _ => match tree.core_value(id) {
            Some(CoreValue::Null) | None => Value::Null,
            Some(CoreValue::Bool(b)) => Value::Bool(b),
            Some(CoreValue::Int(i)) => json!(i),
            Some(CoreValue::Float(f)) => serde_json::Number::from_f64(f)
                .map_or_else(|| json!(tree.text(id).unwrap_or("")), Value::Number),
            Some(CoreValue::Str(s)) => json!(s),
        },
    })
}
