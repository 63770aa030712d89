//! `fuzz run` with real processes: the job graph, volumes, task arrays, timeouts, signals.

use fuzz_test_support::fake_node::{install_stand_in, path_with_first, write_with_mode, FileMode};
use fuzz_test_support::{fuzz_binary, lossy_text as text, FuzzRunFlags, ScratchDirectory};
use fuzz_test_support::{RuntimeFlag, StatusLine};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn fuzz() -> Command {
    fuzz_binary!().command()
}

/// A fresh directory for one test.
fn scratch(name: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzz-run-test", name)
}

/// `fuzz run FILE --workdir DIR/run --runtime host`, the rest of the flags the caller's.
fn fuzz_run_on_host(file: &Path, dir: &Path) -> Command {
    let flags = FuzzRunFlags {
        runtime: RuntimeFlag::Host,
        status: StatusLine::BinaryDefault,
    };
    fuzz_binary!().fuzz_run_command(file, &dir.join("run"), flags)
}

/// `fuzz run FILE --workdir DIR/run EXTRA...`, on the host runtime unless `extra` names one
/// (the node may have podman or apptainer, which `--runtime auto` would pick).
fn run(dir: &Path, file: &Path, extra: &[&str]) -> Output {
    let runtime = if extra.contains(&"--runtime") {
        RuntimeFlag::NotGiven
    } else {
        RuntimeFlag::Host
    };
    let flags = FuzzRunFlags {
        runtime,
        status: StatusLine::BinaryDefault,
    };
    fuzz_binary!()
        .fuzz_run_command(file, &dir.join("run"), flags)
        .args(extra)
        .output()
        .expect("run fuzz")
}

/// A job of `alpine` running `script` with `sh -c`, with extra YAML lines (indented 4).
fn job(name: &str, script: &str, extra: &str) -> String {
    format!(
        "  {name}:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/sh, -c, {script:?}]\n{extra}"
    )
}

/// The processes whose process group is `pgid` and that are not zombies.
fn alive_in_group(pgid: i32) -> Vec<i32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for e in entries.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...
        let Some(rest) = stat.rfind(')').map(|k| &stat[k + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string() {
            found.push(pid);
        }
    }
    found
}

fn read_pid(p: &Path) -> i32 {
    std::fs::read_to_string(p)
        .expect("the job wrote its pid")
        .trim()
        .parse()
        .expect("a pid")
}

fn wait_for(p: &Path) {
    let start = Instant::now();
    while !p.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "{} never appeared",
            p.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(50));
}

#[test]
fn a_dependency_chain_passes_a_file_through_a_volume() {
    let d = scratch("chain");
    let mounts = "    cwd: /data\n    mounts:\n      scratch:\n        location: /data\n";
    let f = d.write_file("chain.fz",
        format!(
            "version: v1\nvolumes:\n  scratch:\n    reference: volume://user/ephemeral\njobs:\n{}{}",
            job(
                "produce",
                "echo hello from produce > msg.txt; echo written",
                mounts
            ),
            job(
                "consume",
                "cat msg.txt; echo to stderr >&2",
                &format!("{mounts}    depends-on:\n      - name: produce\n        status: FINISHED\n")
            ),
        ),
    );
    let events = d.join("events.jsonl");
    let out = run(&d, &f, &["--events", events.to_str().expect("utf-8")]);
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("[produce] written"), "{so}");
    assert!(so.contains("[consume] hello from produce"), "{so}");
    assert!(se.contains("[consume] to stderr"), "{se}");
    assert!(
        se.contains("does not use the images (`docker://alpine:3.20`)"),
        "{se}"
    );
    let log = std::fs::read_to_string(d.join("run/logs/consume.out")).expect("log");
    assert_eq!(log, "hello from produce\n");
    // The ephemeral volume is removed after the run (no --keep).
    assert!(!d.join("run/volumes/scratch").exists());
    let ev: Vec<serde_json::Value> = std::fs::read_to_string(&events)
        .expect("events")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(ev[0]["event"], "plan_ready");
    let finished: Vec<_> = ev
        .iter()
        .filter(|e| e["event"] == "job_finished")
        .map(|e| {
            (
                e["job"].as_str().unwrap_or(""),
                e["status"].clone(),
                e["exit_code"].clone(),
            )
        })
        .collect();
    assert_eq!(
        finished,
        vec![
            ("produce", "finished".into(), 0.into()),
            ("consume", "finished".into(), 0.into())
        ]
    );
}

