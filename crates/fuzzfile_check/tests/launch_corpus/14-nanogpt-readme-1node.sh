# launch-corpus source: https://github.com/karpathy/nanoGPT/blob/3adf61e154c3fe3fca428ad6bc3818b27a3b8291/README.md
# repository: karpathy/nanoGPT
# path: README.md
# commit: 3adf61e154c3fe3fca428ad6bc3818b27a3b8291
# licence: MIT
# note: lines 118-118 of README.md (a shell block of the document)
# ---- verbatim from here ----
torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2.py
