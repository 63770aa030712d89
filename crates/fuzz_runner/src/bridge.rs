//! Multinode jobs in containers: the helpers inside the container reach the runner outside it.
//!
//! A multinode job on a container runtime (podman) runs its head's command in the job's image,
//! and every node's commands in the job's image too. Inside the head's container there is no
//! `fuzz`, no `ip`, no `ssh` and no `podman`: `exec_all` and `fuzz-multinode-ssh` there are
//! small `sh` scripts ([`client_scripts`], any POSIX shell with `mkfifo`: busybox is enough)
//! that hand their arguments to the **bridge**, a `fuzz __bridge` process outside the
//! container, through a directory bind-mounted into it ([`CONTAINER_DIR`]):
//!
//! 1. the client makes `r.<pid>.<n>/` there, writes `args` (NUL-terminated words) and
//!    `forward` (`MULTINODE_WRAPPER_FORWARD_STREAMS`), makes the FIFOs `alive`, `out` and
//!    `err`, and last writes `verb` (`exec-all` or `ssh`, renamed into place);
//! 2. the bridge sees `verb`, opens `alive` for reading and `out`, `err` for writing, and runs
//!    `fuzz __exec-all ARGS` (or `__multinode-ssh`) outside the container with the job's node
//!    configuration, its output into the FIFOs, which the client copies to its own;
//! 3. the client holds `alive` open for writing while it lives: when it ends, however it ends
//!    (a stopped container, a signal), the bridge reads end-of-file and stops what it started
//!    (SIGTERM; `exec_all` closing its pipes stops every node, see [`crate::multinode`]);
//! 4. when the command ends, the bridge writes its exit code to `rc` and closes the FIFOs; the
//!    client exits with that code.
//!
//! The nodes' commands run in containers of the job's image on their nodes
//! ([`ContainerNodes`]: `podman run --rm -i` with the head's volumes, devices and limits, the
//! node's network, its host name): `exec_all` and the wrapper reach them as they reach nodes
//! on the host runtime (locally, in a network namespace, over ssh or srun), the container's
//! standard input being the pipe whose end stops the command.
//!
//! The bridge runs the head's `podman run` as its child; when that ends, it stops what is left
//! of its requests, removes every container it labelled for the job ([`LABEL`]) and the
//! directory, and exits with the head's exit code. The runner removes the labelled containers
//! again once the head's process group has ended: a stopped job's bridge is signalled with its
//! group and may die before its own removal is done.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The argument that runs the bridge: `fuzz __bridge DIR CONFIG LABEL -- COMMAND...`.
pub const BRIDGE_ARG: &str = "__bridge";

/// Where the bridge's directory is in the head's container.
pub const CONTAINER_DIR: &str = "/.fuzz/bridge";

/// The environment variable that tells the clients where the directory is.
pub const DIR_VAR: &str = "FUZZ_BRIDGE";

/// The label every container of a job's nodes carries: `fuzz.bridge=<run id>-<job>`.
pub const LABEL: &str = "fuzz.bridge";

/// How a job's nodes run in containers: `RUNTIME run --rm -i OPTIONS --name ... IMAGE`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ContainerNodes {
    pub runtime: String,
    pub image: String,
    /// The head's options that every node's container gets too (volumes, devices, limits,
    /// working directory), and the helpers' directory (the nodes' environment files).
    pub options: Vec<String>,
    /// The value of [`LABEL`]: also the prefix of the nodes' container names.
    pub label: String,
    /// Each node is a network namespace of this machine (`--local-netns`): its container
    /// joins it (`--network ns:/run/netns/HOST`) instead of the node's own network.
    pub netns: bool,
}

impl ContainerNodes {
    /// The words that run `inner` in a container of the job's image on node `host`.
    pub fn wrap(&self, host: &str, rank: usize, inner: Vec<String>) -> Vec<String> {
        let ns = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let mut w = vec![
            self.runtime.clone(),
            "run".into(),
            "--rm".into(),
            "-i".into(),
            "--name".into(),
            format!("{}-r{rank}-{}-{ns}", self.label, std::process::id()),
            "--label".into(),
            format!("{LABEL}={}", self.label),
            "--network".into(),
            if self.netns {
                format!("ns:/run/netns/{host}")
            } else {
                "host".into()
            },
            "--hostname".into(),
            host.into(),
        ];
        w.extend(self.options.iter().cloned());
        w.push(self.image.clone());
        w.extend(inner);
        w
    }
}

