# launch-corpus source: https://github.com/hiyouga/LLaMA-Factory/blob/ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30/examples/train_lora/qwen3_lora_sft.sh
# repository: hiyouga/LLaMA-Factory
# path: examples/train_lora/qwen3_lora_sft.sh
# commit: ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30
# licence: Apache-2.0
# ---- verbatim from here ----
#!/bin/bash

set -x

MODEL_PATH=Qwen/Qwen3-4B-Instruct-2507

llamafactory-cli train \
    --model_name_or_path ${MODEL_PATH} \
    --trust_remote_code \
    --stage sft \
    --do_train \
    --finetuning_type lora \
    --lora_rank 8 \
    --lora_target all \
    --dataset identity,alpaca_en_demo \
    --template qwen3_nothink \
    --cutoff_len 2048 \
    --max_samples 1000 \
    --preprocessing_num_workers 16 \
    --dataloader_num_workers 4 \
    --output_dir saves/qwen3-4b/lora/sft \
    --logging_steps 10 \
    --save_steps 500 \
    --plot_loss \
    --overwrite_output_dir \
    --save_only_model false \
    --report_to none \
    --per_device_train_batch_size 1 \
    --gradient_accumulation_steps 8 \
    --learning_rate 1e-4 \
    --num_train_epochs 3.0 \
    --lr_scheduler_type cosine \
    --warmup_ratio 0.1 \
    --bf16 \
    --ddp_timeout 180000000
