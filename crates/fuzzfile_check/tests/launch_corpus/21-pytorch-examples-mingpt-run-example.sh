# launch-corpus source: https://github.com/pytorch/examples/blob/77f55b912142e11fcfdf5b530231fb9c52f181e8/distributed/minGPT-ddp/run_example.sh
# repository: pytorch/examples
# path: distributed/minGPT-ddp/run_example.sh
# commit: 77f55b912142e11fcfdf5b530231fb9c52f181e8
# licence: BSD-3-Clause
# ---- verbatim from here ----
#!/bin/bash
# Usage: bash run_example.sh {file_to_run.py} {num_gpus}
# where file_to_run = example to run. Default = 'main.py'
# num_gpus = num local gpus to use. Default = 16

# samples to run include:
# main.py

echo "Launching ${1:-main.py} with ${2:-16} gpus"
torchrun --standalone --nproc_per_node=${2:-16} ${1:-main.py}
