#!/usr/bin/env python3
"""Where one trivial `fuzz run` spends its wall time: strace --seccomp-bpf stops only at
execve, clone3, mkdir and exit_group (about 10 stops a run); medians over N runs, each after
a 0.3 s pause (as an isolated run sees the node) or back to back.
usage: run_phases.py FUZZ N auto|subreaper pause|nopause"""
import os, statistics, subprocess, sys, tempfile, time
fuzz, n, tracking, pause = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "pause"
d = tempfile.mkdtemp(prefix="fuzz-phases-")
fz = os.path.join(d, "true.fz")
open(fz, "w").write("version: v4\njobs:\n  noop:\n    image:\n      uri: docker://alpine:3.20\n    command: [/bin/true]\n")
env = dict(os.environ, FUZZ_PROCESS_TRACKING=tracking)
rows = []
for i in range(n + 1):
    out = os.path.join(d, f"st{i}")
    if pause: time.sleep(0.3)
    subprocess.run([os.environ.get("STRACE", "strace"), "-f", "--seccomp-bpf", "-ttt", "-o", out,
                    "-e", "trace=execve,clone3,mkdir,exit_group", fuzz, "run", "--runtime", "host",
                    "--status", "never", "--workdir", os.path.join(d, f"w{i}"), fz],
                   env=env, stderr=subprocess.DEVNULL, check=True)
    L = [l.split(None, 2) for l in open(out).read().splitlines()]
    main = L[0][0]; t0 = float(L[0][1])
    def at(pred):
        for pid, t, rest in L:
            if pred(pid, rest): return (float(t) - t0) * 1e3
    true_pid = next((pid for pid, t, rest in L if 'execve("/bin/true"' in rest), None)
    m = {
        "run dir mkdir (start, args, file, plan, node)": at(lambda p, r: "mkdir(" in r and f'/w{i}"' in r),
        "guard exec": at(lambda p, r: "fuzz-run-guard" in r and "execve(" in r),
        "probe exec": at(lambda p, r: "fuzz-cgroup-probe" in r and "execve(" in r),
        "instance cgroup mkdir": at(lambda p, r: "mkdir(" in r and r.split('"')[1].endswith("/0")),
        "wrapper exec": at(lambda p, r: '"fuzz-cgroup"' in r and "execve(" in r),
        "/bin/true exec": at(lambda p, r: 'execve("/bin/true"' in r),
        "/bin/true exit": at(lambda p, r: p == true_pid and "exit_group" in r),
        "runner exit": at(lambda p, r: p == main and "exit_group" in r),
    }
    if i > 0: rows.append(m)
print(f"{fuzz} tracking={tracking} {'pause 0.3 s' if pause else 'back to back'}: median ms since execve, {n} runs")
for k in rows[0]:
    v = [r[k] for r in rows if r[k] is not None]
    if v: print(f"  {k:48s} {statistics.median(v):7.2f}")
