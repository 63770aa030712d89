//! `fuzzlint profile detect` on fake nodes: the real binary with `--root` at a fake tree of
//! `/sys`, `/proc`, `/etc` and `/dev` (`tests/profile_detect/roots/`), and `PATH` holding only
//! a fake `nvidia-smi` that prints captured output (`tests/profile_detect/nvidia-smi/`;
//! `SOURCES.md` there names where each format was captured).
//!
//! Every profile it prints must parse with `fuzzfile_check::profile::parse_profile`; the
//! values are asserted on the parsed profile, the comments on the text.

use fuzz_test_support::fake_node::install_stand_in;
use fuzz_test_support::{fuzzlint_binary, ScratchDirectory};
use fuzzfile_check::profile::{parse_profile, ClusterProfile, Fabric};
use std::path::{Path, PathBuf};
use std::process::Command;

fn fuzzlint() -> Command {
    fuzzlint_binary!().command()
}

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/profile_detect")
}

/// A directory for `PATH`, removed on drop. With `smi_case`, it holds an `nvidia-smi` that
/// prints the captured output of that case for exactly the invocations `fuzzlint` makes, and
/// fails loudly on any other. Only shell built-ins are used, so `PATH` needs nothing else.
fn bin_dir(smi_case: Option<&str>) -> ScratchDirectory {
    let dir = ScratchDirectory::create("fuzzlint-profile-detect", "bin");
    if let Some(case) = smi_case {
        let src = data().join("nvidia-smi").join(case);
        assert!(src.is_dir(), "no captured output {}", src.display());
        let script = format!(
            r#"#!/bin/sh
D='{dir}'
emit() {{
  [ -f "$D/$1" ] || {{ echo "fake nvidia-smi: no $1 captured" >&2; exit 2; }}
  while IFS= read -r line || [ -n "$line" ]; do printf '%s\n' "$line"; done < "$D/$1"
  if [ -f "$D/$2" ]; then read -r code < "$D/$2"; exit "$code"; fi
  exit 0
}}
case "$*" in
  "--query-gpu=name,pci.bus_id --format=csv,noheader") emit query-gpu.csv query-gpu.exit ;;
  "-q") emit q.txt q.exit ;;
  *) echo "fake nvidia-smi: unexpected arguments: $*" >&2; exit 2 ;;
esac
"#,
            dir = src.display()
        );
        install_stand_in(&dir, "nvidia-smi", &script);
    }
    dir
}

struct Detected {
    text: String,
    profile: ClusterProfile,
}

/// Run `fuzzlint profile detect --root roots/<root>` with the fake `nvidia-smi` of
/// `smi_case` (none: not on `PATH`) and only the `env` given.
fn detect(root: &str, smi_case: Option<&str>, env: &[(&str, &str)]) -> Detected {
    let bin = bin_dir(smi_case);
    let root = data().join("roots").join(root);
    assert!(root.is_dir(), "no fake tree {}", root.display());
    let out = fuzzlint()
        .args(["profile", "detect", "--root"])
        .arg(&root)
        .env_clear()
        .env("PATH", bin.path())
        .envs(env.iter().copied())
        .output()
        .expect("run fuzzlint");
    let text = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {stderr}\nstdout:\n{text}"
    );
    assert!(stderr.is_empty(), "stderr: {stderr}");
    let profile = parse_profile(&text)
        .unwrap_or_else(|e| panic!("the profile does not parse ({e}):\n{text}"));
    Detected { text, profile }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[test]
