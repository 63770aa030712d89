//! Per-file settings: the `fuzzlint.toml` that applies to a file (found upward from the file's
//! directory, or given with `--config`), its cluster profile, and the overrides (command-line
//! flags, editor settings) on top of both. Parsing is [`crate::config`] and
//! [`crate::profile`]; this module only finds and reads files.
//!
//! This is the one module of the crate that touches the file system. The analysis never calls
//! it: the front ends (`fuzzlint`, the language server) resolve a file's [`Options`] here and
//! pass them to [`crate::analyze_with`].

use crate::config::{ClusterSource, FailOn, RuleSelection, RuleSettings, Selector};
use crate::config_chain::{Excludes, PerFileIgnores};
use crate::profile::{parse_profile, ClusterProfile};
use crate::Options;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub const CONFIG_FILE: &str = "fuzzlint.toml";

/// What the command line (or the editor) says, overriding every config file.
#[derive(Default)]
pub struct Overrides {
    pub config: Option<PathBuf>,
    pub cluster: Option<PathBuf>,
    pub select: Option<Vec<Selector>>,
    pub ignore: Vec<Selector>,
    pub fail_on: Option<FailOn>,
}

/// Where a file's cluster profile came from, as shown by `--show-settings`.
#[derive(Clone, Debug)]
pub enum ClusterOrigin {
    None,
    /// A profile file, and what named it (`--cluster` or a config file).
    File {
        path: String,
        from: String,
    },
    /// An inline `[cluster]` table of a config file.
    Inline {
        config: String,
    },
}

/// Everything that applies to one checked file.
pub struct FileSettings {
    /// The config file used, as displayed.
    pub config: Option<String>,
    pub cluster: ClusterOrigin,
    pub options: Options,
    pub fail_on: FailOn,
    /// Whether a YAML file named on the command line that does not look like a Fuzzfile is
    /// skipped (`skip-non-fuzzfiles`, default true; `fuzzlint check --no-skip` overrides it).
    pub skip_non_fuzzfiles: bool,
    /// Remarks about the config file, each `path:line:column: note: ...` (a rule named by
    /// its former name).
    pub notes: Vec<String>,
    /// The configs the config extends, root first, as shown (`extend`).
    pub extends: Vec<String>,
    /// What directory walks skip below this config (`exclude`, `extend-exclude`).
    pub excludes: Arc<Excludes>,
    /// `per-file-ignores` of the config.
    pub per_file_ignores: Arc<PerFileIgnores>,
    /// The `per-file-ignores` globs (as shown) that matched this file.
    pub ignored_here: Vec<String>,
}

/// Finds, reads and caches config files and profiles.
pub struct Resolver {
    overrides: Overrides,
    cwd: Option<PathBuf>,
    /// `--cluster`, read once.
    cli_profile: Option<(ClusterProfile, String)>,
    /// Directory → the config file that applies to it.
    found: HashMap<PathBuf, Option<PathBuf>>,
    /// Config file (or none) → its settings.
    loaded: HashMap<Option<PathBuf>, Arc<FileSettings>>,
    /// A config's settings for the files some of its `per-file-ignores` match, by config and
    /// the indices of the matching entries.
    per_file: HashMap<(Option<PathBuf>, Vec<usize>), Arc<FileSettings>>,
}

impl Resolver {
    /// Read `--cluster` now, so that a bad profile fails before any file is checked. Paths
    /// are shown relative to the working directory.
    pub fn new(overrides: Overrides) -> Result<Resolver, String> {
        let cwd = std::env::current_dir().ok();
        Resolver::with_base(overrides, cwd.as_deref())
    }

