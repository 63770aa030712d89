//! The launch corpus (tests/launch_corpus/): real launch scripts taken from public training
//! repositories, each with the source it came from (`NN-repo-name.sh`), put into a Fuzzfile job
//! as written (`NN-repo-name.fz`) and, where natural, with one realistic misconfiguration
//! (`NN-repo-name.bad.fz`). `expected.tsv` lists what the launcher, GPU and NCCL rules must
//! report on each Fuzzfile, reasoned from how bash, torchrun and Fuzzball behave (not from what
//! the checker says): `file<TAB>rule<TAB>line<TAB>reason`. A Fuzzfile with no row must produce
//! no finding from those rules.
//!
//! - `every_script_has_its_source_and_its_fuzzfile`: the corpus is complete and traceable.
//! - `expected_findings_are_well_formed`: every row names a corpus file, a launch rule and a
//!   line of that file; every misconfiguration is expected to be found.
//! - `launch_rules_agree_with_expected_findings`: the comparison (ignored until the launch
//!   semantics layer lands; run it with `--ignored` to list the disagreements).
//! - `launch_corpus_diagnostics`: every diagnostic on every corpus file, in a reviewed snapshot.
//! - `expected_findings_follow_from_what_bash_hands_the_launchers`: every job is run by real
//!   bash with the launchers replaced by stubs that log their arguments (Fuzzball's `exec_all`
//!   and SSH wrapper modelled as below); what each launcher receives on each node is a reviewed
//!   snapshot, and the problems that follow from it must be exactly expected.tsv's rows.

use fuzzfile_check::analyze_bytes;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The rules this corpus is about: launches, GPUs and NCCL. Findings of other rules (unknown
/// keys, cluster-profile hints) are in the snapshot but not compared.
const LAUNCH_RULES: &[&str] = &[
    "launcher-nproc-mismatch",
    "launcher-nnodes-mismatch",
    "torchrun-standalone-multinode",
    "launcher-missing-node-rank",
    "launcher-missing-master-addr",
    "torchrun-rdzv-incomplete",
    "torch-distributed-launch-deprecated",
    "launcher-double-wrap",
    "mpi-slots-not-gpus",
    "gpu-request-missing",
];

fn is_launch_rule(name: &str) -> bool {
    LAUNCH_RULES.contains(&name) || name.starts_with("nccl-")
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/launch_corpus")
}

/// The corpus files with this suffix, sorted by name.
fn names(suffix: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir())
        .expect("tests/launch_corpus is readable")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(suffix))
        .collect();
    v.sort();
    v
}

/// `NN-repo-name` of a corpus file name (`NN-repo-name.bad.fz` → `NN-repo-name`).
fn stem(name: &str) -> &str {
    let n = name
        .strip_suffix(".fz")
        .or_else(|| name.strip_suffix(".sh"))
        .unwrap_or(name);
    n.strip_suffix(".bad").unwrap_or(n)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

struct Row {
    file: String,
    rule: String,
    line: usize,
    reason: String,
    /// 1-based line of the row in expected.tsv.
    at: usize,
}

fn expected() -> Vec<Row> {
    let text = read("expected.tsv");
    let mut rows = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.is_empty() || l.starts_with('#') || (i == 0 && l.starts_with("file\t")) {
            continue;
        }
        let f: Vec<&str> = l.split('\t').collect();
        assert_eq!(
            f.len(),
            4,
            "expected.tsv:{}: want 4 tab-separated columns (file, rule, line, reason), got {}",
            i + 1,
            f.len()
        );
        let line = f[2]
            .parse()
            .unwrap_or_else(|_| panic!("expected.tsv:{}: line `{}` is not a number", i + 1, f[2]));
        rows.push(Row {
            file: f[0].to_owned(),
            rule: f[1].to_owned(),
            line,
            reason: f[3].to_owned(),
            at: i + 1,
        });
    }
    rows
}

/// The `# key: value` lines of a script's source header.
fn header(text: &str) -> BTreeMap<String, String> {
    let mut h = BTreeMap::new();
    for l in text.lines() {
        if l == "# ---- verbatim from here ----" {
            h.insert("verbatim".to_owned(), String::new());
            break;
        }
        if let Some((k, v)) = l.strip_prefix("# ").and_then(|r| r.split_once(": ")) {
            h.insert(k.to_owned(), v.trim().to_owned());
        }
    }
    h
}

#[test]
fn every_script_has_its_source_and_its_fuzzfile() {
    let scripts = names(".sh");
    let fuzzfiles = names(".fz");
    assert!(
        scripts.len() >= 40,
        "{} scripts, want at least 40",
        scripts.len()
    );
    let mut repos = BTreeSet::new();
    for s in &scripts {
        let h = header(&read(s));
        for key in [
            "launch-corpus source",
            "repository",
            "path",
            "commit",
            "licence",
            "verbatim",
        ] {
            assert!(
                h.contains_key(key),
                "{s}: the source header has no `{key}` line"
            );
        }
        let repo = &h["repository"];
        assert!(
            repo.split('/').count() == 2 && !repo.contains(' '),
            "{s}: repository `{repo}` is not owner/name"
        );
        let commit = &h["commit"];
        assert!(
            commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit()),
            "{s}: commit `{commit}` is not a full hash"
        );
        assert!(
            h["launch-corpus source"]
                == format!("https://github.com/{repo}/blob/{commit}/{}", h["path"]),
            "{s}: the source URL does not match repository, commit and path"
        );
        repos.insert(repo.clone());
        let fz = format!("{}.fz", stem(s));
        assert!(fuzzfiles.contains(&fz), "{s}: no {fz}");
    }
    assert!(
        repos.len() >= 8,
        "scripts from {} repositories, want at least 8",
        repos.len()
    );
    for f in &fuzzfiles {
        let sh = format!("{}.sh", stem(f));
        assert!(
            scripts.contains(&sh),
            "{f}: no script {sh} it was made from"
        );
        if f.ends_with(".bad.fz") {
            let good = format!("{}.fz", stem(f));
            assert!(
                fuzzfiles.contains(&good),
                "{f}: a misconfiguration without its correct variant {good}"
            );
        }
        let text = read(f);
        assert!(
            text.starts_with('#'),
            "{f}: starts with no comment saying what it runs"
        );
        assert!(text.contains("version: v4"), "{f}: not a v4 Fuzzfile");
    }
}

