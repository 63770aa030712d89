# launch-corpus source: https://github.com/slitvinov/deepseek-slurm/blob/0f6c656297a8250f008257ddb265df0179bc7c08/main2.sh
# repository: slitvinov/deepseek-slurm
# path: main2.sh
# commit: 0f6c656297a8250f008257ddb265df0179bc7c08
# licence: none stated
# ---- verbatim from here ----
# module load python
# mamba activate env
# salloc --gpus-per-node 2 -N 2 --mem 20Gb --no-shell
# i=6053278
# sh main2.sh --jobid $i
master_addr=`srun "$@" sh -xeuc 'if test $SLURM_PROCID -eq 0; then hostname; fi'`
srun "$@" sh -xeuc '
     torchrun \
       --master-addr '$master_addr' \
       --nnodes $SLURM_NNODES \
       --node-rank $SLURM_NODEID \
       --nproc-per-node gpu \
       main1.py'
