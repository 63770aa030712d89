//! `--runtime auto` (the default) with a multinode job: podman runs it in containers through the
//! bridge (docs/multinode.md); a runtime without multinode support (apptainer, docker) is not
//! used and the job runs on the host runtime, saying so. The runtimes are stubs on `PATH`, so
//! the choice is seen without any runtime installed.

use std::path::Path;
use std::process::Command;

const MULTINODE: &str = "version: v4\njobs:\n  mn:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/true]\n    multinode:\n      nodes: 2\n      implementation: generic\n";

/// A directory holding an executable stub `name` that fails if it is ever run.
fn stub_path(dir: &Path, name: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let stub = bin.join(name);
    std::fs::write(&stub, "#!/bin/sh\necho \"stub runtime ran: $*\" >&2\nexit 97\n").expect("stub");
    std::fs::set_permissions(&stub, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    // The stub first; /bin and /usr/bin for the runner's own helpers (/bin/sh, bwrap).
    format!("{}:/usr/bin:/bin", bin.display())
}

fn run_auto(dir: &Path, path: &str) -> (Option<i32>, String) {
    let file = dir.join("mn.fz");
    std::fs::write(&file, MULTINODE).expect("write Fuzzfile");
    let out = Command::new(env!("CARGO_BIN_EXE_fuzz"))
        .arg("run")
        .arg(&file)
        .args(["--status", "never", "--launcher", "local"])
        .arg("--workdir")
        .arg(dir.join("run"))
        .env("PATH", path)
        .output()
        .expect("run fuzz");
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

fn scratch(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("fuzz-runtime-auto-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch");
    d
}

#[test]
fn auto_runs_a_multinode_job_on_the_host_when_only_apptainer_is_installed() {
    let d = scratch("apptainer");
    let path = stub_path(&d, "apptainer");
    let (code, err) = run_auto(&d, &path);
    assert!(
        err.contains("runtime host: the plan has multinode jobs, which run in podman containers or on the host runtime (apptainer"),
        "{err}"
    );
    assert!(!err.contains("stub runtime ran"), "{err}");
    assert_eq!(code, Some(0), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn auto_runs_a_multinode_job_in_podman_when_podman_is_installed() {
    let d = scratch("podman");
    let path = stub_path(&d, "podman");
    let (code, err) = run_auto(&d, &path);
    assert!(err.contains("fuzz run: runtime podman"), "{err}");
    assert!(!err.contains("the plan has multinode jobs"), "{err}");
    // The stub is what the runner calls (its preflight or the job's container): never the host.
    assert!(err.contains("stub runtime ran"), "{err}");
    assert_ne!(code, Some(0), "{err}");
    let _ = std::fs::remove_dir_all(&d);
}
