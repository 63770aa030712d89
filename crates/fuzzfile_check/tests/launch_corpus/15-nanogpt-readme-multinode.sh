# launch-corpus source: https://github.com/karpathy/nanoGPT/blob/3adf61e154c3fe3fca428ad6bc3818b27a3b8291/README.md
# repository: karpathy/nanoGPT
# path: README.md
# commit: 3adf61e154c3fe3fca428ad6bc3818b27a3b8291
# licence: MIT
# note: lines 126-129 of README.md (a shell block of the document)
# ---- verbatim from here ----
# Run on the first (master) node with example IP 123.456.123.456:
torchrun --nproc_per_node=8 --nnodes=2 --node_rank=0 --master_addr=123.456.123.456 --master_port=1234 train.py
# Run on the worker node:
torchrun --nproc_per_node=8 --nnodes=2 --node_rank=1 --master_addr=123.456.123.456 --master_port=1234 train.py
