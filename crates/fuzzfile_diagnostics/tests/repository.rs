//! Cargo.toml's `repository` is the one address of the project: the VS Code extension's
//! manifest names the same repository, and no document or schema keeps another one.

use fuzzfile_diagnostics::docs::{REPOSITORY, SCHEMA_BASE_URL};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn the_extension_manifest_names_cargo_s_repository() {
    let manifest = std::fs::read_to_string(root().join("editors/vscode/package.json"))
        .expect("editors/vscode/package.json");
    let want = format!("\"url\": \"{REPOSITORY}.git\"");
    assert!(
        manifest.contains(&want),
        "editors/vscode/package.json: its repository should be {want} (Cargo.toml's `repository`)"
    );
}

#[test]
fn docs_and_schemas_use_the_repository_s_address() {
    // Spelled in two pieces so that this file does not match itself.
    let placeholder = format!("example.{}", "invalid");
    let mut files = vec![
        root().join("README.md"),
        root().join("editors/vscode/package.json"),
    ];
    for dir in ["docs", "schemas"] {
        for entry in std::fs::read_dir(root().join(dir)).expect(dir) {
            let path = entry.expect("entry").path();
            if path.is_file() {
                files.push(path);
            }
        }
    }
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        assert!(
            !text.contains(&placeholder),
            "{} names {placeholder}: use Cargo.toml's `repository` ({REPOSITORY})",
            f.display()
        );
    }
    let schema = std::fs::read_to_string(root().join("schemas/fuzzfile.schema.json"))
        .expect("schemas/fuzzfile.schema.json");
    assert!(
        schema.contains(&format!(
            "\"$id\": \"{SCHEMA_BASE_URL}fuzzfile.schema.json\""
        )),
        "schemas/fuzzfile.schema.json: its $id is not under {SCHEMA_BASE_URL}"
    );
}