#[test]
fn keep_leaves_the_volume_in_the_run_directory() {
    let d = scratch("keep");
    let f = d.write_file(
        "keep.fz",
        format!(
            "version: v1\nvolumes:\n  v:\n    reference: volume://user/ephemeral\njobs:\n{}",
            job(
                "w",
                "echo kept > out.txt",
                "    cwd: /work\n    mounts:\n      v:\n        location: /work\n"
            )
        ),
    );
    let out = run(&d, &f, &["--keep"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(d.join("run/volumes/v/out.txt")).expect("kept"),
        "kept\n"
    );
}

#[test]
fn a_task_array_runs_at_most_concurrency_tasks_at_once() {
    let d = scratch("array");
    let marks = d.join("marks");
    std::fs::create_dir_all(&marks).expect("marks");
    let script = format!(
        "echo task $FB_TASK_ID; date +%s%N > {m}/$FB_TASK_ID.start; sleep 0.4; date +%s%N > {m}/$FB_TASK_ID.end",
        m = marks.display()
    );
    let f = d.write_file(
        "array.fz",
        format!(
            "version: v1\njobs:\n{}",
            job(
                "sweep",
                &script,
                "    task-array:\n      start: 3\n      end: 8\n      concurrency: 2\n"
            )
        ),
    );
    let out = run(&d, &f, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let so = text(&out.stdout);
    for id in 3..=8 {
        assert!(so.contains(&format!("[sweep:{id}] task {id}\n")), "{so}");
    }
    assert_eq!(
        std::fs::read_to_string(d.join("run/logs/sweep-5.out")).expect("log"),
        "task 5\n"
    );
    let read = |id: i64, what: &str| -> u128 {
        std::fs::read_to_string(marks.join(format!("{id}.{what}")))
            .expect("mark")
            .trim()
            .parse()
            .expect("nanoseconds")
    };
    let intervals: Vec<(u128, u128)> = (3..=8)
        .map(|id| (read(id, "start"), read(id, "end")))
        .collect();
    // The most tasks running at one moment: at every start, count the intervals open then.
    let most = intervals
        .iter()
        .map(|(s, _)| intervals.iter().filter(|(a, b)| a <= s && s < b).count())
        .max()
        .unwrap_or(0);
    assert!(most <= 2, "{most} tasks ran at once: {intervals:?}");
    assert_eq!(most, 2, "tasks never overlapped: {intervals:?}");
}

#[test]
fn a_timeout_kills_the_whole_process_tree_even_what_ignores_sigterm() {
    let d = scratch("timeout");
    let script = format!(
        "trap '' TERM; echo $$ > {d}/pgid; (trap '' TERM; sleep 300) & echo $! > {d}/child; sleep 300",
        d = d.display()
    );
    let f = d.write_file(
        "timeout.fz",
        format!(
            "version: v1\njobs:\n{}",
            job(
                "stuck",
                &script,
                "    policy:\n      timeout:\n        execute: 1s\n"
            )
        ),
    );
    let started = Instant::now();
    let out = run(&d, &f, &["--grace", "0.5"]);
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(se.contains("stuck timed out"), "{se}");
    assert!(started.elapsed() < Duration::from_secs(60));
    let pgid = read_pid(&d.join("pgid"));
    let child = read_pid(&d.join("child"));
    assert!(
        alive_in_group(pgid).is_empty(),
        "{:?}",
        alive_in_group(pgid)
    );
    assert!(
        !Path::new(&format!("/proc/{child}/status")).exists() || {
            let s = std::fs::read_to_string(format!("/proc/{child}/status")).unwrap_or_default();
            s.contains("State:\tZ") || s.is_empty()
        }
    );
}

#[test]
fn sigint_stops_every_job_and_exits_130() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let d = scratch("sigint");
    let script = |n: &str| {
        format!(
            "echo $$ > {d}/{n}.pgid.tmp; mv {d}/{n}.pgid.tmp {d}/{n}.pgid; (trap '' TERM; sleep 300) & sleep 300",
            d = d.display()
        )
    };
    let f = d.write_file(
        "sigint.fz",
        format!(
            "version: v1\njobs:\n{}{}{}",
            job("one", &script("one"), ""),
            job("two", &script("two"), ""),
            job(
                "later",
                "echo never",
                "    depends-on:\n      - name: one\n        status: FINISHED\n"
            ),
        ),
    );
    let child = fuzz_run_on_host(&f, &d)
        .args(["--grace", "0.5"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fuzz");
    wait_for(&d.join("one.pgid"));
    wait_for(&d.join("two.pgid"));
    kill(Pid::from_raw(child.id() as i32), Signal::SIGINT).expect("send SIGINT");
    let out = child.wait_with_output().expect("wait");
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(130), "{so}\n{se}");
    assert!(!so.contains("never"), "{so}");
    assert!(se.contains("later cancelled"), "{se}");
    for n in ["one", "two"] {
        let pgid = read_pid(&d.join(format!("{n}.pgid")));
        assert!(
            alive_in_group(pgid).is_empty(),
            "{n}: {:?}",
            alive_in_group(pgid)
        );
    }
}

/// A second SIGINT does not wait out the grace period: what ignores SIGTERM is killed at once.
#[test]
fn a_second_sigint_kills_at_once() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let d = scratch("sigint2");
    let script = format!(
        "trap '' TERM INT; echo $$ > {d}/pgid; sleep 300",
        d = d.display()
    );
    let f = d.write_file(
        "s.fz",
        format!("version: v1\njobs:\n{}", job("stubborn", &script, "")),
    );
    let child = fuzz_run_on_host(&f, &d)
        .args(["--grace", "60", "--status", "never"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fuzz");
    wait_for(&d.join("pgid"));
    let started = Instant::now();
    let pid = Pid::from_raw(child.id() as i32);
    kill(pid, Signal::SIGINT).expect("first SIGINT");
    std::thread::sleep(Duration::from_millis(500));
    kill(pid, Signal::SIGINT).expect("second SIGINT");
    let out = child.wait_with_output().expect("wait");
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{se}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the grace period was waited out: {:?}",
        started.elapsed()
    );
    assert!(se.contains("press Ctrl-C again"), "{se}");
    assert!(se.contains("stopping now"), "{se}");
    let pgid = read_pid(&d.join("pgid"));
    assert!(
        alive_in_group(pgid).is_empty(),
        "{:?}",
        alive_in_group(pgid)
    );
}

#[test]
fn a_failing_job_skips_its_dependents() {
    let d = scratch("fail");
    let dep = |on: &str| format!("    depends-on:\n      - name: {on}\n        status: FINISHED\n");
    let f = d.write_file(
        "fail.fz",
        format!(
            "version: v1\njobs:\n{}{}{}{}",
            job("broken", "exit 3", ""),
            job("next", "echo next", &dep("broken")),
            job("last", "echo last", &dep("next")),
            job("fine", "echo fine", ""),
        ),
    );
    let events = d.join("events.jsonl");
    let out = run(&d, &f, &["--events", events.to_str().expect("utf-8")]);
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{so}\n{se}");
    assert!(so.contains("[fine] fine"), "{so}");
    assert!(!so.contains("[next]") && !so.contains("[last]"), "{so}");
    assert!(se.contains("broken failed: exit 3"), "{se}");
    assert!(
        se.contains("next skipped: dependency broken failed"),
        "{se}"
    );
    assert!(se.contains("last skipped: dependency next skipped"), "{se}");
    let ev = std::fs::read_to_string(&events).expect("events");
    assert_eq!(ev.matches("\"job_skipped\"").count(), 2, "{ev}");
    assert!(ev.contains("\"exit_code\":3"), "{ev}");
}

#[test]
fn plans_and_flags_it_cannot_run_exit_2() {
    let d = scratch("bad");
    let ok = d.write_file(
        "ok.fz",
        format!("version: v1\njobs:\n{}", job("a", "true", "")),
    );
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["run".into(), d.join("missing.fz").display().to_string()], "cannot read"),
        (
            vec!["run".into(), ok.display().to_string(), "--runtime".into(), "podman".into()],
            "--runtime podman: `podman` is not installed on this node",
        ),
        (
            vec!["run".into(), ok.display().to_string(), "--runtime".into(), "lxc".into()],
            "invalid value",
        ),
        (
            vec!["run".into(), ok.display().to_string(), "--grace=-1".into()],
            "--grace",
        ),
        (
            vec!["run".into(), d.write_file("p.json", "{\"plan_version\": 1}").display().to_string()],
            "not a launch plan",
        ),
        (
            vec![
                "run".into(),
                d.write_file("mount.fz",
                    format!(
                        "version: v1\nvolumes:\n  v:\n    reference: volume://user/ephemeral\njobs:\n{}",
                        job("m", "true", "    mounts:\n      v:\n        location: /data\n")
                    ),
                )
                .display()
                .to_string(),
            ],
            // No bubblewrap and no `unshare` on this PATH: what to install.
            "job `m`: the host runtime needs a private mount namespace to place /data",
        ),
        (
            vec![
                "run".into(),
                d.write_file("errors.fz", "version: v1\njobs:\n  a:\n    command: [true]\n")
                    .display()
                    .to_string(),
            ],
            "not runnable",
        ),
    ];
    for (args, want) in cases {
        // None of these starts anything; an empty PATH makes sure no container runtime is found.
        let out = fuzz()
            .args(&args)
            .env("PATH", &d)
            .output()
            .expect("run fuzz");
        let se = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {se}");
        assert!(se.contains(want), "{args:?}: want {want:?} in {se}");
    }
    // A plan written by `fuzz plan` runs.
    let plan = d.join("plan.json");
    let st = fuzz()
        .args(["plan", ok.to_str().expect("utf-8"), "-o"])
        .arg(&plan)
        .status()
        .expect("plan");
    assert!(st.success());
    let out = run(&d, &plan, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// `python3 -m http.server` serving `dir` on a free loopback port, once it accepts connections.
fn http_server(dir: &Path) -> (std::process::Child, u16) {
    let port = free_port();
    let server = Command::new("python3")
        .args(["-m", "http.server", "--bind", "127.0.0.1"])
        .arg(port.to_string())
        .arg("--directory")
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start python3 -m http.server");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the http server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    (server, port)
}

/// A TCP port nothing listens on right now.
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    l.local_addr().expect("its address").port()
}

/// A service that starts listening only after a second, with a tcp readiness probe; its
/// dependent talks to it. The dependent must start only once the probe passed (else its
/// connection is refused), and the service must be stopped once the dependent ended.
#[test]
fn a_service_with_a_tcp_probe_serves_its_dependent_and_is_stopped_after_it() {
    let d = scratch("service");
    let port = free_port();
    let server = format!(
        "import os,socket,time\n\
         open('{pid}','w').write(str(os.getpgrp()))\n\
         time.sleep(1)\n\
         s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
         s.bind(('127.0.0.1',{port})); s.listen(8)\n\
         while True:\n\
         \x20   c,_=s.accept(); m=c.recv(100); c.sendall(b'pong '+m); c.close()\n",
        pid = d.join("svc.pgid").display()
    );
    let client = format!(
        "import socket\nc=socket.create_connection(('127.0.0.1',{port}))\nc.sendall(b'ping')\nprint(c.recv(100).decode())\n"
    );
    let f = d.write_file(
        "svc.fz",
        format!(
            "version: v1\nservices:\n  echo:\n    image:\n      uri: docker://python:3.12\n    \
             command: [python3, -c, {server:?}]\n    readiness-probe:\n      tcp-socket:\n        \
             port: {port}\n      period-seconds: 1\njobs:\n  talk:\n    image:\n      uri: \
             docker://python:3.12\n    command: [python3, -c, {client:?}]\n    depends-on:\n      \
             - name: echo\n        status: RUNNING\n"
        ),
    );
    let ev = d.join("events.jsonl");
    let out = run(&d, &f, &["--events", ev.to_str().expect("utf-8")]);
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("[talk] pong ping"), "{so}\n{se}");
    assert!(se.contains("[echo] readiness probe passed after"), "{se}");
    assert!(
        se.contains("[echo] stopping: no job needs the service any more"),
        "{se}"
    );
    let ev = std::fs::read_to_string(&ev).expect("events");
    let at = |what: &str| ev.find(what).unwrap_or_else(|| panic!("no {what} in {ev}"));
    assert!(at("\"service_ready\"") < at("\"job\":\"talk\""), "{ev}");
    assert!(ev.contains("stopped once no job needed it"), "{ev}");
    let pgid = read_pid(&d.join("svc.pgid"));
    assert!(
        alive_in_group(pgid).is_empty(),
        "the service outlived the run"
    );
}

