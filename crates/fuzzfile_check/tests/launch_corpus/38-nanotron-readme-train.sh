# launch-corpus source: https://github.com/huggingface/nanotron/blob/2411b022a75fb7f7561a1bb4166706da5e1b76de/README.md
# repository: huggingface/nanotron
# path: README.md
# commit: 2411b022a75fb7f7561a1bb4166706da5e1b76de
# licence: Apache-2.0
# note: lines 97-97 of README.md (a shell block of the document)
# ---- verbatim from here ----
CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc_per_node=8 run_train.py --config-file examples/config_tiny_llama.yaml
