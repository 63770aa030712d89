//! The stdio transport of the server: LSP base-protocol frames (`Content-Length: N\r\n\r\n`
//! and N bytes of JSON) read with bounds, instead of `lsp_server::Connection::stdio()`, whose
//! reader ends the server on the first malformed header or JSON, aborts on a `Content-Length`
//! it cannot allocate and allocates whatever a `Content-Length` asks for
//! (docs/robustness-upstream.md).
//!
//! - A frame's body is at most [`MAX_FRAME`] bytes, and is read as it arrives (a
//!   `Content-Length` that promises more than is sent allocates nothing ahead); a larger one
//!   is answered with a parse error and its bytes are skipped without being kept, so the next
//!   frame is read where it starts.
//! - A header line is at most [`MAX_HEADER_LINE`] bytes, a header block at most
//!   [`MAX_HEADERS`] lines.
//! - A frame that is not JSON gets a JSON-RPC parse error (`-32700`, `id: null`); JSON that is
//!   not a JSON-RPC message gets an invalid-request error (`-32600`, with its `id` when it has
//!   one). The server goes on with the next frame.
//! - A malformed header block (no `Content-Length`, a bad value, a line that is not a header)
//!   gets a parse error, and reading resynchronises at the next `Content-Length:` (a body
//!   that did not end with a line break runs into the next header line, so the header is
//!   looked for inside the line too).
//! - The reader stops after the `exit` notification and at the end of input.
//! - The reader reads ahead: up to [`READ_AHEAD`] messages wait in the connection's channel
//!   while the server is busy, so that after an analysis the server sees every message that
//!   arrived during it (a burst of `didChange` is applied before the next analysis, a
//!   `$/cancelRequest` is seen before the request it cancels is answered). [`Arrivals`] says
//!   whether a message is being delivered or the bytes of a further frame are already here,
//!   being decoded: the server then waits for it before it starts an analysis
//!   (`crate::inbox`).
//!
//! The rest of the server sees an ordinary [`lsp_server::Connection`].

use crossbeam_channel::{bounded, Sender};
use lsp_server::{Connection, Message};
use serde_json::{json, Value};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

/// The largest frame body read: a Fuzzfile of the 64 MiB the analysis accepts, escaped as a
/// JSON string in a `didOpen`, with room to spare.
pub const MAX_FRAME: u64 = 96 * 1024 * 1024;
/// The longest header line (`Content-Length: ...`, `Content-Type: ...`).
pub const MAX_HEADER_LINE: usize = 8 * 1024;
/// The most lines in one header block.
pub const MAX_HEADERS: usize = 64;

/// How many decoded messages the reader keeps ready while the server is busy.
pub const READ_AHEAD: usize = 64;
/// The input buffer: a pipe's whole buffer (64 KiB on Linux), so that one read takes
/// everything a client has written so far and [`Arrivals`] sees it. (All of it is resident:
/// the first read zeroes it. 128 KiB, an awkward size for mimalloc, made the server's peak
/// 2 MiB larger; 64 KiB and 1 MiB cost 0.5 MiB.)
pub const INPUT_BUFFER: usize = 64 << 10;

/// What the reader has that the server loop may not have yet, shared by the two threads: how
/// many messages it has announced (each just before it is delivered) and delivered, and
/// whether the bytes of a further frame have arrived (set when a read returns data, cleared
/// before a read that may wait for input, and, when a message is announced, set to whether
/// more input is buffered behind it).
#[derive(Clone, Debug, Default)]
pub struct Arrivals {
    announced: Arc<AtomicU64>,
    delivered: Arc<AtomicU64>,
    arriving: Arc<AtomicBool>,
}

/// What is on its way to the server loop, beyond what is in the channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InFlight {
    /// A message announced and not yet in the channel: it is being delivered.
    Message,
    /// Bytes of a frame: it is being decoded, or the rest of it is on the way.
    Bytes,
    /// Nothing; a message delivered since the channel was last looked at may be there.
    Nothing,
}

