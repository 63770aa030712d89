#!/usr/bin/env bash
# On a GPU node with torch, NCCL and torchrun: examples/device/nccl-allreduce-bw.fz with one
# worker per GPU of the node (the Fuzzfile's GPU count is rewritten to the node's, request and
# --nproc-per-node together), checked by fuzzlint, then run N times through
# `fuzz run --runtime host`, alternating with the same torchrun command run bare.
# Prints, per run, the time to the first completed all-reduce, the total, and the bus
# bandwidth; then the means and the ratios (fuzz run / bare).
#   bash scripts/device-nccl-bw.sh [N] [path/to/fuzz] [path/to/fuzzlint]
set -u
N=${1:-3}
FUZZ=${2:-./target/release/fuzz}
LINT=${3:-./target/release/fuzzlint}
OUTDIR=${OUT:-/tmp/nccl-bw}
mkdir -p "$OUTDIR"
GPUS=$(nvidia-smi -L | grep -c '^GPU ')
FZ=$OUTDIR/nccl-allreduce-bw.fz
sed -e "s/--nproc-per-node 1/--nproc-per-node $GPUS/" -e "s/nvidia.com\/gpu: 1/nvidia.com\/gpu: $GPUS/" \
  examples/device/nccl-allreduce-bw.fz > "$FZ"
echo "GPUs: $GPUS ($(nvidia-smi --query-gpu=name --format=csv,noheader | head -1))"
"$LINT" check "$FZ" || exit 1
now() { date +%s.%N; }
field() { grep -o "$2 [0-9.]*" "$1" | awk '{print $2}' | head -1; }

# One kept run gives the script for the bare runs.
"$FUZZ" run "$FZ" --runtime host --status never --keep > "$OUTDIR/fuzz-keep.log" 2>&1
RUN=$(grep -o 'run directory [^)]*' "$OUTDIR/fuzz-keep.log" | awk '{print $3}')
PY=$(find "$RUN" -name allreduce_bw.py | head -1)
[ -n "$PY" ] || { echo "no allreduce_bw.py kept"; cat "$OUTDIR/fuzz-keep.log"; exit 1; }
BARE=$(mktemp -d) && cp "$PY" "$BARE/"

: > "$OUTDIR/rows"
for i in $(seq 1 "$N"); do
  s=$(now); "$FUZZ" run "$FZ" --runtime host --status never > "$OUTDIR/fuzz-$i.log" 2>&1; rc=$?; e=$(now)
  echo "fuzz $i $rc $s $e $(field "$OUTDIR/fuzz-$i.log" FIRST_COLLECTIVE_AT) $(field "$OUTDIR/fuzz-$i.log" busbw_GBps) $(field "$OUTDIR/fuzz-$i.log" algbw_GBps)" >> "$OUTDIR/rows"
  s=$(now); (cd "$BARE" && NCCL_DEBUG=WARN NCCL_NVLS_ENABLE=0 torchrun --standalone --nproc-per-node "$GPUS" allreduce_bw.py) > "$OUTDIR/bare-$i.log" 2>&1; rc=$?; e=$(now)
  echo "bare $i $rc $s $e $(field "$OUTDIR/bare-$i.log" FIRST_COLLECTIVE_AT) $(field "$OUTDIR/bare-$i.log" busbw_GBps) $(field "$OUTDIR/bare-$i.log" algbw_GBps)" >> "$OUTDIR/rows"
done
python3 - "$OUTDIR/rows" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
res = {}
for kind, i, rc, s, e, first, busbw, algbw in (r + ["0"] * (8 - len(r)) for r in rows):
    s, e, first = float(s), float(e), float(first or 0)
    print(f"{kind} #{i} exit={rc} first_collective_s={first - s:.3f} total_s={e - s:.3f} busbw_GBps={busbw} algbw_GBps={algbw}")
    res.setdefault(kind, []).append((first - s, e - s, float(busbw or 0), float(algbw or 0)))
m = {k: [st.mean(c) for c in zip(*v)] for k, v in res.items()}
for k, (f, t, b, a) in m.items():
    print(f"mean {k}: first_collective_s={f:.3f} total_s={t:.3f} busbw_GBps={b:.1f} algbw_GBps={a:.1f}")
if "fuzz" in m and "bare" in m:
    f, b = m["fuzz"], m["bare"]
    ratio = lambda x, y: x / y if y else float("nan")
    print(f"ratio fuzz/bare: first_collective {ratio(f[0], b[0]):.3f} total {ratio(f[1], b[1]):.3f} algbw {ratio(f[3], b[3]):.3f}")
PY
