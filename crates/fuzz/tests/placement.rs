//! `fuzz run` places instances within the node's cores, memory and GPUs (real processes, no
//! GPU needed: the node's GPUs are declared with `--gpus`, or a fake `nvidia-smi` lists them),
//! and refuses before anything starts a job that can never fit or a container runtime that
//! cannot run.

use fuzz_test_support::fake_node::{install_stand_in, path_with_first};
use fuzz_test_support::process::json_lines_of_file;
use fuzz_test_support::ScratchDirectory;
use fuzz_test_support::{fuzz_binary, lossy_text as text, FuzzRunFlags};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzz-place-test", name)
}

/// `fuzz run FILE --workdir WORKDIR --status never`, the rest of the flags the caller's.
fn fuzz_run(file: &Path, workdir: &Path) -> Command {
    fuzz_binary!().fuzz_run_command(
        file,
        workdir,
        FuzzRunFlags::RUNTIME_NOT_GIVEN_WITHOUT_STATUS_LINE,
    )
}

/// A job asking `gpus` GPUs (none when 0), one core and 1 GiB, running `script`.
fn job(name: &str, gpus: u64, script: &str) -> String {
    let devices = if gpus > 0 {
        format!("      devices:\n        nvidia.com/gpu: {gpus}\n")
    } else {
        String::new()
    };
    format!(
        "  {name}:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/sh, -c, {script:?}]\n    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 1GiB\n{devices}"
    )
}

fn fuzzfile(dir: &Path, jobs: &[String]) -> PathBuf {
    let f = dir.join("gpus.fz");
    std::fs::write(&f, format!("version: v1\njobs:\n{}", jobs.concat())).expect("write");
    f
}

fn run(dir: &Path, file: &Path, extra: &[&str]) -> Output {
    fuzz_run(file, &dir.join("run"))
        .args(extra)
        .output()
        .expect("run fuzz")
}

fn events(path: &Path) -> Vec<Value> {
    json_lines_of_file(path)
}

/// The first event named `name` about instance (or job) `who`.
fn event<'a>(ev: &'a [Value], name: &str, who: &str) -> &'a Value {
    ev.iter()
        .find(|e| {
            e["event"] == name
                && (e["instance"] == who || (e["instance"].is_null() && e["job"] == who))
        })
        .unwrap_or_else(|| panic!("no {name} event for {who}: {ev:?}"))
}

/// `CUDA_VISIBLE_DEVICES` as the job saw it (`env` written to a file), or `None` if unset.
fn visible(dir: &Path, job: &str) -> Option<String> {
    let env = std::fs::read_to_string(dir.join(format!("{job}.env"))).expect("the job's env");
    env.lines()
        .find_map(|l| l.strip_prefix("CUDA_VISIBLE_DEVICES="))
        .map(str::to_owned)
}

