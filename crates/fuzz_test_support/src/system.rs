//! What a test needs of the machine, and the rule for a machine that lacks it.

use std::path::Path;

/// The environment variable that turns a skipped system test into a failed one (CI sets it).
pub const REQUIRE_SYSTEM_TESTS: &str = "FUZZ_REQUIRE_SYSTEM_TESTS";

/// The environment variable naming a file to which each skipped test appends a line
/// `TEST<tab>WHY` (scripts/test sets it and prints the list at the end).
pub const SKIPPED_TESTS_FILE: &str = "FUZZ_SKIPPED_TESTS_FILE";

/// A test that does not run on this machine (or does less than it could): says `skipped: why`
/// on standard error and leaves a line in [`SKIPPED_TESTS_FILE`] when that is set. The test
/// then returns. For something CI must have, use [`require`], which fails under
/// [`REQUIRE_SYSTEM_TESTS`] instead.
pub fn skip(why: &str) {
    eprintln!("skipped: {why}");
    let Some(file) = std::env::var_os(SKIPPED_TESTS_FILE) else {
        return;
    };
    let line = format!("{}\t{}\n", test_name(), why.replace(['\n', '\t'], " "));
    // One short write in append mode: lines of tests running at once do not mix.
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "warning: cannot record the skip in {}: {e}",
            Path::new(&file).display()
        );
    }
}

/// `package test-binary::test`: the package from cargo's environment, the test binary without
/// its hash, the test from the name libtest gives the thread that runs it.
fn test_name() -> String {
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_default();
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .map(|s| match s.rsplit_once('-') {
            Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_owned(),
            _ => s,
        })
        .unwrap_or_default();
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("?");
    format!("{package} {binary}::{test}")
}

/// Whether a test may run: `true` for `Ok`; for `Err(why)`, prints `skipped: why` and returns
/// `false` (the test returns and passes), unless [`REQUIRE_SYSTEM_TESTS`] is set in the
/// environment, where it fails the test with the reason.
///
/// ```ignore
/// if !require(Hosts::available()) { return; }
/// ```
pub fn require(check: Result<(), String>) -> bool {
    match check {
        Ok(()) => true,
        Err(why) => {
            if std::env::var_os(REQUIRE_SYSTEM_TESTS).is_some() {
                panic!("{REQUIRE_SYSTEM_TESTS} is set but this test cannot run: {why}");
            }
            skip(&why);
            false
        }
    }
}

/// Whether this process runs with effective user id 0 (read from `/proc/self/status`;
/// `false` when it cannot be read).
pub fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// Whether a file `name` is in a directory of this process's `PATH`.
pub fn on_path(name: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| d.join(name).is_file()))
        .unwrap_or(false)
}

/// `Ok` when `program` is on `PATH`, else an error naming it and what to read
/// (scripts/ci-packages.txt lists the packages CI installs).
pub fn installed(program: &str) -> Result<(), String> {
    if on_path(program) {
        Ok(())
    } else {
        Err(format!(
            "`{program}` is not installed; see scripts/ci-packages.txt"
        ))
    }
}

/// `Ok` when `/bin/busybox` exists (Debian: busybox-static, of which the container test
/// image is made).
pub fn busybox_installed() -> Result<(), String> {
    if Path::new("/bin/busybox").exists() {
        Ok(())
    } else {
        Err("/bin/busybox is missing (busybox-static)".into())
    }
}