impl Arrivals {
    /// What is on its way. After `Nothing`, the channel is to be looked at once more: a
    /// message delivered in between is in it.
    pub fn in_flight(&self) -> InFlight {
        // The flag first: the reader announces a message before it clears the flag, so a
        // cleared flag read here means the counts read next include that message.
        let arriving = self.arriving.load(Ordering::SeqCst);
        let announced = self.announced.load(Ordering::SeqCst);
        let delivered = self.delivered.load(Ordering::SeqCst);
        if announced > delivered {
            InFlight::Message
        } else if arriving {
            InFlight::Bytes
        } else {
            InFlight::Nothing
        }
    }

    /// A message is about to be delivered; `more`: input is buffered behind it.
    fn announce(&self, more: bool) {
        self.announced.fetch_add(1, Ordering::SeqCst);
        self.arriving.store(more, Ordering::SeqCst);
    }

    /// The message announced is in the channel.
    fn delivered(&self) {
        self.delivered.fetch_add(1, Ordering::SeqCst);
    }

    fn set(&self, arriving: bool) {
        self.arriving.store(arriving, Ordering::SeqCst);
    }
}

/// The input as read by the reader thread: each read of the underlying stream updates
/// [`Arrivals`].
struct Watched<R> {
    inner: R,
    arrivals: Arrivals,
}

impl<R: Read> Read for Watched<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // The buffer is empty: this read may wait for the client.
        self.arrivals.set(false);
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.arrivals.set(true);
        }
        Ok(n)
    }
}

/// JSON-RPC's code for a message that is not JSON.
pub const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's code for JSON that is not a valid request, response or notification.
pub const INVALID_REQUEST: i32 = -32600;

/// What the reader found in the input.
#[derive(Debug)]
pub enum Frame {
    Message(Message),
    /// A frame that could not be read: answered with this error, then skipped.
    Bad(BadFrame),
    /// The end of the input (a frame cut short by it included).
    Eof,
}

/// A frame's body as read, before decoding.
#[derive(Debug)]
pub enum Body {
    Bytes(Vec<u8>),
    Bad(BadFrame),
    Eof,
}

/// A frame that could not be used, and the JSON-RPC error it gets.
#[derive(Debug, Clone, PartialEq)]
pub struct BadFrame {
    pub code: i32,
    /// The request id, when the message had one that could be read.
    pub id: Value,
    pub message: String,
}

impl BadFrame {
    fn parse(message: impl Into<String>) -> BadFrame {
        BadFrame {
            code: PARSE_ERROR,
            id: Value::Null,
            message: message.into(),
        }
    }

    /// The error response, as the body of a frame.
    pub fn response(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id,
            "error": { "code": self.code, "message": self.message },
        })
    }
}

/// Reads frames from `inner`, each body at most `max_frame` bytes.
pub struct FrameReader<R> {
    inner: R,
    max_frame: u64,
    /// A header line found inside a line of garbage, to be read first.
    pending: Option<Vec<u8>>,
    /// Bytes of an oversized frame still to skip (after its error was returned).
    skip: u64,
}

/// One line of a header block.
enum Line {
    /// The line, without its line break.
    Text(Vec<u8>),
    /// A line longer than [`MAX_HEADER_LINE`], skipped to its end: its last bytes.
    TooLong(Vec<u8>),
    Eof,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(inner: R, max_frame: u64) -> FrameReader<R> {
        FrameReader {
            inner,
            max_frame,
            pending: None,
            skip: 0,
        }
    }

