"""A second scan or report of an unchanged corpus against the first: the scan cache.

Usage: python bench/bench_cache.py [--sessions 300] [--lines 1500] [--corpus FOLDER]
[--jobs 2] [--repeat 3]

Uses bench_corpus.py's corpus (bench/out/corpus-300x1500, 1.07 GB of Claude Code sessions,
written once). Each round, in its own subprocesses with a fresh cache directory
(REPLAY_CACHE_DIR): `scan --json` (the first: reads every session and fills the cache), the
same again (the second: every file unchanged), then `report` twice the same way, and
`scan --json --no-cache` for the cost without the cache. It prints the median wall and CPU
time of each, the second / first ratios (target <= 0.1, on CPU: wall time on this shared
machine also measures the neighbours) and checks that the cached output is the same bytes.
Exit status 1 when a ratio misses the target or the outputs differ.
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_corpus import OUT, Run, generate, run_timed  # noqa: E402

TARGET = 0.1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=300)
    parser.add_argument("--lines", type=int, default=1500)
    parser.add_argument("--corpus", type=Path, help="measure this folder instead")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder = args.corpus or OUT / f"corpus-{args.sessions}x{args.lines}"
    if not folder.exists():
        started = time.perf_counter()
        generate(folder, args.sessions, args.lines)
        print(f"generated {folder} in {time.perf_counter() - started:.1f} s")
    # Imports from bytecode, as installed: with PYTHONDONTWRITEBYTECODE set, a changed module
    # was compiled again by every run, a cost the second run (a few tenths of a second) felt.
    compileall.compile_dir(Path(__file__).resolve().parents[1] / "replay", quiet=1)
    files = [path for path in folder.rglob("*") if path.is_file()]
    old = time.time() - 60  # files changed just now are not cached (RACY_SECONDS)
    for path in files:
        if path.stat().st_mtime > old:
            os.utime(path, (old, old))
        path.read_bytes()  # from the page cache, every run
    size = sum(path.stat().st_size for path in files)
    jobs = ["--jobs", str(args.jobs)]
    runs: dict[str, list[Run]] = {}
    same = True
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="bench-cache-") as cache:
            os.environ["REPLAY_CACHE_DIR"] = cache
            for name, arguments, keep in (
                    ("scan first", ["scan", "--json", *jobs, str(folder)], True),
                    ("scan second", ["scan", "--json", *jobs, str(folder)], True),
                    ("scan --no-cache", ["scan", "--json", "--no-cache", *jobs, str(folder)],
                     True)):
                runs.setdefault(name, []).append(run_timed(arguments, keep))
        with tempfile.TemporaryDirectory(prefix="bench-cache-") as cache:
            os.environ["REPLAY_CACHE_DIR"] = cache
            for name in ("report first", "report second"):
                runs.setdefault(name, []).append(
                    run_timed(["report", *jobs, str(folder)], False))
        digests = {runs[name][-1].digest for name in ("scan first", "scan second",
                                                       "scan --no-cache")}
        same = same and len(digests) == 1
    print(f"corpus    {folder}: {len(files)} files, {size / 1e9:.2f} GB; --jobs {args.jobs}; "
          f"{args.repeat} rounds; load at start {os.getloadavg()[0]:.1f}")
    medians: dict[str, tuple[float, float]] = {}
    for name, measured in runs.items():
        wall = statistics.median(run.wall for run in measured)
        cpu = statistics.median(run.cpu for run in measured)
        medians[name] = (wall, cpu)
        loads = sorted(run.load for run in measured)
        print(f"{name:<16} wall {wall:6.2f} s   CPU {cpu:6.2f} s   "
              f"load {loads[0]:.1f}-{loads[-1]:.1f}")
    passed = same
    for kind in ("scan", "report"):
        wall = medians[f"{kind} second"][0] / medians[f"{kind} first"][0]
        cpu = medians[f"{kind} second"][1] / medians[f"{kind} first"][1]
        passed = passed and cpu <= TARGET
        print(f"{kind:<6} second / first: {cpu:.3f} CPU, {wall:.3f} wall  (target <= {TARGET})")
    print(f"output    first, second and --no-cache: {'the same bytes' if same else 'DIFFER'}")
    return 0 if passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
