//! A check of many files writes its report in the order of the file list, whatever order the
//! files finish in: 60 files (the examples and the format inputs, copied under sorted names;
//! every tenth a large generated Fuzzfile, slow to check, so that the files after it finish
//! first; three too large to read) in every output format. The concise and JSON Lines reports
//! of the whole list are those of each file checked alone, one after the other; every other
//! format lists the files in the list's order, each file's findings together, and still parses
//! (JSON), validates (SARIF 2.1.0, GitLab's Code Quality schema) and reads back (JUnit XML).

use fuzz_test_support::growth::Shape;
use fuzz_test_support::{fuzzlint_binary, BinaryRun, NoColorVariable, ScratchDirectory};
use serde_json::Value;
use std::path::{Path, PathBuf};

const FILES: usize = 60;

/// The files, named so that the list's order (sorted) is their number's.
struct ManyFiles {
    dir: ScratchDirectory,
    /// Every file, in the list's order.
    names: Vec<String>,
    /// Those that cannot be read (over the size limit).
    unreadable: Vec<String>,
}

impl ManyFiles {
    fn readable(&self) -> Vec<String> {
        self.names
            .iter()
            .filter(|n| !self.unreadable.contains(n))
            .cloned()
            .collect()
    }
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sources() -> Vec<String> {
    let mut texts = Vec::new();
    for dir in ["examples", "crates/fuzzlint/tests/format_inputs"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(workspace().join(dir))
            .unwrap_or_else(|e| panic!("{dir}: {e}"))
            .map(|e| e.expect("entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "fz"))
            .collect();
        files.sort();
        texts.extend(
            files
                .iter()
                .map(|p| std::fs::read_to_string(p).expect("read a source")),
        );
    }
    assert!(texts.len() >= 8, "examples and format inputs");
    texts
}

fn many_files(test: &str) -> ManyFiles {
    let dir = ScratchDirectory::create("fuzzlint-streamed-order", test);
    let sources = sources();
    // Each `requires` is a fixable warning: slow to check and to render.
    let large = Shape::Requires.fuzzfile(400);
    let mut names = Vec::new();
    let mut unreadable = Vec::new();
    for i in 0..FILES {
        let name = format!("f{i:03}.fz");
        if i % 20 == 7 {
            let path = dir.write_file(&name, "");
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .expect("open");
            file.set_len(fuzzfile_io::FUZZFILE_LIMIT + 1)
                .expect("a sparse file over the limit");
            unreadable.push(name.clone());
        } else if i % 10 == 0 {
            dir.write_file(&name, &large);
        } else {
            dir.write_file(&name, &sources[i % sources.len()]);
        }
        names.push(name);
    }
    ManyFiles {
        dir,
        names,
        unreadable,
    }
}

fn check(files: &ManyFiles, extra: &[&str]) -> BinaryRun {
    let mut args = vec!["check"];
    args.extend(files.names.iter().map(String::as_str));
    args.extend(extra);
    let run = fuzzlint_binary!().run_in(files.dir.path(), &args, NoColorVariable::Set);
    assert_eq!(
        run.code, 2,
        "exit 2 for the unreadable files\n{}",
        run.stderr
    );
    run
}

/// The files of `sequence` (one entry per finding, or per file) in the order they first appear,
/// asserting that each file's entries are together and that the files come in the list's
/// order.
fn assert_in_list_order(what: &str, sequence: &[String], list: &[String]) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for name in sequence {
        if files.last() != Some(name) {
            assert!(
                !files.contains(name),
                "{what}: the entries of {name} are not together: {sequence:?}"
            );
            files.push(name.clone());
        }
    }
    let positions: Vec<usize> = files
        .iter()
        .map(|f| {
            list.iter()
                .position(|n| n == f)
                .unwrap_or_else(|| panic!("{what}: {f} is not in the list"))
        })
        .collect();
    assert!(
        positions.windows(2).all(|w| w[0] < w[1]),
        "{what}: files out of the list's order: {files:?}"
    );
    files
}

fn schema(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/schemas")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).expect("read schema")).expect("JSON")
}

fn assert_valid(validator: &jsonschema::Validator, doc: &Value) {
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect();
    assert_eq!(errors, Vec::<String>::new());
}

/// `error:` lines on standard error, each naming its file.
fn read_errors(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .map(|l| {
            l.split([' ', ':'])
                .find(|w| w.ends_with(".fz"))
                .unwrap_or(l)
                .to_owned()
        })
        .collect()
}

#[test]
fn concise_and_json_lines_are_each_files_report_in_the_lists_order() {
    let files = many_files("lines");
    for format in ["concise", "json-lines", "github"] {
        let whole = check(&files, &["--output-format", format]);
        let mut one_by_one = String::new();
        for name in files.readable() {
            let alone = fuzzlint_binary!().run_in(
                files.dir.path(),
                &["check", &name, "--output-format", format],
                NoColorVariable::Set,
            );
            assert!(alone.code <= 1, "{name}: {}", alone.stderr);
            one_by_one.push_str(&alone.stdout);
        }
        assert!(!one_by_one.is_empty(), "the files have findings");
        assert_eq!(whole.stdout, one_by_one, "{format}");
        assert_eq!(read_errors(&whole.stderr), files.unreadable, "{format}");
    }
}

#[test]
fn json_and_sarif_list_the_files_in_order_and_stay_valid() {
    let files = many_files("json");
    let readable = files.readable();

    let json = check(&files, &["--output-format", "json"]).json();
    let diagnostics = json["diagnostics"].as_array().expect("diagnostics");
    let sequence: Vec<String> = diagnostics
        .iter()
        .map(|d| d["file"].as_str().expect("file").to_owned())
        .collect();
    let with_findings = assert_in_list_order("json", &sequence, &files.names);
    assert!(with_findings.len() >= 10, "{with_findings:?}");
    assert_eq!(json["files"], readable.len());

    let sarif = check(&files, &["--output-format", "sarif"]).json();
    let validator = jsonschema::draft4::options()
        .should_validate_formats(true)
        .build(&schema("sarif-2.1.0.json"))
        .expect("the SARIF schema compiles");
    assert_valid(&validator, &sarif);
    let run = &sarif["runs"][0];
    let uri = |location: &Value| {
        location["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .expect("uri")
            .to_owned()
    };
    let results: Vec<String> = run["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| uri(&r["locations"][0]))
        .collect();
    assert_eq!(
        results, sequence,
        "the SARIF results are the JSON diagnostics"
    );
    let artifacts: Vec<String> = run["artifacts"]
        .as_array()
        .expect("artifacts")
        .iter()
        .map(|a| a["location"]["uri"].as_str().expect("uri").to_owned())
        .collect();
    assert_eq!(artifacts, readable);
}

#[test]
fn gitlab_and_junit_list_the_files_in_order_and_stay_valid() {
    let files = many_files("gitlab");
    let readable = files.readable();

    let gitlab = check(&files, &["--output-format", "gitlab"]).json();
    let validator = jsonschema::draft7::options()
        .build(&schema("gitlab-codeclimate.json"))
        .expect("GitLab's schema compiles");
    let issues = gitlab.as_array().expect("issues");
    // GitLab's schema is that of one issue.
    for issue in issues {
        assert_valid(&validator, issue);
    }
    let sequence: Vec<String> = issues
        .iter()
        .map(|i| i["location"]["path"].as_str().expect("path").to_owned())
        .collect();
    assert_in_list_order("gitlab", &sequence, &files.names);
    let mut fingerprints: Vec<&str> = issues
        .iter()
        .map(|i| i["fingerprint"].as_str().expect("fingerprint"))
        .collect();
    let all = fingerprints.len();
    fingerprints.sort_unstable();
    fingerprints.dedup();
    assert_eq!(fingerprints.len(), all, "every fingerprint is its own");

    let junit = check(&files, &["--output-format", "junit"]).stdout;
    let doc = roxmltree::Document::parse(&junit).unwrap_or_else(|e| panic!("{e}\n{junit}"));
    let root = doc.root_element();
    let suites: Vec<roxmltree::Node> = root
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .collect();
    let names: Vec<String> = suites
        .iter()
        .map(|s| s.attribute("name").expect("name").to_owned())
        .collect();
    assert_eq!(names, readable);
    let sum = |attribute: &str| -> usize {
        suites
            .iter()
            .map(|s| {
                s.attribute(attribute)
                    .expect(attribute)
                    .parse::<usize>()
                    .expect("a count")
            })
            .sum()
    };
    assert_eq!(
        root.attribute("tests"),
        Some(sum("tests").to_string().as_str())
    );
    assert_eq!(
        root.attribute("failures"),
        Some(sum("failures").to_string().as_str())
    );
}

/// The human report's frames name their file in their header (`╭─[ f003.fz:2:3 ]`).
fn frame_files(report: &str) -> Vec<String> {
    report
        .lines()
        .filter_map(|l| l.split_once("─[ ").map(|(_, rest)| rest))
        .map(|rest| rest.split(':').next().unwrap_or(rest).trim().to_owned())
        .collect()
}

#[test]
fn human_and_preflight_reports_come_in_the_lists_order() {
    let files = many_files("human");
    let readable = files.readable();
    let cluster = workspace().join("examples/clusters/h100-ib.toml");
    let cluster = cluster.to_str().expect("UTF-8 path");
    // Without a profile the GPU examples make the cluster note, written first; with one,
    // there is no note and the frames are written as the files are checked.
    for (extra, note) in [(vec![], true), (vec!["--cluster", cluster], false)] {
        let mut args = extra.clone();
        args.extend(["--max-diagnostics", "0"]);
        let human = check(&files, &args).stdout;
        assert_eq!(
            human.starts_with("note: the cluster checks are off"),
            note,
            "{human}"
        );
        let sequence = frame_files(&human);
        let json = check(
            &files,
            &[extra.as_slice(), &["--output-format", "json"]].concat(),
        )
        .json();
        let json_files: Vec<String> = json["diagnostics"]
            .as_array()
            .expect("diagnostics")
            .iter()
            .map(|d| d["file"].as_str().expect("file").to_owned())
            .collect();
        assert_eq!(
            sequence, json_files,
            "one frame per finding, in the JSON's order"
        );
        assert_in_list_order("human", &sequence, &files.names);
        // The summary line, then the fix line.
        let summary = format!("{} files checked: ", readable.len());
        let tail: Vec<&str> = human.lines().rev().take(2).collect();
        assert!(tail[1].starts_with(&summary), "{tail:?}");
        assert!(tail[0].ends_with(" fixable with --fix"), "{tail:?}");
    }

    let preflight = check(&files, &["--output-format", "preflight"]).stdout;
    let statuses: Vec<String> = preflight
        .lines()
        .filter_map(|l| {
            l.strip_suffix(": ready")
                .or_else(|| l.strip_suffix(": not runnable"))
        })
        .map(str::to_owned)
        .collect();
    assert_eq!(statuses, readable);
}

/// A values file named on the command line and listed with its template is in the GitLab
/// report twice: its identical findings rank on across both listings (each file's part is
/// written with its own ranks, and the report's writer ranks a path listed again after the
/// first), so every fingerprint is its own and the first listing's are those of the file
/// checked alone.
#[test]
fn a_values_file_listed_twice_keeps_its_gitlab_fingerprints_apart() {
    let dir = ScratchDirectory::create("fuzzlint-streamed-order", "values-twice");
    dir.write_file(
        "app/template.yaml",
        "version: v4\njobs:\n  hello:\n    image:\n      uri: {{ .ContainerUri }}\n    command: [echo, \"{{ .Cores }}\"]\n",
    );
    dir.write_file(
        "app/values.yaml",
        "values:\n  - name: ContainerUri\n    string_value: docker://alpine:3.20\n  - name: Cores\n    uint_value: -2\n",
    );
    let fingerprints = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["check"];
        all.extend(args);
        all.extend(["--output-format", "gitlab"]);
        let run = fuzzlint_binary!().run_in(dir.path(), &all, NoColorVariable::Set);
        run.json()
            .as_array()
            .expect("issues")
            .iter()
            .filter(|i| i["location"]["path"] == "app/values.yaml")
            .map(|i| i["fingerprint"].as_str().expect("fingerprint").to_owned())
            .collect()
    };
    let alone = fingerprints(&["app/values.yaml"]);
    assert_eq!(alone.len(), 1, "the values file has one error");
    let twice = fingerprints(&["app/template.yaml", "app/values.yaml"]);
    assert_eq!(twice.len(), 2, "{twice:?}");
    assert_eq!(twice[0], alone[0]);
    assert_ne!(twice[0], twice[1]);
}
