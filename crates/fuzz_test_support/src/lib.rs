//! Set-up shared by the integration tests of `fuzz` (crates/fuzz/tests) and `fuzzlint`
//! (crates/fuzzlint/tests); the corpus listing also by those of fuzzfile_check,
//! fuzzfile_server and fuzzfile_template. A dev-dependency only; never published.
//!
//! - [`corpus`]: the catalog's template corpus (`../shared/corpus/templates`), listed.
//! - [`scratch`]: a fresh directory per test, removed when the test ends.
//! - [`process`]: running a program with a time limit and capturing what it printed.
//! - [`binary`]: the crate's own binary (`fuzz`, `fuzzlint`), its usual `fuzz run` flags and
//!   the captured result of a run as text.
//! - [`fake_node`]: stand-in programs (`nvidia-smi`, container clients) on a `PATH` of the
//!   test's own.
//! - [`growth`]: instruction counts (valgrind) on generated Fuzzfiles of growing size, and the
//!   check that a step grows linearly.
//! - [`rng`]: a deterministic generator for tests that make random inputs.
//! - [`system`]: the skip-or-fail rule of tests that need root or system packages
//!   (`FUZZ_REQUIRE_SYSTEM_TESTS`).
//! - [`podman`]: the local busybox test image and the "no container, no process left" check.
//! - [`netns`]: several hosts on one machine (network namespaces) and an `sshd` on each.
//! - [`slurm`]: a Slurm cluster on this machine (scripts/slurm-local.sh).
//!
//! The helpers fail the test (panic with what went wrong) where a test could not go on;
//! those that return `Result` leave the choice (skip or fail) to the test.

pub mod binary;
pub mod corpus;
pub mod fake_node;
pub mod growth;
pub mod netns;
pub mod podman;
pub mod process;
pub mod rng;
pub mod scratch;
pub mod slurm;
pub mod system;

pub use binary::{
    BinaryRun, FuzzRunFlags, NoColorVariable, ProgramBinary, RuntimeFlag, StatusLine,
};
pub use netns::{Hosts, NodeLauncher, Sshd};
pub use process::{lossy_text, output_within, output_within_or_fail, said_lines, sorted_lines};
pub use scratch::ScratchDirectory;
pub use slurm::LocalSlurm;
pub use system::require;

/// The workspace's root directory (where `scripts/` and `examples/` are).
pub fn workspace_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `fuzz` binary of the crate whose test expands it (`env!("CARGO_BIN_EXE_fuzz")`, which
/// only the `fuzz` crate's own tests see).
#[macro_export]
macro_rules! fuzz_binary {
    () => {
        $crate::ProgramBinary::at(env!("CARGO_BIN_EXE_fuzz"))
    };
}

/// The `fuzzlint` binary of the crate whose test expands it
/// (`env!("CARGO_BIN_EXE_fuzzlint")`).
#[macro_export]
macro_rules! fuzzlint_binary {
    () => {
        $crate::ProgramBinary::at(env!("CARGO_BIN_EXE_fuzzlint"))
    };
}

/// A Fuzzfile of one multinode job `train` (alpine, one core, 1 GiB, `procs-per-node: 1`)
/// whose `script:` is `#!/bin/sh` and then `script`, on `nodes` nodes with `implementation`;
/// `job_lines` (YAML lines indented by four, each ending in a newline, or empty) are added to
/// the job before its `resource:`.
pub fn multinode_fuzzfile(
    nodes: u32,
    implementation: &str,
    script: &str,
    job_lines: &str,
) -> String {
    let body: String = script.lines().map(|l| format!("      {l}\n")).collect();
    format!(
        "version: v4\njobs:\n  train:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n{body}{job_lines}    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 1GiB\n    multinode:\n      nodes: {nodes}\n      implementation: {implementation}\n      procs-per-node: 1\n"
    )
}
