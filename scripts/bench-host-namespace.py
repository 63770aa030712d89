#!/usr/bin/env python3
"""What the host runtime's private mount namespace adds to a trivial job.

Alternates, N times each (default 30), wall-clock from spawn to exit, median:
/bin/true directly; `fuzz run` of `command: [/bin/true]` without a namespace; with a volume
at /data (the namespace, / shadowed); with a file at /tmp/... (/ and /tmp shadowed); and
`bwrap --dev-bind / / -- /bin/true` alone.

    cargo build --release -p fuzz
    python3 scripts/bench-host-namespace.py [N]
"""
import os, shutil, statistics, subprocess, sys, tempfile, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
fuzz = os.path.join(root, "target/release/fuzz")
d = tempfile.mkdtemp(prefix="fuzz-bench-ns-")
files = {
    "plain.fz": "version: v4\njobs:\n  t:\n    image: {uri: docker://alpine:3.20}\n    command: [/bin/true]\n",
    "data.fz": "version: v4\nvolumes:\n  d: {reference: volume://user/ephemeral}\njobs:\n  t:\n    image: {uri: docker://alpine:3.20}\n    mounts:\n      /data: d\n    command: [/bin/true]\n",
    "tmp.fz": "version: v4\nfiles:\n  f: x\njobs:\n  t:\n    image: {uri: docker://alpine:3.20}\n    files:\n      /tmp/fuzz-bench-ns-file: file://f\n    command: [/bin/true]\n",
}
for name, text in files.items():
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
run = [fuzz, "run", "--runtime", "host", "--status", "never", "--workdir", "{w}"]
ways = {
    "`/bin/true` directly": ["/bin/true"],
    "`fuzz run`, no namespace": run + [os.path.join(d, "plain.fz")],
    "`fuzz run`, volume at /data (namespace, / shadowed)": run + [os.path.join(d, "data.fz")],
    "`fuzz run`, file at /tmp (namespace, / and /tmp shadowed)": run + [os.path.join(d, "tmp.fz")],
    "`bwrap --dev-bind / / -- /bin/true`": ["bwrap", "--dev-bind", "/", "/", "--", "/bin/true"],
}
n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
times = {k: [] for k in ways}
for i in range(n + 1):
    for k, argv in ways.items():
        w = os.path.join(d, f"run-{i}")
        a = [x.replace("{w}", w) for x in argv]
        t = time.perf_counter()
        r = subprocess.run(a, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        took = time.perf_counter() - t
        if r.returncode != 0:
            sys.exit(f"{k}: exit {r.returncode}")
        shutil.rmtree(w, ignore_errors=True)
        if i > 0:  # the first round warms the caches
            times[k].append(took * 1000)
shutil.rmtree(d, ignore_errors=True)
for k, v in times.items():
    print(f"| {k} | {statistics.median(v):.2f} ms |")
print(f"entries: /tmp {len(os.listdir('/tmp'))}, / {len(os.listdir('/'))}; load {open('/proc/loadavg').read().split()[:3]}")