    /// As [`Resolver::new`], showing paths relative to `base` (a workspace folder) when below it.
    pub fn with_base(overrides: Overrides, base: Option<&Path>) -> Result<Resolver, String> {
        let cwd = base.and_then(|d| std::fs::canonicalize(d).ok());
        let mut r = Resolver {
            overrides,
            cwd,
            cli_profile: None,
            found: HashMap::new(),
            loaded: HashMap::new(),
            per_file: HashMap::new(),
        };
        if let Some(path) = r.overrides.cluster.clone() {
            let shown = display(&path);
            let text = fuzzfile_io::read_to_string(&path, fuzzfile_io::Kind::PROFILE)
                .map_err(|e| format!("--cluster {shown}: {}", e.reason()))?;
            let profile = parse_profile(&text).map_err(|e| format!("{shown}:{e}"))?;
            r.cli_profile = Some((profile, shown));
        }
        if let Some(path) = r.overrides.config.clone() {
            if !path.is_file() {
                let shown = display(&path);
                return Err(match std::fs::metadata(&path) {
                    Ok(_) => format!("--config {shown}: not a file"),
                    Err(e) => format!("--config {shown}: {}", describe_io(&e)),
                });
            }
        }
        Ok(r)
    }

    /// The settings of the file at `path`.
    pub fn for_file(&mut self, path: &Path) -> Result<Arc<FileSettings>, String> {
        let config = match &self.overrides.config {
            Some(c) => Some(c.clone()),
            None => self.find_config(path),
        };
        let settings = match self.loaded.get(&config) {
            Some(s) => Arc::clone(s),
            None => {
                let s = Arc::new(self.load(config.as_deref())?);
                self.loaded.insert(config.clone(), Arc::clone(&s));
                s
            }
        };
        // `per-file-ignores`: the rules of every matching glob are off for this file, after
        // every selection (as ruff's).
        let matching = settings.per_file_ignores.matching(path);
        if matching.is_empty() {
            return Ok(settings);
        }
        let key = (
            config,
            matching.iter().map(|(i, _, _)| *i).collect::<Vec<_>>(),
        );
        if let Some(s) = self.per_file.get(&key) {
            return Ok(Arc::clone(s));
        }
        let mut options = settings.options.clone();
        for rule in fuzzfile_diagnostics::Rule::ALL {
            if matching
                .iter()
                .any(|(_, _, sels)| sels.iter().any(|s| s.matches(*rule)))
            {
                options.rules.disabled.insert(*rule);
            }
        }
        let specific = Arc::new(FileSettings {
            config: settings.config.clone(),
            cluster: settings.cluster.clone(),
            options,
            fail_on: settings.fail_on,
            skip_non_fuzzfiles: settings.skip_non_fuzzfiles,
            notes: settings.notes.clone(),
            extends: settings.extends.clone(),
            excludes: Arc::clone(&settings.excludes),
            per_file_ignores: Arc::clone(&settings.per_file_ignores),
            ignored_here: matching.iter().map(|(_, g, _)| (*g).to_owned()).collect(),
        });
        self.per_file.insert(key, Arc::clone(&specific));
        Ok(specific)
    }

    /// Whether a directory walk skips `path` (a file or, `is_dir`, a directory): the
    /// excludes of the config that applies to it. A config that cannot be read excludes
    /// nothing here (the files below it report the error).
    pub fn excluded(&mut self, path: &Path, is_dir: bool) -> bool {
        match self.for_file(path) {
            Ok(s) => s.excludes.excludes(path, is_dir),
            Err(_) => false,
        }
    }

    /// The first `fuzzlint.toml` in the file's directory or above it.
    fn find_config(&mut self, file: &Path) -> Option<PathBuf> {
        let parent = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = std::fs::canonicalize(&parent).unwrap_or(parent);
        let mut visited = Vec::new();
        let mut found = None;
        for d in dir.ancestors() {
            if let Some(hit) = self.found.get(d) {
                found = hit.clone();
                break;
            }
            visited.push(d.to_path_buf());
            let candidate = d.join(CONFIG_FILE);
            if candidate.is_file() {
                found = Some(candidate);
                break;
            }
        }
        for d in visited {
            self.found.insert(d, found.clone());
        }
        found
    }

    /// The path as shown: relative to the working directory when below it.
    fn shown(&self, p: &Path) -> String {
        if let Some(cwd) = &self.cwd {
            if let Ok(rel) = p.strip_prefix(cwd) {
                return display(rel);
            }
        }
        display(p)
    }

