#!/usr/bin/env bash
# On a GPU node with torch, NCCL and torchrun (one GPU): two misconfigured runs through
# `fuzz run --runtime host`, each checked by fuzzlint first.
#   1. examples/device/misconfigured-2-workers.fz: two GPUs asked for, two workers started.
#      `fuzz run` refuses it before anything starts (the node has one GPU); with `--gpus 2`
#      declaring a second GPU the node lacks, it starts and fails as on a misdeclared node.
#   2. the single-GPU example with NCCL_IB_HCA naming an adapter the node does not have.
# Prints what fuzzlint says with the node's cluster profile, the run's exit code, and the
# runner's explanation lines (`fuzz:` lines and `log_explained` events).
#   bash scripts/device-misconfig.sh [path/to/fuzz] [path/to/fuzzlint]
set -u
FUZZ=${1:-./target/release/fuzz}
LINT=${2:-./target/release/fuzzlint}
OUTDIR=${OUT:-/tmp/misconfig}
mkdir -p "$OUTDIR"
PROFILE=examples/clusters/h200-1gpu.toml

echo "== 1. two workers on a one-GPU node"
"$LINT" check --cluster "$PROFILE" examples/device/misconfigured-2-workers.fz; echo "fuzzlint exit=$?"
"$FUZZ" run examples/device/misconfigured-2-workers.fz --runtime host --status never \
  > "$OUTDIR/workers-refused.log" 2>&1
echo "fuzz run exit=$? (refused: the node has one GPU)"
grep -m1 "asks 2 GPU" "$OUTDIR/workers-refused.log"
"$FUZZ" run examples/device/misconfigured-2-workers.fz --runtime host --status never --gpus 2 \
  --events "$OUTDIR/workers-events.jsonl" > "$OUTDIR/workers.log" 2>&1
echo "fuzz run --gpus 2 exit=$?"
grep -n "invalid device ordinal" "$OUTDIR/workers.log" | head -3
grep -n "fuzz:" "$OUTDIR/workers.log" | head -5
grep -c log_explained "$OUTDIR/workers-events.jsonl"

echo "== 2. NCCL_IB_HCA naming an adapter the node lacks"
FZ=$OUTDIR/ib-hca.fz
sed 's/      - NCCL_DEBUG=INFO/      - NCCL_DEBUG=INFO\n      - NCCL_IB_HCA=mlx5_99/' examples/device/nccl-allreduce-1gpu.fz > "$FZ"
"$LINT" check --cluster "$PROFILE" "$FZ"; echo "fuzzlint exit=$?"
"$FUZZ" run "$FZ" --runtime host --status never --events "$OUTDIR/ib-events.jsonl" > "$OUTDIR/ib.log" 2>&1
echo "fuzz run exit=$?"
grep -n "NET/IB\|Using network\|NCCL_IB_HCA" "$OUTDIR/ib.log" | head -5
grep -n "fuzz:" "$OUTDIR/ib.log" | head -5
grep -h log_explained "$OUTDIR/ib-events.jsonl" | head -3
