//! The run's one note that the cluster checks are off.
//!
//! The analysis reports `cluster-profile-missing` (FZ309) in each file that has a GPU job and
//! no cluster profile (the language server shows it so). `fuzzlint check` takes those findings
//! out of every file and says it once: at the top of the human output, or on standard error
//! for the machine formats, whose standard output stays what their readers parse. A file
//! whose settings turn the rule off, or that suppresses it, has no finding and is not counted.

use crate::Checked;
use fuzzfile_check::rules::cluster_profile_missing::needs_profile_codes;
use fuzzfile_check::Rule;
use std::fmt;

/// The files (of this run) checked without a cluster profile while they have GPU jobs.
#[derive(Debug, PartialEq, Eq)]
pub struct ClusterNote {
    pub files: usize,
}

impl fmt::Display for ClusterNote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let files = if self.files == 1 {
            "1 file has GPU jobs".to_owned()
        } else {
            format!("{} files have GPU jobs", self.files)
        };
        write!(
            f,
            "note: the cluster checks are off: {files} and no cluster profile, so {} did not run\n  help: give the cluster's profile with `--cluster PATH` or `cluster = \"PATH\"` in fuzzlint.toml; `fuzzlint profile detect` on a node writes one",
            needs_profile_codes()
        )
    }
}

/// Take the `cluster-profile-missing` findings out of every file: the note that replaces them,
/// if any file had one.
pub fn take(checked: &mut [Checked]) -> Option<ClusterNote> {
    let files = checked.iter_mut().map(take_from).filter(|&had| had).count();
    note_for(files)
}

/// Take the `cluster-profile-missing` finding out of one file: whether it had one.
pub fn take_from(c: &mut Checked) -> bool {
    let diagnostics = c.diagnostics_mut();
    let before = diagnostics.len();
    diagnostics.retain(|d| d.rule != Rule::ClusterProfileMissing);
    diagnostics.len() != before
}

/// The note for `files` files that had the finding, if any.
pub fn note_for(files: usize) -> Option<ClusterNote> {
    (files > 0).then_some(ClusterNote { files })
}

/// Whether a file checked with `settings` can have the finding (so that the human output,
/// which prints the note first, must wait for every file before writing any): no cluster
/// profile, and the rule on.
pub fn possible_with(settings: &crate::settings::FileSettings) -> bool {
    settings.options.profile.is_none()
        && settings
            .options
            .rules
            .is_enabled(Rule::ClusterProfileMissing)
}
