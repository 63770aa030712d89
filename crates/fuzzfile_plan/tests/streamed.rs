//! The streamed plan (`streamed`, `write_json_streamed`: what `fuzz plan` writes, one job at a
//! time) is the whole plan's text byte for byte (`to_json(&lower(..))`), and refuses what
//! `lower` refuses, with the same refusal and before writing a byte: on every Fuzzfile of the
//! shared corpus (`plain/` and `docs/` of ../shared/corpus/MANIFEST.tsv), every example (with
//! its cluster profiles), and generated files of many jobs, services, volumes and edges.

mod common;

use fuzzfile_check::{analyze_bytes_with, Analysis, Options};
use fuzzfile_plan::{
    lower, streamed, to_json, write_json_streamed, PlanOptions, Refusal, StreamedPlanError,
};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// What comparing the two ways gave.
#[derive(Debug, PartialEq, Eq)]
enum Compared {
    SameText,
    SameRefusal,
}

/// Lower `a` whole and streamed; fail the test on the first difference.
fn compare(name: &str, a: &Analysis, options: &PlanOptions) -> Compared {
    let mut written = Vec::new();
    let result = write_json_streamed(a, options, &mut written);
    match (lower(a, options), result) {
        (Ok(plan), Ok(())) => {
            let whole = to_json(&plan);
            if written != whole.as_bytes() {
                let written = String::from_utf8_lossy(&written);
                let at = whole
                    .bytes()
                    .zip(written.bytes())
                    .position(|(x, y)| x != y)
                    .unwrap_or(whole.len().min(written.len()));
                let from = at.saturating_sub(200);
                panic!(
                    "{name}: the streamed plan differs at byte {at} ({} and {} bytes)\nwhole:    {:?}\nstreamed: {:?}",
                    whole.len(),
                    written.len(),
                    whole.get(from..(at + 200).min(whole.len())),
                    written.get(from..(at + 200).min(written.len())),
                );
            }
            let again = streamed(a, options).expect("checked once already");
            assert_eq!(again.task_count(), plan.jobs.len() + plan.services.len());
            Compared::SameText
        }
        (Err(whole), Err(StreamedPlanError::Refused(refused))) => {
            assert_eq!(
                format!("{whole:?}"),
                format!("{refused:?}"),
                "{name}: another refusal"
            );
            assert!(
                written.is_empty(),
                "{name}: refused ({whole}) after writing {} bytes",
                written.len()
            );
            Compared::SameRefusal
        }
        (whole, streamed) => panic!(
            "{name}: lowered whole: {:?}; streamed: {streamed:?}",
            whole.map(|p| p.jobs.len())
        ),
    }
}

fn plan_options(source: &str, hosts: Option<Vec<String>>) -> PlanOptions {
    PlanOptions {
        source: source.to_owned(),
        hosts,
        profile: None,
    }
}

fn three_hosts() -> Option<Vec<String>> {
    Some(vec!["node-a".into(), "node-b".into(), "node-c".into()])
}

/// The `plain` and `docs` Fuzzfiles of ../shared/corpus/MANIFEST.tsv; empty (and said) where
/// the corpus is not checked out beside the repository.
fn corpus_fuzzfiles() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus");
    let Ok(manifest) = std::fs::read_to_string(dir.join("MANIFEST.tsv")) else {
        eprintln!("skipped: no corpus at {}", dir.display());
        return Vec::new();
    };
    manifest
        .lines()
        .skip(1)
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            match cells.as_slice() {
                [file, .., kind] if matches!(*kind, "plain" | "docs") => Some(dir.join(file)),
                _ => None,
            }
        })
        .collect()
}