fn h100_node_with_infiniband_hcas() {
    let d = detect("h100-ib", Some("h100-sxm-8"), &[("NCCL_DEBUG", "WARN")]);
    let p = &d.profile;
    assert_eq!(p.name.as_deref(), Some("dgx-h100-017"));
    assert_eq!(p.gpus_per_node, Some(8));
    assert_eq!(p.gpu_product.as_deref(), Some("NVIDIA H100 80GB HBM3"));
    assert!(p.gpu_products.is_empty());
    assert!(
        d.text.contains("# driver 565.57.01, CUDA 12.7: "),
        "{}",
        d.text
    );
    assert_eq!(p.fabric, Some(Fabric::Infiniband));
    // The Ethernet-link-layer bond (storage) is not an HCA of the InfiniBand fabric.
    assert_eq!(
        p.ib_hcas,
        strings(&["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_7"])
    );
    assert!(d.text.contains("not listed: mlx5_bond_0"), "{}", d.text);
    // Fabric State Completed with an all-zero ClusterUUID: NVSwitch inside the node only.
    assert!(!p.mnnvl);
    assert!(d.text.contains("\nmnnvl = false\n"), "{}", d.text);
    assert!(
        d.text
            .contains("Fabric State Completed on every GPU with an all-zero ClusterUUID"),
        "{}",
        d.text
    );
    assert!(!p.imex);
    assert!(d.text.contains("\nimex = false\n"), "{}", d.text);
    // /etc/nccl.conf as NCCL reads it; the environment wins over the file.
    let nccl = &p.nccl_defaults;
    assert_eq!(
        nccl.get("NCCL_IB_HCA").map(String::as_str),
        Some("mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7")
    );
    assert_eq!(
        nccl.get("NCCL_SOCKET_IFNAME").map(String::as_str),
        Some("=bond0")
    );
    assert_eq!(nccl.get("NCCL_DEBUG").map(String::as_str), Some("WARN"));
    assert!(d.text.contains("the environment's NCCL_DEBUG=WARN wins"));
    // `NCCL_IB_TIMEOUT = 22` sets a variable named `NCCL_IB_TIMEOUT ` that NCCL never reads.
    assert!(!nccl.keys().any(|k| k.starts_with("NCCL_IB_TIMEOUT")));
    assert!(d
        .text
        .contains("line 5: `NCCL_IB_TIMEOUT ` is not a variable name"));
    assert!(d.text.contains("nvlink-domain-nodes: not detected"));
    assert!(!d.text.contains("Not seen"), "{}", d.text);
}

#[test]
fn roce_node() {
    let d = detect("roce", Some("l40s-4"), &[]);
    let p = &d.profile;
    assert_eq!(p.name.as_deref(), Some("l40s-roce-03"));
    assert_eq!(p.gpus_per_node, Some(4));
    assert_eq!(p.gpu_product.as_deref(), Some("NVIDIA L40S"));
    assert_eq!(p.fabric, Some(Fabric::Roce));
    assert_eq!(p.ib_hcas, strings(&["mlx5_0", "mlx5_1"]));
    assert!(
        d.text.contains("mlx5_1 not ACTIVE: port 1 (1: DOWN)"),
        "{}",
        d.text
    );
    // Fabric State N/A on every GPU.
    assert!(!p.mnnvl);
    assert!(
        d.text.contains("Fabric State N/A on every GPU"),
        "{}",
        d.text
    );
    assert!(p.nccl_defaults.is_empty());
    assert!(d.text.contains("no /etc/nccl.conf"));
}