#[test]
fn two_jobs_get_disjoint_gpus_and_a_third_waits_for_one_to_finish() {
    let d = scratch("disjoint");
    let out = d.display().to_string();
    // `a` ends first, `b` later: `c` must start once `a` ended, with `a`'s GPUs.
    let a = format!("env > {out}/a.env; sleep 0.6; date +%s%3N > {out}/a.end");
    let b = format!("env > {out}/b.env; sleep 2");
    let c = format!("env > {out}/c.env");
    let e = format!("env > {out}/e.env");
    let f = fuzzfile(
        &d,
        &[
            job("a", 2, &a),
            job("b", 2, &b),
            job("c", 2, &c),
            job("e", 0, &e),
        ],
    );
    let ev_path = d.join("events.jsonl");
    let o = run(
        &d,
        &f,
        &[
            "--runtime",
            "host",
            "--gpus",
            "4",
            "--cores",
            "16",
            "--memory",
            "64GiB",
            "--events",
            ev_path.to_str().expect("utf-8 path"),
        ],
    );
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{se}");
    let (va, vb, vc) = (visible(&d, "a"), visible(&d, "b"), visible(&d, "c"));
    let set = |v: &Option<String>| -> Vec<String> {
        v.as_deref()
            .expect("CUDA_VISIBLE_DEVICES is set")
            .split(',')
            .map(str::to_owned)
            .collect()
    };
    let (sa, sb, sc) = (set(&va), set(&vb), set(&vc));
    assert_eq!(
        (sa.len(), sb.len(), sc.len()),
        (2, 2, 2),
        "{va:?} {vb:?} {vc:?}"
    );
    assert!(
        sa.iter().all(|g| !sb.contains(g)),
        "a {va:?} and b {vb:?} share a GPU"
    );
    assert!(
        sc.iter().all(|g| !sb.contains(g)),
        "c {vc:?} got b's {vb:?} while b ran"
    );
    // A job that asks for no GPU sees none on a node that has some.
    assert_eq!(visible(&d, "e").as_deref(), Some(""));
    let env_a = std::fs::read_to_string(d.join("a.env")).expect("a.env");
    assert!(env_a.contains("CUDA_DEVICE_ORDER=PCI_BUS_ID"), "{env_a}");

    let ev = events(&ev_path);
    let t = |e: &Value| e["time_ms"].as_u64().expect("time_ms");
    // When `a`'s command ended, by its own clock reading (ms since the epoch).
    let a_done: u64 = std::fs::read_to_string(d.join("a.end"))
        .expect("a.end")
        .trim()
        .parse()
        .expect("a number");
    let b_done = t(event(&ev, "job_finished", "b"));
    let c_placed = event(&ev, "instance_placed", "c");
    assert!(t(c_placed) >= a_done, "c placed before a finished: {ev:?}");
    assert!(t(c_placed) < b_done, "c waited for b too: {ev:?}");
    assert!(
        c_placed["waited_s"].as_f64().expect("waited_s") >= 0.4,
        "{c_placed}"
    );
    let waiting = event(&ev, "instance_waiting", "c");
    assert!(t(waiting) < a_done, "{waiting}");
    let a_placed = event(&ev, "instance_placed", "a");
    assert_eq!(
        a_placed["gpus"].as_array().map(Vec::len),
        Some(2),
        "{a_placed}"
    );
    assert!(
        a_placed["waited_s"].as_f64().expect("waited_s") < 0.4,
        "{a_placed}"
    );
    // The summary says which GPUs each got and how long it waited.
    let gpus_c = vc.unwrap_or_default();
    assert!(
        se.contains(&format!("  c: GPU(s) {gpus_c}, waited ")),
        "{se}"
    );
    assert!(se.contains("  a: GPU(s) "), "{se}");
}

#[test]
fn a_job_that_can_never_fit_is_refused_before_anything_starts() {
    let d = scratch("never");
    let marker = d.join("started");
    let f = fuzzfile(
        &d,
        &[
            job("small", 0, &format!("touch {}", marker.display())),
            job("big", 8, "true"),
        ],
    );
    let ev_path = d.join("events.jsonl");
    let o = run(
        &d,
        &f,
        &[
            "--runtime",
            "host",
            "--gpus",
            "4",
            "--events",
            ev_path.to_str().expect("utf-8 path"),
        ],
    );
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{se}");
    assert!(se.contains("it can never start on this node"), "{se}");
    assert!(
        se.contains("job `big` asks 8 GPU(s), and this node has 4 (--gpus 4)"),
        "{se}"
    );
    assert!(!marker.exists(), "a job started");
    assert!(!ev_path.exists(), "the run started");

    // GPUs on a node declared to have none; cores and memory beyond the node's.
    let o = run(
        &d,
        &f,
        &[
            "--runtime",
            "host",
            "--gpus",
            "0",
            "--cores",
            "1",
            "--memory",
            "512MiB",
        ],
    );
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{se}");
    assert!(
        se.contains("job `big` asks 8 GPU(s), and this node has none (--gpus 0)"),
        "{se}"
    );
    assert!(
        se.contains("1 GiB of memory, and this node has 512 MiB (--memory"),
        "{se}"
    );
    // Declarations out of range.
    for (args, says) in [
        (
            &["--gpus", "18446744073709551615"][..],
            "--gpus 18446744073709551615: a node has at most",
        ),
        (&["--cores", "0"][..], "--cores takes the number of cores"),
        (&["--memory", "lots"][..], "--memory: `lots` is not a size"),
        (
            &["--memory", "0GiB"][..],
            "--memory takes the memory of this node",
        ),
    ] {
        let o = run(&d, &f, &[&["--runtime", "host"][..], args].concat());
        let se = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {se}");
        assert!(se.contains(says), "{args:?}: {se}");
    }
    assert!(!marker.exists(), "a job started");
}

