"""Turn and empty-turn counts of discovered sessions: the per-session scan of `replay scan`
(`corpus.scan_task`), run over the sessions as tasks. This is the one place a list of
discovered sessions is counted, so a cached scan can stand in for it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from replay.core.corpus.pool import run_tasks
from replay.core.corpus.tasks import SessionTask, TaskResult
from replay.core.discovery.found import FoundSession


def task_of(session: FoundSession, rules: Mapping[str, Any] | None = None) -> SessionTask:
    """The scan task that reads one discovered session (its failure is a skip, not fatal)."""
    options = tuple(sorted((rules or {}).items()))
    return SessionTask(str(session.path), session.format, session.entry, options,
                       required=False)


def scan_found(sessions: Sequence[FoundSession], rules: Mapping[str, Any] | None = None,
               jobs: int = 1, pool: ProcessPoolExecutor | None = None
               ) -> Iterator[tuple[FoundSession, TaskResult]]:
    """Each session with its scan result (`scan --json` objects, or why it could not be
    read), in the order given, each as soon as it and those before it are done."""
    tasks = [task_of(session, rules) for session in sessions]
    yield from zip(sessions, run_tasks(tasks, jobs, None, pool), strict=True)
