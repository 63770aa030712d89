//! `fuzz plan` and `fuzz run` on application templates: rendered with the values file beside
//! them, `--values FILE` and `--set NAME=VALUE` as `fuzzlint check` renders them; refused
//! (exit 2, `FILE:LINE:COL`) when the template does not render.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BLAST: &str = "ctrliq-ciq-fuzzball-catalog__blast.template.yaml";

/// The catalog's templates (../shared/corpus/templates), when they are checked out beside
/// the repository.
fn corpus() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/templates");
    if dir.is_dir() {
        Some(dir)
    } else {
        fuzz_test_support::system::skip(&format!("no template corpus at {}", dir.display()));
        None
    }
}

fn fuzz(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_fuzz"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("run fuzz")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fuzz-template-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("a temporary directory");
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).expect("write");
    p.to_str().expect("utf-8").to_owned()
}

/// 1-based line and column (characters) of the first `needle` in `text`.
fn line_col(text: &str, needle: &str) -> (usize, usize) {
    let at = text.find(needle).expect("needle in text");
    let line = text[..at].matches('\n').count() + 1;
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    (line, text[start..at].chars().count() + 1)
}

fn plan_json(o: &Output) -> serde_json::Value {
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    serde_json::from_str(&text(&o.stdout)).expect("a JSON plan")
}

