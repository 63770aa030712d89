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
//!   concurrency: see `DESIGN.md` on `tower-lsp`);
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

pub use server::{Control, Server, CACHED_ANALYSES};
pub use settings::SETTINGS;

use crossbeam_channel::RecvTimeoutError;
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
    let code = run(connection);
    // `run` dropped the connection: the writer ends once everything is written. A write
    // error after the client left is moot.
    let _ = io_threads.join_writer();
    code
}

/// Run the server on `connection` until `exit` (see [`run_stdio`] for the exit status).
pub fn run(connection: Connection) -> i32 {
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
    loop {
        // Diagnostics wait until no message is queued (a burst of keystrokes is analysed
        // once, at its last version) and, when configured, for `debounce` of quiet.
        let msg = if server.has_pending() {
            match connection.receiver.recv_timeout(server.debounce()) {
                Ok(m) => Some(m),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return 1,
            }
        } else {
            match connection.receiver.recv() {
                Ok(m) => Some(m),
                Err(_) => return 1,
            }
        };
        let control = match msg {
            Some(m) => server.handle(m, &mut out),
            None => {
                server.flush(&mut out);
                Control::Continue
            }
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
