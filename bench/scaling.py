#!/usr/bin/env python3
"""How the cost of `fuzzlint check`, `check --fix`, `fuzz plan` and the language server grows
with the input: jobs per file from 1 to 40,000 and files from 1 to 10,000.

    cargo build --release -p fuzzlint -p fuzz
    python3 bench/scaling.py --bin target/release --svg docs/img/scaling.svg > scaling.md

Prints a Markdown table (median wall time, the time per job or per file, peak RSS) and writes
an SVG plot of the marginal time per element, (t(N) - t(1)) / (N - 1), against the input's size
N >= 100 on logarithmic axes: the start-up of the one-element run taken off, a cost that grows
linearly is a flat line there, a quadratic one a line rising in proportion to N.
Inputs: bench/big-fuzzfile.py's jobs (env, a script or a command, resources, a mount, a timeout,
a `depends-on` on the job before; `requires` instead for `--fix`, the deprecated key that each
job then has a fix for), and the real Fuzzfiles of the corpus, replicated, for the files.
Each size runs every command once per round, alternating; medians over the rounds. Peak RSS
is GNU time's (Debian's `time`).

The growth tests (crates/{fuzzlint,fuzz}/tests/growth.rs) hold the same property with
instruction counts, which load does not move; this is the picture of it in seconds.
"""
import argparse
import importlib.util
import io
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import compare  # noqa: E402  (the language-server client and the corpus file sets)

_spec = importlib.util.spec_from_file_location("big_fuzzfile", HERE / "big-fuzzfile.py")
big_fuzzfile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(big_fuzzfile)

JOB_SIZES = (1, 10, 100, 1000, 10000, 40000)
FILE_COUNTS = (1, 10, 100, 1000, 10000)


def run_measured(argv, before=None):
    """Runs `argv` (after `before()`, not timed) under GNU time (Debian's `time`): (wall seconds,
    peak RSS bytes, exit status). A child of this interpreter would report this interpreter's
    peak RSS (hundreds of MB after generating the biggest inputs) as its own, inherited through
    fork or vfork and exec; the child of `time` does not."""
    if before:
        before()
    with tempfile.NamedTemporaryFile("r") as report:
        t = time.perf_counter()
        rc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", report.name, *argv],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        dt = time.perf_counter() - t
        peak_kib = int(report.read().split()[-1])
    return dt, peak_kib * 1024, rc


def jobs_file(work, n, edge):
    path = work / f"jobs-{edge}-{n}.fz"
    if not path.exists():
        buf = io.StringIO()
        big_fuzzfile.write(n, buf, edge)
        path.write_text(buf.getvalue())
    return path