fn job_names(plan: &serde_json::Value) -> Vec<String> {
    plan["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| j["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn job<'a>(plan: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    plan["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .find(|j| j["name"] == name)
        .expect("the job")
}

fn script(job: &serde_json::Value) -> String {
    job["files"][0]["content"]["inline"]
        .as_str()
        .expect("an inline script")
        .to_owned()
}

/// The corpus's BLAST template plans with its shipped values (the public-database branch,
/// the default database name in the script), the same bytes twice; `--set` takes the other
/// branch; `--values` sets a number the plan reads.
#[test]
fn a_corpus_template_plans_with_its_values_set_and_values_files() {
    let Some(dir) = corpus() else { return };
    let t = dir.join(BLAST);
    let t = t.to_str().expect("utf-8");
    let first = fuzz(&["plan", t]);
    let plan = plan_json(&first);
    assert_eq!(plan["workflow"]["source"], BLAST);
    assert_eq!(
        job_names(&plan),
        ["fetch-db", "retrieve-query-sequences", "run-blast"]
    );
    // `BlastDbName: pdbaa` and `BlastDbPath: /data/refdb/blast` of the values file.
    let fetch = script(job(&plan, "fetch-db"));
    assert!(fetch.contains("grep -q pdbaa"), "{fetch}");
    assert!(fetch.contains("mkdir -p \"/data/refdb/blast\""), "{fetch}");
    assert!(!fetch.contains("{{"), "{fetch}");
    assert_eq!(fuzz(&["plan", t]).stdout, first.stdout, "deterministic");

    // The custom-database branch.
    let o = fuzz(&[
        "plan",
        t,
        "--set",
        "BlastDbName=",
        "--set",
        "CustomBlastDbFetchCmd=efetch -db protein -query shark",
    ]);
    let plan = plan_json(&o);
    assert_eq!(
        job_names(&plan),
        [
            "make-blast-database",
            "retrieve-database-sequences",
            "retrieve-query-sequences",
            "run-blast"
        ]
    );
    let retrieve = script(job(&plan, "retrieve-database-sequences"));
    assert!(
        retrieve.contains("efetch -db protein -query shark > custom.fa"),
        "{retrieve}"
    );

    // `--values FILE`: a mapping; `--set` after it wins.
    let d = scratch("values");
    let v = write(&d, "over.yaml", "BlastCores: 12\nBlastMemory: 24GiB\n");
    let plan = plan_json(&fuzz(&["plan", t, "--values", &v]));
    let r = &job(&plan, "run-blast")["resources"];
    assert_eq!(r["cores"]["value"], 12);
    assert_eq!(r["memory_bytes"]["value"], 24u64 << 30);
    let plan = plan_json(&fuzz(&["plan", t, "--values", &v, "--set", "BlastCores=3"]));
    assert_eq!(job(&plan, "run-blast")["resources"]["cores"]["value"], 3);
    // The plan's source positions are the template's: the action that printed the cores.
    let src = std::fs::read_to_string(dir.join(BLAST)).expect("the corpus template");
    let (line, column) = line_col(&src, "cores: {{.BlastCores}}");
    assert_eq!(
        job(&plan, "run-blast")["resources"]["cores"]["at"],
        serde_json::json!({"line": line, "column": column + "cores: ".len()})
    );

    // A cluster profile checks and lowers the rendered file.
    let profile =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/clusters/h100-ib.toml");
    let plan = plan_json(&fuzz(&[
        "plan",
        t,
        "--cluster",
        profile.to_str().expect("utf-8"),
    ]));
    assert_eq!(plan["cluster"]["name"], "h100-ib");

    // The graph formats go through the same render.
    let o = fuzz(&["plan", t, "--format", "mermaid"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("run-blast"));
}

/// A value the template's `fail` rejects: exit 2, the `fail`'s own message at its place in
/// the template; nothing on standard output.
#[test]
fn a_corpus_template_whose_fail_is_reached_is_refused_at_the_fail() {
    let Some(dir) = corpus() else { return };
    let t = dir.join(BLAST);
    let src = std::fs::read_to_string(&t).expect("the corpus template");
    let t = t.to_str().expect("utf-8");
    let o = fuzz(&["plan", t, "--set", "BlastDbPath=/elsewhere/db"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(o.stdout.is_empty());
    let (line, col) = line_col(&src, "fail (printf \"BlastDbPath must be");
    let e = text(&o.stderr);
    // Its severity is the check's (`info` where it takes an empty value for the reason);
    // either way nothing renders.
    let l = e
        .lines()
        .find(|l| l.starts_with(&format!("{t}:{line}:{col}: ")))
        .unwrap_or_else(|| panic!("a finding at {line}:{col}: {e}"));
    assert!(
        l.contains("[FZ051 template-fail]: BlastDbPath must be an absolute path under the data mount (/data/), got: /elsewhere/db"),
        "{l}"
    );
}

const GREET: &str = r#"{{- $who := trim .Who }}
{{- if eq $who "nobody" }}
{{- fail (printf "Who must name someone, not %s" $who) }}
{{- end }}
version: v4
jobs:
  greet:
    image:
      uri: docker://alpine:3.20
    command: [/bin/sh, -c, "echo hello {{ $who }} x{{ .Times }}"]
    resource:
      cpu:
        cores: 1
      memory:
        size: {{ .Memory }}
"#;

const GREET_VALUES: &str = r#"values:
  - name: Who
    display_name: Who is greeted
    string_value: world
  - name: Times
    display_name: How many times
    uint_value: 2
  - name: Memory
    display_name: Memory of the job
    string_value: 64MiB
"#;

fn greet(dir: &Path) -> String {
    write(dir, "greet.values.yaml", GREET_VALUES);
    write(dir, "greet.template.yaml", GREET)
}

/// A small template of our own run for real: the job prints what the values made of it;
/// `--set` changes it; a `fail` reached runs nothing (exit 2, no run directory).
#[test]
fn run_executes_the_rendered_template_and_refuses_a_fail() {
    let d = scratch("run");
    let t = greet(&d);
    let run = |name: &str, extra: &[&str]| {
        let mut args = vec!["run", t.as_str(), "--runtime", "host", "--workdir"];
        let wd = d.join(name);
        let wd = wd.to_str().expect("utf-8").to_owned();
        args.push(&wd);
        args.extend_from_slice(extra);
        let o = fuzz(&args);
        (o, d.join(name))
    };
    let (o, wd) = run("default", &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("[greet] hello world x2"),
        "{}",
        text(&o.stdout)
    );
    assert_eq!(
        std::fs::read_to_string(wd.join("logs/greet.out")).expect("the job's log"),
        "hello world x2\n"
    );

    // Regression: a template starting with `{{` was taken for a plan's JSON (`{`), and
    // `--hosts` refused as if a plan named its hosts already.
    let (o, _) = run("hosts", &["--hosts", "node-a"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("[greet] hello world x2"));

    let (o, _) = run("set", &["--set", "Who=Ada", "--set", "Times=3"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("[greet] hello Ada x3"),
        "{}",
        text(&o.stdout)
    );

    let (o, wd) = run("fail", &["--set", "Who= nobody "]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let (line, col) = line_col(GREET, "fail (printf");
    let e = text(&o.stderr);
    assert!(
        e.contains(&format!(
            "{t}:{line}:{col}: error[FZ051 template-fail]: Who must name someone, not nobody"
        )),
        "{e}"
    );
    assert!(!wd.exists(), "nothing ran");
}

/// A template Go refuses to parse: exit 2 at the stray `{{ end }}`, for plan and run.
#[test]
fn a_template_that_does_not_parse_is_refused_with_its_position() {
    let d = scratch("syntax");
    write(&d, "values.yaml", GREET_VALUES);
    let src = GREET.replace("version: v4\n", "version: v4\n{{ end }}\n");
    let t = write(&d, "template.yaml", &src);
    let (line, col) = line_col(&src, "{{ end }}\njobs");
    for cmd in ["plan", "run"] {
        let o = fuzz(&[cmd, &t]);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", text(&o.stderr));
        let e = text(&o.stderr);
        let want = format!("{t}:{line}:{col}: error[FZ050 template-syntax-error]: ");
        assert!(e.contains(&want), "{cmd}: wants {want}: {e}");
    }
}

/// The plan of a template names the template as its source, and its positions are the
/// template's: copied text exactly (the `cores: 1` written in the template), printed text at
/// its action (`{{ .Memory }}`), whatever the lines the template's actions removed.
#[test]
fn plan_positions_are_template_positions() {
    let d = scratch("positions");
    let t = greet(&d);
    let plan = plan_json(&fuzz(&["plan", &t]));
    assert_eq!(plan["workflow"]["source"], "greet.template.yaml");
    let r = &job(&plan, "greet")["resources"];
    let (line, column) = line_col(GREET, "1\n      memory:");
    assert_eq!(
        r["cores"]["at"],
        serde_json::json!({"line": line, "column": column})
    );
    let (line, column) = line_col(GREET, "{{ .Memory }}");
    assert_eq!(
        r["memory_bytes"]["at"],
        serde_json::json!({"line": line, "column": column})
    );
    assert_eq!(r["memory_bytes"]["value"], 64u64 << 20);
}

/// A value of the wrong type or one nobody declares is refused before anything renders.
#[test]
fn an_ill_typed_or_unknown_set_is_refused() {
    let d = scratch("set");
    let t = greet(&d);
    let o = fuzz(&["plan", &t, "--set", "Times=many"]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(
        e.contains("--set Times=many") && e.contains("unsigned integer"),
        "{e}"
    );
    let o = fuzz(&["plan", &t, "--set", "Whom=x"]);
    assert_eq!(o.status.code(), Some(2));
    let e = text(&o.stderr);
    assert!(e.contains("`Whom`") && e.contains("`Who`"), "{e}");
    // A missing --values file.
    let o = fuzz(&[
        "plan",
        &t,
        "--values",
        &format!("{}/nope.yaml", d.display()),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--values"), "{}", text(&o.stderr));
}

/// A rendered Fuzzfile with an error is refused as a Fuzzfile is (plan: 1, run: 2), the
/// finding at the template's action, naming the value it came from.
#[test]
fn errors_of_the_rendered_fuzzfile_are_shown_at_template_positions() {
    let d = scratch("rendered");
    let t = greet(&d);
    let (line, col) = line_col(GREET, "{{ .Memory }}");
    let o = fuzz(&["plan", &t, "--set", "Memory=lots"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let e = text(&o.stderr);
    let at = format!("{t}:{line}:{col}: error[");
    let l = e
        .lines()
        .find(|l| l.starts_with(&at))
        .unwrap_or_else(|| panic!("a finding at {at}: {e}"));
    assert!(l.contains("`Memory`"), "{l}");
    let wd = d.join("wd");
    let o = fuzz(&[
        "run",
        &t,
        "--runtime",
        "host",
        "--set",
        "Memory=lots",
        "--workdir",
        wd.to_str().expect("utf-8"),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains(&at), "{}", text(&o.stderr));
    assert!(!wd.exists());
}

/// `--values` and `--set` belong to templates: on a plain Fuzzfile they are an error, not
/// silently ignored.
#[test]
fn values_and_set_on_a_plain_fuzzfile_are_refused() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/pipeline.fz");
    let f = root.to_str().expect("utf-8");
    for cmd in ["plan", "run"] {
        let o = fuzz(&[cmd, f, "--set", "A=1"]);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        assert!(
            text(&o.stderr).contains("--values and --set are for application templates"),
            "{}",
            text(&o.stderr)
        );
    }
}

/// `fuzz check`, the runner's preflight, renders a template as `fuzz run` does: ready with its
/// values (none of the raw `{{ }}` noise of a template read as YAML), not runnable (exit 1)
/// at the template's positions when a `fail` is reached or the rendered file has an error.
#[test]
fn check_is_the_preflight_of_the_rendered_template() {
    let d = scratch("check");
    let t = greet(&d);
    let o = fuzz(&["check", &t]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    assert_eq!(text(&o.stdout), format!("{t}: ready\n"));

    let o = fuzz(&["check", &t, "--set", "Who=nobody"]);
    assert_eq!(o.status.code(), Some(1));
    let (line, col) = line_col(GREET, "fail (printf");
    let out = text(&o.stdout);
    assert!(out.starts_with(&format!("{t}: not runnable\n")), "{out}");
    assert!(
        out.contains(&format!("{t}:{line}:{col}: error[FZ051 template-fail]: ")),
        "{out}"
    );

    let o = fuzz(&["check", &t, "--set", "Memory=lots"]);
    assert_eq!(o.status.code(), Some(1));
    let (line, col) = line_col(GREET, "{{ .Memory }}");
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!("{t}:{line}:{col}: error[FZ011 invalid-value]: ")),
        "{out}"
    );
    assert!(!out.contains("yaml-syntax"), "{out}");

    let plain = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/pipeline.fz");
    let o = fuzz(&["check", plain.to_str().expect("utf-8"), "--values", &t]);
    assert_eq!(o.status.code(), Some(2));
}
