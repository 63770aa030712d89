//! The JSON Schemas of `fuzzfile_model::json_schema` against the committed files in `schemas/`
//! (`UPDATE_SCHEMAS=1 cargo test -p fuzzfile_model --test json_schema` rewrites them) and
//! against what the model builder says, both ways:
//! - every file the builder finds no schema-level error in (the real corpus, the examples, the
//!   rule specs' good files) validates against its version's schema and the dispatching one;
//! - every `unknown-key` and `invalid-value` spec bad file fails both, and so do the corpus
//!   files the builder finds really wrong.

use fuzzfile_diagnostics::{Rule, Severity};
use fuzzfile_model::json_schema::{self, yaml_to_json};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn validator(name: &str) -> jsonschema::Validator {
    let schema = json_schema::by_name(name).expect("a known schema");
    jsonschema::draft7::new(&schema).unwrap_or_else(|e| panic!("schema {name} compiles: {e}"))
}

struct Checked {
    /// The keys the builder reports as `unknown-key` errors, as written.
    unknown_keys: Vec<String>,
    /// Schema-level errors the builder reports (`unknown-key`, `invalid-value`,
    /// `missing-field`), and syntax errors.
    builder_errors: Vec<String>,
    json: Option<Value>,
}

fn check(text: &str) -> Checked {
    let tree = fuzzfile_syntax::parse(text);
    let (_, diags) = fuzzfile_model::build(text, &tree);
    let mut builder_errors: Vec<String> = tree
        .errors
        .iter()
        .map(|e| format!("syntax: {e:?}"))
        .collect();
    builder_errors.extend(
        diags
            .iter()
            .filter(|d| {
                d.severity == Severity::Error
                    && matches!(
                        d.rule,
                        Rule::UnknownKey | Rule::InvalidValue | Rule::MissingField
                    )
            })
            .map(|d| format!("{}: {}", d.rule.name(), d.message)),
    );
    let unknown_keys = diags
        .iter()
        .filter(|d| d.severity == Severity::Error && d.rule == Rule::UnknownKey)
        .map(|d| {
            text[d.range.start as usize..d.range.end as usize]
                .trim_matches(|c| c == '"' || c == '\'')
                .to_owned()
        })
        .collect();
    Checked {
        unknown_keys,
        builder_errors,
        json: yaml_to_json(&tree).ok(),
    }
}