    /// One line, at most [`MAX_HEADER_LINE`] bytes kept (of a longer one, its last bytes).
    fn line(&mut self) -> io::Result<Line> {
        if let Some(p) = self.pending.take() {
            return Ok(Line::Text(p));
        }
        let mut buf = Vec::new();
        let mut too_long = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                // A last line without a break is still a line.
                return Ok(match (too_long, buf.is_empty()) {
                    (true, _) => Line::TooLong(buf),
                    (false, true) => Line::Eof,
                    (false, false) => Line::Text(buf),
                });
            }
            let (take, done) = match chunk.iter().position(|b| *b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            buf.extend_from_slice(&chunk[..take]);
            self.inner.consume(take);
            if buf.len() > MAX_HEADER_LINE + 2 {
                too_long = true;
                if buf.len() > 2 * MAX_HEADER_LINE {
                    buf.drain(..buf.len() - MAX_HEADER_LINE);
                }
            }
            if done {
                buf.pop();
                if buf.last() == Some(&b'\r') {
                    buf.pop();
                }
                return Ok(if too_long {
                    Line::TooLong(buf)
                } else {
                    Line::Text(buf)
                });
            }
        }
    }

    /// Bytes of the input are read and not yet returned in a frame.
    fn has_buffered_input(&self) -> bool
    where
        R: HasBuffer,
    {
        self.pending.is_some() || self.inner.has_buffer()
    }

    /// The next frame, its body decoded as a JSON-RPC message.
    pub fn next_frame(&mut self) -> io::Result<Frame> {
        Ok(match self.next_body()? {
            Body::Bytes(b) => decode(&b),
            Body::Bad(b) => Frame::Bad(b),
            Body::Eof => Frame::Eof,
        })
    }

    /// The next frame's body, undecoded.
    pub fn next_body(&mut self) -> io::Result<Body> {
        if self.skip > 0 {
            // The body of an oversized frame, read as it arrives and kept nowhere.
            let n = std::mem::take(&mut self.skip);
            let skipped = io::copy(&mut (&mut self.inner).take(n), &mut io::sink())?;
            if skipped < n {
                return Ok(Body::Eof);
            }
        }
        let mut length: Option<u64> = None;
        let mut problem: Option<String> = None;
        let mut lines = 0usize;
        loop {
            let (line, too_long) = match self.line()? {
                Line::Eof => return Ok(Body::Eof),
                Line::TooLong(tail) => (tail, true),
                Line::Text(t) => (t, false),
            };
            if line.is_empty() {
                if lines == 0 {
                    // Blank lines between frames.
                    continue;
                }
                break;
            }
            lines += 1;
            if lines > MAX_HEADERS {
                problem.get_or_insert_with(|| format!("more than {MAX_HEADERS} header lines"));
            }
            match header(&line).filter(|_| !too_long) {
                Some((name, value)) => {
                    if name.eq_ignore_ascii_case(b"content-length") {
                        match std::str::from_utf8(value)
                            .ok()
                            .and_then(|v| v.trim().parse::<u64>().ok())
                        {
                            Some(n) => length = Some(n),
                            None => {
                                problem.get_or_insert_with(|| {
                                    format!(
                                        "Content-Length `{}` is not a byte count",
                                        String::from_utf8_lossy(value).trim()
                                    )
                                });
                            }
                        }
                    }
                }
                None => {
                    // Garbage; a header may start inside it (a body that did not end with a
                    // line break runs into the next frame's header).
                    if let Some(at) = find_ci(&line, b"content-length:").filter(|at| *at > 0) {
                        self.pending = Some(line[at..].to_vec());
                    }
                    return Ok(Body::Bad(BadFrame::parse(if too_long {
                        format!("a header line longer than {MAX_HEADER_LINE} bytes")
                    } else {
                        format!(
                            "malformed header line `{}`",
                            shorten(&String::from_utf8_lossy(&line))
                        )
                    })));
                }
            }
        }
        if let Some(p) = problem {
            // The body's length is unknown or untrusted: resynchronise at the next header.
            return Ok(Body::Bad(BadFrame::parse(p)));
        }
        let Some(n) = length else {
            return Ok(Body::Bad(BadFrame::parse(
                "a header without Content-Length",
            )));
        };
        if n > self.max_frame {
            // Answered now; its body is skipped by the next call.
            self.skip = n;
            return Ok(Body::Bad(BadFrame::parse(format!(
                "a frame of {n} bytes is larger than the limit of {} bytes; it is skipped",
                self.max_frame
            ))));
        }
        // Grows as bytes arrive: a Content-Length larger than what is sent allocates nothing.
        let mut body = Vec::new();
        (&mut self.inner).take(n).read_to_end(&mut body)?;
        if (body.len() as u64) < n {
            return Ok(Body::Eof);
        }
        Ok(Body::Bytes(body))
    }
}

