//! How each container runtime runs one instance: the exact command line.
//!
//! Every runtime line is `<runtime words> <image> <argv>`:
//!
//! | what | apptainer | podman | docker | host |
//! |---|---|---|---|---|
//! | start | `apptainer exec --contain --cleanenv` | `podman run --rm --name fuzz-{run-id}-HOSTNAME --network host` | `docker run --rm --name fuzz-{run-id}-HOSTNAME --network host` | (nothing) |
//! | stop early | signal the process group | `podman stop --time {grace} NAME` | `docker stop --time {grace} NAME` | signal the process group |
//! | environment | `APPTAINERENV_<NAME>` in apptainer's environment | `--env NAME` (value from podman's environment) | `--env NAME` (likewise) | inherited |
//! | cwd | `--pwd DIR` | `--workdir DIR` | `--workdir DIR` | the process's cwd |
//! | volumes | `--bind HOST:PATH` | `--volume HOST:PATH` | `--volume HOST:PATH` | not possible |
//! | files to write, helpers | `--bind HOST:PATH:ro` | `--volume HOST:PATH:ro` | `--volume HOST:PATH:ro` | not possible |
//! | GPUs | `--nv` | `--device nvidia.com/gpu=all` (CDI) | `--gpus all` | (the node's) |
//! | devices | `--bind /dev/x` | `--device /dev/x` | `--device /dev/x` | (the node's) |
//! | memlock | inherited | `--ulimit host --ulimit memlock=BYTES:BYTES` (the memory allocation; `-1:-1` for a GPU or multinode job without one; `host` keeps the other limits as they are) | `--ulimit memlock=BYTES:BYTES` | raised to the memory allocation by the runner |
//! | cores, memory | not limited | `--cpus N --memory BYTES` | `--cpus N --memory BYTES` | not limited |
//! | image | `docker://…`, `oras://…` | `docker://…` (no SIF) | the reference (no SIF) | (none) |
//!
//! Values of environment variables never appear in a command line, so secrets do not show up
//! in `ps`. Containers share the node's network (services are reachable on the node, and the
//! multinode SSH wrapper works), so no `--hostname` is given; `HOSTNAME` is in the
//! environment instead.

use crate::types::*;

pub(crate) struct Inputs<'a> {
    /// The instance's hostname: with the run id, its container's name.
    pub hostname: &'a str,
    pub image: &'a Image,
    pub cwd: Option<&'a str>,
    pub mounts: &'a [Mount],
    pub files: &'a [WriteFile],
    pub helpers: &'a [Helper],
    pub devices: &'a [Device],
    pub gpus: u64,
    pub cores: Option<u64>,
    pub memory: Option<u64>,
    pub env: &'a [EnvVar],
    pub argv: Option<&'a [String]>,
    pub multinode: bool,
}

pub(crate) fn runtimes(i: &Inputs) -> Runtimes {
    Runtimes {
        apptainer: apptainer(i),
        podman: oci(i, "podman"),
        docker: oci(i, "docker"),
        host: host(i),
    }
}

fn finish(mut words: Vec<String>, i: &Inputs) -> (Vec<String>, u64) {
    let prefix = words.len() as u64;
    if let Some(argv) = i.argv {
        words.extend(argv.iter().cloned());
    }
    (words, prefix)
}

fn member_note(i: &Inputs) -> Vec<String> {
    if i.argv.is_none() {
        vec!["a member node runs nothing of its own: the runner keeps the container up and runs in it what the head node starts through MULTINODE_SSH_WRAPPER".into()]
    } else {
        Vec::new()
    }
}

fn apptainer(i: &Inputs) -> RuntimeLine {
    let mut w: Vec<String> = ["apptainer", "exec", "--contain", "--cleanenv"]
        .map(String::from)
        .to_vec();
    if let Some(cwd) = i.cwd {
        w.extend(["--pwd".into(), cwd.into()]);
    }
    for m in i.mounts {
        w.extend(["--bind".into(), format!("{}:{}", m.host_path, m.path)]);
    }
    for f in i.files {
        w.extend(["--bind".into(), format!("{}:{}:ro", f.host_path, f.path)]);
    }
    for h in i.helpers {
        w.extend(["--bind".into(), format!("{}:{}:ro", h.host_path, h.path)]);
    }
    if i.gpus > 0 {
        w.push("--nv".into());
    }
    for d in i.devices {
        w.extend(["--bind".into(), d.path.clone()]);
    }
    w.push(i.image.uri.clone());
    let (argv, prefix_words) = finish(w, i);
    let mut notes = member_note(i);
    if i.cores.is_some() || i.memory.is_some() {
        notes.push("cores and memory are not limited (apptainer needs cgroup delegation for --cpus/--memory)".into());
    }
    RuntimeLine {
        supported: true,
        argv,
        prefix_words,
        env_passing: EnvPassing::ApptainerPrefix,
        cwd: None,
        stop: Vec::new(),
        notes,
    }
}

