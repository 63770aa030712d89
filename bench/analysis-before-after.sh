#!/usr/bin/env bash
# The analysis before and after a change, side by side in one run.
#
#   bench/analysis-before-after.sh BASE_REV [ROUNDS] [ITERATIONS]
#
# Builds crates/fuzzfile_check/examples/analysis_compare.rs (release, mimalloc as the binaries
# have it) at BASE_REV (in a temporary git worktree, with this checkout's copy of the example)
# and at the working tree, runs the two alternately ROUNDS times (ITERATIONS analyses per input
# each), and prints per input the median over rounds of each side's median and the ratio
# after/before. Typical files are summed into one line ("typical files, total"). Each input is
# timed warm (analysed again on the same thread) and cold (each analysis on a fresh thread, so
# no per-thread state of an earlier analysis helps: what `fuzzlint check` sees).
set -euo pipefail
base=${1:?usage: $0 BASE_REV [ROUNDS] [ITERATIONS]}
rounds=${2:-5}
iters=${3:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
work=${BENCH_WORK:-$root/target/bench-before-after}
mkdir -p "$work"
wt="$work/before"
if [ ! -d "$wt" ]; then
  git -C "$root" worktree add -f --detach "$wt" "$base" >/dev/null
else
  git -C "$wt" checkout -q --detach "$base"
fi
# The typical files include ../shared/corpus beside the checkout: the same for both sides.
if [ -d "$root/../shared" ] && [ ! -e "$work/shared" ]; then
  ln -s "$(cd "$root/../shared" && pwd)" "$work/shared"
fi
cp "$root/crates/fuzzfile_check/examples/analysis_compare.rs" "$wt/crates/fuzzfile_check/examples/"
cp "$root/crates/fuzzfile_check/examples/bench.rs" "$wt/crates/fuzzfile_check/examples/"
(cd "$wt" && CARGO_TARGET_DIR="$work/target-before" cargo build -q --release -p fuzzfile_check --example analysis_compare)
(cd "$root" && cargo build -q --release -p fuzzfile_check --example analysis_compare)
before="$work/target-before/release/examples/analysis_compare"
after="${CARGO_TARGET_DIR:-$root/target}/release/examples/analysis_compare"
out="$work/results"
rm -rf "$out" && mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  (cd "$wt" && "$before" --iterations "$iters") > "$out/before.$r"
  (cd "$root" && "$after" --iterations "$iters") > "$out/after.$r"
done
python3 - "$out" "$rounds" "$base" <<'PY'
import sys, statistics, collections
out, rounds, base = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def load(side):
    d = collections.defaultdict(list); size = {}
    for r in range(1, rounds + 1):
        for line in open(f"{out}/{side}.{r}"):
            name, b, us = line.rstrip("\n").split("\t")
            d[name].append(float(us)); size[name] = int(b)
    return d, size
b, size = load("before"); a, _ = load("after")
typ = [n for n in b if not n.startswith("synthetic") and "(cold" not in n]
typc = [n for n in b if not n.startswith("synthetic") and "(cold" in n]
rows = [("typical files, total (%d files)" % len(typ), sum(statistics.median(b[n]) for n in typ), sum(statistics.median(a[n]) for n in typ))]
rows += [("typical files, cold thread, total", sum(statistics.median(b[n]) for n in typc), sum(statistics.median(a[n]) for n in typc))]
rows += [(n, statistics.median(b[n]), statistics.median(a[n])) for n in b if n.startswith("synthetic")]
print(f"analysis before ({base}) and after (working tree), median of {rounds} alternating rounds")
print(f"{'input':<40} {'before':>12} {'after':>12} {'after/before':>13}")
for name, x, y in rows:
    print(f"{name:<40} {x/1000:>9.2f} ms {y/1000:>9.2f} ms {y/x:>12.2f}x")
slow = [n for n in typ if statistics.median(a[n]) > 1.5 * statistics.median(b[n])]
for n in slow:
    print(f"  slower: {n} ({size[n]} B): {statistics.median(b[n]):.1f} -> {statistics.median(a[n]):.1f} µs")
PY
