//! `fuzz run` of multinode jobs on three real hosts: network namespaces with their own
//! addresses and host names (fuzz_test_support::netns), an OpenSSH server on each, the runner
//! started on host 0 (the head) with `--launcher ssh`. A generic job's `exec_all` reaches
//! every node with its `RANK`; a failing rank stops the others on every node; Open MPI starts
//! its daemons through the runner's SSH wrapper.
//!
//! These need root, iproute2, OpenSSH and Open MPI (scripts/ci-packages.txt); without them
//! they print why and pass, unless `FUZZ_REQUIRE_SYSTEM_TESTS` is set.

use fuzz_test_support::fake_node::{install_stand_in, path_with_first, write_with_mode, FileMode};
use fuzz_test_support::process::processes_matching;
use fuzz_test_support::{fuzz_binary, multinode_fuzzfile, output_within, require, said_lines};
use fuzz_test_support::{FuzzRunFlags, Hosts, NodeLauncher, ScratchDirectory, Sshd};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

fn scratch(name: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzz-multinode", name)
}

/// A generic multinode job of three nodes running `script` on its head.
fn multinode_job(script: &str, implementation: &str) -> String {
    multinode_fuzzfile(3, implementation, script, "")
}

/// `fuzz run FILE` on host 0 with the three hosts and the test's ssh client configuration.
fn run_on_head(hosts: &Hosts, sshd: &Sshd, file: &Path, dir: &Path) -> (i32, String, String) {
    run_on_head_with(hosts, sshd, file, dir, &[])
}

