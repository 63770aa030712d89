"""nccl-tests' command line read the way its `getopt_long` reads it, for the differential test
in tests/launcher_parsers.rs.

The short options and long options are those of `main` in NVIDIA/nccl-tests src/common.cu
(`getopt_long(argc, argv, "t:g:b:e:i:f:n:m:w:p:c:o:d:r:z:hG:a:", longopts, &longindex)`; the
long options `nthreads`, `ngpus`, `minbytes`, `maxbytes`, `stepbytes`, `stepfactor`, `iters`,
`agg_iters`, `warmup_iters`, `parallel_init`, `check`, `op`, `datatype`, `root`, `blocking`,
`cudagraph`, `average` take a value, `help` none). Python's `getopt.gnu_getopt` is GNU getopt's
model: options and other words in any order, `-g1` and `-g 1`, `--ngpus=1` and `--ngpus 1`,
unique prefixes of long options, `--` ends the options.

Input (stdin): one argument list a line (the words after the program), separated by U+001F.
Output (stdout): for each, the last `-t` and `-g` values (`-` when not given), separated by
U+001E, or `error` U+001E and the message.
"""

import getopt
import sys

SHORT = "t:g:b:e:i:f:n:m:w:p:c:o:d:r:z:hG:a:"
LONG = [
    "nthreads=", "ngpus=", "minbytes=", "maxbytes=", "stepbytes=", "stepfactor=", "iters=",
    "agg_iters=", "warmup_iters=", "parallel_init=", "check=", "op=", "datatype=", "root=",
    "blocking=", "cudagraph=", "average=", "help",
]


def main():
    for line in sys.stdin.read().split("\n"):
        if not line:
            continue
        argv = line.split("\x1f")
        try:
            opts, _ = getopt.gnu_getopt(argv, SHORT, LONG)
        except getopt.GetoptError as e:
            print("\x1e".join(["error", str(e)]))
            continue
        t = g = "-"
        for name, value in opts:
            if name in ("-t", "--nthreads"):
                t = value
            elif name in ("-g", "--ngpus"):
                g = value
        print("\x1e".join([t, g]))


if __name__ == "__main__":
    main()
