//! docs/man/fuzzlint*.1 are generated from fuzzlint's clap definition (`fuzzlint::command()`,
//! `fuzzlint::cli_docs::man_pages`); this test fails when they drift, and
//! `UPDATE_MAN=1 cargo test -p fuzzlint --test man_pages` rewrites them. (`fuzz`'s pages:
//! crates/fuzz/tests/man_pages.rs.)

use std::path::Path;

/// Whether `name` is one of fuzzlint's pages (`fuzzlint.1`, `fuzzlint-check.1`).
fn is_fuzzlint_page(name: &str) -> bool {
    name == "fuzzlint.1" || (name.starts_with("fuzzlint-") && name.ends_with(".1"))
}

#[test]
fn man_pages_are_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/man");
    let pages = fuzzlint::cli_docs::man_pages(fuzzlint::command()).expect("render man pages");
    let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    // Every subcommand has its page.
    for sub in [
        "fuzzlint.1",
        "fuzzlint-check.1",
        "fuzzlint-rules.1",
        "fuzzlint-completions.1",
        "fuzzlint-profile-detect.1",
    ] {
        assert!(names.contains(&sub), "{sub} missing from {names:?}");
    }
    let check = &pages
        .iter()
        .find(|(n, _)| n == "fuzzlint-check.1")
        .expect("check page")
        .1;
    let check = String::from_utf8_lossy(check);
    assert!(check.contains("unsafe\\-fixes"), "{check}");
    if std::env::var_os("UPDATE_MAN").is_some() {
        std::fs::create_dir_all(&dir).expect("create docs/man");
        for e in std::fs::read_dir(&dir).expect("read docs/man").flatten() {
            if is_fuzzlint_page(&e.file_name().to_string_lossy()) {
                std::fs::remove_file(e.path()).expect("remove a stale page");
            }
        }
        for (name, text) in &pages {
            std::fs::write(dir.join(name), text).expect("write a page");
        }
        return;
    }
    let mut stale = Vec::new();
    for (name, text) in &pages {
        if std::fs::read(dir.join(name)).ok().as_deref() != Some(text.as_slice()) {
            stale.push(name.clone());
        }
    }
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if is_fuzzlint_page(&name) && !names.contains(&name.as_str()) {
            stale.push(format!("{name} (no such command)"));
        }
    }
    assert!(
        stale.is_empty(),
        "docs/man is stale: {stale:?}; run `UPDATE_MAN=1 cargo test -p fuzzlint --test man_pages`"
    );
}
