//! The catalog's application templates (`../shared/corpus/templates` beside the repository:
//! main in the folder, older versions in `history/` and `v3.4/`, each `*.template.yaml` with
//! its `*.values.yaml`), listed for the tests and benchmarks of every crate that reads them.

use std::path::{Path, PathBuf};

/// Every file below `dir`, in its subdirectories too, sorted; a directory that cannot be
/// read is passed over.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The corpus directory, canonical, or why there is none (it is not checked out beside the
/// repository).
pub fn template_corpus() -> Result<PathBuf, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/templates");
    match dir.canonicalize() {
        Ok(d) if d.is_dir() => Ok(d),
        _ => Err(format!(
            "no template corpus at {} (shared/corpus is not checked out beside the repository)",
            dir.display()
        )),
    }
}

/// [`template_corpus`], the test skipped ([`crate::system::skip`]) where there is none.
pub fn template_corpus_dir() -> Option<PathBuf> {
    template_corpus()
        .map_err(|why| crate::system::skip(&why))
        .ok()
}

/// The files below `dir` whose names end with `suffix`, sorted.
pub fn files_ending_with(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut files = files_below(dir);
    files.retain(|p| p.to_string_lossy().ends_with(suffix));
    files
}

/// Every template of the corpus (`*.template.yaml`), sorted.
pub fn corpus_templates() -> Option<Vec<PathBuf>> {
    Some(files_ending_with(&template_corpus_dir()?, ".template.yaml"))
}

/// Every values file of the corpus (`*.values.yaml`), sorted.
pub fn corpus_values_files() -> Option<Vec<PathBuf>> {
    Some(files_ending_with(&template_corpus_dir()?, ".values.yaml"))
}
