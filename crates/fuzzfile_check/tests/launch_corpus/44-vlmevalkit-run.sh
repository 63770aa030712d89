# launch-corpus source: https://github.com/open-compass/VLMEvalKit/blob/2b5f0fd6a74c14c806d750ea56329071bd83aacc/scripts/run.sh
# repository: open-compass/VLMEvalKit
# path: scripts/run.sh
# commit: 2b5f0fd6a74c14c806d750ea56329071bd83aacc
# licence: see repository LICENSE (not stated in the file)
# ---- verbatim from here ----
#!/bin/bash
set -x
export GPU=$(nvidia-smi --list-gpus | wc -l)
torchrun --nproc-per-node=$GPU run.py ${@:1}