/// An `http-get` and an `exec` readiness probe both gate a dependent; the plain service stops
/// once its dependent ended, the `persist: true` one only when every job has ended.
#[test]
fn http_and_exec_probes_gate_and_a_persistent_service_outlives_its_dependents() {
    let d = scratch("persist");
    let port = free_port();
    let flag = d.join("ready.flag");
    let f = d.write_file("persist.fz",
        format!(
            "version: v1
services:
  web:
    image:
      uri: docker://python:3.12
    command: [sh, -c, 'sleep 1; exec python3 -m http.server {port} --bind 127.0.0.1 --directory {dir}']
    persist: true
    readiness-probe:
      http-get:
        path: /
        port: {port}
      period-seconds: 1
  marker:
    image:
      uri: docker://alpine:3.20
    command: [sh, -c, 'sleep 1; touch {flag}; exec sleep 300']
    readiness-probe:
      exec:
        command: [test, -e, {flag}]
      period-seconds: 1
jobs:
  quick:
    image:
      uri: docker://python:3.12
    command: [python3, -c, 'import urllib.request; print(\"status\", urllib.request.urlopen(\"http://127.0.0.1:{port}/\").status)']
    depends-on:
      - name: web
        status: RUNNING
      - name: marker
        status: RUNNING
  slow:
    image:
      uri: docker://alpine:3.20
    command: [sh, -c, 'sleep 4; echo slow done']
",
            dir = d.display(),
            flag = flag.display()
        ),
    );
    let ev = d.join("events.jsonl");
    let out = run(&d, &f, &["--events", ev.to_str().expect("utf-8")]);
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("[quick] status 200"), "{so}\n{se}");
    assert!(so.contains("[slow] slow done"), "{so}");
    let events: Vec<serde_json::Value> = std::fs::read_to_string(&ev)
        .expect("events")
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let finished = |name: &str| {
        events
            .iter()
            .position(|e| e["event"] == "job_finished" && e["job"] == name)
            .unwrap_or_else(|| panic!("{name} never finished: {events:?}"))
    };
    // `marker` is stopped once `quick` needs it no more, while `slow` still runs; `web`
    // persists until `slow`, the last job, has ended.
    assert!(finished("quick") < finished("marker"), "{events:?}");
    assert!(finished("marker") < finished("slow"), "{events:?}");
    assert!(finished("slow") < finished("web"), "{events:?}");
}

