"""A corpus of hundreds of sessions: scan on 1 and 2 jobs, on a Dask LocalCluster, and report.

Usage: python bench/bench_corpus.py [--sessions 300] [--lines 1500] [--repeat 5]
                                    [--corpus FOLDER] [--regenerate] [--no-dask] [--no-report]

Generates (once, reused afterwards) bench/out/corpus-<sessions>x<lines>/, a folder of
Claude Code sessions written by bench_scan.py's generator (each its own seed and session
id; about 3.5 MB each, 1.07 GB for the defaults), or takes `--corpus FOLDER` (for instance
bench_folder.py's 10,000 small sessions). Then runs, each in its own subprocess, in rounds
whose order rotates every round (so that load from other processes falls on all alike):

- scan-1:    `replay scan --json --jobs 1 CORPUS`
- scan-2:    `replay scan --json --jobs 2 CORPUS`
- dask-2:    `replay scan --json --dask local --jobs 2 CORPUS` (a LocalCluster of two workers)
- report-1:  `replay report --jobs 1 CORPUS`
- report-2:  `replay report --jobs 2 CORPUS`
- one:       `replay scan --json --jobs 1 BIGGEST_SESSION` (what one session costs)
- cluster:   start a LocalCluster of two workers, connect, close: Dask's fixed cost here

For each run it keeps the wall time, the 1-minute load average when it started, the CPU
time of the whole process tree (wait4) and of the parent alone, and the peak resident set
of the parent and of the largest worker (RUSAGE_SELF / RUSAGE_CHILDREN, written by a small
wrapper around `replay.cli.main` when it returns). It prints the median and spread of each,
the wall ratios scan-2 / scan-1 (target <= 0.6) and dask-2 / scan-1 (median over median, and
the spread of the per-round ratios), and the load-immune CPU figures: total CPU of 2 jobs
over 1 job (1.00 = no work added by going parallel), the parent's share of it, and the
ratio 2 jobs would reach on two free cores (the workers' CPU halved, or the parent's if
larger, over the 1-job time). It checks that 1 job, 2 jobs and Dask printed the same output.
Exit status 1 if the wall target or the check fails.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
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

WRAPPER = """\
import os, resource, sys
from replay.cli import main
status = main(sys.argv[2:])
times = os.times()
with open(sys.argv[1], "w") as out:
    out.write(f"{times.user + times.system} "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss} "
              f"{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
