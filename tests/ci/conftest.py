"""Shared set-up of the CI integration tests: the fuzzlint binary under test, the sample
repository (tests/ci/sample-repo) as a fresh git repository, and git without the user's
configuration."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "tests" / "ci" / "sample-repo"


def fuzzlint_binary() -> Path:
    """$FUZZLINT, else ${CARGO_TARGET_DIR:-target}/debug/fuzzlint (built by scripts/test)."""
    given = os.environ.get("FUZZLINT")
    if given:
        return Path(given).resolve()
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    if not target.is_absolute():
        target = ROOT / target
    return (target / "debug" / "fuzzlint").resolve()


def git_env(home: Path) -> dict[str, str]:
    """The environment of the tests' git and tools: git without the user's configuration (a
    HOME of the test's own); rustup and cargo keep the user's toolchains and registry."""
    env = dict(os.environ)
    real_home = Path.home()
    env.setdefault("RUSTUP_HOME", str(real_home / ".rustup"))
    env.setdefault("CARGO_HOME", str(real_home / ".cargo"))
    env.update(
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="Sample",
        GIT_AUTHOR_EMAIL="sample@example.org",
        GIT_COMMITTER_NAME="Sample",
        GIT_COMMITTER_EMAIL="sample@example.org",
        HOME=str(home),
    )
    return env


def git(cwd: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def git_repository(path: Path, env: dict[str, str]) -> Path:
    """`path` as a git repository with everything in it committed."""
    git(path, env, "init", "-q", "-b", "main")
    git(path, env, "add", "-A")
    git(path, env, "commit", "-q", "-m", "sample")
    return path


@pytest.fixture
def fuzzlint() -> Path:
    path = fuzzlint_binary()
    if not os.access(path, os.X_OK):
        pytest.fail(f"no fuzzlint binary at {path}: cargo build -p fuzzlint, or set FUZZLINT")
    return path


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return git_env(home)


@pytest.fixture
def sample(tmp_path: Path, env: dict[str, str]) -> Path:
    """A copy of tests/ci/sample-repo as a git repository of its own."""
    dest = tmp_path / "project"
    shutil.copytree(SAMPLE, dest)
    return git_repository(dest, env)


def pytest_runtest_logreport(report):
    """A skipped test leaves a line in $FUZZ_SKIPPED_TESTS_FILE (scripts/test lists them)."""
    record = os.environ.get("FUZZ_SKIPPED_TESTS_FILE")
    if not record or not report.skipped:
        return
    longrepr = report.longrepr
    why = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    why = why.removeprefix("Skipped: ").replace("\n", " ").replace("\t", " ")
    with open(record, "a", encoding="utf-8") as f:
        f.write(f"tests/ci {report.nodeid}\t{why}\n")
