//! Whether YAML text is a Fuzzfile, or some other YAML (a `.pre-commit-config.yaml`, a GitHub
//! workflow, a Kubernetes manifest, a docker-compose or CircleCI file) that a tool passing
//! every YAML file hands to `fuzzlint`.
//!
//! The rule, read from the top-level keys only (lines that start a key at column 0, so a text
//! with YAML errors further down is still recognised):
//!
//! 1. a top-level `version` key, and
//! 2. a top-level `jobs` or `services` key, and
//! 3. the version is written as a Fuzzfile version: `v` and a digit (`v1`, `v4`, also a wrong
//!    one such as `v2`, which the checker then reports), quoted or not, or empty (a file being
//!    written), or a template action (`{{ .Version }}`); or else the file has `jobs` and every
//!    top-level key is a Fuzzfile key (`version: 4` with `jobs:` is a Fuzzfile with a wrong
//!    version, reported by `unsupported-version`), unless a job has CircleCI's `steps:`.
//!
//! This keeps every Fuzzfile of the external corpus, of `examples/` and of the rule specs, and
//! leaves out docker-compose (`version: "3.8"` with `services:`), CircleCI (`version: 2.1` with
//! `jobs:` and `workflows:`, or 2.0's `version: 2` with `jobs:` alone and their `steps:`), GitHub workflows (`on:` and `jobs:`, no `version:`), Kubernetes
//! manifests (`apiVersion:`) and pre-commit configs (`repos:`). A file named `*.fz` is a
//! Fuzzfile whatever it holds; that is decided by the caller, from the name.

use fuzzfile_model::schema::Place;
use std::fmt;

/// Why a YAML text is not taken for a Fuzzfile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotFuzzfile {
    /// No top-level `version:`.
    NoVersion,
    /// No top-level `jobs:` or `services:`.
    NoJobsOrServices,
    /// A version that is not written as a Fuzzfile's (docker-compose's `"3.8"`).
    OtherVersion(String),
    /// A values file without the top-level `values:` list of a template's values file.
    NoValues,
    /// A version not written as a Fuzzfile's with jobs that have CircleCI's `steps:` (a
    /// CircleCI 2.0 config: `version: 2` and `jobs:` alone, no `workflows:`).
    CircleCiJobs(String),
}

impl fmt::Display for NotFuzzfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotFuzzfile::NoVersion => f.write_str("no top-level `version:`"),
            NotFuzzfile::NoJobsOrServices => f.write_str("no top-level `jobs:` or `services:`"),
            NotFuzzfile::OtherVersion(v) => write!(
                f,
                "`version: {v}` is not a Fuzzfile version (v1, v4), and its other top-level keys are not all Fuzzfile keys"
            ),
            NotFuzzfile::CircleCiJobs(v) => write!(
                f,
                "`version: {v}` is not a Fuzzfile version (v1, v4), and its jobs have `steps:`, as a CircleCI config's do"
            ),
            NotFuzzfile::NoValues => f.write_str(
                "a values file without the top-level `values:` list of a template's values file, and no template beside it reads it",
            ),
        }
    }
}

/// The top-level keys of a YAML text with the text after their colon (comment removed), in
/// order, first occurrence of each. A line counts when it starts, at column 0, a plain or
/// quoted key followed by `:` and a space or the end of the line.
fn top_level_keys(text: &str) -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = Vec::new();
    for (i, line) in fuzzfile_diagnostics::lines(text).enumerate() {
        let line = if i == 0 {
            line.trim_start_matches('\u{feff}')
        } else {
            line
        };
        let Some((key, value)) = split_key(line) else {
            continue;
        };
        if !keys.iter().any(|(k, _)| *k == key) {
            keys.push((key, value));
        }
    }
    keys
}

/// `key: value # comment` at column 0 → (`key`, `value`).
fn split_key(line: &str) -> Option<(String, String)> {
    let first = line.chars().next()?;
    let (key, rest) = match first {
        '"' | '\'' => {
            let end = line[1..].find(first)? + 1;
            (line[1..end].to_owned(), &line[end + 1..])
        }
        // Indented lines, comments, sequences, directives, flow collections, anchors, tags,
        // block scalars, explicit keys and document markers are not plain top-level keys.
        c if c.is_whitespace()
            || matches!(
                c,
                '#' | '-' | '%' | '{' | '[' | '&' | '*' | '!' | '|' | '>' | '?' | ':'
            ) =>
        {
            return None
        }
        _ => {
            let colon = colon_of_plain_key(line)?;
            (line[..colon].trim_end().to_owned(), &line[colon..])
        }
    };
    let rest = rest.trim_start_matches([' ', '\t']);
    let after = rest.strip_prefix(':')?;
    if !(after.is_empty() || after.starts_with([' ', '\t'])) {
        return None;
    }
    Some((key, strip_comment(after).trim().to_owned()))
}

/// The offset of the `:` that ends a plain key: the first `:` followed by a space, a tab or
/// the end of the line, before any ` #` comment.
fn colon_of_plain_key(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'#' && i > 0 && matches!(bytes[i - 1], b' ' | b'\t') {
            return None;
        }
        if b == b':' && matches!(bytes.get(i + 1), None | Some(b' ' | b'\t')) {
            return Some(i);
        }
    }
    None
}

/// The value without a trailing ` # comment` (outside quotes).
fn strip_comment(value: &str) -> &str {
    let mut quote = None;
    let bytes = value.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), c) if c == q => quote = None,
            (None, b'#') if i == 0 || matches!(bytes[i - 1], b' ' | b'\t') => return &value[..i],
            _ => {}
        }
    }
    value
}

