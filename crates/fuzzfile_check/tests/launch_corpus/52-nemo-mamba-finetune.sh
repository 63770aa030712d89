# launch-corpus source: https://github.com/NVIDIA/NeMo/blob/8cfedd7203462cb251a914e700e5605444277561/tutorials/llm/mamba/mamba.rst
# repository: NVIDIA/NeMo
# path: tutorials/llm/mamba/mamba.rst
# commit: 8cfedd7203462cb251a914e700e5605444277561
# licence: Apache-2.0
# note: lines 91-141 of tutorials/llm/mamba/mamba.rst (a shell block of the document); the reStructuredText code block keeps its 4-space indentation
# ---- verbatim from here ----
    #!/bin/bash

    MBS=4
    GBS=128
    TP=4 # According to the saved checkpoint
    SP=True # True only if TP>1 otherwise False
    SEQ_LEN=2048
    NUM_DEVICES=8
    PATH_TO_NEMO_MODEL=<path to .nemo file>
    TRAIN_DATASET_PATH=<path to training dataset file>
    VAL_DATASET_PATH=<path to validation dataset file>
    CONFIG_PATH="/opt/NeMo/examples/nlp/language_modeling/tuning/conf/"
    CONFIG_NAME="megatron_mamba_finetuning_config"
    SAVE_DIR=<path to the saving directory>

    torchrun --nproc_per_node=${NUM_DEVICES} \
            /opt/NeMo/examples/nlp/language_modeling/tuning/megatron_mamba_finetuning.py \
            --config-path=${CONFIG_PATH} \
            --config-name=${CONFIG_NAME} \
            trainer.devices=${NUM_DEVICES} \
            trainer.precision=bf16 \
            trainer.accelerator=gpu \
            trainer.log_every_n_steps=1 \
            trainer.val_check_interval=100 \
            trainer.limit_val_batches=50 \
            +trainer.num_sanity_val_steps=0 \
            +trainer.accumulate_grad_batches=1 \
            trainer.max_steps=700 \
            trainer.gradient_clip_val=1.0 \
            exp_manager.exp_dir=${SAVE_DIR} \
            exp_manager.resume_if_exists=True \
            exp_manager.create_checkpoint_callback=True \
            exp_manager.create_wandb_logger=True \
            model.tensor_model_parallel_size=${TP} \
            model.sequence_parallel=$SP \
            model.peft.peft_scheme='none' \
            model.megatron_amp_O2=True \
            model.encoder_seq_length=${SEQ_LEN} \
            model.attention_backend='fused' \
            model.data.validation_ds.pad_to_max_length=True \
            model.data.train_ds.pad_to_max_length=True \
            model.optim.name="distributed_fused_adam" \
            model.data.train_ds.max_seq_length=${SEQ_LEN} \
            model.data.validation_ds.max_seq_length=${SEQ_LEN} \
            model.micro_batch_size=${MBS} \
            model.global_batch_size=${GBS} \
            model.restore_from_path=${PATH_TO_NEMO_MODEL} \
            model.data.train_ds.file_names=[${TRAIN_DATASET_PATH}] \
            model.data.validation_ds.file_names=[${VAL_DATASET_PATH}] \
            model.optim.lr=5e-6 \
            model.optim.sched.min_lr=1e-7
