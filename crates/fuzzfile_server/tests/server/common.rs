//! An in-process LSP client for the end-to-end tests: the server runs on
//! `lsp_server::Connection::memory()` in a thread, exactly as `fuzzlint server` runs it on
//! stdio, and the tests speak JSON-RPC to it.
#![allow(dead_code, clippy::unwrap_used)]

use fuzzfile_check::LineIndex;
use fuzzfile_server::position::{Encoding, Lines};
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response, ResponseError};
use serde_json::{json, Value};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(20);

pub struct Client {
    conn: Connection,
    thread: Option<std::thread::JoinHandle<i32>>,
    next_id: i32,
    /// Notifications received and not yet taken, in order.
    pub notifications: Vec<Notification>,
    /// Requests the server sent to the client (registerCapability, configuration, ...).
    pub server_requests: Vec<Request>,
    /// What the client answers to `workspace/configuration`.
    pub configuration: Value,
    pub encoding: Encoding,
    pub init_result: Value,
    sentinel: u32,
}

/// Client capabilities of an editor that offers UTF-8 and pushes nothing else special.
pub fn caps_utf8() -> Value {
    json!({"general": {"positionEncodings": ["utf-8", "utf-16"]}})
}

pub fn caps_utf16() -> Value {
    json!({})
}

impl Client {
    pub fn start(capabilities: Value, init_options: Option<Value>) -> Client {
        Client::start_in(capabilities, init_options, None)
    }

    pub fn start_in(
        capabilities: Value,
        init_options: Option<Value>,
        root: Option<&str>,
    ) -> Client {
        let (server, client) = Connection::memory();
        let thread = std::thread::spawn(move || fuzzfile_server::run(server));
        let mut c = Client {
            conn: client,
            thread: Some(thread),
            next_id: 0,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            configuration: Value::Null,
            encoding: Encoding::Utf16,
            init_result: Value::Null,
            sentinel: 0,
        };
        let mut params = json!({"capabilities": capabilities, "processId": null});
        if let Some(o) = init_options {
            params["initializationOptions"] = o;
        }
        if let Some(r) = root {
            params["workspaceFolders"] = json!([{"uri": format!("file://{r}"), "name": "w"}]);
        }
        let result = c.request("initialize", params).expect("initialize");
        c.encoding = match result["capabilities"]["positionEncoding"].as_str() {
            Some("utf-8") => Encoding::Utf8,
            _ => Encoding::Utf16,
        };
        c.init_result = result;
        c.notify("initialized", json!({}));
        c
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.conn
            .sender
            .send(Notification::new(method.into(), params).into())
            .expect("send");
    }

    fn recv(&mut self) -> Message {
        let m = self
            .conn
            .receiver
            .recv_timeout(TIMEOUT)
            .expect("a message from the server in time");
        match &m {
            Message::Request(r) => {
                // Answer what a client answers; the server may wait for it.
                let result = match r.method.as_str() {
                    "workspace/configuration" => json!([self.configuration.clone()]),
                    _ => Value::Null,
                };
                self.server_requests.push(r.clone());
                self.conn
                    .sender
                    .send(Response::new_ok(r.id.clone(), result).into())
                    .expect("send");
            }
            Message::Notification(n) => self.notifications.push(n.clone()),
            Message::Response(_) => {}
        }
        m
    }

    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, ResponseError> {
        self.request_raw(method, params).response_result
    }

    /// Send a request and return the raw response (for malformed-parameter tests).
    pub fn request_raw(&mut self, method: &str, params: Value) -> Response {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.conn
            .sender
            .send(Request::new(id.clone(), method.into(), params).into())
            .expect("send");
        loop {
            if let Message::Response(r) = self.recv() {
                if r.id == id {
                    return r;
                }
            }
        }
    }

