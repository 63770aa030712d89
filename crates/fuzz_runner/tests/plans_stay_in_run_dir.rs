//! Property: for random plans mutated from real ones (the examples and the corpus, lowered as
//! `fuzz plan` lowers them), the runner either refuses the plan before anything starts (and
//! then has created nothing at all), or runs it and changes nothing outside its run directory.
//!
//! Each case lives in a fresh temporary root `T` (deep enough that `../` chains stay inside
//! it); the run directory is `T/a/b/c/d/e/f/g/h/run`. Names, host names, paths, environment
//! names and values, modes and top-level file names are replaced with hostile strings (`../`,
//! absolute paths into a watched directory `W`, options, shell syntax, NUL, very long names),
//! and some cases plant symbolic links to `W` where the run writes (a kept `--workdir`). Job
//! commands are replaced by `true`, services lose their probes, network ingress is dropped and
//! egress goes into the run directory (egress writes where the plan says, by design). The tree
//! of `T` (without the run directory) and of `W` is listed before and after: it must be the same.
//!
//! Deterministic: a small xorshift generator with a fixed seed (`FUZZ_PROPERTY_SEED` to try
//! another); `FUZZ_PROPERTY_CASES` sets the number of prepared cases (200); the first accepted
//! ones (a quarter, at least 20) are executed. Multinode heads run `exec_all true` through a
//! stand-in for `fuzz __exec-all` that sources each node's environment file.

mod support;

use fuzz_runner::{execute, prepare, read_plan, Options, RunError, RuntimeKind};
use fuzz_test_support::rng::Xorshift;
use fuzzfile_plan::{to_json, EnvValue, EnvVar, Plan, Source};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every plan the lowering makes from the examples and the corpus, with and without hosts.
fn real_plans() -> Vec<Plan> {
    let files = support::fuzzfiles(&["examples", "../shared/corpus"]);
    support::lowered_plans(&files, &["n1", "n2"])
        .into_iter()
        .map(|(_, p)| read_plan(&to_json(&p)).expect("round trip"))
        .collect()
}

/// Hostile replacements for a name or a path; absolute ones point into `watch`. Half of the
/// time one that leads somewhere else (an absolute path, a `../` chain).
fn hostile(rng: &mut Xorshift, watch: &Path) -> String {
    let w = watch.display();
    let k = rng.next_u64() % 1000;
    if rng.chance(50) {
        let escapes = [
            format!("{w}/abs-{k}"),
            format!("../x-{k}"),
            format!("../../x-{k}"),
            format!("../../../../x-{k}"),
            format!("a/../../../x-{k}"),
            format!("X=1; touch {w}/e-{k}; Y"),
        ];
        return escapes[rng.below(escapes.len())].clone();
    }
    let list = [
        format!("{w}/abs-{k}"),
        format!("../x-{k}"),
        format!("../../x-{k}"),
        format!("../../../../x-{k}"),
        format!("a/../../../x-{k}"),
        "..".to_owned(),
        ".".to_owned(),
        String::new(),
        format!("-oProxyCommand=touch {w}/p-{k}"),
        format!("$(touch {w}/c-{k})"),
        format!("x; touch {w}/s-{k}; y"),
        format!("X=1; touch {w}/e-{k}; Y"),
        format!("`touch {w}/b-{k}`"),
        format!("x\0{k}"),
        "a".repeat(300),
        "b".repeat(5000),
        format!("link-{k}"),
        format!("{{workdir}}/../x-{k}"),
        format!("{{workdir}}/files/../../x-{k}"),
        "/".to_owned(),
        "ok-name".to_owned(),
        format!("'\"\n\t{k}"),
    ];
    list[rng.below(list.len())].clone()
}