#[test]
fn expected_findings_are_well_formed() {
    let fuzzfiles: BTreeSet<String> = names(".fz").into_iter().collect();
    let mut seen = BTreeSet::new();
    let rows = expected();
    for r in &rows {
        let at = format!("expected.tsv:{}", r.at);
        assert!(
            fuzzfiles.contains(&r.file),
            "{at}: no corpus file {}",
            r.file
        );
        assert!(
            is_launch_rule(&r.rule),
            "{at}: `{}` is not a launch, GPU or NCCL rule",
            r.rule
        );
        assert!(
            fuzzfile_check::Rule::from_name(&r.rule).is_some(),
            "{at}: no rule named `{}`",
            r.rule
        );
        let lines = read(&r.file).lines().count();
        assert!(
            r.line >= 1 && r.line <= lines,
            "{at}: line {} is outside {} ({lines} lines)",
            r.line,
            r.file
        );
        assert!(r.reason.len() > 20, "{at}: the reason says too little");
        assert!(
            seen.insert((r.file.clone(), r.rule.clone())),
            "{at}: {} {} listed twice",
            r.file,
            r.rule
        );
    }
    for f in fuzzfiles.iter().filter(|f| f.ends_with(".bad.fz")) {
        assert!(
            rows.iter().any(|r| &r.file == f),
            "{f}: a misconfiguration with no expected finding"
        );
    }
}

/// Expected findings the checker misses today, each with why: the gap is named here so that
/// the test fails on every other disagreement, and fails too when a gap closes (the entry must
/// then go).
const KNOWN_GAPS: &[(&str, &str, &str)] = &[];

#[test]
fn launch_rules_agree_with_expected_findings() {
    let rows = expected();
    let mut missing = Vec::new();
    let mut unexpected = Vec::new();
    let mut agree = 0;
    for f in names(".fz") {
        let a = analyze_bytes(read(&f).as_bytes());
        let want: BTreeMap<&str, &Row> = rows
            .iter()
            .filter(|r| r.file == f)
            .map(|r| (r.rule.as_str(), r))
            .collect();
        let mut got: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for d in &a.diagnostics {
            if is_launch_rule(d.rule.name()) {
                let p = a.line_col(d.range.start);
                got.entry(d.rule.name())
                    .or_default()
                    .push(format!("line {}: {}", p.line, d.message));
            }
        }
        for (rule, r) in &want {
            let gap = KNOWN_GAPS.iter().any(|(gf, gr, _)| *gf == f && gr == rule);
            if got.contains_key(rule) {
                agree += 1;
                if gap {
                    unexpected.push(format!(
                        "{f}: {rule} is found now: remove it from KNOWN_GAPS"
                    ));
                }
            } else if gap {
                continue;
            } else {
                missing.push(format!(
                    "{f}: {rule} (expected at line {}: {})",
                    r.line, r.reason
                ));
            }
        }
        for (rule, found) in &got {
            if !want.contains_key(rule) {
                unexpected.push(format!("{f}: {rule} ({})", found.join("; ")));
            }
        }
    }
    assert!(
        missing.is_empty() && unexpected.is_empty(),
        "{agree} expected findings reported; {} missing, {} unexpected\n\nmissing:\n  {}\n\nunexpected:\n  {}\n",
        missing.len(),
        unexpected.len(),
        missing.join("\n  "),
        unexpected.join("\n  ")
    );
}

#[test]
fn launch_corpus_diagnostics() {
    let mut report = String::new();
    for f in names(".fz") {
        let a = analyze_bytes(read(&f).as_bytes());
        let _ = writeln!(report, "{f}");
        for d in &a.diagnostics {
            let p = a.line_col(d.range.start);
            let _ = writeln!(
                report,
                "  {}:{} {} {}: {}",
                p.line,
                p.column,
                d.severity,
                d.rule.name(),
                d.message
            );
        }
    }
    insta::assert_snapshot!("launch_corpus_diagnostics", report);
}

