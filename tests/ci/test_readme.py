"""The README as a newcomer reads it: every file and directory its command examples read is in
the repository (outputs such as `-o plan.json` excepted), and its Layout table names only what
exists and covers every top-level entry, crate and test suite of the repository."""

from __future__ import annotations

import re
import shlex
import subprocess

from conftest import ROOT

README = (ROOT / "README.md").read_text()

# Options whose value is written, not read.
OUTPUTS = {"-o", "--output-file", "--events", "--workdir"}


def commands() -> list[str]:
    lines = []
    for block in re.findall(r"```console\n(.*?)```", README, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                lines.append(line[2:])
    return lines


def read_paths(command: str) -> list[str]:
    """The paths a command line reads: arguments that look like paths (a `/`, or a Fuzzfile,
    YAML, TOML or JSON name), not the values of output options, not what follows `>`, not a
    file an earlier command of the same line wrote."""
    command = command.split(" #", 1)[0]
    written: set[str] = set()
    paths = []
    for part in re.split(r"&&|\|", command):
        part = part.split(">", 1)[0]
        part = part.replace("<", " ")
        words = shlex.split(part)
        skip_next = False
        for i, w in enumerate(words):
            if skip_next:
                written.add(w)
                skip_next = False
                continue
            if w in OUTPUTS:
                skip_next = True
                continue
            if w.startswith("-") or "=" in w or w in written:
                continue
            if "/" in w or re.search(r"\.(fz|ya?ml|toml|json)$", w):
                paths.append(w)
    return paths


def test_the_commands_read_only_paths_that_exist():
    cmds = commands()
    assert len(cmds) > 20, cmds
    missing = [(c, p) for c in cmds for p in read_paths(c) if not (ROOT / p).exists()]
    assert missing == [], missing


def layout_paths() -> list[str]:
    section = README.split("## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = [l for l in section.splitlines() if l.startswith("| `")]
    out = []
    for row in rows:
        first = row.split("|")[1]
        out += re.findall(r"`([^`]+)`", first)
    return out


def test_the_layout_names_what_exists_and_everything_there_is():
    paths = layout_paths()
    for p in paths:
        base = p.split("<", 1)[0]
        assert (ROOT / base).exists(), f"Layout names {p}, which is not in the repository"
    git = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    tracked = git.stdout.splitlines() if git.returncode == 0 else []
    if not tracked:  # not a git checkout: what is on disk, without build outputs
        tracked = [
            str(p.relative_to(ROOT))
            for p in ROOT.rglob("*")
            if p.is_file()
            and not any(part.startswith("target") or part in ("node_modules", ".git") for part in p.relative_to(ROOT).parts)
        ]
    named = {p.rstrip("/") for p in paths}

    def covered(entry: str) -> bool:
        return any(entry == n or entry.startswith(n + "/") or n.startswith(entry + "/") for n in named)

    top_dirs = {t.split("/", 1)[0] for t in tracked if "/" in t}
    crates = {"/".join(t.split("/")[:2]) for t in tracked if t.startswith("crates/")}
    suites = {"/".join(t.split("/")[:2]) for t in tracked if t.startswith("tests/")}
    # Root files a newcomer needs to know about; the usual ones (README, LICENSE...) are left out.
    root_files = {".pre-commit-hooks.yaml", "action.yml", "Cargo.toml"}
    for entry in sorted(top_dirs | crates | suites | root_files):
        assert covered(entry), f"the Layout table does not name {entry}"
