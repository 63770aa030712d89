//! The Fuzzfile language server (`fuzzlint server`): the analysis of [`fuzzfile_check`] over
//! the Language Server Protocol, so an editor shows exactly what CI reports.
//!
//! Shape: [`Server`] is a synchronous state machine. It takes one [`lsp_server::Message`] at a
//! time and appends what it answers to an output vector; it does no I/O and starts no thread.
//! [`run`] drives it over an [`lsp_server::Connection`] (stdio in the binary, through the
//! bounded frame reader of [`transport`]; an in-memory pair in the tests), and the fuzz target
//! drives it directly.
//!
//! Invariants:
//! - this is the only crate that knows LSP and JSON-RPC; the analysis, the rule registry, the
//!   key schema and the launcher analysis come from the lower crates unchanged;
//! - messages are handled one at a time, in the order they arrive, on one thread: a
//!   `didChange` is applied to the exact text the previous one produced (no reordering, no
//!   concurrency: see `DESIGN.md` on `tower-lsp`); what is skipped is stale work only (a
//!   request cancelled before it is handled, an analysis of a text that a waiting
//!   `didChange` replaces: [`inbox`]);
//! - inside the server every position is a byte offset; LSP positions (UTF-8 or UTF-16, as
//!   negotiated) exist only at the edge ([`position`]);
//! - no input panics the server: every value that comes from the client is checked, a handler
//!   that panics anyway is caught and answered with an `InternalError`, and an unknown
//!   document, a stale version or an out-of-range position gets an empty answer or an error.

mod actions;
mod completion;
mod diagnostics;
mod document;
#[doc(hidden)]
pub mod fuzzing;
mod hover;
mod inbox;
mod inlay;
mod knowledge;
mod launch_info;
mod locate;
mod navigation;
mod outline;
pub mod position;
mod semantic;
mod server;
mod settings;
mod template;
pub mod transport;

pub use server::{Control, Interruptions, NoInterruptions, Server, CACHED_ANALYSES};
pub use settings::SETTINGS;

use lsp_server::{Connection, Message};
use std::time::Duration;

/// Run the server on stdin/stdout until the client says `exit`. Returns the process exit
/// status the specification asks for: 0 after `shutdown` then `exit`, 1 for an `exit` without
/// `shutdown` (or a connection that closed first).
///
/// Frames are read by [`transport`]: a malformed or oversized frame is answered with a
/// JSON-RPC error and skipped, and the server goes on.
pub fn run_stdio() -> i32 {
    let (connection, io_threads) = transport::stdio();
    let code = serve(connection, Some(io_threads.arrivals()));
    // `serve` dropped the connection: the writer ends once everything is written. A write
    // error after the client left is moot.
    let _ = io_threads.join_writer();
    code
}

/// Run the server on `connection` until `exit` (see [`run_stdio`] for the exit status).
pub fn run(connection: Connection) -> i32 {
    serve(connection, None)
}

/// The server loop. Messages are handled in the order they arrive; before each one, every
/// message that has arrived is taken ([`inbox`]), so that a request cancelled before it is
/// handled is not run, and diagnostics wait until no message is waiting (a burst of
/// keystrokes is analysed once, at its last version) and, when configured, for `debounce`
/// of quiet.
fn serve(connection: Connection, arrivals: Option<transport::Arrivals>) -> i32 {
    let (id, params) = match connection.initialize_start() {
        Ok(x) => x,
        Err(_) => return 1,
    };
    let (mut server, result) = Server::initialize(params);
    if connection.initialize_finish(id, result).is_err() {
        return 1;
    }
    let mut out = Vec::new();
    server.initialized(&mut out);
    if send_all(&connection, &mut out).is_err() {
        return 1;
    }
    let mut inbox = inbox::Inbox::new(&connection.receiver, arrivals);
    loop {
        inbox.collect();
        let timeout = server.has_pending().then(|| server.debounce());
        let control = match inbox.next(timeout) {
            Ok(Message::Request(req)) => {
                let id = req.id.clone();
                if inbox.take_cancellation(&id) {
                    out.push(inbox::cancelled(id).into());
                    Control::Continue
                } else {
                    let control = server.handle(Message::Request(req), &mut out);
                    // Cancelled while it ran: the client asked not to get the result.
                    if inbox.take_cancellation(&id) {
                        for m in out.iter_mut() {
                            if matches!(m, Message::Response(r) if r.id == id) {
                                *m = inbox::cancelled(id.clone()).into();
                            }
                        }
                    }
                    control
                }
            }
            Ok(m) => server.handle(m, &mut out),
            Err(inbox::Empty::Timeout) => {
                server.flush_with(&mut out, &mut inbox);
                Control::Continue
            }
            Err(inbox::Empty::Disconnected) => return 1,
        };
        if send_all(&connection, &mut out).is_err() {
            return 1;
        }
        if let Control::Exit(code) = control {
            return code;
        }
    }
}

fn send_all(connection: &Connection, out: &mut Vec<Message>) -> Result<(), ()> {
    for m in out.drain(..) {
        connection.sender.send(m).map_err(|_| ())?;
    }
    Ok(())
}

/// The debounce used when the client does not configure one: none beyond waiting for the
/// queue to drain. The analysis of a 5,000-line file takes a few milliseconds
/// (docs/benchmarks.md), less than a keystroke interval, so waiting would only add latency.
pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(0);