// ---------------------------------------------------------------------------------------------
// Every job run by real bash, with the launchers replaced by stubs that log their arguments.
//
// The model of a Fuzzball generic multinode job (docs/multinode.md, the research notes on the
// generic implementation): the job's command runs on the head node (rank 0) with the job's `env`
// and Fuzzball's MULTINODE_* variables; in a `command:` list Fuzzball expands MULTINODE_* itself.
// `exec_all WORDS...` runs the words, as the head's shell expanded them, on every node r with
// `$RANK` in the words replaced by r, RANK=r and that node's own MULTINODE_NODE_IP (10.0.0.r+1)
// in its environment, and nothing else of the head's shell. The SSH wrapper runs `sh -c "$*"`
// on the named node. The image is modelled by a stub directory: torchrun, python, mpirun and the
// other launchers log their arguments; nvidia-smi lists the requested GPUs; `date` and $RANDOM
// are fixed so the record is the same on every run; `sleep` ends the script that calls it (a
// resume loop that only ends when training has finished is cut after its first pass).
// ---------------------------------------------------------------------------------------------

const LOG_SH: &str = r#"log() {
  local line a
  printf -v line 'CALL\t%s\t%s\t%s' "${SIM_NODE:-head}" "${SIM_VIA:-}" "${0##*/}"
  for a in "$@"; do a=${a//$'\n'/\\n}; a=${a//$'\t'/\\t}; line+=$'\t'$a; done
  # the NCCL names PyTorch has renamed (or that NCCL never had), as the program sees them
  for a in NCCL_ASYNC_ERROR_HANDLING NCCL_BLOCKING_WAIT NCCL_DESYNC_DEBUG NCCL_TIMEOUT; do
    if [ -n "${!a+x}" ]; then line+=$'\t'"@env:$a=${!a}"; fi
  done
  # one write per call: stubs started in the background append whole lines
  printf '%s\n' "$line" >> "$SIM_LOG"
}
"#;

const LOGGER: &str = "#!/bin/bash\n. \"${0%/*}/.log.sh\"; log \"$@\"\n";

const EXEC_ALL: &str = r#"#!/bin/bash
. "${0%/*}/.log.sh"; log "$@"
mapfile -t E < "$SIM_NODE_ENV"
rc=0
for ((r = 0; r < SIM_NODES; r++)); do
  args=()
  for a in "$@"; do args+=("${a//\$RANK/$r}"); done
  env -i "${E[@]}" RANK=$r SIM_NODE=$r SIM_VIA=exec_all MULTINODE_NODE_IP=10.0.0.$((r + 1)) "${args[@]}" || rc=1
done
exit $rc
"#;

const SSH_WRAPPER: &str = r#"#!/bin/bash
. "${0%/*}/.log.sh"; log "$@"
mapfile -t E < "$SIM_NODE_ENV"
host=$1; shift
r=${host##*-}
exec env -i "${E[@]}" SIM_NODE=$r SIM_VIA=ssh MULTINODE_NODE_IP=10.0.0.$((r + 1)) sh -c "$*"
"#;

/// Programs of the image replaced by a logging stub.
const STUBS: &[&str] = &[
    "torchrun",
    "python",
    "python3",
    "mpirun",
    "deepspeed",
    "accelerate",
    "fabric",
    "tune",
    "llamafactory-cli",
    "fairseq-train",
    "make",
    "dcgmi",
    "module",
    "conda",
    "pip",
    "curl",
    "tar",
    "srun",
    "scontrol",
    "squeue",
    "git",
    "ml",
];

/// One program started while a job ran.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Call {
    /// `head`, or the node index that ran it.
    node: String,
    /// How it got there: ``, `exec_all` or `ssh`.
    via: String,
    prog: String,
    args: Vec<String>,
    /// Renamed or non-existent NCCL variables in the program's environment (`NAME=value`).
    env: Vec<String>,
}

struct Job {
    gpus: u64,
    nodes: u64,
    wraps: bool,
    hosts: Vec<String>,
    calls: Vec<Call>,
}

/// `/opt/`, `/work/`, `/data/` and `/root/` at the start of a path move under `root`.
fn rehome(text: &str, root: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    while i < text.len() {
        let starts = ["/opt/", "/work/", "/data/", "/root/"]
            .iter()
            .any(|p| text[i..].starts_with(p));
        let free = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b"._/-".contains(&b[i - 1]));
        if starts && free {
            out.push_str(root);
        }
        let c = text[i..].chars().next().unwrap_or(' ');
        out.push(c);
        i += c.len_utf8();
    }
    out
}

fn write_exec(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
}

/// A job ready to run: its files, stubs and environment written.
struct Prepared {
    file: String,
    root: String,
    argv: Vec<String>,
    cwd: String,
    env: Vec<(String, String)>,
    log: PathBuf,
    job: Job,
}

