//! Hosts for multinode tests on one machine.
//!
//! [`Hosts::create`] makes `n` network namespaces, each joined to a bridge by a veth pair and
//! given its own address, `10.X.Y.(i+1)/24`, and its own host name, `node<i>` (set in a UTS
//! namespace by [`Hosts::exec`]; `/etc/hosts` inside the namespace maps every `node<i>` to its
//! address). The bridge lives in a namespace of its own, so nothing is added to the machine's
//! own network namespace: the hosts reach each other and nothing else, and their subnet cannot
//! clash with the machine's networks (it still differs between runs, so that two runs are
//! never confused in a log). Dropping [`Hosts`] kills whatever still runs in the namespaces and
//! deletes them (and with them the veth pairs and the bridge), and their `/etc/netns`
//! directories. Namespaces left by a test process that no longer exists are removed by the
//! next [`Hosts::create`].
//!
//! [`Sshd`] starts a real OpenSSH server on each host (or on loopback), with a host key and a
//! client key generated for the run, and writes the client configuration for `ssh -F`
//! (batch mode, no known-hosts file). Dropping it kills the servers and removes their files.
//!
//! Names: namespaces are `fuzztest-<pid>-<seq>-<i>` and `fuzztest-<pid>-<seq>-sw` (the bridge's), so
//! concurrent tests and concurrent test processes never share one.
//!
//! Needs root, `ip` (iproute2), `unshare` (util-linux); `Sshd` needs openssh-server and
//! openssh-client. Tests call [`crate::require`] with the result of [`Hosts::available`]: it prints
//! the reason and skips, unless `FUZZ_REQUIRE_SYSTEM_TESTS` is set (CI), where it fails.

use std::ffi::OsStr;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub use crate::system::{is_root, on_path};

static SEQ: AtomicU32 = AtomicU32::new(0);

const PREFIX: &str = "fuzztest-";

