# launch-corpus source: https://github.com/NVIDIA/nccl-tests/blob/a0b82b2260cf5152b9f8c061bbf7eaf0ba096432/README.md
# repository: NVIDIA/nccl-tests
# path: README.md
# commit: a0b82b2260cf5152b9f8c061bbf7eaf0ba096432
# licence: BSD-3-Clause (NVIDIA; see LICENSE.txt)
# note: lines 38-38 of README.md (a shell block of the document); the leading `$ ` prompt is part of the document
# ---- verbatim from here ----
$ ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8
