//! What this node has for jobs: cores, memory and GPUs.
//!
//! Detected ([`detect`]): GPUs from `nvidia-smi --query-gpu=index,name,memory.total
//! --format=csv,noheader`, else from the driver's `/proc/driver/nvidia/gpus/*/information`
//! (one directory per GPU, named by PCI bus id: sorted, they are in nvidia-smi's and
//! `CUDA_DEVICE_ORDER=PCI_BUS_ID`'s order); cores from the processes' available parallelism
//! (CPU affinity), lowered by a `cpu.max` quota of the runner's cgroup v2 or an ancestor
//! (cgroup v1: `cpu.cfs_quota_us`); memory from `MemTotal` of `/proc/meminfo`, lowered by a
//! `memory.max` (v1: `memory.limit_in_bytes`) of the cgroup or an ancestor. The cgroups are
//! found through `/proc/self/cgroup` and `/proc/self/mountinfo`. `fuzz run --gpus N`, `--cores N` and `--memory SIZE` declare what the node has
//! instead, and a cluster profile's `gpus-per-node` declares its GPU count ([`Declared`]).
//!
//! Every file is read below a root directory and `nvidia-smi` is a program name looked up on
//! `PATH`, so tests give a fake `/proc` tree and a fake `nvidia-smi`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// One GPU of the node, by its index (nvidia-smi's, which `CUDA_VISIBLE_DEVICES` takes with
/// `CUDA_DEVICE_ORDER=PCI_BUS_ID`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gpu {
    pub index: u32,
    /// `NVIDIA H200`; empty when only the count was declared.
    pub name: String,
    pub memory_bytes: Option<u64>,
}

/// The node's resources and where each figure came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeResources {
    pub cores: u64,
    pub memory_bytes: u64,
    pub gpus: Vec<Gpu>,
    /// In words, for people and the `plan_ready` event: `nvidia-smi`, `--gpus 4`, `cgroup
    /// cpu.max`, …
    pub cores_source: String,
    pub memory_source: String,
    pub gpus_source: String,
}

/// How to look at the node: the root of `/proc` and `/sys`, the program that lists GPUs, and
/// the processes' available parallelism.
#[derive(Clone, Debug)]
pub struct Probe {
    pub root: PathBuf,
    pub nvidia_smi: String,
    pub parallelism: u64,
}

impl Default for Probe {
    fn default() -> Self {
        Probe {
            root: PathBuf::from("/"),
            nvidia_smi: "nvidia-smi".into(),
            parallelism: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
        }
    }
}

/// What the user declared about the node: each replaces what was detected.
#[derive(Clone, Debug, Default)]
pub struct Declared {
    /// `--gpus N`.
    pub gpus: Option<u64>,
    /// `--cores N`.
    pub cores: Option<u64>,
    /// `--memory SIZE`, in bytes.
    pub memory_bytes: Option<u64>,
    /// A cluster profile's `gpus-per-node` (below `--gpus`).
    pub profile_gpus: Option<u64>,
}

/// The most GPUs a node is taken to have (a declared count above it is cut to it; `fuzz run`
/// refuses one).
pub const MAX_GPUS: u64 = 4096;

/// How long `nvidia-smi` may take before the `/proc` tree is read instead.
const NVIDIA_SMI_TIMEOUT: Duration = Duration::from_secs(20);

/// The node's resources as detected, then as declared.
pub fn detect(probe: &Probe, declared: &Declared) -> NodeResources {
    detect_for(probe, declared, true)
}

/// Whether a job or service of `plan` asks for GPUs: [`detect_for`] runs `nvidia-smi` only then.
pub fn plan_asks_gpus(plan: &fuzzfile_plan::Plan) -> bool {
    plan.jobs.iter().chain(&plan.services).any(|t| {
        t.resources
            .gpus_per_node
            .as_ref()
            .and_then(|g| g.value)
            .is_some_and(|n| n > 0)
    })
}

