//! The host devices in the plan (`/dev/infiniband`, IMEX channels) are the ones
//! `fuzzfile_check::devices` decides, and every container runtime line gives them.

use fuzzfile_plan::{lower, PlanOptions};

fn job(env: &str, multinode: bool) -> fuzzfile_plan::Plan {
    let src = format!(
        "version: v4\njobs:\n  train:\n    image: {{uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}}\n    env:\n      - {env}\n    command: [nvidia-smi]\n    resource:\n      devices: {{nvidia.com/gpu: 4}}\n      annotations: {{nvidia.com/gpu.product: GB200}}\n{}",
        if multinode {
            "    multinode: {nodes: 2, implementation: openmpi}\n"
        } else {
            ""
        }
    );
    let a = fuzzfile_check::analyze(&src);
    lower(
        &a,
        &PlanOptions {
            source: "test.fz".into(),
            hosts: None,
            profile: None,
        },
    )
    .unwrap_or_else(|e| panic!("{e:?}\n{src}"))
}

fn paths(plan: &fuzzfile_plan::Plan) -> Vec<String> {
    plan.jobs[0]
        .devices
        .iter()
        .map(|d| d.path.clone())
        .collect()
}

#[test]
fn all_channels_are_the_channel_directory_in_every_runtime_line() {
    let plan = job("NVIDIA_IMEX_CHANNELS=all", false);
    assert_eq!(paths(&plan), ["/dev/nvidia-caps-imex-channels"]);
    let task = &plan.jobs[0];
    assert!(
        task.notes
            .iter()
            .any(|n| n.contains("NVIDIA_IMEX_CHANNELS=all") && n.contains("1.17.3")),
        "{:?}",
        task.notes
    );
    let i = &task.instances[0];
    let has = |argv: &[String], flag: &str| {
        argv.windows(2)
            .any(|w| w[0] == flag && w[1] == "/dev/nvidia-caps-imex-channels")
    };
    assert!(
        has(&i.runtimes.docker.argv, "--device"),
        "{:?}",
        i.runtimes.docker.argv
    );
    assert!(
        has(&i.runtimes.podman.argv, "--device"),
        "{:?}",
        i.runtimes.podman.argv
    );
    assert!(
        has(&i.runtimes.apptainer.argv, "--bind"),
        "{:?}",
        i.runtimes.apptainer.argv
    );
}

#[test]
fn numbered_channels_and_infiniband() {
    let plan = job("\"NVIDIA_IMEX_CHANNELS=2, 0\"", true);
    assert_eq!(
        paths(&plan),
        [
            "/dev/infiniband",
            "/dev/nvidia-caps-imex-channels/channel0",
            "/dev/nvidia-caps-imex-channels/channel2"
        ]
    );
    // `void` asks for no channel, and says nothing; a name that is no number is a note.
    let plan = job("NVIDIA_IMEX_CHANNELS=void", false);
    assert!(paths(&plan).is_empty());
    assert!(
        !plan.jobs[0].notes.iter().any(|n| n.contains("IMEX")),
        "{:?}",
        plan.jobs[0].notes
    );
    let plan = job("NVIDIA_IMEX_CHANNELS=channel0", false);
    assert!(paths(&plan).is_empty());
    assert!(
        plan.jobs[0]
            .notes
            .iter()
            .any(|n| n.contains("names no channel numbers")),
        "{:?}",
        plan.jobs[0].notes
    );
}

#[test]
fn the_plan_notes_infiniband_on_an_ethernet_cluster() {
    let src = "version: v4\njobs:\n  mesh:\n    image: {uri: docker://docker.io/library/openmpi:4}\n    command: [/opt/mesh]\n    multinode: {nodes: 2, implementation: openmpi}\n";
    let plan_with = |profile: &str| {
        let profile = fuzzfile_check::profile::parse_profile(profile).expect("a profile");
        let a = fuzzfile_check::analyze_with(
            src,
            &fuzzfile_check::Options {
                profile: Some(profile.clone()),
                ..Default::default()
            },
        );
        lower(
            &a,
            &PlanOptions {
                source: "test.fz".into(),
                hosts: None,
                profile: Some(profile),
            },
        )
        .expect("a plan")
    };
    let noted = |plan: &fuzzfile_plan::Plan| {
        plan.jobs[0]
            .notes
            .iter()
            .any(|n| n.contains("Ethernet") && n.contains("/dev/infiniband"))
    };
    let eth = plan_with("fabric = \"ethernet\"\n");
    assert_eq!(paths(&eth), ["/dev/infiniband"]);
    assert!(noted(&eth), "{:?}", eth.jobs[0].notes);
    let ib = plan_with("fabric = \"infiniband\"\n");
    assert!(!noted(&ib), "{:?}", ib.jobs[0].notes);
}
