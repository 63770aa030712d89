# launch-corpus source: https://github.com/huggingface/picotron/blob/59714b1bf25541dbeb6f5a721ed15f6d0768e786/README.md
# repository: huggingface/picotron
# path: README.md
# commit: 59714b1bf25541dbeb6f5a721ed15f6d0768e786
# licence: Apache-2.0 (repository LICENSE)
# note: lines 45-46 of README.md (a shell block of the document)
# ---- verbatim from here ----
    # Locally
    torchrun --nproc_per_node 8 train.py --config tmp/llama-1B-cpu/config.json