/// [`detect`], where `gpus_asked` says whether any job asks for GPUs. When none does, the GPUs
/// are those of the driver's `/proc` tree (enough to hide them from jobs that ask for none,
/// [`crate::placement::assign`]) and `nvidia-smi` is not started: it takes tens of
/// milliseconds to seconds on a GPU node, many times the cost of a trivial job.
pub fn detect_for(probe: &Probe, declared: &Declared, gpus_asked: bool) -> NodeResources {
    let cgroups = Cgroups::read(&probe.root);
    let (cores, cores_source) = match declared.cores {
        Some(n) => (n, format!("--cores {n}")),
        None => {
            let quota = cgroups
                .min(&probe.root, None, |d| {
                    read_small(&d.join("cpu.max")).and_then(|t| cpu_quota(&t))
                })
                .map(|q| (q, "the cgroup's cpu.max"))
                .or_else(|| {
                    cgroups
                        .min(&probe.root, Some("cpu"), cfs_quota)
                        .map(|q| (q, "the cgroup's cpu.cfs_quota_us"))
                });
            match quota {
                Some((q, why)) if q < probe.parallelism => (q, why.to_owned()),
                _ => (
                    probe.parallelism,
                    "the CPUs this process may use".to_owned(),
                ),
            }
        }
    };
    let (memory_bytes, memory_source) = match declared.memory_bytes {
        Some(b) => (b, "--memory".to_owned()),
        None => {
            let total = mem_total(&probe.root);
            let number = |p: PathBuf| read_small(&p).and_then(|t| t.trim().parse::<u64>().ok());
            let limit = cgroups
                .min(&probe.root, None, |d| number(d.join("memory.max")))
                .map(|l| (l, "the cgroup's memory.max"))
                .or_else(|| {
                    cgroups
                        .min(&probe.root, Some("memory"), |d| {
                            number(d.join("memory.limit_in_bytes"))
                        })
                        .map(|l| (l, "the cgroup's memory.limit_in_bytes"))
                });
            match (total, limit) {
                (Some(t), Some((l, why))) if l < t => (l, why.to_owned()),
                (Some(t), _) => (t, "MemTotal of /proc/meminfo".to_owned()),
                (None, Some((l, why))) => (l, why.to_owned()),
                (None, None) => (0, "unknown (no /proc/meminfo)".to_owned()),
            }
        }
    };
    let declared_gpus = declared
        .gpus
        .map(|n| (n, format!("--gpus {n}")))
        .or_else(|| {
            declared
                .profile_gpus
                .map(|n| (n, format!("the cluster profile's gpus-per-node = {n}")))
        });
    let (gpus, gpus_source) = match declared_gpus {
        Some((n, why)) => {
            // The declared count, by index; what is known of those that were detected kept.
            let found = detect_gpus(probe, gpus_asked)
                .map(|(g, _)| g)
                .unwrap_or_default();
            let gpus = (0..n.min(MAX_GPUS) as u32)
                .map(|index| {
                    found
                        .iter()
                        .find(|g| g.index == index)
                        .cloned()
                        .unwrap_or(Gpu {
                            index,
                            name: String::new(),
                            memory_bytes: None,
                        })
                })
                .collect();
            (gpus, why)
        }
        None => match detect_gpus(probe, gpus_asked) {
            Some((g, why)) => (g, why),
            None if gpus_asked => (
                Vec::new(),
                "none found (no nvidia-smi, no /proc/driver/nvidia/gpus)".to_owned(),
            ),
            None => (
                Vec::new(),
                "none found (no /proc/driver/nvidia/gpus; nvidia-smi not run: no job asks for GPUs)"
                    .to_owned(),
            ),
        },
    };
    NodeResources {
        cores,
        memory_bytes,
        gpus,
        cores_source,
        memory_source,
        gpus_source,
    }
}

/// The GPUs and how they were found, or `None` when neither way finds any. `nvidia-smi` only
/// when `ask_nvidia_smi`.
fn detect_gpus(probe: &Probe, ask_nvidia_smi: bool) -> Option<(Vec<Gpu>, String)> {
    if ask_nvidia_smi {
        if let Some(g) = nvidia_smi(&probe.nvidia_smi) {
            if !g.is_empty() {
                return Some((g, "nvidia-smi".into()));
            }
        }
    }
    let g = proc_gpus(&probe.root);
    (!g.is_empty()).then(|| (g, "/proc/driver/nvidia/gpus".into()))
}