/// Writes everything a job needs. All jobs are prepared before any runs: a file being written
/// while another thread starts a process can be inherited open by that process and make the
/// file's execution fail with "Text file busy".
fn prepare_job(file: &str, tmp: &Path) -> Prepared {
    let text = read(file);
    let a = analyze_bytes(text.as_bytes());
    let task = a
        .model
        .jobs
        .first()
        .unwrap_or_else(|| panic!("{file}: no job"));
    let root_dir = tmp.join(file);
    let root = root_dir.to_string_lossy().into_owned();
    // Nothing is written outside the job's directory: the paths a job names lie under it.
    let inside = |path: &str| format!("{root}/{}", path.trim_start_matches('/'));
    let bin = root_dir.join("bin");
    write_exec(&bin.join(".log.sh"), LOG_SH);
    for s in STUBS {
        write_exec(&bin.join(s), LOGGER);
    }
    write_exec(&bin.join("exec_all"), EXEC_ALL);
    write_exec(&bin.join("ssh-wrapper"), SSH_WRAPPER);
    write_exec(
        &bin.join("nvidia-smi"),
        "#!/bin/bash\nfor ((i = 0; i < SIM_GPUS; i++)); do echo \"GPU $i: NVIDIA H100 80GB HBM3\"; done\n",
    );
    write_exec(&bin.join("date"), "#!/bin/sh\necho 20260101_000000\n");
    write_exec(
        &bin.join("which"),
        "#!/bin/bash\nfor p in \"$@\"; do command -v \"$p\"; done\n",
    );
    write_exec(&bin.join("sleep"), "#!/bin/sh\nkill -TERM $PPID\n");
    write_exec(&root_dir.join("bash_env"), "unset RANDOM; RANDOM=4242\n");
    for f in &task.files {
        let content = match &f.source {
            fuzzfile_model::FileSource::Ref(name) => a
                .model
                .files
                .iter()
                .find(|g| g.name.value == name.value.trim_start_matches("file://"))
                .map(|g| g.content.value.clone())
                .unwrap_or_else(|| panic!("{file}: no top-level file {}", name.value)),
            fuzzfile_model::FileSource::Inline(c) => c.value.clone(),
        };
        write_exec(Path::new(&inside(&f.path.value)), &rehome(&content, &root));
    }
    let cwd = inside(task.cwd.as_ref().map_or("/workdir", |c| c.value.as_str()));
    std::fs::create_dir_all(&cwd).unwrap_or_else(|e| panic!("{cwd}: {e}"));
    // What the checkouts the jobs run in hold: Megatron-LM's entry point, OLMo's cache script.
    write_exec(&Path::new(&cwd).join("pretrain_gpt.py"), "");
    write_exec(&Path::new(&cwd).join("scripts/beaker/warm_hf_cache.sh"), "");

    let res = task.resource.as_ref();
    let gpus = res
        .and_then(|r| r.devices.iter().find(|(k, _)| k.value == "nvidia.com/gpu"))
        .map_or(0, |(_, v)| v.value);
    let cores = res.and_then(|r| r.cores.as_ref()).map_or(1, |c| c.value);
    let mn = task.multinode.as_ref();
    let nodes = mn.and_then(|m| m.nodes.as_ref()).map_or(1, |n| n.value);
    let slots = mn
        .and_then(|m| m.procs_per_node.as_ref())
        .map_or(cores, |p| p.value);
    let wraps = mn
        .and_then(|m| m.implementation.as_ref())
        .is_some_and(|i| i.value.wraps_command());
    let hosts: Vec<String> = (0..nodes)
        .map(|i| format!("{}-{i}", task.name.value))
        .collect();

    let log = root_dir.join("calls.log");
    let node_env = root_dir.join("node.env");
    let mut env: Vec<(String, String)> = vec![
        (
            "PATH".into(),
            format!("{}:/usr/local/bin:/usr/bin:/bin", bin.display()),
        ),
        ("HOME".into(), format!("{root}/home")),
        ("LD_LIBRARY_PATH".into(), "/usr/local/cuda/lib64".into()),
        ("BASH_ENV".into(), format!("{root}/bash_env")),
        ("SIM_LOG".into(), log.to_string_lossy().into_owned()),
        (
            "SIM_NODE_ENV".into(),
            node_env.to_string_lossy().into_owned(),
        ),
        ("SIM_NODES".into(), nodes.to_string()),
        ("SIM_GPUS".into(), gpus.to_string()),
        ("FB_JOB_NAME".into(), task.name.value.clone()),
    ];
    for e in task.env.iter() {
        env.push((e.name.to_string(), e.value.to_string()));
    }
    let mut fuzzball: Vec<(String, String)> = Vec::new();
    if mn.is_some() {
        let w = bin.join("ssh-wrapper").to_string_lossy().into_owned();
        fuzzball = vec![
            (
                "MULTINODE_HOSTLIST".into(),
                hosts
                    .iter()
                    .map(|h| format!("{h}:{slots}"))
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            ("MULTINODE_HOSTLIST_NOSLOTS".into(), hosts.join(",")),
            ("MULTINODE_TOTAL_SLOTS".into(), (slots * nodes).to_string()),
            ("MULTINODE_SSH_WRAPPER".into(), w.clone()),
            ("MULTINODE_RSH_WRAPPER".into(), w),
        ];
        env.extend(fuzzball.iter().cloned());
    }
    let lines: Vec<String> = env.iter().map(|(k, v)| format!("{k}={v}")).collect();
    std::fs::write(&node_env, lines.join("\n") + "\n").unwrap_or_else(|e| panic!("{e}"));
    let mut head_env = env.clone();
    if mn.is_some() {
        head_env.push(("MULTINODE_NODE_IP".into(), "10.0.0.1".into()));
        head_env.push(("RANK".into(), "0".into()));
        head_env.push(("SIM_NODE".into(), "0".into()));
    }

    let argv: Vec<String> = if let Some(s) = &task.script {
        let p = root_dir.join("script");
        write_exec(&p, &rehome(&s.value, &root));
        vec![p.to_string_lossy().into_owned()]
    } else if let Some(c) = &task.command {
        let mut words: Vec<String> = c.value.iter().map(|w| rehome(&w.value, &root)).collect();
        // Fuzzball expands the generic implementation's MULTINODE_* variables in command words.
        for w in &mut words {
            for (k, v) in &fuzzball {
                *w = w.replace(&format!("${k}"), v);
            }
            if mn.is_some() {
                *w = w.replace("$MULTINODE_NODE_IP", "10.0.0.1");
            }
        }
        // A program of the job's checkout that is not here (nccl-tests' build) logs like a stub.
        if words[0].contains('/')
            && !Path::new(&cwd).join(&words[0]).exists()
            && !Path::new(&words[0]).exists()
        {
            write_exec(
                &Path::new(&cwd).join(&words[0]),
                LOGGER.replace("${0%/*}", &bin.to_string_lossy()).as_str(),
            );
        }
        words
    } else {
        panic!("{file}: neither script nor command")
    };
    Prepared {
        file: file.to_owned(),
        root,
        argv,
        cwd,
        env: head_env,
        log,
        job: Job {
            gpus,
            nodes,
            wraps,
            hosts,
            calls: Vec::new(),
        },
    }
}

fn execute(p: Prepared) -> Job {
    let Prepared {
        file,
        root,
        argv,
        cwd,
        env,
        log,
        mut job,
    } = p;
    let out = std::process::Command::new("timeout")
        .arg("20")
        .args(&argv)
        .current_dir(&cwd)
        .env_clear()
        .envs(env)
        .output()
        .unwrap_or_else(|e| panic!("{file}: cannot run {argv:?}: {e}"));
    assert_ne!(
        out.status.code(),
        Some(124),
        "{file}: still running after 20 s"
    );
    let mut calls: Vec<Call> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut f = l.split('\t').map(|s| s.replace(&root, "<root>"));
            (f.next()? == "CALL").then_some(())?;
            let node = f.next()?;
            let via = f.next()?;
            let prog = f.next()?;
            let (env, args): (Vec<String>, Vec<String>) = f.partition(|a| a.starts_with("@env:"));
            Some(Call {
                node,
                via,
                prog,
                args,
                env: env
                    .iter()
                    .map(|e| e.trim_start_matches("@env:").to_owned())
                    .collect(),
            })
        })
        .collect();
    calls.sort();
    calls.dedup();
    job.calls = calls;
    job
}

