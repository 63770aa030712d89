# launch-corpus source: https://github.com/randydl/LLaMA-Factory/blob/0059276361b2b394b0b7cacceb12b518aa7d0380/run_ds.sh
# repository: randydl/LLaMA-Factory
# path: run_ds.sh
# commit: 0059276361b2b394b0b7cacceb12b518aa7d0380
# licence: Apache-2.0 (a fork of hiyouga/LLaMA-Factory)
# ---- verbatim from here ----
#!/bin/bash

deepspeed \
    --num_gpus 8 \
    --num_nodes 4 \
    --hostfile hostfile \
    --master_addr 10.252.32.12 \
    randy/train.py "$@"