/// `nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader`: lines such as
/// `0, NVIDIA H200, 143771 MiB`. `None` when it is not installed, fails or hangs.
fn nvidia_smi(program: &str) -> Option<Vec<Gpu>> {
    let exe = if program.contains('/') {
        PathBuf::from(program)
    } else {
        crate::which(program)?
    };
    let mut child = Command::new(exe)
        .args([
            "--query-gpu=index,name,memory.total",
            "--format=csv,noheader",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    // Its output is read as it comes and its end waited for at once (no polling interval
    // added to every run); a hung `nvidia-smi` is killed after the timeout.
    let mut stdout = child.stdout.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut text = Vec::new();
        let read = std::io::Read::read_to_end(&mut stdout, &mut text);
        let _ = tx.send(read.map(|_| text));
    });
    let text = match rx.recv_timeout(NVIDIA_SMI_TIMEOUT) {
        Ok(Ok(text)) => text,
        _ => {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
    };
    if !child.wait().ok()?.success() {
        return None;
    }
    Some(parse_nvidia_smi(&String::from_utf8_lossy(&text)))
}

fn parse_nvidia_smi(text: &str) -> Vec<Gpu> {
    let mut gpus: Vec<Gpu> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split(',').map(str::trim);
            let index = f.next()?.parse().ok()?;
            let name = f.next()?.to_owned();
            let memory_bytes = f.next().and_then(mib);
            Some(Gpu {
                index,
                name,
                memory_bytes,
            })
        })
        .collect();
    gpus.sort_by_key(|g| g.index);
    gpus.dedup_by_key(|g| g.index);
    gpus
}

/// `143771 MiB` in bytes.
fn mib(s: &str) -> Option<u64> {
    let (n, unit) = s.split_once(' ')?;
    let n: u64 = n.trim().parse().ok()?;
    match unit.trim() {
        "MiB" => n.checked_mul(1 << 20),
        "GiB" => n.checked_mul(1 << 30),
        "KiB" => n.checked_mul(1 << 10),
        _ => None,
    }
}

/// The driver's view: `/proc/driver/nvidia/gpus/<bus id>/information` with a `Model:` line.
fn proc_gpus(root: &Path) -> Vec<Gpu> {
    let dir = root.join("proc/driver/nvidia/gpus");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut bus: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("information").is_file())
        .collect();
    bus.sort();
    bus.iter()
        .enumerate()
        .map(|(k, p)| {
            let info = read_small(&p.join("information")).unwrap_or_default();
            let name = info
                .lines()
                .find_map(|l| l.strip_prefix("Model:"))
                .map(|m| m.trim().to_owned())
                .unwrap_or_default();
            Gpu {
                index: k as u32,
                name,
                memory_bytes: None,
            }
        })
        .collect()
}

fn read_small(p: &Path) -> Option<String> {
    use std::io::Read;
    let mut s = String::new();
    std::fs::File::open(p)
        .ok()?
        .take(64 * 1024)
        .read_to_string(&mut s)
        .ok()?;
    Some(s)
}

/// Where the runner's cgroups are: for cgroup v2 (`0::/a/b` of `/proc/self/cgroup`) and each
/// cgroup v1 controller (`4:memory:/a/b`), the directory on the mount that holds it (from
/// `/proc/self/mountinfo`; `/sys/fs/cgroup` for v2 where it cannot be read).
struct Cgroups {
    /// `(controller, directory below the root, the mount point below the root)`; `None`
    /// for v2.
    dirs: Vec<(Option<String>, PathBuf, PathBuf)>,
}

