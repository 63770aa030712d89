//! Text synchronisation, position encodings, document selection, push and pull
//! diagnostics, settings.

use crate::common::*;
use crate::TRAIN;
use fuzzfile_server::position::Encoding;
use serde_json::{json, Value};

const URI: &str = "file:///w/train.fz";

#[test]
fn encoding_is_utf8_when_offered_else_utf16() {
    let c = Client::start(caps_utf8(), None);
    assert_eq!(c.encoding, Encoding::Utf8);
    assert_eq!(c.init_result["capabilities"]["positionEncoding"], "utf-8");
    assert_eq!(c.shutdown(), 0);
    let c = Client::start(caps_utf16(), None);
    assert_eq!(c.encoding, Encoding::Utf16);
    assert_eq!(c.init_result["capabilities"]["positionEncoding"], "utf-16");
    assert_eq!(
        c.init_result["capabilities"]["textDocumentSync"]["change"], 2,
        "incremental sync"
    );
    assert_eq!(c.shutdown(), 0);
}

/// The diagnostics a fresh `fuzzlint check` of the same text finds, as the server must
/// publish them: same rules, same order, same ranges (the command line's `cluster-profile-missing`
/// is one note for the whole run, which `fuzzlint check` takes out of every file, as the server
/// does).
fn expected(text: &str, c: &Client) -> Vec<(String, String, String)> {
    let a = fuzzfile_check::analyze(text);
    a.diagnostics
        .iter()
        .filter(|d| d.rule != fuzzfile_diagnostics::Rule::ClusterProfileMissing)
        .map(|d| {
            let start = c.pos(text, d.range.start as usize);
            let end = c.pos(text, d.range.end as usize);
            (
                d.rule.code().to_owned(),
                format!("{start}-{end}"),
                d.message.clone(),
            )
        })
        .collect()
}

fn actual(diags: &Value) -> Vec<(String, String, String)> {
    diags
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["code"].as_str().unwrap().to_owned(),
                format!("{}-{}", d["range"]["start"], d["range"]["end"]),
                d["message"]
                    .as_str()
                    .unwrap()
                    .split("\nhelp: ")
                    .next()
                    .unwrap()
                    .to_owned(),
            )
        })
        .collect()
}

#[test]
fn diagnostics_on_open_match_the_cli_in_both_encodings() {
    for caps in [caps_utf8(), caps_utf16()] {
        let mut c = Client::start(caps, None);
        c.open(URI, "fuzzfile", 1, TRAIN);
        let p = c.diagnostics(URI, Some(1));
        assert_eq!(actual(&p["diagnostics"]), expected(TRAIN, &c));
        let shown = show_diagnostics(TRAIN, &p["diagnostics"], c.encoding);
        // The same text in both encodings: the ranges cover the same bytes.
        insta::assert_snapshot!("diagnostics_on_open", shown);
        let first = &p["diagnostics"][0];
        assert_eq!(first["source"], "fuzzlint");
        assert!(first["codeDescription"]["href"]
            .as_str()
            .unwrap()
            .ends_with(&format!(
                "/blob/main/docs/rules/{}.md",
                fuzzfile_check::Rule::from_name(first["code"].as_str().unwrap())
                    .unwrap()
                    .name()
            )));
        assert_eq!(c.shutdown(), 0);
    }
}

/// Every rule's documentation link points at a file that exists in docs/rules.
#[test]
fn rule_links_name_existing_docs() {
    let docs = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/rules");
    let mut c = Client::start(caps_utf8(), None);
    // Every example with a problem: check the links of whatever is found.
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/specs/launcher-nproc-mismatch/bad.fz"),
    )
    .unwrap();
    c.open("file:///w/bad.fz", "fuzzfile", 1, &text);
    let p = c.diagnostics("file:///w/bad.fz", Some(1));
    let diags = p["diagnostics"].as_array().unwrap();
    assert!(!diags.is_empty());
    for d in diags {
        let href = d["codeDescription"]["href"].as_str().unwrap();
        let name = href.rsplit('/').next().unwrap();
        assert!(docs.join(name).is_file(), "{href}");
        // The repository of Cargo.toml's [workspace.package], its main branch.
        assert!(href.starts_with(&format!(
            "{}/blob/main/docs/rules/",
            env!("CARGO_PKG_REPOSITORY")
        )));
    }
    c.shutdown();
}