/// What the runner is about to write in a case, to plant a link there.
fn plant_points(p: &Plan) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for t in p.jobs.iter().chain(&p.services) {
        out.push(PathBuf::from("files").join(&t.name));
        out.push(PathBuf::from("helpers"));
        for f in &t.files {
            if let Some(rest) = f.host_path.strip_prefix("{workdir}/") {
                out.push(PathBuf::from(rest));
            }
        }
        for i in &t.instances {
            out.push(PathBuf::from("logs").join(format!("{}.out", i.hostname)));
        }
    }
    for v in &p.volumes {
        if let Some(rest) = v.host_path.strip_prefix("{workdir}/") {
            out.push(PathBuf::from(rest).join("input.txt"));
            out.push(PathBuf::from(rest));
        }
    }
    out
}

/// Makes a plan harmless to run (the property is about what the runner writes, not what jobs
/// do): commands are `true`, probes gone, no network ingress, egress into the run directory.
fn defang(p: &mut Plan, run_dir: &Path) {
    for t in p.jobs.iter_mut().chain(p.services.iter_mut()) {
        t.timeout = None;
        if let Some(s) = &mut t.service {
            s.readiness_probe = None;
        }
        let multinode = t.multinode.is_some();
        for i in &mut t.instances {
            if i.argv.is_some() {
                // A multinode head starts every node, which sources its environment file.
                i.argv = Some(if multinode {
                    vec!["exec_all".into(), "true".into()]
                } else {
                    vec!["true".into()]
                });
            }
            i.wrapper_words = 0;
        }
    }
    for v in &mut p.volumes {
        v.ingress.retain(|t| {
            t.source
                .uri
                .as_deref()
                .is_none_or(|u| !u.starts_with("http"))
        });
        for t in &mut v.egress {
            t.destination.uri = Some(format!("file://{}/egress/", run_dir.display()));
        }
    }
}

fn pick_task(p: &mut Plan, k: usize) -> Option<&mut fuzzfile_plan::Task> {
    let nj = p.jobs.len();
    if k < nj {
        p.jobs.get_mut(k)
    } else {
        p.services.get_mut(k - nj)
    }
}

