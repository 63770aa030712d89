"""`fuzzlint server` skips stale work: the real binary on stdio, driven by a raw JSON-RPC client
that writes several frames in one write, as an editor does when it sends a burst of edits or a
request followed at once by its cancellation.

- Changes queued behind one another are applied before the next analysis: the diagnostics
  are published for the last version only, and never for a version older than one already
  published.
- A request cancelled (`$/cancelRequest`) before the server handled it is answered with
  `RequestCancelled` (-32800) and not run; the requests around it are answered as usual.
"""

import json
import os
import queue
import subprocess
import threading

from conftest import FUZZLINT

REQUEST_CANCELLED = -32800
WAIT = 30

URI = "file:///w/burst.fz"


def train(nproc: int) -> str:
    """A job that runs torchrun with `nproc` processes per node on 4 GPUs."""
    return f"""version: v4
jobs:
  train:
    image: {{uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}}
    command: [torchrun, --standalone, --nproc-per-node={nproc}, /opt/train.py]
    resource:
      devices: {{nvidia.com/gpu: 4}}
"""


def frame(message: dict) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    """`fuzzlint server` as a child process; every message it writes, in order."""

    def __init__(self):
        self.p = subprocess.Popen(
            [FUZZLINT, "server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        self.messages = queue.Queue()
        self.seen = []
        threading.Thread(target=self._read, daemon=True).start()
        self.request(1, "initialize", {
            "processId": None,
            "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
        })
        self.send({"method": "initialized", "params": {}})

    def _read(self):
        out = self.p.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            self.messages.put(json.loads(out.read(length)))

    def write(self, data: bytes):
        """All of `data` in one write to the server's input."""
        fd = self.p.stdin.fileno()
        while data:
            data = data[os.write(fd, data):]

    def send(self, *messages: dict):
        self.write(b"".join(frame(m) for m in messages))

    def next(self) -> dict:
        m = self.messages.get(timeout=WAIT)
        if "method" in m and "id" in m:  # a request of the server's: answered as an editor does
            self.send({"id": m["id"], "result": None})
        self.seen.append(m)
        return m

    def until(self, pred) -> dict:
        while True:
            m = self.next()
            if pred(m):
                return m

    def answer(self, id_) -> dict:
        return self.until(lambda m: m.get("id") == id_ and ("result" in m or "error" in m))

    def request(self, id_, method, params) -> dict:
        self.send({"id": id_, "method": method, "params": params})
        return self.answer(id_)

    def publications(self, uri: str):
        return [m["params"] for m in self.seen
                if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]

    def close(self):
        self.request(9999, "shutdown", None)
        self.send({"method": "exit"})
        assert self.p.wait(timeout=WAIT) == 0
        self.p.stdin.close()
        self.p.stdout.close()


def open_and_wait(s: RawServer, uri: str, text: str):
    s.send({"method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "fuzzfile", "version": 1, "text": text}}})
    s.until(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri)


def test_a_burst_of_changes_is_analysed_at_its_last_version_only():
    s = RawServer()
    open_and_wait(s, URI, train(8))
    last = 20
    # Versions 2..20, each a whole new text, in one write: all queued before the server reads.
    s.send(*({"method": "textDocument/didChange",
              "params": {"textDocument": {"uri": URI, "version": v}, "contentChanges": [{"text": train(v)}]}}
             for v in range(2, last + 1)))
    s.until(lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["version"] == last)
    # A round trip: whatever the server published before answering it has arrived.
    s.request(2, "textDocument/hover",
              {"textDocument": {"uri": URI}, "position": {"line": 0, "character": 0}})
    s.close()
    versions = [p["version"] for p in s.publications(URI)]
    assert all(a < b for a, b in zip(versions, versions[1:])), f"a publication older than one before it: {versions}"
    assert versions == [1, last], f"intermediate versions were analysed and published: {versions}"
    final = s.publications(URI)[-1]
    messages = [d["message"] for d in final["diagnostics"]]
    assert any(f"`--nproc-per-node` is {last}" in m for m in messages), messages
    assert not any("`--nproc-per-node` is 8" in m for m in messages), messages


def test_a_request_cancelled_before_it_is_handled_is_answered_request_cancelled():
    s = RawServer()
    open_and_wait(s, URI, train(8))
    # On the job's name: a hover with content.
    hover = {"textDocument": {"uri": URI}, "position": {"line": 2, "character": 3}}
    s.send(
        {"id": 10, "method": "textDocument/hover", "params": hover},
        {"method": "$/cancelRequest", "params": {"id": 10}},
        # A cancellation of a request the server never got changes nothing.
        {"method": "$/cancelRequest", "params": {"id": 77}},
        {"id": "eleven", "method": "textDocument/hover", "params": hover},
    )
    cancelled = s.answer(10)
    assert "result" not in cancelled, cancelled
    assert cancelled["error"]["code"] == REQUEST_CANCELLED, cancelled
    answered = s.answer("eleven")
    assert "job `train`" in answered["result"]["contents"]["value"], answered
    # Cancelling a request already answered changes nothing either.
    s.send({"method": "$/cancelRequest", "params": {"id": "eleven"}})
    again = s.request(12, "textDocument/hover", hover)
    assert again["result"]["contents"]["value"] == answered["result"]["contents"]["value"]
    s.close()
