//! Go to definition, find references and rename for jobs, services, volumes and files.

use crate::common::*;
use serde_json::{json, Value};

const PIPELINE: &str = include_str!("../../../../examples/pipeline.fz");
const URI: &str = "file:///w/pipeline.fz";

fn start() -> Client {
    let mut c = Client::start(caps_utf8(), None);
    c.open(URI, "fuzzfile", 1, PIPELINE);
    let p = c.diagnostics(URI, Some(1));
    assert_eq!(p["diagnostics"], json!([]), "the example is clean");
    c
}

fn nth(text: &str, needle: &str, n: usize) -> usize {
    text.match_indices(needle)
        .nth(n)
        .unwrap_or_else(|| panic!("{needle} #{n}"))
        .0
}

#[test]
fn definition_of_each_kind_of_reference() {
    let mut c = start();
    let mut shown = String::new();
    for (needle, n) in [
        ("name: cache", 0),
        ("name: process", 0),
        ("volume: data", 0),
        ("file://process.sh", 0),
    ] {
        let at = nth(PIPELINE, needle, n) + needle.len() - 2;
        let pos = c.pos(PIPELINE, at);
        let loc = c
            .request(
                "textDocument/definition",
                json!({"textDocument": {"uri": URI}, "position": pos}),
            )
            .unwrap();
        assert_eq!(loc["uri"], URI);
        shown.push_str(&format!(
            "{needle} -> {}\n",
            show_range(PIPELINE, &loc["range"], c.encoding)
        ));
    }
    insta::assert_snapshot!(shown);
    // Nothing to go to from a key or a value that is no reference.
    let pos = c.at(PIPELINE, "redis-server", 2);
    let loc = c
        .request(
            "textDocument/definition",
            json!({"textDocument": {"uri": URI}, "position": pos}),
        )
        .unwrap();
    assert_eq!(loc, Value::Null);
    c.shutdown();
}

#[test]
fn references_with_and_without_the_declaration() {
    let mut c = start();
    let pos = c.at(PIPELINE, "\n  data:", 4);
    let with = c
        .request("textDocument/references", json!({"textDocument": {"uri": URI}, "position": pos, "context": {"includeDeclaration": true}}))
        .unwrap();
    let shown: Vec<String> = with
        .as_array()
        .unwrap()
        .iter()
        .map(|l| show_range(PIPELINE, &l["range"], c.encoding))
        .collect();
    insta::assert_snapshot!(shown.join("\n"));
    let without = c
        .request("textDocument/references", json!({"textDocument": {"uri": URI}, "position": pos, "context": {"includeDeclaration": false}}))
        .unwrap();
    assert_eq!(
        without.as_array().unwrap().len(),
        with.as_array().unwrap().len() - 1
    );
    c.shutdown();
}

/// Rename a name and every use of it; the result is clean again.
fn rename(c: &mut Client, text: &str, at: usize, new_name: &str) -> Result<String, String> {
    let pos = c.pos(text, at);
    let prep = c
        .request(
            "textDocument/prepareRename",
            json!({"textDocument": {"uri": URI}, "position": pos}),
        )
        .unwrap();
    assert!(!prep.is_null());
    match c.request(
        "textDocument/rename",
        json!({"textDocument": {"uri": URI}, "position": pos, "newName": new_name}),
    ) {
        Ok(edit) => {
            let (edits, version) = document_edits(&edit);
            assert_eq!(version, Some(1), "edits name the version they are for");
            Ok(apply_edits(text, &edits, c.encoding))
        }
        Err(e) => Err(e.message),
    }
}

