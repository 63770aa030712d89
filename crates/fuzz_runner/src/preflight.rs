//! Preflight of the container runtime: before anything is created or started, the runtime
//! that was named (`--runtime docker|podman|apptainer`) or picked by `--runtime auto` must be
//! able to run a container, else the run is refused (exit 2) with what to do.
//!
//! - docker: `docker version --format {{.Server.Version}}` answers only when the client
//!   reaches its engine (`DOCKER_HOST`, the context, or `/var/run/docker.sock`);
//! - podman: `podman info` (its storage and OCI runtime are usable by this user);
//! - apptainer: `apptainer --version` runs.
//!
//! Each check gets [`CHECK_TIMEOUT`]; a check that hangs (a daemon that does not answer) is
//! a failure too.

use crate::RuntimeKind;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one check may take.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

/// Whether `program` (the runtime's executable) can run containers here; why not and what to
/// do otherwise.
pub fn check(kind: RuntimeKind, program: &Path) -> Result<(), String> {
    let (args, what, fix): (&[&str], &str, &str) = match kind {
        RuntimeKind::Docker => (
            &["version", "--format", "{{.Server.Version}}"],
            "cannot reach the docker engine",
            "start it (`systemctl start docker`), point DOCKER_HOST at a running engine, or \
             choose another runtime (--runtime podman, apptainer or host)",
        ),
        RuntimeKind::Podman => (
            &["info", "--format", "{{.Host.OCIRuntime.Name}}"],
            "podman is not usable",
            "run `podman info` to see why (storage, an OCI runtime such as crun, subuids for \
             rootless use), or choose another runtime (--runtime apptainer, docker or host)",
        ),
        RuntimeKind::Apptainer => (
            &["--version"],
            "apptainer does not run",
            "run `apptainer --version` to see why, reinstall it, or choose another runtime \
             (--runtime podman, docker or host)",
        ),
        RuntimeKind::Host | RuntimeKind::Auto => return Ok(()),
    };
    let shown = format!("{} {}", program.display(), args.join(" "));
    match output(program, args, CHECK_TIMEOUT) {
        Ok((true, _)) => Ok(()),
        Ok((false, err)) => Err(format!(
            "--runtime {}: {what}: `{shown}` failed{}; {fix}",
            kind.as_str(),
            first_lines(&err)
        )),
        Err(e) => Err(format!(
            "--runtime {}: {what}: `{shown}` {e}; {fix}",
            kind.as_str()
        )),
    }
}

/// `: <its message>` (the first two lines of standard error), or nothing.
fn first_lines(err: &str) -> String {
    let lines: Vec<&str> = err
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(2)
        .collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!(": {}", lines.join(" "))
    }
}

/// Runs `program args` with no input; whether it succeeded and its standard error (the
/// first 64 KiB). Killed after `timeout`.
pub(crate) fn output(
    program: &Path,
    args: &[&str],
    timeout: Duration,
) -> Result<(bool, String), String> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot be started ({e})"))?;
    // Read on a thread: a child that writes much would block on a full pipe.
    let reader = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut e).take(64 * 1024).read_to_end(&mut buf);
            // What is left is drained so the child never blocks.
            let _ = std::io::copy(&mut e, &mut std::io::sink());
            String::from_utf8_lossy(&buf).into_owned()
        })
    });
    let end = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(5)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("did not answer within {} s", timeout.as_secs()));
            }
            Err(e) => return Err(format!("cannot be waited for ({e})")),
        }
    };
    let err = reader.and_then(|r| r.join().ok()).unwrap_or_default();
    Ok((status.success(), err))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_check_says_what_it_ran_and_what_to_do() {
        // `false` stands for a runtime whose check fails.
        let e = check(RuntimeKind::Docker, Path::new("/bin/false")).expect_err("fails");
        assert!(
            e.starts_with("--runtime docker: cannot reach the docker engine"),
            "{e}"
        );
        assert!(e.contains("`/bin/false version --format"), "{e}");
        assert!(e.contains("systemctl start docker"), "{e}");
        assert!(check(RuntimeKind::Apptainer, Path::new("/bin/true")).is_ok());
        let e = check(RuntimeKind::Podman, Path::new("/nonexistent/podman")).expect_err("absent");
        assert!(e.contains("cannot be started"), "{e}");
    }

    #[test]
    fn a_check_that_hangs_fails_in_time() {
        let t0 = Instant::now();
        let r = output(Path::new("/bin/sleep"), &["5"], Duration::from_millis(200));
        assert!(r.expect_err("hangs").contains("did not answer"));
        assert!(t0.elapsed() < Duration::from_secs(3));
    }
}
