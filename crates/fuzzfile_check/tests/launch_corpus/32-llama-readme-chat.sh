# launch-corpus source: https://github.com/meta-llama/llama/blob/689c7f261b9c5514636ecc3c5fefefcbb3e6eed7/README.md
# repository: meta-llama/llama
# path: README.md
# commit: 689c7f261b9c5514636ecc3c5fefefcbb3e6eed7
# licence: Llama 2 Community License (repository LICENSE)
# note: lines 62-65 of README.md (a shell block of the document)
# ---- verbatim from here ----
torchrun --nproc_per_node 1 example_chat_completion.py \
    --ckpt_dir llama-2-7b-chat/ \
    --tokenizer_path tokenizer.model \
    --max_seq_len 512 --max_batch_size 6
