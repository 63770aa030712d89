"""The CI recipes of docs/ci.md: each kept as a file in docs/ci/ that docs/ci.md shows
verbatim; each valid YAML naming this repository, its version and what exists (hook ids of
.pre-commit-hooks.yaml, inputs of action.yml, the release tarball's name); the GitLab job's
script run for real on the sample repository, its Code Quality report checked."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, git

DOC = ROOT / "docs" / "ci.md"
RECIPES = ROOT / "docs" / "ci"
GITLAB_SCHEMA = ROOT / "crates" / "fuzzlint" / "tests" / "schemas" / "gitlab-codeclimate.json"

WORKSPACE = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["package"]
VERSION = WORKSPACE["version"]
REPOSITORY = WORKSPACE["repository"]
TARBALL = f"fuzzfile-toolchain-{VERSION}-x86_64-unknown-linux-gnu-static"


def recipe(name: str) -> tuple[str, object]:
    text = (RECIPES / name).read_text()
    return text, yaml.safe_load(text)


@pytest.mark.parametrize("name", ["pre-commit-config.yaml", "github-workflow.yml", "gitlab-ci.yml"])
def test_docs_show_each_recipe_verbatim(name):
    text = (RECIPES / name).read_text()
    doc = DOC.read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", doc, re.S)
    assert text in blocks, f"docs/ci.md does not show docs/ci/{name} as it is"


def test_pre_commit_recipe(env):
    text, config = recipe("pre-commit-config.yaml")
    (repo,) = config["repos"]
    assert repo["repo"] == REPOSITORY
    assert repo["rev"] == f"v{VERSION}"
    ids = {h["id"] for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    named = {h["id"] for h in repo["hooks"]} | set(re.findall(r"#\s*- id: ([\w-]+)", text))
    assert named == ids, (named, ids)
    r = subprocess.run(
        [sys.executable, "-m", "pre_commit", "validate-config", str(RECIPES / "pre-commit-config.yaml")],
        capture_output=True, text=True, env=env,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_github_recipe():
    _, workflow = recipe("github-workflow.yml")
    steps = workflow["jobs"]["fuzzlint"]["steps"]
    owner_repo = REPOSITORY.removeprefix("https://github.com/")
    (ours,) = [s for s in steps if s.get("uses", "").startswith(owner_repo + "@")]
    assert ours["uses"] == f"{owner_repo}@v{VERSION}"
    inputs = yaml.safe_load((ROOT / "action.yml").read_text())["inputs"]
    assert set(ours["with"]) <= set(inputs), set(ours["with"]) - set(inputs)
    assert str(ours["with"]["version"]) == VERSION
    if str(ours["with"].get("sarif-upload")).lower() == "true":
        assert workflow["permissions"]["security-events"] == "write"


def test_gitlab_recipe_downloads_the_release(env):
    _, ci = recipe("gitlab-ci.yml")
    job = ci["fuzzlint"]
    assert job["variables"]["FUZZLINT_VERSION"] == VERSION
    assert job["variables"]["FUZZLINT_RELEASE"] == TARBALL
    before = "\n".join(job["before_script"])
    assert f"{REPOSITORY}/releases/download/v$FUZZLINT_VERSION/$FUZZLINT_RELEASE.tar.gz" in before
    assert "sha256sum -c" in before


def run_gitlab_script(job: dict, project: Path, fuzzlint: Path, env: dict) -> subprocess.CompletedProcess:
    """The job's `script:` as GitLab's shell runs it: one shell, stopping at a failing line."""
    e = dict(env)
    e["PATH"] = f"{fuzzlint.parent}{os.pathsep}{env['PATH']}"
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", "\n".join(job["script"])],
        cwd=project, env=e, capture_output=True, text=True, timeout=120,
    )


def test_gitlab_recipe_writes_the_code_quality_report(sample, env, fuzzlint):
    _, ci = recipe("gitlab-ci.yml")
    job = ci["fuzzlint"]
    report_name = job["artifacts"]["reports"]["codequality"]
    script = "\n".join(job["script"])
    assert "--output-format gitlab" in script
    assert f"--output-file {report_name}" in script
    assert job["artifacts"]["when"] == "always"

    r = run_gitlab_script(job, sample, fuzzlint, env)
    assert r.returncode == 1, r.stdout + r.stderr
    # The job log has the findings, one line each.
    assert re.search(r"^workflows/broken\.yaml:13:15: FZ\d+ ", r.stdout, re.M), r.stdout
    report = json.loads((sample / report_name).read_text())
    assert {i["location"]["path"] for i in report} == {"workflows/broken.yaml"}, report
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema is not None:
        # GitLab's schema describes one issue of the report's array.
        schema = json.loads(GITLAB_SCHEMA.read_text())
        for issue in report:
            jsonschema.validate(issue, schema)

    git(sample, env, "rm", "-q", "workflows/broken.yaml")
    (sample / report_name).unlink()
    r = run_gitlab_script(job, sample, fuzzlint, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads((sample / report_name).read_text()) == []
