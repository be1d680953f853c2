"""Running `scan_task` over a corpus: in this process, a local process pool, or Dask.

Whatever runs the tasks, results come back in task order, so the output of many jobs is
the output of one. Scheduling, retries and worker management are the engines' own
(`concurrent.futures`, `dask.distributed`); this module only picks one and hands it tasks.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from replay.core.corpus.tasks import SessionTask, TaskResult, scan_task, where
from replay.core.readers.base import Mapper

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

# `concurrent.futures` (and the multiprocessing, socket, pickle and logging it brings) is
# imported where a pool starts: a scan of one file in this process never needs it, and it
# was a third of that scan's start-up beyond the interpreter's.

LOCAL = "local"
"""The `--dask` value that starts a cluster on this machine instead of joining one."""

TASKS_PER_WORKER = 32
"""Sessions are handed to the workers in about this many batches per worker: enough that
a worker done early takes another batch (the run ends within one batch of even), few
enough that the parent's cost per batch (a future, two pickles, a wake-up) stays small
beside the work when sessions are tiny."""
LARGEST_BATCH = 64
"""Sessions per batch at most (a batch's results come back together)."""
GLANCES_PER_WORKER = 4
"""Batches per worker for the cheap per-file looks of a folder listing."""
LARGEST_GLANCE_BATCH = 512


class DaskMissing(Exception):
    """`--dask` was asked for without the optional extra installed."""


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def batch_size(count: int, workers: int, per_worker: int = TASKS_PER_WORKER,
               largest: int = LARGEST_BATCH) -> int:
    """How many of `count` items to hand a worker at once (`chunksize`, partition size)."""
    return max(1, min(largest, count // max(1, workers * per_worker)))


@contextlib.contextmanager
def local_pool(jobs: int) -> Iterator[ProcessPoolExecutor | None]:
    """A process pool of `jobs` workers, started at once (so that they come up while this
    process still lists the sessions); None for one job."""
    if jobs <= 1:
        yield None
        return
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_start_worker)
    # The first submission starts the workers (with `fork`, all of them at once).
    pool.submit(int)
    try:
        yield pool
    finally:
        # On an interrupt or a closed pipe, queued sessions are dropped instead of read.
        pool.shutdown(wait=True, cancel_futures=True)


def pool_mapper(pool: ProcessPoolExecutor | None, workers: int) -> Mapper:
    """A `map` for the per-file looks of a listing: the pool's (of `workers` processes), in
    batches, else the builtin."""
    if pool is None:
        return map

    def mapped(function: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        listed = list(items)
        size = batch_size(len(listed), workers, GLANCES_PER_WORKER, LARGEST_GLANCE_BATCH)
        return pool.map(function, listed, chunksize=size)

    return mapped


def run_tasks(tasks: Sequence[SessionTask], jobs: int = 1, dask: str | None = None,
              pool: ProcessPoolExecutor | None = None) -> Iterator[TaskResult]:
    """Each task's result, in task order, as soon as it and those before it are done.

    `pool` is a `local_pool(jobs)` already running (else one is started here when `jobs`
    > 1).
    """
    if dask is not None:
        yield from _run_dask(tasks, dask, jobs)
        return
    if pool is None or len(tasks) <= 1:
        if min(jobs, len(tasks)) <= 1:
            yield from map(scan_task, tasks)
            return
        with local_pool(min(jobs, len(tasks))) as started:
            yield from run_tasks(tasks, min(jobs, len(tasks)), None, started)
        return
    # Results travel back as the compact `scan --json` objects, a batch at a time.
    yield from _survive_deaths(tasks, jobs, pool)


WORKER_DIED = ("could not be read (the process reading it was killed, as the system does "
               "when memory runs out)")
"""What a session whose worker died says (`SIGKILL`, the OOM killer, a crash in C)."""


def scan_batch(tasks: Sequence[SessionTask]) -> list[TaskResult]:
    """`scan_task` of each task of a batch, in a worker."""
    return [scan_task(task) for task in tasks]


def _survive_deaths(tasks: Sequence[SessionTask], jobs: int,
                    pool: ProcessPoolExecutor) -> Iterator[TaskResult]:
    """The results of `tasks` in order, run in batches on `pool`; a worker that dies breaks
    the pool, so a fresh one takes the batches not done, and the batch that was being read
    when it died is read again one session at a time: the session that kills a worker on its
    own is reported unreadable (`WORKER_DIED`) and the rest are read as usual (so the output
    is that of one job, where `scan_task` turns a `MemoryError` into the same kind of line)."""
    from concurrent.futures.process import BrokenProcessPool

    size = batch_size(len(tasks), jobs)
    batches = [list(tasks[start:start + size]) for start in range(0, len(tasks), size)]
    owned: list[ProcessPoolExecutor] = []
    try:
        futures = [_submit(pool, batch) for batch in batches]
        for number, batch in enumerate(batches):
            try:
                yield from futures[number].result()
                continue
            except BrokenProcessPool:
                pass
            # The batch being read when a worker died is read again one session at a time,
            # alone in a fresh pool, so the session that kills a worker is the one named.
            pool = _fresh(jobs, owned)
            for task in batch:
                try:
                    (result,) = _submit(pool, [task]).result()
                except BrokenProcessPool:
                    result = TaskResult(error=f"{where(task)}: {WORKER_DIED}")
                    pool = _fresh(jobs, owned)
                yield result
            # Later batches the broken pool had not finished go to the new one as they were.
            for later in range(number + 1, len(batches)):
                if not _finished(futures[later]):
                    futures[later] = _submit(pool, batches[later])
    finally:
        for started in owned:
            started.shutdown(wait=True, cancel_futures=True)


def _finished(future: Future[list[TaskResult]]) -> bool:
    """True when the future holds results (not an error of a broken pool)."""
    return future.done() and not future.cancelled() and future.exception() is None


def _submit(pool: ProcessPoolExecutor, batch: list[SessionTask]) -> Future[list[TaskResult]]:
    from concurrent.futures import Future
    from concurrent.futures.process import BrokenProcessPool

    try:
        return pool.submit(scan_batch, batch)
    except BrokenProcessPool as error:
        broken: Future[list[TaskResult]] = Future()
        broken.set_exception(error)
        return broken


def _fresh(jobs: int, owned: list[ProcessPoolExecutor]) -> ProcessPoolExecutor:
    """A new pool in place of a broken one (shut down at the end of the run)."""
    from concurrent.futures import ProcessPoolExecutor

    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_start_worker)
    owned.append(pool)
    return pool


def _start_worker() -> None:
    """In a worker: Ctrl-C is the parent's to handle (no traceback from every worker)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_dask(tasks: Sequence[SessionTask], address: str, jobs: int) -> Iterator[TaskResult]:
    """Run the tasks as a dask.bag on a cluster, a few sessions per partition."""
    try:
        import dask.bag
        from distributed import Client, LocalCluster
    except ImportError:
        raise DaskMissing('--dask needs the optional extra: pip install "replay[dask]"') from None
    if not tasks:
        return
    if address == LOCAL:
        import logging

        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        client = Client(cluster)
    else:
        cluster = None
        client = Client(address)
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        # A partition per session costs the scheduler a task and a round trip each: on
        # small sessions that is more than the session. Partitions of a few sessions keep
        # that cost small and still leave many partitions per worker to balance the load.
        size = batch_size(len(tasks), workers)
        bag = dask.bag.from_sequence(tasks, partition_size=size).map(scan_task)
        # One future per partition, read back in order: the first lines print while the
        # rest of the corpus is still being read.
        for future in client.compute(bag.to_delayed()):
            yield from future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
