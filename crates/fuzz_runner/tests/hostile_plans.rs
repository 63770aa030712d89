//! Hand-edited plans that try to write outside the run directory, to run shell commands
//! through environment names, to pass options to ssh through host names, or to write through
//! symbolic links: each is refused before anything starts, or written where it belongs.

mod support;

use fuzz_runner::{execute, multinode, prepare, read_plan, Options, RunError, RuntimeKind, Status};
use fuzzfile_plan::{lower, to_json, EnvValue, EnvVar, Plan, PlanOptions, Source};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

static SEQ: AtomicU64 = AtomicU64::new(0);

/// One run at a time in this process: a run ends what it finds of its processes, and two runs
/// of one process share it.
static ONE_RUN: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn execute_alone(p: &fuzz_runner::Prepared) -> fuzz_runner::Outcome {
    let _one = ONE_RUN.lock().unwrap_or_else(|e| e.into_inner());
    execute(p).expect("runs")
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "fuzz-hostile-{tag}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn plan_of(text: &str, hosts: Option<Vec<String>>) -> Plan {
    let plan = lower(
        &fuzzfile_check::analyze(text),
        &PlanOptions {
            source: "t.fz".into(),
            hosts,
            profile: None,
        },
    )
    .expect("a plan");
    // As `fuzz run` reads it.
    read_plan(&to_json(&plan)).expect("round trip")
}

fn example(name: &str, hosts: Option<Vec<String>>) -> Plan {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    plan_of(
        &std::fs::read_to_string(root.join(name)).expect("example"),
        hosts,
    )
}

/// A two-node job (its file outside any volume dropped: the host runtime could not place it).
fn multinode_example() -> Plan {
    let hosts = Some(vec!["n1".to_owned(), "n2".to_owned()]);
    let mut p = example("nccl-torchrun-generic.fz", hosts);
    p.jobs[0]
        .files
        .retain(|f| f.path == fuzzfile_plan::SCRIPT_PATH);
    assert!(p.jobs[0].multinode.is_some());
    p
}

fn options() -> Options {
    let mut o = Options {
        runtime: RuntimeKind::Host,
        grace: Duration::from_millis(200),
        ..Default::default()
    };
    o.multinode.helper_exe = Some(PathBuf::from("/bin/true"));
    o
}

fn refusal(plan: &Plan, run_dir: &Path) -> String {
    match prepare(plan, &options(), run_dir, "local-0-0") {
        Err(RunError::Plan(m)) => m,
        Err(e) => panic!("not a plan refusal: {e}"),
        Ok(_) => panic!("a hostile plan was prepared"),
    }
}

/// Renames task `from` everywhere the plan names it.
fn rename_task(p: &mut Plan, from: &str, to: &str) {
    let fix = |s: &mut String| {
        if s == from {
            *s = to.to_owned();
        }
    };
    for t in p.jobs.iter_mut().chain(p.services.iter_mut()) {
        fix(&mut t.name);
    }
    for n in &mut p.graph.nodes {
        fix(&mut n.name);
    }
    for e in &mut p.graph.edges {
        fix(&mut e.from);
        fix(&mut e.to);
    }
    for n in &mut p.graph.order {
        fix(n);
    }
    for v in &mut p.volumes {
        for m in &mut v.mounted_by {
            fix(m);
        }
    }
}

/// Regression: an instance `hostname` of `/tmp/x` made the runner write `/tmp/x.out`, and
/// `../../x` a log two levels above `logs/`.
#[test]
fn an_instance_hostname_that_is_a_path_is_refused() {
    let base = example("hello-world.fz", None);
    let watch = tmp("hostname-watch");
    let run_dir = tmp("hostname-run").join("run");
    for bad in [
        format!("{}/x", watch.display()),
        "../../x".to_owned(),
        String::new(),
        "-x".to_owned(),
        "a".repeat(300),
    ] {
        let mut p = base.clone();
        p.jobs[0].instances[0].hostname = bad.clone();
        let m = refusal(&p, &run_dir);
        assert!(m.contains("/jobs/0/instances/0/hostname"), "{bad}: {m}");
        assert!(m.contains("instance hostname"), "{bad}: {m}");
    }
    assert!(
        !run_dir.exists(),
        "a refused plan created its run directory"
    );
    assert_eq!(std::fs::read_dir(&watch).expect("ls").count(), 0);
}