/// A service whose probe never passes fails after the ready timeout; its dependent is skipped.
#[test]
fn a_service_that_never_gets_ready_fails_and_skips_its_dependent() {
    let d = scratch("service-not-ready");
    let port = free_port();
    let f = d.write_file("svc.fz",
        format!(
            "version: v1\nservices:\n  idle:\n    image:\n      uri: docker://alpine:3.20\n    \
             command: [sleep, '60']\n    readiness-probe:\n      http-get:\n        port: {port}\n        \
             path: /health\n      period-seconds: 1\n      failure-threshold: 2\njobs:\n{}",
            job(
                "after",
                "echo ran",
                "    depends-on:\n      - name: idle\n        status: RUNNING\n"
            )
        ),
    );
    let t0 = Instant::now();
    let out = run(&d, &f, &["--ready-timeout", "3"]);
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(t0.elapsed() < Duration::from_secs(30), "{se}");
    assert!(se.contains("[idle] not ready yet:"), "{se}");
    assert!(se.contains("not RUNNING after 3 s"), "{se}");
    assert!(se.contains("http-get http://127.0.0.1"), "{se}");
    assert!(
        se.contains("after skipped: service idle failed before it was RUNNING"),
        "{se}"
    );
    assert!(!text(&out.stdout).contains("ran"));
}

