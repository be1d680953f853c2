"""A corpus of hundreds of sessions: scan on 1 and 2 jobs, on a Dask LocalCluster, and report.

Usage: python bench/bench_corpus.py [--sessions 300] [--lines 1500] [--repeat 3] [--regenerate]

Generates (once, reused afterwards) bench/out/corpus-<sessions>x<lines>/, a folder of
Claude Code sessions written by bench_scan.py's generator (each its own seed and session
id; about 3.5 MB each, 1.05 GB for the defaults), then runs, each in its own subprocess and
alternating so that load from other processes falls on all of them alike:

- scan-1:    `replay scan --json --jobs 1 CORPUS`
- scan-2:    `replay scan --json --jobs 2 CORPUS`
- dask-2:    `replay scan --json --dask local --jobs 2 CORPUS` (a LocalCluster of two workers)
- report-1:  `replay report --jobs 1 CORPUS`
- report-2:  `replay report --jobs 2 CORPUS`
- one:       `replay scan --json --jobs 1 BIGGEST_SESSION` (what one session costs)

It prints the best, worst and median wall time of each, the ratios scan-2 / scan-1
(target <= 0.6), dask-2 / scan-1, report-1 / scan-1 and report-2 / scan-2 (target <= 1.3),
and peak memory: the largest resident set of any process of a run (wait4 counts the worker
processes a run waited for) against that of scanning the biggest session alone. It checks
that every run printed the same sessions in the same order. Exit status 1 if a target or a
check fails.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scan import Generator  # noqa: E402

OUT = Path(__file__).resolve().parent / "out"
REPO = Path(__file__).resolve().parents[1]

JOBS_TARGET = 0.6
REPORT_TARGET = 1.3


@dataclass
class Run:
    """One subprocess run: wall seconds, peak RSS in bytes of any of its processes, output."""

    wall: float
    peak: int
    digest: str


def generate(folder: Path, sessions: int, lines: int) -> None:
    """Write the corpus: one Claude Code file per session, each its own seed and id."""
    partial = folder.with_name(folder.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    for number in range(sessions):
        generator = Generator(seed=1000 + number)
        generator.session_id = str(uuid.UUID(int=generator.rng.getrandbits(128), version=4))
        generator.write(partial / f"{generator.session_id}.jsonl", lines)
    partial.replace(folder)


def run_timed(command: list[str], keep_output: bool) -> Run:
    """Run a command, its stdout hashed (scan) or discarded (report), and measure it."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               cwd=REPO)
    digest = hashlib.sha256()
    assert process.stdout is not None
    while chunk := process.stdout.read(1 << 20):
        if keep_output:
            digest.update(chunk)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(command[3:6])} exited with {status}")
    return Run(elapsed, usage.ru_maxrss * 1024, digest.hexdigest())


def spread(runs: list[Run]) -> str:
    walls = sorted(run.wall for run in runs)
    return (f"best {walls[0]:6.2f} s  median {statistics.median(walls):6.2f} s  "
            f"worst {walls[-1]:6.2f} s")


def main() -> int:
    """Generate if needed, measure, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=300, help="session files")
    parser.add_argument("--lines", type=int, default=1500, help="records per session")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each")
    parser.add_argument("--regenerate", action="store_true", help="write the corpus again")
    parser.add_argument("--no-dask", action="store_true", help="skip the LocalCluster runs")
    args = parser.parse_args()

    folder = OUT / f"corpus-{args.sessions}x{args.lines}"
    if args.regenerate and folder.exists():
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    if not folder.exists():
        started = time.perf_counter()
        generate(folder, args.sessions, args.lines)
        print(f"generated {folder} in {time.perf_counter() - started:.1f} s")
    files = sorted(folder.iterdir())
    size = sum(path.stat().st_size for path in files)
    biggest = max(files, key=lambda path: path.stat().st_size)
    for path in files:  # warm the page cache so every run reads from memory
        path.read_bytes()

    replay = [sys.executable, "-m", "replay"]
    commands: dict[str, tuple[list[str], bool]] = {
        "scan-1": ([*replay, "scan", "--json", "--jobs", "1", str(folder)], True),
        "scan-2": ([*replay, "scan", "--json", "--jobs", "2", str(folder)], True),
        "report-1": ([*replay, "report", "--jobs", "1", str(folder)], False),
        "report-2": ([*replay, "report", "--jobs", "2", str(folder)], False),
        "one": ([*replay, "scan", "--json", "--jobs", "1", str(biggest)], False),
    }
    if not args.no_dask:
        commands["dask-2"] = (
            [*replay, "scan", "--json", "--dask", "local", "--jobs", "2", str(folder)], True)
    runs: dict[str, list[Run]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, (command, keep) in commands.items():
            runs[name].append(run_timed(command, keep))

    same = len({run.digest for name in ("scan-1", "scan-2", "dask-2") if name in runs
                for run in runs[name]}) == 1
    print(f"corpus    {len(files)} sessions, {size / 1e9:.2f} GB; biggest session "
          f"{biggest.stat().st_size / 1e6:.1f} MB; {os.cpu_count()} cores; "
          f"{args.repeat} runs each")
    for name, measured in runs.items():
        peak = max(r.peak for r in measured)
        print(f"{name:9} {spread(measured)}  peak RSS {peak / 1e6:6.1f} MB")

    def ratio(top: str, bottom: str) -> tuple[float, float]:
        """Best over best, and median over median."""
        best = min(r.wall for r in runs[top]) / min(r.wall for r in runs[bottom])
        middle = (statistics.median(r.wall for r in runs[top])
                  / statistics.median(r.wall for r in runs[bottom]))
        return best, middle

    failed = not same
    for top, bottom, target in (("scan-2", "scan-1", JOBS_TARGET),
                                ("dask-2", "scan-1", None),
                                ("report-1", "scan-1", REPORT_TARGET),
                                ("report-2", "scan-2", REPORT_TARGET)):
        if top not in runs:
            continue
        best, middle = ratio(top, bottom)
        goal = f"(target <= {target})" if target else ""
        print(f"time      {top} / {bottom} = {best:.2f} best, {middle:.2f} median  {goal}")
        failed |= target is not None and best > target
    one = max(r.peak for r in runs["one"])
    for name in ("scan-1", "scan-2", "report-1", "report-2", "dask-2"):
        if name in runs:
            peak = max(r.peak for r in runs[name])
            print(f"memory    {name} peak / one session's peak = {peak / one:.2f}")
    print(f"output    scan on 1 job, 2 jobs and Dask identical: {'yes' if same else 'NO'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