/// torchrun's options as argparse reads them: up to the first positional, `--opt=v` or
/// `--opt v`, `_` and `-` alike, unique prefixes accepted.
fn torchrun_options(args: &[String]) -> BTreeMap<String, String> {
    const LONG: &[&str] = &[
        "--nnodes",
        "--nproc-per-node",
        "--rdzv-backend",
        "--rdzv-endpoint",
        "--rdzv-id",
        "--rdzv-conf",
        "--standalone",
        "--max-restarts",
        "--monitor-interval",
        "--start-method",
        "--role",
        "--module",
        "--no-python",
        "--run-path",
        "--log-dir",
        "--redirects",
        "--tee",
        "--local-ranks-filter",
        "--node-rank",
        "--master-addr",
        "--master-port",
        "--local-addr",
        "--logs-specs",
        "--use-env",
    ];
    const SWITCH: &[&str] = &[
        "--standalone",
        "--module",
        "-m",
        "--no-python",
        "--run-path",
        "--use-env",
    ];
    let mut o = BTreeMap::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a == "--" || !a.starts_with('-') {
            break;
        }
        let (k, v) = match a.split_once('=') {
            Some((k, v)) => (k.replace('_', "-"), Some(v.to_owned())),
            None => (a.replace('_', "-"), None),
        };
        let k = if k.starts_with("--") && !LONG.contains(&k.as_str()) {
            let c: Vec<&&str> = LONG.iter().filter(|l| l.starts_with(&k)).collect();
            if c.len() == 1 {
                (*c[0]).to_owned()
            } else {
                k
            }
        } else {
            k
        };
        if SWITCH.contains(&k.as_str()) {
            o.insert(k, "true".to_owned());
            i += 1;
            continue;
        }
        match v {
            Some(v) => {
                o.insert(k, v);
                i += 1;
            }
            None => {
                o.insert(k, args.get(i + 1).cloned().unwrap_or_default());
                i += 2;
            }
        }
    }
    o
}

/// `accelerate launch`'s options as its argparse parser reads them (`launch_command_parser`,
/// `allow_abbrev=False`): up to the first positional, `--opt=v` or `--opt v`, `_` and `-` alike,
/// no prefixes; the switches are listed, every other option takes a value.
fn accelerate_options(args: &[String]) -> BTreeMap<String, String> {
    const SWITCHES: &[&str] = &[
        "--cpu",
        "--multi-gpu",
        "--tpu",
        "--use-deepspeed",
        "--use-fsdp",
        "--use-megatron-lm",
        "--same-network",
        "-m",
        "--module",
        "--no-python",
        "--debug",
        "-q",
        "--quiet",
    ];
    let mut o = BTreeMap::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if !a.starts_with('-') {
            break;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n.replace('_', "-"), Some(v.to_owned())),
            None => (a.replace('_', "-"), None),
        };
        let value = match inline {
            Some(v) => v,
            None if SWITCHES.contains(&name.as_str()) => String::new(),
            None => {
                i += 1;
                args.get(i).cloned().unwrap_or_default()
            }
        };
        o.insert(name, value);
        i += 1;
    }
    o
}