/// Secret values come from `--secrets`, reach the job, and never appear in output, logs or
/// events.
#[test]
fn secrets_reach_the_job_and_are_redacted_everywhere() {
    let d = scratch("secrets");
    let secrets = d.join("secrets.toml");
    write_with_mode(
        &secrets,
        "[user]\nhf-token = \"hf_s3cr3t_VALUE\"\n",
        FileMode::OwnerOnly,
    );
    let f = d.write_file("s.fz",
        format!(
            "version: v1\njobs:\n{}",
            job(
                "use",
                "echo token=$HF_TOKEN; echo \"$HF_TOKEN\" >&2; test \"$HF_TOKEN\" = hf_s3cr3t_VALUE",
                "    env:\n      - HF_TOKEN=secret://user/hf-token\n"
            )
        ),
    );
    let ev = d.join("events.jsonl");
    let out = run(
        &d,
        &f,
        &[
            "--secrets",
            secrets.to_str().expect("utf-8"),
            "--events",
            ev.to_str().expect("utf-8"),
            "--keep",
        ],
    );
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("[use] token=***"), "{so}");
    let mut seen = so.clone() + &se + &std::fs::read_to_string(&ev).expect("events");
    for e in std::fs::read_dir(d.join("run/logs"))
        .expect("logs")
        .flatten()
    {
        seen += &std::fs::read_to_string(e.path()).unwrap_or_default();
    }
    assert!(!seen.contains("hf_s3cr3t_VALUE"), "{seen}");
    // Without the secrets file, the job cannot run: exit 2 before anything starts.
    let out = run(&d, &f, &[]);
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(se.contains("secret://user/hf-token"), "{se}");
    assert!(se.contains("--secrets FILE"), "{se}");
}

