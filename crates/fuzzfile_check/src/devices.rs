//! The host devices Fuzzball adds to a task's containers, beside its GPUs: `/dev/infiniband`
//! for a multinode task, and the IMEX channels that `NVIDIA_IMEX_CHANNELS` asks for. One
//! function ([`planned_devices`]) decides them; the launch plan (`fuzzfile_plan`) writes what
//! it returns, and the rules that check devices against the cluster profile
//! (`infiniband-on-ethernet`, `imex-channel-unavailable`, `imex-channels-all`) read the same,
//! so the plan and the checks cannot disagree.
//!
//! What `NVIDIA_IMEX_CHANNELS` means ([`imex_channels`]) follows the NVIDIA Container
//! Toolkit, which reads the variable (`internal/config/image/cuda_image.go`,
//! `devicesFromEnvvars` and `imexChannelsFromEnvVar`): a comma-separated list, blanks trimmed,
//! empty items skipped; empty or `void` (anywhere) asks for nothing; otherwise the first `all` or
//! `none` of the list decides. Numbers name channels (`/dev/nvidia-caps-imex-channels/channelN`).
//! Fuzzball adds the channel device when the variable is set (the seed page; how Fuzzball reads
//! `all` is not documented).
//!
//! `all` is every IMEX channel of the node: that is what the toolkit's CDI mode makes of the
//! channel id `all` (`pkg/nvcdi/lib-imex.go`: each `/dev/nvidia-caps-imex-channels/channel*` of
//! the host), and the plan gives the container that whole directory. Through the variable, the
//! toolkit (1.17.3 and later: commit e188090a, "Fix NVIDIA_IMEX_CHANNELS handling on legacy
//! images") grants no channel at all for `all`; the plan says so in a note, and the rule
//! `imex-channels-all` reports the value.

use crate::semantics::TaskFacts;
use fuzzfile_diagnostics::TextRange;
use fuzzfile_model::{EnvVar, Task};

/// The directory of the IMEX channel devices on a node.
pub const IMEX_CHANNEL_DIR: &str = "/dev/nvidia-caps-imex-channels";
/// The InfiniBand (RDMA) devices of a node.
pub const INFINIBAND_DIR: &str = "/dev/infiniband";

/// What `NVIDIA_IMEX_CHANNELS` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ImexChannels {
    /// These channels, in the order written, without repeats.
    Numbered(Vec<u32>),
    /// Every channel of the node.
    All,
    /// No channel: empty, `void` or `none`.
    Nothing,
    /// A value that is not known here (a `$` reference, a secret) or names no channel
    /// (`channel0`, `x`): the text.
    Unknown(String),
}

impl ImexChannels {
    /// Whether the value asks for at least one channel.
    pub fn requests_a_channel(&self) -> bool {
        match self {
            ImexChannels::Numbered(c) => !c.is_empty(),
            ImexChannels::All => true,
            ImexChannels::Nothing | ImexChannels::Unknown(_) => false,
        }
    }
}

/// How the NVIDIA Container Toolkit reads a value of `NVIDIA_IMEX_CHANNELS`.
pub fn imex_channels(value: &str) -> ImexChannels {
    if value.contains('$') || value.starts_with("secret://") {
        return ImexChannels::Unknown(value.to_owned());
    }
    let items: Vec<&str> = value
        .split(',')
        .map(str::trim)
        .filter(|i| !i.is_empty())
        .collect();
    if items.is_empty() || items.contains(&"void") {
        return ImexChannels::Nothing;
    }
    // `NewVisibleDevices`: the first `all` or `none` in the list decides.
    match items.iter().find(|i| **i == "all" || **i == "none") {
        Some(&"all") => return ImexChannels::All,
        Some(_) => return ImexChannels::Nothing,
        None => {}
    }
    let mut channels = Vec::new();
    for item in items {
        match item.parse::<u32>() {
            Ok(n) if item.bytes().all(|b| b.is_ascii_digit()) => {
                if !channels.contains(&n) {
                    channels.push(n);
                }
            }
            _ => return ImexChannels::Unknown(value.to_owned()),
        }
    }
    ImexChannels::Numbered(channels)
}

/// Why a device is in the container, and where the Fuzzfile asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceCause {
    /// `/dev/infiniband`: the task is multinode (the range of its `multinode` mapping).
    Multinode(TextRange),
    /// An IMEX channel (or all of them): the `NVIDIA_IMEX_CHANNELS` entry (name and value).
    ImexChannels(TextRange),
}

/// One host device the task's containers get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedDevice {
    /// The device (or the directory of devices) on the node, and its path in the container.
    pub path: String,
    /// Why, in words, for the plan.
    pub reason: String,
    pub cause: DeviceCause,
}

/// The devices of a task, and what the plan should say about the ones it cannot decide.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlannedDevices {
    /// Sorted by path, without repeats.
    pub devices: Vec<PlannedDevice>,
    pub notes: Vec<String>,
}

/// The last `NVIDIA_IMEX_CHANNELS` entry of the task's environment (its own `env` over
/// `defaults.job.env`).
pub fn imex_entry(facts: &TaskFacts) -> Option<&EnvVar> {
    facts
        .env
        .iter()
        .rev()
        .find(|e| e.name == "NVIDIA_IMEX_CHANNELS")
}

