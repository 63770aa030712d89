//! Code actions: quick fixes, suppressions and fix-all, each applied and checked by
//! analysing the result again.

use crate::common::*;
use crate::TRAIN;
use serde_json::{json, Value};

const URI: &str = "file:///w/a.fz";

fn actions_at(c: &mut Client, text: &str, needle: &str, only: Option<&[&str]>) -> Vec<Value> {
    let start = c.at(text, needle, 0);
    let end = c.at(text, needle, needle.len());
    let mut ctx = json!({"diagnostics": []});
    if let Some(o) = only {
        ctx["only"] = json!(o);
    }
    c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": URI}, "range": {"start": start, "end": end}, "context": ctx}),
    )
    .unwrap()
    .as_array()
    .cloned()
    .unwrap_or_default()
}

fn apply(c: &Client, text: &str, action: &Value) -> String {
    let (edits, _) = document_edits(&action["edit"]);
    apply_edits(text, &edits, c.encoding)
}

fn rules(text: &str) -> Vec<&'static str> {
    fuzzfile_check::analyze(text)
        .diagnostics
        .iter()
        .map(|d| d.rule.name())
        .collect()
}

#[test]
fn quick_fixes_and_suppressions_remove_their_finding() {
    for caps in [caps_utf8(), caps_utf16()] {
        let mut c = Client::start(caps, None);
        c.open(URI, "fuzzfile", 1, TRAIN);
        let _ = c.diagnostics(URI, Some(1));
        let mut shown = String::new();
        for (needle, rule) in [
            ("nproc-per-node=8", "launcher-nproc-mismatch"),
            ("polcy", "unknown-key"),
            ("requires", "deprecated-key"),
        ] {
            let actions = actions_at(&mut c, TRAIN, needle, None);
            assert!(!actions.is_empty(), "{needle}");
            for a in &actions {
                assert_eq!(a["kind"], "quickfix");
                assert_eq!(
                    a["diagnostics"][0]["code"],
                    fuzzfile_check::Rule::from_name(rule).unwrap().code()
                );
                let fixed = apply(&c, TRAIN, a);
                let before = rules(TRAIN).iter().filter(|r| **r == rule).count();
                let after = rules(&fixed).iter().filter(|r| **r == rule).count();
                assert_eq!(after + 1, before, "{}: {fixed}", a["title"]);
                assert!(!rules(&fixed).contains(&"unused-suppression"));
                let changed: Vec<String> = TRAIN
                    .lines()
                    .zip(fixed.lines())
                    .filter(|(x, y)| x != y)
                    .map(|(x, y)| format!("  - {x}\n  + {y}"))
                    .collect();
                shown.push_str(&format!(
                    "## {}\n{}\n",
                    a["title"].as_str().unwrap(),
                    changed.join("\n")
                ));
            }
        }
        insta::assert_snapshot!("quick_fixes", shown);
        c.shutdown();
    }
}

#[test]
fn suppressions_extend_an_existing_comment_and_stay_out_of_scalars() {
    let mut c = Client::start(caps_utf8(), None);
    let text = "version: v4\njobs:\n  t:\n    image: {uri: docker://x:1}\n    command: [torchrun, --standalone, --nproc-per-node=8, x.py]  # fuzzlint: ignore[gpu-request-missing]\n    script: |\n      #!/bin/sh\n      torchrun --nproc-per-node 8 x.py\n";
    c.open(URI, "fuzzfile", 1, text);
    let _ = c.diagnostics(URI, Some(1));
    // On the `command:` line: `command-and-script` is added to the comment there.
    let found: Vec<Value> = actions_at(&mut c, text, "command: [", None)
        .into_iter()
        .filter(|a| a["title"].as_str().unwrap().starts_with("Suppress"))
        .collect();
    assert!(!found.is_empty());
    for a in &found {
        let fixed = apply(&c, text, a);
        let line = fixed.lines().nth(4).unwrap();
        assert!(
            line.contains("# fuzzlint: ignore[gpu-request-missing, "),
            "{line}"
        );
        let names: Vec<&str> = rules(&fixed);
        assert!(!names.contains(&"unused-suppression"), "{names:?}");
    }
    // A finding inside the script body: no comment can reach it there.
    for a in actions_at(&mut c, text, "--nproc-per-node 8", None) {
        assert!(!a["title"].as_str().unwrap().starts_with("Suppress"), "{a}");
    }
    c.shutdown();
}