/// The host runtime binds a volume over an existing directory in a private mount namespace:
/// the job writes through the mount point into the volume, and the host's directory stays
/// empty. Needs root (CI runs as root); otherwise the refusal names the job and the mount.
#[test]
fn the_host_runtime_binds_volumes_in_a_private_mount_namespace() {
    let d = scratch("bind");
    let mnt = d.join("mnt");
    std::fs::create_dir_all(&mnt).expect("mount point");
    let f = d.write_file("bind.fz",
        format!(
            "version: v1\nvolumes:\n  v:\n    reference: volume://user/ephemeral\njobs:\n{}{}",
            job(
                "write",
                &format!("echo data > {}/out.txt", mnt.display()),
                &format!("    mounts:\n      v:\n        location: {}\n", mnt.display())
            ),
            job(
                "read",
                &format!("cat {}/out.txt", mnt.display()),
                &format!(
                    "    mounts:\n      v:\n        location: {}\n    depends-on:\n      - name: write\n",
                    mnt.display()
                )
            )
        ),
    );
    let out = run(&d, &f, &["--keep"]);
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    let root = std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"));
    if !root && out.status.code() == Some(2) {
        assert_eq!(out.status.code(), Some(2), "{se}");
        assert!(
            se.contains("job `read`") || se.contains("job `write`"),
            "{se}"
        );
        assert!(se.contains("install bubblewrap"), "{se}");
        return;
    }
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("[read] data"), "{so}");
    assert!(se.contains("private mount namespace"), "{se}");
    assert!(
        std::fs::read_dir(&mnt).expect("mnt").next().is_none(),
        "the bind leaked out of the job's mount namespace"
    );
    let vol = std::fs::read_dir(d.join("run/volumes"))
        .expect("volumes")
        .flatten()
        .next()
        .expect("the kept volume");
    assert_eq!(
        std::fs::read_to_string(vol.path().join("out.txt")).expect("written into the volume"),
        "data\n"
    );
}