/// A fake `nvidia-smi` on `PATH` is how `fuzz run` learns the node's GPUs when none are
/// declared.
#[test]
fn gpus_listed_by_nvidia_smi_are_the_nodes() {
    let d = scratch("smi");
    let bin = d.join("bin");
    install_stand_in(
        &bin,
        "nvidia-smi",
        "#!/bin/sh\n[ \"$1\" = --query-gpu=index,name,memory.total ] || exit 9\nprintf '0, NVIDIA H200, 143771 MiB\\n1, NVIDIA H200, 143771 MiB\\n'\n",
    );
    let path = path_with_first(&bin);
    let out = d.display().to_string();
    let f = fuzzfile(&d, &[job("two", 2, &format!("env > {out}/two.env"))]);
    let o = fuzz_run(&f, &d.join("run"))
        .args(["--runtime", "host", "--memory", "8GiB", "--cores", "4"])
        .env("PATH", &path)
        .output()
        .expect("run fuzz");
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{se}");
    assert!(
        se.contains("2 GPU(s): 0 NVIDIA H200, 1 NVIDIA H200 (nvidia-smi)"),
        "{se}"
    );
    assert_eq!(visible(&d, "two").as_deref(), Some("0,1"));
    // Three on that node: refused.
    let f = fuzzfile(&d, &[job("three", 3, "true")]);
    let o = fuzz_run(&f, &d.join("run3"))
        .args(["--runtime", "host"])
        .env("PATH", &path)
        .output()
        .expect("run fuzz");
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{se}");
    assert!(
        se.contains("asks 3 GPU(s), and this node has 2 (nvidia-smi)"),
        "{se}"
    );
}