/// A sequence of incremental edits, several per notification and across non-ASCII text,
/// ends with the same diagnostics as opening the final text.
#[test]
fn incremental_edits_end_like_a_fresh_open() {
    for caps in [caps_utf8(), caps_utf16()] {
        let mut c = Client::start(caps, None);
        c.open(URI, "fuzzfile", 1, TRAIN);
        let _ = c.diagnostics(URI, Some(1));
        let mut text = TRAIN.to_owned();
        let mut version = 1;
        // (needle, delta, delete length, insert): each edit is applied to the text as the
        // previous one left it, in the client's encoding.
        let edits: &[&[(&str, usize, usize, &str)]] = &[
            // Fix the typo `polcy` → `policy`, in two changes in one notification.
            &[("polcy", 3, 0, "i"), ("policy:", 7, 0, "")],
            // Replace the emoji and the accented words (width changes in both encodings).
            &[
                ("🚀", 0, "🚀".len(), "⚡🔥"),
                ("nœuds", 0, "nœuds".len(), "noeuds"),
            ],
            // 8 → 4 processes: the nproc error goes away.
            &[("nproc-per-node=8", 15, 1, "4")],
            // A new unknown key after non-ASCII text on the same line.
            &[
                ("\"préparé ✓\"", "\"préparé ✓\"".len(), 0, ", ünïcode"),
                ("ünïcode]", "ünïcode]".len(), 0, "\n    tïmeout: 3"),
            ],
            // Delete a whole line across a line break.
            &[("      - NP=8\n", 0, "      - NP=8\n".len(), "")],
        ];
        for batch in edits {
            version += 1;
            let mut changes = Vec::new();
            for (needle, delta, del, ins) in batch.iter() {
                let at = text.find(needle).unwrap() + delta;
                let range = json!({"start": c.pos(&text, at), "end": c.pos(&text, at + del)});
                changes.push(json!({"range": range, "text": ins}));
                text.replace_range(at..at + del, ins);
            }
            c.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": URI, "version": version}, "contentChanges": changes}),
            );
        }
        let last = c.diagnostics(URI, Some(version));
        assert_eq!(last["version"], version);
        // The server's text is the client's: a fresh open of it gives the same findings.
        assert_eq!(actual(&last["diagnostics"]), expected(&text, &c));
        let fresh_uri = "file:///w/fresh.fz";
        c.open(fresh_uri, "fuzzfile", 1, &text);
        let fresh = c.diagnostics(fresh_uri, Some(1));
        assert_eq!(last["diagnostics"], fresh["diagnostics"]);
        insta::assert_snapshot!(
            "incremental_edits_final",
            format!(
                "{text}\n---\n{}",
                show_diagnostics(&text, &last["diagnostics"], c.encoding)
            )
        );
        c.shutdown();
    }
}

