"""The GitHub Action (action.yml) run outside GitHub on the sample repository: its composite
steps are read from action.yml and run as the runner would (inputs and step outputs through
`${{ }}` expressions, GITHUB_OUTPUT, GITHUB_PATH, RUNNER_TEMP, GITHUB_WORKSPACE); the
`run:` steps run for real (scripts/action/run.sh: the release tarball downloaded with curl from
a file:// URL, its SHA-256 checked, fuzzlint run), the one `uses:` step (SARIF upload with
github/codeql-action) is mocked: what it would upload is recorded and checked."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from conftest import ROOT, git

ACTION = ROOT / "action.yml"
SARIF_SCHEMA = ROOT / "crates" / "fuzzlint" / "tests" / "schemas" / "sarif-2.1.0.json"
TARGET = "x86_64-unknown-linux-gnu"


class Runner:
    """What GitHub's runner does with a composite action, for the expressions action.yml uses."""

    def __init__(self, tmp: Path, workspace: Path, inputs: dict[str, str], env: dict[str, str]):
        self.action = yaml.safe_load(ACTION.read_text())
        self.inputs = {k: str(v.get("default", "")) for k, v in self.action["inputs"].items()}
        unknown = set(inputs) - set(self.inputs)
        assert not unknown, f"inputs action.yml does not declare: {unknown}"
        self.inputs.update(inputs)
        self.tmp = tmp
        self.workspace = workspace
        self.env = env
        self.outputs: dict[str, dict[str, str]] = {}
        self.logs: dict[str, str] = {}
        self.uploaded: list[dict[str, str]] = []
        self.runner_temp = tmp / "runner-temp"
        self.runner_temp.mkdir()
        self.github_path = tmp / "github-path"
        self.github_path.touch()
        self.failed = False

    def value(self, ref: str) -> str:
        ref = ref.strip()
        if ref.startswith("'") and ref.endswith("'"):
            return ref[1:-1]
        if ref == "github.action_path":
            return str(ROOT)
        m = re.fullmatch(r"inputs\.([\w-]+)", ref)
        if m:
            return self.inputs[m.group(1)]
        m = re.fullmatch(r"steps\.([\w-]+)\.outputs\.([\w-]+)", ref)
        if m:
            return self.outputs.get(m.group(1), {}).get(m.group(2), "")
        raise AssertionError(f"an expression this test does not know: {ref}")

    def condition(self, expr: str) -> bool:
        expr = expr.strip()
        if expr.startswith("${{") and expr.endswith("}}"):
            expr = expr[3:-2]
        result = True
        has_status = False
        for term in expr.split("&&"):
            term = term.strip()
            if term == "always()":
                has_status = True
                continue
            m = re.fullmatch(r"(.+?)\s*(==|!=)\s*(.+)", term)
            if m:
                a, b = self.value(m.group(1)), self.value(m.group(3))
                result = result and ((a == b) if m.group(2) == "==" else (a != b))
            else:
                result = result and bool(self.value(term))
        # Without a status function a step runs only while nothing failed (success()).
        return result and (has_status or not self.failed)

    def substitute(self, text: str) -> str:
        return re.sub(r"\$\{\{(.*?)\}\}", lambda m: self.value(m.group(1)), str(text))

    def run(self) -> None:
        for i, step in enumerate(self.action["runs"]["steps"]):
            sid = step.get("id", f"step{i}")
            if not self.condition(step.get("if", "success()").replace("success()", "'x' == 'x'")):
                self.logs[sid] = "(skipped)"
                continue
            if "uses" in step:
                assert step["uses"].startswith("github/codeql-action/upload-sarif@"), step
                args = {k: self.substitute(v) for k, v in step.get("with", {}).items()}
                self.uploaded.append(args)
                continue
            assert step["shell"] == "bash"
            out_file = self.tmp / f"output-{sid}"
            out_file.touch()
            env = dict(self.env)
            env.update(
                GITHUB_WORKSPACE=str(self.workspace),
                GITHUB_OUTPUT=str(out_file),
                GITHUB_PATH=str(self.github_path),
                RUNNER_TEMP=str(self.runner_temp),
                GITHUB_ACTIONS="true",
            )
            env.update({k: self.substitute(v) for k, v in step.get("env", {}).items()})
            r = subprocess.run(
                ["bash", "-e", "-c", self.substitute(step["run"])],
                cwd=self.workspace,
                env=env,
                capture_output=True,
                text=True,
                timeout=900,
            )
            self.logs[sid] = r.stdout + r.stderr
            self.outputs[sid] = dict(
                line.split("=", 1) for line in out_file.read_text().splitlines() if "=" in line
            )
            if r.returncode != 0:
                self.failed = True


def release_tarball(fuzzlint: Path, dest: Path, version: str) -> Path:
    """A release laid out as scripts/release lays it out, holding the fuzzlint under test (a
    debug build: fast compression)."""
    name = f"fuzzfile-toolchain-{version}-{TARGET}-static"
    stage = dest / "stage" / name
    stage.mkdir(parents=True)
    shutil.copy(fuzzlint, stage / "fuzzlint")
    shutil.copy(ROOT / "LICENSE", stage / "LICENSE")
    tag_dir = dest / "releases" / f"v{version}"
    tag_dir.mkdir(parents=True)
    tarball = tag_dir / f"{name}.tar.gz"
    with tarfile.open(tarball, "w:gz", compresslevel=1) as t:
        t.add(stage, arcname=name)
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    (tag_dir / f"{name}.tar.gz.sha256").write_text(f"{digest}  {name}.tar.gz\n")
    return dest / "releases"


