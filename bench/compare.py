#!/usr/bin/env python3
"""fuzzlint side by side with the alternatives, on the same inputs in the same run, alternating.

Called by bench/compare.sh (which installs the alternatives); see there. Prints one table per
part, medians of wall time over the rounds and the ratio of each to fuzzlint (or to the
direct run). Each round runs every command once, in an order rotated each round, so that a
change in the machine's load touches all of them alike.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path


def timed(cmd, cwd=None):
    t = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
    return time.perf_counter() - t, p.returncode


def side_by_side(title, commands, rounds, reference):
    """commands: [(label, argv)]; the ratio is to the command labelled `reference`."""
    times = {label: [] for label, _ in commands}
    status = {}
    for r in range(rounds):
        k = r % len(commands)
        for label, argv in commands[k:] + commands[:k]:
            dt, rc = timed(argv)
            times[label].append(dt)
            status[label] = rc
    ref = statistics.median(times[reference])
    print(f"\n{title}\n")
    print("| command | median | ratio to " + reference + " | exit |")
    print("|---|---|---|---|")
    for label, _ in commands:
        m = statistics.median(times[label])
        print(f"| {label} | {fmt(m)} | {m / ref:.2f}× | {status[label]} |")
    sys.stdout.flush()
    return {label: statistics.median(v) for label, v in times.items()}


def fmt(seconds):
    if seconds >= 1:
        return f"{seconds:.2f} s"
    return f"{seconds * 1e3:.1f} ms"


def corpus_files(corpus):
    files = sorted(p for p in (corpus / "plain").rglob("*.fz"))
    files += sorted(p for p in (corpus / "docs").glob("*.fz"))
    return files


def file_set(work, files, count):
    d = work / f"set-{count}"
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    out = []
    for i in range(count):
        src = files[i % len(files)]
        dst = d / f"{i:05d}-{src.name}"
        shutil.copyfile(src, dst)
        out.append(str(dst))
    return out


# --- language servers -------------------------------------------------------------------------


class Lsp:
    """A language server over stdin/stdout: requests, notifications, and the diagnostics it
    publishes, timestamped as they arrive."""

    def __init__(self, argv, settings):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0
        self.settings = settings
        self.cv = threading.Condition()
        self.responses = {}
        self.diagnostics = []  # (time, uri, version, count)
        threading.Thread(target=self.reader, daemon=True).start()

    def send(self, msg):
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def reader(self):
        f = self.p.stdout
        while True:
            length = None
            while True:
                line = f.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            msg = json.loads(f.read(length))
            now = time.perf_counter()
            if "id" in msg and "method" in msg:  # a request from the server
                result = None
                if msg["method"] == "workspace/configuration":
                    result = [self.settings.get(i.get("section", ""), None) for i in msg["params"]["items"]]
                self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif "id" in msg:
                with self.cv:
                    self.responses[msg["id"]] = msg
                    self.cv.notify_all()
            elif msg.get("method") == "textDocument/publishDiagnostics":
                prm = msg["params"]
                with self.cv:
                    self.diagnostics.append((now, prm["uri"], prm.get("version"), len(prm["diagnostics"])))
                    self.cv.notify_all()

    def request(self, method, params, timeout=60):
        self.next_id += 1
        i = self.next_id
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        with self.cv:
            self.cv.wait_for(lambda: i in self.responses, timeout)
            return self.responses.get(i)

    def notify(self, method, params):
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_diagnostics(self, uri, after, timeout=30):
        """The first diagnostics for `uri` published after index `after`: (time, count)."""
        def found():
            return next((d for d in self.diagnostics[after:] if d[1] == uri), None)
        with self.cv:
            self.cv.wait_for(lambda: found() is not None, timeout)
            d = found()
        return d

    def close(self):
        try:
            self.request("shutdown", None, timeout=5)
            self.notify("exit", None)
            self.p.wait(timeout=5)
        except Exception:
            self.p.kill()


def lsp_latency(argv, settings, path, rounds, init_options=None):
    """didOpen `path`, then `rounds` edits (a character typed into a comment on line 1, then
    removed), each waiting for the diagnostics published after it: the latencies (s)."""
    s = Lsp(argv, settings)
    root = path.parent.as_uri()
    s.request("initialize", {
        "processId": os.getpid(), "rootUri": root,
        "capabilities": {"textDocument": {"publishDiagnostics": {"versionSupport": True},
                                          "synchronization": {"didSave": True}},
                         "workspace": {"configuration": True, "didChangeConfiguration": {"dynamicRegistration": True}}},
        "initializationOptions": init_options,
        "workspaceFolders": [{"uri": root, "name": "bench"}],
    })
    s.notify("initialized", {})
    s.notify("workspace/didChangeConfiguration", {"settings": settings})
    uri = path.as_uri()
    text = path.read_text()
    first = text.split("\n", 1)[0]
    mark = len(s.diagnostics)
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    opened = s.wait_diagnostics(uri, mark, timeout=60)
    times = []
    for r in range(rounds):
        version = r + 2
        col = len(first)
        if r % 2 == 0:
            change = {"range": {"start": {"line": 0, "character": col}, "end": {"line": 0, "character": col}}, "text": "x"}
        else:
            change = {"range": {"start": {"line": 0, "character": col}, "end": {"line": 0, "character": col + 1}}, "text": ""}
        mark = len(s.diagnostics)
        t = time.perf_counter()
        s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
        d = s.wait_diagnostics(uri, mark)
        if d is None:
            s.close()
            raise SystemExit(f"no diagnostics from {argv[0]} within 30 s of edit {r}")
        times.append(d[0] - t)
    s.close()
    return times, (opened[3] if opened else None)


def lsp_part(args, root, work):
    schema = (root / "schemas" / "fuzzfile.schema.json").resolve()
    small = work / "lsp-small" / "small.fz"
    big = work / "lsp-big" / "big.fz"
    small.parent.mkdir(parents=True, exist_ok=True)
    big.parent.mkdir(parents=True, exist_ok=True)
    # Both files start with a comment line: the edit types into it.
    small.write_text(small_file())
    big.write_text(big_file(5000))
    yls_settings = {"yaml": {"schemas": {str(schema): ["*.fz"]}, "validate": True, "format": {"enable": False},
                             "hover": False, "completion": False},
                    "redhat": {"telemetry": {"enabled": False}}}
    servers = [
        ("fuzzlint server", [args.fuzzlint, "server"], {}),
        ("yaml-language-server + schema", [args.yaml_language_server, "--stdio"], yls_settings),
    ]
    print(f"\nLanguage servers: didChange → publishDiagnostics, {args.lsp_rounds} edits per file "
          "(one character typed into, then removed from, the first line's comment)\n")
    # The schema must be in force: a misspelt key is a diagnostic for both.
    bad = work / "lsp-small" / "misspelt.fz"
    bad.write_text("# edited\nversion: v4\njobs:\n  x:\n    imagee:\n      uri: docker://alpine:3.20\n    command: [/bin/true]\n")
    for name, argv, settings in servers:
        _, count = lsp_latency(argv, settings, bad, 0)
        print(f"{name}: {count} diagnostic(s) on a file with a misspelt key (`imagee`)")
        if not count:
            raise SystemExit(f"{name} reported nothing on {bad}: its schema is not applied")
    print()
    print("| file | server | median | p99 | median ratio | p99 ratio |")
    print("|---|---|---|---|---|---|")
    for label, path in (("20 lines", small), (f"{len(big.read_text().splitlines())} lines", big)):
        results = {}
        for name, argv, settings in servers:
            lat = sorted(lsp_latency(argv, settings, path, args.lsp_rounds)[0])
            results[name] = (statistics.median(lat), lat[min(len(lat) - 1, int(len(lat) * 0.99))])
        ref = results["fuzzlint server"]
        for name, (med, p99) in results.items():
            print(f"| {label} | {name} | {med * 1e3:.2f} ms | {p99 * 1e3:.2f} ms | {med / ref[0]:.1f}× | {p99 / ref[1]:.1f}× |")
        sys.stdout.flush()


def small_file():
    """A 20-line Fuzzfile: one job with a script, resources and a volume."""
    return "\n".join([
        "# edited", "version: v4", "volumes:", "  data:", "    reference: volume://user/ephemeral", "jobs:",
        "  hello:", "    image:", "      uri: docker://alpine:3.20", "    script: |", "      #!/bin/sh",
        "      echo hello > /data/out.txt", "    resource:", "      cpu:", "        cores: 1", "      memory:",
        "        size: 1GiB", "    mounts:", "      /data:", "        volume: data"]) + "\n"


def big_file(lines):
    """A Fuzzfile of about `lines` lines: jobs of shell scripts, env, resources, mounts and a
    dependency on the job before (crates/fuzzfile_server/examples/lsp_bench.rs's kind)."""
    out = ["# edited", "version: v4", "volumes:", "  data:", "    reference: volume://user/ephemeral", "jobs:"]
    i = 0
    while len(out) < lines:
        after = f"job-{i - 1}" if i else None
        out += [f"  job-{i}:", "    image:", "      uri: docker://alpine:3.20", "    env:", "      - STAGE=" + str(i),
                "    script: |", "      #!/bin/sh", f"      echo stage {i}", "    resource:", "      cpu:", "        cores: 2",
                "      memory:", "        size: 2GiB", "    mounts:", "      /data:", "        volume: data"]
        if after:
            out += ["    depends-on:", f"      - name: {after}", "        status: FINISHED"]
        i += 1
    return "\n".join(out[:lines]) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True, type=Path)
    ap.add_argument("--work", required=True, type=Path)
    ap.add_argument("--fuzzlint", required=True)
    ap.add_argument("--fuzz", required=True)
    ap.add_argument("--check-jsonschema", required=True)
    ap.add_argument("--yamllint", required=True)
    ap.add_argument("--yaml-language-server", required=True)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--lsp-rounds", type=int, default=200)
    ap.add_argument("--parts", default="files,lsp,plan")
    args = ap.parse_args()
    root = Path(__file__).resolve().parent.parent
    schema = str(root / "schemas" / "fuzzfile.schema.json")
    files = corpus_files(args.corpus)
    if not files:
        raise SystemExit(f"no Fuzzfiles under {args.corpus}/plain or {args.corpus}/docs")
    args.work = args.work.resolve()
    args.work.mkdir(parents=True, exist_ok=True)
    parts = args.parts.split(",")
    print(f"corpus: {args.corpus} ({len(files)} Fuzzfiles); rounds: {args.rounds}; "
          f"cores: {os.cpu_count()}; load average before: {os.getloadavg()[0]:.2f}")
    if "files" in parts:
        for count in (1, 15, 1500):
            fs = file_set(args.work, files, count)
            size = sum(os.path.getsize(f) for f in fs)
            # Half the rounds on the big set (the alternatives take seconds there).
            rounds = args.rounds if count < 1500 else max(3, args.rounds // 2)
            side_by_side(
                f"{count} file{'s' if count > 1 else ''} ({size / 1024:.0f} KiB), median of {rounds} rounds",
                [
                    ("fuzzlint check", [args.fuzzlint, "check", *fs]),
                    ("check-jsonschema (the Fuzzfile schema)", [args.check_jsonschema, "--schemafile", schema,
                                                               "--default-filetype", "yaml", *fs]),
                    ("yamllint (default rules)", [args.yamllint, "-f", "parsable", *fs]),
                    ("cat", ["cat", *fs]),
                    ("wc -w", ["wc", "-w", *fs]),
                ],
                rounds,
                "fuzzlint check",
            )
    if "lsp" in parts:
        lsp_part(args, root, args.work)
    if "plan" in parts:
        trivial = args.work / "trivial.fz"
        trivial.write_text("version: v4\njobs:\n  trivial:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/true]\n")
        side_by_side(
            f"`fuzz plan` of a trivial job, median of {args.rounds * 4} rounds",
            [("true", ["true"]), ("fuzz plan", [args.fuzz, "plan", str(trivial), "-o", "/dev/null"]),
             ("fuzzlint check", [args.fuzzlint, "check", str(trivial)])],
            args.rounds * 4,
            "true",
        )
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