/// `nvidia-smi` is started only when a job asks for GPUs: a fake one on `PATH` that records each
/// start (a line in a file) is started no time for a run whose jobs ask for none, with or
/// without `--gpus`, and once for a run whose job asks for one.
#[test]
fn nvidia_smi_is_started_only_when_a_job_asks_for_gpus() {
    let d = scratch("smi-count");
    let bin = d.join("bin");
    let calls = d.join("calls");
    install_stand_in(
        &bin,
        "nvidia-smi",
        &format!(
            "#!/bin/sh\necho \"$*\" >> {}\nprintf '0, NVIDIA H200, 143771 MiB\\n'\n",
            calls.display()
        ),
    );
    let path = path_with_first(&bin);
    let starts = || {
        std::fs::read_to_string(&calls)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    let none = fuzzfile(&d, &[job("none", 0, "true")]);
    for (k, extra) in [&[][..], &["--gpus", "2"][..]].into_iter().enumerate() {
        let o = fuzz_run(&none, &d.join(format!("run-none-{k}")))
            .args(["--runtime", "host"])
            .args(extra)
            .env("PATH", &path)
            .output()
            .expect("run fuzz");
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert_eq!(starts(), 0, "nvidia-smi started for a job asking no GPU");
    }
    let one = fuzzfile(&d, &[job("one", 1, "true")]);
    let o = fuzz_run(&one, &d.join("run-one"))
        .args(["--runtime", "host", "--memory", "8GiB"])
        .env("PATH", &path)
        .output()
        .expect("run fuzz");
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{se}");
    assert!(se.contains("1 GPU(s): 0 NVIDIA H200 (nvidia-smi)"), "{se}");
    assert_eq!(
        starts(),
        1,
        "nvidia-smi started once for a job asking a GPU"
    );
}

/// The docker client with no engine behind it: refused with exit 2 before anything starts.
/// `DOCKER_HOST` points at a socket nobody listens on, so whether this machine runs a docker
/// engine does not matter. Where no docker client is installed, a stand-in answers as the
/// client does without an engine.
#[test]
fn docker_without_an_engine_is_refused_before_anything_starts() {
    let d = scratch("docker");
    let marker = d.join("started");
    let f = fuzzfile(&d, &[job("j", 0, &format!("touch {}", marker.display()))]);
    let mut path = std::env::var("PATH").unwrap_or_default();
    let real = std::env::split_paths(&path).any(|p| p.join("docker").is_file());
    if !real {
        let bin = d.join("bin");
        install_stand_in(
            &bin,
            "docker",
            "#!/bin/sh\necho \"Cannot connect to the Docker daemon at $DOCKER_HOST. Is the docker daemon running?\" >&2\nexit 1\n",
        );
        path = format!("{}:{path}", bin.display());
    }
    let dead = d.join("dead.sock");
    let ev_path = d.join("events.jsonl");
    let o = fuzz_run(&f, &d.join("run"))
        .args(["--runtime", "docker", "--events"])
        .arg(&ev_path)
        .env("PATH", &path)
        .env("DOCKER_HOST", format!("unix://{}", dead.display()))
        .output()
        .expect("run fuzz");
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{se}");
    assert!(
        se.contains("--runtime docker: cannot reach the docker engine"),
        "{se}"
    );
    assert!(se.contains("systemctl start docker"), "{se}");
    assert!(!marker.exists(), "the job started");
    assert!(!ev_path.exists(), "the run started");
    assert!(
        !d.join("run").join("logs").exists(),
        "the run directory was set up"
    );
}

/// `--cluster PROFILE`: its `gpus-per-node` is this node's GPU count, below `--gpus`.
#[test]
fn a_cluster_profile_declares_the_gpus_and_gpus_overrides_it() {
    let d = scratch("profile");
    let profile = d.join("two.toml");
    std::fs::write(&profile, "name = \"two\"\ngpus-per-node = 2\n").expect("write");
    let out = d.display().to_string();
    let f = fuzzfile(&d, &[job("two", 2, &format!("env > {out}/two.env"))]);
    let ev_path = d.join("events.jsonl");
    let o = run(
        &d,
        &f,
        &[
            "--runtime",
            "host",
            "--cluster",
            profile.to_str().expect("utf-8"),
            "--events",
            ev_path.to_str().expect("utf-8"),
        ],
    );
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{se}");
    assert_eq!(visible(&d, "two").as_deref(), Some("0,1"));
    let ev = events(&ev_path);
    let ready = ev
        .iter()
        .find(|e| e["event"] == "plan_ready")
        .expect("plan_ready");
    assert_eq!(
        ready["node"]["gpus"].as_array().map(Vec::len),
        Some(2),
        "{ready}"
    );
    assert!(
        ready["node"]["gpus_source"]
            .as_str()
            .is_some_and(|s| s.contains("gpus-per-node = 2")),
        "{ready}"
    );
    let o = run(
        &d,
        &f,
        &[
            "--runtime",
            "host",
            "--cluster",
            profile.to_str().expect("utf-8"),
            "--gpus",
            "1",
        ],
    );
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{se}");
    assert!(
        se.contains("asks 2 GPU(s), and this node has 1 (--gpus 1)"),
        "{se}"
    );
}

/// SIGINT while an instance waits for GPUs: the running one is stopped, the waiting one never
/// starts, and the run exits 130.
#[test]
fn a_stop_while_waiting_for_gpus_starts_nothing_more() {
    use std::time::{Duration, Instant};
    let d = scratch("stop-waiting");
    let out = d.display().to_string();
    let f = fuzzfile(
        &d,
        &[
            job(
                "holder",
                1,
                &format!("echo $$ > {out}/holder.pid; touch {out}/holder.started; exec sleep 30"),
            ),
            job("waiter", 1, &format!("touch {out}/waiter.started")),
        ],
    );
    let ev_path = d.join("events.jsonl");
    let mut child = fuzz_run(&f, &d.join("run"))
        .args([
            "--runtime",
            "host",
            "--gpus",
            "1",
            "--grace",
            "1",
            "--events",
        ])
        .arg(&ev_path)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run fuzz");
    let t0 = Instant::now();
    while !d.join("holder.started").exists()
        || !std::fs::read_to_string(&ev_path).is_ok_and(|t| t.contains("\"instance_waiting\""))
    {
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "the holder never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("SIGINT");
    let status = child.wait().expect("wait");
    let mut se = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut se);
    }
    assert_eq!(status.code(), Some(130), "{se}");
    assert!(
        !d.join("waiter.started").exists(),
        "the waiting job started: {se}"
    );
    assert!(se.contains("waiter cancelled"), "{se}");
    let ev = events(&ev_path);
    assert!(
        !ev.iter()
            .any(|e| e["event"] == "instance_placed" && e["instance"] == "waiter"),
        "{ev:?}"
    );
    assert!(
        t0.elapsed() < Duration::from_secs(20),
        "the stop took too long"
    );
    // The holder (its shell became `sleep`) is gone.
    let pid = std::fs::read_to_string(d.join("holder.pid")).expect("holder.pid");
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()));
    assert!(
        stat.map_or(true, |s| s.contains(") Z ")),
        "the holder is still running"
    );
}

