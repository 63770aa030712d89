"""`fuzzlint server` keeps each job's findings between edits and re-checks only the jobs an edit
can change (fuzzfile_check::task_cache). What an editor shows must not depend on it: after each
edit of a sequence typed into one document (incremental changes, as VS Code sends them), the
diagnostics published for it equal those of the same text opened fresh under another URI, whose
analysis starts with nothing kept.

The document is a real one: Fuzzball's own multi-job examples from the corpus (jobs with
dependencies, a multinode launcher job), with findings a person fixes by typing.
"""

import pathlib

from conftest import ROOT
from test_stale_work import RawServer, open_and_wait

CORPUS = ROOT.parent / "shared" / "corpus"

# Edits as a person types them: each replaces the first occurrence of the left text by the right
# one in the text as it is (or its `nth` occurrence, from 0, where a third element says so), as
# one incremental change.
EDITS = [
    ("command: [", "command: [ "),  # a space typed inside a job
    ("nproc-per-node=8", "nproc-per-node=4"),  # a launcher argument changed
    ("nproc-per-node=4", "nproc-per-node=2"),
    ("status: FINISHED", "status: RUNNING"),  # a dependency on a job that is never RUNNING
    ("  prep:", "  prepare:"),  # the job a dependency names renamed
    ("name: prep\n", "name: prepare\n"),  # and the dependency following it
    ("# a comment", "# a comment, longer"),  # a comment between two jobs
    ("NCCL_DEBUG=WARN", "NCCL_DEBUG=INFO"),  # the defaults every job reads
    ("status: RUNNING", "status: FINISHED"),
]

DOCUMENT = """version: v4
defaults:
  job:
    env:
      - NCCL_DEBUG=WARN
jobs:
  prep:
    image: {uri: docker://alpine:3.20}
    command: [echo, ready]
  # a comment
  train:
    image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}
    depends-on:
      - name: prep
        status: FINISHED
    multinode:
      nodes: 2
      implementation: generic
    command: [torchrun, --nnodes=2, --nproc-per-node=8, /opt/train.py]
    resource:
      devices: {nvidia.com/gpu: 4}
  report:
    image: {uri: docker://alpine:3.20}
    depends-on:
      - name: train
    command: [echo, done]
"""


def position(text: str, offset: int) -> dict:
    """The LSP position (UTF-16 columns) of `offset` in `text`."""
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    return {"line": line, "character": len(text[start:offset].encode("utf-16-le")) // 2}


def published(s: RawServer, uri: str, version: int) -> list:
    """The diagnostics published for `uri` at `version`, without the URI-dependent parts."""
    m = s.until(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == uri and m["params"].get("version") == version)
    return sorted(
        (d["range"]["start"]["line"], d["range"]["start"]["character"], d["range"]["end"]["line"],
         d["range"]["end"]["character"], d.get("code"), d["message"])
        for d in m["params"]["diagnostics"]
    )


def fresh(s: RawServer, text: str, n: int) -> list:
    uri = f"file:///w/fresh-{n}.fz"
    s.send({"method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "fuzzfile", "version": 1, "text": text}}})
    diagnostics = published(s, uri, 1)
    s.send({"method": "textDocument/didClose", "params": {"textDocument": {"uri": uri}}})
    return diagnostics


def edit_and_compare(text: str, edits):
    s = RawServer()
    uri = "file:///w/edited.fz"
    open_and_wait(s, uri, text)
    changed = 0
    for n, (old, new, *nth) in enumerate(edits):
        at = -1
        for _ in range((nth or [0])[0] + 1):
            at = text.find(old, at + 1)
            if at < 0:
                break
        if at < 0:
            continue
        change = {"range": {"start": position(text, at), "end": position(text, at + len(old))}, "text": new}
        text = text[:at] + new + text[at + len(old):]
        version = n + 2
        s.send({"method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}})
        kept = published(s, uri, version)
        assert kept == fresh(s, text, n), f"after edit {n} ({old!r} -> {new!r})"
        changed += 1
    s.close()
    return changed


def test_an_edited_document_shows_what_the_same_text_opened_fresh_shows():
    assert edit_and_compare(DOCUMENT, EDITS) == len(EDITS)


def test_corpus_documents_edited_job_by_job():
    files = sorted((CORPUS / "plain").glob("*.fz")) + sorted((CORPUS / "docs").glob("*.fz"))
    files = [f for f in files if f.read_text().count("image:") > 1]
    assert files, f"multi-job Fuzzfiles in {CORPUS}"
    for path in files:
        text = path.read_text()
        # In every job: a space typed after its `image:`, then a line of the first job
        # duplicated.
        edits = []
        for i in range(text.count("image:")):
            edits.append(("image:", "image: ", i))
        lines = [l for l in text.splitlines(keepends=True) if l.startswith("    ") and ":" in l]
        if lines:
            edits.append((lines[0], lines[0] + lines[0]))
        assert edit_and_compare(text, edits) > 0, path
