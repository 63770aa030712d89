//! The options a rule spec (`tests/specs/<rule>/*.fz`) is analysed with, shared by the test
//! crates that read the specs (`specs.rs`, `task_cache.rs`).

use fuzzfile_check::profile::parse_profile;
use fuzzfile_check::Options;
use std::path::Path;

/// The options of a spec file: `<stem>.profile.toml` next to it, else its directory's
/// `profile.toml`, if any. A profile that does not parse fails the test.
pub fn options_for(dir: &Path, stem: &str) -> Options {
    let own = dir.join(format!("{stem}.profile.toml"));
    let path = if own.is_file() {
        own
    } else {
        dir.join("profile.toml")
    };
    let profile = std::fs::read_to_string(&path)
        .ok()
        .map(|t| parse_profile(&t).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    Options {
        profile,
        ..Default::default()
    }
}
