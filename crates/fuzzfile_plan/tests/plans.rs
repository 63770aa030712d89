//! Snapshots of the plan of every example (and of each under its cluster profile), of the
//! job graph drawings, and the lowering's properties: determinism, independence of key
//! order, refusals.

mod common;

use fuzzfile_plan::{lower, render, to_json, PlanOptions, Refusal};
use serde_json::Value;

fn plan_text(src: &str, hosts: Option<Vec<String>>) -> Result<fuzzfile_plan::Plan, Refusal> {
    let a = fuzzfile_check::analyze(src);
    lower(
        &a,
        &PlanOptions {
            source: "test.fz".into(),
            hosts,
            profile: None,
        },
    )
}

#[test]
fn example_plans() {
    for case in common::cases() {
        let plan = common::plan(&case).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        insta::assert_snapshot!(case.name.replace('@', "."), to_json(&plan));
    }
}

#[test]
fn multinode_plan_with_hosts() {
    let case = common::cases()
        .into_iter()
        .find(|c| c.name == "nccl-tests-mpirun")
        .expect("the example");
    let plan = common::plan_with(
        &case,
        Some(vec!["gpu-a".into(), "gpu-b".into(), "gpu-c".into()]),
    )
    .expect("a plan");
    insta::assert_snapshot!("nccl-tests-mpirun.hosts", to_json(&plan));
}

#[test]
fn pipeline_graph_drawings() {
    let case = common::cases()
        .into_iter()
        .find(|c| c.name == "pipeline")
        .expect("the example");
    let plan = common::plan(&case).expect("a plan");
    insta::assert_snapshot!("pipeline.dot", render::dot(&plan));
    insta::assert_snapshot!("pipeline.mermaid", render::mermaid(&plan));
}

#[test]
fn the_committed_picture_source_is_the_dot_output() {
    let case = common::cases()
        .into_iter()
        .find(|c| c.name == "pipeline")
        .expect("the example");
    let plan = common::plan(&case).expect("a plan");
    let committed = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/img/pipeline-graph.dot"),
    )
    .unwrap_or_default();
    assert_eq!(
        committed,
        render::dot(&plan),
        "docs/img/pipeline-graph.dot is stale: regenerate it with `fuzz plan examples/pipeline.fz --format dot -o docs/img/pipeline-graph.dot` and re-render the PNG (docs/launch-plan.md)"
    );
}

#[test]
fn lowering_is_deterministic() {
    for case in common::cases() {
        let a = to_json(&common::plan(&case).expect("a plan"));
        let b = to_json(&common::plan(&case).expect("a plan"));
        assert_eq!(a, b, "{}", case.name);
    }
}

/// Remove source positions, which move when keys move.
fn without_positions(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("at");
            m.values_mut().for_each(without_positions);
        }
        Value::Array(a) => a.iter_mut().for_each(without_positions),
        _ => {}
    }
}

#[test]
fn key_order_does_not_matter() {
    let text = std::fs::read_to_string(common::examples().join("pipeline.fz")).expect("read");
    // Move `services:` after `jobs:`, and `report` before `process`.
    let services_at = text.find("services:\n").expect("services");
    let jobs_at = text.find("jobs:\n").expect("jobs");
    let report_at = text.find("  report:\n").expect("report");
    let head = &text[..services_at];
    let services = &text[services_at..jobs_at];
    let process = &text[jobs_at + "jobs:\n".len()..report_at];
    let report = &text[report_at..];
    let shuffled = format!("{head}jobs:\n{report}\n{process}{services}");
    assert_ne!(shuffled, text);
    let a = fuzzfile_check::analyze(&shuffled);
    assert!(
        a.diagnostics.is_empty(),
        "{}\n{shuffled}",
        fuzzfile_check::render::plain(&a)
    );
    let mut x = serde_json::to_value(plan_text(&text, None).expect("a plan")).expect("JSON");
    let mut y = serde_json::to_value(plan_text(&shuffled, None).expect("a plan")).expect("JSON");
    without_positions(&mut x);
    without_positions(&mut y);
    assert_eq!(x, y);
}

