//! Finding Fuzzfiles: explicit files are taken as they are (`fuzzfile_kind::split_named` then
//! skips the named YAML files that are not Fuzzfiles); directories are walked honouring
//! .gitignore, keeping what `fuzzfile_kind::classify` takes for a Fuzzfile: `*.fz` files and
//! `*.yaml`/`*.yml` files that look like Fuzzfiles (application templates, `template.yaml` and
//! `*.template.yaml`, among them: a template too has its top-level `version:` and `jobs:` or
//! `services:`; values files never: they are read with their template).

use std::path::{Path, PathBuf};

/// The files of `paths`: directories walked, skipping what `excluded` says (fuzzlint.toml's
/// `exclude`, `extend-exclude`); a named file is kept unless `force_exclude` and excluded.
pub fn discover(
    paths: &[PathBuf],
    excluded: &crate::exclusion::Excluder,
    force_exclude: bool,
) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    let cwd = std::env::current_dir().and_then(std::fs::canonicalize).ok();
    for p in paths {
        // Standard input, read through the same bounded reader as a file.
        if p.as_os_str() == "-" {
            out.push(p.clone());
            continue;
        }
        if let Some(cwd) = &cwd {
            refuse_link_out_of(cwd, p)?;
        }
        let meta =
            std::fs::metadata(p).map_err(|e| format!("{}: {}", p.display(), describe_io(&e)))?;
        // Anything but a directory is read as a file, through the bounded reader: a pipe
        // (`<(cat x.fz)`) works, and `/dev/zero` is refused at the size limit.
        if !meta.is_dir() {
            if !(force_exclude && excluded(p, false)) {
                out.push(p.clone());
            }
            continue;
        }
        let before = out.len();
        let walker = ignore::WalkBuilder::new(p)
            .hidden(true)
            .git_ignore(true)
            .git_global(false)
            .git_exclude(true)
            .require_git(false)
            .filter_entry({
                let excluded = std::sync::Arc::clone(excluded);
                // The directory named is walked whatever the excludes say (as ruff).
                move |e| {
                    e.depth() == 0 || !excluded(e.path(), e.file_type().is_some_and(|t| t.is_dir()))
                }
            })
            .build();
        for entry in walker {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => return Err(format!("cannot walk {}: {e}", p.display())),
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let path = entry.path();
            // The same predicate as for named files; a values file is read with its template.
            let keep =
                crate::fuzzfile_kind::classify(path, false) == crate::fuzzfile_kind::Kind::Fuzzfile;
            if keep {
                out.push(path.to_path_buf());
            }
        }
        if out.len() == before {
            return Err(format!(
                "{}: no Fuzzfile found (looked for *.fz, and *.yaml/*.yml with top-level `version:` and `jobs:` or `services:`)",
                p.display()
            ));
        }
    }
    out.sort();
    // One file named twice (`check . a.fz` gives `./a.fz` and `a.fz`) is checked once.
    let mut seen = std::collections::HashSet::new();
    out.retain(|p| seen.insert(std::fs::canonicalize(p).unwrap_or_else(|_| p.clone())));
    Ok(out)
}

/// Refuse a relative path without `..` (what a pre-commit hook or `git diff --name-only`
/// passes) that leads out of the working directory through a symbolic link: a file of a pull
/// request can be a link to `/proc/self/environ` or a key file, and its code frames would print
/// the machine's secrets into the CI log. Walked directories never follow links (the walker
/// skips them); a path written absolute or with `..` is read as given.
fn refuse_link_out_of(cwd: &Path, p: &Path) -> Result<(), String> {
    use std::path::Component;
    let plain_relative = p
        .components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !plain_relative {
        return Ok(());
    }
    let Ok(target) = std::fs::canonicalize(cwd.join(p)) else {
        return Ok(()); // A missing file is reported where it is read.
    };
    if target.starts_with(cwd) {
        return Ok(());
    }
    Err(format!(
        "{}: a symbolic link leads out of the working directory (to {}); fuzzlint does not follow it, \
         since a link in a pull request could point at a secret of this machine. \
         To check that file, name it by its own path.",
        p.display(),
        target.display()
    ))
}

fn describe_io(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

pub use fuzzfile_check::settings::display;

#[cfg(test)]
mod tests {
    use fuzzfile_check::looks_like_fuzzfile;

    #[test]
    fn recognises_fuzzfiles() {
        assert!(looks_like_fuzzfile("version: v1\njobs:\n  a: {}\n"));
        assert!(looks_like_fuzzfile("\u{feff}version: v4\nservices:\n"));
        assert!(!looks_like_fuzzfile("version: 2\nsteps: []\n"));
        assert!(!looks_like_fuzzfile("name: x\n  version: v1\n  jobs:\n"));
    }
}
