"""`fuzzlint server` in application templates, the real binary on stdio under a real client
(VS Code 1.65, Neovim 0.10 and 0.11 capabilities): the template's findings at template
positions (the same as `fuzzlint check` on the same files), hover, completion and go to
definition of values inside `{{ }}`, and an edit of the values file re-checking the
template."""

import asyncio
import json
import pathlib
import subprocess

from lsprotocol import types
from pytest_lsp import LanguageClient

from conftest import FUZZLINT
from test_server import at, covered, diagnostics, offset, open_doc

TEMPLATE = """{{- $img := default "docker://alpine:3.20" .Image }}
# Modèle d'application 🚀
version: v4
jobs:
  work:
    image:
      uri: {{ $img }}
    command: [/bin/sh, -c, "echo {{ .Greeting }} {{ .Nope }}"]
    resource:
      cpu:
        cores: {{ .Cores }}
      memory:
        size: {{ .Memory }}
    polcy:
      timeout: {execute: 1h}
"""

VALUES = """values:
  - name: Greeting
    display_name: What the job says
    string_value: hello
  - name: Cores
    display_name: CPU cores
    uint_value: 4
  - name: Memory
    display_name: Memory of the job
    string_value: 1GiB
  - name: Image
    display_name: Container image
    string_value: ""
  - name: Scope
    display_name: Who sees it
    string_value: user
"""


def project(tmp_path: pathlib.Path):
    t = tmp_path / "app.template.yaml"
    v = tmp_path / "app.values.yaml"
    t.write_text(TEMPLATE)
    v.write_text(VALUES)
    return t, v


def cli(template: pathlib.Path):
    """What `fuzzlint check` reports for the template: (code, line, column) 1-based."""
    out = subprocess.run([FUZZLINT, "check", "--format", "json", str(template)], capture_output=True)
    return sorted(
        (d["code"], d["range"]["start"]["line"], d["range"]["start"]["column"])
        for d in json.loads(out.stdout)["diagnostics"]
        if d["file"] == str(template)
    )


async def template_diagnostics(client: LanguageClient, uri: str, until=lambda items: True):
    """The template's diagnostics once `until` holds (a push may still be in flight)."""
    for _ in range(50):
        items = list(await diagnostics(client, uri))
        if until(items):
            return items
        await asyncio.sleep(0.05)
    raise AssertionError(f"diagnostics never satisfied the condition: {items}")


async def test_template_in_the_editor(client: LanguageClient, tmp_path):
    t, v = project(tmp_path)
    uri, values_uri = t.as_uri(), v.as_uri()
    enc = client.enc
    open_doc(client, TEMPLATE, uri, language="yaml")
    items = await template_diagnostics(client, uri)
    shown = [(d.code, covered(TEMPLATE, d.range, enc)) for d in items]
    assert shown == [("FZ053", ".Nope"), ("FZ010", "polcy")], shown
    # The command line reports the same findings at the same places (1-based, characters).
    def line_col(pos):
        o = offset(TEMPLATE, pos, enc)
        return pos.line + 1, o - (TEMPLATE.rfind("\n", 0, o) + 1) + 1

    ours = sorted((d.code, *line_col(d.range.start)) for d in items)
    assert ours == cli(t), (ours, cli(t))

    doc = types.TextDocumentIdentifier(uri=uri)
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=at(TEMPLATE, "{{ .Cores", 5, enc=enc))
    )
    assert hover.contents.value.startswith("**`.Cores`**: CPU cores")
    assert "`uint_value` (unsigned integer), default `4`" in hover.contents.value
    assert f"{v}:5:11" in hover.contents.value
    assert covered(TEMPLATE, hover.range, enc) == "Cores"

    loc = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc, position=at(TEMPLATE, "{{ .Memory", 5, enc=enc))
    )
    loc = loc[0] if isinstance(loc, list) else loc
    assert loc.uri == values_uri
    assert covered(VALUES, loc.range, enc) == "Memory"

    # Completion of value names after `{{ .`, at the end of a line being typed.
    typing = TEMPLATE + "{{ .C"
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=typing)],
        )
    )
    end = types.Position(line=typing.count("\n"), character=len("{{ .C"))
    result = await client.text_document_completion_async(types.CompletionParams(text_document=doc, position=end))
    items = result if isinstance(result, list) else result.items
    assert [i.label for i in items] == ["Greeting", "Cores", "Memory", "Image", "Scope"]
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=TEMPLATE)],
        )
    )

    # The values file, edited and not saved: the template is checked with the editor's text.
    open_doc(client, VALUES, values_uri, language="yaml")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=values_uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=VALUES.replace("1GiB", "lots"))],
        )
    )
    items = await template_diagnostics(client, uri, lambda items: any(d.code == "FZ011" for d in items))
    bad = [d for d in items if d.code == "FZ011"][0]
    assert covered(TEMPLATE, bad.range, enc) == "{{ .Memory }}"
    assert "(from value `Memory`" in bad.message