/// The problems of `accelerate launch` calls (no config file in the corpus jobs): it starts
/// torchrun with `--nproc_per_node = num_processes // num_machines` (num_processes defaults to
/// the GPUs of the node), `--nnodes = num_machines` (default 1) and, on several machines,
/// `--node_rank = int(machine_rank)`, which stops at start-up when `--machine_rank` is not given
/// (accelerate/utils/launch.py `prepare_multi_gpu_env`).
fn accelerate_problems(job: &Job, found: &mut BTreeSet<&'static str>) {
    let calls: Vec<(&Call, BTreeMap<String, String>)> = job
        .calls
        .iter()
        .filter(|c| c.prog == "accelerate" && c.args.first().is_some_and(|a| a == "launch"))
        .map(|c| (c, accelerate_options(&c.args[1..])))
        .collect();
    for (_, o) in &calls {
        if o.contains_key("--config-file") {
            continue; // its values are not in the arguments
        }
        let cpu = o.contains_key("--cpu");
        if job.gpus == 0 && !cpu {
            found.insert("gpu-request-missing");
        }
        let machines: u64 = o
            .get("--num-machines")
            .and_then(|v| v.parse().ok())
            .unwrap_or(1);
        let processes: u64 = o
            .get("--num-processes")
            .and_then(|v| v.parse().ok())
            .unwrap_or(job.gpus);
        if !cpu && job.gpus > 0 && machines > 0 && processes / machines != job.gpus {
            found.insert("launcher-nproc-mismatch");
        }
        if machines != job.nodes {
            found.insert("launcher-nnodes-mismatch");
        }
        if machines > 1 && !o.contains_key("--machine-rank") {
            found.insert("launcher-missing-node-rank");
        }
        if machines > 1 && !o.contains_key("--main-process-ip") {
            found.insert("launcher-missing-master-addr");
        }
    }
    if job.nodes > 1 {
        let ranks: Vec<&String> = calls
            .iter()
            .filter_map(|(_, o)| o.get("--machine-rank"))
            .collect();
        let distinct: BTreeSet<&&String> = ranks.iter().collect();
        if distinct.len() < ranks.len() {
            found.insert("launcher-missing-node-rank");
        }
    }
}

/// `fabric run`'s options as its click command `_run` reads them (lightning/fabric/cli.py):
/// anywhere among the arguments, `--opt=v` or `--opt v`, the spellings it lists, no prefixes,
/// `--` ends them.
fn fabric_options(args: &[String]) -> BTreeMap<String, String> {
    const OPTIONS: &[(&str, &str)] = &[
        ("--accelerator", "accelerator"),
        ("--strategy", "strategy"),
        ("--devices", "devices"),
        ("--num-nodes", "num-nodes"),
        ("--num_nodes", "num-nodes"),
        ("--node-rank", "node-rank"),
        ("--node_rank", "node-rank"),
        ("--main-address", "main-address"),
        ("--main_address", "main-address"),
        ("--main-port", "main-port"),
        ("--main_port", "main-port"),
        ("--precision", "precision"),
    ];
    let mut o = BTreeMap::new();
    let mut i = 0;
    while i < args.len() && args[i] != "--" {
        let (name, inline) = match args[i].split_once('=') {
            Some((n, v)) => (n, Some(v.to_owned())),
            None => (args[i].as_str(), None),
        };
        if let Some((_, key)) = OPTIONS.iter().find(|(s, _)| *s == name) {
            let v = match inline {
                Some(v) => v,
                None => {
                    i += 1;
                    args.get(i).cloned().unwrap_or_default()
                }
            };
            o.insert((*key).to_owned(), v);
        }
        i += 1;
    }
    o
}

/// The problems of `fabric run` calls: it starts torchrun with `--nproc_per_node` the
/// processes for `--devices` (a number, or the length of a list; default 1), `--nnodes` from
/// `--num-nodes` (default 1), `--node_rank` from `--node-rank` (default 0) and `--master_addr`
/// from `--main-address` (default 127.0.0.1).
fn fabric_problems(job: &Job, found: &mut BTreeSet<&'static str>) {
    let calls: Vec<(&Call, BTreeMap<String, String>)> = job
        .calls
        .iter()
        .filter(|c| c.prog == "fabric" && c.args.first().is_some_and(|a| a == "run"))
        .map(|c| (c, fabric_options(&c.args[1..])))
        .collect();
    let get = |o: &BTreeMap<String, String>, k: &str, d: &str| {
        o.get(k).cloned().unwrap_or_else(|| d.to_owned())
    };
    let head: [&str; 2] = ["10.0.0.1", job.hosts.first().map_or("", String::as_str)];
    for (_, o) in &calls {
        let cpu = get(o, "accelerator", "") == "cpu";
        if job.gpus == 0 && !cpu {
            found.insert("gpu-request-missing");
        }
        let devices = get(o, "devices", "1");
        let per_node = if devices.contains(',') {
            Some(devices.split(',').filter(|d| !d.is_empty()).count() as u64)
        } else {
            devices.parse::<u64>().ok()
        };
        if !cpu && job.gpus > 0 && per_node.is_some_and(|n| n != job.gpus) {
            found.insert("launcher-nproc-mismatch");
        }
        if get(o, "num-nodes", "1").parse::<u64>().ok() != Some(job.nodes) {
            found.insert("launcher-nnodes-mismatch");
        }
        if job.nodes > 1 && !head.contains(&get(o, "main-address", "127.0.0.1").as_str()) {
            found.insert("launcher-missing-master-addr");
        }
    }
    if job.nodes > 1 && !calls.is_empty() {
        let on: BTreeSet<&str> = calls.iter().map(|(c, _)| c.node.as_str()).collect();
        let ranks: Vec<String> = calls
            .iter()
            .map(|(_, o)| get(o, "node-rank", "0"))
            .collect();
        let distinct: BTreeSet<&String> = ranks.iter().collect();
        if (on.len() as u64) < job.nodes || distinct.len() < ranks.len() {
            found.insert("launcher-missing-node-rank");
        }
    }
}

