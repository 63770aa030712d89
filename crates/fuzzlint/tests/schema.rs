//! `fuzzlint schema NAME` and the schemas of the TOML files (cluster profile, fuzzlint.toml):
//! the binary prints exactly the committed files; the committed TOML schemas are current
//! (`UPDATE_SCHEMAS=1 cargo test -p fuzzlint --test schema` rewrites them); they accept what
//! the parsers accept and reject what they refuse; and `check-jsonschema` (PyPI) agrees with
//! the Rust validator on the Fuzzfile schemas, both ways.

use fuzz_test_support::{fuzzlint_binary, BinaryRun, NoColorVariable};
use fuzzfile_check::config::parse_config;
use fuzzfile_check::json_schema;
use fuzzfile_check::profile::parse_profile;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(args: &[&str]) -> BinaryRun {
    fuzzlint_binary!().run_in(&repo(), args, NoColorVariable::Removed)
}

fn validator(name: &str) -> jsonschema::Validator {
    let schema = json_schema::by_name(name).expect("known schema");
    jsonschema::draft7::new(&schema).unwrap_or_else(|e| panic!("{name} compiles: {e}"))
}

fn toml_json(text: &str) -> Value {
    toml::from_str::<Value>(text).unwrap_or_else(|e| panic!("TOML: {e}\n{text}"))
}

#[test]
fn committed_toml_schemas_are_up_to_date() {
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
    let mut stale = Vec::new();
    for (name, file) in json_schema::NAMES {
        let path = repo().join("schemas").join(file);
        let mut want = serde_json::to_string_pretty(&json_schema::by_name(name).expect("known"))
            .expect("JSON");
        want.push('\n');
        if std::fs::read_to_string(&path).unwrap_or_default() != want {
            if update {
                std::fs::write(&path, &want).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            } else {
                stale.push(file);
            }
        }
    }
    assert!(
        stale.is_empty(),
        "schemas/{stale:?} differ from fuzzfile_check::json_schema; run `UPDATE_SCHEMAS=1 cargo test -p fuzzlint --test schema`"
    );
}

