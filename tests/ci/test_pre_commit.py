"""The pre-commit hooks of .pre-commit-hooks.yaml, run by the real pre-commit
(`pre-commit try-repo`) on a sample repository holding a broken Fuzzfile, a clean one and
unrelated YAML (.pre-commit-config.yaml, a GitHub workflow, a CircleCI config, a Kubernetes
manifest, docker-compose, a Helm chart's values.yaml, an AWS SAM template.yaml).

The hook repository is a fresh git repository holding this working tree's
.pre-commit-hooks.yaml, so the test neither needs nor touches this repository's git state.
`fuzzlint-system` runs the fuzzlint under test (put first on PATH). The `fuzzlint` hook builds
the whole toolchain with `cargo install` (minutes): it runs only with FUZZ_TEST_CARGO_INSTALL=1,
on a clone of this repository's HEAD (docs/ci.md gives the time it takes).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, git, git_repository

HOOKS = ROOT / ".pre-commit-hooks.yaml"


def pre_commit(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )


@pytest.fixture
def hook_repo(tmp_path: Path, env: dict[str, str]) -> Path:
    repo = tmp_path / "hooks"
    repo.mkdir()
    shutil.copy(HOOKS, repo / ".pre-commit-hooks.yaml")
    return git_repository(repo, env)


@pytest.fixture
def hook_env(env: dict[str, str], fuzzlint: Path, tmp_path: Path) -> dict[str, str]:
    e = dict(env)
    e["PATH"] = f"{fuzzlint.parent}{os.pathsep}{env.get('PATH', '')}"
    e["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-cache")
    e["NO_COLOR"] = "1"
    return e


def try_repo(hook_repo: Path, hook: str, project: Path, env: dict[str, str]):
    r = pre_commit(["try-repo", str(hook_repo), hook, "--all-files", "--verbose"], project, env)
    return r, r.stdout + r.stderr


def test_the_manifest_is_valid_for_pre_commit(env: dict[str, str]):
    r = pre_commit(["validate-manifest", str(HOOKS)], ROOT, env)
    assert r.returncode == 0, r.stdout + r.stderr
    hooks = {h["id"]: h for h in yaml.safe_load(HOOKS.read_text())}
    assert set(hooks) == {"fuzzlint", "fuzzlint-system"}
    assert hooks["fuzzlint"]["language"] == "rust"
    assert hooks["fuzzlint-system"]["language"] == "system"


def test_a_broken_fuzzfile_fails_the_hook_and_is_named(hook_repo, sample, hook_env):
    r, out = try_repo(hook_repo, "fuzzlint-system", sample, hook_env)
    assert r.returncode == 1, out
    assert "Failed" in out, out
    assert "workflows/broken.yaml" in out, out
    assert "fetch-data" in out, out
    # The unrelated YAML files were passed to the hook and skipped, not reported.
    assert "skipped: not Fuzzfiles" in out, out
    for name in ("docker-compose.yml", "ci.yml", "deployment.yaml", "values.yaml", "template.yaml"):
        assert f"{name}:" not in out, (name, out)


def test_clean_fuzzfiles_and_unrelated_yaml_pass(hook_repo, sample, hook_env):
    git(sample, hook_env, "rm", "-q", "workflows/broken.yaml")
    git(sample, hook_env, "commit", "-q", "-m", "fixed")
    r, out = try_repo(hook_repo, "fuzzlint-system", sample, hook_env)
    assert r.returncode == 0, out
    assert "Passed" in out, out
    assert "no problems found" in out, out
    assert "skipped: not Fuzzfiles" in out, out


def test_fz_files_are_passed_to_the_hook(hook_repo, sample, hook_env):
    git(sample, hook_env, "rm", "-q", "workflows/broken.yaml")
    shutil.copy(ROOT / "tests" / "ci" / "sample-repo" / "workflows" / "broken.yaml", sample / "pipeline.fz")
    git(sample, hook_env, "add", "pipeline.fz")
    git(sample, hook_env, "commit", "-q", "-m", "fz")
    r, out = try_repo(hook_repo, "fuzzlint-system", sample, hook_env)
    assert r.returncode == 1, out
    assert "pipeline.fz" in out, out


@pytest.mark.skipif(
    not os.environ.get("FUZZ_TEST_CARGO_INSTALL"),
    reason="the rust hook builds fuzzlint with cargo install (minutes); FUZZ_TEST_CARGO_INSTALL=1 runs it",
)
def test_the_rust_hook_builds_and_runs(tmp_path, sample, hook_env):
    clone = tmp_path / "toolchain"
    git(tmp_path, hook_env, "clone", "-q", str(ROOT), str(clone))
    r, out = try_repo(clone, "fuzzlint", sample, hook_env)
    assert r.returncode == 1, out
    assert "workflows/broken.yaml" in out, out
