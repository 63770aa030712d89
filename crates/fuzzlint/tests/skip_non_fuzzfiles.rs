//! YAML files named on the command line that are not Fuzzfiles (what a pre-commit hook passes
//! when it passes every YAML file): a `.pre-commit-config.yaml`, a GitHub workflow, a
//! Kubernetes manifest, a docker-compose file, a CircleCI config, a Helm chart's
//! `values.yaml` and an AWS SAM `template.yaml` are skipped and counted; a broken Fuzzfile
//! among them is still reported; `--no-skip` and `skip-non-fuzzfiles = false` check them;
//! a directory walk judges files by the same predicate. The files are the sample repository
//! of tests/ci/sample-repo (also used by the pre-commit and GitHub Action tests).

use fuzz_test_support::{fuzzlint_binary, BinaryRun, NoColorVariable, ScratchDirectory};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn sample_repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ci/sample-repo")
}

/// Every YAML file of the sample repository that is not a Fuzzfile.
const NOT_FUZZFILES: &[&str] = &[
    ".pre-commit-config.yaml",
    ".github/workflows/ci.yml",
    ".circleci/config.yml",
    "deploy/k8s/deployment.yaml",
    "docker-compose.yml",
    "chart/values.yaml",
    "sam/template.yaml",
];
const FUZZFILES: &[&str] = &["workflows/train.yaml", "workflows/broken.yaml"];

fn run_in(dir: &Path, args: &[&str]) -> BinaryRun {
    fuzzlint_binary!().run_in(dir, args, NoColorVariable::Set)
}

/// The files with findings, sorted and deduplicated.
fn files_with_findings(doc: &Value) -> Vec<String> {
    let mut v: Vec<String> = doc["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .map(|d| d["file"].as_str().expect("file").to_owned())
        .collect();
    v.sort();
    v.dedup();
    v
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read_dir").flatten() {
        let p = e.path();
        let dest = to.join(e.file_name());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).expect("copy");
        }
    }
}

#[test]
fn named_yaml_that_is_not_a_fuzzfile_is_skipped_and_a_broken_fuzzfile_still_reported() {
    let mut args = vec!["check", "--format", "json"];
    args.extend(NOT_FUZZFILES);
    args.extend(FUZZFILES);
    let r = run_in(&sample_repo(), &args);
    let doc = r.json();
    assert_eq!(
        doc["files"], 2,
        "only the two Fuzzfiles are checked: {doc:#}"
    );
    assert_eq!(
        files_with_findings(&doc),
        ["workflows/broken.yaml"],
        "{doc:#}"
    );
    let undefined = doc["diagnostics"]
        .as_array()
        .expect("diagnostics")
        .iter()
        .any(|d| {
            d["message"]
                .as_str()
                .is_some_and(|m| m.contains("fetch-data"))
        });
    assert!(undefined, "the undefined dependency is reported: {doc:#}");
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("7 files skipped: not Fuzzfiles (-v lists them, --no-skip checks them)"),
        "{}",
        r.stderr
    );
}

#[test]
fn only_non_fuzzfiles_named_passes_and_says_so() {
    let mut args = vec!["check"];
    args.extend(NOT_FUZZFILES);
    let r = run_in(&sample_repo(), &args);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("7 files skipped"), "{}", r.stderr);
    let r = run_in(&sample_repo(), &["check", "docker-compose.yml"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("1 file skipped"), "{}", r.stderr);
}

#[test]
fn no_skip_checks_them_as_fuzzfiles() {
    let mut args = vec!["check", "--format", "json", "--no-skip"];
    args.extend(NOT_FUZZFILES);
    let r = run_in(&sample_repo(), &args);
    let doc = r.json();
    assert_eq!(doc["files"], 7, "{doc:#}");
    // Each of them, read as a Fuzzfile, is wrong somewhere (the SAM template as a template).
    assert_eq!(files_with_findings(&doc).len(), 7, "{doc:#}");
    assert_eq!(r.code, 1);
    assert!(!r.stderr.contains("skipped"), "{}", r.stderr);
}

