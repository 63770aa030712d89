#!/usr/bin/env python3
"""What the host runtime's private mount namespace adds to a trivial job.

Alternates, N times each (default 30), wall-clock from spawn to exit, median:
/bin/true directly; `fuzz run` of `command: [/bin/true]` without a namespace; with a volume
at /data (the namespace, / shadowed); with a file at /tmp/... (/ and /tmp shadowed); and
`bwrap --dev-bind / / -- /bin/true` alone.

Each `fuzz run` way is also run with `FUZZ_PROCESS_TRACKING=subreaper` (no cgroup per
instance). With `--before PATH`, every `fuzz run` way is run with that binary too (an older
build), alternating with this one in the same loop, and the ratios printed.

    cargo build --release -p fuzz
    python3 scripts/bench-host-namespace.py [N] [--before PATH] [--fuzz PATH]

`--fuzz PATH` runs that binary instead of target/release/fuzz (a node without a Rust
toolchain gets a copied one).
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
args = sys.argv[1:]
if "--fuzz" in args:
    i = args.index("--fuzz")
    fuzz = os.path.abspath(args[i + 1])
    del args[i : i + 2]
before = None
if "--before" in args:
    i = args.index("--before")
    before = os.path.abspath(args[i + 1])
    del args[i : i + 2]
n = int(args[0]) if args else 30
binaries = [("", fuzz)] + ([("before: ", before)] if before else [])
ways = {"`/bin/true` directly": ({}, ["/bin/true"])}
for label, exe in binaries:
    run = [exe, "run", "--runtime", "host", "--status", "never", "--workdir", "{w}"]
    for tracking, env in [("", {}), (", subreaper", {"FUZZ_PROCESS_TRACKING": "subreaper"})]:
        ways[f"{label}`fuzz run`, no namespace{tracking}"] = (env, run + [os.path.join(d, "plain.fz")])
        ways[f"{label}`fuzz run`, volume at /data (namespace, / shadowed){tracking}"] = (env, run + [os.path.join(d, "data.fz")])
        ways[f"{label}`fuzz run`, file at /tmp (namespace, / and /tmp shadowed){tracking}"] = (env, run + [os.path.join(d, "tmp.fz")])
ways["`bwrap --dev-bind / / -- /bin/true`"] = ({}, ["bwrap", "--dev-bind", "/", "/", "--", "/bin/true"])
times = {k: [] for k in ways}
for i in range(n + 1):
    for k, (env, argv) in ways.items():
        w = os.path.join(d, f"run-{i}")
        a = [x.replace("{w}", w) for x in argv]
        t = time.perf_counter()
        r = subprocess.run(a, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **env})
        took = time.perf_counter() - t
        if r.returncode != 0:
            sys.exit(f"{k}: exit {r.returncode}")
        shutil.rmtree(w, ignore_errors=True)
        if i > 0:  # the first round warms the caches
            times[k].append(took * 1000)
shutil.rmtree(d, ignore_errors=True)
direct = statistics.median(times["`/bin/true` directly"])
print("| how | median | over direct |" + (" before/after |" if before else ""))
print("|---|---|---|" + ("---|" if before else ""))
for k, v in times.items():
    m = statistics.median(v)
    row = f"| {k} | {m:.2f} ms | {m - direct:+.2f} ms |"
    if before and k.startswith("`fuzz run`"):
        b = statistics.median(times["before: " + k])
        row += f" {b / m:.2f}x |"
    elif before:
        row += " |"
    print(row)
print(f"entries: /tmp {len(os.listdir('/tmp'))}, / {len(os.listdir('/'))}; load {open('/proc/loadavg').read().split()[:3]}")
