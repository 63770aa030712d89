#!/usr/bin/env bash
# On a GPU node with torch, NCCL and torchrun: the generic multinode path on one machine.
# examples/device/nccl-torchrun-2node-local.fz runs as two nodes (`fuzz run --launcher local`),
# exec_all starting torchrun on each with its RANK and the head's address.
#   two or more GPUs: node r gets GPU r (the runner gives each local node its own, and
#     NODE_GPUS picks the same); the run is timed beside the same two torchrun commands
#     started by hand, N times each, and the all-reduce result is checked;
#   one GPU: `fuzz run` refuses two nodes of one GPU each on it before anything starts;
#     with `--gpus 2` declaring a GPU the node lacks and NODE_GPUS=0,0 both nodes use GPU 0,
#     so NCCL refuses the communicator ("Duplicate GPU detected"); the run must fail and the
#     runner must explain it.
#   bash scripts/device-nccl-2node.sh [N] [path/to/fuzz]
set -u
N=${1:-3}
FUZZ=${2:-./target/release/fuzz}
OUTDIR=${OUT:-/tmp/nccl-2node}
mkdir -p "$OUTDIR"
GPUS=$(nvidia-smi -L | grep -c '^GPU ')
FZ=$OUTDIR/two-nodes.fz
echo "GPUs: $GPUS"
if [ "$GPUS" -lt 2 ]; then
  sed 's/NODE_GPUS=0,1/NODE_GPUS=0,0/' examples/device/nccl-torchrun-2node-local.fz > "$FZ"
  "$FUZZ" run "$FZ" --runtime host --launcher local --status never > "$OUTDIR/refused.log" 2>&1
  echo "fuzz run exit=$? (refused: two nodes of one GPU each on one GPU)"
  grep -m1 "runs its 2 nodes" "$OUTDIR/refused.log"
  "$FUZZ" run "$FZ" --runtime host --launcher local --status never --gpus 2 \
    --events "$OUTDIR/events.jsonl" > "$OUTDIR/one-gpu.log" 2>&1
  echo "fuzz run exit=$? (two nodes on one GPU)"
  grep -m2 "Duplicate GPU" "$OUTDIR/one-gpu.log"
  grep -m1 "fuzz: Two ranks" "$OUTDIR/one-gpu.log"
  grep -h '"node_started"\|"node_finished"\|"gang_stopped"' "$OUTDIR/events.jsonl" | cut -c1-160
  grep "failed" "$OUTDIR/one-gpu.log" | tail -2
  exit 0
fi
cp examples/device/nccl-torchrun-2node-local.fz "$FZ"
now() { date +%s.%N; }
"$FUZZ" run "$FZ" --runtime host --launcher local --status never --keep > "$OUTDIR/keep.log" 2>&1
RUN=$(grep -o 'run directory [^)]*' "$OUTDIR/keep.log" | awk '{print $3}')
PY=$(find "$RUN" -name allreduce.py | head -1)
BARE=$(mktemp -d) && cp "$PY" "$BARE/"
for i in $(seq 1 "$N"); do
  s=$(now); "$FUZZ" run "$FZ" --runtime host --launcher local --status never > "$OUTDIR/fuzz-$i.log" 2>&1; rc=$?; e=$(now)
  echo "fuzz #$i exit=$rc total_s=$(python3 -c "print(f'{$e - $s:.3f}')") $(grep -o 'world [0-9]* sum [0-9.]*' "$OUTDIR/fuzz-$i.log")"
  s=$(now)
  (cd "$BARE" && for r in 0 1; do
     CUDA_VISIBLE_DEVICES=$r NCCL_DEBUG=WARN NCCL_NVLS_ENABLE=0 torchrun --nnodes 2 --nproc-per-node 1 \
       --node-rank $r --master-addr 127.0.0.1 --master-port 29534 allreduce.py &
   done; wait) > "$OUTDIR/bare-$i.log" 2>&1; rc=$?; e=$(now)
  echo "bare #$i exit=$rc total_s=$(python3 -c "print(f'{$e - $s:.3f}')") $(grep -o 'world [0-9]* sum [0-9.]*' "$OUTDIR/bare-$i.log")"
done