#[test]
fn the_corpus_streams_the_same_bytes_or_the_same_refusal() {
    let files = corpus_fuzzfiles();
    let mut texts = 0;
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let a = analyze_bytes_with(&bytes, &Options::default());
        let name = file.display().to_string();
        let source = file.file_name().map(|n| n.to_string_lossy().into_owned());
        let source = source.unwrap_or_default();
        for hosts in [None, three_hosts()] {
            if compare(&name, &a, &plan_options(&source, hosts)) == Compared::SameText {
                texts += 1;
            }
        }
    }
    if !files.is_empty() {
        assert!(files.len() >= 30, "only {} corpus files", files.len());
        assert!(texts >= 20, "only {texts} corpus plans compared as text");
    }
}

#[test]
fn every_example_streams_the_same_bytes() {
    let mut texts = 0;
    for case in common::cases() {
        let profile = case.profile.as_ref().map(|p| {
            fuzzfile_check::profile::parse_profile(&std::fs::read_to_string(p).expect("read"))
                .expect("a profile")
        });
        let options = Options {
            profile: profile.clone(),
            ..Default::default()
        };
        let a = analyze_bytes_with(&std::fs::read(&case.file).expect("read"), &options);
        for hosts in [None, three_hosts()] {
            let plan_options = PlanOptions {
                source: format!("{}.fz", case.name),
                hosts,
                profile: profile.clone(),
            };
            if compare(&case.name, &a, &plan_options) == Compared::SameText {
                texts += 1;
            }
        }
    }
    assert!(texts >= 10, "only {texts} example plans compared");
}

/// `n` jobs named in reverse order (the plan sorts them), each after one or two earlier ones
/// (`depends-on`, `requires`, a `RUNNING` service), with defaults, mounts of two volumes (one
/// with an ingress), files, task arrays, multinode jobs of each implementation, and services.
pub fn many_jobs(n: usize) -> String {
    let mut s = String::from(
        "version: v4\nannotations: {team: bench}\n\
         defaults:\n  job:\n    mounts: {/scratch: scratch}\n    env: [LC_ALL=C.UTF-8]\n    policy: {timeout: {execute: 1h}}\n\
         volumes:\n  scratch: {reference: volume://user/ephemeral}\n  data:\n    reference: volume://user/persistent/data\n    ingress:\n      - source: {uri: 'https://example.com/in.tar'}\n        destination: {uri: 'file://in.tar'}\n\
         files:\n  config: \"a: 1\\n\"\n\
         services:\n  db:\n    image: {uri: 'docker://postgres:16'}\n    command: [postgres]\n    network: {ports: [{name: pg, port: 5432, protocol: tcp}]}\n    readiness-probe: {tcp-socket: {port: 5432}}\n\
         jobs:\n",
    );
    let implementations = ["openmpi", "mpich", "gasnet", "generic"];
    for i in (0..n).rev() {
        let _ = writeln!(s, "  job-{i:05}:");
        s.push_str("    image: {uri: 'docker://alpine:3.20'}\n");
        let _ = writeln!(s, "    env: [STAGE={i}, OUT=/data/out-{i}]");
        match i % 5 {
            0 => {
                let _ = writeln!(
                    s,
                    "    script: |\n      #!/bin/sh\n      echo stage {i} > /data/out-{i}"
                );
            }
            1 => {
                let _ = writeln!(
                    s,
                    "    command: [/bin/sh, -c, 'echo $FB_TASK_ID']\n    task-array: {{start: 1, end: 3, concurrency: 2}}"
                );
            }
            2 => {
                let _ = writeln!(
                    s,
                    "    command: [./a.out, --hosts, '$MULTINODE_HOSTLIST', '$MULTINODE_NODE_IP']\n    multinode: {{nodes: 2, implementation: {}}}\n    resource: {{cpu: {{cores: 4}}, memory: {{size: 1GiB}}}}",
                    implementations[(i / 5) % implementations.len()]
                );
            }
            3 => {
                let _ = writeln!(
                    s,
                    "    command: [cat, /etc/config]\n    files: {{/etc/config: 'file://config'}}\n    cwd: /data"
                );
            }
            _ => {
                let _ = writeln!(
                    s,
                    "    command: [echo, '{i}']\n    policy: {{timeout: {{execute: 30m}}}}"
                );
            }
        }
        s.push_str("    mounts: {/data: data}\n");
        if i == 0 {
            s.push_str("    depends-on: [{name: db, status: RUNNING}]\n");
        } else if i % 7 == 0 {
            let _ = writeln!(s, "    requires: [job-{:05}]", i - 1);
        } else {
            let _ = writeln!(
                s,
                "    depends-on:\n      - {{name: job-{:05}, status: FINISHED}}\n      - {{name: job-{:05}}}",
                i - 1,
                i / 2
            );
        }
    }
    s
}