/// The options of a head's container line (`RUNTIME run OPTIONS... IMAGE`, `prefix` words
/// with the image) that its nodes' containers share, and the image. Its own name, network,
/// `--rm` and environment names are the head's own: the nodes get theirs.
pub fn node_options(argv: &[String], prefix: usize) -> Option<(Vec<String>, String)> {
    let image = argv.get(prefix.checked_sub(1)?)?.clone();
    let opts = argv.get(2..prefix - 1)?;
    let mut out = Vec::new();
    let mut k = 0;
    while k < opts.len() {
        let w = &opts[k];
        match w.as_str() {
            "--rm" => k += 1,
            "--name" | "--network" | "--env" | "--hostname" => k += 2,
            _ => {
                out.push(w.clone());
                k += 1;
            }
        }
    }
    Some((out, image))
}

/// The head's command: `EXE __bridge DIR CONFIG LABEL -- LINE`, with the bridge's directory
/// bind-mounted into its container and named in its environment; with network namespaces,
/// the container joins the head's.
pub fn head_argv(
    exe: &Path,
    dir: &Path,
    config: &Path,
    nodes: &ContainerNodes,
    head_host: &str,
    line: Vec<String>,
) -> Vec<String> {
    let mut out = vec![
        exe.display().to_string(),
        BRIDGE_ARG.into(),
        dir.display().to_string(),
        config.display().to_string(),
        nodes.label.clone(),
        "--".into(),
    ];
    let mut line = line;
    if nodes.netns {
        // The head's node is a network namespace too: its container joins it, and has its
        // name as host name, as every node's container does.
        if let Some(k) = line.iter().position(|w| w == "--network") {
            if let Some(v) = line.get_mut(k + 1) {
                *v = format!("ns:/run/netns/{head_host}");
            }
            line.splice(k..k, ["--hostname".to_owned(), head_host.to_owned()]);
        }
    }
    let at = 2.min(line.len());
    line.splice(
        at..at,
        [
            "--volume".to_owned(),
            format!("{}:{CONTAINER_DIR}", dir.display()),
            "--env".to_owned(),
            format!("{DIR_VAR}={CONTAINER_DIR}"),
        ],
    );
    out.extend(line);
    out
}

/// A container line without the `--device PATH` pairs (among its first `prefix` words) whose
/// device this node does not have (`/dev/infiniband` on a node without InfiniBand, the IMEX
/// channels on a node without IMEX): the plan asks for them where the node has them, and
/// podman refuses to start a container for a missing one. Returns the line, its new prefix
/// length, and the devices left out.
pub fn present_devices(argv: Vec<String>, prefix: usize) -> (Vec<String>, usize, Vec<String>) {
    let mut out = Vec::with_capacity(argv.len());
    let mut absent = Vec::new();
    let mut k = 0;
    while k < argv.len() {
        if k + 1 < prefix && argv[k] == "--device" && argv[k + 1].starts_with('/') {
            let path = argv[k + 1].split(':').next().unwrap_or_default();
            if !Path::new(path).exists() {
                absent.push(path.to_owned());
                k += 2;
                continue;
            }
        }
        out.push(argv[k].clone());
        k += 1;
    }
    let prefix = prefix - 2 * absent.len();
    (out, prefix, absent)
}

/// Where the runtime's program is in an instance's command line: after the bridge's words
/// when the bridge runs it ([`head_argv`]), else first.
pub fn command_at(argv: &[String]) -> usize {
    if argv.get(1).map(String::as_str) == Some(BRIDGE_ARG) {
        6
    } else {
        0
    }
}

/// The helpers of a container job: `exec_all` and `fuzz-multinode-ssh`, clients of the bridge.
pub fn client_scripts(dir: &Path) -> Vec<(PathBuf, String)> {
    vec![
        (dir.join("exec_all"), client("exec_all", "exec-all")),
        (
            dir.join("fuzz-multinode-ssh"),
            client("fuzz-multinode-ssh", "ssh"),
        ),
    ]
}

