//! Several hosts on one machine for multinode tests (fuzz_test_support::netns): three network
//! namespaces reach each other over a bridge, OpenSSH logs into them, Open MPI and MPICH
//! launch across them through an rsh agent, and nothing is left behind.
//!
//! These need root; without it they print why and pass, unless `FUZZ_REQUIRE_SYSTEM_TESTS` is set.

use fuzz_test_support::system::installed;
use fuzz_test_support::{output_within, require, sorted_lines, Hosts, Sshd};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(60);

fn stdout_of(cmd: &mut Command) -> String {
    let out = output_within(cmd, LIMIT).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({})\nstdout: {}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn has_tool(name: &str) -> Result<(), String> {
    installed(name)
}

/// Sends a line from host `from` to a one-shot `nc -l` on host `to`, and returns what the
/// listener received.
fn send(hosts: &Hosts, from: usize, to: usize, port: u16, line: &str) -> String {
    let addr = hosts.addr(to);
    let mut listener = hosts
        .exec(to, &["nc", "-l", &addr, &port.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start nc -l");
    // The listener needs a moment to bind; retry the connection until it does.
    let deadline = Instant::now() + Duration::from_secs(10);
    let script = format!("echo {line} > /dev/tcp/{addr}/{port}");
    loop {
        let out = output_within(&mut hosts.exec(from, &["bash", "-c", &script]), LIMIT)
            .unwrap_or_else(|e| panic!("{e}"));
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "host {from} cannot connect to {addr}:{port}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let start = Instant::now();
    loop {
        if listener.try_wait().expect("poll nc").is_some() {
            break;
        }
        if start.elapsed() > Duration::from_secs(10) {
            let _ = listener.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = listener.wait_with_output().expect("nc output");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn three_hosts_reach_each_other_and_leave_nothing_behind() {
    if !require(Hosts::available().and_then(|()| has_tool("nc"))) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let tag = hosts.tag().to_string();
    let created: Vec<String> = fuzz_test_support::netns::namespaces()
        .into_iter()
        .filter(|n| n.starts_with(&format!("{tag}-")))
        .collect();
    assert_eq!(
        created.len(),
        4,
        "three hosts and the bridge's: {created:?}"
    );

    for i in 0..3 {
        // Its own address on eth0, its own host name, every host's name resolvable.
        let addrs = stdout_of(&mut hosts.exec(i, &["ip", "-4", "-o", "addr", "show", "eth0"]));
        assert!(
            addrs.contains(&format!("inet {}/24", hosts.addr(i))),
            "host {i}: {addrs}"
        );
        assert_eq!(
            stdout_of(&mut hosts.exec(i, &["hostname"])).trim(),
            format!("node{i}")
        );
        let resolved = stdout_of(&mut hosts.exec(i, &["getent", "hosts", "node2"]));
        assert!(resolved.starts_with(&hosts.addr(2)), "host {i}: {resolved}");
    }
    assert_eq!(send(&hosts, 0, 1, 4100, "hello-from-0"), "hello-from-0");
    assert_eq!(send(&hosts, 0, 2, 4100, "hello-from-0"), "hello-from-0");
    assert_eq!(send(&hosts, 2, 1, 4101, "hello-from-2"), "hello-from-2");
    // A listener left running is killed when the hosts are dropped.
    let mut left = hosts
        .exec(1, &["sleep", "600"])
        .stdin(Stdio::null())
        .spawn()
        .expect("start sleep");

    let names: Vec<String> = (0..3).map(|i| hosts.namespace(i).to_string()).collect();
    drop(hosts);
    let status = left.wait().expect("wait for sleep");
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "the process left in host 1 ends by SIGKILL: {status}"
    );
    let left: Vec<String> = fuzz_test_support::netns::namespaces()
        .into_iter()
        .filter(|n| n.starts_with(&format!("{tag}-")))
        .collect();
    assert!(left.is_empty(), "namespaces left: {left:?}");
    for ns in &names {
        assert!(
            !std::path::Path::new("/etc/netns").join(ns).exists(),
            "/etc/netns/{ns} is left"
        );
    }
    // Nothing was ever added to this namespace's links, and nothing is there now.
    let links = stdout_of(Command::new("ip").args(["-o", "link"]));
    assert!(!links.contains(&tag), "{links}");
}

#[test]
fn ssh_logs_into_every_host() {
    if !require(Hosts::available().and_then(|()| Sshd::available())) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let sshd = Sshd::start(&hosts, 2222).expect("start sshd on each host");
    for (target, name) in [(1, "node1"), (2, "node2")] {
        let argv = sshd.ssh_argv(&hosts.addr(target), &["hostname"]);
        let out = stdout_of(&mut hosts.exec(0, &argv));
        assert_eq!(out.trim(), name, "{}", sshd.server_log(target));
        // By name too, through the hosts' /etc/hosts.
        let argv = sshd.ssh_argv(name, &["ip", "-4", "-o", "addr", "show", "eth0"]);
        let out = stdout_of(&mut hosts.exec(0, &argv));
        assert!(out.contains(&hosts.addr(target)), "{out}");
    }
    // The rsh agent is the same ssh, as mpirun calls it.
    let agent = sshd.rsh_agent().display().to_string();
    let out = stdout_of(&mut hosts.exec(2, &[agent.as_str(), "node0", "echo", "$((6*7))"]));
    assert_eq!(out.trim(), "42");
}

#[test]
fn ssh_on_loopback() {
    if !require(Sshd::available()) {
        return;
    }
    let sshd = Sshd::start_loopback(0).expect("start sshd on loopback");
    let argv = sshd.ssh_argv("127.0.0.1", &["echo", "over-ssh"]);
    let out = stdout_of(Command::new(&argv[0]).args(&argv[1..]));
    assert_eq!(out.trim(), "over-ssh", "{}", sshd.server_log(0));
}

/// Open MPI 4.1 (Debian openmpi-bin) started in host 0, reaching hosts 1 and 2 through the
/// rsh agent: the flags the runner passes when it launches `openmpi` jobs as root.
#[test]
fn open_mpi_launches_across_hosts_through_the_rsh_agent() {
    if !require(
        Hosts::available()
            .and_then(|()| Sshd::available())
            .and_then(|()| has_tool("mpirun.openmpi")),
    ) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let sshd = Sshd::start(&hosts, 22).expect("start sshd on each host");
    let agent = sshd.rsh_agent().display().to_string();
    let subnet = hosts.subnet();
    let host_list = (0..3)
        .map(|i| format!("{}:1", hosts.addr(i)))
        .collect::<Vec<_>>()
        .join(",");
    let argv = [
        "env",
        "OMPI_ALLOW_RUN_AS_ROOT=1",
        "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
        "mpirun.openmpi",
        "--mca",
        "plm_rsh_agent",
        &agent,
        "--mca",
        "plm_rsh_no_tree_spawn",
        "1",
        "--mca",
        "oob_tcp_if_include",
        &subnet,
        "--mca",
        "btl_tcp_if_include",
        &subnet,
        "--host",
        &host_list,
        "-np",
        "3",
        "sh",
        "-c",
        "echo $(hostname) $OMPI_COMM_WORLD_RANK",
    ];
    let out = stdout_of(&mut hosts.exec(0, &argv));
    assert_eq!(
        sorted_lines(&out),
        ["node0 0", "node1 1", "node2 2"],
        "{out}"
    );
}

/// MPICH's Hydra (Debian mpich, beside openmpi-bin) through the same rsh agent.
#[test]
fn mpich_hydra_launches_across_hosts_through_the_rsh_agent() {
    if !require(
        Hosts::available()
            .and_then(|()| Sshd::available())
            .and_then(|()| has_tool("mpiexec.hydra")),
    ) {
        return;
    }
    let hosts = Hosts::create(3).expect("create three hosts");
    let sshd = Sshd::start(&hosts, 22).expect("start sshd on each host");
    let agent = sshd.rsh_agent().display().to_string();
    let host_list = (0..3)
        .map(|i| format!("{}:1", hosts.addr(i)))
        .collect::<Vec<_>>()
        .join(",");
    let argv = [
        "mpiexec.hydra",
        "-launcher",
        "ssh",
        "-launcher-exec",
        &agent,
        "-iface",
        "eth0",
        "-hosts",
        &host_list,
        "-n",
        "3",
        "sh",
        "-c",
        "echo $(hostname) $PMI_RANK",
    ];
    let out = stdout_of(&mut hosts.exec(0, &argv));
    assert_eq!(
        sorted_lines(&out),
        ["node0 0", "node1 1", "node2 2"],
        "{out}"
    );
}

#[test]
fn namespaces_of_ended_test_processes_are_swept() {
    if !require(Hosts::available()) {
        return;
    }
    // Process ids stay below pid_max, so this one belongs to no process.
    let pid_max = std::fs::read_to_string("/proc/sys/kernel/pid_max").expect("pid_max");
    let stale = format!("fuzztest-{}-0-0", pid_max.trim());
    // Another test creating its hosts at the same moment sweeps this stale name too, and may
    // remove it while `ip` is still binding it: try again then.
    let mut added = false;
    for _ in 0..10 {
        let out = output_within(Command::new("ip").args(["netns", "add", &stale]), LIMIT)
            .unwrap_or_else(|e| panic!("{e}"));
        if out.status.success() {
            added = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(added, "cannot create the stale namespace {stale}");
    let hosts = Hosts::create(1).expect("create one host");
    assert!(
        !fuzz_test_support::netns::namespaces().contains(&stale),
        "{stale} is still there"
    );
    drop(hosts);
}