def rounds_for(size, rounds):
    return rounds if size < 10000 else max(3, rounds // 3)


def measure_commands(commands, rounds):
    """commands: [(label, argv, before)]: {label: (median s, max peak RSS, exit statuses)}."""
    samples = {label: [] for label, _, _ in commands}
    for r in range(rounds):
        k = r % len(commands)
        for label, argv, before in commands[k:] + commands[:k]:
            samples[label].append(run_measured(argv, before))
    return {
        label: (statistics.median(s[0] for s in v), max(s[1] for s in v), sorted({s[2] for s in v}))
        for label, v in samples.items()
    }


def server_latency(fuzzlint, path, edits):
    """Median didChange → publishDiagnostics; the edits type into the first line's comment."""
    lat, _ = compare.lsp_latency([fuzzlint, "server"], {}, path, edits)
    return statistics.median(lat)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/release", help="directory of the fuzzlint and fuzz binaries")
    ap.add_argument("--corpus", type=Path, default=HERE.parent.parent / "shared" / "corpus")
    ap.add_argument("--work", type=Path, default=HERE.parent / "target" / "bench-scaling")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--edits", type=int, default=20, help="language-server edits per size")
    ap.add_argument("--svg", type=Path, help="write the plot here")
    args = ap.parse_args()
    fuzzlint = str(Path(args.bin, "fuzzlint").resolve())
    fuzz = str(Path(args.bin, "fuzz").resolve())
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    print(f"# bench/scaling.py on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"{os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.2f}; "
          f"rounds: {args.rounds} (a third at 10,000 and more); server edits per size: {args.edits}\n")
    series = {}  # label -> [(size, seconds per element)]

    print("| jobs | file size | `check` | `check --fix` | `fuzz plan` | server didChange | "
          "µs/job: check, fix, plan, server | peak RSS: check, fix, plan |")
    print("|---|---|---|---|---|---|---|---|")
    for n in JOB_SIZES:
        plain = jobs_file(work, n, "depends-on")
        fixable = jobs_file(work, n, "requires")
        fix_copy = work / f"fix-copy-{n}.fz"
        commands = [
            ("check", [fuzzlint, "check", str(plain)], None),
            ("check --fix", [fuzzlint, "check", "--fix", str(fix_copy)],
             lambda: shutil.copyfile(fixable, fix_copy)),
            ("fuzz plan", [fuzz, "plan", str(plain), "-o", "/dev/null"], None),
        ]
        result = measure_commands(commands, rounds_for(n, args.rounds))
        server_file = work / f"server-{n}.fz"
        server_file.write_text("# edited\n" + plain.read_text())
        server = server_latency(fuzzlint, server_file, args.edits if n < 10000 else max(4, args.edits // 4))
        per_job = [result["check"][0] / n, result["check --fix"][0] / n, result["fuzz plan"][0] / n, server / n]
        for label, value in zip(("check", "check --fix", "fuzz plan", "server didChange"), per_job):
            series.setdefault(label, []).append((n, value * n))
        size = plain.stat().st_size
        print(f"| {n:,} | {size / 1e6:.2f} MB | {compare.fmt(result['check'][0])} | "
              f"{compare.fmt(result['check --fix'][0])} | {compare.fmt(result['fuzz plan'][0])} | "
              f"{compare.fmt(server)} | " + ", ".join(f"{v * 1e6:.1f}" for v in per_job) + " | "
              + ", ".join(f"{result[k][1] / 1e6:.0f} MB" for k in ("check", "check --fix", "fuzz plan")) + " |")
        sys.stdout.flush()

    print("\n| files | bytes | `check DIR` | µs/file | peak RSS |")
    print("|---|---|---|---|---|")
    corpus_files = compare.corpus_files(args.corpus)
    if not corpus_files:
        raise SystemExit(f"no Fuzzfiles under {args.corpus}/plain or {args.corpus}/docs")
    for count in FILE_COUNTS:
        files = compare.file_set(work / "files", corpus_files, count)
        directory = str(Path(files[0]).parent)
        result = measure_commands([("check DIR", [fuzzlint, "check", directory], None)],
                                  rounds_for(count, args.rounds))["check DIR"]
        series.setdefault("check DIR (files)", []).append((count, result[0]))
        size = sum(os.path.getsize(f) for f in files)
        print(f"| {count:,} | {size / 1e6:.2f} MB | {compare.fmt(result[0])} | {result[0] / count * 1e6:.1f} | "
              f"{result[1] / 1e6:.0f} MB |")
        sys.stdout.flush()
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    if args.svg:
        args.svg.write_text(svg_plot(series))
        print(f"plot: {args.svg}")


COLOURS = {"check": "#1f77b4", "check --fix": "#ff7f0e", "fuzz plan": "#2ca02c",
           "server didChange": "#d62728", "check DIR (files)": "#9467bd"}


def marginal(points):
    """[(N, seconds)] from N = 1 up: [(N, (t(N) - t(1)) / (N - 1))] for N >= 100, at least 1 ns.
    Below 100 elements the difference is within the start-up's run-to-run spread."""
    (one, start), rest = points[0], points[1:]
    assert one == 1
    return [(n, max((t - start) / (n - 1), 1e-9)) for n, t in rest if n >= 100]


def svg_plot(series):
    """A log-log plot of the marginal microseconds per element against elements, one polyline
    per series."""
    import math
    series = {label: marginal(points) for label, points in series.items()}
    width, height, left, right, top, bottom = 760, 440, 80, 200, 40, 60
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y * 1e6 for pts in series.values() for _, y in pts]
    x_lo, x_hi = math.floor(math.log10(min(xs))), math.ceil(math.log10(max(xs)))
    y_lo, y_hi = math.floor(math.log10(min(ys))), math.ceil(math.log10(max(ys)))
    if y_hi == y_lo:
        y_hi += 1

    def px(x):
        return left + (math.log10(x) - x_lo) / (x_hi - x_lo) * (width - left - right)

    def py(y):
        return top + (y_hi - math.log10(y)) / (y_hi - y_lo) * (height - top - bottom)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{left}" y="22" font-size="14">Marginal cost per element against input size '
           '(flat = linear; bench/scaling.py)</text>']
    for e in range(x_lo, x_hi + 1):
        x = px(10 ** e)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - bottom}" stroke="#ddd"/>')
        out.append(f'<text x="{x:.1f}" y="{height - bottom + 18}" text-anchor="middle">{10 ** e:,}</text>')
    for e in range(y_lo, y_hi + 1):
        y = py(10 ** e)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" stroke="#ddd"/>')
        label = f"{10 ** e:g}"
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
    out.append(f'<text x="{(left + width - right) / 2}" y="{height - 18}" text-anchor="middle">'
               'jobs in the file (files in the directory for check DIR)</text>')
    out.append(f'<text transform="translate(20 {(top + height - bottom) / 2}) rotate(-90)" '
               'text-anchor="middle">(t(N) − t(1)) / (N − 1), µs per job (per file)</text>')
    for i, (label, pts) in enumerate(series.items()):
        colour = COLOURS.get(label, "#333")
        points = " ".join(f"{px(x):.1f},{py(y * 1e6):.1f}" for x, y in pts)
        out.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in pts:
            out.append(f'<circle cx="{px(x):.1f}" cy="{py(y * 1e6):.1f}" r="3" fill="{colour}"/>')
        ly = top + 10 + i * 20
        out.append(f'<line x1="{width - right + 12}" y1="{ly}" x2="{width - right + 36}" y2="{ly}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{width - right + 42}" y="{ly + 4}">{label}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
