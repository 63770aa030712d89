//! Every plan the lowering makes from the examples, the rule specs and the corpus (with and
//! without hosts) survives its JSON round trip and gets an answer from `prepare`, never a
//! panic; and plans broken on purpose are refused with a message that names what is wrong.

mod support;

use fuzz_runner::{prepare, read_plan, Options, RunError, RuntimeKind};
use fuzzfile_plan::{lower, to_json, Plan, PlanOptions};
use std::path::{Path, PathBuf};

fn host_options() -> Options {
    Options {
        runtime: RuntimeKind::Host,
        ..Default::default()
    }
}

fn run_dir() -> PathBuf {
    std::env::temp_dir().join(format!("fuzz-prepare-plans-{}", std::process::id()))
}

#[test]
fn every_lowered_plan_round_trips_and_is_answered() {
    let files = support::fuzzfiles(&["examples", "tests/specs", "../shared/corpus"]);
    assert!(files.len() > 50, "only {} Fuzzfiles found", files.len());
    let (mut lowered, mut prepared) = (0, 0);
    for (f, plan) in support::lowered_plans(&files, &["n1", "n2", "n3"]) {
        lowered += 1;
        let json = to_json(&plan);
        let back = read_plan(&json).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(to_json(&back), json, "{}: round trip", f.display());
        match prepare(&back, &host_options(), &run_dir(), "local-0-0") {
            Ok(_) => prepared += 1,
            Err(RunError::Plan(m)) => assert!(!m.trim().is_empty(), "{}", f.display()),
            Err(e) => panic!("{}: {e}", f.display()),
        }
    }
    // Most plans run on the host runtime; what is refused says why (checked above).
    assert!(lowered > 40, "{lowered} plans");
    assert!(prepared > 10, "{prepared} of {lowered} plans prepared");
}

fn example_plan(name: &str, hosts: Option<Vec<String>>) -> Plan {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let text = std::fs::read_to_string(root.join(name)).expect("example");
    lower(
        &fuzzfile_check::analyze(&text),
        &PlanOptions {
            source: name.into(),
            hosts,
            profile: None,
        },
    )
    .expect("a plan")
}

fn refusal(plan: &Plan, options: &Options) -> String {
    match prepare(plan, options, &run_dir(), "local-0-0") {
        Err(RunError::Plan(m)) => m,
        Err(e) => panic!("not a plan refusal: {e}"),
        Ok(_) => panic!("prepared a broken plan"),
    }
}

#[test]
fn broken_plans_are_refused_with_what_is_wrong() {
    let base = example_plan("hello-world.fz", None);
    prepare(&base, &host_options(), &run_dir(), "local-0-0").expect("the example prepares");

    let mut p = base.clone();
    p.plan_version = 99;
    assert!(refusal(&p, &host_options()).contains("plan_version 99"));

    let mut p = base.clone();
    p.graph.order.push("ghost".into());
    let m = refusal(&p, &host_options());
    assert!(m.contains("`ghost`"), "{m}");

    let mut p = base.clone();
    if let Some(i) = p.jobs[0].instances.first_mut() {
        i.argv = Some(Vec::new());
    }
    let m = refusal(&p, &host_options());
    assert!(m.contains(&p.jobs[0].name) && m.contains("empty"), "{m}");

    // Host paths outside the run directory, as an edited plan might have.
    let mut p = example_plan("pipeline.fz", None);
    p.volumes[0].host_path = "/etc".into();
    let m = refusal(&p, &host_options());
    assert!(m.contains("\"/etc\" is not under the run directory"), "{m}");
    let mut p = example_plan("pipeline.fz", None);
    if let Some(f) = p.jobs[0].files.first_mut() {
        f.host_path = "{workdir}/files/../../../etc/cron.d/x".into();
    }
    let m = refusal(&p, &host_options());
    assert!(m.contains("leads out of the run directory"), "{m}");

    let mut options = host_options();
    options.volumes.insert("nope".into(), std::env::temp_dir());
    assert!(refusal(&base, &options).contains("no volume `nope`"));

    // A multinode plan with fewer hosts than nodes, as a hand-edited plan might have.
    let mut p = example_plan(
        "nccl-torchrun-generic.fz",
        Some(vec!["n1".into(), "n2".into()]),
    );
    if let Some(mn) = p.jobs[0].multinode.as_mut() {
        mn.hosts.pop();
    }
    let mut options = host_options();
    options.multinode.helper_exe = Some("/usr/bin/true".into());
    let m = refusal(&p, &options);
    assert!(
        m.contains("needs 2 nodes and the plan names 1 hosts"),
        "{m}"
    );
}