/// A container runtime gets the plan's command line for it, with `{workdir}` filled in and
/// the environment passed the way the plan says (names on the command line, values in the
/// runtime's environment). A stand-in `podman` on PATH records what it was given.
#[test]
fn a_container_runtime_runs_the_plans_command_line() {
    let d = scratch("runtime");
    let bin = d.join("bin");
    let record = d.join("record");
    install_stand_in(
        &bin,
        "podman",
        &format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > {rec}.argv\necho \"GREETING=$GREETING\" > {rec}.env\n",
            rec = record.display()
        ),
    );
    let f = d.write_file("c.fz",
        "version: v1\nvolumes:\n  v:\n    reference: volume://user/ephemeral\njobs:\n  hello:\n    image:\n      uri: docker://alpine:3.20\n    command: [echo, hi]\n    env:\n      - GREETING=hello world\n    mounts:\n      v:\n        location: /data\n",
    );
    let path = path_with_first(&bin);
    let flags = FuzzRunFlags {
        runtime: RuntimeFlag::Podman,
        status: StatusLine::BinaryDefault,
    };
    let out = fuzz_binary!()
        .fuzz_run_command(&f, &d.join("run"), flags)
        .env("PATH", path)
        .output()
        .expect("run fuzz");
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{se}");
    let argv = std::fs::read_to_string(record.with_extension("argv")).expect("argv");
    let argv: Vec<&str> = argv.lines().collect();
    assert_eq!(&argv[..3], ["run", "--rm", "--name"], "{argv:?}");
    // The container is named after the run (FB_WORKFLOW_ID) and the instance.
    assert!(
        argv[3].starts_with("fuzz-") && argv[3].ends_with("-hello"),
        "{argv:?}"
    );
    let run_id = &argv[3]["fuzz-".len()..argv[3].len() - "-hello".len()];
    assert!(!run_id.contains('{'), "placeholder left: {argv:?}");
    let vol = format!("{}/volumes/v:/data", d.join("run").display());
    assert!(argv.contains(&vol.as_str()), "{vol} not in {argv:?}");
    assert!(argv.contains(&"GREETING"), "{argv:?}");
    assert!(
        !argv.iter().any(|w| w.contains("hello world")),
        "a value on the command line: {argv:?}"
    );
    assert_eq!(
        &argv[argv.len() - 3..],
        ["docker://alpine:3.20", "echo", "hi"]
    );
    assert_eq!(
        std::fs::read_to_string(record.with_extension("env")).expect("env"),
        "GREETING=hello world\n"
    );
}

