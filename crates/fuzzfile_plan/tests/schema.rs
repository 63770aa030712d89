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
