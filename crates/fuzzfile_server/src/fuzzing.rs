//! The driver of the server's fuzz target (`fuzz/fuzz_targets/server.rs`), here so that the
//! stable test suite runs it too: arbitrary edit sequences and requests, decoded from bytes,
//! are fed to a [`Server`] in process: full and incremental changes with arbitrary ranges
//! (UTF-8 or UTF-16 positions, past the end, reversed, inside characters), stale versions,
//! requests at arbitrary positions, settings changes, close and reopen, garbage parameters.
//!
//! Findings (panics): a panic anywhere, a request answered with `InternalError` (the server
//! catches panics in handlers and answers that), an internal-error log, and a diagnostic of
//! the server that a fresh analysis of the text the edits produce does not have.
#![allow(clippy::unwrap_used)]

use crate::position::{Encoding, Lines};
use crate::Server;
use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{json, Value};

const URI: &str = "file:///fuzz/doc.fz";
/// An application template (by its name), with no values file beside it.
const TEMPLATE_URI: &str = "file:///fuzz/app.template.yaml";

struct Input<'a> {
    data: &'a [u8],
}

impl<'a> Input<'a> {
    fn byte(&mut self) -> Option<u8> {
        let (b, rest) = self.data.split_first()?;
        self.data = rest;
        Some(*b)
    }
    fn num(&mut self) -> u32 {
        let a = self.byte().unwrap_or(0) as u32;
        // Mostly small numbers, sometimes huge ones.
        if a == 255 {
            u32::MAX
        } else {
            a % 64
        }
    }
    fn text(&mut self) -> String {
        let len = (self.byte().unwrap_or(0) as usize).min(self.data.len());
        let (t, rest) = self.data.split_at(len);
        self.data = rest;
        String::from_utf8_lossy(t).into_owned()
    }
}

const TEMPLATE_SEED: &str = "{{- $n := default 2 .Gpus }}\nversion: v4\njobs:\n  a:\n    image: {uri: {{ .Image | quote }}}\n    command: [torchrun, --nproc-per-node={{ $n }}, x.py]\n{{- if .Extra }}\n    polcy: {}\n{{- end }}\n    resource: {devices: {nvidia.com/gpu: 2}}\n";

const SEED: &str = "version: v4\njobs:\n  a:\n    image: {uri: docker://x:1}\n    env: [NP=4]\n    script: |\n      #!/bin/sh\n      torchrun --nproc-per-node $NP x.py\n    resource: {devices: {nvidia.com/gpu: 2}}\n    depends-on:\n      - name: b\n  b:\n    command: [echo, é😀]\n";

fn check_out(out: &mut Vec<Message>) {
    for m in out.drain(..) {
        match m {
            Message::Response(r) => {
                if let Err(e) = &r.response_result {
                    assert_ne!(e.code, -32603, "internal error: {}", e.message);
                }
            }
            Message::Notification(n) if n.method == "window/logMessage" => {
                let msg = n.params["message"].as_str().unwrap_or("");
                assert!(!msg.contains("internal error"), "{msg}");
            }
            _ => {}
        }
    }
}