impl Cgroups {
    fn read(root: &Path) -> Cgroups {
        let own = read_small(&root.join("proc/self/cgroup")).unwrap_or_default();
        let mounts = read_small(&root.join("proc/self/mountinfo"));
        let mut dirs = Vec::new();
        for line in own.lines() {
            let mut f = line.splitn(3, ':');
            let (Some(_), Some(list), Some(path)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            let path = path.trim();
            let controllers: Vec<Option<String>> = if list.is_empty() {
                vec![None]
            } else {
                list.split(',').map(|c| Some(c.to_owned())).collect()
            };
            for c in controllers {
                let found = match &mounts {
                    Some(m) => mount_of(m, c.as_deref()),
                    None if c.is_none() => Some(("/".to_owned(), "/sys/fs/cgroup".to_owned())),
                    None => None,
                };
                let Some((mount_root, point)) = found else {
                    continue;
                };
                // The path is seen from the mount's root; a namespaced mount shows the
                // cgroup itself at its top.
                let rel = Path::new(path)
                    .strip_prefix(&mount_root)
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                let point = PathBuf::from(point.trim_start_matches('/'));
                dirs.push((c, point.join(rel), point));
            }
        }
        Cgroups { dirs }
    }

    /// The smallest value `read` gives in the cgroup of `controller` (`None`: v2) and its
    /// ancestors up to the mount (a limit of an ancestor holds for its children).
    fn min(
        &self,
        root: &Path,
        controller: Option<&str>,
        read: impl Fn(PathBuf) -> Option<u64>,
    ) -> Option<u64> {
        let (_, dir, point) = self
            .dirs
            .iter()
            .find(|(c, _, _)| c.as_deref() == controller)?;
        let mut dir = dir.clone();
        let mut best: Option<u64> = None;
        loop {
            if let Some(v) = read(root.join(&dir)) {
                best = Some(best.map_or(v, |b| b.min(v)));
            }
            if dir == *point || !dir.pop() {
                break;
            }
        }
        best
    }
}

/// The root and mount point of the cgroup2 mount (`controller` `None`) or of the cgroup v1
/// mount of `controller`, from `/proc/self/mountinfo` lines (`36 25 0:31 / /sys/fs/cgroup/memory
/// rw - cgroup cgroup rw,memory`).
fn mount_of(mountinfo: &str, controller: Option<&str>) -> Option<(String, String)> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let left: Vec<&str> = left.split_whitespace().collect();
        let mut right = right.split_whitespace();
        let fstype = right.next()?;
        let _source = right.next();
        let opts = right.next().unwrap_or("");
        let ok = match controller {
            None => fstype == "cgroup2",
            Some(c) => fstype == "cgroup" && opts.split(',').any(|o| o == c),
        };
        (ok && left.len() >= 5).then(|| (left[3].to_owned(), left[4].to_owned()))
    })
}

/// cgroup v1 `cpu.cfs_quota_us` over `cpu.cfs_period_us` in whole cores, rounded up; `-1`
/// is no limit.
fn cfs_quota(dir: PathBuf) -> Option<u64> {
    let quota: i64 = read_small(&dir.join("cpu.cfs_quota_us"))?
        .trim()
        .parse()
        .ok()?;
    let period: u64 = read_small(&dir.join("cpu.cfs_period_us"))?
        .trim()
        .parse()
        .ok()?;
    if quota <= 0 || period == 0 {
        return None;
    }
    Some((quota as u64).div_ceil(period).max(1))
}

/// `cpu.max`: `QUOTA PERIOD` in whole cores, rounded up; `max …` is no limit.
fn cpu_quota(text: &str) -> Option<u64> {
    let mut f = text.split_whitespace();
    let quota: u64 = f.next()?.parse().ok()?;
    let period: u64 = f.next().unwrap_or("100000").parse().ok()?;
    if period == 0 {
        return None;
    }
    Some(quota.div_ceil(period).max(1))
}

fn mem_total(root: &Path) -> Option<u64> {
    let text = read_small(&root.join("proc/meminfo"))?;
    let line = text.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let kb: u64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    kb.checked_mul(1024)
}

/// `64 GiB`, `512 MiB`: a size for people.
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 || v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

impl NodeResources {
    /// One line: `2 cores (…), 23.4 GiB (…), GPUs: none (…)`.
    pub fn describe(&self) -> String {
        let gpus = if self.gpus.is_empty() {
            "no GPUs".to_owned()
        } else {
            let names: Vec<String> = self
                .gpus
                .iter()
                .map(|g| {
                    if g.name.is_empty() {
                        g.index.to_string()
                    } else {
                        format!("{} {}", g.index, g.name)
                    }
                })
                .collect();
            format!("{} GPU(s): {}", self.gpus.len(), names.join(", "))
        };
        format!(
            "{} cores ({}), {} memory ({}), {gpus} ({})",
            self.cores,
            self.cores_source,
            human_bytes(self.memory_bytes),
            self.memory_source,
            self.gpus_source
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nvidia_smi_lines() {
        let g = parse_nvidia_smi("1, NVIDIA H200, 143771 MiB\n0, NVIDIA H200, 143771 MiB\nbad\n");
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].index, 0);
        assert_eq!(g[1].name, "NVIDIA H200");
        assert_eq!(g[1].memory_bytes, Some(143771 << 20));
    }

    #[test]
    fn cpu_max_rounds_up_and_max_is_no_limit() {
        assert_eq!(cpu_quota("150000 100000\n"), Some(2));
        assert_eq!(cpu_quota("50000 100000"), Some(1));
        assert_eq!(cpu_quota("max 100000"), None);
    }

    #[test]
    fn sizes_for_people() {
        assert_eq!(human_bytes(64 << 30), "64 GiB");
        assert_eq!(human_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(human_bytes(10), "10 B");
    }
}
