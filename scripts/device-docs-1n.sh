#!/usr/bin/env bash
# On a GPU node with torch, NCCL and torchrun (no container runtime): the docs' single-node
# example (examples/nccl-torchrun-1n.fz) with only its GPU count changed to the node's one GPU,
# run unchanged through `fuzz run --runtime host`, alternating with the same torchrun command
# run bare, N times each. The all-reduce's result is checked in each log; printed per run: the
# time from start until the result line is in the log (the first collective done; both logs
# are watched the same way, every 5 ms) and the total, then the medians and their ratios.
#   bash scripts/device-docs-1n.sh [N] [path/to/fuzz]
set -u
N=${1:-5}
FUZZ=${2:-./target/release/fuzz}
OUTDIR=${OUT:-/tmp/docs-1n}
mkdir -p "$OUTDIR"
FZ="$OUTDIR/nccl-torchrun-1n-1gpu.fz"
# Only the GPU count changes: the request and torchrun's workers per node.
sed -e 's/--nproc-per-node 4/--nproc-per-node 1/' -e 's/nvidia.com\/gpu: 4$/nvidia.com\/gpu: 1/' \
  examples/nccl-torchrun-1n.fz > "$FZ"
diff examples/nccl-torchrun-1n.fz "$FZ"

now() { date +%s.%N; }
# Run "$@" (its output in $OUTDIR/$1.cmd), watching that and the files of glob $2 for the
# all-reduce's result; print "first total exit", in seconds.
timed() {
  local cmdlog="$OUTDIR/$1.cmd" watch=$2; shift 2
  local s; s=$(now)
  "$@" > "$cmdlog" 2>&1 &
  local pid=$! first=""
  while kill -0 "$pid" 2>/dev/null; do
    # shellcheck disable=SC2086
    if [ -z "$first" ] && grep -qs "^world 1 sum 1.0" $watch "$cmdlog"; then first=$(now); fi
    sleep 0.005
  done
  wait "$pid"; local rc=$?
  local e; e=$(now)
  # shellcheck disable=SC2086
  [ -z "$first" ] && grep -qs "^world 1 sum 1.0" $watch "$cmdlog" && first=$e
  python3 -c "print(f'{(${first:-0} - $s) if ${first:-0} else float(\"nan\"):.3f} {$e - $s:.3f} $rc')"
}

BARE=$(mktemp -d)
# The script of the file's `files: allreduce.py: |` block, as the job gets it.
python3 - "$FZ" > "$BARE/allreduce.py" <<'EOF'
import sys
lines, out, inside = open(sys.argv[1]).read().split("\n"), [], False
for l in lines:
    if l == "  allreduce.py: |":
        inside = True
    elif inside and (l.startswith("    ") or not l):
        out.append(l[4:])
    elif inside:
        break
print("\n".join(out).strip())
EOF
RESULTS="$OUTDIR/results.txt"; : > "$RESULTS"
for i in $(seq 1 "$N"); do
  W="$OUTDIR/run-$i"; rm -rf "$W"
  # The job's stdout is logs/<job>.out in its run directory.
  r=$(timed "fuzz-$i" "$W/logs/*.out" "$FUZZ" run --runtime host --workdir "$W" "$FZ")
  echo "fuzz $i $r" | tee -a "$RESULTS"
  r=$(timed "bare-$i" "" bash -c "cd '$BARE' && NCCL_DEBUG=WARN torchrun --standalone --nproc-per-node 1 allreduce.py")
  echo "bare $i $r" | tee -a "$RESULTS"
done
tail -n 5 "$OUTDIR/run-1/logs/"*.out "$OUTDIR/fuzz-1.cmd" "$OUTDIR/bare-1.cmd"
python3 - "$RESULTS" <<'EOF'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
med = {}
for kind in ("fuzz", "bare"):
    ok = [r for r in rows if r[0] == kind and r[4] == "0" and r[2] != "nan"]
    print(kind, "runs ok", len(ok), "of", sum(r[0] == kind for r in rows))
    if ok:
        med[kind] = (st.median(float(r[2]) for r in ok), st.median(float(r[3]) for r in ok))
        print(kind, "median first collective %.3f s, total %.3f s" % med[kind])
if len(med) == 2:
    print("ratio fuzz/bare: first collective %.3f, total %.3f" % (med["fuzz"][0] / med["bare"][0], med["fuzz"][1] / med["bare"][1]))
EOF
