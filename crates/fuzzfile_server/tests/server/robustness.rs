//! Requests the server cannot answer usefully get an empty answer or an error, never a
//! crash; shutdown and exit follow the specification.

use crate::common::*;
use crate::TRAIN;
use serde_json::{json, Value};

const URI: &str = "file:///w/a.fz";

const POSITION_REQUESTS: &[&str] = &[
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "textDocument/prepareRename",
];

#[test]
fn unknown_documents_and_positions_out_of_range_get_empty_answers() {
    let mut c = Client::start(caps_utf8(), None);
    c.open(URI, "fuzzfile", 1, TRAIN);
    let _ = c.diagnostics(URI, Some(1));
    for method in POSITION_REQUESTS {
        for (uri, line, character) in [
            ("file:///w/unknown.fz", 0, 0),
            (URI, 10_000, 0),
            (URI, 0, 10_000),
            (URI, u32::MAX, u32::MAX),
        ] {
            let r = c.request(method, json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}));
            match r {
                Ok(v) => assert!(
                    v.is_null() || v.as_array().is_some_and(|a| a.is_empty()) || line < 10_000,
                    "{method} {uri} {line}:{character} -> {v}"
                ),
                Err(e) => panic!("{method}: {e:?}"),
            }
        }
    }
    for method in [
        "textDocument/documentSymbol",
        "textDocument/foldingRange",
        "textDocument/semanticTokens/full",
    ] {
        let r = c
            .request(
                method,
                json!({"textDocument": {"uri": "file:///w/unknown.fz"}}),
            )
            .unwrap();
        assert_eq!(r, Value::Null, "{method}");
    }
    // A range past the end: clamped, not an error.
    let r = c
        .request("textDocument/codeAction", json!({"textDocument": {"uri": URI}, "range": {"start": {"line": 9999, "character": 0}, "end": {"line": 99999, "character": 5}}, "context": {"diagnostics": []}}))
        .unwrap();
    assert!(r.is_array());
    let r = c
        .request("textDocument/rename", json!({"textDocument": {"uri": "file:///w/unknown.fz"}, "position": {"line": 0, "character": 0}, "newName": "x"}))
        .unwrap();
    assert_eq!(r, Value::Null);
    c.shutdown();
}

#[test]
fn malformed_requests_are_errors() {
    let mut c = Client::start(caps_utf8(), None);
    let r = c.request_raw("textDocument/hover", json!({"textDocument": 5}));
    assert_eq!(r.response_result.unwrap_err().code, -32602, "InvalidParams");
    let r = c.request_raw("textDocument/unheardOf", json!({}));
    assert_eq!(
        r.response_result.unwrap_err().code,
        -32601,
        "MethodNotFound"
    );
    // Malformed notifications are ignored; the server still answers.
    c.notify("textDocument/didOpen", json!({"textDocument": {"uri": 3}}));
    c.notify("textDocument/didChange", json!(["nonsense"]));
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"debounceMs": "soon", "select": 4}}),
    );
    let r = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(r.unwrap(), Value::Null);
    c.shutdown();
}

#[test]
fn stale_and_unknown_changes_are_ignored() {
    let mut c = Client::start(caps_utf8(), None);
    c.open(URI, "fuzzfile", 5, "version: v4\njobs: {}\n");
    let _ = c.diagnostics(URI, Some(5));
    // An older version: ignored (and logged), the text stays.
    c.change_full(URI, 3, "version: v9\n");
    c.change_full("file:///w/never-opened.fz", 9, "version: v9\n");
    c.change_full(
        URI,
        6,
        "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    command: [x]\n",
    );
    let p = c.diagnostics(URI, Some(6));
    assert_eq!(p["diagnostics"], json!([]));
    let logs: Vec<String> = c
        .notifications
        .iter()
        .filter(|n| n.method == "window/logMessage")
        .map(|n| n.params["message"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        logs.iter()
            .any(|m| m.contains("version 3") && m.contains("version 5")),
        "{logs:?}"
    );
    assert!(logs.iter().any(|m| m.contains("never-opened")), "{logs:?}");
    // Incremental changes with ranges past the end or reversed are clamped.
    c.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": URI, "version": 7}, "contentChanges": [
            {"range": {"start": {"line": 99, "character": 0}, "end": {"line": 99, "character": 9}}, "text": "# end\n"},
            {"range": {"start": {"line": 0, "character": 11}, "end": {"line": 0, "character": 2}}, "text": ""}
        ]}),
    );
    let p = c.diagnostics(URI, Some(7));
    assert!(p["diagnostics"].is_array());
    c.shutdown();
}

