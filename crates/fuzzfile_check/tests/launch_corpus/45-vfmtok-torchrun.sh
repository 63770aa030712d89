# launch-corpus source: https://github.com/iluvn01/VFMTok/blob/e118e5cb387481ca429aa7c79b0da56ab12f3c88/scripts/autoregressive/torchrun.sh
# repository: iluvn01/VFMTok
# path: scripts/autoregressive/torchrun.sh
# commit: e118e5cb387481ca429aa7c79b0da56ab12f3c88
# licence: none stated
# ---- verbatim from here ----
#!/usr/bin/bash
echo torchrun --nproc_per_node $PROC_PER_NODE --master_addr $MASTER_ADDR --master_port ${MASTER_PORT:-5678} --nnodes $NODE_COUNT --node_rank $NODE_RANK -- ${@:1}
torchrun --nproc_per_node $PROC_PER_NODE --master_addr $MASTER_ADDR --master_port ${MASTER_PORT:-5678} --nnodes $NODE_COUNT --node_rank $NODE_RANK -- ${@:1}