/// The problems of `deepspeed` calls with a hostfile and without `--no_ssh` (runner.py `main`):
/// such a runner starts every host of the hostfile itself, so more than one of them starts the
/// job more than once. `--num_gpus` is the processes per node.
fn deepspeed_problems(job: &Job, found: &mut BTreeSet<&'static str>) {
    let calls: Vec<&Call> = job.calls.iter().filter(|c| c.prog == "deepspeed").collect();
    let value = |c: &Call, flag: &str| {
        let i = c.args.iter().position(|a| a == flag)?;
        c.args.get(i + 1).cloned()
    };
    let from_head: Vec<&&Call> = calls
        .iter()
        .filter(|c| {
            c.args.iter().any(|a| a == "--hostfile") && !c.args.iter().any(|a| a == "--no_ssh")
        })
        .collect();
    if from_head.len() > 1 {
        found.insert("launcher-missing-node-rank");
    }
    for c in &calls {
        if let Some(n) = value(c, "--num_gpus").and_then(|v| v.parse::<u64>().ok()) {
            if job.gpus > 0 && n != job.gpus {
                found.insert("launcher-nproc-mismatch");
            }
        }
        if job.gpus == 0 {
            found.insert("gpu-request-missing");
        }
    }
}

/// The launch problems that follow from what the launchers received, in the rules' terms.
fn problems(job: &Job) -> BTreeSet<&'static str> {
    let mut found = BTreeSet::new();
    let mut torchruns: Vec<(&Call, BTreeMap<String, String>)> = Vec::new();
    for c in &job.calls {
        let a = &c.args;
        match c.prog.as_str() {
            "torchrun" => torchruns.push((c, torchrun_options(a))),
            "python" | "python3" => {
                if let Some(j) = a.windows(2).position(|w| {
                    w[0] == "-m"
                        && (w[1] == "torch.distributed.launch" || w[1] == "torch.distributed.run")
                }) {
                    if a[j + 1] == "torch.distributed.launch" {
                        found.insert("torch-distributed-launch-deprecated");
                    }
                    torchruns.push((c, torchrun_options(&a[j + 2..])));
                }
            }
            // `tune run [TORCHRUN-OPTIONS] <recipe> ...` runs the recipe through torch.distributed.run.
            "tune" if a.first().is_some_and(|s| s == "run") => {
                torchruns.push((c, torchrun_options(&a[1..])))
            }
            "all_reduce_perf" if job.gpus == 0 => {
                found.insert("gpu-request-missing");
            }
            "mpirun" => {
                // mpirun's own options: the words before the program it starts.
                let end = a
                    .iter()
                    .position(|x| x.ends_with("_perf") || x.starts_with("python"))
                    .unwrap_or(a.len());
                let own = &a[..end];
                let number = |names: &[&str]| {
                    own.iter()
                        .position(|x| names.contains(&x.as_str()))
                        .and_then(|i| own.get(i + 1))
                        .and_then(|v| v.parse::<u64>().ok())
                };
                let np = number(&["-np", "-n", "-c"]);
                let per_node = number(&["-N", "-npernode", "--npernode"]);
                // One GPU per rank: more ranks than the job's GPUs, or more on a node than it has.
                if job.gpus > 0
                    && (np.is_some_and(|n| n > job.gpus * job.nodes)
                        || per_node.is_some_and(|n| n > job.gpus))
                {
                    found.insert("mpi-slots-not-gpus");
                }
            }
            _ => {}
        }
    }
    accelerate_problems(job, &mut found);
    fabric_problems(job, &mut found);
    deepspeed_problems(job, &mut found);
    if torchruns.iter().any(|(c, _)| !c.env.is_empty()) {
        found.insert("nccl-invalid-value");
    }
    let launcher = |p: &str| ["torchrun", "mpirun", "deepspeed", "srun", "exec_all"].contains(&p);
    if job.wraps && (job.calls.iter().any(|c| launcher(&c.prog)) || !torchruns.is_empty()) {
        found.insert("launcher-double-wrap");
    }
    let head: [&str; 2] = ["10.0.0.1", job.hosts.first().map_or("", String::as_str)];
    let get = |o: &BTreeMap<String, String>, k: &str, d: &str| {
        o.get(k).cloned().unwrap_or_else(|| d.to_owned())
    };
    for (_, o) in &torchruns {
        let standalone = o.contains_key("--standalone");
        let nproc = get(o, "--nproc-per-node", "1");
        if job.gpus == 0 {
            if nproc != "cpu" {
                found.insert("gpu-request-missing");
            }
        } else if nproc.parse::<u64>().is_ok_and(|n| n != job.gpus) {
            found.insert("launcher-nproc-mismatch");
        }
        let nnodes = get(o, "--nnodes", "1:1");
        let (lo, hi) = nnodes.split_once(':').unwrap_or((&nnodes, &nnodes));
        // `--standalone` on several nodes is one mistake, reported as
        // torchrun-standalone-multinode alone (README: one cause, one finding).
        let default_with_standalone = standalone && !o.contains_key("--nnodes");
        if !(lo.parse().unwrap_or(0)..=hi.parse().unwrap_or(0)).contains(&job.nodes)
            && !default_with_standalone
        {
            found.insert("launcher-nnodes-mismatch");
        }
        if standalone && job.nodes > 1 {
            found.insert("torchrun-standalone-multinode");
        }
        let backend = get(o, "--rdzv-backend", "static");
        let endpoint = get(o, "--rdzv-endpoint", "");
        if backend != "static"
            && !standalone
            && get(o, "--rdzv-id", "none") == "none"
            && !endpoint.ends_with(":0")
        {
            found.insert("torchrun-rdzv-incomplete");
        }
        if job.nodes > 1 && !standalone {
            let host = if !endpoint.is_empty() {
                endpoint
                    .rsplit_once(':')
                    .map_or(endpoint.clone(), |(h, _)| h.to_owned())
            } else if backend == "static" {
                get(o, "--master-addr", "127.0.0.1")
            } else {
                "localhost".to_owned()
            };
            if !head.contains(&host.as_str()) {
                found.insert("launcher-missing-master-addr");
            }
        }
    }
    if job.nodes > 1
        && !torchruns.is_empty()
        && !torchruns
            .iter()
            .any(|(_, o)| o.contains_key("--standalone"))
    {
        let on: BTreeSet<&str> = torchruns.iter().map(|(c, _)| c.node.as_str()).collect();
        let static_ranks: Vec<String> = torchruns
            .iter()
            .filter(|(_, o)| get(o, "--rdzv-backend", "static") == "static")
            .map(|(_, o)| get(o, "--node-rank", "0"))
            .collect();
        let distinct: BTreeSet<&String> = static_ranks.iter().collect();
        if (on.len() as u64) < job.nodes || distinct.len() < static_ranks.len() {
            found.insert("launcher-missing-node-rank");
        }
    }
    found
}