fn client(name: &str, verb: &str) -> String {
    format!(
        r#"#!/bin/sh
# {name}: asks the runner outside this container to run it (the bridge of `fuzz run`).
b=${{{DIR_VAR}:-{CONTAINER_DIR}}}
[ -d "$b" ] || {{ echo "{name}: $b is missing: this runs inside a multinode job of fuzz run" >&2; exit 255; }}
n=0
while ! mkdir "$b/r.$$.$n" 2>/dev/null; do
  n=$((n+1)); [ "$n" -lt 1000 ] || {{ echo "{name}: cannot write to $b" >&2; exit 255; }}
done
r=$b/r.$$.$n
for a in "$@"; do printf '%s\0' "$a"; done > "$r/args" || exit 255
printf '%s' "${{MULTINODE_WRAPPER_FORWARD_STREAMS:-}}" > "$r/forward"
mkfifo "$r/alive" "$r/out" "$r/err" || exit 255
printf '%s' {verb} > "$r/verb.new" && mv "$r/verb.new" "$r/verb" || exit 255
exec 3>"$r/alive"
cat "$r/out" & o=$!
cat "$r/err" >&2 & e=$!
wait $o; wait $e
rc=255
[ -f "$r/rc" ] && read -r rc < "$r/rc"
rm -rf "$r"
exit "$rc"
"#
    )
}

/// `fuzz __bridge DIR CONFIG LABEL -- COMMAND...`: runs COMMAND (the head's container) and
/// serves the requests of the clients inside it; returns COMMAND's exit code.
pub fn bridge_main(args: &[String]) -> i32 {
    let (Some(dir), Some(config), Some(label), Some("--")) = (
        args.first(),
        args.get(1),
        args.get(2),
        args.get(3).map(String::as_str),
    ) else {
        eprintln!("fuzz __bridge: usage: fuzz __bridge DIR CONFIG LABEL -- COMMAND...");
        return 2;
    };
    let command = &args[4..];
    let Some(program) = command.first() else {
        eprintln!("fuzz __bridge: no command");
        return 2;
    };
    let dir = PathBuf::from(dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("fuzz __bridge: cannot make {}: {e}", dir.display());
        return 125;
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("fuzz __bridge: cannot find its own executable: {e}");
            return 125;
        }
    };
    let mut child = match Command::new(program).args(&command[1..]).spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fuzz __bridge: cannot run {program}: {e}");
            return 127;
        }
    };
    let mut served = std::collections::BTreeSet::new();
    let mut running: Vec<std::thread::JoinHandle<()>> = Vec::new();
    let pids = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u32>::new()));
    let code = loop {
        if let Ok(Some(s)) = child.try_wait() {
            break exit_code(s);
        }
        if let Ok(entries) = std::fs::read_dir(&dir) {
            for e in entries.flatten() {
                let req = e.path();
                if served.contains(&req) || !req.join("verb").is_file() {
                    continue;
                }
                served.insert(req.clone());
                let (exe, config, pids) = (exe.clone(), PathBuf::from(config), pids.clone());
                running.push(std::thread::spawn(move || {
                    serve(&exe, &config, &req, &pids)
                }));
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // The head ended: what its requests still run ends with it.
    let left: Vec<u32> = pids.lock().map(|p| p.clone()).unwrap_or_default();
    for pid in left {
        terminate(pid);
    }
    remove_containers(program, label);
    let _ = std::fs::remove_dir_all(&dir);
    code
}

fn exit_code(s: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))
}

fn terminate(pid: u32) {
    if let Ok(p) = i32::try_from(pid) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(p),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
}

/// Removes the containers of a job's nodes that are still there (none, when every request
/// ended by itself), by their label `label`, with the container runtime `runtime`.
pub fn remove_containers(runtime: &str, label: &str) {
    let Ok(out) = Command::new(runtime)
        .args(["ps", "-aq", "--filter"])
        .arg(format!("label={LABEL}={label}"))
        .stderr(Stdio::null())
        .output()
    else {
        return;
    };
    let ids: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_owned)
        .collect();
    if !ids.is_empty() {
        let _ = Command::new(runtime)
            .args(["rm", "-f", "-t", "0"])
            .args(&ids)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    // A removed container's monitor (podman's `conmon`, its command line naming the
    // container) and its last processes may outlive `rm` for a moment: wait for them, bounded.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < deadline && !processes_naming(label).is_empty() {
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The processes of this node whose command line holds `text`.
fn processes_naming(text: &str) -> Vec<u32> {
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let me = std::process::id();
    rd.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
        .filter(|&p| p != me)
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| c.windows(text.len()).any(|w| w == text.as_bytes()))
        })
        .collect()
}

