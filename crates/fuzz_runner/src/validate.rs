//! The one check of every name and path a launch plan gives the runner, done before anything
//! else looks at the plan ([`crate::prepare`] calls [`validate_plan`] first).
//!
//! A plan is JSON that anyone can edit by hand, so nothing in it is trusted because the
//! lowering would not have produced it. What becomes part of a path or a file name on this
//! node, what a shell reads, and what reaches a launcher's argv is checked here, once:
//!
//! * **Names** that become path components or file names (job and service names, which name
//!   `files/<job>/`, `helpers/<job>.env.<rank>` and `logs/<job>.gang.json`; instance host names,
//!   which name the log files; volume keys; the graph's names): [`check_name`], a letter or a
//!   digit first, then letters, digits, `-`, `_` and `.`, at most [`MAX_NAME`] bytes. So never
//!   empty, never `/`, never `..`, never an option.
//! * **Environment names**: [`check_env_name`], a POSIX name (`[A-Za-z_][A-Za-z0-9_]*`), since
//!   the nodes of a multinode job source them from a shell file. Values must not hold NUL (no
//!   process environment can).
//! * **Host names** (a multinode job's hosts, an instance's host, `address-of:<host>`): the
//!   same [`crate::hosts::validate_hostname`] that `--hosts` and hostfiles pass.
//! * **Host paths** (volume directories, files, mounts, helpers): under `{workdir}` and free of
//!   `..`. **Container paths** (`cwd`, mount points, file paths, helper paths): absolute,
//!   free of `..` (a file inside the volume that is the job's working directory is written
//!   into that volume's directory on the host runtime).
//! * **File modes**: octal, at most `0777` (no set-user-ID file is ever written).
//! * **Command words** (argv, runtime lines, probes): no NUL.
//!
//! Every problem is reported, one per line, each at its place in the plan as a JSON pointer
//! (`/jobs/0/instances/1/hostname`), with what is wrong and what is allowed.

use crate::RunError;
use fuzzfile_plan::{EnvValue, FileContent, Plan, Probe, RuntimeLine, Task, WORKDIR};

/// The longest name the runner accepts as a path component (room is left for the suffixes the
/// runner adds: `.env.<rank>`, `.multinode.json`, `.out`).
pub const MAX_NAME: usize = 200;

/// The longest path (host or container) in a plan: Linux's `PATH_MAX`.
pub const MAX_PATH: usize = 4096;

/// The most problems listed in one refusal; a count of the others follows.
const MAX_LISTED: usize = 20;

/// Checks every name and path of `plan` (see the module documentation); all problems at once.
pub fn validate_plan(plan: &Plan) -> Result<(), RunError> {
    let mut v = Problems::default();
    for (k, vol) in plan.volumes.iter().enumerate() {
        let at = format!("/volumes/{k}");
        v.check(&format!("{at}/key"), "volume key", &vol.key, check_name);
        v.check(
            &format!("{at}/host_path"),
            "host path",
            &vol.host_path,
            check_host_path,
        );
        for (dir, list) in [("ingress", &vol.ingress), ("egress", &vol.egress)] {
            for (i, t) in list.iter().enumerate() {
                for (side, end) in [("source", &t.source), ("destination", &t.destination)] {
                    let at = format!("{at}/{dir}/{i}/{side}");
                    for (field, s) in [
                        ("uri", &end.uri),
                        ("volume_path", &end.volume_path),
                        ("file", &end.file),
                    ] {
                        if let Some(s) = s {
                            v.check(&format!("{at}/{field}"), field, s, no_nul);
                        }
                    }
                }
            }
        }
    }
    for (k, f) in plan.files.iter().enumerate() {
        // A top-level file's name is only a source (`file://<name>`); its last component is
        // checked as a file name where a transfer uses it.
        v.check(&format!("/files/{k}/name"), "file name", &f.name, |s| {
            no_nul(s)?;
            if s.is_empty() {
                return Err("is empty".into());
            }
            bounded(s, MAX_PATH)
        });
    }
    for (list, tasks) in [("jobs", &plan.jobs), ("services", &plan.services)] {
        for (k, t) in tasks.iter().enumerate() {
            task(&mut v, &format!("/{list}/{k}"), t);
        }
    }
    for (k, n) in plan.graph.nodes.iter().enumerate() {
        v.check(
            &format!("/graph/nodes/{k}/name"),
            "name",
            &n.name,
            check_name,
        );
    }
    for (k, e) in plan.graph.edges.iter().enumerate() {
        v.check(
            &format!("/graph/edges/{k}/from"),
            "name",
            &e.from,
            check_name,
        );
        v.check(&format!("/graph/edges/{k}/to"), "name", &e.to, check_name);
    }
    for (k, n) in plan.graph.order.iter().enumerate() {
        v.check(&format!("/graph/order/{k}"), "name", n, check_name);
    }
    v.into_result()
}

