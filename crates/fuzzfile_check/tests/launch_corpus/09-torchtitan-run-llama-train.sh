# launch-corpus source: https://github.com/pytorch/torchtitan/blob/4dafea8cf73b693bed41b8bd47df577c4ff3e28c/run_llama_train.sh
# repository: pytorch/torchtitan
# path: run_llama_train.sh
# commit: 4dafea8cf73b693bed41b8bd47df577c4ff3e28c
# licence: BSD-3-Clause
# ---- verbatim from here ----
#!/usr/bin/bash
# Copyright (c) Meta Platforms, Inc. and affiliates.
# All rights reserved.

# This source code is licensed under the BSD-style license found in the
# LICENSE file in the root directory of this source tree.

set -ex

# use envs as local overrides for convenience
# e.g.
# LOG_RANK=0,1 NGPU=4 ./run_llama_train.sh
NGPU=${NGPU:-"8"}
LOG_RANK=${LOG_RANK:-0}
CONFIG_FILE=${CONFIG_FILE:-"./train_configs/debug_model.toml"}

overrides=""
if [ $# -ne 0 ]; then
    overrides="$*"
fi
mkdir outputs

PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True" \
torchrun --nproc_per_node=${NGPU} --rdzv_backend c10d --rdzv_endpoint="localhost:0" \
--local-ranks-filter ${LOG_RANK} --role rank --tee 3 \
--log-dir outputs \
train.py --job.config_file ${CONFIG_FILE} $overrides