#[test]
fn fix_all_is_a_source_action() {
    let mut c = Client::start(caps_utf8(), None);
    c.open(URI, "fuzzfile", 1, TRAIN);
    let _ = c.diagnostics(URI, Some(1));
    // Not offered among quick fixes unless asked for.
    let all = actions_at(&mut c, TRAIN, "version", None);
    assert!(all.iter().all(|a| a["kind"] != "source.fixAll.fuzzlint"));
    let fix_all = actions_at(&mut c, TRAIN, "version", Some(&["source.fixAll"]));
    assert_eq!(fix_all.len(), 1);
    let fixed = apply(&c, TRAIN, &fix_all[0]);
    // The same result as `fuzzlint check --fix` (the CLI's function).
    let cli = fuzzfile_check::fix_all(&fuzzfile_check::analyze(TRAIN));
    assert_eq!(fixed, cli);
    assert!(!rules(&fixed).contains(&"unknown-key"));
    // Only quick fixes when only those are asked for.
    let q = actions_at(&mut c, TRAIN, "polcy", Some(&["quickfix"]));
    assert!(!q.is_empty() && q.iter().all(|a| a["kind"] == "quickfix"));
    c.shutdown();
}

/// Regression: a quick fix whose result would have a new error (renaming `dependson` makes the
/// job depend on itself) or that would write a key twice is not offered; the fix-all action
/// leaves those out and keeps the others, and its result parses with no new error.
#[test]
fn fixes_that_would_add_an_error_are_not_offered() {
    let text = "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    Command: [x]\n    COMMAND: [y]\n    dependson: [a]\n";
    let mut c = Client::start(caps_utf16(), None);
    c.open(URI, "fuzzfile", 1, text);
    let _ = c.diagnostics(URI, Some(1));
    let quick: Vec<Value> = actions_at(&mut c, text, "dependson", None)
        .into_iter()
        .filter(|a| !a["title"].as_str().unwrap().starts_with("Suppress"))
        .collect();
    assert!(quick.is_empty(), "{quick:?}");
    // Each case fix alone is fine, so each is offered.
    assert!(actions_at(&mut c, text, "COMMAND", None)
        .iter()
        .any(|a| a["title"] == "Rename to `command`"));
    let fix_all = actions_at(&mut c, text, "version", Some(&["source.fixAll"]));
    assert_eq!(fix_all.len(), 1);
    let fixed = apply(&c, text, &fix_all[0]);
    assert_eq!(fixed.matches("command:").count(), 1, "{fixed}");
    assert!(fixed.contains("dependson: [a]"), "{fixed}");
    let errors = |t: &str| {
        let mut e: Vec<(String, String)> = fuzzfile_check::analyze(t)
            .diagnostics
            .iter()
            .filter(|d| d.severity == fuzzfile_check::Severity::Error)
            .map(|d| (d.rule.name().to_owned(), d.message.clone()))
            .collect();
        e.sort();
        e
    };
    let before = errors(text);
    for e in errors(&fixed) {
        assert!(before.contains(&e), "new error {e:?} in\n{fixed}");
    }
    assert_eq!(
        fixed,
        fuzzfile_check::fix_all(&fuzzfile_check::analyze(text))
    );
    c.shutdown();
}