fn oci(i: &Inputs, runtime: &str) -> RuntimeLine {
    if i.image.scheme == ImageScheme::Oras {
        return RuntimeLine {
            supported: false,
            argv: Vec::new(),
            prefix_words: 0,
            env_passing: EnvPassing::Names,
            cwd: None,
            stop: Vec::new(),
            notes: vec![format!(
                "`oras://` images are SIF files, which only apptainer runs, not {runtime}"
            )],
        };
    }
    // podman and docker run the container under a monitor or daemon: signalling the client
    // does not stop it, so it gets a name the runner can stop it by.
    let name = format!("fuzz-{RUN_ID}-{}", i.hostname);
    let mut w: Vec<String> = vec![
        runtime.into(),
        "run".into(),
        "--rm".into(),
        "--name".into(),
        name.clone(),
        "--network".into(),
        "host".into(),
    ];
    for e in i.env {
        w.extend(["--env".into(), e.name.clone()]);
    }
    if let Some(cwd) = i.cwd {
        w.extend(["--workdir".into(), cwd.into()]);
    }
    for m in i.mounts {
        w.extend(["--volume".into(), format!("{}:{}", m.host_path, m.path)]);
    }
    for f in i.files {
        w.extend(["--volume".into(), format!("{}:{}:ro", f.host_path, f.path)]);
    }
    for h in i.helpers {
        w.extend(["--volume".into(), format!("{}:{}:ro", h.host_path, h.path)]);
    }
    if i.gpus > 0 {
        if runtime == "podman" {
            w.extend(["--device".into(), "nvidia.com/gpu=all".into()]);
        } else {
            w.extend(["--gpus".into(), "all".into()]);
        }
    }
    for d in i.devices {
        w.extend(["--device".into(), d.path.clone()]);
    }
    // RLIMIT_MEMLOCK: Fuzzball raises it to the memory allocation (NCCL's pinned buffers, RDMA
    // registrations); the runner raises it further where the node's own limit is higher.
    // podman (4.x) drops containers.conf's `default_ulimits` once any `--ulimit` is given and
    // then asks for nofile and nproc of 1048576, which a root without CAP_SYS_RESOURCE cannot
    // set ("error setting rlimit type 7: operation not permitted"); `--ulimit host` first keeps
    // the node's (and containers.conf's) other limits, never raised.
    if runtime == "podman" && (i.memory.is_some() || i.multinode || i.gpus > 0) {
        w.extend(["--ulimit".into(), "host".into()]);
    }
    match i.memory {
        Some(m) => w.extend(["--ulimit".into(), format!("memlock={m}:{m}")]),
        None if i.multinode || i.gpus > 0 => w.extend(["--ulimit".into(), "memlock=-1:-1".into()]),
        None => {}
    }
    if let Some(c) = i.cores {
        w.extend(["--cpus".into(), c.to_string()]);
    }
    if let Some(m) = i.memory {
        w.extend(["--memory".into(), m.to_string()]);
    }
    w.push(if runtime == "podman" {
        i.image.uri.clone()
    } else {
        i.image.reference.clone()
    });
    let (argv, prefix_words) = finish(w, i);
    RuntimeLine {
        supported: true,
        argv,
        prefix_words,
        env_passing: EnvPassing::Names,
        cwd: None,
        stop: vec![
            runtime.into(),
            "stop".into(),
            "--time".into(),
            GRACE.into(),
            name,
        ],
        notes: member_note(i),
    }
}

fn host(i: &Inputs) -> RuntimeLine {
    let mut notes = Vec::new();
    let paths: Vec<&str> = i
        .mounts
        .iter()
        .map(|m| m.path.as_str())
        .chain(i.helpers.iter().map(|h| h.path.as_str()))
        .chain(
            i.files
                .iter()
                .filter(|f| f.path != SCRIPT_PATH)
                .map(|f| f.path.as_str()),
        )
        .collect();
    if !paths.is_empty() {
        notes.push(format!(
            "without a container nothing can be placed at {}",
            paths.join(", ")
        ));
    }
    notes.push(format!(
        "the image {} is not used: the node's own programs run",
        i.image.uri
    ));
    notes.extend(member_note(i));
    let supported = paths.is_empty();
    // The script runs from where the runner wrote it.
    let script = i.files.iter().find(|f| f.path == SCRIPT_PATH);
    let argv = match (supported, i.argv) {
        (true, Some(argv)) => argv
            .iter()
            .enumerate()
            .map(|(k, w)| match script {
                Some(f) if k == 0 && w == SCRIPT_PATH => f.host_path.clone(),
                _ => w.clone(),
            })
            .collect(),
        _ => Vec::new(),
    };
    RuntimeLine {
        supported,
        argv,
        prefix_words: 0,
        env_passing: EnvPassing::Inherit,
        cwd: i.cwd.map(str::to_owned),
        stop: Vec::new(),
        notes,
    }
}