/// Run one fuzz input: decode operations from `data`, apply them, check the answers.
pub fn run(data: &[u8]) {
    let mut input = Input { data };
    let first = input.byte().unwrap_or(0);
    let utf8 = first & 1 == 0;
    // Every fourth input edits an application template instead of a Fuzzfile.
    let template = first & 6 == 6;
    let (uri, seed) = if template {
        (TEMPLATE_URI, TEMPLATE_SEED)
    } else {
        (URI, SEED)
    };
    let caps = if utf8 {
        json!({"general": {"positionEncodings": ["utf-8"]}})
    } else {
        json!({})
    };
    let (mut server, _) = Server::initialize(json!({"capabilities": caps}));
    let encoding = if utf8 {
        Encoding::Utf8
    } else {
        Encoding::Utf16
    };
    let mut out = Vec::new();
    let mut next_id = 0;
    let mut req = |server: &mut Server, out: &mut Vec<Message>, method: &str, params: Value| {
        next_id += 1;
        let r = Request::new(RequestId::from(next_id), method.into(), params);
        server.handle(r.into(), out);
    };
    let note = |server: &mut Server, out: &mut Vec<Message>, method: &str, params: Value| {
        server.handle(Notification::new(method.into(), params).into(), out);
    };
    // The text the client believes the document has.
    let mut text = seed.to_owned();
    let mut version = 1;
    let mut open = true;
    note(
        &mut server,
        &mut out,
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": "fuzzfile", "version": 1, "text": text}}),
    );
    let pos = |i: &mut Input| json!({"line": i.num(), "character": i.num()});
    for _ in 0..64 {
        let Some(op) = input.byte() else { break };
        match op % 12 {
            0 => {
                version += 1;
                text = input.text();
                note(
                    &mut server,
                    &mut out,
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
                );
            }
            1 | 2 => {
                // An incremental change; the client's copy follows the same conversion.
                version += 1;
                let (start, end) = (pos(&mut input), pos(&mut input));
                let ins = input.text();
                let index = fuzzfile_check::LineIndex::new(&text);
                let lines = Lines::new(&text, &index, encoding);
                let p = |v: &Value| lsp_types::Position {
                    line: v["line"].as_u64().unwrap_or(0) as u32,
                    character: v["character"].as_u64().unwrap_or(0) as u32,
                };
                let r = lines.text_range(lsp_types::Range {
                    start: p(&start),
                    end: p(&end),
                });
                let mut next = text.clone();
                next.replace_range(r.start as usize..r.end as usize, &ins);
                text = next;
                note(
                    &mut server,
                    &mut out,
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"range": {"start": start, "end": end}, "text": ins}]}),
                );
            }
            3 => {
                // A stale version: must be ignored.
                let t = input.text();
                note(
                    &mut server,
                    &mut out,
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version - 1}, "contentChanges": [{"text": t}]}),
                );
            }
            4 => {
                let methods = [
                    "textDocument/hover",
                    "textDocument/completion",
                    "textDocument/definition",
                    "textDocument/prepareRename",
                ];
                let m = methods[input.byte().unwrap_or(0) as usize % methods.len()];
                let p = pos(&mut input);
                req(
                    &mut server,
                    &mut out,
                    m,
                    json!({"textDocument": {"uri": uri}, "position": p}),
                );
            }
            5 => {
                let p = pos(&mut input);
                req(
                    &mut server,
                    &mut out,
                    "textDocument/references",
                    json!({"textDocument": {"uri": uri}, "position": p, "context": {"includeDeclaration": true}}),
                );
                let name = input.text();
                req(
                    &mut server,
                    &mut out,
                    "textDocument/rename",
                    json!({"textDocument": {"uri": uri}, "position": p, "newName": name}),
                );
            }
            6 => {
                let range = json!({"start": pos(&mut input), "end": pos(&mut input)});
                req(
                    &mut server,
                    &mut out,
                    "textDocument/codeAction",
                    json!({"textDocument": {"uri": uri}, "range": range, "context": {"diagnostics": [], "only": ["quickfix", "source.fixAll"]}}),
                );
                req(
                    &mut server,
                    &mut out,
                    "textDocument/inlayHint",
                    json!({"textDocument": {"uri": uri}, "range": range}),
                );
            }
            7 => {
                for m in [
                    "textDocument/documentSymbol",
                    "textDocument/foldingRange",
                    "textDocument/semanticTokens/full",
                ] {
                    req(
                        &mut server,
                        &mut out,
                        m,
                        json!({"textDocument": {"uri": uri}}),
                    );
                }
                let p = pos(&mut input);
                req(
                    &mut server,
                    &mut out,
                    "textDocument/selectionRange",
                    json!({"textDocument": {"uri": uri}, "positions": [p]}),
                );
            }
            8 => server.flush(&mut out),
            9 => {
                let settings = [
                    json!({"select": ["FZ0"]}),
                    json!({"ignore": "FZ2,nope"}),
                    json!(null),
                    json!({"fuzzlint": {"debounceMs": 3}}),
                    json!([1, 2]),
                ];
                let s = settings[input.byte().unwrap_or(0) as usize % settings.len()].clone();
                note(
                    &mut server,
                    &mut out,
                    "workspace/didChangeConfiguration",
                    json!({"settings": s}),
                );
            }
            10 => {
                if open {
                    note(
                        &mut server,
                        &mut out,
                        "textDocument/didClose",
                        json!({"textDocument": {"uri": uri}}),
                    );
                } else {
                    version += 1;
                    note(
                        &mut server,
                        &mut out,
                        "textDocument/didOpen",
                        json!({"textDocument": {"uri": uri, "languageId": "fuzzfile", "version": version, "text": text}}),
                    );
                }
                open = !open;
            }
            _ => {
                // Garbage parameters.
                let t = input.text();
                let v: Value = serde_json::from_str(&t).unwrap_or(Value::String(t));
                req(&mut server, &mut out, "textDocument/hover", v.clone());
                note(&mut server, &mut out, "textDocument/didChange", v);
            }
        }
        check_out(&mut out);
    }
    // The server's diagnostics are those of a fresh analysis of the client's text (with the
    // settings last given, which only select rules: compare the rules kept by both).
    if open {
        req(
            &mut server,
            &mut out,
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": uri}}),
        );
        let got: Vec<String> = out
            .iter()
            .filter_map(|m| match m {
                Message::Response(r) => r.response_result.as_ref().ok(),
                _ => None,
            })
            .flat_map(|v| v["items"].as_array().cloned().unwrap_or_default())
            .map(|d| {
                format!(
                    "{} {}",
                    d["code"].as_str().unwrap_or(""),
                    d["message"].as_str().unwrap_or("")
                )
            })
            .collect();
        let a = if template {
            // As `fuzzlint check` checks the template: no values file beside it.
            let path = std::path::Path::new("/fuzz/app.template.yaml");
            let input = fuzzfile_check::template::TemplateInput {
                template: fuzzfile_check::template::Source {
                    display: path.display().to_string(),
                    text: text.clone(),
                },
                looked_for: crate::template::values_paths(path)
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect(),
                ..Default::default()
            };
            fuzzfile_check::template::check(input, &Default::default()).diagnostics
        } else {
            fuzzfile_check::analyze(&text).diagnostics
        };
        let want: Vec<String> = a
            .iter()
            .map(|d| {
                let help = d.help.as_ref().map(|h| format!("\nhelp: {h}"));
                format!(
                    "{} {}{}",
                    d.rule.code(),
                    d.message,
                    help.unwrap_or_default()
                )
            })
            .collect();
        // Selection can only remove findings (and turn unused suppressions on or off).
        for g in &got {
            assert!(
                want.contains(g) || g.contains("FZ040"),
                "server found {g} that a fresh analysis does not: {want:?}\ntext: {text:?}"
            );
        }
        check_out(&mut out);
    }
}

#[cfg(test)]
mod tests {
    /// Pseudo-random inputs (a fixed xorshift sequence, so failures reproduce), biased
    /// towards operation bytes and small numbers like the fuzzer's early corpus.
    const ALPHABET: &[u8] = b"version: v4\njobs:\n  a:\n    - : {}[]#&*\"'$\xc3\xa9";

    /// Inputs the fuzzer found failures with, kept as regression tests.
    #[test]
    fn fuzzer_findings() {
        // Hover on a document that is one scalar, before the scalar (subtraction overflow).
        super::run(&[223, 1, 133, 158, 0, 0, 0, 4]);
    }

    #[test]
    fn random_inputs_hold_the_invariants() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..1000 {
            let len = (next() % 400) as usize;
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    let r = next();
                    match r % 4 {
                        0 => ALPHABET[(r >> 8) as usize % ALPHABET.len()],
                        _ => (r >> 16) as u8,
                    }
                })
                .collect();
            super::run(&data);
        }
    }
}
