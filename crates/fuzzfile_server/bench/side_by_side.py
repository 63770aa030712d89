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


def open_document(s, binary, path):
    """didOpen `path` and wait for its first diagnostics: its URI and the length of its first
    line (where the edits type)."""
    uri = path.as_uri()
    text = path.read_text()
    mark = len(s.diagnostics)
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    if s.wait_diagnostics(uri, mark, timeout=60) is None:
        raise SystemExit(f"no diagnostics from {binary} on opening {path}")
    return uri, len(text.split("\n", 1)[0])


def edit_sequence(binary, path, edits):
    """bench/compare.py's edit sequence (its `lsp_latency`): `path` opened, then `edits`
    edits, a character typed into the first line's comment and removed again, each waiting
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
    uri, col = open_document(s, binary, path)
    cpu = cpu_seconds(s.p.pid)
    times = []
    for r in range(edits):
        end = col if r % 2 == 0 else col + 1
        change = {"range": {"start": {"line": 0, "character": col}, "end": {"line": 0, "character": end}},
                  "text": "x" if r % 2 == 0 else ""}
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


def burst(binary, path, size, bursts):
    """`path` opened; then `bursts` times, `size` edits (as in `edit_sequence`) written in one
    write, as an editor sends what was typed while the server was busy. Returns the times (s)
    from the write to the diagnostics of the burst's last version, and how many
    publications there were per burst (1: only the last version was analysed)."""
    s = Lsp([binary, "server"], {})
    s.request("initialize", {"processId": None, "capabilities": {
        "textDocument": {"publishDiagnostics": {"versionSupport": True}}}})
    s.notify("initialized", {})
    uri, col = open_document(s, binary, path)
    version = 1
    times, published = [], []
    for _ in range(bursts):
        frames = []
        for r in range(size):
            version += 1
            end = col if r % 2 == 0 else col + 1
            change = {"range": {"start": {"line": 0, "character": col}, "end": {"line": 0, "character": end}},
                      "text": "x" if r % 2 == 0 else ""}
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
    args = ap.parse_args()
    binaries = {"before": args.before, "after": args.after, **{m: m for m in args.more}}
    files = typical_files(args.corpus)
    work = Path(tempfile.mkdtemp(prefix="lsp-side-by-side-"))
    big = work / "big.fz"
    big.write_text(big_file(5000))
    latencies = {k: [] for k in binaries}
    cpu = {k: 0.0 for k in binaries}
    bursts = {k: ([], []) for k in binaries}
    memory = {k: [] for k in binaries}
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {len(files)} typical files "
          f"({sum(len(t) for _, t in files)} bytes), {args.files} opened; {args.rounds} rounds of "
          f"{args.edits} edits; load average before {os.getloadavg()[0]:.2f}")
    for r in range(args.rounds):
        order = list(binaries.items())
        order = order[r % len(order):] + order[:r % len(order)]
        if (r // len(order)) % 2:
            order.reverse()
        for name, binary in order:
            times, seconds = edit_sequence(binary, big, args.edits)
            latencies[name] += times
            cpu[name] += seconds
            memory[name].append(open_many(binary, files, args.files))
            times, published = burst(binary, big, args.burst, 10)
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