/// One request: runs it outside the container, its output into the client's FIFOs.
fn serve(exe: &Path, config: &Path, req: &Path, pids: &std::sync::Mutex<Vec<u32>>) {
    let verb = std::fs::read_to_string(req.join("verb")).unwrap_or_default();
    let sub = match verb.as_str() {
        "exec-all" => "__exec-all",
        "ssh" => "__multinode-ssh",
        _ => return,
    };
    let args: Vec<String> = std::fs::read(req.join("args"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .map(|w| String::from_utf8_lossy(w).into_owned())
        .collect();
    // `printf '%s\0'` ends every word with NUL: the last piece is empty.
    let args = match args.split_last() {
        Some((last, rest)) if last.is_empty() => rest.to_vec(),
        _ => args,
    };
    let forward = std::fs::read_to_string(req.join("forward")).unwrap_or_default();
    // Opened in the client's order: `alive` (which it opens first), then `out` and `err`.
    let Ok(mut alive) = File::open(req.join("alive")) else {
        return;
    };
    let open_w = |n: &str| std::fs::OpenOptions::new().write(true).open(req.join(n));
    let (Ok(out), Ok(err)) = (open_w("out"), open_w("err")) else {
        return;
    };
    let mut cmd = Command::new(exe);
    cmd.arg(sub)
        .args(&args)
        .env("FUZZ_MULTINODE_CONFIG", config)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    if forward.is_empty() {
        cmd.env_remove("MULTINODE_WRAPPER_FORWARD_STREAMS");
    } else {
        cmd.env("MULTINODE_WRAPPER_FORWARD_STREAMS", forward);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(_) => {
            write_rc(req, 127);
            return;
        }
    };
    let pid = child.id();
    if let Ok(mut p) = pids.lock() {
        p.push(pid);
    }
    // The client's end: end-of-file on `alive` while the command runs stops it.
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let mut buf = [0u8; 64];
        while matches!(alive.read(&mut buf), Ok(n) if n > 0) {}
        let _ = tx.send(());
    });
    let mut stopped = false;
    let code = loop {
        match child.try_wait() {
            Ok(Some(s)) => break exit_code(s),
            Err(_) => break 255,
            Ok(None) => {}
        }
        if !stopped && rx.try_recv().is_ok() {
            stopped = true;
            terminate(pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    if let Ok(mut p) = pids.lock() {
        p.retain(|x| *x != pid);
    }
    write_rc(req, code);
}

fn write_rc(req: &Path, code: i32) {
    let tmp = req.join("rc.new");
    if std::fs::write(&tmp, format!("{code}\n")).is_ok() {
        let _ = std::fs::rename(&tmp, req.join("rc"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_the_node_lacks_are_left_out() {
        let line: Vec<String> = [
            "podman",
            "run",
            "--device",
            "/dev/null",
            "--device",
            "/dev/fuzz-absent-device",
            "--device",
            "nvidia.com/gpu=all",
            "img",
            "--device",
            "/dev/fuzz-absent-device",
        ]
        .map(String::from)
        .to_vec();
        let (argv, prefix, absent) = present_devices(line, 9);
        assert_eq!(absent, ["/dev/fuzz-absent-device"]);
        assert_eq!(prefix, 7);
        assert_eq!(
            argv,
            [
                "podman",
                "run",
                "--device",
                "/dev/null",
                "--device",
                "nvidia.com/gpu=all",
                "img",
                "--device",
                "/dev/fuzz-absent-device"
            ]
        );
    }

    #[test]
    fn nodes_share_the_heads_volumes_and_limits_but_not_its_name_or_network() {
        let line: Vec<String> = [
            "podman",
            "run",
            "--rm",
            "--name",
            "fuzz-r-h0",
            "--network",
            "host",
            "--env",
            "A",
            "--workdir",
            "/w",
            "--volume",
            "/x:/y",
            "--ulimit",
            "host",
            "img",
            "cmd",
        ]
        .map(String::from)
        .to_vec();
        let (opts, image) = node_options(&line, 16).expect("options");
        assert_eq!(image, "img");
        assert_eq!(
            opts,
            ["--workdir", "/w", "--volume", "/x:/y", "--ulimit", "host"]
        );
    }
}