    pub fn open(&mut self, uri: &str, language: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": version, "text": text}}),
        );
    }

    pub fn change_full(&mut self, uri: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// The next `publishDiagnostics` for `uri` (at `version`, when given); earlier ones for
    /// that document are skipped.
    pub fn diagnostics(&mut self, uri: &str, version: Option<i64>) -> Value {
        loop {
            if let Some(i) = self.notifications.iter().position(|n| {
                n.method == "textDocument/publishDiagnostics"
                    && n.params["uri"] == uri
                    && version.is_none_or(|v| n.params["version"] == v)
            }) {
                let n = self.notifications.remove(i);
                // Drop older publications of the same document.
                self.notifications.retain(|m| {
                    !(m.method == "textDocument/publishDiagnostics" && m.params["uri"] == uri)
                });
                return n.params;
            }
            self.recv();
        }
    }

    /// Receive until a notification satisfies `pred` (it stays in `notifications`).
    pub fn wait_for(&mut self, pred: impl Fn(&Notification) -> bool) {
        while !self.notifications.iter().any(&pred) {
            self.recv();
        }
    }

    /// Whether no publication for `uri` arrived: a Fuzzfile opened after it is published, and
    /// the server publishes in the order documents changed, so anything for `uri` would have
    /// come first. (For a client that pulls, see [`Client::finish`].)
    pub fn no_diagnostics_for(&mut self, uri: &str) -> bool {
        self.sentinel += 1;
        let sentinel = format!("file:///sentinel/{}.fz", self.sentinel);
        self.open(&sentinel, "fuzzfile", 1, "version: v4\n");
        self.wait_for(|n| {
            n.method == "textDocument/publishDiagnostics" && n.params["uri"] == sentinel.as_str()
        });
        !self
            .notifications
            .iter()
            .any(|n| n.method == "textDocument/publishDiagnostics" && n.params["uri"] == uri)
    }

    /// Shut the server down and return every notification it sent, none left in flight.
    pub fn finish(mut self) -> Vec<Notification> {
        let r = self.request("shutdown", Value::Null);
        assert!(r.is_ok(), "{r:?}");
        self.notify("exit", Value::Null);
        let code = self
            .thread
            .take()
            .expect("thread")
            .join()
            .expect("server thread");
        assert_eq!(code, 0);
        while let Ok(m) = self.conn.receiver.try_recv() {
            if let Message::Notification(n) = m {
                self.notifications.push(n);
            }
        }
        std::mem::take(&mut self.notifications)
    }

    pub fn shutdown(mut self) -> i32 {
        let r = self.request("shutdown", Value::Null);
        assert!(r.is_ok(), "{r:?}");
        self.notify("exit", Value::Null);
        self.thread
            .take()
            .expect("thread")
            .join()
            .expect("server thread")
    }

    pub fn exit_without_shutdown(mut self) -> i32 {
        self.notify("exit", Value::Null);
        self.thread
            .take()
            .expect("thread")
            .join()
            .expect("server thread")
    }

    /// Offset ↔ position in this client's encoding.
    pub fn pos(&self, text: &str, offset: usize) -> Value {
        let index = LineIndex::new(text);
        let p = Lines::new(text, &index, self.encoding).position(offset as u32);
        json!({"line": p.line, "character": p.character})
    }

    /// The position of the first `needle` in `text` (plus `delta` bytes).
    pub fn at(&self, text: &str, needle: &str, delta: usize) -> Value {
        let i = text
            .find(needle)
            .unwrap_or_else(|| panic!("{needle:?} not in text"));
        self.pos(text, i + delta)
    }
}

/// Convert an LSP range (JSON) to the byte range of `text` in `encoding`.
pub fn byte_range(text: &str, range: &Value, encoding: Encoding) -> std::ops::Range<usize> {
    let index = LineIndex::new(text);
    let l = Lines::new(text, &index, encoding);
    let p = |v: &Value| lsp_types::Position {
        line: v["line"].as_u64().unwrap() as u32,
        character: v["character"].as_u64().unwrap() as u32,
    };
    let s = l.offset(p(&range["start"])) as usize;
    let e = l.offset(p(&range["end"])) as usize;
    s..e
}

/// `line:col-line:col` (1-based, columns in characters as people read them, so the same in
/// every encoding) and the covered text.
pub fn show_range(text: &str, range: &Value, encoding: Encoding) -> String {
    let r = byte_range(text, range, encoding);
    let covered = &text[r.clone()];
    let index = LineIndex::new(text);
    let s = index.line_col(text, r.start as u32);
    let e = index.line_col(text, r.end as u32);
    format!(
        "{}:{}-{}:{} {:?}",
        s.line,
        s.column,
        e.line,
        e.column,
        if covered.chars().count() > 60 {
            format!("{}…", covered.chars().take(60).collect::<String>())
        } else {
            covered.to_owned()
        }
    )
}

/// Diagnostics as lines: range, covered text, severity, code, message.
pub fn show_diagnostics(text: &str, diags: &Value, encoding: Encoding) -> String {
    let sev = |v: &Value| match v.as_u64() {
        Some(1) => "error",
        Some(2) => "warning",
        Some(3) => "info",
        _ => "hint",
    };
    let mut out = String::new();
    for d in diags.as_array().unwrap() {
        out.push_str(&format!(
            "{} {} {} {}\n",
            show_range(text, &d["range"], encoding),
            sev(&d["severity"]),
            d["code"].as_str().unwrap_or("?"),
            d["message"].as_str().unwrap_or("").replace('\n', "\n    ")
        ));
    }
    out
}

/// Apply `TextEdit`s (JSON) to `text`, converting positions with `encoding`.
pub fn apply_edits(text: &str, edits: &[Value], encoding: Encoding) -> String {
    let mut es: Vec<(std::ops::Range<usize>, String)> = edits
        .iter()
        .map(|e| {
            (
                byte_range(text, &e["range"], encoding),
                e["newText"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    es.sort_by_key(|(r, _)| std::cmp::Reverse(r.start));
    let mut out = text.to_owned();
    for (r, t) in es {
        out.replace_range(r, &t);
    }
    out
}

/// The edits of a `WorkspaceEdit` with `documentChanges` for one document, and its version.
pub fn document_edits(edit: &Value) -> (Vec<Value>, Option<i64>) {
    let dc = &edit["documentChanges"][0];
    (
        dc["edits"].as_array().cloned().unwrap_or_default(),
        dc["textDocument"]["version"].as_i64(),
    )
}

/// The labels of completion items (a JSON array), in the order given.
pub fn labels(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_owned())
        .collect()
}