/// A reader that can tell whether it holds input not yet consumed.
trait HasBuffer {
    fn has_buffer(&self) -> bool;
}

impl<R: Read> HasBuffer for BufReader<R> {
    fn has_buffer(&self) -> bool {
        !self.buffer().is_empty()
    }
}

/// A message from a frame's body.
pub fn decode(body: &[u8]) -> Frame {
    let value: Value = match serde_json::from_slice(body) {
        Ok(v) => v,
        Err(e) => return Frame::Bad(BadFrame::parse(format!("the frame is not JSON: {e}"))),
    };
    let id = match value.get("id") {
        Some(id @ (Value::Number(_) | Value::String(_))) => id.clone(),
        _ => Value::Null,
    };
    match serde_json::from_value::<Message>(value) {
        Ok(m) => Frame::Message(m),
        Err(e) => Frame::Bad(BadFrame {
            code: INVALID_REQUEST,
            id,
            message: format!("not a JSON-RPC request, response or notification: {e}"),
        }),
    }
}

/// `Name: value` of a header line, when it is one.
fn header(line: &[u8]) -> Option<(&[u8], &[u8])> {
    let colon = line.iter().position(|b| *b == b':')?;
    let name = &line[..colon];
    let is_token = !name.is_empty()
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"-_!#$%&'*+.^`|~".contains(b));
    is_token.then(|| (name, &line[colon + 1..]))
}

fn find_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w.eq_ignore_ascii_case(needle))
}

fn shorten(s: &str) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// The output side: frames written whole, one at a time, by the writer thread and by the
/// reader (its error answers).
type Output = Arc<Mutex<Box<dyn Write + Send>>>;

fn write_frame(out: &Output, body: &[u8]) -> io::Result<()> {
    let mut w = out
        .lock()
        .map_err(|_| io::Error::other("the output lock is poisoned"))?;
    write!(w, "Content-Length: {}\r\n\r\n", body.len())?;
    w.write_all(body)?;
    w.flush()
}

/// The threads of a transport.
pub struct IoThreads {
    writer: thread::JoinHandle<io::Result<()>>,
    reader: thread::JoinHandle<()>,
    arrivals: Arrivals,
}

impl IoThreads {
    /// Whether the reader holds bytes of a frame it has not delivered yet.
    pub fn arrivals(&self) -> Arrivals {
        self.arrivals.clone()
    }

    /// Waits until everything sent is written (the connection's sender must be dropped
    /// first). The reader is not waited for: after `exit` or the end of input it has ended,
    /// and otherwise it may wait on input that never comes.
    pub fn join_writer(self) -> io::Result<()> {
        drop(self.reader);
        self.writer
            .join()
            .map_err(|_| io::Error::other("the writer thread panicked"))?
    }

    /// Waits for both threads (tests: the input ends).
    pub fn join(self) -> io::Result<()> {
        let _ = self.reader.join();
        self.writer
            .join()
            .map_err(|_| io::Error::other("the writer thread panicked"))?
    }
}

/// A connection over standard input and output.
pub fn stdio() -> (Connection, IoThreads) {
    connect(io::stdin(), io::stdout(), MAX_FRAME)
}

