//! Seeing a run, on a real run's events: `run_finished` ends the events file with the
//! outcome, a failed job's summary names its log and shows its last lines, and `fuzz report`
//! draws the events as a timeline (SVG or HTML), the same bytes each time.

use fuzz_test_support::{fuzz_binary, lossy_text as text, FuzzRunFlags, ScratchDirectory};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fuzz() -> Command {
    fuzz_binary!().command()
}

fn scratch(name: &str) -> ScratchDirectory {
    ScratchDirectory::create("fuzz-report-test", name)
}

/// `fuzz run FILE --workdir DIR/run --runtime host --status never`, the rest the caller's.
fn fuzz_run_on_host(file: &Path, dir: &Path) -> Command {
    fuzz_binary!().fuzz_run_command(
        file,
        &dir.join("run"),
        FuzzRunFlags::HOST_WITHOUT_STATUS_LINE,
    )
}

const RUN: &str = r#"version: v4
jobs:
  fetch:
    image:
      uri: docker://alpine:3.20
    command: [/bin/sh, -c, 'echo fetched']
  train:
    image:
      uri: docker://alpine:3.20
    command: [/bin/sh, -c, 'echo "task $TASK_ID"']
    task-array:
      start: 1
      end: 3
      concurrency: 2
    depends-on:
      - name: fetch
        status: FINISHED
  evaluate:
    image:
      uri: docker://alpine:3.20
    command: [/bin/sh, -c, 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "step $i" >&2; done; echo "loss is NaN" >&2; exit 3']
    depends-on:
      - name: train
        status: FINISHED
  publish:
    image:
      uri: docker://alpine:3.20
    command: [/bin/sh, -c, 'echo never']
    depends-on:
      - name: evaluate
        status: FINISHED
"#;

fn real_run(d: &Path) -> (Output, PathBuf) {
    let f = d.join("run.fz");
    std::fs::write(&f, RUN).expect("write");
    let ev = d.join("events.jsonl");
    let out = fuzz_run_on_host(&f, d)
        .arg("--events")
        .arg(&ev)
        .output()
        .expect("run fuzz");
    (out, ev)
}

#[test]
fn a_failed_run_ends_its_events_and_its_summary_shows_the_log() {
    let d = scratch("failed");
    let (out, ev) = real_run(&d);
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    let events = std::fs::read_to_string(&ev).expect("events");
    let last: serde_json::Value =
        serde_json::from_str(events.lines().last().expect("a line")).expect("json");
    assert_eq!(last["event"], "run_finished", "{events}");
    assert_eq!(last["status"], "failed");
    assert_eq!(last["exit_code"], 1);
    assert_eq!(last["jobs"], 4);
    assert_eq!(last["finished"], 2);
    assert_eq!(last["failed"], 1);
    assert_eq!(last["skipped"], 1);
    // The log of the failed job, and its last ten lines only.
    let log = d.join("run/logs/evaluate.err");
    assert!(
        se.contains(&format!("    log: {} (last 10 lines", log.display())),
        "{se}"
    );
    assert!(se.contains("    | loss is NaN\n"), "{se}");
    assert!(se.contains("    | step 4\n"), "{se}");
    assert!(!se.contains("    | step 3\n"), "{se}");
}

#[test]
fn fuzz_report_draws_a_real_run_the_same_each_time() {
    let d = scratch("draw");
    let (out, ev) = real_run(&d);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let svg = d.join("run.svg");
    let draw = |o: &Path| {
        let r = fuzz()
            .arg("report")
            .arg(&ev)
            .arg("-o")
            .arg(o)
            .output()
            .expect("report");
        assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
        std::fs::read_to_string(o).expect("written")
    };
    let a = draw(&svg);
    assert!(
        a.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""),
        "{a}"
    );
    for label in [
        ">run<",
        ">job fetch<",
        ">job train<",
        ">train task 1<",
        ">train task 2<",
        ">train task 3<",
        ">job evaluate<",
        ">job publish<",
    ] {
        assert!(a.contains(label), "{label} missing:\n{a}");
    }
    // Ends: evaluate failed, publish skipped, the run failed.
    assert!(a.contains("job evaluate: failed at"), "{a}");
    assert!(a.contains("job publish: skipped at"), "{a}");
    assert!(a.contains("run: failed at"), "{a}");
    assert_eq!(a, draw(&svg), "not deterministic");
    let html = draw(&d.join("run.html"));
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<td>job evaluate</td>"), "{html}");
}

#[test]
fn fuzz_report_refuses_what_it_cannot_draw() {
    let d = scratch("bad");
    let ev = d.join("bad.jsonl");
    std::fs::write(&ev, "{\"event\":\"plan_ready\",\"time_ms\":1}\nnot json\n").expect("write");
    let r = fuzz().arg("report").arg(&ev).output().expect("report");
    let se = text(&r.stderr);
    assert_eq!(r.status.code(), Some(2), "{se}");
    assert!(se.contains(&format!("{}:2:", ev.display())), "{se}");
    let empty = d.join("empty.jsonl");
    std::fs::write(&empty, "").expect("write");
    let r = fuzz().arg("report").arg(&empty).output().expect("report");
    assert_eq!(r.status.code(), Some(2));
    assert!(text(&r.stderr).contains("no events"));
    let r = fuzz()
        .arg("report")
        .arg(&ev)
        .args(["-o", "x.png"])
        .output()
        .expect("report");
    assert_eq!(r.status.code(), Some(2));
    assert!(text(&r.stderr).contains(".svg or .html"));
}

/// A multinode job (three local nodes) whose rank 2 fails first: the summary shows rank 2's
/// own log, and the timeline has a row per node with rank 2's exit.
#[test]
fn a_failed_node_is_shown_by_its_own_log_and_its_row() {
    let d = scratch("nodes");
    let f = d.write_file(
        "mn.fz",
        r#"version: v4
jobs:
  train:
    image:
      uri: docker://alpine:3.20
    command: [exec_all, /bin/sh, -c, 'echo "rank $RANK"; echo "oops-$RANK" >&2; [ $RANK != 2 ]']
    resource:
      cpu:
        cores: 1
      memory:
        size: 1GiB
    multinode:
      nodes: 3
      implementation: generic
      procs-per-node: 1
"#,
    );
    let ev = d.join("events.jsonl");
    let out = fuzz_run_on_host(&f, &d)
        .args(["--cores", "8"])
        .args(["--launcher", "local", "--events"])
        .arg(&ev)
        .output()
        .expect("run fuzz");
    let se = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{se}");
    let log = d.join("run/logs/train-2.err");
    assert!(
        se.contains(&format!("    log: {} (last 1 line", log.display())),
        "{se}"
    );
    assert!(se.contains("    | oops-2\n"), "{se}");
    let svg = d.join("run.svg");
    let r = fuzz()
        .arg("report")
        .arg(&ev)
        .arg("-o")
        .arg(&svg)
        .output()
        .expect("report");
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let a = std::fs::read_to_string(&svg).expect("svg");
    for rank in 0..3 {
        assert!(
            a.contains(&format!(">train node {rank} (train-{rank})<")),
            "{a}"
        );
    }
    assert!(a.contains("train node 2 (train-2): exit 1 at"), "{a}");
}