/// A burst of changes queued before the server looks is analysed once, at its last
/// version: no diagnostics are published for an intermediate version. (Driven through
/// `Server` directly, so that the whole burst is queued before the first flush.)
#[test]
fn a_burst_publishes_only_the_latest_version() {
    use lsp_server::{Message, Notification};
    let (mut server, _) = fuzzfile_server::Server::initialize(json!({"capabilities": {}}));
    let mut out = Vec::new();
    let note = |m: &str, p: Value| Message::from(Notification::new(m.into(), p));
    server.handle(
        note("textDocument/didOpen", json!({"textDocument": {"uri": URI, "languageId": "fuzzfile", "version": 1, "text": TRAIN}})),
        &mut out,
    );
    for v in 2..=30 {
        let text = TRAIN.replace("nproc-per-node=8", &format!("nproc-per-node={v}"));
        server.handle(
            note("textDocument/didChange", json!({"textDocument": {"uri": URI, "version": v}, "contentChanges": [{"text": text}]})),
            &mut out,
        );
    }
    assert!(
        out.is_empty(),
        "nothing is published before the flush: {out:?}"
    );
    assert!(server.has_pending());
    server.flush(&mut out);
    assert!(!server.has_pending());
    let published: Vec<&Notification> = out
        .iter()
        .filter_map(|m| match m {
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(published.len(), 1);
    assert_eq!(published[0].params["version"], 30);
    assert!(
        published[0].params["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["message"]
                .as_str()
                .unwrap()
                .contains("`--nproc-per-node` is 30")),
        "{}",
        published[0].params
    );
}

/// Over a real connection, publications for one document come in version order and the
/// last is the last version sent.
#[test]
fn publications_follow_version_order() {
    let mut c = Client::start(caps_utf8(), None);
    c.open(URI, "fuzzfile", 1, TRAIN);
    for v in 2..=20 {
        c.change_full(
            URI,
            v,
            &TRAIN.replace("nproc-per-node=8", &format!("nproc-per-node={v}")),
        );
    }
    c.wait_for(|n| n.method == "textDocument/publishDiagnostics" && n.params["version"] == 20);
    let versions: Vec<i64> = c
        .notifications
        .iter()
        .filter(|n| n.method == "textDocument/publishDiagnostics")
        .filter_map(|n| n.params["version"].as_i64())
        .collect();
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert_eq!(versions.last(), Some(&20));
    assert_eq!(c.shutdown(), 0);
}

#[test]
fn only_fuzzfiles_are_analysed() {
    let mut c = Client::start(caps_utf8(), None);
    // YAML that is not a Fuzzfile, and a file of another kind with Fuzzfile text.
    c.open(
        "file:///w/ci.yaml",
        "yaml",
        1,
        "name: build\non: push\njobs: {}\n",
    );
    c.open("file:///w/x.json", "json", 1, TRAIN);
    assert!(c.no_diagnostics_for("file:///w/ci.yaml"));
    assert!(c.no_diagnostics_for("file:///w/x.json"));
    let hover = c
        .request("textDocument/hover", json!({"textDocument": {"uri": "file:///w/x.json"}, "position": {"line": 1, "character": 1}}))
        .unwrap();
    assert_eq!(hover, Value::Null);
    // The YAML file gains a `version:`: now it is a Fuzzfile.
    c.change_full(
        "file:///w/ci.yaml",
        2,
        "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    comand: [x]\n",
    );
    let p = c.diagnostics("file:///w/ci.yaml", Some(2));
    assert!(!p["diagnostics"].as_array().unwrap().is_empty());
    // And loses it again: what was shown is cleared.
    c.change_full("file:///w/ci.yaml", 3, "name: build\n");
    let p = c.diagnostics("file:///w/ci.yaml", Some(3));
    assert_eq!(p["diagnostics"], json!([]));
    // A `.fz` file is analysed whatever its language id.
    c.open("file:///w/plain.fz", "plaintext", 1, "version: v9\n");
    let p = c.diagnostics("file:///w/plain.fz", Some(1));
    assert!(codes(&p).contains(&"FZ002".to_owned()), "{:?}", codes(&p));
    c.shutdown();
}

#[test]
fn closing_a_document_clears_its_diagnostics() {
    let mut c = Client::start(caps_utf8(), None);
    c.open(URI, "fuzzfile", 1, TRAIN);
    let _ = c.diagnostics(URI, Some(1));
    c.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": URI}}),
    );
    let p = c.diagnostics(URI, None);
    assert_eq!(p["diagnostics"], json!([]));
    // Requests about it now get empty answers.
    let r = c
        .request(
            "textDocument/documentSymbol",
            json!({"textDocument": {"uri": URI}}),
        )
        .unwrap();
    assert_eq!(r, Value::Null);
    c.shutdown();
}

#[test]
fn pull_diagnostics_when_the_client_asks() {
    let caps = json!({"general": {"positionEncodings": ["utf-8"]}, "textDocument": {"diagnostic": {"dynamicRegistration": false}}});
    let mut c = Client::start(caps, None);
    assert_eq!(
        c.init_result["capabilities"]["diagnosticProvider"]["identifier"],
        "fuzzlint"
    );
    c.open(URI, "fuzzfile", 1, TRAIN);
    let full = c
        .request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": URI}}),
        )
        .unwrap();
    assert_eq!(full["kind"], "full");
    assert_eq!(actual(&full["items"]), expected(TRAIN, &c));
    let id = full["resultId"].as_str().unwrap().to_owned();
    let again = c
        .request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": URI}, "previousResultId": id}),
        )
        .unwrap();
    assert_eq!(again, json!({"kind": "unchanged", "resultId": id}));
    c.change_full(URI, 2, "version: v4\n");
    let changed = c
        .request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": URI}, "previousResultId": id}),
        )
        .unwrap();
    assert_eq!(changed["kind"], "full");
    assert_ne!(changed["resultId"], json!(id));
    // An unknown document: an empty report.
    let none = c
        .request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": "file:///nope.fz"}}),
        )
        .unwrap();
    assert_eq!(none["items"], json!([]));
    // A client that pulls gets no pushes (they would show twice).
    let all = c.finish();
    assert!(
        all.iter()
            .all(|n| n.method != "textDocument/publishDiagnostics"),
        "{all:?}"
    );
}