raise SystemExit(status)
"""
"""Runs replay as `python -m replay` would, then notes the parent's own CPU seconds, its peak
RSS and the largest peak RSS among the worker processes it waited for (KiB)."""

CLUSTER = """\
import logging
from distributed import Client, LocalCluster
cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                       dashboard_address=None, silence_logs=logging.ERROR)
Client(cluster).close()
cluster.close()
"""


@dataclass
class Run:
    """One subprocess run."""

    wall: float
    load: float
    """1-minute load average when it started."""
    cpu: float
    """User + system seconds of the whole process tree."""
    parent_cpu: float
    parent_peak: int
    """Peak RSS of the parent process, bytes."""
    worker_peak: int
    """Largest peak RSS of a worker process, bytes (0 when there was none)."""
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


def run_timed(arguments: list[str] | None, keep_output: bool, script: str | None = None) -> Run:
    """Run replay with these arguments (or a script), its stdout hashed or discarded."""
    with tempfile.NamedTemporaryFile("r", suffix=".txt") as notes:
        if arguments is not None:
            command = [sys.executable, "-c", WRAPPER, notes.name, *arguments]
        else:
            command = [sys.executable, "-c", script or ""]
        load = os.getloadavg()[0]
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
            raise SystemExit(f"{' '.join(command[4:8])} exited with {status}")
        noted = notes.read().split()
    parent_cpu, parent_peak, worker_peak = (
        (float(noted[0]), int(noted[1]) * 1024, int(noted[2]) * 1024) if noted
        else (usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, 0))
    return Run(elapsed, load, usage.ru_utime + usage.ru_stime, parent_cpu, parent_peak,
               worker_peak, digest.hexdigest())


def summary(runs: list[Run]) -> str:
    walls = sorted(run.wall for run in runs)
    loads = sorted(run.load for run in runs)
    return (f"wall median {statistics.median(walls):6.2f} s ({walls[0]:.2f}-{walls[-1]:.2f})  "
            f"load {loads[0]:.1f}-{loads[-1]:.1f}  "
            f"CPU {statistics.median(r.cpu for r in runs):5.2f} s "
            f"(parent {statistics.median(r.parent_cpu for r in runs):5.2f})  "
            f"peak parent {max(r.parent_peak for r in runs) / 1e6:5.1f} MB, "
            f"worker {max(r.worker_peak for r in runs) / 1e6:5.1f} MB")


def main() -> int:
    """Generate if needed, measure, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=300, help="session files")
    parser.add_argument("--lines", type=int, default=1500, help="records per session")
    parser.add_argument("--repeat", type=int, default=5, help="rounds")
    parser.add_argument("--corpus", type=Path, help="measure this folder instead")
    parser.add_argument("--regenerate", action="store_true", help="write the corpus again")
    parser.add_argument("--no-dask", action="store_true", help="skip the LocalCluster runs")
    parser.add_argument("--no-report", action="store_true", help="skip the report runs")
    args = parser.parse_args()

    folder = args.corpus or OUT / f"corpus-{args.sessions}x{args.lines}"
    if args.corpus is None and args.regenerate and folder.exists():
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()
    if not folder.exists():
        started = time.perf_counter()
        generate(folder, args.sessions, args.lines)
        print(f"generated {folder} in {time.perf_counter() - started:.1f} s")
    files = sorted(path for path in folder.rglob("*") if path.is_file())
    size = sum(path.stat().st_size for path in files)
    biggest = max(files, key=lambda path: path.stat().st_size)
    for path in files:  # warm the page cache so every run reads from memory
        path.read_bytes()

    corpus = str(folder)
    commands: dict[str, tuple[list[str] | None, bool, str | None]] = {
        "scan-1": (["scan", "--json", "--no-cache", "--jobs", "1", corpus], True, None),
        "scan-2": (["scan", "--json", "--no-cache", "--jobs", "2", corpus], True, None),
        "one": (["scan", "--json", "--no-cache", "--jobs", "1", str(biggest)], False, None),
    }
    if not args.no_report:
        commands["report-1"] = (["report", "--no-cache", "--jobs", "1", corpus], False, None)
        commands["report-2"] = (["report", "--no-cache", "--jobs", "2", corpus], False, None)
    if not args.no_dask:
        commands["dask-2"] = (["scan", "--json", "--no-cache", "--dask", "local", "--jobs", "2",
                               corpus], True, None)
        commands["cluster"] = (None, False, CLUSTER)
    runs: dict[str, list[Run]] = {name: [] for name in commands}
    names = list(commands)
    for round_number in range(args.repeat):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            arguments, keep, script = commands[name]
            runs[name].append(run_timed(arguments, keep, script))

    same = len({run.digest for name in ("scan-1", "scan-2", "dask-2") if name in runs
                for run in runs[name]}) == 1
    print(f"corpus    {folder.name}: {len(files)} files, {size / 1e9:.2f} GB; biggest "
          f"{biggest.stat().st_size / 1e6:.1f} MB; {os.cpu_count()} cores; "
          f"{args.repeat} rounds, order rotated each round")
    for name, measured in runs.items():
        print(f"{name:9} {summary(measured)}")

    def ratio(top: str, bottom: str) -> str:
        """Median over median, and the spread of the ratios of runs in the same round."""
        middle = (statistics.median(r.wall for r in runs[top])
                  / statistics.median(r.wall for r in runs[bottom]))
        paired = sorted(a.wall / b.wall for a, b in zip(runs[top], runs[bottom], strict=True))
        return f"{middle:.2f} median (per round {paired[0]:.2f}-{paired[-1]:.2f})"

    failed = not same
    for top, bottom, target in (("scan-2", "scan-1", JOBS_TARGET),
                                ("dask-2", "scan-1", None),
                                ("report-1", "scan-1", REPORT_TARGET),
                                ("report-2", "scan-2", REPORT_TARGET)):
        if top not in runs:
            continue
        goal = f"  (target <= {target})" if target else ""
        print(f"wall      {top} / {bottom} = {ratio(top, bottom)}{goal}")
        if target is not None:
            failed |= (statistics.median(r.wall for r in runs[top])
                       / statistics.median(r.wall for r in runs[bottom])) > target

    def cpu(name: str) -> float:
        return statistics.median(r.cpu for r in runs[name])

    def parent(name: str) -> float:
        return statistics.median(r.parent_cpu for r in runs[name])

    # Load-immune: CPU seconds do not grow when other processes take the cores.
    one_job = statistics.median(r.wall for r in runs["scan-1"])
    workers = cpu("scan-2") - parent("scan-2")
    print(f"cpu       scan-2 / scan-1 total CPU = {cpu('scan-2') / cpu('scan-1'):.2f}; parent "
          f"share of scan-2 {parent('scan-2') / cpu('scan-2'):.0%}; on two free cores "
          f"scan-2 / scan-1 would be about {max(parent('scan-2'), workers / 2) / cpu('scan-1'):.2f}"
          f" (scan-1 got {cpu('scan-1') / one_job:.0%} of a core; 100% = no contention)")
    if "dask-2" in runs:
        print(f"cpu       dask-2 / scan-1 total CPU = {cpu('dask-2') / cpu('scan-1'):.2f}; "
              f"parent (client, scheduler, nannies) {parent('dask-2'):.2f} s; cluster start "
              f"and stop alone: wall {statistics.median(r.wall for r in runs['cluster']):.2f} s,"
              f" CPU {cpu('cluster'):.2f} s")
    one = max(r.parent_peak for r in runs["one"])
    print(f"memory    one session alone: peak {one / 1e6:.1f} MB")
    for name in ("scan-1", "scan-2", "report-2", "dask-2"):
        if name in runs:
            parent_peak = max(r.parent_peak for r in runs[name])
            worker_peak = max(r.worker_peak for r in runs[name])
            print(f"memory    {name}: parent peak / one session's = {parent_peak / one:.2f}"
                  + (f", largest worker's = {worker_peak / one:.2f}" if worker_peak else ""))
    print(f"output    scan on 1 job, 2 jobs and Dask identical: {'yes' if same else 'NO'}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
