"""Turn and empty-turn counts of discovered sessions: the per-session scan of `replay scan`
(`corpus.scan_task`), run over the sessions as tasks. This is the one place a list of
discovered sessions is counted, so a cached scan can stand in for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from replay.core.corpus.cache import ScanCache, cached_results
from replay.core.corpus.pool import run_tasks
from replay.core.corpus.tasks import SessionTask, TaskResult
from replay.core.discovery.found import FoundSession


def task_of(session: FoundSession, rules: Mapping[str, Any] | None = None) -> SessionTask:
    """The scan task that reads one discovered session (its failure is a skip, not fatal)."""
    options = tuple(sorted((rules or {}).items()))
    return SessionTask(str(session.path), session.format, session.entry, options,
                       required=False)


def scan_found(sessions: Sequence[FoundSession], rules: Mapping[str, Any] | None = None,
               jobs: int = 1, pool: ProcessPoolExecutor | None = None,
               cache: bool = True, warn: Callable[[str], None] | None = None
               ) -> Iterator[tuple[FoundSession, TaskResult]]:
    """Each session with its scan result (`scan --json` objects, or why it could not be
    read), in the order given, each as soon as it and those before it are done.

    With `cache`, a session whose file is unchanged since any scan kept it is not read
    again (`replay.core.corpus.cache`, shared with `scan`, `report` and `review`).
    """
    tasks = [task_of(session, rules) for session in sessions]

    def run(todo: Sequence[SessionTask]) -> Iterator[TaskResult]:
        return run_tasks(todo, jobs, None, pool)

    if not cache:
        yield from zip(sessions, run(tasks), strict=True)
        return
    with ScanCache(warn=warn) as kept:
        yield from zip(sessions, cached_results(tasks, run, kept), strict=True)
