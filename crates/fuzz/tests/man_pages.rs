//! docs/man/fuzz*.1 are generated from fuzz's clap definition by the binary itself
//! (`fuzz __man-pages DIR`, fuzzlint::cli_docs); this test fails when they drift, and
//! `UPDATE_MAN=1 cargo test -p fuzz --test man_pages` rewrites them. Also: `fuzz completions`.

use fuzz_test_support::{fuzz_binary, ScratchDirectory};
use std::path::Path;

fn is_fuzz_page(name: &str) -> bool {
    name == "fuzz.1" || (name.starts_with("fuzz-") && name.ends_with(".1"))
}

fn pages_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_fuzz_page(n))
        .map(|n| {
            let text = std::fs::read(dir.join(&n)).expect("read page");
            (n, text)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn man_pages_are_up_to_date() {
    let scratch = ScratchDirectory::create("fuzz-man-pages", "generated");
    let status = fuzz_binary!()
        .command()
        .arg("__man-pages")
        .arg(scratch.path())
        .status()
        .expect("run fuzz __man-pages");
    assert!(status.success());
    let generated = pages_in(scratch.path());
    let names: Vec<&str> = generated.iter().map(|(n, _)| n.as_str()).collect();
    for page in [
        "fuzz.1",
        "fuzz-check.1",
        "fuzz-plan.1",
        "fuzz-run.1",
        "fuzz-completions.1",
    ] {
        assert!(names.contains(&page), "{page} missing from {names:?}");
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/man");
    if std::env::var_os("UPDATE_MAN").is_some() {
        std::fs::create_dir_all(&dir).expect("create docs/man");
        for (name, _) in pages_in(&dir) {
            std::fs::remove_file(dir.join(name)).expect("remove a stale page");
        }
        for (name, text) in &generated {
            std::fs::write(dir.join(name), text).expect("write a page");
        }
        return;
    }
    let committed = pages_in(&dir);
    assert!(
        committed == generated,
        "docs/man/fuzz*.1 are stale ({:?} committed, {names:?} generated); run `UPDATE_MAN=1 cargo test -p fuzz --test man_pages`",
        committed.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>()
    );
}

#[test]
fn completions_are_valid_bash_and_name_the_subcommands() {
    let out = fuzz_binary!()
        .command()
        .args(["completions", "bash"])
        .output()
        .expect("run fuzz completions");
    assert!(out.status.success());
    let script = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(script.contains("_fuzz()"), "{script}");
    for sub in ["check", "plan", "run", "completions"] {
        assert!(script.contains(sub), "{sub} missing");
    }
    let scratch = ScratchDirectory::create("fuzz-completions", "bash");
    let file = scratch.write_file("fuzz.bash", &script);
    let syntax = std::process::Command::new("bash")
        .arg("-n")
        .arg(&file)
        .status()
        .expect("run bash -n");
    assert!(syntax.success(), "bash -n rejects the script");
}
