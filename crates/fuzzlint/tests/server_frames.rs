//! The real `fuzzlint server` over pipes, fed bad frames: each one gets a JSON-RPC error
//! (`-32700` parse error with `id: null`, or `-32600` for JSON that is no message) and the
//! server answers the valid request that follows. A `Content-Length` too large to read is
//! answered at once, and the server ends cleanly when its input ends (it used to abort or
//! allocate without bound).

use fuzzfile_server::transport::{Body, FrameReader};
use serde_json::{json, Value};
use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_fuzzlint");
const WAIT: Duration = Duration::from_secs(30);

/// What the server wrote: messages, and the error answers to bad frames (as JSON).
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    out: Receiver<Value>,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(BIN)
            .arg("server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start fuzzlint server");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut frames = FrameReader::new(BufReader::new(stdout), 1 << 30);
            while let Ok(f) = frames.next_body() {
                let v = match f {
                    Body::Bytes(b) => serde_json::from_slice(&b).unwrap_or_else(
                        |e| json!({ "unreadable frame from the server": e.to_string() }),
                    ),
                    // The reader's own verdict on a server frame: it must not happen.
                    Body::Bad(b) => json!({ "unreadable frame from the server": b.message }),
                    Body::Eof => return,
                };
                if tx.send(v).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        let mut s = Server {
            child,
            stdin,
            out: rx,
        };
        s.send_json(&json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}));
        let init = s.answer_to(&json!(1));
        assert!(init["result"]["capabilities"].is_object(), "{init}");
        s.send_json(&json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
        s
    }

    fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("write to the server");
        stdin.flush().expect("flush");
    }

    fn send_body(&mut self, body: &str) {
        self.send_raw(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }

    fn send_json(&mut self, v: &Value) {
        self.send_body(&v.to_string());
    }

    /// The next message with this id (notifications in between are passed over).
    fn answer_to(&mut self, id: &Value) -> Value {
        self.until_answer_to(id).pop().expect("the answer")
    }

    /// Every message up to and including the answer to `id`.
    fn until_answer_to(&mut self, id: &Value) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let v = self
                .out
                .recv_timeout(WAIT)
                .unwrap_or_else(|_| panic!("no answer to id {id} within {WAIT:?}"));
            assert!(v.get("unreadable frame from the server").is_none(), "{v}");
            let done =
                v.get("id") == Some(id) && (v.get("result").is_some() || v.get("error").is_some());
            seen.push(v);
            if done {
                return seen;
            }
        }
    }

    /// A request that needs a real answer: hover over a document the server does not have.
    /// Returns the messages before its answer.
    fn probe(&mut self, id: i64) -> Vec<Value> {
        self.send_json(&json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": "file:///nowhere.fz"}, "position": {"line": 0, "character": 0}}}));
        let mut seen = self.until_answer_to(&json!(id));
        let a = seen.pop().expect("the answer");
        assert!(a.get("result").is_some(), "{a}");
        seen
    }

    fn close_input(&mut self) {
        self.stdin = None;
    }

    /// The exit status, within [`WAIT`].
    fn status(&mut self) -> std::process::ExitStatus {
        let start = std::time::Instant::now();
        loop {
            if let Some(s) = self.child.try_wait().expect("wait") {
                return s;
            }
            if start.elapsed() > WAIT {
                let _ = self.child.kill();
                panic!("the server did not end within {WAIT:?}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn assert_error(v: &Value, code: i64, id: &Value) {
    assert_eq!(v["error"]["code"], json!(code), "{v}");
    assert_eq!(&v["id"], id, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{v}"
    );
}

#[test]
fn every_bad_frame_is_answered_and_the_server_goes_on() {
    let mut s = Server::start();
    s.probe(10);
    let null = Value::Null;

    // JSON that does not parse.
    s.send_body("{\"jsonrpc\": \"2.0\", \"id\": 2, ");
    assert_error(&s.answer_to(&null), -32700, &null);
    s.probe(11);

    // Bytes that are not UTF-8.
    s.send_raw(b"Content-Length: 3\r\n\r\n\xff\xfe\xfd");
    assert_error(&s.answer_to(&null), -32700, &null);
    s.probe(12);

    // A header line that is no header.
    s.send_raw(b"hello there\r\n\r\n");
    assert_error(&s.answer_to(&null), -32700, &null);
    s.probe(13);

    // A header block without Content-Length.
    s.send_raw(b"Content-Type: application/json\r\n\r\n");
    assert_error(&s.answer_to(&null), -32700, &null);
    s.probe(14);

    // A Content-Length that is no number.
    s.send_raw(b"Content-Length: twelve\r\n\r\n");
    assert_error(&s.answer_to(&null), -32700, &null);
    s.probe(15);

    // A header without the \r\n\r\n separator, running into the body and the next frame.
    // It is answered once the next frame's header ends the line.
    s.send_raw(b"Content-Length 40 {\"jsonrpc\":\"2.0\"}");
    let before = s.probe(16);
    assert!(
        before.iter().any(|v| v["error"]["code"] == json!(-32700)),
        "{before:?}"
    );

    // JSON that is no JSON-RPC message: invalid request, with its id.
    s.send_body(r#"{"id": 5, "what": "no method"}"#);
    assert_error(&s.answer_to(&json!(5)), -32600, &json!(5));
    s.probe(17);
    s.send_body("[1, 2, 3]");
    assert_error(&s.answer_to(&null), -32600, &null);
    s.probe(18);

    // A header line of 100 KB.
    let mut long = vec![b'X'; 100 * 1024];
    long.extend_from_slice(b"\r\n\r\n");
    s.send_raw(&long);
    assert_error(&s.answer_to(&null), -32700, &null);
    s.probe(19);

    // And the orderly end still works.
    s.send_json(&json!({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}));
    s.answer_to(&json!(99));
    s.send_json(&json!({"jsonrpc": "2.0", "method": "exit"}));
    let status = s.status();
    assert_eq!(status.code(), Some(0), "{status:?}");
}

#[test]
fn a_content_length_too_large_to_read_is_answered_and_the_server_ends_cleanly() {
    for n in ["99999999999999", "4000000000"] {
        let mut s = Server::start();
        s.send_raw(format!("Content-Length: {n}\r\n\r\n{{\"jsonrpc\":\"2.0\"}}").as_bytes());
        let null = Value::Null;
        let a = s.answer_to(&null);
        assert_error(&a, -32700, &null);
        assert!(
            a["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("larger than the limit")),
            "{a}"
        );
        // The frame's body never comes: the input ends, and so does the server, with the
        // status of an end without `shutdown` (no abort, no signal).
        s.close_input();
        let status = s.status();
        assert_eq!(status.code(), Some(1), "Content-Length {n}: {status:?}");
    }
}

/// A valid frame after a bad JSON body is read even when both arrive in one write.
#[test]
fn frames_in_one_write_are_each_answered() {
    let mut s = Server::start();
    let probe = json!({"jsonrpc": "2.0", "id": 30, "method": "textDocument/hover",
        "params": {"textDocument": {"uri": "file:///nowhere.fz"}, "position": {"line": 0, "character": 0}}})
    .to_string();
    let bytes = format!(
        "Content-Length: 5\r\n\r\n{{{{{{{{{{Content-Length: {}\r\n\r\n{probe}",
        probe.len()
    );
    s.send_raw(bytes.as_bytes());
    assert_error(&s.answer_to(&Value::Null), -32700, &Value::Null);
    let a = s.answer_to(&json!(30));
    assert!(a.get("result").is_some(), "{a}");
}