/// A workspace folder with these files, named after the test (tests run in parallel).
fn workspace(test: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "fuzzlint-server-test-{}-{test}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    for (p, t) in files {
        let path = dir.join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, t).unwrap();
    }
    dir
}

const MULTINODE: &str = "version: v4\njobs:\n  train:\n    image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}\n    env: [NCCL_DEBUG=WARN]\n    script: |\n      #!/bin/sh\n      exec_all torchrun --nnodes 2 --nproc-per-node 4 --node-rank '$RANK' --master-addr \"$MULTINODE_NODE_IP\" x.py\n    resource:\n      devices: {nvidia.com/gpu: 4}\n    multinode: {nodes: 2, implementation: generic}\n";

fn codes(p: &Value) -> Vec<String> {
    p["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn settings_come_from_fuzzlint_toml_and_the_editor() {
    let dir = workspace(
        "settings",
        &[
            ("fuzzlint.toml", "cluster = \"clusters/ib.toml\"\n"),
            (
                "clusters/ib.toml",
                "name = \"ib\"\nfabric = \"infiniband\"\ngpus-per-node = 4\n",
            ),
            (
                "other/fuzzlint.toml",
                "ignore = [\"cluster-profile-missing\"]\n",
            ),
        ],
    );
    let root = dir.to_str().unwrap().to_owned();
    let uri = format!("file://{root}/train.fz");
    let mut c = Client::start_in(caps_utf8(), None, Some(&root));
    c.open(&uri, "fuzzfile", 1, MULTINODE);
    // The profile says InfiniBand: NCCL_IB_HCA is missing.
    let p = c.diagnostics(&uri, Some(1));
    assert!(codes(&p).contains(&"FZ301".to_owned()), "{:?}", codes(&p));
    // Another directory's fuzzlint.toml: no profile there, and its rule selection.
    let other = format!("file://{root}/other/train.fz");
    c.open(&other, "fuzzfile", 1, MULTINODE);
    let p = c.diagnostics(&other, Some(1));
    assert!(codes(&p).is_empty(), "{:?}", codes(&p));
    // The editor turns the rule off: every document is analysed again.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"fuzzlint": {"ignore": ["nccl-ib-hca-missing"]}}}),
    );
    let p = c.diagnostics(&uri, Some(1));
    assert!(!codes(&p).contains(&"FZ301".to_owned()), "{:?}", codes(&p));
    // A bad selector is shown once, and the analysis goes on with defaults.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"select": ["no-such-rule"]}}),
    );
    let p = c.diagnostics(&uri, Some(1));
    assert!(p["diagnostics"].is_array());
    let shown: Vec<&serde_json::Value> = c
        .notifications
        .iter()
        .filter(|n| n.method == "window/showMessage")
        .map(|n| &n.params["message"])
        .collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].as_str().unwrap().contains("no-such-rule"));
    c.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn initialization_options_and_a_changed_config_file() {
    let dir = workspace(
        "init-options",
        &[
            ("fuzzlint.toml", "select = [\"FZ0\"]\n"),
            ("p.toml", "fabric = \"infiniband\"\n"),
        ],
    );
    let root = dir.to_str().unwrap().to_owned();
    let uri = format!("file://{root}/a.fz");
    let text = MULTINODE.replace("--nproc-per-node 4", "--nproc-per-node 8");
    // The editor's `cluster` applies over fuzzlint.toml's selection (only FZ0xx here).
    let mut c = Client::start_in(caps_utf8(), Some(json!({"cluster": "p.toml"})), Some(&root));
    c.open(&uri, "fuzzfile", 1, &text);
    let p = c.diagnostics(&uri, Some(1));
    assert!(
        codes(&p).is_empty(),
        "FZ201 and FZ301 are not selected: {:?}",
        codes(&p)
    );
    // fuzzlint.toml changes on disk and the client says so.
    std::fs::write(dir.join("fuzzlint.toml"), "select = [\"FZ2\", \"FZ3\"]\n").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": format!("file://{root}/fuzzlint.toml"), "type": 2}]}),
    );
    let p = c.diagnostics(&uri, Some(1));
    let mut found = codes(&p);
    found.sort();
    assert_eq!(found, ["FZ201", "FZ301"]);
    c.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A client with `workspace/configuration` is asked for the `fuzzlint` section, and a