/// Whether a `version` value is written as a Fuzzfile's: `v` and a digit, empty, or a
/// template action.
fn fuzzfile_version_form(value: &str) -> bool {
    if value.starts_with("{{") {
        return true;
    }
    let v = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
        .unwrap_or(value)
        .trim();
    let mut chars = v.chars();
    match chars.next() {
        None => true,
        Some('v' | 'V') => chars.next().is_some_and(|c| c.is_ascii_digit()),
        Some(_) => false,
    }
}

/// Whether an indented line starts the key `steps:` (a CircleCI job's).
fn has_indented_steps_key(text: &str) -> bool {
    fuzzfile_diagnostics::lines(text).any(|line| {
        let key = line.trim_start_matches(' ');
        key.len() < line.len()
            && key
                .strip_prefix("steps")
                .and_then(|rest| rest.trim_start_matches([' ', '\t']).strip_prefix(':'))
                .is_some_and(|after| after.is_empty() || after.starts_with([' ', '\t']))
    })
}

/// Whether YAML text is a Fuzzfile by the rule of this module (`Ok`), or why not.
pub fn recognise(text: &str) -> Result<(), NotFuzzfile> {
    let keys = top_level_keys(text);
    let has = |name: &str| keys.iter().any(|(k, _)| k == name);
    let Some((_, version)) = keys.iter().find(|(k, _)| k == "version") else {
        return Err(NotFuzzfile::NoVersion);
    };
    if !has("jobs") && !has("services") {
        return Err(NotFuzzfile::NoJobsOrServices);
    }
    if fuzzfile_version_form(version) {
        return Ok(());
    }
    let only_fuzzfile_keys = keys.iter().all(|(k, _)| Place::Root.key(k).is_some());
    if has("jobs") && only_fuzzfile_keys {
        // CircleCI 2.0's smallest config is `version: 2` and `jobs:` alone, whose every job
        // has `steps:`, a key no Fuzzfile has.
        if has_indented_steps_key(text) {
            return Err(NotFuzzfile::CircleCiJobs(version.clone()));
        }
        return Ok(());
    }
    Err(NotFuzzfile::OtherVersion(version.clone()))
}

/// Whether the text of a file named like a values file (`values.yaml`, `<app>.values.yaml`)
/// is a template's values file: a top-level `values:` (the list of `name`, `*_value`
/// entries every catalog values file has), unlike a Helm chart's `values.yaml`.
pub fn recognise_values(text: &str) -> Result<(), NotFuzzfile> {
    if top_level_keys(text).iter().any(|(k, _)| k == "values") {
        Ok(())
    } else {
        Err(NotFuzzfile::NoValues)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fuzzfiles_in_every_spelling() {
        for text in [
            "version: v1\njobs:\n  a: {}\n",
            "\u{feff}version: v4\nservices:\n",
            "# comment\n---\nversion: \"v4\" # current\njobs: {}\n",
            "'version': 'v4'\n\"jobs\":\n",
            "version : v4\njobs:\n",
            "version:\njobs:\n",
            "version: v2\njobs:\n",
            "version: {{ .Version }}\njobs:\n",
            "version: 4\njobs:\n  a:\n    image: {uri: docker://x}\nvolumes: {}\n",
            "version: v4\njobs:\n  a: [unclosed\n",
        ] {
            assert_eq!(recognise(text), Ok(()), "{text:?}");
        }
    }

    #[test]
    fn values_files() {
        assert_eq!(
            recognise_values("values:\n  - name: Cores\n    uint_value: 2\n"),
            Ok(())
        );
        assert_eq!(
            recognise_values("replicaCount: 1\nimage:\n  tag: \"\"\n"),
            Err(NotFuzzfile::NoValues)
        );
    }

    #[test]
    fn other_yaml_is_not_a_fuzzfile() {
        let cases: &[(&str, NotFuzzfile)] = &[
            (
                "version: '3.8'\nservices:\n  web:\n    image: nginx\n",
                NotFuzzfile::OtherVersion("'3.8'".into()),
            ),
            (
                "version: 2.1\norbs:\n  node: circleci/node@5\njobs:\n  build: {}\nworkflows: {}\n",
                NotFuzzfile::OtherVersion("2.1".into()),
            ),
            (
                "version: 2\njobs:\n  build:\n    steps: [checkout]\nworkflows:\n  main: {}\n",
                NotFuzzfile::OtherVersion("2".into()),
            ),
            // CircleCI's own 2.0 "Hello World" (circleci/circleci-docs,
            // jekyll/_cci2/hello-world.md): `version: 2` and `jobs:` alone.
            (
                "version: 2\njobs:\n  build:\n    docker: # use the docker executor type; machine and macos executors are also supported\n      - image: circleci/node:4.8.2 # the primary container, where your job's commands are run\n    steps:\n      - checkout # check out the code in the project directory\n      - run: echo \"hello world\" # run the `echo` command\n",
                NotFuzzfile::CircleCiJobs("2".into()),
            ),
            (
                "version: 2.0\njobs:\n  build:\n    steps :\n      - checkout\n",
                NotFuzzfile::CircleCiJobs("2.0".into()),
            ),
            ("on: push\njobs:\n  test: {}\n", NotFuzzfile::NoVersion),
            (
                "repos:\n- repo: local\n  hooks: []\n",
                NotFuzzfile::NoVersion,
            ),
            (
                "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n",
                NotFuzzfile::NoVersion,
            ),
            ("version: v1\nsteps: []\n", NotFuzzfile::NoJobsOrServices),
            ("name: x\n  version: v1\n  jobs:\n", NotFuzzfile::NoVersion),
            (
                "script: |\n  version: v1\n  jobs:\n",
                NotFuzzfile::NoVersion,
            ),
        ];
        for (text, why) in cases {
            assert_eq!(recognise(text).as_ref(), Err(why), "{text:?}");
        }
    }
}