/// The host devices Fuzzball adds to the task's containers (besides GPUs).
pub fn planned_devices(task: &Task, facts: &TaskFacts) -> PlannedDevices {
    let mut out = PlannedDevices::default();
    if let Some(m) = &task.multinode {
        out.devices.push(PlannedDevice {
            path: INFINIBAND_DIR.into(),
            reason: "Fuzzball exposes the InfiniBand devices to multinode containers".into(),
            cause: DeviceCause::Multinode(m.range),
        });
    }
    if let Some(e) = imex_entry(facts) {
        let cause = DeviceCause::ImexChannels(e.name_range.cover(e.value_range));
        match imex_channels(&e.value) {
            ImexChannels::Numbered(channels) => {
                for c in channels {
                    out.devices.push(PlannedDevice {
                        path: format!("{IMEX_CHANNEL_DIR}/channel{c}"),
                        reason: "NVIDIA_IMEX_CHANNELS requests this IMEX channel".into(),
                        cause: cause.clone(),
                    });
                }
            }
            ImexChannels::All => {
                out.devices.push(PlannedDevice {
                    path: IMEX_CHANNEL_DIR.into(),
                    reason: "NVIDIA_IMEX_CHANNELS=all requests every IMEX channel of the node: each device of this directory".into(),
                    cause,
                });
                out.notes.push(format!(
                    "NVIDIA_IMEX_CHANNELS={}: the container gets every IMEX channel of the node ({IMEX_CHANNEL_DIR}/channel*); the NVIDIA Container Toolkit (1.17.3 and later) grants no channel for `all` in this variable, and how Fuzzball reads it is not documented",
                    e.value
                ));
            }
            ImexChannels::Nothing => {}
            ImexChannels::Unknown(v) => out.notes.push(format!(
                "NVIDIA_IMEX_CHANNELS={v} names no channel numbers; no IMEX channel device is added"
            )),
        }
    }
    out.devices.sort_by(|x, y| x.path.cmp(&y.path));
    out.devices.dedup_by(|x, y| x.path == y.path);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_the_container_toolkit_reads_them() {
        use ImexChannels::*;
        assert_eq!(imex_channels("0"), Numbered(vec![0]));
        assert_eq!(imex_channels(" 3, 4 ,,3"), Numbered(vec![3, 4]));
        assert_eq!(imex_channels("all"), All);
        assert_eq!(imex_channels("0,all"), All);
        assert_eq!(imex_channels(""), Nothing);
        assert_eq!(imex_channels(" , "), Nothing);
        assert_eq!(imex_channels("void"), Nothing);
        assert_eq!(imex_channels("0,void"), Nothing);
        assert_eq!(imex_channels("none"), Nothing);
        assert_eq!(imex_channels("none,all"), Nothing);
        assert_eq!(imex_channels("all,none"), All);
        assert_eq!(imex_channels("channel0"), Unknown("channel0".into()));
        assert_eq!(imex_channels("+1"), Unknown("+1".into()));
        assert_eq!(imex_channels("$CH"), Unknown("$CH".into()));
        assert_eq!(imex_channels("99999999999"), Unknown("99999999999".into()));
        assert!(All.requests_a_channel());
        assert!(Numbered(vec![0]).requests_a_channel());
        assert!(!Nothing.requests_a_channel());
        assert!(!Unknown("$X".into()).requests_a_channel());
    }

    fn devices_of(text: &str) -> PlannedDevices {
        let a = crate::analyze(text);
        let task = a.model.jobs.first().expect("a job");
        planned_devices(task, a.facts(task))
    }

    fn paths(p: &PlannedDevices) -> Vec<&str> {
        p.devices.iter().map(|d| d.path.as_str()).collect()
    }

    #[test]
    fn a_multinode_job_gets_infiniband_and_its_channels() {
        let p = devices_of(
            "version: v4\njobs:\n  t:\n    image: {uri: docker://x}\n    command: [x]\n    env: [\"NVIDIA_IMEX_CHANNELS=1,0\"]\n    multinode: {nodes: 2, implementation: generic}\n",
        );
        assert_eq!(
            paths(&p),
            [
                "/dev/infiniband",
                "/dev/nvidia-caps-imex-channels/channel0",
                "/dev/nvidia-caps-imex-channels/channel1"
            ]
        );
        assert!(p.notes.is_empty());
        assert!(matches!(p.devices[0].cause, DeviceCause::Multinode(_)));
    }

    #[test]
    fn all_is_the_directory_with_a_note_and_defaults_count() {
        let p = devices_of(
            "version: v4\ndefaults:\n  job:\n    env: [NVIDIA_IMEX_CHANNELS=all]\njobs:\n  t:\n    image: {uri: docker://x}\n    command: [x]\n",
        );
        assert_eq!(paths(&p), ["/dev/nvidia-caps-imex-channels"]);
        assert_eq!(p.notes.len(), 1);
        assert!(p.notes[0].contains("1.17.3"), "{:?}", p.notes);
        let p = devices_of(
            "version: v4\njobs:\n  t:\n    image: {uri: docker://x}\n    command: [x]\n    env: [NVIDIA_IMEX_CHANNELS=channel0]\n",
        );
        assert!(paths(&p).is_empty());
        assert!(
            p.notes[0].contains("names no channel numbers"),
            "{:?}",
            p.notes
        );
        let p = devices_of(
            "version: v4\njobs:\n  t:\n    image: {uri: docker://x}\n    command: [x]\n    env: [NVIDIA_IMEX_CHANNELS=void]\n",
        );
        assert!(paths(&p).is_empty() && p.notes.is_empty(), "{p:?}");
    }

    #[test]
    fn the_job_entry_overrides_the_default() {
        // The entry in effect is the job's, not the first one of the environment.
        let p = devices_of(
            "version: v4\ndefaults:\n  job:\n    env: [NVIDIA_IMEX_CHANNELS=all]\njobs:\n  t:\n    image: {uri: docker://x}\n    command: [x]\n    env: [NVIDIA_IMEX_CHANNELS=2]\n",
        );
        assert_eq!(paths(&p), ["/dev/nvidia-caps-imex-channels/channel2"]);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }
}
