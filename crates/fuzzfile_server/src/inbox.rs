//! The messages that arrived and are not handled yet, looked ahead of the one being handled,
//! so that stale work is skipped:
//!
//! - a request whose `$/cancelRequest` arrived before it was handled is answered with
//!   `RequestCancelled` (`-32800`) and not run; one cancelled while it ran is answered with
//!   `RequestCancelled` too (its work is done, its result dropped: the client asked not to
//!   get it);
//! - an analysis for diagnostics does not start while a message is waiting (a `didChange`
//!   behind it would make it stale), and its diagnostics are not published when a change to
//!   the same document arrived while it ran: they are published for the latest text, after
//!   the change is applied.
//!
//! "Arrived" means delivered by the reader, being delivered, or with its bytes already read
//! ([`Arrivals`]): a burst written at once by the client is taken whole before the next
//! analysis.

use crate::server::Interruptions;
use crate::transport::{Arrivals, InFlight};
use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};
use lsp_server::{ErrorCode, Message, RequestId, Response, ResponseError};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The most messages taken ahead of the one being handled (the reader keeps more ready:
/// `transport::READ_AHEAD`).
pub const LOOK_AHEAD: usize = 256;

/// How long the server waits for a frame whose bytes have arrived before it analyses
/// anyway (a client that stopped in the middle of a frame).
pub const FRAME_WAIT: Duration = Duration::from_millis(50);

/// JSON-RPC error of a request cancelled by the client (LSP's `RequestCancelled`).
pub const REQUEST_CANCELLED: i32 = ErrorCode::RequestCanceled as i32;

pub struct Inbox<'a> {
    receiver: &'a Receiver<Message>,
    arrivals: Option<Arrivals>,
    queue: VecDeque<Message>,
    disconnected: bool,
}

/// Why no message could be had.
#[derive(Debug, PartialEq, Eq)]
pub enum Empty {
    /// None arrived within the time given.
    Timeout,
    /// The connection closed.
    Disconnected,
}

impl<'a> Inbox<'a> {
    pub fn new(receiver: &'a Receiver<Message>, arrivals: Option<Arrivals>) -> Inbox<'a> {
        Inbox {
            receiver,
            arrivals,
            queue: VecDeque::new(),
            disconnected: false,
        }
    }

    /// Take every message that has arrived: those delivered, and a frame whose bytes are
    /// already read (waiting at most [`FRAME_WAIT`] for it).
    pub fn collect(&mut self) {
        let mut waited_since: Option<Instant> = None;
        while self.queue.len() < LOOK_AHEAD && !self.disconnected {
            match self.receiver.try_recv() {
                Ok(m) => {
                    self.push(m);
                    continue;
                }
                Err(TryRecvError::Disconnected) => {
                    self.disconnected = true;
                    return;
                }
                Err(TryRecvError::Empty) => {}
            }
            let in_flight = match &self.arrivals {
                Some(a) => a.in_flight(),
                None => InFlight::Nothing,
            };
            if in_flight == InFlight::Nothing {
                // Once more: a message delivered since the first look is in the channel.
                match self.receiver.try_recv() {
                    Ok(m) => {
                        self.push(m);
                        continue;
                    }
                    Err(TryRecvError::Disconnected) => self.disconnected = true,
                    Err(TryRecvError::Empty) => {}
                }
                return;
            }
            let since = *waited_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= FRAME_WAIT {
                return;
            }
            // In short steps, looking again after each: a message being delivered comes at
            // once (or was taken already, and the reader has yet to count it as delivered);
            // the reader clears the flag when the bytes it has end before a whole frame and it
            // waits for the client.
            let step = match in_flight {
                InFlight::Message => Duration::from_micros(200),
                _ => Duration::from_millis(1),
            };
            match self.receiver.recv_timeout(step) {
                Ok(m) => self.push(m),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => self.disconnected = true,
            }
        }
    }

    fn push(&mut self, m: Message) {
        self.queue.push_back(m);
    }

    /// The next message, within `timeout` (`None`: as long as it takes).
    pub fn next(&mut self, timeout: Option<Duration>) -> Result<Message, Empty> {
        if let Some(m) = self.queue.pop_front() {
            return Ok(m);
        }
        if self.disconnected {
            return Err(Empty::Disconnected);
        }
        let got = match timeout {
            None => self.receiver.recv().map_err(|_| Empty::Disconnected),
            Some(t) => self.receiver.recv_timeout(t).map_err(|e| match e {
                RecvTimeoutError::Timeout => Empty::Timeout,
                RecvTimeoutError::Disconnected => Empty::Disconnected,
            }),
        };
        if matches!(got, Err(Empty::Disconnected)) {
            self.disconnected = true;
        }
        got
    }

    /// Whether a `$/cancelRequest` for `id` has arrived; it is taken out of the queue.
    pub fn take_cancellation(&mut self, id: &RequestId) -> bool {
        self.collect();
        let found = self.queue.iter().position(|m| cancels(m, id));
        if let Some(i) = found {
            self.queue.remove(i);
        }
        found.is_some()
    }
}

impl Interruptions for Inbox<'_> {
    fn message_waiting(&mut self) -> bool {
        self.collect();
        !self.queue.is_empty()
    }