#[test]
fn skip_non_fuzzfiles_false_in_the_config_checks_them() {
    let dir = ScratchDirectory::create("fuzzlint-skip-test", "config");
    copy_dir(&sample_repo(), &dir);
    let r = run_in(&dir, &["check", "--format", "json", "docker-compose.yml"]);
    assert_eq!(r.json()["files"], 0);
    assert_eq!(r.code, 0);
    std::fs::write(dir.join("fuzzlint.toml"), "skip-non-fuzzfiles = false\n").expect("write");
    let r = run_in(&dir, &["check", "--format", "json", "docker-compose.yml"]);
    assert_eq!(r.json()["files"], 1, "{}", r.stderr);
    assert_eq!(r.code, 1);
    // A config key of the wrong type is an error at its line and column.
    std::fs::write(dir.join("fuzzlint.toml"), "skip-non-fuzzfiles = \"no\"\n").expect("write");
    let r = run_in(&dir, &["check", "docker-compose.yml"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("fuzzlint.toml:1:"), "{}", r.stderr);
}

#[test]
fn a_directory_walk_uses_the_same_predicate() {
    let dir = ScratchDirectory::create("fuzzlint-skip-test", "walk");
    copy_dir(&sample_repo(), &dir);
    // Hidden directories are not walked; move the hidden files into plain ones too.
    std::fs::create_dir_all(dir.join("ci")).expect("mkdir");
    std::fs::copy(
        dir.join(".github/workflows/ci.yml"),
        dir.join("ci/github-ci.yml"),
    )
    .expect("copy");
    std::fs::copy(
        dir.join(".circleci/config.yml"),
        dir.join("ci/circleci.yml"),
    )
    .expect("copy");
    std::fs::copy(
        dir.join(".pre-commit-config.yaml"),
        dir.join("ci/pre-commit-config.yaml"),
    )
    .expect("copy");
    let r = run_in(&dir, &["check", "--format", "json", "."]);
    let doc = r.json();
    assert_eq!(doc["files"], 2, "{doc:#}");
    assert_eq!(files_with_findings(&doc), ["workflows/broken.yaml"]);
}

#[test]
fn a_fz_file_is_a_fuzzfile_whatever_it_holds() {
    let dir = ScratchDirectory::create("fuzzlint-skip-test", "fz");
    std::fs::copy(
        sample_repo().join("docker-compose.yml"),
        dir.join("compose.fz"),
    )
    .expect("copy");
    let r = run_in(&dir, &["check", "--format", "json", "compose.fz"]);
    assert_eq!(r.json()["files"], 1);
    assert_eq!(r.code, 1);
    // Found by a walk too.
    let r = run_in(&dir, &["check", "--format", "json", "."]);
    assert_eq!(r.json()["files"], 1);
}

#[test]
fn a_values_file_read_by_a_template_beside_it_is_not_skipped() {
    let dir = ScratchDirectory::create("fuzzlint-skip-test", "values");
    // A template's values file without the usual `values:` list: judged by its template.
    std::fs::write(
        dir.join("app.template.yaml"),
        "version: v4\njobs:\n  a:\n    image:\n      uri: docker://alpine:3.20\n    command: [echo, hi]\n",
    )
    .expect("write");
    std::fs::write(dir.join("app.values.yaml"), "other: 1\n").expect("write");
    let r = run_in(&dir, &["check", "--format", "json", "app.values.yaml"]);
    assert_eq!(r.json()["files"], 1, "{}", r.stderr);
    // Without the template it is not a template's values file.
    std::fs::remove_file(dir.join("app.template.yaml")).expect("rm");
    let r = run_in(&dir, &["check", "--format", "json", "app.values.yaml"]);
    assert_eq!(r.json()["files"], 0, "{}", r.stderr);
    assert!(r.stderr.contains("1 file skipped"), "{}", r.stderr);
}

#[test]
fn verbose_lists_each_skipped_file_and_why_quiet_says_nothing() {
    let r = run_in(
        &sample_repo(),
        &[
            "check",
            "-v",
            "docker-compose.yml",
            "chart/values.yaml",
            "workflows/train.yaml",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains(
            "skipped docker-compose.yml: not a Fuzzfile (`version: \"3.8\"` is not a Fuzzfile version (v1, v4)"
        ),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains("skipped chart/values.yaml: not a Fuzzfile (a values file without the top-level `values:` list"),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("files skipped"), "{}", r.stderr);
    let r = run_in(&sample_repo(), &["check", "-q", "docker-compose.yml"]);
    assert_eq!(r.code, 0);
    assert!(!r.stderr.contains("skipped"), "{}", r.stderr);
}

/// CircleCI's own 2.0 "Hello World" config (circleci/circleci-docs, jekyll/_cci2/hello-world.md):
/// `version: 2` and `jobs:` alone, both Fuzzfile keys; its job's `steps:` says what it is.
const CIRCLECI_2_0_HELLO_WORLD: &str = r#"version: 2
jobs:
  build:
    docker: # use the docker executor type; machine and macos executors are also supported
      - image: circleci/node:4.8.2 # the primary container, where your job's commands are run
    steps:
      - checkout # check out the code in the project directory
      - run: echo "hello world" # run the `echo` command
"#;

#[test]
fn a_circleci_2_0_config_of_version_and_jobs_alone_is_skipped() {
    let dir = ScratchDirectory::create("fuzzlint-skip-test", "circleci-2-0");
    std::fs::create_dir_all(dir.join(".circleci")).expect("mkdir");
    std::fs::write(dir.join(".circleci/config.yml"), CIRCLECI_2_0_HELLO_WORLD).expect("write");
    let r = run_in(&dir, &["check", "-v", ".circleci/config.yml"]);
    assert_eq!(r.code, 0, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(
            "skipped .circleci/config.yml: not a Fuzzfile (`version: 2` is not a Fuzzfile version (v1, v4), and its jobs have `steps:`"
        ),
        "{}",
        r.stderr
    );
    // A Fuzzfile with the same wrong version and no `steps:` is still checked and reported.
    std::fs::write(
        dir.join("train.yaml"),
        "version: 2\njobs:\n  build:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/true]\n",
    )
    .expect("write");
    let r = run_in(&dir, &["check", "--format", "json", "train.yaml"]);
    assert_eq!(r.json()["files"], 1, "{}", r.stderr);
    assert_eq!(r.code, 1, "{}", r.stdout);
}
