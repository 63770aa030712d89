//! The committed JSON Schema of the launch plan matches the types, and every plan of every
//! example validates against it. `UPDATE_SCHEMAS=1 cargo test -p fuzzfile_plan --test schema`
//! rewrites `schemas/launch-plan.schema.json`.

mod common;

use std::path::Path;

fn schema_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas/launch-plan.schema.json")
}

#[test]
fn the_committed_schema_is_up_to_date() {
    let expected = fuzzfile_plan::schema();
    let path = schema_path();
    if std::env::var_os("UPDATE_SCHEMAS").is_some() {
        std::fs::write(&path, &expected).expect("write the schema");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == expected,
        "schemas/launch-plan.schema.json is stale; run `UPDATE_SCHEMAS=1 cargo test -p fuzzfile_plan --test schema`"
    );
}

#[test]
fn every_example_plan_is_valid_against_the_schema() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path()).expect("read the schema"))
            .expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let mut n = 0;
    for case in common::cases() {
        let plan = common::plan(&case).unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let doc: serde_json::Value =
            serde_json::from_str(&fuzzfile_plan::to_json(&plan)).expect("the plan is JSON");
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:#?}", case.name);
        n += 1;
    }
    assert!(n >= 6, "only {n} plans");
}

#[test]
fn the_schema_rejects_what_is_not_a_plan() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path()).expect("read the schema"))
            .expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let case = common::cases().into_iter().next().expect("an example");
    let mut doc: serde_json::Value =
        serde_json::to_value(common::plan(&case).expect("a plan")).expect("JSON");
    assert!(validator.is_valid(&doc));
    doc["jobs"][0]["instances"][0]["env"][0]["value"] = serde_json::json!({"plain": "x"});
    assert!(
        !validator.is_valid(&doc),
        "an unknown env value kind is rejected"
    );
    doc["jobs"][0]["surprise"] = serde_json::json!(1);
    assert!(!validator.is_valid(&doc));
}

/// Every rule spec and every file of the external corpus (`../shared/corpus`, when present)
/// that has no error is lowered without a panic to a plan that is valid against the schema.
#[test]
fn every_spec_and_corpus_plan_is_valid() {
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(schema_path()).expect("read the schema"))
            .expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    let mut stack = vec![root.join("tests/specs"), root.join("../shared/corpus")];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .is_some_and(|x| x == "fz" || x == "yaml" || x == "yml")
            {
                files.push(p);
            }
        }
    }
    files.sort();
    let (mut planned, mut refused) = (0, 0);
    for f in &files {
        let a = fuzzfile_check::analyze_bytes(&std::fs::read(f).expect("read"));
        let options = fuzzfile_plan::PlanOptions {
            source: "x.fz".into(),
            ..Default::default()
        };
        match fuzzfile_plan::lower(&a, &options) {
            Ok(plan) => {
                let doc = serde_json::to_value(&plan).expect("JSON");
                let errors: Vec<String> = validator
                    .iter_errors(&doc)
                    .map(|e| format!("{}: {e}", e.instance_path()))
                    .collect();
                assert!(errors.is_empty(), "{}: {errors:#?}", f.display());
                planned += 1;
            }
            Err(fuzzfile_plan::Refusal::Errors(_)) => refused += 1,
            Err(other) => {
                eprintln!("{}: {other}", f.display());
                refused += 1;
            }
        }
    }
    eprintln!("{planned} planned, {refused} refused");
    assert!(planned >= 20, "only {planned} files planned");
}