#[test]
fn node_without_gpus_or_driver() {
    let d = detect("cpu-node", None, &[]);
    let p = &d.profile;
    assert_eq!(p.name.as_deref(), Some("login-01"));
    assert_eq!(p.gpus_per_node, None);
    assert_eq!(p.gpu_product, None);
    assert!(
        d.text.contains("the NVIDIA driver is not loaded"),
        "{}",
        d.text
    );
    assert!(d.text.contains("`nvidia-smi` is not on PATH"), "{}", d.text);
    assert_eq!(p.fabric, Some(Fabric::Ethernet));
    assert!(p.ib_hcas.is_empty());
    assert!(d.text.contains("no RDMA device in /sys/class/infiniband"));
    assert!(!p.mnnvl && !p.imex);
    assert!(d.text.contains("\nmnnvl = false\n"), "{}", d.text);
    // Values as NCCL keeps them (nothing trimmed: the carriage return of a CRLF line, a tab
    // and what follows it), quotes and brackets written so that they read back exactly.
    let nccl = &p.nccl_defaults;
    assert_eq!(
        nccl.get("NCCL_DEBUG_FILE").map(String::as_str),
        Some("/tmp/\"nccl\"\\%h.%p\r")
    );
    assert!(d
        .text
        .contains("ends in a carriage return, which NCCL keeps"));
    assert_eq!(
        nccl.get("NCCL_SOCKET_IFNAME").map(String::as_str),
        Some("eth0\t# a comment NCCL keeps")
    );
    assert_eq!(nccl.get("NCCL_X").map(String::as_str), Some("a\"]"));
    assert!(!nccl.contains_key("NCCL_IB_DISABLE"));
    assert_eq!(nccl.len(), 3);
}

#[test]
fn a_node_of_two_products_lists_both() {
    let d = detect("roce", Some("mixed"), &[]);
    let p = &d.profile;
    assert_eq!(p.gpus_per_node, Some(2));
    assert_eq!(p.gpu_product, None);
    assert_eq!(
        p.gpu_products,
        strings(&["NVIDIA H100 80GB HBM3", "NVIDIA H100 NVL"])
    );
}

#[test]
fn nvidia_smi_finds_no_devices() {
    let d = detect("cpu-node", Some("no-devices"), &[]);
    assert_eq!(d.profile.gpus_per_node, None);
    assert!(
        d.text
            .contains("no GPU on this node (nvidia-smi: No devices were found)"),
        "{}",
        d.text
    );
    assert!(!d.text.contains("gpus-per-node ="), "{}", d.text);
}

#[test]
fn gb200_with_imex_channels() {
    let d = detect(
        "gb200-imex",
        Some("gb200-nvl72"),
        &[("HOME", "/root"), ("OTHER", "x")],
    );
    let p = &d.profile;
    assert_eq!(p.gpus_per_node, Some(4));
    assert_eq!(p.gpu_product.as_deref(), Some("NVIDIA GB200"));
    assert_eq!(p.fabric, Some(Fabric::Infiniband));
    assert_eq!(p.ib_hcas.len(), 4);
    assert!(p.mnnvl, "{}", d.text);
    assert!(
        d.text
            .contains("ClusterUUID dc6e40c4-d722-4357-9ba6-5291dd461278, CliqueId 32766"),
        "{}",
        d.text
    );
    assert!(p.imex, "{}", d.text);
    assert!(d.text.contains("nvidia-imex is running (pid 4242)"));
    assert!(d
        .text
        .contains("IMEX channels in /dev/nvidia-caps-imex-channels: channel0"));
    assert!(d.text.contains("the IMEX node list names 18"), "{}", d.text);
    // Only NCCL_* variables of the environment are NCCL defaults.
    assert_eq!(p.nccl_defaults.len(), 1);
    assert_eq!(
        p.nccl_defaults.get("NCCL_IB_HCA").map(String::as_str),
        Some("mlx5")
    );
}

#[test]
fn gb200_whose_fabric_registration_failed_is_not_mnnvl() {
    let d = detect("gb200-imex", Some("gb200-fabric-failed"), &[]);
    assert!(!d.profile.mnnvl, "{}", d.text);
    assert!(
        d.text.contains("Status Insufficient Resources"),
        "{}",
        d.text
    );
}