/// One mutation of the plan.
fn mutate(p: &mut Plan, rng: &mut Xorshift, watch: &Path) {
    let h = hostile(rng, watch);
    let ntasks = p.jobs.len() + p.services.len();
    let k = rng.below(ntasks.max(1));
    match rng.below(14) {
        0 => {
            // A task renamed everywhere (so the graph still agrees).
            if let Some(t) = pick_task(p, k) {
                let old = t.name.clone();
                for t in p.jobs.iter_mut().chain(p.services.iter_mut()) {
                    if t.name == old {
                        t.name = h.clone();
                    }
                }
                for n in &mut p.graph.nodes {
                    if n.name == old {
                        n.name = h.clone();
                    }
                }
                for e in &mut p.graph.edges {
                    if e.from == old {
                        e.from = h.clone();
                    }
                    if e.to == old {
                        e.to = h.clone();
                    }
                }
                for n in &mut p.graph.order {
                    if *n == old {
                        *n = h.clone();
                    }
                }
            }
        }
        1 => {
            if let Some(t) = pick_task(p, k) {
                let n = t.instances.len();
                if let Some(i) = t.instances.get_mut(rng.below(n)) {
                    i.hostname = h;
                }
            }
        }
        2 => {
            if let Some(t) = pick_task(p, k) {
                let n = t.instances.len();
                if let Some(i) = t.instances.get_mut(rng.below(n)) {
                    i.env.push(EnvVar {
                        name: h,
                        value: EnvValue::Literal("1".into()),
                        source: Source::Job,
                    });
                }
            }
        }
        3 => {
            if let Some(t) = pick_task(p, k) {
                for i in &mut t.instances {
                    i.env.push(EnvVar {
                        name: "HOSTILE".into(),
                        value: EnvValue::Literal(h.clone()),
                        source: Source::Job,
                    });
                }
            }
        }
        4 => {
            if let Some(t) = pick_task(p, k) {
                if let Some(mn) = &mut t.multinode {
                    let n = mn.hosts.len();
                    if let Some(x) = mn.hosts.get_mut(rng.below(n)) {
                        *x = h;
                    }
                } else if let Some(i) = t.instances.first_mut() {
                    i.host = Some(h);
                }
            }
        }
        5 => {
            let n = p.volumes.len();
            if let Some(v) = p.volumes.get_mut(rng.below(n)) {
                let old = v.key.clone();
                v.key = h.clone();
                for t in p.jobs.iter_mut().chain(p.services.iter_mut()) {
                    for m in &mut t.mounts {
                        if m.volume == old {
                            m.volume = h.clone();
                        }
                    }
                }
            }
        }
        6 => {
            let n = p.volumes.len();
            if let Some(v) = p.volumes.get_mut(rng.below(n)) {
                v.host_path = h;
            }
        }
        7 => {
            if let Some(t) = pick_task(p, k) {
                let n = t.files.len();
                if let Some(f) = t.files.get_mut(rng.below(n)) {
                    f.path = if h.starts_with('/') {
                        h
                    } else {
                        format!("/data/{h}")
                    };
                }
            }
        }
        8 => {
            if let Some(t) = pick_task(p, k) {
                let n = t.files.len();
                if let Some(f) = t.files.get_mut(rng.below(n)) {
                    f.host_path = format!("{{workdir}}/files/{h}");
                }
            }
        }
        9 => {
            if let Some(t) = pick_task(p, k) {
                t.cwd = Some(format!("/data/{h}"));
            }
        }
        10 => {
            if let Some(t) = pick_task(p, k) {
                let n = t.helpers.len();
                if let Some(x) = t.helpers.get_mut(rng.below(n)) {
                    x.host_path = h;
                }
            }
        }
        11 => {
            let n = p.files.len();
            if let Some(f) = p.files.get_mut(rng.below(n)) {
                f.name = h;
            }
        }
        12 => {
            let n = p.volumes.len();
            if let Some(v) = p.volumes.get_mut(rng.below(n)) {
                let n = v.ingress.len();
                if let Some(t) = v.ingress.get_mut(rng.below(n)) {
                    t.destination.uri = Some(format!("file://{h}"));
                    t.destination.volume_path = Some(h);
                }
            }
        }
        _ => {
            if let Some(t) = pick_task(p, k) {
                let n = t.files.len();
                if let Some(f) = t.files.get_mut(rng.below(n)) {
                    f.mode = ["4755", "7777", "0644", "x", ""][rng.below(5)].into();
                }
            }
        }
    }
}