/// Regression: a multinode job named `../../../x` wrote its environment files (secrets
/// included) three levels above `helpers/`.
#[test]
fn a_multinode_job_name_that_is_a_path_is_refused() {
    let base = multinode_example();
    let name = base.jobs[0].name.clone();
    assert!(base.jobs[0].multinode.is_some());
    let run_dir = tmp("mn-run").join("a/b/run");
    // A sane rename prepares: the refusal below is about the name.
    let mut p = base.clone();
    rename_task(&mut p, &name, "renamed");
    prepare(&p, &options(), &run_dir, "local-0-0").expect("a renamed job prepares");
    for bad in ["../../../x", "/tmp/x", "x/../../y", ".."] {
        let mut p = base.clone();
        rename_task(&mut p, &name, bad);
        let m = refusal(&p, &run_dir);
        assert!(m.contains("/jobs/0/name"), "{bad}: {m}");
        assert!(m.contains("job name"), "{bad}: {m}");
    }
    assert!(!run_dir.exists());
}

/// Regression: an environment name `X=1; touch /tmp/p; Y` ran `touch` on every node, since
/// the environment file was `export {name}='...'`.
#[test]
fn an_environment_name_that_is_a_command_is_refused() {
    let watch = tmp("env-watch");
    let hostile = format!("X=1; touch {}/p; Y", watch.display());
    let base = multinode_example();
    let run_dir = tmp("env-run").join("run");
    let mut p = base.clone();
    for i in &mut p.jobs[0].instances {
        i.env.push(EnvVar {
            name: hostile.clone(),
            value: EnvValue::Literal("1".into()),
            source: Source::Job,
        });
    }
    let m = refusal(&p, &run_dir);
    assert!(m.contains("/jobs/0/instances/0/env/"), "{m}");
    assert!(m.contains("environment variable name"), "{m}");
    // A NUL in a value: refused when the plan is read, with where it is.
    let mut p = base.clone();
    p.jobs[0].instances[0].env.push(EnvVar {
        name: "G".into(),
        value: EnvValue::Literal("a\0b".into()),
        source: Source::Job,
    });
    let m = refusal(&p, &run_dir);
    assert!(m.contains("NUL") && m.contains("the value of G"), "{m}");
    // The writer refuses such a name whatever checked it before.
    let e = multinode::env_file(&[(hostile.clone(), "1".into())]).expect_err("writer");
    assert!(e.contains("environment variable name"), "{e}");
    assert_eq!(std::fs::read_dir(&watch).expect("ls").count(), 0);
}

