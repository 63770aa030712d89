//! `exclude` and `extend-exclude` of fuzzlint.toml during discovery: a directory walk skips
//! what the config applying to each entry excludes (the config found upward from the entry, or
//! `--config`); a file named on the command line is checked anyway, unless `--force-exclude`
//! (as ruff's).

use fuzzfile_check::settings::{Overrides, Resolver};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Whether a path (a directory when the flag is set) is excluded; shared with the walker's
/// threads.
pub type Excluder = Arc<dyn Fn(&Path, bool) -> bool + Send + Sync>;

/// The excluder of `fuzzlint check` with `--config` (if any): configs are read once each.
pub fn excluder(config: Option<PathBuf>) -> Result<Excluder, String> {
    let resolver = Resolver::new(Overrides {
        config,
        ..Default::default()
    })?;
    let resolver = Mutex::new(resolver);
    Ok(Arc::new(move |path: &Path, is_dir: bool| {
        resolver
            .lock()
            .map(|mut r| r.excluded(path, is_dir))
            .unwrap_or(false)
    }))
}