#[test]
fn errors_refuse_the_plan() {
    let r = plan_text(
        "version: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3}\n    command: [echo, hi]\n    depends-on: [{name: nowhere, status: FINISHED}]\n",
        None,
    );
    match r {
        Err(Refusal::Errors(d)) => {
            assert!(
                d.iter().any(|d| d.rule.name() == "unknown-reference"),
                "{d:?}"
            )
        }
        other => panic!("not refused: {other:?}"),
    }
}

#[test]
fn too_few_hosts_refuse_the_plan() {
    let src = "version: v4\njobs:\n  m:\n    image: {uri: docker://x:1}\n    command: [hostname]\n    resource: {cpu: {cores: 2}, memory: {size: 1GiB}}\n    multinode: {nodes: 3, implementation: generic}\n";
    match plan_text(src, Some(vec!["a".into(), "b".into()])) {
        Err(Refusal::Hosts {
            nodes: 3, hosts: 2, ..
        }) => {}
        other => panic!("{other:?}"),
    }
    let plan = plan_text(src, None).expect("default hosts");
    let mn = plan.jobs[0].multinode.as_ref().expect("multinode");
    assert_eq!(mn.hosts, ["m-0", "m-1", "m-2"]);
    assert_eq!(mn.slots.value, Some(2), "slots default to the cores");
    assert_eq!(mn.total_slots, 6);
}

#[test]
fn openmpi_gets_the_wrapper_line_and_secrets_stay_references() {
    let src = r#"version: v4
jobs:
  hello:
    image:
      uri: docker://registry.example/mpi:1
      secret: secret://user/registry
    env:
      - TOKEN=secret://user/api-token
      - PLAIN=1
    command: [/bin/sh, -c, mpi_hello_world]
    args: [--verbose]
    resource: {cpu: {cores: 4}, memory: {size: 1GiB, by-core: true}}
    multinode: {nodes: 2, implementation: ompi, procs-per-node: 2}
"#;
    let plan = plan_text(src, Some(vec!["n1".into(), "n2".into()])).expect("a plan");
    let job = &plan.jobs[0];
    let head = &job.instances[0];
    let argv = head.argv.as_ref().expect("the head runs the command");
    assert_eq!(
        argv,
        &[
            "mpirun",
            "--host",
            "n1:2,n2:2",
            "-np",
            "4",
            "--mca",
            "plm_rsh_agent",
            "/usr/local/bin/fuzz-multinode-ssh",
            "/bin/sh",
            "-c",
            "mpi_hello_world",
            "--verbose"
        ]
    );
    assert_eq!(head.wrapper_words, 8);
    assert!(job.instances[1].argv.is_none());
    assert_eq!(job.launchers[0].launcher, "mpirun (added by Fuzzball)");
    assert_eq!(job.launchers[0].world_size, Some(4));
    assert_eq!(
        job.resources.memory_bytes.as_ref().and_then(|m| m.value),
        Some(4 << 30),
        "by-core memory is per core"
    );
    assert!(job.image.secret.is_some());
    let json = to_json(&plan);
    assert!(json.contains("\"reference\": \"secret://user/api-token\""));
    let token = head.env.iter().find(|e| e.name == "TOKEN").expect("TOKEN");
    assert!(matches!(token.value, fuzzfile_plan::EnvValue::Secret(_)));
    // Values, secret or not, never appear in a container command line.
    let docker = &head.runtimes.docker.argv;
    assert!(docker
        .windows(2)
        .any(|w| w[0] == "--env" && w[1] == "TOKEN"));
    assert!(!docker
        .iter()
        .any(|w| w.contains("secret://") || w.contains("PLAIN=")));
}

#[test]
fn requires_means_finished_and_depends_on_wins() {
    let src = "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [echo, hi]\n  b:\n    image: {uri: docker://x:1}\n    command: [echo, hi]\n    requires: [a]\n  c:\n    image: {uri: docker://x:1}\n    command: [echo, hi]\n    requires: [a]\n    depends-on: [{name: b, status: FINISHED}]\n";
    let plan = plan_text(src, None).expect("a plan");
    let edges: Vec<(String, String, String)> = plan
        .graph
        .edges
        .iter()
        .map(|e| {
            (
                e.from.clone(),
                e.to.clone(),
                serde_json::to_string(&e.declared_by).expect("JSON"),
            )
        })
        .collect();
    assert_eq!(
        edges,
        [
            ("a".into(), "b".into(), "\"requires\"".into()),
            ("b".into(), "c".into(), "\"depends-on\"".into()),
        ]
    );
    assert_eq!(plan.graph.order, ["a", "b", "c"]);
}

