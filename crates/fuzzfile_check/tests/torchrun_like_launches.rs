//! What the semantics layer derives for the torchrun-like launchers besides their flags
//! (those are checked against the tools' parsers in `launcher_options.rs`): accelerate's
//! config file, deepspeed's hostfile and how it reaches the nodes, the processes each starts,
//! and the GPUs a launch can see.

use fuzzfile_check::semantics::{Launch, Reach, Resolved};

fn analysis(jobs: &str) -> fuzzfile_check::Analysis {
    fuzzfile_check::analyze(&format!("version: v4\njobs:\n{jobs}"))
}

fn first(a: &fuzzfile_check::Analysis) -> &Launch {
    a.facts(&a.model.jobs[0])
        .launches
        .first()
        .unwrap_or_else(|| panic!("no launch in\n{}", a.text))
}

/// accelerate reads what its command line does not give from the config file the job ships,
/// and each such setting points at its bytes in the Fuzzfile; the command line wins.
#[test]
fn accelerate_settings_come_from_the_shipped_config_file_and_point_at_it() {
    let a = analysis(
        "  t:\n    image: {uri: docker://x:1}\n    command: [accelerate, launch, --config_file, /opt/a.yaml, --num_machines, '2', train.py]\n    files:\n      /opt/a.yaml: |\n        distributed_type: MULTI_GPU\n        num_machines: 4\n        num_processes: 16\n        main_process_ip: \"10.1.2.3\"\n    resource: {devices: {nvidia.com/gpu: 8}}\n",
    );
    let l = first(&a);
    let np = l.setting("nproc-per-node").expect("from the config");
    assert_eq!(np.value, Resolved::Literal("16".into()));
    assert_eq!(np.given_as, "num_processes");
    assert_eq!(np.range.slice(&a.text), "16");
    assert!(np.literal_in_place);
    let nn = l.setting("nnodes").expect("from the command line");
    assert_eq!(nn.given_as, "--num_machines");
    assert_eq!(
        nn.value,
        Resolved::Literal("2".into()),
        "the command line wins"
    );
    // A quoted value points inside its quotes, and is not replaced in place.
    let ip = l.setting("master-addr").expect("main_process_ip");
    assert_eq!(ip.value, Resolved::Literal("10.1.2.3".into()));
    assert!(!ip.literal_in_place);
    // 16 processes over the 2 machines of the command line: 8 per node, 16 in all.
    let s = &l.shape;
    assert_eq!(s.nproc_per_node.as_ref().and_then(|c| c.value), Some(8));
    assert_eq!(s.world_size, Some(16));
    assert!(
        !l.parsed.as_ref().is_some_and(|p| p.incomplete),
        "the file was read"
    );
}

/// A relative `--config_file` is the file of that name in the job's `cwd`.
#[test]
fn a_relative_accelerate_config_file_is_in_the_working_directory() {
    let a = analysis(
        "  t:\n    image: {uri: docker://x:1}\n    cwd: /opt/job\n    command: [accelerate, launch, --config_file, ./configs/a.yaml, train.py]\n    files:\n      /opt/job/configs/a.yaml: |\n        distributed_type: MULTI_GPU\n        num_processes: 4\n    resource: {devices: {nvidia.com/gpu: 4}}\n",
    );
    let l = first(&a);
    assert_eq!(
        l.setting("nproc-per-node").map(|s| s.range.slice(&a.text)),
        Some("4")
    );
}

/// A config file given but not shipped hides whatever it may hold; the default path counts
/// only when the job ships a file there.
#[test]
fn an_unread_accelerate_config_leaves_the_launch_incomplete() {
    let a = analysis(
        "  t:\n    image: {uri: docker://x:1}\n    command: [accelerate, launch, --config_file, /elsewhere.yaml, train.py]\n",
    );
    let l = first(&a);
    assert!(l.parsed.as_ref().is_some_and(|p| p.incomplete));
    assert!(l.setting("nproc-per-node").is_none());
    let a = analysis(
        "  t:\n    image: {uri: docker://x:1}\n    command: [accelerate, launch, train.py]\n    files:\n      /root/.cache/huggingface/accelerate/default_config.yaml: |\n        distributed_type: NO\n        num_processes: 1\n    resource: {devices: {nvidia.com/gpu: 4}}\n",
    );
    let l = first(&a);
    assert_eq!(
        l.setting("nproc-per-node").map(|s| s.given_as.as_str()),
        Some("num_processes")
    );
    // `distributed_type: NO`: the simple launcher, one process.
    assert_eq!(
        l.shape.nproc_per_node.as_ref().and_then(|c| c.value),
        Some(1)
    );
}