fn schema_errors(v: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    v.iter_errors(doc)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

fn version_of(doc: &Value) -> &str {
    match doc.get("version").and_then(Value::as_str) {
        Some("v1") => "fuzzfile-v1",
        _ => "fuzzfile-v4",
    }
}

fn fz_files(dir: &Path, recurse: bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() && recurse {
            out.extend(fz_files(&p, true));
        } else if p
            .extension()
            .is_some_and(|e| e == "fz" || e == "yaml" || e == "yml")
        {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn committed_schemas_are_up_to_date() {
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
    let mut stale = Vec::new();
    for (name, file) in json_schema::NAMES {
        let path = repo().join("schemas").join(file);
        let want = json_schema::to_text(&json_schema::by_name(name).expect("known"));
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        if have != want {
            if update {
                std::fs::write(&path, &want).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            } else {
                stale.push(file);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "schemas/{stale:?} differ from fuzzfile_model's key table; run `UPDATE_SCHEMAS=1 cargo test -p fuzzfile_model --test json_schema`"
    );
}

/// Files the builder finds no schema-level error in validate against their version's schema
/// and the dispatching one. Returns how many files were validated.
fn assert_clean_files_validate(files: &[PathBuf]) -> usize {
    let top = validator("fuzzfile");
    let v1 = validator("fuzzfile-v1");
    let v4 = validator("fuzzfile-v4");
    let mut failures = Vec::new();
    let mut n = 0;
    for f in files {
        let text = std::fs::read_to_string(f).unwrap_or_default();
        let c = check(&text);
        let Some(doc) = c.json else { continue };
        // The schema does not require jobs (`missing-field` of the workflow's contents is the
        // checker's), so only unknown keys, invalid values, syntax errors and a missing
        // version leave a file out.
        let schema_level = c
            .builder_errors
            .iter()
            .any(|e| !e.starts_with("missing-field") || e.contains("no `version`"));
        if schema_level || doc.get("version").is_none() {
            if std::env::var_os("SHOW_SKIPPED").is_some() {
                eprintln!("skipped {}: {:?}", f.display(), c.builder_errors);
            }
            continue;
        }
        n += 1;
        let own = if version_of(&doc) == "fuzzfile-v1" {
            &v1
        } else {
            &v4
        };
        for (which, v) in [("version", own), ("dispatching", &top)] {
            let errs = schema_errors(v, &doc);
            if !errs.is_empty() {
                failures.push(format!("{} ({which} schema): {errs:#?}", f.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    n
}

#[test]
fn examples_and_good_specs_validate() {
    let mut files = fz_files(&repo().join("examples"), true);
    files.extend(
        fz_files(&repo().join("tests/specs"), true)
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with("good"))
            }),
    );
    let n = assert_clean_files_validate(&files);
    // The examples (10) and most good spec files are clean.
    assert!(n >= 60, "only {n} clean files were validated");
}

#[test]
fn real_corpus_validates() {
    let corpus = repo().join("../shared/corpus");
    let Ok(manifest) = std::fs::read_to_string(corpus.join("MANIFEST.tsv")) else {
        // As fuzzfile_check's corpus test: the corpus sits beside the repository.
        fuzz_test_support::system::skip(&format!("no corpus at {}", corpus.display()));
        return;
    };
    let files: Vec<PathBuf> = manifest
        .lines()
        .skip(1)
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            matches!(cols.get(5), Some(&"plain") | Some(&"docs")).then(|| corpus.join(cols[0]))
        })
        .collect();
    assert!(files.len() >= 40, "{} corpus files", files.len());
    let n = assert_clean_files_validate(&files);
    // 24 plain files less 4 known wrong, 5 complete documentation files, 2 fragments with a
    // version.
    assert!(n >= 29, "only {n} clean corpus files were validated");
    // The files the builder finds really wrong (an empty egress `uri:`) fail the schema too.
    let top = validator("fuzzfile");
    let mut wrong = 0;
    for f in &files {
        let c = check(&std::fs::read_to_string(f).unwrap_or_default());
        if c.builder_errors
            .iter()
            .any(|e| e.starts_with("invalid-value"))
        {
            wrong += 1;
            let doc = c.json.expect("JSON");
            assert!(
                !top.is_valid(&doc),
                "{} is wrong ({:?}) but validates",
                f.display(),
                c.builder_errors
            );
        }
    }
    assert!(wrong >= 1, "no known-wrong corpus file");
}

#[test]
fn unknown_key_and_invalid_value_specs_fail() {
    let top = validator("fuzzfile");
    let mut n = 0;
    let mut unknown = 0;
    for rule in ["unknown-key", "invalid-value"] {
        for f in fz_files(&repo().join("tests/specs").join(rule), false) {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !name.starts_with("bad") {
                continue;
            }
            n += 1;
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let c = check(&text);
            let Some(doc) = c.json else {
                panic!("{}: not convertible to JSON", f.display());
            };
            let own = validator(version_of(&doc));
            assert!(
                !top.is_valid(&doc),
                "{} validates against the dispatching schema",
                f.display()
            );
            assert!(
                !own.is_valid(&doc),
                "{} validates against its version's schema",
                f.display()
            );
            // Every key the builder reports as unknown is one the schema rejects.
            let errors = schema_errors(&own, &doc);
            for key in &c.unknown_keys {
                assert!(
                    errors
                        .iter()
                        .any(|e| e.contains("Additional properties")
                            && e.contains(&format!("'{key}'"))),
                    "{}: the builder reports `{key}` as unknown, the schema does not: {errors:#?}",
                    f.display()
                );
                unknown += 1;
            }
        }
    }
    assert!(n >= 8, "{n} spec files");
    assert!(unknown >= 10, "{unknown} unknown keys");
}

/// Each kind of mistake alone, in an otherwise valid file: the schema rejects what the builder
/// rejects, and accepts what it only warns about.
#[test]
fn single_mistakes_agree_with_the_builder() {
    let base = "version: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [echo, hi]\n";
    let cases: &[(&str, bool)] = &[
        ("    policy: {timeout: {execute: 2h30m}}\n", true),
        ("    policy: {timeout: {execute: 1.5h}}\n", true),
        ("    policy: {timeout: {execute: 2 hours}}\n", false),
        ("    policy: {timeout: {execute: 2d}}\n", true),
        ("    resource: {memory: {size: 0.5GiB}}\n", true),
        ("    resource: {memory: {size: 512 mb}}\n", true),
        ("    resource: {memory: {size: 1024}}\n", true),
        ("    resource: {memory: {size: 64 gigs}}\n", false),
        ("    resource: {cpu: {cores: 0}}\n", false),
        ("    resource: {cpu: {cores: \"8\"}}\n", false),
        ("    resource: {cpu: {affinity: numa}}\n", true),
        ("    resource: {cpu: {affinity: rack}}\n", false),
        ("    resource: {devices: {nvidia.com/gpu: 4}}\n", true),
        ("    cwd: /work\n", true),
        ("    cwd: work\n", false),
        ("    cwd: /work/../etc\n", false),
        ("    cwd: /work/..x\n", true),
        ("    env: [A=1, B_2=secret://user/tok]\n", true),
        ("    env: [3X=1]\n", false),
        ("    env: [NOEQUALS]\n", false),
        (
            "    task-array: {start: 1, end: 4, concurrency: 200}\n",
            true,
        ),
        (
            "    task-array: {start: 1, end: 4, concurrency: 201}\n",
            false,
        ),
        ("    multinode: {nodes: 2, implementation: openmpi}\n", true),
        ("    multinode: {nodes: 2, implementation: nccl}\n", false),
        ("    network: {expose-tcp: [8080]}\n", true),
        ("    network: {expose-tcp: [70000]}\n", false),
        ("    comand: [echo]\n", false),
        ("    depends-on: [{name: b, status: FINISHED}]\n", true),
        ("    depends-on: [b]\n", false),
        ("    mounts: {/data: vol}\n", true),
        ("    mounts: {vol: {location: /data}}\n", false),
        (
            "    image: {uri: docker://alpine:3.20, secret: secret://user/tok}\n",
            true,
        ),
        (
            "    image: {uri: docker://alpine:3.20, secret: user/tok}\n",
            false,
        ),
        ("    image: {uri: library://alpine}\n", false),
        ("    image: {uri: oras://r.io/x.sif}\n", true),
        ("    image: docker://alpine\n", false),
        ("    command: echo hi\n", false),
        ("    command: [echo, 42, true]\n", true),
        ("    resource: {cpu: {threads: \"true\"}}\n", false),
        ("    resource: {cpu: {threads: yes}}\n", false),
        ("    resource: {exclusive: true}\n", true),
    ];
    let v4 = validator("fuzzfile-v4");
    for (extra, valid) in cases {
        // An `image` or `command` case replaces the base's (a key written twice is another
        // rule's finding).
        let text = if extra.starts_with("    image:") {
            format!(
                "{}{extra}",
                base.replace("    image: {uri: docker://alpine:3.20}\n", "")
            )
        } else if extra.starts_with("    command:") {
            format!("{}{extra}", base.replace("    command: [echo, hi]\n", ""))
        } else {
            format!("{base}{extra}")
        };
        let c = check(&text);
        let doc = c.json.expect("JSON");
        let builder_ok = c
            .builder_errors
            .iter()
            .all(|e| !(e.starts_with("invalid-value") || e.starts_with("unknown-key")));
        assert_eq!(
            builder_ok, *valid,
            "the builder on {extra:?}: {:?}",
            c.builder_errors
        );
        assert_eq!(
            v4.is_valid(&doc),
            *valid,
            "the schema on {extra:?}: {:?}",
            schema_errors(&v4, &doc)
        );
    }
    // Version-specific keys: a v1 mount is valid in v1, `use` in volumes only in v4.
    let v1 = validator("fuzzfile-v1");
    let v1_text = "version: v1\nvolumes:\n  vol: {reference: volume://user/ephemeral}\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [echo]\n    mounts: {vol: {location: /data}}\n";
    let doc = check(v1_text).json.expect("JSON");
    assert!(v1.is_valid(&doc), "{:?}", schema_errors(&v1, &doc));
    let with_use = v1_text.replace("{reference: volume://user/ephemeral}", "{use: ephemeral}");
    let doc = check(&with_use).json.expect("JSON");
    assert!(!v1.is_valid(&doc));
    assert!(validator("fuzzfile").is_valid(&check(v1_text).json.expect("JSON")));
}
