"""System tests of `fuzzlint server`: the binary on stdio, a real LSP client (pytest-lsp),
the capabilities of real editors. Each test checks what an editor would show or apply."""

import asyncio
import json
import pathlib
import subprocess

from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import FUZZLINT, ROOT

# Non-ASCII text before every finding: a wrong position encoding moves every range.
TRAIN = """# Entraînement réparti 🚀 sur deux nœuds
version: v4
jobs:
  prep:
    image: {uri: docker://alpine:3.20}
    command: [echo, "préparé ✓"]
  train:
    image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}
    depends-on:
      - name: prep
    env:
      - NCCL_DEBUG=WARN
    command: [torchrun, --standalone, --nproc-per-node=8, /opt/train.py]
    resource:
      devices: {nvidia.com/gpu: 4}
    polcy:
      timeout: {execute: 1h}
"""

URI = "file:///w/train.fz"


def position(text: str, offset: int, encoding: str = "utf-16") -> types.Position:
    line = text.count("\n", 0, offset)
    start = text.rfind("\n", 0, offset) + 1
    before = text[start:offset]
    if encoding == "utf-8":
        col = len(before.encode("utf-8"))
    else:
        col = len(before.encode("utf-16-le")) // 2
    return types.Position(line=line, character=col)


def at(text: str, needle: str, delta: int = 0, enc: str = "utf-16") -> types.Position:
    i = text.index(needle)
    return position(text, i + delta, enc)


def offset(text: str, pos: types.Position, encoding: str = "utf-16") -> int:
    lines = text.split("\n")
    start = sum(len(l) + 1 for l in lines[: pos.line])
    line = lines[pos.line]
    if encoding == "utf-8":
        prefix = line.encode("utf-8")[: pos.character].decode("utf-8")
    else:
        prefix = line.encode("utf-16-le")[: 2 * pos.character].decode("utf-16-le")
    return start + len(prefix)


def covered(text: str, r: types.Range, encoding: str = "utf-16") -> str:
    return text[offset(text, r.start, encoding) : offset(text, r.end, encoding)]


def open_doc(client: LanguageClient, text: str, uri: str = URI, version: int = 1, language: str = "fuzzfile"):
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
        )
    )


async def diagnostics(client: LanguageClient, uri: str = URI):
    """The document's diagnostics as the editor gets them: pulled by Neovim, pushed to VS
    Code."""
    if client.editor.startswith("neovim"):
        report = await client.text_document_diagnostic_async(
            types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        return report.items
    for _ in range(200):
        if uri in client.diagnostics:
            return client.diagnostics.pop(uri)
        await asyncio.wait_for(client.wait_for_notification("textDocument/publishDiagnostics"), 20)
    raise AssertionError("no diagnostics published")


def cli_findings(text: str, tmp_path: pathlib.Path):
    """The codes `fuzzlint check` reports for the same text (the CI view)."""
    path = tmp_path / "check.fz"
    path.write_text(text)
    out = subprocess.run([FUZZLINT, "check", "--format", "json", str(path)], capture_output=True)
    return [d["code"] for d in json.loads(out.stdout)["diagnostics"]]


async def test_diagnostics_carry_code_link_and_exact_ranges(client: LanguageClient):
    # UTF-8 where the editor offers it, else UTF-16.
    assert client.enc == ("utf-8" if client.editor == "neovim@v0.11.0" else "utf-16")
    open_doc(client, TRAIN)
    items = await diagnostics(client)
    shown = [(d.code, covered(TRAIN, d.range, client.enc)) for d in items]
    assert shown == [("FZ201", "8"), ("FZ010", "polcy")], shown
    for d in items:
        assert d.source == "fuzzlint"
        assert d.code_description.href.endswith(".md")
        assert "/docs/rules/" in d.code_description.href
    assert items[0].severity == types.DiagnosticSeverity.Error


async def test_incremental_edits_then_diagnostics(client: LanguageClient):
    open_doc(client, TRAIN)
    await diagnostics(client)
    text = TRAIN
    changes = []
    # Fix the typo and the process count, and touch the emoji, in one notification.
    for needle, delta, length, insert in [("polcy", 3, 0, "i"), ("=8", 1, 1, "4"), ("🚀", 0, 1, "⚡")]:
        i = text.index(needle) + delta
        r = types.Range(start=position(text, i, client.enc), end=position(text, i + length, client.enc))
        changes.append(types.TextDocumentContentChangePartial(range=r, text=insert))
        text = text[:i] + insert + text[i + length :]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=URI, version=2),
            content_changes=changes,
        )
    )
    items = await diagnostics(client)
    assert list(items) == [], [(d.code, d.message) for d in items]
    # The server holds the client's text: hover on the renamed key finds `policy`.
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=URI), position=at(text, "policy:", 2, enc=client.enc))
    )
    assert "**`policy`**" in hover.contents.value