/// A multinode job whose nodes all run on this node (`--launcher local`): the node holds every
/// node's share, and each node gets GPUs of its own.
#[test]
fn each_local_node_of_a_multinode_job_gets_its_own_gpus() {
    let d = scratch("multinode");
    let out = d.display().to_string();
    let fz = |nodes: u64| {
        format!(
            "version: v4\njobs:\n  train:\n    image:\n      uri: docker://alpine:3.20\n    script: |\n      #!/bin/sh\n      exec_all sh -c 'env > {out}/node.$RANK.env'\n    resource:\n      cpu:\n        cores: 1\n      memory:\n        size: 1GiB\n      devices:\n        nvidia.com/gpu: 2\n    multinode:\n      nodes: {nodes}\n      implementation: generic\n      procs-per-node: 1\n"
        )
    };
    let f = d.join("mn.fz");
    std::fs::write(&f, fz(2)).expect("write");
    let local_nodes_on_four_gpus = [
        "--runtime",
        "host",
        "--launcher",
        "local",
        "--gpus",
        "4",
        "--cores",
        "8",
        "--memory",
        "8GiB",
    ];
    let o = run(&d, &f, &local_nodes_on_four_gpus);
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{se}");
    let seen = |rank: u32| visible(&d, &format!("node.{rank}"));
    assert_eq!(seen(0).as_deref(), Some("0,1"), "{se}");
    assert_eq!(seen(1).as_deref(), Some("2,3"), "{se}");
    // Three such nodes do not fit on four GPUs.
    std::fs::write(&f, fz(3)).expect("write");
    let o = run(&d, &f, &local_nodes_on_four_gpus);
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{se}");
    assert!(
        se.contains("job `train` runs its 3 nodes on this node (the local launcher): together they ask 6 GPU(s), and this node has 4"),
        "{se}"
    );
}

