#!/usr/bin/env bash
# On a GPU node with torch, NCCL and torchrun: run the single-node NCCL example through
# `fuzz run --runtime host`, and the same torchrun command bare, alternately, N times each.
# Prints, per run, the time from start to the first completed all-reduce and the total.
#   bash scripts/device-nccl-bench.sh [N] [path/to/fuzz]
set -u
N=${1:-3}
FUZZ=${2:-./target/release/fuzz}
OUTDIR=${OUT:-/tmp/nccl-bench}
mkdir -p "$OUTDIR"
FZ=examples/device/nccl-allreduce-1gpu.fz
now() { date +%s.%N; }
delta() { python3 -c "print(f'{$1 - $2:.3f}')"; }
first_at() { grep -o 'FIRST_COLLECTIVE_AT [0-9.]*' "$1" | awk '{print $2}' | head -1; }

# One kept run gives the script file for the bare runs.
"$FUZZ" run "$FZ" --keep > "$OUTDIR/fuzz-keep.log" 2>&1
SCRIPT=$(grep -o 'run directory [^)]*' "$OUTDIR/fuzz-keep.log" | awk '{print $3}')
PY=$(find "$SCRIPT" -name allreduce.py | head -1)
[ -n "$PY" ] || { echo "no allreduce.py kept"; cat "$OUTDIR/fuzz-keep.log"; exit 1; }
BARE=$(mktemp -d) && cp "$PY" "$BARE/"

for i in $(seq 1 "$N"); do
  s=$(now); "$FUZZ" run "$FZ" --events "$OUTDIR/events-$i.jsonl" > "$OUTDIR/fuzz-$i.log" 2>&1; rc=$?; e=$(now)
  f=$(first_at "$OUTDIR/fuzz-$i.log")
  echo "fuzz run  #$i exit=$rc first_collective_s=$(delta "${f:-0}" "$s") total_s=$(delta "$e" "$s")"
  s=$(now); (cd "$BARE" && NCCL_DEBUG=INFO torchrun --standalone --nproc-per-node 1 allreduce.py) > "$OUTDIR/bare-$i.log" 2>&1; rc=$?; e=$(now)
  f=$(first_at "$OUTDIR/bare-$i.log")
  echo "bare      #$i exit=$rc first_collective_s=$(delta "${f:-0}" "$s") total_s=$(delta "$e" "$s")"
done
grep -h "FIRST_COLLECTIVE_AT\|NET/IB\|Using network\|NCCL version" "$OUTDIR/fuzz-1.log" | head -6
