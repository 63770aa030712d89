#!/usr/bin/env python3
"""Builds of `fuzzlint server` side by side in one run, alternating: edit latency on the
5,000-line file of bench/compare.sh, bursts of edits, and the peak memory with 100 typical
files open.

    python3 crates/fuzzfile_server/bench/side_by_side.py BEFORE AFTER [MORE...] \
        [--rounds N] [--edits N] [--burst N] [--files N] [--corpus DIR]

BEFORE and AFTER (and MORE) are `fuzzlint` binaries (release builds). Each round runs every
build once, in an order rotated every round, so that a change of the machine's load touches
them alike:

- latency: bench/compare.py's client and edit sequence (a 5,000-line file is opened, then
  one character is typed into its first line's comment and removed again, each edit waiting
  for the publishDiagnostics of its version); the median and p99 over all edits of all
  rounds, and the server's CPU time (user + system, /proc/PID/stat) per edit;
- memory: a fresh server; 100 typical Fuzzfiles (the corpus's plain/**/*.fz and docs/*.fz
  and the repository's examples/*.fz, cycled and opened under distinct URIs, each waiting
  for its diagnostics); the server's peak resident set (`VmHWM` of /proc/PID/status) and
  its resident set at the end (`VmRSS`);
- bursts: on the same 5,000-line file, 10 bursts of 20 edits each written in one write (what
  an editor sends when the server was busy): the time to the diagnostics of each burst's last
  version, and how many publications each burst caused.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))
from compare import Lsp, big_file  # noqa: E402


def status_kib(pid, field):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid):
    """User and system time of a process so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def launcher_file(lines, launcher_every):
    """A Fuzzfile of about `lines` lines whose every `launcher_every`-th job runs torchrun from a
    script (crates/fuzzfile_server/examples/lsp_bench.rs's `big_fuzzfile`): 2 is its
    launcher-heavy file, 8 its mixed one."""
    s = ("# Synthetic benchmark workflow\nversion: v4\nvolumes:\n  data:\n    reference: volume://user/ephemeral\n"
         "services:\n  cache:\n    image: {uri: docker://redis:7.4}\n    command: [redis-server]\njobs:\n")
    i = 0
    while s.count("\n") < lines:
        after = "cache" if i == 0 else f"job-{i - 1}"
        if i % launcher_every == 0:
            s += (f"  job-{i}:\n    image:\n      uri: docker://nvcr.io/nvidia/pytorch:25.01-py3\n    env:\n"
                  "      - NCCL_DEBUG=WARN\n      - NPROC=4\n    script: |\n      #!/bin/bash\n      set -e\n"
                  f"      torchrun --standalone --nproc-per-node $NPROC /opt/train.py --epoch {i}\n    resource:\n"
                  "      cpu: {cores: 16, affinity: NUMA}\n      memory: {size: 64GiB}\n      devices: {nvidia.com/gpu: 4}\n"
                  f"    mounts:\n      /data: data\n    depends-on:\n      - name: {after}\n")
        elif i % 2 == 0:
            s += (f"  job-{i}:\n    image: {{uri: docker://alpine:3.20}}\n    script: |\n      #!/bin/sh\n      set -eu\n"
                  f"      echo \"step {i}\" >> /data/log.txt\n      ls -l /data | wc -l\n    mounts:\n      /data: data\n"
                  f"    depends-on:\n      - name: {after}\n")
        else:
            s += (f"  job-{i}:\n    image: {{uri: docker://alpine:3.20}}\n    command: [/bin/sh, -c, \"echo step {i} && ls /data\"]\n"
                  f"    policy:\n      timeout: {{execute: 30m}}\n    depends-on:\n      - name: {after}\n")
        i += 1
    return s


def edit_site(text, where):
    """Where the edits type, as (line, character): `comment`, the end of the first line (a
    comment); `job`, after the first number written as a value past the middle of the file
    (`cores: 16` of a job); `key`, the start of that line (a key being typed: see
    `change_at`)."""
    if where == "comment":
        return 0, len(text.split("\n", 1)[0])
    if where == "key":
        line, _ = edit_site(text, "job")
        return line, 0, "key"
    half = len(text) // 2
    at = half
    while True:
        at = text.index(": ", at) + 2
        if text[at].isdigit():
            break
    line = text.count("\n", 0, at)
    return line, at - (text.rindex("\n", 0, at) + 1)