/// The environment file's values are single-quoted: what a shell reads back is the value, and
/// nothing in it runs.
#[test]
fn environment_file_values_survive_the_shell() {
    // A run's end signals the runner's leftover children, which in this test process would
    // include the shells below: they start only while no run is going on.
    let _alone = ONE_RUN.lock().unwrap_or_else(|e| e.into_inner());
    let watch = tmp("env-values");
    let p = watch.join("p");
    let values = [
        format!("'; touch {}; '", p.display()),
        format!("$(touch {})", p.display()),
        format!("`touch {}`", p.display()),
        "a\nb'c\"d\\e $HOME".to_owned(),
        String::new(),
    ];
    for v in &values {
        let file = multinode::env_file(&[("V".into(), v.clone())]).expect("env file");
        let path = watch.join("env");
        std::fs::write(&path, file).expect("write");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(". \"$1\" && printf '%s' \"$V\"")
            .arg("sh")
            .arg(&path)
            .output()
            .expect("sh");
        assert!(out.status.success(), "{v:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), *v);
        assert!(!p.exists(), "{v:?} ran a command");
    }
}

/// Regression: a plan host `-oProxyCommand=...` was refused only because it does not resolve;
/// it is refused as `--hosts` refuses it, by the same check, wherever a plan names a host.
#[test]
fn a_plan_host_that_is_an_option_is_refused() {
    let base = multinode_example();
    let run_dir = tmp("host-run").join("run");
    let hostile = "-oProxyCommand=touch /tmp/p";
    let by_hosts_arg = fuzz_runner::hosts::parse_hosts_arg(hostile).expect_err("--hosts");
    let mut p = base.clone();
    if let Some(mn) = &mut p.jobs[0].multinode {
        mn.hosts[1] = hostile.into();
    }
    let m = refusal(&p, &run_dir);
    assert!(m.contains("/jobs/0/multinode/hosts/1"), "{m}");
    assert!(!m.contains("cannot resolve"), "{m}");
    let why = fuzz_runner::hosts::validate_hostname(hostile).expect_err("validator");
    assert!(m.contains(&why), "{m}\nnot the --hosts message: {why}");
    assert!(by_hosts_arg.contains("starts with '-'"), "{by_hosts_arg}");
    assert!(why.contains("starts with '-'"), "{why}");
    for (k, bad) in ["-oProxyCommand=x", "a b", "x;y", ""]
        .into_iter()
        .enumerate()
    {
        let mut p = base.clone();
        p.jobs[0].instances[1].host = Some(bad.into());
        let m = refusal(&p, &run_dir);
        assert!(m.contains("/jobs/0/instances/1/host"), "{k}: {m}");
        let mut p = base.clone();
        p.jobs[0].instances[0].env.push(EnvVar {
            name: "PEER".into(),
            value: EnvValue::Runtime(format!("address-of:{bad}")),
            source: Source::Job,
        });
        let m = refusal(&p, &run_dir);
        assert!(m.contains("/value/runtime"), "{k}: {m}");
    }
}

/// Other names and paths that become paths: volume keys, file paths that leave the volume of
/// the job's working directory, modes with set-user-ID bits.
#[test]
fn other_names_and_paths_are_refused() {
    let base = example("pipeline.fz", None);
    let run_dir = tmp("other-run").join("run");
    let mut p = base.clone();
    p.volumes[0].key = "../x".into();
    assert!(refusal(&p, &run_dir).contains("/volumes/0/key"));
    let job = p
        .jobs
        .iter()
        .position(|t| !t.files.is_empty())
        .expect("a job with files");
    let mut p = base.clone();
    p.jobs[job].files[0].path = "/data/../../../tmp/x".into();
    let m = refusal(&p, &run_dir);
    assert!(
        m.contains(&format!("/jobs/{job}/files/0/path")) && m.contains("`..`"),
        "{m}"
    );
    let mut p = base.clone();
    p.jobs[job].files[0].mode = "4755".into();
    assert!(refusal(&p, &run_dir).contains("more than 0777"));
    let mut p = base.clone();
    p.jobs[job].cwd = Some("/data/../..".into());
    assert!(refusal(&p, &run_dir).contains(&format!("/jobs/{job}/cwd")));
    let mut p = base.clone();
    p.jobs[job].files[0].host_path = "{workdir}/../x".into();
    assert!(refusal(&p, &run_dir).contains("leads out of the run directory"));
    // Every problem at once.
    let mut p = base.clone();
    p.volumes[0].key = "../x".into();
    p.jobs[job].files[0].mode = "4755".into();
    let m = refusal(&p, &run_dir);
    assert!(
        m.contains("/volumes/0/key") && m.contains("/files/0/mode"),
        "{m}"
    );
    assert!(!run_dir.exists());
}

const SYMLINK_PLAN: &str = "version: v4
volumes:
  data:
    use: ephemeral
jobs:
  work:
    image:
      uri: docker://alpine:3.20
    cwd: /data
    files:
      /data/target: \"from the plan\\n\"
      /data/sub/inner: \"inner\\n\"
    command: [/bin/sh, -c, 'cat target']
    mounts:
      /data: data
";

fn run_with_volume(plan: &Plan, dir: &Path, run_dir: &Path) -> fuzz_runner::Outcome {
    let mut o = options();
    o.volumes = BTreeMap::from([("data".to_owned(), dir.to_owned())]);
    let prepared = prepare(plan, &o, run_dir, "local-0-0").expect("prepares");
    execute_alone(&prepared)
}

/// Regression: `files:` written into a volume followed a symbolic link left there (by an
/// earlier job, a kept `--workdir` or the owner of a `--volume` directory) and overwrote the
/// file outside. A link at the file's own name is replaced; a link on the way is an error that
/// names it; the outside is untouched either way.
#[test]
fn files_are_never_written_through_a_symbolic_link_in_a_volume() {
    let plan = plan_of(SYMLINK_PLAN, None);
    let outside = tmp("link-outside");
    let secret = outside.join("file");
    std::fs::write(&secret, "keep me\n").expect("write");

    // The link at the name itself.
    let vol = tmp("link-vol");
    std::os::unix::fs::symlink(&secret, vol.join("target")).expect("symlink");
    let out = run_with_volume(&plan, &vol, &tmp("link-run1").join("run"));
    assert_eq!(std::fs::read_to_string(&secret).expect("read"), "keep me\n");
    assert_eq!(out.jobs[0].status, Status::Finished, "{:?}", out.jobs[0]);
    let meta = std::fs::symlink_metadata(vol.join("target")).expect("meta");
    assert!(meta.is_file(), "the link was not replaced by the file");
    assert_eq!(
        std::fs::read_to_string(vol.join("target")).expect("read"),
        "from the plan\n"
    );

    // A link on the way: a directory of the volume that points outside.
    let vol = tmp("link-vol2");
    std::os::unix::fs::symlink(&outside, vol.join("sub")).expect("symlink");
    let out = run_with_volume(&plan, &vol, &tmp("link-run2").join("run"));
    assert_eq!(out.jobs[0].status, Status::Failed, "{:?}", out.jobs[0]);
    assert!(
        out.jobs[0].detail.contains("symbolic link") && out.jobs[0].detail.contains("sub"),
        "{}",
        out.jobs[0].detail
    );
    let names: Vec<_> = std::fs::read_dir(&outside)
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("file")]);
    assert_eq!(std::fs::read_to_string(&secret).expect("read"), "keep me\n");
}

