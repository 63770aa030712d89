//! The podman test image (a local busybox image, scripts/container-test-image.sh; no
//! registry is contacted) and what a container test checks afterwards.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use crate::binary::{FuzzRunFlags, ProgramBinary, RuntimeFlag, StatusLine};

use crate::process::output_within_or_fail;
use crate::system::{busybox_installed, installed, is_root};

/// `Ok` when podman tests can run here: `podman` and `runc` on `PATH`, `/bin/busybox` (the
/// image is made of it) and root (podman runs here as root only); else the first thing
/// missing.
pub fn podman_test_prerequisites() -> Result<(), String> {
    for tool in ["podman", "runc"] {
        installed(tool)?;
    }
    busybox_installed()?;
    if !is_root() {
        return Err("podman runs here as root only".into());
    }
    Ok(())
}

/// The test image, imported, and the containers.conf the runs use.
#[derive(Clone, Debug)]
pub struct PodmanTestImage {
    /// The image reference a Fuzzfile names (`docker://localhost/...`), as the script printed it.
    pub reference: String,
    /// The containers.conf written for the runs (`CONTAINERS_CONF`).
    pub containers_conf: PathBuf,
}

/// Imports the test image (idempotent) and writes `dir/containers.conf`; fails the test when
/// the script fails or runs longer than two minutes.
pub fn import_podman_test_image(dir: &Path) -> PodmanTestImage {
    let conf = dir.join("containers.conf");
    let out = output_within_or_fail(
        Command::new("bash")
            .arg(crate::workspace_root().join("scripts/container-test-image.sh"))
            .arg("--conf")
            .arg(&conf),
        Duration::from_secs(120),
    );
    assert!(
        out.status.success(),
        "container-test-image.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PodmanTestImage {
        reference: String::from_utf8_lossy(&out.stdout).trim().to_owned(),
        containers_conf: conf,
    }
}

/// What [`podman_containers`] lists of each container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContainerListing {
    /// Its name (`{{.Names}}`).
    Names,
    /// Its name and its whole command (`--no-trunc`, `{{.Names}} {{.Command}}`).
    NamesAndCommands,
}

/// The containers of every state (`podman ps -a`, with `conf`) whose listing line contains
/// `label`, one line each as `listing` says.
pub fn podman_containers(conf: &Path, label: &str, listing: ContainerListing) -> Vec<String> {
    let mut cmd = Command::new("podman");
    match listing {
        ContainerListing::Names => cmd.args(["ps", "-a", "--format", "{{.Names}}"]),
        ContainerListing::NamesAndCommands => cmd.args([
            "ps",
            "-a",
            "--no-trunc",
            "--format",
            "{{.Names}} {{.Command}}",
        ]),
    };
    let out = cmd
        .env("CONTAINERS_CONF", conf)
        .output()
        .expect("podman ps");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.contains(label))
        .map(str::to_owned)
        .collect()
}

/// Fails the test when a container whose name contains `marker` (of any state) or a process
/// whose command line contains it (`pgrep -f`) is left.
pub fn assert_no_container_or_process_left(conf: &Path, marker: &str) {
    let left = podman_containers(conf, marker, ContainerListing::Names);
    assert!(left.is_empty(), "containers left: {left:?}");
    let procs = Command::new("pgrep")
        .args(["-f", marker])
        .output()
        .expect("pgrep");
    assert!(
        procs.stdout.is_empty(),
        "processes left: {}",
        String::from_utf8_lossy(&procs.stdout)
    );
}

/// Builds the local image of busybox and this node's Open MPI
/// (scripts/container-test-image-ompi.sh, idempotent) and returns its reference; fails the test when
/// the script fails or runs longer than two minutes.
pub fn import_podman_open_mpi_image() -> String {
    let out = output_within_or_fail(
        Command::new("bash")
            .arg(crate::workspace_root().join("scripts/container-test-image-ompi.sh")),
        Duration::from_secs(120),
    );
    assert!(
        out.status.success(),
        "container-test-image-ompi.sh failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Runs `fuzz run FILE --workdir WORKDIR --runtime podman --status never --grace 1 EXTRA...`
/// with `CONTAINERS_CONF` of `image`; fails the test when it cannot start or still runs after
/// three minutes. Returns its status and output, whatever its exit code.
pub fn fuzz_run_in_podman<S: AsRef<OsStr>>(
    fuzz: &ProgramBinary,
    image: &PodmanTestImage,
    file: &Path,
    workdir: &Path,
    extra: &[S],
) -> Output {
    let flags = FuzzRunFlags {
        runtime: RuntimeFlag::Podman,
        status: StatusLine::Never,
    };
    output_within_or_fail(
        fuzz.fuzz_run_command(file, workdir, flags)
            .args(["--grace", "1"])
            .args(extra)
            .env("CONTAINERS_CONF", &image.containers_conf),
        Duration::from_secs(180),
    )
}
