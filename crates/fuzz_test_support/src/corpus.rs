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

/// The corpus directory, canonical; `None` (and a `SKIPPED` line on stderr) where it is not
/// checked out beside the repository.
pub fn template_corpus_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/templates");
    match dir.canonicalize() {
        Ok(d) if d.is_dir() => Some(d),
        _ => {
            eprintln!(
                "SKIPPED: no template corpus at {} (shared/corpus is not checked out beside the repository)",
                dir.display()
            );
            None
        }
    }
}

/// The corpus files whose names end with `suffix`, sorted.
fn corpus_files(suffix: &str) -> Option<Vec<PathBuf>> {
    let mut files = files_below(&template_corpus_dir()?);
    files.retain(|p| p.to_string_lossy().ends_with(suffix));
    Some(files)
}

/// Every template of the corpus (`*.template.yaml`), sorted.
pub fn corpus_templates() -> Option<Vec<PathBuf>> {
    corpus_files(".template.yaml")
}

/// Every values file of the corpus (`*.values.yaml`), sorted.
pub fn corpus_values_files() -> Option<Vec<PathBuf>> {
    corpus_files(".values.yaml")
}