/// `didChangeConfiguration` without settings makes the server ask again.
#[test]
fn configuration_is_pulled_where_the_client_supports_it() {
    let caps = json!({"general": {"positionEncodings": ["utf-8"]}, "workspace": {"configuration": true, "didChangeWatchedFiles": {"dynamicRegistration": true}}});
    let mut c = Client::start(caps, None);
    c.configuration = json!({"ignore": ["FZ201"]});
    c.open(URI, "fuzzfile", 1, TRAIN);
    let p = c.diagnostics(URI, None);
    let _ = p;
    // The first request was answered with the FZ201 setting; republish shows it applied.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": null}),
    );
    let p = c.diagnostics(URI, None);
    assert!(!codes(&p).contains(&"FZ201".to_owned()), "{:?}", codes(&p));
    let methods: Vec<&str> = c
        .server_requests
        .iter()
        .map(|r| r.method.as_str())
        .collect();
    assert!(
        methods.contains(&"client/registerCapability"),
        "{methods:?}"
    );
    assert!(
        methods
            .iter()
            .filter(|m| **m == "workspace/configuration")
            .count()
            >= 2
    );
    c.shutdown();
}

/// Every example, fuzz seed and (when present) file of the external corpus: the server
/// publishes exactly the findings `fuzzlint check` reports, in both encodings.
#[test]
fn real_fuzzfiles_match_the_cli() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["examples", "fuzz/seeds", "../shared/corpus/plain"] {
        if let Ok(rd) = std::fs::read_dir(root.join(dir)) {
            for e in rd.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "fz") {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    assert!(files.len() >= 9, "{files:?}");
    for caps in [caps_utf8(), caps_utf16()] {
        let mut c = Client::start(caps, None);
        for (i, p) in files.iter().enumerate() {
            let text = std::fs::read_to_string(p).unwrap();
            let uri = format!("file:///corpus/{i}.fz");
            c.open(&uri, "fuzzfile", 1, &text);
            let got = c.diagnostics(&uri, Some(1));
            assert_eq!(
                actual(&got["diagnostics"]),
                expected(&text, &c),
                "{}",
                p.display()
            );
        }
        c.shutdown();
    }
}

/// More open documents than the server keeps analyses for: each is analysed again when
/// asked about, with the same findings.
#[test]
fn documents_beyond_the_analysis_cache_are_analysed_again() {
    let n = fuzzfile_server::CACHED_ANALYSES * 2 + 3;
    let mut c = Client::start(caps_utf8(), None);
    let texts: Vec<String> = (0..n)
        .map(|i| TRAIN.replace("nproc-per-node=8", &format!("nproc-per-node={}", i + 5)))
        .collect();
    for (i, t) in texts.iter().enumerate() {
        let uri = format!("file:///w/many-{i}.fz");
        c.open(&uri, "fuzzfile", 1, t);
        let _ = c.diagnostics(&uri, Some(1));
    }
    for (i, t) in texts.iter().enumerate() {
        let uri = format!("file:///w/many-{i}.fz");
        let r = c
            .request(
                "textDocument/diagnostic",
                json!({"textDocument": {"uri": uri}}),
            )
            .unwrap();
        assert_eq!(actual(&r["items"]), expected(t, &c), "{uri}");
        let h = c
            .request(
                "textDocument/hover",
                json!({"textDocument": {"uri": uri}, "position": c.at(t, "train:", 1)}),
            )
            .unwrap();
        let shown = h["contents"]["value"].as_str().unwrap();
        assert!(
            shown.contains(&format!("world size {0} (1 × {0})", i + 5)),
            "{shown}"
        );
    }
    c.shutdown();
}

/// Saving publishes again (a config file may have changed in between); saving a
/// `fuzzlint.toml` re-reads settings for every document.
#[test]
fn save_republishes() {
    let dir = workspace("save", &[("fuzzlint.toml", "ignore = [\"FZ201\"]\n")]);
    let root = dir.to_str().unwrap().to_owned();
    let uri = format!("file://{root}/s.fz");
    let mut c = Client::start_in(caps_utf8(), None, Some(&root));
    c.open(&uri, "fuzzfile", 1, TRAIN);
    let p = c.diagnostics(&uri, Some(1));
    assert!(!codes(&p).contains(&"FZ201".to_owned()));
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": uri}}),
    );
    let again = c.diagnostics(&uri, Some(1));
    assert_eq!(again["diagnostics"], p["diagnostics"]);
    std::fs::write(dir.join("fuzzlint.toml"), "ignore = [\"FZ010\"]\n").unwrap();
    c.notify(
        "textDocument/didSave",
        json!({"textDocument": {"uri": format!("file://{root}/fuzzlint.toml")}}),
    );
    let p = c.diagnostics(&uri, Some(1));
    assert!(
        codes(&p).contains(&"FZ201".to_owned()) && !codes(&p).contains(&"FZ010".to_owned()),
        "{:?}",
        codes(&p)
    );
    c.shutdown();
    let _ = std::fs::remove_dir_all(&dir);
}