async def test_utf8_positions(utf8_client: LanguageClient):
    client = utf8_client
    assert client.init_result.capabilities.position_encoding == "utf-8"
    open_doc(client, TRAIN)
    await client.wait_for_notification("textDocument/publishDiagnostics")
    items = client.diagnostics[URI]
    assert [covered(TRAIN, d.range, "utf-8") for d in items] == ["8", "polcy"]
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            position=at(TRAIN, "NCCL_DEBUG", 2, "utf-8"),
        )
    )
    assert "NCCL log level" in hover.contents.value
    assert covered(TRAIN, hover.range, "utf-8") == "NCCL_DEBUG"


async def test_hover_completion_and_navigation(client: LanguageClient):
    open_doc(client, TRAIN)
    await diagnostics(client)
    doc = types.TextDocumentIdentifier(uri=URI)
    # Hover on a job: the launch summary.
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc, position=at(TRAIN, "train:", 1, enc=client.enc)))
    assert "job `train`: 1 node × 4 GPUs" in hover.contents.value
    assert "world size 8 (1 × 8)" in hover.contents.value
    # Hover on a finding: its rule.
    hover = await client.text_document_hover_async(types.HoverParams(text_document=doc, position=at(TRAIN, "=8", 1, enc=client.enc)))
    assert "launcher-nproc-mismatch" in hover.contents.value
    # Completion of a depends-on name: the other job.
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=doc, position=at(TRAIN, "name: prep", len("name: pr"), enc=client.enc))
    )
    items = result if isinstance(result, list) else result.items
    assert [i.label for i in items] == ["prep"]
    # Definition of the reference, and references of the job.
    loc = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc, position=at(TRAIN, "name: prep", 7, enc=client.enc))
    )
    loc = loc[0] if isinstance(loc, list) else loc
    assert covered(TRAIN, loc.range, client.enc) == "prep" and loc.range.start.line == 3
    refs = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=doc,
            position=at(TRAIN, "prep:", 1, enc=client.enc),
            context=types.ReferenceContext(include_declaration=True),
        )
    )
    assert sorted(r.range.start.line for r in refs) == [3, 9]


async def test_rename_and_code_actions_apply_cleanly(client: LanguageClient, tmp_path):
    open_doc(client, TRAIN)
    await diagnostics(client)
    doc = types.TextDocumentIdentifier(uri=URI)
    edit = await client.text_document_rename_async(
        types.RenameParams(text_document=doc, position=at(TRAIN, "prep:", 1, enc=client.enc), new_name="setup")
    )
    renamed = apply(TRAIN, edit, client.enc)
    assert "  setup:\n" in renamed and "- name: setup" in renamed
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc,
            range=types.Range(start=at(TRAIN, "=8", 1, enc=client.enc), end=at(TRAIN, "=8", 2, enc=client.enc)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    titles = [a.title for a in actions]
    # Changing the launch changes what runs: an unsafe fix, offered with its safety in the title.
    assert titles == ["Set `--nproc-per-node` to 4 (unsafe)", "Suppress `launcher-nproc-mismatch` on this line"], titles
    assert not actions[0].is_preferred
    fixed = apply(TRAIN, actions[0].edit, client.enc)
    assert "--nproc-per-node=4" in fixed
    suppressed = apply(TRAIN, actions[1].edit, client.enc)
    assert "# fuzzlint: ignore[launcher-nproc-mismatch]" in suppressed
    # Each result, analysed by the CLI, no longer has the finding.
    assert "FZ201" in cli_findings(TRAIN, tmp_path)
    assert "FZ201" not in cli_findings(fixed, tmp_path)
    assert "FZ201" not in cli_findings(suppressed, tmp_path)


def apply(text: str, edit: types.WorkspaceEdit, enc: str) -> str:
    if edit.document_changes:
        edits = [e for dc in edit.document_changes for e in dc.edits]
    else:
        edits = [e for es in edit.changes.values() for e in es]
    spans = sorted(((offset(text, e.range.start, enc), offset(text, e.range.end, enc), e.new_text) for e in edits), reverse=True)
    for s, e, t in spans:
        text = text[:s] + t + text[e:]
    return text


async def test_outline_and_inlay_hints(client: LanguageClient):
    text = (ROOT / "examples" / "nccl-torchrun-generic.fz").read_text()
    uri = "file:///w/generic.fz"
    open_doc(client, text, uri)
    await diagnostics(client, uri)
    doc = types.TextDocumentIdentifier(uri=uri)
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc))
    assert [(s.name, [c.name for c in s.children or []]) for s in symbols] == [
        ("jobs", ["nccl-torchrun"]),
        ("files", ["allreduce.py"]),
    ]
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=doc,
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=200, character=0)),
        )
    )
    labels = [h.label for h in hints]
    assert labels == ["world size 8"], labels
    folds = await client.text_document_folding_range_async(types.FoldingRangeParams(text_document=doc))
    assert any(f.start_line == 16 for f in folds)