/// Every entry below `dir` (not following links) with what identifies its content.
fn snapshot(dir: &Path, skip: &Path, out: &mut BTreeMap<PathBuf, String>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p == skip {
            continue;
        }
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        use std::os::unix::fs::MetadataExt;
        let what = if m.file_type().is_symlink() {
            format!("link {:?}", std::fs::read_link(&p).ok())
        } else if m.is_dir() {
            format!("dir {:o}", m.mode())
        } else {
            format!(
                "file {:o} {} {:?}",
                m.mode(),
                m.len(),
                std::fs::read(&p).ok()
            )
        };
        out.insert(p.clone(), what);
        if m.is_dir() {
            snapshot(&p, skip, out);
        }
    }
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Stands in for `fuzz __exec-all` (this crate's tests have no `fuzz` binary): every node
/// sources its environment file, as the node script does, then runs the command.
const FAKE_EXEC_ALL: &str = r#"#!/bin/sh
[ "$1" = __exec-all ] || exit 0
shift
files=$(sed -n '/"env_files"/,/]/p' "$FUZZ_MULTINODE_CONFIG" | grep -o '"/[^"]*"' | tr -d '"')
for f in $files; do ( . "$f" && "$@" ) || exit 1; done
"#;

#[test]
fn mutated_plans_are_refused_or_stay_in_their_run_directory() {
    let plans = real_plans();
    assert!(plans.len() > 40, "only {} plans", plans.len());
    let seed = env_number("FUZZ_PROPERTY_SEED", 0x5eed_f022);
    let cases = env_number("FUZZ_PROPERTY_CASES", 200);
    let runs = (cases / 4).max(20);
    let mut rng = Xorshift::new(seed | 1);
    let base = std::env::temp_dir().join(format!("fuzz-property-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).expect("base");
    let helper = base.join("fake-fuzz");
    std::fs::write(&helper, FAKE_EXEC_ALL).expect("helper");
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let (mut refused, mut ran, mut prepared_only) = (0, 0, 0);
    for case in 0..cases {
        let root = base.join(format!("case-{case}"));
        let watch = root.join("watch");
        let run_dir = root.join("a/b/c/d/e/f/g/h/run");
        std::fs::create_dir_all(&watch).expect("watch dir");
        if let Some(parent) = run_dir.parent() {
            std::fs::create_dir_all(parent).expect("run dir's parent");
        }
        std::fs::write(watch.join("victim"), "keep me\n").expect("victim");
        let mut plan = plans[rng.below(plans.len())].clone();
        defang(&mut plan, &run_dir);
        for _ in 0..1 + rng.below(3) {
            mutate(&mut plan, &mut rng, &watch);
        }
        let execute_it = ran < runs;
        // A kept run directory with links where the run writes (to the watched directory).
        let mut options = Options {
            runtime: RuntimeKind::Host,
            grace: Duration::from_millis(100),
            ready_timeout: Duration::from_secs(2),
            ..Default::default()
        };
        options.multinode.helper_exe = Some(helper.clone());
        for v in &plan.volumes {
            if v.kind != fuzzfile_plan::VolumeKind::Ephemeral {
                // Persistent volumes live in the run directory here, so that the property
                // stays "nothing outside the run directory".
                let dir = run_dir.join("persistent").join(v.key.len().to_string());
                let _ = std::fs::create_dir_all(&dir);
                options.volumes.insert(v.key.clone(), dir);
            }
        }
        if execute_it && rng.chance(50) {
            let points = plant_points(&plan);
            if !points.is_empty() {
                let point = &points[rng.below(points.len())];
                let at = run_dir.join(point);
                let plain = point
                    .components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)));
                if plain && point.as_os_str().len() < 1000 {
                    if let Some(parent) = at.parent() {
                        let _ = std::fs::create_dir_all(parent);
                    }
                    let target = if rng.chance(50) {
                        watch.clone()
                    } else {
                        watch.join("victim")
                    };
                    let _ = std::os::unix::fs::symlink(target, &at);
                }
            }
        }
        let mut before = BTreeMap::new();
        snapshot(&root, &run_dir, &mut before);
        let run_dir_existed = run_dir.exists();
        let shown = format!("case {case} (seed {seed:#x})");
        match prepare(&plan, &options, &run_dir, "local-0-0") {
            Err(RunError::Plan(m)) => {
                assert!(!m.trim().is_empty(), "{shown}: an empty refusal");
                refused += 1;
                assert_eq!(
                    run_dir.exists(),
                    run_dir_existed,
                    "{shown}: a refused plan created its run directory"
                );
            }
            Err(e) => panic!("{shown}: not a plan refusal: {e}"),
            Ok(p) if execute_it => {
                let _ = execute(&p);
                ran += 1;
            }
            Ok(_) => prepared_only += 1,
        }
        let mut after = BTreeMap::new();
        snapshot(&root, &run_dir, &mut after);
        if before != after {
            let changed: Vec<_> = after
                .iter()
                .filter(|(k, v)| before.get(*k) != Some(*v))
                .map(|(k, _)| k.display().to_string())
                .chain(
                    before
                        .keys()
                        .filter(|k| !after.contains_key(*k))
                        .map(|k| format!("removed {}", k.display())),
                )
                .collect();
            panic!(
                "{shown}: changed outside the run directory: {changed:?}\nplan: {}",
                to_json(&plan)
            );
        }
        let _ = std::fs::remove_dir_all(&root);
    }
    let _ = std::fs::remove_dir_all(&base);
    eprintln!("{cases} cases: {refused} refused, {ran} run, {prepared_only} prepared only");
    // The mutations must exercise both sides.
    assert!(refused > cases / 4, "{refused} refused of {cases}");
    assert!(ran >= runs.min(cases) / 2, "only {ran} hostile plans ran");
}