fn run_on_head_with(
    hosts: &Hosts,
    sshd: &Sshd,
    file: &Path,
    dir: &Path,
    env: &[(&str, &str)],
) -> (i32, String, String) {
    let mut argv = hosts.fuzz_run_on_every_host_command_line(
        &fuzz_binary!(),
        file,
        &dir.join("run"),
        NodeLauncher::Ssh {
            client_config: &sshd.client_config(),
        },
    );
    argv.extend(["--grace", "1"].map(OsString::from));
    let mut cmd = hosts.exec(0, &argv);
    cmd.envs(env.iter().copied());
    let out = output_within(&mut cmd, LIMIT).unwrap_or_else(|e| panic!("{e}"));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `fuzz run FILE --status never --workdir DIR/run`, the rest of the flags the caller's.
fn fuzz_run(file: &Path, dir: &Path) -> Command {
    fuzz_binary!().fuzz_run_command(
        file,
        &dir.join("run"),
        FuzzRunFlags::RUNTIME_NOT_GIVEN_WITHOUT_STATUS_LINE,
    )
}

#[test]
fn exec_all_runs_on_every_host_with_its_rank() {
    if !require(Hosts::available().and_then(|()| Sshd::available())) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let sshd = Sshd::start(&hosts, 22).expect("start sshd on each host");
    let d = scratch("exec-all");
    let f = d.write_file(
        "gen.fz",
        multinode_job(
            "echo \"head ip=$MULTINODE_NODE_IP list=$MULTINODE_HOSTLIST\"\nexec_all sh -c 'echo \"node-says rank=$RANK arg=$0 host=$(hostname) head=$1\"' '$RANK' \"$MULTINODE_NODE_IP\"",
            "generic",
        ),
    );
    let (code, so, se) = run_on_head(&hosts, &sshd, &f, &d);
    assert_eq!(code, 0, "{so}\n{se}");
    let head = hosts.addr(0);
    assert!(
        so.contains(&format!("head ip={head} list=node0:1,node1:1,node2:1")),
        "{so}"
    );
    // `$RANK` in a word becomes each node's rank; `$MULTINODE_NODE_IP` keeps the head's.
    let said = said_lines(&so, "node-says");
    assert_eq!(
        said,
        (0..3)
            .map(|r| format!("node-says rank={r} arg={r} host=node{r} head={head}"))
            .collect::<Vec<_>>(),
        "{so}\n{se}"
    );
    // Each member node's output is also in its own log file.
    let log = std::fs::read_to_string(d.join("run/logs/train-2.out")).expect("node 2's log");
    assert!(log.contains("host=node2"), "{log}");
}

#[test]
fn a_failing_rank_stops_every_other_node() {
    if !require(Hosts::available().and_then(|()| Sshd::available())) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let sshd = Sshd::start(&hosts, 22).expect("start sshd on each host");
    let d = scratch("gang");
    let marker = format!("gang-{}", std::process::id());
    let f = d.write_file(
        "gang.fz",
        multinode_job(
            &format!(
                "exec_all sh -c 'if [ \"$RANK\" = 2 ]; then sleep 1; exit 3; fi; trap \"\" TERM; exec sleep 300 # {marker}'"
            ),
            "generic",
        ),
    );
    let (code, so, se) = run_on_head(&hosts, &sshd, &f, &d);
    assert_eq!(code, 1, "{so}\n{se}");
    assert!(
        se.contains("node node2 (rank 2) exited with code 3 first"),
        "the summary must name the node, rank and code: {se}"
    );
    // Nothing of the job is left on any host (they share this machine's process table).
    let left = processes_matching(&marker);
    assert!(left.is_empty(), "processes left: {left}");
}

#[test]
fn open_mpi_reaches_every_node_through_the_ssh_wrapper() {
    let has_mpirun = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("mpirun.openmpi").is_file()))
        .unwrap_or(false);
    if !require(
        Hosts::available()
            .and_then(|()| Sshd::available())
            .and_then(|()| {
                if has_mpirun {
                    Ok(())
                } else {
                    Err("mpirun.openmpi is not installed (openmpi-bin)".into())
                }
            }),
    ) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let sshd = Sshd::start(&hosts, 22).expect("start sshd on each host");
    let d = scratch("ompi");
    let f = d.join("ompi.fz");
    let subnet = hosts.subnet();
    // Fuzzball wraps the command in mpirun with the host list and the SSH wrapper as the rsh
    // agent; the environment carries what a root run and these hosts need.
    let text = multinode_job("echo \"ompi-says $(hostname) $OMPI_COMM_WORLD_RANK\"", "openmpi")
        .replace(
            "    resource:",
            &format!("    env:\n      - OMPI_ALLOW_RUN_AS_ROOT=1\n      - OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1\n      - OMPI_MCA_plm_rsh_no_tree_spawn=1\n      - OMPI_MCA_oob_tcp_if_include={subnet}\n      - OMPI_MCA_btl_tcp_if_include={subnet}\n    resource:"),
        );
    std::fs::write(&f, text).expect("write Fuzzfile");
    let (code, so, se) = run_on_head(&hosts, &sshd, &f, &d);
    assert_eq!(code, 0, "{so}\n{se}");
    let said = said_lines(&so, "ompi-says");
    assert_eq!(
        said,
        [
            "ompi-says node0 0",
            "ompi-says node1 1",
            "ompi-says node2 2"
        ],
        "{so}\n{se}"
    );
    // A failing rank: mpirun stops the others, and the summary names the rank and its node.
    let marker = format!("ompi-gang-{}", std::process::id());
    let failing = std::fs::read_to_string(&f).expect("read").replace(
        "echo \"ompi-says $(hostname) $OMPI_COMM_WORLD_RANK\"",
        &format!("if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then exit 4; fi; sleep 300 # {marker}"),
    );
    std::fs::write(&f, failing).expect("write Fuzzfile");
    let (code, so, se) = run_on_head(&hosts, &sshd, &f, &d);
    assert_eq!(code, 1, "{so}\n{se}");
    assert!(se.contains("exit 4"), "{so}\n{se}");
    // Open MPI names the first failed process in most runs, not all (its report can be cut
    // short by the abort); when it does, the summary must say which rank and node.
    if se.contains("The first process to do so was") {
        assert!(
            se.contains("MPI rank 1 on node node1 exited with code 4 first"),
            "{so}\n{se}"
        );
    }
    // mpirun stopped the ranks on every node.
    let left = processes_matching(&marker);
    assert!(left.is_empty(), "left: {left}");
}