@pytest.fixture(scope="session")
def built_release(tmp_path_factory) -> Path:
    from conftest import fuzzlint_binary

    return release_tarball(fuzzlint_binary(), tmp_path_factory.mktemp("release"), "0.0.0-test")


@pytest.fixture
def release(tmp_path: Path, fuzzlint: Path, built_release: Path) -> str:
    """The release of this session, in a directory of the test's own (tarball linked, checksum
    copied, so a test may spoil it)."""
    dest = tmp_path / "dl" / "releases"
    for f in built_release.rglob("*"):
        if f.is_file():
            to = dest / f.relative_to(built_release)
            to.parent.mkdir(parents=True, exist_ok=True)
            if f.suffix == ".gz":
                os.link(f, to)
            else:
                shutil.copy(f, to)
    return dest.as_uri()


def test_release_download_annotations_and_sarif(tmp_path, sample, env, release):
    runner = Runner(
        tmp_path,
        sample,
        {"version": "0.0.0-test", "release-url": release, "sarif-upload": "true"},
        env,
    )
    runner.run()
    log = runner.logs["fuzzlint"]
    out = runner.outputs["fuzzlint"]
    assert out["exit-code"] == "1", log
    # One annotation per finding, at the file and line, the location in the message too.
    annotation = re.search(r"^::error file=workflows/broken\.yaml,line=13,[^\n]*::([^\n]*)$", log, re.M)
    assert annotation, log
    assert "fetch-data" in annotation.group(1), log
    assert "docker-compose" not in log and "deployment.yaml" not in log, log
    # The download is the tarball's fuzzlint, and its directory is on PATH for later steps.
    assert out["fuzzlint"].startswith(str(runner.runner_temp)), out
    assert runner.github_path.read_text().strip() == str(Path(out["fuzzlint"]).parent)
    # The upload step (mocked) gets the SARIF file fuzzlint wrote.
    assert runner.uploaded == [{"sarif_file": out["sarif-file"], "category": "fuzzlint"}]
    sarif = json.loads(Path(out["sarif-file"]).read_text())
    assert sarif["version"] == "2.1.0"
    results = sarif["runs"][0]["results"]
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {"workflows/broken.yaml"}, uris
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema is not None:
        jsonschema.validate(sarif, json.loads(SARIF_SCHEMA.read_text()))
    # The last step fails the job on the findings, after the upload.
    assert runner.failed


def test_a_clean_repository_passes_without_upload(tmp_path, sample, env, release):
    git(sample, env, "rm", "-q", "workflows/broken.yaml")
    runner = Runner(tmp_path, sample, {"version": "v0.0.0-test", "release-url": release}, env)
    runner.run()
    assert runner.outputs["fuzzlint"]["exit-code"] == "0", runner.logs
    assert "::error" not in runner.logs["fuzzlint"]
    assert "sarif-file" not in runner.outputs["fuzzlint"]
    assert runner.uploaded == []
    assert not runner.failed, runner.logs


def test_args_and_paths_reach_fuzzlint(tmp_path, sample, env, release):
    runner = Runner(
        tmp_path,
        sample,
        {
            "version": "0.0.0-test",
            "release-url": release,
            "paths": "workflows/train.yaml docker-compose.yml",
            "args": "--no-skip --fail-on never",
        },
        env,
    )
    runner.run()
    log = runner.logs["fuzzlint"]
    # docker-compose.yml is checked (--no-skip) and reported, but never fails (--fail-on never).
    assert "file=docker-compose.yml" in log, log
    assert "broken.yaml" not in log, log
    assert runner.outputs["fuzzlint"]["exit-code"] == "0", log
    assert not runner.failed


def test_a_tarball_that_does_not_match_its_checksum_is_refused(tmp_path, sample, env, release):
    sums = list((tmp_path / "dl" / "releases").rglob("*.sha256"))
    assert len(sums) == 1
    sums[0].write_text("0" * 64 + sums[0].read_text()[64:])
    runner = Runner(tmp_path, sample, {"version": "0.0.0-test", "release-url": release}, env)
    runner.run()
    assert runner.failed
    assert "does not match its SHA-256" in runner.logs["fuzzlint"], runner.logs
    assert "exit-code" not in runner.outputs["fuzzlint"]


def test_a_missing_release_is_a_clear_error(tmp_path, sample, env, release):
    runner = Runner(tmp_path, sample, {"version": "9.9.9", "release-url": release}, env)
    runner.run()
    assert runner.failed
    assert "::error title=fuzzlint action::cannot download" in runner.logs["fuzzlint"], runner.logs


@pytest.mark.skipif(
    not os.environ.get("FUZZ_TEST_CARGO_INSTALL") or shutil.which("cargo") is None,
    reason="building fuzzlint alone with cargo install takes minutes the first time; FUZZ_TEST_CARGO_INSTALL=1 runs it",
)
def test_without_a_version_it_builds_from_this_repository(tmp_path, sample, env, fuzzlint):
    # The build reuses the debug build of this checkout (CARGO_TARGET_DIR), as a runner's
    # cache would; `cargo install --locked --path crates/fuzzlint` itself is real.
    e = dict(env)
    e["FUZZLINT_INSTALL_ARGS"] = "--debug"
    e["CARGO_TARGET_DIR"] = str(fuzzlint.parent.parent)
    runner = Runner(tmp_path, sample, {}, e)
    runner.run()
    log = runner.logs["fuzzlint"]
    assert "Building fuzzlint" in log, log
    assert runner.outputs["fuzzlint"]["exit-code"] == "1", log
    assert "::error file=workflows/broken.yaml" in log, log