fn run_ip(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `ip {}`: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The names of the network namespaces `ip netns list` shows.
pub fn namespaces() -> Vec<String> {
    run_ip(&["netns", "list"])
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn kill_all_in(ns: &str) {
    if let Ok(pids) = run_ip(&["netns", "pids", ns]) {
        for pid in pids
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

fn delete_namespace(ns: &str) {
    kill_all_in(ns);
    let _ = run_ip(&["netns", "del", ns]);
    let _ = fs::remove_dir_all(Path::new("/etc/netns").join(ns));
}

/// Removes namespaces (and `/etc/netns` directories) of test processes that have ended.
fn sweep_stale() {
    let mut names = namespaces();
    if let Ok(dir) = fs::read_dir("/etc/netns") {
        names.extend(
            dir.flatten()
                .filter_map(|e| e.file_name().into_string().ok()),
        );
    }
    for name in names {
        let Some(rest) = name.strip_prefix(PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            delete_namespace(&name);
        }
    }
}

/// `n` hosts in network namespaces on one bridge. See the module documentation.
pub struct Hosts {
    tag: String,
    subnet: [u8; 3],
    namespaces: Vec<String>,
    switch: Option<String>,
}

impl Hosts {
    /// Why hosts cannot be created here, if they cannot: not root, no `ip` or `unshare`, or
    /// network namespaces not permitted (a container without CAP_SYS_ADMIN).
    pub fn available() -> Result<(), String> {
        // Probed once per test process; concurrent tests share the answer.
        static PROBE: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
        PROBE.get_or_init(Hosts::probe).clone()
    }

    fn probe() -> Result<(), String> {
        if !is_root() {
            return Err("network namespaces need root (this test runs as another user)".into());
        }
        for tool in ["ip", "unshare"] {
            if !on_path(tool) {
                return Err(format!(
                    "`{tool}` is not installed (Debian: {}); see scripts/ci-packages.txt",
                    if tool == "ip" {
                        "iproute2"
                    } else {
                        "util-linux"
                    }
                ));
            }
        }
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let probe = format!("{PREFIX}{}-{seq}-probe", std::process::id());
        run_ip(&["netns", "add", &probe])
            .map_err(|e| format!("cannot create a network namespace: {e}"))?;
        let up = run_ip(&["-n", &probe, "link", "add", "br0", "type", "bridge"]);
        delete_namespace(&probe);
        up.map_err(|e| format!("cannot create a bridge in a network namespace: {e}"))?;
        Ok(())
    }

    /// Creates `n` hosts (1 ..= 253).
    pub fn create(n: usize) -> Result<Hosts, String> {
        if n == 0 || n > 253 {
            return Err(format!("{n} hosts: between 1 and 253 fit in one /24"));
        }
        sweep_stale();
        let pid = std::process::id();
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let mix = pid.wrapping_mul(64).wrapping_add(seq);
        let mut hosts = Hosts {
            tag: format!("{PREFIX}{pid}-{seq}"),
            subnet: [10, 100 + ((mix >> 8) % 150) as u8, (mix % 256) as u8],
            namespaces: Vec::new(),
            switch: None,
        };
        // On any error below, dropping `hosts` removes what was made so far.
        let sw = format!("{}-sw", hosts.tag);
        run_ip(&["netns", "add", &sw])?;
        hosts.switch = Some(sw.clone());
        run_ip(&["-n", &sw, "link", "add", "br0", "type", "bridge"])?;
        run_ip(&["-n", &sw, "link", "set", "br0", "up"])?;
        let etc_hosts = hosts.etc_hosts(n);
        for i in 0..n {
            let ns = format!("{}-{i}", hosts.tag);
            run_ip(&["netns", "add", &ns])?;
            hosts.namespaces.push(ns.clone());
            let port = format!("p{i}");
            run_ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            run_ip(&[
                "link", "add", &port, "netns", &sw, "type", "veth", "peer", "name", "eth0",
                "netns", &ns,
            ])?;
            run_ip(&["-n", &sw, "link", "set", &port, "master", "br0", "up"])?;
            let cidr = format!("{}/24", hosts.addr(i));
            run_ip(&["-n", &ns, "addr", "add", &cidr, "dev", "eth0"])?;
            run_ip(&["-n", &ns, "link", "set", "eth0", "up"])?;
            // `ip netns exec` bind-mounts /etc/netns/<ns>/hosts over /etc/hosts.
            let etc = Path::new("/etc/netns").join(&ns);
            fs::create_dir_all(&etc).map_err(|e| format!("create {}: {e}", etc.display()))?;
            fs::write(etc.join("hosts"), &etc_hosts)
                .map_err(|e| format!("write {}/hosts: {e}", etc.display()))?;
        }
        Ok(hosts)
    }

    fn etc_hosts(&self, n: usize) -> String {
        let mut text = String::from("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n");
        for i in 0..n {
            text.push_str(&format!("{}\t{}\n", self.addr(i), self.host_name(i)));
        }
        text
    }

    pub fn len(&self) -> usize {
        self.namespaces.len()
    }

    pub fn is_empty(&self) -> bool {
        self.namespaces.is_empty()
    }

    /// `fuzztest-<pid>-<seq>`: every namespace of these hosts starts with it.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// The network namespace of host `i`.
    pub fn namespace(&self, i: usize) -> &str {
        &self.namespaces[i]
    }

    /// The address of host `i`: `10.X.Y.(i+1)`.
    pub fn addr(&self, i: usize) -> String {
        let [a, b, c] = self.subnet;
        format!("{a}.{b}.{c}.{}", i + 1)
    }

    /// All addresses, in order.
    pub fn addrs(&self) -> Vec<String> {
        (0..self.len()).map(|i| self.addr(i)).collect()
    }

    /// `10.X.Y.0/24`, for `--mca btl_tcp_if_include` and the like.
    pub fn subnet(&self) -> String {
        let [a, b, c] = self.subnet;
        format!("{a}.{b}.{c}.0/24")
    }

    /// The host name of host `i` (`node<i>`), as `hostname` prints it there and as
    /// `/etc/hosts` there resolves it.
    pub fn host_name(&self, i: usize) -> String {
        format!("node{i}")
    }

    /// A command that runs `argv` on host `i`: in its network namespace, in a UTS namespace
    /// of its own with the host name set, with `/etc/hosts` naming every host.
    pub fn exec<S: AsRef<OsStr>>(&self, i: usize, argv: &[S]) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", self.namespace(i)])
            .args(["unshare", "--uts", "--", "sh", "-c"])
            .arg(r#"echo "$0" > /proc/sys/kernel/hostname && exec "$@""#)
            .arg(self.host_name(i))
            .args(argv);
        cmd
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for ns in self.namespaces.iter().chain(self.switch.iter()) {
            delete_namespace(ns);
        }
    }
}

/// OpenSSH servers on [`Hosts`] (one per host) or on loopback. See the module documentation.
pub struct Sshd {
    dir: PathBuf,
    servers: Vec<Child>,
    port: u16,
    addrs: Vec<String>,
}

impl Sshd {
    pub const SSHD: &'static str = "/usr/sbin/sshd";

    /// Why an sshd cannot be started here, if it cannot.
    pub fn available() -> Result<(), String> {
        if !Path::new(Self::SSHD).is_file() {
            return Err(format!(
                "{} is not installed (Debian: openssh-server); see scripts/ci-packages.txt",
                Self::SSHD
            ));
        }
        for tool in ["ssh", "ssh-keygen"] {
            if !on_path(tool) {
                return Err(format!(
                    "`{tool}` is not installed (Debian: openssh-client); see scripts/ci-packages.txt"
                ));
            }
        }
        // Without PAM, sshd refuses every login to an account whose password is locked.
        if is_root() {
            if let Ok(shadow) = fs::read_to_string("/etc/shadow") {
                if let Some(line) = shadow.lines().find(|l| l.starts_with("root:")) {
                    if line["root:".len()..].starts_with('!') {
                        return Err("root's password is locked ('!' in /etc/shadow), and sshd \
                                    without PAM then refuses key logins too; `usermod -p '*' \
                                    root` unlocks it without setting a password"
                            .into());
                    }
                }
            }
        }
        Ok(())
    }

    /// One sshd on each host, listening on its address and `port`.
    pub fn start(hosts: &Hosts, port: u16) -> Result<Sshd, String> {
        let mut sshd = Sshd::prepare(port, hosts.addrs())?;
        for i in 0..hosts.len() {
            let config = sshd.write_server_config(i, &hosts.addr(i))?;
            let argv = [Self::SSHD, "-D", "-e", "-f", &config];
            let log = sshd.log(i)?;
            let child = hosts
                .exec(i, &argv)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(log)
                .spawn()
                .map_err(|e| format!("cannot start sshd on host {i}: {e}"))?;
            sshd.servers.push(child);
        }
        sshd.wait_listening()?;
        Ok(sshd)
    }

    /// One sshd on 127.0.0.1 in the current network namespace; `port` 0 picks a free one.
    pub fn start_loopback(port: u16) -> Result<Sshd, String> {
        let port = if port == 0 {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map_err(|e| format!("cannot find a free port: {e}"))?
                .port()
        } else {
            port
        };
        let mut sshd = Sshd::prepare(port, vec!["127.0.0.1".into()])?;
        let config = sshd.write_server_config(0, "127.0.0.1")?;
        let log = sshd.log(0)?;
        let child = Command::new(Self::SSHD)
            .args(["-D", "-e", "-f", &config])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start sshd: {e}"))?;
        sshd.servers.push(child);
        sshd.wait_listening()?;
        Ok(sshd)
    }

    fn prepare(port: u16, addrs: Vec<String>) -> Result<Sshd, String> {
        Sshd::available()?;
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("{PREFIX}sshd-{}-{seq}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).map_err(|e| format!("create {}: {e}", dir.display()))?;
        let sshd = Sshd {
            dir,
            servers: Vec::new(),
            port,
            addrs,
        };
        // The privilege separation directory, made at boot on a Debian system with systemd.
        if is_root() {
            let _ = fs::create_dir_all("/run/sshd");
        }
        for (key, comment) in [
            ("host_key", "fuzz test host"),
            ("client_key", "fuzz test client"),
        ] {
            let path = sshd.dir.join(key);
            let out = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", comment, "-f"])
                .arg(&path)
                .stdin(Stdio::null())
                .output()
                .map_err(|e| format!("cannot run ssh-keygen: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "ssh-keygen failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
        let public = sshd.dir.join("client_key.pub");
        fs::copy(&public, sshd.dir.join("authorized_keys"))
            .map_err(|e| format!("write authorized_keys: {e}"))?;
        let user = current_user();
        let client = format!(
            "Host *\n\
             \x20 Port {port}\n\
             \x20 User {user}\n\
             \x20 IdentityFile {key}\n\
             \x20 IdentitiesOnly yes\n\
             \x20 UserKnownHostsFile /dev/null\n\
             \x20 GlobalKnownHostsFile /dev/null\n\
             \x20 StrictHostKeyChecking no\n\
             \x20 BatchMode yes\n\
             \x20 PasswordAuthentication no\n\
             \x20 LogLevel ERROR\n\
             \x20 ConnectTimeout 10\n",
            key = sshd.dir.join("client_key").display(),
        );
        fs::write(sshd.client_config(), client).map_err(|e| format!("write ssh_config: {e}"))?;
        let agent = format!(
            "#!/bin/sh\n# ssh with this test's client configuration (an rsh agent for mpirun).\n\
             exec ssh -F '{}' \"$@\"\n",
            sshd.client_config().display()
        );
        let agent_path = sshd.rsh_agent();
        fs::write(&agent_path, agent).map_err(|e| format!("write the rsh agent: {e}"))?;
        set_mode(&agent_path, 0o755)?;
        Ok(sshd)
    }

    fn write_server_config(&self, i: usize, addr: &str) -> Result<String, String> {
        let d = &self.dir;
        let text = format!(
            "Port {port}\n\
             ListenAddress {addr}\n\
             HostKey {host_key}\n\
             AuthorizedKeysFile {keys}\n\
             PermitRootLogin prohibit-password\n\
             PubkeyAuthentication yes\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             StrictModes no\n\
             UsePAM no\n\
             UseDNS no\n\
             PrintMotd no\n\
             MaxStartups 100\n\
             PidFile {pid}\n\
             LogLevel INFO\n",
            port = self.port,
            host_key = d.join("host_key").display(),
            keys = d.join("authorized_keys").display(),
            pid = d.join(format!("sshd-{i}.pid")).display(),
        );
        let path = d.join(format!("sshd_config-{i}"));
        fs::write(&path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
        Ok(path.display().to_string())
    }

    fn log_path(&self, i: usize) -> PathBuf {
        self.dir.join(format!("sshd-{i}.log"))
    }

    fn log(&self, i: usize) -> Result<fs::File, String> {
        fs::File::create(self.log_path(i)).map_err(|e| format!("create the sshd log: {e}"))
    }

    /// Waits until every server has logged "Server listening" (sshd logs it once bound).
    fn wait_listening(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(15);
        for i in 0..self.servers.len() {
            loop {
                let log = self.read_log(i);
                if log.contains("Server listening on") {
                    break;
                }
                if let Ok(Some(status)) = self.servers[i].try_wait() {
                    return Err(format!(
                        "sshd {i} exited ({status}) before listening:\n{log}"
                    ));
                }
                if Instant::now() > deadline {
                    return Err(format!("sshd {i} is not listening after 15 s:\n{log}"));
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        Ok(())
    }

    fn read_log(&self, i: usize) -> String {
        let mut text = String::new();
        if let Ok(mut f) = fs::File::open(self.log_path(i)) {
            let _ = f.read_to_string(&mut text);
        }
        text
    }

    /// What sshd `i` has logged so far (for assertion messages).
    pub fn server_log(&self, i: usize) -> String {
        self.read_log(i)
    }

    /// The client configuration, for `ssh -F`.
    pub fn client_config(&self) -> PathBuf {
        self.dir.join("ssh_config")
    }

    /// An executable `ssh -F <client config> "$@"`: give it to `mpirun --mca plm_rsh_agent`
    /// or `mpiexec.hydra -launcher-exec`.
    pub fn rsh_agent(&self) -> PathBuf {
        self.dir.join("rsh")
    }

    /// The directory holding keys, configurations and logs (removed on drop).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// The addresses the servers listen on, in order.
    pub fn addrs(&self) -> &[String] {
        &self.addrs
    }

    /// `ssh -F <config> HOST ARGV...` as an argv.
    pub fn ssh_argv(&self, host: &str, argv: &[&str]) -> Vec<String> {
        let mut out = vec![
            "ssh".to_string(),
            "-F".to_string(),
            self.client_config().display().to_string(),
            host.to_string(),
        ];
        out.extend(argv.iter().map(|s| s.to_string()));
        out
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        for child in &mut self.servers {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn current_user() -> String {
    Command::new("id")
        .arg("-un")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|u| !u.is_empty())
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "root".into())
}

fn set_mode(path: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("chmod {}: {e}", path.display()))
}

/// How `fuzz run` on host 0 reaches the other hosts (and which of their names it is given).
#[derive(Clone, Copy, Debug)]
pub enum NodeLauncher<'a> {
    /// `--launcher local --local-netns`: the nodes are the hosts' namespaces, named by their
    /// namespace names.
    LocalNetworkNamespaces,
    /// `--launcher ssh --ssh-config CONFIG`: the nodes are reached by their host names
    /// (`node<i>`) through an [`Sshd`]'s client configuration.
    Ssh {
        /// The `ssh -F` configuration ([`Sshd::client_config`]).
        client_config: &'a Path,
    },
}

impl Hosts {
    /// The command line of `fuzz run FILE --workdir WORKDIR --runtime host --status never
    /// --hosts H0,H1,... --launcher ... --forward-streams` with every host as a node, for
    /// [`Hosts::exec`] on host 0 (the head); the caller may add flags before starting it.
    pub fn fuzz_run_on_every_host_command_line(
        &self,
        fuzz: &crate::ProgramBinary,
        file: &Path,
        workdir: &Path,
        launcher: NodeLauncher,
    ) -> Vec<std::ffi::OsString> {
        let mut line = fuzz.fuzz_run_command_line(
            file,
            workdir,
            crate::FuzzRunFlags::HOST_WITHOUT_STATUS_LINE,
        );
        let names: Vec<String> = match launcher {
            NodeLauncher::LocalNetworkNamespaces => (0..self.len())
                .map(|i| self.namespace(i).to_owned())
                .collect(),
            NodeLauncher::Ssh { .. } => (0..self.len()).map(|i| self.host_name(i)).collect(),
        };
        line.extend(["--hosts".into(), names.join(",").into()]);
        match launcher {
            NodeLauncher::LocalNetworkNamespaces => {
                line.extend(["--launcher", "local", "--local-netns"].map(Into::into))
            }
            NodeLauncher::Ssh { client_config } => {
                line.extend(["--launcher".into(), "ssh".into(), "--ssh-config".into()]);
                line.push(client_config.into());
            }
        }
        line.push("--forward-streams".into());
        line
    }
}