/// A host whose address cannot be found is refused before anything starts (exit 2); a node
/// that cannot be reached fails the job at once with ssh's own reason, never a prompt.
#[test]
fn unknown_and_unreachable_hosts_fail_with_the_reason() {
    if !require(if fuzz_test_support::system::on_path("ssh") {
        Ok(())
    } else {
        Err("ssh is not installed (openssh-client)".into())
    }) {
        return;
    }
    let d = scratch("unreachable");
    let f = d.write_file(
        "two.fz",
        multinode_job("exec_all true", "generic").replace("nodes: 3", "nodes: 2"),
    );
    // Nothing listens on port 1: the connection is refused at once.
    let ssh_config = d.join("ssh_config");
    std::fs::write(&ssh_config, "Port 1\nConnectTimeout 5\n").expect("ssh config");
    let run = |hosts: &str| {
        let out = output_within(
            fuzz_run(&f, &d)
                .args(["--runtime", "host"])
                .args(["--hosts", hosts, "--launcher", "ssh", "--ssh-config"])
                .arg(&ssh_config),
            LIMIT,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, se) = run("localhost,no-such-host.invalid");
    assert_eq!(code, Some(2), "{se}");
    assert!(
        se.contains("cannot resolve the address of host `no-such-host.invalid`"),
        "{se}"
    );
    let (code, se) = run("localhost,127.0.0.2");
    assert_eq!(code, Some(1), "{se}");
    assert!(
        se.contains("node 127.0.0.2 (rank 1) exited with code 255 first"),
        "{se}"
    );
    assert!(se.contains("Connection refused"), "ssh's reason: {se}");
}

/// MPICH's Hydra starts its proxies through the runner's SSH wrapper (`-launcher-exec`), as
/// the `mpich` implementation's launcher line says. `mpiexec` is MPICH's here (Debian may
/// point it at Open MPI's when both are installed).
#[test]
fn mpich_reaches_every_node_through_the_ssh_wrapper() {
    let hydra = PathBuf::from("/usr/bin/mpiexec.hydra");
    if !require(
        Hosts::available()
            .and_then(|()| Sshd::available())
            .and_then(|()| {
                if hydra.exists() {
                    Ok(())
                } else {
                    Err("mpiexec.hydra is not installed (mpich)".into())
                }
            }),
    ) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let sshd = Sshd::start(&hosts, 22).expect("start sshd on each host");
    let d = scratch("mpich");
    let bin = d.join("bin");
    // A script, not a link: Hydra finds its proxy beside the path it was started by.
    install_stand_in(
        &bin,
        "mpiexec",
        &format!("#!/bin/sh\nexec {} \"$@\"\n", hydra.display()),
    );
    let f = d.join("mpich.fz");
    let text = multinode_job("echo \"mpich-says $(hostname) $PMI_RANK\"", "mpich").replace(
        "    resource:",
        "    env:\n      - HYDRA_IFACE=eth0\n    resource:",
    );
    std::fs::write(&f, text).expect("write Fuzzfile");
    let path = path_with_first(&bin);
    let (code, so, se) = run_on_head_with(&hosts, &sshd, &f, &d, &[("PATH", &path)]);
    assert_eq!(code, 0, "{so}\n{se}");
    let said = said_lines(&so, "mpich-says");
    assert_eq!(
        said,
        [
            "mpich-says node0 0",
            "mpich-says node1 1",
            "mpich-says node2 2"
        ],
        "{so}\n{se}"
    );
}

/// A node that never starts (here a stand-in `ssh` that hangs for one host) fails the job after
/// the start-up timeout, with a message naming it; the other node is stopped.
#[test]
fn a_hung_start_up_fails_naming_the_nodes_that_never_reported() {
    let d = scratch("hung");
    let bin = d.join("bin");
    install_stand_in(&bin, "ssh", "#!/bin/sh\nexec sleep 301\n");
    let f = d.write_file(
        "two.fz",
        multinode_job("exec_all sleep 37", "generic").replace("nodes: 3", "nodes: 2"),
    );
    let path = path_with_first(&bin);
    let out = output_within(
        fuzz_run(&f, &d)
            .args([
                "--runtime",
                "host",
                "--grace",
                "1",
                "--startup-timeout",
                "1",
            ])
            .args(["--hosts", "localhost,127.0.0.2", "--launcher", "ssh"])
            .env("PATH", path),
        LIMIT,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let se = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(
        se.contains("start-up timed out after 1 s: never reported: 127.0.0.2 (rank 1)"),
        "{se}"
    );
    // Neither the head's command nor the hung connection is left.
    let left = processes_matching("^sleep (37|301)$");
    assert!(left.is_empty(), "left: {left}");
}

/// `--launcher local --local-netns`: every node on this machine, each in the network namespace
/// named by its host, so each has its own address; MULTINODE_NODE_IP is the head's.
#[test]
fn local_nodes_in_network_namespaces_have_their_own_addresses() {
    if !require(Hosts::available()) {
        return;
    }
    let hosts = Hosts::create(2).expect("create two hosts");
    let d = scratch("local-netns");
    let f = d.write_file(
        "local.fz",
        multinode_job(
            "exec_all sh -c 'echo \"netns-says rank=$RANK head=$0 own=$(ip -4 -o addr show scope global | awk \"{print \\$4}\" | cut -d/ -f1)\"' \"$MULTINODE_NODE_IP\"",
            "generic",
        )
        .replace("nodes: 3", "nodes: 2"),
    );
    let argv = hosts.fuzz_run_on_every_host_command_line(
        &fuzz_binary!(),
        &f,
        &d.join("run"),
        NodeLauncher::LocalNetworkNamespaces,
    );
    let out = output_within(&mut hosts.exec(0, &argv), LIMIT).unwrap_or_else(|e| panic!("{e}"));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    let said = said_lines(&so, "netns-says");
    let (a0, a1) = (hosts.addr(0), hosts.addr(1));
    assert_eq!(
        said,
        [
            format!("netns-says rank=0 head={a0} own={a0}"),
            format!("netns-says rank=1 head={a0} own={a1}"),
        ],
        "{so}\n{se}"
    );
}

/// With `--runtime auto` on a node whose container runtime cannot run multinode jobs
/// (apptainer: not yet), a plan with multinode jobs runs on the host runtime and says so; with
/// no hosts given, every node is this machine.
#[test]
fn auto_runtime_runs_multinode_jobs_on_the_host_locally_where_apptainer_is_found() {
    let d = scratch("auto");
    let bin = d.join("bin");
    install_stand_in(
        &bin,
        "apptainer",
        "#!/bin/sh\necho apptainer must not run >&2\nexit 99\n",
    );
    let f = d.write_file(
        "local.fz",
        multinode_job("exec_all sh -c 'echo \"auto-says $RANK\"'", "generic"),
    );
    let path = path_with_first(&bin);
    let out = output_within(
        fuzz_run(&f, &d).arg("--forward-streams").env("PATH", path),
        LIMIT,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(
        se.contains("runtime host: the plan has multinode jobs, which run in podman containers or on the host runtime (apptainer"),
        "{se}"
    );
    let said = said_lines(&so, "auto-says");
    assert_eq!(said, ["auto-says 0", "auto-says 1", "auto-says 2"], "{so}");
}

/// With `--runtime auto` where podman is the runtime found, a plan with multinode jobs runs in
/// podman containers (through the bridge, docs/multinode.md): the runner calls podman (here a
/// stand-in that fails) and never runs the job on the host.
#[test]
fn auto_runtime_runs_multinode_jobs_in_podman_where_podman_is_found() {
    let d = scratch("auto-podman");
    let bin = d.join("bin");
    install_stand_in(
        &bin,
        "podman",
        "#!/bin/sh\necho \"stand-in podman ran: $*\" >&2\nexit 97\n",
    );
    let f = d.write_file(
        "local.fz",
        multinode_job("exec_all sh -c 'echo \"auto-says $RANK\"'", "generic"),
    );
    let out = output_within(
        fuzz_run(&f, &d)
            .arg("--forward-streams")
            .env("PATH", path_with_first(&bin)),
        LIMIT,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(se.contains("fuzz run: runtime podman"), "{se}");
    assert!(!se.contains("the plan has multinode jobs"), "{se}");
    assert!(se.contains("stand-in podman ran"), "{se}");
    assert_ne!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(said_lines(&so, "auto-says").is_empty(), "{so}");
}

/// A secret in a multinode job's environment reaches every node, and no process's command
/// line shows it (the nodes source their environment from files of the run directory), with
/// node 1 reached over ssh (an sshd on loopback) for as long as it runs.
#[test]
fn secrets_reach_every_node_and_no_command_line() {
    if !require(Sshd::available()) {
        return;
    }
    let sshd = Sshd::start_loopback(0).expect("sshd on loopback");
    let d = scratch("secret");
    let secrets = d.join("secrets.toml");
    let value = format!("s3cr3t-{}", std::process::id());
    write_with_mode(
        &secrets,
        &format!("[user]\ntok = \"{value}\"\n"),
        FileMode::OwnerOnly,
    );
    let started = d.join("started");
    let f = d.write_file(
        "secret.fz",
        multinode_job(
            &format!(
                "exec_all sh -c 'touch {s}.$RANK; sleep 2; echo \"secret-says $RANK ${{#TOKEN}}\"'",
                s = started.display()
            ),
            "generic",
        )
        .replace("nodes: 3", "nodes: 2")
        .replace(
            "    resource:",
            "    env:\n      - TOKEN=secret://user/tok\n    resource:",
        ),
    );
    let child = fuzz_run(&f, &d)
        .args([
            "--runtime",
            "host",
            "--forward-streams",
            "--hosts",
            "localhost,127.0.0.1",
            "--launcher",
            "ssh",
            "--ssh-config",
        ])
        .arg(sshd.client_config())
        .arg("--secrets")
        .arg(&secrets)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn fuzz");
    // While both nodes run, look at every command line on the machine.
    let deadline = std::time::Instant::now() + LIMIT;
    while !(0..2).all(|r| started.with_extension(r.to_string()).exists()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the nodes never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut shown = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        if let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmdline).contains(&value) {
                shown.push(String::from_utf8_lossy(&cmdline).replace('\0', " "));
            }
        }
    }
    let out = child.wait_with_output().expect("wait");
    let (so, se) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        shown.is_empty(),
        "the secret is on a command line: {shown:?}"
    );
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    let said = said_lines(&so, "secret-says");
    let n = value.len();
    assert_eq!(
        said,
        [format!("secret-says 0 {n}"), format!("secret-says 1 {n}")],
        "{so}"
    );
}

/// `--events` gets each node's start and end from `exec_all`, and the gang stop, in the same
/// file as the runner's own events (local nodes; no root needed).
#[test]
fn node_events_join_the_runs_events() {
    let d = scratch("events");
    let f = d.write_file(
        "ev.fz",
        multinode_job(
            "exec_all sh -c 'if [ \"$RANK\" = 2 ]; then sleep 1; exit 5; fi; exec sleep 30'",
            "generic",
        ),
    );
    let events = d.join("events.jsonl");
    let out = output_within(
        fuzz_run(&f, &d)
            .args(["--runtime", "host", "--grace", "1", "--events"])
            .arg(&events),
        LIMIT,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ev: Vec<serde_json::Value> = std::fs::read_to_string(&events)
        .expect("events")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let of = |kind: &str| -> Vec<&serde_json::Value> {
        ev.iter().filter(|e| e["event"] == kind).collect()
    };
    let mut started: Vec<u64> = of("node_started")
        .iter()
        .filter_map(|e| e["rank"].as_u64())
        .collect();
    started.sort();
    assert_eq!(started, [0, 1, 2], "{ev:?}");
    let gang = of("gang_stopped");
    assert_eq!(gang.len(), 1, "{ev:?}");
    assert_eq!(
        (gang[0]["rank"].as_u64(), gang[0]["exit_code"].as_i64()),
        (Some(2), Some(5))
    );
    assert_eq!(of("node_finished").len(), 3, "{ev:?}");
    // The runner's own events are all there around them.
    let kinds: Vec<&str> = ev.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(kinds.first(), Some(&"plan_ready"), "{kinds:?}");
    let at = |k: &str| kinds.iter().position(|x| *x == k).unwrap_or(usize::MAX);
    assert!(at("job_started") < at("node_started"), "{kinds:?}");
    assert!(at("gang_stopped") < at("job_finished"), "{kinds:?}");
}

/// A job whose `cwd` is a volume (the usual shape: scripts and data in a scratch volume) starts
/// on every node in that volume's directory, and what the nodes write there is shared.
#[test]
fn every_node_starts_in_the_volume_that_is_the_cwd() {
    let d = scratch("cwd");
    let f = d.write_file(
        "cwd.fz",
        multinode_job(
            "exec_all sh -c 'echo \"rank $RANK\" > node-$RANK.txt'",
            "generic",
        )
        .replace("nodes: 3", "nodes: 2")
        .replace(
            "    resource:",
            "    cwd: /scratch\n    mounts:\n      /scratch: scratch\n    resource:",
        )
        .replace(
            "jobs:\n",
            "volumes:\n  scratch:\n    use: ephemeral\njobs:\n",
        ),
    );
    let out = output_within(
        fuzz_run(&f, &d).args(["--runtime", "host", "--keep"]),
        LIMIT,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let se = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{se}");
    let vol = d.join("run/volumes/scratch");
    for r in 0..2 {
        let t = std::fs::read_to_string(vol.join(format!("node-{r}.txt")))
            .unwrap_or_else(|e| panic!("node {r} did not write into the volume: {e}\n{se}"));
        assert_eq!(t, format!("rank {r}\n"));
    }
}
