//! A config file and the configs it `extend`s, read root first, and what is merged from them:
//! the excludes of directory walks and the per-file ignores (gitignore-style globs, each
//! relative to the directory of the config that writes it). How the settings merge is said in
//! [`crate::config`]; [`crate::settings`] turns a chain into a file's settings.

use crate::config::{parse_config, Config, Selector, DEFAULT_EXCLUDE};
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use std::path::{Path, PathBuf};

/// The most configs one chain of `extend`s may hold.
pub const MAX_CHAIN: usize = 32;

/// One config of a chain.
pub struct Link {
    /// The directory its paths and globs are relative to.
    pub dir: PathBuf,
    /// The file, as shown.
    pub shown: String,
    pub config: Config,
}

/// Read `path` and every config it extends, root first. `shown` turns a path into what
/// messages show. A missing parent or a cycle is an error at the `extend` that names it.
pub fn load(path: &Path, shown: &dyn Fn(&Path) -> String) -> Result<Vec<Link>, String> {
    let mut links: Vec<Link> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut current = path.to_path_buf();
    // The `extend` that named `current`: the config, line and column.
    let mut named_by: Option<(String, u32, u32)> = None;
    loop {
        let current_shown = shown(&current);
        let canonical = std::fs::canonicalize(&current).unwrap_or_else(|_| current.clone());
        if let Some((by, line, column)) = &named_by {
            if let Some(i) = seen.iter().position(|c| *c == canonical) {
                let mut chain: Vec<&str> = links[i..].iter().map(|l| l.shown.as_str()).collect();
                chain.push(&current_shown);
                return Err(format!(
                    "{by}:{line}:{column}: `extend` makes a cycle: {}",
                    chain.join(" → ")
                ));
            }
            if links.len() >= MAX_CHAIN {
                return Err(format!(
                    "{by}:{line}:{column}: `extend` chains more than {MAX_CHAIN} configs"
                ));
            }
        }
        let text =
            fuzzfile_io::read_to_string(&current, fuzzfile_io::Kind::CONFIG).map_err(|e| {
                match &named_by {
                    None => format!("{current_shown}: cannot read: {}", e.reason()),
                    Some((by, line, column)) => format!(
                        "{by}:{line}:{column}: `extend`: cannot read {current_shown}: {}",
                        e.reason()
                    ),
                }
            })?;
        let config = parse_config(&text).map_err(|e| format!("{current_shown}:{e}"))?;
        let dir = match current.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let next = config.extend.clone();
        seen.push(canonical);
        links.push(Link {
            dir: dir.clone(),
            shown: current_shown.clone(),
            config,
        });
        match next {
            None => break,
            Some(ext) => {
                named_by = Some((current_shown, ext.line, ext.column));
                current = dir.join(&ext.path);
            }
        }
    }
    links.reverse();
    Ok(links)
}

/// The absolute form of `p` with its directory's links resolved (the matchers' roots are
/// canonical): `p` itself when it cannot be resolved.
pub fn absolute(p: &Path) -> PathBuf {
    if let Ok(c) = std::fs::canonicalize(p) {
        return c;
    }
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (std::fs::canonicalize(parent), p.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => p.to_path_buf(),
    }
}

/// Gitignore-style globs relative to one directory.
#[derive(Clone, Debug)]
struct Globs {
    root: PathBuf,
    matcher: Gitignore,
}

impl Globs {
    fn new(dir: &Path, globs: &[String]) -> Globs {
        let root = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
        let mut b = GitignoreBuilder::new(&root);
        for g in globs {
            // Each glob was checked when the config was parsed.
            let _ = b.add_line(None, g);
        }
        let matcher = b.build().unwrap_or_else(|_| Gitignore::empty());
        Globs { root, matcher }
    }

    /// Whether `abs` (absolute, resolved) or a directory above it matches.
    fn matches(&self, abs: &Path, is_dir: bool) -> bool {
        abs.starts_with(&self.root)
            && abs != self.root
            && self
                .matcher
                .matched_path_or_any_parents(abs, is_dir)
                .is_ignore()
    }
}

/// What directory walks skip: `exclude` (or [`DEFAULT_EXCLUDE`]) and every `extend-exclude`.
#[derive(Clone, Debug, Default)]
pub struct Excludes {
    globs: Vec<Globs>,
    /// The globs as written, with the config that wrote them, for `--show-settings`.
    pub written: Vec<String>,
}

impl Excludes {
    /// The excludes of a chain (root first); the defaults when there is none.
    pub fn of(links: &[Link]) -> Excludes {
        let mut out = Excludes::default();
        let own = links
            .iter()
            .rev()
            .find_map(|l| l.config.exclude.as_ref().map(|e| (l, e)));
        match own {
            Some((link, list)) => {
                out.globs.push(Globs::new(&link.dir, list));
                out.written
                    .extend(list.iter().map(|g| format!("{g} ({})", link.shown)));
            }
            None => {
                let defaults: Vec<String> = DEFAULT_EXCLUDE.iter().map(|s| s.to_string()).collect();
                out.globs.push(Globs::new(Path::new("/"), &defaults));
                out.written
                    .extend(defaults.iter().map(|g| format!("{g} (default)")));
            }
        }
        for link in links {
            if !link.config.extend_exclude.is_empty() {
                out.globs
                    .push(Globs::new(&link.dir, &link.config.extend_exclude));
                out.written.extend(
                    link.config
                        .extend_exclude
                        .iter()
                        .map(|g| format!("{g} ({})", link.shown)),
                );
            }
        }
        out
    }

    /// Whether the file or directory `path` is excluded.
    pub fn excludes(&self, path: &Path, is_dir: bool) -> bool {
        let abs = absolute(path);
        self.globs.iter().any(|g| g.matches(&abs, is_dir))
    }
}

/// `per-file-ignores` of a chain: each glob, relative to its config, and the rules it turns off.
#[derive(Clone, Debug, Default)]
pub struct PerFileIgnores {
    entries: Vec<(Globs, String, Vec<Selector>)>,
}

impl PerFileIgnores {
    /// Merged glob by glob: a child's list for a glob its parent lists too replaces it.
    pub fn of(links: &[Link]) -> PerFileIgnores {
        let mut merged: Vec<(&Link, &String, &Vec<Selector>)> = Vec::new();
        for link in links {
            for (glob, rules) in &link.config.per_file_ignores {
                merged.retain(|(_, g, _)| *g != glob);
                merged.push((link, glob, rules));
            }
        }
        PerFileIgnores {
            entries: merged
                .into_iter()
                .map(|(link, glob, rules)| {
                    (
                        Globs::new(&link.dir, std::slice::from_ref(glob)),
                        format!("{glob} ({})", link.shown),
                        rules.clone(),
                    )
                })
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries that match the file `path`: their indices, the globs as shown and their
    /// rules.
    pub fn matching(&self, path: &Path) -> Vec<(usize, &str, &[Selector])> {
        if self.entries.is_empty() {
            return Vec::new();
        }
        let abs = absolute(path);
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, (g, _, _))| g.matches(&abs, false))
            .map(|(i, (_, shown, rules))| (i, shown.as_str(), rules.as_slice()))
            .collect()
    }
}