/// With `debounceMs`, diagnostics wait for that much quiet after the last change.
#[test]
fn debounce_waits_for_quiet() {
    let mut c = Client::start(caps_utf8(), Some(json!({"debounceMs": 300})));
    c.open(URI, "fuzzfile", 1, TRAIN);
    let start = std::time::Instant::now();
    // Keep typing for a while: nothing is published in between.
    for v in 2..=4 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        c.change_full(URI, v, TRAIN);
    }
    let p = c.diagnostics(URI, None);
    let elapsed = start.elapsed();
    assert_eq!(p["version"], 4, "only the last version is published");
    assert!(
        elapsed >= std::time::Duration::from_millis(300 + 300),
        "{elapsed:?}"
    );
    c.shutdown();
}

/// Where an editor puts `offset` of `text`: its own line splitting (`\r\n`, `\n` and a lone
/// `\r` end a line, as the LSP specification says), independent of the server's `LineIndex`.
fn editor_pos(text: &str, offset: usize, encoding: Encoding) -> Value {
    let (mut line, mut start) = (0, 0);
    let b = text.as_bytes();
    let mut i = 0;
    while i < offset {
        if b[i] == b'\r' || b[i] == b'\n' {
            if b[i] == b'\r' && b.get(i + 1) == Some(&b'\n') {
                i += 1;
                if i >= offset {
                    break;
                }
            }
            line += 1;
            start = i + 1;
        }
        i += 1;
    }
    let before = &text[start..offset];
    let character = match encoding {
        Encoding::Utf8 => before.len(),
        Encoding::Utf16 => before.encode_utf16().count(),
    };
    json!({"line": line, "character": character})
}