/// A connection over any byte streams (the tests use pipes and buffers). The input is read
/// through a buffer of [`INPUT_BUFFER`] bytes.
pub fn connect(
    input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
    max_frame: u64,
) -> (Connection, IoThreads) {
    let out: Output = Arc::new(Mutex::new(Box::new(output)));
    let (writer_tx, writer_rx) = bounded::<Message>(0);
    let w_out = Arc::clone(&out);
    let writer = thread::Builder::new()
        .name("fuzzlint-lsp-writer".into())
        .spawn(move || {
            for m in writer_rx {
                // `lsp_server`'s own framing and `"jsonrpc": "2.0"`, written whole.
                let mut frame = Vec::new();
                m.write(&mut frame)?;
                let mut w = w_out
                    .lock()
                    .map_err(|_| io::Error::other("the output lock is poisoned"))?;
                w.write_all(&frame)?;
                w.flush()?;
            }
            Ok(())
        });
    let (reader_tx, reader_rx) = bounded::<Message>(READ_AHEAD);
    let arrivals = Arrivals::default();
    let input = BufReader::with_capacity(
        INPUT_BUFFER,
        Watched {
            inner: input,
            arrivals: arrivals.clone(),
        },
    );
    let reader_arrivals = arrivals.clone();
    let reader = thread::Builder::new()
        .name("fuzzlint-lsp-reader".into())
        .spawn(move || read_loop(input, max_frame, &reader_tx, &out, &reader_arrivals));
    match (writer, reader) {
        (Ok(writer), Ok(reader)) => (
            Connection {
                sender: writer_tx,
                receiver: reader_rx,
            },
            IoThreads {
                writer,
                reader,
                arrivals,
            },
        ),
        // No thread, no server: the receiver reports a closed connection at once.
        (w, r) => {
            let (dead_tx, dead_rx) = bounded::<Message>(0);
            drop(dead_tx);
            let writer = w.unwrap_or_else(|_| thread::spawn(|| Ok(())));
            let reader = r.unwrap_or_else(|_| thread::spawn(|| ()));
            (
                Connection {
                    sender: writer_tx,
                    receiver: dead_rx,
                },
                IoThreads {
                    writer,
                    reader,
                    arrivals,
                },
            )
        }
    }
}

fn read_loop<R: Read>(
    input: BufReader<Watched<R>>,
    max_frame: u64,
    tx: &Sender<Message>,
    out: &Output,
    arrivals: &Arrivals,
) {
    let mut frames = FrameReader::new(input, max_frame);
    loop {
        match frames.next_frame() {
            Ok(Frame::Message(m)) => {
                let is_exit = matches!(&m, Message::Notification(n) if n.method == "exit");
                // Said before the message is delivered, so that the server, once it has this
                // message, knows whether another is on its way.
                arrivals.announce(frames.has_buffered_input());
                let sent = tx.send(m);
                arrivals.delivered();
                if sent.is_err() || is_exit {
                    return;
                }
            }
            Ok(Frame::Bad(bad)) => {
                eprintln!("fuzzlint server: a bad frame was skipped: {}", bad.message);
                let body = bad.response().to_string();
                if write_frame(out, body.as_bytes()).is_err() {
                    return;
                }
            }
            Ok(Frame::Eof) => return,
            Err(e) => {
                eprintln!("fuzzlint server: cannot read the input: {e}");
                return;
            }
        }
    }
}

/// Fuzz driver of the frame reader (`fuzz/fuzz_targets/server.rs`): any bytes end in a
/// bounded number of frames, every bad frame's answer is a JSON-RPC error, every message
/// read is one that writes back to the same JSON.
#[doc(hidden)]
pub fn fuzz_frames(data: &[u8]) -> Vec<Message> {
    let mut frames = FrameReader::new(data, 4096);
    let mut messages = Vec::new();
    // Every frame but the last consumes at least one byte.
    for _ in 0..=data.len() + 1 {
        match frames.next_frame() {
            Ok(Frame::Message(m)) => messages.push(m),
            Ok(Frame::Bad(bad)) => {
                let r = bad.response();
                assert!(r["error"]["code"].is_i64(), "{r}");
                assert!(bad.code == PARSE_ERROR || bad.code == INVALID_REQUEST);
            }
            Ok(Frame::Eof) => return messages,
            Err(e) => panic!("reading a slice failed: {e}"),
        }
    }
    panic!("the reader did not reach the end of {} bytes", data.len());
}

