#!/usr/bin/env bash
# A Slurm cluster on this machine, for tests: one slurmctld and N slurmd (nodes n1..nN, all
# on 127.0.0.1, each slurmd on its own port), authenticated by a munged of its own (own key,
# own socket), without cgroups or accounting. Everything it writes is under DIR; the system's
# munged and slurm.conf are neither used nor touched.
#
#   scripts/slurm-local.sh start [DIR]    start it; wait until every node is idle; print the
#                                         line that points Slurm's commands at it
#   scripts/slurm-local.sh stop [DIR]     stop every daemon it started; remove DIR
#   scripts/slurm-local.sh status [DIR]   sinfo of it
#
# DIR defaults to ${TMPDIR:-/tmp}/fuzz-slurm. Settings (environment):
#   FUZZ_SLURM_NODES  nodes (default 3)
#   FUZZ_SLURM_PORT   slurmctld's port (default 16817); node i's slurmd listens on PORT + i
#   FUZZ_SLURM_CPUS   CPUs of each node (default 1; more than the machine has is allowed)
#
# Then, with SLURM_CONF=DIR/slurm.conf:
#   salloc -N3 srun --overlap --nodes=1 --ntasks=1 -w n2 printenv SLURMD_NODENAME
#
# Needs root and Debian's slurmctld, slurmd, slurm-client and munge (Slurm 22.05 in
# Debian 12; several slurmd on one host is a feature of that build: `slurmd -N NAME`).
# Every node has the machine's host name; SLURMD_NODENAME tells them apart.
set -euo pipefail

cmd="${1:-}"
dir="${2:-${TMPDIR:-/tmp}/fuzz-slurm}"
nodes="${FUZZ_SLURM_NODES:-3}"
port="${FUZZ_SLURM_PORT:-16817}"
cpus="${FUZZ_SLURM_CPUS:-1}"

die() {
  echo "slurm-local: $*" >&2
  exit 2
}

need() {
  command -v "$1" >/dev/null 2>&1 || die "$1 is not installed (Debian package: $2)"
}

conf() {
  local host
  host="$(hostname)"
  cat <<EOF
ClusterName=fuzzlocal
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${dir}/munge/socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool/%n
SlurmctldPidFile=${dir}/run/slurmctld.pid
SlurmdPidFile=${dir}/run/slurmd-%n.pid
SlurmctldLogFile=${dir}/log/slurmctld.log
SlurmdLogFile=${dir}/log/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmctldDebug=info
SlurmdDebug=info
NodeName=n[1-${nodes}] NodeHostname=${host} NodeAddr=127.0.0.1 Port=$((port + 1))-$((port + nodes)) CPUs=${cpus} State=UNKNOWN
PartitionName=local Nodes=n[1-${nodes}] Default=YES MaxTime=INFINITE State=UP
EOF
}

kill_pidfile() {
  local file="$1" pid
  [ -f "$file" ] || return 0
  pid="$(cat "$file" 2>/dev/null || true)"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || return 0
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
}

stop() {
  [ -d "$dir" ] || return 0
  if [ -f "$dir/slurm.conf" ]; then
    SLURM_CONF="$dir/slurm.conf" timeout 10 scontrol shutdown >/dev/null 2>&1 || true
  fi
  local f
  for f in "$dir"/run/slurmd-*.pid "$dir/run/slurmctld.pid" "$dir/munge/pid"; do
    kill_pidfile "$f"
  done
  rm -rf "$dir"
}

start() {
  [ "$(id -u)" = 0 ] || die "needs root (slurmd starts jobs as their users)"
  need slurmctld slurmctld
  need slurmd slurmd
  need scontrol slurm-client
  need munged munge
  need mungekey munge
  [ "$nodes" -ge 1 ] 2>/dev/null || die "FUZZ_SLURM_NODES=$nodes: a whole number, at least 1"
  if [ -e "$dir/run/slurmctld.pid" ]; then
    die "$dir holds a running cluster: stop it first (scripts/slurm-local.sh stop $dir)"
  fi
  rm -rf "$dir"
  mkdir -p "$dir"/{state,spool,run,log}
  install -d -m 700 "$dir/munge"
  mungekey --create --keyfile="$dir/munge/munge.key"
  munged --force --socket="$dir/munge/socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munge/pid" --log-file="$dir/munge/log" --seed-file="$dir/munge/seed"
  conf >"$dir/slurm.conf"
  export SLURM_CONF="$dir/slurm.conf"
  # Each daemon forks into the background and writes its pid file.
  slurmctld -i
  for i in $(seq "$nodes"); do
    slurmd -N "n$i"
  done
  local idle=0
  for _ in $(seq 100); do
    idle="$(sinfo -h -t idle -o '%D' 2>/dev/null | awk '{s += $1} END {print s + 0}')"
    [ "$idle" = "$nodes" ] && break
    sleep 0.2
  done
  if [ "$idle" != "$nodes" ]; then
    echo "slurm-local: $idle of $nodes nodes idle after 20 s; the logs:" >&2
    tail -n 20 "$dir"/log/*.log >&2 || true
    stop
    exit 1
  fi
  echo "export SLURM_CONF=$dir/slurm.conf"
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status)
    [ -f "$dir/slurm.conf" ] || die "no cluster in $dir"
    SLURM_CONF="$dir/slurm.conf" sinfo
    ;;
  *)
    echo "usage: $0 start|stop|status [DIR]" >&2
    exit 2
    ;;
esac
