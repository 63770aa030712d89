# launch-corpus source: https://github.com/pytorch/torchtune/blob/bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1/README.md
# repository: pytorch/torchtune
# path: README.md
# commit: bd2a0fc7c31430972728494fa01aaeeb0ebf1ba1
# licence: BSD-3-Clause
# note: lines 263-263 of README.md (a shell block of the document)
# ---- verbatim from here ----
tune run --nproc_per_node 2 full_finetune_distributed --config llama3_1/8B_full
