"""Running `scan_task` over a corpus: in this process, a local process pool, or Dask.

Whatever runs the tasks, results come back in task order, so the output of many jobs is
the output of one. Scheduling, retries and worker management are the engines' own
(`concurrent.futures`, `dask.distributed`); this module only picks one and hands it tasks.
"""

from __future__ import annotations

import logging
import os
import signal
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor

from replay.core.corpus import SessionTask, TaskResult, scan_task

LOCAL = "local"
"""The `--dask` value that starts a cluster on this machine instead of joining one."""


class DaskMissing(Exception):
    """`--dask` was asked for without the optional extra installed."""


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def run_tasks(tasks: Sequence[SessionTask], jobs: int = 1,
              dask: str | None = None) -> Iterator[TaskResult]:
    """Each task's result, in task order, as soon as it and those before it are done."""
    if dask is not None:
        yield from _run_dask(tasks, dask, jobs)
        return
    workers = min(jobs, len(tasks))
    if workers <= 1:
        yield from map(scan_task, tasks)
        return
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
    try:
        yield from pool.map(scan_task, tasks)
    finally:
        # On an interrupt or a closed pipe, queued sessions are dropped instead of read.
        pool.shutdown(wait=True, cancel_futures=True)


def _ignore_interrupts() -> None:
    """In a worker: Ctrl-C is the parent's to handle (no traceback from every worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_dask(tasks: Sequence[SessionTask], address: str, jobs: int) -> Iterator[TaskResult]:
    """Run the tasks as a dask.bag of one session per partition on a cluster."""
    try:
        import dask.bag
        from distributed import Client, LocalCluster
    except ImportError:
        raise DaskMissing('--dask needs the optional extra: pip install "replay[dask]"') from None
    if not tasks:
        return
    if address == LOCAL:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
    else:
        cluster = None
        client = Client(address)
    try:
        bag = dask.bag.from_sequence(tasks, partition_size=1).map(scan_task)
        # One future per partition, read back in order: the first lines print while the
        # rest of the corpus is still being read.
        for future in client.compute(bag.to_delayed()):
            yield from future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