    fn load(&self, config_path: Option<&Path>) -> Result<FileSettings, String> {
        // The config and those it extends, root first (config_chain).
        let links = match config_path {
            None => Vec::new(),
            Some(p) => crate::config_chain::load(p, &|q: &Path| self.shown(&normalize(q)))?,
        };
        let shown = links.last().map(|l| l.shown.clone());
        // The child-most config that sets a value wins.
        let last =
            |f: &dyn Fn(&crate::config::Config) -> bool| links.iter().rev().find(|l| f(&l.config));
        let cluster_link = last(&|c| c.cluster.is_some());
        let cluster_source = cluster_link.and_then(|l| l.config.cluster.as_ref());
        let (profile, cluster) = match (&self.cli_profile, cluster_source) {
            (Some((profile, path)), _) => (
                Some(profile.clone()),
                ClusterOrigin::File {
                    path: path.clone(),
                    from: "--cluster".into(),
                },
            ),
            (None, None) => (None, ClusterOrigin::None),
            (None, Some(ClusterSource::Inline(p))) => (
                Some(p.clone()),
                ClusterOrigin::Inline {
                    config: cluster_link.map(|l| l.shown.clone()).unwrap_or_default(),
                },
            ),
            (None, Some(ClusterSource::Path { path, line, column })) => {
                let config_shown = cluster_link.map(|l| l.shown.clone()).unwrap_or_default();
                let base = cluster_link.map_or(Path::new("."), |l| l.dir.as_path());
                let full = base.join(path);
                let full_shown = self.shown(&normalize(&full));
                let text = fuzzfile_io::read_to_string(&full, fuzzfile_io::Kind::PROFILE).map_err(|e| {
                    format!(
                        "{config_shown}:{line}:{column}: cannot read the cluster profile {full_shown}: {}",
                        e.reason()
                    )
                })?;
                let profile = parse_profile(&text).map_err(|e| format!("{full_shown}:{e}"))?;
                (
                    Some(profile),
                    ClusterOrigin::File {
                        path: full_shown,
                        from: config_shown,
                    },
                )
            }
        };
        let mut layers: Vec<RuleSelection> = links.iter().map(|l| l.config.selection()).collect();
        if self.overrides.select.is_some() || !self.overrides.ignore.is_empty() {
            layers.push(RuleSelection {
                select: self.overrides.select.clone(),
                ignore: self.overrides.ignore.clone(),
                ..Default::default()
            });
        }
        // `[severity]` entries merge rule by rule, the child's winning.
        let mut severities = std::collections::BTreeMap::new();
        for l in &links {
            severities.extend(l.config.severities());
        }
        let notes = links
            .iter()
            .flat_map(|l| {
                l.config
                    .notes
                    .iter()
                    .map(move |n| format!("{}:{n}", l.shown))
            })
            .collect();
        let fail_on = last(&|c| c.fail_on.is_some()).and_then(|l| l.config.fail_on);
        let skip =
            last(&|c| c.skip_non_fuzzfiles.is_some()).and_then(|l| l.config.skip_non_fuzzfiles);
        Ok(FileSettings {
            notes,
            extends: links
                .iter()
                .take(links.len().saturating_sub(1))
                .map(|l| l.shown.clone())
                .collect(),
            excludes: Arc::new(Excludes::of(&links)),
            per_file_ignores: Arc::new(PerFileIgnores::of(&links)),
            ignored_here: Vec::new(),
            config: shown,
            cluster,
            options: Options {
                profile,
                rules: RuleSettings::resolve(&layers, severities),
                evaluations: None,
                task_findings: None,
            },
            fail_on: self.overrides.fail_on.or(fail_on).unwrap_or_default(),
            skip_non_fuzzfiles: skip.unwrap_or(true),
        })
    }
}

/// `a/../b/./c` → `b/c`, without touching the file system (for display only).
fn normalize(p: &Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let last_is_normal =
                    matches!(out.components().next_back(), Some(Component::Normal(_)));
                if last_is_normal {
                    out.pop();
                } else if !matches!(out.components().next_back(), Some(Component::RootDir)) {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

pub fn describe_io(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::NotFound => "no such file or directory".into(),
        io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// The path as the user would type it (without a leading `./`).
pub fn display(p: &Path) -> String {
    let s = p.display().to_string();
    s.strip_prefix("./").map(str::to_owned).unwrap_or(s)
}