#[test]
fn a_generated_file_of_many_jobs_streams_the_same_bytes() {
    let text = many_jobs(400);
    let a = fuzzfile_check::analyze(&text);
    let errors: Vec<_> = a
        .diagnostics
        .iter()
        .filter(|d| d.severity == fuzzfile_check::Severity::Error)
        .map(|d| d.message.clone())
        .take(5)
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        compare("many jobs", &a, &plan_options("many.fz", None)),
        Compared::SameText
    );
    assert_eq!(
        compare(
            "many jobs, --hosts",
            &a,
            &plan_options("many.fz", three_hosts())
        ),
        Compared::SameText
    );
    let plan = lower(&a, &plan_options("many.fz", None)).expect("lowered");
    assert_eq!(plan.jobs.len(), 400);
    assert_eq!(plan.services.len(), 1);
    assert!(plan.graph.edges.len() > 700, "{}", plan.graph.edges.len());
}

/// A job that is refused, planned last (and in the middle) after many that are not: the
/// streamed plan refuses as `lower` does, before its first byte, for the refusals found only
/// while lowering a task (`Unsupported`, `Hosts`) as for the analysis's errors.
#[test]
fn a_refusal_found_in_the_last_job_writes_nothing() {
    let head = many_jobs(50);
    let refused_jobs = [
        (
            "    image: {uri: 'docker://alpine:3.20'}\n    command: [x]\n    task-array: {start: 1, end: 20000}\n",
            None,
        ),
        (
            "    image: {uri: 'docker://alpine:3.20'}\n    command: [x]\n    multinode: {nodes: 20000}\n",
            None,
        ),
        (
            "    image: {uri: 'docker://alpine:3.20'}\n    command: [x]\n    multinode: {nodes: 4, implementation: openmpi}\n",
            three_hosts(),
        ),
        (
            "    image: {uri: 'docker://alpine:3.20'}\n    command: [x]\n    task-array: {start: 1, end: 2}\n    multinode: {nodes: 2}\n",
            None,
        ),
        ("    command: [x]\n", None),
        ("    image: {uri: 'docker://alpine:3.20'}\n", None),
    ];
    let (mut hosts_refused, mut unsupported) = (0, 0);
    for (job, hosts) in refused_jobs {
        for name in ["zz-last", "job-00025-b"] {
            let text = format!("{head}  {name}:\n{job}");
            let a = fuzzfile_check::analyze(&text);
            let options = plan_options("refused.fz", hosts.clone());
            assert_eq!(compare(name, &a, &options), Compared::SameRefusal, "{job}");
            match streamed(&a, &options) {
                Err(Refusal::Hosts { .. }) => hosts_refused += 1,
                Err(Refusal::Unsupported { .. }) => unsupported += 1,
                Err(Refusal::Errors(_)) => {}
                Ok(_) => panic!("{name}: planned\n{job}"),
            }
        }
    }
    // The others are analysis errors (refused before any task is looked at).
    assert_eq!((hosts_refused, unsupported), (2, 2));
}

#[test]
fn a_failing_writer_is_a_write_error() {
    let a = fuzzfile_check::analyze(&many_jobs(20));
    let err = write_json_streamed(
        &a,
        &plan_options("many.fz", None),
        common::Full { room: 5000 },
    )
    .expect_err("the writer is full");
    let StreamedPlanError::Write(e) = err else {
        panic!("{err:?}");
    };
    assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
}
