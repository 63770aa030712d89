"""horovodrun's command-line grammar on Python's own argparse, for the differential test in
tests/launcher_parsers.rs.

The option table below restates, option for option, the `add_argument` calls of `parse_args` in
horovod/runner/launch.py (Apache-2.0,
https://github.com/horovod/horovod/blob/059f6905ddf67960d711cc9d03c77cf27014a3ae/horovod/runner/launch.py):
the same option strings, `dest`, number of values (`nargs`) and types, added in the same order
(the order matters to argparse's abbreviation matching only through the set of option strings).
Horovod's custom actions store what they are given; only the values matter here, so they are
plain `store` actions with the same `nargs`. Help texts, `--version` and the mutually exclusive
groups (which only refuse combinations) are left out.

Input (stdin): one argument list a line (what follows `horovodrun`), its words separated by
the unit separator U+001F. Output (stdout): for each, one line of `num_proc`, `hosts`,
`hostfile`, `ssh_port` and the `command` words, separated by U+001E (`-` for a value not
given), or `error` U+001E and argparse's message when it refuses the line.
"""

import argparse
import sys

# (option strings, dest, nargs or None, type name)
OPTIONS = [
    (["-np", "--num-proc"], "num_proc", None, "int"),
    (["-cb", "--check-build"], "check_build", 0, None),
    (["--disable-cache"], "disable_cache", 0, None),
    (["--start-timeout"], "start_timeout", None, "int"),
    (["--network-interfaces"], "nics", 1, None),
    (["--network-interface"], "nics", 1, None),
    (["--output-filename"], "output_filename", None, None),
    (["--verbose"], "verbose", 0, None),
    (["--config-file"], "config_file", None, None),
    (["-p", "--ssh-port"], "ssh_port", None, "int"),
    (["-i", "--ssh-identity-file"], "ssh_identity_file", None, None),
    (["--fusion-threshold-mb"], "fusion_threshold_mb", 1, "int"),
    (["--cycle-time-ms"], "cycle_time_ms", 1, "float"),
    (["--cache-capacity"], "cache_capacity", 1, "int"),
    (["--hierarchical-allreduce"], "hierarchical_allreduce", 0, None),
    (["--no-hierarchical-allreduce"], "hierarchical_allreduce", 0, None),
    (["--hierarchical-allgather"], "hierarchical_allgather", 0, None),
    (["--no-hierarchical-allgather"], "hierarchical_allgather", 0, None),
    (["--autotune"], "autotune", 0, None),
    (["--no-autotune"], "autotune", 0, None),
    (["--autotune-log-file"], "autotune_log_file", 1, None),
    (["--autotune-warmup-samples"], "autotune_warmup_samples", 1, "int"),
    (["--autotune-steps-per-sample"], "autotune_steps_per_sample", 1, "int"),
    (["--autotune-bayes-opt-max-samples"], "autotune_bayes_opt_max_samples", 1, "int"),
    (["--autotune-gaussian-process-noise"], "autotune_gaussian_process_noise", 1, "float"),
    (["--min-np", "--min-num-proc"], "min_num_proc", None, "int"),
    (["--max-np", "--max-num-proc"], "max_num_proc", None, "int"),
    (["--slots-per-host"], "slots", None, "int"),
    (["--elastic-timeout"], "elastic_timeout", None, "int"),
    (["--reset-limit"], "reset_limit", None, "int"),
    (["--blacklist-cooldown-range"], "cooldown_range", 2, "int"),
    (["--timeline-filename"], "timeline_filename", 1, None),
    (["--timeline-mark-cycles"], "timeline_mark_cycles", 0, None),
    (["--no-timeline-mark-cycles"], "timeline_mark_cycles", 0, None),
    (["--no-stall-check"], "no_stall_check", 0, None),
    (["--stall-check"], "no_stall_check", 0, None),
    (["--stall-check-warning-time-seconds"], "stall_check_warning_time_seconds", 1, "int"),
    (["--stall-check-shutdown-time-seconds"], "stall_check_shutdown_time_seconds", 1, "int"),
    (["--mpi-threads-disable"], "mpi_threads_disable", 0, None),
    (["--no-mpi-threads-disable"], "mpi_threads_disable", 0, None),
    (["--mpi-args"], "mpi_args", None, None),
    (["--tcp"], "tcp_flag", 0, None),
    (["--binding-args"], "binding_args", None, None),
    (["--num-nccl-streams"], "num_nccl_streams", 1, "int"),
    (["--thread-affinity"], "thread_affinity", 1, "int"),
    (["--gloo-timeout-seconds"], "gloo_timeout_seconds", 1, "int"),
    (["--log-level"], "log_level", 1, None),
    (["--log-with-timestamp"], "log_with_timestamp", 0, None),
    (["--log-without-timestamp"], "log_with_timestamp", 0, None),
    (["-prefix-timestamp", "--prefix-output-with-timestamp"], "prefix_output_with_timestamp", 0, None),
    (["--log-hide-timestamp"], "log_with_timestamp", 0, None),
    (["--no-log-hide-timestamp"], "log_with_timestamp", 0, None),
    (["-H", "--hosts"], "hosts", None, None),
    (["-hostfile", "--hostfile"], "hostfile", None, None),
    (["--host-discovery-script"], "host_discovery_script", 1, None),
    (["--gloo"], "use_gloo", 0, None),
    (["--mpi"], "use_mpi", 0, None),
    (["--jsrun"], "use_jsrun", 0, None),
]

TYPES = {"int": int, "float": float, None: None}


class Refused(Exception):
    pass


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Refused(message)


def parser():
    p = Parser(description="Horovod Runner", add_help=True)
    for strings, dest, nargs, type_name in OPTIONS:
        if nargs == 0:
            p.add_argument(*strings, dest=dest, action="store_const", const=True)
        elif strings == ["-np", "--num-proc"]:
            p.add_argument(*strings, dest=dest, type=int, action="store")
        else:
            kwargs = {"dest": dest, "action": "store", "type": TYPES[type_name]}
            if nargs is not None:
                kwargs["nargs"] = nargs
            p.add_argument(*strings, **kwargs)
        if strings[0] == "--verbose":
            # launch.py adds the REMAINDER positional right after `--verbose`.
            p.add_argument("command", nargs=argparse.REMAINDER)
    return p


def main():
    for line in sys.stdin.read().split("\n"):
        if not line:
            continue
        argv = line.split("\x1f")
        try:
            a = parser().parse_args(argv)
            fields = [a.num_proc, a.hosts, a.hostfile, a.ssh_port]
            out = ["-" if f is None else str(f) for f in fields] + a.command
        except Refused as e:
            out = ["error", str(e)]
        print("\x1e".join(out))


if __name__ == "__main__":
    main()
