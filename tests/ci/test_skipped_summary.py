"""scripts/test's record of skipped tests: its functions (skipped, run_recording_skips, the
summary at exit) run as scripts/test defines them, with lines as the Rust tests write them
(fuzz_test_support::system::skip), and the summary printed also when the run fails."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from conftest import ROOT


def prologue() -> str:
    text = (ROOT / "scripts" / "test").read_text()
    m = re.search(r"^target_dir=.*?^trap .*skipped_summary.* EXIT\n", text, re.S | re.M)
    assert m, "scripts/test has no skipped-test prologue"
    return m.group(0)


def run(body: str, tmp_path: Path) -> subprocess.CompletedProcess:
    script = "set -euo pipefail\n" + prologue() + body
    return subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "CARGO_TARGET_DIR": str(tmp_path / "t")},
        capture_output=True,
        text=True,
    )


def test_every_kind_of_skip_is_listed_at_the_end(tmp_path):
    sub = tmp_path / "sub.sh"
    sub.write_text('echo "working"\necho "skipping the lsp tests: missing nvim"\n')
    r = run(
        'skipped "the grammar tests: node is not installed"\n'
        f"run_recording_skips bash {sub}\n"
        "printf 'fuzz multinode::two_hosts\\t`sshd` is not installed\\n' >> \"$FUZZ_SKIPPED_TESTS_FILE\"\n",
        tmp_path,
    )
    assert r.returncode == 0, r.stderr
    tail = r.stdout.split("working", 1)[1]
    assert "3 test(s) skipped on this machine" in tail, r.stdout
    for line in (
        "fuzz multinode::two_hosts",
        "`sshd` is not installed",
        f"{sub}",
        "the lsp tests: missing nvim",
        "scripts/test",
        "the grammar tests: node is not installed",
        "sudo bash .ci/run",
    ):
        assert line in tail, (line, r.stdout)
    recorded = (tmp_path / "t" / "skipped-tests.txt").read_text().splitlines()
    assert len(recorded) == 3 and all("\t" in l for l in recorded), recorded


def test_the_summary_comes_also_after_a_failure_and_keeps_the_status(tmp_path):
    r = run('skipped "the X tests: no x"\nfalse\necho never\n', tmp_path)
    assert r.returncode == 1
    assert "never" not in r.stdout
    assert "1 test(s) skipped" in r.stdout, r.stdout


def test_the_disk_used_and_left_is_said_last(tmp_path):
    # A CI run that ran out of space says how much its target directory held and what was left.
    r = run("head -c 3000000 /dev/zero > \"$CARGO_TARGET_DIR/blob\"\n", tmp_path)
    assert r.returncode == 0, r.stderr
    last = r.stdout.rstrip().splitlines()[-1]
    m = re.fullmatch(r"disk: (\S+) in (\S+), (\S+) free", last)
    assert m, r.stdout
    assert m.group(2) == str(tmp_path / "t")
    assert m.group(1) in ("2.9M", "3.0M"), m.group(1)


def test_nothing_skipped_says_so(tmp_path):
    r = run("true\n", tmp_path)
    assert r.returncode == 0
    assert "No test was skipped." in r.stdout