def open_document(s, binary, path, where):
    """didOpen `path` and wait for its first diagnostics: its URI and where the edits type
    (`edit_site`)."""
    uri = path.as_uri()
    text = path.read_text()
    mark = len(s.diagnostics)
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    if s.wait_diagnostics(uri, mark, timeout=60) is None:
        raise SystemExit(f"no diagnostics from {binary} on opening {path}")
    return uri, edit_site(text, where)


def change_at(site, r):
    """Edit `r` of a sequence: a character typed at `site` (even), removed again (odd); at a
    `key` site, a line holding the start of a key (`    r`, no colon yet: a syntax error)
    inserted before that line (even) and removed again (odd)."""
    if len(site) == 3:
        line = site[0]
        if r % 2 == 0:
            return {"range": {"start": {"line": line, "character": 0}, "end": {"line": line, "character": 0}},
                    "text": "    r\n"}
        return {"range": {"start": {"line": line, "character": 0}, "end": {"line": line + 1, "character": 0}},
                "text": ""}
    line, col = site
    end = col if r % 2 == 0 else col + 1
    return {"range": {"start": {"line": line, "character": col}, "end": {"line": line, "character": end}},
            "text": "1" if r % 2 == 0 else ""}


def edit_sequence(binary, path, edits, where):
    """bench/compare.py's edit sequence (its `lsp_latency`): `path` opened, then `edits`
    edits, a character typed at `edit_site(where)` and removed again, each waiting
    for the diagnostics published after it. Returns the latencies (s) and the server's CPU
    time over the edits (s)."""
    s = Lsp([binary, "server"], {})
    root = path.parent.as_uri()
    s.request("initialize", {
        "processId": os.getpid(), "rootUri": root,
        "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True}}},
        "workspaceFolders": [{"uri": root, "name": "bench"}],
    })
    s.notify("initialized", {})
    uri, site = open_document(s, binary, path, where)
    cpu = cpu_seconds(s.p.pid)
    times = []
    for r in range(edits):
        change = change_at(site, r)
        mark = len(s.diagnostics)
        t = time.perf_counter()
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": r + 2}, "contentChanges": [change]})
        d = s.wait_diagnostics(uri, mark)
        if d is None:
            raise SystemExit(f"no diagnostics from {binary} within 30 s of edit {r}")
        times.append(d[0] - t)
    cpu = cpu_seconds(s.p.pid) - cpu
    s.close()
    return times, cpu


