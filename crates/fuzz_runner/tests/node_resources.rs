//! What `fuzz run` takes the node to have, from fake `/proc` and `/sys/fs/cgroup` trees and a
//! fake `nvidia-smi`.

use fuzz_runner::node::{detect, Declared, Probe};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fuzz-node-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create the test directory");
    d
}

fn put(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

fn program(root: &Path, name: &str, script: &str) -> String {
    let p = root.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{script}")).expect("write");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    p.display().to_string()
}

/// A node of 64 CPUs and 512 GiB whose runner sits in a cgroup limited to 2.5 cores (an
/// ancestor's `cpu.max`) and 8 GiB (its own `memory.max`).
fn node_tree(root: &Path) {
    put(root, "proc/self/cgroup", "0::/jobs/fuzz\n");
    put(
        root,
        "proc/meminfo",
        "MemTotal:       536870912 kB\nMemFree:        1000 kB\n",
    );
    put(root, "sys/fs/cgroup/jobs/cpu.max", "250000 100000\n");
    put(root, "sys/fs/cgroup/jobs/fuzz/cpu.max", "max 100000\n");
    put(root, "sys/fs/cgroup/jobs/fuzz/memory.max", "8589934592\n");
    put(root, "sys/fs/cgroup/jobs/memory.max", "max\n");
}

#[test]
fn cgroup_limits_lower_what_the_node_has_and_nvidia_smi_lists_the_gpus() {
    let root = scratch("cgroup");
    node_tree(&root);
    let smi = program(
        &root,
        "nvidia-smi",
        "[ \"$1\" = --query-gpu=index,name,memory.total ] && [ \"$2\" = --format=csv,noheader ] || exit 9\n\
         printf '1, NVIDIA H200, 143771 MiB\\n0, NVIDIA H200, 143771 MiB\\n'\n",
    );
    let probe = Probe {
        root: root.clone(),
        nvidia_smi: smi,
        parallelism: 64,
    };
    let n = detect(&probe, &Declared::default());
    assert_eq!(n.cores, 3, "2.5 cores of cpu.max round up: {n:?}");
    assert_eq!(n.memory_bytes, 8 << 30, "{n:?}");
    assert_eq!(n.gpus.len(), 2);
    assert_eq!(n.gpus[0].index, 0);
    assert_eq!(n.gpus[1].name, "NVIDIA H200");
    assert_eq!(n.gpus[1].memory_bytes, Some(143771 << 20));
    assert_eq!(n.gpus_source, "nvidia-smi");
    assert!(n.cores_source.contains("cpu.max"), "{}", n.cores_source);

    // No cgroup limits: the CPUs this process may use and MemTotal.
    let _ = std::fs::remove_dir_all(root.join("sys"));
    let n = detect(
        &Probe {
            parallelism: 6,
            ..probe.clone()
        },
        &Declared::default(),
    );
    assert_eq!((n.cores, n.memory_bytes), (6, 536870912 * 1024));

    // Declared: --cores, --memory and --gpus replace what was found; the profile's count
    // counts only without --gpus.
    let declared = Declared {
        gpus: Some(4),
        cores: Some(32),
        memory_bytes: Some(64 << 30),
        profile_gpus: Some(8),
    };
    let n = detect(&probe, &declared);
    assert_eq!((n.cores, n.memory_bytes, n.gpus.len()), (32, 64 << 30, 4));
    assert_eq!(n.gpus[1].name, "NVIDIA H200", "what was detected is kept");
    assert_eq!(n.gpus[3].name, "");
    let n = detect(
        &probe,
        &Declared {
            gpus: None,
            ..declared
        },
    );
    assert_eq!(n.gpus.len(), 8);
    assert!(
        n.gpus_source.contains("gpus-per-node = 8"),
        "{}",
        n.gpus_source
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn without_nvidia_smi_the_drivers_proc_tree_lists_the_gpus_in_bus_order() {
    let root = scratch("proc");
    node_tree(&root);
    put(
        &root,
        "proc/driver/nvidia/gpus/0000:9b:00.0/information",
        "Model: \t\t NVIDIA A100-SXM4-80GB\nIRQ:   42\nDevice Minor: \t 0\n",
    );
    put(
        &root,
        "proc/driver/nvidia/gpus/0000:1b:00.0/information",
        "Model: \t\t NVIDIA H100 80GB HBM3\nDevice Minor: \t 1\n",
    );
    // An nvidia-smi that fails (a driver/library mismatch) counts as none.
    let smi = program(
        &root,
        "nvidia-smi",
        "echo 'Failed to initialize NVML' >&2; exit 9\n",
    );
    let n = detect(
        &Probe {
            root: root.clone(),
            nvidia_smi: smi,
            parallelism: 4,
        },
        &Declared::default(),
    );
    assert_eq!(n.gpus.len(), 2, "{n:?}");
    assert_eq!(
        (n.gpus[0].index, n.gpus[0].name.as_str()),
        (0, "NVIDIA H100 80GB HBM3")
    );
    assert_eq!(n.gpus[1].name, "NVIDIA A100-SXM4-80GB");
    assert_eq!(n.gpus_source, "/proc/driver/nvidia/gpus");

    // Neither: no GPUs, and it says where it looked.
    let _ = std::fs::remove_dir_all(root.join("proc/driver"));
    let n = detect(
        &Probe {
            root: root.clone(),
            nvidia_smi: "fuzz-test-no-such-nvidia-smi".into(),
            parallelism: 4,
        },
        &Declared::default(),
    );
    assert!(n.gpus.is_empty());
    assert!(n.gpus_source.contains("no nvidia-smi"), "{}", n.gpus_source);
    let _ = std::fs::remove_dir_all(&root);
}

/// cgroup v1 controllers (a hybrid node: memory and cpu on v1, an empty v2 at
/// `/sys/fs/cgroup/unified`), found through `/proc/self/mountinfo`.
#[test]
fn cgroup_v1_limits_count_too() {
    let root = scratch("v1");
    put(
        &root,
        "proc/self/cgroup",
        "4:memory:/batch/job7\n1:cpu,cpuacct:/batch/job7\n0::/\n",
    );
    put(
        &root,
        "proc/self/mountinfo",
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
         32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n\
         35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
         41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
    );
    put(&root, "proc/meminfo", "MemTotal:       24683664 kB\n");
    // Unlimited at the top (v1 writes a page-rounded i64::MAX), 4 GiB for the job.
    put(
        &root,
        "sys/fs/cgroup/memory/memory.limit_in_bytes",
        "9223372036854771712\n",
    );
    put(
        &root,
        "sys/fs/cgroup/memory/batch/job7/memory.limit_in_bytes",
        "4294967296\n",
    );
    put(
        &root,
        "sys/fs/cgroup/cpu,cpuacct/batch/cpu.cfs_quota_us",
        "150000\n",
    );
    put(
        &root,
        "sys/fs/cgroup/cpu,cpuacct/batch/cpu.cfs_period_us",
        "100000\n",
    );
    put(
        &root,
        "sys/fs/cgroup/cpu,cpuacct/batch/job7/cpu.cfs_quota_us",
        "-1\n",
    );
    put(
        &root,
        "sys/fs/cgroup/cpu,cpuacct/batch/job7/cpu.cfs_period_us",
        "100000\n",
    );
    let probe = Probe {
        root: root.clone(),
        nvidia_smi: "fuzz-test-no-such-nvidia-smi".into(),
        parallelism: 16,
    };
    let n = detect(&probe, &Declared::default());
    assert_eq!(n.memory_bytes, 4 << 30, "{n:?}");
    assert!(n.memory_source.contains("memory.limit_in_bytes"), "{n:?}");
    assert_eq!(n.cores, 2, "1.5 cores of the parent's quota: {n:?}");

    // A namespaced cgroup2 mount shows the runner's cgroup at its top: `0::/` there, and
    // the mount's root is the cgroup's path on the host.
    let _ = std::fs::remove_dir_all(&root);
    put(&root, "proc/self/cgroup", "0::/\n");
    put(
        &root,
        "proc/self/mountinfo",
        "40 30 0:38 /kubepods/pod1/c1 /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
    );
    put(&root, "proc/meminfo", "MemTotal:       24683664 kB\n");
    put(&root, "sys/fs/cgroup/memory.max", "2147483648\n");
    put(&root, "sys/fs/cgroup/cpu.max", "400000 100000\n");
    let n = detect(&probe, &Declared::default());
    assert_eq!((n.cores, n.memory_bytes), (4, 2 << 30), "{n:?}");
    let _ = std::fs::remove_dir_all(&root);
}
