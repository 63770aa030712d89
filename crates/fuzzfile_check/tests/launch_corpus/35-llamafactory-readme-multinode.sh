# launch-corpus source: https://github.com/hiyouga/LLaMA-Factory/blob/ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30/examples/README.md
# repository: hiyouga/LLaMA-Factory
# path: examples/README.md
# commit: ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30
# licence: Apache-2.0
# note: lines 152-153 of examples/README.md (a shell block of the document)
# ---- verbatim from here ----
FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=0 MASTER_ADDR=192.168.0.1 MASTER_PORT=29500 llamafactory-cli train examples/train_full/qwen3_full_sft.yaml
FORCE_TORCHRUN=1 NNODES=2 NODE_RANK=1 MASTER_ADDR=192.168.0.1 MASTER_PORT=29500 llamafactory-cli train examples/train_full/qwen3_full_sft.yaml
