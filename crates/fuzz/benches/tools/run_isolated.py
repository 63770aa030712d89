#!/usr/bin/env python3
"""`fuzz --version` against `/bin/true`, alternating, and isolated `fuzz run`s (0.3 s pause
before each) of each build against /bin/true; medians. usage: run_isolated.py N FUZZ..."""
import os, statistics, subprocess, sys, tempfile, time
n = int(sys.argv[1]); builds = sys.argv[2:]
d = tempfile.mkdtemp(prefix="fuzz-start-")
fz = os.path.join(d, "true.fz")
open(fz, "w").write("version: v4\njobs:\n  noop:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/true]\n")
def t(argv, env=None):
    s = time.perf_counter(); subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env); return (time.perf_counter() - s) * 1e3
m = statistics.median
true_, ver = [], {b: [] for b in builds}
for i in range(n):
    true_.append(t(["/bin/true"]))
    for b in builds: ver[b].append(t([b, "--version"]))
print(f"process start, median of {n}: /bin/true {m(true_):.2f} ms; " + "; ".join(f"{b} --version {m(v):.2f} ms" for b, v in ver.items()))
for tracking in ["auto", "subreaper"]:
    env = dict(os.environ, FUZZ_PROCESS_TRACKING=tracking)
    direct, runs = [], {b: [] for b in builds}
    for i in range(n // 2):
        time.sleep(0.3); direct.append(t(["/bin/true"]))
        for k, b in enumerate(builds):
            time.sleep(0.3); runs[b].append(t([b, "run", "--runtime", "host", "--status", "never", "--workdir", os.path.join(d, f"w{tracking}{i}-{k}"), fz], env))
    print(f"isolated runs (0.3 s pause before each), tracking {tracking}, median of {n // 2}: direct {m(direct):.2f} ms; " + "; ".join(f"{b} {m(v):.2f} ms (over direct {m(v) - m(direct):.2f})" for b, v in runs.items()))