def burst(binary, path, size, bursts, where):
    """`path` opened; then `bursts` times, `size` edits (as in `edit_sequence`) written in one
    write, as an editor sends what was typed while the server was busy. Returns the times (s)
    from the write to the diagnostics of the burst's last version, and how many
    publications there were per burst (1: only the last version was analysed)."""
    s = Lsp([binary, "server"], {})
    s.request("initialize", {"processId": None, "capabilities": {
        "textDocument": {"publishDiagnostics": {"versionSupport": True}}}})
    s.notify("initialized", {})
    uri, site = open_document(s, binary, path, where)
    version = 1
    times, published = [], []
    for _ in range(bursts):
        frames = []
        for r in range(size):
            version += 1
            change = change_at(site, r)
            body = json.dumps({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}}).encode()
            frames.append(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        mark = len(s.diagnostics)
        t = time.perf_counter()
        s.p.stdin.write(b"".join(frames))
        s.p.stdin.flush()
        with s.cv:
            s.cv.wait_for(lambda: any(d[2] == version for d in s.diagnostics[mark:]), 30)
            last = next((d for d in s.diagnostics[mark:] if d[2] == version), None)
            if last is None:
                raise SystemExit(f"no diagnostics for version {version} from {binary}")
            times.append(last[0] - t)
            published.append(sum(1 for d in s.diagnostics[mark:] if d[1] == uri))
    s.close()
    return times, published


def typical_files(corpus):
    files = sorted((corpus / "plain").rglob("*.fz")) + sorted((corpus / "docs").glob("*.fz"))
    files += sorted((ROOT / "examples").glob("*.fz"))
    return [(p.name, p.read_text()) for p in files]


def open_many(binary, files, count):
    """A fresh server with `count` files opened one after the other: (peak KiB, end KiB)."""
    s = Lsp([binary, "server"], {})
    s.request("initialize", {"processId": None, "capabilities": {
        "textDocument": {"publishDiagnostics": {"versionSupport": True}}}})
    s.notify("initialized", {})
    for i in range(count):
        name, text = files[i % len(files)]
        uri = f"file:///bench/open-{i:03d}/{name}"
        mark = len(s.diagnostics)
        s.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": "fuzzfile", "version": 1, "text": text}})
        if s.wait_diagnostics(uri, mark) is None:
            raise SystemExit(f"no diagnostics for {uri} from {binary}")
    peak, rss = status_kib(s.p.pid, "VmHWM"), status_kib(s.p.pid, "VmRSS")
    s.close()
    return peak, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("more", nargs="*", help="further builds, labelled by their paths")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--edits", type=int, default=200, help="edits per round and binary")
    ap.add_argument("--files", type=int, default=100)
    ap.add_argument("--burst", type=int, default=20, help="edits per burst (10 bursts a round)")
    ap.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "corpus")
    ap.add_argument("--file", choices=["compare", "mixed", "launcher-heavy"], default="compare",
                    help="the 5,000-line file: bench/compare.py's (shell scripts), or lsp_bench's "
                    "mixed (1 job in 8 runs torchrun) or launcher-heavy (1 in 2) one")
    ap.add_argument("--edit-in", choices=["comment", "job", "key"], default="comment",
                    help="where the edits type: the first line's comment, a value of a job "
                    "in the middle of the file, or a key typed into that job (every other "
                    "version a syntax error)")
    args = ap.parse_args()
    binaries = {"before": args.before, "after": args.after, **{m: m for m in args.more}}
    files = typical_files(args.corpus)
    work = Path(tempfile.mkdtemp(prefix="lsp-side-by-side-"))
    big = work / "big.fz"
    big.write_text({"compare": lambda: big_file(5000), "mixed": lambda: launcher_file(5000, 8),
                    "launcher-heavy": lambda: launcher_file(5000, 2)}[args.file]())
    latencies = {k: [] for k in binaries}
    cpu = {k: 0.0 for k in binaries}
    bursts = {k: ([], []) for k in binaries}
    memory = {k: [] for k in binaries}
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {len(files)} typical files "
          f"({sum(len(t) for _, t in files)} bytes), {args.files} opened; {args.rounds} rounds of "
          f"{args.edits} edits; file {args.file}, edits in the {args.edit_in}; "
          f"load average before {os.getloadavg()[0]:.2f}")
    for r in range(args.rounds):
        order = list(binaries.items())
        order = order[r % len(order):] + order[:r % len(order)]
        if (r // len(order)) % 2:
            order.reverse()
        for name, binary in order:
            times, seconds = edit_sequence(binary, big, args.edits, args.edit_in)
            latencies[name] += times
            cpu[name] += seconds
            memory[name].append(open_many(binary, files, args.files))
            times, published = burst(binary, big, args.burst, 10, args.edit_in)
            bursts[name][0].extend(times)
            bursts[name][1].extend(published)
        sys.stdout.flush()
    print("\n| build | edit → publishDiagnostics median | p99 | server CPU per edit | 100 files: peak RSS (VmHWM) | RSS at the end |")
    print("|---|---|---|---|---|---|")
    for name in binaries:
        lat = sorted(latencies[name])
        p99 = lat[min(len(lat) - 1, int(len(lat) * 0.99))]
        peaks = [m[0] for m in memory[name]]
        ends = [m[1] for m in memory[name]]
        print(f"| {name} | {statistics.median(lat) * 1e3:.2f} ms | {p99 * 1e3:.2f} ms | "
              f"{cpu[name] / len(lat) * 1e3:.2f} ms | "
              f"{statistics.median(peaks) / 1024:.1f} MiB ({min(peaks) / 1024:.1f}–{max(peaks) / 1024:.1f}) | "
              f"{statistics.median(ends) / 1024:.1f} MiB |")
    print(f"\n| build | burst of {args.burst} edits in one write → diagnostics of the last, median | "
          "max | publications per burst, median (max) |")
    print("|---|---|---|---|")
    for name in binaries:
        times, published = bursts[name]
        print(f"| {name} | {statistics.median(times) * 1e3:.2f} ms | {max(times) * 1e3:.2f} ms | "
              f"{statistics.median(published):.0f} ({max(published)}) |")
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
