#!/usr/bin/env python3
"""Cost of moving a process into a cgroup (the kernel's wait for an RCU grace period): `/bin/sh`
that writes its pid to a fresh child cgroup's cgroup.procs, against `/bin/sh -c true`, after an
idle moment (0.3 s) and right after another move."""
import os, statistics, subprocess, time
own = open("/proc/self/cgroup").read().split("0::", 1)[1].split("\n")[0]
mnt = [l.split()[4] for l in open("/proc/self/mountinfo") if " - cgroup2 " in l][0]
base = os.path.join(mnt, own.lstrip("/"))
d = os.path.join(base, f"gp-{os.getpid()}"); os.mkdir(d)
def t(argv):
    s = time.perf_counter(); subprocess.run(argv, check=True); return (time.perf_counter() - s) * 1e3
mv = ["/bin/sh", "-c", 'echo $$ > "$1"', "x", d + "/cgroup.procs"]
idle, again, plain = [], [], []
for i in range(15):
    time.sleep(0.3); idle.append(t(mv)); again.append(t(mv)); time.sleep(0.3); plain.append(t(["/bin/sh", "-c", "true"]))
os.rmdir(d)
m = statistics.median
print(f"cgroup2 at {mnt}, base {base}; medians of 15 (ms): move after idle {m(idle):.2f} (min {min(idle):.2f}, max {max(idle):.2f}); move right after a move {m(again):.2f}; plain sh {m(plain):.2f}")