fn task(v: &mut Problems, at: &str, t: &Task) {
    let what = if at.starts_with("/jobs") {
        "job name"
    } else {
        "service name"
    };
    v.check(&format!("{at}/name"), what, &t.name, check_name);
    if let Some(c) = &t.cwd {
        v.check(&format!("{at}/cwd"), "cwd", c, check_container_path);
    }
    for (k, m) in t.mounts.iter().enumerate() {
        let at = format!("{at}/mounts/{k}");
        v.check(
            &format!("{at}/path"),
            "mount path",
            &m.path,
            check_container_path,
        );
        v.check(&format!("{at}/volume"), "volume key", &m.volume, check_name);
        v.check(
            &format!("{at}/host_path"),
            "host path",
            &m.host_path,
            check_host_path,
        );
    }
    for (k, f) in t.files.iter().enumerate() {
        let at = format!("{at}/files/{k}");
        v.check(
            &format!("{at}/path"),
            "file path",
            &f.path,
            check_container_path,
        );
        v.check(
            &format!("{at}/host_path"),
            "host path",
            &f.host_path,
            check_host_path,
        );
        v.check(&format!("{at}/mode"), "file mode", &f.mode, check_mode);
        if let FileContent::File(n) = &f.content {
            v.check(&format!("{at}/content/file"), "file name", n, no_nul);
        }
    }
    for (k, h) in t.helpers.iter().enumerate() {
        let at = format!("{at}/helpers/{k}");
        v.check(
            &format!("{at}/path"),
            "helper path",
            &h.path,
            check_container_path,
        );
        v.check(
            &format!("{at}/host_path"),
            "host path",
            &h.host_path,
            check_host_path,
        );
    }
    if let Some(mn) = &t.multinode {
        for (k, h) in mn.hosts.iter().enumerate() {
            v.check(
                &format!("{at}/multinode/hosts/{k}"),
                "",
                h,
                crate::hosts::validate_hostname,
            );
        }
    }
    if let Some(Probe::Exec { command }) = t
        .service
        .as_ref()
        .and_then(|s| s.readiness_probe.as_ref())
        .map(|r| &r.action)
    {
        words(
            v,
            &format!("{at}/service/readiness_probe/action/exec/command"),
            command,
        );
    }
    for (k, i) in t.instances.iter().enumerate() {
        let at = format!("{at}/instances/{k}");
        v.check(
            &format!("{at}/hostname"),
            "instance hostname",
            &i.hostname,
            check_name,
        );
        if let Some(h) = &i.host {
            v.check(
                &format!("{at}/host"),
                "",
                h,
                crate::hosts::validate_hostname,
            );
        }
        if let Some(argv) = &i.argv {
            words(v, &format!("{at}/argv"), argv);
        }
        for (e, var) in i.env.iter().enumerate() {
            let at = format!("{at}/env/{e}");
            v.check(
                &format!("{at}/name"),
                "environment variable name",
                &var.name,
                check_env_name,
            );
            match &var.value {
                EnvValue::Literal(s) => {
                    v.check(
                        &format!("{at}/value/literal"),
                        &format!("value of {}", var.name),
                        s,
                        no_nul,
                    );
                }
                EnvValue::Runtime(r) => {
                    if let Some(host) = r.strip_prefix("address-of:") {
                        v.check(
                            &format!("{at}/value/runtime"),
                            "",
                            host,
                            crate::hosts::validate_hostname,
                        );
                    }
                }
                EnvValue::Secret(_) => {}
            }
        }
        for (name, line) in [
            ("apptainer", &i.runtimes.apptainer),
            ("podman", &i.runtimes.podman),
            ("docker", &i.runtimes.docker),
            ("host", &i.runtimes.host),
        ] {
            runtime_line(v, &format!("{at}/runtimes/{name}"), line);
        }
    }
}