#[test]
fn gpus_from_proc_when_nvidia_smi_is_missing() {
    let d = detect("proc-only", None, &[]);
    let p = &d.profile;
    assert_eq!(p.gpus_per_node, Some(2));
    assert_eq!(p.gpu_product.as_deref(), Some("NVIDIA A100-SXM4-80GB"));
    assert_eq!(p.fabric, Some(Fabric::Infiniband));
    assert_eq!(p.ib_hcas, strings(&["mlx5_0"]));
    assert!(
        d.text
            .contains("`nvidia-smi` is not on PATH; the GPUs were read from /proc/driver/nvidia"),
        "{}",
        d.text
    );
    // MNNVL is only known from nvidia-smi: left out, and said why.
    assert!(!d.text.contains("mnnvl ="), "{}", d.text);
    assert!(d.text.contains("# Not seen"), "{}", d.text);
    assert!(
        d.text
            .contains("- mnnvl: known from the Fabric section of `nvidia-smi -q`"),
        "{}",
        d.text
    );
}

/// The outputs captured on this project's GPU machine (docs/cluster-profiles.md): one H200,
/// driver 580.159.04, no RDMA device, in an NVIDIA CUDA image whose environment has
/// `NCCL_VERSION`.
#[test]
fn the_gpu_machine_as_captured() {
    let env = [
        ("NCCL_VERSION", "2.28.3-1"),
        ("NVIDIA_VISIBLE_DEVICES", "0"),
    ];
    let d = detect("h200-device", Some("h200-device"), &env);
    let p = &d.profile;
    assert_eq!(p.name.as_deref(), Some("vm"));
    assert_eq!(p.gpus_per_node, Some(1));
    assert_eq!(p.gpu_product.as_deref(), Some("NVIDIA H200"));
    assert_eq!(p.fabric, Some(Fabric::Ethernet));
    assert!(!p.mnnvl && !p.imex);
    assert!(
        d.text
            .contains("Fabric State N/A on every GPU: no Multi-Node NVLink"),
        "{}",
        d.text
    );
    assert!(
        d.text.contains("# driver 580.159.04, CUDA 13.0: "),
        "{}",
        d.text
    );
    // The image's version label is no NCCL setting.
    assert!(p.nccl_defaults.is_empty(), "{}", d.text);
    assert!(
        d.text
            .contains("NCCL_VERSION=2.28.3-1 in the environment is the version label"),
        "{}",
        d.text
    );
    assert!(!d.text.contains("Not seen"), "{}", d.text);

    // Without nvidia-smi, the driver's own file of that machine (with its `GPU Firmware:` line).
    let d = detect("h200-device", None, &env);
    assert_eq!(d.profile.gpus_per_node, Some(1));
    assert_eq!(d.profile.gpu_product.as_deref(), Some("NVIDIA H200"));
    assert!(
        d.text.contains("- mnnvl: known from the Fabric section"),
        "{}",
        d.text
    );
}

#[test]
fn a_hanging_nvidia_smi_is_stopped() {
    let bin = bin_dir(None);
    // `exec`: the stopped process is the one that hangs, nothing is left behind.
    install_stand_in(bin.path(), "nvidia-smi", "#!/bin/sh\nexec sleep 60\n");
    let start = std::time::Instant::now();
    let out = fuzzlint()
        .args(["profile", "detect", "--tool-timeout", "1", "--root"])
        .arg(data().join("roots/proc-only"))
        .env_clear()
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .expect("run fuzzlint");
    let elapsed = start.elapsed();
    assert!(
        elapsed < std::time::Duration::from_secs(20),
        "took {elapsed:?}"
    );
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let p = parse_profile(&text).unwrap_or_else(|e| panic!("{e}:\n{text}"));
    // The GPUs come from /proc; the timeout is said.
    assert_eq!(p.gpus_per_node, Some(2));
    assert!(
        text.contains("did not finish within 1 s and was stopped"),
        "{text}"
    );
}

#[test]
fn a_root_that_is_not_a_directory_is_an_error() {
    let out = fuzzlint()
        .args(["profile", "detect", "--root"])
        .arg(data().join("no-such-root"))
        .output()
        .expect("run fuzzlint");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not a directory"), "{stderr}");
    assert!(out.stdout.is_empty());
}