/// The hostfile decides how deepspeed reaches the nodes (runner.py `main`).
#[test]
fn deepspeed_reach_follows_its_hostfile_and_no_ssh() {
    let job = |cmd: &str, extra: &str| {
        analysis(&format!(
            "  t:\n    image: {{uri: docker://x:1}}\n    script: |\n      {cmd}\n{extra}    multinode: {{nodes: 2, implementation: generic}}\n"
        ))
    };
    let files = "    files:\n      /opt/hosts: |\n        a slots=4\n        b slots=4\n";
    let cases = [
        ("deepspeed train.py", "", Reach::OneNode),
        (
            "deepspeed --hostfile /opt/hosts train.py",
            files,
            Reach::FromHead,
        ),
        (
            "exec_all deepspeed -H /opt/hosts --no_ssh --node_rank '$RANK' train.py",
            files,
            Reach::EachNode,
        ),
        // Given but not shipped: written at run time, as far as can be told.
        (
            "deepspeed --hostfile /tmp/hosts train.py",
            "",
            Reach::FromHead,
        ),
        // An argument of unknown value may name one: not known to run on one node.
        ("deepspeed --hostfile=$HOSTS train.py", "", Reach::FromHead),
        // The default path, written by the script.
        (
            "echo \"$MULTINODE_HOSTLIST\" > /job/hostfile; deepspeed train.py",
            "",
            Reach::FromHead,
        ),
    ];
    for (cmd, extra, want) in cases {
        let a = job(cmd, extra);
        let l = a
            .facts(&a.model.jobs[0])
            .launches
            .iter()
            .find(|l| l.launcher.name() == "deepspeed")
            .unwrap_or_else(|| panic!("no deepspeed in {cmd}"));
        assert_eq!(l.reach(), want, "{cmd}");
    }
}

/// Processes per node and world size, by each launcher's own rules.
#[test]
fn shapes_of_the_torchrun_like_launches() {
    let shape = |cmd: &str, gpus: u64, nodes: u64| {
        let a = analysis(&format!(
            "  t:\n    image: {{uri: docker://x:1}}\n    command: [{cmd}]\n    resource: {{devices: {{nvidia.com/gpu: {gpus}}}}}\n    multinode: {{nodes: {nodes}, implementation: generic}}\n"
        ));
        let l = first(&a);
        (
            l.shape.nnodes.as_ref().and_then(|c| c.value),
            l.shape.nproc_per_node.as_ref().and_then(|c| c.value),
            l.shape.world_size,
        )
    };
    // Without --num_processes, accelerate counts this node's GPUs for all machines.
    assert_eq!(
        shape(
            "accelerate, launch, --multi_gpu, --num_machines, '2', x.py",
            8,
            2
        ),
        (Some(2), Some(4), Some(8))
    );
    assert_eq!(
        shape("fabric, run, --devices, '0,1,2', --num-nodes=2, x.py", 4, 2),
        (Some(2), Some(3), Some(6))
    );
    assert_eq!(
        shape("lightning, run, model, x.py, --devices=-1", 4, 1),
        (Some(1), Some(4), Some(4))
    );
    assert_eq!(
        shape("fabric, run, --strategy=dp, --devices=4, x.py", 4, 1),
        (Some(1), Some(1), Some(1))
    );
    assert_eq!(
        shape("deepspeed, --include, 'localhost:0,1', x.py", 4, 1),
        (Some(1), Some(2), Some(2))
    );
    assert_eq!(shape("deepspeed, x.py", 4, 1), (Some(1), Some(4), Some(4)));
}

/// `NVIDIA_VISIBLE_DEVICES` narrows the GPUs when the job's `env` sets it (the container
/// runtime reads it when it creates the container), not when the script exports it later;
/// deepspeed's count does not follow `CUDA_VISIBLE_DEVICES`.
#[test]
fn visible_gpus_of_each_launch() {
    let visible = |env: &str, script: &str| {
        let a = analysis(&format!(
            "  t:\n    image: {{uri: docker://x:1}}\n    env: [{env}]\n    script: |\n      {script}\n    resource: {{devices: {{nvidia.com/gpu: 4}}}}\n"
        ));
        let l = first(&a);
        (l.visible_gpus.map(|v| v.0), l.visible_gpus_by())
    };
    assert_eq!(
        visible(
            "\"NVIDIA_VISIBLE_DEVICES=0,1\"",
            "torchrun --standalone --nproc-per-node 4 x.py"
        ),
        (Some(2), Some("NVIDIA_VISIBLE_DEVICES".to_owned()))
    );
    assert_eq!(
        visible(
            "A=1",
            "export NVIDIA_VISIBLE_DEVICES=0; torchrun --standalone --nproc-per-node 4 x.py"
        ),
        (None, None)
    );
    assert_eq!(
        visible(
            "\"NVIDIA_VISIBLE_DEVICES=all\"",
            "torchrun --standalone --nproc-per-node 4 x.py"
        ),
        (None, None)
    );
    // The narrower of the two.
    assert_eq!(
        visible(
            "\"NVIDIA_VISIBLE_DEVICES=0,1,2\"",
            "export CUDA_VISIBLE_DEVICES=0; fabric run --devices 4 x.py"
        ),
        (Some(1), Some("CUDA_VISIBLE_DEVICES".to_owned()))
    );
    assert_eq!(
        visible(
            "A=1",
            "accelerate launch --gpu_ids 0,1 --num_processes 2 x.py"
        ),
        (Some(2), Some("--gpu_ids".to_owned()))
    );
    assert_eq!(
        visible("\"CUDA_VISIBLE_DEVICES=0\"", "deepspeed --num_gpus 4 x.py"),
        (None, None)
    );
}
