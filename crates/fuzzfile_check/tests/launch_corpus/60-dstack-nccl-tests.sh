# launch-corpus source: https://github.com/dstackai/dstack/blob/0105f7002c2dfe3122822cd9b92d344b76aa5a05/examples/clusters/nccl-tests/.dstack.yml
# repository: dstackai/dstack
# path: examples/clusters/nccl-tests/.dstack.yml
# commit: 0105f7002c2dfe3122822cd9b92d344b76aa5a05
# licence: Apache-2.0 (LICENSE.md: the default for files without a licence of their own)
# note: the shell block of `commands:` (lines 11-22 of the file), its YAML indentation removed
# ---- verbatim from here ----
if [ $DSTACK_NODE_RANK -eq 0 ]; then
  mpirun \
    --allow-run-as-root \
    --hostfile $DSTACK_MPI_HOSTFILE \
    -n $DSTACK_GPUS_NUM \
    -N $DSTACK_GPUS_PER_NODE \
    --mca btl_tcp_if_exclude lo,docker0 \
    --bind-to none \
    /opt/nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
else
  sleep infinity
fi
