# launch-corpus source: https://github.com/SHUMKASHUN/litgpt/blob/94e7189e58467c666fe291f31196e65c0db2c627/run_node_3.sh
# repository: SHUMKASHUN/litgpt
# path: run_node_3.sh
# commit: 94e7189e58467c666fe291f31196e65c0db2c627
# licence: Apache-2.0 (a fork of Lightning-AI/litgpt)
# ---- verbatim from here ----
export GLOO_SOCKET_IFNAME='bond0'
export NCCL_SOCKET_IFNAME='bond0'

fabric run \
    --node-rank=3 \
    --main-address=172.16.23.120 \
    --accelerator=cuda \
    --num-nodes=4 \
    --devices=8 \
    litgpt/pretrain.py  --config configs/openwebmath_mistral.yaml