/// Regression: on a Multi-Node NVLink cluster where IMEX runs, the quick fix of
/// `nccl-mnnvl-no-imex` adds `NVIDIA_IMEX_CHANNELS=0` and pins the GPU product (the profile's
/// `gpu-product`) in one edit, as `fuzzlint check --fix` does. The channel alone is
/// `imex-no-product-pin` (an error), so on its own it was never offered.
#[test]
fn the_mnnvl_quick_fix_pins_the_product_as_the_cli_does() {
    let dir =
        std::env::temp_dir().join(format!("fuzzlint-server-test-{}-mnnvl", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let profile = "name = \"nvl72\"\ngpus-per-node = 4\ngpu-product = \"GB200\"\nfabric = \"infiniband\"\nib-hcas = [\"mlx5_0\"]\nmnnvl = true\nimex = true\n[nccl-defaults]\nNCCL_IB_HCA = \"mlx5\"\n";
    std::fs::write(dir.join("nvl72.toml"), profile).unwrap();
    std::fs::write(dir.join("fuzzlint.toml"), "cluster = \"nvl72.toml\"\n").unwrap();
    let root = dir.to_str().unwrap().to_owned();
    let uri = format!("file://{root}/train.fz");
    // `resource` is the job's last key: the annotation and the new `env:` go in at one point.
    let text = "version: v4\njobs:\n  train:\n    image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}\n    script: |\n      #!/bin/sh\n      exec_all torchrun --nnodes 2 --nproc-per-node 4 --node-rank '$RANK' --master-addr \"$MULTINODE_NODE_IP\" x.py\n    multinode: {nodes: 2, implementation: generic}\n    resource:\n      devices: {nvidia.com/gpu: 4}\n";
    let options = fuzzfile_check::Options {
        profile: Some(fuzzfile_check::profile::parse_profile(profile).unwrap()),
        ..Default::default()
    };
    let found = |t: &str| -> Vec<&'static str> {
        fuzzfile_check::analyze_with(t, &options)
            .diagnostics
            .iter()
            .map(|d| d.rule.name())
            .collect()
    };
    assert!(found(text).contains(&"nccl-mnnvl-no-imex"));
    for caps in [caps_utf8(), caps_utf16()] {
        let mut c = Client::start_in(caps, None, Some(&root));
        c.open(&uri, "fuzzfile", 1, text);
        let p = c.diagnostics(&uri, Some(1));
        assert!(
            p["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["code"] == "FZ302"),
            "{p}"
        );
        let start = c.at(text, "train:", 0);
        let actions = c
            .request(
                "textDocument/codeAction",
                json!({"textDocument": {"uri": uri}, "range": {"start": start, "end": start}, "context": {"diagnostics": []}}),
            )
            .unwrap();
        let fix = actions
            .as_array()
            .unwrap()
            .iter()
            .find(|a| {
                a["diagnostics"][0]["code"] == "FZ302"
                    && !a["title"].as_str().unwrap_or("").starts_with("Suppress")
            })
            .unwrap_or_else(|| panic!("no quick fix for FZ302: {actions}"))
            .clone();
        // It changes the job's environment and where it runs: unsafe, not preferred.
        assert_eq!(fix["isPreferred"], false);
        assert_eq!(
            fix["title"],
            "Add `NVIDIA_IMEX_CHANNELS=0` to `env` and pin job `train` to `GB200` nodes (unsafe)"
        );
        let (edits, _) = document_edits(&fix["edit"]);
        let fixed = apply_edits(text, &edits, c.encoding);
        assert!(
            fixed.ends_with("      devices: {nvidia.com/gpu: 4}\n      annotations: {nvidia.com/gpu.product: GB200}\n    env:\n      - NVIDIA_IMEX_CHANNELS=0\n"),
            "{fixed}"
        );
        let after = found(&fixed);
        assert!(
            !after.contains(&"nccl-mnnvl-no-imex") && !after.contains(&"imex-no-product-pin"),
            "{after:?}\n{fixed}"
        );
        // What `fuzzlint check --fix` writes.
        let cli = fuzzfile_check::fixes::fix_until_stable_at(
            &fuzzfile_check::analyze_with(text, &options),
            fuzzfile_check::Applicability::Unsafe,
        );
        assert_eq!(fixed, cli);
        c.shutdown();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An unsafe fix (a launcher's arguments) is a quick fix that is never preferred and says
/// it is unsafe; a safe one (a misspelt key) is preferred; "fix all" applies safe fixes only.
#[test]
fn unsafe_quick_fixes_are_offered_but_not_preferred() {
    let mut c = Client::start(caps_utf8(), None);
    c.open(URI, "fuzzfile", 1, TRAIN);
    let _ = c.diagnostics(URI, Some(1));
    let fix_of = |actions: &[serde_json::Value]| {
        actions
            .iter()
            .find(|a| !a["title"].as_str().unwrap_or("").starts_with("Suppress"))
            .cloned()
            .unwrap_or_default()
    };
    let nproc = fix_of(&actions_at(
        &mut c,
        TRAIN,
        "nproc-per-node=8",
        Some(&["quickfix"]),
    ));
    assert_eq!(nproc["isPreferred"], false, "{nproc}");
    assert!(
        nproc["title"].as_str().unwrap_or("").ends_with("(unsafe)"),
        "{nproc}"
    );
    let key = fix_of(&actions_at(&mut c, TRAIN, "polcy", Some(&["quickfix"])));
    assert_eq!(key["isPreferred"], true, "{key}");
    let all = actions_at(&mut c, TRAIN, "version", Some(&["source.fixAll"]));
    let fixed = apply(&c, TRAIN, &all[0]);
    // The misspelt key is fixed, the launcher's arguments are not.
    assert!(!fixed.contains("polcy"), "{fixed}");
    assert!(fixed.contains("nproc-per-node=8"), "{fixed}");
}
