# launch-corpus source: https://github.com/taowangcheng/nscc-gz/blob/0c6af4b6ae9cae7b8f246520131f047a3b3b52b0/slurm/slurm.sh
# repository: taowangcheng/nscc-gz
# path: slurm/slurm.sh
# commit: 0c6af4b6ae9cae7b8f246520131f047a3b3b52b0
# licence: none stated
# note: the stored version has no newline at the end
# ---- verbatim from here ----
#!/bin/bash

module load anaconda3/2023.09
source activate pytorch2
# torchrun --nnodes=2 --nproc-per-node=8 --rdzv-id=1234 --rdzv-backend=c10d --rdzv-endpoint=$1:1234 slurm.py
run_cmd="torchrun --nnodes=2 --nproc-per-node=8 --rdzv-id=1234 --rdzv-backend=c10d --rdzv-endpoint=$1:1234 slurm.py"

echo $run_cmd
# sleep 100000
eval $run_cmd

set +x