    fn document_changed(&mut self, uri: &str) -> bool {
        self.collect();
        self.queue.iter().any(|m| match m {
            Message::Notification(n)
                if n.method == "textDocument/didChange" || n.method == "textDocument/didClose" =>
            {
                n.params["textDocument"]["uri"].as_str() == Some(uri)
            }
            _ => false,
        })
    }
}

/// Whether `m` is a `$/cancelRequest` for `id`.
fn cancels(m: &Message, id: &RequestId) -> bool {
    let Message::Notification(n) = m else {
        return false;
    };
    if n.method != "$/cancelRequest" {
        return false;
    }
    // The id as the client sent it (a number or a string), compared as a request id.
    serde_json::from_value::<RequestId>(n.params["id"].clone()).is_ok_and(|c| &c == id)
}

/// The answer to a cancelled request.
pub fn cancelled(id: RequestId) -> Response {
    Response {
        id,
        response_result: Err(ResponseError {
            code: REQUEST_CANCELLED,
            message: "the request was cancelled".into(),
            data: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_server::{Notification, Request};
    use serde_json::json;

    fn note(method: &str, params: serde_json::Value) -> Message {
        Notification::new(method.into(), params).into()
    }

    #[test]
    fn a_cancellation_is_found_by_the_id_as_sent_and_taken_once() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut inbox = Inbox::new(&rx, None);
        tx.send(note("$/cancelRequest", json!({"id": 7})))
            .expect("send");
        tx.send(note("$/cancelRequest", json!({"id": "a"})))
            .expect("send");
        tx.send(Request::new(RequestId::from(8), "x".into(), json!(null)).into())
            .expect("send");
        assert!(!inbox.take_cancellation(&RequestId::from(8)));
        assert!(!inbox.take_cancellation(&RequestId::from("7".to_owned())));
        assert!(inbox.take_cancellation(&RequestId::from(7)));
        assert!(!inbox.take_cancellation(&RequestId::from(7)));
        assert!(inbox.take_cancellation(&RequestId::from("a".to_owned())));
        // The request itself is still there, in order.
        assert!(
            matches!(inbox.next(Some(Duration::ZERO)), Ok(Message::Request(r)) if r.id == RequestId::from(8))
        );
        assert_eq!(inbox.next(Some(Duration::ZERO)).err(), Some(Empty::Timeout));
        drop(tx);
        assert_eq!(inbox.next(None).err(), Some(Empty::Disconnected));
    }

    #[test]
    fn a_change_or_close_of_the_same_document_interrupts() {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut inbox = Inbox::new(&rx, None);
        assert!(!inbox.message_waiting());
        tx.send(note(
            "textDocument/didChange",
            json!({"textDocument": {"uri": "file:///a.fz", "version": 2}, "contentChanges": []}),
        ))
        .expect("send");
        assert!(inbox.message_waiting());
        assert!(inbox.document_changed("file:///a.fz"));
        assert!(!inbox.document_changed("file:///b.fz"));
        tx.send(note(
            "textDocument/didClose",
            json!({"textDocument": {"uri": "file:///b.fz"}}),
        ))
        .expect("send");
        assert!(inbox.document_changed("file:///b.fz"));
    }
}