/// The same in the run directory itself: a kept `--workdir` whose `files/<job>` directory is
/// a link outside.
#[test]
fn files_are_never_written_through_a_symbolic_link_in_a_kept_run_directory() {
    let base = example("hello-world.fz", None);
    let t = base
        .jobs
        .iter()
        .position(|t| !t.files.is_empty())
        .expect("a script");
    let name = base.jobs[t].name.clone();
    let outside = tmp("kept-outside");
    let run_dir = tmp("kept-run").join("run");
    std::fs::create_dir_all(run_dir.join("files")).expect("mkdir");
    std::os::unix::fs::symlink(&outside, run_dir.join("files").join(&name)).expect("symlink");
    let prepared = prepare(&base, &options(), &run_dir, "local-0-0").expect("prepares");
    let out = execute_alone(&prepared);
    let r = out.jobs.iter().find(|j| j.name == name).expect("report");
    assert_eq!(r.status, Status::Failed, "{r:?}");
    assert!(r.detail.contains("symbolic link"), "{}", r.detail);
    // The message names the link itself.
    let link = run_dir.join("files").join(&name);
    assert!(
        r.detail.contains(&format!("{}:", link.display())),
        "{}",
        r.detail
    );
    assert_eq!(std::fs::read_dir(&outside).expect("ls").count(), 0);
}

/// Environment files hold secrets: they are 0600 from the moment they exist.
#[test]
fn environment_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let mut plan = multinode_example();
    for i in &mut plan.jobs[0].instances {
        if i.argv.is_some() {
            i.argv = Some(vec!["true".into()]);
        }
    }
    let run_dir = tmp("envfile-run").join("run");
    let mut o = options();
    o.keep = true;
    let prepared = prepare(&plan, &o, &run_dir, "local-0-0").expect("prepares");
    let out = execute_alone(&prepared);
    assert_eq!(out.jobs[0].status, Status::Finished, "{:?}", out.jobs[0]);
    let mut env_files = 0;
    for e in std::fs::read_dir(run_dir.join("helpers")).expect("helpers") {
        let e = e.expect("entry");
        let n = e.file_name().to_string_lossy().into_owned();
        if n.contains(".env.") || n.ends_with(".multinode.json") {
            let mode = e.metadata().expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{n}");
            env_files += 1;
        }
    }
    assert_eq!(
        env_files, 3,
        "two environment files and the node configuration"
    );
}

/// A kept run directory whose log file is a link outside: the log is not written through it,
/// and the run says its logs are incomplete.
#[test]
fn a_log_is_never_written_through_a_symbolic_link() {
    let base = example("hello-world.fz", None);
    let outside = tmp("log-outside");
    let secret = outside.join("file");
    std::fs::write(&secret, "keep me\n").expect("write");
    let run_dir = tmp("log-run").join("run");
    std::fs::create_dir_all(run_dir.join("logs")).expect("mkdir");
    let log = run_dir
        .join("logs")
        .join(format!("{}.out", base.jobs[0].instances[0].hostname));
    std::os::unix::fs::symlink(&secret, &log).expect("symlink");
    let prepared = prepare(&base, &options(), &run_dir, "local-0-0").expect("prepares");
    let out = execute_alone(&prepared);
    assert_eq!(std::fs::read_to_string(&secret).expect("read"), "keep me\n");
    assert!(
        out.log_failures.iter().any(|m| m.contains("symbolic link")),
        "{:?}",
        out.log_failures
    );
    assert_ne!(out.exit_code(), 0);
}

/// The check refuses nothing the lowering makes: every plan of the examples, the rule specs
/// and the corpus (with and without hosts) passes it.
#[test]
fn every_lowered_plan_passes_the_check() {
    let files = support::fuzzfiles(&["examples", "tests/specs", "../shared/corpus"]);
    let mut checked = 0;
    for (f, plan) in support::lowered_plans(&files, &["gpu-01", "gpu-02.cluster"]) {
        if let Err(e) = fuzz_runner::validate::validate_plan(&plan) {
            panic!("{}: {e}", f.display());
        }
        checked += 1;
    }
    assert!(checked > 40, "{checked} plans");
}