fn runtime_line(v: &mut Problems, at: &str, line: &RuntimeLine) {
    words(v, &format!("{at}/argv"), &line.argv);
    words(v, &format!("{at}/stop"), &line.stop);
    if let Some(c) = &line.cwd {
        v.check(&format!("{at}/cwd"), "cwd", c, |s| {
            no_nul(s)?;
            bounded(s, MAX_PATH)
        });
    }
}

fn words(v: &mut Problems, at: &str, words: &[String]) {
    for (k, w) in words.iter().enumerate() {
        v.check(&format!("{at}/{k}"), "command word", w, no_nul);
    }
}

/// A name that becomes a path component or a file name: a letter or digit, then letters,
/// digits, `-`, `_` and `.`; at most [`MAX_NAME`] bytes.
pub fn check_name(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("is empty".into());
    }
    bounded(s, MAX_NAME)?;
    if let Some((i, c)) = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "contains {c:?} at byte {i}: names become file names on the node and may hold only \
             letters, digits, '-', '_' and '.'"
        ));
    }
    if !s.as_bytes()[0].is_ascii_alphanumeric() {
        return Err(format!(
            "starts with {:?}: a name starts with a letter or a digit",
            s.as_bytes()[0] as char
        ));
    }
    Ok(())
}

/// A POSIX environment variable name: `[A-Za-z_][A-Za-z0-9_]*`, at most [`MAX_NAME`] bytes.
pub fn check_env_name(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Err("is empty".into());
    }
    bounded(s, MAX_NAME)?;
    if let Some((i, c)) = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(format!(
            "contains {c:?} at byte {i}: an environment variable name holds only letters, \
             digits and '_' (a shell reads it on every node)"
        ));
    }
    if s.as_bytes()[0].is_ascii_digit() {
        return Err(
            "starts with a digit: an environment variable name starts with a letter or '_'".into(),
        );
    }
    Ok(())
}

/// Whether `s` is a POSIX environment variable name.
pub fn is_env_name(s: &str) -> bool {
    check_env_name(s).is_ok()
}

/// A host path of the plan: `{workdir}/...` with no `..` component.
pub fn check_host_path(path: &str) -> Result<(), String> {
    no_nul(path)?;
    bounded(path, MAX_PATH)?;
    let Some(rest) = path.strip_prefix(WORKDIR).and_then(|r| r.strip_prefix('/')) else {
        return Err("is not under the run directory ({workdir})".into());
    };
    if rest.split('/').any(|c| c == "..") {
        return Err("leads out of the run directory (`..`)".into());
    }
    Ok(())
}

/// A path in the container: absolute, no `..` component.
pub fn check_container_path(path: &str) -> Result<(), String> {
    no_nul(path)?;
    bounded(path, MAX_PATH)?;
    if !path.starts_with('/') {
        return Err("is not an absolute path".into());
    }
    if path.split('/').any(|c| c == "..") {
        return Err("contains `..`; write the path without it".into());
    }
    Ok(())
}