/// Fuzz driver of the whole stream: the frames of `data`, then the messages they yield
/// handled by a server in order (no answer may be an internal error).
#[doc(hidden)]
pub fn fuzz_stream(data: &[u8]) {
    let messages = fuzz_frames(data);
    let (mut server, _) = crate::Server::initialize(json!({}));
    let mut out = Vec::new();
    server.initialized(&mut out);
    for m in messages {
        let control = server.handle(m, &mut out);
        for answer in out.drain(..) {
            if let Message::Response(r) = answer {
                if let Err(e) = &r.response_result {
                    assert_ne!(e.code, -32603, "internal error: {}", e.message);
                }
            }
        }
        if let crate::Control::Exit(_) = control {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    const PING: &str = r#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#;

    fn read_all(input: &[u8], max: u64) -> Vec<Result<Message, BadFrame>> {
        let mut r = FrameReader::new(input, max);
        let mut out = Vec::new();
        loop {
            match r.next_frame().expect("a slice reads") {
                Frame::Message(m) => out.push(Ok(m)),
                Frame::Bad(b) => out.push(Err(b)),
                Frame::Eof => return out,
            }
        }
    }

    fn is_ping(r: &Result<Message, BadFrame>) -> bool {
        matches!(r, Ok(Message::Request(q)) if q.method == "shutdown")
    }

    #[test]
    fn good_frames_are_read() {
        let input = format!("{}{}", frame(PING), frame(PING));
        let got = read_all(input.as_bytes(), 1 << 20);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(is_ping));
        // Content-Type is allowed, header names are case-insensitive, LF alone is accepted.
        let input = format!(
            "content-length: {}\nContent-Type: application/vscode-jsonrpc; charset=utf-8\n\n{PING}",
            PING.len()
        );
        let got = read_all(input.as_bytes(), 1 << 20);
        assert!(got.len() == 1 && is_ping(&got[0]), "{got:?}");
    }

    #[test]
    fn bad_json_is_a_parse_error_and_the_next_frame_is_read() {
        let input = format!("{}{}", frame("{not json"), frame(PING));
        let got = read_all(input.as_bytes(), 1 << 20);
        assert_eq!(got.len(), 2, "{got:?}");
        let Err(b) = &got[0] else { panic!("{got:?}") };
        assert_eq!((b.code, &b.id), (PARSE_ERROR, &Value::Null));
        assert!(is_ping(&got[1]));
    }

    #[test]
    fn json_that_is_no_message_is_an_invalid_request_with_its_id() {
        let input = format!("{}{}", frame(r#"{"id":3,"foo":1}"#), frame(PING));
        let got = read_all(input.as_bytes(), 1 << 20);
        let Err(b) = &got[0] else { panic!("{got:?}") };
        assert_eq!((b.code, &b.id), (INVALID_REQUEST, &json!(3)));
        assert!(is_ping(&got[1]));
    }

    #[test]
    fn malformed_headers_resynchronise_at_the_next_content_length() {
        for bad in [
            "garbage\r\n\r\n".to_string(),
            "Content-Length: x\r\n\r\n".to_string(),
            "Content-Length: -5\r\n\r\n".to_string(),
            "Content-Type: text/plain\r\n\r\n".to_string(),
            // A body longer than its Content-Length runs into the next header line.
            format!("Content-Length: 2\r\n\r\n{PING}"),
            format!("{}\r\n\r\n", "X".repeat(MAX_HEADER_LINE * 3)),
            "no line break at all ".repeat(1000),
        ] {
            let input = format!("{bad}{}", frame(PING));
            let got = read_all(input.as_bytes(), 1 << 20);
            assert!(
                got.last().is_some_and(is_ping),
                "after {:?}: {got:?}",
                shorten(&bad)
            );
            assert!(
                got[..got.len() - 1]
                    .iter()
                    .all(|g| matches!(g, Err(b) if b.code == PARSE_ERROR)),
                "{got:?}"
            );
        }
    }

    #[test]
    fn an_oversized_frame_is_skipped_without_being_kept() {
        let big = format!(
            r#"{{"jsonrpc":"2.0","method":"x","params":"{}"}}"#,
            "a".repeat(5000)
        );
        let input = format!("{}{}", frame(&big), frame(PING));
        let got = read_all(input.as_bytes(), 1000);
        assert_eq!(got.len(), 2, "{got:?}");
        let Err(b) = &got[0] else { panic!("{got:?}") };
        assert!(
            b.message.contains("larger than the limit of 1000 bytes"),
            "{b:?}"
        );
        assert!(is_ping(&got[1]));
    }

    #[test]
    fn a_length_larger_than_the_input_ends_it_without_allocating() {
        for n in ["99999999999999", "4000000000", "18446744073709551615"] {
            let input = format!("Content-Length: {n}\r\n\r\n{{}}");
            let mut r = FrameReader::new(input.as_bytes(), MAX_FRAME);
            assert!(
                matches!(r.next_frame(), Ok(Frame::Bad(b)) if b.message.contains("larger than the limit")),
                "{n}"
            );
            assert!(matches!(r.next_frame(), Ok(Frame::Eof)), "{n}");
        }
        // Under the limit, but more than is sent: nothing is allocated ahead.
        let input = format!("Content-Length: {}\r\n\r\n{{}}", MAX_FRAME);
        let mut r = FrameReader::new(input.as_bytes(), MAX_FRAME);
        assert!(matches!(r.next_frame(), Ok(Frame::Eof)));
        // Over u64: not a byte count.
        let input = format!(
            "Content-Length: 99999999999999999999999\r\n\r\n{}",
            frame(PING)
        );
        let got = read_all(input.as_bytes(), MAX_FRAME);
        assert!(matches!(&got[0], Err(b) if b.message.contains("not a byte count")));
    }

    #[test]
    fn the_transport_answers_bad_frames_and_passes_messages_on() {
        let input = format!("{}{}", frame("[1,"), frame(PING));
        let out = Arc::new(Mutex::new(Vec::new()));
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, b: &[u8]) -> io::Result<usize> {
                self.0
                    .lock()
                    .map_err(|_| io::Error::other("lock"))?
                    .write(b)
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let (conn, threads) = connect(
            io::Cursor::new(input.into_bytes()),
            Shared(Arc::clone(&out)),
            1 << 20,
        );
        let m = conn.receiver.recv().expect("the good frame");
        assert!(matches!(m, Message::Request(r) if r.method == "shutdown"));
        conn.sender
            .send(Message::Response(lsp_server::Response::new_ok(
                lsp_server::RequestId::from(7),
                Value::Null,
            )))
            .expect("send");
        drop(conn);
        threads.join().expect("threads");
        let written = String::from_utf8(out.lock().expect("lock").clone()).expect("UTF-8");
        assert!(written.starts_with("Content-Length: "), "{written}");
        assert!(
            written.contains(r#""error":{"code":-32700"#) && written.contains(r#""id":null"#),
            "{written}"
        );
        assert!(written.contains(r#""id":7,"result":null"#), "{written}");
        assert!(written.contains(r#""jsonrpc":"2.0""#), "{written}");
    }

    #[test]
    fn fuzz_driver_runs_on_pseudo_random_bytes() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let pieces: [&[u8]; 8] = [
            b"Content-Length: ",
            b"12",
            b"\r\n",
            b"\r\n\r\n",
            b"{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}",
            b"{\"id\":1,",
            b"\n",
            b"\xff",
        ];
        for _ in 0..300 {
            let mut data = Vec::new();
            for _ in 0..(x % 20) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                data.extend_from_slice(pieces[(x % 8) as usize]);
            }
            fuzz_stream(&data);
        }
    }
}
