#!/usr/bin/env python3
"""Write one big Fuzzfile of a realistic mix to stdout: jobs with env lists, commands,
scripts, resources, mounts and depends-on edges, about 530 bytes a job.

    python3 bench/big-fuzzfile.py 95000 > /tmp/big.fz     # about 50 MB

bench/scaling.py loads `write` from here for its inputs of 1 to 40,000 jobs.
"""
import sys


def write(n: int, out, edge: str = "depends-on") -> None:
    """`n` jobs to `out`; each job after the first names the one before with `edge`:
    `depends-on` (a dependency edge) or `requires` (the deprecated key, one `--fix` per job)."""
    out.write("version: v4\n")
    out.write("volumes:\n  data:\n    reference: volume://user/ephemeral\n")
    out.write("jobs:\n")
    for i in range(n):
        name = f"pipeline-stage-{i:06}"
        out.write(f"  {name}:\n")
        out.write("    image:\n      uri: docker://alpine:3.20\n")
        out.write(f"    env:\n      - STAGE={i}\n      - LC_ALL=C.UTF-8\n      - OUT=/data/out-{i}\n")
        if i % 3 == 0:
            out.write(
                "    script: |\n      #!/bin/sh\n      set -eu\n"
                f"      echo \"stage {i} on $(hostname)\"\n"
                f"      wc -l /data/input.txt > \"$OUT/count-{i}.txt\"\n"
            )
        else:
            out.write(f"    command: [/bin/sh, -c, \"echo stage {i} && sleep 1\"]\n")
        out.write(
            "    resource:\n      cpu:\n        cores: 2\n      memory:\n        size: 2GiB\n"
            "    mounts:\n      /data:\n        volume: data\n"
            "    policy:\n      timeout:\n        execute: 30m\n"
        )
        if i > 0 and edge == "requires":
            out.write(f"    requires: [pipeline-stage-{i - 1:06}]\n")
        elif i > 0:
            out.write(
                f"    depends-on:\n      - name: pipeline-stage-{i - 1:06}\n        status: FINISHED\n"
            )


def main() -> None:
    write(int(sys.argv[1]) if len(sys.argv) > 1 else 95000, sys.stdout)


if __name__ == "__main__":
    main()
