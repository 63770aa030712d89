# launch-corpus source: https://github.com/EleutherAI/gpt-neox/blob/ea7aefd8f8e183256992d9fede4d7c71a46d67a5/README.md
# repository: EleutherAI/gpt-neox
# path: README.md
# commit: ea7aefd8f8e183256992d9fede4d7c71a46d67a5
# licence: Apache-2.0
# note: lines 392-392 of README.md (a shell block of the document)
# ---- verbatim from here ----
./deepy.py train.py ./configs/20B.yml ./configs/local_cluster.yml
