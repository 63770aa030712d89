//! A Slurm cluster on this machine (scripts/slurm-local.sh): one slurmctld and `n` slurmd
//! (nodes `n1`..`nN`) on 127.0.0.1 with a munged of their own, in a directory of the test's
//! own and on ports derived from the test's process id. Dropping [`LocalSlurm`] stops every
//! daemon and removes the directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

static SEQ: AtomicU32 = AtomicU32::new(0);

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/slurm-local.sh")
}

pub struct LocalSlurm {
    dir: PathBuf,
    conf: PathBuf,
}

impl LocalSlurm {
    /// Why a local cluster cannot be started here, if it cannot.
    pub fn available() -> Result<(), String> {
        if !crate::system::is_root() {
            return Err("slurmd needs root (this test runs as another user)".into());
        }
        for (tool, package) in [
            ("slurmctld", "slurmctld"),
            ("slurmd", "slurmd"),
            ("srun", "slurm-client"),
            ("munged", "munge"),
        ] {
            if !crate::system::on_path(tool) && !Path::new("/usr/sbin").join(tool).is_file() {
                return Err(format!(
                    "`{tool}` is not installed (Debian: {package}); see scripts/ci-packages.txt"
                ));
            }
        }
        Ok(())
    }

    /// Starts `nodes` nodes and waits until they are idle.
    pub fn start(nodes: u32) -> Result<LocalSlurm, String> {
        LocalSlurm::available()?;
        let pid = std::process::id();
        let seq = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("fuzztest-slurm-{pid}-{seq}"));
        // slurmctld on PORT, node i on PORT + i: 32 ports per cluster.
        let port = 20_000 + ((pid * 4 + seq) % 1_000) * 32;
        let out = crate::process::output_within(
            Command::new("bash")
                .arg(script())
                .arg("start")
                .arg(&dir)
                .env("FUZZ_SLURM_NODES", nodes.to_string())
                .env("FUZZ_SLURM_PORT", port.to_string())
                .env_remove("SLURM_CONF"),
            Duration::from_secs(60),
        )?;
        let cluster = LocalSlurm {
            conf: dir.join("slurm.conf"),
            dir,
        };
        if !out.status.success() {
            return Err(format!(
                "slurm-local.sh start failed ({}):\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(cluster)
    }

    /// The configuration Slurm's commands are pointed at (`SLURM_CONF`).
    pub fn conf(&self) -> &Path {
        &self.conf
    }

    /// A Slurm command (`srun`, `salloc`, `sbatch`, `scontrol`, …) for this cluster.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.env("SLURM_CONF", &self.conf);
        cmd
    }
}

impl Drop for LocalSlurm {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}