#[test]
fn rename_updates_every_use() {
    let mut c = start();
    let mut all = String::new();
    for (what, needle, new_name) in [
        ("a service (depends-on)", "\n  cache:", "redis"),
        ("a job (depends-on)", "\n  process:", "crunch"),
        ("a volume (defaults.job.mounts)", "\n  data:", "inputs"),
        ("a file (file://)", "process.sh:", "run-task.sh"),
    ] {
        let at = PIPELINE.find(needle).unwrap() + needle.len() - 2;
        let renamed = rename(&mut c, PIPELINE, at, new_name).unwrap();
        let a = fuzzfile_check::analyze(&renamed);
        assert!(a.diagnostics.is_empty(), "{what}: {:?}", a.diagnostics);
        let changed: Vec<String> = PIPELINE
            .lines()
            .zip(renamed.lines())
            .filter(|(a, b)| a != b)
            .map(|(a, b)| format!("  - {a}\n  + {b}"))
            .collect();
        all.push_str(&format!("## {what}\n{}\n", changed.join("\n")));
    }
    insta::assert_snapshot!(all);
    // From a reference, too, and `requires` is a reference.
    let text = "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [x]\n  b:\n    image: {uri: docker://x:1}\n    command: [x]\n    requires: [a]\n    depends-on:\n      - name: \"a\"\n";
    c.change_full(URI, 2, text);
    let _ = c.diagnostics(URI, Some(2));
    let pos = c.at(text, "[a]", 1);
    let edit = c
        .request(
            "textDocument/rename",
            json!({"textDocument": {"uri": URI}, "position": pos, "newName": "first"}),
        )
        .unwrap();
    let (edits, version) = document_edits(&edit);
    assert_eq!(version, Some(2));
    let renamed = apply_edits(text, &edits, c.encoding);
    assert!(
        renamed.contains("  first:\n")
            && renamed.contains("[first]")
            && renamed.contains("name: \"first\""),
        "{renamed}"
    );
    c.shutdown();
}

/// Volumes are used by key in v1 mounts and by value in both v4 forms.
#[test]
fn rename_a_volume_in_every_mount_form() {
    let mut c = Client::start(caps_utf16(), None);
    for (text, expect) in [
        (
            "version: v1\nvolumes:\n  data:\n    reference: volume://user/ephemeral\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [x]\n    mounts:\n      data:\n        location: /d\n",
            "      scratch:\n        location: /d\n",
        ),
        (
            "version: v4\nvolumes:\n  data:\n    reference: volume://user/ephemeral\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [x]\n    mounts:\n      /d: data\n      /e: {volume: data}\n",
            "      /d: scratch\n      /e: {volume: scratch}\n",
        ),
    ] {
        c.open(URI, "fuzzfile", 1, text);
        let p = c.diagnostics(URI, Some(1));
        let clean = |t: &str| {
            fuzzfile_check::analyze(t)
                .diagnostics
                .iter()
                .all(|d| d.rule == fuzzfile_check::Rule::LegacyVersion)
        };
        assert!(clean(text), "{p}");
        let pos = c.at(text, "  data:", 3);
        let edit = c
            .request("textDocument/rename", json!({"textDocument": {"uri": URI}, "position": pos, "newName": "scratch"}))
            .unwrap();
        let (edits, _) = document_edits(&edit);
        let renamed = apply_edits(text, &edits, c.encoding);
        assert!(renamed.ends_with(expect) && renamed.contains("  scratch:\n    reference"), "{renamed}");
        assert!(clean(&renamed), "{renamed}");
        c.notify("textDocument/didClose", json!({"textDocument": {"uri": URI}}));
    }
    c.shutdown();
}

#[test]
fn rename_refuses_invalid_and_taken_names() {
    let mut c = start();
    let at = PIPELINE.find("\n  cache:").unwrap() + 3;
    let e = rename(&mut c, PIPELINE, at, "Not A Label").unwrap_err();
    assert!(e.contains("not a valid job or service name"), "{e}");
    let e = rename(&mut c, PIPELINE, at, "report").unwrap_err();
    assert!(e.contains("exists already"), "{e}");
    let at = PIPELINE.find("\n  data:").unwrap() + 3;
    let e = rename(&mut c, PIPELINE, at, "a b").unwrap_err();
    assert!(e.contains("not a valid volume name"), "{e}");
    // Not on a name: no rename at all.
    let pos = c.at(PIPELINE, "redis-server", 1);
    let prep = c
        .request(
            "textDocument/prepareRename",
            json!({"textDocument": {"uri": URI}, "position": pos}),
        )
        .unwrap();
    assert_eq!(prep, Value::Null);
    c.shutdown();
}