/// A file mode: octal digits, at most `0777`.
fn check_mode(mode: &str) -> Result<(), String> {
    match u32::from_str_radix(mode, 8) {
        Ok(m) if m <= 0o777 && !mode.is_empty() => Ok(()),
        Ok(_) => Err(
            "is more than 0777 (set-user-ID, set-group-ID and sticky bits are not written)".into(),
        ),
        Err(_) => Err("is not an octal number like 0644".into()),
    }
}

fn no_nul(s: &str) -> Result<(), String> {
    match s.find('\0') {
        Some(i) => Err(format!(
            "contains a NUL character at byte {i}, which no file name, argument or environment \
             value can hold"
        )),
        None => Ok(()),
    }
}

fn bounded(s: &str, max: usize) -> Result<(), String> {
    if s.len() > max {
        return Err(format!(
            "is {} bytes long: at most {max} are allowed",
            s.len()
        ));
    }
    Ok(())
}

/// What is shown of a value in a message: quoted, and cut when long.
fn shown(s: &str) -> String {
    const MAX: usize = 80;
    if s.len() <= MAX {
        return format!("{s:?}");
    }
    let mut end = MAX - 3;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{:?}… ({} bytes)", &s[..end], s.len())
}

#[derive(Default)]
struct Problems {
    list: Vec<String>,
    more: usize,
}

impl Problems {
    fn check(&mut self, at: &str, what: &str, value: &str, f: impl Fn(&str) -> Result<(), String>) {
        if let Err(why) = f(value) {
            if self.list.len() < MAX_LISTED {
                self.list.push(if what.is_empty() {
                    // The check's message names the value itself.
                    format!("{at}: {why}")
                } else {
                    format!("{at}: the {what} {} {why}", shown(value))
                });
            } else {
                self.more += 1;
            }
        }
    }

    fn into_result(self) -> Result<(), RunError> {
        if self.list.is_empty() {
            return Ok(());
        }
        let mut m = format!(
            "the plan holds names or paths the runner does not use (nothing was started):\n  {}",
            self.list.join("\n  ")
        );
        if self.more > 0 {
            m.push_str(&format!("\n  … and {} more", self.more));
        }
        Err(RunError::Plan(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["train", "job-0", "a", "Job_1.x", "job--1"] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        for (bad, why) in [
            ("", "is empty"),
            ("/tmp/x", "contains '/'"),
            ("../../x", "contains '/'"),
            ("..", "starts with '.'"),
            ("a/../b", "contains '/'"),
            ("-oX", "starts with '-'"),
            ("a b", "contains ' '"),
            ("$(id)", "contains '$'"),
            ("a\0b", "contains '\\0'"),
        ] {
            let e = check_name(bad).expect_err(bad);
            assert!(e.contains(why), "{bad}: {e}");
        }
        assert!(check_name(&"a".repeat(MAX_NAME)).is_ok());
        assert!(check_name(&"a".repeat(MAX_NAME + 1))
            .expect_err("long")
            .contains("at most 200"));
    }

    #[test]
    fn env_names() {
        for ok in ["X", "_x", "NCCL_DEBUG", "a1"] {
            assert!(is_env_name(ok), "{ok}");
        }
        for bad in ["", "1X", "X=1; touch /tmp/p; Y", "A-B", "A B", "É"] {
            assert!(!is_env_name(bad), "{bad}");
        }
    }

    #[test]
    fn paths_and_modes() {
        assert!(check_host_path("{workdir}/files/a/b").is_ok());
        assert!(check_host_path("/tmp/x").is_err());
        assert!(check_host_path("{workdir}/../x").is_err());
        assert!(check_container_path("/data/x").is_ok());
        assert!(check_container_path("data/x").is_err());
        assert!(check_container_path("/data/../../etc/x").is_err());
        assert!(check_mode("0644").is_ok());
        assert!(check_mode("4755").is_err());
        assert!(check_mode("rw").is_err());
        assert!(check_mode("").is_err());
    }
}