#[test]
fn torchrun_world_size_sources() {
    let src = r#"version: v4
jobs:
  t:
    image: {uri: docker://x:1}
    env: [PET_NNODES=3]
    script: |
      #!/bin/bash
      exec_all torchrun --nproc-per-node=gpu --node-rank '$RANK' \
        --master-addr "$MULTINODE_NODE_IP" --master-port 29500 train.py
    resource: {cpu: {cores: 8}, memory: {size: 8GiB}, devices: {nvidia.com/gpu: 4}}
    multinode: {nodes: 3, implementation: generic}
"#;
    let plan = plan_text(src, None).expect("a plan");
    let l = &plan.jobs[0].launchers[0];
    let nnodes = l.nnodes.as_ref().expect("nnodes");
    assert_eq!(
        (nnodes.value, nnodes.source.as_str()),
        (Some(3), "PET_NNODES in env")
    );
    let nproc = l.nproc_per_node.as_ref().expect("nproc");
    assert_eq!(nproc.value, Some(4), "{}", nproc.source);
    assert_eq!(l.world_size, Some(12));
}

#[test]
fn huge_task_arrays_are_refused_not_expanded() {
    for (start, end) in [
        ("1", "1000000"),
        ("-9223372036854775808", "9223372036854775807"),
    ] {
        let src = format!("version: v4\njobs:\n  a:\n    image: {{uri: docker://x:1}}\n    command: [echo, hi]\n    task-array: {{start: {start}, end: {end}}}\n");
        match plan_text(&src, None) {
            Err(Refusal::Unsupported { message, .. }) => {
                assert!(message.contains("at most"), "{message}")
            }
            Err(Refusal::Errors(_)) => {}
            other => panic!("{start}..{end}: {other:?}"),
        }
    }
}

/// `gasnet`: the command runs as written on the head, with GASNet's ssh-spawner settings
/// pointing at the hosts and the SSH wrapper; a value the job sets itself wins.
#[test]
fn gasnet_gets_the_ssh_spawner_settings_unless_env_sets_them() {
    let src = r#"version: v1
jobs:
  hello:
    image:
      uri: docker://chapel/chapel:latest
    command: [/bin/sh, -c, hello-chapel --numLocales 2]
    env:
      - GASNET_SSH_SERVERS=custom-a custom-b
    resource: {cpu: {cores: 8}, memory: {size: 1GB}}
    multinode: {nodes: 2, implementation: gasnet}
"#;
    let plan = plan_text(src, Some(vec!["n1".into(), "n2".into()])).expect("a plan");
    let head = &plan.jobs[0].instances[0];
    assert_eq!(
        head.argv.as_deref(),
        Some(
            &[
                "/bin/sh".to_owned(),
                "-c".into(),
                "hello-chapel --numLocales 2".into()
            ][..]
        )
    );
    let env = |n: &str| {
        head.env
            .iter()
            .find(|e| e.name == n)
            .map(|e| e.value.clone())
    };
    use fuzzfile_plan::EnvValue::Literal;
    assert_eq!(env("GASNET_SPAWNFN"), Some(Literal("S".into())));
    assert_eq!(env("GASNET_IBV_SPAWNER"), Some(Literal("ssh".into())));
    assert_eq!(
        env("GASNET_SSH_CMD"),
        Some(Literal("/usr/local/bin/fuzz-multinode-ssh".into()))
    );
    assert_eq!(
        env("GASNET_SSH_SERVERS"),
        Some(Literal("custom-a custom-b".into())),
        "the job's own value wins"
    );
    assert!(plan.jobs[0]
        .notes
        .iter()
        .any(|n| n.contains("GASNet's documented ssh-spawner settings")));
}