/// Volume ingress (a top-level `files` entry, a file on the node, and an `http://` GET from a
/// server on loopback) before the job starts, egress of what the job wrote after it finished.
#[test]
fn ingress_fills_the_volume_before_the_job_and_egress_exports_after_it() {
    let d = scratch("transfers");
    let served = d.join("served");
    std::fs::create_dir_all(&served).expect("served dir");
    std::fs::write(served.join("weights.bin"), "from http\n").expect("served file");
    let node_input = d.join("node-input.txt");
    std::fs::write(&node_input, "from the node\n").expect("node file");
    let (mut server, port) = http_server(&served);
    let out_dir = d.join("exported");
    let f = d.write_file("t.fz",
        format!(
            "version: v4
files:
  greeting: |
    from files
volumes:
  data:
    use: ephemeral
    ingress:
      - source:
          uri: file://greeting
        destination:
          uri: file://in/
      - source:
          uri: file://{node}
        destination:
          uri: file://in/node.txt
      - source:
          uri: http://127.0.0.1:{port}/weights.bin
        destination:
          uri: file://in/
    egress:
      - source:
          uri: file://result.txt
        destination:
          uri: file://{out}/
jobs:
  work:
    image:
      uri: docker://alpine:3.20
    cwd: /data
    command: [/bin/sh, -c, 'cat in/greeting in/node.txt in/weights.bin > result.txt; wc -l < result.txt']
    mounts:
      /data: data
",
            node = node_input.display(),
            out = out_dir.display()
        ),
    );
    let events = d.join("events.jsonl");
    let out = run(
        &d,
        &f,
        &[
            "--runtime",
            "host",
            "--events",
            events.to_str().expect("utf-8"),
        ],
    );
    let _ = server.kill();
    let _ = server.wait();
    let (so, se) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{so}\n{se}");
    assert!(so.contains("[work] 3"), "{so}\n{se}");
    assert_eq!(
        std::fs::read_to_string(out_dir.join("result.txt")).expect("exported"),
        "from files\nfrom the node\nfrom http\n"
    );
    assert!(se.contains("[ingress data] http://127.0.0.1:"), "{se}");
    assert!(se.contains("[egress data]"), "{se}");
    let ev = std::fs::read_to_string(&events).expect("events");
    let kinds: Vec<String> = ev
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .map(|e| {
            format!(
                "{}{}",
                e["event"].as_str().unwrap_or(""),
                e["direction"]
                    .as_str()
                    .map(|d| format!(":{d}"))
                    .unwrap_or_default()
            )
        })
        .filter(|k| k.starts_with("transfer") || k.starts_with("job_"))
        .collect();
    assert_eq!(
        kinds,
        [
            "transfer_done:ingress",
            "transfer_done:ingress",
            "transfer_done:ingress",
            "job_started",
            "job_finished",
            "transfer_done:egress"
        ]
    );
}

/// A failing ingress (a 404) starts no job and the run exits 1; an `s3://` source is refused
/// with exit 2 before anything starts.
#[test]
fn a_failed_ingress_starts_nothing_and_s3_is_refused_up_front() {
    let d = scratch("bad-transfers");
    let (mut server, port) = http_server(&d);
    let marker = d.join("ran");
    let body = |uri: &str| {
        format!(
            "version: v4\nvolumes:\n  data:\n    use: ephemeral\n    ingress:\n      - source:\n          uri: {uri}\n        destination:\n          uri: file://x\njobs:\n  work:\n    image:\n      uri: docker://alpine:3.20\n    cwd: /data\n    command: [touch, {}]\n    mounts:\n      /data: data\n",
            marker.display()
        )
    };
    let f = d.write_file(
        "404.fz",
        body(&format!("http://127.0.0.1:{port}/missing.bin")),
    );
    let out = run(&d, &f, &["--runtime", "host"]);
    let _ = server.kill();
    let _ = server.wait();
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    assert!(se.contains("404"), "{se}");
    assert!(se.contains("work skipped: volume ingress failed"), "{se}");
    assert!(!marker.exists(), "the job ran");

    let f = d.write_file("s3.fz", body("s3://bucket/data.tar.gz"));
    let out = run(&d, &f, &["--runtime", "host"]);
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{se}");
    assert!(se.contains("s3://"), "{se}");
    assert!(!marker.exists(), "the job ran");
}

/// `fuzz run` killed outright (SIGKILL: no chance to clean up) still leaves no process behind:
/// its guard ends every process group it had started, what ignores SIGTERM included.
#[test]
fn no_job_process_survives_a_sigkilled_runner() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    let d = scratch("sigkill");
    let script = format!(
        "trap '' TERM; echo $$ > {d}/pgid; (trap '' TERM; sleep 300) & sleep 300",
        d = d.display()
    );
    let f = d.write_file(
        "k.fz",
        format!("version: v1\njobs:\n{}", job("stuck", &script, "")),
    );
    let mut child = fuzz_run_on_host(&f, &d)
        .args(["--grace", "0.5"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn fuzz");
    wait_for(&d.join("pgid"));
    let pgid = read_pid(&d.join("pgid"));
    // Both the job's shell and its background child are running.
    let start = Instant::now();
    while alive_in_group(pgid).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the job never started its child"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL).expect("SIGKILL fuzz run");
    let _ = child.wait();
    let start = Instant::now();
    loop {
        let alive = alive_in_group(pgid);
        if alive.is_empty() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "still alive after the runner was killed: {alive:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
