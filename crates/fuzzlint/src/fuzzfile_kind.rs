//! Which files are Fuzzfiles: one predicate for the files found in a directory and the files
//! named on the command line (as pre-commit names every YAML file of a commit).
//!
//! - `*.fz`: a Fuzzfile whatever it holds (`*.template.fz`: a template);
//! - `*.yaml`/`*.yml`: a Fuzzfile, or an application template by its name (`template.yaml`,
//!   `*.template.yaml`), when its text looks like one (`fuzzfile_check::recognise`: a
//!   top-level `version:` written as a Fuzzfile's and `jobs:` or `services:`);
//! - a values file (`values.yaml`, `*.values.yaml`): a template's values file when a Fuzzfile
//!   template beside it reads it or its text has the top-level `values:` list of one (a Helm
//!   chart's `values.yaml` has neither); a directory walk leaves it to its template;
//! - any other name: not a Fuzzfile for a directory walk; named on the command line it is read
//!   as given (`<(cat x.fz)`, a Fuzzfile without an extension).
//!
//! A named YAML file that is not a Fuzzfile is skipped, as ruff's `--force-exclude` skips a
//! named file its configuration excludes, unless `--no-skip` or `skip-non-fuzzfiles = false`.

use fuzzfile_check::recognise::{recognise, recognise_values};
use fuzzfile_check::template;
use std::path::{Path, PathBuf};

/// What a file is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A Fuzzfile or an application template.
    Fuzzfile,
    /// A template's values file.
    Values,
    /// A name that is neither `.fz` nor YAML: read only when named.
    OtherName,
    /// Not a Fuzzfile, and why.
    Not(String),
}

/// The file name of `path`, when it is UTF-8.
fn name(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

fn extension(path: &Path) -> &str {
    path.extension().and_then(|e| e.to_str()).unwrap_or("")
}

/// What `path` is, reading it when its name does not say. A file that cannot be read is
/// taken for a Fuzzfile when named (its reader reports the error) and for none when walked
/// (`named` false), as before.
pub fn classify(path: &Path, named: bool) -> Kind {
    if template::is_values_name(name(path)) {
        if !named {
            return Kind::Not("a values file: read with its template".into());
        }
        if read_by_a_template(path) {
            return Kind::Values;
        }
        return match fuzzfile_io::read_to_string(path, fuzzfile_io::Kind::FUZZFILE) {
            Ok(text) => match recognise_values(&text) {
                Ok(()) => Kind::Values,
                Err(why) => Kind::Not(why.to_string()),
            },
            Err(_) => Kind::Values,
        };
    }
    match extension(path) {
        "fz" => Kind::Fuzzfile,
        "yaml" | "yml" => match fuzzfile_io::read_to_string(path, fuzzfile_io::Kind::FUZZFILE) {
            Ok(text) => match recognise(&text) {
                Ok(()) => Kind::Fuzzfile,
                Err(why) => Kind::Not(why.to_string()),
            },
            Err(_) if named => Kind::Fuzzfile,
            Err(e) => Kind::Not(e.to_string()),
        },
        _ => Kind::OtherName,
    }
}

/// Whether a template beside a values file reads it (the first of its values file names
/// that exists is this file) and is itself a Fuzzfile template.
fn read_by_a_template(values: &Path) -> bool {
    template_of_values(values).is_some()
}

fn template_of_values(values: &Path) -> Option<PathBuf> {
    let dir = match values.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let me = std::fs::canonicalize(values).ok()?;
    let mut templates: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| template::is_template_name(name(p)) && p.is_file())
        .collect();
    templates.sort();
    templates.into_iter().find(|t| {
        let reads_me = template::values_file_paths(t)
            .into_iter()
            .find(|c| c.is_file())
            .and_then(|c| std::fs::canonicalize(c).ok())
            .is_some_and(|c| c == me);
        reads_me && classify(t, false) == Kind::Fuzzfile
    })
}

/// A named file left out, and why.
pub struct Skipped {
    pub path: PathBuf,
    pub why: String,
}

/// Leave out the files named on the command line (`named`, as given) that are not Fuzzfiles
/// and whose settings skip them (`skip`: not `--no-skip`, `skip-non-fuzzfiles` not false),
/// with their settings. A file found by walking a directory was judged by [`classify`] there.
pub fn skip_named<S>(
    files: Vec<PathBuf>,
    settings: Vec<S>,
    named: &[PathBuf],
    skip: impl Fn(&S) -> bool,
) -> (Vec<PathBuf>, Vec<S>, Vec<Skipped>) {
    let mut kept = (
        Vec::with_capacity(files.len()),
        Vec::with_capacity(files.len()),
    );
    let mut skipped = Vec::new();
    // A set, not a scan of `named` per file: 1,500 named files made that a quadratic 65 % of
    // a check. `Path`'s hash agrees with its equality (both by components).
    let named: std::collections::HashSet<&Path> = named.iter().map(PathBuf::as_path).collect();
    for (f, s) in files.into_iter().zip(settings) {
        let is_named = f.as_os_str() != "-" && named.contains(f.as_path());
        if is_named && skip(&s) {
            if let Kind::Not(why) = classify(&f, true) {
                skipped.push(Skipped { path: f, why });
                continue;
            }
        }
        kept.0.push(f);
        kept.1.push(s);
    }
    (kept.0, kept.1, skipped)
}

/// The line about skipped files for standard error: each one with `verbose`, else a count.
pub fn report(skipped: &[Skipped], verbose: bool) -> Vec<String> {
    if skipped.is_empty() {
        return Vec::new();
    }
    if verbose {
        return skipped
            .iter()
            .map(|s| {
                format!(
                    "skipped {}: not a Fuzzfile ({}); --no-skip checks it",
                    crate::discover::display(&s.path),
                    s.why
                )
            })
            .collect();
    }
    let n = skipped.len();
    vec![format!(
        "{n} file{} skipped: not Fuzzfiles (-v lists them, --no-skip checks them)",
        if n == 1 { "" } else { "s" }
    )]
}
