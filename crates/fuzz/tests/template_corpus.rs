//! `fuzz plan` on every catalog template (../shared/corpus/templates) with its shipped values:
//! each is planned, or refused for a value it requires and the catalog ships empty (then
//! planned once that value is given with `--set`), except one template that is really wrong.

use fuzz_test_support::corpus::corpus_templates;
use std::process::Command;

/// The catalog's one template whose rendered Fuzzfile has an error with its shipped values:
/// it prints `{{.AnsysMechanicalDesktopContainerURI}}` (copied from the Mechanical template),
/// which its values file does not declare, so the image URI is Go's `<no value>`.
const WRONG: &str = "ctrliq-ciq-fuzzball-catalog@v3.4__ansys_ls_dyna_desktop.template.yaml";

/// The value a refusal says the template asks for: "it asks for `Name`".
fn asked_for(stderr: &str) -> Option<String> {
    let rest = &stderr[stderr.find("it asks for `")? + "it asks for `".len()..];
    Some(rest[..rest.find('`')?].to_owned())
}

#[test]
fn every_catalog_template_plans_once_its_required_values_are_given() {
    let Some(files) = corpus_templates() else {
        return;
    };
    assert_eq!(files.len(), 89);
    let mut planned_as_shipped = 0;
    let mut required: Vec<(String, Vec<String>)> = Vec::new();
    for f in &files {
        let name = f.file_name().and_then(|n| n.to_str()).expect("a name");
        let mut set: Vec<String> = Vec::new();
        let out = loop {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_fuzz"));
            cmd.arg("plan").arg(f);
            for s in &set {
                // A secret's value is a reference (the Fuzzfile's grammar checks it).
                let v = if s.ends_with("Secret") {
                    format!("secret://user/{s}")
                } else {
                    format!("x-{s}")
                };
                cmd.args(["--set", &format!("{s}={v}")]);
            }
            let o = cmd.output().expect("run fuzz");
            let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
            match (o.status.code(), asked_for(&stderr)) {
                (Some(2), Some(v)) if !set.contains(&v) && set.len() < 5 => {
                    assert!(stderr.contains("[FZ051 template-fail]"), "{stderr}");
                    set.push(v);
                }
                _ => break o,
            }
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        if name == WRONG {
            assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
            assert!(
                stderr.contains("AnsysMechanicalDesktopContainerURI"),
                "{stderr}"
            );
            continue;
        }
        assert_eq!(out.status.code(), Some(0), "{name} {set:?}: {stderr}");
        let plan: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a JSON plan");
        assert_eq!(plan["workflow"]["source"], name);
        if set.is_empty() {
            planned_as_shipped += 1;
        } else {
            required.push((name.to_owned(), set));
        }
    }
    // The catalog's required inputs: secrets and passwords it cannot ship.
    let required: Vec<String> = required
        .iter()
        .map(|(n, s)| format!("{n}: {}", s.join(", ")))
        .collect();
    assert_eq!(
        required,
        [
            "ctrliq-ciq-fuzzball-catalog__nim_flux_webui.template.yaml: NgcApiKeySecret, NgcOciSecret, HuggingFaceTokenSecret",
            "ctrliq-ciq-fuzzball-catalog__unsloth-studio.template.yaml: UserPassword",
            "ctrliq-ciq-fuzzball-catalog__vllm-server.template.yaml: ServerApiKey",
            "ctrliq-ciq-fuzzball-catalog@v3.4__nim_flux_webui.template.yaml: NgcApiKeySecret, NgcOciSecret, HuggingFaceTokenSecret",
            "ctrliq-ciq-fuzzball-catalog@v3.4__unsloth-studio.template.yaml: UserPassword",
            "ctrliq-ciq-fuzzball-catalog@v3.4__vllm-server.template.yaml: ServerApiKey",
        ]
    );
    assert_eq!(planned_as_shipped, 82);
}
