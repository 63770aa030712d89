# launch-corpus source: https://github.com/KoyoImai/SSOCL/blob/a2513bc10ae4ddff739f5d9d39521efff1c84dd5/debug.sh
# repository: KoyoImai/SSOCL
# path: debug.sh
# commit: a2513bc10ae4ddff739f5d9d39521efff1c84dd5
# licence: none stated
# note: the stored version has no newline at the end
# ---- verbatim from here ----
export NCCL_BLOCKING_WAIT=1
export NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=1200


python -m torch.distributed.launch --nproc_per_node=4 --use_env main.py --config-path ./configs/default/ --config-name default