/// Where expected.tsv rests on a judgement the launchers' arguments cannot show.
const JUDGED: &[(&str, &str, &str)] = &[(
    "40-picotron-readme-cpu.fz",
    "gpu-request-missing",
    "the CPU run: whether the workers use CUDA is decided by the config file create_config.py --use_cpu wrote, not by torchrun's arguments",
)];

#[test]
fn expected_findings_follow_from_what_bash_hands_the_launchers() {
    if std::process::Command::new("bash")
        .arg("-c")
        .arg("true")
        .status()
        .is_err()
    {
        fuzz_test_support::system::skip("no bash");
        return;
    }
    let tmp = std::env::temp_dir().join(format!("fz-launch-corpus-{}", std::process::id()));
    let rows = expected();
    let mut report = String::new();
    let mut wrong = Vec::new();
    // The jobs run side by side (most of the time is spent starting processes).
    let files = names(".fz");
    let width = std::thread::available_parallelism().map_or(2, |n| n.get() * 2);
    let mut jobs: Vec<Job> = Vec::new();
    let mut ran: Vec<(String, Job)> = Vec::new();
    let prepared: Vec<Prepared> = files.iter().map(|f| prepare_job(f, &tmp)).collect();
    let mut queue: Vec<Vec<Prepared>> = (0..width).map(|_| Vec::new()).collect();
    for (i, p) in prepared.into_iter().enumerate() {
        queue[i % width].push(p);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = queue
            .into_iter()
            .map(|q| {
                s.spawn(move || {
                    q.into_iter()
                        .map(|p| (p.file.clone(), execute(p)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            ran.extend(h.join().expect("a corpus job run panicked"));
        }
    });
    ran.sort_by(|a, b| a.0.cmp(&b.0));
    jobs.extend(ran.into_iter().map(|(_, j)| j));
    for (f, job) in files.iter().zip(&jobs) {
        let f = f.clone();
        let _ = writeln!(report, "{f} ({} GPUs x {} nodes)", job.gpus, job.nodes);
        for c in &job.calls {
            if [
                "make", "module", "conda", "pip", "curl", "tar", "git", "squeue", "scontrol",
                "dcgmi",
            ]
            .contains(&c.prog.as_str())
            {
                continue;
            }
            let shown: Vec<&str> = c.args.iter().take(16).map(String::as_str).collect();
            let more = if c.args.len() > 16 { " ..." } else { "" };
            let via = if c.via.is_empty() {
                String::new()
            } else {
                format!(" via {}", c.via)
            };
            let env = if c.env.is_empty() {
                String::new()
            } else {
                format!("   [env {}]", c.env.join(" "))
            };
            let _ = writeln!(
                report,
                "  {}{via}: {} {}{more}{env}",
                c.node,
                c.prog,
                shown.join(" ")
            );
        }
        let got = problems(job);
        let want: BTreeSet<&str> = rows
            .iter()
            .filter(|r| r.file == f)
            .map(|r| r.rule.as_str())
            .collect();
        for r in got.symmetric_difference(&want) {
            if !JUDGED.iter().any(|(jf, jr, _)| *jf == f && jr == r) {
                let side = if got.contains(r) {
                    "follows from the launch but is not expected"
                } else {
                    "is expected but does not follow from the launch"
                };
                wrong.push(format!("{f}: {r} {side}"));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    insta::assert_snapshot!("launch_corpus_bash_launches", report);
    assert!(
        wrong.is_empty(),
        "expected.tsv and the launches bash runs disagree:\n  {}",
        wrong.join("\n  ")
    );
}