#[test]
fn the_binary_prints_every_committed_schema() {
    let listed = run(&["schema"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let names: Vec<&str> = listed.stdout.lines().collect();
    let mut files = json_schema::all_names();
    files.push(("launch-plan", "launch-plan.schema.json"));
    assert_eq!(names, files.iter().map(|(n, _)| *n).collect::<Vec<_>>());
    for (name, file) in files {
        let out = run(&["schema", name]);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let committed = std::fs::read_to_string(repo().join("schemas").join(file)).expect("read");
        assert_eq!(
            out.stdout, committed,
            "`fuzzlint schema {name}` differs from schemas/{file}"
        );
    }
    let bad = run(&["schema", "fuzzfile-v5"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("no schema named `fuzzfile-v5`"),
        "{}",
        bad.stderr
    );
    assert!(
        bad.stderr.contains("did you mean `fuzzfile-v"),
        "{}",
        bad.stderr
    );
}

#[test]
fn profiles_validate_as_the_parser_reads_them() {
    let v = validator("cluster-profile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("examples/clusters"))
        .expect("examples/clusters")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    for e in walk(&repo().join("tests/specs")) {
        if e.to_string_lossy().ends_with("profile.toml") {
            files.push(e);
        }
    }
    assert!(files.len() >= 5, "{files:?}");
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        let parsed = parse_profile(&text);
        let doc = toml_json(&text);
        assert_eq!(
            v.is_valid(&doc),
            parsed.is_ok(),
            "{}: parser {parsed:?}, schema {:?}",
            f.display(),
            v.iter_errors(&doc)
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        );
    }
    let base = "name = \"x\"\ngpus-per-node = 4\ngpu-product = \"H100\"\ngpu-products = [\"H100\"]\nfabric = \"infiniband\"\nib-hcas = [\"mlx5_0\"]\nmnnvl = true\nnvlink-domain-nodes = 18\nimex = false\n[nccl-defaults]\nNCCL_IB_HCA = \"mlx5\"\n";
    for (text, ok) in [
        (base.to_owned(), true),
        (base.replace("infiniband", "myrinet"), false),
        (
            base.replace("gpus-per-node = 4", "gpus-per-node = 0"),
            false,
        ),
        (
            base.replace("gpus-per-node = 4", "gpus-per-node = \"4\""),
            false,
        ),
        (base.replace("mnnvl = true", "mnvl = true"), false),
        (base.replace("imex = false", "imex = \"no\""), false),
    ] {
        assert_eq!(parse_profile(&text).is_ok(), ok, "parser on {text}");
        assert_eq!(v.is_valid(&toml_json(&text)), ok, "schema on {text}");
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out.sort();
    out
}

#[test]
fn configs_validate_as_the_parser_reads_them() {
    let v = validator("fuzzlint-config");
    let base = "select = [\"FZ0\", \"FZ2\", \"unknown-key\", \"fz010\"]\nignore = [\"legacy-version\"]\nfail-on = \"warning\"\ncluster = \"clusters/gb200.toml\"\n[severity]\npolicy-retry-ignored = \"error\"\nFZ010 = \"warning\"\n";
    let inline = "fail-on = \"never\"\n[cluster]\nname = \"c\"\nfabric = \"roce\"\n";
    for (text, ok) in [
        (base.to_owned(), true),
        (inline.to_owned(), true),
        (inline.replace("roce", "token-ring"), false),
        (inline.replace("name = ", "nme = "), false),
        (
            base.replace("fail-on = \"warning\"", "fail-on = \"sometimes\""),
            false,
        ),
        (base.replace("= \"error\"", "= \"fatal\""), false),
        (base.replace("select", "selected"), false),
        (
            base.replace("\"legacy-version\"", "\"no-such-rule\""),
            false,
        ),
        (base.replace("policy-retry-ignored", "no-such-rule"), false),
        (format!("skip-non-fuzzfiles = false\n{base}"), true),
        (format!("skip-non-fuzzfiles = \"no\"\n{base}"), false),
    ] {
        assert_eq!(parse_config(&text).is_ok(), ok, "parser on {text}");
        assert_eq!(v.is_valid(&toml_json(&text)), ok, "schema on {text}");
    }
}

/// `check-jsonschema` from PyPI (installed by scripts/ci-lsp-setup.sh) agrees: the examples and
/// every clean real corpus file validate against `schemas/fuzzfile.schema.json`, and every
/// `unknown-key`/`invalid-value` spec bad file fails it.
#[test]
fn check_jsonschema_agrees() {
    let tool = "check-jsonschema";
    if Command::new(tool).arg("--version").output().is_err() {
        assert!(
            std::env::var_os("FUZZ_REQUIRE_SYSTEM_TESTS").is_none(),
            "check-jsonschema is not installed (scripts/ci-lsp-setup.sh installs it)"
        );
        fuzz_test_support::system::skip("check-jsonschema is not installed");
        return;
    }
    let schema = repo().join("schemas/fuzzfile.schema.json");
    let clean = |p: &Path| -> bool {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let a = fuzzfile_check::analyze(&text);
        a.diagnostics.iter().all(|d| {
            !(d.severity == fuzzfile_check::Severity::Error
                && matches!(
                    d.rule,
                    fuzzfile_check::Rule::UnknownKey
                        | fuzzfile_check::Rule::InvalidValue
                        | fuzzfile_check::Rule::YamlSyntax
                ))
        }) && text.lines().any(|l| l.starts_with("version:"))
    };
    let mut good: Vec<PathBuf> = walk(&repo().join("examples"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "fz"))
        .collect();
    let corpus = repo().join("../shared/corpus");
    for sub in ["plain", "docs"] {
        good.extend(
            walk(&corpus.join(sub))
                .into_iter()
                .filter(|p| p.extension().is_some_and(|e| e == "fz")),
        );
    }
    good.retain(|p| clean(p));
    assert!(good.len() >= 10, "{good:?}");
    let check = |files: &[PathBuf]| {
        Command::new(tool)
            .arg("--default-filetype")
            .arg("yaml")
            .arg("--schemafile")
            .arg(&schema)
            .args(files)
            .output()
            .expect("run check-jsonschema")
    };
    let out = check(&good);
    assert!(
        out.status.success(),
        "check-jsonschema rejects clean files:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut bad = 0;
    for rule in ["unknown-key", "invalid-value"] {
        for f in walk(&repo().join("tests/specs").join(rule)) {
            let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !(name.starts_with("bad") && name.ends_with(".fz")) {
                continue;
            }
            bad += 1;
            let out = check(std::slice::from_ref(&f));
            assert!(
                !out.status.success(),
                "check-jsonschema accepts {}",
                f.display()
            );
        }
    }
    assert!(bad >= 8);
}
