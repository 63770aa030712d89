"""The Helix files in editors/helix: languages.toml is valid TOML naming the server and the
grammar, and the queries compile against tree-sitter-yaml (the grammar Helix uses for YAML)
and capture what they should in a Fuzzfile.

Run: python3 -m pytest -q tests/grammar/test_helix.py (tree-sitter and tree-sitter-yaml from
tests/grammar/requirements.txt).
"""

import pathlib
import re
import tomllib

import pytest

tree_sitter = pytest.importorskip("tree_sitter")
tree_sitter_yaml = pytest.importorskip("tree_sitter_yaml")

ROOT = pathlib.Path(__file__).resolve().parents[2]
HELIX = ROOT / "editors" / "helix"
QUERIES = HELIX / "runtime" / "queries" / "fuzzfile"
YAML = tree_sitter.Language(tree_sitter_yaml.language())

FUZZFILE = b"""\
version: v4
jobs:
  prepare:
    image: {uri: docker://alpine:3.20}
    command: [/bin/sh, -c, "echo ready && date"]
  image:
    image:
      uri: docker://alpine:3.20
    command:
      - bash
      - '-c'
      - >-
        cd /opt &&
        ./run.sh
    depends-on:
      - name: prepare
      - {name: cache, status: RUNNING}
    requires: [prepare]
    script: |
      #!/bin/sh
      echo $HOME
  plain:
    command: [python3, -c, "print(1)"]
services:
  cache:
    image: {uri: docker://redis:7}
"""


def query(name: str) -> "tree_sitter.Query":
    text = (QUERIES / name).read_text()
    # Helix replaces `; inherits: yaml` with YAML's own query; the rest must stand alone.
    return tree_sitter.Query(YAML, text)


def captures(name: str) -> dict[str, list[str]]:
    tree = tree_sitter.Parser(YAML).parse(FUZZFILE)
    out: dict[str, list[str]] = {}
    cursor = tree_sitter.QueryCursor(query(name))
    for _, caps in cursor.matches(tree.root_node):
        for cap, nodes in caps.items():
            for node in nodes:
                out.setdefault(cap, []).append(node.text.decode())
    return out


def test_languages_toml_names_the_server_and_the_grammar():
    config = tomllib.loads((HELIX / "languages.toml").read_text())
    (language,) = config["language"]
    assert language["name"] == "fuzzfile"
    assert language["grammar"] == "yaml"
    assert language["language-servers"] == ["fuzzlint"]
    assert "fz" in language["file-types"]
    globs = {t["glob"] for t in language["file-types"] if isinstance(t, dict)}
    # The template names fuzzlint decides by (ARCHITECTURE.md, application templates).
    assert {"template.yaml", "*.template.yaml", "*.template.yml", "*.template.fz"} <= globs
    server = config["language-server"]["fuzzlint"]
    assert server["command"] == "fuzzlint" and server["args"] == ["server"]
    # The query folder is the language's name, as Helix looks it up.
    assert QUERIES.name == language["name"]


def test_injections_put_the_shell_in_script_and_after_sh_c():
    got = captures("injections.scm")
    content = got["injection.content"]
    assert '"echo ready && date"' in content
    assert any(c.startswith(">-") and "./run.sh" in c for c in content)
    assert any(c.startswith("|") and "echo $HOME" in c for c in content)
    # python3 -c is not a shell.
    assert '"print(1)"' not in content
    assert len(content) == 3


def test_highlights_scope_keys_names_and_references():
    got = captures("highlights.scm")
    keywords = got["keyword"]
    for key in ("version", "jobs", "image", "uri", "command", "depends-on", "script", "status"):
        assert key in keywords, key
    # Job and service names (a job may be named like a key), and references to them.
    functions = got["function"]
    for name in ("prepare", "image", "plain", "cache"):
        assert name in functions, name
    assert functions.count("prepare") >= 3  # the job, `name: prepare`, `requires: [prepare]`
    assert "requires" in got["warning"]


def test_every_capture_is_a_helix_theme_scope_or_private():
    # Helix ignores captures it does not know; a typo would silently colour nothing.
    known = {"keyword", "function", "warning", "injection.content", "injection.language"}
    for name in ("highlights.scm", "injections.scm"):
        for cap in re.findall(r"@([\w.]+)", (QUERIES / name).read_text()):
            assert cap.startswith("_") or cap in known, (name, cap)