async def test_yaml_that_is_not_a_fuzzfile_is_left_alone(client: LanguageClient):
    uri = "file:///w/ci.yaml"
    open_doc(client, "name: build\non: push\n", uri, language="yaml")
    if client.editor.startswith("neovim"):
        assert list(await diagnostics(client, uri)) == []
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=1))
    )
    assert hover is None
    assert uri not in client.diagnostics


async def test_hover_on_exec_all_and_on_a_job_key(client: LanguageClient):
    # What the word or key is comes first; the note that cluster checks are off after it.
    text = (ROOT / "examples" / "nccl-torchrun-generic.fz").read_text()
    uri = "file:///w/generic.fz"
    open_doc(client, text, uri)
    await diagnostics(client, uri)
    doc = types.TextDocumentIdentifier(uri=uri)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=at(text, "exec_all torchrun", 3, enc=client.enc))
    )
    assert hover.contents.value.startswith("**`exec_all`**"), hover.contents.value
    assert "starts `torchrun` on each of the 2 nodes" in hover.contents.value
    assert covered(text, hover.range, client.enc) == "exec_all"
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=at(text, "nccl-torchrun:", 3, enc=client.enc))
    )
    assert hover.contents.value.startswith("job `nccl-torchrun`: 2 nodes × 4 GPUs"), hover.contents.value


async def test_completion_ranks_deprecated_nccl_variables_last(client: LanguageClient):
    text = "version: v4\njobs:\n  a:\n    image: {uri: docker://alpine:3.20}\n    command: [true]\n    env:\n      - NCCL_\n"
    uri = "file:///w/env.fz"
    open_doc(client, text, uri)
    await diagnostics(client, uri)
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=at(text, "NCCL_\n", 5, enc=client.enc)
        )
    )
    items = result if isinstance(result, list) else result.items
    # As an editor orders them: by sortText, else by label.
    shown = sorted(items, key=lambda i: i.sort_text or i.label)
    deprecated = ["NCCL_ASYNC_ERROR_HANDLING", "NCCL_BLOCKING_WAIT", "NCCL_DESYNC_DEBUG"]
    assert [i.label for i in shown[-3:]] == deprecated, [i.label for i in shown]
    for i in shown[-3:]:
        assert list(i.tags) == [types.CompletionItemTag.Deprecated]
    assert all(not i.tags for i in shown[:-3])


async def test_mnnvl_quick_fix_pins_the_product_as_the_cli_does(client: LanguageClient, tmp_path):
    # fuzzlint.toml next to the document names a Multi-Node NVLink cluster where IMEX runs.
    (tmp_path / "nvl72.toml").write_text(
        'gpus-per-node = 4\ngpu-product = "GB200"\nfabric = "infiniband"\nib-hcas = ["mlx5_0"]\n'
        'mnnvl = true\nimex = true\n[nccl-defaults]\nNCCL_IB_HCA = "mlx5"\n'
    )
    (tmp_path / "fuzzlint.toml").write_text('cluster = "nvl72.toml"\n')
    text = (
        "version: v4\njobs:\n  train:\n    image: {uri: docker://nvcr.io/nvidia/pytorch:25.01-py3}\n"
        "    script: |\n      #!/bin/sh\n      exec_all torchrun --nnodes 2 --nproc-per-node 4 --node-rank '$RANK' "
        '--master-addr "$MULTINODE_NODE_IP" x.py\n'
        "    multinode: {nodes: 2, implementation: generic}\n    resource:\n      devices: {nvidia.com/gpu: 4}\n"
    )
    path = tmp_path / "train.fz"
    path.write_text(text)
    uri = path.as_uri()
    open_doc(client, text, uri)
    items = await diagnostics(client, uri)
    assert "FZ302" in [d.code for d in items], [d.code for d in items]
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(start=at(text, "train:", 0, enc=client.enc), end=at(text, "train:", 1, enc=client.enc)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    # An unsafe fix (it changes the job's placement): offered, never preferred.
    fix = next(a for a in actions if a.diagnostics and a.diagnostics[0].code == "FZ302" and "Add" in a.title)
    assert not fix.is_preferred
    assert fix.title == "Add `NVIDIA_IMEX_CHANNELS=0` to `env` and pin job `train` to `GB200` nodes (unsafe)"
    fixed = apply(text, fix.edit, client.enc)
    # What `fuzzlint check --fix` writes, and it is clean of both IMEX findings.
    subprocess.run([FUZZLINT, "check", "--fix", str(path)], capture_output=True)
    assert text == path.read_text(), "--fix alone applies safe fixes only"
    subprocess.run([FUZZLINT, "check", "--fix", "--unsafe-fixes", str(path)], capture_output=True)
    assert fixed == path.read_text()
    out = subprocess.run([FUZZLINT, "check", "--format", "json", str(path)], capture_output=True)
    codes = [d["code"] for d in json.loads(out.stdout)["diagnostics"]]
    assert "FZ302" not in codes and "FZ303" not in codes, codes
