//! What the analysis of each document is run with: the `fuzzlint.toml` found upward from the
//! document (as the CLI finds it, through [`fuzzfile_check::settings::Resolver`]), its cluster
//! profile, and the editor's settings on top, from `initializationOptions` and
//! `workspace/didChangeConfiguration`.
//!
//! Editor settings (all optional), either at the top level or under a `fuzzlint` key:
//! `config` (a `fuzzlint.toml` for every file, like `--config`), `cluster` (a cluster profile,
//! like `--cluster`), `select` and `ignore` (lists of rule names, codes or code prefixes),
//! `debounceMs` (quiet time before diagnostics are published; default 0), `pushDiagnostics`
//! (publish diagnostics even when the client pulls them), `inlayHints` (default true).
//! Relative paths are relative to the first workspace folder.

use fuzzfile_check::config::Selector;
use fuzzfile_check::settings::{Overrides, Resolver};
use fuzzfile_check::Options;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The settings the server reads (see the module documentation). Editor extensions declare
/// these (editors/vscode/extension.js lists them; a test keeps the two equal).
pub const SETTINGS: &[&str] = &[
    "config",
    "cluster",
    "select",
    "ignore",
    "debounceMs",
    "pushDiagnostics",
    "inlayHints",
];

/// Keys of a `fuzzlint` settings section that belong to the editor's client, not the server
/// (the executable's path, message tracing): accepted without a warning, not used.
const CLIENT_ONLY: &[&str] = &["path", "trace"];

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClientSettings {
    pub config: Option<String>,
    pub cluster: Option<String>,
    pub select: Option<Vec<String>>,
    pub ignore: Vec<String>,
    pub debounce_ms: Option<u64>,
    pub push_diagnostics: Option<bool>,
    pub inlay_hints: Option<bool>,
}

impl ClientSettings {
    /// Read the settings object; unknown keys and values of the wrong type are ignored (and
    /// named in the returned warnings), so a typo never stops the server.
    pub fn from_json(v: &Value) -> (ClientSettings, Vec<String>) {
        let mut warnings = Vec::new();
        let obj = match v.get("fuzzlint") {
            Some(inner) if inner.is_object() => inner,
            _ => v,
        };
        let mut s = ClientSettings::default();
        let Some(map) = obj.as_object() else {
            return (s, warnings);
        };
        let string_list = |v: &Value| -> Option<Vec<String>> {
            match v {
                Value::String(s) => Some(
                    s.split(',')
                        .map(str::trim)
                        .filter(|p| !p.is_empty())
                        .map(str::to_owned)
                        .collect(),
                ),
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_owned))
                    .collect(),
                _ => None,
            }
        };
        for (k, v) in map {
            let ok = match k.as_str() {
                "config" => {
                    v.as_str().map(|x| s.config = Some(x.to_owned())).is_some() || v.is_null()
                }
                "cluster" => {
                    v.as_str().map(|x| s.cluster = Some(x.to_owned())).is_some() || v.is_null()
                }
                "select" => string_list(v).map(|x| s.select = Some(x)).is_some() || v.is_null(),
                "ignore" => string_list(v).map(|x| s.ignore = x).is_some() || v.is_null(),
                "debounceMs" => v
                    .as_u64()
                    .map(|x| s.debounce_ms = Some(x.min(5_000)))
                    .is_some(),
                "pushDiagnostics" => v.as_bool().map(|x| s.push_diagnostics = Some(x)).is_some(),
                "inlayHints" => v.as_bool().map(|x| s.inlay_hints = Some(x)).is_some(),
                other if CLIENT_ONLY.contains(&other) => true,
                _ => {
                    warnings.push(format!("unknown setting `{k}`"));
                    true
                }
            };
            if !ok {
                warnings.push(format!("setting `{k}` has a value of the wrong type: {v}"));
            }
        }
        (s, warnings)
    }

    pub fn debounce(&self) -> Duration {
        self.debounce_ms
            .map_or(crate::DEFAULT_DEBOUNCE, Duration::from_millis)
    }
}

/// The editor settings and the config files they lead to.
pub struct Settings {
    pub client: ClientSettings,
    /// The first workspace folder: base of relative paths and of displayed paths.
    pub root: Option<PathBuf>,
    resolver: Option<Resolver>,
    /// Bumped whenever anything that changes an analysis changes; analyses carry it.
    pub generation: u64,
}

impl Settings {
    pub fn new(root: Option<PathBuf>) -> Settings {
        Settings {
            client: ClientSettings::default(),
            root,
            resolver: None,
            generation: 0,
        }
    }

    /// Replace the editor settings; config files are read again on next use.
    pub fn set_client(&mut self, client: ClientSettings) {
        self.client = client;
        self.invalidate();
    }