/// Regression: lone CR line endings (legal in YAML and in LSP). Positions of an incremental
/// edit sequence computed the way an editor does land where the editor meant, so the server's
/// copy stays the editor's: the final diagnostics equal a fresh open of the editor's text, and
/// their lines are the editor's lines.
#[test]
fn lone_cr_documents_stay_in_sync_under_incremental_edits() {
    let original = TRAIN.replace('\n', "\r");
    for caps in [caps_utf8(), caps_utf16()] {
        let mut c = Client::start(caps, None);
        c.open(URI, "fuzzfile", 1, &original);
        let first = c.diagnostics(URI, Some(1));
        // The unknown key `polcy` is on line 16 (0-based 15) as the editor counts.
        let polcy = first["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["message"].as_str().unwrap().contains("polcy"))
            .expect("unknown key polcy");
        assert_eq!(
            polcy["range"]["start"],
            editor_pos(&original, original.find("polcy").unwrap(), c.encoding)
        );
        let mut text = original.clone();
        let mut version = 1;
        let edits: &[&[(&str, usize, usize, &str)]] = &[
            &[("polcy", 3, 0, "i")],
            &[
                ("🚀", 0, "🚀".len(), "⚡🔥"),
                ("nproc-per-node=8", 15, 1, "4"),
            ],
            // Insert a new line (with a lone CR) after non-ASCII text, then an unknown key.
            &[(
                "\"préparé ✓\"]",
                "\"préparé ✓\"]".len(),
                0,
                "\r    tïmeout: 3",
            )],
            // Delete a whole line with its CR.
            &[("      - NP=8\r", 0, "      - NP=8\r".len(), "")],
            // A CRLF pair split across two changes stays one line break for both sides.
            &[("version: v4\r", "version: v4".len(), 0, "  # v\r\n")],
        ];
        for batch in edits {
            version += 1;
            let mut changes = Vec::new();
            for (needle, delta, del, ins) in batch.iter() {
                let at = text.find(needle).unwrap() + delta;
                let range = json!({
                    "start": editor_pos(&text, at, c.encoding),
                    "end": editor_pos(&text, at + del, c.encoding),
                });
                changes.push(json!({"range": range, "text": ins}));
                text.replace_range(at..at + del, ins);
            }
            c.notify(
                "textDocument/didChange",
                json!({"textDocument": {"uri": URI, "version": version}, "contentChanges": changes}),
            );
        }
        let last = c.diagnostics(URI, Some(version));
        let fresh_uri = "file:///w/fresh.fz";
        c.open(fresh_uri, "fuzzfile", 1, &text);
        let fresh = c.diagnostics(fresh_uri, Some(1));
        assert_eq!(last["diagnostics"], fresh["diagnostics"]);
        assert_eq!(actual(&last["diagnostics"]), expected(&text, &c));
        // The new unknown key is where the editor shows it.
        let tim = last["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["message"].as_str().unwrap().contains("tïmeout"))
            .expect("unknown key tïmeout");
        assert_eq!(
            tim["range"]["start"],
            editor_pos(&text, text.find("tïmeout").unwrap(), c.encoding)
        );
        assert!(!last["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["message"].as_str().unwrap().contains("polcy")));
        c.shutdown();
    }
}

/// What a connection says of the messages behind the one handled (`Interruptions`), scripted.
struct Waiting {
    message: bool,
    changed: Option<&'static str>,
}

impl fuzzfile_server::Interruptions for Waiting {
    fn message_waiting(&mut self) -> bool {
        self.message
    }
    fn document_changed(&mut self, uri: &str) -> bool {
        self.changed == Some(uri)
    }
}

/// Stale work is skipped by a flush: nothing is analysed while a message waits, and what was
/// analysed at a text that a waiting change replaces is not published; both documents stay
/// pending and are published, at their latest text, by the next flush.
#[test]
fn a_flush_skips_what_a_waiting_message_makes_stale() {
    use lsp_server::{Message, Notification};
    const OTHER: &str = "file:///w/other.fz";
    let (mut server, _) = fuzzfile_server::Server::initialize(json!({"capabilities": {}}));
    let mut out = Vec::new();
    let note = |m: &str, p: Value| Message::from(Notification::new(m.into(), p));
    for uri in [URI, OTHER] {
        server.handle(
            note("textDocument/didOpen", json!({"textDocument": {"uri": uri, "languageId": "fuzzfile", "version": 1, "text": TRAIN}})),
            &mut out,
        );
    }
    let published = |out: &mut Vec<Message>| -> Vec<(String, i64)> {
        out.drain(..)
            .filter_map(|m| match m {
                Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                    Some((
                        n.params["uri"].as_str().unwrap().to_owned(),
                        n.params["version"].as_i64().unwrap(),
                    ))
                }
                _ => None,
            })
            .collect()
    };
    server.flush_with(
        &mut out,
        &mut Waiting {
            message: true,
            changed: None,
        },
    );
    assert_eq!(published(&mut out), vec![]);
    assert!(server.has_pending());
    // The first document is analysed, but a change to it waits: it is not published, and the
    // flush stops there.
    server.flush_with(
        &mut out,
        &mut Waiting {
            message: false,
            changed: Some(URI),
        },
    );
    assert_eq!(published(&mut out), vec![]);
    assert!(server.has_pending());
    let changed = TRAIN.replace("nproc-per-node=8", "nproc-per-node=6");
    server.handle(
        note("textDocument/didChange", json!({"textDocument": {"uri": URI, "version": 2}, "contentChanges": [{"text": changed}]})),
        &mut out,
    );
    server.flush(&mut out);
    assert!(!server.has_pending());
    // In the order they first changed.
    assert_eq!(
        published(&mut out),
        vec![(URI.to_owned(), 2), (OTHER.to_owned(), 1)]
    );
}

/// Everything queued before the server loop starts (so every message has arrived when the
/// loop looks ahead): a request cancelled while queued is answered `RequestCancelled` and not
/// run, the requests around it are answered, a cancellation of an unknown request changes
/// nothing, and a burst of changes publishes its last version only.
#[test]
fn the_loop_looks_ahead_at_queued_messages() {
    use lsp_server::{Connection, Message, Notification, Request, RequestId};
    let (server, client) = Connection::memory();
    let send = |m: Message| client.sender.send(m).unwrap();
    let request = |id: i32, method: &str, params: Value| -> Message {
        Request::new(RequestId::from(id), method.into(), params).into()
    };
    let note = |method: &str, params: Value| -> Message {
        Notification::new(method.into(), params).into()
    };
    send(request(1, "initialize", json!({"capabilities": {}})));
    send(note("initialized", json!({})));
    send(note(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": URI, "languageId": "fuzzfile", "version": 1, "text": TRAIN}}),
    ));
    for v in 2..=10 {
        let text = TRAIN.replace("nproc-per-node=8", &format!("nproc-per-node={v}"));
        send(note(
            "textDocument/didChange",
            json!({"textDocument": {"uri": URI, "version": v}, "contentChanges": [{"text": text}]}),
        ));
    }
    let hover = json!({"textDocument": {"uri": URI}, "position": {"line": 6, "character": 3}});
    send(request(2, "textDocument/hover", hover.clone()));
    send(note("$/cancelRequest", json!({"id": 2})));
    send(note("$/cancelRequest", json!({"id": 99})));
    send(request(3, "textDocument/hover", hover));
    let thread = std::thread::spawn(move || fuzzfile_server::run(server));
    let mut answers = std::collections::BTreeMap::new();
    let mut published = Vec::new();
    while published.last() != Some(&10) {
        match client
            .receiver
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the diagnostics of version 10")
        {
            Message::Response(r) => {
                answers.insert(format!("{}", r.id), r.response_result);
            }
            Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                published.push(n.params["version"].as_i64().unwrap());
            }
            _ => {}
        }
    }
    send(request(4, "shutdown", Value::Null));
    send(note("exit", Value::Null));
    assert_eq!(thread.join().unwrap(), 0);
    let cancelled = answers["2"].as_ref().unwrap_err();
    assert_eq!(cancelled.code, -32800, "{cancelled:?}");
    let shown = answers["3"].as_ref().unwrap()["contents"]["value"].clone();
    assert!(shown.as_str().unwrap().contains("job `train`"), "{shown}");
    assert_eq!(published, vec![10]);
}