#[test]
fn hostile_texts_do_not_crash_any_feature() {
    let mut c = Client::start(caps_utf16(), None);
    let texts = [
        "",
        "\u{feff}",
        "a: &a [*a, *a]\nb: *a\n",
        "version: v4\njobs:\n  \"é\\u00e9\":\n    script: \"\\x\"\n",
        "[[[[[[[[[[[[[[[[[[[[[[[[",
        "version: v4\r\njobs:\r\n  a:\r\n    command: [torchrun, --nproc-per-node=$X]\r\n    env: [X=🚀]\r\n",
        "\t\t\u{0}\u{7f}🚀\n- - - -\n? ? ?\n",
    ];
    for (i, t) in texts.iter().enumerate() {
        let v = i as i64 + 1;
        if i == 0 {
            c.open(URI, "fuzzfile", 1, t);
        } else {
            c.change_full(URI, v as i32, t);
        }
        let _ = c.diagnostics(URI, Some(v));
        let lines = t.lines().count() as u32 + 1;
        for line in 0..lines {
            for character in [0, 1, 2, 3, 5, 8, 40] {
                let pos = json!({"line": line, "character": character});
                for m in POSITION_REQUESTS {
                    let r = c.request(m, json!({"textDocument": {"uri": URI}, "position": pos}));
                    assert!(r.is_ok(), "{m} on text {i} at {pos}: {r:?}");
                }
                let r = c.request("textDocument/references", json!({"textDocument": {"uri": URI}, "position": pos, "context": {"includeDeclaration": true}}));
                assert!(r.is_ok());
            }
        }
        for m in [
            "textDocument/documentSymbol",
            "textDocument/foldingRange",
            "textDocument/semanticTokens/full",
        ] {
            assert!(
                c.request(m, json!({"textDocument": {"uri": URI}})).is_ok(),
                "{m} on text {i}"
            );
        }
        let whole =
            json!({"start": {"line": 0, "character": 0}, "end": {"line": 999, "character": 0}});
        assert!(c
            .request(
                "textDocument/inlayHint",
                json!({"textDocument": {"uri": URI}, "range": whole})
            )
            .is_ok());
        assert!(c.request("textDocument/codeAction", json!({"textDocument": {"uri": URI}, "range": whole, "context": {"diagnostics": [], "only": ["quickfix", "source"]}})).is_ok());
        assert!(c.request("textDocument/selectionRange", json!({"textDocument": {"uri": URI}, "positions": [{"line": 0, "character": 0}, {"line": 77, "character": 1}]})).is_ok());
    }
    c.shutdown();
}

#[test]
fn shutdown_then_exit_is_status_0_and_exit_alone_is_1() {
    let mut c = Client::start(caps_utf8(), None);
    assert!(c.request("shutdown", Value::Null).is_ok());
    // After shutdown every request is an InvalidRequest error.
    let r = c.request_raw(
        "textDocument/hover",
        json!({"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}}),
    );
    assert_eq!(r.response_result.unwrap_err().code, -32600);
    assert_eq!(c.exit_without_shutdown(), 0, "shutdown came first");
    let c = Client::start(caps_utf8(), None);
    assert_eq!(c.exit_without_shutdown(), 1);
}