    /// Forget every config file read (one changed on disk).
    pub fn invalidate(&mut self) {
        self.resolver = None;
        self.generation = self.generation.wrapping_add(1);
    }

    fn absolute(&self, p: &str) -> PathBuf {
        let p = Path::new(p);
        match &self.root {
            Some(r) if p.is_relative() => r.join(p),
            _ => p.to_path_buf(),
        }
    }

    fn build_resolver(&self) -> Result<Resolver, String> {
        let selectors = |name: &str, list: &[String]| -> Result<Vec<Selector>, String> {
            list.iter()
                .map(|s| Selector::parse(s).map_err(|e| format!("setting `{name}`: {e}")))
                .collect()
        };
        let overrides = Overrides {
            config: self.client.config.as_deref().map(|p| self.absolute(p)),
            cluster: self.client.cluster.as_deref().map(|p| self.absolute(p)),
            select: match &self.client.select {
                Some(l) => Some(selectors("select", l)?),
                None => None,
            },
            ignore: selectors("ignore", &self.client.ignore)?,
            fail_on: None,
        };
        Resolver::with_base(overrides, self.root.as_deref())
    }

    /// The analysis options of a document at `path` (an unsaved document is treated as a file
    /// in the workspace folder). On a bad config or profile, the default options and the
    /// error, which the server shows to the user.
    pub fn options_for(&mut self, path: Option<&Path>) -> (Options, Option<String>) {
        if self.resolver.is_none() {
            match self.build_resolver() {
                Ok(r) => self.resolver = Some(r),
                Err(e) => return (Options::default(), Some(e)),
            }
        }
        let Some(resolver) = self.resolver.as_mut() else {
            return (Options::default(), None);
        };
        let fallback;
        let path = match path {
            Some(p) => p,
            None => {
                fallback = self
                    .root
                    .clone()
                    .unwrap_or_else(|| PathBuf::from("."))
                    .join("untitled.fz");
                &fallback
            }
        };
        match resolver.for_file(path) {
            Ok(s) => (s.options.clone(), None),
            Err(e) => (Options::default(), Some(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn settings_read_namespaced_or_flat_and_report_bad_values() {
        let (s, w) = ClientSettings::from_json(&json!({"fuzzlint": {
            "cluster": "c.toml", "select": "FZ0, FZ2", "ignore": ["legacy-version"],
            "debounceMs": 20, "pushDiagnostics": true, "colour": 1, "inlayHints": "yes"
        }}));
        assert_eq!(s.cluster.as_deref(), Some("c.toml"));
        assert_eq!(s.select, Some(vec!["FZ0".into(), "FZ2".into()]));
        assert_eq!(s.ignore, vec!["legacy-version".to_owned()]);
        assert_eq!(s.debounce(), Duration::from_millis(20));
        assert_eq!(s.push_diagnostics, Some(true));
        assert_eq!(s.inlay_hints, None);
        assert_eq!(w.len(), 2, "{w:?}");
        let (flat, _) = ClientSettings::from_json(&json!({"config": "x/fuzzlint.toml"}));
        assert_eq!(flat.config.as_deref(), Some("x/fuzzlint.toml"));
        let (none, w) = ClientSettings::from_json(&json!(null));
        assert_eq!(none, ClientSettings::default());
        assert!(w.is_empty());
    }

    #[test]
    fn a_bad_selector_is_an_error_and_default_options() {
        let mut s = Settings::new(None);
        let (c, _) = ClientSettings::from_json(&json!({"select": ["no-such-rule"]}));
        s.set_client(c);
        let (o, err) = s.options_for(None);
        assert!(err.is_some_and(|e| e.contains("select")));
        assert!(o.profile.is_none());
    }

    /// editors/vscode declares exactly the settings the server reads, and the server reads each
    /// of them without a warning (the extension's own keys included).
    #[test]
    fn the_vscode_extension_declares_the_server_settings() {
        let js = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../editors/vscode/extension.js"),
        )
        .expect("editors/vscode/extension.js");
        let start = js.find("const SERVER_SETTINGS = [").expect("the list");
        let end = start + js[start..].find("];").expect("its end");
        let listed: Vec<&str> = js[start..end].split('"').skip(1).step_by(2).collect();
        assert_eq!(listed, SETTINGS);
        let all = serde_json::json!({"fuzzlint": {
            "config": "f.toml", "cluster": "c.toml", "select": ["FZ2"], "ignore": [],
            "debounceMs": 10, "pushDiagnostics": true, "inlayHints": false,
            "path": "/usr/bin/fuzzlint", "trace": {"server": "off"}
        }});
        let (s, warnings) = ClientSettings::from_json(&all);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(s.debounce_ms, Some(10));
        let (_, warnings) = ClientSettings::from_json(&serde_json::json!({"clustr": "x"}));
        assert_eq!(warnings, ["unknown setting `clustr`"]);
    }
}