/// Each container runtime gets the instance's GPUs its own way. The runtimes' clients are
/// stand-ins on `PATH` that pass the preflight and record the words and the environment they
/// were started with (no GPU, no container needed); the words are those each runtime
/// documents: podman's CDI `--device nvidia.com/gpu=N`, docker's `--gpus "device=N,M"`,
/// apptainer's `--nv` with `NVIDIA_VISIBLE_DEVICES`.
#[test]
fn each_container_runtime_gets_the_gpus_its_own_way() {
    for runtime in ["podman", "docker", "apptainer"] {
        let d = scratch(&format!("words-{runtime}"));
        let bin = d.join("bin");
        install_stand_in(
            &bin,
            runtime,
            &format!(
                "#!/bin/sh\ncase \"$1\" in info|version|--version) echo ok; exit 0;; esac\nf=$(mktemp {}/call.XXXXXX)\nprintf '%s\\n' \"$@\" > \"$f.args\"\nenv > \"$f.env\"\n",
                d.display()
            ),
        );
        let path = path_with_first(&bin);
        let f = fuzzfile(&d, &[job("a", 2, "true"), job("b", 2, "true")]);
        let o = fuzz_run(&f, &d.join("run"))
            .args(["--runtime", runtime, "--gpus", "4"])
            .args(["--cores", "8", "--memory", "8GiB"])
            .env("PATH", &path)
            .env_remove("DOCKER_HOST")
            .output()
            .expect("run fuzz");
        let se = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{runtime}: {se}");
        let mut calls: Vec<(String, String)> = std::fs::read_dir(&d)
            .expect("read dir")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "args"))
            .map(|p| {
                let args = std::fs::read_to_string(&p).expect("args");
                let env = std::fs::read_to_string(p.with_extension("env")).expect("env");
                (args, env)
            })
            .collect();
        calls.sort();
        assert_eq!(calls.len(), 2, "{runtime}: {calls:?}");
        let gpus: Vec<String> = calls
            .iter()
            .map(|(args, env)| match runtime {
                "podman" => {
                    assert!(!args.contains("nvidia.com/gpu=all"), "{args}");
                    args.lines()
                        .filter_map(|l| l.strip_prefix("nvidia.com/gpu="))
                        .collect::<Vec<_>>()
                        .join(",")
                }
                "docker" => {
                    let words: Vec<&str> = args.lines().collect();
                    let k = words.iter().position(|w| *w == "--gpus").expect("--gpus");
                    words[k + 1]
                        .strip_prefix("\"device=")
                        .and_then(|w| w.strip_suffix('"'))
                        .expect("\"device=N,M\"")
                        .to_owned()
                }
                _ => {
                    assert!(args.lines().any(|l| l == "--nv"), "{args}");
                    let nvidia = env
                        .lines()
                        .find_map(|l| l.strip_prefix("NVIDIA_VISIBLE_DEVICES="))
                        .expect("NVIDIA_VISIBLE_DEVICES");
                    let cuda = env
                        .lines()
                        .find_map(|l| l.strip_prefix("APPTAINERENV_CUDA_VISIBLE_DEVICES="))
                        .expect("APPTAINERENV_CUDA_VISIBLE_DEVICES");
                    assert_eq!(nvidia, cuda);
                    nvidia.to_owned()
                }
            })
            .collect();
        let sets: Vec<Vec<&str>> = gpus.iter().map(|g| g.split(',').collect()).collect();
        assert!(
            sets.iter().all(|s| s.len() == 2) && sets[0].iter().all(|g| !sets[1].contains(g)),
            "{runtime}: {gpus:?}"
        );
    }
}

/// A task array's tasks are placed one by one: four tasks of one GPU on a two-GPU node run
/// two at a time, never two on one GPU (each task writes its GPU and when it ran).
#[test]
fn the_tasks_of_an_array_share_the_gpus_without_overlap() {
    let d = scratch("array");
    let out = d.display().to_string();
    let script = format!(
        "s=$(date +%s%3N); sleep 0.3; echo \"$FB_TASK_ID $CUDA_VISIBLE_DEVICES $s $(date +%s%3N)\" > {out}/task.$FB_TASK_ID"
    );
    let text_fz = format!(
        "{}    task-array:\n      start: 1\n      end: 4\n",
        job("arr", 1, &script)
    );
    let f = fuzzfile(&d, &[text_fz]);
    let o = run(
        &d,
        &f,
        &[
            "--runtime",
            "host",
            "--gpus",
            "2",
            "--cores",
            "8",
            "--memory",
            "8GiB",
        ],
    );
    let se = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{se}");
    let tasks: Vec<(String, u64, u64)> = (1..=4)
        .map(|k| {
            let t = std::fs::read_to_string(d.join(format!("task.{k}"))).expect("task file");
            let w: Vec<&str> = t.split_whitespace().collect();
            assert_eq!(w.len(), 4, "{t}");
            (
                w[1].to_owned(),
                w[2].parse().expect("start"),
                w[3].parse().expect("end"),
            )
        })
        .collect();
    // At each task's start, the tasks running then (itself included): at most two, on
    // different GPUs.
    for a in &tasks {
        assert!(a.0 == "0" || a.0 == "1", "one GPU of the two: {tasks:?}");
        let running: Vec<&str> = tasks
            .iter()
            .filter(|b| b.1 <= a.1 && a.1 < b.2)
            .map(|b| b.0.as_str())
            .collect();
        assert!(running.len() <= 2, "more than two at once: {tasks:?}");
        assert!(
            running.len() < 2 || running[0] != running[1],
            "two tasks on one GPU at once: {tasks:?}"
        );
    }
}
